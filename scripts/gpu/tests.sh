#!/usr/bin/env bash
# The `gpu`-marked tests, on the GPU machine's own python3 (torch with CUDA).
# The GPU image lacks the dev-only packages some CPU test modules import at the top (jsonschema,
# import-linter); those modules hold no `gpu` tests, so their collection errors are reported and
# the gpu tests still run.
out=$1
python3 -m pytest -q -m gpu -p no:cacheprovider -p no:pytest-qt --continue-on-collection-errors \
  tests/core tests/gpu --junitxml="$out/junit.xml"
