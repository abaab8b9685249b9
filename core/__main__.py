"""`python -m core`: the headless commands, usable where Qt is not installed."""

import sys

from core.cli import main

sys.exit(main())
