"""Steps for launch errors and extension mistakes, on a CUDA extension built here (_extkit.py).

- cuda/invalid-configuration-argument: a kernel launched with one block per row on the grid's y
  axis (as custom ops sized by the data do); 70,000 rows exceed CUDA's 65,535 limit for y, and an
  empty input gives a grid of 0 blocks. Fixes: launch in chunks, put the rows on the x axis
  (2^31 - 1 blocks), skip the launch for an empty input.
- cuda/cuda-error-invalid-argument: a kernel that asks for 96 KiB of dynamic shared memory
  without opting in above 48 KiB. Fixes: opt in (cudaFuncSetAttribute), a 32 KiB tile; a request
  above this GPU's maximum fails even with the opt-in.
- ext/extension-expects-cuda-tensor: an extension op that checks its input is on the GPU, given
  a CPU tensor; the same op without the check; the fix moves the input.
- cuda/no-kernel-image: the extension built with a TORCH_CUDA_ARCH_LIST without this GPU's
  architecture; fixes rebuild with it, or add PTX.
- cuda/invalid-device-function: a kernel meant for pre-Hopper GPUs whose definition and launch
  sit under `#if __CUDA_ARCH__ < 900`, built with the extension's own flags for this GPU, then
  sm_80 (as builders that keep the user's order do). nvcc 13 takes the host stubs from its last
  device pass (sm_80), so the host side launches the kernel, but the sm_90 code this GPU runs has
  none of it. (With sm_90 last the kernel's host stub is missing and the build does not link.)
  The fix: the kernel defined for every architecture, __CUDA_ARCH__ used inside its body.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import _extkit as ext
import torch

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit
ROWS_OVER_LIMIT = 70_000  # one block per row on grid y, whose limit is 65,535
Y_LIMIT = 65_535
COLS = 64


def _module(
    emit: Emit, arch_list: str | None = None, source: ext.Source = ext.EXT
) -> tuple[Any, str | None]:
    """The built extension (this GPU's architecture unless `arch_list`), or why not here."""
    if not torch.cuda.is_available():
        return None, "needs a CUDA GPU to launch the extension's kernels"
    why = ext.why_no_toolchain()
    if why:
        return None, why
    return ext.build(arch_list or ext.this_gpu_arch(), emit, source), None


def later(y: torch.Tensor) -> float:
    """The program's next use of the result (a launch error was raised already)."""
    return float(y.float().sum().item())


# -- invalid configuration argument ----------------------------------------------------------------


def culprit(
    mod: Any, x: torch.Tensor, chunk: int = 0, guard: bool = False, on_x: bool = False
) -> Any:
    """The op whose launch shape comes from the data."""
    return mod.rows_launch(x, chunk, guard, on_x)


def launch_rows(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """rows_launch on `rows` rows: one launch (the bug), in chunks, or with rows on grid x."""
    mod, why = _module(emit)
    if why:
        return {"skipped": why}
    rows = kit.int_param(params, "rows", ROWS_OVER_LIMIT)
    x = torch.randn(rows, COLS, device="cuda")
    started = time.perf_counter()
    y = culprit(mod, x, kit.int_param(params, "chunk", 0), False, bool(params.get("rows_on_x")))
    value = later(y)
    kit.sync(x.device)
    ok = bool(torch.allclose(y, 2 * x))
    ms = (time.perf_counter() - started) * 1000.0
    return {"rows": rows, "values_ok": ok, "checksum": round(value, 2), "ms": round(ms, 3)}


def empty_input(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """An empty batch: the launch fails without the guard and is skipped with it."""
    mod, why = _module(emit)
    if why:
        return {"skipped": why}
    x = torch.empty(0, COLS, device="cuda")
    unguarded = ""
    try:
        culprit(mod, x)
    except RuntimeError as exc:  # a launch error is not sticky: the context stays usable
        unguarded = " ".join(str(exc).split())[:300]
    emit({"kind": "info", "what": "unguarded empty launch", "error": unguarded})
    y = culprit(mod, x, 0, True)
    return {
        "unguarded_error": unguarded,
        "caught": "invalid configuration argument" in unguarded,
        "guarded_shape": list(y.shape),
    }


# -- invalid argument: dynamic shared memory ----------------------------------------------------


def tile_sum(mod: Any, x: torch.Tensor, smem_bytes: int, opt_in: bool) -> Any:
    """The reduction that stages its input in `smem_bytes` of shared memory (the culprit)."""
    return mod.smem_sum(x, smem_bytes, opt_in)


def shared_memory(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """smem_sum with `smem_kib` KiB of dynamic shared memory, with or without the opt-in."""
    mod, why = _module(emit)
    if why:
        return {"skipped": why}
    props = torch.cuda.get_device_properties(0)
    limit = int(getattr(props, "shared_memory_per_block_optin", 0))
    emit({"kind": "info", "what": "shared memory per block", "opt_in_limit_bytes": limit})
    smem = kit.int_param(params, "smem_kib", 96) * 1024
    if params.get("over_limit"):
        smem = max(limit, 48 * 1024) + 16 * 1024  # more than this GPU allows, opt-in or not
    x = torch.ones(4096, device="cuda")
    out = tile_sum(mod, x, smem, bool(params.get("opt_in")))
    total = later(out)
    return {
        "smem_bytes": smem,
        "opt_in_limit_bytes": limit,
        "sum": total,
        "values_ok": total == 4096,
    }


# -- an extension op given a CPU tensor ------------------------------------------------------------


def op_call(mod: Any, x: torch.Tensor, checked: bool) -> Any:
    """The model code's call of the extension op (the culprit)."""
    return mod.add_one(x, checked)


def cpu_tensor(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """add_one on an input left on the CPU (`move`: moved to the GPU first; `checked`: the op
    checks the device, as most extensions do)."""
    mod, why = _module(emit)
    if why:
        return {"skipped": why}
    x = torch.arange(8, dtype=torch.float32)  # made on the CPU, as a dataloader returns it
    if params.get("move"):
        x = x.to("cuda", non_blocking=True)
    y = op_call(mod, x, bool(params.get("checked", True)))
    got = y.cpu()
    ok = bool(torch.equal(got, torch.arange(8, dtype=torch.float32) + 1))
    return {"input_device": str(x.device), "output_device": str(y.device), "values_ok": ok}


# -- a kernel not built for this GPU ------------------------------------------------------------


def arch_call(mod: Any, x: torch.Tensor) -> Any:
    """The op call that runs the kernel (the culprit)."""
    return mod.arch_probe(x)


def arch(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """The extension built for TORCH_CUDA_ARCH_LIST=`arch_list` ('this-gpu': this GPU's)."""
    wanted = kit.text_param(params, "arch_list", "8.0")
    if torch.cuda.is_available() and wanted == "this-gpu":
        wanted = ext.this_gpu_arch()
    mod, why = _module(emit, wanted)
    if why:
        return {"skipped": why}
    gpu = ext.this_gpu_arch()
    if wanted.split("+")[0] == gpu and params.get("arch_list") != "this-gpu":
        return {"skipped": f"this GPU is compute capability {gpu}, the architecture the build has"}
    emit({"kind": "info", "what": "architectures", "built_for": wanted, "gpu": gpu})
    x = torch.zeros(16, device="cuda")
    started = time.perf_counter()
    y = arch_call(mod, x)
    total = later(y)
    ms = (time.perf_counter() - started) * 1000.0
    return {
        "built_for": wanted,
        "gpu": gpu,
        "values_ok": total == 16.0,
        "first_call_ms": round(ms, 2),
    }


def guard_call(mod: Any, x: torch.Tensor, in_body: bool) -> Any:
    """The op whose kernel is guarded by __CUDA_ARCH__ (the culprit)."""
    return mod.guarded(x, in_body)


def arch_guard(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """A kernel defined and launched only for pre-Hopper architectures, built for this GPU then
    sm_80 and launched here; `in_body`: the fix, __CUDA_ARCH__ used inside a kernel that exists
    for every architecture."""
    if torch.cuda.is_available() and torch.cuda.get_device_capability(0)[0] < 9:
        gpu = ext.this_gpu_arch()
        return {"skipped": f"the guarded kernel is left out for sm_90 and newer; this GPU is {gpu}"}
    variant = ext.guard_variant() if torch.cuda.is_available() else ""
    mod, why = _module(emit, variant, ext.GUARD)
    if why:
        return {"skipped": why}
    emit({"kind": "info", "what": "nvcc flags", "flags": ext.gencode_flags(variant)})
    x = torch.zeros(16, device="cuda")
    y = guard_call(mod, x, bool(params.get("in_body")))
    total = later(y)
    return {"built_for": variant, "gpu": ext.this_gpu_arch(), "values_ok": total == 16.0}
