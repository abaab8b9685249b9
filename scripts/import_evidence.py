"""Turn wizard-run JSON files from the GPU machine into compact, redacted evidence records.

Usage: python scripts/import_evidence.py RUN.json [RUN.json ...] [--dest resources/evidence]

Each record keeps the scenario, the machine (GPU, driver, torch, cuDNN), the outcome and the time
of every step, the verdict and a trimmed environment. GPU UUIDs, PCI addresses, process ids and
environment variables are dropped; the report redactor then checks that nothing else identifying
is left (the script refuses to write a record that still has a redaction in it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
    if dest.exists() and not overwrite:
        return None
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    """Import each run file given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--dest", type=Path, default=ROOT / "resources" / "evidence")
    parser.add_argument("--keep", action="store_true", help="do not overwrite existing records")
    args = parser.parse_args(argv)
    for src in args.runs:
        dest = write_record(src, args.dest, overwrite=not args.keep)
        print(f"{src} -> {dest}" if dest else f"{src}: kept the existing record")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
