"""The whole door, end to end: random values of every kind planted in a pasted log, in the
environment the probe collects, in a real `try` run's argv, folder and output, exported by the
real CLI as JSON, Markdown and HTML. Nothing planted may survive; every diagnostic must.

A fresh seed each run (printed on failure; CUDA_CLINIC_PLANT_SEED=N replays it). The PDF half
of this test is tests/gui/test_report_planted_pdf.py (it needs Qt).
"""

from __future__ import annotations

import html
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.core.clirun import run_core
from tests.planting import KINDS, SURVIVORS, Campaign, campaign, leaks, seed_for_run

FORMATS = ("json", "md", "html")


def try_script(lines: list[str]) -> str:
    """A user's script that prints the planted log and exits cleanly (nothing to diagnose)."""
    return "import sys\nsys.stderr.write(" + repr("\n".join(lines) + "\n") + ")\n"


def export(tmp: Path, plants: Campaign, formats: tuple[str, ...]) -> dict[str, Any]:
    """Run `try` on a planted script, then `report` in each format; the texts by format."""
    env = {**os.environ, "CUDA_CLINIC_DATA_DIR": str(tmp / "data"), **plants.env}
    # The folder is made under this test's temp dir, so its planted root is no longer the
    # filesystem's. `/data/<user>` names a person only at the root (a project's data/ folder
    # does not), so that kind is planted in argv, logs and variables, never as the folder.
    posix = next(
        (p for p in plants.paths if p.startswith("/") and not p.startswith("/data/")),
        "/home/planted/proj",
    )
    cwd = tmp / "fs" / posix.lstrip("/")
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "train.py").write_text(try_script(plants.lines), encoding="utf-8")
    argv = [sys.executable, "train.py", *plants.argv, "--data-dir", *plants.paths]
    ran = run_core("try", "--", *argv, cwd=cwd, env=env)
    assert "saved as try:1" in ran.stdout + ran.stderr, ran.stderr
    log = tmp / "error.txt"
    log.write_text("\n".join(plants.lines) + "\n", encoding="utf-8")
    out: dict[str, Any] = {}
    for fmt in formats:
        path = tmp / f"report.{fmt}"
        # --full: every part that could carry a planted value is in the file
        report = ("report", "--quick", "--full", "--error", str(log), "--run", "try:1")
        result = run_core(*report, "-o", str(path), env=env)
        assert result.returncode == 0, result.stderr
        out[fmt] = path.read_bytes() if fmt == "pdf" else path.read_text(encoding="utf-8")
        out[f"{fmt}-stderr"] = result.stderr
    return out


def readable(text: str) -> list[str]:
    """The forms a reader could recover a value from: raw, HTML-unescaped, Markdown-unescaped."""
    return [text, html.unescape(text), text.replace("\\|", "|").replace("\\", "")]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Campaign, dict[str, Any]]:
    plants = campaign(seed_for_run())
    return plants, export(tmp_path_factory.mktemp("planted"), plants, FORMATS)


def test_the_campaign_is_large_enough(run: tuple[Campaign, dict[str, Any]]) -> None:
    plants, _ = run
    assert len(plants.planted) >= 200 and len(plants.kinds) >= 80
    assert plants.kinds == set(KINDS)
    assert {where for _, where, _ in plants.planted} == {"log", "env", "argv", "path"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_planted_value_survives(run: tuple[Campaign, dict[str, Any]], fmt: str) -> None:
    plants, out = run
    found = {leak for text in readable(out[fmt]) for leak in leaks(text, plants)}
    assert not found, f"seed {plants.seed}: {sorted(found)[:10]}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_diagnostic_survives(run: tuple[Campaign, dict[str, Any]], fmt: str) -> None:
    plants, out = run
    text = html.unescape(out[fmt]) if fmt == "html" else out[fmt]
    if fmt == "json":
        text = json.loads(text)["error"]["text"]
    missing = [s for s in SURVIVORS if s not in text]
    assert not missing, f"seed {plants.seed}: {missing}"


def test_what_was_removed_is_counted_by_kind(run: tuple[Campaign, dict[str, Any]]) -> None:
    plants, out = run
    counts = json.loads(out["json"])["redaction"]["counts"]
    assert sum(counts.values()) >= len(plants.planted), counts
    for kind in ("user-name", "host-name", "secret-value", "github-pat", "env-secret", "ipv4"):
        assert counts.get(kind, 0) >= 1, (kind, counts)
    assert "redacted" in out["json-stderr"] and "user-name" in out["json-stderr"]


def test_the_try_run_is_redacted_field_by_field(run: tuple[Campaign, dict[str, Any]]) -> None:
    plants, out = run
    tried = json.loads(out["json"])["try_runs"][0]
    assert tried["argv"][1] == "train.py" and "--data-dir" in tried["argv"]
    assert "/fs/" in tried["cwd"], tried["cwd"]  # the layout stays, the person goes
    assert not leaks(json.dumps(tried), plants)
