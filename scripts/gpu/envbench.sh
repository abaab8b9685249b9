#!/usr/bin/env bash
# Issues 22 and 18: env --deep (and, with --quick, quick env) against collect_env on this host's
# GPUs, after the deep probe's and the quick probe's overlap changes. About 90 s (150 s with
# --quick). Usage (repo root): bash scripts/gpu/envbench.sh OUTDIR [--quick]
usage="envbench.sh OUTDIR [--quick]"
. "$(dirname "$0")/lib/prelude.sh"
summary="$out/summary.txt"
: >"$summary"
timeout -k 2 15 nvidia-smi -L | sed -E 's/\(UUID: [^)]*\)//' >"$out/nvidia-smi.txt" 2>&1
log "machine: $(wc -l <"$out/nvidia-smi.txt") GPU(s): $(head -1 "$out/nvidia-smi.txt")"
timeout -k 5 200 "$PY" benchmarks/bench_env_deep.py --rounds 5 --json "$out/bench_deep.json" \
  >"$out/bench_deep.txt" 2>&1
log "bench_env_deep: exit=$?"
grep -E "^\||per round|deep probe|stage times|RATIO" "$out/bench_deep.txt" >>"$summary"
if [ "${2:-}" = "--quick" ]; then
  timeout -k 5 200 "$PY" benchmarks/bench_env.py --repeats 5 --json "$out/bench_quick.json" \
    >"$out/bench_quick.txt" 2>&1
  log "bench_env: exit=$?"
  grep -E "^\||round|load" "$out/bench_quick.txt" >>"$summary"
  for r in 1 2 3; do
    CUDA_CLINIC_TIMING=$(date +%s.%N) "$PY" -m core env --json 2>"$out/quick_stages_$r.txt" >"$out/quick_$r.json"
    log "quick env stages $r: $(tr '\n' ' ' <"$out/quick_stages_$r.txt" | sed 's/cuda-clinic-timing: //g')"
    "$PY" -c 'import json,sys;print("quick probe sections:", json.load(open(sys.argv[1]))["probe"]["timings"]["quick"])' "$out/quick_$r.json" | tee -a "$summary"
  done
fi
log "=== total ${SECONDS}s"
