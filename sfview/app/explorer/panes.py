"""`Panes`: the one place a selection reaches the panes, all of them in the same frame.

Every pane can choose something: the FDE table a function, the FRE table a
row, the tree a field, the hex pane a byte. Whatever was chosen becomes one
`Selection` (the FDE, the FRE and the field), and `Panes.select` shows it
everywhere else (`Origin` says where it was chosen): highlighted bytes, tree
cursor, table cursors, detail panel and status line, all in the same frame.
The tables and the tree report by signal (at once) rather than by message (a
frame later); the panes follow silently (`notify=False`, `prevent`), so that
following a choice never echoes back as a new one.

The tree and the detail panel are only brought to the selection while their
tab is shown, or once nobody types (`ready_the_tree`), or when the tab is
next shown: opening the tree's path can mean adding hundreds of nodes, and a
new explanation means a new layout, which nobody should wait for while moving
through the FDE table. When the tab is shown, they are brought to it (if they
were not already) before the tab's first frame, which then shows the
selection (one layout, not two: `StructureTree.reveal`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum, auto

from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from sfview.app.explorer.background import KEYS_BUSY_S
from sfview.app.explorer.dwarf_beside import DwarfBeside
from sfview.app.explorer.state import ExplorerState, Selection
from sfview.app.fields import Field, FieldTree, RowFields
from sfview.app.names import ExplorerNames
from sfview.app.widgets.code_table import CodeTable
from sfview.app.widgets.detail import FieldDetail
from sfview.app.widgets.fde_table import FdeTable
from sfview.app.widgets.frame_picture import FramePicture
from sfview.app.widgets.fre_table import FreTable
from sfview.app.widgets.hexview import HexView
from sfview.app.widgets.structure_tree import CHUNK_TYPE, ROW_CHUNK_TYPE, StructureTree
from sfview.app.widgets.table_stack import TableStack
from sfview.sframe.bulk.overview import Overview
from sfview.sframe.model.section import Section

__all__ = ["Origin", "Panes", "Tab"]

STRIPES = 4096
"""Boundaries striped in the hex pane at most: the rows of a long function are many more than show."""

TREE_READY_AFTER_S = 2 * KEYS_BUSY_S
"""How long after the last key the hidden tree and detail panel are brought to the selection (`ready_the_tree`):
twice the pace of someone pressing keys, so that it is someone who stopped to look."""


class Origin(Enum):
    """Where a selection was chosen: that pane is already on it."""

    JUMP = auto()
    """In no pane: a jump (go to, back, forward, another screen), or the first selection."""
    FDES = auto()
    FRES = auto()
    CODE = auto()
    TREE = auto()
    HEX = auto()


class Tab(Enum):
    """The explorer's tabs, by the word the keys and commands name them with (`show_tab('structure')`)."""

    FUNCTIONS = "functions"
    STRUCTURE = "structure"
    FRAME = "frame"
    PROBLEMS = "problems"

    @property
    def pane_id(self) -> str:
        """The id of the tab's pane in the `TabbedContent`."""
        return "problems-tab" if self is Tab.PROBLEMS else self.value

    @staticmethod
    def of_pane(pane_id: str | None) -> Tab | None:
        """The tab whose pane has id `pane_id` (None: no pane shown yet)."""
        return _BY_PANE.get(pane_id)


_BY_PANE = {tab.pane_id: tab for tab in Tab}


class Panes:
    """The explorer's panes kept on one selection (`state.selected`); the widgets are the screen's."""

    def __init__(
        self,
        screen: Screen[None],
        *,
        state: ExplorerState,
        section: Section,
        fields: FieldTree,
        overview: Overview,
        names: ExplorerNames,
        dwarf: DwarfBeside,
        tabs: TabbedContent,
        tables: TableStack,
        fde_table: FdeTable,
        fre_table: FreTable,
        code_table: CodeTable,
        fre_note: Static,
        dwarf_note: Static,
        structure_pane: TabPane,
        structure: StructureTree,
        detail: FieldDetail,
        frame_picture: FramePicture,
        hex_view: HexView,
        status_line: Static,
        say: Callable[[str], None],
        clear_filter: Callable[[], None],
        last_input: Callable[[], float],
        selected: Callable[[Selection], None] | None = None,
    ) -> None:
        self.screen = screen
        self.state = state
        self.section = section
        self.fields = fields
        self.overview = overview
        self.names = names
        self.dwarf = dwarf
        self.tabs = tabs
        self.tables = tables
        self.fde_table = fde_table
        self.fre_table = fre_table
        self.code_table = code_table
        self.fre_note = fre_note
        self.dwarf_note = dwarf_note
        self.structure_pane = structure_pane
        self.structure = structure
        self.detail = detail
        self.frame_picture = frame_picture
        self.hex_view = hex_view
        self.status_line = status_line
        self.say = say
        """Puts a text on the status line."""
        self.clear_filter = clear_filter
        """Every function shown again (a function chosen elsewhere was hidden by the filter)."""
        self.last_input = last_input
        """When a key was last pressed (`SfviewApp.last_input`): the hidden tree waits for the keys to stop."""
        self.selected = selected
        """Told of each selection once the panes show it (the minimap, while it is shown)."""
        self._ready_timer: Timer | None = None
        """Brings the hidden tree to `state.reveal_pending` once nobody types (`ready_the_tree`)."""

    @property
    def tab(self) -> Tab | None:
        """The tab shown."""
        return Tab.of_pane(self.tabs.active)

    def select(self, selection: Selection, origin: Origin) -> None:
        """Show `selection` in every pane but `origin`, the one it was chosen in."""
        state = self.state
        previous, state.selected = state.selected, selection
        # A byte chosen in the same row of the same function leaves the tables as they were.
        same_row = previous is not None and (previous.fde, previous.fre) == (selection.fde, selection.fre)
        field = selection.field
        relayout = self.show_tables(selection, origin)
        hex_chose = origin is Origin.HEX
        self.hex_view.highlight(field.span.start, field.span.end, self._boundaries(field), scroll=not hex_chose)
        if not hex_chose:
            self.hex_view.move_cursor(field.span.start, notify=False)
        resized = self.detail.show(field) if origin is Origin.TREE else self.reveal(field)
        relayout = relayout or resized
        if self.tab is Tab.FRAME:
            self.show_frame()
        self.say(self.status_text(selection))
        if self.selected is not None:
            self.selected(selection)
        # Each pane changed above asks for its repaint a moment later, by message;
        # Textual paints on a fixed beat (60 a second), so the first request to
        # arrive gets a frame of its own and the rest wait a frame or two. Asking
        # now puts everything in one frame, which halves a move. Only for the
        # panes a selection changes: the whole screen would cost a third of a move.
        if relayout:
            self.screen.refresh(layout=True)
        else:
            tables = not (hex_chose and same_row)
            self.screen.refresh(*(pane.region for pane in self._selection_panes(tables) if pane.region))

    def _selection_panes(self, tables: bool) -> tuple[Widget, ...]:
        """The panes a new selection changes (those on a hidden tab have no region on the screen); the tables
        only if they changed (`tables`): a move in the hex pane would otherwise paint them again, unchanged."""
        panes = (self.hex_view, self.structure_pane, self.frame_picture, self.status_line)
        return (self.tables, *panes) if tables else panes

    def show_tables(self, selection: Selection, origin: Origin) -> bool:
        """The FDE and FRE tables on `selection` now if their tab is shown (or the frame picture, which
        reads the FRE table), else when it is: a hidden FRE table that changed height would cost a
        layout of the whole screen on every move in the tree.

        Returns whether that changes the layout.
        """
        if self.tab in (Tab.STRUCTURE, Tab.PROBLEMS):
            self.state.tables_pending = selection
            return False
        self.state.tables_pending = None
        return self._update_tables(selection, origin)

    def flush_tables(self) -> bool:
        """The tables on the selection they were spared while hidden (for a move that starts from them)."""
        pending, self.state.tables_pending = self.state.tables_pending, None
        return pending is not None and self._update_tables(pending, Origin.JUMP)

    def _update_tables(self, selection: Selection, origin: Origin) -> bool:
        index, row = selection.fde, selection.fre
        if index is None:
            return False
        if origin is not Origin.FDES:
            self._show_in_table(index)
        relayout = self.show_rows(index)
        if row is not None and origin is not Origin.FRES:
            self.fre_table.move_cursor(row, notify=False)
        if row is not None and origin is not Origin.CODE:
            self.code_table.show_row(row)
        return relayout

    def _show_in_table(self, index: int) -> None:
        """The FDE table's cursor on function `index`; if the filter hides it, without the filter."""
        row = self.fde_table.row_of(index)
        if row is None:
            self.screen.app.notify(f"Filter {self.fde_table.query!r} cleared: it hid fdes[{index}].")
            self.clear_filter()
            row = self.fde_table.row_of(index)
        if row is not None:
            self.fde_table.move_cursor(row, notify=False)

    def status_text(self, selection: Selection) -> str:
        """`Field.status()`, and the name of the function it belongs to."""
        index = selection.fde
        name = self.names.of(self.section.function(index)) if index is not None else ""
        status = selection.field.status()
        return f"{status}  ({name})" if name else status

    def show_rows(self, index: int) -> bool:
        """The FRE table on function `index`, with a note under it if it is broken.

        Returns whether that changes the layout (the table's or the note's height).
        """
        func = self.section.function(index)
        rows_resized = self.fre_table.show_function(func)  # kept on the function even while hidden
        code_resized = self.code_table.show_function(func)
        relayout = code_resized if self.code_table.display else rows_resized  # only the one shown takes room
        name = self.names.of(func)
        # plain text, not markup: a name's `[/]` would end the app
        self.fre_table.border_title = Content(f"FREs of fdes[{index}]" + (f" {name}" if name else ""))
        self.code_table.border_title = Content(f"instructions of fdes[{index}]" + (f" {name}" if name else ""))
        if self.fre_table.dwarf is not None:
            self.dwarf_note.update(self.dwarf.fde_text(func))
            relayout = True
        problem = func.error or func.rows_error
        if problem is not None or self.fre_note.has_class("-shown"):
            self.fre_note.update(f"Problem: {problem}" if problem else "")
            self.fre_note.set_class(problem is not None, "-shown")
            relayout = True
        if relayout:
            self.tables.share()
        return relayout

    def _boundaries(self, field: Field) -> list[int]:
        """Where each part of `field` starts, for the stripes in the hex pane.

        The FDE array (and the tree's chunks of it) are cut by arithmetic: asking
        the array for its children would build a field for every FDE.
        """
        if (field is self.fields.fdes_field) or field.type_name == CHUNK_TYPE:
            return list(range(field.span.start, field.span.end, self.section.fde_size))
        chunk = field.type_name == ROW_CHUNK_TYPE and field.parent is not None
        children = field.parent.children() if chunk and field.parent is not None else field.children()
        if isinstance(children, RowFields):  # rows (or a chunk of them): where each starts, no row decoded
            first, last = field.value if chunk else (0, len(children) - 1)
            return list(children.func.rows.positions[first : min(last + 1, first + STRIPES)])
        if field.kind == "bits" or not field.has_children:
            return []
        return [child.span.start for child in children]

    def row_field(self, index: int, row: int) -> Field:
        """The field of row `row` of function `index`."""
        fres = next(c for c in self.fields.function_field(index).children() if c.name == "fres")
        return fres.children()[row]

    def selection_of(self, index: int, row: int | None) -> Selection:
        """The selection of function `index` and its row `row` (None: the whole function)."""
        field = self.row_field(index, row) if row is not None else self.fields.function_field(index)
        return Selection(index, row, field)

    def reveal(self, field: Field) -> bool:
        """Bring the tree and the detail to `field` now if their tab is shown, else when it is.

        Returns whether that changes the layout (a new explanation with a new height).
        """
        if self.tab is not Tab.STRUCTURE:
            self.state.reveal_pending = field
            self._ready_the_tree_later(TREE_READY_AFTER_S)
            return False
        self.state.reveal_pending = None
        self.structure.reveal(field)
        return self.detail.show(field)

    def _ready_the_tree_later(self, delay: float) -> None:
        if self._ready_timer is None:
            self._ready_timer = self.screen.set_timer(delay, self.ready_the_tree)

    def ready_the_tree(self) -> None:
        """The hidden tree and detail panel brought to the selection once no key has come for
        `TREE_READY_AFTER_S`, so that showing their tab has nothing left to do but lay it out and draw it.

        Revealed as the tab is shown, its first look at a big section adds hundreds of nodes and measures their
        lines, and the detail works out its new explanation, all in the key; readied before, the key does a
        third less. A key that comes meanwhile waits for it (a chunk's FDEs and their lines), which is why it waits
        for the keys to stop; and for the overview, before which a chunk's labels are decoded one by one while
        the overview's pass holds the interpreter. The tree shows what it would have
        (`StructureTree.reveal(hidden=True)`).
        """
        self._ready_timer = None
        field = self.state.reveal_pending
        if field is None or self.tab is Tab.STRUCTURE:
            return
        wait = self.last_input() + TREE_READY_AFTER_S - time.monotonic()
        if wait > 0 or not self.structure.is_mounted or not self.overview.ready:
            self._ready_the_tree_later(wait if wait > 0 else TREE_READY_AFTER_S)
            return
        self.state.reveal_pending = None
        self.structure.reveal(field, hidden=True)
        self.detail.show(field)

    def show_frame(self) -> None:
        """The frame picture on the selected row (the FRE table's, when a whole function is selected)."""
        selection = self.state.selected
        if selection is None or selection.fde is None:
            return
        func = self.section.function(selection.fde)
        row = selection.fre if selection.fre is not None else self.fre_table.cursor
        self.frame_picture.show(func, row, self.names.of(func))
