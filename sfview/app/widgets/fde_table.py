"""`FdeTable`: one row per function (FDE), drawn only where it is visible.

The table's height is the FDE count, but a row's cells are computed (from the
model's lazily decoded `Function`) only when the row is drawn, so 40,000
functions cost nothing until they are scrolled to. Column widths come from the
section (its address range, its FDE count), not from the cells; the symbol
column takes the width that is left.
"""

from __future__ import annotations

from textual.cache import LRUCache

from sfview.app.names import Names
from sfview.app.widgets.row_table import Column, RowTable
from sfview.check.catalogue import Severity
from sfview.sframe import describe
from sfview.sframe.section import Section

__all__ = ["FdeTable"]


class FdeTable(RowTable):
    """The section's FDEs: address range, size, name, FRE count and encoding of each."""

    def __init__(self, section: Section, names: Names, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.section = section
        self.names = names
        self._cells: LRUCache[int, tuple[str, ...]] = LRUCache(2048)
        self.columns = self._columns()
        self.problems: dict[int, Severity] = {}
        """Functions the validator found problems in (their worst severity), flagged in the notes column."""

    @property
    def row_count(self) -> int:
        return len(self.section)

    def row_cells(self, index: int) -> tuple[str, ...]:
        """The texts of row `index`, decoding that FDE (only) if needed."""
        cells = self._cells.get(index)
        if cells is None:
            cells = self._cells[index] = self._make_cells(index)
        return cells

    def names_changed(self) -> None:
        """The names have arrived: draw the rows again with them."""
        self._cells.clear()
        self.refresh()

    def problems_changed(self, problems: dict[int, Severity]) -> None:
        """The validator has found problems in these functions: flag them in the notes column."""
        self.problems = problems
        self._cells.clear()
        self.refresh()

    def row_is_error(self, index: int) -> bool:
        return self.section.function(index).error is not None or self.problems.get(index) is Severity.ERROR

    def _columns(self) -> list[Column]:
        """Widths from the section: enough digits for its addresses and its FDE count."""
        section = self.section
        edges = [section.address + len(section.data)]
        for index in {0, len(section) - 1} if len(section) else ():
            func = section.function(index)
            edges += [func.start_address, func.end_address]
        address = 2 + len(f"{max(edges):x}")
        return [
            Column("#", max(1, len(str(max(len(section) - 1, 0)))), right=True),
            Column("start", address),
            Column("end", address),
            Column("size", 6, right=True),
            Column("symbol", 12, flex_to=64),
            Column("FREs", 5, right=True),
            Column("FRE type", 8),
            Column("PC type", 7),
            Column("key", 3),
            Column("notes", 8),
        ]

    def _make_cells(self, index: int) -> tuple[str, ...]:
        func = self.section.function(index)
        problem = self.problems.get(index)
        notes = (
            "error" if func.error or problem is Severity.ERROR
            else "warning" if problem is Severity.WARNING
            else "signal" if func.signal
            else "flexible" if func.fde_type == 1
            else ""
        )  # fmt: skip
        name = f"{func.error}" if func.error else self.names.of(func)
        return (
            str(index),
            f"{func.start_address:#x}",
            f"{func.end_address:#x}",
            str(func.size),
            name,
            str(func.num_fres),
            describe.FRE_TYPE_NAMES.get(func.fre_type, str(func.fre_type)),
            describe.PC_TYPE_NAMES.get(func.pc_type, str(func.pc_type)),
            describe.PAUTH_KEY_NAMES.get(func.pauth_key, "?"),
            notes,
        )
