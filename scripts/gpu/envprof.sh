#!/usr/bin/env bash
# Where the deep and quick env probes spend their time on a GPU host (issue 22/18 profiling),
# about two minutes on one GPU. Usage (repo root): bash scripts/gpu/envprof.sh OUTDIR
. "$(dirname "$0")/lib/prelude.sh"
summary="$out/summary.txt"
: >"$summary"
# W CMD...: CMD's wall seconds (awk, not bc: the GPU image has no bc, and these lines came back empty)
W() { local t0; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }'; }
T() { "$PY" -c 'import time,sys;t=time.perf_counter();import torch;print(round(time.perf_counter()-t,3))'; }
T >/dev/null; T >/dev/null
log "plain import torch: $(T) $(T) $(T)"
# 1. where import torch spends its time
"$PY" - >"$out/cprofile.txt" 2>&1 <<'PYEOF'
import cProfile, pstats, io, time
t = time.perf_counter()
pr = cProfile.Profile(); pr.enable()
import torch
pr.disable()
print("import", round(time.perf_counter() - t, 3))
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14); print(s.getvalue())
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumtime").print_stats("__init__.py.*(_load_global_deps|_preload)|create_dynamic|CDLL", 10); print(s.getvalue())
PYEOF
grep -E "^import|create_dynamic|marshal|CDLL|_load_global|__init__" "$out/cprofile.txt" | head -12 | tee -a "$summary"
"$PY" -X importtime -c 'import torch' 2>"$out/importtime.txt"
sort -t'|' -k2 -n -r "$out/importtime.txt" | head -12 | tee -a "$summary"
LD_DEBUG=statistics "$PY" -c 'import torch' 2>"$out/ld_stats.txt" >/dev/null
grep -iE "total startup|relocation|time needed" "$out/ld_stats.txt" | tail -8 | tee -a "$summary"
# 2. does overlapping the native loads with Python's own imports help?
cat >"$out/preload.py" <<'PYEOF'
import ctypes, glob, os, sys, threading, time, importlib.util
t = time.perf_counter()
spec = importlib.util.find_spec("torch")
lib = os.path.join(os.path.dirname(spec.origin), "lib")
def pre():
    for name in sys.argv[1:]:
        try:
            ctypes.CDLL(os.path.join(lib, name), mode=ctypes.RTLD_GLOBAL if "global" in name else 0)
        except OSError as e:
            print("preload failed", name, e, file=sys.stderr)
th = threading.Thread(target=pre); th.start()
import torch
th.join()
print(round(time.perf_counter() - t, 3))
PYEOF
for r in 1 2 3 4 5; do
  a=$(T); b=$("$PY" "$out/preload.py" libtorch_global_deps.so libtorch_cuda.so); c=$("$PY" "$out/preload.py" libtorch_global_deps.so libtorch_cuda.so libtorch_python.so)
  log "round $r: plain $a, preload global+cuda $b, +python $c"
done
# 3. the deep child: stage times, with and without the CUDA warm-up thread, alone and beside the quick child
for r in 1 2 3; do
  CUDA_CLINIC_TIMING=$(date +%s.%N) "$PY" -m core env --deep --json 2>"$out/deep_stages_$r.txt" >"$out/deep_$r.json"
  log "deep stages $r: $(tr '\n' ' ' <"$out/deep_stages_$r.txt" | sed 's/cuda-clinic-timing: //g' | head -c 1500)"
done
"$PY" - "$out"/deep_1.json "$out"/deep_2.json "$out"/deep_3.json <<'PYEOF' | tee -a "$summary"
import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p)); t = d["probe"]["timings"]
    print("probe timings:", json.dumps(t)[:900])
PYEOF
for r in 1 2 3; do
  a=$(W "$PY" core/env/probe/deep.py --out /tmp/d.json)
  b=$(W env CUDA_CLINIC_NO_WARMUP=1 "$PY" core/env/probe/deep.py --out /tmp/d.json)
  log "deep child alone: warm-up $a s, no warm-up $b s"
done
# 4. the quick probe's sections
for mode in "" "--links" "" "--links"; do
  "$PY" core/env/probe/quick.py $mode --out /tmp/q.json >/dev/null 2>&1
  log "quick $mode: $("$PY" -c 'import json;print(json.load(open("/tmp/q.json"))["timings"])')"
done
for r in 1 2 3; do
  CUDA_CLINIC_TIMING=$(date +%s.%N) "$PY" -m core env --json 2>"$out/quick_stages_$r.txt" >/dev/null
  log "quick env stages $r: $(tr '\n' ' ' <"$out/quick_stages_$r.txt" | sed 's/cuda-clinic-timing: //g')"
done
"$PY" -X importtime -m core env --json 2>"$out/cli_importtime.txt" >/dev/null
sort -t'|' -k2 -n -r "$out/cli_importtime.txt" | head -8 | tee -a "$summary"
for r in 1 2 3; do
  log "python startup: $(W "$PY" -c pass) -I -S: $(W "$PY" -I -S -c pass) nvidia-smi: $(W nvidia-smi) env --json: $(W "$PY" -m core env --json) core --help: $(W "$PY" -m core --help)"
done
log "=== total ${SECONDS}s"
