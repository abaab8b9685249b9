"""Import what scripts/gpu/env4.sh recorded on four GPUs: env fixture, benchmark, NCCL run.

Usage: python scripts/import_env4.py OUTDIR [--label h100x4]
OUTDIR is the env4/ folder of the unpacked gpu.tar.gz (`bash scripts/gpu_run.sh env4` on
nvidia-h100-x4). Writes, redacted with the report redactor (user, host, home, GPU UUIDs):
  tests/data/env/multi_gpu/<label>_env.json    env --deep --json (replayed by
                                               tests/core/env/test_multi_gpu.py)
  benchmarks/env/<label>_bench.json             bench_env_deep.py's JSON
  benchmarks/nccl/<label>_nccl.json             cuda-clinic nccl --nproc 4 --json
and prints the benchmark table for benchmarks/RESULTS.md. Exit 1 when the env JSON is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import import_env2  # noqa: E402
import import_env_matrix as matrix  # noqa: E402


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--label", default="h100x4")
    args = parser.parse_args(argv)
    env = _load(args.outdir / "env_deep.json")
    if not isinstance(env, dict) or "findings" not in env:
        print(f"import_env4: no env --deep JSON in {args.outdir}", file=sys.stderr)
        return 1
    _write(ROOT / "tests/data/env/multi_gpu" / f"{args.label}_env.json", matrix.redact(env))
    bench = _load(args.outdir / "bench.json")
    if isinstance(bench, dict):
        _write(ROOT / "benchmarks/env" / f"{args.label}_bench.json", matrix.redact(bench))
        print(import_env2.bench_lines(bench))
    nccl = _load(args.outdir / "nccl.json")
    if isinstance(nccl, dict):
        _write(ROOT / "benchmarks/nccl" / f"{args.label}_nccl.json", matrix.redact(nccl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
