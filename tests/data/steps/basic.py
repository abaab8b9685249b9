"""Well-behaved steps for the worker tests."""

import os
import sys
import time


def echo(params, emit):
    """Return the params with the worker's pid; emit one event per `events`."""
    for i in range(int(params.get("events", 0))):
        emit({"kind": "progress", "i": i})
    return {"params": params, "pid": os.getpid(), "python": sys.version.split()[0]}


def noop(params, emit):
    """The cheapest possible step (for overhead measurements)."""
    return {}


def sleep(params, emit):
    """Sleep `seconds`, emitting a heartbeat first."""
    emit({"kind": "started"})
    time.sleep(float(params["seconds"]))
    return {"slept": params["seconds"]}


def fail(params, emit):
    """Raise an ordinary Python error."""
    raise ValueError("bad value: " + str(params.get("what")))


def cuda_error(params, emit):
    """Raise an error whose message looks like a CUDA library failure (poisons the worker)."""
    raise RuntimeError("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR")


def chatty(params, emit):
    """Print to stdout and stderr as torch and cuDNN do."""
    print("hello on stdout")
    print("hello on stderr", file=sys.stderr)
    return {}


def reserved_event(params, emit):
    """Emit an event that uses a key the protocol reserves."""
    emit({"type": "progress"})
    return {}
