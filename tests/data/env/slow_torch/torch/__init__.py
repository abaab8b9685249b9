"""A stand-in torch whose import hangs, for cancel tests: put its folder on PYTHONPATH.

It starts a grandchild (to prove the whole process group ends), writes "PID GRANDCHILD_PID" to
the file named by CLINIC_SLOW_TORCH_PIDS (atomically), then sleeps as a stuck import would.
"""

import os
import subprocess
import sys
import time

_pids = os.environ.get("CLINIC_SLOW_TORCH_PIDS")
if _pids:
    _child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open(_pids + ".tmp", "w", encoding="utf-8") as _out:
        _out.write(f"{os.getpid()} {_child.pid}")
    os.replace(_pids + ".tmp", _pids)
    time.sleep(300)
