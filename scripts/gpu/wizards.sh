#!/usr/bin/env bash
# Runs every repro wizard with --json on the GPU machine: one JSON per scenario in OUTDIR,
# its stderr beside it, then one summary line per wizard. One failing wizard never stops the
# others; every wizard and the whole script are time-bounded (about 5.5 minutes in all).
# Usage (from anywhere): bash scripts/gpu/wizards.sh OUTDIR [SCENARIO_ID ...]
#   with IDs, only those wizards run (e.g. cuda/cudnn-no-valid-conv-algorithm), in that order;
#   WIZARD_IDS="ID ..." does the same through scripts/gpu_run.sh wizards.
set -u
out=${1:?usage: wizards.sh OUTDIR [SCENARIO_ID ...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.." || exit 2
export PYTHONPATH=${PYTHONPATH:-$PWD}
export PYTHONUNBUFFERED=1
export CUDA_CLINIC_DATA_DIR=${CUDA_CLINIC_DATA_DIR:-/tmp/clinic-data}
PY=${PYTHON:-python3}
budget=330        # seconds for the whole script
per_wizard=170    # seconds for one wizard at most
per_step=45       # seconds for one step at most (isolated steps import torch each time)
start=$SECONDS

if [ "$#" -eq 0 ] && [ -n "${WIZARD_IDS:-}" ]; then
  set -- $WIZARD_IDS
fi
if [ "$#" -gt 0 ]; then
  ids=$(printf '%s\n' "$@")
else
  ids=$("$PY" -c 'from core.wizard import scenarios; print("\n".join(s.id for s in scenarios()))') || {
    echo "cannot list the scenarios"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader \
  >"$out/nvidia-smi.txt" 2>&1

summary() {  # one line from a wizard JSON
  "$PY" - "$1" "$2" "$3" <<'PYEOF'
import json, sys
path, ident, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    run = json.load(open(path))
except Exception as exc:
    print(f"{ident}: NO RESULT ({type(exc).__name__}) in {seconds}s, see {path[:-5]}.log")
    raise SystemExit
steps = ", ".join(f"{s['name']}={s['outcome']}" for s in run["steps"][1:])
rt = run["environment"].get("runtime", {})
print(f"{ident}: {run['outcome']} ({run['steps'][0].get('error') or run['steps'][0]['note']})"[:300])
print(f"    {steps}")
print(f"    {seconds}s on {rt.get('gpu')}, driver {rt.get('driver')}, torch {rt.get('torch')}, "
      f"cuDNN {rt.get('cudnn')}; run id {run.get('id')}")
PYEOF
}

lines=()
for id in $ids; do
  slug=${id//\//__}
  left=$(( budget - (SECONDS - start) ))
  if [ "$left" -lt 20 ]; then
    lines+=("$id: NOT RUN (script time budget spent)")
    continue
  fi
  limit=$(( left < per_wizard ? left : per_wizard ))
  t0=$SECONDS
  timeout -k 5 "$limit" "$PY" -m core wizard run "$id" --json --timeout "$per_step" \
    >"$out/$slug.json" 2>"$out/$slug.log"
  rc=$?
  [ "$rc" -ne 0 ] && echo "rc=$rc" >>"$out/$slug.log"
  lines+=("$(summary "$out/$slug.json" "$id" $(( SECONDS - t0 )))")
done
printf '%s\n' "${lines[@]}" | tee "$out/summary.txt"
echo "total ${SECONDS}s"
