"""Read the specific cause from a log: which op, which limit, which numbers (resources/answer).

Rules are data (`resources/answer/causes.toml`); a few need a calculation (`derive`): sizes for
an out-of-memory error, the CUDA version behind a driver number. Patterns are the KB's own
style of regex over single log lines, and the log is bounded by the matcher before it gets here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from core.errors import KBError
from core.paths import resources_dir

_FIELDS = {
    "id",
    "entries",
    "pattern",
    "also",
    "frames",
    "text",
    "fix_title",
    "fix",
    "fix_kind",
    "derive",
    "example",
    "refines",
}
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
_SLOT = re.compile(r"\{(\w+)\}")
MAX_LINE = 4000  # a pathological line is cut before a pattern sees it


@dataclass(frozen=True)
class Rule:
    """One specific cause of one or more KB entries."""

    id: str
    entries: tuple[str, ...]
    text: str
    pattern: re.Pattern[str] | None = None
    also: tuple[re.Pattern[str], ...] = ()
    frames: re.Pattern[str] | None = None
    fix_title: str = ""
    fix: str = ""
    fix_kind: str = "code"
    derive: str = ""
    example: str = ""
    refines: str = ""  # the KB workaround (step or title) this fix refines: its verdict holds


@dataclass
class Found:
    """A rule that fired: the values it read and the line that proves it."""

    rule: Rule
    values: dict[str, str]
    line: int  # 1-based; 0 when the evidence is the traceback, not a line
    text: str
    cause_id: str = ""
    prefer: str = ""  # a KB fix id or workaround title to lead with (from `derive`)
    extra: dict[str, object] = field(default_factory=dict)

    def fill(self, template: str) -> str:
        """`template` with {values}; a [part] with an empty value in it is dropped."""

        def optional(m: re.Match[str]) -> str:
            names = _SLOT.findall(m.group(1))
            if not names:  # plain brackets in the text: "[0, 1]", "tensor[idx]"
                return m.group(0)
            return m.group(1) if all(self.values.get(n) for n in names) else ""

        text = _OPTIONAL.sub(optional, template)
        return _SLOT.sub(lambda m: self.values.get(m.group(1), ""), text)


def _compile(value: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(value)
    except re.error as exc:
        raise KBError(f"{where}: not a valid regex: {exc}") from None


def parse_rules(data: dict[str, Any], label: str) -> tuple[Rule, ...]:
    """Validate the rules file's content (KBError naming the rule and field)."""
    rules = []
    for i, raw in enumerate(data.get("cause") or []):
        where = f"{label}: cause[{i}]"
        if not isinstance(raw, dict):
            raise KBError(f"{where}: must be a table")
        unknown = set(raw) - _FIELDS
        if unknown:
            raise KBError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        for name in ("id", "entries", "text", "example"):
            if not raw.get(name):
                raise KBError(f"{where}.{name}: is required")
        if not raw.get("pattern") and not raw.get("frames"):
            raise KBError(f"{where}: needs a pattern or frames")
        pattern = raw.get("pattern")
        frames = raw.get("frames")
        rules.append(
            Rule(
                id=str(raw["id"]),
                entries=tuple(raw["entries"]),
                text=str(raw["text"]),
                pattern=_compile(pattern, f"{where}.pattern") if pattern else None,
                also=tuple(_compile(p, f"{where}.also") for p in raw.get("also") or []),
                frames=_compile(frames, f"{where}.frames") if frames else None,
                fix_title=str(raw.get("fix_title", "")),
                fix=str(raw.get("fix", "")),
                fix_kind=str(raw.get("fix_kind", "code")),
                derive=str(raw.get("derive", "")),
                example=str(raw["example"]),
                refines=str(raw.get("refines", "")),
            )
        )
    return tuple(rules)


def rules_path() -> Path:
    """The bundled rules file."""
    return resources_dir() / "answer" / "causes.toml"


@cache
def load_rules(path: Path | None = None) -> tuple[Rule, ...]:
    """The rules (read once per process)."""
    source = path or rules_path()
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KBError(f"{source}: cannot be read: {exc}") from None
    return parse_rules(data, source.name)


def find_cause(
    lines: Sequence[str], entry_id: str, frame_functions: Sequence[str] = ()
) -> Found | None:
    """The first rule of `entry_id` whose pattern matches a line (the last such line wins: the
    headline error is at the end), else whose `frames` matches a traceback function."""
    rules = [r for r in load_rules() if entry_id in r.entries]
    for rule in rules:
        if rule.pattern is None:
            continue
        for number in range(len(lines) - 1, -1, -1):
            hit = rule.pattern.search(lines[number][:MAX_LINE])
            if hit:
                return _found(rule, hit, number, lines)
    for rule in rules:
        if rule.frames is not None and any(rule.frames.search(f) for f in frame_functions):
            return _finish(Found(rule, {}, 0, ""))
    return None


def _found(rule: Rule, hit: re.Match[str], number: int, lines: Sequence[str]) -> Found:
    values = {k: v for k, v in hit.groupdict().items() if v}
    window = lines[max(0, number - 3) : number + 6]  # the message's own lines, not the whole log
    for extra in rule.also:
        for text in window:
            more = extra.search(text[:MAX_LINE])
            if more:
                for key, value in more.groupdict().items():
                    if value and key not in values:
                        values[key] = value.strip()
    return _finish(Found(rule, values, number + 1, lines[number].strip()[:300]))


def _finish(found: Found) -> Found:
    derive = DERIVE.get(found.rule.derive)
    if derive is not None:
        derive(found)
    return found


def _bytes(size: str) -> float | None:
    """'1.70 GiB' -> bytes (None when it cannot be read)."""
    m = re.fullmatch(r"([\d.]+) ?([KMGT]?)i?B|([\d.]+) bytes", size.strip())
    if not m:
        return None
    if m.group(3):
        return float(m.group(3))
    scale = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[m.group(2)]
    return float(m.group(1)) * scale


def _oom(found: Found) -> None:
    """Which limit an out-of-memory error hit, from its own numbers."""
    v = found.values
    for new, old in (("free", "free_old"), ("allocated", "allocated_old")):
        if not v.get(new) and v.get(old):
            v[new] = v[old]
    requested, free = _bytes(v.get("requested", "")), _bytes(v.get("free", ""))
    unused = _bytes(v.get("unused", ""))
    gpu = f" on GPU {v['gpu']}" if v.get("gpu") else ""
    of_total = f" of {v['total']}" if v.get("total") else ""
    head = f"PyTorch asked for {v.get('requested', 'memory')}{gpu}"
    if requested is not None and free is not None and free >= requested:
        found.cause_id = "oom-not-size"
        v["detail"] = (
            f"{head} while {v['free']}{of_total} was reported free, more than it asked for: "
            "the size was not the limit. Another process taking memory at that moment, or an "
            "earlier error this one masks, is more likely than the batch."
        )
        return
    free_text = f" while only {v['free']}{of_total} was free" if v.get("free") else ""
    if unused is not None and requested is not None and unused >= requested:
        found.cause_id = "oom-fragmentation"
        found.prefer = "expandable-segments"
        v["detail"] = (
            f"{head}{free_text}, yet {v['unused']} was reserved by PyTorch but unallocated: "
            "enough in total, but in pieces too small (fragmentation)."
        )
        return
    who = ""
    if v.get("process"):
        who = f" The process held {v['process']}"
        who += f", {v['allocated']} of it allocated by PyTorch" if v.get("allocated") else ""
        who += "."
    elif v.get("allocated"):
        who = f" {v['allocated']} was already allocated by PyTorch."
    v["detail"] = (
        f"{head}{free_text}: the model, activations and batch do not fit in this GPU's memory.{who}"
    )


def _driver(found: Found) -> None:
    """A driver's CUDA version number (9000, 10020, 12040) as 9.0, 10.2, 12.4."""
    number = int(found.values.get("found", "0") or 0)
    if number >= 1000:
        found.values["driver_cuda"] = f"{number // 1000}.{(number % 1000) // 10}"
    else:
        found.values["driver_cuda"] = "an old CUDA"


def _cudnn_versions(found: Found) -> None:
    """(8, 3, 2) -> 8.3.2."""
    for key in ("compiled", "runtime"):
        if found.values.get(key):
            found.values[key] = ".".join(p.strip() for p in found.values[key].split(","))


DERIVE: dict[str, Callable[[Found], None]] = {
    "oom": _oom,
    "driver": _driver,
    "cudnn_versions": _cudnn_versions,
}


def cause_text(found: Found) -> str:
    """The cause sentence of a fired rule."""
    return found.fill(found.rule.text)
