"""The canonical model: built from real producer output, valid against the published schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.report import SchemaError, build_report, redact, validate
from core.report.fields import TEMPLATE_FIELDS, upstream_fields

from .conftest import ERROR_LOG

# What PyTorch's bug template (collect_env) prints, field by field.
PYTORCH_FIELDS = (
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "OS",
    "GCC version",
    "Libc version",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version (nvcc)",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Versions of relevant libraries",
)


def test_a_version_1_report_still_loads(live_env: dict[str, Any], tmp_path: Path) -> None:
    """A report saved before the answer existed: no `answer`, no `origin`, version 1."""
    from core.report import load_report, render

    old = build_report(environment=live_env, error_text=ERROR_LOG)
    for key in ("answer", "origin"):
        del old[key]
    old["schema_version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    loaded = load_report(path)
    assert loaded["schema_version"] == 2 and loaded["answer"] is None
    assert loaded["environment"] == old["environment"]  # nothing else is dropped or changed
    for fmt in ("md", "html", "json"):
        assert render(loaded, fmt)


def test_report_from_this_machine_validates(live_env: dict[str, Any], kb_matches: Any) -> None:
    report = build_report(environment=live_env, error_text=ERROR_LOG, matches=kb_matches)
    validate(report)
    shared, _ = redact(report)
    validate(shared)
    assert report["schema_version"] == 2
    assert report["error"]["matches"][0]["id"] == "cuda/cudnn-status-execution-failed"
    assert report["summary"]["top_match"]["id"] == "cuda/cudnn-status-execution-failed"
    rows = dict(report["summary"]["rows"])
    assert rows["PyTorch"] == live_env["torch"]["version"]
    assert rows["Python"] == live_env["python"]["version"]


def test_every_upstream_template_field_is_present(live_env: dict[str, Any]) -> None:
    report = build_report(environment=live_env)
    fields = {(f["template"], f["field"]): f for f in report["upstream_fields"]}
    for name in PYTORCH_FIELDS:
        assert ("pytorch", name) in fields
    assert {t for t, _, _ in TEMPLATE_FIELDS} == {"pytorch", "transformers", "cudnn-collect-env"}
    py = fields[("pytorch", "Python version")]
    assert py["value"] == live_env["python"]["version"]
    assert py["source"] == "environment.python.version"
    # what the env did not collect is said so, never guessed (CMake is never asked: slow)
    assert fields[("pytorch", "CMake version")] == {
        "template": "pytorch",
        "field": "CMake version",
        "value": None,
        "source": None,
    }
    # quick mode never imports torch, so torch's own answers stay uncollected
    assert fields[("pytorch", "Is CUDA available")]["value"] is None


def test_findings_come_from_the_environment_worst_first(recorded: Any) -> None:
    env = recorded("broken_torch_deep")
    report = build_report(environment=env)
    assert [f["id"] for f in report["findings"]] == [f["id"] for f in env["findings"]]
    severities = {f["severity"] for f in env["findings"]}
    expected = (
        next(s for s in ("error", "warning") if s in severities) if severities - {"info"} else "ok"
    )
    assert report["summary"]["status"] == expected
    assert "not importable" in dict(report["summary"]["rows"])["PyTorch"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("schema_version",), 3, r"Invalid enum value 3 - at `\$.schema_version`"),
        (
            ("findings",),
            [{"id": "x", "severity": "fatal", "message": "m"}],
            r"Invalid enum value 'fatal' - at `\$.findings\[0\].severity`",
        ),
        (
            ("error",),
            {"text": "t", "line_count": -1, "matches": []},
            r"Expected `int` >= 0 - at `\$.error.line_count`",
        ),
        (("redaction", "enabled"), "yes", r"Expected `bool`, got `str` - at `\$.redaction"),
    ],
)
def test_schema_rejects_broken_reports(path: tuple[str, ...], value: Any, message: str) -> None:
    report = copy.deepcopy(build_report())
    node = report
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    with pytest.raises(SchemaError, match=message):
        validate(report)


def test_schema_requires_every_section() -> None:
    report = build_report()
    del report["charts"]
    with pytest.raises(SchemaError, match="Object missing required field `charts`"):
        validate(report)


def test_objects_with_to_dict_are_accepted(live_env: dict[str, Any]) -> None:
    from core.env import Environment

    report = build_report(environment=Environment.from_dict(live_env))
    assert report["environment"]["torch"]["version"] == live_env["torch"]["version"]
    json.dumps(report)  # JSON-ready all the way down


def test_absence_the_probe_established_is_said_in_words(recorded: Any) -> None:
    """ "not installed" / "no driver" where the probe looked; "not collected" where it did not."""
    bare = {f["field"]: f["value"] for f in upstream_fields(recorded("no_driver_no_torch_quick"))}
    assert bare["Nvidia driver version"] == "no driver (LibraryNotFound)"
    assert bare["PyTorch version"] == "not installed"
    assert bare["transformers version"] == "not installed"
    assert bare["GPU type"] == "no NVIDIA GPU found"
    assert bare["Is CUDA available"] is None  # quick mode never asks torch
    h200 = {f["field"]: f["value"] for f in upstream_fields(recorded("gpu_deep"))}
    assert h200["Nvidia driver version"] == "580.159.04"
    assert h200["Is debug build"] is False  # version.py's text in the recording, as a flag
    assert h200["libcudnn LOADED from"].endswith("site-packages/nvidia/cudnn/lib")
    assert h200["CPU"] == "Intel(R) Xeon(R) Processor"  # the recording's /proc/cpuinfo


def test_deep_mode_here_leaves_only_cmake_uncollected() -> None:
    from core.env import detect

    fields = upstream_fields(detect(deep=True).to_dict())
    assert [f["field"] for f in fields if f["value"] is None] == ["CMake version"]
