#!/usr/bin/env bash
# Matcher latency and the coverage figures on a calm machine: the GPU host's idle cores give the
# p95 that the shared development container's load hides. Runs benchmarks/bench_match.py and
# scripts/coverage.py (neither needs the GPU). About a minute.
# Usage (repo root, PYTHONPATH and CUDA_CLINIC_DATA_DIR set by scripts/gpu_run.sh): coverage.sh OUTDIR
set -u
out=${1:?usage: coverage.sh OUTDIR}
mkdir -p "$out"
rc=0
{ nproc; uptime; python3 --version; } >"$out/machine.txt" 2>&1
timeout 300 python3 benchmarks/bench_match.py --repeats 200 >"$out/bench_match.md" 2>&1 || rc=1
timeout 120 python3 scripts/coverage.py --json >"$out/coverage.json" 2>"$out/coverage.log" || rc=1
echo "=== machine"; cat "$out/machine.txt"
echo "=== match latency (KB, input, first call, p50, p95 in ms)"
grep -E '^\| (bundled|[0-9]+ entries)' "$out/bench_match.md" || tail -n 5 "$out/bench_match.md"
echo "=== coverage (answered right / reports per part)"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({p: f\"{v['right']}/{v['reports']}\" for p, v in d.items()})" \
  "$out/coverage.json" || rc=1
exit $rc
