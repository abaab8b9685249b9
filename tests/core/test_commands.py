"""The command-line contract: every registered command answers --help, bad usage exits 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.cli import COMMANDS, build_parser, load_command


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _command_names() -> list[str]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    return sorted(subparsers.choices)  # type: ignore[arg-type]


def test_every_design_command_is_registered() -> None:
    """DESIGN.md's contract names these commands; tests and docs depend on them."""
    assert {"env", "match", "kb", "wizard", "bench", "report"} <= set(_command_names())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_top_level_help_is_the_same_whichever_command_is_loaded(name: str) -> None:
    """`cuda-clinic --help` lists commands without importing them; loading one in full (as
    `cuda-clinic NAME ...` does) must not change what the listing says."""
    listing = build_parser().format_help()
    assert COMMANDS[name][1] in " ".join(listing.split())
    assert build_parser([name]).format_help() == listing


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_help_shows_the_module_texts(name: str) -> None:
    """The module's DESCRIPTION, EPILOG and USAGE are what `NAME --help` is built from."""
    module = load_command(name)
    subparsers = next(a for a in build_parser([name])._actions if a.dest == "command")
    parser = subparsers.choices[name]  # type: ignore[index]
    assert parser.description == module.DESCRIPTION  # type: ignore[attr-defined]
    assert parser.epilog == getattr(module, "EPILOG", None)
    assert parser.usage == getattr(module, "USAGE", None)


def test_top_level_help_lists_every_command() -> None:
    result = _run("--help")
    assert result.returncode == 0
    for name in COMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize("name", _command_names())
def test_command_help_works(name: str) -> None:
    result = _run(name, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
    assert result.stderr == ""


def test_unknown_command_is_usage_error() -> None:
    result = _run("no-such-command")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_no_command_prints_help_and_exits_2() -> None:
    result = _run()
    assert result.returncode == 2
    assert "COMMAND" in result.stdout
