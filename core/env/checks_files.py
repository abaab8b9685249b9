"""Checks on files and the loader: damaged library copies, LD_PRELOAD entries, loader messages.

The quick probe checks the structure of every library a search-path folder would supply
(core/env/probe/elfcheck.py); the probes' own output holds what the dynamic loader printed at
their start. A damaged copy outranks the crash it causes (core/env/rootcause.py).
"""

from __future__ import annotations

import os
import re

from core.env.model import Environment, Finding
from core.env.probe.shapes import Damaged
from core.env.remedy import drop_from_path

_SHOWN = 4
# Where a search-path folder puts its libraries: the loader takes these first.
IN_USE = ("LD_LIBRARY_PATH", "pip-wheel", "torch-bundled", "conda", "LD_PRELOAD")


def damaged_copies(env: Environment) -> list[Damaged]:
    """The damaged library files the quick probe found, LD_LIBRARY_PATH ones first."""
    found = list((env.libraries or {}).get("damaged") or [])
    order = {source: i for i, source in enumerate(IN_USE)}
    return sorted(found, key=lambda d: order.get(str(d.get("source")), len(order)))


def _reinstall(env: Environment, folder: str, source: str) -> tuple[str, str]:
    """(command, action) that replaces the damaged files of `folder`."""
    if source == "LD_LIBRARY_PATH":
        return drop_from_path(env, "LD_LIBRARY_PATH", folder), (
            f"Take {folder} off LD_LIBRARY_PATH (in your shell profile too), or replace its "
            "damaged files with whole copies."
        )
    for pkg in env.packages.get("pip") or []:
        name, location = str(pkg.get("name", "")), str(pkg.get("location", ""))
        if location and folder.startswith(os.path.realpath(location) + os.sep):
            wheel_dir = folder[len(os.path.realpath(location)) + 1 :].split(os.sep)
            owner = _owner(name, wheel_dir)
            if owner:
                return f"pip install --force-reinstall --no-deps {name}=={pkg.get('version')}", (
                    f"Reinstall {name}, the wheel that installed it."
                )
    return "", (
        "Reinstall the package that owns it (`dpkg -S PATH` or `rpm -qf PATH` names it), "
        "or delete the file if nothing needs it."
    )


def _owner(name: str, parts: list[str]) -> bool:
    """Whether pip distribution `name` owns a folder `site/<parts>` (nvidia/cudnn/lib -> cudnn)."""
    if name == "torch":
        return parts[:1] == ["torch"]
    if parts[:1] == ["nvidia"] and len(parts) > 1:
        return name.startswith(f"nvidia-{parts[1].replace('_', '-')}")
    return False


def check_damaged(env: Environment) -> list[Finding]:
    """One finding per folder holding damaged library copies, naming the files and the fix."""
    by_folder: dict[str, list[Damaged]] = {}
    for item in damaged_copies(env):
        by_folder.setdefault(str(item.get("folder")), []).append(item)
    out = []
    for folder, items in by_folder.items():
        source = str(items[0].get("source"))
        command, action = _reinstall(env, folder, source)
        shown = "; ".join(f"{i.get('path')}: {i.get('problem')}" for i in items[:_SHOWN])
        more = f" (and {len(items) - _SHOWN} more)" if len(items) > _SHOWN else ""
        where = {
            "LD_LIBRARY_PATH": "it is on LD_LIBRARY_PATH, so the loader takes its libraries "
            "before torch's own",
            "pip-wheel": "torch loads its CUDA libraries from this wheel folder",
            "torch-bundled": "it is torch's own library folder",
        }.get(source, f"the loader can find it ({source})")
        out.append(
            Finding(
                "lib.damaged-copy",
                "error" if source in IN_USE else "warning",
                f"Damaged library file(s) in {folder}: {shown}{more}. {where[0].upper()}"
                f"{where[1:]}: a process that loads a damaged copy dies (SIGBUS or SIGSEGV) "
                "without an error message.",
                action,
                command=command,
                evidence=str(items[0].get("problem")),
            )
        )
    return out


_PRELOAD = re.compile(
    r"object '(?P<path>[^']*)' from (?P<var>\S+) cannot be preloaded \((?P<why>[^)]*)\)"
)


def loader_lines(env: Environment) -> list[str]:
    """The dynamic loader's messages the probe children printed, each once."""
    lines: list[str] = []
    for status in (env.probe.get("quick"), env.probe.get("deep")):
        lines += [str(x) for x in (status or {}).get("loader_messages") or []]
    return list(dict.fromkeys(lines))


def check_loader(env: Environment) -> list[Finding]:
    """LD_PRELOAD entries the loader refuses, and other loader messages, in its own words."""
    out: list[Finding] = []
    said = loader_lines(env)
    refused = {
        m.group("path"): (m.group("why"), line) for line in said if (m := _PRELOAD.search(line))
    }
    bad = {
        str(e.get("path")): str(e.get("problem"))
        for e in (env.libraries or {}).get("preload") or []
        if e.get("problem")
    }
    for path in dict.fromkeys([*bad, *refused]):
        why, line = refused.get(path, ("", ""))
        problem = bad.get(path) or why
        out.append(
            Finding(
                "env.ld-preload-invalid",
                "warning",
                f"LD_PRELOAD names {path}, which {_as_clause(problem)}: the dynamic loader "
                "refuses it at every process start and runs without it, so whatever it was "
                "preloaded for is not in effect.",
                "Remove it from LD_PRELOAD (and from the shell profile that sets it), or point "
                "LD_PRELOAD at the real library.",
                command=drop_from_path(env, "LD_PRELOAD", path),
                evidence=line,
            )
        )
    others = [line for line in said if not _PRELOAD.search(line)]
    if others:
        out.append(
            Finding(
                "env.loader-message",
                "warning",
                f"The dynamic loader complained when the probes started: {others[0]}",
                "Fix the library it names (missing, wrong version or wrong architecture); "
                "`LD_DEBUG=libs python -c pass` shows where it looked.",
                evidence="\n".join(others[:3]),
            )
        )
    return out


def _as_clause(problem: str) -> str:
    """'it does not exist' -> 'does not exist'; a loader reason is quoted."""
    problem = problem.strip()
    if problem.startswith("it "):
        return problem[3:]
    return f"the loader cannot use ({problem})" if problem else "the loader cannot use"
