#!/usr/bin/env bash
# Runs the repro wizards with --json on the GPU machine: one JSON per scenario in OUTDIR, its
# stderr beside it, then summary.txt with one line per wizard. One failing wizard never stops the
# others; every wizard is time-bounded, and the whole script stays inside WIZARD_BUDGET_S
# (default 540 s, under the device's 10-minute command limit).
#
# Order: wizards without a committed evidence record of their current steps ("new") before
# re-runs, so a tight budget drops re-runs ("NOT RUN" in the summary; run them with
# WIZARD_IDS=... in a second call).
#   phase 0  (background) builds the wizards' CUDA extension for this GPU, sm_80 and sm_80+PTX,
#            and the guard extension (this GPU then sm_80) into the build cache
#            (core/wizard/steps/_extkit.py), about a minute on 16 cores;
#   phase A  light wizards that need no extension, $jobs at a time;
#   phase B  light wizards whose steps load the extension (after phase 0), $jobs at a time;
#   phase C  the wizards that need the GPU to themselves (Requirements.exclusive), one by one.
# Re-runs of recorded wizards keep the per-step limit they were recorded with (--timeout 45);
# new wizards use their steps' own limits (builds, compute-sanitizer) under the wizard's cap.
# Usage (from anywhere): bash scripts/gpu/wizards.sh OUTDIR [SCENARIO_ID ...]
#   with IDs, only those wizards run; WIZARD_IDS="ID ..." does the same through
#   scripts/gpu_run.sh wizards; WIZARD_SET=new (or recorded) runs only the wizards without a
#   record of their current steps (or only the re-runs).
# Then, on the workstation: python scripts/import_evidence.py OUTDIR/*.json --keep --update-kb
usage="wizards.sh OUTDIR [SCENARIO_ID ...]"
. "$(dirname "$0")/lib/prelude.sh"
shift
export CUDA_CLINIC_EXT_CACHE=${CUDA_CLINIC_EXT_CACHE:-/tmp/cuda-clinic-ext}
data=${CUDA_CLINIC_DATA_DIR:-/tmp/clinic-data}
budget=${WIZARD_BUDGET_S:-540}   # seconds for the whole script
light_cap=90                     # seconds for one recorded light wizard (as recorded)
new_cap=300                      # seconds for one new wizard (builds, compute-sanitizer)
heavy_cap=75                     # seconds for one exclusive wizard
per_step=45                      # --timeout for re-runs of recorded wizards
jobs=${WIZARD_JOBS:-6}           # light wizards at once
heavy_estimate=35                # seconds kept for each exclusive wizard after phases A and B

if [ "$#" -eq 0 ] && [ -n "${WIZARD_IDS:-}" ]; then
  set -- $WIZARD_IDS
fi
# One line per wizard: phase, id, recorded|new, ext|plain.
listing=$(timeout -k 5 60 "$PY" - "$@" <<'PYEOF'
import json, os, sys
from pathlib import Path
from core.wizard import scenarios
wanted = sys.argv[1:]


def record(s):
    """Its committed evidence record, or None."""
    path = Path("resources/evidence", s.id.replace("/", "__") + ".json")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def recorded(rec, s):
    """A committed record of the same steps (a record of another repro counts as none)."""
    if rec is None:
        return False
    steps = rec["scenario"]["steps"]
    return [(t["name"], t["file"], t["function"]) for t in steps] == [
        (t.name, t.file, t.function) for t in s.steps
    ]


def took(rec):
    """Seconds the record took (0 without one): a re-run's cap must allow that."""
    try:
        return int(float(rec.get("duration_s") or 0))
    except (ValueError, AttributeError):
        return 0


known = {s.id: s for s in scenarios()}
for ident in wanted:
    if ident not in known:
        print(f"unknown {ident}", file=sys.stderr)
rows = []
for s in scenarios():
    if wanted and s.id not in wanted:
        continue
    ext = any(step.file == "ext_ops.py" for step in s.steps)
    phase = "heavy" if s.requirements.exclusive else ("ext" if ext else "light")
    rec = record(s)
    rows.append((recorded(rec, s), phase, s.id, took(rec)))
only = os.environ.get("WIZARD_SET", "")  # new | recorded | (all)
for recorded, phase, ident, seconds in sorted(rows, key=lambda r: r[0]):
    kind = "recorded" if recorded else "new"
    if only in ("", kind):
        print(phase, ident, kind, seconds)
PYEOF
) || { echo "cannot list the scenarios"; exit 1; }
pick() { printf '%s\n' "$listing" | awk -v p="$1" '$1 == p {print $2}'; }
light=$(pick light); extw=$(pick ext); heavy=$(pick heavy)
ids=$(printf '%s\n' "$listing" | awk '{print $2}')
# A recorded wizard's cap allows 1.5x what its record took (nccl/watchdog-timeout took 249 s on
# 2x H200; the fixed 75 s cap killed it with no result on 4x H100).
took() { printf '%s\n' "$listing" | awk -v i="$1" '$2 == i {print $4 + 0}'; }
cap_for() {  # ID DEFAULT
  local t; t=$(took "$1"); t=$(( ${t:-0} * 3 / 2 + 15 ))
  echo $(( t > $2 ? t : $2 ))
}
is_new() { printf '%s\n' "$listing" | awk -v i="$1" '$2 == i && $3 == "new" {f=1} END {exit !f}'; }
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader \
  >"$out/nvidia-smi.txt" 2>&1
ls -l /usr/lib/x86_64-linux-gnu/libcudnn*.so.9 >"$out/system-cudnn.txt" 2>&1
{ command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer; nvcc --version | tail -2
  ldconfig -p | grep -E 'libcuda\.so'
  "$PY" -c 'import os, sysconfig, triton; d = os.path.dirname(triton.__file__)
print("triton", triton.__version__, "cuda.h bundled:",
      os.path.isfile(os.path.join(d, "backends", "nvidia", "include", "cuda.h")))
print("Python.h:", os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
} >"$out/toolchain.txt" 2>&1

# Phase 0: the extension builds, in the background (nothing to do when no wizard needs them).
build_pid=
if [ -n "$extw" ]; then
  ( t0=$SECONDS
    build() {  # VARIANT ('' = this GPU's, guard = the guard extension): in its own process
      timeout -k 5 240 "$PY" - "$1" <<'PYEOF'
import sys
sys.path.insert(0, "core/wizard/steps")
import torch, _extkit
why = _extkit.why_no_toolchain() or (None if torch.cuda.is_available() else "no CUDA GPU")
if why:
    print("no build:", why); raise SystemExit
print("built", _extkit.build_all([sys.argv[1]]))
PYEOF
    }
    build "" & build 8.0 & build 8.0+PTX & build guard &
    wait
    echo "prebuild done in $(( SECONDS - t0 ))s" ) >"$out/prebuild.log" 2>&1 &
  build_pid=$!
fi

run_one() {  # ID CAP: one wizard, its own data dir (parallel runs share no SQLite file)
  local id=$1 cap=$2 slug=${1//\//__} t0=$SECONDS limit=()
  is_new "$id" || limit=(--timeout "$per_step")
  CUDA_CLINIC_DATA_DIR="$data/$slug" timeout -k 5 "$cap" \
    "$PY" -m core wizard run "$id" --json "${limit[@]}" \
    >"$out/$slug.json" 2>"$out/$slug.log"
  local rc=$?
  [ "$rc" -ne 0 ] && echo "rc=$rc" >>"$out/$slug.log"
  echo "$(( SECONDS - t0 ))" >"$out/$slug.seconds"
}

skip() { echo "NOT RUN (script time budget spent)" >"$out/${1//\//__}.skip"; }

heavy_count=$(printf '%s\n' "$heavy" | grep -c . || true)
window=$(( budget - heavy_count * heavy_estimate ))
parallel() {  # IDS...: light wizards, $jobs at a time, inside the window left for phase C
  for id in "$@"; do
    while [ "$(jobs -rp | grep -v "^${build_pid:-x}$" | wc -l)" -ge "$jobs" ]; do
      wait -n 2>/dev/null || sleep 1
    done
    local room=$(( window - (SECONDS - start) ))
    if [ "$room" -lt 20 ]; then skip "$id"; continue; fi
    local cap; cap=$(cap_for "$id" $light_cap)
    is_new "$id" && cap=$new_cap
    run_one "$id" $(( room + 15 < cap ? room + 15 : cap )) &
  done
}
wait_jobs() {  # every wizard started so far, not the background build
  for pid in $(jobs -rp); do [ "$pid" = "${build_pid:-x}" ] || wait "$pid"; done
}

parallel $light            # phase A
[ -n "$build_pid" ] && wait "$build_pid"
parallel $extw             # phase B
wait_jobs

for id in $heavy; do       # phase C
  room=$(left)
  if [ "$room" -lt 20 ]; then skip "$id"; continue; fi
  cap=$(cap_for "$id" $heavy_cap)
  is_new "$id" && cap=120
  run_one "$id" $(( room < cap ? room : cap ))
done

summary() {  # one line from a wizard JSON
  summarize_json "$1" "$2" "$3" "${1%.json}.log" <<'PYEOF'
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
[ -f "$out/prebuild.log" ] && cat "$out/prebuild.log"
cat "$out/summary.txt"
