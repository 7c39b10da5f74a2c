"""sfview's commands in Textual's command palette (`ctrl+p`), for the screen on top.

Each screen offers its own: over the explorer, navigation, and what is typed
tried as a hex number (go to that address or section offset) and as part of a
function name. The palette asks `self.screen`, the screen it was opened over.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from sfview.app.screens.goto import parse_number
from sfview.app.widgets.fde_table import COLUMNS
from sfview.inputs.numbers import fitting
from sfview.output.safe_text import pictured

if TYPE_CHECKING:
    from sfview.app.explorer.screen import ExplorerScreen

__all__ = ["SfviewCommands"]

SYMBOL_HITS = 10
"""Names offered for what is typed; the go-to-symbol dialog lists more."""


class SfviewCommands(Provider):
    """Navigation commands, plus typed addresses, offsets and names."""

    @property
    def explorer(self) -> ExplorerScreen | None:
        """The explorer, when the palette was opened over it."""
        from sfview.app.explorer.screen import ExplorerScreen

        return self.screen if isinstance(self.screen, ExplorerScreen) else None

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from sfview.app.explorer.panes import Tab

        explorer = self.explorer
        if explorer is None:
            return []
        return [
            ("Go to address…", explorer.action_goto_address, "the function and row an unwinder uses for a PC"),
            ("Go to symbol…", explorer.action_goto_symbol, "find a function by name"),
            ("Go to section offset…", explorer.action_goto_offset, "the field that holds a byte"),
            ("Next function", explorer.action_next_function, "the FDE after the selected one"),
            ("Previous function", explorer.action_previous_function, "the FDE before the selected one"),
            ("Filter functions…", explorer.action_filter, "by name, or pcmask, flex, signal, key:a, key:b, problems"),
            *(
                (f"Sort functions by {spec.title}", partial(explorer.sort_functions, i), "the FDE table's rows")
                for i, spec in enumerate(COLUMNS)
            ),
            ("Reverse the functions' order", explorer.action_sort_reverse, "the FDE table's rows, the other way"),
            ("Show functions", partial(explorer.action_show_tab, Tab.FUNCTIONS), "the FDE and FRE tables"),
            ("Show structure", partial(explorer.action_show_tab, Tab.STRUCTURE), "the field tree and the detail panel"),
            ("Back", explorer.action_back, "the place before the last jump ([, alt+left, ctrl+o)"),
            ("Forward", explorer.action_forward, "the place after, once gone back (], alt+right)"),
            ("Show the frame", explorer.action_toggle_frame, "the selected row's stack frame drawn to scale"),
            ("Search the bytes…", explorer.action_search_bytes, "hex bytes or text in quotes; n / N next / previous"),
            ("Focus the hex pane", explorer.action_focus_hex, "move through the bytes"),
            ("Unwinding debugger", explorer.action_unwind, "walk a stack frame by frame, with the arithmetic"),
            ("Help", self.app.action_help, "keys, columns and notation"),
        ]

    async def discover(self) -> Hits:
        for name, callback, help_text in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
        explorer = self.explorer
        if explorer is None:
            return
        number = parse_number(query)
        if number is not None:
            address = fitting(query.strip(), number, "address")
            if isinstance(address, int):
                yield Hit(1.0, f"Go to address {address:#x}", partial(explorer.goto_address, address))
            else:  # refused as `g` refuses it: said, not offered as an address no function covers
                said = f"Go to address: {address}"
                refuse = partial(self.app.notify, address, title="Not an address", severity="error")
                yield Hit(1.0, Content(said), refuse, text=said)
            yield Hit(0.9, f"Go to section offset {number:#x}", partial(explorer.goto_offset, number))
        if query.strip():
            for rank, symbol in enumerate(explorer.doc.symbols.search(query, SYMBOL_HITS)):
                said = f"Go to {pictured(symbol.name)}"  # plain text: a name's `[/]` is not markup, its ESC not obeyed
                yield Hit(
                    0.8 - rank / 100,
                    Content(said),
                    partial(explorer.goto_address, symbol.address),
                    text=said,
                    help=f"function at {symbol.address:#x}",
                )
