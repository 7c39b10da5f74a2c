"""The go-to dialogs: a number (an address, a section offset), or a symbol found by typing.

Numbers are read as hex, with or without `0x`, because that is how every
address and offset on screen (and in readelf's output) is written.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from sfview.inputs.symbols import Symbol, SymbolSearch, SymbolTable

__all__ = ["GotoNumber", "GotoSymbol", "parse_number"]

SYMBOLS_SHOWN = 40
"""Matches listed at once; typing more of the name narrows them."""


def parse_address(text: str, symbols: SymbolTable) -> int | str:
    """`0x1030`, `main`, `main+0x10` (or `main+16`) → an address; else a sentence saying what is wrong."""
    number = parse_number(text)
    if number is not None:
        return number
    name, plus, offset = text.strip().partition("+")
    symbol = symbols.named(name.strip())
    if symbol is None:
        return f"neither a hex number nor a function name: {text.strip()!r}"
    if not plus:
        return symbol.address
    try:
        return symbol.address + int(offset.strip(), 0)
    except ValueError:
        return f"{offset.strip()!r} is not an offset (write main+0x10 or main+16)"


def parse_number(text: str) -> int | None:
    """`0x1030`, `1030` or `0000000000001030` → 0x1030; None if it is not hex."""
    text = text.strip().lower().removeprefix("0x")
    try:
        return int(text, 16) if text else None
    except ValueError:
        return None


class GotoNumber(ModalScreen[int | None]):
    """Ask for one hex number; dismissed with it, or with None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, hint: str, symbols: SymbolTable | None = None) -> None:
        super().__init__(classes="goto")
        self.title_text = title
        self.hint = hint
        self.symbols = symbols
        """Names to accept besides numbers (`main`, `main+0x10`), for addresses."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Label(self.hint, classes="goto-hint")
            example = "hex or a name: 0x1030, main, main+0x10" if self.symbols is not None else "hex, e.g. 0x1030"
            yield Input(placeholder=example, id="goto-input")
            yield Label("", id="goto-message")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = parse_address(event.value, self.symbols) if self.symbols is not None else parse_number(event.value)
        if value is None or isinstance(value, str):
            self.query_one("#goto-message", Label).update(value or f"not a hex number: {event.value!r}")
            return
        self.dismiss(value)


class GotoSymbol(ModalScreen[Symbol | None]):
    """Type part of a name, pick a function from the matches (exact and prefix matches first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("down", "focus_matches", "Matches", show=False),
    ]

    def __init__(self, symbols: SymbolTable) -> None:
        super().__init__(classes="goto")
        self.symbols = symbols
        self.search = SymbolSearch(symbols)
        self.matches: list[Symbol] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = "Go to symbol"
            yield Label(f"Type part of a function name ({len(self.symbols)} names).", classes="goto-hint")
            yield Input(placeholder="name", id="goto-input")
            yield OptionList(id="goto-matches")
            yield Label("", id="goto-message")

    def on_mount(self) -> None:
        self._show_matches("")

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._show_matches(event.value)

    def _show_matches(self, text: str) -> None:
        self.matches, count = self.search.find(text, SYMBOLS_SHOWN)
        options = self.query_one("#goto-matches", OptionList)
        options.clear_options()
        options.add_options(
            Option(Text.assemble((sym.name, "bold"), f"  {sym.address:#x}  {sym.size} bytes")) for sym in self.matches
        )
        if self.matches:
            options.highlighted = 0
        more = count - SYMBOLS_SHOWN
        message = f"{more} more: type more of the name" if more > 0 else "" if self.matches else "no match"
        self.query_one("#goto-message", Label).update(message)

    def action_focus_matches(self) -> None:
        self.query_one("#goto-matches", OptionList).focus()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        highlighted = self.query_one("#goto-matches", OptionList).highlighted
        if self.matches:
            self.dismiss(self.matches[highlighted or 0])

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.matches[event.option_index])
