"""Scenarios declared as data: the `[wizard]` table of a KB entry, turned into a Scenario.

Adding a wizard is one step file under core/wizard/steps/ and a `[wizard]` table in the entry
(docs/wizards.md). The entry supplies what it already holds: the id, the signatures (unless the
table sets its own `signature`), the seed, and the `[[fixes]]` a fix step re-runs the repro under.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from msgspec import UNSET

from core.errors import ClinicError
from core.kb.loader import default_kb_dir, entry_files
from core.kb.schema import Entry, parse_entry
from core.kb.wizard_spec import StepSpec, WizardSpec, step_name
from core.wizard.criteria import CRITERIA, SUMMARIES
from core.wizard.kbfix import fix_step
from core.wizard.model import Predicate, Requirements, Scenario, Step

WIZARD_TABLE = "\n[wizard]"


class ScenarioError(ClinicError):
    """A declared wizard cannot be built (a missing step file, an unknown criterion)."""


def _criterion(entry: Entry, field: str, name: str) -> Predicate | None:
    if not name:
        return None
    if name not in CRITERIA:
        known = ", ".join(sorted(CRITERIA))
        raise ScenarioError(
            f"{entry.source}: field '{field}': unknown criterion {name!r} ({known})"
        )
    return CRITERIA[name]


def _fields(entry: Entry, prefix: str, given: dict[str, Any]) -> dict[str, Any]:
    """Step keyword arguments from a table's given fields (criteria resolved, fix keys out)."""
    fields = {k: v for k, v in given.items() if k not in ("fix", "drop_params")}
    if "fixed_when" in fields:
        fields["fixed_when"] = _criterion(entry, f"{prefix}.fixed_when", fields["fixed_when"])
    return fields


def _params(base: dict[str, object], spec: StepSpec) -> dict[str, object]:
    """The inherited params, the step's own over them, the dropped keys removed."""
    merged = {**base, **(spec.params if spec.params is not UNSET else {})}
    for key in spec.drop_params if spec.drop_params is not UNSET else []:
        merged.pop(key, None)
    return merged


def _plain_step(entry: Entry, prefix: str, spec: StepSpec, defaults: StepSpec, name: str) -> Step:
    """A step running a function of a step file: the defaults, then the step's own fields."""
    fields = _fields(entry, "wizard.defaults", defaults.given())
    fields.update(_fields(entry, prefix, spec.given()))
    fields["name"] = name
    fields["params"] = _params(dict(defaults.params or {}), spec)
    fields["env"] = {**(defaults.env or {}), **(spec.env or {})}
    for key in ("file", "function", "title"):
        if key not in fields:
            raise ScenarioError(f"{entry.source}: field '{prefix}.{key}': is required")
    step = Step(**fields)
    if not step.path.is_file():
        raise ScenarioError(f"{entry.source}: field '{prefix}.file': no step file {step.path}")
    return step


def _steps(entry: Entry, spec: WizardSpec) -> tuple[Step, tuple[Step, ...]]:
    """The repro, then the workarounds (a fix step re-runs the repro under the entry's fix)."""
    repro = _plain_step(
        entry, "wizard.repro", spec.repro, spec.defaults, step_name(spec.repro, "repro")
    )
    fixes = {fix.id: fix for fix in entry.fixes}
    workarounds = []
    for i, item in enumerate(spec.steps):
        prefix = f"wizard.steps[{i}]"
        name = step_name(item, "")
        if isinstance(item.fix, str):
            fields = _fields(entry, prefix, item.given())
            fields["params"] = _params(dict(repro.params), item)
            fields["name"] = name
            workarounds.append(fix_step(fixes[item.fix], repro, **fields))
        else:
            workarounds.append(_plain_step(entry, prefix, item, spec.defaults, name))
    return repro, tuple(workarounds)


def scenario_of(entry: Entry) -> Scenario:
    """The Scenario an entry's `[wizard]` table declares."""
    spec = entry.wizard
    if spec is None:
        raise ScenarioError(f"{entry.source}: declares no [wizard] table")
    repro, workarounds = _steps(entry, spec)
    signature = spec.signature
    if signature is UNSET:
        signature = "|".join(f"(?:{sig})" for sig in entry.signatures)
    if spec.summarize and spec.summarize not in SUMMARIES:
        raise ScenarioError(
            f"{entry.source}: field 'wizard.summarize': unknown summary {spec.summarize!r}"
        )
    req = spec.requirements
    return Scenario(
        id=entry.id,
        title=spec.title,
        summary=spec.summary,
        requirements=Requirements(req.cuda, req.min_free_mb, req.gpus, req.exclusive),
        repro=repro,
        workarounds=workarounds,
        signature=str(signature),
        related_signature=spec.related_signature,
        reproduced_when=_criterion(entry, "wizard.reproduced_when", spec.reproduced_when),
        reproduced_note=spec.reproduced_note,
        fixes_need_failure=spec.fixes_need_failure,
        baseline_step=spec.baseline_step,
        seed=entry.seed,
        culprit=spec.culprit,
        summarize=SUMMARIES.get(spec.summarize),
    )


@cache
def declared() -> tuple[Scenario, ...]:
    """Every wizard the bundled KB entries declare, in menu order (order, then id)."""
    root = default_kb_dir()
    found: list[tuple[int, Scenario]] = []
    for path in entry_files(root):
        if WIZARD_TABLE not in path.read_text(encoding="utf-8"):
            continue  # most entries have no wizard: skip their full validation here
        entry = parse_entry(path, root)
        if entry.wizard is not None:
            found.append((entry.wizard.order, scenario_of(entry)))
    found.sort(key=lambda item: (item[0], item[1].id))
    return tuple(scenario for _, scenario in found)
