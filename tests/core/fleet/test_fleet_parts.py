"""The pieces behind `fleet`: host files, a node's output, the analysis, report diff's new rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import UsageError
from core.fleet import analyze, load_fleet, read_hostfile
from core.fleet.model import parse_env_output
from core.models import to_builtins
from core.report import diff_reports, render_diff

NODES = Path(__file__).resolve().parents[2] / "data" / "fleet" / "nodes"


def test_hostfile_takes_first_words_and_skips_comments(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("# rack 1\ngpu01 slots=8\n\n  gpu02  # spare\nalice@gpu03\ngpu01\n")
    assert read_hostfile(path) == ["gpu01", "gpu02", "alice@gpu03"]


def test_binary_hostfile_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UsageError, match="is not text"):
        read_hostfile(path)


def test_login_banner_before_the_json_is_tolerated() -> None:
    env = (NODES / "gpu01.json").read_text()
    data, why = parse_env_output("Welcome to gpu01\nLast login: {yesterday}\n" + env)
    assert why == "" and data is not None and data["driver"]["version"] == "580.159.04"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty output"),
        ("bash: module: command not found\n", "no JSON in its output"),
        ('{"driver": ', "output is not valid JSON"),
        ('{"driver": {}}\n', "output is JSON but not a cuda-clinic env JSON"),
        ("[1, 2]\n", "no JSON in its output ('[1, 2]')"),
    ],
)
def test_garbage_output_says_why(text: str, why: str) -> None:
    data, reason = parse_env_output(text)
    assert data is None and reason.startswith(why)


def test_analysis_of_the_recorded_nodes() -> None:
    analysis = to_builtins(analyze(load_fleet(NODES)))
    assert analysis["nodes_total"] == analysis["nodes_ok"] == 13
    assert analysis["reference"] == "gpu01"
    assert [o["node"] for o in analysis["outliers"]] == [
        "gpu05",
        "gpu06",
        "gpu07",
        "gpu08",
        "gpu09",
    ]
    assert analysis["failed"] == []
    json.dumps(analysis)  # JSON-ready


def test_a_deviation_shared_by_the_majority_is_the_majority(tmp_path: Path) -> None:
    """Three nodes on the older driver and two on the newer: the newer two are the outliers."""
    for name in ("gpu05", "gpu05b", "gpu05c", "gpu01", "gpu02"):
        source = "gpu05" if name.startswith("gpu05") else name
        (tmp_path / f"{name}.json").write_text((NODES / f"{source}.json").read_text())
    analysis = to_builtins(analyze(load_fleet(tmp_path)))
    driver = next(m for m in analysis["majority"] if m["field"] == "NVIDIA driver")
    assert (driver["value"], driver["nodes"], driver["of"]) == ("570.172.08", 3, 5)
    assert [o["node"] for o in analysis["outliers"]] == ["gpu01", "gpu02"]


def test_report_diff_shows_ecc_and_nccl_rows() -> None:
    a = {"environment": json.loads((NODES / "gpu01.json").read_text())}
    b9 = {"environment": json.loads((NODES / "gpu09.json").read_text())}
    b7 = {"environment": json.loads((NODES / "gpu07.json").read_text())}
    ecc = {d.field: d for d in diff_reports(a, b9)}["GPU ECC"]
    assert (ecc.a, ecc.b) == (["on (all 8 GPUs)"], ["GPU 3: off", "others: on"])
    text = render_diff(diff_reports(a, b7), "gpu01", "gpu07")
    assert "  NCCL\n    gpu01: 2.28.9\n    gpu07: 2.27.3" in text
