"""A real report model carrying a planting campaign everywhere (env, try run, pasted log)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from core.env import assemble
from core.report import Report, build_report
from tests.planting import Campaign

DATA = Path(__file__).resolve().parent / "data"


def _environment() -> dict[str, Any]:
    data = json.loads((DATA / "env" / "gpu_deep.json").read_text())
    env = assemble(data["quick"], data.get("deep"), data.get("status") or {}, data["deep_mode"])
    return env.to_dict()


ENV = _environment()
TRY = json.loads((DATA / "try" / "gpu" / "embedding_oob.json").read_text())["try"]


def model(plants: Campaign, **kwargs: Any) -> Report:
    """A report built the way `report` builds one (a recorded H200 environment with the planted
    variables, a recorded `try` run with the planted argv, folder and output, the planted log)."""
    env = copy.deepcopy(ENV)
    env["env_vars"] = {**env.get("env_vars", {}), **plants.env}
    run = copy.deepcopy(TRY)
    argv = ["python", "train.py", *plants.argv, "--data-dir", *plants.paths]
    run.update(command=argv, argv=argv, cwd=plants.paths[0])
    run["original"] = {**run.get("original", {}), "log": "\n".join(plants.lines)}
    log = "\n".join(plants.lines)
    return build_report(environment=env, error_text=log, try_runs=[run], **kwargs)
