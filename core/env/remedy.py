"""The exact fix command for this machine: which torch builds run here, which wheel to reinstall.

From the driver (its version and maximum CUDA) and each GPU's compute capability, and the
reviewed data in resources/compat/torch_builds.toml, name the torch CUDA builds that run here
and the `pip install` line; for a foreign or broken cuDNN, the variable to change or the
`nvidia-cudnn-*` wheel to force-reinstall (the version the installed torch declares).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from core.env.compat import arch_support, version_tuple
from core.env.compatdata import CompatData, CompatDataError, TorchBuild, load
from core.env.model import Environment


@dataclass(frozen=True)
class Candidate:
    """A torch build that runs on this machine, and how."""

    build: TorchBuild
    how: str  # "native" (driver supports its CUDA) | "minor-compat" (same major, older driver)
    command: str


def _data() -> CompatData | None:
    try:
        return load()
    except CompatDataError:
        return None


def _capabilities(env: Environment) -> list[str]:
    caps = [g.compute_capability for g in env.gpus if g.compute_capability]
    caps += [d.compute_capability for d in env.torch.devices if d.compute_capability]
    return list(dict.fromkeys(caps))


def driver_runs(env: Environment, data: CompatData, cuda: str) -> str | None:
    """ "native", "minor-compat" or None: whether this driver runs a wheel built for `cuda`."""
    drv = version_tuple(env.driver.version)
    release = data.cuda_release(cuda)
    if drv and release is not None:
        if drv >= version_tuple(release.min_driver):
            return "native"
        minor = data.minor_compat_driver(version_tuple(cuda)[0])
        if minor is not None and drv >= version_tuple(minor):
            return "minor-compat"
        return None
    have = version_tuple(env.driver.cuda_max)
    if len(have) >= 2:
        return "native" if version_tuple(cuda)[:2] <= have[:2] else None
    return None


def install_command(build: TorchBuild, data: CompatData) -> str:
    """The pip line for one build."""
    return f"pip install torch=={build.version} --index-url {data.index(build.build)}"


def runnable_builds(env: Environment, data: CompatData | None = None) -> list[Candidate]:
    """Every build in the data that this driver runs and whose arch list covers every GPU.

    Newest torch release first, then the newest CUDA build; native before minor-compat.
    """
    data = data or _data()
    if data is None:
        return []
    caps = _capabilities(env)
    out = []
    for build in data.torch:
        how = driver_runs(env, data, build.cuda)
        if how is None:
            continue
        if any(arch_support(cc, list(build.arch)) == "none" for cc in caps):
            continue
        out.append(Candidate(build, how, install_command(build, data)))
    out.sort(
        key=lambda c: (
            version_tuple(c.build.version),
            c.how == "native",
            version_tuple(c.build.cuda),
        ),
        reverse=True,
    )
    return out


def best_install(env: Environment) -> tuple[str, str]:
    """(command, sentence) for the torch build to install here, or ("", why none is known)."""
    candidates = runnable_builds(env)
    if not candidates:
        if not env.driver.version and not env.driver.cuda_max:
            return "", "the driver's version is unknown, so no build can be chosen"
        return "", "no torch build in the reviewed table runs on this driver and GPU"
    best = candidates[0]
    others = [c.build.build for c in candidates if c.build.version == best.build.version]
    note = " (through CUDA minor-version compatibility)" if best.how == "minor-compat" else ""
    return best.command, (
        f"torch {best.build.version} builds that run here: {', '.join(others)}; "
        f"{best.build.build} is the newest{note}"
    )


def path_route(env: Environment, folder: str | None) -> str | None:
    """ "LD_PRELOAD" or "LD_LIBRARY_PATH" when that variable points into `folder`, else None."""
    if not folder:
        return None
    real = os.path.realpath(folder)
    preload = env.env_vars.get("LD_PRELOAD") or ""
    if any(os.path.realpath(os.path.dirname(p)) == real for p in preload.replace(":", " ").split()):
        return "LD_PRELOAD"
    lib_path = env.env_vars.get("LD_LIBRARY_PATH") or ""
    if any(p and os.path.realpath(p) == real for p in lib_path.split(":")):
        return "LD_LIBRARY_PATH"
    return None


def _without(value: str, folder: str, sep: str, dirname: bool) -> str:
    real = os.path.realpath(folder)
    keep = []
    for part in value.split(sep) if sep else value.replace(":", " ").split():
        where = os.path.dirname(part) if dirname else part
        if part and os.path.realpath(where) != real:
            keep.append(part)
    return (sep or " ").join(keep)


def drop_from_path(env: Environment, variable: str, folder: str) -> str:
    """`export VAR=...` without `folder` (or `unset VAR` when nothing is left), for
    LD_LIBRARY_PATH (folders) and LD_PRELOAD (files, matched by their folder or path)."""
    value = env.env_vars.get(variable, "")
    if variable == "LD_PRELOAD":
        parts = value.replace(":", " ").split()
        rest = " ".join(p for p in parts if os.path.realpath(p) != os.path.realpath(folder))
    else:
        rest = _without(value, folder, ":", dirname=False)
    return _export(variable, rest)


def _export(variable: str, value: str) -> str:
    """`export VAR=value`, or `unset VAR` when nothing is left of it."""
    return f"export {variable}={shlex.quote(value)}" if value else f"unset {variable}"


def _cudnn_wheel(env: Environment) -> tuple[str, str] | None:
    """(wheel name, version) of the cuDNN wheel the installed torch declares, or from the table."""
    for name, version in env.torch.declared.items():
        if name.startswith("nvidia-cudnn"):
            return name, version.lstrip("=")
    data = _data()
    if data is None or not env.torch.version:
        return None
    plain = env.torch.version.split("+")[0]
    tag = env.torch.version.split("+")[1] if "+" in env.torch.version else ""
    for build in data.torch:
        if build.version == plain and build.build == tag and build.cudnn:
            return build.cudnn_wheel, build.cudnn
    return None


# The variable that routes a foreign cuDNN in: (its separator for _without, whether its items
# are files whose folder counts, what to do about it).
_ROUTE_FIXES = {
    "LD_PRELOAD": (
        "",
        True,
        "LD_PRELOAD forces the cuDNN in {folder} into every process; drop it so torch "
        "loads the cuDNN it pins.",
    ),
    "LD_LIBRARY_PATH": (
        ":",
        False,
        "LD_LIBRARY_PATH puts {folder} ahead of torch's own cuDNN; remove that folder "
        "from it (in your shell profile too).",
    ),
}


def cudnn_remedy(env: Environment, folder: str | None) -> tuple[str, str]:
    """(command, action) for a cuDNN torch cannot use, loaded from `folder`."""
    route = path_route(env, folder)
    if route in _ROUTE_FIXES:
        separator, dirname, action = _ROUTE_FIXES[route]
        rest = _without(env.env_vars.get(route, ""), folder or "", separator, dirname=dirname)
        return _export(route, rest), action.format(folder=folder)
    wheel = _cudnn_wheel(env)
    if wheel is not None:
        name, version = wheel
        return f"pip install --force-reinstall --no-deps {name}=={version}", (
            f"Reinstall the cuDNN wheel torch pins ({name} {version}) in this environment."
        )
    return "", (
        "Make torch find the cuDNN it was built with: remove other cuDNN folders from its "
        "search path, or reinstall torch with its nvidia-cudnn wheel."
    )


def cublas_remedy(env: Environment) -> str:
    """Force-reinstall the installed nvidia-cublas wheel at its own version ("" if none)."""
    for pkg in env.packages.get("pip") or []:
        name = str(pkg.get("name", ""))
        if name.startswith("nvidia-cublas"):
            return f"pip install --force-reinstall --no-deps {name}=={pkg.get('version')}"
    return ""
