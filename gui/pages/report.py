"""Report page: build the shareable report, preview every redaction, reveal on purpose, export."""

from __future__ import annotations

from collections import Counter
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QWidget,
)

from core.fsutil import atomic_write_text
from core.ops.report import build
from core.report import Redaction, render
from gui.context import AppContext
from gui.pages.base import Page, label, side_pane, splitter
from gui.widgets.file_dialog import ask_save_file

FORMATS = (
    ("md", "Markdown (GitHub)"),
    ("html", "HTML (one file)"),
    ("pdf", "PDF"),
    ("json", "JSON"),
)
Built = tuple[dict[str, object], list[Redaction], list[str]]


class PreviewBrowser(QTextBrowser):
    """The preview: Qt's HTML plus the charts as images (QTextBrowser cannot draw inline SVG,
    which came out as jumbled text), served from `images` by name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.images: dict[str, QImage] = {}

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802 (Qt override)
        """A chart image by its name, else what QTextBrowser finds."""
        image = self.images.get(name.toString() if isinstance(name, QUrl) else name)
        if kind == QTextDocument.ResourceType.ImageResource.value and image is not None:
            return image
        return super().loadResource(kind, name)


def _build(
    python: str | None,
    deep: bool,
    error_text: str | None,
    run_ids: list[int] | None,
    kb_extra: list[str] | None = None,
) -> Built:
    """Collect the report from this machine, redacted as it is built (seconds: env detection
    runs); `kb_extra` are the user's KB pack folders, whose matches are labelled as the user's
    own."""
    skipped: list[str] = []  # stored runs that did not load
    report = build(
        python=python,
        deep=deep,
        error_text=error_text,
        run_ids=run_ids,
        kb_extra=kb_extra or [],
        skipped=skipped,
    )
    return report, list(report.redactions), skipped


class ReportPage(Page):
    """The report is redacted by default; single items can be revealed, and stay listed."""

    key = "report"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.shared: dict[str, object] | None = None
        self.items: list[Redaction] = []
        self.revealed: set[str] = set()
        self.run_ids: list[int] | None = None
        self._started = False
        self.build_button = QPushButton("Rebuild")
        self.build_button.setToolTip("Collect the environment, runs and error again")
        self.build_button.clicked.connect(self.build)
        self.format_box = QComboBox()
        for key, text in FORMATS:
            self.format_box.addItem(text, key)
        self.export_button = QPushButton("Export…")
        self.export_button.setProperty("primary", True)
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._on_export)
        for widget in (self.build_button, self.format_box, self.export_button):
            self.action_row.addWidget(widget)
        options = self._build_options()
        self.preview = PreviewBrowser()
        self.preview.setOpenLinks(False)
        self.preview.anchorClicked.connect(self._on_anchor)
        self.body.addWidget(splitter(options, self.preview, sizes=[320, 740]), 1)

    def _build_options(self) -> QWidget:
        side, column = side_pane("left")
        column.addWidget(label("Include", "h2"))
        self.deep = QCheckBox("Deep environment check (imports torch in a child)")
        column.addWidget(self.deep)
        self.error_box = QPlainTextEdit()
        self.error_box.setPlaceholderText("Optional: the error or log to include and match")
        self.error_box.setMaximumHeight(110)
        column.addWidget(self.error_box)
        self.runs_label = label("Wizard runs and sweeps: the newest of each.", "muted", wrap=True)
        column.addWidget(self.runs_label)
        self.full = QCheckBox("Appendix in PDF and Markdown (the log, runs, environment)")
        self.full.setToolTip(
            "Page 1 is always the answer. The appendix holds everything it rests on; the HTML "
            "and JSON exports always include it (folded in HTML)."
        )
        self.full.toggled.connect(lambda _on: self._render())
        column.addWidget(self.full)
        column.addWidget(label("Redactions", "h2"))
        self.count_label = label("", "muted", wrap=True)
        column.addWidget(self.count_label)
        self.redactions = QListWidget()
        self.redactions.itemChanged.connect(self._on_item_changed)
        column.addWidget(self.redactions, 1)
        column.addWidget(
            label("Tick an item to reveal it in the export on purpose.", "muted", wrap=True)
        )
        return side

    def activate(self, arg: Any = None) -> None:
        """`arg` may be {"run_id": N} (from the wizard) or {"error_text": ...} (Diagnose)."""
        if isinstance(arg, dict):
            if arg.get("run_id") is not None:
                self.run_ids = [int(arg["run_id"])]
                self.runs_label.setText(f"Wizard run {arg['run_id']}, and the newest sweep.")
            if arg.get("error_text"):
                self.error_box.setPlainText(str(arg["error_text"]))
            self.build()
        elif not self._started:
            self.build()

    def refresh(self) -> None:
        """Build the report again."""
        self.build()

    def build(self) -> None:
        """Collect and redact the report off the GUI thread."""
        self._started = True
        python = self.ctx.target.path
        deep = self.deep.isChecked()
        text = self.error_box.toPlainText().strip() or None
        run_ids = self.run_ids
        packs = self.ctx.data.kb_extra
        self.build_button.setEnabled(False)
        self.export_button.setEnabled(False)
        self.count_label.setText("Collecting the environment and runs …")
        self.begin_busy()
        self.ctx.tasks.run(
            lambda: _build(python, deep, text, run_ids, packs), self._on_built, self._on_failed
        )

    def _on_built(self, built: Built) -> None:
        self.end_busy()
        self.shared, self.items, skipped = built
        if skipped:
            self.status.emit("Left out of the report: " + "; ".join(skipped))
        self.revealed = set()
        self.build_button.setEnabled(True)
        self.export_button.setEnabled(True)
        self._fill_redactions()
        self._render()

    def _on_failed(self, exc: BaseException) -> None:
        self.end_busy()
        self.build_button.setEnabled(True)
        self.count_label.setText("The report could not be built.")
        self.ctx.errors.report(exc)

    def _fill_redactions(self) -> None:
        self.redactions.blockSignals(True)
        self.redactions.clear()
        for item in self.items:
            where = ".".join(str(p) for p in item.path)
            entry = QListWidgetItem(f"{item.label}  ({item.kind})")
            entry.setToolTip(f"In {where}")
            entry.setData(Qt.ItemDataRole.UserRole, item.id)
            entry.setFlags(entry.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            entry.setCheckState(Qt.CheckState.Unchecked)
            self.redactions.addItem(entry)
        self.redactions.blockSignals(False)
        self._update_count()

    def _update_count(self) -> None:
        """What was removed, by kind with counts, and what the user chose to put back."""
        by_kind = Counter(item.kind for item in self.items)
        kinds = ", ".join(f"{n} {kind}" for kind, n in by_kind.most_common())
        text = f"{len(self.items)} values redacted, highlighted in the preview"
        text += f": {kinds}." if kinds else "."
        shown = len(self.revealed)
        if shown:
            text += f" {shown} revealed on purpose: they WILL be in the export."
        self.count_label.setText(text)

    def _render(self) -> None:
        if self.shared is None:
            return
        from gui.report_pdf import chart_images

        bar = self.preview.verticalScrollBar().value()
        self.preview.images.clear()
        html = render(
            self.shared,
            "html",
            redactions=self.items,
            reveal=self.revealed,
            highlight=True,
            qt=True,
            full=self.full.isChecked(),
            chart_html=chart_images(self.preview.images.__setitem__),
        )
        self.preview.setHtml(html)
        self.preview.verticalScrollBar().setValue(bar)

    def set_revealed(self, redaction_id: str, revealed: bool) -> None:
        """Reveal (or hide again) one redacted item."""
        if revealed:
            self.revealed.add(redaction_id)
        else:
            self.revealed.discard(redaction_id)
        self._update_count()
        self._render()

    def _on_item_changed(self, entry: QListWidgetItem) -> None:
        checked = entry.checkState() == Qt.CheckState.Checked
        self.set_revealed(str(entry.data(Qt.ItemDataRole.UserRole)), checked)

    def _on_anchor(self, url: QUrl) -> None:
        fragment = url.fragment() or url.toString().lstrip("#")
        if fragment.startswith("redaction-"):
            rid = fragment[len("redaction-") :]
            for row in range(self.redactions.count()):
                if self.redactions.item(row).data(Qt.ItemDataRole.UserRole) == rid:
                    self.redactions.setCurrentRow(row)
                    self.redactions.scrollToItem(self.redactions.item(row))

    def export_to(self, path: str, fmt: str) -> None:
        """Write the report (with the revealed items, and only those, put back) to `path`."""
        if self.shared is None:
            return
        full = self.full.isChecked()
        if fmt == "pdf":
            from gui.report_pdf import render_pdf

            render_pdf(self.shared, path, redactions=self.items, reveal=self.revealed, full=full)
        else:
            text = render(self.shared, fmt, redactions=self.items, reveal=self.revealed, full=full)
            atomic_write_text(path, text)

    def _on_export(self) -> None:
        fmt = str(self.format_box.currentData())
        path = ask_save_file(
            self,
            self.ctx.settings,
            "reports",
            "Export the report",
            f"cuda-clinic-report.{fmt}",
            filters=f"*.{fmt}",
            home=True,
        )
        if not path:
            return
        if fmt == "pdf":
            # QTextDocument and QPdfWriter belong on the GUI thread; a report renders quickly.
            self.export_to(path, fmt)
            self._on_exported(path)
            return
        shared, items, revealed = self.shared, list(self.items), set(self.revealed)
        full = self.full.isChecked()
        if shared is None:
            return

        def write() -> None:
            text = render(shared, fmt, redactions=items, reveal=revealed, full=full)
            atomic_write_text(path, text)

        self.ctx.tasks.run(write, lambda _r: self._on_exported(path))

    def _on_exported(self, path: str) -> None:
        self.status.emit(f"Report saved to {path}.")
