"""scripts/commit_nccl.py on a synthetic nccl.sh output folder: what lands in the repo."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HOST = "gpu-node-17"
GIB = 1 << 30


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "commit_nccl", ROOT / "scripts" / "commit_nccl.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NCCL_TESTS = f"""\
# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 1 iters: 20
#  Rank  0 Group  0 Pid   4242 on {HOST} device  0 [0000:18:00] NVIDIA H200
#  Rank  1 Group  0 Pid   4242 on {HOST} device  1 [0000:2a:00] NVIDIA H200
#       size         count      type   redop    root     time   algbw   busbw #wrong     time
           8             2     float     sum      -1    18.52    0.00    0.00      0    18.01
     1048576        262144     float     sum      -1    21.30   49.23   49.23      0    21.10
  1073741824     268435456     float     sum      -1   3390.1  316.73  316.73      0   3385.2
# Avg bus bandwidth    : 101.4
"""


def report() -> dict[str, Any]:
    rows = [
        {"bytes": 1 << 20, "busbw_gbps": 45.1, "correct": True},
        {"bytes": GIB, "busbw_gbps": 330.2, "correct": True},
    ]
    return {
        "status": "ok",
        "nproc": 2,
        "device": "NVIDIA H200",
        "results": {"all_reduce": rows},
        "ranks": [{"rank": 0, "host": HOST}, {"rank": 1, "host": HOST}],
        "transport": {"primary": "P2P", "version": "2.28.9+cuda13.0"},
        "verdict": {"status": "ok", "message": "as expected"},
        "log_tail": [f"{HOST}:41:41 [0] NCCL INFO Bootstrap: Using eth0:10.1.2.3<0>"],
    }


def test_import_writes_redacted_outputs_and_one_results_section(tmp_path: Path) -> None:
    out, repo = tmp_path / "out", tmp_path / "repo"
    out.mkdir()
    (repo / "benchmarks").mkdir(parents=True)
    shutil.copy(ROOT / "benchmarks" / "RESULTS.md", repo / "benchmarks" / "RESULTS.md")
    (out / "nccl.json").write_text(json.dumps(report()))
    (out / "nccl_tests.txt").write_text(NCCL_TESTS)
    (out / "summary.txt").write_text(f"nccl: rc=0 in 31s\nran on {HOST}\n")
    script = load_script()
    assert script.nccl_tests_rows(NCCL_TESTS) == {8: 0.0, 1048576: 49.23, GIB: 316.73}
    for _ in range(2):  # a re-import replaces the section instead of adding a second one
        assert script.main([str(out), "--root", str(repo)]) == 0
    results = (repo / "benchmarks" / "RESULTS.md").read_text()
    assert results.count(script.BEGIN) == 1
    assert "| 1 GiB | 330.2 | 316.73 | 1.043 |" in results
    assert "| 1 MiB | 45.1 | 49.23 | 0.916 |" in results
    assert "ratio 1.043: within 10%" in results
    written = sorted(p.name for p in (repo / "benchmarks" / "nccl").iterdir())
    assert written == ["h200x2_nccl.json", "h200x2_nccl_tests.txt", "h200x2_summary.txt"]
    for path in (repo / "benchmarks" / "nccl").iterdir():
        text = path.read_text()
        assert HOST not in text and "10.1.2.3" not in text, path.name
    kept = json.loads((repo / "benchmarks" / "nccl" / "h200x2_nccl.json").read_text())
    assert kept["results"]["all_reduce"][1]["busbw_gbps"] == 330.2
