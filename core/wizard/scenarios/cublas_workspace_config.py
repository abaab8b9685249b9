"""Deterministic cuBLAS needs CUBLAS_WORKSPACE_CONFIG (steps: determinism.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 310
ID = "cuda/cublas-workspace-config"
REPRO = Step(
    "repro",
    "use_deterministic_algorithms(True), then a CUDA matmul, no CUBLAS_WORKSPACE_CONFIG",
    "determinism.py",
    "cublas_matmul",
    {},
    isolated=True,
    timeout_s=60.0,
    env={"CUBLAS_WORKSPACE_CONFIG": ""},  # as if the user had not set it
)

SCENARIO = Scenario(
    id=ID,
    title="A CUDA matmul in deterministic mode without CUBLAS_WORKSPACE_CONFIG",
    summary="torch.use_deterministic_algorithms(True) and a 512x512 matmul on the GPU with "
    "CUBLAS_WORKSPACE_CONFIG unset; then the two values the KB declares (:4096:8 and :16:8), "
    "each in a fresh process, with the matmul's time and a bit-identical rerun check.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "cublas-workspace-4096",
            REPRO,
            claim="KB: set CUBLAS_WORKSPACE_CONFIG=:4096:8 before the first matmul",
            claim_fixes=True,
        ),
        kb_fix(
            ID,
            "cublas-workspace-16",
            REPRO,
            claim="KB: :16:8 also works (less memory, possibly slower)",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
)
