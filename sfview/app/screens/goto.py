"""The dialogs that ask for something: an address or an offset, a symbol found by typing, bytes to search for.

Numbers are read by the one rule of `sfview.inputs.numbers`: hex, with or
without `0x`, because that is how every address and offset on screen (and in
readelf's output) is written; decimal with a trailing dot; names and numbers
added up. In a relocatable object an address can also be a place
(`.text+0x10`), since every function there starts at 0 until it is linked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from sfview.inputs.demangle import demangle
from sfview.inputs.numbers import evaluate, parse_number, typed_word
from sfview.inputs.symbols import Place, Symbol, SymbolSearch, SymbolTable
from sfview.output.safe_text import pictured

__all__ = ["GotoNumber", "GotoSymbol", "Prompt", "parse_address", "parse_number", "parse_pattern"]

T = TypeVar("T")

SYMBOLS_SHOWN = 40
"""Matches listed at once; typing more of the name narrows them."""


def parse_address(text: str, lookup: Callable[[str], int | Place | None], what: str) -> int | Place | str:
    """`0x1030`, `main`, `main+0x10`, `.text+0x10` → an address or a place, by the one number rule
    (`sfview.inputs.numbers`); else a sentence saying what is wrong, as the command line says it of a
    number that does not fit a machine word (negative, past 64 bits), naming `what`. `lookup` gives a
    name's address (or place)."""
    return typed_word(text, lookup, what)


def parse_pattern(text: str) -> bytes | str:
    """`e2 de` or `e2de` → those bytes; `"abc"` → the text's bytes; else a sentence saying what is wrong."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].encode() or "nothing between the quotes"
    try:
        found = bytes.fromhex(text.replace(" ", ""))
    except ValueError:
        return f"neither hex bytes (e2 de, e2de) nor text in quotes: {text!r}"
    return found or "type the bytes to look for"


class Prompt(ModalScreen[T | None], Generic[T]):
    """Ask for one line, read by `parse` (a value, or a sentence saying what is wrong); dismissed
    with the value, or with None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, hint: str, example: str, parse: Callable[[str], T | str], value: str = "") -> None:
        super().__init__(classes="goto")
        self.value = value
        """What the line holds to start with (the address a step asked for), to accept or change."""
        self.title_text = title
        self.hint = hint
        self.example = example
        self.parse = parse

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = Content(self.title_text)  # plain text: a field's path is not markup
            yield Label(self.hint, classes="goto-hint", markup=False)
            yield Input(self.value, placeholder=self.example, id="goto-input")
            yield Label("", id="goto-message", markup=False)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = self.parse(event.value)
        if isinstance(value, str):
            self.query_one("#goto-message", Label).update(value)
            return
        self.dismiss(value)


class GotoNumber(Prompt[int | Place]):
    """Ask for one hex number (with `lookup`, also a name, `name+offset`, or a place in a `.o`: a machine
    word, named `what` when it does not fit one)."""

    def __init__(
        self,
        title: str,
        hint: str,
        lookup: Callable[[str], int | Place | None] | None = None,
        value: str = "",
        what: str = "address",
    ) -> None:
        if lookup is None:
            super().__init__(title, hint, "hex, e.g. 0x1030 (decimal: 16.)", _number, value)
        else:
            example = "hex or a name: 0x1030, main, main+0x10"
            super().__init__(title, hint, example, lambda text: parse_address(text, lookup, what), value)


def _number(text: str) -> int | str:
    """A number (or numbers added up) by the rule, or a sentence saying what is wrong."""
    value = evaluate(text)
    assert not isinstance(value, Place)  # no lookup, no place
    return value


class GotoSymbol(ModalScreen[Symbol | None]):
    """Type part of a name, pick a function from the matches (exact and prefix matches first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("down", "focus_matches", "Matches", show=False),
    ]

    def __init__(self, symbols: SymbolTable, covered: Callable[[int], bool] | None = None) -> None:
        super().__init__(classes="goto")
        self.symbols = symbols
        self.search = SymbolSearch(symbols, covered)
        self.matches: list[Symbol] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = "Go to symbol"
            yield Label(f"Type part of a function name ({len(self.symbols)} names).", classes="goto-hint")
            yield Input(placeholder="name", id="goto-input")
            yield OptionList(id="goto-matches", markup=False)
            yield Label("", id="goto-message", markup=False)

    def on_mount(self) -> None:
        self._show_matches("")
        self.watch(self.query_one("#goto-input", Input), "value", self._show_matches, init=False)

    def _show_matches(self, text: str) -> None:
        """The matches for the line's text, shown in the handling of the key that changed it (a watch): on the
        line's `Changed` message they would come a frame after the letter, and Textual draws at most 60 frames
        a second: noticeably after the letter itself."""
        self.matches, count = self.search.find(text, SYMBOLS_SHOWN)
        options = self.query_one("#goto-matches", OptionList)
        options.clear_options()
        options.add_options(
            Option(Text.assemble((_shown(sym), "bold"), f"  {sym.address:#x}  {sym.size} bytes{_raw(sym)}"))
            for sym in self.matches
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


def _shown(symbol: Symbol) -> str:
    """The symbol's name as people read it (demangled), its control characters pictured: the terminal would obey
    them."""
    return pictured(demangle(symbol.name))


def _raw(symbol: Symbol) -> str:
    """`  _ZN2ns7throwerEv`: the stored name after a demangled one, so that either form can be recognised."""
    return f"  {pictured(symbol.name)}" if demangle(symbol.name) != symbol.name else ""
