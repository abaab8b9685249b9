"""Issue 21's audit records (docs/kb-audit/) and the page they render (docs/kb-audit.md): every
record valid, every audited entry recorded with no open claim, the page current, and the check
itself catching each kind of bad record; scripts/kb_audit.py runs as a child process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.kb.loader import load_entries
from tests.core.clirun import run_script
from tests.core.kb.test_consistency import PENDING
from tests.loadfile import load_module

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "kb_audit.py"
EVIDENCE = sorted((ROOT / "resources" / "evidence").glob("*.json"))


AUDIT = load_module("kb_audit_script", SCRIPT)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """`python scripts/kb_audit.py ARGS` from the repository root."""
    return run_script(SCRIPT, *args, timeout=120)


def test_records_are_valid_and_the_page_is_current() -> None:
    """`--check` passes on the repository: no invalid record, docs/kb-audit.md as rendered."""
    done = _run("--check")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_every_audited_entry_has_a_record_and_no_open_claim() -> None:
    """An entry out of PENDING (test_consistency.py) is audited: its record exists and every one
    of its claims is settled (supported, fixed or removed)."""
    audit = AUDIT.load_records(AUDIT.RECORDS, AUDIT.KB)
    assert audit.problems == []
    audited = {e.id for e in load_entries()} - PENDING
    assert sorted(audited - set(audit.records)) == []
    still_open = [
        (entry, claim.text)
        for entry, record in audit.records.items()
        if entry not in PENDING
        for claim in record.claim
        if claim.verdict == "open"
    ]
    assert still_open == []
    page = (ROOT / "docs" / "kb-audit.md").read_text(encoding="utf-8")
    for entry in audited:
        assert f"### {entry}\n" in page, entry


GOOD = f"""entry = "cuda/device-side-assert"
audited = "2026-11-27"
summary = "The launch-blocking step locates; it was marked as a fix."

[[claim]]
text = "An index out of range in an embedding triggers the assert"
verdict = "supported"
source = "pytorch/pytorch#36333"

[[claim]]
text = "CUDA_LAUNCH_BLOCKING=1 fixes it"
verdict = "fixed"
source = "{EVIDENCE[0].relative_to(ROOT).as_posix()}"
note = "It locates the failing op; the record says located."

[[claim]]
text = "Upgrading the driver fixes it"
verdict = "removed"
source = "https://docs.pytorch.org/docs/stable/notes/cuda.html"
note = "No source says so."
"""


def _records(tmp_path: Path, text: str, name: str = "cuda/device-side-assert.toml") -> Path:
    root = tmp_path / "kb-audit"
    (root / name).parent.mkdir(parents=True)
    (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_valid_record_renders_its_row_and_a_changed_record_makes_the_page_stale(
    tmp_path: Path,
) -> None:
    """--write renders the row, totals and summary; --check passes, then fails once the record
    changes after the page was written."""
    records, doc = _records(tmp_path, GOOD), tmp_path / "kb-audit.md"
    args = ("--records", str(records), "--doc", str(doc))
    assert _run("--check", *args).returncode == 1  # no page yet
    done = _run("--write", *args)
    assert done.returncode == 0, done.stderr
    page = doc.read_text(encoding="utf-8")
    row = "| [cuda/device-side-assert](#cudadevice-side-assert) | 3 | 1 | 1 | 1 | 0 |"
    assert row in page
    assert "| **total** | **3** | **1** | **1** | **1** | **0** |" in page
    assert "### cuda/device-side-assert\n\nAudited 2026-11-27" in page
    assert "it was marked as a fix." in page
    assert "Not audited yet" in page and "`cuda/out-of-memory`" in page
    assert _run("--check", *args).returncode == 0
    more = GOOD + '\n[[claim]]\ntext = "x"\nverdict = "open"\nsource = "a/b#1"\nnote = "n"\n'
    (records / "cuda/device-side-assert.toml").write_text(more, encoding="utf-8")
    done = _run("--check", *args)
    assert done.returncode == 1
    assert "is stale" in done.stderr


@pytest.mark.parametrize(
    ("text", "name", "problem"),
    [
        (GOOD.replace("cuda/device-side-assert", "cuda/no-such"), "", "is not a KB entry"),
        (GOOD, "cuda/illegal-memory-access.toml", "belongs in cuda/device-side-assert.toml"),
        (GOOD.replace('"supported"', '"partly"'), "", "$.claim[0].verdict"),
        (GOOD.replace('note = "It locates', 'remark = "It locates'), "", "not a known field"),
        (GOOD.replace('note = "No source says so."', ""), "", "claim 3: verdict removed needs"),
        (GOOD.replace('"pytorch/pytorch#36333"', '"Evidence file C-11"'), "", "claim 1: source"),
        (GOOD.replace("resources/evidence/", "resources/evidence/no_"), "", "does not exist"),
        (GOOD.replace("https://", "http://"), "", "claim 3: source"),
        (GOOD.replace('"2026-11-27"', '"yesterday"'), "", "is not a date"),
        (GOOD.split("[[claim]]", maxsplit=1)[0] + "claim = []\n", "", "no [[claim]]"),
        (GOOD + "\n[[claim]\n", "", "Expected"),  # not TOML
        (GOOD.replace('summary = "The', 'summary = " "\nx = "'), "", "not a known field"),
    ],
)
def test_each_bad_record_is_named_and_fails_the_check(
    tmp_path: Path, text: str, name: str, problem: str
) -> None:
    """An invalid record fails --check and --write with a line naming the file and the fault."""
    records, doc = _records(tmp_path, text, name or "cuda/device-side-assert.toml"), tmp_path / "p"
    args = ("--records", str(records), "--doc", str(doc))
    written = _run("--write", *args)
    assert written.returncode == 1
    assert problem in written.stderr
    assert not doc.exists()
    checked = _run("--check", *args)
    assert checked.returncode == 1
    assert problem in checked.stderr


def test_a_missing_kb_folder_is_a_usage_error(tmp_path: Path) -> None:
    """A bad argument is one line and exit 2."""
    done = _run("--kb", str(tmp_path / "none"))
    assert done.returncode == 2
    assert "KB folder not found" in done.stderr
