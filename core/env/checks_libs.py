"""Checks: cuDNN copies, environment variables, GPU order and memory, installed packages."""

from __future__ import annotations

import os

from core.env.compat import version_tuple, visible_device_count
from core.env.model import CudnnCopy, Environment, Finding, Gpu
from core.env.remedy import cudnn_remedy

# Below this share of free memory a GPU is too busy to reproduce or benchmark anything.
LOW_FREE_FRACTION = 0.2


def _describe(copy: CudnnCopy) -> str:
    version = copy.version or "unknown version"
    return f"{version} in {copy.directory} ({', '.join(copy.sources)})"


def check_cudnn(env: Environment) -> list[Finding]:
    """Loaded vs expected vs declared cuDNN, mixed sub-libraries, the other copies on disk."""
    cudnn, torch = env.cudnn, env.torch
    out: list[Finding] = []
    dirs = sorted({os.path.dirname(p) for p in cudnn.loaded_files})
    if len(dirs) > 1:
        versions = {c.version for c in cudnn.copies if c.directory in dirs}
        same = (
            len(versions) == 1
            and None not in versions
            and len(dirs) == len({c.directory for c in cudnn.copies if c.directory in dirs})
        )
        consequence = (
            f"each copy is {next(iter(versions))}, so it works today, but updating either "
            "copy alone breaks it with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH."
            if same
            else "mixing copies fails with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or worse."
        )
        out.append(
            Finding(
                "cudnn.mixed-sublibraries",
                "warning" if same else "error",
                f"cuDNN sub-libraries were loaded from {len(dirs)} folders "
                f"({', '.join(dirs)}): {consequence}",
                "Remove the other folder from LD_LIBRARY_PATH (or uninstall that "
                "copy) so every libcudnn_* comes from torch's own copy.",
                command=next(
                    (
                        cmd
                        for d in dirs
                        if d != cudnn.expected_from
                        for cmd in [cudnn_remedy(env, d)[0]]
                        if cmd
                    ),
                    "",
                ),
            )
        )
    if cudnn.loaded_from and cudnn.expected_from and cudnn.loaded_from != cudnn.expected_from:
        out.append(
            Finding(
                "cudnn.unexpected-copy",
                "warning",
                f"torch loaded cuDNN from {cudnn.loaded_from}, not from "
                f"{cudnn.expected_from} ({cudnn.expected_reason}).",
                "Look for LD_LIBRARY_PATH or LD_PRELOAD entries that shadow torch's "
                "copy and remove them.",
            )
        )
    out += _declared_mismatch(env)
    reference = next((c for c in cudnn.copies if c.loaded), None) or next(
        (c for c in cudnn.copies if c.expected), None
    )
    others = [c for c in cudnn.copies if c is not reference]
    if reference is not None and others:
        verb = "loads" if reference.loaded else "should load"
        confirm = "" if reference.loaded else " Run with --deep to confirm which copy is loaded."
        out.append(
            Finding(
                "cudnn.other-copies",
                "info",
                f"torch {verb} cuDNN {_describe(reference)}; also on disk and not "
                f"used by torch: {'; '.join(_describe(c) for c in others)}.{confirm}",
                "Nothing to do while they stay off torch's search path; remove "
                "unused copies if cuDNN errors mention sub-library mismatches.",
            )
        )
    for copy in cudnn.copies:
        if len(copy.file_versions) > 1:
            out.append(
                Finding(
                    "cudnn.mixed-on-disk",
                    "warning",
                    f"The cuDNN folder {copy.directory} holds files of several "
                    f"versions ({', '.join(copy.file_versions)}).",
                    "Reinstall that cuDNN so all its files come from one release.",
                )
            )
        if copy.version is None and copy.version_error:
            used = copy.loaded or copy.expected
            out.append(
                Finding(
                    "cudnn.unreadable",
                    "warning" if used else "info",
                    f"The cuDNN library {copy.library} could not report its version: "
                    f"{copy.version_error}.",
                    "Reinstall that copy or remove it if nothing uses it.",
                )
            )
    if torch.cuda and torch.installed and not cudnn.copies and env.mode == "quick":
        out.append(
            Finding(
                "cudnn.none-on-disk",
                "warning",
                f"torch is a CUDA {torch.cuda} build but no cuDNN library was found.",
                "Run with --deep: if torch links cuDNN statically this is harmless; "
                "otherwise install the nvidia-cudnn wheel torch declares.",
            )
        )
    return out


def _declared_mismatch(env: Environment) -> list[Finding]:
    """The cuDNN in use (or expected) against the version torch's wheel metadata pins."""
    cudnn = env.cudnn
    if not cudnn.declared or not cudnn.version:
        return []
    have, want = version_tuple(cudnn.version)[:3], version_tuple(cudnn.declared)[:3]
    if not have or not want or have == want:
        return []
    basis = "loaded" if cudnn.basis == "loaded" else "expected (from the copy torch should load)"
    from core.env.remedy import cudnn_remedy

    command, _ = cudnn_remedy(env, cudnn.loaded_from or cudnn.expected_from)
    return [
        Finding(
            "cudnn.version-mismatch",
            "error" if have[0] != want[0] else "warning",
            f"cuDNN {cudnn.version} is {basis} but torch declares {cudnn.declared}.",
            "Reinstall the nvidia-cudnn wheel torch pins (`pip install "
            "--force-reinstall` of the version torch requires) in this environment.",
            command=command,
        )
    ]


def check_env_vars(env: Environment) -> list[Finding]:
    """CUDA_VISIBLE_DEVICES hiding every GPU; CUDA_LAUNCH_BLOCKING left on."""
    out: list[Finding] = []
    cvd = env.env_vars.get("CUDA_VISIBLE_DEVICES")
    uuids = [g.uuid for g in env.gpus if g.uuid]
    visible = visible_device_count(cvd, len(env.gpus), uuids)
    if env.gpus and visible == 0:
        out.append(
            Finding(
                "env.cuda-visible-devices-hides-all",
                "error",
                f"CUDA_VISIBLE_DEVICES={cvd!r} hides all {len(env.gpus)} GPU(s) from CUDA.",
                "Unset CUDA_VISIBLE_DEVICES or list valid GPU indices (0 to "
                f"{len(env.gpus) - 1}) or UUIDs.",
                command="unset CUDA_VISIBLE_DEVICES",
            )
        )
    if env.env_vars.get("CUDA_LAUNCH_BLOCKING") == "1":
        out.append(
            Finding(
                "env.cuda-launch-blocking",
                "warning",
                "CUDA_LAUNCH_BLOCKING=1 is set: every kernel launch waits for the GPU, "
                "which slows everything down.",
                "Unset it once you have the exact line of a CUDA error.",
                command="unset CUDA_LAUNCH_BLOCKING",
            )
        )
    return out


def _nvml_index_for(env: Environment, device_index: int) -> int | None:
    dev = next((d for d in env.torch.devices if d.index == device_index), None)
    if dev is None:
        return None
    for gpu in env.gpus:
        if dev.uuid and gpu.uuid and dev.uuid.lower() == gpu.uuid.lower():
            return gpu.index
        if dev.pci_bus_id and gpu.pci_bus_id and dev.pci_bus_id.lower() == gpu.pci_bus_id.lower():
            return gpu.index
    return None


def check_gpus(env: Environment) -> list[Finding]:
    """CUDA vs NVML order, little free memory, restrictive compute modes, lost GPUs."""
    out: list[Finding] = []
    cvd = env.env_vars.get("CUDA_VISIBLE_DEVICES")
    listed = [int(p) for p in (cvd or "").split(",") if p.strip().isdigit()]
    swapped = []
    for dev in env.torch.devices:
        nvml = _nvml_index_for(env, dev.index)
        wanted = listed[dev.index] if cvd and dev.index < len(listed) else dev.index
        if nvml is not None and nvml != wanted and (not cvd or listed):
            swapped.append(f"cuda:{dev.index} is nvidia-smi GPU {nvml}")
    if swapped:
        out.append(
            Finding(
                "gpu.order-differs",
                "warning",
                f"CUDA numbers GPUs differently from nvidia-smi: {', '.join(swapped)}.",
                "Set CUDA_DEVICE_ORDER=PCI_BUS_ID so both use the same order.",
            )
        )
    own_pid = env.probe.get("deep_pid")
    for gpu in env.gpus:
        out += _memory_finding(gpu, own_pid)
        if gpu.compute_mode in ("Prohibited", "Exclusive_Process"):
            severity = "error" if gpu.compute_mode == "Prohibited" else "warning"
            out.append(
                Finding(
                    "gpu.compute-mode",
                    severity,
                    f"GPU {gpu.index} is in compute mode {gpu.compute_mode}: "
                    + (
                        "no process may use it."
                        if severity == "error"
                        else "only one process at a time may use it."
                    ),
                    f"Reset it with `sudo nvidia-smi -i {gpu.index} -c DEFAULT` if "
                    "that is not intended.",
                )
            )
        if "GpuIsLost" in gpu.errors.values():
            out.append(
                Finding(
                    "gpu.lost",
                    "error",
                    f"GPU {gpu.index} has fallen off the bus.",
                    "Check `dmesg` for Xid 79; a reboot or reseat is needed.",
                )
            )
    return out


def _memory_finding(gpu: Gpu, own_pid: object) -> list[Finding]:
    """Little free memory on one GPU, not counting the deep probe's own context."""
    index, name, total, free = gpu.index, gpu.name, gpu.memory_total_mb, gpu.memory_free_mb
    if not total or free is None:
        return []
    processes = gpu.processes or []
    others = [p for p in processes if p.get("pid") != own_pid]
    own = sum(int(p.get("used_mb") or 0) for p in processes if p.get("pid") == own_pid)
    free += own
    if free >= total * LOW_FREE_FRACTION:
        return []
    who = (
        f"{len(others)} other process(es) (pids {', '.join(str(p.get('pid')) for p in others[:5])})"
        if others
        else "other processes (not visible from here, e.g. in another container)"
    )
    return [
        Finding(
            "gpu.low-free-memory",
            "warning",
            f"GPU {index} ({name or 'GPU'}) has only {free:,} of {total:,} MiB free; "
            f"{who} hold the rest.",
            "Stop those processes (see nvidia-smi) or pick another GPU with CUDA_VISIBLE_DEVICES.",
        )
    ]


def check_packages(env: Environment) -> list[Finding]:
    """The deprecated pynvml shim; packages installed twice on sys.path."""
    out: list[Finding] = []
    pip = env.packages.get("pip") or []
    if any(p.get("name") == "pynvml" for p in pip):
        out.append(
            Finding(
                "packages.pynvml-deprecated",
                "info",
                "The deprecated `pynvml` package is installed; it makes every "
                "`import pynvml` (torch does one) print a FutureWarning.",
                "pip uninstall pynvml; nvidia-ml-py provides the same module.",
            )
        )
    used = {p.get("name"): p for p in pip}
    for dup in env.packages.get("shadowed") or []:
        first = used.get(dup.get("name")) or {}
        out.append(
            Finding(
                "packages.shadowed",
                "warning",
                f"{dup.get('name')} is installed twice: {first.get('version')} in "
                f"{first.get('location')} is used, {dup.get('version')} in "
                f"{dup.get('location')} is shadowed.",
                "Uninstall the copy you do not want, so upgrades go where imports look.",
            )
        )
    return out
