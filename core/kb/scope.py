"""The stack a verdict was measured or sourced on, and when a user's stack differs from it.

A verdict backed by one of the clinic's evidence records (resources/evidence/*.json) was
*measured* on the record's machine (torch, CUDA, cuDNN, GPU, date); one backed by a cited thread
or document was *reported* on the stack that source states (the citation's `stack` table). Both
are derived when an entry is loaded, so every surface shows the same words: "measured on torch
2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90), 2026-11-26".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from core.kb.schema import Citation, Entry, SeedClaim, Workaround

STACK_KEYS = ("torch", "cuda", "cudnn", "driver", "gpu", "arch", "software", "date")
# A record path as evidence text cites it: a wizard run (resources/evidence/<name>.json) or a
# benchmark result kept with its command (benchmarks/<suite>/<name>.json, benchmarks/RESULTS.md).
RECORD = re.compile(
    r"(?:resources/)?(evidence/[A-Za-z0-9_.-]+\.json)|(benchmarks/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+\.json)"
)
REF = re.compile(r"(?<![\w./-])([A-Za-z0-9][\w.-]*/[\w.-]+#\d+)")
_DATE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Scope:
    """One stack a verdict rests on: measured by the clinic, or reported by a source."""

    basis: Literal["measured", "reported"]
    source: str  # the record path (resources/evidence/...) or the citation's ref
    date: str = ""
    torch: str = ""
    cuda: str = ""
    cudnn: str = ""
    driver: str = ""
    gpu: str = ""
    arch: str = ""  # sm_90
    software: str = ""  # another program the source ran (CTranslate2 4.4, TensorFlow 2.4)

    def stack(self) -> str:
        """'torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90)' ('' when nothing is known)."""
        parts = []
        if self.torch:
            parts.append(f"torch {short_version(self.torch)}")
        if self.software:
            parts.append(self.software)
        if self.cuda:
            parts.append(f"CUDA {self.cuda}")
        if self.cudnn:
            parts.append(f"cuDNN {short_version(self.cudnn)}")
        if self.driver and self.basis == "reported":  # a record's driver is in the record
            parts.append(f"driver {self.driver}")
        gpu = self.gpu.removeprefix("NVIDIA ").strip()
        if gpu or self.arch:
            parts.append(f"{gpu} ({self.arch})" if gpu and self.arch else gpu or self.arch)
        return " / ".join(parts)

    def text(self) -> str:
        """'measured on torch 2.11 / ... / H200 (sm_90), 2026-11-26' or 'reported on ...
        (owner/repo#N)'."""
        stack = self.stack() or "an unstated stack"
        when = f", {self.date}" if self.date else ""
        if self.basis == "measured":
            return f"measured on {stack}{when}"
        return f"reported on {stack}{when} ({self.source})"

    def to_dict(self) -> dict[str, str]:
        """JSON-ready fields (the compiled KB stores scopes so)."""
        return {k: v for k, v in self.__dict__.items() if v}


def scope_from_dict(data: Mapping[str, Any]) -> Scope:
    """A Scope back from `to_dict()`."""
    known = {k: str(v) for k, v in data.items() if k in Scope.__dataclass_fields__}
    basis = "measured" if known.pop("basis", "") == "measured" else "reported"
    return Scope(basis=basis, **known)  # type: ignore[arg-type]


def short_version(version: str) -> str:
    """'2.11.0+cu130' -> '2.11'; '9.19.0' -> '9.19'; '1.4' stays; anything else unchanged."""
    found = _VERSION.match(version.strip())
    if not found:
        return version.strip()
    return found.group(0) if found.group(2) is not None else found.group(1)


def record_scope(rel: str, record: Mapping[str, Any]) -> Scope:
    """The machine an evidence record ran on (`rel`: evidence/<name>.json under resources/, or a
    benchmarks/<suite>/<name>.json result, whose machine is its `environment`)."""
    bench = rel.startswith("benchmarks/")
    m = (record.get("environment") if bench else record.get("machine")) or {}
    capability = str(m.get("compute_capability") or "")
    arch = "sm_" + capability.replace(".", "") if re.fullmatch(r"\d+\.\d", capability) else ""
    gpu = str(m.get("gpu") or "") or "no GPU (CPU build of torch)"
    cudnn = m.get("cudnn") if bench else m.get("cudnn_version")
    return Scope(
        basis="measured",
        source=rel if bench else f"resources/{rel}",
        date=str(record.get("started_at" if bench else "started") or "")[:10],
        torch=str(m.get("torch") or ""),
        cuda=str(m.get("cuda" if bench else "torch_cuda") or ""),
        cudnn=_cudnn_text(cudnn),
        driver=str(m.get("driver") or ""),
        gpu=gpu,
        arch=arch,
    )


def _cudnn_text(value: Any) -> str:
    """'9.19.0' as given, or from torch's integer form (91900 -> '9.19.0')."""
    if isinstance(value, int) and value >= 1000:
        major, rest = divmod(value, 10000) if value >= 10000 else divmod(value, 1000)
        minor, patch = divmod(rest, 100)
        return f"{major}.{minor}.{patch}"
    return str(value or "")


def citation_scope(cite: Citation) -> Scope | None:
    """The stack a cited source states (its `stack` table), None when it declares none."""
    if not cite.stack:
        return None
    fields = {k: str(v) for k, v in cite.stack.items() if k in STACK_KEYS}
    return Scope(basis="reported", source=cite.ref, **fields)


def check_stack(stack: Any, fail: Any, prefix: str) -> dict[str, str]:
    """Validate a citation's `stack` table; `fail(field, problem)` builds the KBError."""
    if not isinstance(stack, dict):
        raise fail(prefix.rstrip("."), "must be a table")
    for key, value in stack.items():
        if key not in STACK_KEYS:
            raise fail(prefix + key, f"unknown field (known: {', '.join(STACK_KEYS)})")
        if not isinstance(value, str) or not value.strip():
            raise fail(prefix + key, "must be a non-empty string")
    if not _DATE.fullmatch(stack.get("date", "")):
        raise fail(prefix + "date", "is required, as YYYY-MM-DD or YYYY-MM (when the source ran)")
    return dict(stack)


class Records:
    """Evidence records read once per load (a missing or unreadable file is simply absent)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, dict[str, object] | None] = {}

    def get(self, rel: str) -> dict[str, Any] | None:
        """The record at resources/`rel` (evidence/<name>.json), None when missing."""
        if rel not in self._cache:
            # benchmark results live beside resources/, in the source tree's benchmarks/
            path = (self.root.parent if rel.startswith("benchmarks/") else self.root) / rel
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = None
            self._cache[rel] = data if isinstance(data, dict) else None
        return self._cache[rel]


def cited_records(texts: Iterable[str], runs: Iterable[str] = ()) -> list[str]:
    """The record paths (evidence/<name>.json) named in `runs` and in the texts, in order."""
    out: list[str] = []
    found = (a or b for t in texts for a, b in RECORD.findall(t))
    for rel in [*runs, *found]:
        if rel not in out:
            out.append(rel)
    return out


def cited_refs(texts: Iterable[str]) -> list[str]:
    """The owner/repo#N refs named in the texts, in order."""
    out: list[str] = []
    for ref in (m for t in texts for m in REF.findall(t)):
        if ref not in out:
            out.append(ref)
    return out


def _scopes(
    texts: tuple[str, ...], runs: tuple[str, ...], entry: Entry, records: Records
) -> tuple[Scope, ...]:
    """Measured scopes (records) first, then the stacks of the sources the texts cite."""
    out: list[Scope] = []
    for rel in cited_records(texts, runs):
        record = records.get(rel)
        if record is not None:
            out.append(record_scope(rel, record))
    joined = " ".join(texts)
    for cite in entry.citations:
        scope = citation_scope(cite)
        if scope is not None and _mentions(joined, cite):
            out.append(scope)
    return tuple(out)


def _mentions(text: str, cite: Citation) -> bool:
    """Whether evidence text cites `cite`: its owner/repo#N ref, its URL or its doc title."""
    if REF.fullmatch(cite.ref):
        return cite.ref in cited_refs([text])
    return cite.ref in text or bool(cite.url and cite.url in text)


def with_scopes(entry: Entry, evidence_root: Path, records: Records | None = None) -> Entry:
    """`entry` with the scope of every verdict derived (workarounds, dead ends, seed claims)."""
    records = records or Records(evidence_root)

    def item(work: Workaround) -> Workaround:
        return replace(work, scopes=_scopes(work.evidence, work.runs, entry, records))

    def claim(seed: SeedClaim) -> SeedClaim:
        return replace(seed, scopes=_scopes((seed.evidence,), (), entry, records))

    return replace(
        entry,
        workarounds=tuple(item(w) for w in entry.workarounds),
        dead_ends=tuple(item(d) for d in entry.dead_ends),
        seed_claims=tuple(claim(c) for c in entry.seed_claims),
    )


def _major_minor(version: str) -> tuple[int, int] | None:
    found = _VERSION.match(version.strip())
    if not found:
        return None
    return int(found.group(1)), int(found.group(2) or 0)


def differences(scope: Scope, user: Mapping[str, str]) -> list[str]:
    """How the user's stack (`torch`, `cuda`, `cudnn` versions) differs from `scope` in a way
    that matters: another cuDNN or CUDA major version, an older torch."""
    out = []
    theirs, ours = _major_minor(user.get("cudnn", "")), _major_minor(scope.cudnn)
    if theirs and ours and theirs[0] != ours[0]:
        out.append(f"your cuDNN {user['cudnn']} is another major version than cuDNN {scope.cudnn}")
    theirs, ours = _major_minor(user.get("cuda", "")), _major_minor(scope.cuda)
    if theirs and ours and theirs[0] != ours[0]:
        out.append(f"your CUDA {user['cuda']} is another major version than CUDA {scope.cuda}")
    theirs, ours = _major_minor(user.get("torch", "")), _major_minor(scope.torch)
    if theirs and ours and theirs < ours:
        out.append(
            f"your torch {short_version(user['torch'])} is older than torch "
            f"{short_version(scope.torch)}"
        )
    return out
