#!/usr/bin/env bash
# Issue 22 on FOUR GPUs (nvidia-h100-x4), in one call (at most ~5 minutes; every step bounded
# by `timeout`). Usage (repo root as cwd): bash scripts/gpu/env4.sh OUTDIR
# (scripts/gpu_run.sh env4 does this). Then, here: python scripts/import_env4.py OUTDIR/env4
#   1. nvidia-smi topology; `env --deep --json` and the human text (the multi-GPU section:
#      NVLink generation, links up, peer access, NCCL as loaded)
#   2. env --deep against collect_env: benchmarks/bench_env_deep.py, 5 alternating rounds
#   3. `cuda-clinic nccl --nproc 4 --json`
# summary.txt: one line per step, the NVLink rows, the benchmark's ratio, the NCCL verdict.
. "$(dirname "$0")/lib/prelude.sh"
budget=300
summary="$out/summary.txt"
: >"$summary"

timeout -k 2 15 nvidia-smi -L | sed -E 's/\(UUID: [^)]*\)//' >"$out/nvidia-smi.txt" 2>&1
timeout -k 2 15 nvidia-smi topo -m >"$out/topo.txt" 2>&1
log "machine: $(wc -l <"$out/nvidia-smi.txt") GPU(s): $(head -1 "$out/nvidia-smi.txt")"

# ---- 1. env --deep
t0=$SECONDS
timeout -k 5 120 "$PY" -m core env --deep --json >"$out/env_deep.json" 2>"$out/env_deep.err"
log "env --deep --json: exit=$? in $(( SECONDS - t0 ))s"
# The human text from a second run (not `env --from`: that reads through msgspec, which the GPU
# image may lack).
timeout -k 5 120 "$PY" -m core env --deep >"$out/env_deep.txt" 2>&1
grep -E "^(Multi-GPU|  GPU|  peers|  NCCL|  +ECC)" "$out/env_deep.txt" >>"$summary"
"$PY" - "$out/env_deep.json" <<'PYEOF' | tee -a "$summary"
import json, sys
d = json.load(open(sys.argv[1]))
print("findings:", [(f["id"], f["severity"]) for f in d["findings"]])
print("deep probe:", d["probe"]["timings"]["deep"], "gpu checks:",
      (d.get("torch") or {}).get("gpu_seconds"))
PYEOF

# ---- 2. the benchmark
timeout -k 5 $(( $(left) - 150 )) "$PY" benchmarks/bench_env_deep.py --rounds 5 \
  --json "$out/bench.json" >"$out/bench.txt" 2>&1
log "bench: exit=$?"
cat "$out/bench.txt" >>"$summary"

# ---- 3. nccl --nproc 4
if [ "$(left)" -gt 40 ]; then
  timeout -k 5 $(( $(left) - 10 )) "$PY" -m core nccl --nproc 4 --json --timeout $(( $(left) - 20 )) \
    >"$out/nccl.json" 2>"$out/nccl.err"
  log "nccl --nproc 4: exit=$?"
  "$PY" - "$out/nccl.json" <<'PYEOF' | tee -a "$summary"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    print("nccl:", r["status"], "transport", r["transport"].get("primary"), "verdict",
          r["verdict"]["status"], "-", r["verdict"].get("message"))
except Exception as e:
    print("nccl: no result", type(e).__name__, e)
PYEOF
else
  log "nccl: NOT RUN (budget spent)"
fi
log "=== total ${SECONDS}s; import: python scripts/import_env4.py OUTDIR/env4"
