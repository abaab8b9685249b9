"""Safe output paths (`-o`): symlinks are written through, devices and FIFOs written directly
(never renamed over), sockets refused, and temporary files of killed writes cleaned up."""

from __future__ import annotations

import os
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.fsutil import UnsafeTargetError, atomic_write_bytes, atomic_write_text

REPO = Path(__file__).resolve().parents[2]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_symlink_is_written_through_to_its_target_atomically(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    real = shared / "team-report.md"
    real.write_text("old\n")
    real.chmod(0o640)
    here = tmp_path / "here"
    here.mkdir()
    link = here / "report.md"
    link.symlink_to(real)
    atomic_write_text(link, "new report\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new report\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert leftovers(here) == [] and leftovers(shared) == []
    dangling = here / "later.md"
    dangling.symlink_to(shared / "not-yet.md")
    atomic_write_text(dangling, "created\n")
    assert dangling.is_symlink() and (shared / "not-yet.md").read_text() == "created\n"


def test_a_character_device_is_written_directly_not_replaced(tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        tty = Path(os.ttyname(slave))
        link = tmp_path / "terminal"
        link.symlink_to(tty)
        atomic_write_bytes(link, b"report on the terminal\n")
        ready, _w, _x = select.select([master], [], [], 5)
        got = os.read(master, 4096) if ready else b""
        assert b"report on the terminal" in got
        assert link.is_symlink() and stat.S_ISCHR(tty.stat().st_mode)
        assert leftovers(tmp_path) == [] and leftovers(tty.parent) == []
    finally:
        os.close(master)
        os.close(slave)


def test_report_to_dev_stdout_goes_to_stdout_and_leaves_it_alone(tmp_path: Path) -> None:
    source = _saved_report(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "core", "report", "--from", str(source), "-o", "/dev/stdout"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "CUDA Clinic diagnostic report" in done.stdout
    assert Path("/dev/stdout").is_symlink()  # still the link every program relies on


def _saved_report(tmp_path: Path) -> Path:
    out = tmp_path / "saved.json"
    made = subprocess.run(
        [sys.executable, "-m", "core", "report", "--quick", "-o", str(out)],
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    return out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_with_a_reader_gets_the_data_and_one_without_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 10
    while True:  # wait until the reader has the FIFO open
        try:
            atomic_write_bytes(fifo, b"through the pipe\n")
            break
        except UnsafeTargetError:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not replaced
    started = time.monotonic()
    with pytest.raises(UnsafeTargetError, match="no program is reading"):
        atomic_write_bytes(fifo, b"nobody listens\n")
    assert time.monotonic() - started < 2
    done = subprocess.run(
        [sys.executable, "-m", "core", "report", "--quick", "--format", "md", "-o", str(fifo)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "no program is reading" in lines[-1], done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(UnsafeTargetError, match="socket"):
            atomic_write_bytes(path, b"x")
        assert stat.S_ISSOCK(path.stat().st_mode)
    finally:
        server.close()


KILLED_WRITER = r"""
import os, sys, time
import core.fsutil as fsutil
def stall(fd):
    print("writing", flush=True)
    time.sleep(60)
os.fsync = stall
fsutil.atomic_write_bytes(sys.argv[1], b"half" * 1000)
"""


def test_temporary_files_of_killed_writes_are_cleaned_up(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("whole old report\n")
    for _ in range(3):  # three writers killed mid-write
        child = subprocess.Popen(
            [sys.executable, "-c", KILLED_WRITER, str(target)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        child.stdout.close()
        # each killed write leaves its temporary file; the next write removes the earlier one
        assert len(leftovers(tmp_path)) == 1 and target.read_text() == "whole old report\n"
    other = tmp_path / ".notes.txt.12345.abc.tmp"  # not ours for this target: kept
    other.write_text("x")
    mine_alive = tmp_path / f".report.md.{os.getpid()}.zzz.tmp"  # a live writer's: kept
    mine_alive.write_text("x")
    atomic_write_text(target, "new report\n")
    assert target.read_text() == "new report\n"
    assert leftovers(tmp_path) == sorted([other.name, mine_alive.name])
