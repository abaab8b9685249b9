#!/usr/bin/env bash
# Issues 22 and 18: env --deep (and, with --quick, quick env) against collect_env on this host's
# GPUs. About 4 minutes (5 with --quick). Usage (repo root): bash scripts/gpu/envbench.sh OUTDIR [--quick]
#   1. as the host is (the GPU image sets PYTHONDONTWRITEBYTECODE=1 and torch's install holds no
#      bytecode), with the variants: no CUDA warm-up, no bytecode cache;
#   2. with PYTHONDONTWRITEBYTECODE unset (the warm-up runs write torch's bytecode into its
#      install, as pip does at install time on most machines);
#   3. (--quick) quick env against collect_env (benchmarks/bench_env.py) and three staged runs.
usage="envbench.sh OUTDIR [--quick]"
. "$(dirname "$0")/lib/prelude.sh"
summary="$out/summary.txt"
: >"$summary"
timeout -k 2 15 nvidia-smi -L | sed -E 's/\(UUID: [^)]*\)//' >"$out/nvidia-smi.txt" 2>&1
log "machine: $(wc -l <"$out/nvidia-smi.txt") GPU(s): $(head -1 "$out/nvidia-smi.txt")"
log "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-<unset>}"
timeout -k 5 280 "$PY" benchmarks/bench_env_deep.py --rounds 5 --variants \
  --json "$out/bench_deep.json" >"$out/bench_deep.txt" 2>&1
log "1. bench_env_deep as the host is: exit=$?"
grep -E "^\||per round|deep probe|bytecode|stage times|RATIO" "$out/bench_deep.txt" >>"$summary"
timeout -k 5 150 env -u PYTHONDONTWRITEBYTECODE "$PY" benchmarks/bench_env_deep.py --rounds 5 \
  --json "$out/bench_deep_bytecode.json" >"$out/bench_deep_bytecode.txt" 2>&1
log "2. bench_env_deep, bytecode written: exit=$?"
grep -E "^\||per round|deep probe|bytecode|stage times|RATIO" "$out/bench_deep_bytecode.txt" >>"$summary"
if [ "${2:-}" = "--quick" ]; then
  timeout -k 5 150 "$PY" benchmarks/bench_env.py --repeats 5 --json "$out/bench_quick.json" \
    >"$out/bench_quick.txt" 2>&1
  log "3. bench_env: exit=$?"
  grep -E "^\||round|load" "$out/bench_quick.txt" >>"$summary"
  for r in 1 2 3; do
    CUDA_CLINIC_TIMING=$(date +%s.%N) "$PY" -m core env --json 2>"$out/quick_stages_$r.txt" >"$out/quick_$r.json"
    log "quick env stages $r: $(tr '\n' ' ' <"$out/quick_stages_$r.txt" | sed 's/cuda-clinic-timing: //g')"
    "$PY" -c 'import json,sys;print("quick probe sections:", json.load(open(sys.argv[1]))["probe"]["timings"]["quick"])' "$out/quick_$r.json" | tee -a "$summary"
  done
fi
log "=== total ${SECONDS}s"
