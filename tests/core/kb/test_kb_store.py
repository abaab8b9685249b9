"""The compiled KB: reproducible builds, read-only access, staleness, search and the CLI."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from core.errors import KBError
from core.kb import UnknownEntryError, ensure_built, open_kb
from core.kb.build import ENTRY_TABLES, SCHEMA_VERSION, source_digest, write_database
from core.kb.loader import load_entries
from core.kb.render import render_entry
from tests.core.clirun import run_core


@pytest.fixture
def kb_src(tmp_path: Path, repo_root: Path) -> Path:
    """A private copy of the fixture entries (tests may edit it)."""
    src = tmp_path / "src"
    shutil.copytree(repo_root / "tests/data/kb", src)
    return src


def _build(src: Path, dest: Path) -> bytes:
    write_database(load_entries(src), dest, source_digest(src))
    return dest.read_bytes()


def test_build_is_byte_identical(kb_src: Path, tmp_path: Path) -> None:
    first = _build(kb_src, tmp_path / "a.sqlite")
    second = _build(kb_src, tmp_path / "b.sqlite")
    assert first == second
    # A content change must change the bytes (the comparison above is not vacuous).
    path = kb_src / "cuda/fixture-out-of-memory.md"
    path.write_text(path.read_text().replace("Memory ran out.", "Memory ran out again."))
    assert _build(kb_src, tmp_path / "c.sqlite") != first


def test_schema_tables_and_user_version(kb_src: Path, tmp_path: Path) -> None:
    dest = tmp_path / "kb.sqlite"
    _build(kb_src, dest)
    conn = sqlite3.connect(dest)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {*ENTRY_TABLES, "meta", "entries_fts"} <= tables
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_open_is_read_only(kb_src: Path, tmp_path: Path) -> None:
    dest = tmp_path / "kb.sqlite"
    before = _build(kb_src, dest)
    kb = open_kb(dest)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        kb._conn.execute("DELETE FROM entries")
    kb.close()
    assert dest.read_bytes() == before


def test_opens_in_read_only_directory(kb_src: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    _build(kb_src, folder / "kb.sqlite")
    folder.chmod(0o555)
    try:
        with open_kb(folder / "kb.sqlite") as kb:
            assert len(kb.ids()) == 7
        assert sorted(p.name for p in folder.iterdir()) == ["kb.sqlite"]  # no -journal/-wal left
    finally:
        folder.chmod(0o755)


def test_entries_round_trip(kb_src: Path) -> None:
    with open_kb(kb_src) as kb:
        from_db = {e.id: e for e in kb.entries()}
    from_files = {e.id: e for e in load_entries(kb_src)}
    assert from_db == from_files


def test_get_unknown_id_is_usage_error(kb_src: Path) -> None:
    with open_kb(kb_src) as kb, pytest.raises(UnknownEntryError, match="cuda/nope"):
        kb.get("cuda/nope")


def test_search_ranks_and_survives_fts_syntax(kb_src: Path) -> None:
    with open_kb(kb_src) as kb:
        assert kb.search("CUDNN_STATUS_NOT_INITIALIZED")[0].id == "cuda/fixture-not-initialized"
        assert kb.search("watchdog collective")[0].id == "nccl/fixture-watchdog"
        assert kb.search("cuda/fixture-mapping-error")[0].id == "cuda/fixture-mapping-error"
        # Porter stemming: "initialize" finds "initialized".
        assert "cuda/fixture-not-initialized" in [e.id for e in kb.search("initialize")]
        for hostile in ['"unbalanced', "NEAR(a b", "a AND OR", "*", "-x", "a:b"]:
            kb.search(hostile)  # must not raise
        assert kb.search("zebra giraffe") == []


def test_stale_build_is_rebuilt_and_fresh_one_reused(kb_src: Path) -> None:
    first = ensure_built(kb_src)
    stamp = first.stat().st_mtime_ns
    assert ensure_built(kb_src) == first
    assert first.stat().st_mtime_ns == stamp  # reused, not rebuilt
    path = kb_src / "nccl/fixture-watchdog.md"
    path.write_text(path.read_text().replace("Ranks fell out of step.", "Ranks drifted."))
    second = ensure_built(kb_src)
    assert second != first  # keyed by the source digest
    with open_kb(second) as kb:
        assert "Ranks drifted." in kb.get("nccl/fixture-watchdog").body


def test_bad_source_fails_with_one_line(kb_src: Path) -> None:
    (kb_src / "cuda/broken.md").write_text("no front matter\n")
    with pytest.raises(KBError) as info:
        open_kb(kb_src)
    assert "broken.md: field 'front matter'" in str(info.value)


def test_wrong_schema_version_is_refused(kb_src: Path, tmp_path: Path) -> None:
    dest = tmp_path / "kb.sqlite"
    _build(kb_src, dest)
    conn = sqlite3.connect(dest)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(KBError, match="user_version"):
        open_kb(dest)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_core("kb", *args, timeout=120)


def test_cli_list_show_search(kb_src: Path) -> None:
    listing = _cli("list", "--kb", str(kb_src))
    assert listing.returncode == 0, listing.stderr
    assert len(listing.stdout.splitlines()) == 7
    as_json = json.loads(_cli("list", "--kb", str(kb_src), "--json").stdout)
    assert as_json[0]["id"] == "cuda/fixture-device-assert"
    show = _cli("show", "cuda/fixture-out-of-memory", "--kb", str(kb_src))
    assert show.returncode == 0, show.stderr
    # The seed's claim is shown beside our verdict.
    assert "Setting cudnn.benchmark=True fixes it (claimed success: 70%)" in show.stdout
    assert "our verdict: WRONG" in show.stdout
    shown = json.loads(
        _cli("show", "cuda/fixture-mapping-error", "--kb", str(kb_src), "--json").stdout
    )
    assert shown["workarounds"][0]["verdict"] == "fixes"
    search = _cli("search", "watchdog", "--kb", str(kb_src), "--json")
    assert [e["id"] for e in json.loads(search.stdout)] == ["nccl/fixture-watchdog"]


def test_show_lists_the_apps_that_reword_an_error(kb_src: Path) -> None:
    show = _cli("show", "cuda/fixture-not-available", "--kb", str(kb_src))
    assert show.returncode == 0, show.stderr
    section = show.stdout.split("Apps that reword this error (matched too):")[1]
    assert "AUTOMATIC1111 stable-diffusion-webui: its launcher asserted" in section
    assert "Torch is not able to use GPU; add --skip-torch-cuda-test" in section
    shown = json.loads(
        _cli("show", "cuda/fixture-not-available", "--kb", str(kb_src), "--json").stdout
    )
    assert [w["app"] for w in shown["wrapped"]] == [
        "AUTOMATIC1111 stable-diffusion-webui",
        "text-generation-webui",
    ]


def test_cli_unknown_id_is_one_line_exit_2(kb_src: Path) -> None:
    result = _cli("show", "cuda/nope", "--kb", str(kb_src))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "cuda-clinic: error: no knowledge-base entry with id 'cuda/nope'"
    ]


def test_cli_build_quiet(kb_src: Path) -> None:
    result = _cli("build", "--quiet", "--source", str(kb_src))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    loud = _cli("build", "--source", str(kb_src), "--force")
    assert "7 entries ready" in loud.stdout


def test_cli_show_every_bundled_entry_reads_in_a_terminal(repo_root: Path) -> None:
    """Prose wraps at 96 columns, list items hang, and no raw Markdown markup is left over.

    Only the verbatim parts (the title, regex signatures and code snippets) may be wider.
    """
    shown = _cli("show", "cuda/cudnn-rnn-performance")
    assert shown.returncode == 0, shown.stderr
    assert "\nHow to confirm:\n  1. Profile one step" in shown.stdout
    entries = open_kb().entries()
    assert len(entries) > 40
    for entry in entries:
        entry_id, text = entry.id, render_entry(entry)
        lines = text.splitlines()
        verbatim = _verbatim_lines(lines)
        for number, line in enumerate(lines):
            if number not in verbatim:
                assert len(line) <= 96, (entry_id, line)
                assert not re.match(r"#+ ", line.lstrip()), (entry_id, line)
                assert "**" not in line, (entry_id, line)
        assert "\nFix:\n" in text or "\nWhat happens:\n" in text, entry_id


def _verbatim_lines(lines: list[str]) -> set[int]:
    """Indices of the title, the regex signatures and the code snippets under a workaround."""
    keep = {0}
    section = ""
    for number, line in enumerate(lines):
        if line.startswith("Recognised by"):
            section = "signatures"
        elif not line:
            section = ""
        elif re.match(r"  \d+\. \[", line):
            section = "title"  # a workaround title: its snippet lines follow
        elif re.match(r" {5}\S", line):
            # The title's wrapped continuation, else evidence or notes: prose again.
            section = "title" if section == "title" else ""
        elif section:
            section = "snippet" if section == "title" else section
            keep.add(number)
    return keep
