"""Turn wizard-run JSON files from the GPU machine into compact, redacted evidence records.

Usage: python scripts/import_evidence.py RUN.json [RUN.json ...] [--dest resources/evidence]
                                         [--keep] [--update-kb] [--compare]

`--keep` leaves committed records alone, except a record of other steps (a wizard whose repro
changed), which is replaced. `--compare` writes nothing: it lists the steps of recorded wizards
whose outcome differs from the record (a re-run that proves behaviour unchanged prints none).

With --update-kb each imported record is also written into its KB entry (resources/kb/<id>.md):
every workaround or dead end whose `step` the record ran gets a `[run]` evidence line citing the
record (the repro's outcome and the step's), a step that measured fixed / not fixed / located /
not located lists the record in `runs`, and a verdict the measurement contradicts is changed, the
line saying so (`located` -> "locates", a diagnosis; `not_fixed` -> "does_not_fix"); an item
that turns into a dead end moves to `dead_ends` (and back). A declared no-code fix (`[[fixes]]`)
whose kind the record contradicts is changed too (not fixed -> "dead_end", located ->
"diagnose"). Then the entry is checked as `kb validate` does (core/kb/consistency.py) and what is
still inconsistent is printed, for a person to settle (a scope, a source).

Each record keeps the scenario, the machine (GPU, driver, torch, cuDNN), the outcome and the time
of every step, the verdict and a trimmed environment. GPU UUIDs, PCI addresses, process ids and
environment variables are dropped; the report redactor then checks that nothing else identifying
is left (the script refuses to write a record that still has a redaction in it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.kb import consistency  # noqa: E402
from core.report.redact import Secrets  # noqa: E402
from core.report.scrub import redact_report  # noqa: E402

RECORD_VERSION = 1
_GPU_KEYS = ("index", "name", "compute_capability", "memory_total_mb", "ecc_enabled", "mig_enabled")
_ENV_KEYS = ("python", "platform", "driver", "torch", "cudnn", "toolkits", "packages", "findings")
_STEP_DROP = ("stderr_tail",)


def machine(run: dict[str, Any]) -> dict[str, Any]:
    """The versions a reader needs first: GPU, driver, torch, CUDA, cuDNN, Python."""
    env = run.get("environment") or {}
    rt = env.get("runtime") or {}
    gpus = env.get("gpus") or [{}]
    return {
        "gpu": rt.get("gpu") or gpus[0].get("name"),
        "compute_capability": rt.get("capability") or gpus[0].get("compute_capability"),
        "gpu_memory_mb": gpus[0].get("memory_total_mb"),
        "driver": (env.get("driver") or {}).get("version") or rt.get("driver"),
        "torch": rt.get("torch") or (env.get("torch") or {}).get("version"),
        "torch_cuda": rt.get("torch_cuda"),
        "cudnn": rt.get("cudnn"),
        "cudnn_version": (env.get("cudnn") or {}).get("version"),
        "python": rt.get("python"),
        "os": (env.get("platform") or {}).get("distribution"),
    }


def _environment(env: dict[str, Any]) -> dict[str, Any]:
    out = {key: env[key] for key in _ENV_KEYS if key in env}
    out["gpus"] = [{k: g.get(k) for k in _GPU_KEYS} for g in env.get("gpus") or []]
    cudnn = dict(out.get("cudnn") or {})
    cudnn["copies"] = [  # the file lists are long and say nothing the versions do not
        {k: c.get(k) for k in ("directory", "version", "sources", "expected", "loaded")}
        for c in cudnn.get("copies") or []
    ]
    out["cudnn"] = cudnn
    pkgs = (out.get("packages") or {}).get("pip") or []
    out["packages"] = {"pip": [{"name": p["name"], "version": p["version"]} for p in pkgs]}
    return out


def compact(run: dict[str, Any]) -> dict[str, Any]:
    """The evidence record for one wizard run (see the module docstring)."""
    steps = []
    for raw in run.get("steps") or []:
        step = {k: v for k, v in raw.items() if k not in _STEP_DROP}
        detail = step.get("error_detail")
        if isinstance(detail, dict):  # the traceback's last frames are enough to place the error
            tb = (detail.get("traceback") or "").splitlines()
            detail = {**detail, "traceback": "\n".join(tb[-12:])}
            step["error_detail"] = detail
        steps.append(step)
    return {
        "record_version": RECORD_VERSION,
        "kind": "cuda-clinic wizard run",
        "scenario_id": run["scenario"]["id"],
        "machine": machine(run),
        "outcome": run["outcome"],
        "started": run.get("started"),
        "duration_s": run.get("duration_s"),
        "verdict": run.get("verdict"),
        "steps": steps,
        "scenario": run["scenario"],
        "environment": _environment(run.get("environment") or {}),
    }


def write_record(src: Path, dest_dir: Path, overwrite: bool = True) -> Path | None:
    """Write the record for `src`; None when it exists and `overwrite` is off."""
    run = json.loads(src.read_text(encoding="utf-8"))
    record = compact(run)
    gpus = run.get("environment", {}).get("gpus") or []
    known = Secrets(gpu_uuids={g["uuid"] for g in gpus if g.get("uuid")})
    _, hits = redact_report(record, known)
    if hits:
        found = ", ".join(f"{h.kind} at {'/'.join(map(str, h.path))}" for h in hits)
        raise SystemExit(f"{src}: refusing to write, identifying values left: {found}")
    dest = dest_dir / (record["scenario_id"].replace("/", "__") + ".json")
    if dest.exists() and not overwrite and _same_steps(dest, record):
        return None  # a record of other steps (the wizard's repro changed) is replaced
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return dest


def _steps_of(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(s["name"], s["file"], s["function"]) for s in record["scenario"]["steps"]]


def _same_steps(path: Path, record: dict[str, Any]) -> bool:
    """Whether the committed record at `path` measured the same steps as `record`."""
    return _steps_of(json.loads(path.read_text(encoding="utf-8"))) == _steps_of(record)


def compare(src: Path, dest_dir: Path) -> list[str]:
    """How a new run of a recorded wizard differs from its committed record, step by step
    ([] when every step ended as recorded); a line saying so when there is nothing to compare."""
    record = compact(json.loads(src.read_text(encoding="utf-8")))
    dest = dest_dir / (record["scenario_id"].replace("/", "__") + ".json")
    ident = record["scenario_id"]
    if not dest.exists() or not _same_steps(dest, record):
        return [f"{ident}: no record of these steps to compare with"]
    old = {s["name"]: s["outcome"] for s in json.loads(dest.read_text(encoding="utf-8"))["steps"]}
    return [
        f"{ident}: {step['name']} {old[step['name']]} -> {step['outcome']}"
        for step in record["steps"]
        if old.get(step["name"]) != step["outcome"]
    ]


# A verdict a measured step outcome allows (core/kb/consistency.py holds the rule).
ALLOWED = consistency.ALLOWED
MEASURED_VERDICT = {
    "fixed": "fixes",
    "not_fixed": "does_not_fix",
    "located": "locates",
    "not_located": "does_not_fix",
}
# A [[fixes]] kind a measured outcome contradicts, and the kind it becomes.
FIX_KIND = {
    ("fix", "not_fixed"): "dead_end",
    ("fix", "located"): "diagnose",
    ("diagnose", "not_located"): "dead_end",
    ("dead_end", "fixed"): "fix",
}


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string


def _prefix(record: dict[str, Any]) -> str:
    """'[run] GPU, driver D, torch T, cuDNN C' (no colon: the first colon ends the prefix)."""
    m = record.get("machine") or {}
    if not m.get("gpu"):  # a CPU-only reproduction (a CPU build of torch)
        return f"[run] no GPU, torch {m.get('torch') or '?'}".replace(":", " ")
    parts = [str(m.get("gpu")).replace(":", " ")]
    parts += [f"{k} {m[v]}" for k, v in (("driver", "driver"), ("torch", "torch")) if m.get(v)]
    cudnn = m.get("cudnn_version") or m.get("cudnn")
    if cudnn:
        parts.append(f"cuDNN {cudnn}")
    return "[run] " + ", ".join(parts)


def _one_line(text: Any, limit: int = 300) -> str:
    return " ".join(str(text or "").split())[:limit]


def _set_evidence(block: str, items: list[str]) -> str:
    new = "evidence = [\n" + "".join(f"  {_toml_str(e)},\n" for e in items) + "]"
    for pattern in (r"(?ms)^evidence = \[\n.*?\n\]$", r"(?m)^evidence = \[.*\]$"):
        if re.search(pattern, block):
            return re.sub(pattern, lambda _m: new, block, count=1)
    return re.sub(r"(?m)^(verdict = .*)$", lambda m: m.group(1) + "\n" + new, block, count=1)


def _set_runs(block: str, runs: list[str]) -> str:
    if re.search(r"(?m)^runs = \[.*\]$", block):
        if not runs:
            return re.sub(r"(?m)^runs = \[.*\]\n?", "", block, count=1)
        return re.sub(r"(?m)^runs = \[.*\]$", lambda _m: f"runs = {json.dumps(runs)}", block)
    if not runs:
        return block
    return re.sub(
        r"(?m)^(step = .*)$", lambda m: m.group(1) + f"\nruns = {json.dumps(runs)}", block, count=1
    )


def _update_block(block: str, record: dict[str, Any], rel: str, changes: list[str]) -> str:
    """One [[workarounds]] / [[dead_ends]] table: evidence line, runs, verdict."""
    data = tomllib.loads(block)
    kind = next(iter(data))
    item = data[kind][0]
    steps = {s["name"]: s for s in record["steps"]}
    name = item.get("step", "")
    if name not in steps:
        return block
    step, repro = steps[name], record["steps"][0]
    cite = f"resources/{rel}"
    outcome = step["outcome"]
    line = (
        f"{_prefix(record)}: repro {repro['outcome'].replace('_', ' ')} "
        f"({_one_line(repro.get('error') or repro.get('note'), 200)}); wizard step {name} "
        f"{outcome.replace('_', ' ')}: {_one_line(step.get('note'), 200)}"
    )
    verdict = item["verdict"]
    runs = [r for r in item.get("runs", []) if r != rel]
    earlier = [
        e
        for e in item.get("evidence", [])
        if cite in e and f"; wizard step {name} " in e and "; this contradicts" in e
    ]
    on_gpu = bool((record.get("machine") or {}).get("gpu"))
    if outcome in ALLOWED:
        if on_gpu:  # `runs` holds GPU records (machine fully described); CPU ones cite by line
            runs.append(rel)
        if earlier and verdict == MEASURED_VERDICT[outcome]:  # a re-import keeps the history
            line += earlier[0][earlier[0].index("; this contradicts") :].replace(f" ({cite})", "")
        elif verdict not in ALLOWED[outcome]:
            new = MEASURED_VERDICT[outcome]
            line += f"; this contradicts the earlier verdict {verdict!r}, now {new!r}"
            block = re.sub(r'(?m)^verdict = ".*"$', f'verdict = "{new}"', block, count=1)
            changes.append(f"{record['scenario_id']} {kind} {name}: verdict {verdict} -> {new}")
    # Replace only this importer's own earlier line; hand-written [run] lines stay.
    mine = f"; wizard step {name} "
    evidence = [e for e in item.get("evidence", []) if not (cite in e and mine in e)]
    evidence.append(f"{line} ({cite})")
    block = _set_evidence(block, evidence)
    block = _set_runs(block, runs)
    changes.append(f"{record['scenario_id']} {kind} {name}: {outcome}")
    verdict = tomllib.loads(block)[kind][0]["verdict"]
    home = "dead_ends" if verdict == "does_not_fix" else "workarounds"
    if verdict in ("does_not_fix", "fixes", "locates") and home != kind:
        block = block.replace(f"[[{kind}]]", f"[[{home}]]", 1)
        changes.append(f"{record['scenario_id']} {kind} {name}: moved to {home}")
    return block


def _update_fix(block: str, record: dict[str, Any], changes: list[str]) -> str:
    """One [[fixes]] table: a kind its step's outcome contradicts is changed."""
    item = tomllib.loads(block)["fixes"][0]
    outcome = {s["name"]: s["outcome"] for s in record["steps"]}.get(item["id"], "")
    kind = item.get("kind", "fix")
    new = FIX_KIND.get((kind, outcome))
    if new is None:
        return block
    if re.search(r'(?m)^kind = ".*"$', block):
        block = re.sub(r'(?m)^kind = ".*"$', f'kind = "{new}"', block, count=1)
    else:
        block = re.sub(r"(?m)^(title = .*)$", lambda m: m.group(1) + f'\nkind = "{new}"', block)
    changes.append(f"{record['scenario_id']} fixes {item['id']}: kind {kind} -> {new} ({outcome})")
    return block


def update_kb(record: dict[str, Any], rel: str, kb_dir: Path) -> list[str]:
    """Write the record's measured outcomes into its KB entry; the list of changes made.

    `rel` is the record's path under resources/ (evidence/<id>.json). The entry must still
    parse afterwards, or it is left unchanged and SystemExit says why.
    """
    from core.errors import KBError
    from core.kb.schema import parse_entry

    path = kb_dir / f"{record['scenario_id']}.md"
    if not path.is_file():
        raise SystemExit(f"{path}: no KB entry for {record['scenario_id']}")
    original = path.read_text(encoding="utf-8")
    if not original.startswith("+++\n"):
        raise SystemExit(f"{path}: does not start with a '+++' line")
    head, sep, body = original[4:].partition("\n+++")
    blocks = re.split(r"(?m)^(?=\[\[)", head)
    changes: list[str] = []
    for i, block in enumerate(blocks):
        if re.match(r"\[\[(workarounds|dead_ends)\]\]", block):
            blocks[i] = _update_block(block, record, rel, changes)
        elif re.match(r"\[\[fixes\]\]", block):
            blocks[i] = _update_fix(block, record, changes)
    updated = "+++\n" + "".join(blocks) + sep + body
    if updated == original:
        return changes
    path.write_text(updated, encoding="utf-8")
    try:
        parse_entry(path, kb_dir)
    except KBError as exc:
        path.write_text(original, encoding="utf-8")
        raise SystemExit(f"{path}: left unchanged, the update would not parse: {exc}") from exc
    return changes


def left_to_settle(entry_id: str, kb_dir: Path) -> list[str]:
    """What `kb validate` still finds inconsistent in the entry after an import."""
    from core.kb.schema import parse_entry
    from core.kb.scope import Records, with_scopes

    evidence = kb_dir.parent
    records = Records(evidence)
    entry = with_scopes(parse_entry(kb_dir / f"{entry_id}.md", kb_dir), evidence, records)
    return consistency.problems(entry, records)


def main(argv: list[str] | None = None) -> int:
    """Import each run file given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--dest", type=Path, default=ROOT / "resources" / "evidence")
    parser.add_argument("--keep", action="store_true", help="do not overwrite existing records")
    parser.add_argument(
        "--update-kb",
        action="store_true",
        help="also cite each record in its KB entry (runs, [run] evidence lines, verdicts)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="write nothing: say which steps of recorded wizards ended otherwise (exit 1 if any)",
    )
    parser.add_argument(
        "--kb", type=Path, default=ROOT / "resources" / "kb", help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.compare:
        lines = [line for src in args.runs for line in compare(src, args.dest)]
        print("\n".join(lines) or "every step ended as its record says")
        return 1 if any("->" in line for line in lines) else 0
    failed = 0
    for src in args.runs:
        try:
            dest = write_record(src, args.dest, overwrite=not args.keep)
        except (ValueError, KeyError, TypeError) as exc:  # an empty or cut-off run file
            print(f"{src}: not a wizard run ({type(exc).__name__}: {exc}); skipped")
            failed += 1
            continue
        print(f"{src} -> {dest}" if dest else f"{src}: kept the existing record")
        if args.update_kb and dest is not None:
            record = json.loads(dest.read_text(encoding="utf-8"))
            if record["outcome"] == "skipped":  # the wizard could not run there: no evidence
                print(f"  kb: not updated, the wizard did not run: {record['steps'][0]['note']}")
                continue
            for change in update_kb(record, f"evidence/{dest.name}", args.kb):
                print(f"  kb: {change}")
            for problem in left_to_settle(record["scenario_id"], args.kb):
                print(f"  kb: still to settle by hand: {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
