#!/usr/bin/env bash
# The `gpu`-marked tests, on the GPU machine's own python3 (torch with CUDA).
out=$1
python3 -m pytest -q -m gpu -p no:cacheprovider -p no:pytest-qt tests/core tests/gpu --junitxml="$out/junit.xml"
