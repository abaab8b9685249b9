"""Page 1 is the answer; the machine that failed and the one reporting are kept apart; the
rest is the appendix (folded in HTML, in Markdown only with --full)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.report import collect, redact, render
from core.report.origin import compare, log_facts

from .conftest import recorded_env

DATA = Path(__file__).resolve().parents[2] / "data"
EMBEDDING = (DATA / "answer" / "issue-17-embedding.txt").read_text(encoding="utf-8")
REPO = DATA.parents[1]


def _report(env: dict[str, Any], log: str = EMBEDDING) -> dict[str, Any]:
    shared, _ = redact(collect(environment=env, error_text=log, latest=False))
    return shared


def test_markdown_leads_with_the_answer_and_keeps_the_rest_for_the_appendix(
    live_env: dict[str, Any],
) -> None:
    report = _report(live_env)
    md = render(report, "md")
    order = [
        "### The answer",
        "**What happened.** An embedding lookup",
        "**Where in your code.** `model.py:37 in forward: x = self.embed(input_ids)`",
        "**What to change.** Check the ids against the embedding table",
        "resize_token_embeddings",
        "**What to run next.** `cuda-clinic try --fixes -- python train.py`",
        "### Where the error came from",
        "*Appendix left out: the full log",
    ]
    positions = [md.index(text) for text in order]
    assert positions == sorted(positions)
    assert "Full environment (JSON)" not in md and "| **PyTorch** |" not in md
    full = render(report, "md", full=True)
    appendix = full.index("## Appendix")
    assert appendix > full.index("### Where the error came from")
    for part in ("This machine (where the report was made)", "| **PyTorch** |", "Error log"):
        assert full.index(part) > appendix
    assert "Full environment (JSON)" in full


def test_html_file_folds_the_appendix_and_leads_with_the_answer(live_env: dict[str, Any]) -> None:
    page = render(_report(live_env), "html")
    assert page.index('<h2 class="answer">The answer</h2>') < page.index(
        "Where the error came from"
    )
    fold = re.search(r'<details class="appendix"( open)?><summary><b>Appendix</b>', page)
    assert fold is not None and fold.group(1) is None  # collapsed
    assert page.index("Full environment (JSON)") > fold.start()
    qt_page = render(_report(live_env), "html", qt=True)  # the PDF's HTML
    assert "Full environment (JSON)" not in qt_page and "Appendix left out" in qt_page
    assert "Full environment (JSON)" in render(_report(live_env), "html", qt=True, full=True)


def test_a_gpu_error_pasted_on_a_cpu_machine_says_this_setup_did_not_fail(
    live_env: dict[str, Any],
) -> None:
    origin = _report(live_env)["origin"]
    assert origin["same_machine"] is False and not origin["produced_here"]
    assert "This machine's setup (below) is not the one that failed" in origin["note"]
    cuda = next(r for r in origin["rows"] if r["field"] == "A CUDA GPU in use")
    assert cuda["error"].startswith("yes") and cuda["differs"]


def test_the_log_names_its_machine_and_it_is_kept_apart() -> None:
    """A real log from a public issue (FeatDepth#68): its GPU and the build's list, against
    a recorded H200 server: every differing fact is marked."""
    log = (DATA / "matcher_holdout" / "cases" / "nokernel-featdepth-68.txt").read_text()
    facts = log_facts(log)
    assert facts["gpu"]["value"] == "NVIDIA GeForce RTX 3060 Laptop GPU"
    origin = compare(log, recorded_env("gpu_deep"))
    gpu = next(r for r in origin["rows"] if r["field"] == "GPU")
    assert gpu["differs"] and "H200" in gpu["here"]
    assert origin["same_machine"] is False and "GPU" in origin["note"]
    same = compare("Python 3.11.4\nKeyError: 'lr'\n", {"python": {"version": "3.11.4"}})
    assert same["same_machine"] is None and "may have been produced here" in same["note"]
    silent = compare("RuntimeError: boom\n", recorded_env("gpu_deep"))
    assert "does not say which machine produced it" in silent["note"]


def test_report_cli_full_flag_and_page_one_json(tmp_path: Path) -> None:
    log = tmp_path / "crash.log"
    log.write_text(EMBEDDING)
    base = [sys.executable, "-m", "core", "report", "--quick", "--error", str(log)]
    short = subprocess.run([*base], capture_output=True, text=True, check=False, cwd=REPO)
    full = subprocess.run([*base, "--full"], capture_output=True, text=True, check=False, cwd=REPO)
    assert short.returncode == full.returncode == 0, short.stderr + full.stderr
    assert "Appendix left out" in short.stdout and "## Appendix" in full.stdout
    assert len(full.stdout) > len(short.stdout)
    data = json.loads(
        subprocess.run(
            [*base, "--format", "json"], capture_output=True, text=True, check=False, cwd=REPO
        ).stdout
    )
    assert data["schema_version"] == 2
    assert data["answer"]["cause"]["id"] == "embedding-index-out-of-range"
    assert data["answer"]["where"]["file"] == "model.py"
    assert data["origin"]["same_machine"] is False
    assert data["environment"] is not None  # JSON always holds everything
