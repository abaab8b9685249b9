"""Wrapped app messages: an app's own wording of an error an entry explains (docs/kb-format.md).

Diffusion front ends and launchers often catch torch's error and print their own sentence
("Torch is not able to use GPU; add --skip-torch-cuda-test ..."). An entry lists those rewordings
in `[[wrapped]]`; the matcher treats each pattern as a signature of the entry and, when one is
what matched, says which app reworded the error and what its sentence means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.kb.tables import check_table

MAIN_KINDS = ("signature", "wrapper")  # signature rows that can make an entry a candidate
_FIELDS = ("app", "pattern", "means", "source")
_TYPES = dict.fromkeys(_FIELDS, str)


@dataclass(frozen=True)
class Wrapped:
    """One app's rewording: the app, the regex of its message, what it means, where it is from."""

    app: str
    pattern: str
    means: str
    source: str  # the app's source file or a public thread that shows the message

    def note(self) -> str:
        """The one line a match carries when this rewording is what matched."""
        return f"reworded by {self.app}: {self.means}"


def parse_wrapped(items: list[Any], fail: Any) -> tuple[Wrapped, ...]:
    """Validate an entry's `wrapped` tables; `fail(field, problem)` builds the one-line KBError."""
    result = []
    for i, raw in enumerate(items):
        name = f"wrapped[{i}]"
        check_table(raw, _TYPES, f"{name}.", fail)
        for key in _FIELDS:
            if not str(raw.get(key, "")).strip():
                raise fail(f"{name}.{key}", "is required")
        try:
            regex = re.compile(raw["pattern"], re.IGNORECASE)
        except re.error as exc:
            raise fail(f"{name}.pattern", f"is not a valid regex: {exc}") from None
        if regex.search("") is not None:
            raise fail(f"{name}.pattern", "matches an empty line, so it would match any text")
        fields = {key: raw[key] if key == "pattern" else raw[key].strip() for key in _FIELDS}
        result.append(Wrapped(**fields))
    return tuple(result)
