"""The quick probe in a real child: cuDNN copies read through ctypes, secrets masked."""

from __future__ import annotations

import secrets
import string
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from core.env import detect, render_human

Builder = Callable[[Path, str], Path]


def _fake_cuda_torch(site: Path) -> None:
    """torch metadata of a CUDA 13 wheel pinning nvidia-cudnn-cu13 9.19.0.56 (never imported)."""
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise ImportError('quick mode imported torch')\n")
    (site / "torch" / "version.py").write_text("__version__ = '2.11.0+cu130'\ncuda = '13.0'\n")
    dist = site / "torch-2.11.0+cu130.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n"
        'Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"\n\n'
    )
    (site / "nvidia_cudnn_cu13-9.19.0.56.dist-info").mkdir()


def test_copies_get_their_real_versions_and_the_wheel_is_expected(
    tmp_path: Path, fake_cudnn: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _fake_cuda_torch(site)
    wheel_dir = site / "nvidia" / "cudnn" / "lib"
    fake_cudnn(wheel_dir, "9.19.0")
    fake_cudnn(tmp_path / "old", "8.9.7")
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "old"))
    env = detect(sys.executable)
    # Real copies of this machine (a GPU box's own wheel and system cuDNN) may be listed too.
    by_dir = {c.directory: c for c in env.cudnn.copies}
    wheel, old = by_dir[str(wheel_dir)], by_dir[str(tmp_path / "old")]
    assert (wheel.version, old.version) == ("9.19.0", "8.9.7")
    assert wheel.sources == ["pip-wheel"] and wheel.expected
    assert wheel.package == "nvidia-cudnn-cu13 9.19.0.56"
    assert old.sources == ["LD_LIBRARY_PATH"] and not old.expected
    assert sorted(old.files) == ["libcudnn.so.8", "libcudnn_ops.so.8"]
    assert env.cudnn.basis == "expected" and env.cudnn.expected_from == str(wheel_dir)
    assert env.cudnn.version == "9.19.0"
    other = next(f for f in env.findings if f.id == "cudnn.other-copies")
    assert f"8.9.7 in {tmp_path / 'old'}" in other.message
    assert "cudnn.version-mismatch" not in {f.id for f in env.findings}


def test_unloadable_copy_reports_why_and_others_still_read(
    tmp_path: Path, fake_cudnn: Builder, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good"
    fake_cudnn(good, "9.14.0")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "libcudnn.so.9").write_bytes(b"not an ELF file")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{bad}:{good}")
    env = detect(sys.executable)
    copies = {c.directory: c for c in env.cudnn.copies}
    assert copies[str(good)].version == "9.14.0"
    assert copies[str(bad)].version is None
    assert "cannot load" in (copies[str(bad)].version_error or "")
    # The file is no library at all: that is the root cause, the unreadable version its effect.
    assert env.findings[0].id == "lib.damaged-copy"
    assert str(bad / "libcudnn.so.9") in env.findings[0].message
    assert env.findings[0].command == f"export LD_LIBRARY_PATH={good}"
    unreadable = next(f for f in env.suppressed if f.id == "cudnn.unreadable")
    assert unreadable.caused_by == "lib.damaged-copy"


def _token(prefix: str, length: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return prefix + "".join(secrets.choice(alphabet) for _ in range(length))


def test_secret_values_are_masked_and_useful_ones_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    secret_by_name = _token("", 32)
    pasted_token = _token("hf_", 34)
    random_blob = _token("", 40)
    password = _token("", 12)
    monkeypatch.setenv("NVIDIA_API_KEY", secret_by_name)
    monkeypatch.setenv("CUDA_CACHE_TOKEN", secret_by_name)
    monkeypatch.setenv("CUDA_NOTES", pasted_token)
    monkeypatch.setenv("TORCH_EXTRA", random_blob)
    monkeypatch.setenv("TORCH_HOME", f"https://me:{password}@example.invalid/cache")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "eth0")
    env = detect(sys.executable)
    text = repr(env.to_dict())
    for value in (secret_by_name, pasted_token, random_blob, password):
        assert value not in text
    assert env.env_vars["NVIDIA_API_KEY"] == "<masked: 32 chars>"
    assert env.env_vars["TORCH_HOME"] == "https://<masked>@example.invalid/cache"
    assert env.env_vars["CUDA_VISIBLE_DEVICES"] == "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"
    assert env.env_vars["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert env.env_vars["NCCL_SOCKET_IFNAME"] == "eth0"


def test_no_driver_is_a_normal_result_here() -> None:
    """This machine has no NVIDIA driver: NVML says so, nothing crashes, no GPU is listed."""
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver")
    env = detect(sys.executable)
    assert env.driver.error == "LibraryNotFound" and env.gpus == []
    # Said in words, not as NVML's error name.
    assert "Driver     not installed (libnvidia-ml.so.1 not found)" in render_human(env)
