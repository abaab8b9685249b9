"""README's list of what the report removes is exactly what the redaction tests plant."""

from __future__ import annotations

import re
from pathlib import Path

from tests.planting import KINDS

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_lists_exactly_the_planted_kinds() -> None:
    text = README.read_text(encoding="utf-8")
    start, end = text.index("<!-- redaction-kinds -->"), text.index("<!-- /redaction-kinds -->")
    listed = re.findall(r"`([a-z0-9-]+)`", text[start:end])
    assert len(listed) == len(set(listed)), "a kind is listed twice"
    assert set(listed) == set(KINDS), {
        "in README only": sorted(set(listed) - set(KINDS)),
        "planted only": sorted(set(KINDS) - set(listed)),
    }
