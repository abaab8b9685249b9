"""Environment detection: what driver, CUDA, cuDNN and PyTorch are installed, and what is loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from core import timing
from core.env.model import Environment, Finding
from core.env.render import render_human

if TYPE_CHECKING:
    import threading

    from core.env.multigpu_model import MultiGpu
    from core.env.probe.shapes import DeepJSON, QuickJSON
    from core.env.runner import ProbeRun

__all__ = ["Environment", "Finding", "assemble", "deep_result", "detect", "render_human"]

# Mirrors core.env.runner.DEEP_TIMEOUT_S; the runner (subprocess and friends) loads on first use.
DEEP_TIMEOUT_S = 180.0
QUICK_TIMEOUT_S = 60.0  # core.env.runner.QUICK_TIMEOUT_S mirrors it


def app_info() -> dict[str, str]:
    """The app's version and where its bundled KB and the user database live."""
    from core import __version__
    from core.paths import resources_dir, user_db_path

    return {
        "version": __version__,
        "kb_path": str(resources_dir() / "kb.sqlite"),
        "user_db_path": str(user_db_path()),
    }


def deep_result(run: ProbeRun | None) -> DeepJSON | None:
    """The deep probe's JSON; a child that died inside `import torch` becomes an import error."""
    if run is None:
        return None
    if run.data is not None:
        return cast("DeepJSON", run.data)
    if run.last_stage == "import torch":
        message = f"the interpreter died while importing torch ({run.error})"
        return {"torch": {"imported": False, "import_error": message}}
    return None


def detect(
    python: str | None = None,
    deep: bool = False,
    deep_timeout: float = DEEP_TIMEOUT_S,
    cancel: threading.Event | None = None,
    quick_timeout: float = QUICK_TIMEOUT_S,
) -> Environment:
    """Probe the target interpreter (default: this one) and return the Environment with findings.

    Quick mode reads files and NVML and never imports torch; deep mode also imports torch
    (once) in a child process, runs tiny GPU operations on every GPU at once and reads which
    libraries got loaded, while the quick child reads NVLink, ECC and P2P state. Raises
    TargetPythonError for an interpreter that cannot be run; probe failures become findings.
    Setting `cancel` kills the probes' process groups within about 0.1 s and raises
    core.env.runner.CheckCancelledError.
    """
    from core.env.runner import run_probes
    from core.errors import TargetPythonError
    from core.target import resolve_python

    target = resolve_python(python)
    timing.mark("probes starting")
    try:
        quick, deep_run = run_probes(
            target,
            deep=deep,
            deep_timeout=deep_timeout,
            cancel=cancel,
            quick_timeout=quick_timeout,
            while_waiting=_prepare_deep if deep else _prepare,
        )
    except OSError as exc:
        raise TargetPythonError(f"{target} could not be started: {exc}") from None
    timing.mark("probes done")
    status: dict[str, object] = {"target": target, "quick": quick.status(), "deep": None}
    if deep_run is not None:
        status["deep"] = deep_run.status()
    if quick.data is None:
        raise TargetPythonError(f"the probe failed in {target}: {quick.error}")
    multi = None
    if deep:
        from core.env.multigpu import section_from_probes

        multi = section_from_probes(cast("QuickJSON", quick.data), deep_result(deep_run))
    data = cast("QuickJSON", quick.data)
    return assemble(data, deep_result(deep_run), status, deep=deep, multi_gpu=multi)


def assemble(
    quick: QuickJSON,
    deep_data: DeepJSON | None,
    status: dict[str, object],
    deep: bool,
    multi_gpu: MultiGpu | None = None,
) -> Environment:
    """The Environment with findings from the probes' JSON (live or recorded)."""
    from core.env.build import build
    from core.env.checks import evaluate

    env = build(quick, deep_data, status)
    env.mode = "deep" if deep else "quick"
    env.multi_gpu = multi_gpu
    timing.mark("built")
    env.findings = evaluate(env)
    env.app = app_info()
    timing.mark("checked")
    return env


def _prepare() -> None:
    """What `assemble` needs, loaded while the probe children run (the quick child alone takes
    longer than these imports): the model builder, every check and the app's paths. Not the KB:
    only torch's errors are looked up there, and loading it (SQLite, sqlite-utils) for nothing
    costs its import and as long again when the interpreter exits."""
    import core.env.allocconf  # the PYTORCH_CUDA_ALLOC_CONF check's parser (difflib)
    import core.env.build
    import core.env.checks
    import core.paths  # noqa: F401

    timing.mark("prepared")


def _prepare_deep() -> None:
    """`_prepare`, plus the multi-GPU section and the models library it converts through
    (msgspec: 30-50 ms that otherwise come after the deep child's answer), while the deep
    child imports torch."""
    _prepare()
    import core.env.multigpu
    import core.models  # noqa: F401
