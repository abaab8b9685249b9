"""Build the simulated cluster's node env JSONs from the recorded H200 environment.

Usage: python tests/data/fleet/make_nodes.py [OUT_DIR] [--count N]
Writes OUT_DIR/gpuNN.json (default tests/data/fleet/nodes, 13 nodes): eight H200s per node from
tests/data/env/gpu_deep.json, with the deviations a real cluster shows: an older driver
(gpu05), the system cuDNN loaded instead of torch's wheel (gpu06), another torch and NCCL
(gpu07), a GPU missing (gpu08), one GPU with ECC off and a lower clock (gpu09). With --count
larger than 13 the pattern repeats (node N behaves like node (N-1) % 13 + 1).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from core.env.saved import load_saved  # noqa: E402

SYSTEM_CUDNN = "/usr/lib/x86_64-linux-gnu"
GPUS_PER_NODE = 8


def base_env() -> dict[str, Any]:
    """The recorded H200 environment, widened to eight GPUs."""
    env = load_saved(ROOT / "tests/data/env/gpu_deep.json").env.to_dict()
    gpu, device = env["gpus"][0], env["torch"]["devices"][0]
    checks = [c for c in env["torch"]["checks"] if c["device"] == "cuda:0"]
    env["gpus"], env["torch"]["devices"], env["torch"]["checks"] = [], [], []
    for i in range(GPUS_PER_NODE):
        uuid = f"GPU-00000000-0000-0000-0000-{i:012d}"
        bus = f"00000000:{0x18 + 0x10 * i:02X}:00.0"
        env["gpus"].append({**gpu, "index": i, "uuid": uuid, "pci_bus_id": bus})
        env["torch"]["devices"].append({**device, "index": i, "uuid": uuid, "pci_bus_id": bus})
        env["torch"]["checks"] += [{**c, "device": f"cuda:{i}"} for c in checks]
    env["torch"]["device_count"] = GPUS_PER_NODE
    return env


def node_env(base: dict[str, Any], number: int) -> dict[str, Any]:
    """Node `number`'s environment (1-based); the deviation depends on (number-1) % 13 + 1."""
    env = copy.deepcopy(base)
    kind = (number - 1) % 13 + 1
    for i, gpu in enumerate(env["gpus"]):  # every node its own GPU UUIDs
        uuid = f"GPU-{number:08d}-0000-0000-0000-{i:012d}"
        gpu["uuid"] = env["torch"]["devices"][i]["uuid"] = uuid
    if kind == 5:
        env["driver"].update(version="570.172.08", cuda_max="12.8", kernel_module="570.172.08")
        env["driver"]["nvml_version"] = "12.570.172.08"
    elif kind == 6:
        env["cudnn"].update(version="9.14.0", loaded_from=SYSTEM_CUDNN)
        env["torch"]["cudnn_version"] = "9.14.0"
        for lib in env["loaded_libraries"]:
            if lib["name"].startswith("libcudnn"):
                lib["directory"] = SYSTEM_CUDNN
                lib["path"] = f"{SYSTEM_CUDNN}/{lib['name']}"
        for copy_ in env["cudnn"]["copies"]:
            copy_["loaded"] = copy_["directory"] == SYSTEM_CUDNN
    elif kind == 7:
        env["torch"].update(version="2.10.0+cu128", cuda="12.8", nccl_version="2.27.3")
        env["torch"]["declared"] = {"nvidia-cudnn-cu12": "9.10.2.21", "nvidia-nccl-cu12": "2.27.3"}
        env["torch"]["declared_cudnn"] = "9.10.2.21"
        for pkg in env["packages"]["pip"]:
            if pkg["name"] == "torch":
                pkg["version"] = "2.10.0+cu128"
    elif kind == 8:
        env["gpus"] = env["gpus"][:-1]
        env["torch"]["devices"] = env["torch"]["devices"][:-1]
        env["torch"]["checks"] = [c for c in env["torch"]["checks"] if c["device"] != "cuda:7"]
        env["torch"]["device_count"] = GPUS_PER_NODE - 1
    elif kind == 9:
        env["gpus"][3].update(ecc_enabled=False, max_sm_clock_mhz=1755, sm_clock_mhz=1755)
    return env


def main() -> None:
    """Write the node files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(Path(__file__).parent / "nodes"))
    parser.add_argument("--count", type=int, default=13)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = base_env()
    width = max(2, len(str(args.count)))
    for n in range(1, args.count + 1):
        text = json.dumps(node_env(base, n), indent=2) + "\n"
        (out / f"gpu{n:0{width}d}.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
