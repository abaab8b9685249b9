"""Record the env probes' raw JSON as a redacted test fixture.

Usage: python tests/data/env/record.py OUT.json [--deep] [--python PATH] [--note TEXT]
The fixture holds what the probes printed (quick, deep) and how the deep child ended, with the
home folder, user and host names and GPU UUIDs replaced; tests rebuild the Environment from it.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import platform
import re
import socket
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from core.env import deep_result
from core.env.runner import run_probes
from core.target import resolve_python

UUID = re.compile(r"(GPU|MIG)-[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


class Redactor:
    """Replaces the home folder, user and host names, and GPU UUIDs (consistently)."""

    def __init__(self) -> None:
        self.home = os.path.expanduser("~")
        self.user = getpass.getuser()
        self.host = socket.gethostname()
        self.uuids: dict[str, str] = {}

    def text(self, value: str) -> str:
        if self.home not in ("", "/"):
            value = value.replace(self.home, "~")
        if self.user:
            value = re.sub(rf"(?<=/){re.escape(self.user)}(?=/|$)", "<user>", value)
        if self.host:  # whole words only: a host named "vm" must not turn "nvml" into "n<host>l"
            value = re.sub(rf"(?<![\w.-]){re.escape(self.host)}(?![\w-])", "<host>", value)
        return UUID.sub(self._uuid, value)

    def _uuid(self, match: re.Match[str]) -> str:
        real = match.group(0).lower()
        if real not in self.uuids:
            self.uuids[real] = f"{match.group(1)}-00000000-0000-0000-0000-{len(self.uuids):012d}"
        return self.uuids[real]

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.walk(v) for k, v in value.items()}
        return value


def write_broken_torch(root: Path) -> Path:
    """A torch package whose import really fails (its compiled core `torch._C` is missing).

    It carries the metadata of a CUDA 12.4 wheel, as a damaged install would, so the quick
    probe reads a version while `import torch` in the deep probe fails for real.
    """
    pkg = root / "torch"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("from torch._C import *  # noqa: F403\n")
    (pkg / "version.py").write_text(
        "__version__ = '2.5.1+cu124'\ndebug = False\ncuda = '12.4'\nhip = None\n"
    )
    dist = root / "torch-2.5.1+cu124.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\n"
        'Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"\n'
        'Requires-Dist: nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux"\n\n'
    )
    return root


def record(python: str | None, deep: bool, note: str, broken_torch: bool = False) -> dict[str, Any]:
    """Run the probes and return the redacted fixture."""
    target = resolve_python(python)
    if broken_torch:
        import tempfile

        root = write_broken_torch(Path(tempfile.mkdtemp(prefix="broken-torch-")))
        os.environ["PYTHONPATH"] = str(root)
    quick, deep_run = run_probes(target, deep=deep)
    fixture = {
        "note": note,
        "machine": f"{platform.system()} {platform.machine()}",
        "command": "python tests/data/env/record.py " + " ".join(sys.argv[2:]),
        "deep_mode": deep,
        "quick": quick.data,
        "deep": deep_result(deep_run),
        "status": {"quick": quick.status(), "deep": deep_run.status() if deep_run else None},
    }
    return Redactor().walk(fixture)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--deep", action="store_true")
    parser.add_argument("--python")
    parser.add_argument("--note", default="")
    parser.add_argument(
        "--broken-torch", action="store_true", help="shadow torch with a broken one"
    )
    args = parser.parse_args()
    fixture = record(args.python, args.deep, args.note, args.broken_torch)
    Path(args.out).write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
