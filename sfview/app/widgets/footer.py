"""`KeyFooter`: the focused pane's keys on one line, by priority; repainted, never laid out, when they change.

Textual's `Footer` shows every key in the order the bindings come (the
focused pane's, the screen's, then the app's) and cuts what does not fit at
the right: at 80 columns, `? Help` and `q Quit`, the two keys a new user
looks for. This footer keeps the app's keys (help, quit) first, then
the screen's in their order, as many as the width holds, and shows them in
their usual order.

It is one widget drawing one line, not Textual's container of a `FooterKey`
per key, written by hand for what that cost: the filter line takes the
letters' keys and `escape` or `enter` gives them back, and a dozen keys shown
again (each a widget, laid out at its width, restyled and drawn) would be a
third of `escape` on a large file, while a line of text in a widget of a
fixed size is drawn alone, quickly, and lays nothing out. What the
keys did besides is kept: a click presses the key (a bell if it is
disabled), the key under the mouse is highlighted and shows its tooltip, a
disabled key is dim; the styles are `FooterKey`'s, under the same names.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

__all__ = ["KeyFooter"]

FIRST = ("help", "quit")
"""Actions kept whatever the width: how to learn the rest, and how to leave."""
KEY_PADDING = 3
"""Cells a footer key takes besides its key and description (a space between, a space each side)."""
DISABLED = Style(dim=True)
"""A key that does nothing where the focus is (Textual's `FooterKey.-disabled`)."""


def key_width(key_display: str, description: str) -> int:
    return cell_len(key_display) + cell_len(description) + KEY_PADDING


Key = tuple[Binding, bool, str, str]
"""A footer key: its binding, whether it is enabled, its tooltip, how its key is shown."""


def fitting(keys: list[Key], width: int) -> list[Key]:
    """The keys (binding, enabled, tooltip, key display) that fit in `width` cells, help and quit first,
    in the order they came (help and quit last, at the right, where people look for them)."""
    ranked = sorted(keys, key=lambda k: k[0].action not in FIRST)
    kept, used = set(), 0
    for key in ranked:
        cells = key_width(key[3], key[0].description)
        if used + cells > width:
            continue
        kept.add(id(key))
        used += cells
    return [k for k in keys if id(k) in kept and k[0].action not in FIRST] + [
        k for k in keys if id(k) in kept and k[0].action in FIRST
    ]


class KeyFooter(Widget, can_focus=False):
    """The keys of the focused pane, help and quit kept whatever the width, drawn as one line."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"footer-key--key", "footer-key--description", "footer-key--hover"}
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .footer-key--hover {
            background: $block-hover-background;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[Key] = []
        """The keys shown, left to right."""
        self._hovered: int | None = None
        """The index in `keys` of the key under the mouse."""

    def on_mount(self) -> None:
        """Told of new bindings at once, in the handler that moved the focus (Textual's `Footer` is told after
        the messages waiting): the keys change in that key's frame, not in one of their own after it."""
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed, immediate=True)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        """The focus moved or a binding changed: the keys shown again, unless the terminal lost the focus (no
        widget has it then: the keys would be the screen's alone until it comes back, as in `Footer`)."""
        if screen.app.app_focus and screen is self.screen:
            self._show(self._keys())

    def on_resize(self, event: events.Resize) -> None:
        self._show(self._keys())

    def _show(self, keys: list[Key]) -> None:
        if keys != self.keys:
            self.keys = keys
            self._hover(None)
            self.refresh()

    def _keys(self) -> list[Key]:
        """The keys to show: the active bindings' that fit the width, the command palette's at the end when
        there is room left for it."""
        seen: set[str] = set()
        keys: list[Key] = []
        active = self.screen.active_bindings
        for _, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                keys.append((binding, enabled, tooltip, self.app.get_key_display(binding)))
        width = self.size.width or self.app.size.width
        shown = fitting(keys, width)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        if palette is not None:
            binding, display = palette[1], self.app.get_key_display(palette[1])
            used = sum(key_width(k[3], k[0].description) for k in shown)
            if used + key_width(display, binding.description) <= width:
                shown.append((binding, palette[2], palette[3] or binding.description, display))
        return shown

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        description_style = self.get_component_rich_style("footer-key--description")
        line = Text(no_wrap=True, end="")
        for index, (binding, enabled, _tooltip, key_display) in enumerate(self.keys):
            start = len(line)
            line.append(f" {key_display} ", key_style)
            line.append(f"{binding.description} ", description_style)
            if index == self._hovered:
                line.stylize(self.get_component_rich_style("footer-key--hover", partial=True), start)
            if not enabled:
                line.stylize(DISABLED, start)
        return line

    def _index_at(self, x: int) -> int | None:
        """The index in `keys` of the key drawn at column `x` of the footer, if any."""
        start = 0
        for index, (binding, _enabled, _tooltip, key_display) in enumerate(self.keys):
            start += key_width(key_display, binding.description)
            if x < start:
                return index
        return None

    def _hover(self, index: int | None) -> None:
        """The key under the mouse highlighted, its tooltip the footer's."""
        if index != self._hovered:
            self._hovered = index
            self.tooltip = None if index is None else (self.keys[index][2] or None)
            self.refresh()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._hover(self._index_at(event.x))

    def on_leave(self, event: events.Leave) -> None:
        self._hover(None)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click presses the key, as on Textual's footer (a bell for a key that does nothing here)."""
        index = self._index_at(event.x)
        if index is None:
            return
        binding, enabled, _tooltip, _display = self.keys[index]
        if enabled:
            self.app.simulate_key(binding.key)
        else:
            self.app.bell()
