"""Turn scripts/gpu/fleet.sh's OUTDIR into the committed fixtures tests/data/fleet/gpu/.

Usage: python scripts/import_fleet.py OUTDIR [--dest tests/data/fleet/gpu]

Copies fleet_quick.json and fleet_deep.json (already redacted on the GPU machine the way
tests/data/env/record.py redacts env fixtures) and summary.txt. Refuses a file that is not a
fleet run of the four stand-in hosts, or in which the report redactor still finds an address,
e-mail, secret or user/host name.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.fleet.model import FLEET_KIND  # noqa: E402
from core.report.redact import Secrets  # noqa: E402
from core.report.scrub import redact_report  # noqa: E402

HOSTS = ["gpu-a", "gpu-b", "gpu-c", "gpu-d", "no-such-host"]
# Kinds that may remain: the node names themselves (labelled in reports), and the zeroed GPU
# UUIDs record.py leaves in place of the real ones.
_ALLOWED = {"node-name", "gpu-uuid"}
_PLACEHOLDER = re.compile(r"(GPU|MIG)-0{8}-0{4}-0{4}-0{4}-\d{12}")


def check(path: Path) -> dict[str, Any]:
    """The fleet run in `path`, or SystemExit naming what is wrong with it."""
    data = json.loads(path.read_text())
    if data.get("kind") != FLEET_KIND:
        raise SystemExit(f"{path}: not a fleet run")
    names = [n["fleet_node"] for n in data["nodes"]]
    if names != HOSTS:
        raise SystemExit(f"{path}: nodes {names}, expected {HOSTS}")
    _, items = redact_report(data, Secrets())
    left = sorted(
        {f"{i.kind} at {'.'.join(map(str, i.path))}" for i in items if i.kind not in _ALLOWED}
    )
    real = [i for i in items if i.kind == "gpu-uuid" and not _PLACEHOLDER.fullmatch(i.original)]
    if left or real:
        raise SystemExit(f"{path}: still identifying: {', '.join(left[:5]) or 'real GPU UUIDs'}")
    return data  # type: ignore[no-any-return]


def main() -> int:
    """Check and copy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--dest", type=Path, default=ROOT / "tests" / "data" / "fleet" / "gpu")
    args = parser.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)
    for name in ("fleet_quick.json", "fleet_deep.json"):
        data = check(args.outdir / name)
        ok = sum(1 for n in data["nodes"] if n["status"] == "ok")
        shutil.copyfile(args.outdir / name, args.dest / name)
        print(f"{name}: {ok} of {len(data['nodes'])} nodes answered -> {args.dest / name}")
    shutil.copyfile(args.outdir / "summary.txt", args.dest / "summary.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
