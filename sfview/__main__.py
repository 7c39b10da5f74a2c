"""`python -m sfview`, the same as the `sfview` command."""

import sys

from sfview.cli import run

sys.exit(run())
