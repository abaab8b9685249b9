"""Damaged library files are found by their structure, on real ELF files built here."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.env import detect
from core.env.probe import elfcheck

SOURCE = """
#include <string.h>
static char table[65536] = {1};
int answer(int x) { return x + (int) strlen(table); }
"""


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A real shared library with a SONAME, built with the C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler to build a shared library")
    source = tmp_path / "lib.c"
    source.write_text(SOURCE)
    out = tmp_path / "build" / "libcudnn_cnn.so.9"
    out.parent.mkdir()
    subprocess.run(
        [
            compiler,
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcudnn_cnn.so.9",
            "-o",
            str(out),
            str(source),
        ],
        check=True,
    )
    return out


def _copy(library: Path, folder: Path, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / library.name
    target.write_bytes(data)
    return target


def test_a_whole_library_passes(library: Path) -> None:
    assert elfcheck.check_file(str(library)) is None


def test_every_library_of_this_machine_passes() -> None:
    # No false alarm on real libraries: the interpreter's, the system's and torch's.
    folders = {os.path.dirname(p) for p in (sys.executable, os.__file__)}
    folders |= {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64"}
    import torch

    folders.add(os.path.join(os.path.dirname(torch.__file__), "lib"))
    checked = 0
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder))[:400]:
            path = os.path.join(folder, name)
            if ".so" in name and os.path.isfile(path):
                assert elfcheck.check_file(path) is None, path
                checked += 1
    assert checked > 20


def test_random_truncations_are_found_and_say_sigbus_when_mapped_code_is_cut(
    library: Path, tmp_path: Path
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    data = library.read_bytes()
    loads = [
        (offset, filesz)
        for kind, offset, _v, filesz in _segments(library)
        if kind == elfcheck.PT_LOAD
    ]
    mapped_end = max(o + n for o, n in loads)
    for _ in range(30):
        cut = rng.randrange(1, len(data) - 1)
        broken = _copy(library, tmp_path / f"cut{cut}", data[:cut])
        problem = elfcheck.check_file(str(broken))
        assert problem is not None, f"seed {seed}: cut at {cut} not found"
        if 64 <= cut < mapped_end:
            assert "SIGBUS" in problem or "header" in problem, f"seed {seed}: {problem}"


def _segments(path: Path) -> list[tuple[int, int, int, int]]:
    with open(path, "rb") as fh:
        ident = fh.read(64)
        elf = elfcheck._Elf(fh, os.path.getsize(path), wide=ident[4] == 2, order="<")
        assert elf.header_problem(ident) is None
        assert elf.segments_problem() is None
        return elf.segments


def test_overwritten_headers_and_text_files_are_found(library: Path, tmp_path: Path) -> None:
    data = bytearray(library.read_bytes())
    zeroed = _copy(library, tmp_path / "zero", bytes(len(data)))
    assert "not an ELF file" in (elfcheck.check_file(str(zeroed)) or "")
    text = _copy(library, tmp_path / "text", b"this is not a library\n")
    assert "not an ELF file" in (elfcheck.check_file(str(text)) or "")
    empty = _copy(library, tmp_path / "empty", b"")
    assert "empty" in (elfcheck.check_file(str(empty)) or "")
    data[18] ^= 0xFF  # e_machine
    other = _copy(library, tmp_path / "machine", bytes(data))
    assert "another machine" in (elfcheck.check_file(str(other)) or "")


def test_a_wheel_record_size_mismatch_is_named(library: Path) -> None:
    size = library.stat().st_size
    assert elfcheck.check_file(str(library), expected_size=size) is None
    problem = elfcheck.check_file(str(library), expected_size=size + 4096)
    assert problem and "recorded" in problem


def test_the_quick_probe_names_a_damaged_copy_on_ld_library_path(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = library.read_bytes()
    damaged = _copy(library, tmp_path / "damaged", data[: len(data) // 3])
    whole = _copy(library, tmp_path / "whole", data)
    not_a_lib = tmp_path / "preload.txt"
    not_a_lib.write_text("hello\n")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{damaged.parent}:{whole.parent}")
    monkeypatch.setenv("LD_PRELOAD", str(not_a_lib))
    env = detect(sys.executable)
    found = {f.id: f for f in env.findings}
    lib = found["lib.damaged-copy"]
    assert str(damaged) in lib.message and "truncated" in lib.message
    assert lib.command == f"export LD_LIBRARY_PATH={whole.parent}"
    assert str(whole) not in lib.message
    preload = found["env.ld-preload-invalid"]
    assert str(not_a_lib) in preload.message and preload.command == "unset LD_PRELOAD"
    # The loader complained in every child it started; its own words are kept.
    assert "cannot be preloaded" in preload.evidence
