"""A stored run that does not load (not JSON, not an object, nested thousands deep, a field of
the wrong shape) is skipped with a warning naming its id, by every command that reads the
history; it never breaks them."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from core.bench.model import Sweep
from core.errors import HistoryRowError
from core.history import History
from core.tryrun.model import TryResult
from core.wizard.record import WizardRun
from tests.core.clirun import run_core
from tests.core.runs import sweep, try_run, wizard_run

BAD_RUNS = (
    "[1,2]",
    "not json {",
    "[" * 5000 + "]" * 5000,
    "[" * 20000,
    '{"outcome": "ok", "steps": [{"name": 5}]}',
)


def seeded(folder: Path) -> tuple[list[int], list[int], int, int, int]:
    """Good runs, then unreadable ones as the newest of their scenarios; a bad bench and try."""
    path = folder / "history.sqlite"
    with History.open(path) as history:
        good = [history.save_run(wizard_run(f"cuda/s{i}", "ok")) for i in (1, 2)]
        good_bench = history.save_bench("lstm", sweep())
        history.save_try(try_run(["python", "a.py"]))
    conn = sqlite3.connect(path, isolation_level=None)
    bad = []
    for i, text in enumerate(BAD_RUNS):
        cur = conn.execute(
            "INSERT INTO wizard_runs (created, scenario, outcome, run) VALUES ('now', ?, 'x', ?)",
            (f"cuda/s{i % 2 + 1}" if i < 2 else f"cuda/deep{i}", text),
        )
        bad.append(int(cur.lastrowid or 0))
    bad_bench = conn.execute(
        "INSERT INTO bench_runs (created, kind, payload) VALUES ('now', 'conv', '[[[')"
    ).lastrowid
    bad_try = conn.execute(
        "INSERT INTO try_runs (created, command, run) VALUES ('now', '{{', ?)", ("[" * 9000,)
    ).lastrowid
    conn.close()
    assert bad_bench and bad_try
    return good, bad, good_bench, int(bad_bench), int(bad_try)


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_core(*args, CUDA_CLINIC_DATA_DIR=str(folder))


def test_reading_an_unreadable_run_is_one_error_naming_it(tmp_path: Path) -> None:
    _good, bad, _gb, bad_bench, bad_try = seeded(tmp_path)
    with History.open(tmp_path / "history.sqlite") as history:
        for run_id in bad:
            with pytest.raises(HistoryRowError, match=f"wizard run {run_id}:"):
                history.get_run(run_id, WizardRun)
        with pytest.raises(HistoryRowError, match=f"benchmark run {bad_bench}:"):
            history.get_bench(bad_bench, Sweep)
        with pytest.raises(HistoryRowError, match=f"try run {bad_try}:"):
            history.get_try(bad_try, TryResult)
        assert [r.command for r in history.try_runs()] == [["python", "a.py"]]
        assert len(history.skipped) == 1 and f"try run {bad_try}" in history.skipped[0]


def test_report_skips_unreadable_runs_with_a_warning_naming_each(tmp_path: Path) -> None:
    good, bad, good_bench, bad_bench, bad_try = seeded(tmp_path)
    done = cli(tmp_path, "report", "--quick", "--format", "json", "--no-redact")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    for run_id in bad:  # each is the newest run of its scenario, so the report wanted it
        assert f"wizard run {run_id}:" in done.stderr
    assert f"benchmark run {bad_bench}:" in done.stderr
    assert {r.get("id") for r in report["wizard_runs"]} <= set(good)
    assert [b.get("id") for b in report["benchmarks"]] == [good_bench]
    chosen = cli(tmp_path, "report", "--quick", "--format", "json", "--run", f"try:{bad_try}")
    assert chosen.returncode == 0, chosen.stderr
    assert f"try run {bad_try}:" in chosen.stderr and "Traceback" not in chosen.stderr


def test_wizard_history_and_bench_list_survive_unreadable_runs(tmp_path: Path) -> None:
    good, bad, _good_bench, bad_bench, _bt = seeded(tmp_path)
    listed = cli(tmp_path, "wizard", "history")
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == len(good) + len(bad)
    one = cli(tmp_path, "wizard", "history", str(bad[2]))
    assert one.returncode == 2
    lines = one.stderr.strip().splitlines()
    assert len(lines) == 1 and f"wizard run {bad[2]}:" in lines[0]
    benches = cli(tmp_path, "bench", "list")
    assert benches.returncode == 0, benches.stderr
    assert f"benchmark run {bad_bench}:" in benches.stderr and "Traceback" not in benches.stderr
