"""Turn `scripts/gpu/answer.sh OUTDIR` results into committed, redacted evidence files.

Usage: python scripts/import_answer_evidence.py OUTDIR [--dest tests/data/answer/gpu]

Writes `answer-gpu.json`: the machine (from OUTDIR/env.json), each `try` run's answer and fix
verdicts (logs cut to their last lines), the wizard run's outcome and verdict, `match`'s answer
and the report's origin and PDF page count, passed through the report redactor (home folders,
user and host names, secrets). tests/core/answer/test_gpu_answer.py checks them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.report.scrub import redact_report  # noqa: E402

DEST = ROOT / "tests" / "data" / "answer" / "gpu"
LOG_LINES = 30


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _machine(env: dict[str, Any] | None) -> dict[str, Any]:
    env = env or {}
    gpus = env.get("gpus") or [{}]
    torch = env.get("torch") or {}
    return {
        "gpu": gpus[0].get("name"),
        "driver": (env.get("driver") or {}).get("version"),
        "torch": torch.get("version"),
        "cuda": torch.get("cuda"),
        "cudnn": (env.get("cudnn") or {}).get("version"),
    }


def _tail(text: str) -> str:
    return "\n".join(str(text or "").splitlines()[-LOG_LINES:])


def _try(run: dict[str, Any] | None) -> dict[str, Any] | None:
    if not run:
        return None
    fixes = []
    for fix in run.get("fixes") or []:
        outcome = fix.get("outcome") or {}
        fixes.append(
            {
                "id": (fix.get("fix") or {}).get("id"),
                "verdict": fix.get("verdict"),
                "reason": fix.get("reason"),
                "frame": fix.get("frame"),
                "log_tail": _tail(outcome.get("log", "")),
            }
        )
    return {
        "command": run.get("command"),
        "status": run.get("status"),
        "machine": run.get("machine"),
        "frame": run.get("frame"),
        "fixes": fixes,
        "answer": run.get("answer"),
        "original_log_tail": _tail((run.get("original") or {}).get("log", "")),
    }


def collect(outdir: Path) -> dict[str, Any]:
    """The evidence of one answer.sh run."""
    wizard = _load(outdir / "wizard-device-side-assert.json") or {}
    report = _load(outdir / "report-issue-17.json") or {}
    pdf = outdir / "report-issue-17.pdf"
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", pdf.read_bytes())) if pdf.exists() else None
    return {
        "machine": _machine(_load(outdir / "env.json")),
        "try": {
            name: _try(_load(outdir / f"try-{name}.json"))
            for name in ("embedding_oob", "fragmentation_oom")
        },
        "wizard": {
            "scenario": (wizard.get("scenario") or {}).get("id"),
            "outcome": wizard.get("outcome"),
            "cannot_run": wizard.get("cannot_run"),
            "saved_as": wizard.get("id"),
            "verdict": (wizard.get("verdict") or {}).get("summary"),
        },
        "match": (_load(outdir / "match-issue-17.json") or {}).get("answer"),
        "report": {"origin": report.get("origin"), "pdf_pages": pages},
        "summary": (outdir / "summary.txt").read_text(encoding="utf-8")
        if (outdir / "summary.txt").exists()
        else "",
    }


def main() -> int:
    """Import OUTDIR into the evidence folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--dest", type=Path, default=DEST)
    args = parser.parse_args()
    shared, _items = redact_report(collect(args.outdir), None)
    args.dest.mkdir(parents=True, exist_ok=True)
    path = args.dest / "answer-gpu.json"
    path.write_text(json.dumps(shared, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
