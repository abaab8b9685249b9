"""Wizard steps that re-run a repro under one of the KB entry's declared no-code fixes.

The fixes come from the entry's `[[fixes]]` tables (core/kb/fixes.py), the same declaration
`cuda-clinic try` reads: environment variables are set in a fresh child, torch switches are
applied by the shim (`Fix.shim_code()`) after `import torch` and before the step runs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from core.errors import KBError
from core.kb.fixes import Fix
from core.kb.loader import default_kb_dir
from core.kb.schema import Entry, parse_entry
from core.wizard.model import Step


@cache
def kb_entry(entry_id: str) -> Entry:
    """The bundled KB entry `entry_id`, parsed from its source file (no compiled KB needed)."""
    root = default_kb_dir()
    path = root / f"{entry_id}.md"
    if not path.is_file():
        raise KBError(f"{path}: no knowledge-base entry {entry_id!r} for its wizard")
    return parse_entry(path, root)


def entry_fixes(entry_id: str) -> dict[str, Fix]:
    """The `[[fixes]]` of the bundled KB entry `entry_id`, by fix id."""
    return {fix.id: fix for fix in kb_entry(entry_id).fixes}


def kb_fix(entry_id: str, fix_id: str, repro: Step, **kw: Any) -> Step:
    """A step re-running `repro` (same file, function, params) under the entry's fix `fix_id`.

    Keyword arguments override Step fields (params are merged over the repro's; a None value
    removes that key)."""
    fixes = entry_fixes(entry_id)
    if fix_id not in fixes:
        known = ", ".join(fixes) or "none"
        raise KBError(f"{entry_id}: field 'fixes': no fix {fix_id!r} (declared: {known})")
    merged = {**repro.params, **kw.pop("params", {})}
    params = {key: value for key, value in merged.items() if value is not None}  # None: drop
    return fix_step(fixes[fix_id], repro, params=params, **kw)


def fix_step(fix: Fix, repro: Step, **kw: Any) -> Step:
    """A step re-running `repro` under `fix`: its env variables in a fresh child, its torch
    switches as the shim. A `diagnose` fix is judged located / not_located (did the error name
    the failing line); a `fix` is judged fixed / not_fixed like any workaround. Keyword
    arguments override Step fields."""
    snippet = fix.describe() if not fix.advice else f"{fix.describe()}\n# {fix.advice}"
    fields: dict[str, Any] = {
        "name": fix.id,
        "title": fix.title,
        "file": repro.file,
        "function": repro.function,
        "params": dict(repro.params),
        "snippet": snippet,
        "isolated": True,
        "timeout_s": repro.timeout_s,
        "kb_fix": fix.id,
        "env": {**repro.env, **fix.env},  # the user's situation, then the fix
        "shim": fix.shim_code(),
        "diagnose": fix.kind == "diagnose",
        "fixed_note": "the repro runs without the error under this fix",
        "cost_metric": repro.cost_metric,
    }
    if fields["diagnose"]:
        fields["fixed_note"] = "the error is raised at the line that caused it"
    fields.update(kw)
    return Step(**fields)
