"""Import what scripts/gpu/env2.sh recorded on one GPU: matrix fixtures, experiment, benchmark.

Usage: python scripts/import_env2.py OUTDIR [--dest tests/data/env/broken] [--only-present]
OUTDIR is the env2/ folder of the unpacked gpu.tar.gz (`bash scripts/gpu_run.sh env2`), or the
env2short/ folder with --only-present (`bash scripts/gpu_run.sh env2short`: some setups only).
  - the fault matrix (OUTDIR/matrix) through scripts/import_env_matrix.py: redacted
    tests/data/env/broken/<setup>.json, which the tests then prefer to the derived ones;
  - the alloc-retry experiment's three outputs and the benchmark (bench_env_deep.py's JSON)
    into matrix_run.json beside them;
  - prints the lines for benchmarks/RESULTS.md and the experiment's verdict.
Exit 1 when a setup could not be imported (the others still are), 2 on bad usage.
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

import import_env_matrix as matrix  # noqa: E402


def _text(path: Path, limit: int = 4000) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-limit:]
    except OSError:
        return None


def experiment(outdir: Path) -> dict[str, Any]:
    """The alloc-retry experiment: what plain torch did once, twice, and what the probe said."""
    out: dict[str, Any] = {}
    summary = _text(outdir / "summary.txt") or ""
    for line in summary.splitlines():
        if line.startswith("alloc-retry"):
            out[line.split(":", 1)[0]] = line.split(":", 1)[1].strip()
    for key in ("a", "b"):
        out[f"output_{key}"] = _text(outdir / f"alloc_retry_{key}.txt", 2000)
    try:
        probe = json.loads((outdir / "alloc_retry_c.json").read_text(encoding="utf-8"))
        out["probe_first"] = [f["id"] for f in probe.get("findings") or []][:3]
        out["probe_deep"] = (probe.get("probe") or {}).get("deep")
    except (OSError, ValueError) as exc:
        out["probe_first"] = f"unreadable: {exc}"
    return matrix.redact(out)


def bench_lines(bench: dict[str, Any]) -> str:
    """The RESULTS.md table rows for one bench_env_deep.py run."""
    rows = ["| command | median s | runs (s) | / collect_env |", "|---|---:|---|---:|"]
    for name, values in bench["samples"].items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        rows.append(
            f"| {name} | {bench['median'][name]:.3f} | {runs} | {bench['ratio'][name]:.3f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--dest", type=Path, default=matrix.DEFAULT_DEST)
    parser.add_argument(
        "--only-present",
        action="store_true",
        help="a partial run (scripts/gpu/env2short.sh): import the setups it has, keep the rest",
    )
    args = parser.parse_args(argv)
    if not (args.outdir / "matrix").is_dir():
        print(f"import_env2: {args.outdir}/matrix is not a folder", file=sys.stderr)
        return 2
    run_path = args.dest / "matrix_run.json"
    before = json.loads(run_path.read_text(encoding="utf-8")) if run_path.exists() else {}
    failures = matrix.import_run(args.outdir / "matrix", args.dest, args.only_present)
    run = json.loads(run_path.read_text(encoding="utf-8"))
    if (args.outdir / "alloc_retry_a.txt").exists() or "experiment_alloc_retry" not in before:
        run["experiment_alloc_retry"] = experiment(args.outdir)
    else:  # this run did not repeat the experiment: the recorded one stays
        run["experiment_alloc_retry"] = before["experiment_alloc_retry"]
    bench_file = args.outdir / "bench.json"
    if bench_file.exists():
        run["bench"] = matrix.redact(json.loads(bench_file.read_text(encoding="utf-8")))
        print(bench_lines(run["bench"]))
        print("machine:", run["bench"].get("machine"))
    run_path.write_text(json.dumps(run, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(run["experiment_alloc_retry"], indent=1)[:1500])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
