"""The re-run's environment: a fix's variables plus a start-up shim for its torch switches.

The shim is a temporary folder holding a `sitecustomize.py`, put first on the child's
PYTHONPATH; Python imports it at start-up, it applies the switches after `import torch`, then
hands over to the `sitecustomize` it shadows (if any). Nothing is written into the project.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.kb.fixes import Fix

_TEMPLATE = '''"""cuda-clinic try: start-up shim for fix {fix_id!r} (removed after the run)."""
import importlib as _clinic_importlib
import os as _clinic_os
import sys as _clinic_sys

_clinic_dir = _clinic_os.path.dirname(_clinic_os.path.abspath(__file__))
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
{code}
    _clinic_sys.stderr.write("[cuda-clinic try] applied: {switches}\\n")
# Hand over to the sitecustomize this file shadows, if there is one.
_clinic_self = _clinic_sys.modules.pop("sitecustomize", None)
_clinic_path = list(_clinic_sys.path)
_clinic_sys.path[:] = [p for p in _clinic_path if _clinic_os.path.abspath(p or ".") != _clinic_dir]
try:
    _clinic_importlib.import_module("sitecustomize")
except ImportError as _clinic_exc:
    if _clinic_exc.name != "sitecustomize":
        raise
finally:
    _clinic_sys.path[:] = _clinic_path
    if _clinic_self is not None:
        _clinic_sys.modules["sitecustomize"] = _clinic_self
'''


def shim_source(fix: Fix) -> str:
    """The `sitecustomize.py` text for `fix` ('' when the fix has no switches)."""
    if not fix.switches:
        return ""
    code = "\n".join("    " + line for line in fix.shim_code().splitlines())
    return _TEMPLATE.format(fix_id=fix.id, code=code, switches=", ".join(fix.switches))


@dataclass
class Shim:
    """A re-run's environment changes, and the folder to remove afterwards."""

    env_changes: dict[str, str]  # what the re-run sets on top of the original environment
    source: str  # the shim's text ('' when none)
    folder: Path | None = None

    def cleanup(self) -> None:
        """Remove the shim's temporary folder."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def planned_env(fix: Fix, base_env: dict[str, str]) -> dict[str, str]:
    """The variables a re-run will set, as shown before it starts (the shim's temporary folder,
    made only when the re-run starts, is named by its role)."""
    changes = dict(fix.env)
    if fix.switches:
        existing = base_env.get("PYTHONPATH", "")
        changes["PYTHONPATH"] = "<shim folder>" + (os.pathsep + existing if existing else "")
    return changes


def prepare(fix: Fix, base_env: dict[str, str]) -> Shim:
    """Write the shim (if the fix has switches) and compute the variables the re-run sets."""
    changes = dict(fix.env)
    source = shim_source(fix)
    folder = None
    if source:
        folder = Path(tempfile.mkdtemp(prefix="cuda-clinic-shim-"))
        (folder / "sitecustomize.py").write_text(source, encoding="utf-8")
        existing = base_env.get("PYTHONPATH", "")
        changes["PYTHONPATH"] = str(folder) + (os.pathsep + existing if existing else "")
    return Shim(env_changes=changes, source=source, folder=folder)
