"""Steps for cuda/illegal-memory-access: a GPU kernel stores outside its tensor.

A Triton scatter kernel copies row i of `src` to row idx[i] of `dst`, trusting the indices (as
custom kernels do; PyTorch's own index ops check them). One index is far past the table (a
token id from the wrong vocabulary, a corrupted label), so the store lands about 256 GiB past
`dst`, in memory the process never mapped, and the GPU faults. The program goes on to its next
op, where the asynchronous error surfaces. Located with CUDA_LAUNCH_BLOCKING=1 (the fix steps)
and with compute-sanitizer, which names the kernel and the bad store; fixed by a masked store
or by checking the indices on the host.

This file is also the program compute-sanitizer runs (`python oob_store.py --program JSON`).
Triton is imported only when present (torch's CUDA wheels ship it on Linux).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
ROWS, COLS, BLOCK = 64, 64, 64
BAD_ROW = 1 << 30  # x 64 floats x 4 bytes: about 256 GiB past the table

triton: Any
tl: Any
try:
    triton = importlib.import_module("triton")
    tl = importlib.import_module("triton.language")
except ImportError:  # no Triton: the steps say so
    triton = tl = None

if triton is not None:

    @triton.jit  # type: ignore[untyped-decorator]
    def scatter_rows(  # type: ignore[no-untyped-def]  # noqa: PLR0917 - Triton: by position
        src, dst, idx, n_rows, n_cols, block: tl.constexpr, masked: tl.constexpr
    ):
        row = tl.program_id(0)
        target = tl.load(idx + row)
        cols = tl.arange(0, block)
        ok = cols < n_cols
        vals = tl.load(src + row * n_cols + cols, mask=ok)
        if masked:
            ok = ok & (target >= 0) & (target < n_rows)
        tl.store(dst + target * n_cols + cols, vals, mask=ok)


def _why_not_here() -> str | None:
    if not torch.cuda.is_available():
        return "an illegal memory access is a GPU fault; torch.cuda.is_available() is False here"
    if triton is None:
        return "Triton is not installed in the target interpreter (the kernel is a Triton kernel)"
    return None


def _tensors(bad: bool) -> dict[str, torch.Tensor]:
    src = torch.randn(ROWS, COLS, device="cuda")
    dst = torch.zeros(ROWS, COLS, device="cuda")
    idx = torch.arange(ROWS, device="cuda", dtype=torch.int64).flip(0)
    if bad:
        idx[ROWS // 2] = BAD_ROW
    return {"src": src, "dst": dst, "idx": idx}


def culprit(t: dict[str, torch.Tensor], masked: bool = False) -> None:
    """The kernel with the unchecked store."""
    scatter_rows[(ROWS,)](t["src"], t["dst"], t["idx"], ROWS, COLS, block=BLOCK, masked=masked)


def later(t: dict[str, torch.Tensor]) -> float:
    """The program's next op: the fault is reported here (CUDA errors are asynchronous)."""
    time.sleep(0.05)
    return float(t["dst"].sum().item())


def scatter(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The scatter with one bad index; `masked`: the store masked to the table's rows."""
    why = _why_not_here()
    if why:
        return {"skipped": why}
    masked = bool(params.get("masked"))
    t = _tensors(bad=True)
    culprit(t, masked)
    emit({"kind": "info", "what": "the scatter kernel was launched; the program goes on"})
    total = later(t)
    moved = int((t["dst"].abs().sum(dim=1) > 0).sum().item())
    return {"masked": masked, "checksum": round(total, 3), "rows_written": moved}


def validate(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Check the indices on the host before the launch: names the bad one, then scatters."""
    why = _why_not_here()
    if why:
        return {"skipped": why}
    t = _tensors(bad=True)
    bad = ((t["idx"] < 0) | (t["idx"] >= ROWS)).nonzero().flatten().tolist()
    message = f"row indices out of range at positions {bad}: {t['idx'][bad].tolist()}"
    emit({"kind": "info", "what": "check", "message": message})
    t["idx"][bad] = 0  # the program drops or repairs the bad rows
    culprit(t)
    return {"caught": bool(bad), "error": message, "checksum": round(later(t), 3)}


def run_under_sanitizer(program: str, config: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """Run `program --program CONFIG` under compute-sanitizer's memcheck; its report."""
    tool = kit.sanitizer_path()
    if tool is None:
        return {"skipped": "compute-sanitizer is not on PATH or in the CUDA toolkit here"}
    argv = [tool, "--tool", "memcheck", "--print-limit", "4", sys.executable, program]
    argv += ["--program", json.dumps(config)]
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout_s, check=False, errors="replace"
        )
    except subprocess.TimeoutExpired:
        return {"sanitizer": tool, "timed_out": True, "seconds": round(timeout_s, 1)}
    text = done.stdout + done.stderr
    report = [line.strip("= ").strip() for line in text.splitlines() if line.startswith("=")]
    return {
        "sanitizer": tool,
        "returncode": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "report": report[:24],
        "output_tail": text[-3000:],
    }


def sanitizer(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The same program under compute-sanitizer: does its report name the kernel and the store?"""
    why = _why_not_here()
    if why:
        return {"skipped": why}
    emit({"kind": "info", "what": "running the program under compute-sanitizer (memcheck)"})
    out = run_under_sanitizer(
        os.path.abspath(__file__), {}, kit.float_param(params, "limit_s", 200)
    )
    report = out.get("report") or []
    invalid = [line for line in report if re.search(r"Invalid __global__ (write|read)", line)]
    named = [line for line in report if "scatter_rows" in line]
    out["names_call"] = bool(invalid) and bool(named)
    out["evidence"] = (invalid + named)[:4]
    return out


def program(config: dict[str, object]) -> int:
    """What compute-sanitizer runs: the scatter with the bad index, then the next op."""
    t = _tensors(bad=True)
    culprit(t, bool(config.get("masked")))
    print("checksum", later(t), flush=True)
    return 0


def _program_main(argv: list[str]) -> int:
    return program(json.loads(argv[2]))


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--program":
    sys.exit(_program_main(sys.argv))
