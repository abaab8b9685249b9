"""`cuda-clinic env [--json] [--deep] [--python PATH]`: driver, CUDA, cuDNN, torch, findings."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the `env` subcommand."""
    parser = subparsers.add_parser(
        "env",
        help="show driver, CUDA, cuDNN and PyTorch, and what is wrong with them",
        description="Detect the NVIDIA driver, GPUs, CUDA, every cuDNN copy and PyTorch in the "
        "target interpreter. Quick mode never imports torch; --deep imports it in a child "
        "process, runs a tiny conv, matmul and LSTM on each GPU and reports which libraries are "
        "really loaded. Exit 1 when a finding has error severity.",
    )
    parser.add_argument("--json", action="store_true", help="print the environment as JSON")
    parser.add_argument("--deep", action="store_true", help="import torch and run tiny GPU ops")
    parser.add_argument("--python", metavar="PATH", help="diagnose this interpreter or venv")
    return parser  # type: ignore[no-any-return]


def run(args: argparse.Namespace) -> int:
    """Detect, print (human or JSON), exit 1 if any finding is an error."""
    import json

    from core.env import detect, render_human

    env = detect(python=args.python, deep=args.deep)
    if args.json:
        print(json.dumps(env.to_dict(), indent=2))
    else:
        print(render_human(env))
    return 1 if env.has_error else 0
