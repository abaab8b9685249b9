"""When a probe child dies: which step, which signal, the most likely cause, how to confirm it.

A library that kills the process leaves no exception to quote. What is left is the step the
child had begun (its stage markers), the signal, Python's faulthandler lines, and what the quick
probe saw: a damaged library copy, a malformed allocator setting, a preloaded library. The cause
named is the first of those that can produce this signal in this step; the confirmation is one
command that reproduces the step alone, without the probe.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from core.env.checks_files import IN_USE, damaged_copies
from core.env.model import Environment
from core.env.probe.shapes import ProbeStatus

SIGNALS = {
    "SIGBUS": "the process touched a page of a mapped file that does not exist (a truncated "
    "library) or memory the hardware reported bad",
    "SIGSEGV": "native code read or wrote an invalid address (a damaged library, a library "
    "of the wrong version, or a bug in native code)",
    "SIGABRT": "a library aborted (an uncaught C++ exception or a failed assertion)",
    "SIGILL": "the CPU met an instruction it does not have (a library built for a newer CPU)",
    "SIGKILL": "something outside killed it, most often the kernel's out-of-memory killer "
    "(`dmesg | tail` says)",
    "SIGFPE": "an arithmetic fault in native code",
}
# The step as a stand-alone command (the step names are gpuchecks.py's stage markers).
_CONV = (
    "import torch; x = torch.randn(2, 3, 16, 16, device='cuda:{n}'); "
    "w = torch.randn(4, 3, 3, 3, device='cuda:{n}'); "
    "print(torch.nn.functional.conv2d(x, w).sum().item())"
)
_STEPS = {
    "import torch": "import torch",
    "first conv": _CONV,
    "conv": _CONV,
    "matmul": (
        "import torch; a = torch.randn(64, 64, device='cuda:{n}'); print((a @ a).sum().item())"
    ),
    "lstm": (
        "import torch; m = torch.nn.LSTM(8, 16).to('cuda:{n}'); "
        "print(m(torch.randn(5, 2, 8, device='cuda:{n}'))[0].sum().item())"
    ),
}


@dataclass(frozen=True)
class Crash:
    """A dead probe child explained."""

    step: str
    signal: str
    meaning: str
    cause: str  # the most likely cause, from what the quick probe saw ("" when none)
    root: str  # the finding id of that cause ("" when none)
    confirm: str  # the command that reproduces the step alone
    faulthandler: str  # Python's own crash lines, if it printed any


def step_command(env: Environment, step: str) -> str:
    """The command that runs `step` alone in the target interpreter."""
    python = str(env.python.get("executable") or "python")
    base = step.split(" on cuda:", maxsplit=1)[0]
    device = step.rsplit("cuda:", maxsplit=1)[-1] if "cuda:" in step else "0"
    code = _STEPS.get(base, "import torch; torch.cuda.init()").format(n=device or "0")
    return f"{shlex.quote(python)} -X faulthandler -c {shlex.quote(code)}"


def explain(env: Environment, status: ProbeStatus) -> Crash | None:
    """Why the deep child died, or None when it did not die from a signal."""
    signal = str(status.get("signal") or "")
    if not signal:
        error = str(status.get("error") or "")
        signal = error.removeprefix("killed by ") if error.startswith("killed by ") else ""
    if not signal:
        return None
    running = [str(s) for s in status.get("running") or []]
    step = running[-1] if running else str(status.get("last_stage") or "an unknown step")
    tail = [str(x) for x in status.get("stderr_tail") or []]
    fault = "\n".join(x for x in tail if x.startswith(("Fatal Python error", 'File "', "  File")))
    cause, root, confirm = _cause(env, signal, step)
    return Crash(
        step=step,
        signal=signal,
        meaning=SIGNALS.get(signal, "a signal from native code"),
        cause=cause,
        root=root,
        confirm=confirm or step_command(env, step),
        faulthandler=fault[:1500],
    )


def _cause(env: Environment, signal: str, step: str) -> tuple[str, str, str]:
    """(cause sentence, finding id, confirmation command) from what the quick probe saw."""
    damaged = [d for d in damaged_copies(env) if d.get("source") in IN_USE]
    if damaged and signal in ("SIGBUS", "SIGSEGV", "SIGILL", "SIGABRT"):
        first = damaged[0]
        path = str(first.get("path"))
        confirm = f"python3 -c {shlex.quote(f'import ctypes; ctypes.CDLL({path!r})')}"
        return (
            f"{path} ({first.get('source')}) is damaged: {first.get('problem')}",
            "lib.damaged-copy",
            confirm + f"   # dies with {signal} too; or: LD_DEBUG=files {step_command(env, step)} "
            "2>&1 | tail -n 5 (the last file the loader opened)",
        )
    from core.env.allocconf import problems

    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        value = env.env_vars.get(name)
        if value is not None and problems(value):
            return (
                f"{name}={value!r} is malformed ({problems(value)[0]})",
                "env.alloc-conf-invalid",
                f"env -u {name} {step_command(env, step)}   # runs without it",
            )
    if env.env_vars.get("LD_PRELOAD"):
        return (
            f"LD_PRELOAD={env.env_vars['LD_PRELOAD']!r} puts its libraries before torch's own",
            "env.ld-preload-invalid",
            f"env -u LD_PRELOAD {step_command(env, step)}   # runs without it",
        )
    if env.env_vars.get("LD_LIBRARY_PATH") and ("conv" in step or "lstm" in step):
        return (
            f"LD_LIBRARY_PATH={env.env_vars.get('LD_LIBRARY_PATH')!r} can put other CUDA "
            "libraries before torch's own",
            "",
            f"env -u LD_LIBRARY_PATH {step_command(env, step)}   # runs without it",
        )
    return "", "", ""
