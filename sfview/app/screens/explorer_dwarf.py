"""DWARF CFI beside the rows (`d`): what `.eh_frame` says at each row's address, and the FDE it comes from.

A mixin of `ExplorerScreen`. The CFI is read in a worker thread on first use
(40,000 FDEs take seconds); then the FRE table and the instructions pane show
`=` where DWARF agrees with the row, else DWARF's rules, and a note under the
rows shows the function's DWARF FDE (its bytes and CFA instructions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sfview.errors import InputError
from sfview.inputs.elffile import section_bytes, section_named
from sfview.output import rule_notation
from sfview.sframe.model.rules import Rule
from sfview.sframe.model.section import Function, Row

if TYPE_CHECKING:
    from sfview.app.screens.explorer import ExplorerScreen

    _Base = ExplorerScreen
else:
    _Base = object

__all__ = ["DwarfBeside"]


class DwarfBeside(_Base):
    """`d`: DWARF's rules beside SFrame's."""

    def action_toggle_dwarf(self) -> None:
        """DWARF CFI beside each row, or not: read (in a thread: 40,000 FDEs take seconds) on first use."""
        if self.section is None or self.doc.elf is None:
            self.app.notify("Only an ELF file has DWARF CFI to compare with.", severity="warning")
            return
        if self.fre_table.dwarf is not None:
            self.fre_table.show_dwarf(None)
            self.code_table.show_dwarf(None)
            self.dwarf_note.remove_class("-shown")
            return
        if "cfi" in vars(self.doc):  # read already
            self._dwarf_read()
            return
        self._status("reading DWARF CFI (.eh_frame, .debug_frame)…")
        self.run_worker(self._read_dwarf, thread=True, exit_on_error=False)

    def _read_dwarf(self) -> None:
        try:
            _ = self.doc.cfi
        except Exception as exc:  # whatever the reader did not foresee: said on the status line, not "reading…"
            self.app.call_from_thread(self._status, f"DWARF CFI cannot be read: {type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._dwarf_read)

    def _dwarf_read(self) -> None:
        if self.doc.cfi is None:
            why = self.doc.cfi_error.message if self.doc.cfi_error is not None else "no .eh_frame or .debug_frame"
            self._status(f"DWARF CFI: {why}")
            self.app.notify(f"No DWARF CFI to show: {why}", severity="warning")
            return
        self.fre_table.show_dwarf(self._dwarf_beside)
        self.code_table.show_dwarf(self._dwarf_beside)
        self.dwarf_note.add_class("-shown")
        if self.fre_table.function is not None:
            self.dwarf_note.update(self._dwarf_fde(self.fre_table.function))
        self._status("DWARF CFI beside each row: `=` where it agrees with SFrame, else DWARF's rules (`d` hides it)")

    def _dwarf_fde(self, func: Function) -> str:
        """The DWARF FDE of the function: where, its bytes, and its CFA instructions (what SFrame replaced)."""
        table = self.doc.cfi
        cfi = table.find(func.start_address) if table is not None else None
        if cfi is None or self.doc.elf is None:
            return "DWARF: no FDE covers this function"
        try:
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

    def _dwarf_beside(self, func: Function, row: Row) -> str:
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
