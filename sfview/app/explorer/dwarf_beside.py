"""DWARF CFI beside the rows (`d`): what `.eh_frame` says at each row's address, and the FDE it comes from.

The CFI is read in a worker thread on first use (40,000 FDEs take seconds);
then the FRE table and the instructions pane show `=` where DWARF agrees with
the row, else DWARF's rules, and a note under the rows shows the function's
DWARF FDE (its bytes and CFA instructions). The screen toggles the panes;
this says what they show.
"""

from __future__ import annotations

from sfview import rule_notation
from sfview.document import Document
from sfview.errors import InputError
from sfview.sframe.model.rules import Rule
from sfview.sframe.model.section import Function, Row, Section

__all__ = ["DwarfBeside"]


class DwarfBeside:
    """`d`: DWARF's rules beside SFrame's, for the section of `doc`."""

    def __init__(self, doc: Document, section: Section) -> None:
        self.doc = doc
        self.section = section

    @property
    def read(self) -> bool:
        """Whether the CFI has been read already (`Document.cfi` is read once)."""
        return "cfi" in vars(self.doc)

    def fde_text(self, func: Function) -> str:
        """The DWARF FDE of the function: where, its bytes, and its CFA instructions (what SFrame replaced)."""
        table = self.doc.cfi
        cfi = table.find(func.start_address) if table is not None else None
        if cfi is None or self.doc.elf is None:
            return "DWARF: no FDE covers this function"
        try:
            from sfview.inputs.elf.pyelftools_view import section_bytes, section_named  # `d` alone needs it

            frames = section_named(self.doc.elf, cfi.section)
            data = section_bytes(frames)[cfi.fde_offset : cfi.fde_offset + cfi.fde_size] if frames else b""
        except InputError:
            data = b""
        shown = data[:24].hex(" ") + (" …" if len(data) > 24 else "")
        steps = "; ".join(line.strip() for line in cfi.instructions.splitlines() if "nop" not in line)
        start = "; ".join(line.strip() for line in cfi.cie_instructions.splitlines() if "nop" not in line)
        return (
            f"DWARF: FDE at {cfi.section}+{cfi.fde_offset:#x}, {cfi.fde_size} bytes: {shown}\n"
            f"  CIE at +{cfi.cie_offset:#x}: {start}\n  FDE: {steps or '(no instructions)'}"
        )

    def beside(self, func: Function, row: Row) -> str:
        """`=` when DWARF CFI gives the same CFA, RA and FP at the row's first address, else what it says."""
        from sfview.dwarf.compare import equal

        table = self.doc.cfi
        address = func.start_address + row.start_offset
        cfi = table.find(address) if table is not None else None
        theirs = cfi.row_for(address) if cfi is not None else None
        if theirs is None:
            return "no FDE" if cfi is None else "no row"
        differ = [
            f"{name} {rule_notation.rule_text(self.section, theirs_rule) if isinstance(theirs_rule, Rule) else 'expr'}"
            for name, ours, theirs_rule in (
                ("CFA", row.cfa, theirs.cfa),
                ("FP", row.fp, theirs.fp),
                ("RA", row.ra, theirs.ra),
            )
            if not equal(ours, theirs_rule)
        ]
        return "≠ " + " ".join(differ) if differ else "="
