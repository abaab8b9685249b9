"""resources/compat/torch_builds.toml: torch pip builds, their cuDNN and arch lists, CUDA drivers.

`load()` reads and validates the file once; a malformed file raises CompatDataError naming the
row and field, so a bad edit fails the test suite rather than printing a wrong command.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.env.compat import version_tuple

_VERSION = re.compile(r"^\d+\.\d+(\.\d+){0,2}$")
_BUILD = re.compile(r"^cu(\d{2,3})$")
_ARCH = re.compile(r"^(sm|compute)_\d{2,3}[a-z]?$")
_WHEEL = re.compile(r"^nvidia-cudnn-cu1[1-3]$")


class CompatDataError(ValueError):
    """The compat data file is malformed: the message names the row and field."""


@dataclass(frozen=True)
class CudaRelease:
    """A CUDA release and the minimum Linux drivers it needs."""

    version: str
    min_driver: str
    minor_compat_driver: str
    source: str


@dataclass(frozen=True)
class TorchBuild:
    """One pip build of a torch release (Linux x86_64)."""

    version: str
    build: str  # cu118, cu126, cu130, ...
    cudnn_wheel: str
    cudnn: str  # "" where no reviewed source gave it
    arch: tuple[str, ...]
    source: str

    @property
    def cuda(self) -> str:
        """cu126 -> 12.6, cu130 -> 13.0, cu118 -> 11.8."""
        digits = self.build[2:]
        return f"{digits[:-1]}.{digits[-1]}"


@dataclass(frozen=True)
class CompatData:
    """The whole file, validated."""

    index_url: str
    cuda: tuple[CudaRelease, ...]
    torch: tuple[TorchBuild, ...]
    sources: dict[str, str]

    def cuda_release(self, version: str) -> CudaRelease | None:
        """The row for CUDA `version` (major.minor)."""
        want = version_tuple(version)[:2]
        return next((c for c in self.cuda if version_tuple(c.version)[:2] == want), None)

    def minor_compat_driver(self, major: int) -> str | None:
        """The lowest driver that runs CUDA `major`.x through minor-version compatibility."""
        rows = [c for c in self.cuda if version_tuple(c.version)[0] == major]
        return min((c.minor_compat_driver for c in rows), key=version_tuple, default=None)

    def index(self, build: str) -> str:
        """The pip index URL of a build."""
        return self.index_url.format(build=build)

    def releases(self) -> list[str]:
        """torch releases in the file, newest first."""
        return sorted({b.version for b in self.torch}, key=version_tuple, reverse=True)


def _text(row: dict[str, object], key: str, where: str, pattern: re.Pattern[str] | None) -> str:
    value = row.get(key)
    if not isinstance(value, str):
        raise CompatDataError(f"{where}: field {key!r} is missing or not text")
    if pattern is not None and not pattern.match(value):
        raise CompatDataError(f"{where}: field {key!r} has the malformed value {value!r}")
    return value


def _source(row: dict[str, object], where: str, sources: dict[str, str]) -> str:
    text = _text(row, "source", where, None)
    names = [part.split(":")[-1].strip() for part in text.split(";")]
    unknown = [n for n in names if n not in sources]
    if not names or unknown:
        raise CompatDataError(f"{where}: source {text!r} names unknown sources {unknown}")
    return text


def parse(data: dict[str, Any]) -> CompatData:
    """Validate the TOML's data (the test suite calls this on the shipped file)."""
    if data.get("schema") != 1:
        raise CompatDataError(f"field 'schema': expected 1, got {data.get('schema')!r}")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise CompatDataError("table 'sources' is missing")
    index_url = data.get("index_url")
    if not isinstance(index_url, str) or "{build}" not in index_url:
        raise CompatDataError("field 'index_url' must contain {build}")
    cuda = []
    for i, row in enumerate(data.get("cuda") or []):
        where = f"cuda[{i}]"
        cuda.append(
            CudaRelease(
                _text(row, "version", where, _VERSION),
                _text(row, "min_driver", where, _VERSION),
                _text(row, "minor_compat_driver", where, _VERSION),
                _source(row, where, sources),
            )
        )
        if version_tuple(cuda[-1].minor_compat_driver) > version_tuple(cuda[-1].min_driver):
            raise CompatDataError(f"{where}: minor_compat_driver is above min_driver")
    builds = []
    seen = set()
    for i, row in enumerate(data.get("torch") or []):
        where = f"torch[{i}]"
        version = _text(row, "version", where, _VERSION)
        build = _text(row, "build", where, _BUILD)
        cudnn = row.get("cudnn", "")
        if not isinstance(cudnn, str) or (cudnn and not _VERSION.match(cudnn)):
            raise CompatDataError(f"{where}: field 'cudnn' has the malformed value {cudnn!r}")
        arch = row.get("arch")
        if (
            not isinstance(arch, list)
            or not arch
            or not all(isinstance(a, str) and _ARCH.match(a) for a in arch)
        ):
            raise CompatDataError(f"{where}: field 'arch' must be a list like ['sm_90']")
        if (version, build) in seen:
            raise CompatDataError(f"{where}: torch {version} {build} is listed twice")
        seen.add((version, build))
        item = TorchBuild(
            version,
            build,
            _text(row, "cudnn_wheel", where, _WHEEL),
            cudnn,
            tuple(arch),
            _source(row, where, sources),
        )
        if not any(version_tuple(c.version)[:2] == version_tuple(item.cuda)[:2] for c in cuda):
            raise CompatDataError(f"{where}: build {build} has no [[cuda]] row for {item.cuda}")
        builds.append(item)
    if not builds or not cuda:
        raise CompatDataError("the file lists no [[torch]] or no [[cuda]] rows")
    return CompatData(index_url, tuple(cuda), tuple(builds), dict(sources))


def default_path() -> Path:
    """The shipped file."""
    from core.paths import resources_dir

    return resources_dir() / "compat" / "torch_builds.toml"


@functools.lru_cache(maxsize=4)
def load(path: str | None = None) -> CompatData:
    """Read and validate the file (cached)."""
    source = Path(path) if path else default_path()
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CompatDataError(f"{source}: {exc}") from None
    try:
        return parse(data)
    except CompatDataError as exc:
        raise CompatDataError(f"{source}: {exc}") from None
