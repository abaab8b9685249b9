#!/usr/bin/env bash
# The answer on a real GPU (issue 17): what `try`, `wizard run`, `match` and `report` lead with
# where CUDA works, the other side of the CPU tests ("can't test here" must not fire here).
#   try --fixes on embedding_oob.py and fragmentation_oom.py (the answer: cause, located line,
#     fixes verified here), wizard run cuda/device-side-assert (runs; exit 0, saved),
#     match --json on the recorded issue-17 log, report --error as PDF (pages) and JSON.
# Writes one file per step into OUTDIR plus summary.txt; each step is bounded (timeout -k 5);
# about 2 minutes on an H200. Usage (from anywhere): bash scripts/gpu/answer.sh OUTDIR
data_dir=/tmp/clinic-data-answer
. "$(dirname "$0")/lib/prelude.sh"
export QT_QPA_PLATFORM=offscreen
lines=()

timeout -k 5 40 "$PY" -m core env --json --deep >"$out/env.json" 2>"$out/env.stderr"
for name in embedding_oob fragmentation_oom; do
  t0=$SECONDS
  timeout -k 5 150 "$PY" -m core try --fixes --json --timeout 60 \
    -- "$PY" "tests/data/scripts/gpu/$name.py" >"$out/try-$name.json" 2>"$out/try-$name.stderr"
  lines+=("try $name: rc=$? in $(( SECONDS - t0 ))s")
done
t0=$SECONDS
timeout -k 5 180 "$PY" -m core wizard run cuda/device-side-assert --json \
  >"$out/wizard-device-side-assert.json" 2>"$out/wizard.stderr"
lines+=("wizard run cuda/device-side-assert: rc=$? in $(( SECONDS - t0 ))s")
timeout -k 5 30 "$PY" -m core match --json tests/data/answer/issue-17-embedding.txt \
  >"$out/match-issue-17.json" 2>"$out/match.stderr"
lines+=("match issue-17: rc=$?")
timeout -k 5 120 "$PY" -m core report --error tests/data/answer/issue-17-embedding.txt \
  --format json -o "$out/report-issue-17.json" 2>"$out/report-json.stderr"
lines+=("report json: rc=$?")
# PDF through the app's renderer (gui.cli hands it to the core), where PySide6 is installed.
timeout -k 5 120 "$PY" -c "import sys; from gui.cli import main; sys.exit(main(sys.argv[1:]))" \
  report --error tests/data/answer/issue-17-embedding.txt -o "$out/report-issue-17.pdf" \
  2>"$out/report-pdf.stderr"
lines+=("report pdf: rc=$?")

"$PY" - "$out" "${lines[@]}" <<'PYEOF' | tee "$out/summary.txt"
import json, re, sys
from pathlib import Path
out, runs = Path(sys.argv[1]), sys.argv[2:]
print("\n".join(runs))
def load(name):
    try:
        return json.loads((out / name).read_text())
    except Exception as exc:
        return {"_error": f"{type(exc).__name__}: {exc}"}
for name in ("embedding_oob", "fragmentation_oom"):
    run = load(f"try-{name}.json")
    answer = run.get("answer") or {}
    where = answer.get("where") or {}
    print(f"{name}: machine {((run.get('machine') or {}).get('line'))}; "
          f"cause {(answer.get('cause') or {}).get('id')}; "
          f"where {where.get('file')}:{where.get('line')} {where.get('code', '')!r}")
    for fix in run.get("fixes") or []:
        print(f"    {fix['fix']['id']}: {fix.get('verdict')} ({fix.get('reason', '')[:120]})")
    for fix in (answer.get("fixes") or [])[:3]:
        print(f"    answer: {fix.get('status')}: {fix.get('title')}")
wizard = load("wizard-device-side-assert.json")
print(f"wizard: outcome {wizard.get('outcome')}, cannot_run {wizard.get('cannot_run')!r}, "
      f"saved as {wizard.get('id')}")
match = load("match-issue-17.json").get("answer") or {}
print(f"match: cause {(match.get('cause') or {}).get('id')}, next {(match.get('next') or {}).get('command')}")
report = load("report-issue-17.json")
print(f"report: origin {((report.get('origin') or {}).get('note'))}")
pdf = out / "report-issue-17.pdf"
if pdf.exists():
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf.read_bytes()))
    print(f"report pdf: {pages} pages")
PYEOF
