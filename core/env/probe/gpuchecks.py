"""The deep probe's work on the GPUs: the first conv, then every GPU's checks concurrently.

Loaded by path by deep.py (never imported as a package module in the target interpreter). Each
function gets a `Log` that writes stage markers and keeps torch's exceptions verbatim.

Stage protocol on stderr (the parent reads it only when the child dies): `cuda-clinic-stage:
NAME` when a step starts, `cuda-clinic-done: NAME` when it ends. With several GPUs checked at
once, the steps that started and never ended are the ones that were running at a crash.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.env.probe.shapes import (
        DeviceJSON,
        DeviceResult,
        OpResult,
        PeerEntry,
        Peers,
        TorchErrorJSON,
    )


MAX_MESSAGE = 4000


class Log:
    """Stage markers on stderr and torch's exceptions, shared by the probe's threads."""

    def __init__(self) -> None:
        self.errors: list[TorchErrorJSON] = []
        self.lock = threading.Lock()

    def begin(self, name: str) -> None:
        self._write(f"cuda-clinic-stage: {name}\n")

    def done(self, name: str) -> None:
        self._write(f"cuda-clinic-done: {name}\n")

    def _write(self, line: str) -> None:
        with self.lock:
            sys.stderr.write(line)
            sys.stderr.flush()

    def keep(self, stage: str, exc: BaseException) -> None:
        """Keep torch's own words: the exception's type and its whole message, verbatim."""
        with self.lock:
            self.errors.append(
                {
                    "stage": stage,
                    "type": type(exc).__name__,
                    "message": str(exc).strip()[:MAX_MESSAGE],
                }
            )


def error_text(exc: BaseException) -> str:
    """`Type: first line of the message`."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}".rstrip(": ")


def first_conv(torch: Any, log: Log) -> OpResult:
    """The user's first model in miniature: a conv on cuda:0 before anything else touches cuDNN.

    It is also torch's one CUDA initialisation: nothing retries it after a failure (a second
    `_cuda_init` after a failed one can leave the allocator half built; see docs/env-matrix.md).
    """

    def conv() -> None:
        x = torch.randn(2, 3, 16, 16, device="cuda:0")
        w = torch.randn(4, 3, 3, 3, device="cuda:0")
        torch.nn.functional.conv2d(x, w, padding=1).sum().item()

    return _run_op(torch, 0, "first-conv", conv, log, stage="first conv on cuda:0")


def device_info(torch: Any, index: int) -> DeviceJSON:
    """What torch's CUDA runtime says about one device (its order may differ from NVML's)."""
    props = torch.cuda.get_device_properties(index)
    info: DeviceJSON = {
        "index": index,
        "name": props.name,
        "compute_capability": [props.major, props.minor],
        "memory_total_mb": int(props.total_memory) // (1024 * 1024),
        "multi_processor_count": getattr(props, "multi_processor_count", None),
    }
    uuid = getattr(props, "uuid", None)
    info["uuid"] = f"GPU-{uuid}" if uuid is not None and not str(uuid).startswith("GPU-") else uuid
    bus = [getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    if all(isinstance(v, int) for v in bus):
        info["pci_bus_id"] = f"{bus[0]:08X}:{bus[1]:02X}:{bus[2]:02X}.0"
    return info


def _ops(torch: Any, device: Any) -> tuple[tuple[str, Any], ...]:
    def matmul() -> None:
        a = torch.randn(64, 64, device=device)
        (a @ a).sum().item()

    def conv() -> None:
        x = torch.randn(2, 3, 16, 16, device=device)
        w = torch.randn(4, 3, 3, 3, device=device)
        torch.nn.functional.conv2d(x, w, padding=1).sum().item()

    def lstm() -> None:
        layer = torch.nn.LSTM(8, 16).to(device)
        out, _ = layer(torch.randn(5, 2, 8, device=device))
        out.sum().item()

    return (("matmul", matmul), ("conv", conv), ("lstm", lstm))


def _run_op(
    torch: Any, index: int, name: str, fn: Any, log: Log, *, stage: str | None = None
) -> OpResult:
    """One op, timed, with its stage markers; a failing op is the finding, not a failure."""
    stage = stage or f"{name} on cuda:{index}"
    log.begin(stage)
    t0 = time.perf_counter()
    check: OpResult = {"device": f"cuda:{index}", "op": name, "ok": True, "error": None}
    try:
        fn()
        torch.cuda.synchronize(index)
    except Exception as exc:
        log.keep(stage, exc)
        check["ok"], check["error"] = False, error_text(exc)
    check["seconds"] = round(time.perf_counter() - t0, 4)
    log.done(stage)
    return check


def one_device(torch: Any, index: int, log: Log) -> DeviceResult:
    """Device properties, then a tiny matmul (cuBLAS), conv (cuDNN) and LSTM, each timed.

    The matmul runs in a thread of its own beside the conv and the LSTM: starting cuBLAS and
    loading cuDNN's RNN library are independent host-side work (0.10 s and 0.04 s on an H100).
    """
    out: DeviceResult = {"checks": []}
    try:
        out["device"] = device_info(torch, index)
    except Exception as exc:
        log.keep(f"device {index}", exc)
        out["device"] = {"index": index, "error": error_text(exc)}
    device = torch.device("cuda", index)
    ops = _ops(torch, device)
    results: dict[str, OpResult] = {}

    def lane(names: tuple[str, ...]) -> None:
        for name, fn in ops:
            if name in names:
                results[name] = _run_op(torch, index, name, fn, log)

    cublas = threading.Thread(target=lane, args=(("matmul",),), name=f"gpu{index}-cublas")
    cublas.start()
    lane(("conv", "lstm"))
    cublas.join()
    out["checks"] = [results[name] for name, _fn in ops if name in results]
    return out


def all_devices(torch: Any, count: int, log: Log) -> list[DeviceResult]:
    """`one_device` for every GPU at once, one thread each (torch releases the GIL in its ops)."""
    results: list[DeviceResult] = [{} for _ in range(count)]

    def run(index: int) -> None:
        results[index] = one_device(torch, index, log)

    threads = [threading.Thread(target=run, args=(i,), name=f"gpu{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def peers(torch: Any, count: int, log: Log) -> Peers:
    """Peer access for every ordered pair of GPUs and whether torch's NCCL backend is there."""
    out: Peers = {"peer_access": [], "errors": {}}
    log.begin("peer access")
    for i in range(count):
        for j in range(count):
            if i == j:
                continue
            entry: PeerEntry = {"from": i, "to": j}
            try:
                entry["can_access"] = bool(torch.cuda.can_device_access_peer(i, j))
            except Exception as exc:
                entry["can_access"] = None
                entry["error"] = error_text(exc)
            out["peer_access"].append(entry)
    log.done("peer access")
    log.begin("torch.distributed")
    try:
        import torch.distributed as dist

        out["nccl_backend_available"] = bool(dist.is_available() and dist.is_nccl_available())
    except Exception as exc:
        out["nccl_backend_available"] = None
        out["errors"]["distributed"] = error_text(exc)
    log.done("torch.distributed")
    return out
