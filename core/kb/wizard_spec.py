"""The `[wizard]` table of a KB entry: a repro wizard declared as data (docs/kb-format.md).

The table is parsed into typed msgspec structs here, in the KB layer (a malformed table is a
one-line error naming the file and the field, like every other field); `core/wizard/declared.py`
turns it into a runnable Scenario (step files, criteria, the entry's fixes and signatures).
A field left out is `UNSET`: the step inherits it from `[wizard.defaults]` (plain steps) or from
the repro (fix steps), else the Step default applies.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from core.errors import KBError

Params = dict[str, Any]
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FILE = re.compile(r"[a-z0-9_]+\.py")
_PATH = re.compile(r"\$((?:\.\w+|\[\d+\])*)")


class StepSpec(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One step: a function in a step file, or an entry's `[[fixes]]` item applied to the repro."""

    name: str | UnsetType = UNSET  # the id KB workarounds/dead ends name in their `step`
    fix: str | UnsetType = UNSET  # a `[[fixes]]` id: re-run the repro under that fix
    title: str | UnsetType = UNSET
    file: str | UnsetType = UNSET  # under core/wizard/steps/
    function: str | UnsetType = UNSET
    params: Params | UnsetType = UNSET  # merged over the defaults' (or the repro's) params
    drop_params: list[str] | UnsetType = UNSET  # keys removed from the inherited params
    snippet: str | UnsetType = UNSET
    claim: str | UnsetType = UNSET
    claim_fixes: bool | UnsetType = UNSET
    isolated: bool | UnsetType = UNSET
    timeout_s: float | UnsetType = UNSET
    fixed_when: str | UnsetType = UNSET  # a criterion name (core/wizard/criteria.py)
    fixed_note: str | UnsetType = UNSET
    cost_metric: str | UnsetType = UNSET
    env: dict[str, str] | UnsetType = UNSET
    diagnose: bool | UnsetType = UNSET  # judged located / not_located (by fixed_when, if given)

    def given(self) -> dict[str, object]:
        """The fields this table sets (UNSET ones left out)."""
        return {
            name: getattr(self, name)
            for name in self.__struct_fields__
            if getattr(self, name) is not UNSET
        }


class RequirementsSpec(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """What the wizard needs from the machine."""

    cuda: bool = False
    min_free_mb: int = 0
    gpus: int = 0
    exclusive: bool = False


class WizardSpec(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A repro wizard: the repro step, the workaround steps, what counts as reproduced."""

    title: str
    summary: str
    repro: StepSpec
    order: int = 1000  # menu position, lower first
    requirements: RequirementsSpec = msgspec.field(default_factory=RequirementsSpec)
    defaults: StepSpec = msgspec.field(default_factory=StepSpec)  # for the repro and plain steps
    steps: list[StepSpec] = msgspec.field(default_factory=list)
    signature: str | UnsetType = UNSET  # UNSET: the entry's own signatures
    related_signature: str = ""
    reproduced_when: str = ""  # a criterion name instead of (or beside) an error signature
    reproduced_note: str = ""
    fixes_need_failure: bool = True
    baseline_step: str = ""
    culprit: str = "culprit"
    summarize: str = ""  # a summary name (core/wizard/criteria.py: SUMMARIES)

    def step_names(self) -> list[str]:
        """The repro's and every step's name, in order."""
        return [step_name(self.repro, "repro"), *(step_name(s, "") for s in self.steps)]


def step_name(step: StepSpec, default: str) -> str:
    """A step's name: `name`, else its fix id, else `default`."""
    if isinstance(step.name, str):
        return step.name
    if isinstance(step.fix, str):
        return step.fix
    return default


def _field_of(error: msgspec.ValidationError) -> tuple[str, str]:
    """msgspec's "Expected ... - at `$.steps[0].title`" as ('wizard.steps[0].title', problem)."""
    text = str(error)
    problem, _, where = text.rpartition(" - at ")
    found = _PATH.search(where)
    path = found.group(1) if found else ""
    if not problem:
        problem, path = text, ""
    unknown = re.match(r"Object contains unknown field `(\w+)`", problem)
    if unknown:
        return f"wizard{path}.{unknown.group(1)}", "unknown field"
    missing = re.match(r"Object missing required field `(\w+)`", problem)
    if missing:
        return f"wizard{path}.{missing.group(1)}", "is required"
    return f"wizard{path}", problem[0].lower() + problem[1:]


def parse_wizard(  # noqa: PLR0912 - one check per field of the table
    raw: Any, fix_ids: set[str], step_refs: list[tuple[str, str]], fail: Callable[..., KBError]
) -> WizardSpec:
    """Validate the `[wizard]` table: types, names, fix ids, and that every KB `step` exists.

    `step_refs` are (field, step name) of the entry's workarounds and dead ends that name a
    step; `fail(field, problem)` makes the one-line error."""
    if not isinstance(raw, dict):
        raise fail("wizard", "must be a table")
    try:
        spec = msgspec.convert(raw, WizardSpec, strict=False)
    except msgspec.ValidationError as exc:
        raise fail(*_field_of(exc)) from None
    for field, text in (("title", spec.title), ("summary", spec.summary)):
        if not text.strip():
            raise fail(f"wizard.{field}", "is required")
    tables = [("wizard.repro", spec.repro), ("wizard.defaults", spec.defaults)]
    tables += [(f"wizard.steps[{i}]", step) for i, step in enumerate(spec.steps)]
    for prefix, step in tables:
        _check_step(prefix, step, fix_ids, fail)
    if isinstance(spec.defaults.fix, str) or isinstance(spec.repro.fix, str):
        raise fail("wizard.repro.fix", "only workaround steps can apply a fix")
    names = spec.step_names()
    for i, step in enumerate(spec.steps):
        name = names[i + 1]
        if not name:
            raise fail(f"wizard.steps[{i}].name", "is required (or a fix id)")
        if name in names[: i + 1]:
            raise fail(f"wizard.steps[{i}].name", f"repeats the step name {name!r}")
        if not isinstance(step.fix, str) and not isinstance(step.title, str):
            raise fail(f"wizard.steps[{i}].title", "is required for a step that is not a fix")
    for field in ("signature", "related_signature"):
        pattern = getattr(spec, field)
        if isinstance(pattern, str):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise fail(f"wizard.{field}", f"is not a valid regex: {exc}") from None
    if spec.baseline_step and spec.baseline_step not in names:
        raise fail("wizard.baseline_step", f"names no step ({spec.baseline_step!r})")
    for field, name in step_refs:
        if name not in names:
            raise fail(field, f"the wizard has no step {name!r}")
    return spec


def _check_step(
    prefix: str, step: StepSpec, fix_ids: set[str], fail: Callable[..., KBError]
) -> None:
    """Names are slugs, files are step files, fix ids are the entry's, regexes compile."""
    if isinstance(step.name, str) and not _NAME.fullmatch(step.name):
        raise fail(f"{prefix}.name", f"must be a lowercase-hyphen slug (got {step.name!r})")
    if isinstance(step.file, str) and not _FILE.fullmatch(step.file):
        raise fail(
            f"{prefix}.file", f"must be a file name under core/wizard/steps/ ({step.file!r})"
        )
    if isinstance(step.fix, str) and step.fix not in fix_ids:
        known = ", ".join(sorted(fix_ids)) or "none"
        raise fail(f"{prefix}.fix", f"no fix {step.fix!r} in this entry (declared: {known})")
    if isinstance(step.timeout_s, float | int) and step.timeout_s <= 0:
        raise fail(f"{prefix}.timeout_s", "must be positive")
