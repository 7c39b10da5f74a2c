"""Which FDE and which FRE a field belongs to, read from its path.

Field paths name their place the way the Kaitai objects do
(`fdes[12].fres[3].info`); the explorer uses that to keep the tables, the
tree and the hex pane on the same function and row.
"""

from __future__ import annotations

import re

_PATH = re.compile(r"fdes\[(\d+)\](?:\.fres\[(\d+)\])?")


def fde_and_row(path: str) -> tuple[int | None, int | None]:
    """(FDE index, FRE index) named by `path`; None for what it doesn't name.

    `fdes[12].fres[3].info` → (12, 3); `fdes[12].func_size` → (12, None);
    `header.num_fdes` → (None, None).
    """
    match = _PATH.match(path)
    if match is None:
        return None, None
    row = match.group(2)
    return int(match.group(1)), int(row) if row is not None else None
