"""`cuda-clinic report` as a user runs it: real child processes, real files, real redaction."""

from __future__ import annotations

import json
import random
import re
import string
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.core.clirun import run_core

from .conftest import ERROR_LOG


def _cli(
    *args: str, stdin: str | None = None, pythonpath: Sequence[Path] = (), **env: str
) -> subprocess.CompletedProcess[str]:
    return run_core("report", *args, stdin=stdin, pythonpath=pythonpath, timeout=120, **env)


def _token(seed: int) -> str:
    return (
        "gh"
        + "p_"
        + "".join(random.Random(seed).choices(string.ascii_letters + string.digits, k=36))
    )


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A report written by the CLI with secrets planted in the env and in the error log."""
    tmp = tmp_path_factory.mktemp("cli")
    hf = "hf" + "_" + "".join(random.Random(1).choices(string.ascii_letters, k=34))
    gh = _token(2)
    log = tmp / "error.txt"
    log.write_text(f"$ GITHUB_TOKEN={gh} python train.py\n{ERROR_LOG}")
    out = tmp / "report.md"
    result = _cli(
        "--quick",
        "--full",  # everything that could carry a secret is in the file
        "--error",
        str(log),
        "-o",
        str(out),
        HF_TOKEN=hf,
        CUDA_CACHE_TOKEN="FAKESECRET_" + gh[4:20],
        # a module fixture runs before the autouse private data dir: never the real one
        CUDA_CLINIC_DATA_DIR=str(tmp / "data"),
    )
    return {"result": result, "text": out.read_text(), "secrets": (hf, gh), "tmp": tmp}


def test_report_writes_markdown_and_counts_redactions(planted: dict[str, Any]) -> None:
    result = planted["result"]
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "cuda-clinic: redacted" in result.stderr
    assert "github-pat" in result.stderr
    text = planted["text"]
    for secret in planted["secrets"]:
        assert secret not in text
    assert "[REDACTED github-pat #1]" in text
    assert "cuda/cudnn-status-execution-failed" in text  # the pasted error was matched
    assert str(Path.home()) + "/" not in text


def test_no_redact_says_so_loudly(tmp_path: Path) -> None:
    result = _cli("--quick", "--no-redact", "--format", "html")
    assert result.returncode == 0, result.stderr
    assert "redaction is OFF" in result.stderr
    assert "Redaction is OFF" in result.stdout
    assert result.stdout.startswith("<!DOCTYPE html>")


def test_error_from_stdin_and_json_to_stdout() -> None:
    result = _cli("--quick", "--format", "json", "--error", "-", stdin=ERROR_LOG)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["redaction"]["enabled"] is True
    assert report["error"]["matches"][0]["id"] == "cuda/cudnn-status-execution-failed"


def test_format_follows_the_output_suffix(tmp_path: Path) -> None:
    result = _cli("--quick", "-o", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    # An unknown suffix is refused before anything is written; --format overrides it.
    unknown = _cli("--quick", "-o", str(tmp_path / "r.docx"))
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        f"cuda-clinic: error: -o {tmp_path / 'r.docx'}: cannot tell the format from '.docx'; "
        "use .json, .md, .markdown, .html, .htm, .pdf, or give --format"
    ]
    assert not (tmp_path / "r.docx").exists()
    forced = _cli("--quick", "-o", str(tmp_path / "r.docx"), "--format", "md")
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "r.docx").read_text().startswith("## CUDA Clinic diagnostic report")


def test_an_empty_error_log_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("\n \n")
    result = _cli("--quick", "--error", str(empty))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"cuda-clinic: error: --error {empty} is empty: give the log that holds the error"
    ]
    assert result.stdout == ""


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = _cli("--quick", "--error", str(tmp_path / "missing.txt"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith("could not be read: no such file")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1}')
    result = _cli("diff", str(bad), str(bad))
    assert result.returncode == 2
    assert "is not a cuda-clinic report" in result.stderr
    assert "Traceback" not in result.stderr


def test_pdf_without_qt_is_one_clear_line(tmp_path: Path) -> None:
    """Where PySide6 cannot be imported the core command says what is missing."""
    fake = tmp_path / "noqt" / "PySide6"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('PySide6 is not installed here')\n")
    noqt = [tmp_path / "noqt"]
    result = _cli("--quick", "--format", "pdf", "-o", str(tmp_path / "r.pdf"), pythonpath=noqt)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "cuda-clinic: error: PDF needs the GUI extra (PySide6); use --format html or md"
    )
    assert not (tmp_path / "r.pdf").exists()


def test_report_diff_of_two_saved_reports(tmp_path: Path, recorded: Any) -> None:
    from core.report import build_report, redact, render

    here = tmp_path / "here.json"
    assert _cli("--quick", "-o", str(here)).returncode == 0
    there = tmp_path / "there.json"
    there.write_text(
        render(redact(build_report(environment=recorded("broken_torch_deep")))[0], "json")
    )
    result = _cli("diff", str(here), str(there))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # each report's one-line summary first, then the count, then the versions
    assert lines[0].startswith("here.json:  ") and lines[1].startswith("there.json: error: ")
    assert "between here.json and there.json, most relevant first" in lines[3]
    assert lines[5] == "[versions]"
    as_json = json.loads(_cli("diff", str(here), str(there), "--json").stdout)
    first = as_json["differences"][0]
    assert first["category"] == "versions" and first["rank"] == 0


def test_saved_report_can_be_rendered_again(tmp_path: Path, planted: dict[str, Any]) -> None:
    saved = tmp_path / "r.json"
    assert _cli("--quick", "-o", str(saved)).returncode == 0
    result = _cli("--from", str(saved), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("## CUDA Clinic diagnostic report")


def test_help_usage_is_accurate() -> None:
    """The hand-written usage names every option, and no action as if it were required."""
    result = _cli("--help")
    assert result.returncode == 0, result.stderr
    usage = result.stdout.split("\n\n")[0]
    assert "ACTION" not in usage
    assert "cuda-clinic report diff A.json B.json [--json]" in usage
    options = {o for o in re.findall(r"(--[a-z-]+|-o)\b", result.stdout.split("\n\n", 2)[2])}
    assert options - {"--help", "--output"} <= set(re.findall(r"(--[a-z-]+|-o)\b", usage))
    diff = _cli("diff", "--help")
    assert diff.stdout.startswith("usage: cuda-clinic report diff [-h] [--json] A.json B.json")


def test_a_saved_sweep_reads_as_where_it_ran_and_what_it_found() -> None:
    sweep = run_core("bench", "lstm", "--quick", "--json")
    assert sweep.returncode == 0, sweep.stderr
    saved = json.loads(sweep.stdout)
    result = _cli("--quick", "--bench", str(saved["id"]), "--format", "json")
    assert result.returncode == 0, result.stderr
    (bench,) = json.loads(result.stdout)["benchmarks"]
    # The sweep's own facts, not the env JSON summary (which read "not found" for all rows).
    assert "environment_summary" not in bench
    assert bench["environment"]["torch"] == saved["environment"]["torch"]
    md = _cli("--quick", "--bench", str(saved["id"]), "--format", "md").stdout
    section = md.split("### Benchmarks", 1)[1].split("<details>")[0]
    assert f"**LSTM sweep #{saved['id']}**" in section
    assert "- ran on: the CPU" in section and "schema_version" not in section
    for rec in saved["recommendations"]:
        assert rec["text"].split(":")[0] in section
