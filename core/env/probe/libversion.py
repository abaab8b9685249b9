"""Read the real version of cuDNN library files through ctypes (stdlib only).

Run as `python libversion.py PATH...`: prints one JSON object {path: {...}}. The quick probe runs
it in its own child so that loading several cuDNN copies (or a broken one) cannot take the probe
down with it; the deep probe imports `read_cudnn_version` for libraries torch already loaded.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
from typing import Any

# cudnnGetProperty's libraryPropertyType: MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL.
_PROPERTIES = (0, 1, 2)


def decode_cudnn_version(value: int) -> str:
    """cudnnGetVersion's integer as text: cuDNN 9 encodes 9.19.0 as 91900, cuDNN <= 8 as 8907."""
    if value >= 10000:
        major, rest = divmod(value, 10000)
    else:
        major, rest = divmod(value, 1000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def _graph_beside(path: str) -> str | None:
    """cuDNN 9's libcudnn_graph in the same folder as the core `path`, if there is one.

    cuDNN 9's libcudnn.so only dispatches: its cudnnGetVersion loads libcudnn_graph by name,
    so with another cuDNN on LD_LIBRARY_PATH it answers with that copy's version (measured on
    an H200: the wheel's core said 9.14 with the system 9.14 on the path). The graph library
    answers for itself, so it is asked directly, by its full path.
    """
    folder, name = os.path.split(path)
    match = re.match(r"libcudnn\.so\.(\d+)", name)
    if not match or int(match.group(1)) < 9:
        return None
    graph = os.path.join(folder, f"libcudnn_graph.so.{match.group(1)}")
    return graph if os.path.exists(graph) else None


def read_cudnn_version(path: str) -> dict[str, object]:
    """Load `path` (or, for cuDNN 9, its graph library) and ask it for its version; errors
    become an `error` string."""
    out: dict[str, Any] = {"version": None, "version_int": None, "cudart": None, "error": None}
    path = _graph_beside(path) or path
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        out["error"] = f"cannot load: {exc}"
        return out
    try:
        get_version = lib.cudnnGetVersion
    except AttributeError:
        out["error"] = "no cudnnGetVersion symbol (not a cuDNN main library)"
        return out
    get_version.restype = ctypes.c_size_t
    get_version.argtypes = []
    out["version_int"] = int(get_version())
    parts = _properties(lib)
    if parts is not None:
        out["version"] = ".".join(str(p) for p in parts)
    else:
        out["version"] = decode_cudnn_version(out["version_int"])
    try:
        cudart = lib.cudnnGetCudartVersion
        cudart.restype = ctypes.c_size_t
        cudart.argtypes = []
        out["cudart"] = int(cudart())
    except AttributeError:
        pass
    return out


def _properties(lib: ctypes.CDLL) -> tuple[int, int, int] | None:
    """(major, minor, patch) from cudnnGetProperty, or None where it is missing or fails."""
    try:
        get_property = lib.cudnnGetProperty
    except AttributeError:
        return None
    get_property.restype = ctypes.c_int
    get_property.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    values = []
    for prop in _PROPERTIES:
        value = ctypes.c_int(-1)
        if get_property(prop, ctypes.byref(value)) != 0:
            return None
        values.append(value.value)
    return values[0], values[1], values[2]


def main(paths: list[str]) -> int:
    """Print the versions of every path as one JSON object."""
    result = {path: read_cudnn_version(path) for path in paths}
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
