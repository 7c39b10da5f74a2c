"""`LineInput`: Textual's `Input` whose own bound keys act in the order they were typed.

Textual 8's `Input` types a printable key as it handles it (`_on_key`), but a
key it has a binding for (backspace, the arrows, enter, ctrl+k) acts only once
the key has bubbled up to the app, which looks its bindings up there. Keys
read together from the terminal (`\\x7fc`: backspace, then `c`; fast typing
over ssh, a key macro, a loaded machine) were so done out of order: `c` was
typed, then deleted by the backspace that came before it, and the box kept
what it had (Textualize/textual#6605). Here the line runs its own bindings as
it handles the key, as the proposed fix upstream does (#6631); priority
bindings are looked up before a key reaches the line, as before.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

__all__ = ["LineInput"]


class LineInput(Input):
    """An `Input` that runs its own (not priority) key bindings when it handles the key, in typing order."""

    async def _on_key(self, event: events.Key) -> None:
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()  # `Input._on_key` has nothing left to do with it
                return
