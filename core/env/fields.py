"""Which environment fields matter and how to read them: named rows of the env JSON.

The rows (`FIELDS`: category, label, where the value comes from) are what `report diff`, the
fleet's majority and outliers and the report's summary compare; `FLEET_ORDER` ranks them for
"works on node 3, fails on node 7". Values are normalised (`field_value`) so two machines
compare equal when they say the same thing (library names and versions, not their paths).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

Env = Mapping[str, Any]


def fmt(value: Any) -> str:
    """A value as one short human string."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return str(value)


def lookup(env: Env | None, path: str) -> Any:
    """The value at dotted `path` in the env JSON (list indexes as numbers), or None."""
    node: Any = env
    for part in path.split("."):
        keyed = re.fullmatch(r"(\w+)\[([\w.-]+)\]", part)  # pip[torch]: the item named torch
        if keyed and isinstance(node, Mapping):
            items = node.get(keyed.group(1)) or []
            node = next(
                (i for i in items if isinstance(i, Mapping) and i.get("name") == keyed.group(2)),
                None,
            )
        elif isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, Sequence) and not isinstance(node, str) and part.isdigit():
            node = node[int(part)] if int(part) < len(node) else None
        else:
            return None
        if node is None:
            return None
    return node


def first(env: Env | None, paths: Sequence[str]) -> tuple[Any, str | None]:
    """The first collected value among `paths` and the path it came from."""
    for path in paths:
        value = lookup(env, path)
        if value not in (None, "", [], {}):
            return value, path
    return None, None


def _cudnn(env: Env) -> str | None:
    version = lookup(env, "cudnn.version")
    basis = lookup(env, "cudnn.basis")
    return f"{version} ({basis})" if version and basis else version


def _nvcc(env: Env) -> Any:
    return first(env, ("toolkits.nvcc.version", "toolkits.toolkits.0.version"))[0]


def _gpus(env: Env) -> list[str]:
    out = []
    for g in env.get("gpus") or []:
        if isinstance(g, Mapping):
            cc = g.get("compute_capability")
            mem = g.get("memory_total_mb")
            gib = f", {round(float(mem) / 1024)} GiB" if isinstance(mem, int | float) else ""
            out.append(f"{g.get('name', '?')} (sm_{str(cc or '?').replace('.', '')}{gib})")
    return out


def _nccl(env: Env) -> Any:
    """NCCL as torch reports it (deep mode), else the nvidia-nccl wheel torch pins."""
    version = lookup(env, "torch.nccl_version")
    if version:
        return version
    declared = lookup(env, "torch.declared")
    if isinstance(declared, Mapping):
        return next((v for k, v in sorted(declared.items()) if k.startswith("nvidia-nccl")), None)
    return None


def _gpu_count(env: Env) -> int | None:
    gpus = env.get("gpus")
    return len(gpus) if isinstance(gpus, list) else None


def _per_gpu(key: str, show: Callable[[Any], str]) -> Getter:
    def get(env: Env) -> list[str] | None:
        gpus = [g for g in env.get("gpus") or [] if isinstance(g, Mapping)]
        if not any(g.get(key) is not None for g in gpus):
            return None
        shown = [show(g.get(key)) for g in gpus]
        most = max(set(shown), key=shown.count)
        if len(set(shown)) == 1:
            return [f"{most} (all {len(gpus)} GPU{'s' * (len(gpus) != 1)})"]
        odd = [f"GPU {g.get('index', '?')}: {v}" for g, v in zip(gpus, shown, strict=True)]
        return [o for o, v in zip(odd, shown, strict=True) if v != most] + [f"others: {most}"]

    return get


def _on_off(value: Any) -> str:
    return "unknown" if value is None else "on" if value else "off"


def _mhz(value: Any) -> str:
    return "unknown" if value is None else f"{value} MHz"


def _torch_devices(env: Env) -> Any:
    devices = [d for d in lookup(env, "torch.devices") or [] if isinstance(d, Mapping)]
    if not devices:
        count = lookup(env, "torch.device_count")
        return [] if count == 0 else count
    return [
        f"cuda:{d.get('index', '?')} {d.get('name', '?')}"
        + (f" (error: {d['error']})" if d.get("error") else "")
        for d in devices
    ]


def _checks(env: Env) -> list[str] | None:
    checks = [c for c in lookup(env, "torch.checks") or [] if isinstance(c, Mapping)]
    if not checks:
        return None
    return [
        f"{c.get('op')} on {c.get('device')}: "
        + ("ok" if c.get("ok") else f"FAILED ({str(c.get('error') or '').strip()[:120]})")
        for c in checks
    ]


def _declared(env: Env) -> list[str] | None:
    declared = lookup(env, "torch.declared")
    if not isinstance(declared, Mapping) or not declared:
        return None
    return [f"{k}=={v}" for k, v in sorted(declared.items())]


Getter = Callable[[Env], Any]
# (category, label, env JSON path or getter), in relevance order within each category.
FIELDS: tuple[tuple[str, str, str | Getter], ...] = (
    ("versions", "PyTorch", "torch.version"),
    ("versions", "torch import error", "torch.import_error"),
    ("versions", "CUDA (torch build)", "torch.cuda"),
    ("versions", "torch.cuda.is_available()", "torch.is_available"),
    ("versions", "cuDNN", _cudnn),
    ("versions", "cuDNN (torch's pinned wheel)", "torch.declared_cudnn"),
    ("versions", "NCCL", _nccl),
    ("versions", "NVIDIA driver", "driver.version"),
    ("versions", "CUDA (driver max)", "driver.cuda_max"),
    ("versions", "CUDA toolkit (nvcc)", _nvcc),
    ("versions", "torch arch list", "torch.arch_list"),
    ("versions", "Python", "python.version"),
    ("versions", "OS", "platform.distribution"),
    ("hardware", "GPU count", _gpu_count),
    ("hardware", "GPUs (NVML)", _gpus),
    ("hardware", "GPU ECC", _per_gpu("ecc_enabled", _on_off)),
    ("hardware", "GPU max SM clock", _per_gpu("max_sm_clock_mhz", _mhz)),
    ("hardware", "GPUs torch sees", _torch_devices),
    ("hardware", "tiny GPU ops (deep mode)", _checks),
    ("libraries", "cuDNN loaded from", "cudnn.loaded_from"),
    ("libraries", "cuDNN copies on disk", "cudnn.copies"),
    ("libraries", "loaded CUDA libraries", "loaded_libraries"),
    ("libraries", "torch's pinned nvidia-* wheels", _declared),
)


# What makes "works on node 3, fails on node 7" across a fleet, most relevant first: the
# fleet view ranks its differences by this list, then by category (`diff_reports(order=...)`).
FLEET_ORDER: tuple[str, ...] = (
    "NVIDIA driver",
    "cuDNN",
    "cuDNN loaded from",
    "PyTorch",
    "torch import error",
    "NCCL",
    "GPU count",
    "GPUs (NVML)",
    "GPU ECC",
    "GPU max SM clock",
    "GPUs torch sees",
    "torch.cuda.is_available()",
    "CUDA (driver max)",
    "CUDA (torch build)",
    "tiny GPU ops (deep mode)",
    "cuDNN (torch's pinned wheel)",
    "CUDA toolkit (nvcc)",
    "torch arch list",
    "Python",
    "OS",
)
_CATEGORY_OF = {label: category for category, label, _source in FIELDS}
_SOURCE_OF = {label: source for _category, label, source in FIELDS}


def field_value(env: Env, label: str) -> Any:
    """The normalised value of the named row (a label of `FLEET_ORDER` or the diff table)."""
    source = _SOURCE_OF[label]
    return norm(lookup(env, source) if isinstance(source, str) else source(env))


_local = threading.local()


@contextmanager
def remembering() -> Iterator[None]:
    """Within the block, what `diff_reports` derives from an environment is computed once per
    environment object (a fleet compares hundreds of nodes with one reference node)."""
    old = getattr(_local, "memo", None)
    _local.memo = {}
    try:
        yield
    finally:
        _local.memo = old


def cached(env: Env, what: str, make: Callable[[], Any]) -> Any:
    """`make()`, computed once per environment inside `remembering()`."""
    memo: dict[int, tuple[Env, dict[str, object]]] | None = getattr(_local, "memo", None)
    if memo is None:
        return make()
    entry = memo.get(id(env))
    if entry is None or entry[0] is not env:
        entry = memo[id(env)] = (env, {})
    if what not in entry[1]:
        entry[1][what] = make()
    return entry[1][what]


def all_fields(env: Env) -> dict[str, object]:
    """Every named row's normalised value."""
    fields: dict[str, object] = cached(
        env, "fields", lambda: {label: field_value(env, label) for _c, label, _s in FIELDS}
    )
    return fields


def field_category(label: str) -> str:
    """The diff category of a named row."""
    return _CATEGORY_OF.get(label, "other")


def norm(value: Any) -> Any:
    """A value as compared: list items described and sorted naturally, maps as text."""
    if isinstance(value, list):
        return sorted((_describe(v) for v in value), key=_natural)
    if isinstance(value, Mapping):
        return fmt(value)
    return value


def _natural(text: str) -> list[Any]:
    """Sort key that puts sm_75 before sm_100."""
    return [int(p) if p.isdigit() else p for p in _DIGITS.split(text)]


_DIGITS = re.compile(r"(\d+)")


def _describe(item: Any) -> str:
    """A list item as the text to compare: library names and versions, not machine paths."""
    if not isinstance(item, Mapping):
        return fmt(item)
    name, version = item.get("name"), item.get("version")
    where = item.get("package") or item.get("directory") or item.get("path")
    if name and version:
        return f"{name}=={version}"
    if version:
        return f"{version} ({where})" if where else str(version)
    return str(name or where or fmt(item))
