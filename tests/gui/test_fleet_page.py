"""Fleet page: a saved fleet run (collected by the real CLI through the fake ssh) as a table,
outliers highlighted and first, one node in detail; folders of env JSONs; bad input."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from gui.context import AppContext
from gui.main_window import MainWindow
from gui.pages.fleet import COLUMNS, FleetPage

FLEET = Path(__file__).resolve().parents[1] / "data" / "fleet"
NODES = [f"gpu{n:02d}" for n in range(1, 14)]


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`cuda-clinic fleet --ssh hosts --save DIR` over the simulated cluster (the fake ssh)."""
    root = tmp_path_factory.mktemp("fleet")
    cluster = root / "cluster"
    shutil.copytree(FLEET, cluster)
    (root / "hosts").write_text("\n".join(NODES) + "\n")
    env = {
        **os.environ,
        "PATH": f"{cluster / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "FLEET_FAKE_DIR": str(cluster),
    }
    cmd = [sys.executable, "-m", "core", "fleet", "--ssh", str(root / "hosts")]
    cmd += ["--timeout", "2", "--save", str(root / "run")]
    subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert (root / "run" / "fleet.json").is_file()
    return root / "run"


def _open(qtbot, ctx: AppContext, path: Path) -> FleetPage:
    page = FleetPage(ctx)
    qtbot.addWidget(page)
    page.show()
    page.open_path(str(path))
    qtbot.wait_until(lambda: page.model.rowCount() > 0, timeout=20_000)
    return page


def _column(page: FleetPage, column: int) -> list[str]:
    model = page.model
    return [model.data(model.index(r, column)) for r in range(model.rowCount())]


def test_outliers_first_then_failures_then_the_rest(
    qtbot, ctx: AppContext, saved_run: Path
) -> None:
    page = _open(qtbot, ctx, saved_run / "fleet.json")
    names = _column(page, 0)
    assert names[:5] == ["gpu05", "gpu06", "gpu07", "gpu08", "gpu09"]
    assert names[5:8] == ["gpu11", "gpu12", "gpu13"]
    assert sorted(names[8:]) == ["gpu01", "gpu02", "gpu03", "gpu04", "gpu10"]
    first = _column(page, COLUMNS.index("Most relevant difference"))
    assert first[0] == "NVIDIA driver: 570.172.08 (fleet: 580.159.04)"
    assert "No route to host" in first[5]
    assert "13 nodes (ssh" in page.headline.text()
    assert "5 differ from the majority" in page.headline.text()


def test_outliers_and_failures_are_highlighted(qtbot, ctx: AppContext, saved_run: Path) -> None:
    page = _open(qtbot, ctx, saved_run / "fleet.json")
    colors = ctx.theme.colors
    role = Qt.ItemDataRole.BackgroundRole

    def bg(row: int) -> QColor | None:
        brush = page.model.data(page.model.index(row, 0), role)
        return None if brush is None else brush.color()

    assert bg(0) == QColor(colors.warning_bg)  # gpu05 differs
    assert bg(5) == QColor(colors.error_bg)  # gpu11 unreachable
    assert bg(12) is None  # like the majority


def test_selecting_a_node_shows_its_differences(qtbot, ctx: AppContext, saved_run: Path) -> None:
    page = _open(qtbot, ctx, saved_run / "fleet.json")
    assert "Majority configuration" in page.detail.toPlainText()
    assert page.select_node("gpu09")
    text = page.detail.toPlainText()
    assert "GPU 3: ECC off (fleet: on)" in text
    assert "GPU 3: max SM clock 1755 MHz (fleet: 1980 MHz)" in text
    assert page.select_node("gpu13")
    assert "gpu13: timeout" in page.detail.toPlainText()
    assert "no answer within 2 s" in page.detail.toPlainText()


def test_only_outliers_filter(qtbot, ctx: AppContext, saved_run: Path) -> None:
    page = _open(qtbot, ctx, saved_run / "fleet.json")
    page.only_outliers.setChecked(True)
    assert page.model.rowCount() == 8
    page.only_outliers.setChecked(False)
    assert page.model.rowCount() == 13


def test_a_folder_of_env_jsons_opens(qtbot, ctx: AppContext) -> None:
    page = _open(qtbot, ctx, FLEET / "nodes")
    assert page.model.rowCount() == 13
    assert _column(page, 0)[:5] == ["gpu05", "gpu06", "gpu07", "gpu08", "gpu09"]
    assert "13 nodes (from" in page.headline.text()


def test_a_bad_path_is_one_message(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    page = FleetPage(ctx)
    qtbot.addWidget(page)
    page.open_path(str(tmp_path / "nope"))
    qtbot.wait_until(lambda: bool(ctx.errors.open_dialogs), timeout=10_000)
    assert "does not exist" in ctx.errors.open_dialogs[0].text()
    assert page.model.rowCount() == 0 and not ctx.errors.unexpected


def test_fleet_is_in_the_sidebar(qtbot, window: MainWindow, saved_run: Path) -> None:
    page = window.show_page("fleet", str(saved_run))
    assert isinstance(page, FleetPage)
    qtbot.wait_until(lambda: page.model.rowCount() == 13, timeout=20_000)


def test_every_column_is_as_wide_as_its_header(qtbot, ctx: AppContext) -> None:
    """No clipped header ("elevant diffe") and a GPUs column that fits its values."""
    from gui.pages.fleet import COLUMNS, MAX_DIFFERENCE_PX

    page = _open(qtbot, ctx, FLEET / "nodes")
    page.resize(900, 600)
    header = page.table.horizontalHeader()
    for column, name in enumerate(COLUMNS):
        assert page.table.columnWidth(column) >= header.sectionSizeHint(column), name
    gpus = COLUMNS.index("GPUs")
    assert page.table.columnWidth(gpus) >= page.table.sizeHintForColumn(gpus)
    difference = COLUMNS.index("Most relevant difference")
    assert page.table.columnWidth(difference) <= max(
        MAX_DIFFERENCE_PX, header.sectionSizeHint(difference)
    )
