"""`Document`: one input, opened once, its parts handed out as they are asked for.

Like pyelftools' `ELFFile`, a Document reads what it must to start (the file,
and where the SFrame bytes are) and everything else lazily: the `Section`
model, the field tree, the symbols, and the ELF file itself (so that
`.eh_frame`, notes and program headers stay reachable). The command line and
the app both open a Document; whatever goes wrong is located here, once, as
an `InputError` that names the file and the byte.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from sfview.errors import InputError
from sfview.inputs.source import Source, open_source
from sfview.sframe.model.section import Function, Section

if TYPE_CHECKING:
    from elftools.elf.elffile import ELFFile

    from sfview.app.fields import FieldTree
    from sfview.dwarf.cfi import CfiTable
    from sfview.dwarf.compare import Placement
    from sfview.inputs.elfimage import ElfImage
    from sfview.inputs.symbols import SymbolTable


class Document:
    """An opened input: its SFrame bytes, the model of them, and their surroundings.

    Raises `InputError` (naming the file) only when there are no SFrame bytes
    to show at all; a section that cannot be modelled still opens, with
    `section` None and `error` saying why.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self.path = source.path
        self.section: Section | None = None
        self.error: InputError | None = None
        """The problem with the section as a whole, located: it could not be read at all
        (`section` is None) or only partly (more FDEs than fit)."""
        try:
            self.section = Section(self.source.data, self.source.address, self._relocated_starts())
        except InputError as exc:
            self.error = self.locate(exc)
        if self.section is not None and self.section.error is not None:
            self.error = self.locate(self.section.error)
        self.cfi_error: InputError | None = None
        """Why the DWARF CFI could not be read, once `cfi` has been asked for and is None."""
        if source.cut is not None:  # what is missing says more than what it leaves unreadable
            self.error = self.locate(source.cut)

    def _relocated_starts(self) -> dict[int, int]:
        """A relocatable object's start fields → where their relocations point (offsets in the sections
        they name); empty for anything else, and for a file whose relocations cannot be read (names are
        lost then, not the section)."""
        info = self.source.elf_info
        if info is None or info.elf_type != "ET_REL":
            return {}
        try:
            return {field: place.offset for field, place in self.source.relocated_places.items()}
        except InputError:
            return {}

    @classmethod
    def open(cls, path: str, base: int | None = None) -> Document:
        """Open `path`, an ELF file or a raw section (`base`: the address a raw section loads at)."""
        return cls(open_source(path, base))

    # What surrounds the section -------------------------------------------

    @property
    def data(self) -> bytes:
        """The section's bytes."""
        return self.source.data

    @property
    def elf(self) -> ELFFile | None:
        """The ELF file (pyelftools, opened on first use), or None for a raw section."""
        return self.source.elf

    @property
    def image(self) -> ElfImage | None:
        """The ELF file as `struct` reads it (headers, notes, sections), or None for a raw section."""
        return self.source.image

    @property
    def lost(self) -> list[InputError]:
        """What around the section could not be read (names, placement, CFI, build-id), located;
        each cost only what depended on it. Filled in as the parts are asked for."""
        return [self.locate(exc) for exc in self.source.lost]

    def note_loss(self, exc: InputError) -> None:
        """Record that `exc` cost a part of what surrounds the section (said once the command is done)."""
        self.source.lost.append(exc)

    @property
    def symbols(self) -> SymbolTable:
        """Function symbols, read on first use (a text dump never needs them)."""
        return self.source.symbols

    @cached_property
    def cfi(self) -> CfiTable | None:
        """The file's DWARF CFI (`.eh_frame`, `.debug_frame`) as numeric rules; None when it has none."""
        from sfview.dwarf.cfi import read_cfi  # only the views that set SFrame beside DWARF need it

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
        if elf is None or elf["e_type"] != "ET_REL":
            return None
        from sfview.dwarf.compare import Placement
        from sfview.inputs.elf import relocated_places
        from sfview.inputs.elffile import section_named_quietly

        cfi_places = {}
        for name in (".eh_frame", ".debug_frame"):
            try:
                cfi_places[name] = relocated_places(elf, name)
            except InputError as exc:
                if section_named_quietly(elf, name) is not None:  # a loss only where there is CFI to pair
                    self.note_loss(InputError(f"{name}'s functions not paired by their relocations: {exc.message}"))
                cfi_places[name] = {}
        return Placement(
            sframe=lambda func: self.source.relocated_places.get(func.span.start),
            dwarf=lambda cfi: cfi_places[cfi.section].get(cfi.location_offset),
        )

    @cached_property
    def fields(self) -> FieldTree:
        """The section as a tree of fields, for people learning the format."""
        from sfview.app.fields import FieldTree  # the debug parser: only the app and `check` need it

        return FieldTree(self.require_section())

    # Asking ----------------------------------------------------------------

    def require_section(self) -> Section:
        """The section model, or the located error that kept it from being read."""
        if self.section is None:
            assert self.error is not None
            raise self.error
        return self.section

    def function_name(self, func: Function) -> str:
        """The function's name: by relocation in a `.o`, else from the symbol table, else ""."""
        return self.source.name_at(func.start_address, func.span.start)

    def locate(self, exc: InputError) -> InputError:
        """`exc` attributed to this file, its offset named as a section and a file offset."""
        return self.source.error(exc)
