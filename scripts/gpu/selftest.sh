#!/usr/bin/env bash
# Runs `cuda-clinic selftest --json` on the GPU machine: the containment drills (segfault,
# abort, hang, output flood, orphaned grandchild, memory balloon), the CUDA drill (an illegal
# index -> device-side assert, which must be contained and a fresh worker must compute after
# it), and the SIGKILL-while-saving and corrupt-database drills. At most about 1 minute:
# the selftest is cut at 50 s, the summary step at 10 s.
# Usage (from anywhere): bash scripts/gpu/selftest.sh OUTDIR
. "$(dirname "$0")/lib/prelude.sh"

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/nvidia-smi.txt" 2>&1
start=$SECONDS
timeout -k 5 50 "$PY" -m core selftest --json --kills 5 >"$out/selftest.json" 2>"$out/selftest.stderr"
rc=$?
echo "$rc" >"$out/selftest.rc"
timeout -k 2 10 "$PY" - "$out" "$rc" "$(( SECONDS - start ))" >"$out/summary.txt" 2>&1 <<'PYEOF'
import json, sys
out, rc, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    data = json.load(open(f"{out}/selftest.json"))
except Exception as exc:
    print(f"selftest: NO RESULT (rc {rc}, {type(exc).__name__}), see selftest.stderr")
    raise SystemExit(0)
for d in data["drills"]:
    print(f"{d['name']}: {d['status']} in {d['seconds']:.2f}s: {d['detail']}"[:300])
passed = sum(d["status"] == "passed" for d in data["drills"])
skipped = sum(d["status"] == "skipped" for d in data["drills"])
print(f"summary: {passed}/{len(data['drills'])} drills passed, {skipped} skipped, "
      f"rc {rc}, {seconds}s; gpu: {open(f'{out}/nvidia-smi.txt').read().strip()[:120]}")
PYEOF
cat "$out/summary.txt"
exit "$rc"
