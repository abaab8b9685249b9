"""User KB packs (`--kb-extra DIR`): lenient loading, labelling, rebuilds, confirmation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from core.errors import UsageError
from core.kb import open_kb
from core.kb.options import confirm_fixes
from core.kb.render import USER_LABEL
from tests.core.clirun import run_core

BUS_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 88, in <module>\n'
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible "
    "that dataloader's workers are out of shared memory.\n"
)
BAD_FILES = ("bad-confidence.md", "bad-toml.md", "rnn-hx-not-contiguous.md")


@pytest.fixture
def pack(tmp_path: Path, repo_root: Path) -> Path:
    """A private copy of the test pack: three good entries, three malformed files."""
    dest = tmp_path / "my-pack"
    shutil.copytree(repo_root / "tests/data/kb_pack", dest)
    return dest


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_core(*args, stdin=stdin, timeout=120)


def test_kb_list_loads_good_entries_and_names_each_bad_file_and_field(pack: Path) -> None:
    bundled = _cli("kb", "list", "--json")
    assert bundled.returncode == 0, bundled.stderr
    bundled_ids = {e["id"] for e in json.loads(bundled.stdout)}
    proc = _cli("kb", "list", "--json", "--kb-extra", str(pack))
    assert proc.returncode == 0, proc.stderr
    listed = {e["id"]: e["origin"] for e in json.loads(proc.stdout)}
    # Every bundled entry still loads, plus the two good pack entries, labelled as the user's.
    mine = {"cuda/lab-cluster-nvlink-flaky", "cuda/lab-dataloader-shm", "cuda/lab-fp16-lstm"}
    assert set(listed) == bundled_ids | mine
    assert listed["cuda/lab-dataloader-shm"] == "user"
    assert listed["cuda/rnn-hx-not-contiguous"] == "bundled"  # the pack could not replace it
    warnings = proc.stderr.strip().splitlines()
    assert len(warnings) == 3, proc.stderr
    expected_fields = {
        "bad-confidence.md": "field 'confidence'",
        "bad-toml.md": "field 'front matter'",
        "rnn-hx-not-contiguous.md": "field 'id'",
    }
    for name, field in expected_fields.items():
        (line,) = [w for w in warnings if name in w]
        assert str(pack / "cuda" / name) in line and field in line


def test_text_views_label_pack_entries_as_the_users_own(pack: Path) -> None:
    listing = _cli("kb", "list", "--kb-extra", str(pack)).stdout.splitlines()
    (mine,) = [line for line in listing if line.startswith("cuda/lab-dataloader-shm ")]
    assert mine.endswith(f"[{USER_LABEL}]")
    (theirs,) = [line for line in listing if line.startswith("cuda/rnn-hx-not-contiguous ")]
    assert USER_LABEL not in theirs
    shown = _cli("kb", "show", "cuda/lab-dataloader-shm", "--kb-extra", str(pack)).stdout
    assert f"origin: {USER_LABEL}" in shown and "lab-dataloader-shm.md" in shown
    matched = _cli("match", "--kb-extra", str(pack), stdin=BUS_ERROR)
    assert matched.returncode == 0, matched.stderr
    answer, ranked = matched.stdout.split("Ranked matches:\n")
    assert "[cuda/lab-dataloader-shm," in answer.splitlines()[0]
    assert USER_LABEL in answer.splitlines()[0]
    top = ranked.splitlines()[0]
    assert top.startswith("=>") and "cuda/lab-dataloader-shm" in top and USER_LABEL in top
    # The suggested next command finds the entry again (it names the pack).
    assert f"Details: cuda-clinic kb show cuda/lab-dataloader-shm --kb-extra {pack}" in (
        matched.stdout
    )
    data = json.loads(_cli("match", "--json", "--kb-extra", str(pack), stdin=BUS_ERROR).stdout)
    assert data["matches"][0]["id"] == "cuda/lab-dataloader-shm"
    assert data["matches"][0]["origin"] == "user"
    assert data["answer"]["entry"] == "cuda/lab-dataloader-shm"
    assert data["answer"]["origin"] == "user"


def test_without_the_pack_its_entries_are_gone_and_bundled_ones_are_not_labelled() -> None:
    with open_kb() as kb:
        assert "cuda/lab-dataloader-shm" not in kb.ids()
        assert kb.user_ids() == {} and kb.pack_errors() == []


def test_fixing_a_bad_file_rebuilds_and_loads_it(pack: Path, tmp_path: Path) -> None:
    with open_kb(extra=[pack]) as kb:
        assert "cuda/bad-confidence" not in kb.ids()
        first = kb.path
        # Pack builds go to the per-user cache, never into the bundled resources folder.
        assert first.is_relative_to(Path(os.environ["CUDA_CLINIC_DATA_DIR"]))
    bad = pack / "cuda" / "bad-confidence.md"
    bad.write_text(bad.read_text().replace('"very high"', '"high"'))
    with open_kb(extra=[pack]) as kb:
        assert kb.path != first
        assert kb.origin("cuda/bad-confidence") == "user"
        assert len(kb.pack_errors()) == 2
        assert not any("bad-confidence" in line for line in kb.pack_errors())


def test_pack_links_may_point_at_bundled_entries(pack: Path) -> None:
    with open_kb(extra=[pack]) as kb:
        entry = kb.get("cuda/lab-cluster-nvlink-flaky")
    assert entry.related == ("cuda/rnn-hx-not-contiguous",)
    assert entry.is_user and entry.pack == str(pack.resolve())
    assert entry.fixes[0].env == {"NCCL_P2P_DISABLE": "1"}


def test_missing_pack_folder_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = _cli("kb", "list", "--kb-extra", str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == f"cuda-clinic: error: --kb-extra {tmp_path / 'nope'}: no such folder"
    )
    assert proc.stdout == ""


def test_pack_folder_from_the_environment(pack: Path) -> None:
    env_before = os.environ.get("CUDA_CLINIC_KB_EXTRA")
    os.environ["CUDA_CLINIC_KB_EXTRA"] = str(pack)
    try:
        proc = _cli("kb", "show", "cuda/lab-dataloader-shm")
    finally:
        if env_before is None:
            os.environ.pop("CUDA_CLINIC_KB_EXTRA")
        else:
            os.environ["CUDA_CLINIC_KB_EXTRA"] = env_before
    assert proc.returncode == 0, proc.stderr
    assert USER_LABEL in proc.stdout


class _Terminal:
    """A real pseudo-terminal: `isatty()` is true, the answer is typed into its other end."""

    def __init__(self, answer: str) -> None:
        master, slave = os.openpty()
        os.write(master, answer.encode())
        self.reader = os.fdopen(slave, "r")
        self._master = master

    def close(self) -> None:
        self.reader.close()
        os.close(self._master)


def test_confirm_fixes_asks_refuses_or_proceeds(pack: Path, tmp_path: Path) -> None:
    import io

    with open_kb(extra=[pack]) as kb:
        mine = kb.get("cuda/lab-cluster-nvlink-flaky")
        bundled = kb.get("cuda/rnn-hx-not-contiguous")
    confirm_fixes([bundled], yes=False, stdin=io.StringIO(""))  # bundled: nothing to ask
    confirm_fixes([mine], yes=True, stdin=io.StringIO(""))
    with pytest.raises(UsageError, match="pass --yes"):
        confirm_fixes([mine], yes=False, stdin=io.StringIO("y\n"))  # not a terminal
    said_no = _Terminal("n\n")
    asked = io.StringIO()
    try:
        with pytest.raises(UsageError, match="not confirmed"):
            confirm_fixes([mine], yes=False, stdin=said_no.reader, stderr=asked)
    finally:
        said_no.close()
    assert "cuda/lab-cluster-nvlink-flaky is your own entry" in asked.getvalue()
    said_yes = _Terminal("y\n")
    try:
        confirm_fixes([mine], yes=False, stdin=said_yes.reader, stderr=io.StringIO())
    finally:
        said_yes.close()


def test_wizard_from_a_pack_entry_runs_only_once_confirmed(pack: Path) -> None:
    args = ("wizard", "run", "cuda/lab-fp16-lstm", "--kb-extra", str(pack), "--no-save")
    refused = _cli(*args, stdin="")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"cuda-clinic: error: cuda/lab-fp16-lstm is your own entry "
        f"({pack.resolve()}/cuda/lab-fp16-lstm.md), not a reviewed one: pass --yes to run "
        "the wizard it names (cuda/rnn-dtype-mismatch)"
    )
    assert refused.stdout == ""
    ran = _cli(*args, "--yes", "--json")
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["scenario"]["id"] == "cuda/rnn-dtype-mismatch"
    assert data["steps"][0]["kind"] == "repro"


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_report_labels_a_pack_match_as_the_users_own(pack: Path, tmp_path: Path, fmt: str) -> None:
    log = tmp_path / "error.log"
    log.write_text(BUS_ERROR)
    out = tmp_path / f"report.{fmt}"
    proc = _cli("report", "--quick", "--error", str(log), "--kb-extra", str(pack), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    if fmt == "json":
        report = json.loads(text)
        assert report["error"]["matches"][0]["origin"] == "user"
        assert report["answer"]["origin"] == "user"
        assert report["summary"]["top_match"]["origin"] == "user"
    else:
        # Page 1 leads with the answer, labelled as the user's own entry.
        assert report_head(text).count(USER_LABEL) == 1, text


def report_head(text: str) -> str:
    """A report's page 1: up to its answer's first section."""
    return text.split("What happened.", maxsplit=1)[0]


def test_kb_validate_pack_names_each_bad_file_and_counts_the_good(pack: Path) -> None:
    proc = _cli("kb", "validate", "--pack", str(pack))
    assert proc.returncode == 2
    lines = proc.stdout.strip().splitlines()
    assert [line.split(": field ")[0] for line in lines] == [
        str(pack.resolve() / "cuda" / name) for name in BAD_FILES
    ]
    assert proc.stderr.strip() == "3 bad file(s), 3 entries OK"
    for name in BAD_FILES:
        (pack / "cuda" / name).unlink()
    fixed = _cli("kb", "validate", "--pack", str(pack))
    assert fixed.returncode == 0 and fixed.stdout.strip().startswith("3 entries OK")
