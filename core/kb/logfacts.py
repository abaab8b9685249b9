"""What a pasted log says about the stack that produced it: torch, CUDA, cuDNN, GPU, driver.

Each fact is read with the line it came from. The report compares them with this machine
(core/report/origin.py); the answer compares them with the stack a KB verdict was measured or
reported on (core/kb/scope.py), to say when the user's stack differs in a way that matters.
"""

from __future__ import annotations

import re
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


def log_facts(text: str) -> dict[str, dict[str, Any]]:
    """What the log shows about the machine that produced it: {fact: {value, line}}."""
    lines = text.splitlines()[-MAX_LINES:]
    offset = max(0, len(text.splitlines()) - MAX_LINES)
    facts: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, start=offset + 1):
        part = line[:2000]
        for name, pattern in _FACTS:
            if name in facts:
                continue
            found = pattern.search(part)
            if found:
                value = next(v for v in found.groupdict().values() if v)
                facts[name] = {"value": value.strip(), "line": number}
        if "cuda_used" not in facts and _CUDA_USED.search(part):
            facts["cuda_used"] = {"value": "yes (the log shows a CUDA error)", "line": number}
        if "os" not in facts:
            for name, pattern in _OS:
                if pattern.search(part):
                    facts["os"] = {"value": name, "line": number}
                    break
    return facts
