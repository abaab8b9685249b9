"""`cuda-clinic try`: run the user's failing command, match it to the KB, verify no-code fixes."""

from core.tryrun.model import FixRun, TryResult
from core.tryrun.runner import TryOptions, run_try

__all__ = ["FixRun", "TryOptions", "TryResult", "run_try"]
