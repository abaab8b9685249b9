#!/usr/bin/env bash
# Performance lab on the GPU machine: both full sweeps (JSON + SVG charts), the harness-vs-
# torch.utils.benchmark GPU tests, the harness comparison table; a summary table last.
# Usage (repo root, PYTHONPATH and CUDA_CLINIC_DATA_DIR set by scripts/gpu_run.sh): bench.sh OUTDIR
set -u
out=${1:?usage: bench.sh OUTDIR}
mkdir -p "$out/charts"
export PYTHONUNBUFFERED=1
rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu \
  --format=csv >"$out/nvidia-smi.csv" 2>&1 || true
for kind in lstm conv; do
  start=$(date +%s)
  timeout 240 python3 -m core bench "$kind" --json --charts "$out/charts" \
    >"$out/$kind.json" 2>"$out/$kind.log"
  code=$?
  echo "$kind sweep rc=$code $(( $(date +%s) - start ))s" | tee -a "$out/timings.txt"
  [ $code -ne 0 ] && rc=1 && tail -n 5 "$out/$kind.log"
done
timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_bench_gpu.py \
  --junitxml="$out/junit-bench.xml" >"$out/pytest.txt" 2>&1 || rc=1
tail -n 5 "$out/pytest.txt"
timeout 120 python3 benchmarks/bench_harness.py --json "$out/harness.json" >"$out/harness.txt" 2>&1 || rc=1
cat "$out/harness.txt"
python3 - "$out" <<'PY'
"""Summary table: every measured configuration of both sweeps, then the recommendations."""
import json, sys
from pathlib import Path
from core.bench.render import render_sweep
out = Path(sys.argv[1])
for kind in ("lstm", "conv"):
    path = out / f"{kind}.json"
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"== {kind}: no result ({exc})")
        continue
    text = render_sweep(payload)
    (out / f"{kind}.txt").write_text(text + "\n")
    print(f"== {kind} ({payload.get('duration_s')} s)")
    print(text)
PY
exit $rc
