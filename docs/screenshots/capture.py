"""Drive the real app offscreen and save one screenshot per page (docs/screenshots/*.png).

Run from the repository root: `.venv/bin/python docs/screenshots/capture.py [OUTDIR] [--dark]`.
Everything shown comes from this machine: its environment, the bundled KB, a wizard run and a
quick benchmark sweep executed here. Settings and history go to a temporary folder.

With `--answer` it captures the Diagnose page with the answer card for issue 17's embedding
log (tests/data/answer/issue-17-embedding.txt) and page 1 of the PDF report for that log and
this machine, rasterised from the real PDF with pdfium (docs/screenshots/report-page1.png).
With `--new` it captures the broken-stack Environment page (a recording from the H200 with a
foreign cuDNN on LD_LIBRARY_PATH), the Fleet page on the simulated nodes, and the "Your script"
tab after `try` and its fixes ran a real CPU script. With `--gpu` it captures two other views
instead: the Environment page showing a real deep-check recording from an H200 server opened
from its JSON (tests/data/env/gpu_deep.json), and the Diagnose page with a real cuDNN error from
a public issue thread (tests/data/matcher/cases).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
_scratch = tempfile.mkdtemp(prefix="clinic-shots-")
os.environ["CUDA_CLINIC_DATA_DIR"] = _scratch
os.environ["XDG_CONFIG_HOME"] = _scratch
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from gui.app import SCREENSHOT_SIZE, build_window, configure_identity, wait_until_idle  # noqa: E402
from gui.errors import ErrorReporter  # noqa: E402
from gui.main_window import MainWindow  # noqa: E402

# A real error, produced on this machine by a real torch in a child process (never in the GUI).
RNN_MISMATCH = """import torch
model = torch.nn.LSTM(input_size=32, hidden_size=64, batch_first=True)
batch = torch.randn(8, 16, 32).half()
out, _ = model(batch)
"""


def real_error() -> str:
    """Run the snippet in a fresh interpreter and return its stderr (the traceback)."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", RNN_MISMATCH], capture_output=True, text=True, check=False
    )
    return proc.stderr


def settle(window: MainWindow, until=None, limit_ms: int = 120_000) -> None:  # type: ignore[no-untyped-def]
    """Wait for background work, and optionally for a condition."""
    wait_until_idle(window, limit_ms)
    if until is not None:
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        timer = QTimer()
        timer.setInterval(100)
        timer.timeout.connect(lambda: until() and loop.quit())
        timer.start()
        QTimer.singleShot(limit_ms, loop.quit)
        loop.exec()
        timer.stop()
        wait_until_idle(window, limit_ms)


def shoot(window: MainWindow, out: Path, name: str) -> None:
    """Save the window as PNG."""
    path = out / f"{name}.png"
    window.grab().save(str(path), "PNG")
    print(f"saved {path}")


def shoot_recording(window: MainWindow, out: Path, recording: Path, name: str) -> None:
    """The Environment page showing an environment opened from its JSON."""
    env = window.show_page("environment")
    env.open_file(str(recording))
    settle(window, lambda: env.loaded is not None)
    shoot(window, out, name)


def shoot_diagnosis(
    window: MainWindow, out: Path, text: str, name: str, answer: bool = False
) -> None:
    """The Diagnose page with `text` pasted and matched (`answer`: wait for its answer card)."""
    diagnose = window.show_page("diagnose")
    diagnose.input.setPlainText(text)
    diagnose.diagnose()
    if answer:
        settle(window, lambda: diagnose.answer_card is not None and diagnose.machine is not None)
    else:
        settle(window, lambda: diagnose.report is not None)
    shoot(window, out, name)


def _start() -> tuple[QApplication, ErrorReporter, MainWindow]:
    """The app, its error reporter and the main window at the screenshot size."""
    app = QApplication(sys.argv[:1])
    configure_identity(app)
    reporter = ErrorReporter(interactive=False, parent=app)
    reporter.install()
    window = build_window(app, reporter)
    window.remember_state = False
    window.show()
    window.resize(*SCREENSHOT_SIZE)
    return app, reporter, window


def main() -> int:
    """Capture every page."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else REPO / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    if "--dark" in sys.argv:
        os.environ["CUDA_CLINIC_THEME"] = "dark"
    suffix = "-dark" if "--dark" in sys.argv else ""
    _app, reporter, window = _start()  # _app keeps the QApplication alive until the end
    special = {"--answer": capture_answer, "--gpu": capture_gpu, "--new": capture_new}
    chosen = [special[flag] for flag in special if flag in sys.argv]
    if chosen:
        chosen[0](window, out, suffix)
        window.close()
        reporter.uninstall()
        return 1 if reporter.unexpected else 0

    window.show_page("environment")
    settle(window, lambda: window.page("environment").env is not None)
    shoot(window, out, f"environment{suffix}")

    shoot_diagnosis(window, out, real_error(), f"diagnose{suffix}")

    knowledge = window.show_page("knowledge", "cuda/rnn-dtype-mismatch")
    settle(window, lambda: knowledge.current is not None and knowledge.runs is not None)
    knowledge.view.scrollToAnchor("workarounds")
    shoot(window, out, f"knowledge{suffix}")

    wizard = window.show_page("wizard", "cuda/rnn-dtype-mismatch")
    settle(window, lambda: wizard.env is not None)
    wizard.show_step(1)
    shoot(window, out, f"wizard-machine{suffix}")
    wizard.start()
    settle(window, lambda: wizard.run is not None)
    shoot(window, out, f"wizard{suffix}")
    wizard.show_step(4)
    shoot(window, out, f"wizard-results{suffix}")

    bench = window.show_page("benchmarks")
    bench.start()
    settle(window, lambda: bench.payload is not None, limit_ms=300_000)
    shoot(window, out, f"benchmarks{suffix}")

    error_text = window.page("diagnose").input.toPlainText()
    report = window.show_page("report", {"error_text": error_text})
    settle(window, lambda: report.shared is not None)
    shoot(window, out, f"report{suffix}")

    window.close()
    reporter.uninstall()
    return 1 if reporter.unexpected else 0


GPU_RECORDING = REPO / "tests" / "data" / "env" / "gpu_deep.json"
# CUDNN_STATUS_NOT_INITIALIZED from a conv3d, as posted in Comfy-Org/ComfyUI#11723.
GPU_ERROR = REPO / "tests" / "data" / "matcher" / "cases" / "notinit-comfyui-11723.txt"


def capture_gpu(window: MainWindow, out: Path, suffix: str) -> None:
    """The GPU server's environment opened from its JSON, and a real GPU error diagnosed."""
    shoot_recording(window, out, GPU_RECORDING, f"environment-gpu{suffix}")
    text = GPU_ERROR.read_text(encoding="utf-8")
    shoot_diagnosis(window, out, text, f"diagnose-gpu{suffix}")


BROKEN_RECORDING = REPO / "tests" / "data" / "env" / "broken" / "ld-library-path-system-cudnn.json"
FLEET_NODES = REPO / "tests" / "data" / "fleet" / "nodes"
TRY_SCRIPT = REPO / "tests" / "data" / "scripts" / "deterministic_put.py"


def capture_new(window: MainWindow, out: Path, suffix: str) -> None:
    """A broken stack recorded on the H200, a simulated fleet, and `try` on a real CPU script."""
    shoot_recording(window, out, BROKEN_RECORDING, f"environment-broken{suffix}")

    fleet = window.show_page("fleet")
    fleet.open_path(str(FLEET_NODES))
    settle(window, lambda: fleet.section is not None)
    shoot(window, out, f"fleet{suffix}")

    wizard = window.show_page("wizard")
    settle(window, lambda: wizard.env is not None)
    wizard.tabs.setCurrentWidget(wizard.try_tab)
    tab = wizard.try_tab
    tab.command.setText(f"python {TRY_SCRIPT.name}")
    tab.folder.setText(str(TRY_SCRIPT.parent))
    tab.start()
    settle(window, lambda: tab.task is None and tab.result is not None)
    tab.show_plan()
    tab.start_fixes()
    settle(window, lambda: tab.task is None)
    shoot(window, out, f"try{suffix}")


EMBEDDING_LOG = REPO / "tests" / "data" / "answer" / "issue-17-embedding.txt"


def pdf_page_png(data: bytes, path: Path, page: int = 0, scale: float = 1.6) -> None:
    """One page of a PDF as PNG, drawn by pdfium from the PDF itself."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c
    from PySide6.QtGui import QImage

    bitmap = pdfium.PdfDocument(data)[page].render(
        scale=scale, force_bitmap_format=pdfium_c.FPDFBitmap_BGRA
    )
    image = QImage(
        bytes(bitmap.buffer),
        bitmap.width,
        bitmap.height,
        bitmap.stride,
        QImage.Format.Format_ARGB32,
    )
    image.copy().save(str(path), "PNG")
    print(f"saved {path}")


def capture_answer(window: MainWindow, out: Path, suffix: str) -> None:
    """The answer card on the Diagnose page, and page 1 of the PDF report."""
    from core.report import collect, redact
    from gui.report_pdf import render_pdf

    log = EMBEDDING_LOG.read_text(encoding="utf-8")
    shoot_diagnosis(window, out, log, f"diagnose-answer{suffix}", answer=True)
    shared, _ = redact(collect(error_text=log, latest=False))
    pdf_page_png(render_pdf(shared), out / f"report-page1{suffix}.png")


if __name__ == "__main__":
    sys.exit(main())
