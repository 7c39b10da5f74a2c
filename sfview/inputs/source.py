"""Opening an input: an ELF file, or a raw SFrame section on its own.

Whatever the input, the result is a `Source`: the section bytes, the address
they load at, where they sit in the file, the ELF file around them, and names
for addresses. Inputs know nothing of the format model: `document.Document`
builds the `Section` from `Source.data`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from sfview.errors import InputError
from sfview.generated.sframe import Sframe
from sfview.inputs import limits
from sfview.inputs.boundary import open_regular_file
from sfview.inputs.elf import ElfInfo, read_elf_sframe
from sfview.inputs.elfimage import ElfImage
from sfview.inputs.symbols import Place, SymbolTable

if TYPE_CHECKING:
    from sfview.inputs.elffile import ElfFile

ELF_MAGIC = b"\x7fELF"
SFRAME_MAGICS = tuple(int(Sframe.Magic.sframe).to_bytes(2, order) for order in ("little", "big"))
"""How a raw section starts, in either byte order."""


class Source:
    """The SFrame bytes of one input and what surrounds them."""

    def __init__(
        self,
        path: str,
        origin: str,
        data: bytes,
        address: int,
        file_offset: int,
        elf_info: ElfInfo | None = None,
        image: ElfImage | None = None,
        names: Callable[[], tuple[SymbolTable, dict[int, str], dict[int, Place]]] | None = None,
        cut: InputError | None = None,
        lost: list[InputError] | None = None,
    ) -> None:
        self.path = path
        self.origin = origin
        """`.sframe section`, `PT_GNU_SFRAME segment` or `raw section`."""
        self.data = data
        self.address = address
        self.file_offset = file_offset
        self.elf_info = elf_info
        """What the ELF header says (machine, type, class), for the header summary."""
        self.image = image
        """The ELF file (read with `struct`: headers, notes, sections), or None for a raw section."""
        self._names = names
        self.cut = cut
        """The file holds fewer bytes than the section says: `data` is what it holds."""
        self.lost = lost if lost is not None else []
        """What around the section could not be read, each with why (the names, the placement...):
        said once the command is done, costing only what depended on it."""

    @property
    def elf(self) -> ElfFile | None:
        """The ELF file as pyelftools reads it (opened on first use), or None for a raw section; an
        `InputError` naming the file when pyelftools cannot read its header."""
        if self.image is None:
            return None
        try:
            return self.image.library
        except InputError as exc:
            raise exc.located(self.path) from None

    @cached_property
    def _loaded_names(self) -> tuple[SymbolTable, dict[int, str], dict[int, Place]]:
        return self._names() if self._names else (SymbolTable(), {}, {})

    @property
    def symbols(self) -> SymbolTable:
        """Function symbols, read on first use (a text dump never needs them)."""
        return self._loaded_names[0]

    @property
    def relocated_names(self) -> dict[int, str]:
        """Relocatable objects: section offset of an FDE's start field → function name."""
        return self._loaded_names[1]

    @property
    def relocated_places(self) -> dict[int, Place]:
        """Relocatable objects: section offset of an FDE's start field → where its function is
        (`.text+0x40`): until the object is linked, every function starts at 0."""
        return self._loaded_names[2]

    def where(self, offset: int) -> str:
        """A section offset as a person wants it: also as a file offset."""
        if self.file_offset:
            return f"section offset {offset:#x} (file offset {self.file_offset + offset:#x})"
        return f"section offset {offset:#x}"

    def error(self, exc: InputError) -> InputError:
        """`exc` attributed to this file, its position named both ways."""
        where = self.where(exc.offset) if exc.offset is not None else None
        return exc.located(self.path, where)

    def name_at(self, address: int, fde_offset: int) -> str:
        """A function's name: by the relocation on its start field (section offset
        `fde_offset`) in a `.o`, else from the symbol table."""
        return self.relocated_names.get(fde_offset) or self.symbols.name_at(address)


def open_source(path: str, base: int | None = None) -> Source:
    """Read `path` as an ELF file or a raw section (`base`: its load address).

    Only a regular file is read: a FIFO would block for ever, a device such
    as /dev/zero never end. An ELF file is mapped and read where it is asked
    for, the section and what names it, not whole: a 2 GB sparse file costs nothing.
    """
    f = open_regular_file(path)  # an ELF file stays open: pyelftools may read it too, on demand
    try:
        head = f.read(4)
    except OSError as exc:
        f.close()
        raise InputError(exc.strerror or str(exc), path=path) from None
    if head[:2] in SFRAME_MAGICS:
        with f:
            size = os.fstat(f.fileno()).st_size
            try:
                limits.check_size(size, "bytes")
            except InputError as exc:
                raise InputError(f"a raw section of {exc.message}", path=path) from None
            data = head + f.read(size)
        return Source(path, "raw section", data, base or 0, 0)
    if head == ELF_MAGIC:
        f.seek(0)
        try:
            found = read_elf_sframe(f)
        except InputError as exc:
            f.close()
            raise exc.located(path) from None
        address = found.address if base is None else base
        return Source(
            path,
            found.origin,
            found.data,
            address,
            found.file_offset,
            found.info,
            found.image,
            found.names,
            found.cut,
            found.lost,
        )
    f.close()
    if not head:
        raise InputError("empty file", path=path)
    start = " ".join(f"{b:02x}" for b in head)
    raise InputError(f"neither an ELF file nor an SFrame section (it starts with {start})", path=path)
