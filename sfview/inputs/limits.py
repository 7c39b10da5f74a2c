"""The most sfview reads of one thing (a raw section, an ELF section, an inflated stream).

Sizes in a file are claims: a 4 KB sparse file may say it is 1 GB, a 180 KB
compressed section may inflate to 64 MB, a header may say 1 TB. Nothing is
read or allocated past `max_size` bytes (`--max-size` changes it); real
sections are far below it (40,000 functions take about 1 MB of SFrame).
"""

from __future__ import annotations

from sfview.errors import InputError

DEFAULT_MAX_SIZE = 256 << 20
max_size = DEFAULT_MAX_SIZE
"""The limit for this process: one command runs per process, and `--max-size` sets it once at its start."""


def check_size(size: int, what: str) -> None:
    """Refuse `size` `what` (`bytes`, `bytes once inflated`) over the limit, before reading them."""
    if size > max_size:
        raise InputError(f"{size} {what}, more than sfview reads ({max_size}; --max-size raises it)")
