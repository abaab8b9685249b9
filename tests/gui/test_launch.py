"""Launching on a display whose X11 libraries are missing: one clear line, not a Qt abort."""

from __future__ import annotations

import pytest

from gui import cli


def test_missing_x11_libraries_are_named_and_the_summary_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(
        cli,
        "XCB_LIBRARIES",
        (("libc.so.6", "libc6"), ("libcuda-clinic-absent.so.9", "cuda-clinic-absent9")),
    )
    assert cli.missing_xcb_packages() == ["cuda-clinic-absent9"]
    assert cli.launch() == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "cuda-clinic: the X11 display needs system libraries Qt cannot find "
        "(install: sudo apt-get install cuda-clinic-absent9); "
        "printing the environment summary instead."
    )
    assert "Environment (quick mode)" in "\n".join(out)


def test_other_platforms_are_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("QT_QPA_PLATFORM", "wayland")
    monkeypatch.setattr(cli, "XCB_LIBRARIES", (("libcuda-clinic-absent.so.9", "absent"),))
    assert cli.missing_xcb_packages() == []
