"""The answer as text for the command line (match, try, wizard): answer first, four parts."""

from __future__ import annotations

import textwrap

from core.answer.model import STATUS_WORDS, Answer, AnswerFix
from core.kb.render import USER_LABEL as USER_ENTRY

WIDTH = 100
LABEL = 15  # "What happened: " and the other labels are padded to this width
MAX_ALSO = 3


def _block(label: str, text: str) -> list[str]:
    pad = " " * LABEL
    head = f"{label:<{LABEL}}"
    lines = textwrap.wrap(text, WIDTH, initial_indent=head, subsequent_indent=pad)
    return lines or [head.rstrip()]


def _code(change: str) -> list[str]:
    return [" " * (LABEL + 2) + line for line in change.strip().splitlines()]


def status_text(fix: AnswerFix) -> str:
    """How sure, in words: the fix's own sentence, or its status word."""
    return fix.sure or STATUS_WORDS.get(fix.status, fix.status)


def where_text(answer: Answer) -> str:
    """`model.py:37 in forward: x = self.embed(input_ids)` ('' without a frame)."""
    w = answer.where
    if w is None:
        return ""
    text = f"{w.file}:{w.line}"
    text += f" in {w.function}" if w.function else ""
    return text + (f": {w.code}" if w.code else "")


def render_answer(answer: Answer) -> str:
    """The answer as a few labelled blocks."""
    if answer.entry is None:
        head = f"Answer: {answer.title}" if answer.title else "Answer: no confident match"
        out = [head, *_block("What happened:", answer.cause.text)]
        if answer.where is not None:
            out += _block("Your line:", where_text(answer))
        if answer.next is not None:
            out += _block("Next:", f"{answer.next.command}  ({answer.next.why})")
        return "\n".join(out) + "\n"
    mine = f"  [{USER_ENTRY}]" if answer.origin == "user" else ""
    out = [f"Answer: {answer.title}  [{answer.entry}, confidence {answer.confidence:.2f}]{mine}"]
    if answer.note:
        out += _block("Note:", answer.note)
    out += _block("What happened:", answer.cause.text)
    ev = answer.cause.evidence
    if ev is not None:
        out += _block("", f"(line {ev.line}: {ev.text[:200]})")
    if answer.where is not None:
        out += _block("Your line:", where_text(answer))
        if answer.where.note:
            out += _block("", f"({answer.where.note})")
    elif answer.basis == "log":
        out += _block("Your line:", "the log shows no frame of your own code")
    best = answer.best
    if best is not None:
        out += _block("The fix:", f"{best.title} [{status_text(best)}]")
        out += _code(best.change)
        for fix in answer.fixes[1 : 1 + MAX_ALSO]:
            out += _block("Also:", f"{fix.title} [{status_text(fix)}]")
    if answer.next is not None:
        out += _block("Verify here:", answer.next.command)
        blocked = f" Not on this machine: {answer.next.blocked}." if answer.next.blocked else ""
        out += _block("", f"({answer.next.why.rstrip('.')}.{blocked})")
    return "\n".join(out) + "\n"
