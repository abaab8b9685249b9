"""One module per wizard scenario, found automatically (recipe: docs/wizards.md).

A scenario module is any module of this package whose name does not start with `_`. It declares

    ORDER = 120              # its place in the menu (lower first; ties by module name)
    SCENARIO = Scenario(...) # one scenario; its steps name a file under core/wizard/steps/

Nothing else registers it: adding `core/wizard/scenarios/<name>.py` adds the wizard. Modules whose
name starts with `_` hold shared pieces. `discover()` imports them all and fails loudly (a
ScenarioError naming the module) when a module has no SCENARIO, or two modules use one id.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from core.errors import ClinicError
from core.wizard.model import Scenario

DEFAULT_ORDER = 1000


class ScenarioError(ClinicError):
    """A scenario module is malformed (no SCENARIO, a duplicate id)."""


def modules() -> list[ModuleType]:
    """Every scenario module of this package, in menu order (ORDER, then name)."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        found.append(importlib.import_module(f"{__name__}.{info.name}"))
    return sorted(found, key=lambda m: (getattr(m, "ORDER", DEFAULT_ORDER), m.__name__))


def discover() -> tuple[Scenario, ...]:
    """The scenarios the modules declare, in menu order; ScenarioError for a malformed module."""
    result: list[Scenario] = []
    seen: dict[str, str] = {}
    for module in modules():
        scenario = getattr(module, "SCENARIO", None)
        if not isinstance(scenario, Scenario):
            raise ScenarioError(f"{module.__name__} declares no SCENARIO = Scenario(...)")
        if scenario.id in seen:
            raise ScenarioError(
                f"{module.__name__} and {seen[scenario.id]} both declare {scenario.id!r}"
            )
        seen[scenario.id] = module.__name__
        result.append(scenario)
    return tuple(result)
