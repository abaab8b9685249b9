"""`cuda-clinic try`: run the user's failing command, match it to the KB, verify no-code fixes.

The pieces live here (runner: start, run_command, diagnose, run_fixes, recommend; judge;
locate; shim); the workflow both surfaces call is `core.ops.tryrun`.
"""

from core.tryrun.model import FixRun, TryResult
from core.tryrun.runner import TryOptions

__all__ = ["FixRun", "TryOptions", "TryResult"]
