"""Navigation in the explorer: go to an address, a symbol or an offset, and back and forward.

A mixin of `ExplorerScreen` (which keeps the panes and the selection): every
jump lands in `History`, which `[`/`]` (also `alt+left`/`alt+right`,
`ctrl+o`) walk back and forward. In a relocatable object every function
starts at 0 until it is linked: there an address is looked for in the
functions' places (`.text+0x10`), and one that several functions hold is
listed, not guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sfview.app.screens.goto import GotoNumber, GotoSymbol
from sfview.app.selection import Selection
from sfview.inputs.symbols import Place, Symbol
from sfview.output import rule_notation
from sfview.sframe.model.section import Function

if TYPE_CHECKING:
    from sfview.app.screens.explorer import ExplorerScreen

    _Base = ExplorerScreen
else:
    _Base = object

__all__ = ["Navigation"]


class Navigation(_Base):
    """Go to an address, a symbol, an offset or a row; back and forward through the places jumped to."""

    def goto_address(self, target: int | Place | None) -> None:
        """Select the function an unwinder would use for `target`, and its row (PCMASK included).

        In a relocatable object every function starts at 0 until it is linked:
        there the address is looked for in the functions' places (`.text+0x10`),
        and one that several functions hold is not guessed at.
        """
        if target is None:
            return
        if self.section is None:
            self.app.notify("The section could not be read: there are no functions.", severity="error")
            return
        if isinstance(target, Place) or self.names.relocatable:
            self._goto_in_object(target)
            return
        func = self.section.find_function(target)
        if func is None:
            self.app.notify(f"No function covers {target:#x}{self._neighbours(target)}.", severity="warning")
            return
        self._goto_row(func, target, f"{target:#x}")

    def _goto_in_object(self, target: int | Place) -> None:
        """Go to an address of a relocatable object: a place, or an offset that one function alone holds."""
        address, section = (target.offset, target.section) if isinstance(target, Place) else (target, None)
        where = str(target) if isinstance(target, Place) else f"{address:#x}"
        found = self.names.holding(address, section)
        if not found:
            self.app.notify(f"No function of this object covers {where}.", severity="warning")
            return
        if len(found) > 1:
            self._ambiguous(where, found)
            return
        func, place = found[0]
        start = self.names.place_of(func)
        assert start is not None  # `holding` only finds functions with a place
        self._goto_row(func, func.start_address + place.offset - start.offset, str(place))

    def _ambiguous(self, where: str, found: list[tuple[Function, Place]]) -> None:
        """Say which functions hold an address of a `.o`, and how to name the one meant."""
        listed = "; ".join(f"{place} in {self.names.of(func) or '?'} (fdes[{func.index}])" for func, place in found)
        self.app.notify(
            f"{where} is ambiguous: in a relocatable object every function starts at 0 until it is linked. "
            f"It is {listed}. Name the section (.text+0x10) or the function (main+0x10).",
            title="Which function?",
            severity="warning",
            timeout=15,
        )
        self._status(f"{where}: ambiguous, {len(found)} functions hold it: {listed}")

    def _goto_row(self, func: Function, pc: int, where: str) -> None:
        """Jump to the row of `func` that holds `pc`, saying where `where` (what was typed) landed."""
        row = func.row_for(pc)
        if row is None:
            self._jump(Selection(func.index, None, self.fields.function_field(func.index)))
            self._status(f"{where}: fdes[{func.index}], but none of its rows covers it")
            return
        self._jump(Selection(func.index, row.index, self._row_field(func.index, row.index)))
        self.code_table.show_row(row.index, pc)
        name = self.names.of(func)
        rules = rule_notation.rules_text(self.section, row)
        status = f"{where} → fdes[{func.index}]{f' {name}' if name else ''}, FRE {row.index}: {rules}"
        if func.pcmask:
            offset = (pc - func.start_address) % (func.block_size or 1 << 64)
            status += f" (PCMASK: offset {offset:#x} in the repeated block)"
        self._status(status)

    def goto_symbol(self, symbol: Symbol | None) -> None:
        if symbol is None:
            return
        self.goto_address(self.names.named(symbol.name) if self.names.relocatable else symbol.address)

    def goto_offset(self, offset: int | None) -> None:
        """Put the hex cursor on section offset `offset` and select the field there."""
        if offset is None:
            return
        size, file_offset = len(self.source.data), self.source.file_offset
        said = ""
        if not 0 <= offset < size and file_offset and file_offset <= offset < file_offset + size:
            said = f"file offset {offset:#x} = section offset {offset - file_offset:#x}: "
            offset -= file_offset  # a file offset (as `check` prints them too) inside the section
        if not 0 <= offset < size:
            files = f", or file offsets {file_offset:#x}..{file_offset + size - 1:#x}" if file_offset else ""
            self.app.notify(f"{offset:#x} is outside the section (0..{size - 1:#x}{files}).", severity="warning")
            return
        self.hex_view.focus()
        self.hex_view.move_cursor(offset, notify=False)
        if self.section is not None:
            self._record(Selection.of(self.fields.field_at(offset)))
        self._hex_moved(offset)
        if said:
            self._status(said + self._status_shown)

    def _neighbours(self, pc: int) -> str:
        """`: between main (ends 0x108b) and small_leaf (0x1180)`, the functions around an address no FDE covers."""
        before, after = self.section.around(pc)
        parts = []
        if before is not None:
            parts.append(f"after {self.names.of(before) or f'fdes[{before.index}]'} (ends {before.end_address:#x})")
        if after is not None:
            parts.append(f"before {self.names.of(after) or f'fdes[{after.index}]'} ({after.start_address:#x})")
        return ": " + ", ".join(parts) if parts else ""

    def action_goto_address(self) -> None:
        hint = "The function and row an unwinder uses for a PC."
        if self.names.relocatable:
            hint += " In this .o every function starts at 0: name the section (.text+0x10) or the function."
        self.app.push_screen(GotoNumber("Go to address", hint, self._lookup), self.goto_address)

    def _lookup(self, name: str) -> int | Place | None:
        """A name's address, or in a relocatable object its place (a function's or a section's)."""
        if self.names.relocatable:
            return self.names.named(name)
        symbol = self.source.symbols.named(name)
        return symbol.address if symbol is not None else None

    def action_goto_symbol(self) -> None:
        symbols = self.names.relocated_symbols if self.names.relocatable else self.source.symbols
        if not len(symbols):
            self.app.notify("This file has no function names (stripped?).", severity="warning")
            return
        self.app.push_screen(GotoSymbol(symbols), self.goto_symbol)

    def action_goto_offset(self) -> None:
        hint = "The field that holds a byte of the section: a section offset, or a file offset inside it."
        prompt = GotoNumber("Go to offset", hint)
        self.app.push_screen(prompt, self.goto_offset)

    def show_row(self, fde: int, fre: int | None) -> None:
        """Select function `fde` (and its row `fre`) in every pane: how other screens point at the section."""
        if self.section is None:
            return
        field = self._row_field(fde, fre) if fre is not None else self.fields.function_field(fde)
        self._jump(Selection(fde, fre, field))

    def _record(self, selection: Selection) -> None:
        """A jump to `selection`: the place left and the place reached go into the history."""
        if self.selected is not None:
            self.history.jump(self.selected, selection)

    def _jump(self, selection: Selection) -> None:
        """Select `selection` in every pane, as a jump (kept in the history)."""
        self._record(selection)
        self._select(selection, origin=None)

    def action_back(self) -> None:
        self._walk_history(self.history.back, "back")

    def action_forward(self) -> None:
        self._walk_history(self.history.forward, "forward")

    def _walk_history(self, move: Callable[[Selection], Selection | None], word: str) -> None:
        """Back or forward one place in the history; at either end, say so."""
        if self.selected is None:
            return
        place = move(self.selected)
        if place is None:
            self.app.bell()
            self._status(f"nothing further {word} in the history")
            return
        self._select(place, origin=None)
        self._status(f"{word} ({self.history.position}): {self._status_text(place)}")
