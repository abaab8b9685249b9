#!/usr/bin/env bash
# Issue 22, one GPU, the short re-check (at most ~3 minutes; every step bounded by `timeout`,
# one failing step never stops the others): what changed since `env2` was recorded.
# Usage (repo root as cwd): bash scripts/gpu/env2short.sh OUTDIR
# (scripts/gpu_run.sh env2short does this). Then, here:
#   python scripts/import_env2.py OUTDIR/env2short --only-present
#   1. plain `import torch` three times (what the deep child's import is compared with)
#   2. four setups of the fault matrix (scripts/gpu/env_matrix.sh with MATRIX_ONLY): healthy,
#      the system cuDNN on LD_LIBRARY_PATH, the incomplete cuDNN copy (the miss of the first
#      H100 run) and the truncated copy (the crash path: the probe dies before it can say its
#      JSON is written)
#   3. env --deep against collect_env: benchmarks/bench_env_deep.py, 5 alternating rounds, with
#      one more run's stage times (CUDA_CLINIC_TIMING)
#   4. the gpu-marked env tests
. "$(dirname "$0")/lib/prelude.sh"
budget=180
summary="$out/summary.txt"
: >"$summary"

log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$PY" -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())' 2>&1 | tail -1)"

# ---- 1. plain import torch
for i in 1 2 3; do
  timeout -k 2 30 "$PY" -c 'import time; t = time.perf_counter(); import torch; print(f"{time.perf_counter() - t:.3f}")' \
    >>"$out/torch_import.txt" 2>&1
done
log "plain import torch (s): $(tr '\n' ' ' <"$out/torch_import.txt")"

# ---- 2. four setups of the fault matrix
t0=$SECONDS
MATRIX_ONLY="healthy ld-library-path-system-cudnn cudnn-sublibrary-missing damaged-cudnn-truncated" \
  MATRIX_BUDGET=80 timeout -k 5 85 bash scripts/gpu/env_matrix.sh "$out/matrix" >"$out/matrix.log" 2>&1
log "matrix (4 setups): exit=$? in $(( SECONDS - t0 ))s"
grep -E " rc=| SKIPPED" "$out/matrix/summary.txt" >>"$summary" 2>/dev/null

# ---- 3. the benchmark
if [ "$(left)" -gt 70 ]; then
  timeout -k 5 $(( $(left) - 35 )) "$PY" benchmarks/bench_env_deep.py --rounds 5 \
    --json "$out/bench.json" >"$out/bench.txt" 2>&1
  log "bench: exit=$?"
  cat "$out/bench.txt" >>"$summary"
else
  log "bench: NOT RUN (budget spent)"
fi

# ---- 4. the gpu-marked env tests
timeout -k 5 $(( $(left) > 40 ? $(left) : 40 )) "$PY" -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_env_gpu.py >"$out/pytest_env.txt" 2>&1
log "pytest gpu env: exit=$? $(tail -n 1 "$out/pytest_env.txt")"
log "=== total ${SECONDS}s; import: python scripts/import_env2.py OUTDIR/env2short --only-present"
