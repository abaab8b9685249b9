"""The env fault matrix replayed: each broken setup's saved `env --deep --json` via `env --from`.

tests/data/env/broken/expected.toml says, for each setup, what the first finding must be (written
before the GPU run). Recorded fixtures (tests/data/env/broken/<name>.json, imported from the GPU
machine) are used where they exist; otherwise the synthetic ones in derived/ (labelled as such).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.core.clirun import run_core, run_script
from tests.core.env.matrix_files import BROKEN, ROOT, setup_file

EXPECTED = tomllib.loads((BROKEN / "expected.toml").read_text(encoding="utf-8"))["setup"]
# Findings that were false alarms on broken stacks (issue 10): never an error where listed.
SETUPS = {s["name"]: s for s in EXPECTED}


def _replay(path: Path) -> dict[str, Any]:
    proc = run_core("env", "--from", str(path), "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_the_matrix_has_at_least_twelve_setups_each_with_asetup_file() -> None:
    assert len(EXPECTED) >= 12
    for setup in EXPECTED:
        assert setup_file(setup["name"]).exists(), setup["name"]


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_first_finding_is_the_root_cause_and_no_false_error(name: str) -> None:
    setup = SETUPS[name]
    data = _replay(setup_file(name))
    findings = data["findings"]
    assert findings and findings[0]["id"] == setup["first"], [f["id"] for f in findings]
    errors = {f["id"] for f in findings if f["severity"] == "error"}
    assert not errors & set(setup.get("never", [])), errors
    if setup.get("no_errors"):
        assert not errors
    if "evidence" in setup:  # torch's own words, verbatim, under the root finding
        assert setup["evidence"] in findings[0]["evidence"]
    if "kb" in setup:  # the KB entry the matcher picks for torch's message
        assert findings[0]["kb"] == setup["kb"]
    if findings[0]["severity"] != "info" and name != "gpu-almost-full":
        assert findings[0]["command"], "a broken setup's first finding names the fix command"


def test_hidden_gpus_give_no_arch_verdict_and_say_what_was_suppressed() -> None:
    data = _replay(setup_file("cvd-absent-index"))
    ids = [f["id"] for f in data["findings"]]
    assert "cuda.arch-unsupported" not in ids and "cuda.arch-ptx-jit" not in ids
    assert data["findings"][0]["command"] == "unset CUDA_VISIBLE_DEVICES"


def test_foreign_cudnn_is_attributed_to_the_folder_it_came_from() -> None:
    data = _replay(setup_file("ld-library-path-system-cudnn"))
    assert data["cudnn"]["loaded_from"] == "/usr/lib/x86_64-linux-gnu"
    assert data["cudnn"]["version"].startswith("9.14")
    loaded = [c for c in data["cudnn"]["copies"] if c["loaded"]]
    assert [c["directory"] for c in loaded] == ["/usr/lib/x86_64-linux-gnu"]
    human = run_core("env", "--from", str(setup_file("ld-library-path-system-cudnn"))).stdout
    assert "cuDNN none" not in human
    assert "cuDNN version incompatibility" in human
    assert "$ unset LD_LIBRARY_PATH" in human


def test_preloaded_cudnn_shows_torchs_refusal_beside_the_ops_that_ran() -> None:
    # Measured on the H200: with the system 9.14 preloaded, torch's Python-level version check
    # raises (anything calling torch.backends.cudnn.version(), RNN modules) while raw convs run.
    human = run_core("env", "--from", str(setup_file("ld-preload-system-cudnn"))).stdout
    assert "cuDNN unusable (RuntimeError: cuDNN version incompatibility" in human
    assert "torch loads cuDNN 9.19.0" not in human
    assert "cuDNN none" not in human


def test_the_docs_table_lists_every_setup_with_its_first_finding() -> None:
    doc = (ROOT / "docs" / "env-matrix.md").read_text(encoding="utf-8")
    for setup in EXPECTED:
        row = next((line for line in doc.splitlines() if f"| `{setup['name']}` |" in line), "")
        assert f"`{setup['first']}`" in row, setup["name"]


def test_importer_redacts_and_the_imported_fixtures_still_replay(tmp_path: Path) -> None:
    outdir = tmp_path / "env_matrix"
    outdir.mkdir()
    for setup in EXPECTED:
        data = json.loads(setup_file(setup["name"]).read_text())
        data["python"]["executable"] = "/home/alice/venv/bin/python3"
        data["env_vars"]["HF_TOKEN"] = "hf_QWERTYuiopASDFghjkl1234567890zx"
        (outdir / f"{setup['name']}.json").write_text(json.dumps(data))
    dest = tmp_path / "broken"
    proc = run_script(ROOT / "scripts" / "import_env_matrix.py", str(outdir), "--dest", str(dest))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for setup in EXPECTED:
        text = (dest / f"{setup['name']}.json").read_text()
        assert "alice" not in text and "hf_QWERTY" not in text
        data = _replay(dest / f"{setup['name']}.json")
        assert data["findings"][0]["id"] == setup["first"], setup["name"]
    assert "as expected" in proc.stdout
