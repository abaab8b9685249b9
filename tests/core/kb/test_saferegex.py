"""Matching in bounded time: a pack's signature runs on RE2 (linear) or is refused when it could
backtrack catastrophically; every bundled signature, whatever resources/kb holds when the tests
run, passes the same check."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from core.kb.loader import default_kb_dir, load_entries
from core.kb.saferegex import backtracking_risk, check_signature, compile_re2, compile_signature
from tests.core.clirun import run_core

ENTRY = """+++
id = "cuda/{slug}"
title = "Lab: {slug}"
domain = "cuda"
category = "memory"
summary = "A lab error."
signatures = [
  '{signature}',
]
confidence = "high"

[[workarounds]]
title = "Restart the job"
verdict = "unverified"

[[citations]]
ref = "lab wiki"
+++

Body.
"""


def write_pack(root: Path, signatures: dict[str, str]) -> Path:
    (root / "cuda").mkdir(parents=True)
    for slug, signature in signatures.items():
        (root / "cuda" / f"{slug}.md").write_text(ENTRY.format(slug=slug, signature=signature))
    return root


def cli(*args: str, stdin: str | None = None, timeout: float = 120) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    done = run_core(*args, stdin=stdin, timeout=timeout)
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


def test_every_bundled_signature_runs_in_bounded_time() -> None:
    entries = load_entries(default_kb_dir())
    checked = on_re2 = 0
    refused = []
    for entry in entries:
        for sig in (*entry.signatures, *entry.context_signatures):
            checked += 1
            on_re2 += compile_re2(sig) is not None
            if backtracking_risk(sig):
                refused.append(f"{entry.id}: {sig!r}")
    assert refused == [], refused
    assert checked >= 300  # the whole KB was read, not an empty folder
    # Most also compile on RE2; the rest use lookaround, which the shape check has cleared.
    assert on_re2 >= checked - 10, (on_re2, checked)


def test_the_shape_check_refuses_what_backtracks_and_keeps_what_does_not() -> None:
    # (b*ab*)+: found by the pack-regex fuzzer (seed 2): the b's between two a's can end one
    # pass or start the next, 2^30 ways on "ab" * 30
    for risky in (r"(a+)+$", r"(\w+\s?)*$", r"(a|ab)*c", r"(?=(x+)+y)z", r"(.\d+)*!", r"(b*ab*)+!"):
        assert backtracking_risk(risky), risky
    for fine in (r"(\.\d+)*", r"(?:x\d+)+", r"foo(?:bar)+", r"CUDNN_STATUS_(?!BAD)\w+", r"a{2,5}b"):
        assert backtracking_risk(fine) is None, fine
    # A pack's nested pattern is fine on RE2; with lookaround RE2 cannot run it: refused.
    assert check_signature(r"PACKERROR (a+)+$", user=True) is None
    assert "RE2 (linear time) cannot run it" in str(check_signature(r"(?=(a+)+)x", user=True))
    assert check_signature(r"(a+)+$", user=False)  # never on Python's re


def test_a_catastrophic_pack_signature_matches_in_linear_time(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", {"lab-nested": r"PACKERROR (a+)+$"})
    code, out, err, _s = cli("kb", "validate", "--pack", str(pack))
    assert code == 0, out + err
    line = "PACKERROR " + "a" * 56 + "!"  # the 56 characters: minutes on Python's re
    compiled = compile_signature(r"PACKERROR (a+)+$", user=True)
    start = time.perf_counter()
    assert compiled.search(line * 200) is None
    assert time.perf_counter() - start < 1
    code, out, err, seconds = cli("match", "--kb-extra", str(pack), "-", stdin=line + "\n")
    assert seconds < 60 and "Traceback" not in err, err
    code, out, _e, _s = cli("match", "--kb-extra", str(pack), "-", stdin="PACKERROR aaaa\n")
    assert code == 0 and "cuda/lab-nested" in out


def test_a_pack_signature_re2_cannot_run_and_that_backtracks_is_refused_and_skipped(
    tmp_path: Path,
) -> None:
    pack = write_pack(
        tmp_path / "pack",
        {"lab-bad": r"(?=(a+)+!)PACKERROR", "lab-good": r"LABGOOD error \d+"},
    )
    code, out, err, _s = cli("kb", "validate", "--pack", str(pack))
    said = out + err
    assert code == 2 and "lab-bad.md" in said and "could make matching hang" in said
    assert "lab-good" not in said.replace("lab-good.md", "")
    code, out, err, seconds = cli(
        "match", "--kb-extra", str(pack), "-", stdin="PACKERROR " + "a" * 40 + "\nLABGOOD error 7\n"
    )
    assert seconds < 60 and code == 0
    assert "cuda/lab-good" in out and "cuda/lab-bad" not in out
    skipped = [ln for ln in err.splitlines() if "lab-bad.md" in ln]
    assert len(skipped) == 1 and "could make matching hang" in skipped[0]


def test_without_re2_a_pack_signature_must_pass_the_shape_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.kb import saferegex

    monkeypatch.setattr(saferegex, "_re2", lambda: None)
    saferegex.compile_re2.cache_clear()
    try:
        assert check_signature(r"PACKERROR (a+)+$", user=True)  # refused, not run on re
        assert check_signature(r"PACKERROR a+$", user=True) is None
        assert isinstance(compile_signature(r"PACKERROR a+$", user=True), re.Pattern)
    finally:
        saferegex.compile_re2.cache_clear()
