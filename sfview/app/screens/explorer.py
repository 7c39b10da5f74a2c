"""`ExplorerScreen`: the section's panes, kept on one selection.

Every pane can choose something: the FDE table a function, the FRE table a
row, the tree a field, the hex pane a byte. Whatever was chosen becomes one
`Selection` (the FDE, the FRE and the field), and `_select` shows it
everywhere else: highlighted bytes, tree cursor, table cursors, detail panel
and status line, all in the same frame. The tables and the tree report by
signal (at once) rather than by message (a frame later); the panes follow
silently (`notify=False`, `prevent`), so that following a choice never echoes
back as a new one.

The tree and the detail panel are only brought to the selection while their
tab is shown (or when it is next shown): opening the tree's path can mean
adding a thousand FDE nodes, and a new explanation means a new layout, which
nobody should wait for while moving through the FDE table.

Other screens (the unwinding debugger) point the explorer at something with
`show_function`, `goto_address` and `goto_offset`.

The FDE table sorts (`S` by the next column, `R` the other way, or a click on
a title) and filters (`/`) the functions; the selection always shows in it:
choosing, elsewhere, a function the filter hides clears the filter.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane

from sfview.app.names import Names
from sfview.app.screens.goto import GotoNumber, GotoSymbol
from sfview.app.selection import Selection
from sfview.app.widgets.detail import FieldDetail
from sfview.app.widgets.fde_table import COLUMNS, FILTER_WORDS, PROBLEMS, FdeTable
from sfview.app.widgets.fre_table import FreTable
from sfview.app.widgets.header import HeaderSummary
from sfview.app.widgets.hexview import HexView
from sfview.app.widgets.structure_tree import CHUNK_TYPE, StructureTree
from sfview.app.widgets.table_stack import TableStack
from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.symbols import Symbol
from sfview.sframe import describe
from sfview.sframe.fields import Field
from sfview.sframe.overview import Overview
from sfview.sframe.rules import Rule
from sfview.sframe.section import Function, Row, Section

__all__ = ["ExplorerScreen"]

NAMES_IN_THE_BACKGROUND = 5000
"""Above this many functions, the symbol table is read in a thread, after the first screen."""

FILTER_HINT = f"part of a name, or {', '.join([*FILTER_WORDS, PROBLEMS])} (enter: keep, escape: clear)"
"""What the empty filter line says it takes."""

WIDE = 176
"""From this width the hex pane (97 columns, its full lines) sits beside the tabs instead of below them."""


class ExplorerScreen(Screen[None]):
    """Explore one SFrame section: tables, structure tree, detail, hex, all linked."""

    HORIZONTAL_BREAKPOINTS: ClassVar = [(0, "-narrow"), (WIDE, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar = [(0, "-short"), (40, "-tall")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "goto_address", "Address"),
        Binding("s", "goto_symbol", "Symbol"),
        Binding("o", "goto_offset", "Offset"),
        Binding("n", "next_function", "Next"),
        Binding("p", "previous_function", "Prev", show=False),
        Binding("z", "zoom", "Zoom"),
        Binding("1", "show_tab('functions')", "Functions", show=False),
        Binding("2", "show_tab('structure')", "Structure", show=False),
        Binding("x", "focus_hex", "Hex pane", show=False),
        Binding("u", "unwind", "Unwind"),
        Binding("d", "toggle_dwarf", "DWARF", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("S", "sort_next", "Sort", show=False),
        Binding("R", "sort_reverse", "Reverse", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, doc: Document) -> None:
        super().__init__(id="explorer")
        self.doc = doc
        self.source = doc.source
        self.section: Section | None = doc.section
        self.error: InputError | None = doc.error
        self.selected: Selection | None = None
        self._reveal_pending: Field | None = None
        self.names = Names(doc)
        if self.section is None or len(self.section) <= NAMES_IN_THE_BACKGROUND:
            self.names.load()
        self.hex_view = HexView(self.source.data, self.source.address, id="hex")
        self.hex_view.border_title = "bytes"
        self.status_line = Static(id="status")
        if self.section is None:
            self.summary = HeaderSummary(self.source, None, self.error, self.names, id="summary")
            return
        # The panes of a readable section; without one, only the bytes and the error are shown.
        self.fields = doc.fields
        self.overview = Overview.of(self.section)
        self.tabs = TabbedContent(id="views")
        names = self.names.listing(self.section, self.overview.column("start"))
        self.fde_table = FdeTable(self.section, self.overview, names, id="fdes")
        self.fre_table = FreTable(self.section, self.overview, id="fres")
        self.filter_line = Input(placeholder=FILTER_HINT, id="fde-filter")
        self.filter_bar = Horizontal(Static("filter", id="filter-prompt"), self.filter_line, id="filter-bar")
        self.fre_note = Static(id="fre-note")
        self.dwarf_note = Static(id="dwarf-note")
        self.tables = TableStack(self.fde_table, self.fre_table, id="tables")
        self.structure_pane = TabPane("Structure", id="structure")
        self.structure = StructureTree(self.fields, self.names, id="tree")
        self.detail = FieldDetail(self.fields, self.source, id="detail")
        self.summary = HeaderSummary(
            self.source, self.section, self.error, self.names, self.fde_table.counts, id="summary"
        )

    @property
    def problem_functions(self) -> set[int]:
        """The FDEs the filter word `problems` keeps (besides those that cannot be decoded): a check of
        the section gives them."""
        return self.fde_table.problems if self.section is not None else set()

    @problem_functions.setter
    def problem_functions(self, indices: set[int]) -> None:
        if self.section is not None:
            self.fde_table.set_problems(indices)
            self.summary.counts_changed()
            self.tables.share()

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield self.summary
        if self.section is None:
            yield self.hex_view
        else:
            with self.tabs:
                with TabPane("Functions", id="functions"):
                    yield self.filter_bar
                    yield self.tables
                    yield self.fre_note
                    yield self.dwarf_note
                yield self.structure_pane  # filled after the first frame
            yield self.hex_view
        yield self.status_line
        yield Footer()

    def on_mount(self) -> None:
        if self.section is None:
            self._show_broken()
            return
        # Told at once (signals), so that the other panes follow in the same frame.
        self.fde_table.row_highlighted.subscribe(self, self._fde_highlighted, immediate=True)
        self.fre_table.row_highlighted.subscribe(self, self._fre_highlighted, immediate=True)
        self.structure.field_highlighted.subscribe(self, self._field_highlighted, immediate=True)
        self.fde_table.focus()
        self.call_after_refresh(self._fill_structure_tab)
        first = self.fields.function_field(0) if len(self.section) else self.fields.root
        self._select(Selection.of(first), origin=None)
        if self.error is not None:
            self._status(str(self.error))
        if not self.names.ready:
            # After the first frame: a thread started now would share the interpreter with painting it.
            self.call_after_refresh(self.run_worker, self._load_names, thread=True, exit_on_error=False)

    async def _fill_structure_tab(self) -> None:
        """Mount the tree and the detail panel, which nobody sees at start, after the first frame.

        Textual's `Lazy` does the same, but fails if the app quits first.
        """
        if self.structure_pane.is_attached:  # not when the app quit before its first frame
            await self.structure_pane.mount(Horizontal(self.structure, self.detail))

    def _load_names(self) -> None:
        """In a worker thread: read the symbol table and name every function, then show the names."""
        self.names.load()
        names = self.names.listing(self.section, self.overview.column("start"))
        self.app.call_from_thread(self._names_loaded, names)

    def _names_loaded(self, names: list[str]) -> None:
        self.fde_table.names_changed(names)
        self.structure.names_changed()
        self.summary.refresh(layout=True)
        if self.selected is not None:
            self._status(self._status_text(self.selected))

    def _show_broken(self) -> None:
        """No section model: the error, and the bytes with the cursor on the offending one."""
        self.add_class("-broken")
        self.hex_view.focus()
        offset = self.error.offset if self.error is not None else None
        if offset is not None:
            self.hex_view.highlight(offset, offset + 1)
            self.hex_view.move_cursor(offset, notify=False)
        self._status(str(self.error))

    # ------------------------------------------------------------------ what the panes report

    def _fde_highlighted(self, row: int) -> None:
        index = self.fde_table.fde_at(row)
        self._select(Selection(index, None, self.fields.function_field(index)), origin="fdes")

    def _fre_highlighted(self, index: int) -> None:
        func = self.fre_table.function
        if func is not None:
            self._select(Selection(func.index, index, self._row_field(func.index, index)), origin="fres")

    def _field_highlighted(self, field: Field) -> None:
        self._select(Selection.of(field), origin="tree")

    def on_hex_view_cursor_moved(self, message: HexView.CursorMoved) -> None:
        self._hex_moved(message.offset)

    def _hex_moved(self, offset: int) -> None:
        """The innermost field at the byte under the hex cursor is the selection."""
        if self.section is None:
            self._status(self.source.where(offset))
        else:
            self._select(Selection.of(self.fields.field_at(offset)), origin="hex")

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.pane.id == "structure" and self._reveal_pending is not None:
            self.call_after_refresh(self._reveal, self._reveal_pending)

    # ------------------------------------------------------------------ the selection

    def _select(self, selection: Selection, origin: str | None) -> None:
        """Show `selection` in every pane but `origin`, the one it was chosen in."""
        self.selected = selection
        field = selection.field
        relayout = False
        index, row = selection.fde, selection.fre
        if index is not None:
            if origin != "fdes":
                self._show_in_table(index)
            relayout = self._show_rows(index)
            if row is not None and origin != "fres":
                self.fre_table.move_cursor(row, notify=False)
        self.hex_view.highlight(field.span.start, field.span.end, self._boundaries(field), scroll=origin != "hex")
        if origin != "hex":
            self.hex_view.move_cursor(field.span.start, notify=False)
        resized = self.detail.show(field) if origin == "tree" else self._reveal(field)
        relayout = relayout or resized
        self._status(self._status_text(selection))
        # Each pane changed above asks for its repaint a moment later, by message;
        # Textual paints on a fixed beat (60 a second), so the first request to
        # arrive gets a frame of its own and the rest wait a frame or two. Asking
        # now, for the whole screen, puts everything in one frame: 20 ms a move
        # instead of 45.
        self.refresh(layout=relayout)

    def _show_in_table(self, index: int) -> None:
        """The FDE table's cursor on function `index`; if the filter hides it, without the filter."""
        row = self.fde_table.row_of(index)
        if row is None:
            self.app.notify(f"Filter {self.fde_table.query!r} cleared: it hid fdes[{index}].")
            self._clear_filter()
            row = self.fde_table.row_of(index)
        if row is not None:
            self.fde_table.move_cursor(row, notify=False)

    def _status_text(self, selection: Selection) -> str:
        """`Field.status()`, and the name of the function it belongs to."""
        index = selection.fde
        name = self.names.of(self.section.function(index)) if index is not None else ""
        status = selection.field.status()
        return f"{status}  ({name})" if name else status

    def _show_rows(self, index: int) -> bool:
        """The FRE table on function `index`, with a note under it if it is broken.

        Returns whether that changes the layout (the table's or the note's height).
        """
        func = self.section.function(index)
        relayout = self.fre_table.show_function(func)
        name = self.names.of(func)
        self.fre_table.border_title = f"FREs of fdes[{index}]" + (f" {name}" if name else "")
        if self.fre_table.dwarf is not None:
            self.dwarf_note.update(self._dwarf_fde(func))
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
        if field.kind == "bits" or not field.has_children:
            return []
        return [child.span.start for child in field.children()]

    def _row_field(self, index: int, row: int) -> Field:
        """The field of row `row` of function `index`."""
        fres = next(c for c in self.fields.function_field(index).children() if c.name == "fres")
        return fres.children()[row]

    def _reveal(self, field: Field) -> bool:
        """Bring the tree and the detail to `field` now if their tab is shown, else when it is.

        Returns whether that changes the layout (a new explanation with a new height).
        """
        if self.tabs.active != "structure":
            self._reveal_pending = field
            return False
        self._reveal_pending = None
        self.structure.reveal(field)
        return self.detail.show(field)

    def _status(self, text: str) -> None:
        """The status line (one line, so no layout to redo)."""
        self.status_line.update(text, layout=False)

    # ------------------------------------------------------------------ navigation

    def goto_address(self, pc: int | None) -> None:
        """Select the function an unwinder would use for `pc`, and its row (PCMASK included)."""
        if pc is None:
            return
        if self.section is None:
            self.app.notify("The section could not be read: there are no functions.", severity="error")
            return
        func = self.section.find_function(pc)
        if func is None:
            self.app.notify(f"No function covers {pc:#x}{self._neighbours(pc)}.", severity="warning")
            return
        row = func.row_for(pc)
        if row is None:
            self._select(Selection(func.index, None, self.fields.function_field(func.index)), origin=None)
            self._status(f"{pc:#x}: fdes[{func.index}], but none of its rows covers it")
            return
        self._select(Selection(func.index, row.index, self._row_field(func.index, row.index)), origin=None)
        name = self.names.of(func)
        rules = describe.app_rules(self.section, row)
        status = f"{pc:#x} → fdes[{func.index}]{f' {name}' if name else ''}, FRE {row.index}: {rules}"
        if func.pcmask:
            offset = (pc - func.start_address) % (func.rep_size or 1 << 64)
            status += f" (PCMASK: offset {offset:#x} in the repeated block)"
        self._status(status)

    def goto_symbol(self, symbol: Symbol | None) -> None:
        if symbol is not None:
            self.goto_address(symbol.address)

    def goto_offset(self, offset: int | None) -> None:
        """Put the hex cursor on section offset `offset` and select the field there."""
        if offset is None:
            return
        size = len(self.source.data)
        if not 0 <= offset < size:
            self.app.notify(f"{offset:#x} is outside the section (0..{size - 1:#x}).", severity="warning")
            return
        self.hex_view.focus()
        self.hex_view.move_cursor(offset, notify=False)
        self._hex_moved(offset)

    def _neighbours(self, pc: int) -> str:
        """`: between main (ends 0x108b) and small_leaf (0x1180)`, the functions around an address no FDE covers."""
        before, after = self.section.around(pc)
        parts = []
        if before is not None:
            parts.append(f"after {self.names.of(before) or f'fdes[{before.index}]'} (ends {before.end_address:#x})")
        if after is not None:
            parts.append(f"before {self.names.of(after) or f'fdes[{after.index}]'} ({after.start_address:#x})")
        return ": " + ", ".join(parts) if parts else ""

    def action_goto_address(self) -> None:
        prompt = GotoNumber("Go to address", "The function and row an unwinder uses for a PC.", self.source.symbols)
        self.app.push_screen(prompt, self.goto_address)

    def action_goto_symbol(self) -> None:
        if not len(self.source.symbols):
            self.app.notify("This file has no function names (stripped?).", severity="warning")
            return
        self.app.push_screen(GotoSymbol(self.source.symbols), self.goto_symbol)

    def action_goto_offset(self) -> None:
        prompt = GotoNumber("Go to section offset", "The field that holds a byte of the section.")
        self.app.push_screen(prompt, self.goto_offset)

    def show_row(self, fde: int, fre: int | None) -> None:
        """Select function `fde` (and its row `fre`) in every pane: how other screens point at the section."""
        if self.section is None:
            return
        field = self._row_field(fde, fre) if fre is not None else self.fields.function_field(fde)
        self._select(Selection(fde, fre, field), origin=None)

    def action_toggle_dwarf(self) -> None:
        """DWARF CFI beside each row, or not: read (in a thread: 40,000 FDEs take seconds) on first use."""
        if self.section is None or self.doc.elf is None:
            self.app.notify("Only an ELF file has DWARF CFI to compare with.", severity="warning")
            return
        if self.fre_table.dwarf is not None:
            self.fre_table.show_dwarf(None)
            self.dwarf_note.remove_class("-shown")
            return
        if "cfi" in vars(self.doc):  # read already
            self._dwarf_read()
            return
        self._status("reading DWARF CFI (.eh_frame, .debug_frame)…")
        self.run_worker(self._read_dwarf, thread=True, exit_on_error=False)

    def _read_dwarf(self) -> None:
        _ = self.doc.cfi
        self.app.call_from_thread(self._dwarf_read)

    def _dwarf_read(self) -> None:
        if self.doc.cfi is None:
            self.app.notify("This file has no DWARF CFI (.eh_frame, .debug_frame).", severity="warning")
            return
        self.fre_table.show_dwarf(self._dwarf_beside)
        self.dwarf_note.add_class("-shown")
        if self.fre_table.function is not None:
            self.dwarf_note.update(self._dwarf_fde(self.fre_table.function))
        self._status("DWARF CFI beside each row: `=` where it agrees with SFrame, else DWARF's rules (`d` hides it)")

    def _dwarf_fde(self, func: Function) -> str:
        """The DWARF FDE of the function: where, its bytes, and its CFA instructions (what SFrame replaced)."""
        table = self.doc.cfi
        cfi = table.find(func.start_address) if table is not None else None
        if cfi is None or self.doc.elf is None:
            return "DWARF: no FDE covers this function"
        data = self.doc.elf.get_section_by_name(cfi.section).data()[cfi.fde_offset : cfi.fde_offset + cfi.fde_size]
        shown = data[:24].hex(" ") + (" …" if len(data) > 24 else "")
        steps = "; ".join(line.strip() for line in cfi.instructions.splitlines() if "nop" not in line)
        start = "; ".join(line.strip() for line in cfi.cie_instructions.splitlines() if "nop" not in line)
        return (
            f"DWARF: FDE at {cfi.section}+{cfi.fde_offset:#x}, {cfi.fde_size} bytes: {shown}\n"
            f"  CIE at +{cfi.cie_offset:#x}: {start}\n  FDE: {steps or '(no instructions)'}"
        )

    def _dwarf_beside(self, func: Function, row: Row) -> str:
        """`=` when DWARF CFI gives the same CFA, RA and FP at the row's first address, else what it says."""
        from sfview.dwarf.compare import equal

        table = self.doc.cfi
        address = func.start_address + row.start_offset
        cfi = table.find(address) if table is not None else None
        theirs = cfi.row_for(address) if cfi is not None else None
        if theirs is None:
            return "no FDE" if cfi is None else "no row"
        differ = [
            f"{name} {describe.app_rule(self.section, theirs_rule) if isinstance(theirs_rule, Rule) else 'expr'}"
            for name, ours, theirs_rule in (
                ("CFA", row.cfa, theirs.cfa),
                ("FP", row.fp, theirs.fp),
                ("RA", row.ra, theirs.ra),
            )
            if not equal(ours, theirs_rule)
        ]
        return "≠ " + " ".join(differ) if differ else "="

    # ------------------------------------------------------------------ sorting and filtering

    def action_filter(self) -> None:
        """The filter line, to type in (on the Functions tab)."""
        if self.section is None:
            return
        self.tabs.active = "functions"
        self.filter_bar.add_class("-shown")
        self.filter_line.focus()

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input is self.filter_line:
            self._filter(message.value)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        """`enter`: back to the table, the filter kept (and shown, while there is one)."""
        if message.input is self.filter_line:
            self.filter_bar.set_class(bool(message.value.strip()), "-shown")
            self.fde_table.focus()

    def action_clear_filter(self) -> None:
        """`escape`: every function again, and the filter line closed."""
        if self.section is None or not (self.fde_table.filtered or self.filter_bar.has_class("-shown")):
            return
        self._clear_filter()
        self.fde_table.focus()

    def _clear_filter(self) -> None:
        self.filter_bar.remove_class("-shown")
        self._filter("")

    def _filter(self, query: str) -> None:
        """The FDE table keeps what `query` asks for (the line shows it), the summary counts it."""
        if self.filter_line.value != query:
            with self.filter_line.prevent(Input.Changed):
                self.filter_line.value = query
        self.fde_table.filter(query)
        self.summary.counts_changed()
        self.tables.share()

    def action_sort_next(self) -> None:
        """Sort the FDE table by the next column (after the last, by index again)."""
        if self.section is not None:
            self.sort_functions((self.fde_table.sort.column + 1) % len(COLUMNS))

    def action_sort_reverse(self) -> None:
        if self.section is not None:
            sort = self.fde_table.sort
            self.sort_functions(sort.column, not sort.reverse)

    def sort_functions(self, column: int, reverse: bool = False) -> None:
        """The FDE table sorted by column `column` (an index in `COLUMNS`), the status line saying so."""
        if self.section is not None:
            self.fde_table.sort_by(column, reverse)
            self._say_sort()

    def _say_sort(self) -> None:
        sort = self.fde_table.sort
        order = "descending" if sort.reverse else "ascending"
        self._status(f"functions by {COLUMNS[sort.column].title}, {order} (S: next column, R: reverse)")

    def action_unwind(self) -> None:
        self.app.open_debugger()  # type: ignore[attr-defined]

    def action_next_function(self) -> None:
        if self.section is not None:
            self.fde_table.move_cursor(self.fde_table.cursor + 1)

    def action_previous_function(self) -> None:
        if self.section is not None:
            self.fde_table.move_cursor(self.fde_table.cursor - 1)

    def action_show_tab(self, tab: str) -> None:
        if self.section is None:
            return
        target = self.fde_table if tab == "functions" else self.structure
        if not target.is_mounted:  # the structure tab's panes arrive after the first frame
            self.call_after_refresh(self.action_show_tab, tab)
            return
        self.tabs.active = tab
        target.focus()

    def action_focus_hex(self) -> None:
        self.hex_view.focus()

    def action_zoom(self) -> None:
        """The focused pane on the whole screen, or back."""
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused, container=False)
