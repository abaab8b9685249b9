#!/usr/bin/env bash
# CPU-side benchmarks on the GPU host's idle cores (the shared development container's load
# hides their wall times): redaction of long lines (issue 19: a 1 MB line under a second),
# the answer on top of `match`, bounded inputs (200 MB logs, endless pipes), and quick/deep env
# against collect_env on a machine with a GPU. About two minutes.
# Usage (repo root, PYTHONPATH set by scripts/gpu_run.sh): calm.sh OUTDIR
set -u
out=${1:?usage: calm.sh OUTDIR}
mkdir -p "$out"
rc=0
{ nproc; uptime; python3 --version; lscpu | grep -m1 'Model name'; } >"$out/machine.txt" 2>&1
timeout 240 python3 benchmarks/bench_redact.py --repeats 3 >"$out/bench_redact.md" 2>&1 || rc=1
timeout 120 python3 benchmarks/bench_answer.py --repeats 30 >"$out/bench_answer.md" 2>&1 || rc=1
timeout 200 python3 benchmarks/bench_bounded.py --mb 200 --repeats 3 >"$out/bench_bounded.md" 2>&1 || rc=1
timeout 200 python3 benchmarks/bench_env.py --repeats 5 --json "$out/bench_env.json" \
  >"$out/bench_env.md" 2>&1 || rc=1
uptime >>"$out/machine.txt"
echo "=== machine"; cat "$out/machine.txt"
for f in bench_redact bench_answer bench_bounded bench_env; do
  echo "=== $f"; grep -E '^\||^[a-z0-9 ]+ +[0-9]|ratio|RATIO' "$out/$f.md" | tail -n 14
done
exit $rc
