"""The samples view (`sfview perf --app`) shows each place's function and file as they are written."""

from __future__ import annotations

import pytest
from conftest import DATA
from textual.widgets import DataTable

from sfview.app.profile_app import ProfileApp
from sfview.app.screens.samples import SamplesScreen, _sample_number
from sfview.document import Document
from sfview.profiling.coverage import UNKNOWN, Place, Reason, Seen


async def test_names_with_brackets_are_shown_not_read_as_markup() -> None:
    """`[unknown]` (a PC no symbol names) and C++'s `operator[]`, read as Rich markup, were a style's tag:
    the cell came out empty. As the rows are drawn, and sorted by the function's name."""
    places = [
        (Place(UNKNOWN, "/lib/libc.so.6", Reason.NO_SFRAME), Seen(2, 145)),
        (Place("Table::operator[](unsigned long)", "/bin/[prog]", Reason.PLT), Seen(1, 3)),
    ]
    app = ProfileApp(Document.open(str(DATA / "shapes-x86_64-O2")), "places", places, lambda number: None)
    async with app.run_test(size=(130, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SamplesScreen)
        table = app.screen.query_one(DataTable)

        def drawn() -> list[str]:
            return [table.render_line(y).text for y in range(1, 1 + table.row_count)]

        rows = drawn()
        assert "[unknown]" in rows[0] and "libc.so.6" in rows[0], rows
        assert "Table::operator[](unsigned long)" in rows[1] and "[prog]" in rows[1], rows
        await pilot.press("S", "S")  # by the function's name
        await pilot.pause()
        assert [row.split()[2] for row in drawn()] == ["Table::operator[](unsigned", "[unknown]"]


async def test_the_title_and_every_reason_show_beside_many_long_names() -> None:
    """More places than the screen has lines, and names inlined into long others: the title (the coverage)
    stays on the first lines, and each row's reason shows whole beside its function, the name cut in its
    middle (both functions' names kept apart) rather than the reason pushed past the screen's edge."""
    long = "a_function_inlined_somewhere (inlined into a_very_long_caller_name_of_{})"
    places = [
        (Place(long.format(i), "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", reason), Seen(100 - i, i))
        for i, reason in zip(range(60), [Reason.KERNEL_REFUSES, Reason.OTHER_CALLER] * 30, strict=True)
    ]
    app = ProfileApp(Document.open(str(DATA / "shapes-x86_64-O2")), "THE TITLE", places, lambda number: None)
    async with app.run_test(size=(150, 30)) as pilot:
        await pilot.pause()
        top, _ = app.screen.get_widget_at(1, 0)  # what the first line of the screen shows
        assert top.id == "samples-title" and top.render_line(0).text.strip() == "THE TITLE", top
        table = app.screen.query_one(DataTable)
        for y, place in zip(range(1, 10), (p for p, _ in places), strict=False):
            row = table.render_line(y).text
            assert place.reason.value in row, row
            assert " a_func" in row and f"_of_{place.function.rsplit('_', 1)[1]}  " in row, row


@pytest.mark.parametrize("typed", ["²", "9" * 5000])
def test_a_sample_number_int_cannot_read_is_refused_in_words(typed: str) -> None:
    """The dialog's sample number: "²" is a digit to `str.isdigit` and not to `int`, and 5,000 digits are past
    what `int` converts: each was a ValueError that ended the app."""
    said = _sample_number(typed)
    assert isinstance(said, str) and said.endswith("is not a sample's number") and len(said) < 100
