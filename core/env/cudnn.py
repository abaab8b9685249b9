"""cuDNN in the Environment: the copies on disk, the one torch should use, the one it runs.

The loaded copy and its version come from the files the deep probe's process mapped, never from
the folder torch was expected to use; a folder that supplied cuDNN files but lacks some of cuDNN
9's sub-libraries is recorded in `Cudnn.missing_parts`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from core.env.model import Cudnn, CudnnCopy, LoadedLibrary, Torch
from core.env.probe.libmaps import CUDNN9_PARTS

if TYPE_CHECKING:
    from core.env.probe.shapes import CudnnFolder, PipPackage, QuickJSON


def _package_for(directory: str, packages: list[PipPackage]) -> str | None:
    """The nvidia-cudnn-* wheel that installed a copy living in `directory`."""
    for pkg in packages:
        name = str(pkg.get("name", ""))
        location = str(pkg.get("location", ""))
        if (
            name.startswith("nvidia-cudnn")
            and location
            and directory.startswith(os.path.realpath(location) + os.sep)
        ):
            return f"{name} {pkg.get('version')}"
    return None


def build_copies(quick: QuickJSON) -> list[CudnnCopy]:
    """Every cuDNN copy the quick probe found on disk."""
    packages = (quick.get("packages") or {}).get("pip") or []
    copies = []
    for raw in quick.get("cudnn_copies") or []:
        directory = str(raw.get("directory"))
        copies.append(
            CudnnCopy(
                directory=directory,
                major=raw.get("major"),
                library=raw.get("library"),
                version=raw.get("version"),
                version_error=raw.get("version_error"),
                header_version=raw.get("header_version"),
                file_versions=list(raw.get("file_versions") or []),
                files=list(raw.get("files") or []),
                sources=list(raw.get("sources") or []),
                aliases=list(raw.get("aliases") or []),
                package=_package_for(directory, packages),
            )
        )
    return copies


def expected_copy(torch: Torch, copies: list[CudnnCopy]) -> tuple[CudnnCopy | None, str | None]:
    """The copy torch should load, and why: its pinned wheel, its own lib folder, conda, loader."""
    if not torch.installed or not torch.cuda:
        return None, None
    major = int(torch.declared_cudnn.split(".")[0]) if torch.declared_cudnn else None
    usable = [c for c in copies if major is None or c.major == major]
    site = os.path.realpath(os.path.dirname(torch.location)) if torch.location else ""
    rules = (
        ("pip-wheel", "torch's pinned nvidia-cudnn wheel beside it", True),
        ("torch-bundled", "the copy bundled in torch/lib", False),
        ("conda", "the conda environment's lib folder", False),
        ("LD_LIBRARY_PATH", "the first LD_LIBRARY_PATH entry that has one", False),
        ("ldconfig", "the dynamic loader's cache", False),
    )
    for source, reason, same_site in rules:
        for copy in usable:
            if source not in copy.sources:
                continue
            if same_site and site and not copy.directory.startswith(site + os.sep):
                continue
            return copy, reason
    return None, None


def _answering_core(torch: Torch, cores: list[LoadedLibrary]) -> LoadedLibrary | None:
    """The mapped cuDNN core torch talks to: the one whose file version is what torch reports.

    With two cores mapped (LD_PRELOAD of another copy), the symbols resolve to the first one
    loaded; torch's runtime version (read without its compatibility check) says which one it is.
    """
    said = torch.cudnn_runtime or torch.cudnn_version
    if said:
        for core in cores:
            if core.version and core.version.split(".")[:2] == said.split(".")[:2]:
                return core
    return cores[0] if cores else None


def build_cudnn(
    torch: Torch,
    quick: QuickJSON,
    loaded: list[LoadedLibrary],
    folders: dict[str, CudnnFolder] | None = None,
) -> Cudnn:
    """cuDNN: copies on disk, the expected one, and (deep) the loaded one with its real version.

    The loaded version is read from the mapped file (or what torch's cuDNN reports), never taken
    from the folder we expected torch to use.
    """
    copies = build_copies(quick)
    cudnn = Cudnn(copies=copies, declared=torch.declared_cudnn)
    expected, reason = expected_copy(torch, copies)
    if expected is not None:
        expected.expected = True
        cudnn.expected_from, cudnn.expected_reason = expected.directory, reason
        cudnn.version, cudnn.basis = expected.version, "expected"
        cudnn.version_source = "expected"
    for folder, info in (folders or {}).items():
        missing = list((info or {}).get("missing") or [])
        if missing:
            cudnn.missing_parts[os.path.realpath(folder)] = missing
    attribute_loaded(cudnn, torch, loaded)
    return cudnn


def scan_missing_parts(cudnn: Cudnn, files: list[LoadedLibrary]) -> None:
    """Add the folders that supplied a mapped cuDNN file but, by the disk scan, lack parts.

    The deep probe lists such folders itself (probe version 3 listed only the core's); this
    reads the quick probe's file lists, so `env --from` finds them in older recordings too.
    """
    folders = {os.path.realpath(lib.directory) for lib in files}
    for copy in cudnn.copies:
        real = os.path.realpath(copy.directory)
        if real not in folders or (copy.major or 0) < 9 or not copy.files:
            continue
        missing = [p for p in CUDNN9_PARTS if not any(f.startswith(p + ".so") for f in copy.files)]
        if missing and real not in cudnn.missing_parts:
            cudnn.missing_parts[real] = missing


def attribute_loaded(cudnn: Cudnn, torch: Torch, loaded: list[LoadedLibrary]) -> None:
    """Mark the copy torch really runs and its version, from the files the process mapped.

    Also used by `env --from`, so a recording made by an older clinic gets today's attribution.
    """
    files = [lib for lib in loaded if lib.family and lib.family.startswith("cudnn")]
    if not files:
        return
    copies = cudnn.copies
    cudnn.loaded_files = [lib.path for lib in files]
    scan_missing_parts(cudnn, files)
    cores = [lib for lib in files if lib.family == "cudnn"]
    main = _answering_core(torch, cores)
    if main is None:
        return
    graph = next((lib for lib in files if lib.family == "cudnn_graph"), None)
    if graph is not None and os.path.realpath(graph.directory) != os.path.realpath(main.directory):
        # cuDNN 9's libcudnn.so only dispatches: its version function answers with the graph
        # library's, and the kernels run from the sub-libraries. Measured with LD_LIBRARY_PATH
        # on the system cuDNN: the wheel's core, 9.14 sub-libraries, torch reports 9.14.
        main = graph
    for copy in copies:
        copy.loaded = False
    real_dir = os.path.realpath(main.directory)
    cudnn.loaded_from = real_dir
    cudnn.basis = "loaded"
    if main.version:
        cudnn.version, cudnn.version_source = main.version, main.version_source
    elif torch.cudnn_runtime or torch.cudnn_version:
        cudnn.version, cudnn.version_source = torch.cudnn_runtime or torch.cudnn_version, "torch"
    else:
        cudnn.version, cudnn.version_source = None, None
    match = next((c for c in copies if os.path.realpath(c.directory) == real_dir), None)
    if match is None:  # found through an RPATH or a folder the disk scan does not cover
        match = CudnnCopy(directory=real_dir, library=main.path, sources=["loaded"])
        copies.append(match)
    match.loaded = True
    if main.version:
        match.version = main.version  # the file that was mapped, not a guess about the folder
    elif match.version is None:
        match.version = cudnn.version
    if cudnn.version is None:
        cudnn.version, cudnn.version_source = match.version, "disk-scan"
