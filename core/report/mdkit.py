"""Markdown building blocks: document parts, tables, safe inline text, size trimming."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_MIN_KEEP = 400  # a trimmed block keeps at least this much, else it is dropped whole


@dataclass
class Part:
    """One chunk of the document; `code` chunks can be shortened to head + tail."""

    text: str
    name: str = ""
    lang: str = ""
    code: bool = False
    trimmed: str = ""  # what was cut, for the note at the top

    def render(self) -> str:
        """The part's Markdown (code fenced)."""
        if not self.code:
            return self.text
        marks = fence(self.text)
        return f"{marks}{self.lang}\n{self.text}\n{marks}\n"


def details(add: Any, summary: str, body: str, lang: str, name: str) -> None:
    """A folded code block: `<details>` with `summary`, the body fenced as `lang`."""
    add(Part(f"\n<details><summary>{inline(summary)}</summary>\n\n"))
    add(Part(body.rstrip("\n"), name=name, lang=lang, code=True))
    add(Part("</details>\n"))


def trim(parts: list[Part], budget: int) -> list[str]:
    """Shorten the biggest code blocks (head + tail) until the document fits `budget`."""
    notes: list[str] = []
    total = sum(len(p.render()) for p in parts)
    while total > budget:
        code = [p for p in parts if p.code and not p.trimmed]
        if not code:
            break
        part = max(code, key=lambda p: len(p.text))
        before = len(part.render())
        keep = max(before - (total - budget) - 200, 0)
        part.trimmed = shorten(part, keep)
        notes.append(part.trimmed)
        total += len(part.render()) - before
    return notes


def shorten(part: Part, keep: int) -> str:
    """Cut a code part to about `keep` characters (head and tail); say what was cut."""
    lines = part.text.splitlines()
    if keep < _MIN_KEEP:
        part.text = f"… {len(lines)} lines omitted to fit the size limit …"
        return f"{part.name} omitted ({len(lines)} lines)"
    head: list[str] = []
    tail: list[str] = []
    used, i, j = 0, 0, len(lines) - 1
    while i <= j:  # alternate head and tail: the first and the last lines matter most
        line = lines[i] if len(head) <= len(tail) else lines[j]
        if used + len(line) + 1 > keep:
            break
        used += len(line) + 1
        if len(head) <= len(tail):
            head.append(line)
            i += 1
        else:
            tail.insert(0, line)
            j -= 1
    omitted = len(lines) - len(head) - len(tail)
    part.text = "\n".join([*head, f"… {omitted} lines omitted to fit the size limit …", *tail])
    return f"{part.name} cut to its first {len(head)} and last {len(tail)} of {len(lines)} lines"


def fence(body: str) -> str:
    """A code fence longer than any backtick run inside `body`."""
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    return "`" * max(3, longest + 1)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub table (cells must already be inline-safe)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub table of plain values (each cell made inline-safe)."""
    return table(header, [[inline(c) for c in row] for row in rows])


def inline(value: Any) -> str:
    """Text safe inside a Markdown table cell or paragraph (no HTML, no pipes, one line)."""
    s = "" if value is None else str(value)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def prose(value: Any) -> str:
    """Like `inline`, but `code spans` inside the text are kept as they are (GitHub shows a
    code span literally, so an escaped `<` would read `&lt;` there)."""
    parts = re.split(r"(`[^`\n]+`)", "" if value is None else str(value))
    return "".join(
        part.replace("|", "\\|") if i % 2 else inline(part) for i, part in enumerate(parts)
    )


def code_inline(value: Any) -> str:
    """Text safe inside an inline code span of a table cell (one line, at most 160 chars)."""
    return str(value).replace("`", "'").replace("|", "\\|").replace("\n", " ")[:160]
