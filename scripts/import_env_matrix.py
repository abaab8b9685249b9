"""Import the env fault matrix run on the GPU machine as redacted test fixtures.

Usage: python scripts/import_env_matrix.py OUTDIR [--dest tests/data/env/broken]
OUTDIR is what scripts/gpu/env_matrix.sh wrote (after `bash scripts/gpu_run.sh env_matrix`,
unpack gpu.tar.gz: its env_matrix/ folder). For every setup in expected.toml this redacts
<setup>.json with the report redactor (core.report.scrub: user, host, home, GPU UUIDs, secret
variables) and writes it as DEST/<setup>.json; the run's summary, benchmark and what a plain
torch program printed go to DEST/matrix_run.json. Prints one line per setup: what `env` said
first, against what expected.toml wrote down beforehand. Exit 1 when a setup is missing or
unreadable (the others are still imported), 2 on bad usage. The replaced matrix_run.json's
summary, benchmark and first findings are kept in the new one (`earlier_runs`); with
--only-present only the setups OUTDIR holds are imported (a partial run).
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

from core.report.redact import Secrets  # noqa: E402
from core.report.scrub import redact_report  # noqa: E402

DEFAULT_DEST = ROOT / "tests" / "data" / "env" / "broken"


def _secrets(data: dict[str, Any]) -> Secrets:
    """What must not leak from the GPU machine: its home, user and host (not this machine's)."""
    secrets = Secrets()
    env = data.get("env_vars") or {}
    home = env.get("HOME")
    python = data.get("python")
    executable = python.get("executable") if isinstance(python, dict) else python
    paths = [str(executable or ""), str(env.get("VIRTUAL_ENV"))]
    for path in paths:
        match = re.match(r"^(/home/[^/]+|/root)(?=/)", path)
        if match and not home:
            home = match.group(1)
    if isinstance(home, str) and home not in ("", "/"):
        secrets.home = home
    node = (data.get("platform") or {}).get("node")
    if isinstance(node, str) and node:
        secrets.hosts.add(node)
    return secrets


def redact(data: dict[str, Any]) -> dict[str, Any]:
    """The env JSON with identities and secrets replaced (core.report's redactor)."""
    out, _ = redact_report(data, _secrets(data))
    return out


def _text(path: Path, limit: int = 4000) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-limit:]
    except OSError:
        return None


def _replayed_first(path: Path) -> str:
    """The first finding `env --from` of this version derives from a fixture."""
    from core.env.saved import load_saved, rederive

    try:
        findings = rederive(load_saved(path)).findings
    except Exception as exc:  # the fixture is kept; the test suite says what is wrong
        return f"not replayable: {type(exc).__name__}: {exc}"
    return findings[0].id if findings else "no-findings"


def _earlier(previous: dict[str, Any]) -> list[dict[str, Any]]:
    """The earlier runs kept in a matrix_run.json about to be replaced, the replaced one last:
    machine, summary, benchmark medians and each setup's first finding against the expected."""
    runs = list(previous.get("earlier_runs") or [])
    bench = previous.get("bench") or {}
    runs.append(
        {
            "machine": previous.get("machine"),
            "summary": previous.get("summary"),
            "bench_median": bench.get("median"),
            "bench_ratio": bench.get("ratio"),
            "first": {
                name: {"first": s.get("first"), "expected": s.get("expected")}
                for name, s in (previous.get("setups") or {}).items()
            },
        }
    )
    return runs


def import_run(outdir: Path, dest: Path, only_present: bool = False) -> int:
    """Write the fixtures; the number of setups that could not be imported.

    The matrix_run.json being replaced goes into the new one's `earlier_runs`. With
    `only_present` (a run of some setups: scripts/gpu/env2short.sh) setups without a JSON in
    OUTDIR are left as they are and the others' entries are updated in place.
    """
    expected = tomllib.loads((DEFAULT_DEST / "expected.toml").read_text(encoding="utf-8"))
    dest.mkdir(parents=True, exist_ok=True)
    failures = 0
    run_path = dest / "matrix_run.json"
    previous = json.loads(run_path.read_text(encoding="utf-8")) if run_path.exists() else {}
    run: dict[str, Any] = {"setups": {}, "earlier_runs": _earlier(previous) if previous else []}
    if only_present:
        run["setups"] = dict(previous.get("setups") or {})
    for setup in expected["setup"]:
        name = setup["name"]
        source = outdir / f"{name}.json"
        if only_present and not source.exists():
            continue
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or "findings" not in data:
                raise ValueError("no findings (not an env --json output)")
        except (OSError, ValueError) as exc:
            print(f"{name}: NOT IMPORTED ({source}: {exc})")
            failures += 1
            continue
        clean = redact(data)
        clean["matrix"] = {"setup": name, "env": setup.get("env", {}), "recorded": True}
        (dest / f"{name}.json").write_text(json.dumps(clean, indent=1, sort_keys=True) + "\n")
        first = (clean.get("findings") or [{"id": "no-findings"}])[0]["id"]
        verdict = "as expected" if first == setup["first"] else f"EXPECTED {setup['first']}"
        replayed = _replayed_first(dest / f"{name}.json")
        print(f"{name}: first={first} ({verdict}); replayed by this version: {replayed}")
        user_view = _text(outdir / f"{name}.user_view.txt")
        run["setups"][name] = {
            "first": first,  # what the probe said on the GPU machine
            "replayed_first": replayed,  # what `env --from` of this version says
            "expected": setup["first"],
            "stderr_tail": _text(outdir / f"{name}.stderr.txt", 1500),
            "user_view": redact({"text": user_view})["text"] if user_view else None,
        }
    bench = outdir / "bench.json"
    if bench.exists():
        run["bench"] = json.loads(bench.read_text(encoding="utf-8"))
    run["summary"] = _text(outdir / "summary.txt")
    run["machine"] = _text(outdir / "nvidia-smi.txt")
    clean_run = redact(run)
    (dest / "matrix_run.json").write_text(json.dumps(clean_run, indent=1, sort_keys=True) + "\n")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument(
        "--only-present", action="store_true", help="import the setups OUTDIR has, keep the rest"
    )
    args = parser.parse_args(argv)
    if not args.outdir.is_dir():
        print(f"import_env_matrix: {args.outdir} is not a folder", file=sys.stderr)
        return 2
    return 1 if import_run(args.outdir, args.dest, args.only_present) else 0


if __name__ == "__main__":
    sys.exit(main())
