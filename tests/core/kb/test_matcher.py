"""The matcher on messy input: ANSI, CRLF, ranks, chained errors, masks, huge and binary input."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.kb import KnowledgeBase, match, open_kb
from core.kb.anchors import analyse
from core.kb.results import RootCause
from core.kb.scan import word_tokens

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "data" / "kb"
MAPPING = "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR"
ASSERT_LINE = (
    "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
    "block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed."
)


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """The fixture KB, compiled into a private cache."""
    os.environ["CUDA_CLINIC_DATA_DIR"] = str(tmp_path_factory.mktemp("kbcache"))
    with open_kb(FIXTURES) as opened:
        yield opened


def _top(text: str, kb: KnowledgeBase) -> str | None:
    report = match(text, kb)
    return report.matches[0].id if report.confident else None


def test_plain_error_line(kb: KnowledgeBase) -> None:
    report = match(MAPPING, kb)
    assert report.matches[0].id == "cuda/fixture-mapping-error"
    assert report.matches[0].confidence >= 0.5
    assert report.matches[0].evidence[0].line == 1
    assert report.headline == "cuda/fixture-mapping-error"


def test_ansi_colours_and_crlf(kb: KnowledgeBase) -> None:
    text = (
        "\x1b[1;31mTraceback (most recent call last):\x1b[0m\r\n"
        f'  File "x.py"\r\n\x1b[31m{MAPPING}\x1b[0m\r\n'
    )
    report = match(text, kb)
    assert report.matches[0].id == "cuda/fixture-mapping-error"
    assert report.matches[0].evidence[0].text == MAPPING  # colour codes stripped
    assert report.matches[0].evidence[0].line == 3


def test_progress_bar_carriage_returns(kb: KnowledgeBase) -> None:
    text = "epoch 1: 10%\repoch 1: 50%\repoch 1: 90%\r" + MAPPING + "\n"
    assert _top(text, kb) == "cuda/fixture-mapping-error"


def test_repeated_by_ranks_collapses_evidence(kb: KnowledgeBase) -> None:
    text = "\n".join(f"[rank{r}]: {MAPPING}" for r in range(8))
    top = match(text, kb).matches[0]
    assert top.id == "cuda/fixture-mapping-error"
    assert len(top.evidence) == 1
    assert top.evidence[0].count == 8
    assert top.evidence[0].line == 8  # the last occurrence is shown


def test_a_line_hit_twice_is_counted_once(kb: KnowledgeBase) -> None:
    # The signature and the context signature both hit this single line.
    top = match(f"{MAPPING} (rerun with CUDA_LAUNCH_BLOCKING=1)", kb).matches[0]
    assert [(e.line, e.count, e.kind) for e in top.evidence] == [(1, 1, "signature")]


def test_error_line_shown_before_later_prose_mentions(kb: KnowledgeBase) -> None:
    prose = [f"Tip {i}: CUDNN_STATUS_MAPPING_ERROR is often a bad index" for i in range(6)]
    top = match("\n".join([MAPPING, *prose]), kb).matches[0]
    assert top.evidence[0].line == 1
    assert top.evidence[0].text == MAPPING


def test_final_error_is_headline_and_earlier_assert_is_root(kb: KnowledgeBase) -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            ASSERT_LINE,
            "RuntimeError: CUDA error: device-side assert triggered",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            MAPPING,
        ]
    )
    report = match(text, kb)
    assert [m.id for m in report.matches[:2]] == [
        "cuda/fixture-mapping-error",
        "cuda/fixture-device-assert",
    ]
    assert report.matches[0].confidence > report.matches[1].confidence
    assert "masked by" in report.matches[0].note
    assert report.matches[1].role == "root_cause"
    assert report.root_cause == RootCause(
        id="cuda/fixture-device-assert",
        line=2,
        masks="cuda/fixture-mapping-error",
    )


def test_memory_pressure_behind_not_initialized(kb: KnowledgeBase) -> None:
    text = "\n".join(
        [
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 ...",
            "retrying with a smaller batch",
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
        ]
    )
    report = match(text, kb)
    assert report.headline == "cuda/fixture-not-initialized"
    assert report.root_cause is not None
    assert report.root_cause.id == "cuda/fixture-out-of-memory"


def test_later_error_is_not_called_a_root(kb: KnowledgeBase) -> None:
    text = MAPPING + "\nRuntimeError: CUDA error: device-side assert triggered\n"
    report = match(text, kb)
    assert report.matches[0].id == "cuda/fixture-device-assert"  # the final error
    assert report.root_cause is None  # the mapping error came first: it cannot be masked by it


def test_warnings_before_the_error(kb: KnowledgeBase) -> None:
    warnings = "\n".join(f"/x.py:{i}: UserWarning: something deprecated" for i in range(200))
    report = match(warnings + "\n" + MAPPING, kb)
    assert report.matches[0].id == "cuda/fixture-mapping-error"
    assert report.matches[0].evidence[0].line == 201


def test_no_gpu_error_means_no_confident_match(kb: KnowledgeBase) -> None:
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n'
        "KeyError: 'learning_rate'\n"
    )
    report = match(text, kb)
    assert report.confident == []
    assert report.headline is None


def test_near_miss_is_never_confident(kb: KnowledgeBase) -> None:
    report = match("RuntimeError: CUDA error: cudnn handle of the watchdog broke", kb)
    assert report.matches, "full-text search should offer near misses"
    assert all(m.role == "near_miss" and m.confidence < 0.5 for m in report.matches)


def test_specific_exception_line_beats_passing_mention(kb: KnowledgeBase) -> None:
    mention = match("note: CUDNN_STATUS_MAPPING_ERROR is documented in the FAQ", kb).matches[0]
    real = match(MAPPING, kb).matches[0]
    assert real.confidence > mention.confidence


def test_ten_megabytes_of_log(kb: KnowledgeBase) -> None:
    rng = random.Random(7)
    words = ["loss", "step", "lr", "epoch", "grad_norm", "throughput", "tokens"]
    line_count = 0
    lines = []
    while line_count < 10 * 1024 * 1024:
        line = " ".join(f"{rng.choice(words)}={rng.random():.5f}" for _ in range(6))
        lines.append(line)
        line_count += len(line) + 1
    text = "\n".join([*lines, MAPPING])
    start = time.perf_counter()
    report = match(text, kb)
    elapsed = time.perf_counter() - start
    assert report.matches[0].id == "cuda/fixture-mapping-error"
    assert report.matches[0].evidence[0].line == len(lines) + 1
    assert elapsed < 20  # generous: the point is that it finishes, the benchmark measures it


def test_binary_junk(kb: KnowledgeBase) -> None:
    junk = random.Random(3).randbytes(2 * 1024 * 1024).decode("utf-8", errors="replace")
    report = match(junk, kb)
    assert report.confident == []
    report = match(junk + "\n" + MAPPING + "\n" + junk[:1000], kb)
    assert report.matches[0].id == "cuda/fixture-mapping-error"


def test_one_enormous_line(kb: KnowledgeBase) -> None:
    text = "x" * 3_000_000 + " " + MAPPING + " " + "y" * 3_000_000
    assert _top(text, kb) == "cuda/fixture-mapping-error"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=3000))
def test_match_never_raises(kb: KnowledgeBase, text: str) -> None:
    report = match(text, kb)
    for m in report.matches:
        assert 0.0 <= m.confidence <= 1.0
    json.dumps(report.to_dict())


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.sampled_from([MAPPING, ASSERT_LINE, "\x1b[31m", "\r\n", "\r", "\x00", "é" * 5]),
        max_size=40,
    )
)
def test_match_never_raises_on_error_fragments(kb: KnowledgeBase, parts: list[str]) -> None:
    match("".join(parts), kb)


@given(st.text(max_size=500))
def test_fast_tokenizer_equals_regex_tokens(text: str) -> None:
    """The translate/split tokenizer finds exactly the regex word tokens (minus bare numbers)."""
    import re

    lower = text.lower()
    expected = {t for t in re.findall(r"\w+", lower) if not t.isdigit()}
    assert word_tokens(lower) == expected


@pytest.mark.parametrize(
    ("pattern", "line"),
    [
        ("CUDNN_STATUS_MAPPING_ERROR", "cuDNN error: CUDNN_STATUS_MAPPING_ERROR"),
        ("STATUS_MAPPING", "CUDNN_STATUS_MAPPING_ERROR"),  # anchor inside a longer token
        ("OutOfMemory", "torch.OutOfMemoryError: CUDA out of memory"),
        (r"(GET|FIND) was unable to find an engine", "FIND was unable to find an engine to run"),
        (
            r"derivative for '?_cudnn_rnn_backward'? is not implemented|Double backwards",
            "Double backwards x",
        ),
        (
            r"\w+ does not have a deterministic implementation",
            "foo does not have a deterministic implementation",
        ),
    ],
)
def test_anchors_never_hide_a_matching_line(pattern: str, line: str) -> None:
    """Whatever anchor is chosen, a line the regex matches contains it (no false negatives)."""
    import re

    assert re.search(pattern, line, re.IGNORECASE)
    analysis = analyse(pattern)
    tokens = set(re.findall(r"\w+", line.lower()))
    assert analysis.anchors, pattern
    assert any(
        (a.word in tokens) if a.kind == "exact" else any(a.word in t for t in tokens)
        for a in analysis.anchors
    )


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "core", "match", *args, "--kb", str(FIXTURES)],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_cli_reads_stdin_and_prints_json() -> None:
    result = _cli("--json", stdin=f"junk\n{MAPPING}\n".encode())
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["matches"][0]["id"] == "cuda/fixture-mapping-error"
    assert data["matches"][0]["evidence"] == [
        {"line": 2, "text": MAPPING, "kind": "signature", "count": 1}
    ]
    assert set(data["matches"][0]) >= {"id", "title", "confidence", "evidence"}


def test_cli_file_text_output_and_top(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(f"{ASSERT_LINE}\r\n{MAPPING}\r\n".encode() + bytes(range(256)))
    result = _cli(str(log), "--top", "1")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    answer, ranked = out.split("Ranked matches:")
    # The answer leads with the root cause, even when --top hides its own match.
    assert answer.startswith("Answer: ") and "[cuda/fixture-device-assert," in answer
    assert "cuda/fixture-mapping-error" in ranked
    assert "masked by cuda/fixture-device-assert at line 1" in ranked
    assert "cuda/fixture-device-assert" not in ranked.split("note:")[0]  # --top 1
    assert "Root cause: cuda-clinic kb show cuda/fixture-device-assert" in ranked


def test_cli_missing_file_and_bad_top(tmp_path: Path) -> None:
    missing = _cli(str(tmp_path / "nope.log"))
    assert missing.returncode == 2
    assert missing.stderr.decode().strip().startswith("cuda-clinic: error:")
    assert b"Traceback" not in missing.stderr
    bad = _cli("--top", "0", stdin=b"x")
    assert bad.returncode == 2
    unrelated = _cli("-", stdin=b"Traceback (most recent call last):\nKeyError: 'lr'\n")
    assert unrelated.returncode == 0
    assert unrelated.stdout.decode().splitlines() == [
        "No confident match: this text does not contain an error the knowledge base knows.",
        "To look by words instead: cuda-clinic kb search WORDS (or kb list)",
    ]
    empty = _cli("-", stdin=b"  \n")
    assert empty.returncode == 2
    assert empty.stderr.decode().strip() == (
        "cuda-clinic: error: standard input is empty: paste an error message, traceback or log"
    )


def test_cli_no_match_says_so() -> None:
    result = _cli(stdin=b"KeyError: 'lr'\n")
    assert result.returncode == 0
    assert b"No confident match" in result.stdout
