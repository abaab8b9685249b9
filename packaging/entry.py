"""Entry point of the PyInstaller bundle: the whole `cuda-clinic` command line (no arguments:
the desktop app), with the user's library path given back to the processes it starts."""

import sys

from core.paths import restore_child_environment

# First, before anything can start a child: PyInstaller's bootloader put the bundle's folder
# on LD_LIBRARY_PATH, which target interpreters must not inherit.
restore_child_environment()

from gui.cli import main  # noqa: E402

sys.exit(main())
