#!/usr/bin/env bash
# Build the one-folder desktop bundle (dist/cuda-clinic/) with PyInstaller, without torch,
# and install the desktop entry and icon for the current user with --install.
# Usage: packaging/build.sh [--install]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -m pip install -q "pyinstaller>=6.10"
"$PY" -m core kb build --quiet  # the compiled KB ships inside resources/
"$PY" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller \
  packaging/cuda-clinic.spec
if find dist/cuda-clinic -iname 'libtorch*' -o -iname 'torch' -type d | grep -q .; then
  echo "build.sh: torch ended up in the bundle; it must not" >&2
  exit 1
fi
echo "built dist/cuda-clinic/cuda-clinic"
if [ "${1:-}" = "--install" ]; then
  data=${XDG_DATA_HOME:-$HOME/.local/share}
  install -Dm644 packaging/cuda-clinic.desktop "$data/applications/cuda-clinic.desktop"
  sed -i "s|^Exec=.*|Exec=$PWD/dist/cuda-clinic/cuda-clinic|; s|^TryExec=.*|TryExec=$PWD/dist/cuda-clinic/cuda-clinic|" \
    "$data/applications/cuda-clinic.desktop"
  install -Dm644 resources/icons/cuda-clinic.svg "$data/icons/hicolor/scalable/apps/cuda-clinic.svg"
  install -Dm644 resources/icons/cuda-clinic-256.png "$data/icons/hicolor/256x256/apps/cuda-clinic.png"
  echo "installed the desktop entry and icon under $data"
fi
