"""Redacting a whole report model, revealing chosen items again, and preview markers."""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.report.patterns import VERSION_WORDS
from core.report.redact import (
    _SECRET_LABEL,
    Hit,
    JsonPath,
    Redaction,
    Redactor,
    Secrets,
    is_secret_name,
    is_trivial,
)

# Private-use characters wrap each redaction in marked output: OPEN id SEP text CLOSE.
MARK_OPEN, MARK_SEP, MARK_CLOSE = "\ue000", "\ue001", "\ue002"
MARK_RE = re.compile(f"{MARK_OPEN}([^{MARK_SEP}]*){MARK_SEP}([^{MARK_CLOSE}]*){MARK_CLOSE}")
# A cut (Markdown trimming) can leave half a marker behind; these characters are then dropped.
_STRAY = re.compile(f"[{MARK_OPEN}{MARK_SEP}{MARK_CLOSE}]")


@dataclass(frozen=True)
class Mark:
    """Where a redaction sits in rendered plain text (md or json), for the GUI to highlight."""

    redaction_id: str
    start: int
    end: int
    revealed: bool


def redact_report(
    report: Mapping[str, Any], secrets: Secrets | None = None
) -> tuple[dict[str, Any], list[Redaction]]:
    """A redacted deep copy of `report` and every redaction made, in document order."""
    known = secrets if secrets is not None else Secrets.from_system()
    known = copy.deepcopy(known)
    known.add_from(report)
    walker = _Walker(Redactor(known))
    out = walker.walk(report, ())
    return out, walker.redactions


def counts(redactions: Iterable[Redaction]) -> dict[str, int]:
    """How many values were redacted, by kind, most frequent first."""
    return dict(Counter(r.kind for r in redactions).most_common())


class _Walker:
    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.redactions: list[Redaction] = []

    def walk(self, obj: Any, path: JsonPath, key: str | None = None) -> Any:
        if isinstance(obj, Mapping):
            return self._walk_dict(obj, path)
        if isinstance(obj, list | tuple):
            return [self.walk(item, (*path, i), key) for i, item in enumerate(obj)]
        if isinstance(obj, str):
            return self._text(obj, path, key)
        return obj

    def _walk_dict(self, obj: Mapping[str, Any], path: JsonPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        pair_name = obj.get("name") if isinstance(obj.get("value"), str) else None
        row = _version_row(obj)
        for raw_key, value in obj.items():
            key = self._key(str(raw_key), path)
            name = pair_name if raw_key == "value" and isinstance(pair_name, str) else key
            if isinstance(value, str) and _secret_field(name, value):
                out[key] = self._whole(value, (*path, key), name)
            elif _is_number(value) and _secret_field(name, str(value)):
                # "pin": 12345678 is as secret as "pin": "12345678" (found by fuzzing)
                out[key] = self._whole(str(value), (*path, key), name)
            else:
                out[key] = self.walk(
                    value, (*path, key), row if row and raw_key != "field" else key
                )
        return out

    def _key(self, key: str, path: JsonPath) -> str:
        new, spans = self.redactor.redact_text(key)
        for start, end, hit, label in spans:
            self._record(hit, label, (*path, new), (start, end), in_key=True)
        return new

    def _whole(self, value: str, path: JsonPath, name: str) -> str:
        hit = Hit(0, len(value), "env-secret", value, name)
        label = self.redactor.label("env-secret", value, name)
        self._record(hit, label, path, (0, len(label)))
        return label

    def _text(self, text: str, path: JsonPath, key: str | None) -> str:
        new, spans = self.redactor.redact_text(text, key)
        for start, end, hit, label in spans:
            self._record(hit, label, path, (start, end))
        return new

    def _record(
        self, hit: Hit, label: str, path: JsonPath, span: tuple[int, int], in_key: bool = False
    ) -> None:
        rid = f"r{len(self.redactions) + 1}"
        self.redactions.append(
            Redaction(rid, hit.kind, label, hit.value, path, span[0], span[1], in_key=in_key)
        )


def _version_row(obj: Mapping[str, Any]) -> str | None:
    """'version' for a table row whose "field" names a version ({"field": "cuDNN (torch's
    pinned wheel)", "fleet": "9.19.0.56"}): its values are versions, never IPv4 addresses."""
    label = obj.get("field")
    if not isinstance(label, str):
        return None
    bare = re.sub(r"\s*\([^)]*\)", "", label).strip()
    return "version" if bare.lower().endswith("version") or VERSION_WORDS.search(bare) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _secret_field(name: str, value: str) -> bool:
    return is_secret_name(name) and not is_trivial(value) and not _SECRET_LABEL.match(value)


def _by_path(redactions: Iterable[Redaction]) -> dict[JsonPath, list[Redaction]]:
    groups: dict[JsonPath, list[Redaction]] = {}
    for r in redactions:
        if not r.in_key:
            groups.setdefault(r.path, []).append(r)
    return groups


def _rewrite(
    report: Mapping[str, Any],
    redactions: Iterable[Redaction],
    replace: Any,
) -> dict[str, Any]:
    """Copy `report`, rewriting each redacted span with `replace(redaction, label_text)`."""
    out: dict[str, Any] = copy.deepcopy(dict(report))
    for path, items in _by_path(redactions).items():
        parent: Any = out
        try:
            for part in path[:-1]:
                parent = parent[part]
            text = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # the report was edited since it was redacted; skip what moved
        if not isinstance(text, str):
            continue
        for r in sorted(items, key=lambda r: r.start, reverse=True):
            if text[r.start : r.end] == r.label:
                text = text[: r.start] + replace(r) + text[r.end :]
        parent[path[-1]] = text
    return out


def reveal(
    report: Mapping[str, Any], redactions: Iterable[Redaction], ids: Collection[str]
) -> dict[str, Any]:
    """A copy of the redacted `report` with the redactions named in `ids` put back."""
    chosen = [r for r in redactions if r.id in ids]
    return _rewrite(report, chosen, lambda r: r.original)


def mark(
    report: Mapping[str, Any], redactions: Iterable[Redaction], reveal: Collection[str] = ()
) -> dict[str, Any]:
    """A copy with each redaction wrapped in preview markers; ids in `reveal` show the original."""

    def wrap(r: Redaction) -> str:
        shown = r.original if r.id in reveal else r.label
        shown = shown.replace(MARK_OPEN, "").replace(MARK_SEP, "").replace(MARK_CLOSE, "")
        rid = f"+{r.id}" if r.id in reveal else r.id
        return f"{MARK_OPEN}{rid}{MARK_SEP}{shown}{MARK_CLOSE}"

    return _rewrite(report, redactions, wrap)


def strip_marks(text: str) -> tuple[str, list[Mark]]:
    """Remove preview markers from rendered text, returning where each marked item ended up."""
    out: list[str] = []
    marks: list[Mark] = []
    pos = length = 0
    for m in MARK_RE.finditer(text):
        piece = _STRAY.sub("", text[pos : m.start()])
        out.append(piece)
        length += len(piece)
        rid, shown = m.group(1), m.group(2)
        marks.append(Mark(rid.lstrip("+"), length, length + len(shown), rid.startswith("+")))
        out.append(shown)
        length += len(shown)
        pos = m.end()
    out.append(_STRAY.sub("", text[pos:]))
    return "".join(out), marks
