"""Every registered scenario is well formed and matches its knowledge-base entry."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

from core.wizard import scenarios
from core.wizard.model import STEPS_DIR

ALL = scenarios()
KB = Path(__file__).resolve().parents[3] / "resources" / "kb"


def kb_front_matter(scenario_id: str) -> dict[str, object]:
    text = (KB / f"{scenario_id}.md").read_text(encoding="utf-8")
    return tomllib.loads(text.split("+++")[1])


def test_the_first_six_wizards_keep_their_place_and_there_are_at_least_twenty() -> None:
    assert len(ALL) >= 20
    assert [s.id for s in ALL[:6]] == [
        "cuda/cudnn-rnn-double-backward",
        "cuda/rnn-dtype-mismatch",
        "cuda/cudnn-status-not-initialized",
        "cuda/cudnn-no-valid-conv-algorithm",
        "cuda/cudnn-rnn-performance",
        "cuda/cudnn-rnn-eval-backward",
    ]


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_scenario_is_well_formed(scenario) -> None:  # type: ignore[no-untyped-def]
    names = [step.name for step in scenario.steps]
    assert len(names) == len(set(names))
    assert scenario.title and scenario.summary
    assert scenario.signature or scenario.reproduced_when is not None
    for pattern in (scenario.signature, scenario.related_signature):
        re.compile(pattern)
    for step in scenario.steps:
        assert step.path.is_file(), step.path
        tree = ast.parse(step.path.read_text(encoding="utf-8"))
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert step.function in functions, f"{step.file} has no {step.function}"
    if scenario.baseline_step:
        assert scenario.baseline_step in names


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_kb_entry_points_back_and_its_steps_exist(scenario) -> None:  # type: ignore[no-untyped-def]
    entry = kb_front_matter(scenario.id)
    assert entry["id"] == scenario.id
    assert entry.get("scenario") in (scenario.id, "")
    names = {step.name for step in scenario.steps}
    for item in [*entry.get("workarounds", []), *entry.get("dead_ends", [])]:  # type: ignore[misc]
        step = item.get("step", "")
        assert not step or step in names, f"KB step {step!r} has no wizard step"


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_seed_file_is_named_when_the_kb_names_one(scenario) -> None:  # type: ignore[no-untyped-def]
    entry = kb_front_matter(scenario.id)
    if entry.get("seed"):
        assert scenario.seed == entry["seed"]


def test_step_files_import_only_stdlib_torch_and_siblings() -> None:
    allowed = {"torch", "_stepkit", "pynvml", "__future__"}
    for path in STEPS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            for root in roots:
                import sys

                assert root in allowed or root in sys.stdlib_module_names, f"{path.name}: {root}"


def test_scenarios_are_discovered_one_module_each() -> None:
    package = importlib.import_module("core.wizard.scenarios")  # the function shadows it

    mods = package.modules()
    assert all(not m.__name__.rsplit(".", 1)[1].startswith("_") for m in mods)
    assert [m.SCENARIO.id for m in mods] == [s.id for s in ALL]
    orders = [getattr(m, "ORDER", package.DEFAULT_ORDER) for m in mods]
    assert orders == sorted(orders)


def test_a_module_without_scenario_is_named_in_the_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys

    package = importlib.import_module("core.wizard.scenarios")  # the function shadows it

    (tmp_path / "broken_wizard.py").write_text("ORDER = 1\n", encoding="utf-8")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    monkeypatch.setitem(sys.modules, f"{package.__name__}.broken_wizard", None)
    sys.modules.pop(f"{package.__name__}.broken_wizard")
    with pytest.raises(package.ScenarioError, match="broken_wizard declares no SCENARIO"):
        package.discover()


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_kb_entry_names_its_wizard(scenario) -> None:  # type: ignore[no-untyped-def]
    entry = kb_front_matter(scenario.id)
    assert entry["scenario"] == scenario.id
    assert not entry.get("no_wizard")


# Issue 23: entries whose wizards are being built (the `wizards` engineer's part of the issue).
# They have neither a wizard nor a no_wizard line yet; an id leaves this set when its wizard lands
# (the test below fails until it does, so the set cannot go stale).
WIZARDS_IN_PROGRESS = frozenset(
    {
        "cuda/cuda-error-invalid-argument",
        "cuda/invalid-configuration-argument",
        "ext/extension-expects-cuda-tensor",
        "cuda/invalid-device-function",
        "triton/cannot-find-libcuda",
        "triton/missing-cuda-headers",
        "nccl/invalid-usage",
        "cuda/crash-without-message",
        "cuda/no-cuda-gpus-available",
        "cuda/cuda-not-available",
        "cuda/mixed-precision-requires-gpu",
        # reproducible (a custom op registered for the CPU only, called with a CUDA tensor);
        # not on the list of wizard candidates
        "ext/extension-without-cuda-kernels",
    }
)


def _entries() -> list[dict[str, object]]:
    return [
        tomllib.loads(path.read_text(encoding="utf-8").split("+++")[1])
        for path in sorted(KB.rglob("*.md"))
        if path.name.lower() != "readme.md"
    ]


def test_every_other_entry_says_why_it_has_no_wizard() -> None:
    ids = {s.id for s in ALL}
    for entry in _entries():
        if entry["id"] in ids or entry["id"] in WIZARDS_IN_PROGRESS:
            continue
        reason = str(entry.get("no_wizard", ""))
        assert reason.strip() and "\n" not in reason, f"{entry['id']}: no_wizard is missing"


def test_wizards_in_progress_are_real_entries_still_waiting() -> None:
    ids = {s.id for s in ALL}
    entries = {str(e["id"]): e for e in _entries()}
    for entry_id in sorted(WIZARDS_IN_PROGRESS):
        assert entry_id in entries, f"{entry_id}: no such KB entry"
        assert entry_id not in ids, f"{entry_id}: its wizard is registered; remove it from the set"
        assert not entries[entry_id].get("no_wizard"), f"{entry_id}: has a no_wizard line"


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_kb_fix_steps_match_the_entry_declaration(scenario) -> None:  # type: ignore[no-untyped-def]
    fixes = {f["id"]: f for f in kb_front_matter(scenario.id).get("fixes", [])}  # type: ignore[union-attr]
    for step in scenario.steps:
        if not step.kb_fix:
            continue
        fix = fixes[step.kb_fix]
        for name, value in fix.get("env", {}).items():
            assert step.env[name] == value
        assert step.diagnose == (fix.get("kind", "fix") == "diagnose")
