"""Bad input to every command, as a user types it: one error line, exit 2, nothing half-written."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ERROR_LINE = "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR"


def _cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-m", "core", *args],
        capture_output=True,
        input=stdin if stdin is not None else b"",
        timeout=120,
        check=False,
        cwd=cwd,
    )
    return (
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """Paths a user might pass by mistake: missing, a folder, binary junk, broken JSON."""
    junk = tmp_path / "core.dump"
    junk.write_bytes(random.Random(7).randbytes(20_000))
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1, "environment": {')
    not_report = tmp_path / "list.json"
    not_report.write_text("[1, 2, 3]\n")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    return {
        "missing": str(tmp_path / "no-such-file.txt"),
        "folder": str(folder),
        "junk": str(junk),
        "broken": str(broken),
        "not_report": str(not_report),
        "tmp": str(tmp_path),
    }


# (case id, argv with {placeholders}, words the one error line must contain)
CASES = [
    ("match-missing", ["match", "{missing}"], "no such file"),
    ("match-folder", ["match", "{folder}"], "is a folder"),
    ("match-binary-file", ["match", "{junk}"], "binary data"),
    ("match-top-0", ["match", "--top", "0", "{broken}"], "--top must be at least 1"),
    ("match-top-negative", ["match", "--top", "-4", "{broken}"], "--top must be at least 1"),
    ("match-top-not-a-number", ["match", "--top", "many", "{broken}"], "invalid int value"),
    ("match-kb-junk", ["match", "--kb", "{junk}", "{broken}"], "not a database"),
    ("report-error-missing", ["report", "--quick", "--error", "{missing}"], "no such file"),
    ("report-error-folder", ["report", "--quick", "--error", "{folder}"], "is a folder"),
    ("diff-missing", ["report", "diff", "{missing}", "{broken}"], "report could not be read"),
    ("diff-folder", ["report", "diff", "{folder}", "{folder}"], "is a folder, not a report"),
    ("diff-malformed", ["report", "diff", "{broken}", "{broken}"], "is not valid JSON"),
    ("diff-binary", ["report", "diff", "{junk}", "{junk}"], "binary data"),
    ("diff-not-a-report", ["report", "diff", "{not_report}", "{not_report}"], "not a cuda-clinic"),
    ("diff-one-file", ["report", "diff", "{broken}"], "required: B.json"),
    ("from-malformed", ["report", "--from", "{broken}"], "is not valid JSON"),
    ("from-missing", ["report", "--from", "{missing}"], "report could not be read"),
    ("report-run-unknown", ["report", "--quick", "--run", "987654"], "no wizard run"),
    ("kb-unknown-id", ["kb", "show", "no/such-entry"], "no knowledge-base entry"),
    ("kb-search-limit-0", ["kb", "search", "--limit", "0", "cudnn"], "at least 1"),
    ("wizard-unknown-id", ["wizard", "run", "no/such-wizard"], "unknown scenario"),
    (
        "wizard-timeout-negative",
        ["wizard", "run", "--timeout", "-1", "cuda/rnn-dtype-mismatch"],
        "--timeout must be a positive",
    ),
    ("wizard-history-limit", ["wizard", "history", "--limit", "-1"], "at least 1"),
    ("wizard-history-unknown", ["wizard", "history", "987654"], "no wizard run"),
    ("bench-show-unknown", ["bench", "show", "987654"], "no benchmark run"),
    (
        "bench-charts-file",  # refused before the sweep starts
        ["bench", "lstm", "--quick", "--no-save", "--charts", "{junk}"],
        "a file is in the way",
    ),
    ("env-python-true", ["env", "--python", "/bin/true"], "not a working Python"),
    ("env-python-missing", ["env", "--python", "{missing}"], "does not exist"),
    ("env-python-junk", ["env", "--python", "{junk}"], "not executable"),
    (
        "wizard-python-true",
        ["wizard", "run", "--python", "/bin/true", "cuda/rnn-dtype-mismatch"],
        "not a working Python",
    ),
    (
        "bench-python-true",
        ["bench", "lstm", "--quick", "--no-save", "--python", "/bin/true"],
        "not a working Python",
    ),
    ("report-python-true", ["report", "--quick", "--python", "/bin/true"], "not a working Python"),
    ("unknown-command", ["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize(("argv", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line_and_exit_2(
    files: dict[str, str], argv: list[str], words: str
) -> None:
    code, _, stderr = _cli(*(a.format(**files) for a in argv))
    assert code == 2, stderr
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("cuda-clinic: error: ")
    assert words in lines[0]


def test_binary_junk_on_stdin_is_refused(files: dict[str, str]) -> None:
    code, stdout, stderr = _cli("match", "-", stdin=Path(files["junk"]).read_bytes())
    assert (code, stdout) == (2, "")
    assert stderr == "cuda-clinic: error: standard input looks like binary data, not a text log\n"


def test_an_error_inside_binary_junk_still_matches(files: dict[str, str]) -> None:
    """The binary check never hides a real error: only junk with no match is refused."""
    junk = Path(files["junk"]).read_bytes()
    code, stdout, stderr = _cli("match", "-", stdin=junk + f"\n{ERROR_LINE}\n".encode() + junk)
    assert code == 0, stderr
    assert "cuda/cudnn-status-mapping-error" in stdout


@pytest.mark.parametrize(
    "target",
    ["{tmp}/missing-folder/report.md", "{folder}", "{junk}/report.md", "{tmp}/m/report.pdf"],
    ids=["missing-folder", "a-folder", "under-a-file", "pdf-missing-folder"],
)
def test_unwritable_output_fails_first_and_writes_nothing(
    files: dict[str, str], target: str
) -> None:
    before = sorted(os.listdir(files["tmp"]))
    code, stdout, stderr = _cli("report", "--quick", "-o", target.format(**files))
    assert code == 2 and stdout == ""
    # checked before detection: no "redacted N values" line ahead of the error
    assert len(stderr.splitlines()) == 1 and stderr.startswith("cuda-clinic: error: cannot write")
    assert sorted(os.listdir(files["tmp"])) == before
    assert os.listdir(files["folder"]) == []


def test_a_written_report_leaves_no_temporary_file(tmp_path: Path) -> None:
    code, _, stderr = _cli("report", "--quick", "-o", str(tmp_path / "r.json"))
    assert code == 0, stderr
    assert os.listdir(tmp_path) == ["r.json"]
