"""`python -m sfview`, the same as the `sfview` command."""

import sys

from sfview.entry import run

sys.exit(run())
