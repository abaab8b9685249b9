"""CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH: cuDNN 9 sub-libraries from two installs
(steps: cudnn_libraries.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 610
ID = "cuda/cudnn-sublibrary-version-mismatch"
SYSTEM = "/usr/lib/x86_64-linux-gnu"
SUBLIBS = [f"{SYSTEM}/libcudnn_{name}.so.9" for name in ("graph", "ops", "cnn")]
REPRO = Step(
    "repro",
    "System cuDNN sub-libraries (graph, ops, cnn) preloaded beside torch's own libcudnn.so.9",
    "cudnn_libraries.py",
    "first_conv",
    {"requires": ":".join(SUBLIBS)},
    isolated=True,
    timeout_s=90.0,
    env={"LD_PRELOAD": ":".join(SUBLIBS)},
    cost_metric="",
)

SCENARIO = Scenario(
    id=ID,
    title="cuDNN sub-libraries from another install (sub-library version mismatch)",
    summary="The child starts with three of the system cuDNN's sub-libraries preloaded while "
    "torch's bundled libcudnn.so.9 loads the rest, then runs its first conv2d. Then the KB's "
    "fix: no foreign library paths. Skipped where no second cuDNN exists.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        kb_fix(
            ID,
            "no-foreign-libraries",
            REPRO,
            claim="KB: load all cuDNN sub-libraries from one installation",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDNN_STATUS_|cuDNN version",
    fixes_need_failure=False,
)
