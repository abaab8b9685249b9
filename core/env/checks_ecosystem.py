"""Checks on what users bring beside torch: CUDA extensions, Triton's toolchain, the container.

From the quick probe's `ecosystem` section (core/env/probe/ecosystem.py): each GPU-ecosystem
package's compiled architectures and the CUDA runtime it links, against this GPU and this torch;
what Triton needs to compile a kernel (libcuda, cuda.h, Python.h, a C compiler, ptxas); a
container without its GPU. Every finding names the exact fix command and the wave-3 KB entry.
"""

from __future__ import annotations

import os
import re

from core.env.model import Environment, Finding
from core.env.probe.shapes import ExtPackage

# The CUDA release whose ptxas first knows each architecture (CUDA toolkit release notes).
PTXAS_FIRST = {
    (8, 9): (11, 8),
    (9, 0): (11, 8),
    (10, 0): (12, 8),
    (10, 3): (12, 9),
    (12, 0): (12, 8),
}
# Where a driver's libcuda.so.1 lives when ldconfig does not list it (WSL, containers, NixOS).
LIBCUDA_PLACES = (
    "/usr/lib/wsl/lib",
    "/usr/local/nvidia/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/run/opengl-driver/lib",
)
_NO_KERNEL_CHECK = {"deepspeed", "triton", "pytorch-triton", "bitsandbytes"}  # JIT or own loader


def _sm(capability: str) -> int | None:
    match = re.match(r"^(\d+)\.(\d+)$", capability or "")
    return int(match.group(1)) * 10 + int(match.group(2)) if match else None


def runs_on(sass: list[int], ptx: list[int], sm: int) -> str:
    """ "native", "ptx" (JIT-compiled at first use) or "none" for a GPU of SM version `sm`.

    A cubin runs on GPUs of the same major version and an equal or higher minor one; PTX is
    compiled by the driver for any GPU at least as new as it (CUDA C Programming Guide,
    "Binary Compatibility" and "PTX Compatibility")."""
    if any(s // 10 == sm // 10 and s % 10 <= sm % 10 for s in sass):
        return "native"
    if any(p <= sm for p in ptx):
        return "ptx"
    return "none"


def _capabilities(env: Environment) -> list[str]:
    caps = [d.compute_capability for d in env.torch.devices if d.compute_capability]
    caps += [g.compute_capability for g in env.gpus if g.compute_capability]
    return [c for c in dict.fromkeys(caps) if c]


def _arch_names(values: list[int], prefix: str) -> str:
    return ", ".join(f"{prefix}_{v}" for v in values) or "none"


def _package_arch(env: Environment, pkg: ExtPackage, cap: str) -> Finding | None:
    sm = _sm(cap)
    libs = [lib for lib in pkg.get("libraries") or [] if lib.get("fatbin")]
    if sm is None or not libs:
        return None
    verdicts = [runs_on(lib.get("sass") or [], lib.get("ptx") or [], sm) for lib in libs]
    if "none" not in verdicts:
        return None
    name, version = pkg.get("name"), pkg.get("version")
    sass = sorted({s for lib in libs for s in lib.get("sass") or []})
    ptx = sorted({p for lib in libs for p in lib.get("ptx") or []})
    gpu = next((g.name for g in env.gpus if g.compute_capability == cap), None) or "this GPU"
    flash = str(name).startswith("flash-attn") and sm < 80
    if flash:
        return Finding(
            "ext.flash-attn-unsupported-gpu",
            "error",
            f"{name} {version} has kernels for {_arch_names(sass, 'sm')} only; {gpu} is "
            f"sm_{sm}: FlashAttention 2 runs on Ampere (sm_80) and newer, so every call fails "
            "('FlashAttention only supports Ampere GPUs or newer').",
            "Uninstall it and let the model use PyTorch's scaled_dot_product_attention "
            "(attn_implementation='sdpa' in transformers), or use a GPU of sm_80 or newer.",
            command=f"pip uninstall -y {name}",
            kb="ext/flash-attn-unsupported-gpu",
        )
    partial = verdicts.count("none") < len(verdicts)
    return Finding(
        "ext.no-kernel-for-gpu",
        "warning" if partial else "error",
        f"{name} {version} was compiled for {_arch_names(sass, 'sm')} (PTX: "
        f"{_arch_names(ptx, 'compute')}), not for {gpu} (sm_{sm}): "
        + (
            "some of its libraries have no kernel for it"
            if partial
            else "its kernels fail with 'no kernel image is available for execution on the "
            "device' or 'invalid device function'"
        )
        + ".",
        f"Rebuild it for this GPU (TORCH_CUDA_ARCH_LIST={cap}) or install a build that lists "
        f"sm_{sm}.",
        command=f'TORCH_CUDA_ARCH_LIST="{cap}" pip install --no-build-isolation '
        f"--force-reinstall --no-binary {name} {name}=={version}",
        kb="cuda/invalid-device-function",
    )


def _runtime_major(pkg: ExtPackage) -> int | None:
    for lib in pkg.get("libraries") or []:
        for need in lib.get("needs") or []:
            match = re.match(r"^libcudart\.so\.(\d+)", need)
            if match:
                return int(match.group(1))
    return None


def _package_build(env: Environment, pkg: ExtPackage) -> list[Finding]:
    """The CUDA runtime it links, torch's version it pins, CUDA kernels it should have."""
    out: list[Finding] = []
    name, version = str(pkg.get("name")), pkg.get("version")
    torch_major = int(env.torch.cuda.split(".")[0]) if env.torch.cuda else None
    major = _runtime_major(pkg)
    if major is not None and torch_major is not None and major != torch_major:
        out.append(
            Finding(
                "ext.cuda-runtime-mismatch",
                "error",
                f"{name} {version} links the CUDA {major} runtime (libcudart.so.{major}) while "
                f"torch {env.torch.version} is a CUDA {env.torch.cuda} build: it fails to load "
                f"(libcudart.so.{major} not found) or runs two CUDA runtimes in one process.",
                f"Install the {name} build made for CUDA {torch_major} and this torch.",
                command=f"pip install --force-reinstall --no-deps {name}=={version}",
            )
        )
    pin = pkg.get("requires_torch")
    have = (env.torch.version or "").split("+")[0]
    if pin and have and pin.lstrip("=").split("+")[0] != have:
        out.append(
            Finding(
                "ext.torch-pin-mismatch",
                "error",
                f"{name} {version} was built for torch{pin} (its wheel says so), but torch "
                f"{env.torch.version} is installed: its C++ extension does not load ('undefined "
                "symbol') or falls back to slow paths.",
                f"Install the {name} release made for this torch (pip picks it when torch is "
                "pinned too).",
                command=f'pip install "{name}" "torch=={env.torch.version}"',
            )
        )
    libs = pkg.get("libraries") or []
    kernels = any(lib.get("fatbin") or major is not None for lib in libs)
    if libs and not kernels and name not in _NO_KERNEL_CHECK and env.torch.cuda:
        out.append(
            Finding(
                "ext.extension-without-cuda-kernels",
                "error",
                f"{name} {version}'s compiled libraries hold no CUDA kernels and do not link the "
                "CUDA runtime: it was built without CUDA, and its GPU operations fail ('Not "
                "compiled with GPU support', 'Could not run ... with arguments from the 'CUDA' "
                "backend').",
                f"Reinstall {name} built with CUDA (with nvcc and CUDA_HOME set when it builds "
                "from source).",
                command=f"pip install --force-reinstall --no-cache-dir --no-deps {name}=={version}",
                kb="ext/extension-without-cuda-kernels",
            )
        )
    return out


def _companion_build(env: Environment, pkg: ExtPackage) -> Finding | None:
    """torchvision/torchaudio of another build than torch (+cpu beside +cu130)."""
    name, version = str(pkg.get("name")), str(pkg.get("version") or "")
    if name not in ("torchvision", "torchaudio") or "+" not in (env.torch.version or ""):
        return None
    want = (env.torch.version or "").split("+", 1)[1]
    have = version.split("+", 1)[1] if "+" in version else ""
    if have == want or not have:
        return None
    from core.env.compatdata import CompatDataError, load

    try:
        index = load().index(want)
    except (CompatDataError, KeyError, ValueError):
        index = ""
    url = f" --index-url {index}" if index else ""
    return Finding(
        "ext.extension-without-cuda-kernels",
        "error",
        f"{name} {version} is the '{have}' build but torch {env.torch.version} is '{want}': "
        f"{name}'s GPU operators fail ('Could not run '{name}::...' with arguments from the "
        "'CUDA' backend').",
        f"Install the {name} build that matches torch's ({want}).",
        command=f"pip install --force-reinstall --no-deps {name}=={version.split('+', 1)[0]}{url}",
        kb="ext/extension-without-cuda-kernels",
    )


def _bitsandbytes(env: Environment, pkg: ExtPackage) -> Finding | None:
    if pkg.get("name") != "bitsandbytes" or not env.torch.cuda:
        return None
    names = [os.path.basename(str(lib.get("path"))) for lib in pkg.get("libraries") or []]
    wanted = env.env_vars.get("BNB_CUDA_VERSION") or env.torch.cuda.replace(".", "")
    have = sorted({m.group(1) for n in names if (m := re.match(r"libbitsandbytes_cuda(\d+)", n))})
    if not have or wanted in have:
        return None
    return Finding(
        "ext.bitsandbytes-no-cuda-library",
        "error",
        f"bitsandbytes {pkg.get('version')} ships CUDA libraries for {', '.join(have)} but torch "
        f"needs {wanted}: its CUDA setup fails and it falls back to the CPU or refuses to load.",
        "Install a bitsandbytes release that ships a library for this CUDA version.",
        command="pip install --upgrade bitsandbytes",
        kb="ext/bitsandbytes-cuda-setup",
    )


def check_packages_gpu(env: Environment) -> list[Finding]:
    """Every GPU-ecosystem package against this GPU's architecture and this torch."""
    out: list[Finding] = []
    caps = _capabilities(env)
    for pkg in (env.ecosystem or {}).get("packages") or []:
        for cap in caps:
            found = _package_arch(env, pkg, cap)
            if found:
                out.append(found)
                break
        out += _package_build(env, pkg)
        for extra in (_companion_build(env, pkg), _bitsandbytes(env, pkg)):
            if extra:
                out.append(extra)
    return out
