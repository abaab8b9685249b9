#!/usr/bin/env bash
# Issue 22 on ONE GPU, in one call (at most ~8 minutes; every step bounded by `timeout`, one
# failing step never stops the others). Usage (repo root as cwd): bash scripts/gpu/env2.sh OUTDIR
# (scripts/gpu_run.sh env2 does this). Then, here: python scripts/import_env2.py OUTDIR/env2
#   1. alloc-retry: does a second CUDA initialisation after a refused PYTORCH_CUDA_ALLOC_CONF
#      crash plain torch (the probe's old SIGSEGV)? (a) allocate once: expect ValueError, exit 1;
#      (b) catch it and allocate again: expect SIGSEGV (exit 139 / -11); (c) env --deep with the
#      same setting: the probe ends normally and names the setting first.
#   2. the fault matrix (scripts/gpu/env_matrix.sh, 20 setups, <= 300 s), into matrix/
#   3. env --deep against collect_env: benchmarks/bench_env_deep.py, 5 alternating rounds, with
#      the CUDA warm-up switched off as a variant
#   4. the gpu-marked env tests (NVML links read through ctypes against nvidia-ml-py, ...)
# summary.txt: one line per step, the matrix's first findings, the benchmark's ratio.
. "$(dirname "$0")/lib/prelude.sh"
budget=470
summary="$out/summary.txt"
: >"$summary"

log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$PY" -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())' 2>&1 | tail -1)"

# ---- 1. alloc-retry
conf=expandable_segment:True
first='import torch; torch.randn(1, device="cuda")'
again='import torch
try:
    torch.randn(1, device="cuda")
except Exception as exc:
    print("first attempt:", type(exc).__name__, exc, flush=True)
torch.randn(1, device="cuda")
print("second attempt worked")'
PYTORCH_CUDA_ALLOC_CONF=$conf timeout -k 5 60 "$PY" -X faulthandler -c "$first" >"$out/alloc_retry_a.txt" 2>&1
log "alloc-retry (a) allocate once: exit=$?"
PYTORCH_CUDA_ALLOC_CONF=$conf timeout -k 5 60 "$PY" -X faulthandler -c "$again" >"$out/alloc_retry_b.txt" 2>&1
log "alloc-retry (b) catch, allocate again: exit=$? (139 = SIGSEGV)"
PYTORCH_CUDA_ALLOC_CONF=$conf timeout -k 5 60 "$PY" -m core env --deep --json >"$out/alloc_retry_c.json" 2>"$out/alloc_retry_c.err"
rc=$?
log "alloc-retry (c) env --deep: exit=$rc $("$PY" - "$out/alloc_retry_c.json" <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print("first=" + (d["findings"][0]["id"] if d["findings"] else "none"),
          "deep=" + str((d["probe"].get("deep") or {}).get("error")))
except Exception as e:
    print("unreadable:", type(e).__name__)
PYEOF
)"

# ---- 2. the fault matrix
t0=$SECONDS
MATRIX_BUDGET=$(( $(left) - 150 )) timeout -k 5 $(( $(left) - 140 )) bash scripts/gpu/env_matrix.sh "$out/matrix" >"$out/matrix.log" 2>&1
log "matrix: exit=$? in $(( SECONDS - t0 ))s"
grep -E " rc=| SKIPPED" "$out/matrix/summary.txt" >>"$summary" 2>/dev/null

# ---- 3. the benchmark
if [ "$(left)" -gt 80 ]; then
  timeout -k 5 $(( $(left) - 40 )) "$PY" benchmarks/bench_env_deep.py --rounds 5 --variants \
    --json "$out/bench.json" >"$out/bench.txt" 2>&1
  log "bench: exit=$?"
  cat "$out/bench.txt" >>"$summary"
  cp "$out/bench.json" "$out/matrix/bench.json" 2>/dev/null
else
  log "bench: NOT RUN (budget spent)"
fi

# ---- 4. the gpu-marked env tests
if [ "$(left)" -gt 30 ]; then
  timeout -k 5 $(( $(left) - 10 )) "$PY" -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_env_gpu.py >"$out/pytest_env.txt" 2>&1
  log "pytest gpu env: exit=$? $(tail -n 1 "$out/pytest_env.txt")"
fi
log "=== total ${SECONDS}s; import: python scripts/import_env2.py OUTDIR/env2"
cat "$summary"
