"""Load a KB directory: parse every entry file, then check the links between entries."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import KBError
from core.kb.schema import Entry, parse_entry
from core.kb.scope import Records, with_scopes
from core.paths import resources_dir


def default_kb_dir() -> Path:
    """The bundled entry sources: `resources/kb/`."""
    return resources_dir() / "kb"


def entry_files(root: Path) -> list[Path]:
    """Every `*.md` entry file under `root`, in a stable order (README files excluded)."""
    if not root.is_dir():
        raise KBError(f"{root}: field 'directory': knowledge-base directory not found")
    files = [p for p in root.rglob("*.md") if p.name.lower() != "readme.md"]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def display_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


@dataclass
class LoadResult:
    """The valid entries and one error line per bad file."""

    entries: list[Entry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def load_dir(
    root: Path,
    scenario_ids: Collection[str] | None = None,
    *,
    known_ids: Collection[str] = (),
    evidence_root: Path | None = None,
    label_of: Callable[[Path], str] = display_path,
    user: bool = False,
) -> LoadResult:
    """Parse every entry under `root`; `scenario_ids`, when given, are the registered scenarios.

    `known_ids` are entries outside `root` that links may point at (a pack's links to bundled
    entries); evidence records are looked up under `evidence_root` (default: root's parent);
    `label_of` names a file in error lines; `user`: a pack of the user's own entries."""
    result = LoadResult()
    labels: dict[str, str] = {}
    for path in entry_files(root):
        label = label_of(path)
        try:
            entry = parse_entry(path, root, label, user)
        except KBError as exc:
            result.errors.append(str(exc))
            continue
        labels[entry.id] = label
        result.entries.append(entry)
    known = {entry.id for entry in result.entries} | _ids_of_bad_files(root, result)
    known |= set(known_ids)
    evidence = evidence_root or root.parent
    records = Records(evidence)
    good = []
    for entry in result.entries:
        problem = _link_problem(entry, known, scenario_ids) or _run_problem(entry, evidence)
        if problem:
            result.errors.append(f"{labels[entry.id]}: {problem}")
        else:  # each verdict's stack: from the records and the citations it names
            good.append(with_scopes(entry, evidence, records))
    result.entries = good
    return result


def _ids_of_bad_files(root: Path, result: LoadResult) -> set[str]:
    """Ids implied by the paths of files that failed, so links to them are not reported twice."""
    ids = set()
    for path in entry_files(root):
        ids.add(path.relative_to(root).with_suffix("").as_posix())
    return ids - {entry.id for entry in result.entries}


def _link_problem(entry: Entry, known: set[str], scenario_ids: Collection[str] | None) -> str:
    """The first broken link of `entry` (masked_by, related, scenario), or ''."""
    for name in ("masked_by", "related"):
        for i, target in enumerate(getattr(entry, name)):
            if target not in known:
                return f"field '{name}[{i}]': unknown entry id {target!r}"
            if target == entry.id:
                return f"field '{name}[{i}]': an entry cannot point at itself"
    if entry.wizard is not None and scenario_ids is not None and entry.id not in scenario_ids:
        return "field 'wizard': only the bundled entries declare wizards (their step files ship)"
    if entry.scenario and scenario_ids is not None and entry.scenario not in scenario_ids:
        return f"field 'scenario': {entry.scenario!r} is not a registered wizard scenario"
    return ""


def _run_problem(entry: Entry, resources: Path) -> str:
    """The first evidence record that a workaround or dead end names but that is missing, or ''."""
    for name in ("workarounds", "dead_ends"):
        for i, item in enumerate(getattr(entry, name)):
            for j, run in enumerate(item.runs):
                if not (resources / run).is_file():
                    return (
                        f"field '{name}[{i}].runs[{j}]': no evidence record {run!r} in {resources}"
                    )
    return ""


def load_entries(
    root: Path | None = None, scenario_ids: Collection[str] | None = None
) -> list[Entry]:
    """All entries of a valid KB directory; raises KBError with the first bad file's line."""
    result = load_dir(root or default_kb_dir(), scenario_ids)
    if result.errors:
        more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        raise KBError(result.errors[0] + more)
    return result.entries


WIZARD_TABLE = "\n[wizard]"


def registered_scenarios(root: Path | None = None) -> set[str]:
    """The ids of the bundled entries that declare a wizard (`[wizard]` table): the scenarios."""
    root = root or default_kb_dir()
    return {
        path.relative_to(root).with_suffix("").as_posix()
        for path in entry_files(root)
        if WIZARD_TABLE in path.read_text(encoding="utf-8")
    }
