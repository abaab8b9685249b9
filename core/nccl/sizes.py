"""Message sizes and the nccl-tests bandwidth conventions (nccl-tests doc/PERFORMANCE.md)."""

from __future__ import annotations

import re

from core.errors import UsageError

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")
# Accepted spellings of each op (nccl-tests binary names, torch names, dashes).
_OP_NAMES = {
    **{op: op for op in OPS},
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "bcast": "broadcast",
}
_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)(?:I?B)?\s*$", re.IGNORECASE)
WORD = 4  # float32, as nccl-tests' default type


def parse_size(text: str) -> int:
    """`8B`, `64K`, `1G`, `1GiB`, `4096` -> bytes (binary units, like nccl-tests' -b/-e)."""
    match = _SIZE.match(text)
    if not match:
        raise UsageError(f"not a size: {text!r} (use e.g. 8B, 64K, 1M, 1G)")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def parse_range(text: str) -> list[int]:
    """`MIN:MAX` doubling from MIN to MAX (both included), like `-b MIN -e MAX -f 2`."""
    low_text, sep, high_text = text.partition(":")
    low = parse_size(low_text)
    high = parse_size(high_text) if sep else low
    if low < 1 or high < low:
        raise UsageError(f"bad size range {text!r}: need 1 <= MIN <= MAX")
    sizes = []
    size = low
    while size <= high:
        sizes.append(size)
        size *= 2
    return sizes


def parse_ops(text: str) -> list[str]:
    """`all_reduce,broadcast` (or `allreduce`, `all-reduce`) -> canonical op names."""
    ops = []
    for word in filter(None, (w.strip() for w in text.split(","))):
        key = word.lower().replace("-", "_")
        op = _OP_NAMES.get(key) or _OP_NAMES.get(key.replace("_", ""))
        if op is None:
            raise UsageError(f"unknown op {word!r} (choose from {', '.join(OPS)})")
        if op not in ops:
            ops.append(op)
    if not ops:
        raise UsageError("no ops given")
    return ops


def elements(op: str, size: int, nranks: int) -> tuple[int, int]:
    """(elements each rank sends, total bytes S) for a requested size, rounded down as
    nccl-tests does: S counts the whole array, so all_gather/reduce_scatter split it in n."""
    count = max(1, size // WORD)
    if op in ("all_gather", "reduce_scatter"):
        per_rank = max(1, count // nranks)
        return per_rank, per_rank * nranks * WORD
    return count, count * WORD


def bus_factor(op: str, nranks: int) -> float:
    """busbw = algbw x this (allreduce 2(n-1)/n, allgather/reducescatter (n-1)/n, bcast 1)."""
    n = max(1, nranks)
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    return 1.0


def bandwidths(op: str, size_bytes: int, seconds: float, nranks: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (10^9 bytes, as nccl-tests prints them)."""
    if seconds <= 0:
        return 0.0, 0.0
    algbw = size_bytes / 1e9 / seconds
    return algbw, algbw * bus_factor(op, nranks)


def format_size(size: int) -> str:
    """1073741824 -> '1 GiB', 8 -> '8 B' (exact binary units when they divide)."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"
