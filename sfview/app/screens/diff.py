"""`sfview A --diff B`: two sections compared by meaning, function by function, their rows side by side.

The functions table lists every function of either side with what it is to the other (`same`,
`encoding`, `MEANING`, `only A`, `only B`), as `sfview diff` counts them; the rows table shows the
selected function's rows of A and of B side by side, aligned by their offset in the function, each
offset where an unwinder gets other rules from A than from B marked.
"""

from __future__ import annotations

from itertools import islice
from typing import ClassVar, NamedTuple

from rich.markup import escape
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from sfview.diff.engine import Diff, Entry, Pair, Verdict
from sfview.diff.shapes import plain
from sfview.document import Document
from sfview.output.safe_text import pictured
from sfview.rule_notation import rules_text
from sfview.sframe.model.section import Row, Section

SHOWN_LINES = 10_000
"""The most lines either table shows (functions; one function's rows): a table of 200,000 lines took the
screen half a minute and 300 MB to open. The last line says how many more there are, and `sfview diff`
lists every one."""

MARKS = {Verdict.SAME: "same", Verdict.ENCODING: "encoding", Verdict.MEANING: "MEANING"}
ONLY_A, ONLY_B = "only A", "only B"
DIFFERS = "≠"


class Listed(NamedTuple):
    """One line of the functions table: what the function is to the other side, and its entries."""

    mark: str
    a: Entry | None
    b: Entry | None


def listed(result: Diff) -> list[Listed]:
    """Every function of either side, by its address in A (B's for those only B has)."""
    pairs: list[Pair] = [*result.kept_same, *result.encoding, *result.meaning]
    out = [Listed(MARKS[p.verdict], p.a, p.b) for p in pairs]
    out += [Listed(ONLY_A, e, None) for e in result.only_a]
    out += [Listed(ONLY_B, None, e) for e in result.only_b]
    return sorted(out, key=lambda line: (line.a is None, (line.a or line.b).start))  # type: ignore[union-attr]


def side_by_side(section_a: Section, a: Entry | None, section_b: Section, b: Entry | None) -> list[tuple[str, ...]]:
    """The rows of both sides at each offset either starts a row at: (offset, A's rules, B's rules, mark);
    a side's cell is empty where its row from before still holds, `-` where it has no row yet."""
    rows_a = list(islice(section_a.function(a.index).rows, SHOWN_LINES)) if a is not None else []
    rows_b = list(islice(section_b.function(b.index).rows, SHOWN_LINES)) if b is not None else []
    cuts = sorted({row.start_offset for row in rows_a} | {row.start_offset for row in rows_b})
    read = [rows[-1].start_offset for rows in (rows_a, rows_b) if len(rows) == SHOWN_LINES]
    if read:  # a side's rows past its first SHOWN_LINES are not read: no offset past them is shown
        cuts = [cut for cut in cuts if cut <= min(read)]
    out = []
    for cut in cuts[:SHOWN_LINES]:
        row_a, row_b = _at(rows_a, cut), _at(rows_b, cut)
        differs = a is not None and b is not None and _rules(row_a) != _rules(row_b)
        out.append(
            (f"+{cut:#x}", _cell(section_a, row_a, cut), _cell(section_b, row_b, cut), DIFFERS if differs else "")
        )
    if len(rows_a) == SHOWN_LINES or len(rows_b) == SHOWN_LINES:  # the rest is not read: not said as the same
        out.append(("…", f"the first {SHOWN_LINES:,} rows of each side", "`sfview diff` compares every one", ""))
    return out


def _at(rows: list[Row], offset: int) -> Row | None:
    found = None
    for row in rows:
        if row.start_offset <= offset:
            found = row
    return found


def _rules(row: Row | None) -> tuple | None:
    return None if row is None else (plain(row.cfa), plain(row.fp), plain(row.ra), row.mangled_ra)


def _cell(section: Section, row: Row | None, cut: int) -> str:
    if row is None:
        return "-"
    return rules_text(section, row) if row.start_offset == cut else ""


class DiffScreen(Screen[None]):
    """The functions of two sections and the selected one's rows side by side."""

    def __init__(self, doc_a: Document, doc_b: Document, result: Diff) -> None:
        super().__init__()
        self.doc_a, self.doc_b = doc_a, doc_b
        self.result = result
        self.lines = listed(result)

    def compose(self) -> ComposeResult:
        r, a, b = self.result, pictured(self.doc_a.path), pictured(self.doc_b.path)
        yield Static(
            f"A {a}  B {b}: {r.same} same, {len(r.encoding)} encoded differently, "
            f"{len(r.meaning)} different in meaning, {len(r.only_a)} only in A, {len(r.only_b)} only in B",
            id="diff-summary",
            markup=False,
        )
        yield DataTable(id="diff-functions", cursor_type="row")
        yield DataTable(id="diff-rows", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        functions = self.query_one("#diff-functions", DataTable)
        functions.add_columns("", "function", "A", "B", "A size", "B size")
        for line in self.lines[:SHOWN_LINES]:
            entry = line.a or line.b
            assert entry is not None
            functions.add_row(
                line.mark,
                escape(pictured(entry.name)) or "(no name)",  # not markup: `[abi:cxx11]` would vanish
                f"{line.a.start:#x}" if line.a else "",
                f"{line.b.start:#x}" if line.b else "",
                f"{line.a.size:#x}" if line.a else "",
                f"{line.b.size:#x}" if line.b else "",
            )
        if len(self.lines) > SHOWN_LINES:
            more = len(self.lines) - SHOWN_LINES
            functions.add_row("…", f"{more:,} more functions: `sfview diff` lists every one", "", "", "", "")
        self.query_one("#diff-rows", DataTable).add_columns("offset", "A", "B", "")
        if self.lines:
            self.show_rows(0)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "diff-functions":
            self.show_rows(event.cursor_row)

    def show_rows(self, index: int) -> None:
        """The rows of the function on line `index` of the functions table, A's beside B's (none for the line
        that says how many more there are)."""
        if index >= min(len(self.lines), SHOWN_LINES):
            return
        line = self.lines[index]
        table = self.query_one("#diff-rows", DataTable)
        table.clear()
        section_a, section_b = self.doc_a.require_section(), self.doc_b.require_section()
        for cells in side_by_side(section_a, line.a, section_b, line.b):
            table.add_row(*cells)


class DiffApp(App[None]):
    """`sfview A --diff B`: the diff screen alone."""

    TITLE = "sfview --diff"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False),
    ]
    # The screen never scrolls: at a column or two the summary's wrapping and the screen's scrollbar made
    # each other again and again (a quarter of a core, keys a second or two each).
    CSS = "DiffScreen { overflow: hidden; } #diff-functions { height: 1fr; } #diff-rows { height: 1fr; }"

    def __init__(self, doc_a: Document, doc_b: Document, result: Diff) -> None:
        super().__init__()
        self.screen_made = DiffScreen(doc_a, doc_b, result)

    def on_mount(self) -> None:
        self.push_screen(self.screen_made)
