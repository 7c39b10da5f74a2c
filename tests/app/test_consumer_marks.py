"""What a person sees of each marked consumer's lookups, checked against the real library's answer at every PC.

Each release's own libsframe (run by `libsframe_oracle.py`'s harness) is asked
at every PC of: the 2.44 test program's section, whose PLT (a PCMASK function)
2.44 finds at its first PC and fails at the seven after; a 6,000-row function
(version 2) whose middle row starts before the one above it (2.47 fails at
its first rows); the PLT section again under 2.47 (whole functions fail); and
the 2.40 shapes section with an FRE type no version defines in one function
(2.40 asserts at every PC of it; sfview's reader shows none of its rows). The
FRE table's column, the Problems tab's ranges and the `fails:` filter must say
what the library did, PC for PC.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import DATA, SECTIONS, load_section_fixture
from handmade import long_function
from libsframe_oracle import Library, answer_kind, every_pc, library, outcomes
from rich.console import Console
from textual.widgets import Static

from sfview.app.app import SfviewApp
from sfview.app.consumer_marks import column_title
from sfview.document import Document

SIZE = (100, 34)
ADDRESS_MASK = (1 << 64) - 1
PROFILE = "libsframe-2.44"


def _fre_type_14() -> bytes:
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    info_at = 28 + 17 * 2 + 16  # FDE 2's info byte (version 1: 17-byte FDEs after the 28-byte header)
    data[info_at] = (data[info_at] & 0xF0) | 14
    return bytes(data)


CORPUS = {
    "plt-2.44": (
        "2.44",
        lambda: load_section_fixture(next(p for p in SECTIONS if p.name == "test-x86_64-2.44.json"))[0],
    ),
    "plt-2.47": (
        "2.47",
        lambda: load_section_fixture(next(p for p in SECTIONS if p.name == "test-x86_64-2.44.json"))[0],
    ),
    "long-2.47": ("2.47", lambda: long_function(2)),
    "fre-type-14-2.40": ("2.40", _fre_type_14),
}
"""Sections whose PCs the library answers in a mix of found and failing (or crashing): (release, bytes)."""


@pytest.fixture(scope="module", params=sorted(CORPUS))
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Case:
    """Each section of `CORPUS`, and what the library does at every PC."""
    return _case(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def plt(tmp_path_factory: pytest.TempPathFactory) -> Case:
    """The 2.44 PLT section, and what 2.44's library does at every PC."""
    return _case("plt-2.44", tmp_path_factory)


def _case(name: str, tmp_path_factory: pytest.TempPathFactory) -> Case:
    """A section as a raw file loaded at 0 (where the harness asks), and the library's answer at every PC of
    every function: `found`, `fails` or `crash`."""
    release, make = CORPUS[name]
    data = make()
    path = tmp_path_factory.mktemp("marks") / f"{name}.sframe"
    path.write_bytes(data)
    lib: Library = library(release, tmp_path_factory.mktemp("libsframe"))
    judged, spans = every_pc(release, data)
    answer = lib.ask(data, [], spans)
    lib.close()
    assert answer.decode == 0, f"the {release} library takes {name}"
    kinds: dict[int, str] = {}
    for (low, high), runs in zip(judged, outcomes(answer, spans), strict=True):
        for a, b, said in runs:
            for pc in range(max(a, low), min(b, high)):
                kinds[pc & ADDRESS_MASK] = answer_kind(said)  # as the app's addresses wrap
    return Case(name, f"libsframe-{release}", path, kinds)


class Case(NamedTuple):
    name: str
    profile: str
    path: Path
    truth: dict[int, str]


async def _choose(app: SfviewApp, pilot: object, *names: str) -> None:
    """`v` until each of `names` is shown, `V` to keep it, and its verdict in."""
    for name in names:
        for _ in range(10):
            await pilot.press("v")  # type: ignore[attr-defined]
            if app.explorer.state.consumer == name:
                break
        await pilot.press("V")  # type: ignore[attr-defined]
    for _ in range(200):
        if all(name in app.explorer.state.verdicts for name in names):
            break
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


def _expected_cell(kinds: list[str]) -> str:
    failing = sum(kind != "found" for kind in kinds)
    if "crash" in kinds:
        return "crash"
    if not failing:
        return "ok"
    return "fails all" if failing == len(kinds) else f"fails {failing}/{len(kinds)}"


async def test_the_fre_table_says_what_the_library_does_at_each_rows_pcs(case: Case) -> None:
    app = SfviewApp(Document.open(str(case.path), base=0))
    async with app.run_test(size=SIZE) as pilot:
        await _choose(app, pilot, case.profile)
        table, section = app.explorer.fre_table, app.explorer.section
        titles = [column.title for column in table.columns]
        at = titles.index(column_title(case.profile))
        seen = set()
        await pilot.press("1")  # the Functions tab
        for func in section.functions():  # the FDE table in its own order: `n` goes to the next function
            if func.index:
                await pilot.press("n")
            await pilot.pause()
            assert table.function is not None and table.function.index == func.index
            kinds: dict[int, list[str]] = {row.index: [] for row in func.rows}
            for pc in range(func.start_address, func.end_address):
                row = func.row_for(pc)  # the row a lookup lands on, by the format's rule
                if row is not None and pc in case.truth:  # the harness asks up to `SPAN_CAP` PCs a function
                    kinds[row.index].append(case.truth[pc])
            for index, row_kinds in kinds.items():
                cell = table.row_cells(index)[at]
                assert cell == _expected_cell(row_kinds), (case.name, func.index, index, cell)
                seen.add(cell)
        if case.name != "fre-type-14-2.40":  # there the crashing function has no row sfview can read
            assert "ok" in seen and seen - {"ok"}, f"{case.name} has rows all found and rows that fail: {seen}"


async def test_the_problems_tab_lists_the_librarys_failing_ranges_and_lands_on_them(case: Case) -> None:
    app = SfviewApp(Document.open(str(case.path), base=0))
    async with app.run_test(size=SIZE) as pilot:
        await _choose(app, pilot, case.profile)
        problems = app.explorer.problems
        listed = [(f.start, f.end, f.error) for name, f in problems.failures if name == case.profile]
        for kind in ("fails", "crash"):
            truth = sorted(pc for pc, said in case.truth.items() if said == kind)
            said = sorted(pc for a, b, error in listed if (error == "crash") == (kind == "crash") for pc in range(a, b))
            assert said == truth, (case.name, kind)
        assert listed, "the library fails somewhere in this section"
        problems.focus()
        for number in (0, len(listed) - 1):  # the first range listed, and the last
            problems.highlighted = next(
                i for i in range(problems.option_count) if problems.get_option_at_index(i).id == f"f{number}"
            )
            await pilot.press("enter")
            await pilot.pause()
            failure = problems.failures[number][1]
            selected = app.explorer.state.selected
            assert selected is not None and selected.fde == failure.function
            row = app.explorer.section.function(failure.function).row_for(failure.start)
            assert selected.fre == (row.index if row is not None else None)
            assert str(app.explorer.status_line.render()).startswith(f"{case.profile} fails at {failure.start:#x}")


async def test_several_consumers_marked_at_once_and_the_fails_filter(plt: Case) -> None:
    app = SfviewApp(Document.open(str(plt.path), base=0))
    async with app.run_test(size=(80, 30)) as pilot:
        await _choose(app, pilot, "kernel", plt.profile, "libsframe-2.47")
        titles = [column.title for column in app.explorer.fre_table.columns]
        assert titles[5:8] == ["kernel", "lsf-2.44", "lsf-2.47"], "a column per consumer marked, in order"
        # the kernel reads version 3 alone: it refuses this version 2 section, every row says so
        assert app.explorer.fre_table.row_cells(0)[5] == "refused"
        plt_pcs = sorted(pc for pc, kind in plt.truth.items() if kind == "fails")
        app.explorer.goto_address(plt_pcs[0])
        await pilot.press("2")  # the field detail names each marked consumer's failing PCs at the row
        await pilot.pause()
        console = Console(width=200, file=io.StringIO(), record=True)
        console.print(app.explorer.detail.query_one("#detail-text", Static).content)
        detail = console.export_text()
        assert f"{plt.profile}: fails at {plt_pcs[0]:#x}..{plt_pcs[-1]:#x}: " in detail, detail
        assert "kernel: refused the section" in detail
        section = app.explorer.section
        failing_functions = {section.find_function(pc).index for pc, k in plt.truth.items() if k != "found"}
        await pilot.press("1", "slash", *f"fails:{plt.profile}", "enter")
        await pilot.pause()
        fdes = app.explorer.fde_table
        assert {fdes.fde_at(row) for row in range(fdes.row_count)} == failing_functions
        await pilot.press("escape", "slash", *"fails:kernel", "enter")
        await pilot.pause()
        assert fdes.row_count == len(section), "a refused section fails at every function"
        await pilot.press("V", "v")  # 2.47, the one shown, no longer kept: its column goes when `v` moves on
        titles = [column.title for column in app.explorer.fre_table.columns]
        assert app.explorer.state.consumer == "glibc-2.43"  # the profile after 2.47 in the cycle
        assert titles[5:7] == ["kernel", "lsf-2.44"] and "lsf-2.47" not in titles


async def test_a_fails_filter_judges_the_consumer_it_names(plt: Case) -> None:
    """`fails:NAME` typed before NAME is judged: it keeps nothing, says it is judging, and filters once judged."""
    app = SfviewApp(Document.open(str(plt.path), base=0))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.press("slash", *f"fails:{plt.profile}", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        fdes = app.explorer.fde_table
        section = app.explorer.section
        failing_functions = {section.find_function(pc).index for pc, k in plt.truth.items() if k != "found"}
        assert {fdes.fde_at(row) for row in range(fdes.row_count)} == failing_functions
        assert "1 of 6" in str(app.explorer.status_line.render())


async def test_the_consumers_kept_are_marked_again_after_an_edit(plt: Case) -> None:
    """An edit opens a new explorer on the edited bytes: the consumers kept are judged again and keep their
    columns, and the one shown stays shown."""
    app = SfviewApp(Document.open(str(plt.path), base=0))
    async with app.run_test(size=SIZE) as pilot:
        await _choose(app, pilot, "kernel", plt.profile)
        await pilot.press("o", *"5", "enter", "e", *"1", "enter")  # the header's fixed FP offset: 0 → 1
        assert app.explorer.doc.data[5] == 1
        for _ in range(200):
            if {"kernel", plt.profile} <= set(app.explorer.state.verdicts):
                break
            await pilot.pause(0.05)
        assert app.explorer.state.kept == ["kernel", plt.profile]
        assert app.explorer.state.consumer == plt.profile
        titles = [column.title for column in app.explorer.fre_table.columns]
        assert titles[5:7] == ["kernel", "lsf-2.44"]
