"""Turn `scripts/gpu/try.sh OUTDIR` results into committed, redacted evidence files.

Usage: python scripts/import_try_evidence.py OUTDIR [--dest tests/data/try/gpu]

One file per script (`<script>.json`): the machine (GPU, driver, torch, CUDA, cuDNN from
OUTDIR/env.json), the try result with each run's log cut to its last lines, then passed through
the report redactor (home folders, user and host names, secrets), the same as `report` does.
tests/core/tryrun/test_gpu_evidence.py checks the verdicts in these files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.report.scrub import redact_report  # noqa: E402

DEST = ROOT / "tests" / "data" / "try" / "gpu"
LOG_LINES = 40


def machine(env: dict[str, Any]) -> dict[str, Any]:
    """GPU, driver, torch, CUDA and cuDNN of the machine the scripts ran on."""
    gpus = env.get("gpus") or [{}]
    return {
        "gpu": gpus[0].get("name"),
        "gpu_memory_mb": gpus[0].get("memory_total_mb"),
        "driver": (env.get("driver") or {}).get("version"),
        "torch": (env.get("torch") or {}).get("version"),
        "cuda": (env.get("torch") or {}).get("cuda"),
        "cudnn": (env.get("cudnn") or {}).get("version"),
        "python": (env.get("python") or {}).get("version")
        if isinstance(env.get("python"), dict)
        else env.get("python"),
    }


def _trim(outcome: dict[str, Any] | None) -> None:
    if outcome and isinstance(outcome.get("log"), str):
        lines = outcome["log"].splitlines()
        if len(lines) > LOG_LINES:
            outcome["log"] = "\n".join(
                [f"[import: {len(lines) - LOG_LINES} earlier lines not kept]", *lines[-LOG_LINES:]]
            )


def record(run: dict[str, Any], env: dict[str, Any], script: str) -> dict[str, Any]:
    """The evidence record for one script's try."""
    cwd = run.get("cwd") or ""
    if cwd:  # the checkout's place on the GPU machine says nothing; keep paths relative to it
        run = json.loads(json.dumps(run).replace(json.dumps(cwd)[1:-1], "<repo>"))
    run = dict(run)
    run.pop("id", None)
    _trim(run.get("original"))
    for fix in run.get("fixes", []):
        _trim(fix.get("outcome"))
    out, _hits = redact_report({"script": script, "machine": machine(env), "try": run})
    return out


def main(argv: list[str] | None = None) -> int:
    """Import every try JSON in OUTDIR."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--dest", type=Path, default=DEST)
    args = parser.parse_args(argv)
    try:
        env = json.loads((args.outdir / "env.json").read_text())
    except (OSError, ValueError):
        env = {}
    written = 0
    for path in sorted(args.outdir.glob("*.json")):
        if path.name == "env.json":
            continue
        try:
            run = json.loads(path.read_text())
        except ValueError:
            print(f"{path}: not JSON, skipped (see {path.with_suffix('.stderr')})")
            continue
        if run.get("schema") != "cuda-clinic/try/1":
            continue
        args.dest.mkdir(parents=True, exist_ok=True)
        dest = args.dest / path.name
        data = record(run, env, path.stem + ".py")
        dest.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        written += 1
    print(f"{written} try evidence files")
    return 0 if written else 1


if __name__ == "__main__":
    raise SystemExit(main())
