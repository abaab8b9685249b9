"""Shared fuzzing kit: example budget, a hard per-example time limit, JSON mutations.

CUDA_CLINIC_FUZZ_EXAMPLES=N raises every fuzz test's example count (the long run recorded in
docs/reliability.md); the default keeps the suite quick.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("CUDA_CLINIC_FUZZ_EXAMPLES", "60"))
HANG_S = 10.0  # far above any honest example; a hang fails the test instead of stalling CI

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=3),  # slow examples fail too (hypothesis re-checks them)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("CUDA_CLINIC_FUZZ_SEED") is None,
)


@contextlib.contextmanager
def no_hang(seconds: float = HANG_S) -> Iterator[None]:
    """Raise TimeoutError in this thread if the body runs longer than `seconds`."""

    def fire(_sig: int, _frame: object) -> None:
        raise TimeoutError(f"hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# Text that stresses parsers: control characters, surrogates excluded (not encodable), NULs,
# very long runs, regex metacharacters, and the protocol's own characters.
TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80
) | st.sampled_from(["", "\x00", "\n\n", "+++", "[[", "(?:", "\\", "💥" * 10, "9.19.0.56"])

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside `doc` (dict keys and list indices)."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.extend(paths(v, (*prefix, i)))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: Any, max_changes: int = 4) -> Any:
    """`base` with a few values replaced by arbitrary JSON, or keys deleted."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_changes))):
        where = draw(st.sampled_from(paths(doc)))
        if not where:
            doc = draw(JSON)
            continue
        parent = doc
        for key in where[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
            del parent[where[-1]]
        else:
            parent[where[-1]] = draw(JSON)
    return doc
