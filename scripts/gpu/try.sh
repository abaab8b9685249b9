#!/usr/bin/env bash
# `cuda-clinic try --fixes` on the real failing scripts in tests/data/scripts/gpu/: one JSON per
# script in OUTDIR (plus its stderr), env.json for the machine, and summary.txt with the verdict
# of every fix. Each script is bounded (timeout -k 5), one failing never stops the others, and
# the whole script stops starting new ones once its 205 s budget is spent (at most ~3.5 min).
# Usage (from anywhere): bash scripts/gpu/try.sh OUTDIR [SCRIPT.py ...]
usage="try.sh OUTDIR [SCRIPT.py ...]"
. "$(dirname "$0")/lib/prelude.sh"
shift
budget=205      # seconds for the whole script
per_run=60      # --timeout of each run (the original and each re-run)
per_script=110  # seconds for one script's whole try (original + fixes)

if [ "$#" -gt 0 ]; then
  scripts=("$@")
else
  # Quickest first, so a slow machine still records most of them.
  scripts=(eval_rnn_saliency.py wgan_gp_lstm.py deterministic_cublas.py deterministic_histogram.py
           embedding_oob.py fragmentation_oom.py)
fi
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader \
  >"$out/nvidia-smi.txt" 2>&1
timeout -k 5 40 "$PY" -m core env --json --deep >"$out/env.json" 2>"$out/env.stderr"

summarize() {  # one block per try JSON
  summarize_json "$1" "$2" "$3" "${1%.json}.stderr" <<'PYEOF'
entry = (run.get("entry") or {}).get("id", "no KB match")
print(f"{ident}: {run['status']} ({run['message']}); error {entry}; {seconds}s")
frame = run.get("frame")
if frame:
    print(f"    raised at {frame['file']}:{frame['line']}: {frame.get('code', '')}")
for fix in run.get("fixes", []):
    cost = fix.get("cost") or {}
    ratio = f"; cost {cost['ratio']}x" if cost.get("ratio") else ""
    print(f"    fix {fix['fix']['id']}: {fix.get('verdict')} ({fix.get('reason', '')}){ratio}"[:300])
if run.get("no_fix"):
    print(f"    no no-code fix: {run['no_fix']['reason']}")
rec = run.get("recommendation") or {}
if rec:
    print(f"    recommendation: {rec.get('text', '')}"[:300])
PYEOF
}

lines=()
for name in "${scripts[@]}"; do
  left=$(( budget - (SECONDS - start) ))
  if [ "$left" -lt 25 ]; then
    lines+=("$name: NOT RUN (script time budget spent)")
    continue
  fi
  cap=$(( left < per_script ? left : per_script ))
  t0=$SECONDS
  timeout -k 5 "$cap" "$PY" -m core try --fixes --json --timeout "$per_run" \
    -- "$PY" "tests/data/scripts/gpu/$name" >"$out/${name%.py}.json" 2>"$out/${name%.py}.stderr"
  rc=$?
  block=$(summarize "$out/${name%.py}.json" "$name" "$(( SECONDS - t0 ))")
  lines+=("$block (rc=$rc)")
done
left=$(( budget - (SECONDS - start) ))
if [ "$left" -ge 70 ]; then  # supervision overhead, only while the budget allows
  timeout -k 5 $(( left - 5 )) "$PY" benchmarks/bench_try.py --seconds 10 --repeats 2 \
    >"$out/bench_try.txt" 2>&1
  lines+=("bench_try (10 s workload, 2 rounds): $(tail -n 1 "$out/bench_try.txt")")
else
  lines+=("bench_try: NOT RUN (script time budget spent)")
fi
{
  printf '%s\n' "${lines[@]}"
  echo "summary: ${#scripts[@]} scripts in $(( SECONDS - start ))s on $(head -n 1 "$out/nvidia-smi.txt")"
} | tee "$out/summary.txt"
