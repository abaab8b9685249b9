"""What a pasted log says about the stack that produced it: torch, CUDA, cuDNN, GPU, driver.

Each fact is read with the line it came from. The report compares them with this machine
(core/report/origin.py); the answer compares them with the stack a KB verdict was measured or
reported on (core/kb/scope.py), to say when the user's stack differs in a way that matters.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

MAX_LINES = 20_000  # facts are read from the log's last lines (the matcher bounds it too)
_FACTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "torch",
        re.compile(
            r"(?:PyTorch version:\s*|\btorch[= ]=?\s*|torch\.__version__\s*[=:]\s*|"
            r"\btorch\s+)(?P<v>\d+\.\d+(?:\.\d+)?(?:[.+][\w.]+)?)"
        ),
    ),
    (
        "cuda",
        re.compile(
            r"(?:CUDA used to build PyTorch:\s*|CUDA Version:\s*|torch\.version\.cuda\s*[=:]\s*|"
            r"Cuda compilation tools, release\s*)(?P<v>\d+\.\d+)"
        ),
    ),
    (
        "gpu",
        re.compile(
            r"(?P<v>(?:NVIDIA |Tesla |Quadro )?(?:GeForce |RTX |TITAN )?"
            r"(?:[A-H]\d{2,3}[A-Za-z0-9-]*(?: \d+GB)?(?: HBM\dE?)?|RTX \d{4}(?: Ti| SUPER)?"
            r"(?: Laptop GPU)?|GTX \d{3,4}(?: Ti)?|RTX A\d{4}|V100[\w-]*|T4|P100[\w-]*|"
            r"A100[\w-]*|H100[\w ]*?|H200[\w-]*|L4|L40S?))"
            r"(?= with CUDA capability| GPU\b|,|\s*\||$)"
        ),
    ),
    ("driver", re.compile(r"Driver Version:\s*(?P<v>\d{3}\.\d+(?:\.\d+)?)")),
    ("cudnn", re.compile(r"cuDNN version:\s*(?P<v>\d+\.\d+(?:\.\d+)?)")),
    (
        "python",
        re.compile(r"[\\/]lib[\\/]python(?P<v>\d\.\d{1,2})[\\/]|Python (?P<w>3\.\d{1,2}\.\d+)"),
    ),
)
# A line only a machine with a working CUDA GPU prints.
_CUDA_USED = re.compile(
    r"CUDA error|CUDA out of memory|CUDNN_STATUS|cuDNN error|CUBLAS_STATUS|device-side assert|"
    r"cudaError\w+|NCCL (?:error|WARN)|\bcuda:\d\b|AcceleratorError"
)
_OS = (
    ("Windows", re.compile(r"\b[A-Z]:\\\\?(?:Users|Program Files|ProgramData)|\\site-packages\\")),
    ("macOS", re.compile(r"/Users/[^/\s]+/|/opt/homebrew/|\.dylib\b")),
    ("Linux", re.compile(r"/home/[^/\s]+/|/usr/lib/|/opt/conda/|/usr/local/lib/python|\.so\b")),
)


# A pattern runs only on the lines that hold one of its words (found with str.find over the
# whole log, C speed): a 20 KB log took 7 ms with every pattern on every line
# (benchmarks/bench_answer.py). Each word list is what its pattern cannot match without;
# the GPU's is the one exception, names as logs print them (nvidia-smi rows, "GPU 0: ...").
_WORDS: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "cuda": ("cuda",),
    "gpu": (
        *("nvidia", "tesla", "quadro", "geforce", "rtx", "gtx", "titan", "capability"),
        *("a100", "h100", "h200", "v100", "p100", "t4", "l4", "l40", " gpu", "|"),
    ),
    "driver": ("driver version",),
    "cudnn": ("cudnn version",),
    "python": ("python",),
    "cuda_used": ("cuda", "cudnn", "cublas", "device-side", "nccl", "acceleratorerror"),
    "os": (
        *("users", "program", "\\site-packages\\", "/opt/homebrew/", ".dylib", "/home/"),
        *("/usr/lib/", "/opt/conda/", "/usr/local/lib/python", ".so"),
    ),
}


def _candidates(low: str, starts: list[int], words: tuple[str, ...]) -> list[int]:
    """The indexes of the lines of `low` (line i starts at starts[i]) holding one of `words`."""
    found: set[int] = set()
    for word in words:
        pos = low.find(word)
        while pos != -1:
            line = bisect_right(starts, pos) - 1
            found.add(line)
            pos = low.find(word, starts[line + 1]) if line + 1 < len(starts) else -1
    return sorted(found)


def log_facts(text: str) -> dict[str, dict[str, Any]]:
    """What the log shows about the machine that produced it: {fact: {value, line}}."""
    every = text.splitlines()
    offset = max(0, len(every) - MAX_LINES)
    lines = [line[:2000] for line in every[offset:]]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    low = "\n".join(lines).lower()
    facts: dict[str, dict[str, object]] = {}
    for name, pattern in _FACTS:
        for i in _candidates(low, starts, _WORDS[name]):
            found = pattern.search(lines[i])
            if found:
                value = next(v for v in found.groupdict().values() if v)
                facts[name] = {"value": value.strip(), "line": offset + i + 1}
                break
    for i in _candidates(low, starts, _WORDS["cuda_used"]):
        if _CUDA_USED.search(lines[i]):
            facts["cuda_used"] = {
                "value": "yes (the log shows a CUDA error)",
                "line": offset + i + 1,
            }
            break
    for i in _candidates(low, starts, _WORDS["os"]):
        system = next((name for name, pattern in _OS if pattern.search(lines[i])), None)
        if system is not None:
            facts["os"] = {"value": system, "line": offset + i + 1}
            break
    return facts
