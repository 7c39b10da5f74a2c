"""The most sfview reads of one thing (a raw section, an ELF section, an inflated stream).

Sizes in a file are claims: a small sparse file may say it is huge, a small
compressed section may inflate to hundreds of times its size, a header may
say anything. Nothing is read or allocated past `max_size` bytes
(`--max-size` changes it); real sections, even of very large programs, are
far below it.
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
