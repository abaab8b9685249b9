"""`cuda-clinic env` end to end: real child processes, real exit codes, real JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.core.clirun import run_core


def _json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_json_has_the_design_minimums_and_exit_code_follows_findings() -> None:
    proc = run_core("env", "--json")
    data = _json(proc)
    for key in (
        "schema_version",
        "python",
        "platform",
        "driver",
        "gpus",
        "torch",
        "cudnn",
        "findings",
        "app",
    ):
        assert key in data
    assert {"version", "cuda_max"} <= data["driver"].keys()
    assert {"version", "cuda", "arch_list", "import_error"} <= data["torch"].keys()
    assert {"version", "loaded_from", "copies"} <= data["cudnn"].keys()
    assert {"version", "kb_path", "user_db_path"} <= data["app"].keys()
    assert data["python"]["executable"] == sys.executable
    has_error = any(f["severity"] == "error" for f in data["findings"])
    assert proc.returncode == (1 if has_error else 0)


def test_missing_interpreter_is_one_line_and_exit_2() -> None:
    proc = run_core("env", "--python", "/nonexistent/python")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines == ["cuda-clinic: error: /nonexistent/python does not exist"]


def test_non_python_executable_is_rejected(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    proc = run_core("env", "--python", str(fake))
    assert proc.returncode == 2
    assert "is not a working Python interpreter" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_quick_mode_never_imports_torch(tmp_path: Path) -> None:
    """A torch whose import leaves a mark and fails: quick mode must read it without the mark."""
    pkg = tmp_path / "torch"
    pkg.mkdir()
    mark = tmp_path / "torch-was-imported"
    (pkg / "__init__.py").write_text(
        f"open({str(mark)!r}, 'w').close()\nraise ImportError('poisoned torch was imported')\n"
    )
    (pkg / "version.py").write_text("__version__ = '9.9.9+cu999'\ncuda = '99.9'\n")
    proc = run_core("env", "--json", pythonpath=[tmp_path])
    data = _json(proc)
    assert not mark.exists()
    assert data["torch"]["location"] == str(pkg)
    assert data["torch"]["version"] == "9.9.9+cu999"
    assert data["torch"]["import_error"] is None
    # The deep probe does import it, and reports the failure instead of crashing.
    proc = run_core("env", "--deep", "--json", pythonpath=[tmp_path])
    assert mark.exists()
    data = _json(proc)
    assert data["torch"]["import_error"] == "ImportError: poisoned torch was imported"
    assert proc.returncode == 1


def test_broken_torch_reported_not_crashed(broken_torch: Path) -> None:
    proc = run_core("env", "--deep", pythonpath=[broken_torch])
    assert proc.returncode == 1
    assert proc.stdout.startswith("Findings\n  ERROR")
    assert "torch.import-error" in proc.stdout
    assert "No module named 'torch._C'" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_human_output_puts_findings_before_the_table() -> None:
    proc = run_core("env")
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Findings")
    table = lines.index("Environment (quick mode)")
    assert any(line.startswith("  Python") for line in lines[table:])
    assert all(not line.startswith(("  ERROR", "  WARNING", "  INFO")) for line in lines[table:])


def test_venv_folder_is_accepted_as_target() -> None:
    venv = Path(sys.prefix)
    proc = run_core("env", "--json", "--python", str(venv))
    assert proc.returncode in (0, 1), proc.stderr
    assert _json(proc)["python"]["prefix"] == str(venv)
