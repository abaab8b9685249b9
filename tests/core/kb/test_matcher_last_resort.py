"""Crashes without a message rank below real errors; apps' rewordings answer with their entry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.kb import KnowledgeBase, match, open_kb

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "data" / "kb"
MAPPING = "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"
ASSERT_PLAIN = "build_hash kernel failure: device-side assert triggered"  # no 'Error:' marker
SEGFAULT = "Segmentation fault (core dumped)"
FATAL = "Fatal Python error: Segmentation fault"
A1111 = (
    "AssertionError: Torch is not able to use GPU; add --skip-torch-cuda-test to "
    "COMMANDLINE_ARGS variable to disable this check"
)
ERRORS = {
    MAPPING: "cuda/fixture-mapping-error",
    OOM: "cuda/fixture-out-of-memory",
    ASSERT_PLAIN: "cuda/fixture-device-assert",
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """The fixture KB, compiled into a private cache."""
    os.environ["CUDA_CLINIC_DATA_DIR"] = str(tmp_path_factory.mktemp("kbcache"))
    with open_kb(FIXTURES) as opened:
        yield opened


def test_a_crash_alone_is_the_answer(kb: KnowledgeBase) -> None:
    report = match(f"epoch 3: 40%|####      | 4/10\n{SEGFAULT}\n", kb)
    assert report.headline == "cuda/fixture-segfault"
    assert report.matches[0].confident


def test_a_crash_after_a_plain_cuda_line_ranks_below_it(kb: KnowledgeBase) -> None:
    # Both lines are plain (no 'Error:'); the crash is the last line and would otherwise be the
    # final error of the log.
    report = match(f"{ASSERT_PLAIN}\n{SEGFAULT}\n", kb)
    assert [m.id for m in report.matches] == ["cuda/fixture-device-assert", "cuda/fixture-segfault"]
    assert report.matches[0].confidence > report.matches[1].confidence


def test_a_fatal_python_error_does_not_take_the_final_error_boost(kb: KnowledgeBase) -> None:
    # 'Fatal Python error:' is an exception-looking line after the real error.
    report = match(f"{MAPPING}\nsome cleanup\n{FATAL}\n", kb)
    assert report.headline == "cuda/fixture-mapping-error"


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    error=st.sampled_from(sorted(ERRORS)),
    crashes=st.lists(st.sampled_from([SEGFAULT, FATAL]), min_size=1, max_size=3),
    filler=st.lists(
        st.sampled_from(["", "step 12 loss 0.31", "Traceback (most recent call last):"])
    ),
    slots=st.data(),
)
def test_a_crash_never_outranks_an_error_it_follows_or_precedes(
    kb: KnowledgeBase, error: str, crashes: list[str], filler: list[str], slots: st.DataObject
) -> None:
    """Wherever crash lines fall around a known error, the error is the confident headline."""
    lines = [*filler, error]
    for crash in crashes:
        lines.insert(slots.draw(st.integers(0, len(lines))), crash)
    report = match("\n".join(lines), kb)
    assert report.headline == ERRORS[error]
    crash_scores = [m.confidence for m in report.matches if m.id == "cuda/fixture-segfault"]
    assert all(score < report.matches[0].confidence for score in crash_scores)


def test_an_apps_rewording_answers_with_the_underlying_entry(kb: KnowledgeBase) -> None:
    text = (
        'Command: "venv/bin/python3" -c "import torch; assert torch.cuda.is_available()"\n'
        "Error code: 1\n"
        f"{A1111}\n"
    )
    top = match(text, kb).matches[0]
    assert top.id == "cuda/fixture-not-available"
    assert top.confident
    assert top.note.startswith("reworded by AUTOMATIC1111 stable-diffusion-webui:")
    assert top.evidence[0].text == A1111


def test_the_latest_rewording_names_the_app(kb: KnowledgeBase) -> None:
    text = (
        f"{A1111}\nLoading model...\nWarning: no GPU has been detected.\nFalling back to CPU mode."
    )
    top = match(text, kb).matches[0]
    assert top.id == "cuda/fixture-not-available"
    assert top.note == (
        "reworded by text-generation-webui: torch.cuda.is_available() returned False, "
        "so the model runs on the CPU"
    )


def test_the_entrys_own_signature_carries_no_rewording_note(kb: KnowledgeBase) -> None:
    text = "ValueError: torch.cuda.is_available() should be True but is False. xformers' ..."
    top = match(text, kb).matches[0]
    assert top.id == "cuda/fixture-not-available"
    assert top.note == ""
