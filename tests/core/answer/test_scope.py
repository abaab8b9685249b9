"""Every verdict the answer shows carries its stack and date, and says when the user's differs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.answer import Answer, answer_for
from core.kb import KnowledgeBase, match, open_kb
from core.wizard.availability import Machine

LOG = """\
PyTorch version: 1.13.1+cu117
cuDNN version: 8.5.0
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    y = model(x)
RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR
"""


@pytest.fixture(scope="module")
def kb() -> Iterator[KnowledgeBase]:
    with open_kb() as handle:
        yield handle


def _answer(kb: KnowledgeBase, text: str, machine: Machine | None = None) -> Answer:
    return answer_for(text, match(text, kb).to_dict(), kb, machine=machine, use_history=False)


def test_each_kb_verdict_names_its_stack_and_date(kb: KnowledgeBase) -> None:
    answer = _answer(kb, LOG)
    assert answer.entry == "cuda/cudnn-status-internal-error"
    judged = [f for f in answer.fixes if f.status != "unverified"]
    assert judged
    for fix in judged:
        assert fix.scope, fix.title
        assert fix.scope in fix.sure
    measured = next(f for f in answer.fixes if f.status == "measured")
    assert measured.scope.startswith("measured on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200")
    assert measured.scope.endswith(", 2026-11-26")


def test_a_stack_that_differs_in_a_way_that_matters_is_named(kb: KnowledgeBase) -> None:
    measured = next(f for f in _answer(kb, LOG).fixes if f.status == "measured")
    assert measured.differs.startswith("your stack differs (from your log): ")
    assert "your cuDNN 8.5.0 is another major version than cuDNN 9.19.0" in measured.differs
    assert "your torch 1.13 is older than torch 2.11" in measured.differs
    assert measured.differs in measured.sure
    # Without versions in the log, this machine's torch is compared; the same stack says nothing.
    bare = LOG.split("Traceback", 1)[1]
    here = Machine(torch="2.11.0+cu130", torch_cuda="13.0", gpus=1)
    same = next(f for f in _answer(kb, bare, here).fixes if f.status == "measured")
    assert same.differs == ""
    old = Machine(torch="2.4.1+cu121", torch_cuda="12.1", gpus=1)
    older = next(f for f in _answer(kb, bare, old).fixes if f.status == "measured")
    assert "(from this machine)" in older.differs and "CUDA 12.1" in older.differs


def test_match_prints_the_scope_on_the_command_line(tmp_path: Path) -> None:
    log = tmp_path / "err.log"
    log.write_text(LOG, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "core", "match", str(log)],
        capture_output=True,
        text=True,
        check=True,
        env={"CUDA_CLINIC_BLOCK_QT": "1", **os.environ},
    ).stdout
    out = " ".join(out.split())  # the answer is wrapped to the terminal's width
    assert "measured on torch 2.11 / CUDA 13.0 / cuDNN 9.19 / H200 (sm_90), 2026-11-26" in out
    assert "your cuDNN 8.5.0 is another major version" in out
