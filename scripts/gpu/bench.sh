#!/usr/bin/env bash
# Performance lab on the GPU machine: both full sweeps (JSON + SVG charts + text tables), the
# harness-vs-torch.utils.benchmark GPU tests, the harness comparison table; a short summary last.
# Usage (repo root, PYTHONPATH and CUDA_CLINIC_DATA_DIR set by scripts/gpu_run.sh): bench.sh OUTDIR
# About 2 minutes on an H200 (sweeps ~25 s and ~20 s, tests ~35 s, comparison ~30 s).
set -u
out=${1:?usage: bench.sh OUTDIR}
mkdir -p "$out/charts"
export PYTHONUNBUFFERED=1
rc=0
: >"$out/timings.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu \
  --format=csv >"$out/nvidia-smi.csv" 2>&1 || true
timed() {  # timed LABEL COMMAND...: run, log "LABEL rc=N Ss" to timings.txt
  local label=$1 start code
  shift
  start=$(date +%s)
  "$@"
  code=$?
  echo "$label rc=$code $(( $(date +%s) - start ))s" >>"$out/timings.txt"
  return $code
}
for kind in lstm conv; do
  timed "$kind sweep" timeout 240 python3 -m core bench "$kind" --json --charts "$out/charts" \
    >"$out/$kind.json" 2>"$out/$kind.log" || { rc=1; tail -n 5 "$out/$kind.log"; }
done
timed "gpu tests" timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider \
  tests/gpu/test_bench_gpu.py --junitxml="$out/junit-bench.xml" >"$out/pytest.txt" 2>&1 || rc=1
timed "harness vs Timer" timeout 120 python3 benchmarks/bench_harness.py \
  --json "$out/harness.json" >"$out/harness.txt" 2>&1 || rc=1
cat "$out/harness.txt"
python3 - "$out" <<'PY'
"""Full tables and recommendations into OUTDIR/{lstm,conv}.txt; a summary under 10 lines last."""
import json, sys
from pathlib import Path
from core.bench.model import Sweep
from core.bench.render import render_sweep
out = Path(sys.argv[1])
lines = ["== summary"]
for kind in ("lstm", "conv"):
    try:
        payload = json.loads((out / f"{kind}.json").read_text())
    except (OSError, ValueError) as exc:
        lines.append(f"{kind}: no result ({exc})")
        continue
    (out / f"{kind}.txt").write_text(render_sweep(Sweep.from_dict(payload)) + "\n")
    results = payload.get("results", [])
    blocked = sum(1 for r in results if r.get("calls_per_sample", 1) > 1)
    lines.append(
        f"{kind}: {payload.get('status')}, {len(results)} measured, {len(payload.get('skipped', []))} "
        f"skipped, {len(payload.get('failed', []))} failed, {payload.get('duration_s')} s; "
        f"{blocked} timed in blocks (calls_per_sample > 1)"
    )
lines += (out / "timings.txt").read_text().splitlines()
tail = (out / "pytest.txt").read_text(errors="replace").strip().splitlines()
lines.append("gpu tests: " + (tail[-1] if tail else "no output"))
for line in (out / "harness.txt").read_text(errors="replace").splitlines():
    if line.startswith(("median ratio over rounds", "every median ratio")):
        lines.append("harness: " + line)
print("\n".join(lines))
PY
exit $rc
