"""PYTORCH_CUDA_ALLOC_CONF read the way torch's caching allocator reads it, without torch.

torch parses the setting at its first CUDA initialisation (c10/core/AllocatorConfig.{h,cpp}:
ConfigTokenizer and AcceleratorAllocatorConfig::parseArgs; CUDA-only keys in
c10/cuda/CUDAAllocatorConfig.cpp) and raises ValueError or RuntimeError for a value it refuses,
so every CUDA allocation of the program fails. `problems` names each part torch refuses, with
the reason in torch's terms:

- the text is split into tokens at `,` `:` `[` `]` (whitespace dropped); options are
  `key:value` separated by commas, a list value is `[a:b,c:d]`;
- booleans are exactly `True` or `False` (ConfigTokenizer::toBool);
- sizes and counts are read with std::stoi/stoull/stod, which need a leading number;
- max_split_size_mb and max_non_split_rounding_mb are at least 20 (kLargeBuffer / 1 MiB);
  garbage_collection_threshold lies strictly between 0 and 1; roundup_power2_divisions is a
  power of two, or a list of `interval:divisions` with power-of-two intervals (or `>`) and
  power-of-two divisions (or 0); backend is `native` or `cudaMallocAsync`;
  pinned_num_register_threads is a power of two up to 128;
- any other key is refused by the CUDA parser ("Unrecognized key '...' in CUDA allocator
  config.", CUDAAllocatorConfig::parseArgs).

tests/core/env/test_settings.py checks these verdicts against the parser of the installed torch
(`torch._C._accelerator_setAllocatorSettings`, present in CPU builds too) on generated values.
"""

from __future__ import annotations

import difflib
import re

BOOL_KEYS = frozenset(
    {
        "expandable_segments",
        "release_lock_on_cudamalloc",
        "release_lock_on_hipmalloc",
        "pinned_use_cuda_host_register",
        "pinned_use_hip_host_register",
        "pinned_use_background_threads",
        "graph_capture_record_stream_reuse",
        "pinned_free_catch_all",
        "throw_on_cudamalloc_oom",
    }
)
MB_KEYS = frozenset({"max_split_size_mb", "max_non_split_rounding_mb"})
NUMBER_KEYS = frozenset(
    {
        "per_process_memory_fraction",
        "pinned_reserve_segment_size_mb",
        "pinned_max_round_threshold_mb",
        "pinned_max_cached_size_mb",
    }
)
OTHER_KEYS = frozenset(
    {
        "garbage_collection_threshold",
        "roundup_power2_divisions",
        "backend",
        "pinned_num_register_threads",
    }
)
KEYS = BOOL_KEYS | MB_KEYS | NUMBER_KEYS | OTHER_KEYS
MIN_SPLIT_MB = 20  # kLargeBuffer (20 MiB) / 1 MiB
MAX_REGISTER_THREADS = 128  # CUDAAllocatorConfig::pinned_max_register_threads()
_LEADING_NUMBER = re.compile(r"^[+-]?(\d|\.\d)")
_INT = re.compile(r"^[+-]?\d+")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def tokens(value: str) -> list[str]:
    """torch's ConfigTokenizer: split at , : [ ] and drop whitespace."""
    out: list[str] = []
    buffer = ""
    for ch in value:
        if ch in ",:[]":
            if buffer:
                out.append(buffer)
                buffer = ""
            out.append(ch)
        elif not ch.isspace():
            buffer += ch
    if buffer:
        out.append(buffer)
    return out


def _int(text: str) -> int | None:
    match = _INT.match(text)
    return int(match.group(0)) if match else None


def _float(text: str) -> float | None:
    """std::stod's reading: the longest leading decimal number."""
    match = _FLOAT.match(text)
    try:
        return float(match.group(0)) if match else None
    except ValueError:
        return None


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _check_list(key: str, items: list[str]) -> str | None:
    """roundup_power2_divisions' `[interval:divisions, ...]`."""
    pairs = [p for p in " ".join(items).split(",") if p.strip()]
    for pair in pairs:
        parts = pair.split()
        if len(parts) != 3 or parts[1] != ":":
            return f"{key} list entry {pair.strip()!r} is not INTERVAL:DIVISIONS"
        interval, divisions = parts[0], _int(parts[2])
        if divisions is None:
            return f"{key} divisions {parts[2]!r} is not a number"
        if divisions != 0 and not _power_of_two(divisions):
            return f"{key} divisions must be a power of 2 or 0, got {divisions}"
        if interval != ">":
            size = _int(interval)
            if size is None or not _power_of_two(size):
                return f"{key} intervals must be powers of 2 (or '>'), got {interval!r}"
    return None


def check_option(key: str, value: str | list[str]) -> str | None:
    """What torch refuses about `key:value`, or None."""
    if key not in KEYS:
        close = difflib.get_close_matches(key, sorted(KEYS), n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"torch's CUDA allocator has no option {key!r}{hint}"
    if isinstance(value, list):
        if key == "roundup_power2_divisions":
            return _check_list(key, value)
        return f"{key} takes a single value, not a [list]"
    return _check_scalar(key, value)


def _check_scalar(key: str, value: str) -> str | None:
    if key in BOOL_KEYS:
        ok = value in ("True", "False")
        return None if ok else f"{key} must be exactly True or False (capitalised), got {value!r}"
    if key == "backend":
        ok = value in ("native", "cudaMallocAsync")
        return None if ok else f"backend must be native or cudaMallocAsync, got {value!r}"
    if not _LEADING_NUMBER.match(value):
        return f"{key} must be a number, got {value!r}"
    return _check_number(key, value)


def _check_number(key: str, value: str) -> str | None:
    if key in MB_KEYS:
        number = _int(value)
        if number is not None and 0 <= number < MIN_SPLIT_MB:
            return f"{key} must be at least {MIN_SPLIT_MB}, got {number}"
    elif key == "garbage_collection_threshold":
        number_f = _float(value)
        if number_f is None or not 0 < number_f < 1:
            return f"{key} must lie strictly between 0 and 1, got {value}"
    elif key == "roundup_power2_divisions":
        number = _int(value)
        if number is None or not _power_of_two(number):
            return f"{key} must be a power of 2, got {value}"
    elif key == "pinned_num_register_threads":
        number = _int(value)
        if number is None or not _power_of_two(number) or number > MAX_REGISTER_THREADS:
            return f"{key} must be a power of 2 up to {MAX_REGISTER_THREADS}, got {value}"
    return None


def problems(value: str) -> list[str]:
    """Every part of an allocator setting torch refuses, in order (empty: torch accepts it)."""
    toks = tokens(value)
    out: list[str] = []
    i = 0
    while i < len(toks):
        key = toks[i]
        if key == ",":
            i += 1
            continue
        if key in ":[]":
            out.append(f"unexpected {key!r} where an option name belongs")
            i += 1
            continue
        if i + 1 >= len(toks) or toks[i + 1] != ":":
            out.append(f"{key!r} has no ':VALUE' (options are written key:value)")
            i += 1
            continue
        if i + 2 >= len(toks) or toks[i + 2] in ",:]":
            out.append(f"{key} has no value after ':'")
            i += 2
            continue
        item: str | list[str]
        if toks[i + 2] == "[":
            end = toks.index("]", i + 3) if "]" in toks[i + 3 :] else -1
            if end < 0:
                out.append(f"{key}'s list is not closed with ']'")
                break
            item, i = toks[i + 3 : end], end + 1
        else:
            item, i = toks[i + 2], i + 3
        problem = check_option(key, item)
        if problem:
            out.append(problem)
        if i < len(toks) and toks[i] != ",":
            out.append(f"expected ',' after {key}'s value, found {toks[i]!r}")
            i += 1
    return out
