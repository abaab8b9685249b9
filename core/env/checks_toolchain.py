"""Checks on Triton's toolchain (torch.compile's GPU backend) and on a container's GPU.

Triton compiles a small C launcher the first time a kernel runs, so torch.compile fails there,
long after the import, when libcuda cannot be found, cuda.h or Python.h is missing, there is
no C compiler, or its ptxas does not know this GPU. The quick probe looks for each the way
Triton does (core/env/probe/ecosystem.py); these checks only speak when torch is a CUDA build.
"""

from __future__ import annotations

import os
import re
import shlex

from core.env.checks_ecosystem import LIBCUDA_PLACES, PTXAS_FIRST
from core.env.model import Environment, Finding
from core.env.probe.shapes import PipPackage, TritonInfo


def _libcuda_fix(env: Environment, triton: TritonInfo) -> str:
    """`export TRITON_LIBCUDA_PATH=DIR` for a folder holding libcuda.so.1, else ldconfig."""
    for place in LIBCUDA_PLACES:
        if os.path.exists(os.path.join(place, "libcuda.so.1")):
            return f"export TRITON_LIBCUDA_PATH={place}"
    del env, triton
    return "sudo ldconfig"


def _dev_package(env: Environment) -> str:
    """The command that installs Python's headers on this distribution."""
    version = ".".join(str(env.python.get("version") or "3").split(".")[:2])
    distro = str(env.platform.get("distribution") or "").lower()
    if re.search(r"fedora|red hat|rhel|centos|rocky|alma", distro):
        return f"sudo dnf install python{version}-devel"
    return f"sudo apt-get install python{version}-dev"


def check_triton(env: Environment) -> list[Finding]:
    """libcuda, cuda.h, Python.h, a C compiler and ptxas, as Triton looks for them."""
    triton = (env.ecosystem or {}).get("triton")
    if not triton or not env.torch.cuda:
        return []
    out: list[Finding] = []
    if not triton.get("libcuda_dirs"):
        searched = ", ".join(triton.get("libcuda_searched") or []) or "nowhere"
        why = (
            triton.get("ldconfig_error") or f"searched {searched} ({triton.get('libcuda_source')})"
        )
        out.append(
            Finding(
                "triton.cannot-find-libcuda",
                "error",
                f"Triton cannot find libcuda.so.1 ({why}): torch.compile and every Triton kernel "
                "fail at their first run with 'libcuda.so cannot found!'.",
                "Point Triton at the driver's library folder, or refresh the loader cache.",
                command=_libcuda_fix(env, triton),
                kb="triton/cannot-find-libcuda",
            )
        )
    elif triton.get("links_lcuda") and not triton.get("libcuda_so"):
        folder = triton["libcuda_dirs"][0]
        out.append(
            Finding(
                "triton.cannot-find-libcuda",
                "warning",
                f"{folder} has libcuda.so.1 but no libcuda.so: Triton links its launcher with "
                "-lcuda, which fails with 'cannot find -lcuda' where no libcuda.so exists.",
                "Create the symlink the linker looks for (the driver's files stay as they are).",
                command=f"sudo ln -s {shlex.quote(folder + '/libcuda.so.1')} "
                f"{shlex.quote(folder + '/libcuda.so')}",
                kb="triton/cannot-find-libcuda",
            )
        )
    if not triton.get("cuda_h"):
        out.append(
            Finding(
                "triton.missing-cuda-headers",
                "error",
                "Triton's bundled cuda.h is missing (looked in "
                + ", ".join(triton.get("cuda_h_searched") or [])
                + "): its launcher fails to compile with 'cuda.h: No such file or directory'.",
                "Reinstall triton (it ships the header)"
                + (
                    f"; or put {os.path.dirname(triton.get('toolkit_cuda_h') or '')} on CPATH."
                    if triton.get("toolkit_cuda_h")
                    else "."
                ),
                command=_reinstall_triton(env),
                kb="triton/missing-cuda-headers",
            )
        )
    if not triton.get("python_h"):
        out.append(
            Finding(
                "triton.missing-python-headers",
                "error",
                f"Python.h is missing from {triton.get('python_include')}: Triton's launcher fails "
                "to compile with 'Python.h: No such file or directory' (torch.compile too).",
                "Install this Python's development headers.",
                command=_dev_package(env),
                kb="triton/missing-cuda-headers",
            )
        )
    if not triton.get("cc"):
        out.append(
            Finding(
                "triton.no-c-compiler",
                "error",
                "No C compiler (CC, clang or gcc on PATH): Triton cannot build its launcher and "
                "fails with 'Failed to find C compiler'.",
                "Install gcc, or point CC at a compiler.",
                command="sudo apt-get install gcc",
            )
        )
    out += _ptxas(env, triton)
    return out


def _reinstall_triton(env: Environment) -> str:
    return f"pip install --force-reinstall --no-deps triton=={_version(env, 'triton')}"


def _version(env: Environment, name: str) -> str:
    pkg: PipPackage = next(
        (p for p in env.packages.get("pip") or [] if p.get("name") == name), PipPackage()
    )
    return str(pkg.get("version") or "")


def _ptxas(env: Environment, triton: TritonInfo) -> list[Finding]:
    """Triton's ptxas missing, or too old for this GPU's architecture."""
    if not triton.get("ptxas"):
        return [
            Finding(
                "triton.ptxas-error",
                "warning",
                "Triton's bundled ptxas is missing or not executable: compiling a kernel fails "
                "with a ptxas error.",
                "Reinstall triton, or point TRITON_PTXAS_PATH at a CUDA toolkit's ptxas.",
                command=_reinstall_triton(env),
                kb="triton/ptxas-error",
            )
        ]
    version = str(triton.get("ptxas_version") or "")
    match = re.match(r"^(\d+)\.(\d+)", version)
    if not match:
        return []
    have = (int(match.group(1)), int(match.group(2)))
    for gpu in env.gpus:
        cap = re.match(r"^(\d+)\.(\d+)$", gpu.compute_capability or "")
        need = PTXAS_FIRST.get((int(cap.group(1)), int(cap.group(2)))) if cap else None
        if need and have < need:
            return [
                Finding(
                    "triton.ptxas-error",
                    "error",
                    f"Triton's ptxas is CUDA {version}, which does not know {gpu.name} (sm_"
                    f"{gpu.compute_capability.replace('.', '') if gpu.compute_capability else '?'}"
                    f"; ptxas learnt it in CUDA {need[0]}.{need[1]}): kernels fail with 'ptxas "
                    "fatal: Value 'sm_...' is not defined for option 'gpu-name''.",
                    "Use a triton release that bundles a newer ptxas, or point "
                    "TRITON_PTXAS_PATH at a CUDA toolkit's ptxas that knows this GPU.",
                    command="pip install --upgrade triton",
                    kb="triton/ptxas-error",
                )
            ]
    return []


def check_container(env: Environment) -> list[Finding]:
    """A container started without the GPU: no /dev/nvidia* device nodes inside."""
    box = (env.ecosystem or {}).get("container") or {}
    if not box.get("in_container") or box.get("device_nodes"):
        return []
    visible = str(box.get("visible_devices") or "")
    told_none = visible.lower() in ("void", "none", "")
    expects_gpu = bool(env.torch.cuda) or bool(visible)
    if not expects_gpu:
        return []
    how = (
        f"NVIDIA_VISIBLE_DEVICES={visible!r} told the container runtime to pass no GPU"
        if visible and told_none
        else "the container was started without a GPU (no --gpus, or no NVIDIA runtime)"
    )
    return [
        Finding(
            "cuda.container-gpu-not-visible",
            "error",
            f"This is a container ({', '.join(box.get('hints') or [])}) with no NVIDIA device "
            f"nodes (/dev/nvidia* absent): {how}, so no CUDA program in it can see a GPU.",
            "Start the container with the GPU passed in (on the host): `docker run --gpus all "
            "...` with the NVIDIA Container Toolkit installed, or request nvidia.com/gpu in the "
            "Kubernetes pod's resources.",
            command="docker run --gpus all IMAGE",
            kb="cuda/container-gpu-not-visible",
        )
    ]
