"""Many campaigns in one process: each plants every kind afresh into a real report model (a
recorded environment with the planted variables, a recorded `try` run with the planted argv,
folder and output, the planted log), which is redacted and rendered as JSON, Markdown and HTML.

CUDA_CLINIC_PLANT_RUNS=N runs N campaigns (the long run in docs/reliability.md); CI runs 4.
"""

from __future__ import annotations

import copy
import html
import json
import os
from pathlib import Path
from typing import Any

from core.env import assemble
from core.report import build_report, redact, render
from core.report.redact import Secrets
from tests.planting import SURVIVORS, Campaign, campaign, leaks, seed_for_run

RUNS = int(os.environ.get("CUDA_CLINIC_PLANT_RUNS", "4"))
DATA = Path(__file__).resolve().parents[2] / "data"


def _environment() -> dict[str, Any]:
    data = json.loads((DATA / "env" / "gpu_deep.json").read_text())
    env = assemble(data["quick"], data.get("deep"), data.get("status") or {}, data["deep_mode"])
    return env.to_dict()


ENV = _environment()
TRY = json.loads((DATA / "try" / "gpu" / "embedding_oob.json").read_text())["try"]


def model(plants: Campaign) -> dict[str, Any]:
    """A report built the way `report` builds one, carrying the campaign everywhere."""
    env = copy.deepcopy(ENV)
    env["env_vars"] = {**env.get("env_vars", {}), **plants.env}
    run = copy.deepcopy(TRY)
    argv = ["python", "train.py", *plants.argv, "--data-dir", *plants.paths]
    run.update(command=argv, argv=argv, cwd=plants.paths[0])
    run["original"] = {**run.get("original", {}), "log": "\n".join(plants.lines)}
    log = "\n".join(plants.lines)
    return build_report(environment=env, error_text=log, try_runs=[run])


def test_every_campaign_leaves_nothing_and_keeps_every_diagnostic() -> None:
    base = seed_for_run()
    planted = 0
    for k in range(RUNS):
        plants = campaign((base + k) % 2**32)
        shared, items = redact(model(plants), Secrets())
        planted += len(plants.planted)
        for fmt in ("json", "md", "html"):
            text = render(shared, fmt, redactions=items)
            readable = (text, html.unescape(text), text.replace("\\|", "|").replace("\\", ""))
            found = {leak for form in readable for leak in leaks(form, plants)}
            assert not found, f"seed {plants.seed}, {fmt}: {sorted(found)[:8]}"
        missing = [s for s in SURVIVORS if s not in shared["error"]["text"]]
        assert not missing, f"seed {plants.seed}: {missing}"
    assert planted >= 200 * RUNS
