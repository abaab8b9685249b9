"""The KB loader fed mangled entry files, the matcher fed any text: the loader reports each bad
file in one line naming file and field and keeps the good ones; the matcher answers for any
input in bounded time. Neither raises anything but KBError, neither hangs."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import KBError
from core.kb import match, open_kb
from core.kb.loader import default_kb_dir, load_dir
from core.kb.schema import parse_entry

from ._kit import FUZZ, TEXT, no_hang

# A failing example can be a 30 kB report: its repr must not turn into a second error.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

SOURCE = default_kb_dir()
FILES = sorted(p for p in SOURCE.rglob("*.md") if p.name.lower() != "readme.md")

# TOML values of every kind, well-formed or not, to put after a `key =`.
_VALUES = st.sampled_from(
    [
        '""',
        '"x"',
        "1",
        "-0.5",
        "true",
        "[]",
        '["a", 1]',
        "[[]]",
        "{a = 1}",
        "'''\n",
        '"unterminated',
        "[",
        "'(?P<'",
        "'.*'",
        '"^$"',
        "'(a+)+$'",
        "nan",
        "1979-05-27",
    ]
) | TEXT.map(repr)


@st.composite
def mangled(draw: st.DrawFn) -> tuple[str, str]:
    """(relative path, text) of a real entry file with a few edits."""
    path = draw(st.sampled_from(FILES))
    lines = path.read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        op = draw(st.sampled_from(["value", "delete", "duplicate", "insert", "truncate"]))
        if not lines:
            lines = [draw(TEXT)]
        elif op == "value" and " = " in lines[i]:
            lines[i] = lines[i].split(" = ", 1)[0] + " = " + draw(_VALUES)
        elif op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "insert":
            lines.insert(i, draw(TEXT))
        else:
            lines = lines[:i]
    return path.relative_to(SOURCE).as_posix(), "\n".join(lines) + "\n"


@FUZZ
@given(edits=st.lists(mangled(), min_size=1, max_size=3, unique_by=lambda e: e[0]))
def test_mangled_entry_files_are_reported_in_one_line_and_the_rest_load(
    edits: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "kb"
        shutil.copytree(SOURCE, root)
        for rel, text in edits:
            (root / rel).write_text(text, encoding="utf-8")
        with no_hang():
            result = load_dir(root)
            for rel, _ in edits:
                try:
                    parse_entry(root / rel, root)
                except KBError as exc:
                    assert "\n" not in str(exc).strip() and "field '" in str(exc)
    assert all("\n" not in e and "field '" in e for e in result.errors), result.errors
    untouched = len(FILES) - len(edits)
    # every file not edited still loads (a broken link to an edited one may drop its entry)
    assert len(result.entries) + len(result.errors) >= untouched


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    return open_kb()


def _fragments() -> list[str]:
    out = []
    for path in FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip().startswith(("'", '"')) and len(line) < 200:
                out.append(line.strip().strip(",").strip("'\""))
    return out


FRAGMENTS = _fragments()


@FUZZ
@given(
    parts=st.lists(
        TEXT | st.sampled_from(FRAGMENTS) | st.integers(0, 3000).map(lambda n: "A" * n),
        max_size=12,
    ),
    sep=st.sampled_from(["\n", " ", "", "\r\n", "\x00"]),
)
def test_the_matcher_answers_any_text_quickly(kb, parts: list[str], sep: str) -> None:  # type: ignore[no-untyped-def]
    text = sep.join(parts)
    with no_hang(5):
        report = match(text, kb)
    data = report.to_dict()
    for m in data["matches"]:
        assert 0.0 <= m["confidence"] <= 1.0
