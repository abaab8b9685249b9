"""Deep, huge and special inputs, and pack regexes, generated at random.

- JSON nested up to thousands of levels (lists and objects mixed, brackets and escapes inside
  strings), placed anywhere in a real report or environment: the nesting check agrees with the
  real depth, and every loader gives the data or one InputError line, never RecursionError.
- Special files (FIFOs, devices, sockets, folders, links to them) handed to every reader: one
  line, at once.
- Pack signatures built from a grammar of nested repeats, alternations, lookarounds and
  classes: whatever the check accepts matches adversarial lines in bounded time, on RE2 for a
  pack and on Python's re for the bundled KB.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.boundedio import DEFAULT_MAX_DEPTH, json_depth_exceeds, loads_json, read_bytes, read_tail
from core.errors import InputError, UsageError
from core.kb.saferegex import check_signature, compile_signature

from ._kit import FUZZ, JSON, TEXT, no_hang, paths

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

DATA = Path(__file__).resolve().parents[2] / "data"
ENV = json.loads((DATA / "fleet" / "nodes" / "gpu01.json").read_text())
BRACKETY = st.sampled_from(['"[[["', '"]]]"', '"\\\\"', '"\\"["', '"{\\"a\\": ["', '"a\\\\\\"]"'])


def depth_of(value: Any) -> int:
    """The real nesting depth, iteratively (a recursive walk would be the bug under test)."""
    best, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            best = max(best, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return best


@st.composite
def nested(draw: st.DrawFn) -> tuple[Any, int]:
    """A value nested `levels` deep (lists and objects mixed), and that depth."""
    levels = draw(st.one_of(st.integers(1, 80), st.integers(60, 70), st.integers(80, 5000)))
    value: Any = draw(JSON.filter(lambda v: not isinstance(v, (list, dict))))
    kinds = draw(st.lists(st.sampled_from(["list", "pair", "object"]), min_size=1, max_size=8))
    for level in range(levels):
        kind = kinds[level % len(kinds)]
        if kind == "list":
            value = [value]
        elif kind == "pair":
            value = [draw(st.integers()), value]
        else:
            value = {draw(TEXT): value}
    return value, levels


def dump(value: Any) -> str:
    """json.dumps without recursion limits: built from the inside out."""
    out, stack = [], [(value, False)]
    while stack:
        item, closing = stack.pop()
        if closing:
            out.append(item)
        elif isinstance(item, list):
            stack.append(("]", True))
            for i, child in reversed(list(enumerate(item))):
                stack.append((child, False))
                if i:
                    stack.append((", ", True))
            out.append("[")
        elif isinstance(item, dict):
            stack.append(("}", True))
            for i, (key, child) in reversed(list(enumerate(item.items()))):
                stack.append((child, False))
                stack.append((json.dumps(key) + ": ", True))
                if i:
                    stack.append((", ", True))
            out.append("{")
        else:
            out.append(json.dumps(item))
    return "".join(out)


@FUZZ
@given(nested(), st.lists(BRACKETY, max_size=4))
def test_the_nesting_check_agrees_with_the_real_depth(
    case: tuple[Any, int], noise: list[str]
) -> None:
    value, _levels = case
    doc = {"noise": [json.loads(n) for n in noise], "value": value}
    text = dump(doc)
    real = depth_of(doc)
    with no_hang():
        assert json_depth_exceeds(text.encode(), DEFAULT_MAX_DEPTH) == (real > DEFAULT_MAX_DEPTH)
        try:
            assert loads_json(text, name="x.json", what="file") == doc
        except InputError as exc:
            assert real > DEFAULT_MAX_DEPTH and "\n" not in str(exc)
            assert str(exc).startswith("x.json: ") and " at $" in str(exc)


@FUZZ
@given(st.data(), nested(), st.sampled_from(["report", "env", "fleet"]))
def test_deep_values_anywhere_in_real_files_are_one_line(
    data: st.DataObject, case: tuple[Any, int], kind: str
) -> None:
    from core.env.saved import load_saved
    from core.fleet.saved import load_fleet
    from core.report import load_report

    value, _levels = case
    base: Any = {"kind": "cuda-clinic-report", "environment": ENV} if kind == "report" else ENV
    doc = json.loads(json.dumps(base))
    where = data.draw(st.sampled_from([p for p in paths(doc) if p]))
    parent = doc
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    with tempfile.TemporaryDirectory() as tmp, no_hang():
        file = Path(tmp) / "node01.json"
        file.write_text(dump(doc))
        try:
            if kind == "fleet":
                node = load_fleet(tmp).nodes[0]
                assert node.ok or "\n" not in node.reason
            elif kind == "env":
                load_saved(file)
            else:
                load_report(file)
        except UsageError as exc:  # InputError included: one line naming the file
            assert "\n" not in str(exc) and str(file) in str(exc)


@FUZZ
@given(st.integers(1, 200_000), st.sampled_from(["[", '{"a":', '[{"b": [']), TEXT)
def test_unbalanced_brackets_of_any_length_are_one_line(n: int, opener: str, tail: str) -> None:
    text = opener * (n // len(opener) + 1) + tail
    with no_hang():
        with pytest.raises(InputError) as exc:
            loads_json(text, name="deep.json", what="file")
        assert "\n" not in str(exc.value)


def special_files(tmp: Path) -> dict[str, Path]:
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    sock = tmp / "sock.json"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    server.close()
    folder = tmp / "folder.json"
    folder.mkdir()
    to_zero = tmp / "zero.json"
    to_zero.symlink_to("/dev/zero")
    to_fifo = tmp / "fifo-link.json"
    to_fifo.symlink_to(fifo)
    dangling = tmp / "dangling.json"
    dangling.symlink_to(tmp / "nothing")
    return {
        "fifo": fifo,
        "socket": sock,
        "folder": folder,
        "dev-zero": Path("/dev/zero"),
        "link-to-zero": to_zero,
        "link-to-fifo": to_fifo,
        "dangling": dangling,
    }


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_every_reader_refuses_special_files_at_once(tmp_path: Path) -> None:
    from core.env.saved import load_saved
    from core.fleet.collect import read_hostfile
    from core.kb.schema import parse_entry
    from core.report import load_report

    readers = {
        "json": lambda p: read_bytes(p, what="JSON file"),
        "report": load_report,
        "env": load_saved,
        "hostfile": read_hostfile,
        "kb entry": lambda p: parse_entry(p, p.parent),
        "log (not a FIFO)": lambda p: read_tail(p, 1 << 20) if "fifo" not in p.name else None,
    }
    tried = 0
    for name, path in special_files(tmp_path).items():
        for reader_name, reader in readers.items():
            start = time.perf_counter()
            with no_hang(5):
                try:
                    reader(path)
                except Exception as exc:  # the type is checked below
                    assert isinstance(exc, (UsageError, Exception)) and "\n" not in str(exc)
                    assert not isinstance(exc, (RecursionError, MemoryError, TimeoutError)), (
                        name,
                        reader_name,
                    )
                    if reader_name != "kb entry":
                        assert isinstance(exc, UsageError), (name, reader_name, repr(exc))
                else:
                    assert reader_name == "log (not a FIFO)" and "fifo" in path.name, (
                        name,
                        reader_name,
                    )
            assert time.perf_counter() - start < 3, (name, reader_name)
            tried += 1
    assert tried == 7 * 6


ATOMS = ["a", "b", "ab", "a?", ".", r"\w", r"\d", "[ab]", r"\s", "x"]


@st.composite
def regexes(draw: st.DrawFn, depth: int = 0) -> str:
    """A random signature built from atoms, groups, repeats, alternations and lookarounds."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth < 3 and draw(st.booleans()):
            inner = draw(regexes(depth + 1))
            shape = draw(st.sampled_from(["(?:%s)", "(%s)", "(?:%s|%s)", "(?=%s)", "(?!%s)"]))
            atom = shape.replace("%s", inner, 1).replace("%s", draw(st.sampled_from(ATOMS)))
        else:
            atom = draw(st.sampled_from(ATOMS))
        parts.append(atom + draw(st.sampled_from(["", "", "+", "*", "?", "{1,3}", "{2}"])))
    return "".join(parts)


def attacks(n: int) -> list[str]:
    """Lines that make backtracking engines explode on nested or overlapping repeats."""
    return ["a" * n + "!", "ab" * (n // 2) + "!", "a1 " * (n // 3) + "!", "x" + "a" * n, " " * n]


@FUZZ
@given(regexes())
def test_accepted_pack_regexes_match_adversarial_lines_in_bounded_time(body: str) -> None:
    pattern = f"PACKERROR {body}$"
    try:
        re.compile(pattern)
    except re.error:
        return
    for user in (True, False):
        if check_signature(pattern, user) is not None:
            continue  # refused: kb validate --pack says so, the loader skips it
        compiled = compile_signature(pattern, user)
        # 60 characters: exponential backtracking never ends (2^60 steps), a quadratic one
        # (adjacent repeats, which the check allows) takes microseconds. On RE2 also 30,000.
        lines = attacks(60) + (attacks(30_000) if not isinstance(compiled, re.Pattern) else [])
        for line in lines:
            start = time.perf_counter()
            with no_hang(10):
                compiled.search("PACKERROR " + line)
            assert time.perf_counter() - start < 2.0, (pattern, user, line[:20], len(line))
