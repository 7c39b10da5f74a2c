"""`Selection`: what the explorer's panes agree on, passed between them as one small object.

A pane that chooses something (a function in the FDE table, a row in the FRE
table, a node in the tree, a byte in the hex pane) says so with a `Selection`:
the FDE and FRE it lies in, and the field itself. The other panes follow it;
nobody reads indices back out of a field's path.
"""

from __future__ import annotations

from dataclasses import dataclass

from sfview.app.fields import Field


@dataclass(frozen=True, slots=True)
class Selection:
    fde: int | None
    """The function (FDE index) the selection lies in, if any."""
    fre: int | None
    """The row (FRE index) of that function, if any."""
    field: Field
    """The field selected: its bytes are highlighted, its explanation shown."""

    @classmethod
    def of(cls, field: Field) -> Selection:
        """The selection of `field`, in the FDE and FRE it belongs to."""
        return cls(field.fde, field.fre, field)
