"""`report --run try:N` puts a saved `try` run into the report, command line redacted."""

from __future__ import annotations

import sys

from tests.core.clirun import run_core
from tests.core.tryrun.helpers import as_json, run_try, script

SECRET = "hf_" + "Zq8LmN3pR7tV2xY5bC9dF1gH4jK6"


def test_a_try_run_goes_into_the_report_with_its_command_redacted() -> None:
    data = as_json(
        run_try("--json", "--", sys.executable, script("flood.py"), f"--hf-token={SECRET}")
    )
    run_id = data["id"]
    md = run_core("report", "--quick", "--full", "--run", f"try:{run_id}")
    assert md.returncode == 0, md.stderr
    # page 1 is the run's answer, produced here; the run itself is in the appendix
    assert md.stdout.index("### The answer") < md.stdout.index("## Appendix")
    assert "produced on this machine" in md.stdout
    assert "### Your script (cuda-clinic try)" in md.stdout
    assert f"try:{run_id} " in md.stdout
    assert "cuda/torch-not-compiled-with-cuda" in md.stdout
    assert "flood.py" in md.stdout
    assert SECRET not in md.stdout
    bad = run_core("report", "--quick", "--run", "try:x", timeout=60)
    assert bad.returncode == 2 and "invalid run id 'try:x'" in bad.stderr
    missing = run_core("report", "--quick", "--run", "try:999", timeout=120)
    assert missing.returncode == 2 and "no try run with id 999" in missing.stderr
