#!/usr/bin/env bash
# Runs every repro wizard with --json on the GPU machine: one JSON per scenario in OUTDIR, its
# stderr beside it, then summary.txt with one line per wizard. Total runtime at most 6 minutes
# (budget below): the light wizards run 5 at a time (phase A), then the wizards that need the
# GPU to themselves (Requirements.exclusive: they fill its memory or measure time) run one by
# one (phase B). In each phase the wizards without a committed evidence record go first, so a
# tight budget drops re-runs ("NOT RUN" in the summary). One failing wizard never stops the
# others; every wizard is time-bounded.
# Usage (from anywhere): bash scripts/gpu/wizards.sh OUTDIR [SCENARIO_ID ...]
#   with IDs, only those wizards run (still phase A / B as they are declared);
#   WIZARD_IDS="ID ..." does the same through scripts/gpu_run.sh wizards.
# Then, on the workstation: python scripts/import_evidence.py OUTDIR/*.json --keep --update-kb
set -u
out=${1:?usage: wizards.sh OUTDIR [SCENARIO_ID ...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.." || exit 2
export PYTHONPATH=${PYTHONPATH:-$PWD}
export PYTHONUNBUFFERED=1
data=${CUDA_CLINIC_DATA_DIR:-/tmp/clinic-data}
PY=${PYTHON:-python3}
budget=${WIZARD_BUDGET_S:-350}   # seconds for the whole script (6 minutes with the listing)
light_cap=90                     # seconds for one light wizard
heavy_cap=75                     # seconds for one exclusive wizard
per_step=45                      # seconds for one step (isolated steps import torch each time)
jobs=5                           # light wizards at once
heavy_estimate=30                # seconds kept for each exclusive wizard after phase A
start=$SECONDS

if [ "$#" -eq 0 ] && [ -n "${WIZARD_IDS:-}" ]; then
  set -- $WIZARD_IDS
fi
listing=$(timeout -k 5 60 "$PY" - "$@" <<'PYEOF'
import sys
from pathlib import Path
from core.wizard import scenarios
wanted = sys.argv[1:]
known = {s.id: s for s in scenarios()}
for ident in wanted:
    if ident not in known:
        print(f"unknown {ident}", file=sys.stderr)
rows = []
for s in scenarios():
    if wanted and s.id not in wanted:
        continue
    recorded = Path("resources/evidence", s.id.replace("/", "__") + ".json").is_file()
    # Wizards without a committed record first: a tight budget drops the re-runs.
    rows.append((recorded, "heavy" if s.requirements.exclusive else "light", s.id))
for recorded, phase, ident in sorted(rows, key=lambda r: r[0]):
    print(phase, ident, "recorded" if recorded else "new")
PYEOF
) || { echo "cannot list the scenarios"; exit 1; }
light=$(printf '%s\n' "$listing" | awk '$1 == "light" {print $2}')
heavy=$(printf '%s\n' "$listing" | awk '$1 == "heavy" {print $2}')
ids=$(printf '%s\n' "$listing" | awk '{print $2}')
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader \
  >"$out/nvidia-smi.txt" 2>&1
ls -l /usr/lib/x86_64-linux-gnu/libcudnn*.so.9 >"$out/system-cudnn.txt" 2>&1

run_one() {  # ID CAP: one wizard, its own data dir (parallel runs share no SQLite file)
  local id=$1 cap=$2 slug=${1//\//__} t0=$SECONDS
  CUDA_CLINIC_DATA_DIR="$data/$slug" timeout -k 5 "$cap" \
    "$PY" -m core wizard run "$id" --json --timeout "$per_step" \
    >"$out/$slug.json" 2>"$out/$slug.log"
  local rc=$?
  [ "$rc" -ne 0 ] && echo "rc=$rc" >>"$out/$slug.log"
  echo "$(( SECONDS - t0 ))" >"$out/$slug.seconds"
}

left() { echo $(( budget - (SECONDS - start) )); }

# Phase A: the light wizards, $jobs at a time, in a window that leaves the exclusive ones
# about $heavy_estimate s each.
heavy_count=$(printf '%s\n' "$heavy" | grep -c . || true)
window=$(( budget - heavy_count * heavy_estimate ))
for id in $light; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n 2>/dev/null || sleep 1; done
  room=$(( window - (SECONDS - start) ))
  if [ "$room" -lt 20 ]; then
    echo "NOT RUN (script time budget spent)" >"$out/${id//\//__}.skip"
    continue
  fi
  cap=$(( room + 15 ))
  run_one "$id" $(( cap < light_cap ? cap : light_cap )) &
done
wait

# Phase B: the exclusive wizards, one at a time.
for id in $heavy; do
  room=$(left)
  if [ "$room" -lt 20 ]; then
    echo "NOT RUN (script time budget spent)" >"$out/${id//\//__}.skip"
    continue
  fi
  run_one "$id" $(( room < heavy_cap ? room : heavy_cap ))
done

summary() {  # one line from a wizard JSON
  "$PY" - "$1" "$2" "$3" <<'PYEOF'
import json, sys
path, ident, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    run = json.load(open(path))
except Exception as exc:
    print(f"{ident}: NO RESULT ({type(exc).__name__}) in {seconds}s, see {path[:-5]}.log")
    raise SystemExit
first = run["steps"][0]
steps = " ".join(f"{s['name']}={s['outcome']}" for s in run["steps"][1:])
why = (first.get("error") or first["note"] or "").replace("\n", " ")[:140]
rt = run["environment"].get("runtime", {})
print(f"{ident}: {run['outcome']} ({why}) | {steps} | {seconds}s on {rt.get('gpu')}, "
      f"torch {rt.get('torch')}, cuDNN {rt.get('cudnn')}")
PYEOF
}

: >"$out/summary.txt"
for id in $ids; do
  slug=${id//\//__}
  if [ -f "$out/$slug.skip" ]; then
    echo "$id: $(cat "$out/$slug.skip")" >>"$out/summary.txt"
  else
    summary "$out/$slug.json" "$id" "$(cat "$out/$slug.seconds" 2>/dev/null || echo '?')" \
      >>"$out/summary.txt"
  fi
done
done_count=$(grep -c -v -e 'NO RESULT' -e 'NOT RUN' "$out/summary.txt" || true)
echo "total ${SECONDS}s: $done_count of $(printf '%s\n' "$ids" | grep -c .) wizards with a result" \
  >>"$out/summary.txt"
cat "$out/summary.txt"
