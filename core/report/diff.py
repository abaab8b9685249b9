"""Report diff: "works here, broken there", the differences that matter most listed first."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from core.report.fields import lookup
from core.report.text import fmt, scenario_name, verdict_text

# Rank 0: the stack versions users and maintainers ask for first.
_VERSION_FIELDS: tuple[tuple[str, str], ...] = (
    ("torch.version", "PyTorch"),
    ("torch.cuda", "CUDA (torch build)"),
    ("cudnn.version", "cuDNN (loaded)"),
    ("driver.version", "NVIDIA driver"),
    ("driver.cuda_max", "CUDA (driver max)"),
    ("toolkits.nvcc.version", "CUDA toolkit (nvcc)"),
    ("torch.arch_list", "torch arch list"),
    ("torch.import_error", "torch import error"),
    ("python.version", "Python"),
)
_LIBRARY_FIELDS: tuple[tuple[str, str], ...] = (
    ("cudnn.loaded_from", "cuDNN loaded from"),
    ("cudnn.copies", "cuDNN copies on disk"),
    ("loaded_libraries", "loaded CUDA libraries"),
)
CATEGORIES = ("versions", "hardware", "libraries", "findings", "wizard", "other")
# Fields that differ between any two runs and say nothing about why one works.
_NOISE = re.compile(
    r"(?i)(time|duration|elapsed|seconds|_s$|_ms$|pid|free|used|util|temperature|power|clock|"
    r"fan|generated_at|uuid|serial|hostname|executable|prefix|path$|location|^name$|"
    r"stderr_tail|returncode|last_stage|user_site)"
)
# Whole sections that describe the probe run or the app, not the environment.
_SKIP_SECTIONS = ("probe", "app", "findings", "gpus", "packages")


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


def diff_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Difference]:
    """What differs between two reports, most relevant first: versions, hardware, libraries,
    findings, wizard outcomes, then any other environment field."""
    env_a, env_b = a.get("environment") or {}, b.get("environment") or {}
    out: list[Difference] = []
    seen: set[str] = set()
    for category, fields in (("versions", _VERSION_FIELDS), ("libraries", _LIBRARY_FIELDS)):
        for path, label in fields:
            seen.add(path)
            va, vb = _norm(lookup(env_a, path)), _norm(lookup(env_b, path))
            if va != vb:
                out.append(Difference(category, label, va, vb))
    out += _packages(env_a, env_b)
    out += _gpus(env_a, env_b)
    out += _findings(a, b)
    out += _wizard(a, b)
    out += _rest(env_a, env_b, seen)
    return sorted(out, key=lambda d: d.rank)  # stable: keeps the order within a category


def _norm(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(_describe(v) for v in value)
    if isinstance(value, Mapping):
        return fmt(value)
    return value


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


def _packages(env_a: Mapping[str, Any], env_b: Mapping[str, Any]) -> list[Difference]:
    """pip/conda packages whose versions differ; torch and nvidia-* wheels first."""

    def index(env: Mapping[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for source in ("pip", "conda"):
            for item in lookup(env, f"packages.{source}") or []:
                if isinstance(item, Mapping) and item.get("name"):
                    out[f"{source}: {item['name']}"] = str(item.get("version"))
        return out

    pa, pb = index(env_a), index(env_b)
    keys = sorted(set(pa) | set(pb), key=lambda k: (not re.search(r"torch|nvidia|cud", k), k))
    return [
        Difference("libraries", k, pa.get(k), pb.get(k)) for k in keys if pa.get(k) != pb.get(k)
    ]


def _gpus(env_a: Mapping[str, Any], env_b: Mapping[str, Any]) -> list[Difference]:
    def describe(env: Mapping[str, Any]) -> list[str]:
        return [
            f"{g.get('name', '?')} (cc {g.get('compute_capability', '?')})"
            for g in env.get("gpus") or []
            if isinstance(g, Mapping)
        ]

    ga, gb = describe(env_a), describe(env_b)
    return [Difference("hardware", "GPUs", ga, gb)] if ga != gb else []


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


def _rest(env_a: Mapping[str, Any], env_b: Mapping[str, Any], seen: set[str]) -> list[Difference]:
    fa, fb = dict(_leaves(env_a)), dict(_leaves(env_b))
    skip = (*_SKIP_SECTIONS, *seen)
    out = []
    for key in sorted(set(fa) | set(fb)):
        if key.startswith(skip) or _NOISE.search(key.rsplit(".", 1)[-1]):
            continue
        if fa.get(key) != fb.get(key):
            out.append(Difference("other", key, fa.get(key), fb.get(key)))
    return out


def _leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, list) and obj and all(isinstance(v, Mapping) for v in obj):
        for i, v in enumerate(obj):
            key = v.get("name") or v.get("id") or v.get("index", i)
            yield from _leaves(v, f"{prefix}[{key}]")
    else:
        yield prefix, _norm(obj)


def render_diff(diffs: list[Difference], a_name: str = "A", b_name: str = "B") -> str:
    """The differences as a plain-text table, grouped by category, most relevant first."""
    if not diffs:
        return f"No differences that matter between {a_name} and {b_name}.\n"
    lines = [f"{len(diffs)} differences, most relevant first ({a_name} → {b_name}):"]
    current = None
    for d in diffs:
        if d.category != current:
            current = d.category
            lines.append(f"\n[{current}]")
        lines.append(f"  {d.field}:\n    {a_name}: {fmt(d.a)}\n    {b_name}: {fmt(d.b)}")
    return "\n".join(lines) + "\n"
