"""What a person sees of each marked consumer's lookups, checked against the real library's answer at every PC.

Binutils 2.44's own libsframe (run by `libsframe_oracle.py`'s harness) is asked
at every PC of the 2.44 test program's section, whose PLT (a PCMASK function)
it finds at its first PC and fails at the seven after: the FRE table's column,
the Problems tab's ranges and the `fails:` filter must say what the library
did, PC for PC.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SECTIONS, load_section_fixture
from libsframe_oracle import Library, answer_kind, every_pc, library, outcomes

from sfview.app.app import SfviewApp
from sfview.app.consumer_marks import column_title
from sfview.document import Document

SIZE = (100, 34)
ADDRESS_MASK = (1 << 64) - 1
RELEASE = "2.44"
PROFILE = f"libsframe-{RELEASE}"


@pytest.fixture(scope="module")
def plt_section(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """The 2.44 test program's section, as a raw file loaded at 0 (where the harness asks)."""
    data = load_section_fixture(next(p for p in SECTIONS if p.name == "test-x86_64-2.44.json"))[0]
    path = tmp_path_factory.mktemp("marks") / "test-2.44.sframe"
    path.write_bytes(data)
    return path, data


@pytest.fixture(scope="module")
def truth(plt_section: tuple[Path, bytes], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, str]]:
    """The library's answer at every PC of every function: `found`, `fails` or `crash`."""
    lib: Library = library(RELEASE, tmp_path_factory.mktemp("libsframe"))
    data = plt_section[1]
    judged, spans = every_pc(RELEASE, data)
    answer = lib.ask(data, [], spans)
    lib.close()
    assert answer.decode == 0, "the 2.44 library takes its own assembler's section"
    kinds: dict[int, str] = {}
    for (low, high), runs in zip(judged, outcomes(answer, spans), strict=True):
        for a, b, said in runs:
            for pc in range(max(a, low), min(b, high)):
                kinds[pc & ADDRESS_MASK] = answer_kind(said)  # as the app's addresses wrap
    yield kinds


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


async def test_the_fre_table_says_what_the_library_does_at_each_rows_pcs(
    plt_section: tuple[Path, bytes], truth: dict[int, str]
) -> None:
    app = SfviewApp(Document.open(str(plt_section[0]), base=0))
    async with app.run_test(size=SIZE) as pilot:
        await _choose(app, pilot, PROFILE)
        table, section = app.explorer.fre_table, app.explorer.section
        titles = [column.title for column in table.columns]
        assert column_title(PROFILE) in titles
        at = titles.index(column_title(PROFILE))
        seen = set()
        await pilot.press("1")  # the Functions tab
        for func in section.functions():  # the FDE table in its own order: `n` goes to the next function
            if func.index:
                await pilot.press("n")
            await pilot.pause()
            assert table.function is not None and table.function.index == func.index
            for row in func.rows:
                pcs = [pc for pc in range(func.start_address, func.end_address) if func.row_for(pc) == row]
                cell = table.row_cells(row.index)[at]
                assert cell == _expected_cell([truth[pc] for pc in pcs]), (func.index, row.index, cell)
                seen.add(cell)
        assert {"ok", "fails 7/8"} <= seen, "the section has rows all found and a PLT row failing in part"


async def test_the_problems_tab_lists_the_librarys_failing_ranges_and_lands_on_them(
    plt_section: tuple[Path, bytes], truth: dict[int, str]
) -> None:
    app = SfviewApp(Document.open(str(plt_section[0]), base=0))
    async with app.run_test(size=SIZE) as pilot:
        await _choose(app, pilot, PROFILE)
        problems = app.explorer.problems
        listed = [(f.start, f.end) for name, f in problems.failures if name == PROFILE]
        failing = sorted(pc for pc, kind in truth.items() if kind != "found")
        assert failing, "the library fails somewhere in this section"
        assert sorted(pc for start, end in listed for pc in range(start, end)) == failing
        option = next(i for i in range(problems.option_count) if problems.get_option_at_index(i).id == "f0")
        problems.focus()
        problems.highlighted = option
        await pilot.press("enter")
        await pilot.pause()
        name, failure = problems.failures[0]
        selected = app.explorer.state.selected
        assert selected is not None and selected.fde == failure.function
        func = app.explorer.section.function(failure.function)
        assert selected.fre == func.row_for(failure.start).index
        assert str(app.explorer.status_line.render()).startswith(f"{PROFILE} fails at {failure.start:#x}")


async def test_several_consumers_marked_at_once_and_the_fails_filter(
    plt_section: tuple[Path, bytes], truth: dict[int, str]
) -> None:
    app = SfviewApp(Document.open(str(plt_section[0]), base=0))
    async with app.run_test(size=(80, 30)) as pilot:
        await _choose(app, pilot, "kernel", PROFILE)
        titles = [column.title for column in app.explorer.fre_table.columns]
        assert column_title("kernel") in titles and column_title(PROFILE) in titles
        # the kernel reads version 3 alone: it refuses this version 2 section, every row says so
        at = titles.index("kernel")
        assert app.explorer.fre_table.row_cells(0)[at] == "refused"
        failing_functions = {app.explorer.section.find_function(pc).index for pc, k in truth.items() if k != "found"}
        await pilot.press("1", "slash", *f"fails:{PROFILE}", "enter")
        await pilot.pause()
        fdes = app.explorer.fde_table
        assert {fdes.fde_at(row) for row in range(fdes.row_count)} == failing_functions
        await pilot.press("escape", "slash", *"fails:kernel", "enter")
        await pilot.pause()
        assert fdes.row_count == len(app.explorer.section), "a refused section fails at every function"
