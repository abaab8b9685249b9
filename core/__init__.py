"""CUDA Clinic's headless engine: environment detection, knowledge base, wizards, reports."""

__version__ = "0.1.0"
__all__ = ["__version__"]
