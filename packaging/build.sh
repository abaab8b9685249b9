#!/usr/bin/env bash
# Build the one-folder desktop bundle (dist/cuda-clinic/) with PyInstaller, without torch,
# and install the desktop entry and icon for the current user with --install.
# Usage: packaging/build.sh [--install]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -c "import PyInstaller" 2>/dev/null || "$PY" -m pip install -q "pyinstaller>=6.10"
"$PY" -m core kb build --quiet  # the compiled KB ships inside resources/
"$PY" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller \
  packaging/cuda-clinic.spec
if find dist/cuda-clinic -iname 'libtorch*' -o -iname 'torch' -type d | grep -q .; then
  echo "build.sh: torch ended up in the bundle; it must not" >&2
  exit 1
fi
echo "built dist/cuda-clinic/cuda-clinic"
if [ "${1:-}" = "--install" ]; then
  # The desktop entry (Exec= this bundle) and the icon, under $XDG_DATA_HOME or ~/.local/share.
  dist/cuda-clinic/cuda-clinic gui --install-desktop
fi
