"""`E`: the edits made to the section, oldest first, then those undone; choosing one goes to its bytes."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from sfview.app.explorer.editing import listing
from sfview.edit.patches import Edits

__all__ = ["EditList"]


class EditList(ModalScreen[int | None]):
    """The edits listed (`editing.listing`); dismissed with the section offset of the one chosen, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,E", "dismiss(None)", "Close"),
    ]

    def __init__(self, edits: Edits) -> None:
        super().__init__(classes="goto", id="edit-list")
        self.offsets = [p.offset for p in edits.done] + [p.offset for p in reversed(edits.undone)]
        self.lines = listing(edits)

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = "Edits"
            hint = "ctrl+z undoes the last, ctrl+y makes it again, w writes a patched copy; enter: go to its bytes."
            yield Label(hint, classes="goto-hint", markup=False)
            if self.lines:
                yield OptionList(*(Option(line) for line in self.lines), id="goto-matches", markup=False)
            else:
                yield Label("No edits yet: e edits the field selected, or the byte under the hex cursor.")

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.offsets[event.option_index])
