"""What differs between two environments, most relevant first (named rows, packages, the rest)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from core.env.fields import FIELDS, Env, all_fields, cached, lookup, norm

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

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {**asdict(self), "rank": self.rank}


def diff_environments(env_a: Env, env_b: Env) -> list[Difference]:
    """Named rows that differ, then packages, then any other field (unsorted: callers rank)."""
    out: list[Difference] = []
    seen = [source for _c, _l, source in FIELDS if isinstance(source, str)]
    fields_a, fields_b = all_fields(env_a), all_fields(env_b)
    for category, label, _source in FIELDS:
        va, vb = fields_a[label], fields_b[label]
        if va != vb:
            out.append(Difference(category, label, va, vb))
    out += _packages(env_a, env_b)
    out += _rest(env_a, env_b, (*_SKIP_PREFIXES, *seen))
    return out


def ranked(diffs: Sequence[Difference], order: Sequence[str] = ()) -> list[Difference]:
    """Rows named in `order` first, in that order, then by category (stable within one)."""
    first = {label: i for i, label in enumerate(order)}
    return sorted(diffs, key=lambda d: (first.get(d.field, len(first)), d.rank))


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
    pa = cached(env_a, "packages", lambda: _package_index(env_a))
    pb = cached(env_b, "packages", lambda: _package_index(env_b))
    both = sorted(set(pa) & set(pb), key=_stack_first)
    out = [Difference("libraries", k, pa[k], pb[k]) for k in both if pa[k] != pb[k]]
    only_a = [_pin(k, pa[k]) for k in sorted(set(pa) - set(pb), key=_stack_first)]
    only_b = [_pin(k, pb[k]) for k in sorted(set(pb) - set(pa), key=_stack_first)]
    if only_a or only_b:
        out.append(Difference("libraries", "packages on one side only", only_a, only_b))
    return out


def _pin(key: str, version: str) -> str:
    return f"{key.removeprefix('pip: ')}=={version}"


def _rest(env_a: Env, env_b: Env, skip: tuple[str, ...]) -> list[Difference]:
    fa = cached(env_a, f"leaves {skip}", lambda: dict(_leaves(env_a, skip=skip)))
    fb = cached(env_b, f"leaves {skip}", lambda: dict(_leaves(env_b, skip=skip)))
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
        yield prefix, norm(obj)
