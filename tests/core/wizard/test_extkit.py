"""The wizards' CUDA extension (core/wizard/steps/_extkit.py, ext_kernels.cu) without nvcc.

nvcc compiles a .cu file once for the host (__CUDA_ARCH__ undefined) and once per -gencode
architecture, and takes the kernels' host stubs from its last device pass (checked with nvcc
13.0.88 on ext_kernels.cu: with sm_90 last, a kernel left out of sm_90 has no host stub and the
extension does not link). So every kernel launched in a pass must be defined in that pass, and
the last pass of each build the GPU script makes must define every kernel the host launches.
These tests read the file as nvcc's preprocessor does, for each of those builds; a GPU run
broke on exactly this once (a launch the sm_90 pass saw without its kernel).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.wizard.model import STEPS_DIR

LAUNCH = re.compile(r"\b(\w+)<<<")
KERNEL = re.compile(r"__global__\s+void\s+(\w+)\s*\(")
DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


@pytest.fixture(scope="module")
def extkit() -> Any:
    sys.path.insert(0, str(STEPS_DIR))
    try:
        import _extkit
    finally:
        sys.path.remove(str(STEPS_DIR))
    return _extkit


def _holds(condition: str, arch: int | None) -> bool:
    """A `#if` condition on __CUDA_ARCH__ for one pass (None: the host pass)."""
    expr = condition.split("//", maxsplit=1)[0]
    expr = expr.replace("defined(__CUDA_ARCH__)", "True" if arch is not None else "False")
    expr = expr.replace("__CUDA_ARCH__", str(arch if arch is not None else 0))
    expr = expr.replace("||", " or ").replace("&&", " and ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    assert re.fullmatch(r"[\sA-Za-z0-9()<>=!]*", expr), f"cannot read #if {condition}"
    return bool(eval(expr))  # only True/False, numbers, comparisons, not/and/or (checked above)


def _pass(source: str, arch: int | None) -> Iterator[str]:
    """The lines one compilation pass sees (an #if not on __CUDA_ARCH__ counts as true)."""
    stack: list[tuple[bool, bool]] = []  # (this branch on, a branch of this #if was taken)
    for line in source.splitlines():
        found = DIRECTIVE.match(line)
        if not found:
            if all(on for on, _ in stack):
                yield line
            continue
        kind, rest = found[1], found[2]
        if kind in ("if", "ifdef", "ifndef"):
            on = _holds(rest, arch) if "__CUDA_ARCH__" in rest else True
            stack.append((on, on))
        elif kind == "elif":
            _, taken = stack.pop()
            on = not taken and (_holds(rest, arch) if "__CUDA_ARCH__" in rest else True)
            stack.append((on, taken or on))
        elif kind == "else":
            _, taken = stack.pop()
            stack.append((not taken, True))
        else:
            stack.pop()


def _kernels(lines: list[str]) -> tuple[set[str], set[str]]:
    """(kernels defined, kernels launched) in a pass's lines."""
    text = "\n".join(lines)
    return set(KERNEL.findall(text)), set(LAUNCH.findall(text))


def _arches(extkit: Any, variant: str) -> list[int]:
    """The device passes of a build as __CUDA_ARCH__ values, in nvcc's order."""
    flags = extkit.gencode_flags(variant)
    if flags:  # the extension's own flags, in the order given
        return [int(re.search(r"compute_(\d+)", f)[1]) * 10 for f in flags]  # type: ignore[index]
    arch = variant.split("+", maxsplit=1)[0]  # one arch ('+PTX' adds no other pass)
    return [int(arch.replace(".", "")) * 10]


# The builds scripts/gpu/wizards.sh makes on an H100 (9.0): this GPU, 8.0, 8.0+PTX of the main
# extension, and the guard extension for this GPU then sm_80.
BUILDS = [("ext", "9.0"), ("ext", "8.0"), ("ext", "8.0+PTX"), ("guard", "gencode:9.0,8.0")]


def _source(extkit: Any, name: str) -> str:
    found = {s.name: s for s in (extkit.EXT, extkit.GUARD)}[name]
    return Path(found.cuda_file).read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "variant"), BUILDS)
def test_every_pass_of_each_build_defines_what_it_launches(
    extkit: Any, name: str, variant: str
) -> None:
    source = _source(extkit, name)
    host_defined, host_launched = _kernels(list(_pass(source, None)))
    assert host_launched <= host_defined, host_launched - host_defined
    passes = _arches(extkit, variant)
    for arch in passes:
        defined, launched = _kernels(list(_pass(source, arch)))
        assert launched <= defined, f"sm_{arch // 10}: launches {launched - defined} undefined"
    last_defined, _ = _kernels(list(_pass(source, passes[-1])))
    missing = host_launched - last_defined
    assert not missing, f"the last pass (sm_{passes[-1] // 10}) has no host stub for {missing}"


def test_the_guard_build_leaves_the_kernel_out_of_this_gpus_code_only(extkit: Any) -> None:
    """The invalid-device-function repro: sm_90 code lacks pre_hopper_fill, sm_80 code has it."""
    source = _source(extkit, "guard")
    assert _arches(extkit, "gencode:9.0,8.0") == [900, 800]
    sm90, _ = _kernels(list(_pass(source, 900)))
    sm80, _ = _kernels(list(_pass(source, 800)))
    _, host = _kernels(list(_pass(source, None)))
    assert "pre_hopper_fill" in host and "pre_hopper_fill" in sm80
    assert "pre_hopper_fill" not in sm90 and "any_arch_fill" in sm90


def test_the_reading_catches_what_broke_the_gpu_run(extkit: Any) -> None:
    """A launch outside its kernel's guard (the first run's build error), and the guard file
    built for sm_90 alone (a link error), both fail the checks above."""
    source = _source(extkit, "guard")
    unguarded = re.sub(
        r"#if !defined\(__CUDA_ARCH__\) \|\| \(__CUDA_ARCH__ < 900\)\n(\s+pre_hopper_fill<<<.*\n)"
        r"#endif\n",
        r"\1",
        source,
    )
    assert unguarded != source
    defined, launched = _kernels(list(_pass(unguarded, 900)))
    assert "pre_hopper_fill" in launched - defined
    _, host = _kernels(list(_pass(source, None)))
    alone, _ = _kernels(list(_pass(source, 900)))
    assert "pre_hopper_fill" in host - alone


@pytest.mark.parametrize("name", ["ext", "guard"])
def test_each_extension_declares_what_its_cuda_file_defines(extkit: Any, name: str) -> None:
    """Every op a binding declares is defined in its .cu file with the same signature."""
    found = {s.name: s for s in (extkit.EXT, extkit.GUARD)}[name]
    source = _source(extkit, name)
    declared = [line.rstrip(";") for line in found.cpp.strip().splitlines()]
    for signature in declared:
        assert f"{signature} {{" in source, signature
    names = [re.search(r"(\w+)\(", s)[1] for s in declared]  # type: ignore[index]
    assert names == found.functions
    assert "C10_CUDA_KERNEL_LAUNCH_CHECK" in source  # errors come through torch's own check


def test_gencode_variants_keep_their_order(extkit: Any) -> None:
    assert extkit.gencode_flags("gencode:9.0,8.0") == [
        "-gencode=arch=compute_90,code=sm_90",
        "-gencode=arch=compute_80,code=sm_80",
    ]
    assert extkit.gencode_flags("8.0+PTX") == []  # an arch list: torch makes the flags
    with pytest.raises(ValueError, match="not a compute capability"):
        extkit.gencode_flags("gencode:9.0,sm_80")
