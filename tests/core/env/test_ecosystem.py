"""GPU-ecosystem packages, Triton's toolchain and containers, from real files built here.

Each package is a real distribution folder (dist-info with METADATA and RECORD) holding a real
shared library compiled with the C compiler, whose `.nv_fatbin` section is laid out as nvcc
writes it (a fatbin container with SASS and PTX entries for the SM versions the test chooses)
and which links a real stand-in libcudart.so.N. The quick probe reads them in a child process.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.env import assemble
from core.env.checks_ecosystem import runs_on
from core.env.probe import ecosystem
from core.env.runner import run_probe
from core.env.settings import arch_list_problem  # noqa: F401  (same arch vocabulary)

ENTRY = """".quad 0x00000040010100{kind:02x}, 0x0000000000000010\\n"
".quad 0x0000000000000000, 0x{sm:08x}00010007\\n"
".quad 0, 0, 0, 0\\n"
".quad 0x33010102464c457f, 0\\n"
"""


def _fatbin_source(sass: list[int], ptx: list[int]) -> str:
    entries = [(2, sm) for sm in sass] + [(1, sm) for sm in ptx]
    body = "".join(ENTRY.format(kind=kind, sm=sm) for kind, sm in entries)
    size = 80 * len(entries)
    return (
        "__asm__(\n"
        '".section .nv_fatbin, \\"a\\"\\n"\n'
        '".align 8\\n"\n'
        f'".quad 0x00100001ba55ed50, 0x{size:016x}\\n"\n'
        f"{body}"
        '".text\\n");\n'
        "int cudaKernelEntry(void);\n"
        "int answer(void) { return cudaKernelEntry(); }\n"
    )


@pytest.fixture
def compiler() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("needs a C compiler to build shared libraries")
    return cc


def _cudart(cc: str, folder: Path, major: int) -> Path:
    source = folder / "cudart.c"
    source.write_text("int cudaKernelEntry(void) { return 0; }\n")
    lib = folder / f"libcudart.so.{major}"
    subprocess.run(
        [cc, "-shared", "-fPIC", f"-Wl,-soname,libcudart.so.{major}", "-o", str(lib), str(source)],
        check=True,
    )
    return lib


def make_package(
    cc: str,
    site: Path,
    name: str,
    version: str,
    *,
    sass: list[int],
    ptx: list[int],
    cudart: int | None = 12,
    requires: str = "",
) -> None:
    """A distribution `name` with one compiled extension library built as described."""
    module = name.replace("-", "_")
    package = site / module
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    so = package / f"{module}_cuda.cpython-312-x86_64-linux-gnu.so"
    source = site / f"{module}.c"
    if sass or ptx:
        source.write_text(_fatbin_source(sass, ptx))
    else:
        source.write_text("int cudaKernelEntry(void);\nint answer(void) { return 1; }\n")
    args = [cc, "-shared", "-fPIC", "-o", str(so), str(source)]
    if cudart is not None:
        libdir = site / "_cudart"
        libdir.mkdir(exist_ok=True)
        _cudart(cc, libdir, cudart)
        args += [f"-L{libdir}", f"-l:libcudart.so.{cudart}"]
    else:
        args += ["-Wl,--unresolved-symbols=ignore-all"]
    subprocess.run(args, check=True)
    dist = site / f"{module}-{version}.dist-info"
    dist.mkdir()
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    if requires:
        meta += f"Requires-Dist: {requires}\n"
    (dist / "METADATA").write_text(meta + "\n")
    size = so.stat().st_size
    (dist / "RECORD").write_text(
        f"{module}/__init__.py,,0\n{module}/{so.name},sha256=x,{size}\n{dist.name}/RECORD,,\n"
    )


def test_fatbin_architectures_are_read_from_a_real_library(compiler: str, tmp_path: Path) -> None:
    make_package(compiler, tmp_path, "flash-attn", "2.7.4", sass=[80, 90], ptx=[90])
    lib = next((tmp_path / "flash_attn").glob("*.so"))
    found = ecosystem.library(str(lib))
    assert found["sass"] == [80, 90] and found["ptx"] == [90] and found["entries"] == 3
    assert found["needs"] == ["libcudart.so.12"]


@pytest.mark.parametrize(
    ("sass", "ptx", "sm", "verdict"),
    [
        ([80], [], 86, "native"),  # sm_80 cubins run on sm_86 (same major, higher minor)
        ([86], [], 80, "none"),
        ([80], [], 90, "none"),  # no cubin of major 9, no PTX
        ([80], [80], 90, "ptx"),  # the driver JIT-compiles compute_80
        ([90], [], 120, "none"),
        ([], [100], 90, "none"),  # PTX for a newer GPU never runs on an older one
    ],
)
def test_which_code_runs_on_which_gpu(
    sass: list[int], ptx: list[int], sm: int, verdict: str
) -> None:
    assert runs_on(sass, ptx, sm) == verdict


def _env_with(
    site: Path, capability: str, recorded: Any, monkeypatch: pytest.MonkeyPatch, deep: bool = False
) -> Any:
    """The real quick probe over `site` (PYTHONPATH), assembled with the recorded H200's NVML
    and CUDA torch, its GPUs given `capability` (this machine has no GPU)."""
    monkeypatch.setenv("PYTHONPATH", str(site))
    probe = run_probe(sys.executable, "quick", 60)
    assert probe.data is not None, probe.error
    quick = probe.data
    base = recorded("gpu_deep")
    quick["nvml"] = base["quick"]["nvml"]
    quick["torch"] = base["quick"]["torch"]
    quick["packages"]["pip"].append({"name": "triton", "version": "3.5.0", "location": str(site)})
    for gpu in quick["nvml"]["gpus"]:
        gpu["compute_capability"] = [int(x) for x in capability.split(".")]
    return assemble(quick, base["deep"] if deep else None, base["status"], deep=deep)


def _ids(env: Any) -> dict[str, Any]:
    return {f.id: f for f in env.findings}


def test_each_package_is_checked_against_this_gpu_and_this_torch(
    compiler: str, tmp_path: Path, recorded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    make_package(compiler, site, "my-kernels", "0.1.0", sass=[70, 75], ptx=[])
    make_package(compiler, site, "vllm", "0.9.0", sass=[90], ptx=[90], cudart=12)
    make_package(
        compiler, site, "xformers", "0.0.29", sass=[], ptx=[], cudart=None,
        requires="torch==2.5.1",
    )  # fmt: skip
    env = _env_with(site, "9.0", recorded, monkeypatch)
    found = _ids(env)
    mine = found["ext.no-kernel-for-gpu"]
    assert (
        "my-kernels 0.1.0 was compiled for sm_70, sm_75" in mine.message and "sm_90" in mine.message
    )
    assert mine.kb == "cuda/invalid-device-function"
    assert mine.command.startswith('TORCH_CUDA_ARCH_LIST="9.0" pip install')
    runtime = found["ext.cuda-runtime-mismatch"]
    assert "vllm 0.9.0 links the CUDA 12 runtime" in runtime.message
    pin = found["ext.torch-pin-mismatch"]
    assert (
        "torch==2.5.1" in pin.message
        and pin.command == 'pip install "xformers" "torch==2.11.0+cu130"'
    )
    bare = [f for f in env.findings if f.id == "ext.extension-without-cuda-kernels"]
    assert bare and "xformers 0.0.29" in bare[0].message
    assert bare[0].kb == "ext/extension-without-cuda-kernels"


def test_flash_attention_on_a_turing_gpu_names_the_ampere_requirement(
    compiler: str, tmp_path: Path, recorded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    make_package(compiler, site, "flash-attn", "2.7.4", sass=[80, 90], ptx=[90], cudart=13)
    env = _env_with(site, "7.5", recorded, monkeypatch)
    flash = _ids(env)["ext.flash-attn-unsupported-gpu"]
    assert flash.kb == "ext/flash-attn-unsupported-gpu" and flash.severity == "error"
    assert "sm_75" in flash.message and flash.command == "pip uninstall -y flash-attn"
    on_hopper = _env_with(site, "9.0", recorded, monkeypatch)
    assert not [f for f in on_hopper.findings if f.id.startswith("ext.")]


def _triton(site: Path, ptxas_release: str, header: bool) -> None:
    nvidia = site / "triton" / "backends" / "nvidia"
    (nvidia / "bin").mkdir(parents=True)
    (nvidia / "include").mkdir()
    (site / "triton" / "__init__.py").write_text("")
    # As triton 3.x's backends/nvidia/driver.py has it: the launcher is linked with -lcuda.
    (nvidia / "driver.py").write_text("libraries = ['cuda']\n")
    if header:
        (nvidia / "include" / "cuda.h").write_text("/* cuda.h */\n")
    ptxas = nvidia / "bin" / "ptxas"
    ptxas.write_text(
        "#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n"
        f"echo 'Cuda compilation tools, release {ptxas_release}, V{ptxas_release}.0'\n"
    )
    ptxas.chmod(0o755)


def test_triton_missing_libcuda_header_and_an_old_ptxas_are_each_named(
    compiler: str, tmp_path: Path, recorded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _triton(site, "12.4", header=False)
    monkeypatch.delenv("TRITON_LIBCUDA_PATH", raising=False)
    env = _env_with(site, "10.0", recorded, monkeypatch)  # a B200: ptxas learnt sm_100 in 12.8
    found = _ids(env)
    assert found["triton.missing-cuda-headers"].kb == "triton/missing-cuda-headers"
    assert found["triton.missing-cuda-headers"].command == (
        "pip install --force-reinstall --no-deps triton==3.5.0"
    )
    ptxas = found["triton.ptxas-error"]
    assert "CUDA 12.4" in ptxas.message and "12.8" in ptxas.message
    if not any(
        Path(d, "libcuda.so.1").exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64")
    ):
        libcuda = found["triton.cannot-find-libcuda"]
        assert libcuda.severity == "error" and libcuda.kb == "triton/cannot-find-libcuda"
    # The driver's folder named through TRITON_LIBCUDA_PATH, holding only libcuda.so.1:
    driver = tmp_path / "driver"
    driver.mkdir()
    _cudart(compiler, driver, 1).rename(driver / "libcuda.so.1")
    monkeypatch.setenv("TRITON_LIBCUDA_PATH", str(driver))
    linked = _ids(_env_with(site, "9.0", recorded, monkeypatch))["triton.cannot-find-libcuda"]
    assert linked.severity == "warning" and "-lcuda" in linked.message
    assert linked.command == f"sudo ln -s {driver}/libcuda.so.1 {driver}/libcuda.so"


def test_a_container_without_its_gpu_is_the_root_cause(
    recorded: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    box = ecosystem.container()
    if not box["in_container"] or box["device_nodes"]:
        pytest.skip("needs a container with no GPU device nodes (this check reads the real one)")
    env = _env_with(tmp_path, "9.0", recorded, monkeypatch)
    # No GPU here: NVML is missing too, which the recorded NVML section hides; take it away.
    quick = recorded("gpu_deep")["quick"]
    assert quick  # recorded input stays as recorded
    first = env.findings[0]
    assert first.id == "cuda.container-gpu-not-visible" and first.severity == "error"
    assert first.kb == "cuda/container-gpu-not-visible"
    assert first.command == "docker run --gpus all IMAGE"
