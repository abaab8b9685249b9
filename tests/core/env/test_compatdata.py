"""The reviewed compat data file, and the exact fix commands the remedy derives from it."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest

from core.env.compat import arch_support, version_tuple
from core.env.compatdata import CompatDataError, default_path, load, parse
from core.env.model import Driver, Environment, Gpu, Torch
from core.env.remedy import best_install, cudnn_remedy, runnable_builds


def _raw() -> dict[str, Any]:
    return tomllib.loads(default_path().read_text(encoding="utf-8"))


def test_shipped_file_is_valid_and_covers_torch_2_4_to_2_11() -> None:
    data = load()
    releases = {tuple(version_tuple(v)[:2]) for v in data.releases()}
    assert {(2, minor) for minor in range(4, 12)} <= releases
    assert {b.build for b in data.torch} >= {"cu118", "cu121", "cu124", "cu126", "cu128", "cu130"}
    for row in data.torch + data.cuda:  # every row says where its facts come from
        assert row.source.strip()


def test_driver_minimums_are_nvidias_published_ones() -> None:
    data = load()
    assert data.cuda_release("11.8").min_driver == "520.61.05"  # type: ignore[union-attr]
    assert data.cuda_release("13.0").min_driver == "580.65.06"  # type: ignore[union-attr]
    assert data.minor_compat_driver(12) == "525.60.13"
    assert data.minor_compat_driver(13) == "580.65.06"


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: d["torch"][0].pop("source"), "torch[0]: field 'source'"),
        (lambda d: d["torch"][1].update(build="cuda12"), "torch[1]: field 'build'"),
        (lambda d: d["torch"][2].update(arch=["sm90"]), "torch[2]: field 'arch'"),
        (lambda d: d["cuda"][0].update(min_driver="520.x"), "cuda[0]: field 'min_driver'"),
        (lambda d: d["torch"][0].update(source="a blog"), "torch[0]: source 'a blog'"),
        (lambda d: d["torch"].append(dict(d["torch"][0])), "listed twice"),
    ],
)
def test_a_bad_edit_is_rejected_naming_the_row_and_field(edit: Any, named: str) -> None:
    data = copy.deepcopy(_raw())
    edit(data)
    with pytest.raises(CompatDataError, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse(data)


def _env(driver: str, cuda_max: str, cc: str, torch_version: str = "2.11.0+cu130") -> Environment:
    env = Environment(
        driver=Driver(version=driver, cuda_max=cuda_max),
        gpus=[Gpu(index=0, name="GPU", compute_capability=cc)],
        torch=Torch(installed=True, version=torch_version, cuda="13.0"),
    )
    return env


def test_h100_on_driver_580_gets_the_newest_cu130_build() -> None:
    command, why = best_install(_env("580.159.04", "13.0", "9.0"))
    newest = load().releases()[0]
    assert command == f"pip install torch=={newest} --index-url <pytorch-wheel-index>/cu130"
    assert "cu130" in why and "cu128" in why and "cu126" in why


def test_driver_550_gets_a_cuda_12_build_never_cu130() -> None:
    candidates = runnable_builds(_env("550.54.14", "12.4", "8.6"))
    assert candidates and all(version_tuple(c.build.cuda)[0] <= 12 for c in candidates)
    # 550 is below 12.6's toolkit minimum but above 12.x's minor-compat minimum.
    assert {c.how for c in candidates if c.build.build == "cu126"} == {"minor-compat"}
    command, _ = best_install(_env("550.54.14", "12.4", "8.6"))
    assert command.startswith("pip install torch==") and "-index>/cu12" in command


def test_every_suggested_build_lists_the_gpu() -> None:
    for cc in ("5.0", "7.0", "9.0", "12.0"):
        for cand in runnable_builds(_env("580.159.04", "13.0", cc)):
            assert arch_support(cc, list(cand.build.arch)) != "none"
    # Maxwell is dropped by every CUDA 12.8+ build: only cu126 and older remain.
    assert {c.build.build for c in runnable_builds(_env("580.159.04", "13.0", "5.0"))} <= {
        "cu118",
        "cu121",
        "cu124",
        "cu126",
    }


def test_cudnn_fix_names_the_variable_or_the_wheel_torch_pins(tmp_path: Path) -> None:
    env = _env("580.159.04", "13.0", "9.0")
    env.torch.declared = {"nvidia-cudnn-cu13": "9.19.0.56"}
    foreign = tmp_path / "sys"
    foreign.mkdir()
    env.env_vars = {"LD_LIBRARY_PATH": f"/usr/local/nvidia/lib64:{foreign}"}
    assert cudnn_remedy(env, str(foreign))[0] == "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64"
    env.env_vars = {"LD_PRELOAD": f"{foreign}/libcudnn.so.9"}
    assert cudnn_remedy(env, str(foreign))[0] == "unset LD_PRELOAD"
    env.env_vars = {}
    assert (
        cudnn_remedy(env, str(foreign))[0]
        == "pip install --force-reinstall --no-deps nvidia-cudnn-cu13==9.19.0.56"
    )
