"""A stand-in for a CUDA build of torch, for testing the deep probe's order of work on a CPU.

Not torch: the deep probe's own logic is the subject (one CUDA initialisation, every GPU
checked at once, nothing touching CUDA after a failed init), so this package models only what
the probe calls, with the behaviour measured on the GPU machine:

- FAKE_TORCH_GPUS (default 2) GPUs; each op takes FAKE_TORCH_OP_S seconds (default 0.2) in
  time.sleep, which releases the GIL like torch's kernels do; FAKE_TORCH_LOG, when set, gets
  one line "start|end <device> <op> <time>" per op so a test can see what overlapped.
- FAKE_TORCH_MODE=alloc-conf: the first CUDA initialisation raises torch 2.11's ValueError for
  PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True; a second attempt kills the process with
  SIGSEGV, as torch 2.11 did on the H200 (the caching allocator's table sized but empty).
- FAKE_TORCH_DLOPEN=NAME: each conv loads library NAME by name through the dynamic loader, as
  cuDNN loads its sub-libraries (a damaged copy on LD_LIBRARY_PATH really kills the process).
"""

from __future__ import annotations

import os
import signal
import threading
import time
import types

__version__ = "2.11.0+cu130"
version = types.SimpleNamespace(cuda="13.0", hip=None, debug=False)
_GPUS = int(os.environ.get("FAKE_TORCH_GPUS", "2"))
_OP_S = float(os.environ.get("FAKE_TORCH_OP_S", "0.2"))
_MODE = os.environ.get("FAKE_TORCH_MODE", "")
_state = {"initialized": False, "attempts": 0}
_lock = threading.Lock()


def _log(kind: str, device: str, op: str) -> None:
    path = os.environ.get("FAKE_TORCH_LOG")
    if path:
        with _lock, open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{kind} {device} {op} {time.perf_counter():.6f}\n")


def _lazy_init() -> None:
    with _lock:
        if _state["initialized"]:
            return
        _state["attempts"] += 1
        if _MODE == "alloc-conf":
            if _state["attempts"] == 1:
                raise ValueError("Unrecognized key 'expandable_segment' in CUDA allocator config.")
            os.kill(os.getpid(), signal.SIGSEGV)
        _state["initialized"] = True


class device:  # noqa: N801 - torch's own name
    def __init__(self, kind: str, index: int | None = None) -> None:
        if index is None and ":" in kind:
            kind, text = kind.split(":")
            index = int(text)
        self.type, self.index = kind, index or 0

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


class Tensor:
    def __init__(self, where: str) -> None:
        self.where = where

    def __matmul__(self, other: Tensor) -> Tensor:
        _work(self.where, "matmul")
        return self

    def sum(self) -> Tensor:
        return self

    def item(self) -> float:
        return 0.0


def _where(dev: object) -> str:
    return str(dev if isinstance(dev, device) else device(str(dev)))


def _work(where: str, op: str) -> None:
    _log("start", where, op)
    time.sleep(_OP_S)
    _log("end", where, op)


def randn(*_shape: int, device: object = "cpu") -> Tensor:
    where = _where(device)
    if where.startswith("cuda"):
        _lazy_init()
    return Tensor(where)


class _Props:
    def __init__(self, index: int) -> None:
        self.name, self.major, self.minor = "NVIDIA H100 80GB HBM3", 9, 0
        self.total_memory = 80 * 1024**3
        self.multi_processor_count = 132
        self.uuid = f"00000000-0000-0000-0000-{index:012d}"
        self.pci_domain_id, self.pci_bus_id, self.pci_device_id = 0, 0x18 + index, 0


class _Cuda(types.ModuleType):
    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return _GPUS

    def is_initialized(self) -> bool:
        return _state["initialized"]

    def init(self) -> None:
        _lazy_init()

    def synchronize(self, _device: object = None) -> None:
        _lazy_init()

    def get_arch_list(self) -> list[str]:
        return ["sm_80", "sm_90", "sm_100", "sm_120"]

    def get_device_properties(self, index: int) -> _Props:
        _lazy_init()
        return _Props(index)

    def can_device_access_peer(self, _i: int, _j: int) -> bool:
        _lazy_init()
        return True


cuda = _Cuda("torch.cuda")
cuda.nccl = types.SimpleNamespace(version=lambda: (2, 28, 9))


class _LSTM:
    def __init__(self, *_args: int) -> None:
        self.where = "cpu"

    def to(self, dev: object) -> _LSTM:
        self.where = _where(dev)
        return self

    def __call__(self, x: Tensor) -> tuple[Tensor, None]:
        _work(self.where, "lstm")
        return x, None


def _conv2d(x: Tensor, _w: Tensor, padding: int = 0) -> Tensor:
    name = os.environ.get("FAKE_TORCH_DLOPEN")
    if name:
        import ctypes

        ctypes.CDLL(name)
    _work(x.where, "conv")
    return x


nn = types.SimpleNamespace(LSTM=_LSTM, functional=types.SimpleNamespace(conv2d=_conv2d))
_C = types.SimpleNamespace(
    _cudnn=types.SimpleNamespace(
        getRuntimeVersion=lambda: (9, 19, 0), getCompileVersion=lambda: (9, 19, 0)
    )
)

# The submodules, as torch has them.
from torch import backends as backends  # noqa: E402
from torch import distributed as distributed  # noqa: E402
