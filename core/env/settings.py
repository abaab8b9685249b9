"""Values of the settings cuBLAS, cuDNN, NCCL, CUDA and torch's extension builder read at start.

Each rule says what the library accepts, what it does with anything else, and where that is
written (the `source` of each Rule). A malformed value rarely fails loudly: cuBLAS ignores a
CUBLAS_WORKSPACE_CONFIG it cannot parse, NCCL reads `NCCL_P2P_DISABLE=true` as 0 (its integer
settings go through strtoll, which stops at the first non-digit), and torch's deterministic mode
then refuses every cuBLAS call. PYTORCH_CUDA_ALLOC_CONF has its own reader (allocconf.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.env.model import Environment, Finding

# cuBLAS documentation, "Results reproducibility": ":16:8" or ":4096:8"; the variable is
# ":SIZE:COUNT" repeated (SIZE in KiB). torch accepts exactly these two for deterministic mode
# (aten/src/ATen/Context.cpp, cublas_deterministic_configs).
CUBLAS_DETERMINISTIC = (":4096:8", ":16:8")
_CUBLAS_FORMAT = re.compile(r"^(:\d+:\d+)+$")
# NCCL (src/misc/param.cc, ncclLoadParam): integer settings are read with strtoll(str, 0, 0).
NCCL_INTEGER = (
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_NET_GDR_READ",
    "NCCL_BUFFSIZE",
    "NCCL_NTHREADS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_CUMEM_ENABLE",
    "NCCL_NVLS_ENABLE",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_CROSS_NIC",
    "NCCL_CHECKS_DISABLE",
    "NCCL_SOCKET_NTHREADS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_COLLNET_ENABLE",
    "NCCL_P2P_USE_CUDA_MEMCPY",
)
# NCCL documentation, "Environment Variables".
NCCL_DEBUG_LEVELS = ("VERSION", "WARN", "INFO", "ABORT", "TRACE")
NCCL_PATH_LEVELS = ("LOC", "NVL", "PIX", "PXB", "PXN", "PHB", "SYS")
NCCL_PROTOCOLS = ("LL", "LL128", "SIMPLE")
NCCL_ALGORITHMS = ("RING", "TREE", "COLLNETDIRECT", "COLLNETCHAIN", "NVLS", "NVLSTREE", "PAT")
# CUDA Programming Guide, "CUDA Environment Variables".
CUDA_MODULE_LOADING = ("LAZY", "EAGER")
CUDA_DEVICE_ORDER = ("FASTEST_FIRST", "PCI_BUS_ID")
# torch.utils.cpp_extension (_get_cuda_arch_flags): names it maps to compute capabilities.
ARCH_NAMES = {
    "kepler": ("3.5",),
    "maxwell": ("5.0", "5.2"),
    "pascal": ("6.0", "6.1"),
    "volta": ("7.0",),
    "turing": ("7.5",),
    "ampere": ("8.0", "8.6"),
    "ada": ("8.9",),
    "hopper": ("9.0",),
    "blackwell": ("10.0", "12.0"),
}
_ARCH_ENTRY = re.compile(r"^(\d+\.\d+)([af])?(\+PTX)?$")


@dataclass(frozen=True)
class Problem:
    """A setting's value the library does not accept: what is wrong and what happens then."""

    variable: str
    value: str
    problem: str
    effect: str
    command: str
    finding: str
    severity: str = "warning"


def strtoll_reads(value: str) -> int | None:
    """What C's strtoll(value, NULL, 0) returns (0 when no digits lead), None on overflow."""
    match = re.match(r"^\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)", value)
    if not match:
        return 0
    sign, digits = match.group(1), match.group(2)
    number = (
        int(digits, 16)
        if digits[:2].lower() == "0x"
        else int(digits, 8 if digits.startswith("0") else 10)
    )
    number = -number if sign == "-" else number
    return number if -(2**63) <= number < 2**63 else None


def cublas_problem(value: str) -> Problem | None:
    """CUBLAS_WORKSPACE_CONFIG not in `:SIZE:COUNT` form, or not one torch calls deterministic."""
    command = f"export CUBLAS_WORKSPACE_CONFIG={CUBLAS_DETERMINISTIC[0]}"
    if not _CUBLAS_FORMAT.match(value):
        return Problem(
            "CUBLAS_WORKSPACE_CONFIG",
            value,
            "is not in cuBLAS's :SIZE:COUNT form (whole numbers, e.g. :4096:8)",
            "cuBLAS ignores it without a message, and torch's deterministic mode "
            "(torch.use_deterministic_algorithms(True)) raises at the first cuBLAS call because "
            "the value is not :4096:8 or :16:8, so a run set up for determinism does not get it",
            command,
            "env.cublas-workspace-invalid",
        )
    return None


def nccl_problem(name: str, value: str) -> Problem | None:
    """An NCCL setting NCCL reads differently from what the value says."""
    if name in NCCL_INTEGER:
        stripped = value.strip()
        if not re.fullmatch(r"[+-]?(0[xX][0-9a-fA-F]+|\d+)", stripped):
            read = strtoll_reads(value)
            said = "overflows and falls back to the default" if read is None else f"reads as {read}"
            effect = f"NCCL reads integer settings with strtoll, so {value!r} {said}"
            if name.endswith("_DISABLE") and read == 0:
                what = name.removeprefix("NCCL_").removesuffix("_DISABLE")
                effect += f": {what} is not disabled, it stays on"
            fixed = "1" if name.endswith(("_DISABLE", "_ENABLE")) else "<number>"
            return Problem(
                name,
                value,
                "is not a number",
                effect,
                f"export {name}={fixed}",
                "env.nccl-setting-invalid",
            )
        return None
    choices = {
        "NCCL_DEBUG": NCCL_DEBUG_LEVELS,
        "NCCL_P2P_LEVEL": NCCL_PATH_LEVELS,
        "NCCL_NET_GDR_LEVEL": NCCL_PATH_LEVELS,
    }.get(name)
    if choices is not None:
        if value.strip().upper() in choices or (name != "NCCL_DEBUG" and value.strip().isdigit()):
            return None
        return Problem(
            name,
            value,
            f"is not one of {', '.join(choices)}",
            "NCCL does not recognise it and keeps its default"
            + (" (no debug output at all)" if name == "NCCL_DEBUG" else ""),
            f"export {name}={'INFO' if name == 'NCCL_DEBUG' else choices[1]}",
            "env.nccl-setting-invalid",
        )
    lists = {"NCCL_PROTO": NCCL_PROTOCOLS, "NCCL_ALGO": NCCL_ALGORITHMS}.get(name)
    if lists is not None:
        unknown = [
            item for item in value.lstrip("^").split(",") if item.strip().upper() not in lists
        ]
        if unknown:
            return Problem(
                name,
                value,
                f"names {', '.join(repr(u) for u in unknown)}, not one of {', '.join(lists)}",
                "NCCL ignores the names it does not know",
                f"unset {name}",
                "env.nccl-setting-invalid",
            )
    return None


def cuda_problem(name: str, value: str) -> Problem | None:
    """CUDA_MODULE_LOADING / CUDA_DEVICE_ORDER outside the values CUDA documents."""
    allowed = {"CUDA_MODULE_LOADING": CUDA_MODULE_LOADING, "CUDA_DEVICE_ORDER": CUDA_DEVICE_ORDER}
    choices = allowed.get(name)
    if choices is None or value in choices:
        return None
    return Problem(
        name,
        value,
        f"is not one of the values the CUDA documentation lists ({', '.join(choices)})",
        "what the driver does with another value is not documented",
        f"export {name}={choices[0] if name == 'CUDA_MODULE_LOADING' else choices[1]}",
        "env.cuda-setting-invalid",
    )


def arch_list_entries(value: str) -> tuple[list[str], list[str]]:
    """(compute capabilities TORCH_CUDA_ARCH_LIST asks for, entries torch cannot read)."""
    caps: list[str] = []
    bad: list[str] = []
    for entry in re.split(r"[;\s]+", value.strip()):
        if not entry:
            continue
        named = ARCH_NAMES.get(entry.split("+")[0].lower())
        match = _ARCH_ENTRY.match(entry)
        if named:
            caps += named
        elif match:
            caps.append(match.group(1))
        else:
            bad.append(entry)
    return caps, bad


def arch_list_problem(value: str, capabilities: list[str]) -> Problem | None:
    """TORCH_CUDA_ARCH_LIST with entries torch refuses, or without this machine's GPUs."""
    caps, bad = arch_list_entries(value)
    wanted = ";".join(dict.fromkeys(capabilities)) or "8.0"
    if bad:
        return Problem(
            "TORCH_CUDA_ARCH_LIST",
            value,
            f"has entries torch cannot read: {', '.join(bad)} (entries are like 8.6, 9.0+PTX "
            "or a name such as Ampere, separated by ';')",
            "building a CUDA extension fails with torch's ValueError 'Unknown CUDA arch'",
            f'export TORCH_CUDA_ARCH_LIST="{wanted}"',
            "env.arch-list-invalid",
        )
    missing = [c for c in dict.fromkeys(capabilities) if c not in caps]
    if missing and caps:
        return Problem(
            "TORCH_CUDA_ARCH_LIST",
            value,
            f"leaves out this machine's GPU architecture ({', '.join(missing)})",
            "CUDA extensions built now (pip install of flash-attn, apex, your own) get no "
            "kernels for this GPU and fail with 'no kernel image is available' or 'invalid "
            "device function'",
            f'export TORCH_CUDA_ARCH_LIST="{wanted}"',
            "env.arch-list-misses-gpu",
        )
    return None


def cudnn_problems(env_vars: dict[str, str]) -> list[Problem]:
    """cuDNN's API logging (cuDNN documentation, "Error Reporting And API Logging"):
    CUDNN_LOGLEVEL_DBG takes 0 to 3, and nothing is logged unless CUDNN_LOGDEST_DBG names
    stdout, stderr or a file."""
    out = []
    level = env_vars.get("CUDNN_LOGLEVEL_DBG")
    if level is not None and not re.fullmatch(r"\s*[+-]?\d+\s*", level):
        out.append(
            Problem(
                "CUDNN_LOGLEVEL_DBG",
                level,
                "is not a number (cuDNN takes 0, 1, 2 or 3)",
                "cuDNN's API logging does not take it",
                "export CUDNN_LOGLEVEL_DBG=2",
                "env.cudnn-setting-invalid",
            )
        )
    asked = [
        name
        for name in (
            "CUDNN_LOGLEVEL_DBG",
            "CUDNN_LOGINFO_DBG",
            "CUDNN_LOGWARN_DBG",
            "CUDNN_LOGERR_DBG",
        )
        if strtoll_reads(env_vars.get(name) or "0") not in (0, None)
    ]
    if asked and not env_vars.get("CUDNN_LOGDEST_DBG"):
        out.append(
            Problem(
                asked[0],
                env_vars[asked[0]],
                "asks for cuDNN's API log but CUDNN_LOGDEST_DBG is not set",
                "cuDNN writes no log at all without a destination (stdout, stderr or a file name)",
                "export CUDNN_LOGDEST_DBG=stderr",
                "env.cudnn-setting-invalid",
            )
        )
    return out


Rule = Callable[[str, str], "Problem | None"]


def _rules(env: Environment) -> list[tuple[Callable[[str], bool], Rule]]:
    caps = [g.compute_capability for g in env.gpus if g.compute_capability]
    caps += [d.compute_capability for d in env.torch.devices if d.compute_capability]
    return [
        (lambda n: n == "CUBLAS_WORKSPACE_CONFIG", lambda _n, v: cublas_problem(v)),
        (lambda n: n.startswith("NCCL_"), nccl_problem),
        (lambda n: n in ("CUDA_MODULE_LOADING", "CUDA_DEVICE_ORDER"), cuda_problem),
        (
            lambda n: n == "TORCH_CUDA_ARCH_LIST",
            lambda _n, v: arch_list_problem(v, [c for c in caps if c]),
        ),
    ]


def setting_problems(env: Environment) -> list[Problem]:
    """Every setting in the environment whose value its library reads differently."""
    out = cudnn_problems(env.env_vars)
    rules = _rules(env)
    for name, value in sorted(env.env_vars.items()):
        if value.startswith("<masked"):
            continue
        for applies, rule in rules:
            if applies(name):
                problem = rule(name, value)
                if problem is not None:
                    out.append(problem)
    return out


def check_settings(env: Environment) -> list[Finding]:
    """One finding per malformed setting: the variable, its value, what happens, the fix."""
    return [
        Finding(
            p.finding,
            p.severity,
            f"{p.variable}={p.value!r} {p.problem}: {p.effect}.",
            f"Set it to a value its library accepts, or unset {p.variable}.",
            command=p.command,
        )
        for p in setting_problems(env)
    ]
