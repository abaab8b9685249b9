"""Cannot re-initialize CUDA in forked subprocess (steps: devices.py)."""

from __future__ import annotations

from typing import Any

from core.wizard.kbfix import kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 420
ID = "cuda/cuda-reinit-forked-subprocess"


def _step(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "devices.py",
        "forked_loader",
        {"variant": name},
        snippet,
        isolated=True,
        timeout_s=120.0,
        cost_metric="",
        **kw,
    )


SCENARIO = Scenario(
    id=ID,
    title="CUDA used in a forked DataLoader worker",
    summary="The parent process has used CUDA; a DataLoader with one forked worker builds its "
    "items on the GPU. Then the fixes: items on the CPU (moved to the GPU in the loop), "
    "'spawn' workers, no worker processes.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=_step("repro", "Dataset items made on the GPU in a forked worker"),
    workarounds=(
        _step(
            "cpu-items",
            "Return CPU tensors from the dataset; move batches in the loop",
            "return torch.from_numpy(item)   # in __getitem__\nbatch = batch.cuda()  # in "
            "the training loop",
            claim="KB: keep CUDA out of DataLoader workers",
            claim_fixes=True,
        ),
        _step(
            "spawn",
            "multiprocessing_context='spawn'",
            "DataLoader(ds, num_workers=1, multiprocessing_context='spawn')",
            claim="KB and the error message: use the 'spawn' start method",
            claim_fixes=True,
        ),
        _step("no-workers", "num_workers=0", "DataLoader(ds, num_workers=0)"),
    ),
    signature=kb_signature(ID),
)
