"""Peer-access probe: imports torch in the target interpreter, asks for every pair of GPUs
whether one can access the other's memory, and which NCCL torch loaded (version and file).

Run by path; prints one JSON object on the stdout it started with (library chatter goes to
stderr). Before each risky stage it writes `cuda-clinic-stage: NAME` to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]


def stage(name: str) -> None:
    """Tell the parent which stage is running (seen only if the child dies)."""
    sys.stderr.write(f"cuda-clinic-stage: {name}\n")
    sys.stderr.flush()


def error_text(exc: BaseException) -> str:
    """`Type: first line of the message`."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def loaded_nccl() -> list[str]:
    """Every libnccl mapped into this process (normally one, torch's)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    paths: list[str] = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6 and os.path.basename(parts[5].strip()).startswith("libnccl"):
            path = parts[5].strip()
            if path not in paths:
                paths.append(path)
    return paths


def probe(torch: Any) -> dict[str, Any]:
    """Devices, the peer matrix and NCCL as loaded; each part guarded on its own."""
    out: dict[str, Any] = {"errors": {}}
    cuda = torch.cuda
    out["cuda_available"] = bool(cuda.is_available())
    out["device_count"] = int(cuda.device_count()) if out["cuda_available"] else 0
    try:
        import torch.distributed as dist

        out["nccl_backend_available"] = bool(dist.is_available() and dist.is_nccl_available())
    except Exception as exc:
        out["nccl_backend_available"] = None
        out["errors"]["distributed"] = error_text(exc)
    stage("nccl version")
    try:
        out["nccl_version"] = ".".join(str(v) for v in cuda.nccl.version())
    except Exception as exc:
        out["nccl_version"] = None
        out["errors"]["nccl_version"] = error_text(exc)
    out["devices"] = []
    for index in range(out["device_count"]):
        try:
            props = cuda.get_device_properties(index)
            out["devices"].append(
                {
                    "index": index,
                    "name": props.name,
                    "compute_capability": f"{props.major}.{props.minor}",
                    "memory_total_mb": int(props.total_memory) // (1024 * 1024),
                }
            )
        except Exception as exc:
            out["devices"].append({"index": index, "error": error_text(exc)})
    out["peer_access"] = []
    for i in range(out["device_count"]):
        for j in range(out["device_count"]):
            if i == j:
                continue
            stage(f"peer access cuda:{i} -> cuda:{j}")
            entry: dict[str, Any] = {"from": i, "to": j}
            try:
                entry["can_access"] = bool(cuda.can_device_access_peer(i, j))
            except Exception as exc:
                entry["can_access"] = None
                entry["error"] = error_text(exc)
            out["peer_access"].append(entry)
    out["nccl_loaded"] = loaded_nccl()
    return out


def main() -> int:
    """Import torch, probe, print one JSON object on the original stdout."""
    json_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    result: dict[str, Any] = {"probe": "peers"}
    stage("import torch")
    try:
        import torch
    except BaseException as exc:
        result["import_error"] = error_text(exc)
    else:
        result.update(probe(torch))
    json_out.write(json.dumps(result))
    json_out.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
