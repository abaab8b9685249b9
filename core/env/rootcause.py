"""Root causes first: a finding that explains others suppresses or demotes them (data: RULES).

A user reads the first finding and acts on it, so the first finding must be the cause, not a
symptom. Hidden GPUs make torch report no CUDA and an empty arch list; a foreign cuDNN makes
the tiny conv fail; a malformed allocator setting makes every allocation fail. Each rule names
a root finding and what it explains: `suppress` removes the cascade from the findings (it is
kept on Environment.suppressed with `caused_by`), `demote` keeps it at a lower severity.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from core.env.model import SEVERITIES, Finding

_ARCH = ("cuda.arch-unsupported", "cuda.arch-ptx-jit")
_CUDA_USE = ("torch.cuda-unavailable", "torch.op-failed", *_ARCH)


@dataclass(frozen=True)
class Rule:
    """`root` explains the findings in `suppress` and `demote` (optionally only when their
    message or evidence matches `when`)."""

    root: str
    suppress: tuple[str, ...] = ()
    demote: tuple[str, ...] = ()
    demote_to: str = "info"
    when: str = ""


# In priority order: when several roots are present, the earlier rule's root comes first.
RULES: tuple[Rule, ...] = (
    # A container started without its GPU: no driver, no GPU, no CUDA are what follows.
    Rule(
        "cuda.container-gpu-not-visible",
        suppress=(*_CUDA_USE, "driver.not-found", "driver.library-missing", "gpu.none"),
    ),
    Rule("driver.library-missing", suppress=_CUDA_USE),
    Rule("driver.not-found", suppress=_CUDA_USE),
    Rule("driver.not-loaded", suppress=_CUDA_USE),
    Rule("driver.version-mismatch", suppress=_CUDA_USE),
    Rule("driver.no-permission", suppress=_CUDA_USE),
    # A damaged library copy: the crash, the failed ops and the unreadable version are its doing.
    Rule(
        "lib.damaged-copy",
        suppress=("torch.op-failed", "cudnn.unreadable"),
        demote=(
            "probe.deep-failed",
            "cudnn.mixed-sublibraries",
            "cudnn.unexpected-copy",
            "cudnn.runtime-incompatible",
            "torch.import-error",
        ),
        demote_to="warning",
    ),
    # A malformed allocator setting can make torch fail at import or at CUDA init already.
    Rule(
        "env.alloc-conf-invalid",
        suppress=("torch.op-failed", "torch.cuda-unavailable"),
        demote=("torch.import-error",),
        demote_to="warning",
        when=r"(?i)allocator|ALLOC_CONF",
    ),
    Rule(
        "torch.import-error",
        suppress=(
            *_CUDA_USE,
            "cudnn.runtime-incompatible",
            "cudnn.version-mismatch",
            "cudnn.unexpected-copy",
            "cudnn.sublibrary-missing",
        ),
    ),
    Rule(
        "env.cuda-visible-devices-hides-all",
        suppress=(*_CUDA_USE, "gpu.order-differs"),
    ),
    Rule("cuda.driver-too-old", suppress=("torch.cuda-unavailable", "torch.op-failed", *_ARCH)),
    Rule(
        "cudnn.sublibrary-missing",
        suppress=("cudnn.version-mismatch",),
        demote=("cudnn.mixed-sublibraries", "cudnn.unexpected-copy", "cudnn.runtime-incompatible"),
        demote_to="warning",
    ),
    Rule("cudnn.sublibrary-missing", suppress=("torch.op-failed",), when=r"(?i)cudnn"),
    Rule(
        "cudnn.runtime-incompatible",
        suppress=("cudnn.version-mismatch",),
        demote=("cudnn.mixed-sublibraries", "cudnn.unexpected-copy"),
        demote_to="warning",
    ),
    Rule("cudnn.runtime-incompatible", suppress=("torch.op-failed",), when=r"(?i)cudnn"),
    Rule("env.alloc-conf-invalid", suppress=("torch.op-failed",)),  # whatever the op said
    # torch 2.11 crashed (SIGSEGV) at the first conv with an unknown allocator key: the crash
    # stays visible, but the setting is the cause.
    Rule("env.alloc-conf-invalid", demote=("probe.deep-failed",), demote_to="warning"),
    Rule("cuda.arch-unsupported", suppress=("torch.op-failed",), when=r"(?i)no kernel image"),
    Rule("gpu.low-free-memory", demote=("torch.op-failed",), when=r"(?i)out of memory"),
)


def _explains(rule: Rule, finding: Finding) -> bool:
    if rule.when and not re.search(rule.when, f"{finding.message}\n{finding.evidence}"):
        return False
    return finding.id in rule.suppress or finding.id in rule.demote


def order(findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(findings to show, root causes first; cascades suppressed by a root cause)."""
    present = {f.id for f in findings}
    priority = {rule.root: i for i, rule in reversed(list(enumerate(RULES)))}
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    roots_used: set[str] = set()
    for finding in findings:
        rule = next(
            (
                r
                for r in RULES
                if r.root in present and r.root != finding.id and _explains(r, finding)
            ),
            None,
        )
        if rule is None:
            kept.append(finding)
        elif finding.id in rule.suppress:
            suppressed.append(dataclasses.replace(finding, caused_by=rule.root))
            roots_used.add(rule.root)
        else:
            worse = SEVERITIES.index(finding.severity) < SEVERITIES.index(rule.demote_to)
            severity = rule.demote_to if worse else finding.severity
            kept.append(dataclasses.replace(finding, severity=severity, caused_by=rule.root))
            roots_used.add(rule.root)

    def key(item: tuple[int, Finding]) -> tuple[int, int, int, int]:
        index, f = item
        is_root = f.id in roots_used or (f.id in priority and f.severity == "error")
        return (
            SEVERITIES.index(f.severity) if not is_root else -1,
            priority.get(f.id, len(RULES)) if is_root else 0,
            SEVERITIES.index(f.severity),
            index,
        )

    ordered = [f for _, f in sorted(enumerate(kept), key=key)]
    return ordered, suppressed
