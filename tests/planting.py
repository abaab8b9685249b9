"""The planting generator: random values of every kind the report removes, placed in realistic
log lines, environment variables, command-line items and folders, with a fresh seed each run.

`campaign(seed)` plants every kind at least twice in log lines (under different line shapes),
once more wherever a kind also lives in an environment variable, an argv list or a folder, and
mixes in SURVIVORS, the diagnostics that must come through. The seed is printed by the tests
on failure (`CUDA_CLINIC_PLANT_SEED=N` replays one).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

from tests.planting_base import Make, Plant, user
from tests.planting_context import CONTEXT
from tests.planting_people import PEOPLE
from tests.planting_tokens import TOKENS

KINDS: dict[str, Make] = {**TOKENS, **CONTEXT, **PEOPLE}

# How a log puts a line: torch's rank prefix, logging, a pytest failure, a shell trace...
WRAPPERS = (
    "{}",
    "[rank{n}]: {}",
    "2026-11-27 12:{n:02d}:07,114 INFO {}",
    "E       {}",
    "+ {}",
    "wandb: {}",
    "[default{n}]:{}",
    "    {}",
    "DEBUG:urllib3.connectionpool:{}",
)

# Diagnostics a reader needs, which must come through every format unchanged.
SURVIVORS = (
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    "NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible",
    "supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
    "torch 2.11.0+cu130",
    "cuDNN version: 9.19.0.56",
    "nvidia-cudnn-cu13 9.19.0.56",
    "nvidia-curand-cu12 10.3.2.106",
    "tensorrt 10.3.0.26",
    "Driver Version: 580.159.04",
    "CUDA Version: 13.0",
    "libcudnn.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcublasLt.so.13",
    "Segmentation fault at 0x7f3a2b1c4d50",
    "torch.nn.functional.scaled_dot_product_attention",
    "site-packages/torch/nn/modules/conv.py",
    "line 454, in _conv_forward",
    "proj/train.py",
    "line 41, in <module>",
    "train.py:41",
    "NCCL version 2.27.3+cuda13.0",
    "ncclUnhandledCudaError: Call to CUDA function failed.",
    "CudnnConvolutionBackward0",
    "c10::Error",
    "at::native::vectorized_elementwise_kernel",
    "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64",
    "cz5ujyfgsgtnj5lxq6bkslpqumbgi4z5wpfgfq67rvihnlhuvy4s.py",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
    "PCI bus id 00000000:01:00.0",
    "bind to 127.0.0.1:29500",
    "CUBLAS_WORKSPACE_CONFIG=:4096:8",
    "TOKENIZERS_PARALLELISM=false",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "https://pytorch.org/docs/stable/notes/cuda.html",
    "Exception raised from launch_kernel at /pytorch/aten/src/ATen/native/cuda/Loops.cuh:94",
    "model.pt",
    "max_split_size_mb",
)
# The lines that carry them (a few survivors need a line around them).
SURVIVOR_LINES = (
    *(
        s
        for s in SURVIVORS
        if s
        not in (
            "site-packages/torch/nn/modules/conv.py",
            "line 454, in _conv_forward",
            "proj/train.py",
            "line 41, in <module>",
            "train.py:41",
            "model.pt",
            "max_split_size_mb",
        )
    ),
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/conv.py", '
    "line 454, in _conv_forward",
    "saved checkpoint to model.pt; try max_split_size_mb or expandable segments",
)


@dataclass
class Campaign:
    """One run's planted values and where they went."""

    seed: int
    lines: list[str] = field(default_factory=list)  # the pasted log, survivors mixed in
    env: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    planted: list[tuple[str, str, str]] = field(default_factory=list)  # kind, where, value

    @property
    def kinds(self) -> set[str]:
        """The kinds planted."""
        return {kind for kind, _, _ in self.planted}


def seed_for_run() -> int:
    """A fresh seed each run, or the one CUDA_CLINIC_PLANT_SEED replays."""
    fixed = os.environ.get("CUDA_CLINIC_PLANT_SEED")
    return int(fixed) if fixed else random.SystemRandom().randrange(2**32)


def campaign(seed: int, per_kind: int = 2) -> Campaign:
    """Plant every kind `per_kind` times in log lines, plus its env/argv/path forms."""
    rng = random.Random(seed)
    out = Campaign(seed)
    order = sorted(KINDS)
    rng.shuffle(order)
    blocks: list[list[str]] = []  # one block per plant: survivors go between blocks
    for kind in order:
        for _ in range(per_kind):
            plant = KINDS[kind](rng)
            wrapper = rng.choice(WRAPPERS)
            n = rng.randrange(8)
            blocks.append([wrapper.format(line, n=n) for line in plant.text.split("\n")])
            out.planted.extend((kind, "log", s) for s in plant.secrets)
        extra = KINDS[kind](rng)
        if extra.env:
            out.env.update(extra.env)
            out.planted.extend((kind, "env", s) for s in extra.secrets)
        if extra.argv:
            out.argv.extend(extra.argv)
            out.planted.extend((kind, "argv", s) for s in extra.secrets)
        if extra.path:
            out.paths.append(extra.path)
            out.planted.extend((kind, "path", s) for s in extra.secrets)
    name = user(rng)  # the user's own file and line survive; their name does not
    blocks.append(
        [
            f'  File "/home/{name}/proj/train.py", line 41, in <module>',
            "    loss = model(x)  # train.py:41",
        ]
    )
    out.planted.append(("home-linux", "log", name))
    for line in SURVIVOR_LINES:
        blocks.insert(rng.randrange(len(blocks) + 1), [line])
    out.lines = [line for block in blocks for line in block]
    return out


def leaks(text: str, campaign: Campaign) -> list[tuple[str, str, str]]:
    """Planted values still in `text`, as (kind, where, value)."""
    return [p for p in campaign.planted if p[2] in text]


def plant_one(kind: str, seed: int) -> Plant:
    """One fresh value of `kind`."""
    return KINDS[kind](random.Random(seed))
