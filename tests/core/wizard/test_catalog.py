"""Every registered scenario is well formed and matches its knowledge-base entry."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from core.errors import KBError
from core.kb.loader import registered_scenarios
from core.kb.schema import parse_entry
from core.wizard import scenarios
from core.wizard.declared import ScenarioError, scenario_of
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
    assert entry.get("scenario", "") in (scenario.id, "")  # a [wizard] table is its own scenario
    names = {step.name for step in scenario.steps}
    for item in [*entry.get("workarounds", []), *entry.get("dead_ends", [])]:  # type: ignore[misc]
        step = item.get("step", "")
        assert not step or step in names, f"KB step {step!r} has no wizard step"


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_seed_file_is_named_when_the_kb_names_one(scenario) -> None:  # type: ignore[no-untyped-def]
    entry = kb_front_matter(scenario.id)
    if entry.get("seed"):
        assert scenario.seed == entry["seed"]


def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run: those under `if TYPE_CHECKING:` are read by mypy only."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skip
    ]


def test_step_files_import_only_stdlib_torch_and_siblings() -> None:
    import sys

    siblings = {path.stem for path in STEPS_DIR.glob("*.py")}  # _stepkit, _extkit, ...
    allowed = {"torch", "pynvml", "__future__"} | siblings
    for path in STEPS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            else:
                roots = {(node.module or "").split(".")[0]}
            for root in roots:
                assert root in allowed or root in sys.stdlib_module_names, f"{path.name}: {root}"


def test_scenarios_are_declared_by_their_kb_entries_in_menu_order() -> None:
    declaring = sorted(
        (kb_front_matter(entry_id)["wizard"]["order"], entry_id)  # type: ignore[index]
        for entry_id in registered_scenarios()
    )
    assert [entry_id for _, entry_id in declaring] == [s.id for s in ALL]
    assert not (STEPS_DIR.parent / "scenarios").exists()  # no scenario modules left


WIZARD_ENTRY = """+++
id = "cuda/sample"
title = "Sample error"
domain = "cuda"
category = "kernel-fault"
summary = "One sentence."
signatures = ['CUDA error: sample']
confidence = "medium"

[[workarounds]]
title = "Validate"
verdict = "unverified"
step = "validate"

[[citations]]
ref = "pytorch/pytorch#1"

[[fixes]]
id = "launch-blocking"
title = "CUDA_LAUNCH_BLOCKING=1"
kind = "diagnose"
env = {{ CUDA_LAUNCH_BLOCKING = "1" }}

[wizard]
title = "A sample"
summary = "A sample wizard."
requirements = {{ cuda = true }}

[wizard.defaults]
file = "device_assert.py"

[wizard.repro]
title = "Repro"
function = "repro"
params = {{ kind = "labels" }}

[[wizard.steps]]
fix = "launch-blocking"

[[wizard.steps]]
{step}
+++
"""
GOOD_STEP = 'name = "validate"\ntitle = "Validate"\nfunction = "validate"\nfixed_when = "caught"'


def _sample(tmp_path: Path, step: str) -> Path:
    path = tmp_path / "cuda" / "sample.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(WIZARD_ENTRY.format(step=step), encoding="utf-8")
    return path


def test_a_declared_wizard_becomes_a_scenario(tmp_path: Path) -> None:
    scenario = scenario_of(parse_entry(_sample(tmp_path, GOOD_STEP), tmp_path))
    assert scenario.id == "cuda/sample" and scenario.signature == "(?:CUDA error: sample)"
    blocking, validate = scenario.workarounds
    assert blocking.env == {"CUDA_LAUNCH_BLOCKING": "1"} and blocking.diagnose
    assert blocking.params == {"kind": "labels"} and blocking.function == "repro"
    assert validate.file == "device_assert.py" and validate.fixed_when is not None
    assert validate.fixed_when({"caught": True}, {}) and not validate.fixed_when({}, {})


@pytest.mark.parametrize(
    ("step", "problem"),
    [
        ('name = "validate"\nfunction = "validate"', "'wizard.steps[1].title': is required"),
        (
            'name = "validate"\ntitle = "V"\nfunction = "f"\ncolour = "red"',
            "'wizard.steps[1].colour': unknown field",
        ),
        ('fix = "nope"', "'wizard.steps[1].fix': no fix 'nope' in this entry"),
        ('fix = "launch-blocking"', "'wizard.steps[1].name': repeats the step name"),
        (
            'name = "other"\ntitle = "V"\nfunction = "f"',
            "'workarounds[0].step': the wizard has no step 'validate'",
        ),
        (
            'name = "validate"\ntitle = "V"\nfunction = "f"\ntimeout_s = "soon"',
            "'wizard.steps[1].timeout_s'",
        ),
    ],
)
def test_a_malformed_wizard_table_is_one_line_naming_the_field(
    tmp_path: Path, step: str, problem: str
) -> None:
    with pytest.raises(KBError, match=r"sample\.md: field ") as caught:
        parse_entry(_sample(tmp_path, step), tmp_path)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("step", "problem"),
    [
        (
            GOOD_STEP.replace("caught", "caught-twice"),
            "field 'wizard.steps[1].fixed_when': unknown criterion 'caught-twice'",
        ),
        (GOOD_STEP + '\nfile = "no_such_steps.py"', "field 'wizard.steps[1].file': no step file"),
    ],
)
def test_a_wizard_naming_missing_code_is_named_in_the_error(
    tmp_path: Path, step: str, problem: str
) -> None:
    entry = parse_entry(_sample(tmp_path, step), tmp_path)
    with pytest.raises(ScenarioError, match=re.escape(problem)):
        scenario_of(entry)


@pytest.mark.parametrize("scenario", ALL, ids=[s.id for s in ALL])
def test_kb_entry_names_its_wizard(scenario) -> None:  # type: ignore[no-untyped-def]
    entry = parse_entry(KB / f"{scenario.id}.md", KB)
    assert entry.scenario == scenario.id and entry.wizard is not None
    assert not entry.no_wizard


def _entries() -> list[dict[str, object]]:
    return [
        tomllib.loads(path.read_text(encoding="utf-8").split("+++")[1])
        for path in sorted(KB.rglob("*.md"))
        if path.name.lower() != "readme.md"
    ]


def test_every_other_entry_says_why_it_has_no_wizard() -> None:
    ids = {s.id for s in ALL}
    for entry in _entries():
        if entry["id"] in ids:
            continue
        reason = str(entry.get("no_wizard", ""))
        assert reason.strip() and "\n" not in reason, f"{entry['id']}: no_wizard is missing"


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
