"""Packaging hook: ship the top-level resources/ folder inside the wheel as core/resources.

Everything else is declared in pyproject.toml. The source tree keeps resources/ at the top
level (editable installs and `make run` read it there); a built wheel carries a copy inside
the `core` package, where core/paths.py looks first.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Build outputs and editor droppings that must not ship (the KB is compiled at first use).
SKIP = shutil.ignore_patterns("kb.sqlite*", ".kb-*", "__pycache__", "*.pyc", ".*")


class BuildWithResources(build_py):
    """build_py, then copy resources/ into <build>/core/resources."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads resources/ in place
            return
        dest = Path(self.build_lib) / "core" / "resources"
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(ROOT / "resources", dest, ignore=SKIP)


setup(cmdclass={"build_py": BuildWithResources})
