"""`cuda-clinic env [--json] [--deep] [--python PATH] [--from FILE]`: driver, CUDA, cuDNN, torch."""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "Detect the NVIDIA driver, GPUs, CUDA, every cuDNN copy and PyTorch in the "
    "target interpreter. Quick mode never imports torch; --deep imports it in a child "
    "process, runs a tiny conv first, then a matmul and LSTM on each GPU, keeps torch's "
    "exceptions verbatim and reports which library files are really loaded, with the "
    "version read from each. Findings come root cause first and name the exact fix "
    "command for this machine. --from re-derives the findings from a saved env --json. "
    "Exit 1 when a finding has error severity, 2 on a bad --from file."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `env` options."""
    parser.add_argument("--json", action="store_true", help="print the environment as JSON")
    parser.add_argument("--deep", action="store_true", help="import torch and run tiny GPU ops")
    parser.add_argument("--python", metavar="PATH", help="diagnose this interpreter or venv")
    parser.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="re-derive the findings from a saved `env --json` (or report, or recording) "
        "instead of probing this machine",
    )


def run(args: argparse.Namespace) -> int:
    """Detect, print (human or JSON), exit 1 if any finding is an error."""
    import json

    from core import timing

    timing.mark("env command")
    from core.env import render_human
    from core.ops.env import check_env, open_saved_env

    timing.mark("env imports")

    if getattr(args, "from_file", None):
        from core.errors import UsageError

        if args.deep or args.python:
            raise UsageError(
                "--from reads a saved environment; it cannot be combined with --deep or --python"
            )
        _saved, env = open_saved_env(args.from_file)
    else:
        env = check_env(args.python, deep=args.deep)
    if args.json:
        print(json.dumps(env.to_dict(), indent=2))
    else:
        print(render_human(env))
    timing.mark("printed")
    return 1 if env.has_error else 0
