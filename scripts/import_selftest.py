"""Import the GPU machine's selftest results (scripts/gpu/selftest.sh OUTDIR) as a fixture.

Usage: python scripts/import_selftest.py OUTDIR
Writes tests/data/selftest/gpu.json (redacted like a report: host names, paths, UUIDs), which
tests/core/selftest/test_gpu_fixture.py replays.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEST = REPO / "tests" / "data" / "selftest" / "gpu.json"


def main(argv: list[str]) -> int:
    """Read OUTDIR/selftest.json and the GPU line, redact, write the fixture."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO))
    from core.report.scrub import redact_report

    out = Path(argv[0])
    try:
        data = json.loads((out / "selftest.json").read_text())
    except (OSError, ValueError) as exc:
        print(f"import_selftest: no usable {out / 'selftest.json'}: {exc}", file=sys.stderr)
        return 1
    gpu = (out / "nvidia-smi.txt").read_text().strip() if (out / "nvidia-smi.txt").exists() else ""
    rc = (out / "selftest.rc").read_text().strip() if (out / "selftest.rc").exists() else "?"
    fixture, _items = redact_report({"gpu": gpu, "exit_code": rc, **data})
    DEST.parent.mkdir(parents=True, exist_ok=True)
    DEST.write_text(json.dumps(fixture, indent=2) + "\n")
    names = ", ".join(f"{d['name']}={d['status']}" for d in fixture["drills"])
    print(f"wrote {DEST.relative_to(REPO)}: {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
