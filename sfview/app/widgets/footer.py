"""`KeyFooter`: the footer's keys by priority, so that a narrow terminal keeps the ones a person needs.

Textual's `Footer` shows every key in the order the bindings come (the
focused pane's, the screen's, then the app's) and cuts what does not fit at
the right: at 80 columns that was `? Help` and `q Quit`, the two keys a new
user looks for. This footer keeps the app's keys (help, quit) first, then
the screen's in their order, as many as the width holds, and shows them in
their usual order.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
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
    """A `Footer` that drops the least needed keys rather than cut help and quit."""

    def __init__(self) -> None:
        super().__init__()
        self._width = 0
        self._composed: list[Key] | None = None
        """The keys composed last (None: none yet)."""

    def compose(self) -> ComposeResult:
        shown = self._keys()
        self._composed = shown
        self.styles.grid_size_columns = len(shown)
        for binding, enabled, tooltip, key_display in shown:
            yield FooterKey(
                binding.key, key_display, binding.description, binding.action, disabled=not enabled, tooltip=tooltip
            ).data_bind(compact=Footer.compact)

    async def recompose(self) -> None:
        """Textual's, only when other keys are to be shown: a focus moved announces new bindings twice, and
        each recompose mounted and styled a dozen keys anew (tens of ms of a tab's first look), mostly the same."""
        if self._keys() != self._composed:
            await super().recompose()

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
