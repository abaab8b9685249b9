#!/usr/bin/env bash
# The fleet area on the GPU machine, at most about 60 s in all: `cuda-clinic fleet --ssh` over
# four "hosts" that are this machine (a stand-in ssh, scripts/gpu/fleet/ssh, runs each command
# here), so the real `python3 -m core env --json` (quick, then --deep on all four at once) goes
# through the real collection, analysis, saving and report path. Plus one unknown host, which
# must be listed as unreachable. Usage: fleet.sh OUTDIR (repo root as cwd, PYTHONPATH set, as
# scripts/gpu_run.sh does). Steps are time-bounded; one failing never stops the others.
out=${1:?usage: fleet.sh OUTDIR}
mkdir -p "$out"
py=python3
hosts="gpu-a gpu-b gpu-c gpu-d"
export FLEET_GPU_HOSTS="$hosts"
export PATH="$PWD/scripts/gpu/fleet:$PATH"
printf '%s\n' $hosts no-such-host >"$out/hosts"
summary=()
step() {  # step NAME SECONDS COMMAND...: run, log, remember the exit status
  local name=$1 limit=$2; shift 2
  local start=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  summary+=("$name rc=$rc $(( $(date +%s) - start ))s")
  echo "$name rc=$rc"
}
# which ssh the fleet command will run (the stand-in, not the system's)
command -v ssh >"$out/which_ssh.txt"
step quick 15 $py -m core fleet --ssh "$out/hosts" --remote-command "$py -m core" \
  --timeout 10 --json --save "$out/quick"
step quick_text 12 $py -m core fleet --from "$out/quick"
step deep 35 $py -m core fleet --ssh "$out/hosts" --remote-command "$py -m core" --deep \
  --timeout 30 --parallel 8 --json --save "$out/deep"
# Redact what the fleet JSONs carry about this machine (home, user, host name, GPU UUIDs) the
# way tests/data/env/record.py redacts env fixtures, before anything leaves the machine.
timeout -k 5 20 $py - "$out" <<'PY' >"$out/checks.txt" 2>&1
import json, runpy, sys
from pathlib import Path
out = Path(sys.argv[1])
Redactor = runpy.run_path("tests/data/env/record.py")["Redactor"]
red = Redactor()
lines = []
for mode in ("quick", "deep"):
    path = out / mode / "fleet.json"
    if not path.is_file():
        lines.append(f"{mode}: FAILED (no fleet.json)")
        continue
    data = red.walk(json.loads(path.read_text()))
    (out / f"fleet_{mode}.json").write_text(json.dumps(data, indent=1) + "\n")
    nodes = {n["fleet_node"]: n for n in data["nodes"]}
    ok = sorted(n for n, v in nodes.items() if v["status"] == "ok")
    a = data["analysis"]
    gpus = sorted({g["name"] for v in nodes.values() for g in (v["environment"] or {}).get("gpus") or []})
    good = ok == ["gpu-a", "gpu-b", "gpu-c", "gpu-d"] and nodes["no-such-host"]["status"] == "unreachable"
    lines.append(
        f"{mode}: {'ok' if good else 'FAILED'}: {len(ok)}/4 hosts answered with real env JSON "
        f"({', '.join(gpus) or 'no GPU'}), no-such-host {nodes['no-such-host']['status']}, "
        f"{len(a['outliers'])} differ, {len(a['gpu_outliers'])} GPU differences, "
        f"{data['seconds']:.1f} s"
    )
    for o in a["outliers"]:
        lines.append(f"  {mode} {o['node']} differs: " + "; ".join(d["field"] for d in o["differences"][:5]))
try:  # the report's fleet section, redacted (built here: the report CLI also opens history)
    from core.fleet.section import section_from_file
    from core.report import build_report, redact, render

    shared, _items = redact(build_report(environment=None, fleet=section_from_file(str(out / "deep"))))
    report = render(shared, "md")
    (out / "report_fleet.md").write_text(report)
except Exception as exc:  # noqa: BLE001 (a summary line, not a traceback, is the result)
    report = ""
    lines.append(f"report: error {type(exc).__name__}: {exc}")
labels = all(f"node-0{i}" in report for i in range(1, 6)) and "gpu-a" not in report
lines.append(f"report: {'ok' if labels and '### Fleet' in report else 'FAILED'}: fleet section, hosts labelled node-01..node-05")
print("\n".join(lines))
PY
cat "$out/checks.txt" >"$out/summary.txt"
printf '%s\n' "${summary[@]}" >>"$out/summary.txt"
fails=$(grep -c FAILED "$out/checks.txt")
echo "summary: $(grep -c ': ok' "$out/checks.txt") checks ok, $fails failed" >>"$out/summary.txt"
rm -rf "$out/quick" "$out/deep"  # unredacted; the redacted fleet_*.json replace them
cat "$out/summary.txt"
