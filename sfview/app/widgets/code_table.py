"""`CodeTable`: the selected function's instructions, each on the row (FRE) that holds it.

Shown in place of the FRE table (`i`), with the same place in the stack of
tables and the same cursor: moving over the instructions moves through the
rows, and a row chosen elsewhere puts the cursor on its first instruction.
The first instruction of each row carries what the row changed (`▶ 1: CFA
sp+8 → sp+16`), so the instruction just above it is the one that made the
row; DWARF's rules at that row are beside it while `d` shows them.

The listing comes from `sfview.code.disasm`; it is made only for a function
shown while the table is (`show_function` on a hidden table only remembers
the function), one function at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sfview.app.widgets.row_table import Column, RowTable
from sfview.document import Document
from sfview.output.safe_text import pictured
from sfview.sframe.bulk.overview import Overview
from sfview.sframe.model.section import Function, Row

if TYPE_CHECKING:
    from sfview.code.disasm import Listing

__all__ = ["CodeTable"]

INSTRUCTION_WIDTH = 34
"""Cells for an instruction's text (most fit; longer ones are cut when the table is narrow)."""
INSTRUCTION_AT_LEAST = 16
BYTES_SHOWN = 7
"""Code bytes shown at most (x86 instructions run to 15): the hex pane is the SFrame section's, not the code's."""


class CodeTable(RowTable):
    """One line per instruction: its row, address, bytes, text, and on a row's first, what the row changed."""

    size_lays_out = False  # its share of the stack is fixed (`TableStack`): a new function only repaints

    def __init__(self, doc: Document, overview: Overview, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.doc = doc
        self.function: Function | None = None
        self.listing: Listing | None = None
        self.dwarf: Callable[[Function, Row], str] | None = None
        """What DWARF CFI says at a row's address, on the row's first instruction; None: no such column."""
        self._change_width = len("row")
        self._fixed = [
            Column.fitting("#", [str(max(overview.most_rows - 1, 0))], right=True),
            Column.fitting("address", [f"{overview.last_address:#x}"]),
            Column("bytes", BYTES_SHOWN * 3 - 1, optional=True),
            Column("instruction", INSTRUCTION_WIDTH, yields_to=INSTRUCTION_AT_LEAST),
        ]
        self.columns = self._make_columns()

    def _make_columns(self) -> list[Column]:
        dwarf = [Column("DWARF", 24)] if self.dwarf is not None else []
        return [*self._fixed, Column("row", self._change_width), *dwarf]

    @property
    def row_count(self) -> int:
        if self.listing is None:
            return 0
        return len(self.listing.instructions) or 1  # the line that says why there is no code

    def row_cells(self, index: int) -> tuple[str, ...]:
        assert self.listing is not None and self.function is not None
        dwarf = ("",) if self.dwarf is not None else ()
        if not self.listing.instructions:
            return ("", "", "", self.listing.missing, "", *dwarf)
        ins = self.listing.instructions[index]
        code = ins.code[:BYTES_SHOWN].hex(" ") + ("…" if len(ins.code) > BYTES_SHOWN else "")
        first = bool(ins.change) and ins.row is not None
        if self.dwarf is not None:
            dwarf = (self.dwarf(self.function, self.function.rows[ins.row]) if first else "",)
        row = str(ins.row) if first else ""
        # a call's target named by the file's symbols (`<name>`): pictured, as every name the explorer shows
        return (row, f"{ins.address:#x}", code, pictured(ins.text), ins.change, *dwarf)

    def row_is_error(self, index: int) -> bool:
        listing = self.listing
        return listing is not None and (not listing.instructions or listing.instructions[index].row is None)

    def show_function(self, func: Function) -> bool:
        """The instructions of `func` (disassembled now if the table shows, else when it is next shown).

        Returns whether the screen must be laid out again: never, as the table's height is its share of
        the stack whatever it holds (`TableStack.share`), so that `n` repaints the panes and lays out
        nothing (a layout of the whole screen for each function would be a good part of the key).
        """
        if func is self.function and self.listing is not None:
            return False
        self.function = func
        self.listing = None
        if not self.display:
            return False
        from sfview.code.disasm import listing  # Capstone loads on the first look, not at start-up

        self.listing = listing(self.doc, func)
        widest = max((len(ins.change) for ins in self.listing.instructions.changes()), default=0)
        if widest > self._change_width:  # it never narrows: the columns stay put from one function to the next
            self._change_width = widest
            self.columns = self._make_columns()
        self.rows_changed()
        return False

    def show_dwarf(self, dwarf: Callable[[Function, Row], str] | None) -> None:
        """Show (or, with None, hide) DWARF's rules on each row's first instruction."""
        self.dwarf = dwarf
        self.columns = self._make_columns()
        self.refresh()

    def fre_at(self, line: int) -> int | None:
        """The row (FRE index) instruction `line` is on."""
        if self.listing is None or not 0 <= line < len(self.listing.instructions):
            return None
        return self.listing.instructions[line].row

    def _scroll_cursor_into_view(self) -> None:
        """The cursor's line in view, and the line above it: on a row's first instruction, that is the
        instruction that made the row (a row chosen elsewhere put its first line at the top, the `push`
        that made it scrolled away)."""
        super()._scroll_cursor_into_view()
        above = max(self.cursor - 1, 0)
        if above < self.scroll_offset.y:
            self.scroll_to(y=above, animate=False, immediate=True)

    def show_row(self, fre: int, address: int | None = None) -> None:
        """The cursor on the instruction at `address` if given, else on the first of row `fre`, quietly;
        left where it is when it is on that row already."""
        if self.listing is None:
            return
        line = self.listing.line_of(address) if address is not None else None
        if line is None:
            if self.fre_at(self.cursor) == fre:
                return
            line = self.listing.first_of_row(fre)
        if line is not None:
            self.move_cursor(line, notify=False)
