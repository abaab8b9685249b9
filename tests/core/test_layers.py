"""The house goes one way: no import cycle, and no import by a string that import-linter misses.

import-linter (pyproject.toml: "core stays headless", "layers go one way") sees `import` and
`from ... import`. An `importlib.import_module("gui.x")` or `__import__` is invisible to it, so
this test reads every core module's syntax tree: a string import must name a module that the
layers allow the caller to import, and a computed one (a registry's table) is allowed only in
the listed dispatchers, whose tables are checked here instead.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]
IMPORTERS = {"import_module", "__import__", "find_spec", "spec_from_file_location"}
# Modules whose import target is computed from a table of names; the tables are checked below.
DISPATCHERS = {"core/cli.py", "core/schemas.py", "core/kb/__init__.py"}
# Child-side scripts run by path in the target interpreter: they load their siblings by path.
CHILD_SIDE = (
    "core/env/probe/",
    "core/wizard/steps/",
    "core/wizard/worker_main.py",
    "core/bench/steps/",
    "core/nccl/worker.py",
)
FORBIDDEN = ("gui", "PySide6", "shiboken6", "pyqtgraph")


def _layers() -> list[list[str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    return [[m.strip() for m in layer.replace(":", "|").split("|")] for layer in layers]


def _level(module: str, layers: list[list[str]]) -> int | None:
    """The layer index of `module` (0 = top), or None if no layer names it."""
    for i, layer in enumerate(layers):
        if any(module == m or module.startswith(m + ".") for m in layer):
            return i
    return None


def _string_imports(path: Path) -> list[tuple[int, str | None]]:
    """(line, the literal module name or None when computed) of every importing call."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in IMPORTERS or not node.args:
            continue
        arg = node.args[0]
        literal = (
            arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
        )
        found.append((node.lineno, literal))
    return found


def _core_files() -> list[Path]:
    return sorted(
        p
        for p in (REPO / "core").rglob("*.py")
        if not str(p.relative_to(REPO)).startswith(CHILD_SIDE)
    )


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_string_import_goes_up_or_into_qt(path: Path) -> None:
    rel = str(path.relative_to(REPO))
    caller = rel.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    layers = _layers()
    for line, target in _string_imports(path):
        where = f"{rel}:{line}"
        if target is None:
            assert rel in DISPATCHERS, f"{where}: a computed import outside the dispatchers"
            continue
        assert not target.startswith(FORBIDDEN), f"{where}: core imports {target} by name"
        mine, theirs = _level(caller, layers), _level(target, layers)
        if mine is not None and theirs is not None:
            assert theirs >= mine, f"{where}: {caller} imports {target}, a layer above it"


def test_dispatch_tables_name_core_modules_only() -> None:
    from core import schemas
    from core.cli import COMMANDS
    from core.kb import LAZY

    targets = [module for module, _help in COMMANDS.values()]
    targets += [target.split(":")[0] for target, _title in schemas.SCHEMAS.values()]
    targets += list(LAZY.values())
    assert targets
    for module in targets:
        assert module.startswith("core.") and not module.startswith(FORBIDDEN), module


def test_the_checker_sees_a_string_import_of_gui(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import importlib\nmod = importlib.import_module('gui.report_pdf')\n")
    assert _string_imports(bad) == [(2, "gui.report_pdf")]
    bad.write_text("name = 'gui.x'\nmod = __import__(name)\n")
    assert _string_imports(bad) == [(2, None)]


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("core", exclude_type_checking_imports=True)  # gui: Qt is blocked
    cycles = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    for root in sorted(graph.modules):  # Tarjan's strongly connected components, iterative
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    imported = sorted(graph.find_modules_directly_imported_by(child))
                    work.append((child, iter(imported)))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    assert cycles == []
