"""The importers of the issue-22 GPU runs (scripts/import_env2.py, scripts/import_env4.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

from tests.core.clirun import run_script
from tests.core.env.matrix_files import BROKEN, ROOT, setup_file


def _bench() -> dict[str, object]:
    samples = {"collect_env": [5.1, 5.3, 5.0, 5.2, 5.4], "env --deep": [3.4, 3.5, 3.3, 3.6, 3.4]}
    return {
        "python": "/home/alice/venv/bin/python3",
        "machine": {"cpu": "Xeon", "cpus": 16, "os": "Linux", "gpus": ["GPU 0: NVIDIA H100"]},
        "rounds": 5,
        "samples": samples,
        "exit_codes": {"collect_env": [0], "env --deep": [0]},
        "median": {"collect_env": 5.2, "env --deep": 3.4},
        "ratio": {"collect_env": 1.0, "env --deep": 3.4 / 5.2},
        "ratio_per_round": [
            a / b for a, b in zip(samples["env --deep"], samples["collect_env"], strict=True)
        ],
        "deep_probe": {"torch_import_s": 2.9},
    }


def _import_env2(outdir: Path, dest: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_script(ROOT / "scripts" / "import_env2.py", str(outdir), "--dest", str(dest), *extra)


def test_env2_import_writes_fixtures_the_experiment_and_the_benchmark(tmp_path: Path) -> None:
    outdir = tmp_path / "env2"
    (outdir / "matrix").mkdir(parents=True)
    for setup in tomllib.loads((BROKEN / "expected.toml").read_text())["setup"]:
        data = json.loads(setup_file(setup["name"]).read_text())
        data["python"]["executable"] = "/home/alice/venv/bin/python3"
        (outdir / "matrix" / f"{setup['name']}.json").write_text(json.dumps(data))
    (outdir / "summary.txt").write_text(
        "alloc-retry (a) allocate once: exit=1\n"
        "alloc-retry (b) catch, allocate again: exit=139 (139 = SIGSEGV)\n"
    )
    (outdir / "alloc_retry_a.txt").write_text("ValueError: Unrecognized key 'expandable_segment'\n")
    (outdir / "bench.json").write_text(json.dumps(_bench()))
    dest = tmp_path / "broken"
    proc = _import_env2(outdir, dest)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| env --deep | 3.400 |" in proc.stdout
    run = json.loads((dest / "matrix_run.json").read_text())
    assert run["experiment_alloc_retry"]["alloc-retry (b) catch, allocate again"].startswith(
        "exit=139"
    )
    assert "alice" not in (dest / "matrix_run.json").read_text()
    assert (dest / "damaged-cudnn-truncated.json").exists()


def test_a_partial_run_updates_its_setups_and_keeps_the_rest_and_the_history(
    tmp_path: Path,
) -> None:
    # scripts/gpu/env2short.sh records a few setups and the benchmark, not the experiment.
    names = [s["name"] for s in tomllib.loads((BROKEN / "expected.toml").read_text())["setup"]]
    dest = tmp_path / "broken"
    dest.mkdir()
    for name in names:
        shutil.copy(BROKEN / f"{name}.json", dest / f"{name}.json")
    shutil.copy(BROKEN / "matrix_run.json", dest / "matrix_run.json")
    before = json.loads((dest / "matrix_run.json").read_text())
    outdir = tmp_path / "env2short"
    (outdir / "matrix").mkdir(parents=True)
    data = json.loads((BROKEN / "cudnn-sublibrary-missing.json").read_text())
    data["python"]["executable"] = "/home/alice/venv/bin/python3"
    (outdir / "matrix" / "cudnn-sublibrary-missing.json").write_text(json.dumps(data))
    (outdir / "bench.json").write_text(json.dumps(_bench()))
    proc = _import_env2(outdir, dest, "--only-present")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "replayed by this version: cudnn.sublibrary-missing" in proc.stdout
    run = json.loads((dest / "matrix_run.json").read_text())
    assert set(run["setups"]) == set(names)  # the others kept
    assert run["setups"]["healthy"] == before["setups"]["healthy"]
    assert run["setups"]["cudnn-sublibrary-missing"]["replayed_first"] == (
        "cudnn.sublibrary-missing"
    )
    assert run["experiment_alloc_retry"] == before["experiment_alloc_retry"]
    assert len(run["earlier_runs"]) == len(before["earlier_runs"]) + 1
    assert run["earlier_runs"][-1]["bench_median"] == before["bench"]["median"]
    assert run["bench"]["median"]["env --deep"] == 3.4
    assert "alice" not in (dest / "cudnn-sublibrary-missing.json").read_text()


def test_env4_import_redacts_and_places_the_files(tmp_path: Path) -> None:
    outdir = tmp_path / "env4"
    outdir.mkdir()
    env = json.loads((BROKEN / "derived" / "healthy.json").read_text())
    env["python"]["executable"] = "/home/alice/venv/bin/python3"
    (outdir / "env_deep.json").write_text(json.dumps(env))
    (outdir / "bench.json").write_text(json.dumps(_bench()))
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", repo / "scripts")
    shutil.copytree(ROOT / "core", repo / "core")
    shutil.copytree(ROOT / "resources", repo / "resources")  # the KB the engine loads at import
    proc = run_script(repo / "scripts" / "import_env4.py", str(outdir), "--label", "t4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = (repo / "tests/data/env/multi_gpu/t4_env.json").read_text()
    assert "alice" not in written and json.loads(written)["findings"]
    assert (repo / "benchmarks/env/t4_bench.json").exists()
