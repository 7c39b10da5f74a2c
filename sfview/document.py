"""`Document`: the opened file, one object: its SFrame bytes, the model of them, and their surroundings.

Like pyelftools' `ELFFile`, a Document reads what it must to start (the file,
and where the SFrame bytes are: `inputs.opening`) and everything else lazily:
the `Section` model's parts, the field tree, the names, and pyelftools' view
of the ELF file (so that `.eh_frame`, notes and program headers stay
reachable). It holds the ELF image and that view side by side; neither knows
the other. The command line and the app both open a Document; whatever goes
wrong is located here, once, as an `InputError` that names the file and the byte.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from sfview.errors import InputError
from sfview.inputs.elf.names import FunctionNames
from sfview.inputs.opening import open_input
from sfview.inputs.symbols import SymbolTable
from sfview.sframe.model.section import Function, Section

if TYPE_CHECKING:
    from sfview.dwarf.compare import Placement
    from sfview.dwarf.tables import CfiTable
    from sfview.inputs.elf.image import ElfImage
    from sfview.inputs.elf.locate import Located
    from sfview.inputs.elf.pyelftools_view import ElfFile
    from sfview.inputs.symbols import Place


class Document:
    """An opened input: its SFrame bytes, the model of them, and their surroundings.

    Raises `InputError` (naming the file) only when there are no SFrame bytes
    to show at all; a section that cannot be modelled still opens, with
    `section` None and `error` saying why.
    """

    def __init__(self, path: str, found: Located) -> None:
        self.path = path
        self._found = found
        self.origin = found.origin
        """`.sframe section`, `PT_GNU_SFRAME segment` or `raw section`."""
        self.data = found.data
        """The section's bytes."""
        self.address = found.address
        """The address the section loads at."""
        self.file_offset = found.file_offset
        """Where the section starts in the file (0 for a raw section)."""
        self.image: ElfImage | None = found.image
        """The ELF file as `struct` reads it (headers, notes, sections), or None for a raw section."""
        self.section: Section | None = None
        self.error: InputError | None = None
        """The problem with the section as a whole, located: it could not be read at all
        (`section` is None) or only partly (more FDEs than fit)."""
        try:
            self.section = Section(self.data, self.address, self._relocated_starts())
        except InputError as exc:
            self.error = self.locate(exc)
        if self.section is not None and self.section.error is not None:
            self.error = self.locate(self.section.error)
        self.cfi_error: InputError | None = None
        """Why the DWARF CFI could not be read, once `cfi` has been asked for and is None."""
        if found.cut is not None:  # what is missing says more than what it leaves unreadable
            self.error = self.locate(found.cut)

    def _relocated_starts(self) -> dict[int, int]:
        """A relocatable object's start fields → where their relocations point (offsets in the sections
        they name); empty for anything else, and for a file whose relocations cannot be read (names are
        lost then, not the section)."""
        if not self.relocatable:
            return {}
        try:
            return {field: place.offset for field, place in self.relocated_places.items()}
        except InputError:
            return {}

    @classmethod
    def open(cls, path: str, base: int | None = None, raw: bool = False) -> Document:
        """Open `path`, an ELF file or a raw section (`base`: the address a raw section loads at; `raw`:
        any file that is not ELF is a section, whatever its first bytes)."""
        return cls(path, open_input(path, base, raw))

    def patched(self, data: bytes) -> Document:
        """The same file with its section's bytes replaced by `data` (as long: an edit), decoded afresh; the
        image, the names and what was lost are shared."""
        return Document(self.path, self._found._replace(data=data))

    def with_own_model(self) -> Document:
        """The same file with a `Section` model of its own, for a worker thread (a model's caches are not
        shared between threads); the image, the names and what was lost are shared."""
        return Document(self.path, self._found)

    # What surrounds the section -------------------------------------------

    @property
    def relocatable(self) -> bool:
        """Whether the file is a relocatable object (a `.o`): its functions all start at 0 until linked."""
        return self.image is not None and self.image.relocatable

    @cached_property
    def elf(self) -> ElfFile | None:
        """The ELF file as pyelftools reads it (opened on first use), or None for a raw section; an
        `InputError` naming the file when pyelftools cannot read its header."""
        if self.image is None:
            return None
        from sfview.inputs.elf.pyelftools_view import open_view  # pyelftools: not for a text dump

        try:
            return open_view(self.image)
        except InputError as exc:
            raise exc.located(self.path) from None

    @property
    def lost(self) -> list[InputError]:
        """What around the section could not be read (names, placement, CFI, build-id), located;
        each cost only what depended on it. Filled in as the parts are asked for."""
        return [self.locate(exc) for exc in self._found.lost]

    def note_loss(self, exc: InputError) -> None:
        """Record that `exc` cost a part of what surrounds the section (said once the command is done)."""
        self._found.lost.append(exc)

    @cached_property
    def _names(self) -> FunctionNames:
        """The names, read on first use (by any Document of this file: `Located.names` keeps them)."""
        if self._found.names is None:
            return FunctionNames(SymbolTable(), {}, {})
        return self._found.names()

    @property
    def symbols(self) -> SymbolTable:
        """Function symbols, read on first use (a text dump never needs them)."""
        return self._names.symbols

    @property
    def relocated_names(self) -> dict[int, str]:
        """Relocatable objects: section offset of an FDE's start field → function name."""
        return self._names.relocated_names

    @property
    def relocated_places(self) -> dict[int, Place]:
        """Relocatable objects: section offset of an FDE's start field → where its function is
        (`.text+0x40`): until the object is linked, every function starts at 0."""
        return self._names.relocated_places

    @cached_property
    def cfi(self) -> CfiTable | None:
        """The file's DWARF CFI (`.eh_frame`, `.debug_frame`) as numeric rules; None when it has none."""
        from sfview.dwarf.tables import read_cfi  # only the views that set SFrame beside DWARF need it

        if self.image is None:
            return None
        try:
            return read_cfi(self.image)
        except InputError as exc:
            self.cfi_error = exc
            self.note_loss(exc)
            return None

    @cached_property
    def placement(self) -> Placement | None:
        """For an object file, where each function of `.sframe` and of the DWARF CFI will be once
        linked (their relocations), to pair them; None for a linked file, whose addresses say it."""
        elf = self.elf
        if elf is None or not self.relocatable:
            return None
        assert self.image is not None
        from sfview.dwarf.compare import Placement
        from sfview.inputs.elf.names import relocated_places
        from sfview.inputs.elf.pyelftools_view import section_named_quietly

        cfi_places = {}
        for name in (".eh_frame", ".debug_frame"):
            try:
                cfi_places[name] = relocated_places(self.image, elf, name)
            except InputError as exc:
                if section_named_quietly(elf, name) is not None:  # a loss only where there is CFI to pair
                    self.note_loss(InputError(f"{name}'s functions not paired by their relocations: {exc.message}"))
                cfi_places[name] = {}
        return Placement(
            sframe=lambda func: self.relocated_places.get(func.span.start),
            dwarf=lambda cfi: cfi_places[cfi.section].get(cfi.location_offset),
        )

    # Asking ----------------------------------------------------------------

    def require_section(self) -> Section:
        """The section model, or the located error that kept it from being read."""
        if self.section is None:
            assert self.error is not None
            raise self.error
        return self.section

    def function_name(self, func: Function) -> str:
        """The function's name: by relocation in a `.o`, else from the symbol table, else ""."""
        return self.name_at(func.start_address, func.span.start)

    def name_at(self, address: int, fde_offset: int) -> str:
        """A function's name: by the relocation on its start field (section offset
        `fde_offset`) in a `.o`, else from the symbol table."""
        return self.relocated_names.get(fde_offset) or self.symbols.name_at(address)

    def where(self, offset: int) -> str:
        """A section offset as a person wants it: also as a file offset."""
        if self.file_offset:
            return f"section offset {offset:#x} (file offset {self.file_offset + offset:#x})"
        return f"section offset {offset:#x}"

    def locate(self, exc: InputError) -> InputError:
        """`exc` attributed to this file, its offset named as a section and a file offset."""
        where = self.where(exc.offset) if exc.offset is not None else None
        return exc.located(self.path, where)
