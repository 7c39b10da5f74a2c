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
tab is shown, or once nobody types (`_ready_the_tree`), or when the tab is
next shown: opening the tree's path can mean adding hundreds of nodes, and a
new explanation means a new layout, which nobody should wait for while moving
through the FDE table. When the tab is shown, they are brought to it (if they
were not already) before the tab's first frame, which then shows the
selection (one layout, not two: `StructureTree.reveal`).

Other screens (the unwinding debugger) point the explorer at something with
`show_row`, `goto_address` and `goto_offset`.

What is not the selection's is in mixins of their own: going to places and
the history (`explorer_navigation.py`), sorting and filtering the functions
(`explorer_filtering.py`), DWARF beside the rows (`explorer_dwarf.py`); each
pane's behaviour is in its widget (`widgets/`).
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.reactive import Reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane

from sfview.app import notation
from sfview.app.consumer_marks import FORMAT, ConsumerMarks, consumer_names
from sfview.app.fields import Field, RowFields
from sfview.app.history import History
from sfview.app.names import Names
from sfview.app.screens.explorer_dwarf import DwarfBeside
from sfview.app.screens.explorer_filtering import Filtering
from sfview.app.screens.explorer_navigation import Navigation
from sfview.app.screens.goto import Prompt, parse_pattern
from sfview.app.selection import Selection
from sfview.app.widgets.code_table import CodeTable
from sfview.app.widgets.detail import FieldDetail
from sfview.app.widgets.fde_table import FILTER_WORDS, PROBLEMS, FdeTable, Sort
from sfview.app.widgets.filter_line import FilterLine
from sfview.app.widgets.footer import KeyFooter
from sfview.app.widgets.frame_picture import FramePicture
from sfview.app.widgets.fre_table import FreTable
from sfview.app.widgets.header import HeaderSummary
from sfview.app.widgets.hexview import HexView
from sfview.app.widgets.problems import ProblemList
from sfview.app.widgets.row_table import RowTable
from sfview.app.widgets.structure_tree import CHUNK_TYPE, ROW_CHUNK_TYPE, StructureTree
from sfview.app.widgets.table_stack import TableStack
from sfview.check.catalogue import Severity
from sfview.check.run import Diagnostic, check_document
from sfview.consumers import Verdict
from sfview.consumers.verdicts import judge_document
from sfview.document import Document
from sfview.errors import InputError
from sfview.output.diagnostics import verdict_text
from sfview.sframe.bulk.overview import SAMPLED, Overview
from sfview.sframe.model.section import Section

__all__ = ["ExplorerScreen"]

PROBLEMS_SHOWN = 2000
"""Problems listed in the app at most (`sfview check` lists them all): a broken section may have a million."""

STRIPES = 4096
"""Boundaries striped in the hex pane at most: the rows of a long function are many more than show."""

NAMES_IN_THE_BACKGROUND = 5000
"""Above this many functions, the symbol table is read in a thread, after the first screen."""

OVERVIEW_IN_THE_BACKGROUND = 5000
"""Above this many functions, the overview (every function gone through: what sorting, filtering and the
columns' widths need) is made in a thread, after the first screen; until then the header says "working…"."""

FIRST_FRAMES_S = 0.1
"""How long after the first frame the overview's pass starts: the frames that finish the first screen come first."""

PROGRESS_EVERY_S = 0.25
"""How often the header's progress indicator is drawn again while the overview is made."""

SWITCH_INTERVAL_S = 0.001
"""How long a thread holds the interpreter when another asks for it, while the work after the first screen runs
beside the keys (Python's default is 5 ms). The keys' thread gives it up each time it waits (for the terminal, for
its next message), a dozen times a key, and each time it waited up to 5 ms to have it back from the worker: a move
on a million functions took 30-40 ms while the checks ran, 13 ms after. With 1 ms it takes it back sooner, and the
worker, which never waits, loses little."""

KEYS_BUSY_S = 0.1
"""How long after a key the checks' thread waits before it takes its share of the interpreter again: a key's
handling and its frame take tens of milliseconds, and people press the next one a tenth of a second later."""

TREE_READY_AFTER_S = 2 * KEYS_BUSY_S
"""How long after the last key the hidden tree and detail panel are brought to the selection (`_ready_the_tree`):
twice the pace of someone pressing keys, so that it is someone who stopped to look."""

FILTER_HINT = f"part of a name, or {', '.join([*FILTER_WORDS, PROBLEMS])}"
"""What the empty filter line says it takes."""

WIDE = 176
"""From this width the hex pane (97 columns, its full lines) sits beside the tabs instead of below them."""


def _format_line() -> str:
    """The Problems tab's first line while the format's checks alone are shown."""
    names = consumer_names()
    return f"format: the format's own checks  (v: {names[1]}'s verdict)" if len(names) > 1 else "format"


class ExplorerScreen(Navigation, Filtering, DwarfBeside, Screen[None]):
    """Explore one SFrame section: tables, structure tree, detail, hex, all linked."""

    HORIZONTAL_BREAKPOINTS: ClassVar = [(0, "-narrow"), (WIDE, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar = [(0, "-short"), (40, "-tall")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "goto_address", "Address"),
        Binding("s", "goto_symbol", "Symbol"),
        Binding("o", "goto_offset", "Offset"),
        Binding("n", "next_function", "Next"),
        Binding("p", "previous_function", "Prev", show=False),
        # `[`/`]` first: the footer shows the first key, and every terminal (tmux too) sends them.
        Binding("left_square_bracket,alt+left,ctrl+o", "back", "Back"),
        Binding("right_square_bracket,alt+right", "forward", "Forward", show=False),
        Binding("i", "toggle_code", "Code"),
        Binding("f", "toggle_frame", "Frame"),
        Binding("z", "zoom", "Zoom"),
        Binding("1", "show_tab('functions')", "Functions", show=False),
        Binding("2", "show_tab('structure')", "Structure", show=False),
        Binding("3", "show_tab('frame')", "Frame", show=False),
        Binding("4", "show_tab('problems')", "Problems", show=False),
        Binding("exclamation_mark", "show_tab('problems')", "Problems", show=False),
        Binding("x", "focus_hex", "Hex pane", show=False),
        Binding("ctrl+f", "search_bytes", "Search bytes", show=False),
        Binding("c", "copy('value')", "Copy value", show=False),
        Binding("C", "copy('path')", "Copy path or row", show=False),
        Binding("u", "unwind", "Unwind"),
        Binding("d", "toggle_dwarf", "DWARF", show=False),
        Binding("v", "next_consumer", "Consumer", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("S", "sort_next", "Sort", show=False),
        Binding("R", "sort_reverse", "Reverse", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    """Textual's, without drawing the whole screen again when the focus moves: the widgets whose style the
    focus changes are restyled and drawn by Textual anyway (`Screen._update_focus_styles`), and the screen
    itself draws nothing of the focus. Drawn again, the screen was a second frame (14.7 KB, 3.5 ms) right after
    every frame of a focus change, which held the interpreter while the first one waited to be written out
    (2.8 ms, in a timeline of the Structure tab's first open at a million functions)."""

    def __init__(self, doc: Document) -> None:
        super().__init__(id="explorer")
        self.doc = doc
        self.source = doc.source
        self.section: Section | None = doc.section
        self.error: InputError | None = doc.error
        self.selected: Selection | None = None
        self.history: History[Selection] = History()
        self._reveal_pending: Field | None = None
        self._ready_timer: Timer | None = None
        """Brings the hidden tree to `_reveal_pending` once nobody types (`_ready_the_tree`)."""
        self._tables_pending: Selection | None = None
        self._progress: Timer | None = None
        """Draws the header's progress indicator again while the overview is made."""
        self.sort_asked = False
        """A sort key waits for its column's order (`FdeTable.waiting`): its first row is selected when it comes."""
        self.names = Names(doc)
        if self.section is None or len(self.section) <= NAMES_IN_THE_BACKGROUND:
            self.names.load()
        self.hex_view = HexView(self.source.data, self.source.address, id="hex")
        self.hex_view.border_title = "bytes"
        self.status_line = Static(id="status")
        self.footer = KeyFooter()
        self._status_shown = ""
        if self.section is None:
            self.summary = HeaderSummary(self.source, None, self.error, self.names, id="summary")
            return
        # The panes of a readable section; without one, only the bytes and the error are shown.
        self.fields = doc.fields
        self.overview = self._first_overview(self.section)
        self.tabs = TabbedContent(id="views")
        ready = self.overview.ready
        names = self.names.listing(self.section, self.overview.column("start")) if ready else [""] * len(self.section)
        self.fde_table = FdeTable(self.section, self.overview, names, widest=None if ready else 0, id="fdes")
        self.fre_table = FreTable(self.section, self.overview, id="fres")
        self.filter_line = FilterLine(placeholder=FILTER_HINT, id="fde-filter")
        self.filter_bar = Horizontal(Static("filter", id="filter-prompt"), self.filter_line, id="filter-bar")
        self.fre_legend = Static(notation.legend(self.section), id="fre-legend", markup=False)
        self.fre_note = Static(id="fre-note")
        self.dwarf_note = Static(id="dwarf-note")
        self.code_table = CodeTable(doc, self.overview, id="code")
        self.tables = TableStack(self.fde_table, self.fre_table, self.code_table, id="tables")
        self.structure_pane = TabPane("Structure", id="structure")
        self.structure = StructureTree(self.fields, self.names, self.overview, id="tree")
        self.detail = FieldDetail(self.fields, self.source, id="detail")
        self.frame_picture = FramePicture(id="frame-picture")
        self.problems = ProblemList(id="problems")
        self.consumer_line = Static(_format_line(), id="consumer-verdict", markup=False)
        self.consumer = FORMAT
        """Whose view the Problems tab takes: the format's checks, or a consumer's (`v` cycles)."""
        self.verdicts: dict[str, Verdict] = {}
        self.summary = HeaderSummary(
            self.source, self.section, self.error, self.names, self.fde_table.counts, id="summary"
        )

    @staticmethod
    def _first_overview(section: Section) -> Overview:
        """The overview as the first screen has it: whole for a small section; for a big one, the first
        screenful of functions and the last read alone, the rest left to `_prepare`."""
        if section.num_fdes <= OVERVIEW_IN_THE_BACKGROUND:
            return Overview.of(section)
        overview = Overview(section)
        overview.sample(sorted({*range(min(SAMPLED, section.num_fdes)), section.num_fdes - 1}))
        return overview

    @property
    def problem_functions(self) -> dict[int, Severity]:
        """The FDEs a check of the section found problems in, with their worst severity: flagged in the
        FDE table, kept by its filter word `problems` (besides those that cannot be decoded)."""
        return self.fde_table.problems if self.section is not None else {}

    @problem_functions.setter
    def problem_functions(self, problems: dict[int, Severity]) -> None:
        if self.section is not None:
            self.fde_table.set_problems(problems)
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
                    yield self.fre_legend
                    yield self.fre_note
                    yield self.dwarf_note
                yield self.structure_pane  # filled after the first frame
                with TabPane("Frame", id="frame"):
                    yield self.frame_picture
                with TabPane("Problems", id="problems-tab"):
                    yield self.consumer_line
                    yield self.problems
            yield self.hex_view
        yield self.status_line
        yield self.footer

    def on_mount(self) -> None:
        self.hex_view.cursor_moved.subscribe(self, self._hex_moved, immediate=True)
        if self.section is None:
            self._show_broken()
            return
        # Told at once (signals), so that the other panes follow in the same frame.
        self.fde_table.row_highlighted.subscribe(self, self._fde_highlighted, immediate=True)
        self.watch(self.filter_line, "value", self._filter_typed, init=False)
        self.fre_table.row_highlighted.subscribe(self, self._fre_highlighted, immediate=True)
        self.code_table.row_highlighted.subscribe(self, self._code_highlighted, immediate=True)
        self.structure.field_highlighted.subscribe(self, self._field_highlighted, immediate=True)
        self.fde_table.focus()
        self.call_after_refresh(self._fill_structure_tab)
        first = self.fields.function_field(0) if len(self.section) else self.fields.root
        self._select(Selection.of(first), origin=None)
        if self.error is not None:
            self._status(str(self.error))
        # After the first frame: a thread started now would share the interpreter with painting it. The
        # overview's pass holds the interpreter for seconds: it waits for the frames after the first too (the
        # status line, the tab's underline), which would otherwise come half a second later.
        start = lambda: self.run_worker(self._prepare, thread=True, exit_on_error=False)  # noqa: E731
        self.fde_table.expect_orders(True)
        if self.overview.ready:
            self.call_after_refresh(start)
        else:
            self._progress = self.set_interval(PROGRESS_EVERY_S, self.summary.counts_changed)
            self.call_after_refresh(self.set_timer, FIRST_FRAMES_S, start)

    def _prepare(self) -> None:
        """In a worker thread, after the first frame: what the first screen did without, one after the other
        (each shares the interpreter with the keys): every function gone through, the names, the FDE table's
        orders, the checks (and the order of the notes they change)."""
        try:
            self._prepare_all()
        finally:  # a sort still waiting for its order makes it now
            self.app.call_from_thread(self.fde_table.expect_orders, False)

    def _prepare_all(self) -> None:
        with _keys_first():
            listed = self.overview.ready and self.names.ready  # the names are listed by the overview's starts
            if not self.overview.ready:
                try:
                    self.overview.build(Document(self.source).require_section())  # a model of the thread's own
                except Exception as exc:  # a damaged file the model did not foresee: said, not "working…" forever
                    self.app.call_from_thread(self._status, f"The functions could not all be read: {exc}")
                    return
                self.fde_table.measure_overview()
                self.app.call_from_thread(self._overview_ready)
            if not listed:
                self._load_names()
            with _uncollected():
                self.fde_table.prepare_orders(self._give_way, self._order_made_in_the_worker)
            self._validate()
            with _uncollected():
                self.fde_table.prepare_orders(self._give_way, self._order_made_in_the_worker)

    def _order_made_in_the_worker(self) -> None:
        self.app.call_from_thread(self._order_made)

    def _order_made(self) -> None:
        """The worker made a column's order: a sort that waited for it done, its first row selected if a key
        asked for it (`sort_functions`)."""
        if self.fde_table.order_made():
            self.summary.counts_changed()
            if self.sort_asked:
                self.sort_asked = False
                self.sorted_shown()
            else:
                self._say_sort()

    def _overview_ready(self) -> None:
        """Every function has been gone through: the columns exact, the counts said, and a sort or a filter
        asked for meanwhile done."""
        if self._progress is not None:
            self._progress.stop()
        waiting = self.fde_table.waiting
        self.fde_table.overview_ready()
        self.fre_table.measure(self.overview)
        self.summary.counts_changed()
        self.tables.share()
        if waiting and not self.fde_table.waiting and self.fde_table.sort != Sort(0):
            self.sorted_shown()

    async def _fill_structure_tab(self) -> None:
        """Mount the tree and the detail panel, which nobody sees at start, after the first frame.

        Textual's `Lazy` does the same, but fails if the app quits first. Side by side in the pane itself
        (`#structure` lays them out): a container between them was one more to draw on every frame of the tab.
        """
        if self.structure_pane.is_attached:  # not when the app quit before its first frame
            await self.structure_pane.mount(self.structure, self.detail)

    def _load_names(self) -> None:
        """In a worker thread: read the symbol table and name every function, then show the names."""
        new = not self.names.ready  # else read before the first screen, only listed now (by the overview's starts)
        self.names.load()
        names = self.names.listing(self.section, self.overview.column("start"))
        self.app.call_from_thread(self._names_loaded, names, new, max(map(len, names), default=0))

    def _names_loaded(self, names: list[str], new: bool = True, widest: int | None = None) -> None:
        self.fde_table.names_changed(names, widest)
        if not new:
            return
        self.structure.names_changed()
        self.summary.refresh(layout=True)
        if self.selected is not None:
            self._status(self._status_text(self.selected))

    def _validate(self) -> None:
        """In a worker thread: run every check, on a model of its own (the panes' is not shared between threads).
        A check that fails says so in the Problems tab, rather than leaving it blank."""
        try:
            found = check_document(Document(self.source), pace=self._give_way)
            shown = list(islice(found, PROBLEMS_SHOWN))
            more = sum(1 for _ in found)
        except Exception as exc:  # a damaged file the checks did not foresee: said, not a blank tab
            self.app.call_from_thread(self.problems.failed, f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._validated, shown, more)

    def _give_way(self) -> None:
        """In the worker's thread, every few hundred functions checked or every piece of a column's order
        (`SortOrders`): while keys are being pressed (one within `KEYS_BUSY_S`), wait, so that the keys' thread
        has the interpreter to itself; the work goes on when the keys stop. Sharing it, a move on a million
        functions took twice its time while the checks ran, two to four times while the orders were made."""
        while time.monotonic() - self.app.last_input < KEYS_BUSY_S:
            time.sleep(KEYS_BUSY_S / 4)

    def _validated(self, diagnostics: list[Diagnostic], more: int) -> None:
        """The checks are done: list the problems, count them in the header, mark their functions."""
        self.problems.show(diagnostics, more)
        worst: dict[int, Severity] = {}
        for diag in diagnostics:
            if (
                diag.fde is not None
                and diag.severity is not Severity.INFO
                and worst.get(diag.fde) is not Severity.ERROR
            ):
                worst[diag.fde] = diag.severity
        counted = [d for d in diagnostics if d.severity is not Severity.INFO]
        self.summary.problems = len(counted) + more
        self.summary.refresh(layout=True)
        self.tabs.get_tab("problems-tab").label = f"Problems ({len(counted) + more})" if counted or more else "Problems"
        self.problem_functions = worst
        self.fre_table.set_problems({(d.fde, d.fre) for d in counted if d.fde is not None and d.fre is not None})
        self.hex_view.mark_problems((d.start, max(d.end, d.start + 1)) for d in counted)
        self.structure.problems_changed(worst)

    def action_next_consumer(self) -> None:
        """The next consumer of the cycle (format, kernel, libsframe...): its verdict on top of the Problems
        tab, its failing rows marked in the FRE table, its rule in the field detail."""
        if self.section is None:
            return
        names = consumer_names()
        self.consumer = names[(names.index(self.consumer) + 1) % len(names)]
        self.action_show_tab("problems")
        if self.consumer == FORMAT:
            self._show_consumer(None)
        elif self.consumer in self.verdicts:
            self._show_consumer(self.verdicts[self.consumer])
        else:
            self.consumer_line.update(f"{self.consumer}: judging the section…")
            self.run_worker(lambda: self._judge(self.consumer), thread=True, exit_on_error=False)

    def _judge(self, name: str) -> None:
        """In a worker thread: the consumer's verdict, on a document of its own."""
        verdict = judge_document(Document(self.source), name)
        self.app.call_from_thread(self._judged, verdict)

    def _judged(self, verdict: Verdict) -> None:
        self.verdicts[verdict.consumer] = verdict
        if self.consumer == verdict.consumer:
            self._show_consumer(verdict)

    def _show_consumer(self, verdict: Verdict | None) -> None:
        """The chosen consumer's verdict shown everywhere it applies (None: the format's checks alone)."""
        names = consumer_names()
        following = names[(names.index(self.consumer) + 1) % len(names)]
        if verdict is None:
            self.consumer_line.update(_format_line())
            self.fre_table.show_consumer(None)
            self.detail.consumer_rule = None
        else:
            marks = ConsumerMarks(verdict)
            self.consumer_line.update(f"{verdict.consumer}: {verdict_text(verdict)}  (v: {following})")
            self.fre_table.show_consumer(marks.mark, verdict.consumer)
            self.detail.consumer_rule = lambda field: self._consumer_rule(marks, field)
        self.consumer_line.set_class(verdict is not None and (not verdict.accepted or bool(verdict.lookups)), "-bad")
        if self.selected is not None and self.detail.field is not None:
            self.detail.show(self.detail.field)
        self.tables.share()

    def _consumer_rule(self, marks: ConsumerMarks, field: Field) -> str | None:
        if field.fde is None or field.fre is None:
            return None
        func = self.section.function(field.fde)
        return marks.explain(func, func.rows[field.fre])

    def on_problem_list_chosen(self, message: ProblemList.Chosen) -> None:
        """A problem chosen: its bytes, field, function and row selected; what is wrong on the status line."""
        diag = message.diagnostic
        self.goto_offset(diag.start)
        self.hex_view.highlight(diag.start, max(diag.end, diag.start + 1))
        self._status(f"{diag.severity.value} {diag.check.id}: {diag.path}: {diag.message}")
        self.problems.focus()

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
        """Another function chosen in the FDE table: a jump, kept in the history."""
        index = self.fde_table.fde_at(row)
        selection = Selection(index, None, self.fields.function_field(index))
        self._record(selection)
        self._select(selection, origin="fdes")

    def _fre_highlighted(self, index: int) -> None:
        func = self.fre_table.function
        if func is not None:
            self._select(Selection(func.index, index, self._row_field(func.index, index)), origin="fres")

    def _code_highlighted(self, line: int) -> None:
        """An instruction chosen: the row it is on is the selection (unless it is already)."""
        func, fre = self.code_table.function, self.code_table.fre_at(line)
        if func is not None and fre is not None and (self.selected is None or self.selected.fre != fre):
            self._select(Selection(func.index, fre, self._row_field(func.index, fre)), origin="code")

    def _field_highlighted(self, field: Field) -> None:
        self._select(Selection.of(field), origin="tree")

    def _hex_moved(self, offset: int) -> None:
        """The innermost field at the byte under the hex cursor is the selection."""
        if self.section is None:
            self._status(self.source.where(offset))
        else:
            self._select(Selection.of(self.fields.field_at(offset)), origin="hex")
        found, match = self.hex_view.match_number(), self.hex_view.match
        if found is not None and match is not None and match[0] == offset:
            pattern = _pattern_text(self.hex_view.pattern)
            self._status(f"match {found[0]} of {found[1]} for {pattern}: {self._status_shown}")

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        if message.pane.id == "structure" and self._reveal_pending is not None:
            self._reveal(self._reveal_pending)  # before the tab's first frame: shown revealed, one layout
        if message.pane.id in ("functions", "frame") and self._flush_tables():
            self.refresh(repaint=False, layout=True)  # not drawn whole again: the tab's layout draws what changed
        if message.pane.id == "frame":
            self._show_frame()

    def on_frame_picture_step(self, message: FramePicture.Step) -> None:
        """`←`/`→` in the frame picture: the FRE table's cursor moves, and the picture follows it."""
        self.fre_table.move_cursor(self.fre_table.cursor + message.delta)

    # ------------------------------------------------------------------ the selection

    def _select(self, selection: Selection, origin: str | None) -> None:
        """Show `selection` in every pane but `origin`, the one it was chosen in."""
        previous, self.selected = self.selected, selection
        # A byte chosen in the same row of the same function leaves the tables as they were.
        same_row = previous is not None and (previous.fde, previous.fre) == (selection.fde, selection.fre)
        field = selection.field
        relayout = self._show_tables(selection, origin)
        self.hex_view.highlight(field.span.start, field.span.end, self._boundaries(field), scroll=origin != "hex")
        if origin != "hex":
            self.hex_view.move_cursor(field.span.start, notify=False)
        resized = self.detail.show(field) if origin == "tree" else self._reveal(field)
        relayout = relayout or resized
        if self.tabs.active == "frame":
            self._show_frame()
        self._status(self._status_text(selection))
        # Each pane changed above asks for its repaint a moment later, by message;
        # Textual paints on a fixed beat (60 a second), so the first request to
        # arrive gets a frame of its own and the rest wait a frame or two. Asking
        # now puts everything in one frame: 20 ms a move instead of 45. Only for
        # the panes a selection changes: the whole screen was a third of a move.
        if relayout:
            self.refresh(layout=True)
        else:
            tables = not (origin == "hex" and same_row)
            self.refresh(*(pane.region for pane in self._selection_panes(tables) if pane.region))

    def _selection_panes(self, tables: bool) -> tuple[Widget, ...]:
        """The panes a new selection changes (those on a hidden tab have no region on the screen); the tables
        only if they changed (`tables`): half the lines a move in the hex pane painted were theirs, unchanged."""
        panes = (self.hex_view, self.structure_pane, self.frame_picture, self.status_line)
        return (self.tables, *panes) if tables else panes

    def _show_tables(self, selection: Selection, origin: str | None) -> bool:
        """The FDE and FRE tables on `selection` now if their tab is shown (or the frame picture, which
        reads the FRE table), else when it is: a hidden FRE table that changed height would cost a
        layout of the whole screen on every move in the tree.

        Returns whether that changes the layout.
        """
        if self.tabs.active in ("structure", "problems-tab"):
            self._tables_pending = selection
            return False
        self._tables_pending = None
        return self._update_tables(selection, origin)

    def _flush_tables(self) -> bool:
        """The tables on the selection they were spared while hidden (for a move that starts from them)."""
        pending, self._tables_pending = self._tables_pending, None
        return pending is not None and self._update_tables(pending, origin=None)

    def _update_tables(self, selection: Selection, origin: str | None) -> bool:
        index, row = selection.fde, selection.fre
        if index is None:
            return False
        if origin != "fdes":
            self._show_in_table(index)
        relayout = self._show_rows(index)
        if row is not None and origin != "fres":
            self.fre_table.move_cursor(row, notify=False)
        if row is not None and origin != "code":
            self.code_table.show_row(row)
        return relayout

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
        rows_resized = self.fre_table.show_function(func)  # kept on the function even while hidden
        code_resized = self.code_table.show_function(func)
        relayout = code_resized if self.code_table.display else rows_resized  # only the one shown takes room
        name = self.names.of(func)
        self.fre_table.border_title = f"FREs of fdes[{index}]" + (f" {name}" if name else "")
        self.code_table.border_title = f"instructions of fdes[{index}]" + (f" {name}" if name else "")
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
        chunk = field.type_name == ROW_CHUNK_TYPE and field.parent is not None
        children = field.parent.children() if chunk and field.parent is not None else field.children()
        if isinstance(children, RowFields):  # rows (or a chunk of them): where each starts, no row decoded
            first, last = field.value if chunk else (0, len(children) - 1)
            return list(children.func.rows.positions[first : min(last + 1, first + STRIPES)])
        if field.kind == "bits" or not field.has_children:
            return []
        return [child.span.start for child in children]

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
            self._ready_the_tree_later(TREE_READY_AFTER_S)
            return False
        self._reveal_pending = None
        self.structure.reveal(field)
        return self.detail.show(field)

    def _ready_the_tree_later(self, delay: float) -> None:
        if self._ready_timer is None:
            self._ready_timer = self.set_timer(delay, self._ready_the_tree)

    def _ready_the_tree(self) -> None:
        """The hidden tree and detail panel brought to the selection once no key has come for
        `TREE_READY_AFTER_S`, so that showing their tab has nothing left to do but lay it out and draw it.

        Revealed as the tab was shown, its first look at a million functions added 470 nodes and measured their
        lines, and the detail worked out its new explanation, all in the key: from the key to the tree drawn,
        headless, 28-44 ms of CPU (median 29 of 6 runs); readied before, 18-33 (median 20). A key that comes
        meanwhile waits for it (a few milliseconds: a chunk's 200 FDEs and their lines), which is why it waits
        for the keys to stop; and for the overview, before which a chunk's labels are decoded one by one while
        the overview's pass holds the interpreter. The tree shows what it would have
        (`StructureTree.reveal(hidden=True)`).
        """
        self._ready_timer = None
        field = self._reveal_pending
        if field is None or self.tabs.active == "structure":
            return
        wait = self.app.last_input + TREE_READY_AFTER_S - time.monotonic()
        if wait > 0 or not self.structure.is_mounted or not self.overview.ready:
            self._ready_the_tree_later(wait if wait > 0 else TREE_READY_AFTER_S)
            return
        self._reveal_pending = None
        self.structure.reveal(field, hidden=True)
        self.detail.show(field)

    def _status(self, text: str) -> None:
        """The status line (one line, so no layout to redo)."""
        self._status_shown = text
        self.status_line.update(text, layout=False)

    def _show_frame(self) -> None:
        """The frame picture on the selected row (the FRE table's, when a whole function is selected)."""
        selection = self.selected
        if selection is None or selection.fde is None:
            return
        func = self.section.function(selection.fde)
        row = selection.fre if selection.fre is not None else self.fre_table.cursor
        self.frame_picture.show(func, row, self.names.of(func))

    def action_unwind(self) -> None:
        self.app.open_debugger()  # type: ignore[attr-defined]

    def action_next_function(self) -> None:
        if self.section is not None:
            self._flush_tables()
            self.fde_table.move_cursor(self.fde_table.cursor + 1)

    def action_previous_function(self) -> None:
        if self.section is not None:
            self._flush_tables()
            self.fde_table.move_cursor(self.fde_table.cursor - 1)

    def action_show_tab(self, tab: str) -> None:
        if self.section is None:
            return
        target = {
            "functions": self.fde_table,
            "structure": self.structure,
            "frame": self.frame_picture,
            "problems": self.problems,
        }[tab]
        if not target.is_mounted:  # the structure tab's panes arrive after the first frame
            self.call_after_refresh(self.action_show_tab, tab)
            return
        self.tabs.active = "problems-tab" if tab == "problems" else tab
        target.focus()

    def action_toggle_frame(self) -> None:
        """The frame picture of the selected row, or back to the tables."""
        if self.section is not None:
            self.action_show_tab("functions" if self.tabs.active == "frame" else "frame")

    def action_toggle_code(self) -> None:
        """The selected function's instructions in place of its rows (`i`), or the rows again."""
        if self.section is None:
            return
        self.action_show_tab("functions")
        shown = self.tables.swap()
        func = self.fre_table.function
        if shown is self.code_table and func is not None:
            self.code_table.show_function(func)
            if self.selected is not None and self.selected.fre is not None:
                self.code_table.show_row(self.selected.fre)
            missing = self.code_table.listing.missing if self.code_table.listing is not None else ""
            self._status(missing or "▶ a row starts, with its change: the instruction just above made it (f: frame)")
        shown.focus()

    def action_focus_hex(self) -> None:
        self.hex_view.focus()

    # ------------------------------------------------------------------ search and copy

    def on_hex_view_search_requested(self) -> None:
        self.action_search_bytes()

    def action_search_bytes(self) -> None:
        hint = 'Hex bytes (e2 de, e2de) or text in quotes ("main"); then n / N in the hex pane: next / previous.'
        prompt = Prompt("Search the bytes", hint, 'e2 de, e2de or "text"', parse_pattern)
        self.app.push_screen(prompt, self.search_bytes)

    def search_bytes(self, pattern: bytes | None) -> None:
        """Find `pattern` from the hex cursor on, put the cursor on it and select the field there."""
        if not pattern:
            return
        self.hex_view.focus()
        offset = self.hex_view.search(pattern)
        if offset is None:
            self.app.notify(f"{_pattern_text(pattern)} is not in the section.", severity="warning")
            return
        self._hex_moved(offset)

    def action_copy(self, what: str) -> None:
        """`c` the selected value; `C` the row of the focused table, else the selected field's path."""
        if self.selected is None:
            return
        text, label = self._value_to_copy() if what == "value" else self._path_to_copy()
        self.app.copy_to_clipboard(text)
        shown = text if len(text) <= 60 else text[:59] + "…"
        self.app.notify(f"{label}: {shown}", title="Copied")

    def _value_to_copy(self) -> tuple[str, str]:
        """The selected field's value as shown; for a structure, its bytes in hex."""
        field = self.selected.field
        name = field.path or "section"
        if field.display:
            return field.display, f"the value of {name}"
        return self.source.data[field.span.start : field.span.end].hex(" "), f"the bytes of {name}"

    def _path_to_copy(self) -> tuple[str, str]:
        """The focused table's row as text (its cells, two spaces apart), else the field's path."""
        table = self.focused
        if isinstance(table, RowTable) and table.row_count:
            cells = "  ".join(cell.strip() for cell in table.row_cells(table.cursor))
            return cells, f"row {table.cursor} of the {'FDE' if table is self.fde_table else 'FRE'} table"
        return self.selected.field.path or "section", "the path"

    def action_zoom(self) -> None:
        """The focused pane on the whole screen, or back."""
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused, container=False)


@contextmanager
def _keys_first() -> Iterator[None]:
    """The interpreter handed back to the keys' thread sooner while a worker runs beside it (`SWITCH_INTERVAL_S`).

    The switch interval is the process's; it is set back when the worker is done.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@contextmanager
def _uncollected() -> Iterator[None]:
    """No automatic collection of cycles while the worker makes the FDE table's orders (the process's switch,
    set back after).

    The orders are made of lists of up to a million numbers or names (pieces sorted, merged), young while they
    are made: each young collection meanwhile walks them, in whichever thread allocates the object that sets
    it off, the keys' too (3-4 ms a collection, a few per key; the Structure tab's first open spent 8 ms of its
    40 so). The orders make no cycles; the keys' are collected once the orders are done, or by the app's idle
    collections before (`SfviewApp._collect_when_idle`).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _pattern_text(pattern: bytes) -> str:
    """What was searched for as it was typed: `"main"` for printable text, else `e2 de`."""
    text = pattern.decode("ascii", "replace")
    return f'"{text}"' if text.isprintable() and text.isascii() else pattern.hex(" ")
