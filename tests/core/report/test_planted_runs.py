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
from typing import Any

from core.report import build_report, redact, render
from core.report.redact import Secrets
from tests.planted_report import ENV, TRY, model
from tests.planting import KINDS, SURVIVORS, campaign, leaks, plant_one, seed_for_run

RUNS = int(os.environ.get("CUDA_CLINIC_PLANT_RUNS", "4"))


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


def test_every_field_of_the_model_goes_through_the_door() -> None:
    """A planted value (in its context: a flag, a path, a prompt) appended to every string of a
    real model, and one more under a new key in every object: none survives the door, so no
    renderer can miss a field."""
    seed = seed_for_run()
    kinds = sorted(KINDS)
    raw = build_report(environment=copy.deepcopy(ENV), error_text="boom", redact=False)
    raw = dict(raw, try_runs=[copy.deepcopy(TRY)])
    planted: list[str] = []

    def plant() -> str:
        made = plant_one(kinds[len(planted) % len(kinds)], seed + len(planted))
        planted.extend(made.secrets)
        return made.text

    stack: list[Any] = [raw]
    while stack:
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in items:
            if isinstance(value, str):
                node[key] = f"{value}\n{plant()}"
            elif isinstance(value, dict | list):
                stack.append(value)
        if isinstance(node, dict):
            node[f"note {len(planted)}"] = plant()
    shared, _ = redact(raw, Secrets())
    dumped = json.dumps(shared, ensure_ascii=False)
    left = sorted({s for s in planted if s in dumped})
    assert not left, f"seed {seed}: {len(left)} of {len(planted)} left: {left[:8]}"
    assert len(planted) >= 200
