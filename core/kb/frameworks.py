"""Which framework a log comes from, when it is not PyTorch's CUDA build.

TensorFlow, JAX, PaddlePaddle, ONNX Runtime, Lua Torch, Julia's CUDA.jl and others print the
same CUDA, cuDNN and cuBLAS status words as PyTorch, and a ROCm build of PyTorch prints HIP's.
The knowledge base's entries are written for PyTorch on NVIDIA GPUs, so for such a log the
matcher gives no confident entry; it names the framework (with the line that shows it) and what
each status in the log means in general (resources/frameworks.toml, from NVIDIA's references).

The framework is read from the error's own block (the lines before the headline error) first,
then from the whole log; PyTorch frames or messages in that block keep the log PyTorch's (a
PyTorch traceback after TensorFlow's start-up chatter). Markers run on RE2: the log is untrusted.
"""

from __future__ import annotations

import bisect
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec
import re2

from core.models import Model
from core.paths import resources_dir

BLOCK_LINES = 60  # the error's block: this many lines up to the headline error line
MAX_LINES = 20_000  # bound the scan, like the matcher
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
# PyTorch's own frames and messages: they keep a log PyTorch's whatever else it mentions.
_PYTORCH = (
    r"[/\\]site-packages[/\\]torch[/\\]",
    r"[/\\]torch[/\\](nn|autograd|cuda|distributed|utils|_tensor|functional)\b",
    r"\btorch\.(OutOfMemoryError|AcceleratorError|cuda\.OutOfMemoryError)\b",
    r"aten/src/ATen/|c10/cuda/|c10::Error",
    r"torch\.backends\.cudnn|torch\.nn\.|\bPyTorch version:",
    r"pytorch_lightning|lightning/pytorch|torchrun|torch\.multiprocessing",
    r"conda-bld[/\\]pytorch_\d+|[/\\]pytorch[/\\](aten|torch|c10)[/\\]",  # 0.x-1.x builds
)


class StatusMeaning(Model, frozen=True, kw_only=True):
    """What a status in the log means in general (any framework), and where that is written."""

    code: str
    meaning: str
    source: str
    url: str


class Detected(Model, frozen=True, kw_only=True):
    """The framework a log comes from: the line that shows it, and its statuses in general."""

    id: str
    name: str
    line: int  # 1-based
    text: str
    advice: str = ""
    statuses: tuple[StatusMeaning, ...] = ()

    def summary(self) -> str:
        """'This log is from TensorFlow, not PyTorch (line 3: ...).' and the statuses' meaning."""
        out = f"This log is from {self.name}, not PyTorch (line {self.line}: {self.text[:160]})."
        if self.id == "rocm":
            out = f"This log is from {self.name} (line {self.line}: {self.text[:160]})."
        for status in self.statuses:
            out += f" {status.code} means in general: {status.meaning} ({status.source})."
        return out


@dataclass(frozen=True)
class _Framework:
    id: str
    name: str
    markers: tuple[Any, ...]  # compiled RE2 patterns
    advice: str


@dataclass(frozen=True)
class _Catalog:
    frameworks: tuple[_Framework, ...]
    statuses: tuple[StatusMeaning, ...]
    pytorch: tuple[Any, ...]


def _one_pattern(markers: Any) -> Any:
    """A framework's markers as one RE2 alternation (one pass over the log finds the earliest),
    `^` and `$` at line starts and ends."""
    return re2.compile("(?m)" + "|".join(f"(?:{m})" for m in markers), _OPTIONS)


@lru_cache(maxsize=4)
def catalog(path: Path | None = None) -> _Catalog:
    """The frameworks and status meanings of resources/frameworks.toml (read once)."""
    data = tomllib.loads((path or resources_dir() / "frameworks.toml").read_text(encoding="utf-8"))
    frameworks = tuple(
        _Framework(
            id=f["id"],
            name=f["name"],
            markers=(_one_pattern(f["markers"]),),
            advice=f.get("advice", ""),
        )
        for f in data.get("framework", [])
    )
    statuses = tuple(msgspec.convert(s, StatusMeaning) for s in data.get("status", []))
    pytorch = (_one_pattern(_PYTORCH),)
    return _Catalog(frameworks, statuses, pytorch)


class _Text:
    """Lines joined once (each cut at 2,000 characters), so a pattern runs over the text in one
    RE2 search instead of once per line: a 10 MB log is scanned in well under a second."""

    def __init__(self, lines: list[str], start: int) -> None:
        self.start = start
        self.text = "\n".join(line[:2000] for line in lines)
        self._starts: list[int] | None = None

    def line_of(self, pos: int) -> int:
        if self._starts is None:
            starts, at = [0], self.text.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = self.text.find("\n", at + 1)
            self._starts = starts
        return self.start + bisect.bisect_right(self._starts, pos) - 1


def _first_hit(scope: _Text, patterns: tuple[Any, ...]) -> int | None:
    """The first line (index into the whole log) any of `patterns` matches in `scope`."""
    first: int | None = None
    for pattern in patterns:
        found = pattern.search(scope.text)
        if found is not None and (first is None or found.start() < first):
            first = found.start()
    return None if first is None else scope.line_of(first)


def detect(text: str) -> Detected | None:
    """The non-PyTorch framework a whole log comes from (None: PyTorch's, or unknown)."""
    return detect_lines(text.splitlines()[-MAX_LINES:])


def detect_lines(lines: list[str], headline_line: int | None = None) -> Detected | None:
    """The non-PyTorch framework of a log's lines, None when it is PyTorch's (or unknown).

    `headline_line` (0-based) is the line of the error the matcher would answer with; the block
    before it decides first."""
    cat = catalog()
    if not lines:
        return None
    if headline_line is None:
        block_start, end = max(0, len(lines) - BLOCK_LINES), len(lines)
    else:  # tracebacks come before PyTorch's error line and after TensorFlow's and JAX's
        block_start = max(0, headline_line - BLOCK_LINES)
        end = min(len(lines), headline_line + BLOCK_LINES)
    whole_log = _Text(lines, 0)
    scopes = [_Text(lines[block_start:end], block_start), whole_log]
    rocm = next((f for f in cat.frameworks if f.id == "rocm"), None)
    if rocm is not None:  # a ROCm build is PyTorch too: its markers win anywhere in the log
        found = _first_hit(whole_log, rocm.markers)
        if found is not None:
            return _detected(rocm, lines, found, cat)
    for scope in scopes:
        if _first_hit(scope, cat.pytorch) is not None:
            return None  # PyTorch's own frames or messages in this scope: it is a PyTorch log
        hits = [
            (line, fw)
            for fw in cat.frameworks
            if fw.id != "rocm"
            for line in [_first_hit(scope, fw.markers)]
            if line is not None
        ]
        if hits:
            line, fw = _pick(hits)
            if fw.id == "xla":  # XLA is shared: name TensorFlow or JAX if the log shows which
                whole = [
                    (h, f)
                    for f in cat.frameworks
                    if f.id in ("tensorflow", "jax")
                    for h in [_first_hit(whole_log, f.markers)]
                    if h is not None
                ]
                if whole:
                    return _detected(min(whole, key=lambda h: h[0])[1], lines, line, cat)
            return _detected(fw, lines, line, cat)
    return None


def _pick(hits: list[tuple[int, _Framework]]) -> tuple[int, _Framework]:
    """The most specific framework: XLA only when neither TensorFlow nor JAX shows itself."""
    named = [h for h in hits if h[1].id != "xla"]
    return min(named or hits, key=lambda h: h[0])


def _detected(fw: _Framework, lines: list[str], line: int, cat: _Catalog) -> Detected:
    lowered = "\n".join(lines[-BLOCK_LINES * 4 :]).lower()
    statuses = tuple(s for s in cat.statuses if s.code.lower() in lowered)
    return Detected(
        id=fw.id,
        name=fw.name,
        line=line + 1,
        text=lines[line].strip()[:300],
        advice=fw.advice,
        statuses=statuses[:3],
    )
