"""`cuda-clinic nccl` end to end on the CPU: real torchrun, two real gloo ranks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from core.models import to_builtins
from core.nccl.command import exit_code
from core.nccl.render import render_human
from core.nccl.run import run_nccl
from core.nccl.sizes import bus_factor
from tests.core.clirun import REPO, run_core
from tests.core.nccl.stalled import stalled_rank

pytest.importorskip("torch.distributed")


def cli(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    """`cuda-clinic nccl ARGS` run from `cwd`, `env` added to the environment."""
    return run_core("nccl", *args, timeout=240, cwd=cwd, **env)


def processes_mentioning(text: str) -> list[int]:
    """Pids whose command line contains `text` (the run's own folder)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_two_gloo_ranks_measure_every_op_with_nccl_tests_bandwidths(tmp_path: Path) -> None:
    done = cli(
        "--nproc",
        "2",
        "--sizes",
        "8B:4K",
        "--iters",
        "5",
        "--json",
        "--keep",
        str(tmp_path / "run"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["status"] == "ok" and report["backend"] == "gloo"
    assert report["verdict"]["status"] == "not_applicable"
    assert set(report["results"]) == {"all_reduce", "all_gather", "reduce_scatter", "broadcast"}
    for op, rows in report["results"].items():
        assert [r["bytes"] for r in rows] == [8 * 2**i for i in range(10)]
        for row in rows:
            assert row["correct"], (op, row)
            assert len(row["rank_time_us"]) == 2 and row["time_us"] > 0
            # busbw = algbw x the nccl-tests factor; algbw = bytes / time.
            assert row["busbw_gbps"] == pytest.approx(
                row["algbw_gbps"] * bus_factor(op, 2), abs=2e-3
            )
            assert row["algbw_gbps"] == pytest.approx(row["bytes"] / 1e3 / row["time_us"], abs=2e-3)
    assert [s["state"] for s in report["ranks"]] == ["finished", "finished"]
    assert (tmp_path / "run" / "rank1.jsonl").exists()
    assert "torch.distributed.run" in report["command"]


@pytest.mark.slow
def test_a_stalled_rank_ends_at_the_timeout_with_every_rank_killed(tmp_path: Path) -> None:
    keep = tmp_path / "hang"
    typed = run_nccl(stalled_rank(timeout=20), keep)
    report = to_builtins(typed)
    assert report["status"] == "timed_out" and exit_code(typed) == 1
    assert 20 <= report["seconds"] < 40
    assert report["hang"] == (
        "rank 0 stuck in broadcast of 8 B; rank 1 stuck before broadcast of 8 B "
        "(it never called it)"
    )
    assert report["killed_processes"] >= 3  # torchrun and both ranks
    assert processes_mentioning(str(keep)) == []
    # What finished before the hang is kept.
    assert [r["bytes"] for r in report["results"]["all_reduce"]] == [8, 16]
    assert "TIMED OUT (every rank killed)" in render_human(typed)


def test_bad_usage_is_one_line_and_exit_2() -> None:
    for args, words in (
        (["--sizes", "1G:8B"], "bad size range"),
        (["--ops", "all_reduce,alltoall"], "unknown op 'alltoall'"),
        (["--launcher", "srun"], "srun is not on PATH"),
    ):
        if (
            args[0] == "--launcher"
            and subprocess.run(
                ["sh", "-c", "command -v srun"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            continue
        done = cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and words in done.stderr


FAKE_SRUN = """#!/bin/sh
# srun --ntasks=N [ARGS] CMD...: N copies of CMD with the variables Slurm gives each task.
n=1
while [ "$#" -gt 0 ]; do
  case "$1" in --ntasks=*) n=${1#--ntasks=}; shift ;; -*) shift ;; *) break ;; esac
done
i=0
while [ "$i" -lt "$n" ]; do
  SLURM_PROCID=$i SLURM_LOCALID=$i SLURM_NTASKS=$n SLURM_STEP_TASKS_PER_NODE=$n "$@" &
  i=$((i + 1))
done
wait
"""


@pytest.mark.slow
def test_srun_starts_the_ranks_with_slurm_variables(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "srun").write_text(FAKE_SRUN)
    (bindir / "srun").chmod(0o755)
    done = cli(
        "--launcher", "srun", "--nproc", "2", "--ops", "all_reduce", "--sizes", "8B:64B",
        "--iters", "3", "--json",
        cwd=tmp_path, PATH=f"{bindir}:{os.environ['PATH']}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["command"][:2] == ["srun", "--ntasks=2"]
    assert [s["state"] for s in report["ranks"]] == ["finished", "finished"]
    assert [r["bytes"] for r in report["results"]["all_reduce"]] == [8, 16, 32, 64]
    # The event folder was made under the current folder (shared on a cluster), then removed.
    assert not list(tmp_path.glob("cuda-clinic-nccl-*"))
