"""Checks: Environment -> findings about the driver, torch, CUDA versions and architectures."""

from __future__ import annotations

import re
from collections.abc import Callable

from core.env.checks_ecosystem import check_packages_gpu
from core.env.checks_files import check_damaged, check_loader
from core.env.checks_libs import check_cudnn, check_env_vars, check_gpus, check_packages
from core.env.checks_multi import check_multi_gpu
from core.env.checks_stack import (
    check_alloc_conf,
    check_cudnn_parts,
    check_cudnn_runtime,
    check_variables,
    kb_for,
)
from core.env.checks_toolchain import check_container, check_triton
from core.env.compat import arch_support, cuda_compat, version_tuple
from core.env.model import Environment, Finding
from core.env.remedy import best_install, cublas_remedy, cudnn_remedy
from core.env.rootcause import order
from core.env.settings import check_settings

Check = Callable[[Environment], list[Finding]]


def check_driver(env: Environment) -> list[Finding]:
    """No driver, driver not loaded, library/kernel mismatch, no GPU."""
    drv, cuda_build = env.driver, bool(env.torch.cuda)
    if drv.error == "LibraryNotFound":
        if drv.kernel_module:
            return [
                Finding(
                    "driver.library-missing",
                    "error",
                    f"The NVIDIA kernel module {drv.kernel_module} is loaded but its user "
                    "library libnvidia-ml.so.1 is not found, so CUDA cannot start.",
                    "Install the driver's user-space libraries of the same version; in a "
                    "container, start it with the NVIDIA runtime (--gpus all).",
                )
            ]
        return [
            Finding(
                "driver.not-found",
                "error" if cuda_build else "info",
                "No NVIDIA driver is installed (libnvidia-ml.so.1 not found), so no GPU "
                "can be used.",
                "Install the NVIDIA driver, or start the container with --gpus all; on a "
                "machine without an NVIDIA GPU this is expected.",
            )
        ]
    known = {
        "DriverNotLoaded": (
            "driver.not-loaded",
            "The NVIDIA driver library is installed but the kernel module is not loaded.",
            "Reboot, or load it with `sudo modprobe nvidia` and read `dmesg` "
            "for the reason it failed.",
        ),
        "LibRmVersionMismatch": (
            "driver.version-mismatch",
            "The driver library and the loaded "
            "kernel module have different versions (usually a driver update "
            "without a reboot).",
            "Reboot the machine.",
        ),
        "NoPermission": (
            "driver.no-permission",
            "This user may not open the NVIDIA devices.",
            "Add the user to the group that owns /dev/nvidia* or ask the admin.",
        ),
    }
    if drv.error in known:
        fid, message, action = known[drv.error]
        return [Finding(fid, "error", message, action)]
    if drv.error:
        return [
            Finding(
                "driver.nvml-error",
                "warning",
                f"NVML failed with {drv.error}: {drv.error_message or 'no detail'}.",
                "Run `nvidia-smi`; if it fails the same way, fix the driver first.",
            )
        ]
    if not env.gpus:
        return [
            Finding(
                "gpu.none",
                "warning",
                "The NVIDIA driver is loaded but reports no GPU.",
                "Check `nvidia-smi` and the card's power and PCIe seating; in a "
                "container, pass the GPUs through.",
            )
        ]
    return []


def check_torch(env: Environment) -> list[Finding]:
    """torch missing, broken, CPU-only on a GPU machine, CUDA unavailable, tiny ops failing."""
    torch, python = env.torch, env.python.get("executable", "the target interpreter")
    if torch.import_error:
        said = next((e.text for e in torch.errors if e.stage == "import torch"), "")
        said = said or torch.import_error
        return [
            Finding(
                "torch.import-error",
                "error",
                f"`import torch` fails: {torch.import_error}",
                "Run `python -c 'import torch'` in this environment for the full "
                "traceback, then reinstall torch (and its nvidia-* wheels) there.",
                command=f"{python} -c 'import torch'",
                evidence=said,
                kb=kb_for(said),
            )
        ]
    if not torch.installed:
        return [
            Finding(
                "torch.missing",
                "warning",
                f"PyTorch is not installed in {python}.",
                "Install PyTorch there, or point --python at the environment that has it.",
            )
        ]
    out: list[Finding] = []
    if not torch.cuda and not torch.hip and env.gpus:
        command, why = best_install(env)
        out.append(
            Finding(
                "torch.cpu-only",
                "error",
                f"torch {torch.version} is a CPU-only build but this machine has "
                f"{len(env.gpus)} NVIDIA GPU(s).",
                "Install a CUDA build of PyTorch: " + why + ".",
                command=command,
            )
        )
    hidden = env.env_vars.get("CUDA_VISIBLE_DEVICES") is not None
    if torch.cuda and env.gpus and torch.is_available is False and not hidden:
        why = "; ".join(w for w in torch.warnings if "CUDA" in w)[:300]
        out.append(
            Finding(
                "torch.cuda-unavailable",
                "error",
                "torch.cuda.is_available() is False although NVML sees "
                f"{len(env.gpus)} GPU(s)" + (f": {why}" if why else "."),
                "Compare the driver's max CUDA with torch's CUDA build (below) and "
                "read the warning torch printed.",
                evidence=why,
                kb=kb_for(why) if why else "",
            )
        )
    failed = [c for c in ([torch.first_op] if torch.first_op else []) + torch.checks if not c.ok]
    if failed:
        text = "; ".join(f"{c.op} on {c.device}: {c.error}" for c in failed[:4])
        stages = {f"{c.op} on {c.device}" for c in failed} | {"first conv on cuda:0"}
        said = next((e.text for e in torch.errors if e.stage in stages), "")
        command = ""
        if re.search(r"(?i)cublas", said):
            command = cublas_remedy(env)
        elif re.search(r"(?i)cudnn", said):
            command = cudnn_remedy(env, env.cudnn.loaded_from)[0]
        out.append(
            Finding(
                "torch.op-failed",
                "error",
                f"Tiny GPU operations failed: {text}.",
                "Paste the error into `cuda-clinic match` to find the known cause."
                + (
                    " A library mismatch is fixed by reinstalling the wheel torch pins."
                    if command
                    else ""
                ),
                command=command,
                evidence=said,
                kb=kb_for(said) if said else "",
            )
        )
    return out


def check_cuda_versions(env: Environment) -> list[Finding]:
    """The driver's max CUDA against torch's CUDA build, minor-version compatibility included."""
    torch_cuda, drv = env.torch.cuda, env.driver
    if not torch_cuda or not drv.cuda_max:
        return []
    verdict = cuda_compat(torch_cuda, drv.cuda_max, drv.version)
    if verdict == "driver-too-old":
        command, why = best_install(env)
        return [
            Finding(
                "cuda.driver-too-old",
                "error",
                f"torch is built for CUDA {torch_cuda} but driver {drv.version} supports at "
                f"most CUDA {drv.cuda_max}.",
                f"Install a torch build this driver runs ({why}), or update the NVIDIA "
                f"driver to {_min_driver(torch_cuda)} or newer.",
                command=command,
            )
        ]
    if verdict == "minor":
        ptx_only = any(_support(env, cc) == "ptx" for cc in _capabilities(env))
        return [
            Finding(
                "cuda.minor-version-compat",
                "warning" if ptx_only else "info",
                f"torch's CUDA {torch_cuda} is newer than the driver's CUDA {drv.cuda_max} "
                "within the same major: it runs through minor-version compatibility, but "
                "anything that JIT-compiles PTX (PTX-only architectures, NVRTC kernels) "
                "can fail with an unsupported-PTX error.",
                f"Update the driver to one that supports CUDA {torch_cuda} to remove the caveat.",
            )
        ]
    return []


def _capabilities(env: Environment) -> list[str]:
    devices = [d.compute_capability for d in env.torch.devices if d.compute_capability]
    return devices or [g.compute_capability for g in env.gpus if g.compute_capability]


def _min_driver(cuda: str) -> str:
    """The minimum Linux driver for CUDA `cuda` from the reviewed table."""
    from core.env.compatdata import CompatDataError, load

    try:
        release = load().cuda_release(cuda)
    except CompatDataError:
        release = None
    return release.min_driver if release else f"one that supports CUDA {cuda}"


def _support(env: Environment, capability: str) -> str | None:
    """SASS/PTX/none; None (unknown) when there is no list or torch could not read it.

    torch.cuda.get_arch_list() returns [] when CUDA is unavailable (hidden GPUs, a driver
    problem), so an empty list then says nothing about the build.
    """
    if env.torch.arch_list is None or not env.torch.cuda:
        return None
    if not env.torch.arch_list and env.torch.is_available is not True:
        return None
    return arch_support(capability, env.torch.arch_list)


def check_arch(env: Environment) -> list[Finding]:
    """Each GPU's compute capability against torch's compiled arch list (deep mode)."""
    out: list[Finding] = []
    arch = env.torch.arch_list or []
    names = {g.compute_capability: g.name for g in env.gpus}
    names.update({d.compute_capability: d.name for d in env.torch.devices})
    for cc in dict.fromkeys(_capabilities(env)):
        support = _support(env, cc)
        sm = "sm_" + cc.replace(".", "")
        label = f"{names.get(cc) or 'GPU'} ({sm})"
        if support == "none":
            command, why = best_install(env)
            out.append(
                Finding(
                    "cuda.arch-unsupported",
                    "error",
                    f"{label} is not in this torch build's arch list "
                    f"({' '.join(arch) or 'empty'}): kernels fail with 'no kernel "
                    "image is available'.",
                    f"Install a torch build whose torch.cuda.get_arch_list() includes {sm}: {why}.",
                    command=command,
                )
            )
        elif support == "ptx":
            out.append(
                Finding(
                    "cuda.arch-ptx-jit",
                    "warning",
                    f"{label} has no native kernels in this torch build; they are "
                    "JIT-compiled from PTX on first use (slow start, and fails when "
                    "the driver is older than the PTX).",
                    f"Install a torch build that lists {sm} natively.",
                )
            )
    return out


def check_toolkit(env: Environment) -> list[Finding]:
    """nvcc's CUDA against torch's: only matters for building extensions, so say so."""
    nvcc = (env.toolkits.get("nvcc") or {}).get("version")
    torch_cuda = env.torch.cuda
    if not nvcc or not torch_cuda or version_tuple(nvcc)[:2] == version_tuple(torch_cuda)[:2]:
        return []
    return [
        Finding(
            "cuda.toolkit-differs",
            "info",
            f"nvcc on PATH is CUDA {nvcc} while torch ships its own CUDA {torch_cuda} "
            "runtime; this matters only when compiling CUDA extensions.",
            f"When building extensions, point CUDA_HOME at a toolkit matching CUDA {torch_cuda}.",
        )
    ]


def check_probe(env: Environment) -> list[Finding]:
    """Probe failures: a deep child that died or timed out, a quick section that failed.

    A child killed by a signal is never left unexplained: the step, the signal and what it
    means, the most likely cause among what the quick probe saw, and how to confirm it."""
    out: list[Finding] = []
    deep = env.probe.get("deep") or {}
    if deep.get("error") and not env.torch.import_error:
        from core.env.crash import explain

        crash = explain(env, deep)
        stage = deep.get("last_stage")
        if crash is None:
            out.append(
                Finding(
                    "probe.deep-failed",
                    "error",
                    f"The deep probe {deep['error']}" + (f" during '{stage}'." if stage else "."),
                    "Run the same step by hand in this environment to see what it prints.",
                )
            )
        else:
            cause = (
                f" Most likely cause: {crash.cause}."
                if crash.cause
                else " Nothing the quick check saw explains it."
            )
            out.append(
                Finding(
                    "probe.deep-failed",
                    "error",
                    f"The deep probe was killed by {crash.signal} during '{crash.step}' "
                    f"({crash.signal}: {crash.meaning}).{cause}",
                    f"Confirm it by running the step alone: {crash.confirm}",
                    evidence=crash.faulthandler,
                    caused_by=crash.root,
                )
            )
    for section, error in (env.probe.get("quick_errors") or {}).items():
        out.append(
            Finding(
                "probe.section-failed",
                "warning",
                f"The {section} section could not be read: {error}.",
                "The rest of the report is still valid; please report this.",
            )
        )
    return out


def all_checks() -> list[Check]:
    """Every check, in display order of their topics."""
    return [
        check_probe,
        check_damaged,
        check_loader,
        check_driver,
        check_torch,
        check_cuda_versions,
        check_arch,
        check_cudnn_parts,
        check_cudnn_runtime,
        check_cudnn,
        check_alloc_conf,
        check_settings,
        check_env_vars,
        check_variables,
        check_gpus,
        check_toolkit,
        check_packages,
        check_packages_gpu,
        check_triton,
        check_container,
        check_multi_gpu,
    ]


def evaluate(env: Environment) -> list[Finding]:
    """All findings, root causes first, their cascades suppressed or demoted (core.env.rootcause).

    The suppressed ones are kept on `env.suppressed`, each naming its root cause.
    """
    findings = [f for check in all_checks() for f in check(env)]
    kept, suppressed = order(findings)
    env.suppressed = suppressed
    return kept
