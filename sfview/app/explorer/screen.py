"""`ExplorerScreen`: the section's panes, composed of the explorer's parts.

The screen lays the panes out, keeps the keys, and applies what its parts
answer: `state.py` holds the selection and the history, `panes.py` brings
every pane to a selection, `navigation.py` and `filtering.py` say where a
jump lands and what a sort or a filter waits for, `background.py` runs the
work after the first screen, `dwarf_beside.py` says what DWARF CFI has beside
the rows; each pane's behaviour is in its widget (`widgets/`).

Other screens (the unwinding debugger) point the explorer at something with
`show_row`, `goto_address` and `goto_offset`.

The focus moves at once (`Screen.set_focus`), not after the next frame as
`Widget.focus` moves it, where the filter line takes or leaves it: the
footer's keys (the letters' go while the filter line has the focus) then
change in the frame that shows the rest, not in a frame of their own, which
would lay out and draw the screen once more (`enter` would show its footer
noticeably after the key).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from textual import messages
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static, TabbedContent, TabPane

from sfview.app import notation, palette
from sfview.app.clipboard import to_tmux_buffer
from sfview.app.consumer_marks import FORMAT, ConsumerMarks, consumer_names
from sfview.app.explorer import editing, filtering, navigation
from sfview.app.explorer.background import NAMES_IN_THE_BACKGROUND, Background, Deliveries, first_overview
from sfview.app.explorer.dwarf_beside import DwarfBeside
from sfview.app.explorer.editing import Resume
from sfview.app.explorer.filtering import Waits
from sfview.app.explorer.navigation import Landing, Refusal, Way
from sfview.app.explorer.panes import Origin, Panes, Tab
from sfview.app.explorer.state import ExplorerState, Selection
from sfview.app.fields import Field, FieldTree
from sfview.app.names import ExplorerNames
from sfview.app.screens.goto import GotoNumber, GotoSymbol, Prompt, parse_pattern
from sfview.app.screens.sort import SortPicker
from sfview.app.widgets.code_table import CodeTable
from sfview.app.widgets.detail import FieldDetail
from sfview.app.widgets.fde_table import FAILS, FILTER_WORDS, PROBLEMS, FdeTable, Sort
from sfview.app.widgets.filter_line import FilterLine
from sfview.app.widgets.footer import KeyFooter
from sfview.app.widgets.frame_picture import FramePicture
from sfview.app.widgets.fre_table import FreTable
from sfview.app.widgets.header import HeaderSummary
from sfview.app.widgets.hexview import HexView
from sfview.app.widgets.minimap import Minimap
from sfview.app.widgets.problems import ProblemList
from sfview.app.widgets.row_table import RowTable
from sfview.app.widgets.structure_tree import StructureTree
from sfview.app.widgets.table_stack import TableStack
from sfview.check.catalogue import Severity
from sfview.document import Document
from sfview.edit.patches import Patch
from sfview.errors import InputError
from sfview.inputs.symbols import Place, Symbol
from sfview.sframe.model.section import Section

if TYPE_CHECKING:
    from sfview.check.run import Diagnostic

__all__ = ["ExplorerScreen"]

FILTER_HINT = f"part of a name, or {', '.join([*FILTER_WORDS, PROBLEMS])}"
"""What the empty filter line says it takes."""

WIDE = 176
"""From this width the hex pane (97 columns, its full lines) sits beside the tabs instead of below them."""


def _format_line() -> str:
    """The Problems tab's first line while the format's checks alone are shown."""
    names = consumer_names()
    return f"format: the format's own checks  (v: {names[1]}'s verdict)" if len(names) > 1 else "format"


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
        Binding("V", "keep_consumer", "Keep consumer", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("S", "sort_pick", "Sort", show=False),
        Binding("R", "sort_reverse", "Reverse", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("e", "edit", "Edit", show=False),
        Binding("E", "edits", "Edits", show=False),
        Binding("ctrl+z", "undo", "Undo", show=False),
        Binding("ctrl+y", "redo", "Redo", show=False),
        Binding("w", "write", "Write copy", show=False),
        Binding("m", "toggle_minimap", "Minimap", show=False),
    ]

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    """Textual's, without drawing the whole screen again when the focus moves: the widgets whose style the
    focus changes are restyled and drawn by Textual anyway (`Screen._update_focus_styles`), and the screen
    itself draws nothing of the focus. Drawn again, the screen would be a second frame right after every frame
    of a focus change, which holds the interpreter while the first one waits to be written out."""

    def __init__(self, doc: Document, resume: Resume | None = None) -> None:
        super().__init__()  # no id: an edit opens a new explorer beside the old one for a moment
        self.doc = doc
        self.resume = resume
        """Where to open, on a section just edited (`editing.Resume`); None: on its first function."""
        self.section: Section | None = doc.section
        self.error: InputError | None = doc.error
        self.state = ExplorerState()
        self.names = ExplorerNames(doc)
        if self.section is None or len(self.section) <= NAMES_IN_THE_BACKGROUND:
            self.names.load()
        self.hex_view = HexView(self.doc.data, self.doc.address, id="hex")
        self.hex_view.border_title = "bytes"
        self.status_line = Static(id="status", markup=False)
        self.footer = KeyFooter()
        if self.section is None:
            self.summary = HeaderSummary(self.doc, None, self.error, self.names, id="summary")
            return
        # The panes of a readable section; without one, only the bytes and the error are shown.
        self.fields = FieldTree(self.section)
        self.overview = first_overview(self.section)
        self.tabs = TabbedContent(id="views")
        ready = self.overview.ready
        names = self.names.listing(self.section, self.overview.column("start")) if ready else [""] * len(self.section)
        self.fde_table = FdeTable(self.section, self.overview, names, widest=None if ready else 0, id="fdes")
        self.fre_table = FreTable(self.section, self.overview, id="fres")
        self.filter_line = FilterLine(placeholder=FILTER_HINT, id="fde-filter")
        self.filter_bar = Horizontal(Static("filter", id="filter-prompt"), self.filter_line, id="filter-bar")
        self.fre_legend = Static(notation.legend(self.section), id="fre-legend", markup=False)
        self.fre_note = Static(id="fre-note", markup=False)
        self.dwarf_note = Static(id="dwarf-note", markup=False)
        self.code_table = CodeTable(doc, self.overview, id="code")
        self.tables = TableStack(self.fde_table, self.fre_table, self.code_table, id="tables")
        self.structure_pane = TabPane("Structure", id=Tab.STRUCTURE.pane_id)
        self.structure = StructureTree(self.fields, self.names, self.overview, id="tree")
        self.detail = FieldDetail(self.fields, self.doc, id="detail")
        self.frame_picture = FramePicture(id="frame-picture")
        self.problems = ProblemList(id="problems")
        # The consumers are named once the first screen is on (naming them imports their readers)
        self.consumer_line = Static("format: the format's own checks", id="consumer-verdict", markup=False)
        self.summary = HeaderSummary(
            self.doc, self.section, self.error, self.names, self.fde_table.counts, id="summary"
        )
        self.dwarf = DwarfBeside(doc, self.section)
        self.minimap = Minimap(len(doc.data), palette.section_parts(self.section), id="minimap")
        self.panes = self._panes(self.section)
        self.background = self._background(self.section)

    def _panes(self, section: Section) -> Panes:
        """The part that keeps the panes on one selection, handed the widgets it brings to it."""
        return Panes(
            self,
            state=self.state,
            section=section,
            fields=self.fields,
            overview=self.overview,
            names=self.names,
            dwarf=self.dwarf,
            tabs=self.tabs,
            tables=self.tables,
            fde_table=self.fde_table,
            fre_table=self.fre_table,
            code_table=self.code_table,
            fre_note=self.fre_note,
            dwarf_note=self.dwarf_note,
            structure_pane=self.structure_pane,
            structure=self.structure,
            detail=self.detail,
            frame_picture=self.frame_picture,
            hex_view=self.hex_view,
            status_line=self.status_line,
            say=self._status,
            clear_filter=self._clear_filter,
            last_input=self._last_input,
            selected=self._selected,
        )

    def _background(self, section: Section) -> Background:
        """The part that runs the work after the first screen, handed where each result goes."""
        return Background(
            self,
            doc=self.doc,
            section=section,
            overview=self.overview,
            names=self.names,
            state=self.state,
            fde_table=self.fde_table,
            summary=self.summary,
            deliver=Deliveries(
                say=self._status,
                overview_ready=self._overview_ready,
                names_loaded=self._names_loaded,
                order_made=self.order_made,
                validated=self._validated,
                check_failed=self.problems.failed,
                judged=self._judged,
            ),
            last_input=self._last_input,
        )

    def _last_input(self) -> float:
        """When a key was last pressed (`SfviewApp.last_input`)."""
        return self.app.last_input  # type: ignore[attr-defined]

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
                with TabPane("Functions", id=Tab.FUNCTIONS.pane_id):
                    yield self.filter_bar
                    yield self.tables
                    yield self.fre_legend
                    yield self.fre_note
                    yield self.dwarf_note
                yield self.structure_pane  # filled after the first frame
                with TabPane("Frame", id=Tab.FRAME.pane_id):
                    yield self.frame_picture
                with TabPane("Problems", id=Tab.PROBLEMS.pane_id):
                    yield self.consumer_line
                    yield self.problems
            yield self.hex_view
            yield self.minimap
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
        self.call_after_refresh(lambda: self.state.consumer == FORMAT and self.consumer_line.update(_format_line()))
        first = self.fields.function_field(0) if len(self.section) else self.fields.root
        self.panes.select(Selection.of(first), Origin.JUMP)
        if self.error is not None:
            self._status(str(self.error))
        self.background.start()
        if self.resume is not None:
            self.call_after_refresh(self._resume, self.resume)

    async def _fill_structure_tab(self) -> None:
        """Mount the tree and the detail panel, which nobody sees at start, after the first frame.

        Textual's `Lazy` does the same, but fails if the app quits first. Side by side in the pane itself
        (`#structure` lays them out): a container between them would be one more to draw on every frame of the
        tab.
        """
        if self.structure_pane.is_attached:  # not when the app quit before its first frame
            await self.structure_pane.mount(self.structure, self.detail)

    def _show_broken(self) -> None:
        """No section model: the error, and the bytes with the cursor on the offending one."""
        self.add_class("-broken")
        self.hex_view.focus()
        offset = self.error.offset if self.error is not None else None
        if offset is not None:
            self.hex_view.highlight(offset, offset + 1)
            self.hex_view.move_cursor(offset, notify=False)
        self._status(str(self.error))

    def _status(self, text: str) -> None:
        """The status line (one line, so no layout to redo)."""
        self.state.status_shown = text
        self.status_line.update(text, layout=False)

    # ------------------------------------------------------------------ the minimap

    def action_toggle_minimap(self) -> None:
        """`m`: the minimap at the right, and every pane's fields in their kind's colour; again: both gone."""
        if self.section is None:
            return
        shown = not self.has_class("-minimap")
        self.set_class(shown, "-minimap")
        self.hex_view.colour_by_kind(self._kind_style if shown else None)
        self.structure.colour_by_kind(shown)
        self.fde_table.colour_titles(palette.TITLE_KINDS_COLOURS if shown else {})
        self.fre_table.colour_titles(palette.ROW_TITLES_COLOURS if shown else {})
        if shown:
            if self.state.selected is not None:
                self._selected(self.state.selected)
            self.minimap.show(problems=self.hex_view.problems)
            self.set_focus(self.minimap)
            self._status(f"minimap: {palette.legend()}; a click or up/down goes there (m: hide it)")
        elif self.focused is self.minimap:
            self.set_focus(self.hex_view)

    def _kind_style(self, offset: int) -> Style | None:
        """The colour of the field at `offset`'s kind (`palette`), for the hex pane."""
        return palette.colour_of(self.fields.field_at(offset).path)

    def _selected(self, selection: Selection) -> None:
        """A selection shown: marked on the minimap, with the bytes the hex pane shows, while it is shown."""
        if self.has_class("-minimap"):
            span = selection.field.span
            self.minimap.show(selection=(span.start, span.end), view=self.hex_view.shown_bytes)

    def on_minimap_jump(self, message: Minimap.Jump) -> None:
        """A slice of the minimap chosen: the field at its first byte, the minimap keeping the focus."""
        self.hex_view.move_cursor(message.offset, notify=False)
        self._record(Selection.of(self.fields.field_at(message.offset)))
        self._hex_moved(message.offset)

    # ------------------------------------------------------------------ editing

    def action_edit(self) -> None:
        """`e`: the field selected (or the byte under the hex cursor, from the hex pane) typed anew."""
        if self.section is None:
            return
        field = self.state.selected.field if self.state.selected is not None else None
        hex_focused = self.focused is self.hex_view
        slot = editing.target(self.section, field, hex_focused, self.hex_view.cursor)
        if isinstance(slot, str):
            self.app.notify(slot, title="Nothing to edit here", severity="warning")
            return
        current = field.display if field is not None and not hex_focused else ""
        little = self.section.little_endian
        prompt = Prompt(
            f"Edit {slot.path}",
            editing.hint(slot, self.doc.data, current),
            "0x40, 16., -8." + (", or a name" if slot.names or slot.flags else ""),
            lambda text: editing.typed(slot, text, self.doc.data, little),
        )
        self.app.push_screen(prompt, self._edited)

    def _edited(self, patch: Patch | None) -> None:
        if patch is not None:
            self.app.edit(patch)  # type: ignore[attr-defined]

    def resume_here(self, said: str) -> Resume:
        """Where this explorer is, for the one that opens on the edited section (`editing.Resume`)."""
        selected = self.state.selected
        return Resume(
            tab=(self.panes.tab if self.section is not None else None) or Tab.FUNCTIONS,  # no panes: unreadable
            path=selected.field.path if selected is not None else None,
            offset=self.hex_view.cursor,
            hex_focused=self.focused is self.hex_view,
            consumer=self.state.consumer,
            kept=tuple(self.state.kept),
            said=said,
        )

    def _resume(self, resume: Resume) -> None:
        """Open where the explorer on the section before the edit was: its tab, field, focus and consumer."""
        if self.section is None:
            self._status(f"{resume.said}: {self.error}")
            return
        field = self.fields.find(resume.path) if resume.path is not None else None
        if field is None:
            field = self.fields.field_at(min(resume.offset, len(self.doc.data) - 1))
        self.action_show_tab(resume.tab)
        self.panes.select(Selection.of(field), Origin.JUMP)
        if resume.hex_focused:
            self.hex_view.move_cursor(resume.offset, notify=False)
            self.hex_view.focus()
        self.state.kept = list(resume.kept)
        if resume.consumer != FORMAT:
            self.state.consumer = resume.consumer
            self.consumer_line.update(f"{resume.consumer}: judging the edited section…")
        for name in self.state.marked():
            self.background.judge(name)
        self._status(resume.said)

    def action_edits(self) -> None:
        """`E`: the edits made, to go to the bytes of one."""
        edits = self.app.edits  # type: ignore[attr-defined]
        from sfview.app.screens.edits import EditList

        self.app.push_screen(EditList(edits), self.goto_offset)

    def action_undo(self) -> None:
        self.app.undo()  # type: ignore[attr-defined]

    def action_redo(self) -> None:
        self.app.redo()  # type: ignore[attr-defined]

    def action_write(self) -> None:
        """`w`: the file written with the edits to a copy (over the file itself only when asked twice)."""
        done = len(self.app.edits.done)  # type: ignore[attr-defined]
        hint = f"{done} edit{'s' * (done != 1)} in force. Where to write the file with them:"
        check = editing.WriteCheck(self.doc.path)
        prompt = Prompt("Write a patched copy", hint, "a path", check, f"{self.doc.path}.patched")
        self.app.push_screen(prompt, self._write)

    def _write(self, path: Path | None) -> None:
        if path is None:
            return
        shown = editing.shown_path(str(path))
        try:
            self.app.write_copy(str(path))  # type: ignore[attr-defined]
        except InputError as exc:
            self.app.notify(str(exc.located(shown)), title="Not written", severity="error")
            return
        self.app.notify(shown, title="Patched copy written")
        self._status(f"written: {shown}")

    # ------------------------------------------------------------------ what the worker delivers

    def order_made(self) -> None:
        """The worker made a column's order: a sort that waited for it done, its first row selected if a key
        asked for it (`sort_functions`)."""
        if self.fde_table.order_made():
            self.summary.counts_changed()
            if self.state.sort_asked:
                self.state.sort_asked = False
                self.sorted_shown()
            else:
                self._say_sort()

    def _overview_ready(self) -> None:
        """Every function has been gone through: the columns exact, the counts said, and a sort or a filter
        asked for meanwhile done."""
        waiting = self.fde_table.waiting
        self.fde_table.overview_ready()
        self.fre_table.measure(self.overview)
        self.summary.counts_changed()
        self.tables.share()
        if waiting and not self.fde_table.waiting and self.fde_table.sort != Sort(0):
            self.sorted_shown()

    def _names_loaded(self, names: list[str], new: bool = True, widest: int | None = None) -> None:
        self.fde_table.names_changed(names, widest)
        if not new:
            return
        self.structure.names_changed()
        self.summary.refresh(layout=True)
        if self.state.selected is not None:
            self._status(self.panes.status_text(self.state.selected))

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
        label = f"Problems ({len(counted) + more})" if counted or more else "Problems"
        self.tabs.get_tab(Tab.PROBLEMS.pane_id).label = label
        self.problem_functions = worst
        self.fre_table.set_problems({(d.fde, d.fre) for d in counted if d.fde is not None and d.fre is not None})
        self.hex_view.mark_problems((d.start, max(d.end, d.start + 1)) for d in counted)
        self.minimap.show(problems=self.hex_view.problems)
        self.structure.problems_changed(worst)

    # ------------------------------------------------------------------ consumers

    def action_next_consumer(self) -> None:
        """The next consumer of the cycle (format, kernel, libsframe...): its verdict on top of the Problems
        tab, its failing PCs marked in the FRE table and listed in the Problems tab, its rule in the field
        detail, beside those of the consumers kept (`V`)."""
        if self.section is None:
            return
        state = self.state
        names = consumer_names()
        state.consumer = names[(names.index(state.consumer) + 1) % len(names)]
        self.action_show_tab(Tab.PROBLEMS)
        if state.consumer != FORMAT and state.consumer not in state.verdicts:
            self.consumer_line.update(f"{state.consumer}: judging the section…")
            self.background.judge(state.consumer)
        self._show_consumers()

    def action_keep_consumer(self) -> None:
        """`V`: keep the consumer shown marked while `v` goes on to the next ones (again: no longer kept)."""
        state = self.state
        if self.section is None or state.consumer == FORMAT:
            self._status("v first: choose a consumer to keep marked (V keeps the one shown)")
            return
        if state.consumer in state.kept:
            state.kept.remove(state.consumer)
            self._status(f"{state.consumer}: no longer kept marked")
        else:
            state.kept.append(state.consumer)
            self._status(f"{state.consumer}: kept marked (marked now: {', '.join(state.marked())})")
        self._show_consumers()

    def _judged(self, marks: ConsumerMarks) -> None:
        self.state.verdicts[marks.name] = marks
        self.fde_table.set_failing(marks.name, marks.failing_functions())
        if FAILS + marks.name in self.fde_table.query.lower().split():
            self._status(f"fails:{marks.name}: {self.fde_table.counts()[0]}")
            self.summary.counts_changed()
            self.tables.share()
        if marks.name == self.state.consumer or marks.name in self.state.kept:
            self._show_consumers()

    def _show_consumers(self) -> None:
        """The consumers marked shown everywhere they apply: the shown one's verdict on top of the Problems
        tab, and each judged one's failing PCs in the FRE table, the field detail and the Problems tab."""
        state = self.state
        marked = [state.verdicts[name] for name in state.marked() if name in state.verdicts]
        shown = state.verdicts.get(state.consumer)
        if state.consumer == FORMAT:
            self.consumer_line.update(_format_line())
        elif shown is not None:
            from sfview.output.diagnostics import verdict_text  # once a consumer is asked for (`v`)

            names = consumer_names()
            following = names[(names.index(state.consumer) + 1) % len(names)]
            keep = "V: no longer keep" if state.consumer in state.kept else "V: keep marked"
            verdict = shown.verdict
            self.consumer_line.update(f"{verdict.consumer}: {verdict_text(verdict)}  (v: {following}, {keep})")
        bad = shown is not None and (shown.refused or bool(shown.verdict.lookups))
        self.consumer_line.set_class(bad, "-bad")
        self.fre_table.show_consumers(marked)
        self.problems.show_consumers(marked)
        self.detail.consumer_rule = (lambda field: self._consumer_rule(marked, field)) if marked else None
        if self.state.selected is not None and self.detail.field is not None:
            self.detail.show(self.detail.field)
        self.tables.share()

    def _consumer_rule(self, marked: list[ConsumerMarks], field: Field) -> str | None:
        if field.fde is None or field.fre is None:
            return None
        func = self.section.function(field.fde)
        row = func.rows[field.fre]
        lines = [line for marks in marked if (line := marks.explain(func, row)) is not None]
        return "\n".join(lines) or None

    def on_problem_list_failure_chosen(self, message: ProblemList.FailureChosen) -> None:
        """A consumer's failing range chosen: its function and the row at its first PC selected."""
        failure = message.failure
        self._land(navigation.failure_landing(self.section, self.names, message.consumer, failure))
        self.problems.focus()

    def on_problem_list_chosen(self, message: ProblemList.Chosen) -> None:
        """A problem chosen: its bytes, field, function and row selected; what is wrong on the status line."""
        diag = message.diagnostic
        self.goto_offset(diag.start)
        self.hex_view.highlight(diag.start, max(diag.end, diag.start + 1))
        self._status(f"{diag.severity.value} {diag.check.id}: {diag.path}: {diag.message}")
        self.problems.focus()

    # ------------------------------------------------------------------ what the panes report

    def _fde_highlighted(self, row: int) -> None:
        """Another function chosen in the FDE table: a jump, kept in the history."""
        index = self.fde_table.fde_at(row)
        selection = Selection(index, None, self.fields.function_field(index))
        self._record(selection)
        self.panes.select(selection, Origin.FDES)

    def _fre_highlighted(self, index: int) -> None:
        func = self.fre_table.function
        if func is not None:
            self.panes.select(Selection(func.index, index, self.panes.row_field(func.index, index)), Origin.FRES)

    def _code_highlighted(self, line: int) -> None:
        """An instruction chosen: the row it is on is the selection (unless it is already)."""
        func, fre = self.code_table.function, self.code_table.fre_at(line)
        selected = self.state.selected
        if func is not None and fre is not None and (selected is None or selected.fre != fre):
            self.panes.select(Selection(func.index, fre, self.panes.row_field(func.index, fre)), Origin.CODE)

    def _field_highlighted(self, field: Field) -> None:
        self.panes.select(Selection.of(field), Origin.TREE)

    def _hex_moved(self, offset: int) -> None:
        """The innermost field at the byte under the hex cursor is the selection."""
        if self.section is None:
            self._status(self.doc.where(offset))
        else:
            self.panes.select(Selection.of(self.fields.field_at(offset)), Origin.HEX)
        found, match = self.hex_view.match_number(), self.hex_view.match
        if found is not None and match is not None and match[0] == offset:
            pattern = _pattern_text(self.hex_view.pattern)
            self._status(f"match {found[0]} of {found[1]} for {pattern}: {self.state.status_shown}")

    def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated) -> None:
        tab = Tab.of_pane(message.pane.id)
        if tab is Tab.STRUCTURE and self.state.reveal_pending is not None:
            self.panes.reveal(self.state.reveal_pending)  # before the tab's first frame: shown revealed, one layout
        if tab in (Tab.FUNCTIONS, Tab.FRAME) and self.panes.flush_tables():
            self.refresh(repaint=False, layout=True)  # not drawn whole again: the tab's layout draws what changed
        if tab is Tab.FRAME:
            self.panes.show_frame()

    def on_frame_picture_step(self, message: FramePicture.Step) -> None:
        """`←`/`→` in the frame picture: the FRE table's cursor moves, and the picture follows it."""
        self.fre_table.move_cursor(self.fre_table.cursor + message.delta)

    # ------------------------------------------------------------------ going to places

    def goto_address(self, target: int | Place | None) -> None:
        """Select the function an unwinder would use for `target`, and its row (`navigation.address_landing`)."""
        if target is None:
            return
        self._land(navigation.address_landing(self.section, self.names, target))

    def _land(self, landing: Landing | Refusal) -> None:
        """A jump to where `landing` says, or what it refuses said."""
        if isinstance(landing, Refusal):
            self._refuse(landing)
            return
        self._jump(self.panes.selection_of(landing.fde, landing.fre))
        if landing.fre is not None:
            self.code_table.show_row(landing.fre, landing.pc)
        self._status(landing.status)

    def _refuse(self, refusal: Refusal) -> None:
        self.app.notify(refusal.message, title=refusal.title, severity=refusal.severity, timeout=refusal.timeout)
        if refusal.status:
            self._status(refusal.status)

    def goto_symbol(self, symbol: Symbol | None) -> None:
        """Go to the symbol chosen in the go-to-symbol dialog (None: the dialog was dismissed)."""
        if symbol is None:
            return
        self.goto_address(navigation.symbol_target(self.names, symbol))

    def goto_offset(self, offset: int | None) -> None:
        """Put the hex cursor on section offset `offset` and select the field there."""
        if offset is None:
            return
        landing = navigation.offset_landing(len(self.doc.data), self.doc.file_offset, offset)
        if isinstance(landing, Refusal):
            self._refuse(landing)
            return
        self.hex_view.focus()
        self.hex_view.move_cursor(landing.offset, notify=False)
        if self.section is not None:
            self._record(Selection.of(self.fields.field_at(landing.offset)))
        self._hex_moved(landing.offset)
        if landing.said:
            self._status(landing.said + self.state.status_shown)

    def action_goto_address(self) -> None:
        hint = "The function and row an unwinder uses for a PC."
        if self.names.relocatable:
            hint += " In this .o every function starts at 0: name the section (.text+0x10) or the function."
        self.app.push_screen(GotoNumber("Go to address", hint, self._lookup), self.goto_address)

    def _lookup(self, name: str) -> int | Place | None:
        return navigation.lookup(self.names, self.doc.symbols, name)

    def action_goto_symbol(self) -> None:
        symbols = self.names.relocated_symbols if self.names.relocatable else self.doc.symbols
        if not len(symbols):
            self.app.notify("This file has no function names (stripped?).", severity="warning")
            return
        section = self.section
        covered = None if self.names.relocatable or section is None else section.find_function
        self.app.push_screen(
            GotoSymbol(symbols, None if covered is None else lambda address: covered(address) is not None),
            self.goto_symbol,
        )

    def action_goto_offset(self) -> None:
        hint = "The field that holds a byte of the section: a section offset, or a file offset inside it."
        prompt = GotoNumber("Go to offset", hint)
        self.app.push_screen(prompt, self.goto_offset)

    def show_row(self, fde: int, fre: int | None) -> None:
        """Select function `fde` (and its row `fre`) in every pane: how other screens point at the section."""
        if self.section is None:
            return
        self._jump(self.panes.selection_of(fde, fre))

    def _record(self, selection: Selection) -> None:
        """A jump to `selection`: the place left and the place reached go into the history."""
        if self.state.selected is not None:
            self.state.history.jump(self.state.selected, selection)

    def _jump(self, selection: Selection) -> None:
        """Select `selection` in every pane, as a jump (kept in the history)."""
        self._record(selection)
        self.panes.select(selection, Origin.JUMP)

    def action_back(self) -> None:
        self._walk_history(Way.BACK)

    def action_forward(self) -> None:
        self._walk_history(Way.FORWARD)

    def _walk_history(self, way: Way) -> None:
        """Back or forward one place in the history; at either end, say so."""
        if self.state.selected is None:
            return
        place = navigation.walk(self.state.history, self.state.selected, way)
        if place is None:
            self.app.bell()
            self._status(f"nothing further {way.value} in the history")
            return
        self.panes.select(place, Origin.JUMP)
        self._status(f"{way.value} ({self.state.history.position}): {self.panes.status_text(place)}")

    def action_next_function(self) -> None:
        if self.section is not None:
            self.panes.flush_tables()
            self.fde_table.move_cursor(self.fde_table.cursor + 1)

    def action_previous_function(self) -> None:
        if self.section is not None:
            self.panes.flush_tables()
            self.fde_table.move_cursor(self.fde_table.cursor - 1)

    # ------------------------------------------------------------------ sorting and filtering

    def action_filter(self) -> None:
        """The filter line, to type in (on the Functions tab)."""
        if self.section is None:
            return
        self.tabs.active = Tab.FUNCTIONS.pane_id
        self.set_focus(self.filter_line)

    def _filter_typed(self, value: str) -> None:
        """The filter line's text changed: the rows filtered in the handling of the key that changed it, not
        on the line's `Changed` message (see `FilterLine`), so that the letter and the rows it keeps are laid
        out once, in one frame. A text set by `_filter` itself is the table's query already: nothing to do."""
        if value != self.fde_table.query:
            self._filter(value)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        """`enter`: back to the table, the filter kept (the line shows it)."""
        if message.input is self.filter_line:
            self.set_focus(self.fde_table)

    def action_clear_filter(self) -> None:
        """`escape`: every function again, the filter line emptied and left."""
        if self.section is None or not (self.fde_table.filtered or self.focused is self.filter_line):
            return
        self._clear_filter()
        self.set_focus(self.fde_table)

    def _clear_filter(self) -> None:
        """Every function again, the filter line emptied, drawn in the next frame with the header's count and
        the footer's keys. Each widget tells the screen it changed when its own messages are next handled, and
        on a big section the header's and the line's come after the frame (the layout that the rows brought
        back ask for), a frame or two late. Drawing the whole screen again after the key would catch them, but
        in a second frame when there is a layout. So the screen is told here."""
        self._filter("")
        for widget in (self.summary, self.filter_line, self.footer):
            self.post_message(messages.Update(widget))

    def _filter(self, query: str) -> None:
        """The FDE table keeps what `query` asks for (the line shows it), the summary counts it."""
        waiting = filtering.waits(self.fde_table.filter(query), self.overview.ready)
        asks = FAILS in query.lower()  # naming the consumers imports their readers: only when a word asks
        judging = filtering.consumers_asked(query, consumer_names(), self.state.verdicts) if asks else []
        for name in judging:
            self.background.judge(name)
        if self.filter_line.value != query:  # after the table took the query: `_filter_typed` has nothing to do
            with self.filter_line.prevent(Input.Changed):
                self.filter_line.value = query
        said = filtering.filter_said(self.fde_table.sort, waiting, self.overview)
        if said is None and judging:
            said = f"working… {', '.join(judging)}: judging the section, the filter applies once judged"
        if said is not None:
            self._status(said)
        self.summary.counts_changed()
        self.tables.share()

    def action_sort_pick(self) -> None:
        """Ask which column to sort the FDE table by (`SortPicker`: one key), and sort by it."""
        if self.section is not None:
            self.app.push_screen(SortPicker(self.fde_table.sort.column), self._sort_picked)

    def _sort_picked(self, column: int | None) -> None:
        if column is not None:
            self.sort_functions(column)

    def action_sort_reverse(self) -> None:
        if self.section is not None:
            self.sort_functions(*filtering.reversed_sort(self.fde_table.sort))

    def sort_functions(self, column: int, reverse: bool = False) -> None:
        """The FDE table sorted by column `column` (an index in `COLUMNS`), the first row selected (the
        largest frame, the most rows: what was asked), the status line saying so."""
        if self.section is None:
            return
        waiting = filtering.waits(self.fde_table.sort_by(column, reverse), self.overview.ready)
        if waiting is not Waits.NOT:
            self._status(filtering.sort_said(self.fde_table.sort, waiting, self.overview))
            if waiting is Waits.FOR_ORDER:
                self.state.sort_asked = True
                self.summary.counts_changed()
            return
        self.state.sort_asked = False
        self.sorted_shown()

    def sorted_shown(self) -> None:
        """The FDE table was sorted: its first row (the largest frame, the most rows) selected, and said."""
        if self.fde_table.row_count:  # the top rows are the answer: the selection goes there
            self.fde_table.move_cursor(0, notify=False)
            self._fde_highlighted(0)
        self._say_sort()

    def _say_sort(self) -> None:
        self._status(filtering.sort_said(self.fde_table.sort, Waits.NOT, self.overview))

    # ------------------------------------------------------------------ tabs and panes

    def action_unwind(self) -> None:
        self.app.open_debugger()  # type: ignore[attr-defined]

    def action_show_tab(self, tab: str | Tab) -> None:
        if self.section is None:
            return
        tab = Tab(tab)
        target = {
            Tab.FUNCTIONS: self.fde_table,
            Tab.STRUCTURE: self.structure,
            Tab.FRAME: self.frame_picture,
            Tab.PROBLEMS: self.problems,
        }[tab]
        if not target.is_mounted:  # the structure tab's panes arrive after the first frame
            self.call_after_refresh(self.action_show_tab, tab)
            return
        self.tabs.active = tab.pane_id
        target.focus()

    def action_toggle_frame(self) -> None:
        """The frame picture of the selected row, or back to the tables."""
        if self.section is not None:
            self.action_show_tab(Tab.FUNCTIONS if self.panes.tab is Tab.FRAME else Tab.FRAME)

    def action_toggle_code(self) -> None:
        """The selected function's instructions in place of its rows (`i`), or the rows again."""
        if self.section is None:
            return
        self.action_show_tab(Tab.FUNCTIONS)
        shown = self.tables.swap()
        func = self.fre_table.function
        if shown is self.code_table and func is not None:
            self.code_table.show_function(func)
            if self.state.selected is not None and self.state.selected.fre is not None:
                self.code_table.show_row(self.state.selected.fre)
            missing = self.code_table.listing.missing if self.code_table.listing is not None else ""
            self._status(missing or "▶ a row starts, with its change: the instruction just above made it (f: frame)")
        shown.focus()

    def action_focus_hex(self) -> None:
        self.hex_view.focus()

    # ------------------------------------------------------------------ DWARF beside the rows

    def action_toggle_dwarf(self) -> None:
        """DWARF CFI beside each row, or not: read (in a thread: 40,000 FDEs take seconds) on first use."""
        if self.doc.elf is None:
            self.app.notify("Only an ELF file has DWARF CFI to compare with.", severity="warning")
            return
        if self.section is None:
            self.app.notify("The section cannot be read: it has no rows to set DWARF CFI beside.", severity="warning")
            return
        if self.fre_table.dwarf is not None:
            self.fre_table.show_dwarf(None)
            self.code_table.show_dwarf(None)
            self.dwarf_note.remove_class("-shown")
            return
        if self.dwarf.read:
            self._dwarf_read()
            return
        self._status("reading DWARF CFI (.eh_frame, .debug_frame)…")
        self.run_worker(self._read_dwarf, thread=True, exit_on_error=False)

    def _read_dwarf(self) -> None:
        try:
            _ = self.doc.cfi
        except Exception as exc:  # whatever the reader did not foresee: said on the status line, not "reading…"
            self.app.call_from_thread(self._status, f"DWARF CFI cannot be read: {type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self._dwarf_read)

    def _dwarf_read(self) -> None:
        if self.doc.cfi is None:
            why = self.doc.cfi_error.message if self.doc.cfi_error is not None else "no .eh_frame or .debug_frame"
            self._status(f"DWARF CFI: {why}")
            self.app.notify(f"No DWARF CFI to show: {why}", severity="warning")
            return
        self.fre_table.show_dwarf(self.dwarf.beside)
        self.code_table.show_dwarf(self.dwarf.beside)
        self.dwarf_note.add_class("-shown")
        if self.fre_table.function is not None:
            self.dwarf_note.update(self.dwarf.fde_text(self.fre_table.function))
        self._status("DWARF CFI beside each row: `=` where it agrees with SFrame, else DWARF's rules (`d` hides it)")

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
        if self.state.selected is None:
            return
        text, label = self._value_to_copy() if what == "value" else self._path_to_copy()
        self.app.copy_to_clipboard(text)
        shown = text if len(text) <= 60 else text[:59] + "…"
        tmux = " (and to tmux's paste buffer: prefix ])" if to_tmux_buffer(text) else ""
        self.app.notify(f"{label}: {shown}", title=f"Copied{tmux}")

    def _value_to_copy(self) -> tuple[str, str]:
        """The selected field's value as shown; for a structure, its bytes in hex."""
        field = self.state.selected.field
        name = field.path or "section"
        if field.display:
            return field.display, f"the value of {name}"
        return self.doc.data[field.span.start : field.span.end].hex(" "), f"the bytes of {name}"

    def _path_to_copy(self) -> tuple[str, str]:
        """The focused table's row as text (its cells, two spaces apart), else the field's path."""
        table = self.focused
        if isinstance(table, RowTable) and table.row_count:
            cells = "  ".join(cell.strip() for cell in table.row_cells(table.cursor))
            return cells, f"row {table.cursor} of the {'FDE' if table is self.fde_table else 'FRE'} table"
        return self.state.selected.field.path or "section", "the path"

    def action_zoom(self) -> None:
        """The focused pane on the whole screen, or back."""
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused, container=False)


PATTERN_SHOWN = 60
"""The most characters of a searched pattern a notification shows (then its length in bytes)."""


def _pattern_text(pattern: bytes) -> str:
    """What was searched for as it was typed: `"main"` for printable text, else `e2 de`; cut when long."""
    text = pattern.decode("ascii", "replace")
    shown = f'"{text}"' if text.isprintable() and text.isascii() else pattern.hex(" ")
    return shown if len(shown) <= PATTERN_SHOWN else f"{shown[: PATTERN_SHOWN - 12].rstrip()}… ({len(pattern):,} bytes)"
