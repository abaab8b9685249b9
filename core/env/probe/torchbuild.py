"""Which torch an interpreter has, and for which CUDA, without importing torch (fast, safe).

Run by path in a candidate interpreter (`python torchbuild.py`), standard library only; prints
one JSON object: the Python version, and torch's version/CUDA/HIP as its version.py records them
(read the same way as the quick probe). Used to offer the environments found on the machine.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]


def main() -> int:
    """Print {"python", "prefix", "torch": {found, version, cuda, hip, location}}."""
    spec = importlib.util.spec_from_file_location("_clinic_quick", os.path.join(HERE, "quick.py"))
    out: dict[str, object] = {
        "python": ".".join(str(n) for n in sys.version_info[:3]),
        "prefix": sys.prefix,
    }
    try:
        assert spec is not None and spec.loader is not None
        quick = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(quick)
        out["torch"] = quick.torch_info()
    except Exception as exc:  # a broken torch install is a result, not a crash
        out["torch"] = {"found": False, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
