"""Steps that misbehave on purpose: the worker must contain each of them."""

import ctypes
import os
import subprocess
import sys
import time


def segfault(params, emit):
    """Dereference NULL."""
    emit({"kind": "about_to_crash"})
    ctypes.string_at(0)
    return {}


def abort(params, emit):
    """abort(3): SIGABRT."""
    os.abort()


def hang(params, emit):
    """Sleep far past any timeout."""
    emit({"kind": "hanging", "pid": os.getpid()})
    time.sleep(3600)
    return {}


def flood(params, emit):
    """Write `mb` MiB to stdout, then return."""
    block = b"x" * (1 << 20)
    for _ in range(int(params["mb"])):
        os.write(1, block)
    return {"written_mb": params["mb"]}


def bad_utf8(params, emit):
    """Print bytes that are not UTF-8 on both log streams."""
    os.write(1, b"before \xff\xfe\xc3\x28 after\n")
    os.write(2, b"\x80\x81 err\n")
    return {}


def garbage(params, emit):
    """Write something that is not JSON on the result channel."""
    os.write(int(os.environ["CUDA_CLINIC_RESULT_FD"]), b"this is not json\n")
    time.sleep(30)
    return {}


def grandchild(params, emit):
    """Start a long sleeper and return without waiting for it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    return {"grandchild": proc.pid}


def grandchild_then_hang(params, emit):
    """Start a sleeper, report its pid, then hang."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    emit({"kind": "grandchild", "pid": proc.pid})
    time.sleep(3600)
    return {}


def exit_quietly(params, emit):
    """Leave the process without a result."""
    os._exit(0)


def not_a_dict(params, emit):
    """Return the wrong type."""
    return [1, 2, 3]


def system_exit(params, emit):
    """Call sys.exit, which must be reported as a step error."""
    sys.exit(4)
