"""Version rules: CUDA minor-version compatibility, SASS/PTX arch support, CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

import re

# Minimum driver for CUDA minor-version compatibility within a major release (Linux), from
# NVIDIA's CUDA Compatibility guide, "Minor Version Compatibility" (table 1) and the CUDA
# release notes: 11.x needs >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580.
MINOR_COMPAT_MIN_DRIVER: dict[int, tuple[int, ...]] = {
    11: (450, 80, 2),
    12: (525, 60, 13),
    13: (580,),
}


def version_tuple(text: str | None) -> tuple[int, ...]:
    """Leading numeric components: "12.4" -> (12, 4), "2.5.1+cu124" -> (2, 5, 1)."""
    if not text:
        return ()
    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def cuda_compat(torch_cuda: str, driver_cuda_max: str, driver_version: str | None) -> str:
    """How a torch CUDA build runs on a driver.

    "ok": the driver's max CUDA is at least torch's (backward compatibility). "minor": same
    major, newer minor: runs through minor-version compatibility (PTX JIT caveats).
    "driver-too-old": the major is newer than the driver's, or the driver is under the
    minimum for that major's minor-version compatibility. "unknown": unparseable input.
    """
    need, have = version_tuple(torch_cuda), version_tuple(driver_cuda_max)
    if len(need) < 2 or len(have) < 2:
        return "unknown"
    if need[:2] <= have[:2]:
        return "ok"
    if need[0] > have[0]:
        return "driver-too-old"
    minimum = MINOR_COMPAT_MIN_DRIVER.get(need[0])
    driver = version_tuple(driver_version)
    if minimum is not None and driver and driver < minimum:
        return "driver-too-old"
    return "minor"


def _arch_entries(arch_list: list[str]) -> list[tuple[str, int, int, str]]:
    """('sm'|'compute', major, minor, suffix) for entries like sm_90, sm_90a, compute_120."""
    out = []
    for arch in arch_list:
        match = re.match(r"^(sm|compute)_(\d+)(\d)([a-z]?)$", arch.strip())
        if match:
            out.append((match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)))
    return out


def arch_support(capability: str, arch_list: list[str]) -> str:
    """How a torch build runs on a GPU of `capability` ("9.0"): "sass", "ptx" or "none".

    A cubin for sm_XY runs on GPUs of the same major with minor >= Y; the arch-specific
    "a" variants only on exactly XY; "f" (family) variants on the same major, minor >= Y.
    PTX for compute_XY is JIT-compiled for any GPU of capability >= XY.
    """
    cc = version_tuple(capability)
    if len(cc) < 2:
        return "none"
    major, minor = cc[0], cc[1]
    entries = _arch_entries(arch_list)
    for kind, a_major, a_minor, suffix in entries:
        if kind != "sm" or a_major != major:
            continue
        if (suffix == "a" and a_minor == minor) or (suffix != "a" and a_minor <= minor):
            return "sass"
    for kind, a_major, a_minor, suffix in entries:
        if kind == "compute" and not suffix and (a_major, a_minor) <= (major, minor):
            return "ptx"
    return "none"


def visible_device_count(value: str | None, gpu_count: int, uuids: list[str]) -> int | None:
    """How many GPUs CUDA_VISIBLE_DEVICES leaves visible (None: variable unset).

    CUDA reads the list left to right and stops at the first entry it cannot use, so
    "0,7,1" on a 2-GPU machine shows only GPU 0, and "-1" or "" hides everything.
    """
    if value is None:
        return None
    count, seen = 0, set()
    for raw in value.split(","):
        entry = raw.strip()
        if re.fullmatch(r"\d+", entry):
            if int(entry) >= gpu_count or entry in seen:
                break
        elif entry.startswith(("GPU-", "MIG-")):
            prefix_ok = any(u.startswith(entry) for u in uuids)
            if entry.startswith("GPU-") and uuids and not prefix_ok:
                break
        else:
            break
        seen.add(entry)
        count += 1
    return count
