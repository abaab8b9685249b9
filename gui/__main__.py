"""`python -m gui [--screenshot PNG] [--page NAME]` starts the app (also the frozen entry)."""

import sys

from gui.cli import main

sys.exit(main(["gui", *sys.argv[1:]]))
