"""What upstream bug templates ask, read by the quick probe without importing torch."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.env import detect
from core.report.fields import upstream_fields

# Libraries PyTorch's and transformers' bug templates ask about, as their wheels name
# their dist-info folders (underscores, post releases).
TEMPLATE_WHEELS = {
    "transformers": "transformers-4.51.3",
    "huggingface-hub": "huggingface_hub-0.30.2",
    "safetensors": "safetensors-0.5.3",
    "accelerate": "accelerate-1.6.0",
    "tokenizers": "tokenizers-0.21.1",
    "flash-attn": "flash_attn-2.7.4.post1",
    "xformers": "xformers-0.0.29.post3",
    "deepspeed": "deepspeed-0.16.5",
    "bitsandbytes": "bitsandbytes-0.45.5",
    "triton": "triton-3.3.0",
    "peft": "peft-0.15.2",
}


def _site(tmp_path: Path, debug: bool) -> Path:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise ImportError('quick mode imported torch')\n")
    (site / "torch" / "version.py").write_text(
        f"__version__ = '2.7.0+cu126'\ndebug = {debug}\ncuda: Optional[str] = '12.6'\n"
    )
    (site / "torch-2.7.0+cu126.dist-info").mkdir()
    for folder in [*TEMPLATE_WHEELS.values(), "requests-2.32.3", "Pillow-11.2.1"]:
        (site / f"{folder}.dist-info").mkdir()
    return site


@pytest.mark.parametrize("debug", [True, False])
def test_template_libraries_and_debug_flag_without_importing_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, debug: bool
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(_site(tmp_path, debug)))
    env = detect(sys.executable)
    listed = {p["name"]: p["version"] for p in env.packages["pip"]}
    for name, folder in TEMPLATE_WHEELS.items():
        assert listed[name] == folder.split("-", 1)[1]
    assert "requests" not in listed and "pillow" not in listed  # not the whole site-packages
    assert env.torch.debug is debug
    fields = {f["field"]: f["value"] for f in upstream_fields(env.to_dict())}
    assert fields["transformers version"] == "4.51.3"
    assert fields["Huggingface_hub version"] == "0.30.2"
    assert fields["Accelerate version"] == "1.6.0"
    assert fields["Is debug build"] is debug
    assert fields["Tensorflow version"] == "not installed"  # looked for, absent


def test_cpu_model_and_compilers_match_what_the_system_says() -> None:
    env = detect(sys.executable)
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        if model:
            assert env.platform["cpu_model"] == model.group(1).strip()
    assert set(env.toolchain) == {"gcc", "clang"}
    for name in ("gcc", "clang"):
        exe = shutil.which(name)
        if exe is None:
            assert env.toolchain[name] is None
            continue
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
        assert env.toolchain[name] == out.stdout.splitlines()[0].strip()
    fields = {f["field"]: f["value"] for f in upstream_fields(env.to_dict())}
    assert fields["CPU"] == env.platform["cpu_model"]
    if shutil.which("clang") is None:
        assert fields["Clang version"] == "not found on PATH"
