"""cuDNN version incompatibility: a second cuDNN loaded first (steps: cudnn_libraries.py)."""

from __future__ import annotations

from core.wizard.kbfix import kb_fix, kb_signature
from core.wizard.model import Requirements, Scenario, Step

ORDER = 600
ID = "cuda/cudnn-version-incompatible"
SYSTEM = "/usr/lib/x86_64-linux-gnu"
MAIN = f"{SYSTEM}/libcudnn.so.9"
REPRO = Step(
    "repro",
    "The system libcudnn.so.9 loaded before torch's own (LD_PRELOAD)",
    "cudnn_libraries.py",
    "first_conv",
    {"requires": MAIN},
    isolated=True,
    timeout_s=90.0,
    env={"LD_PRELOAD": MAIN},
    cost_metric="",
)

SCENARIO = Scenario(
    id=ID,
    title="Another cuDNN found before the one torch was built with",
    summary="The child starts with the system cuDNN (e.g. 9.14 in /usr/lib/x86_64-linux-gnu) "
    "preloaded, then runs its first conv2d: torch checks the runtime cuDNN against the one it "
    "was compiled with. Then LD_LIBRARY_PATH pointing at the system copy (the common cause), "
    "and the KB's fix: no foreign library paths. Skipped where no second cuDNN exists.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=REPRO,
    workarounds=(
        Step(
            "ld-library-path",
            "LD_LIBRARY_PATH with the system cuDNN first (no preload)",
            "cudnn_libraries.py",
            "first_conv",
            {"requires": MAIN},
            isolated=True,
            timeout_s=90.0,
            env={"LD_LIBRARY_PATH": SYSTEM},
            cost_metric="",
        ),
        kb_fix(
            ID,
            "no-foreign-libraries",
            REPRO,
            claim="KB: remove cuDNN directories from "
            "LD_LIBRARY_PATH so torch's bundled cuDNN is found",
            claim_fixes=True,
        ),
    ),
    signature=kb_signature(ID),
    related_signature=r"CUDNN_STATUS_|cuDNN",
    fixes_need_failure=False,
)
