"""`cuda-clinic env --from FILE`: findings derived again from a saved env JSON, old or new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.env.model import Finding
from core.env.rootcause import order
from core.env.saved import load_saved
from tests.core.clirun import run_core

DATA = Path(__file__).resolve().parents[2] / "data" / "env"


def _v1(tmp_path: Path, change: Any = None) -> Path:
    """A schema-1 env JSON as the clinic wrote it before findings carried commands."""
    data = load_saved(DATA / "gpu_deep.json").env.to_dict()
    data["schema_version"] = 1
    for key in ("suppressed",):
        data.pop(key)
    for finding in data["findings"]:
        for key in ("command", "evidence", "kb", "caused_by"):
            finding.pop(key)
    for key in ("first_op", "errors", "cudnn_runtime", "cudnn_compile"):
        data["torch"].pop(key)
    data["findings"] = [{"id": "stale.finding", "severity": "error", "message": "old"}]
    if change:
        change(data)
    path = tmp_path / "old-env.json"
    path.write_text(json.dumps(data))
    return path


def test_an_old_schema_file_is_read_and_its_findings_derived_again(tmp_path: Path) -> None:
    def hide(data: dict[str, Any]) -> None:
        data["env_vars"]["CUDA_VISIBLE_DEVICES"] = ""

    proc = run_core("env", "--from", str(_v1(tmp_path, hide)), "--json")
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 3
    ids = [f["id"] for f in data["findings"]]
    assert "stale.finding" not in ids  # the recorded findings are not trusted
    assert ids[0] == "env.cuda-visible-devices-hides-all"
    assert proc.returncode == 1  # an error-severity finding, as for a live check


def test_a_bad_field_gets_one_line_naming_the_file_and_the_field(tmp_path: Path) -> None:
    def break_gpu(data: dict[str, Any]) -> None:
        data["gpus"][0] = "H100"

    path = _v1(tmp_path, break_gpu)
    proc = run_core("env", "--from", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert str(path) in proc.stderr and "gpus[0]" in proc.stderr


def test_a_newer_schema_is_refused_by_name(tmp_path: Path) -> None:
    path = _v1(tmp_path, lambda d: d.update(schema_version=99))
    proc = run_core("env", "--from", str(path))
    assert proc.returncode == 2 and "schema_version" in proc.stderr and str(path) in proc.stderr


def test_from_cannot_be_mixed_with_a_live_probe(tmp_path: Path) -> None:
    proc = run_core("env", "--from", str(_v1(tmp_path)), "--deep")
    assert proc.returncode == 2 and "--from" in proc.stderr


def test_a_demoted_cascade_names_its_root_and_the_root_comes_first() -> None:
    findings = [
        Finding("cudnn.other-copies", "info", "copies"),
        Finding("cudnn.mixed-sublibraries", "error", "mixed"),
        Finding("torch.op-failed", "error", "conv failed", evidence="RuntimeError: cuDNN boom"),
        Finding("cudnn.runtime-incompatible", "error", "refused"),
    ]
    kept, suppressed = order(findings)
    assert [f.id for f in kept] == [
        "cudnn.runtime-incompatible",
        "cudnn.mixed-sublibraries",
        "cudnn.other-copies",
    ]
    assert kept[1].severity == "warning" and kept[1].caused_by == "cudnn.runtime-incompatible"
    assert [(f.id, f.caused_by) for f in suppressed] == [
        ("torch.op-failed", "cudnn.runtime-incompatible")
    ]


def test_an_unrelated_op_failure_is_not_swallowed_by_a_cudnn_root() -> None:
    findings = [
        Finding("torch.op-failed", "error", "matmul failed", evidence="RuntimeError: CUBLAS boom"),
        Finding("cudnn.runtime-incompatible", "error", "refused"),
    ]
    kept, suppressed = order(findings)
    assert {f.id for f in kept} == {"torch.op-failed", "cudnn.runtime-incompatible"}
    assert kept[0].id == "cudnn.runtime-incompatible" and not suppressed


def test_an_allocator_setting_that_breaks_the_import_is_the_root_cause() -> None:
    said = "RuntimeError: Unrecognized key 'garbage' in Accelerator allocator config."
    findings = [
        Finding("torch.import-error", "error", f"`import torch` fails: {said}", evidence=said),
        Finding("env.alloc-conf-invalid", "error", "torch rejects PYTORCH_CUDA_ALLOC_CONF"),
    ]
    kept, _ = order(findings)
    assert [f.id for f in kept] == ["env.alloc-conf-invalid", "torch.import-error"]
    assert kept[1].severity == "warning" and kept[1].caused_by == "env.alloc-conf-invalid"


def test_a_cublas_failure_names_the_cublas_wheel_to_reinstall(tmp_path: Path) -> None:
    said = "CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"

    def break_matmul(data: dict[str, Any]) -> None:
        data["torch"]["checks"][0].update(ok=False, error=f"RuntimeError: {said}")
        data["torch"]["errors"] = [
            {"stage": "matmul on cuda:0", "type": "RuntimeError", "message": said}
        ]

    data = json.loads(run_core("env", "--from", str(_v1(tmp_path, break_matmul)), "--json").stdout)
    first = data["findings"][0]
    assert first["id"] == "torch.op-failed"
    assert first["evidence"] == f"RuntimeError: {said}"
    assert first["command"] == "pip install --force-reinstall --no-deps nvidia-cublas==13.1.0.3"
