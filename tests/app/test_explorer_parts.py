"""The explorer's pure parts, without a Pilot: where a jump lands (`navigation.py`), what a sort or a filter
waits for and says (`filtering.py`), the history and the tabs' names.

Expected values come from the model (`Section`, its rows and rules) and the
relocations the names read.
"""

from __future__ import annotations

from conftest import DATA

from sfview import rule_notation
from sfview.app.explorer import filtering, navigation
from sfview.app.explorer.filtering import Waits
from sfview.app.explorer.navigation import Landing, OffsetLanding, Refusal, Way
from sfview.app.explorer.panes import Tab
from sfview.app.explorer.state import History, Selection
from sfview.app.fields import FieldTree
from sfview.app.names import ExplorerNames
from sfview.app.widgets.fde_table import COLUMNS, Sort
from sfview.document import Document
from sfview.inputs.symbols import Place
from sfview.sframe.bulk.overview import Overview

SHAPES = DATA / "shapes-x86_64-O2"
OBJECT = DATA / "shapes-x86_64-O2.o"


def _names(path=SHAPES) -> tuple[Document, ExplorerNames]:
    doc = Document.open(str(path))
    names = ExplorerNames(doc)
    names.load()
    return doc, names


# ---------------------------------------------------------------- navigation


def test_an_address_lands_on_the_function_and_row_an_unwinder_uses() -> None:
    doc, names = _names()
    section = doc.require_section()
    func = section.function(2)
    row = func.rows[-1]
    pc = func.start_address + row.start_offset
    landing = navigation.address_landing(section, names, pc)
    assert landing == Landing(
        2,
        row.index,
        pc,
        f"{pc:#x} → fdes[2] {names.of(func)}, FRE {row.index}: {rule_notation.rules_text(section, row)}",
    )


def test_an_address_no_function_covers_is_refused_with_its_neighbours() -> None:
    doc, names = _names()
    section = doc.require_section()
    landing = navigation.address_landing(section, names, 0x10)
    assert isinstance(landing, Refusal) and landing.severity == "warning"
    assert landing.message.startswith("No function covers 0x10: before ")
    assert not landing.status, "said in a notification alone"


def test_without_a_section_every_address_is_refused() -> None:
    _, names = _names()
    landing = navigation.address_landing(None, names, 0x1000)
    assert isinstance(landing, Refusal) and landing.severity == "error"


def test_an_address_several_functions_of_an_object_hold_is_not_guessed() -> None:
    doc, names = _names(OBJECT)
    section = doc.require_section()
    assert names.relocatable
    landing = navigation.address_landing(section, names, 0x10)
    assert isinstance(landing, Refusal) and landing.title == "Which function?" and landing.timeout == 15
    assert "ambiguous" in landing.message and "ambiguous" in landing.status
    text = navigation.address_landing(section, names, Place(".text", 0x10))
    assert isinstance(text, Landing), "the section says which"
    assert doc.relocated_places[section.function(text.fde).span.start].section == ".text"


def test_a_symbol_is_its_address_or_in_an_object_its_place() -> None:
    doc, names = _names()
    main = doc.symbols.named("main")
    assert main is not None
    assert navigation.symbol_target(names, main) == main.address
    assert navigation.lookup(names, doc.symbols, "main") == main.address
    assert navigation.lookup(names, doc.symbols, "no such name") is None
    obj, obj_names = _names(OBJECT)
    assert navigation.lookup(obj_names, obj.symbols, ".text") == Place(".text", 0)


def test_an_offset_is_a_section_offset_or_a_file_offset_inside_the_section() -> None:
    assert navigation.offset_landing(0x100, 0x2000, 0x10) == OffsetLanding(0x10, "")
    assert navigation.offset_landing(0x100, 0x2000, 0x2010) == OffsetLanding(
        0x10, "file offset 0x2010 = section offset 0x10: "
    )
    outside = navigation.offset_landing(0x100, 0x2000, 0x3000)
    assert isinstance(outside, Refusal)
    assert outside.message == "0x3000 is outside the section (0..0xff, or file offsets 0x2000..0x20ff)."
    raw = navigation.offset_landing(0x100, 0, 0x100)
    assert isinstance(raw, Refusal) and raw.message == "0x100 is outside the section (0..0xff)."


def test_the_history_is_walked_both_ways() -> None:
    doc, _ = _names()
    fields = FieldTree(doc.require_section())
    a, b = (Selection.of(fields.function_field(index)) for index in (0, 1))
    history: History[Selection] = History()
    history.jump(a, b)
    assert navigation.walk(history, b, Way.BACK) == a
    assert navigation.walk(history, a, Way.BACK) is None, "at the first place"
    assert navigation.walk(history, a, Way.FORWARD) == b


# ---------------------------------------------------------------- filtering


def test_the_reverse_key_turns_the_sort_round() -> None:
    assert filtering.reversed_sort(Sort(3)) == Sort(3, reverse=True)
    assert filtering.reversed_sort(Sort(3, reverse=True)) == Sort(3)


def test_what_a_sort_or_a_filter_waits_for() -> None:
    assert filtering.waits(True, overview_ready=False) is Waits.NOT
    assert filtering.waits(False, overview_ready=True) is Waits.FOR_ORDER
    assert filtering.waits(False, overview_ready=False) is Waits.FOR_OVERVIEW


def test_what_the_status_line_says_of_a_sort_and_a_filter() -> None:
    doc, _ = _names()
    overview = Overview(doc.require_section())  # nothing gone through yet
    frame = next(index for index, spec in enumerate(COLUMNS) if spec.title == "frame")
    by_frame = Sort(frame, reverse=True)
    assert filtering.sort_said(by_frame, Waits.NOT, overview) == (
        "functions by frame, descending (S: another column, R: reverse)"
    )
    waiting = "working… the functions sort by frame once its order is made"
    assert filtering.sort_said(by_frame, Waits.FOR_ORDER, overview) == waiting
    assert filtering.sort_said(by_frame, Waits.FOR_OVERVIEW, overview) == (
        "working… the functions sort once every one is read (0% read)"
    )
    assert filtering.filter_said(by_frame, Waits.NOT, overview) is None
    assert filtering.filter_said(by_frame, Waits.FOR_ORDER, overview) == waiting
    assert filtering.filter_said(by_frame, Waits.FOR_OVERVIEW, overview) == (
        "working… the filter applies once every function is read (0% read)"
    )


# ---------------------------------------------------------------- panes


def test_each_tab_is_named_by_its_key_word_and_found_by_its_pane() -> None:
    assert Tab("problems") is Tab.PROBLEMS and Tab.PROBLEMS.pane_id == "problems-tab"
    assert all(Tab.of_pane(tab.pane_id) is tab for tab in Tab)
    assert Tab.of_pane("") is None, "no pane shown yet"
