"""The verdicts `cuda-clinic try --fixes` reached on a real GPU (scripts/gpu/try.sh, imported
by scripts/import_try_evidence.py into tests/data/try/gpu/). Skips until those files exist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

EVIDENCE = Path(__file__).resolve().parents[2] / "data" / "try" / "gpu"


def load(name: str) -> dict[str, Any]:
    path = EVIDENCE / f"{name}.json"
    if not path.is_file():
        pytest.skip(
            f"no GPU evidence yet: {path.name} (bash scripts/gpu_run.sh try, then "
            "python scripts/import_try_evidence.py OUTDIR)"
        )
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def fixes(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["fix"]["id"]: f for f in run["fixes"]}


def failed_run(name: str, entry: str) -> dict[str, Any]:
    """The recorded `try` run of script `name`, checked to have failed and matched `entry`."""
    run: dict[str, Any] = load(name)["try"]
    assert run["status"] == "failed"
    assert run["entry"]["id"] == entry
    return run


@pytest.mark.parametrize(
    ("script", "entry"),
    [
        ("wgan_gp_lstm", "cuda/cudnn-rnn-double-backward"),
        ("eval_rnn_saliency", "cuda/cudnn-rnn-eval-backward"),
    ],
)
def test_cudnn_rnn_errors_are_fixed_by_turning_cudnn_off(script: str, entry: str) -> None:
    run = failed_run(script, entry)
    off = fixes(run)["cudnn-off"]
    assert off["verdict"] == "fixed", off["reason"]
    assert off["outcome"]["exit_code"] == 0
    assert run["recommendation"]["fix"] == "cudnn-off"


def test_embedding_index_out_of_range_is_located_by_launch_blocking() -> None:
    run = failed_run("embedding_oob", "cuda/device-side-assert")
    blocking = fixes(run)["launch-blocking"]
    assert blocking["verdict"] == "located", blocking["reason"]
    assert blocking["frame"]["code"] == "x = self.emb(tokens)"
    assert run["recommendation"]["kind"] == "located"


def test_fragmentation_oom_is_fixed_by_expandable_segments() -> None:
    run = failed_run("fragmentation_oom", "cuda/out-of-memory")
    expandable = fixes(run)["expandable-segments"]
    assert expandable["verdict"] == "fixed", expandable["reason"]
    assert "allocated the batch buffer" in expandable["outcome"]["log"]


def test_deterministic_cublas_fails_only_where_torch_still_checks_the_workspace() -> None:
    record = load("deterministic_cublas")
    run = record["try"]
    version = tuple(int(p) for p in str(record["machine"]["torch"]).split("+")[0].split(".")[:2])
    if version >= (2, 11):  # the check was removed (pytorch/pytorch#161749); the KB says so
        assert run["status"] == "passed", run["message"]
        return
    assert run["entry"]["id"] == "cuda/cublas-workspace-config"
    assert fixes(run)["cublas-workspace-4096"]["verdict"] == "fixed"


def test_deterministic_histogram_is_fixed_by_warn_only_but_not_by_the_cublas_workspace() -> None:
    run = failed_run("deterministic_histogram", "cuda/nondeterministic-op")
    assert run["frame"]["line"] == 21  # torch.histc in the user's loop
    verdicts = {fix_id: fix["verdict"] for fix_id, fix in fixes(run).items()}
    assert verdicts["deterministic-warn-only"] == "fixed"
    assert "cublas-workspace-4096" not in verdicts  # not a fix this entry declares
