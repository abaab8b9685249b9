"""Turn the output of scripts/gpu/nccl.sh (the two-GPU machine) into committed files.

Usage: python scripts/commit_nccl.py OUTDIR [--label h200x2]

Writes, redacted (host names, IP addresses, GPU UUIDs, user paths through the report redactor):
  benchmarks/nccl/<label>_nccl.json         `cuda-clinic nccl --json` (log tail included)
  benchmarks/nccl/<label>_nccl_tests.txt    nccl-tests all_reduce_perf -b 8 -e 1G -f 2 -g 2
  benchmarks/nccl/<label>_summary.txt       the script's summary (the 1 GiB comparison)
  benchmarks/RESULTS.md                     the section between the nccl markers: our busbw
                                            beside nccl-tests' per size from 1 MiB, the ratio
  tests/data/env/multi_gpu/<label>_probes.json     raw nvml_links + peers probe output
  tests/data/env/multi_gpu/<label>_env.json        env --deep: multi_gpu section and findings
  resources/evidence/nccl__*.json           the NCCL wizard runs, cited in their KB entries
                                            (scripts/import_evidence.py --update-kb)
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
sys.path.insert(0, str(ROOT / "scripts"))  # import_evidence, when imported rather than run

from core.nccl.sizes import format_size  # noqa: E402
from core.report.redact import Secrets  # noqa: E402
from core.report.scrub import redact_report  # noqa: E402

BEGIN, END = "<!-- nccl:begin -->", "<!-- nccl:end -->"
GIB = 1 << 30


def load(path: Path) -> Any:
    """JSON from `path`, or None when it is missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def hosts_in(outdir: Path) -> set[str]:
    """Host names the outputs carry: the ranks' and nccl-tests' `on HOST device` lines."""
    hosts: set[str] = set()
    report = load(outdir / "nccl.json") or {}
    hosts |= {r["host"] for r in report.get("ranks", []) if r.get("host")}
    text = (outdir / "nccl_tests.txt").read_text() if (outdir / "nccl_tests.txt").exists() else ""
    hosts |= set(re.findall(r" on\s+(\S+)\s+device", text))
    return hosts


def scrub(obj: Any, secrets: Secrets) -> Any:
    """The redacted copy (text is wrapped so the same redactor handles it)."""
    if isinstance(obj, str):
        return redact_report({"text": obj}, secrets)[0]["text"]
    return redact_report(obj, secrets)[0]


def nccl_tests_rows(text: str) -> dict[int, float]:
    """{bytes: out-of-place busbw} from all_reduce_perf's table."""
    rows = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[0].isdigit() and cols[2] == "float":
            rows[int(cols[0])] = float(cols[7])
    return rows


def results_section(report: dict[str, Any], theirs: dict[int, float], label: str) -> str:
    """The RESULTS.md section: per size from 1 MiB, ours vs nccl-tests and the ratio."""
    ours = {r["bytes"]: r for r in (report.get("results") or {}).get("all_reduce", [])}
    verdict = report.get("verdict") or {}
    transport = (report.get("transport") or {}).get("primary")
    lines = [
        BEGIN,
        f"## NCCL all_reduce on two GPUs (`cuda-clinic nccl`, issue 13): {label}",
        "",
        f"Device: {report.get('device')} x{report.get('nproc')}, NCCL "
        f"{(report.get('transport') or {}).get('version')}, transport {transport}. Commands, in "
        "one call on the same machine (`scripts/gpu/nccl.sh`): `all_reduce_perf -b 8 -e 1G -f 2 "
        "-g 2` (nccl-tests 2.19.6 built against torch's nvidia/nccl wheel) and `python3 -m core "
        "nccl --nproc 2 --json`. Bus bandwidth in GB/s (10^9 B/s), nccl-tests' out-of-place "
        "column; ours is the mean over ranks of each rank's median of 3 batches of 20 "
        "all_reduces (float32, sum) timed with CUDA events. Raw output: "
        f"`benchmarks/nccl/{label}_*`.",
        "",
        "| size | ours busbw | nccl-tests busbw | ours / nccl-tests |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for size in sorted(set(ours) | set(theirs)):
        if size < (1 << 20):
            continue
        mine = ours.get(size, {}).get("busbw_gbps")
        other = theirs.get(size)
        ratio = f"{mine / other:.3f}" if mine and other else "-"
        lines.append(
            f"| {format_size(size)} | {mine if mine is not None else '-'} | "
            f"{other if other is not None else '-'} | {ratio} |"
        )
    mine, other = ours.get(GIB, {}).get("busbw_gbps"), theirs.get(GIB)
    if mine and other:
        ratio = mine / other
        within = "within" if abs(ratio - 1) <= 0.10 else "NOT within"
        lines += [
            "",
            f"At 1 GiB: ours {mine:.1f} GB/s, nccl-tests {other:.1f} GB/s, ratio "
            f"{ratio:.3f}: {within} 10%.",
        ]
    lines += ["", f"Verdict: {verdict.get('status')}: {verdict.get('message')}", END]
    return "\n".join(lines)


def update_results(section: str, root: Path = ROOT) -> None:
    """Replace the marked section of benchmarks/RESULTS.md (append it the first time)."""
    path = root / "benchmarks" / "RESULTS.md"
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Import one nccl.sh output folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--label", default="h200x2")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repo to write into")
    args = parser.parse_args(argv)
    out, label, root = args.outdir, args.label, args.root
    report = load(out / "nccl.json")
    if report is None:
        raise SystemExit(f"{out}/nccl.json is missing or not JSON: nothing to import")
    probes = load(out / "probes.json") or {}
    uuids = {g.get("uuid") for g in ((probes.get("nvml_links") or {}).get("gpus") or [])}
    secrets = Secrets(hosts=hosts_in(out), gpu_uuids={u for u in uuids if u})
    bench = root / "benchmarks" / "nccl"
    bench.mkdir(parents=True, exist_ok=True)
    written = []

    def put(path: Path, content: Any) -> None:
        text = content if isinstance(content, str) else json.dumps(content, indent=1) + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path.relative_to(root))

    put(bench / f"{label}_nccl.json", scrub(report, secrets))
    tests_text = ""
    if (out / "nccl_tests.txt").exists():
        tests_text = (out / "nccl_tests.txt").read_text(encoding="utf-8", errors="replace")
        put(bench / f"{label}_nccl_tests.txt", scrub(tests_text, secrets))
    if (out / "summary.txt").exists():
        put(bench / f"{label}_summary.txt", scrub((out / "summary.txt").read_text(), secrets))
    update_results(results_section(report, nccl_tests_rows(tests_text), label), root)
    written.append(Path("benchmarks/RESULTS.md"))
    data = root / "tests" / "data" / "env" / "multi_gpu"
    # Fixtures only from a host where NVML saw two GPUs (the replay tests expect that).
    if len((probes.get("nvml_links") or {}).get("gpus") or []) >= 2:
        put(data / f"{label}_probes.json", scrub(probes, secrets))
    env = load(out / "env_deep.json")
    if env and (env.get("multi_gpu") or {}).get("gpu_count", 0) >= 2:
        kept = {
            "multi_gpu": env.get("multi_gpu"),
            "findings": env.get("findings"),
            "gpus": [
                {k: g.get(k) for k in ("index", "name", "memory_total_mb")}
                for g in env.get("gpus") or []
            ],
        }
        put(data / f"{label}_env.json", scrub(kept, secrets))
    print("\n".join(str(p) for p in written))
    runs = [str(p) for p in sorted(out.glob("nccl__*.json")) if load(p) is not None]
    if runs:  # records in resources/evidence/, cited in their KB entries
        from import_evidence import main as import_runs

        evidence, kb = root / "resources" / "evidence", root / "resources" / "kb"
        return import_runs([*runs, "--dest", str(evidence), "--update-kb", "--kb", str(kb)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
