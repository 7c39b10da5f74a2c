"""Opening an input: an ELF file, or a raw SFrame section on its own.

Whatever the input, the result is a `Located`: the section bytes, the address
they load at, where they sit in the file, and for an ELF file its image and
names. Inputs know nothing of the format model: `document.Document` holds
what is found here and builds the `Section` from its bytes.
"""

from __future__ import annotations

import os

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs import limits
from sfview.inputs.boundary import open_regular_file
from sfview.inputs.elf.image import ELF_MAGIC
from sfview.inputs.elf.locate import Located, read_elf_sframe

SFRAME_MAGICS = tuple(int(Sframe.Magic.sframe).to_bytes(2, order) for order in ("little", "big"))
"""How a raw section starts, in either byte order."""


def raw_section(data: bytes, address: int) -> Located:
    """SFrame bytes on their own (a raw section), loaded at `address`."""
    return Located(data, address, 0, "raw section", [])


def open_input(path: str, base: int | None = None, raw: bool = False) -> Located:
    """Read `path` as an ELF file or a raw section (`base`: its load address).

    A file that is not ELF is a raw section if it starts with the SFrame magic,
    or if `raw` (a caller that judges what it is given as a section: `check`,
    whose consumers refuse a damaged magic with their own errors) or `base` is
    given; else it is refused as neither.

    Only a regular file is read: a FIFO would block for ever, a device such
    as /dev/zero never end. An ELF file is mapped and read where it is asked
    for, the section and what names it, not whole: a large sparse file costs nothing.
    """
    f = open_regular_file(path)  # an ELF file stays open: pyelftools may read it too, on demand
    try:
        head = f.read(4)
    except OSError as exc:
        f.close()
        raise InputError(f"reading its first bytes fails: {exc.strerror or exc}", path=path) from None
    if head and head != ELF_MAGIC and (head[:2] in SFRAME_MAGICS or raw or base is not None):
        with f:
            size = os.fstat(f.fileno()).st_size
            try:
                limits.check_size(size, "bytes")
            except InputError as exc:
                raise InputError(f"a raw section of {exc.message}", path=path) from None
            data = head + f.read(size)
        return raw_section(data, base or 0)
    if head == ELF_MAGIC:
        f.seek(0)
        try:
            found = read_elf_sframe(f)
        except InputError as exc:
            f.close()
            raise exc.located(path) from None
        return found if base is None else found._replace(address=base)
    f.close()
    if not head:
        raise InputError("empty file", path=path)
    start = " ".join(f"{b:02x}" for b in head)
    raise InputError(f"neither an ELF file nor an SFrame section (it starts with {start})", path=path)
