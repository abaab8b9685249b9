"""Steps for the device entries: tensors on two devices, a CUDA checkpoint loaded without CUDA,
CUDA in a forked DataLoader worker, an invalid device ordinal, a CPU-only torch asked for CUDA."""

from __future__ import annotations

import importlib
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:  # loaded by path in the target; mypy reads the package
    from core.wizard.steps import _stepkit as kit
else:
    import _stepkit as kit


Emit = kit.Emit


# -- cuda/tensors-on-different-devices -----------------------------------------------------------


class MaskedHead(nn.Module):
    """A layer that builds a tensor in forward(): the classic one left on the CPU."""

    def __init__(self, variant: str) -> None:
        super().__init__()
        self.variant = variant
        self.linear = nn.Linear(32, 8)
        self.register_buffer("scale_buffer", torch.ones(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.variant == "create-on-input-device":
            scale = torch.ones(8, device=x.device)
        elif self.variant == "register-buffer":
            scale = self.get_buffer("scale_buffer")  # moved with the module by .to(device)
        else:
            scale = torch.ones(8)  # created on the CPU, whatever device the model is on
        return self.linear(x) * scale


def different_devices(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """model.to('cuda'), an input on the GPU, and a tensor made on the CPU inside forward()."""
    if not torch.cuda.is_available():
        return {"skipped": "needs a CUDA GPU: on the CPU every tensor is on the same device"}
    variant = kit.text_param(params, "variant", "repro")
    model = MaskedHead(variant).to("cuda")
    if variant == "move-model-again":
        model = model.to("cuda")  # what users try first: it does not move tensors made later
    x = torch.randn(4, 32, device="cuda")
    out = model(x)
    return {"variant": variant, "output_device": str(out.device), **kit.versions()}


# -- cuda/deserialize-cuda-without-cuda ----------------------------------------------------------

SAVE_ON_CUDA = (
    "import sys, torch\ntorch.save({'weight': torch.arange(6.0, device='cuda')}, sys.argv[1])\n"
)


CPU_TAG = b"X\x03\x00\x00\x00cpu"
CUDA_TAG = b"X\x06\x00\x00\x00cuda:0"


def _cuda_checkpoint(path: str) -> str:
    """A checkpoint whose tensor is tagged cuda:0: saved by a process that has the GPU, or
    (no GPU anywhere) a CPU checkpoint whose storage location is rewritten to cuda:0."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    done = subprocess.run(
        [sys.executable, "-c", SAVE_ON_CUDA, path],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if done.returncode == 0:
        return "saved on the GPU by a process that sees it"
    torch.save({"weight": torch.arange(6.0)}, path)
    with zipfile.ZipFile(path) as old:
        items = [(info, old.read(info.filename)) for info in old.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as new:
        for info, data in items:
            if info.filename.endswith("data.pkl"):  # BINUNICODE 'cpu' -> 'cuda:0'
                new.writestr(info, data.replace(CPU_TAG, CUDA_TAG))
            else:
                new.writestr(info, data)
    return "a CPU checkpoint with its storage location rewritten to cuda:0 (no GPU here)"


def load_checkpoint(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """torch.load of a CUDA checkpoint in a process where CUDA is not available (variant:
    repro, map-location-cpu, map-location-function)."""
    variant = kit.text_param(params, "variant", "repro")
    if torch.cuda.is_available():
        return {
            "skipped": "CUDA is available in this process; the error needs a process "
            "without it (the wizard hides the GPU with CUDA_VISIBLE_DEVICES='')"
        }
    with tempfile.TemporaryDirectory() as folder:
        path = str(pathlib.Path(folder) / "model.pt")
        made = _cuda_checkpoint(path)
        emit({"kind": "info", "what": "checkpoint", "made": made})
        if variant == "map-location-cpu":
            state = torch.load(path, map_location="cpu")
        elif variant == "map-location-function":
            state = torch.load(path, map_location=lambda storage, _location: storage)
        else:
            state = torch.load(path)
    weight = state["weight"]
    return {
        "variant": variant,
        "checkpoint": made,
        "device": str(weight.device),
        "values_ok": weight.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    }


# -- cuda/cuda-reinit-forked-subprocess ----------------------------------------------------------


class CudaItems(torch.utils.data.Dataset):  # type: ignore[type-arg]
    """A dataset whose items are made on the GPU (or, fixed, on the CPU)."""

    def __init__(self, on_gpu: bool) -> None:
        self.on_gpu = on_gpu

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> torch.Tensor:
        device = "cuda" if self.on_gpu else "cpu"
        return torch.full((4,), float(index), device=device)


def forked_loader(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """CUDA used in the parent, then a DataLoader worker that touches CUDA (variant: repro,
    cpu-items, spawn, no-workers)."""
    if not torch.cuda.is_available():
        return {"skipped": "needs a CUDA GPU: the error is about re-initialising CUDA"}
    variant = kit.text_param(params, "variant", "repro")
    torch.zeros(1, device="cuda")  # the parent has initialised CUDA (a model on the GPU)
    # The class must be importable by name in a spawned child: use this file as a module.
    steps = importlib.import_module(pathlib.Path(__file__).stem)
    dataset = steps.CudaItems(on_gpu=variant != "cpu-items")
    workers = 0 if variant == "no-workers" else 1
    context = None if workers == 0 else ("spawn" if variant == "spawn" else "fork")
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=4, num_workers=workers, multiprocessing_context=context
    )
    total = 0.0
    for batch in loader:
        total += float(batch.to("cuda").sum().item())
    return {"variant": variant, "total": total, "workers": workers, "start": context}


# -- cuda/invalid-device-ordinal -----------------------------------------------------------------


def device_ordinal(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Ask for a GPU index one past the visible ones (variant: repro, visible-index,
    visible-devices-remap)."""
    if not torch.cuda.is_available():
        return {"skipped": "needs a CUDA GPU: with none visible, any index is a different error"}
    variant = kit.text_param(params, "variant", "repro")
    count = torch.cuda.device_count()
    index = count if variant == "repro" else 0
    emit(
        {
            "kind": "info",
            "what": "devices",
            "visible": count,
            "asked": index,
            "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }
    )
    x = torch.ones(4, device=f"cuda:{index}")
    return {
        "variant": variant,
        "visible": count,
        "index": index,
        "sum": float(x.sum().item()),
        **kit.versions(),
    }


# -- cuda/torch-not-compiled-with-cuda -----------------------------------------------------------


def cpu_build(params: kit.Params, emit: Emit) -> kit.JSONObject:
    """Ask a torch for CUDA (variant: repro, device-agnostic)."""
    variant = kit.text_param(params, "variant", "repro")
    info = {"torch": torch.__version__, "torch_cuda": torch.version.cuda}
    if torch.version.cuda is not None:
        return {
            "skipped": f"this torch is built with CUDA {torch.version.cuda}; the error "
            "needs a CPU-only build",
            **info,
        }
    if variant == "device-agnostic":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        x = torch.ones(4).to(dev)
        return {"variant": variant, "device": str(x.device), **info}
    x = torch.ones(4).cuda()
    return {"variant": variant, "device": str(x.device), **info}
