"""Redacting a whole report model, revealing chosen items again, and preview markers."""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.report.hosts import HOST_VALUE
from core.report.names import TRIVIAL_VALUES, is_host_name, is_secret_name, is_trivial
from core.report.patterns import COMMON_HOSTS, VERSION_WORDS
from core.report.redact import SECRET_LABEL, JsonPath, Redaction, Redactor, Secrets

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


class RedactionLog(list[Redaction]):
    """Every redaction of one report, in document order; `counts()` groups them by kind."""

    def counts(self) -> dict[str, int]:
        """How many values were redacted, by kind, most frequent first."""
        return counts(self)


def redact_report(
    report: Mapping[str, Any], secrets: Secrets | None = None
) -> tuple[dict[str, object], RedactionLog]:
    """A redacted copy of `report` and every redaction made, in document order.

    Every string is redacted wherever it sits: values, dict keys, list items (a list of strings
    is also read as one command line, so `["--password", "X"]` loses X). The walk is iterative:
    any depth of nesting is fine."""
    known = secrets if secrets is not None else Secrets.from_system()
    known = copy.deepcopy(known)
    known.add_from(report)
    walker = _Walker(Redactor(known))
    out = walker.walk(report)
    return out, walker.redactions


def counts(redactions: Iterable[Redaction]) -> dict[str, int]:
    """How many values were redacted, by kind, most frequent first."""
    return dict(Counter(r.kind for r in redactions).most_common())


# One unit of work: (source, path, key context, parent container, slot in the parent).
_Task = tuple[Any, JsonPath, "str | None", Any, Any]


class _Walker:
    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.redactions = RedactionLog()

    def walk(self, root: Any) -> Any:
        """A redacted copy of `root`, built with an explicit stack (no recursion)."""
        holder: list[Any] = [None]
        stack: list[_Task] = [(root, (), None, holder, 0)]
        while stack:
            obj, path, key, parent, slot = stack.pop()
            if isinstance(obj, _Entry):
                self._entry(obj, path, parent, stack)
            elif isinstance(obj, Mapping):
                out: dict[str, object] = {}
                parent[slot] = out
                ctx = _DictContext(obj)
                for raw_key, value in reversed(list(obj.items())):
                    stack.append((_Entry(str(raw_key), value, ctx), path, None, out, None))
            elif isinstance(obj, list | tuple):
                if len(obj) >= 2 and all(isinstance(v, str) for v in obj):
                    parent[slot] = self._argv(list(obj), path)
                    continue
                items: list[Any] = [None] * len(obj)
                parent[slot] = items
                for i in range(len(obj) - 1, -1, -1):
                    stack.append((obj[i], (*path, i), key, items, i))
            elif isinstance(obj, str):
                parent[slot] = self._text(obj, path, key)
            else:
                parent[slot] = obj
        return holder[0]

    def _entry(
        self, entry: _Entry, path: JsonPath, out: dict[str, object], stack: list[_Task]
    ) -> None:
        key = self._key(entry.key, path)
        ctx = entry.ctx
        name = ctx.pair_name if entry.key == "value" and ctx.pair_name is not None else key
        value = entry.value
        where = (*path, key)
        if isinstance(value, str) and _secret_field(name, value):
            out[key] = self._whole(value, where, "env-secret", name)
        elif _is_number(value) and _secret_field(name, str(value)):
            # "pin": 12345678 is as secret as "pin": "12345678" (found by fuzzing)
            out[key] = self._whole(str(value), where, "env-secret", name)
        elif isinstance(value, str) and _host_field(name, value):
            kind = self.redactor.known(value) or (
                "node-list" if ("[" in value or "," in value) else "host-name"
            )
            out[key] = self._whole(value, where, kind, "")
        else:
            out[key] = None  # keeps the key's place; the value is filled when its task runs
            child_key = ctx.row if ctx.row and entry.key != "field" else key
            stack.append((value, where, child_key, out, key))

    def _key(self, key: str, path: JsonPath) -> str:
        new, spans = self.redactor.redact_text(key)
        for start, end, hit, label in spans:
            self._record(hit.kind, label, hit.value, (*path, new), (start, end), in_key=True)
        return new

    def _whole(self, value: str, path: JsonPath, kind: str, name: str) -> str:
        label = self.redactor.label(kind, value, name)
        self._record(kind, label, value, path, (0, len(label)))
        return label

    def _text(self, text: str, path: JsonPath, key: str | None) -> str:
        new, spans = self.redactor.redact_text(text, key)
        for start, end, hit, label in spans:
            self._record(hit.kind, label, hit.value, path, (start, end))
        return new

    def _argv(self, items: list[str], path: JsonPath) -> list[str]:
        """A list of strings read as one command line: a flag in one item gives away the value
        in the next (`["--api-key", "X"]`); each item keeps its own place."""
        joined = " ".join(items)
        hits = self.redactor.scan(joined)
        out: list[str] = []
        offset = 0
        for i, item in enumerate(items):
            lo, hi = offset, offset + len(item)
            offset = hi + 1
            pieces: list[str] = []
            pos = 0
            for hit in hits:
                start, end = max(hit.start, lo) - lo, min(hit.end, hi) - lo
                if end <= start:
                    continue
                label = self.redactor.label(hit.kind, hit.value, hit.name)
                pieces.append(item[pos:start])
                at = sum(len(p) for p in pieces)
                pieces.append(label)
                self._record(hit.kind, label, item[start:end], (*path, i), (at, at + len(label)))
                pos = end
            pieces.append(item[pos:])
            out.append("".join(pieces))
        return out

    def _record(
        self,
        kind: str,
        label: str,
        original: str,
        path: JsonPath,
        span: tuple[int, int],
        *,
        in_key: bool = False,
    ) -> None:
        rid = f"r{len(self.redactions) + 1}"
        self.redactions.append(
            Redaction(rid, kind, label, original, path, span[0], span[1], in_key=in_key)
        )


@dataclass(frozen=True)
class _DictContext:
    """What a dict says about its values: a name/value pair's name, a version row."""

    pair_name: str | None
    row: str | None

    def __init__(self, obj: Mapping[str, Any]) -> None:
        name = obj.get("name") if isinstance(obj.get("value"), str) else None
        object.__setattr__(self, "pair_name", name if isinstance(name, str) else None)
        object.__setattr__(self, "row", _version_row(obj))


@dataclass(frozen=True)
class _Entry:
    """One key and value of a dict, redacted when its turn on the stack comes."""

    key: str
    value: Any
    ctx: _DictContext


def _version_row(obj: Mapping[str, Any]) -> str | None:
    """'version' for a table row whose "field" names a version ({"field": "cuDNN (torch's
    pinned wheel)", "fleet": "9.19.0.56"}): its values are versions, never IPv4 addresses."""
    label = obj.get("field")
    if not isinstance(label, str):
        return None
    bare = label[:200].split("(", 1)[0].strip().lower()
    last = bare.rsplit(" ", 1)[-1] if bare else ""
    words = (*VERSION_WORDS, "pytorch")
    return "version" if bare.endswith("version") or last in words or bare in words else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _secret_field(name: str, value: str) -> bool:
    return is_secret_name(name) and not is_trivial(value) and not SECRET_LABEL.match(value)


def _host_field(name: str, value: str) -> bool:
    """A `*HOST*` / `*ADDR*` / `*NODE*` field holding a machine name (not a number, a path)."""
    if not is_host_name(name) or value.lower() in TRIVIAL_VALUES or len(value) < 2:
        return False
    return HOST_VALUE.fullmatch(value) is not None and value.lower() not in COMMON_HOSTS


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
) -> dict[str, object]:
    """Copy `report`, rewriting each redacted span with `replace(redaction, label_text)`."""
    out: dict[str, object] = copy.deepcopy(dict(report))
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
) -> dict[str, object]:
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
