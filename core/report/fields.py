"""Summary rows and the fields upstream bug templates ask for, read from the env JSON."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.env.fields import first, lookup

Env = Mapping[str, Any] | None

# (template, field as the template words it, env JSON paths tried in order). The list is the
# union of PyTorch's collect_env, `transformers env` and NVIDIA's `python -m cudnn.collect_env`;
# docs/report.md explains each mapping. A field the environment did not collect stays None,
# shown as "not collected", never guessed.
TEMPLATE_FIELDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("pytorch", "PyTorch version", ("torch.version",)),
    ("pytorch", "Is debug build", ("torch.debug",)),
    ("pytorch", "CUDA used to build PyTorch", ("torch.cuda",)),
    ("pytorch", "ROCM used to build PyTorch", ("torch.hip",)),
    ("pytorch", "OS", ("platform.distribution", "platform.system")),
    ("pytorch", "GCC version", ("toolchain.gcc",)),
    ("pytorch", "Clang version", ("toolchain.clang",)),
    ("pytorch", "CMake version", ("toolchain.cmake",)),
    ("pytorch", "Libc version", ("platform.libc",)),
    ("pytorch", "Python version", ("python.version",)),
    ("pytorch", "Python platform", ("platform.machine",)),
    ("pytorch", "Is CUDA available", ("torch.is_available",)),
    (
        "pytorch",
        "CUDA runtime version (nvcc)",
        ("toolkits.nvcc.version", "toolkits.toolkits.0.version"),
    ),
    ("pytorch", "CUDA_MODULE_LOADING set to", ("env_vars.CUDA_MODULE_LOADING",)),
    ("pytorch", "GPU models and configuration", ("gpus",)),
    ("pytorch", "Nvidia driver version", ("driver.version",)),
    ("pytorch", "cuDNN version", ("torch.cudnn_version", "cudnn.version")),
    ("pytorch", "Is XNNPACK available", ("torch.xnnpack",)),
    ("pytorch", "CPU", ("platform.cpu_model",)),
    ("pytorch", "Versions of relevant libraries", ("packages.pip", "packages.conda")),
    ("transformers", "transformers version", ("packages.pip[transformers].version",)),
    ("transformers", "Huggingface_hub version", ("packages.pip[huggingface-hub].version",)),
    ("transformers", "Safetensors version", ("packages.pip[safetensors].version",)),
    ("transformers", "Accelerate version", ("packages.pip[accelerate].version",)),
    ("transformers", "DeepSpeed version", ("packages.pip[deepspeed].version",)),
    ("transformers", "Flax version", ("packages.pip[flax].version",)),
    ("transformers", "Jax version", ("packages.pip[jax].version",)),
    ("transformers", "Tensorflow version", ("packages.pip[tensorflow].version",)),
    ("transformers", "Platform", ("platform",)),
    ("transformers", "PyTorch version (accelerator?)", ("torch.version",)),
    ("transformers", "GPU type", ("gpus.0.name",)),
    ("transformers", "Using GPU in script? (devices torch sees)", ("torch.device_count",)),
    ("cudnn-collect-env", "driver max CUDA (NVML)", ("driver.cuda_max",)),
    ("cudnn-collect-env", "torch.backends.cudnn.version()", ("torch.cudnn_version",)),
    ("cudnn-collect-env", "libcudnn LOADED from", ("cudnn.loaded_from", "cudnn.expected_from")),
    ("cudnn-collect-env", "libcudnn copies on disk", ("cudnn.copies",)),
    (
        "cudnn-collect-env",
        "loaded CUDA libraries (cublas, cudart, nvrtc, libcuda)",
        ("loaded_libraries",),
    ),
    ("cudnn-collect-env", "compute capability vs torch arch list", ("torch.arch_list",)),
    (
        "cudnn-collect-env",
        "declared nvidia-cudnn pin vs installed",
        ("torch.declared_cudnn", "cudnn.declared"),
    ),
    ("cudnn-collect-env", "environment variables (CUDA*, CUDNN*, TORCH*, NCCL*)", ("env_vars",)),
)


def upstream_fields(env: Env) -> list[dict[str, object]]:
    """Every field the upstream templates ask for, with our value and where it came from."""
    out = []
    for template, name, paths in TEMPLATE_FIELDS:
        value, source = first(env, paths)
        if value is None:
            value, source = _collected_absence(env, name, paths)
        out.append(
            {
                "template": template,
                "field": name,
                "value": _short(value, name),
                "source": f"environment.{source}" if source else None,
            }
        )
    return out


def _collected_absence(env: Env, name: str, paths: Sequence[str]) -> tuple[Any, str | None]:
    """What an empty answer means where the probe did look: no GPU, not installed, not on PATH.

    (None, None) where the environment never looked (an older probe, a deep-only field in
    quick mode): that stays "not collected".
    """
    if env is None:
        return None, None
    path = paths[0]
    pip = re.fullmatch(r"packages\.pip\[([\w.-]+)\]\.version", path)
    if pip and isinstance(lookup(env, "packages.pip"), list):
        return "not installed", "packages.pip"
    tool = re.fullmatch(r"toolchain\.(\w+)", path)
    toolchain = env.get("toolchain")
    if tool and isinstance(toolchain, Mapping) and tool.group(1) in toolchain:
        return "not found on PATH", path
    rule = _ABSENT_RULES.get(name)
    value = rule(env) if rule else None
    return (value, path) if value is not None else (None, None)


def _no_torch(env: Env) -> bool:
    """The quick probe's torch section ran and found no torch package."""
    ran = "torch" not in (lookup(env, "probe.quick_errors") or {})
    return ran and lookup(env, "torch.installed") is False


def _built(env: Env) -> bool:
    return bool(lookup(env, "torch.installed") and lookup(env, "torch.version"))


def _imported(env: Env) -> bool:
    return lookup(env, "torch.imported") is True


def _no_driver(env: Env) -> str | None:
    error = lookup(env, "driver.error")
    return f"no driver ({error})" if error else None


def _no_gpu(env: Env) -> str | None:
    return "no NVIDIA GPU found" if lookup(env, "gpus") == [] else None


def _no_cudnn(env: Env) -> str | None:
    return "none found" if lookup(env, "cudnn.copies") == [] else None


def _unless(test: Callable[[Env], bool], text: str) -> Callable[[Env], str | None]:
    return lambda env: text if test(env) else None


# Fields whose absence the probe established (it looked and found nothing), in words.
_ABSENT_RULES: dict[str, Callable[[Env], str | None]] = {
    "PyTorch version": _unless(_no_torch, "not installed"),
    "PyTorch version (accelerator?)": _unless(_no_torch, "not installed"),
    "Versions of relevant libraries": _unless(
        lambda e: lookup(e, "packages.pip") == [], "none of the listed packages installed"
    ),
    "CUDA used to build PyTorch": _unless(_built, "none (not a CUDA build)"),
    "ROCM used to build PyTorch": _unless(_built, "none"),
    "CUDA_MODULE_LOADING set to": _unless(lambda e: lookup(e, "env_vars") is not None, "not set"),
    "environment variables (CUDA*, CUDNN*, TORCH*, NCCL*)": _unless(
        lambda e: lookup(e, "env_vars") == {}, "none set"
    ),
    "CUDA runtime version (nvcc)": _unless(
        lambda e: lookup(e, "toolkits.toolkits") == [] and lookup(e, "toolkits.nvcc") is None,
        "no CUDA toolkit found",
    ),
    "Nvidia driver version": _no_driver,
    "driver max CUDA (NVML)": _no_driver,
    "GPU models and configuration": _no_gpu,
    "GPU type": _no_gpu,
    "cuDNN version": _no_cudnn,
    "libcudnn copies on disk": _no_cudnn,
    "libcudnn LOADED from": _unless(_imported, "not loaded by torch"),
    "loaded CUDA libraries (cublas, cudart, nvrtc, libcuda)": _unless(_imported, "none loaded"),
    "torch.backends.cudnn.version()": _unless(_imported, "None (cuDNN not available to torch)"),
    "compute capability vs torch arch list": _unless(
        lambda e: _imported(e) and lookup(e, "torch.arch_list") == [],
        "empty arch list (no CUDA kernels in this build)",
    ),
    "declared nvidia-cudnn pin vs installed": _unless(_built, "torch pins no nvidia-cudnn wheel"),
}


def _short(value: Any, name: str) -> Any:
    """Collapse structured values into one readable line where a template expects one line."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if name == "GPU models and configuration":
        return "; ".join(_gpu_line(g) for g in value if isinstance(g, Mapping)) or None
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items() if not isinstance(v, dict | list))
    if isinstance(value, list):
        return ", ".join(_item(v) for v in value)
    return str(value)


def _item(value: Any) -> str:
    if not isinstance(value, Mapping):
        return str(value)
    if value.get("name") and value.get("version"):
        return f"{value['name']}=={value['version']}"
    for key in ("path", "directory", "name"):
        if value.get(key):
            return str(value[key])
    return str(value)


def _gpu_line(gpu: Mapping[str, Any]) -> str:
    cc = gpu.get("compute_capability")
    cc_text = f"sm_{str(cc).replace('.', '')}" if cc else "sm_?"
    mem = gpu.get("memory_total_mb")
    mem_text = f", {round(float(mem) / 1024)} GiB" if isinstance(mem, int | float) else ""
    return f"GPU {gpu.get('index', '?')}: {gpu.get('name', '?')} ({cc_text}{mem_text})"


def summary_rows(env: Env) -> list[tuple[str, str]]:
    """The at-a-glance rows: torch, CUDA (all three), cuDNN loaded, driver, GPUs, Python, OS."""
    if env is None:
        return []
    torch_v, _ = first(env, ("torch.version",))
    torch_err, _ = first(env, ("torch.import_error",))
    cuda_build, _ = first(env, ("torch.cuda",))
    cuda_max, _ = first(env, ("driver.cuda_max",))
    toolkit, _ = first(env, ("toolkits.nvcc.version", "toolkits.toolkits.0.version"))
    cudnn_v, _ = first(env, ("cudnn.version", "torch.cudnn_version"))
    loaded, _ = first(env, ("cudnn.loaded_from",))
    copies = lookup(env, "cudnn.copies")
    gpus = lookup(env, "gpus") or []
    py, _ = first(env, ("python.version",))
    os_name, _ = first(env, ("platform.distribution", "platform.system"))
    torch_text = str(torch_v or "")
    if torch_err:
        reason = str(torch_err).strip().splitlines()[-1][:160] if str(torch_err).strip() else ""
        torch_text = f"{torch_text} (not importable: {reason})".strip()
    cudnn_text = str(cudnn_v or "")
    if cudnn_v and loaded:
        cudnn_text += f" (loaded from {loaded})"
    if isinstance(copies, list) and len(copies) > 1:
        cudnn_text += f"; {len(copies)} copies on disk"
    cuda_text = " / ".join(
        f"{name} {value}"
        for name, value in (
            ("driver max", cuda_max),
            ("torch build", cuda_build),
            ("toolkit", toolkit),
        )
        if value
    )
    rows = [
        ("PyTorch", torch_text),
        ("CUDA", cuda_text),
        ("cuDNN", cudnn_text),
        ("Driver", str(lookup(env, "driver.version") or "")),
        ("GPUs", "; ".join(_gpu_line(g) for g in gpus if isinstance(g, Mapping))),
        ("Python", _one_line(py)),
        ("OS", _one_line(os_name)),
    ]
    return [(label, value or "not found") for label, value in rows]


def _one_line(value: Any) -> str:
    if isinstance(value, Mapping):
        return " ".join(str(v) for v in value.values() if isinstance(v, str | int | float))
    return "" if value is None else str(value)
