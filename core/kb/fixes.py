"""No-code fixes declared by KB entries: environment variables, torch switches (docs/kb-format.md).

One declaration serves two features: `cuda-clinic try` re-runs the user's own command once per
fix, and a wizard step can name a fix (`Step.kb_fix`) to re-run its repro under it. A switch is
applied at interpreter start by a small shim, so the user's code is not changed; the vocabulary
is fixed here, and each switch carries the exact Python line it stands for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from core.kb.tables import check_table, toml_fields

# "dead_end": a change sources suggest that the clinic measured as not fixing the error; kept so
# a wizard (and `try --fixes`, on your own script) can show it, never offered as a fix.
FIX_KINDS = ("fix", "diagnose", "dead_end")


@dataclass(frozen=True)
class Switch:
    """A torch setting the shim applies before the user's code runs."""

    name: str
    description: str
    code: str  # Python run after `import torch` in the child, before the user's code
    cuda: bool = False  # acts on CUDA/cuDNN only: a CPU-only torch cannot test it


SWITCHES: dict[str, Switch] = {
    s.name: s
    for s in (
        Switch("cudnn-off", "cuDNN disabled", "torch.backends.cudnn.enabled = False", cuda=True),
        Switch(
            "cudnn-benchmark-on",
            "cuDNN autotuner on",
            "torch.backends.cudnn.benchmark = True",
            cuda=True,
        ),
        Switch(
            "cudnn-benchmark-off",
            "cuDNN autotuner off",
            "torch.backends.cudnn.benchmark = False",
            cuda=True,
        ),
        Switch(
            "cudnn-deterministic",
            "deterministic cuDNN algorithms only",
            "torch.backends.cudnn.deterministic = True",
            cuda=True,
        ),
        Switch(
            "deterministic-off",
            "torch.use_deterministic_algorithms(False), after the user's code has no say",
            "torch.use_deterministic_algorithms = lambda *a, **k: None",
        ),
        Switch(
            "deterministic-warn-only",
            "deterministic algorithms requested, but a missing one only warns",
            "_clinic_uda = torch.use_deterministic_algorithms\n"
            "torch.use_deterministic_algorithms = "
            "lambda mode, *, warn_only=False: _clinic_uda(mode, warn_only=True)",
        ),
        Switch(
            "tf32-off",
            "TF32 off for cuDNN and cuBLAS (strict fp32)",
            "torch.backends.cudnn.allow_tf32 = False\n"
            "torch.backends.cuda.matmul.allow_tf32 = False",
            cuda=True,
        ),
        Switch(
            "sdpa-no-cudnn",
            "scaled_dot_product_attention without the cuDNN backend",
            "torch.backends.cuda.enable_cudnn_sdp(False)",
            cuda=True,
        ),
        Switch(
            "sdpa-math-only",
            "scaled_dot_product_attention on the math backend only",
            "torch.backends.cuda.enable_cudnn_sdp(False)\n"
            "torch.backends.cuda.enable_flash_sdp(False)\n"
            "torch.backends.cuda.enable_mem_efficient_sdp(False)",
            cuda=True,
        ),
        Switch(
            "anomaly-detection",
            "autograd anomaly detection (names the forward op of a failing backward)",
            "torch.autograd.set_detect_anomaly(True)",
        ),
    )
}

# Variables read only by CUDA, cuDNN, cuBLAS, NCCL or torch's CUDA allocator.
_CUDA_ENV = re.compile(
    r"^(?:CUDA_|CUBLAS_|CUBLASLT_|CUDNN_|NCCL_|PYTORCH_CUDA_|TORCH_CUDNN_|"
    r"TORCH_USE_CUDA_DSA$|PYTORCH_NO_CUDA_MEMORY_CACHING$)"
)

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


# Variables that change which code runs, not how it runs: loader and plugin paths, interpreter
# and shell start-up files. A fix from the user's own pack may not set them (a shared pack edited
# by someone else, run with --yes, would otherwise run their code); bundled fixes are reviewed.
CODE_VARIABLES = {
    "PATH": "the programs found on PATH",
    "PYTHONPATH": "Python's import path",
    "PYTHONHOME": "Python's standard library",
    "PYTHONSTARTUP": "a Python start-up file",
    "PYTHONUSERBASE": "Python's user site-packages",
    "PYTHONEXECUTABLE": "Python's executable",
    "PYTHONPLATLIBDIR": "Python's library folder",
    "PYTHONBREAKPOINT": "a function imported by breakpoint()",
    "PYTHONWARNINGS": "warning filters (they import the modules they name)",
    "BASH_ENV": "a file bash runs at start-up",
    "ENV": "a file sh runs at start-up",
    "SHELLOPTS": "bash's options",
    "GCONV_PATH": "glibc's character-set modules",
    "PERL5LIB": "Perl's import path",
    "PERL5OPT": "Perl's options",
    "RUBYOPT": "Ruby's options",
    "RUBYLIB": "Ruby's import path",
    "NODE_OPTIONS": "Node's options",
    "CUDA_INJECTION64_PATH": "a library injected into every CUDA program",
    "CUDA_INJECTION32_PATH": "a library injected into every CUDA program",
    "NCCL_NET_PLUGIN": "a network plugin library NCCL loads",
    "NCCL_TUNER_PLUGIN": "a tuner plugin library NCCL loads",
    "NCCL_PROFILER_PLUGIN": "a profiler plugin library NCCL loads",
}
CODE_PREFIXES = {
    "LD_": "the dynamic loader (libraries loaded into every program)",
    "DYLD_": "the macOS dynamic loader",
    "BASH_FUNC_": "a bash function defined in every child shell",
}


def code_variable(name: str) -> str | None:
    """What `name` changes when it changes which code runs (see CODE_VARIABLES), else None."""
    if name in CODE_VARIABLES:
        return CODE_VARIABLES[name]
    return next((why for prefix, why in CODE_PREFIXES.items() if name.startswith(prefix)), None)


@dataclass(frozen=True)
class Fix:
    """One fix that needs no code change: variables to set and switches to apply."""

    id: str
    title: str
    kind: str = "fix"  # "fix" (may make it go away), "diagnose" (locates it) or "dead_end"
    env: dict[str, str] = field(default_factory=dict)
    switches: tuple[str, ...] = ()
    advice: str = ""  # what to change for good, as code or environment
    notes: str = ""

    def shim_code(self) -> str:
        """The Python lines the shim runs for this fix's switches ('' when it has none)."""
        return "\n".join(SWITCHES[name].code for name in self.switches)

    @property
    def needs_cuda(self) -> bool:
        """Whether the fix acts on CUDA/cuDNN only (a CPU-only torch cannot test it)."""
        return any(SWITCHES[s].cuda for s in self.switches) or any(
            _CUDA_ENV.match(name) for name in self.env
        )

    def describe(self) -> str:
        """`VAR=value ...; switch, switch` as one line (what a re-run changes)."""
        parts = [" ".join(f"{k}={v}" for k, v in self.env.items())]
        parts.append(", ".join(self.switches))
        return "; ".join(p for p in parts if p)


_FIELDS = toml_fields(Fix)


def parse_fixes(items: list[Any], fail: Any) -> tuple[Fix, ...]:
    """Validate an entry's `fixes`; `fail(field, problem)` builds the one-line KBError."""
    result: list[Fix] = []
    for i, raw in enumerate(items):
        fix = _parse_one(raw, f"fixes[{i}]", fail)
        if any(f.id == fix.id for f in result):
            raise fail(f"fixes[{i}].id", f"{fix.id!r} is declared twice")
        result.append(fix)
    return tuple(result)


def _parse_one(raw: Any, name: str, fail: Any) -> Fix:
    """One `[[fixes]]` table."""
    prefix = name + "."
    check_table(raw, _FIELDS, prefix, fail)
    for key in ("id", "title"):
        if not str(raw.get(key, "")).strip():
            raise fail(prefix + key, "is required")
    if not _SLUG.fullmatch(raw["id"]):
        raise fail(prefix + "id", f"must be a lowercase-hyphen slug (got {raw['id']!r})")
    kind = raw.get("kind", "fix")
    if kind not in FIX_KINDS:
        raise fail(prefix + "kind", f"must be one of {', '.join(FIX_KINDS)} (got {kind!r})")
    env = _env(raw.get("env", {}), prefix, fail)
    switches = tuple(raw.get("switches", []))
    for j, switch in enumerate(switches):
        if switch not in SWITCHES:
            known = ", ".join(sorted(SWITCHES))
            raise fail(f"{prefix}switches[{j}]", f"unknown switch {switch!r} (known: {known})")
    if not env and not switches:
        raise fail(prefix + "env", "a fix needs at least one variable or switch")
    return Fix(
        id=raw["id"],
        title=raw["title"].strip(),
        kind=kind,
        env=env,
        switches=switches,
        advice=raw.get("advice", "").strip(),
        notes=raw.get("notes", "").strip(),
    )


def _env(env: dict[str, object], prefix: str, fail: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name):
            raise fail(f"{prefix}env.{name}", "must be an upper-case environment variable name")
        if not isinstance(value, str):
            raise fail(f"{prefix}env.{name}", 'must be a string (quote numbers: "1")')
        out[name] = value
    return out
