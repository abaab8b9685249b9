"""Report diff: "works here, broken there", the differences that matter most listed first."""

from __future__ import annotations

import re
import textwrap
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from core.report.fields import first, lookup
from core.report.text import fmt, scenario_name, verdict_text

Env = Mapping[str, Any]
CATEGORIES = ("versions", "hardware", "findings", "wizard", "libraries", "other")
# Fields that differ between any two runs and say nothing about why one works.
_NOISE = re.compile(
    r"(?i)(time|duration|elapsed|seconds|_s$|_ms$|pid|free|used|util|temperature|power|clock|"
    r"fan|generated_at|uuid|serial|hostname|executable|prefix|path$|location|^name$|"
    r"stderr_tail|returncode|last_stage|user_site)"
)
# Whole sections that describe the probe run or the app, or that a named row already covers.
_SKIP_PREFIXES = (
    "probe",
    "app",
    "findings",
    "gpus",
    "packages",
    "torch.checks",
    "torch.devices",
    "torch.declared",
    "torch.cudnn_version",  # the same number as cuDNN's row in deep mode
    "cudnn.loaded_files",  # the paths behind "cuDNN loaded from"
    "cudnn.basis",  # shown beside the cuDNN version
    "cudnn.version",
    "cudnn.declared",  # torch's pinned cuDNN wheel, its own row
    "torch.device_count",  # "GPUs torch sees"
    "torch.nccl_version",  # "NCCL"
    "toolkits.toolkits",
)
# How a missing value reads, per category, in the text table (JSON keeps null).
_ABSENT = {"findings": "not raised", "wizard": "not run"}
_WRAP = 100
_MAX_VALUE = 400
_MAX_ITEMS = 40


@dataclass(frozen=True)
class Difference:
    """One difference between report A and report B."""

    category: str
    field: str
    a: Any
    b: Any

    @property
    def rank(self) -> int:
        """Position of the category in relevance order (0 = most relevant)."""
        return CATEGORIES.index(self.category)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**asdict(self), "rank": self.rank}


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
_FIELDS: tuple[tuple[str, str, str | Getter], ...] = (
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
_CATEGORY_OF = {label: category for category, label, _source in _FIELDS}
_SOURCE_OF = {label: source for _category, label, source in _FIELDS}


def field_value(env: Env, label: str) -> Any:
    """The normalised value of the named row (a label of `FLEET_ORDER` or the diff table)."""
    source = _SOURCE_OF[label]
    return _norm(lookup(env, source) if isinstance(source, str) else source(env))


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


def _cached(env: Env, what: str, make: Callable[[], Any]) -> Any:
    memo: dict[int, tuple[Env, dict[str, Any]]] | None = getattr(_local, "memo", None)
    if memo is None:
        return make()
    entry = memo.get(id(env))
    if entry is None or entry[0] is not env:
        entry = memo[id(env)] = (env, {})
    if what not in entry[1]:
        entry[1][what] = make()
    return entry[1][what]


def _all_fields(env: Env) -> dict[str, Any]:
    fields: dict[str, Any] = _cached(
        env, "fields", lambda: {label: field_value(env, label) for _c, label, _s in _FIELDS}
    )
    return fields


def field_category(label: str) -> str:
    """The diff category of a named row."""
    return _CATEGORY_OF.get(label, "other")


def diff_reports(
    a: Mapping[str, Any], b: Mapping[str, Any], order: Sequence[str] = ()
) -> list[Difference]:
    """What differs between two reports, most relevant first: versions, hardware, findings,
    wizard outcomes, libraries and packages, then any other environment field. Rows named in
    `order` (e.g. `FLEET_ORDER`) come first, in that order."""
    env_a, env_b = a.get("environment") or {}, b.get("environment") or {}
    out: list[Difference] = []
    seen = [source for _c, _l, source in _FIELDS if isinstance(source, str)]
    fields_a, fields_b = _all_fields(env_a), _all_fields(env_b)
    for category, label, _source in _FIELDS:
        va, vb = fields_a[label], fields_b[label]
        if va != vb:
            out.append(Difference(category, label, va, vb))
    out += _packages(env_a, env_b)
    out += _findings(a, b)
    out += _wizard(a, b)
    out += _rest(env_a, env_b, (*_SKIP_PREFIXES, *seen))
    first = {label: i for i, label in enumerate(order)}
    # stable: keeps the order within a category
    return sorted(out, key=lambda d: (first.get(d.field, len(first)), d.rank))


def _norm(value: Any) -> Any:
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


def _package_index(env: Env) -> dict[str, str]:
    out: dict[str, str] = {}
    for source in ("pip", "conda"):
        for item in lookup(env, f"packages.{source}") or []:
            if isinstance(item, Mapping) and item.get("name"):
                out[f"{source}: {item['name']}"] = str(item.get("version"))
    return out


def _stack_first(key: str) -> tuple[bool, str]:
    return (not re.search(r"torch|nvidia|cud|triton", key), key)


def _packages(env_a: Env, env_b: Env) -> list[Difference]:
    """Packages in both with other versions one by one (torch and nvidia-* first); packages
    on one side only as one row, so forty CUDA wheels do not bury the rest."""
    pa = _cached(env_a, "packages", lambda: _package_index(env_a))
    pb = _cached(env_b, "packages", lambda: _package_index(env_b))
    both = sorted(set(pa) & set(pb), key=_stack_first)
    out = [Difference("libraries", k, pa[k], pb[k]) for k in both if pa[k] != pb[k]]
    only_a = [_pin(k, pa[k]) for k in sorted(set(pa) - set(pb), key=_stack_first)]
    only_b = [_pin(k, pb[k]) for k in sorted(set(pb) - set(pa), key=_stack_first)]
    if only_a or only_b:
        out.append(Difference("libraries", "packages on one side only", only_a, only_b))
    return out


def _pin(key: str, version: str) -> str:
    return f"{key.removeprefix('pip: ')}=={version}"


def _findings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Difference]:
    def index(rep: Mapping[str, Any]) -> dict[str, str]:
        return {
            str(f.get("id")): f"{f.get('severity', '?')}: {f.get('message', '')}"
            for f in rep.get("findings") or []
            if isinstance(f, Mapping)
        }

    fa, fb = index(a), index(b)
    order = sorted(set(fa) | set(fb), key=lambda k: (_severity_rank(fa.get(k), fb.get(k)), k))
    return [
        Difference("findings", k, fa.get(k), fb.get(k)) for k in order if fa.get(k) != fb.get(k)
    ]


def _severity_rank(*texts: str | None) -> int:
    joined = " ".join(t or "" for t in texts)
    return 0 if "error:" in joined else 1 if "warning:" in joined else 2


def _wizard(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Difference]:
    def index(rep: Mapping[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for run in rep.get("wizard_runs") or []:
            name = scenario_name(run)
            out[f"{name}: verdict"] = verdict_text(run)
            for step in run.get("steps") or []:
                if isinstance(step, Mapping):
                    out[f"{name}: {step.get('name')}"] = str(step.get("outcome"))
        return out

    wa, wb = index(a), index(b)
    keys = list(dict.fromkeys([*wa, *wb]))
    return [Difference("wizard", k, wa.get(k), wb.get(k)) for k in keys if wa.get(k) != wb.get(k)]


def _rest(env_a: Env, env_b: Env, skip: tuple[str, ...]) -> list[Difference]:
    fa = _cached(env_a, f"leaves {skip}", lambda: dict(_leaves(env_a, skip=skip)))
    fb = _cached(env_b, f"leaves {skip}", lambda: dict(_leaves(env_b, skip=skip)))
    out = []
    for key in sorted(set(fa) | set(fb)):
        if key.startswith(skip) or _NOISE.search(key.rsplit(".", 1)[-1]):
            continue
        if fa.get(key) != fb.get(key) and (fa.get(key), fb.get(key)) not in _EMPTY_PAIRS:
            out.append(Difference("other", key, fa.get(key), fb.get(key)))
    return out


# An empty list or map on one side and nothing on the other say the same thing.
_EMPTY_PAIRS: tuple[tuple[Any, Any], ...] = ((None, []), ([], None), (None, "{}"), ("{}", None))


def _leaves(obj: Any, prefix: str = "", skip: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every leaf; a subtree whose path starts with `skip` is not
    walked (a fleet diffs hundreds of nodes: their package lists and probe timings add up)."""
    if prefix and skip and prefix.startswith(skip):
        return
    if isinstance(obj, Mapping) and obj:
        for k, v in obj.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k), skip)
    elif isinstance(obj, list) and obj and all(isinstance(v, Mapping) for v in obj):
        for i, v in enumerate(obj):
            key = v.get("name") or v.get("id") or v.get("index", i)
            yield from _leaves(v, f"{prefix}[{key}]", skip)
    else:
        yield prefix, _norm(obj)


def _show(value: Any, d: Difference) -> str:
    """A value for the text table: lists joined, long text cut, absence in words."""
    if value is None:
        package = d.field.startswith(("pip: ", "conda: "))
        return "not installed" if package else _ABSENT.get(d.category, "—")
    if isinstance(value, list):
        more = len(value) - _MAX_ITEMS
        text = ", ".join(str(v) for v in value[:_MAX_ITEMS]) if value else "none"
        return text + (f" and {more} more" if more > 0 else "")
    text = " ".join(fmt(value).split())
    if len(text) > _MAX_VALUE:
        text = f"{text[:_MAX_VALUE]}… ({len(text) - _MAX_VALUE:,} more characters)"
    return text


def render_diff(
    diffs: list[Difference],
    a_name: str = "A",
    b_name: str = "B",
    headlines: tuple[str, str] | None = None,
) -> str:
    """The differences as plain text grouped by category, most relevant first; `headlines`
    (each report's one-line summary) head the list."""
    width = max(len(a_name), len(b_name)) + 1
    lines = []
    if headlines:
        lines += [
            f"{a_name + ':':<{width}} {headlines[0]}",
            f"{b_name + ':':<{width}} {headlines[1]}",
        ]
        lines.append("")
    if not diffs:
        return (
            "\n".join([*lines, f"No differences that matter between {a_name} and {b_name}."]) + "\n"
        )
    count = f"{len(diffs)} difference{'s' if len(diffs) != 1 else ''}"
    lines.append(f"{count} between {a_name} and {b_name}, most relevant first:")
    current = None
    for d in diffs:
        if d.category != current:
            current = d.category
            lines.append(f"\n[{current}]")
        lines.append(f"  {d.field}")
        for name, value in ((a_name, d.a), (b_name, d.b)):
            wrapped = textwrap.wrap(
                _show(value, d),
                _WRAP,
                initial_indent=f"    {name + ':':<{width}} ",
                subsequent_indent=" " * (width + 5),
                break_on_hyphens=False,
            )
            lines += wrapped
    return "\n".join(lines) + "\n"
