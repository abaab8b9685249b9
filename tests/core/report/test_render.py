"""Renderers: GitHub Markdown under the size limit, one offline HTML file, JSON, preview marks."""

from __future__ import annotations

import random
import re
import string
from typing import Any

import pytest

from core.report import build_report, load_report, redact, render, render_marked
from core.report.markdown import MD_LIMIT
from core.report.redact import Secrets
from tests.charts import measured_chart

from .conftest import ERROR_LOG


@pytest.fixture(scope="module")
def full_report(live_env: dict[str, Any], kb_matches: dict[str, Any]) -> dict[str, Any]:
    return build_report(
        environment=live_env,
        error_text=ERROR_LOG,
        matches=kb_matches,
        charts=[measured_chart("a"), measured_chart("b")],
    )


def test_markdown_puts_the_summary_first(full_report: dict[str, Any]) -> None:
    """Without an answer (nothing confident to lead with) this machine's summary is page 1."""
    shared, _ = redact(full_report)
    assert "Appendix left out" in render(shared, "md")
    md = render(shared, "md", full=True)
    assert md.startswith("## CUDA Clinic diagnostic report")
    headline = md.index(shared["summary"]["headline"].split(" — ")[0])
    assert headline < md.index("| **PyTorch** |") < md.index("### Pasted error")
    assert md.index("### Pasted error") < md.index("<details><summary>Full environment (JSON)")
    # a blank line after </summary> or GitHub does not render the Markdown inside
    for m in re.finditer(r"</summary>\n", md):
        assert md[m.end()] == "\n"
    assert "cuda/cudnn-status-execution-failed" in md
    assert "Redaction is OFF" not in md


def test_markdown_with_a_huge_log_stays_under_githubs_limit(live_env: dict[str, Any]) -> None:
    rng = random.Random(7)
    lines = [
        f"step {i}: loss={rng.random():.5f} " + "".join(rng.choices(string.ascii_lowercase, k=60))
        for i in range(6000)
    ]
    log = "\n".join(["FIRST LINE of the log", *lines, ERROR_LOG.strip(), "LAST LINE of the log"])
    assert len(log) > 5 * MD_LIMIT
    shared, _ = redact(build_report(environment=live_env, error_text=log))
    md = render(shared, "md")
    assert len(md) <= MD_LIMIT
    assert "Trimmed to fit GitHub's 65,536-character limit: error log cut to its first" in md
    assert "FIRST LINE of the log" in md and "LAST LINE of the log" in md
    assert "lines omitted to fit the size limit" in md
    assert "CUDNN_STATUS_EXECUTION_FAILED" in md  # the tail of a traceback matters most
    assert md.count("```") % 2 == 0  # every fence is closed


def test_small_report_is_not_trimmed(full_report: dict[str, Any]) -> None:
    md = render(redact(full_report)[0], "md")
    assert "Trimmed" not in md and "omitted" not in md


def test_html_is_one_self_contained_offline_file(full_report: dict[str, Any]) -> None:
    shared, _ = redact(full_report)
    page = render(shared, "html")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?i)\b(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", page)
    assert not re.search(r"(?i)<script[^>]*\bsrc", page)
    assert not re.search(r"(?i)<link\b", page)
    assert not re.search(r"(?i)@import|url\(\s*['\"]?https?:", page)
    assert "prefers-color-scheme: dark" in page
    assert page.count("<svg") == 2  # both charts inlined
    assert "json.dumps time on this machine (a)" in page
    assert "&lt;module&gt;" in page  # text is escaped, never injected


def test_html_escapes_hostile_text(live_env: dict[str, Any]) -> None:
    nasty = '<script>alert(1)</script><img src="https://evil.example/x.png">'
    report = build_report(environment=live_env, error_text=nasty)
    page = render(report, "html")
    assert "<script>alert" not in page and '<img src="https' not in page


def test_html_and_md_warn_loudly_without_redaction(full_report: dict[str, Any]) -> None:
    from core.report import unredacted

    report = unredacted(full_report)
    assert "Redaction is OFF" in render(report, "html")
    assert "**Redaction is OFF.**" in render(report, "md")


def test_json_round_trips_and_loads(full_report: dict[str, Any], tmp_path: Any) -> None:
    shared, _ = redact(full_report)
    path = tmp_path / "r.json"
    path.write_text(render(shared, "json"))
    assert load_report(path) == shared


def _planted_report(live_env: dict[str, Any]) -> tuple[dict[str, Any], list[Any], str]:
    token = "hf" + "_" + "".join(random.Random(9).choices(string.ascii_letters, k=34))
    log = f"HF_TOKEN={token}\n{ERROR_LOG}"
    shared, items = redact(
        build_report(environment=live_env, error_text=log),
        Secrets(home="/home/alicew", user="alicew"),
    )
    return shared, items, token


def test_preview_highlights_each_redaction_and_reveals_on_request(
    live_env: dict[str, Any],
) -> None:
    shared, items, token = _planted_report(live_env)
    page = render(shared, "html", redactions=items, highlight=True)
    assert page.count('<span class="redaction"') == len(items)
    assert page.count('<a class="redaction-link" href="#redaction-r') == len(items)
    assert token not in page
    tok = next(r for r in items if r.original == token)
    revealed = render(shared, "html", redactions=items, reveal={tok.id}, highlight=True)
    assert token in revealed
    assert f'<span class="redaction revealed" id="redaction-{tok.id}"' in revealed
    assert "/home/alicew" not in revealed  # only the chosen item comes back


def test_export_with_a_revealed_item(live_env: dict[str, Any]) -> None:
    shared, items, token = _planted_report(live_env)
    tok = next(r for r in items if r.original == token)
    md = render(shared, "md", redactions=items, reveal={tok.id})
    assert token in md and "alicew" not in md
    assert "\ue000" not in md  # no preview markers leak into exports


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_marked_text_gives_the_span_of_every_redaction(live_env: dict[str, Any], fmt: str) -> None:
    shared, items, token = _planted_report(live_env)
    text, marks = render_marked(shared, fmt, items)
    assert "\ue000" not in text and "\ue002" not in text
    by_id = {r.id: r for r in items}
    shown = {m.redaction_id for m in marks}
    assert shown <= set(by_id)
    assert len(shown) >= 2
    for m in marks:
        assert text[m.start : m.end] == by_id[m.redaction_id].label
    tok = next(r for r in items if r.original == token)
    text2, marks2 = render_marked(shared, fmt, items, reveal={tok.id})
    m = next(m for m in marks2 if m.redaction_id == tok.id)
    assert m.revealed and text2[m.start : m.end] == token
