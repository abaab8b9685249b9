"""What torch each candidate interpreter has: probed in a child process, in bounded time.

The first-run dialog offers the environments found on the machine with their torch and CUDA
build; an interpreter is asked through core/env/probe/torchbuild.py (standard library only,
torch never imported), so a broken or slow environment costs at most `timeout` seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from core.boundedio import loads_json
from core.contain import Outcome, run_contained
from core.env.probe import script_path
from core.errors import InputError

PROBE_TIMEOUT_S = 15.0
PROBE_OUTPUT_BYTES = 1 << 20  # the answer is one JSON line


@dataclass(frozen=True)
class TorchBuild:
    """One interpreter's Python and torch build, or why it could not be asked."""

    python: str
    python_version: str = ""
    torch: str = ""  # "" when torch is not installed there
    cuda: str = ""  # the CUDA torch was built for; "" for a CPU (or ROCm) build
    hip: str = ""
    error: str = ""  # the interpreter did not answer (crashed, timed out, not Python)

    @property
    def has_torch(self) -> bool:
        """Whether torch is installed in this interpreter."""
        return bool(self.torch)

    def describe(self) -> str:
        """One phrase: "torch 2.5.1+cu124, CUDA 12.4", "torch 2.13.0+cpu, CPU only", …"""
        if self.error:
            return f"could not be asked: {self.error}"
        if not self.torch:
            return "no torch"
        if self.cuda:
            build = f"CUDA {self.cuda}"
        elif self.hip:
            build = f"ROCm {self.hip}"
        else:
            build = "CPU only"
        return f"torch {self.torch}, {build}"


def probe_torch(python: str, timeout: float = PROBE_TIMEOUT_S) -> TorchBuild:
    """Ask `python` for its torch build in a child process, contained: its whole process tree
    ends after `timeout` s and its output is capped (a hostile interpreter costs nothing)."""
    try:
        outcome = run_contained(
            [python, "-I", str(script_path("torchbuild"))],
            timeout=timeout,
            output="streams",
            max_bytes=PROBE_OUTPUT_BYTES,
        )
    except OSError as exc:
        return TorchBuild(python, error=exc.strerror or str(exc))
    if outcome.status == "timed_out":
        return TorchBuild(python, error=f"no answer within {timeout:g} s")
    try:
        lines = outcome.stdout.strip().splitlines()
        data = loads_json(lines[-1], name=python, what="torch build answer")
        if not isinstance(data, dict):
            raise ValueError(data)
    except (IndexError, ValueError, InputError):
        return TorchBuild(python, error=why_no_answer(python, outcome, timeout))
    torch = data.get("torch") or {}
    return TorchBuild(
        python=python,
        python_version=str(data.get("python") or ""),
        torch=str(torch.get("version") or torch.get("dist_version") or "")
        if torch.get("found")
        else "",
        cuda=str(torch.get("cuda") or ""),
        hip=str(torch.get("hip") or ""),
    )


MIN_PYTHON = (3, 8)  # what the probe scripts run on (core/env/probe: `python -I`, f-strings, ...)
# Prints the interpreter's version on Python 2 and 3 alike.
_VERSION_CODE = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"


def why_no_answer(python: str, outcome: Outcome, timeout: float = PROBE_TIMEOUT_S) -> str:
    """What went wrong with an interpreter that did not answer the probe, in words (its raw
    stderr, such as "Try `python -h' for more information.", says nothing to a user)."""
    try:  # -S: no site, so a broken one still answers; contained like the probe itself
        asked = run_contained(
            [python, "-S", "-c", _VERSION_CODE], timeout=timeout, output="streams", max_bytes=4096
        )
        version = tuple(int(p) for p in asked.stdout.strip().split("."))
    except (OSError, ValueError):
        version = ()
    if len(version) == 3 and version[:2] < MIN_PYTHON:
        shown = ".".join(str(n) for n in version)
        need = ".".join(str(n) for n in MIN_PYTHON)
        return f"Python {shown} is too old: the check needs Python {need} or newer"
    if not version:
        return "it does not run as Python (it printed no version when asked)"
    if outcome.signal:
        return f"it crashed while the check ran ({outcome.signal})"
    return f"the check stopped with exit code {outcome.exit_code} before it could answer"


def probe_many(
    pythons: Sequence[str], timeout: float = PROBE_TIMEOUT_S, workers: int = 4
) -> list[TorchBuild]:
    """Probe several interpreters a few at a time; results in the order given."""
    if not pythons:
        return []
    with ThreadPoolExecutor(max_workers=min(workers, len(pythons))) as pool:
        return list(pool.map(lambda p: probe_torch(p, timeout), pythons))


def install_command(python: str) -> str:
    """The exact command that installs PyTorch into `python` (pip's default Linux wheel is a
    CUDA build; pytorch.org's selector gives an --index-url for another CUDA or the CPU)."""
    quoted = f'"{python}"' if " " in python else python
    return f"{quoted} -m pip install torch"
