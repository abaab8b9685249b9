"""Other frameworks' logs get no confident PyTorch entry, and the matcher names the framework.

tests/data/matcher_nearmiss holds real logs from public threads of TensorFlow, JAX, MXNet,
PaddlePaddle, ONNX Runtime, CTranslate2, Lua Torch, Julia's CUDA.jl, dlib, Flashlight, Caffe
and PyTorch's ROCm build, carrying the same status words as PyTorch's CUDA errors; the dev and
held-out sets hold three more (CNTK, Lua Torch, ONNX Runtime). The whole real corpus is counted
here too.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from core.kb import KnowledgeBase, match
from tests.core.kb.labelled import cited_cases, load_cases, score

DATA = Path(__file__).resolve().parents[2] / "data"
NEARMISS = DATA / "matcher_nearmiss"
SETS = ("matcher", "matcher_holdout", "matcher_nearmiss")


def test_nearmisses_are_real_cited_and_new() -> None:
    cases = cited_cases(NEARMISS, positives=0, negatives=20)
    others = {c["source"] for name in SETS[:2] for c in load_cases(DATA / name)}
    for case in cases:
        assert case["expected"] == "" and case["framework"], case
        assert case["source"] not in others, case["source"]


def test_no_confident_pytorch_entry_and_the_framework_named(bundled_kb: KnowledgeBase) -> None:
    result = score(NEARMISS, bundled_kb, file_width=30)
    print(result.table())
    assert result.false_alarms == []
    assert result.framework_misses == []


def test_the_answer_names_the_framework_and_the_status(tmp_path: Path) -> None:
    log = tmp_path / "jax.log"
    log.write_text((NEARMISS / "cases/jax-16078.txt").read_text(encoding="utf-8"), "utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "core", "match", "--json", str(log)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    import json

    data = json.loads(out)
    assert data["headline"] is None and data["framework"]["id"] == "jax"
    assert all(not m["confident"] for m in data["matches"])
    cause = data["answer"]["cause"]
    assert cause["id"] == "other-framework" and cause["values"]["framework"] == "JAX"
    assert "This log is from JAX, not PyTorch" in cause["text"]
    assert "CUDNN_STATUS_INTERNAL_ERROR means in general" in cause["text"]
    text = subprocess.run(
        [sys.executable, "-m", "core", "match", str(log)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert text.startswith("This log is from JAX, not PyTorch")
    assert "leads only, not the answer" in text


def test_a_pytorch_log_that_mentions_tensorflow_stays_pytorch(bundled_kb: KnowledgeBase) -> None:
    """TensorFlow's start-up lines above a PyTorch traceback do not make it TensorFlow's."""
    log = (
        "2023-03-01 10:00:00.1: I tensorflow/core/platform/cpu_feature_guard.cc:193] This "
        "TensorFlow binary is optimized with oneDNN\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py", line 459, '
        "in _conv_forward\n"
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n"
    )
    report = match(log, bundled_kb)
    assert report.framework is None
    assert report.headline == "cuda/cudnn-status-not-initialized"


def test_the_real_corpus_is_large_and_varied() -> None:
    """At least 150 real logs from public threads, with wrapped, quoted, non-English and
    near-miss cases among them."""
    texts = [
        (name, case, (DATA / name / case["file"]).read_text(encoding="utf-8"))
        for name in SETS
        for case in load_cases(DATA / name)
    ]
    assert len(texts) >= 150
    near = [c for _, c, _ in texts if c.get("framework")]
    assert len(near) >= 20

    def count(pattern: str) -> int:
        return sum(1 for _, _, t in texts if re.search(pattern, t, re.M))

    assert count(r"vllm|VLLM") >= 1  # wrapped by vLLM
    assert count(r"torchrun|torch\.distributed\.elastic") >= 1  # wrapped by torchrun
    assert count(r"pytorch_lightning|lightning[/.]pytorch") >= 1  # wrapped by Lightning
    assert count(r"^> ") >= 1  # quoted in markdown
    assert count(r"[\u4e00-\u9fff]") >= 3  # non-English prose
    assert count(r"ray::|RayTaskError|site-packages/ray/") >= 1  # wrapped by Ray
    cut = [t for _, _, t in texts if "Traceback (most recent call last)" not in t]
    assert sum(1 for t in cut if re.search(r'^\s*File ".*", line \d+', t, re.M)) >= 10  # cut short


def test_the_figures_in_the_docs_are_current() -> None:
    """docs/matching.md holds what scripts/matcher_figures.py measures now (a real run)."""
    done = subprocess.run(
        [sys.executable, str(DATA.parents[1] / "scripts" / "matcher_figures.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=DATA.parents[1],
    )
    assert done.returncode == 0, done.stderr
