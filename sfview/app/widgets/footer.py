"""`KeyFooter`: the footer's keys by priority, so that a narrow terminal keeps the ones a person needs.

Textual's `Footer` shows every key in the order the bindings come (the
focused pane's, the screen's, then the app's) and cuts what does not fit at
the right: at 80 columns that was `? Help` and `q Quit`, the two keys a new
user looks for. This footer keeps the app's keys (help, quit) first, then
the screen's in their order, as many as the width holds, and shows them in
their usual order.

Each key is made once: the keys of another focus are shown by hiding the
others (`display`), not by composing the footer anew, and in the frame of
the key that moved the focus. The filter line takes the letters' keys and
`escape` or `enter` gives them back: composing a dozen keys anew took 20 ms
of those keys on a million functions, and a frame of its own after them.
"""

from __future__ import annotations

from itertools import pairwise

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KeyFooter"]

FIRST = ("help", "quit")
"""Actions kept whatever the width: how to learn the rest, and how to leave."""
KEY_PADDING = 3
"""Cells a footer key takes besides its key and description (a space between, a space each side)."""


def key_width(key_display: str, description: str) -> int:
    return len(key_display) + len(description) + KEY_PADDING


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


class KeyFooter(Footer):
    """A `Footer` that drops the least needed keys rather than cut help and quit, and that hides and shows
    the keys it made rather than make them again."""

    def __init__(self) -> None:
        super().__init__()
        self._width = 0
        self._composed: list[Key] | None = None
        """The keys shown last (None: none yet)."""
        self._made: list[Key] = []
        """Every key a `FooterKey` is mounted for, in the footer's order: those not shown are hidden."""

    def compose(self) -> ComposeResult:
        shown = self._keys()
        self._made = _merged(self._made, shown)
        self._composed = shown
        self.styles.grid_size_columns = len(shown)
        showing = set(shown)
        for key in self._made:
            binding, enabled, tooltip, key_display = key
            footer_key = FooterKey(
                binding.key, key_display, binding.description, binding.action, disabled=not enabled, tooltip=tooltip
            ).data_bind(compact=Footer.compact)
            footer_key.display = key in showing
            yield footer_key

    def on_mount(self) -> None:
        self.call_next(self._told_at_once)

    def _told_at_once(self) -> None:
        """Told of new bindings at once, in the handler that moved the focus, rather than after the messages
        waiting (as `Footer.on_mount` subscribed): the keys shown and hidden then are laid out in that key's
        frame, not in one of their own a frame or two later (on a million functions, in tmux, the footer came
        50 ms after `enter` in the filter line, the rest of the screen 10 ms after it)."""
        signal = self.screen.bindings_updated_signal
        signal.unsubscribe(self)
        signal.subscribe(self, self.bindings_changed, immediate=True)

    def bindings_changed(self, screen: Screen) -> None:
        """Keys made before shown and hidden at once; other keys as Textual does (recomposed after a refresh)."""
        if screen.app.app_focus and self.is_attached and screen is self.screen and self._bindings_ready:
            shown = self._keys()
            if shown == self._composed or self._show(shown):
                return
        self.call_next(super().bindings_changed, screen)  # from the footer, as its keys are bound to it

    async def recompose(self) -> None:
        """Textual's, only when other keys are to be shown and they are not all made, in that order (a key
        new, or in another order): the filter line takes the letters' keys from the footer and `escape` or
        `enter` gives them back, and composing a dozen keys anew (mounted, styled) took 20 ms of those keys
        on a million functions."""
        shown = self._keys()
        if shown != self._composed and not self._show(shown):
            await super().recompose()

    def _show(self, shown: list[Key]) -> bool:
        """Show `shown`, hiding the other keys made, if they are all made in that order; else False.

        The screen is laid out for the keys at once (`Screen.refresh`), and the footer and its keys do not ask
        for it again: each asks when its own messages are next handled (Textual 8's `Widget._layout_required`,
        turned into a `Layout` message for the screen in `Widget._check_refresh`), and on a million functions
        they were handled after the screen had been laid out with them, which laid it out a second time
        (`enter` and `escape` in the filter line: two layouts, 4-5 ms more). A key shown or hidden marks the
        footer's arrangement as changed itself (`NodeList.updated`, through the display rule).
        """
        if not _in_order(self._made, shown):
            return False
        self._composed = shown
        self.styles.grid_size_columns = len(shown)
        showing = set(shown)
        footer_keys = list(self.query_children(FooterKey))
        for key, footer_key in zip(self._made, footer_keys, strict=True):
            footer_key.display = key in showing
        self.screen.refresh(layout=True)  # in the frame coming, not after each key's own refresh asks for it
        for widget in (self, *footer_keys):  # asked for just now, for the layout the screen will make
            widget._layout_required = False
        return True

    def _keys(self) -> list[Key]:
        """The keys to show, as `compose` shows them: the active bindings' that fit the width."""
        if not self._bindings_ready:
            return []
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
        if palette is not None:  # the command palette's key, at the right, when there is room left for it
            binding, display = palette[1], self.app.get_key_display(palette[1])
            used = sum(key_width(k[3], k[0].description) for k in shown)
            if used + key_width(display, binding.description) <= width:
                shown.append((binding, palette[2], palette[3], display))
        return shown

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self.recompose)


def _in_order(made: list[Key], shown: list[Key]) -> bool:
    """Whether every key of `shown` is one of `made`, in the same order: showing them is hiding the others."""
    remaining = iter(made)
    return all(key in remaining for key in shown)


def _merged(made: list[Key], shown: list[Key]) -> list[Key]:
    """`shown` in its order, with each key of `made` it leaves out kept (hidden) after the key it came after
    in `made`: the footer's keys, each made once, in an order that shows both sets by hiding the others."""
    merged = list(shown)
    for before, key in pairwise([None, *made]):
        if key not in merged:
            merged.insert(merged.index(before) + 1 if before in merged else 0, key)
    return merged
