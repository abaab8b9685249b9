#!/usr/bin/env bash
# The nccl area on the TWO-GPU machine (2x H200, NVLink), about 5.5 minutes at most (budget
# 330 s; every step is bounded by `timeout`, one failing step never stops the others):
#   1. nvidia-smi topology and NVLink status; `env --deep --json` (the multi_gpu section) and the
#      raw links and peers output of one deep run (the fixture tests/data/env/multi_gpu replays)
#   2. nccl-tests 2.19.6 built from the anchor against the NCCL in torch's nvidia/nccl wheel
#      (sm_90 only), then `all_reduce_perf -b 8 -e 1G -f 2 -g 2`
#   3. `python3 -m core nccl --nproc 2 --json` in the same call
#   4. the NCCL wizards with --json
# summary.txt: one line per check, then our all_reduce busbw at 1 GiB vs nccl-tests' and the
# ratio (must be within 10%). Usage (repo root as cwd): bash scripts/gpu/nccl.sh OUTDIR
. "$(dirname "$0")/lib/prelude.sh"
budget=330
lines=()

note() { lines+=("$1"); echo "$1"; }
# run NAME LIMIT CMD...: bounded by LIMIT and by what is left of the budget; stdout to NAME.out
run() {
  local name=$1 limit=$2; shift 2
  local remain; remain=$(left)
  if [ "$remain" -lt 15 ]; then note "$name: NOT RUN (budget spent)"; return 99; fi
  [ "$limit" -gt "$remain" ] && limit=$remain
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  note "$name: rc=$rc in $(( SECONDS - t0 ))s$([ $rc -eq 124 ] && echo ' (TIMED OUT)')"
  return $rc
}

# 1. The host: topology, links, env --deep, raw probes.
run topo 15 nvidia-smi topo -m
run nvlink 15 nvidia-smi nvlink -s
run env_deep 90 "$PY" -m core env --deep --json
cp "$out/env_deep.out" "$out/env_deep.json" 2>/dev/null
run probes 90 "$PY" - "$out/probes.json" <<'PYEOF'
import json, sys
from core.env.multigpu import peers_from_deep
from core.env.runner import run_probes
quick, deep = run_probes(sys.executable, deep=True)
links = ((quick.data or {}).get("nvml") or {}).get("links")
peers = peers_from_deep(deep.data if deep else None)
json.dump({"nvml_links": links, "peers": peers,
           "status": {"quick": quick.status(), "deep": deep.status() if deep else None}},
          open(sys.argv[1], "w"), indent=1)
print("nvml gpus:", len((links or {}).get("gpus") or []), "peers:", (peers or {}).get("peer_access"))
PYEOF

# 2. nccl-tests against torch's NCCL.
anchor=""
for a in .anchors/nccl-tests-2.19.6.tar.gz ../shared/anchors/nccl-tests-2.19.6.tar.gz; do
  [ -f "$a" ] && anchor=$a && break
done
nccl_dir=$("$PY" - <<'PYEOF'
import os, site, sys
dirs = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for d in dirs:
    p = os.path.join(d, "nvidia", "nccl")
    if os.path.isfile(os.path.join(p, "include", "nccl.h")) and os.path.isdir(os.path.join(p, "lib")):
        print(p); break
PYEOF
)
echo "anchor=$anchor nccl_dir=$nccl_dir" >"$out/nccl_tests_build.txt"
build=/tmp/nccl-tests-build
home=/tmp/nccl-home
if [ -n "$anchor" ] && [ -n "$nccl_dir" ]; then
  rm -rf "$build" "$home" && mkdir -p "$build" "$home/lib"
  tar -xzf "$anchor" -C "$build" --strip-components=1
  ln -s "$nccl_dir/include" "$home/include"
  lib=$(ls "$nccl_dir"/lib/libnccl.so* | head -1)
  ln -s "$lib" "$home/lib/libnccl.so"      # the wheel has no unversioned libnccl.so
  ln -s "$lib" "$home/lib/libnccl.so.2"
  run nccl_tests_make 150 make -C "$build" -j16 MPI=0 CUDA_HOME=/usr/local/cuda \
    NCCL_HOME="$home" NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90"
  tail -n 20 "$out/nccl_tests_make.err" >>"$out/nccl_tests_build.txt"
  if [ -x "$build/build/all_reduce_perf" ]; then
    LD_LIBRARY_PATH="$home/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}" \
      run nccl_tests 120 "$build/build/all_reduce_perf" -b 8 -e 1G -f 2 -g 2
    cp "$out/nccl_tests.out" "$out/nccl_tests.txt"
  else
    note "nccl_tests: NOT RUN (all_reduce_perf was not built; see nccl_tests_build.txt)"
  fi
else
  note "nccl_tests: NOT RUN (anchor '$anchor' or torch's nvidia/nccl '$nccl_dir' not found)"
fi

# 3. Ours, right after.
run nccl 150 "$PY" -m core nccl --nproc 2 --json --timeout 140 --keep "$out/nccl_run"
cp "$out/nccl.out" "$out/nccl.json" 2>/dev/null

# 4. The NCCL wizards.
for id in nccl/watchdog-timeout nccl/unhandled-system-error; do
  slug=${id//\//__}
  limit=200; [ "$id" = nccl/unhandled-system-error ] && limit=100
  run "$slug" "$limit" "$PY" -m core wizard run "$id" --json --timeout 60
  cp "$out/$slug.out" "$out/$slug.json" 2>/dev/null
done

# Summary: the comparison, then each wizard's steps.
"$PY" - "$out" >"$out/compare.txt" 2>&1 <<'PYEOF'
import json, re, sys
from pathlib import Path
out = Path(sys.argv[1])
gib = 1 << 30
ours = theirs = None
try:
    report = json.loads((out / "nccl.json").read_text())
    row = next(r for r in report["results"]["all_reduce"] if r["bytes"] == gib)
    ours = row["busbw_gbps"]
    print(f"ours: status {report['status']}, transport {report['transport'].get('primary')}, "
          f"verdict {report['verdict']['status']}: {report['verdict'].get('message')}")
except Exception as exc:
    print(f"ours: no 1 GiB all_reduce result ({type(exc).__name__}: {exc})")
try:
    for line in (out / "nccl_tests.txt").read_text().splitlines():
        cols = line.split()
        if cols and cols[0] == str(gib):
            theirs = float(cols[7])  # out-of-place busbw
    print(f"nccl-tests: out-of-place busbw at 1 GiB {theirs}")
except Exception as exc:
    print(f"nccl-tests: no result ({type(exc).__name__}: {exc})")
if ours and theirs:
    ratio = ours / theirs
    ok = abs(ratio - 1) <= 0.10
    print(f"busbw at 1 GiB: ours {ours:.1f} GB/s, nccl-tests {theirs:.1f} GB/s, "
          f"ratio {ratio:.3f} -> {'WITHIN' if ok else 'NOT within'} 10%")
else:
    print("busbw at 1 GiB: comparison not possible")
for slug in ("nccl__watchdog-timeout", "nccl__unhandled-system-error"):
    try:
        run = json.loads((out / f"{slug}.json").read_text())
        print(f"{run['scenario']['id']}: {run['outcome']}")
        for s in run["steps"]:
            print(f"    {s['name']}: {s['outcome']} ({(s.get('note') or '')[:150]})")
    except Exception as exc:
        print(f"{slug}: NO RESULT ({type(exc).__name__})")
PYEOF
cat "$out/compare.txt"
{ printf '%s\n' "${lines[@]}"; cat "$out/compare.txt"; echo "total ${SECONDS}s"; } >"$out/summary.txt"
echo "total ${SECONDS}s"
