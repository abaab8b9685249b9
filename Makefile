# The two commands a new user needs: `make run` and `make test`.
# Each creates .venv and installs what it needs on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The CPU build is pinned first, so resolving the `torch` extra never pulls a
# multi-GB CUDA build. Override for a GPU workstation: make run TORCH_SPEC=torch
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: run test lint types imports test-core test-gui test-install test-gpu kb bench package clean

$(STAMP): pyproject.toml
	@echo "Setting up $(VENV): PyTorch ($(TORCH_SPEC), the CPU build unless TORCH_SPEC says otherwise),"
	@echo "then CUDA Clinic with its GUI (PySide6, pyqtgraph) and its test tools. Only the first time."
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e '.[gui,torch,dev]'
	$(PY) -m core kb build --quiet
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/cuda-clinic

test: $(STAMP) lint types imports test-core test-gui test-install

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

types: $(STAMP)
	$(VENV)/bin/mypy

imports: $(STAMP)
	$(VENV)/bin/lint-imports

# The core suite runs with Qt made unimportable, as on a headless server.
test-core: $(STAMP)
	CUDA_CLINIC_BLOCK_QT=1 $(PY) -m pytest -q -p no:pytest-qt tests/core tests/gpu

test-gui: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests/gui

# Build the wheel, install it into a fresh venv and run it from another folder (about 10 s),
# and build the PyInstaller bundle (about 20 s once PyInstaller is installed) and start it once.
test-install: $(STAMP) package
	$(PY) -m pytest -q -p no:pytest-qt tests/install

test-gpu: $(STAMP)
	$(PY) -m pytest -q -m gpu tests

kb: $(STAMP)
	$(PY) -m core kb build

bench: $(STAMP)
	$(PY) benchmarks/run.py

# The one-folder desktop app in dist/cuda-clinic/ (PyInstaller; torch is not bundled).
package: $(STAMP)
	PY=$(PY) packaging/build.sh

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache
