"""CUDA Clinic's desktop app (PySide6 + pyqtgraph) on top of the headless core."""
