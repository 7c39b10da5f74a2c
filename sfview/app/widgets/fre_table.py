"""`FreTable`: the frame row entries (FREs) of the selected function.

Its rows change with every function chosen; a `RowTable` takes new rows
without measuring them, and without a new layout when their number is the
same as before (which, moving from function to function, it usually is).
"""

from __future__ import annotations

from collections.abc import Callable

from sfview.app.widgets.row_table import Column, RowTable
from sfview.sframe import describe
from sfview.sframe.section import Function, Row

__all__ = ["FreTable"]

DWARF_COLUMN = Column("DWARF", 5, flex_to=40)


class FreTable(RowTable):
    """One row per FRE: where it starts, its CFA/FP/RA rules, how it is encoded, its bytes."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.function: Function | None = None
        self.dwarf: Callable[[Function, Row], str] | None = None
        """What DWARF CFI says at a row's address, beside it (`=` when it agrees); None: no such column."""
        self.columns = [
            Column("#", 3, right=True),
            Column("start", 6),
            Column("CFA", 9),
            Column("FP", 5),
            Column("RA", 5),
            Column("base", 4),
            Column("off.size", 8, right=True),
            Column("mangled", 7),
            Column("bytes", 14, flex_to=48),
        ]

    @property
    def row_count(self) -> int:
        return len(self.function.rows) if self.function is not None else 0

    def row_cells(self, index: int) -> tuple[str, ...]:
        func = self.function
        assert func is not None
        row = func.rows[index]
        return (
            str(row.index),
            f"{row.address:#x}" + (" [m]" if func.pcmask else ""),
            describe.app_cfa(func.section, row.cfa),
            describe.app_saved(func.section, row.fp),
            describe.app_saved(func.section, row.ra),
            *([self.dwarf(func, row)] if self.dwarf is not None else []),
            describe.BASE_REG_NAMES[row.base_reg],
            str(row.offset_size),
            "yes" if row.mangled_ra else "no",
            func.section.data[row.span.start : row.span.end].hex(" "),
        )

    def show_dwarf(self, dwarf: Callable[[Function, Row], str] | None) -> None:
        """Show (or, with None, hide) a column with DWARF's rules at each row's address."""
        had = self.dwarf is not None
        self.dwarf = dwarf
        if had != (dwarf is not None):
            if dwarf is not None:
                self.columns.insert(5, DWARF_COLUMN)
            else:
                self.columns.remove(DWARF_COLUMN)
        self.rows_changed()
        self.refresh()

    def show_function(self, func: Function) -> bool:
        """Show `func`'s rows (decoding them if this is the first look), cursor on the first.

        Returns whether the table changed size (see `RowTable.rows_changed`).
        """
        if func is self.function:
            return False
        self.function = func
        self._widen_start(func)
        return self.rows_changed()

    def _widen_start(self, func: Function) -> None:
        """Make the start column wide enough for this function's addresses (it never narrows)."""
        width = len(f"{func.end_address:#x}") + (len(" [m]") if func.pcmask else 0)
        start = self.columns[1]
        if width > start.width:
            self.columns[1] = Column(start.title, width)
