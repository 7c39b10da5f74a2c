"""`sfview A --diff B`: the functions of two sections marked as `sfview diff` counts them, the selected
one's rows side by side; sections built by hand (tests/handmade.py) that differ at one known row."""

from __future__ import annotations

from handmade import v2_section
from textual.widgets import DataTable

from sfview.app.screens import diff
from sfview.app.screens.diff import DIFFERS, DiffApp
from sfview.cli.diff import compared


def cells(table: DataTable) -> list[tuple[str, ...]]:
    return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


async def test_functions_marked_and_rows_side_by_side(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(v2_section([[(0, 8), (1, 16)], [(0, 8)], [(0, 8), (4, 16)]]))
    b.write_bytes(v2_section([[(0, 8), (1, 24)], [(0, 8)], [(0, 8), (2, 8), (4, 16)]]))  # a row split: encoding
    app = DiffApp(*compared(str(a), str(b), keep_same=True))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        functions = screen.query_one("#diff-functions", DataTable)
        assert [row[:4] for row in cells(functions)] == [
            ("MEANING", "(no name)", "0x1000", "0x1000"),
            ("same", "(no name)", "0x1100", "0x1100"),
            ("encoding", "(no name)", "0x1200", "0x1200"),
        ]
        rows = screen.query_one("#diff-rows", DataTable)
        assert cells(rows) == [
            ("+0x0", "CFA sp+8 FP u RA f", "CFA sp+8 FP u RA f", ""),
            ("+0x1", "CFA sp+16 FP u RA f", "CFA sp+24 FP u RA f", DIFFERS),
        ]
        await pilot.press("down", "down")
        await pilot.pause()
        assert cells(rows) == [
            ("+0x0", "CFA sp+8 FP u RA f", "CFA sp+8 FP u RA f", ""),
            ("+0x2", "", "CFA sp+8 FP u RA f", ""),  # B's extra row repeats the rules: no mark
            ("+0x4", "CFA sp+16 FP u RA f", "CFA sp+16 FP u RA f", ""),
        ]


async def test_each_table_shows_a_bounded_number_of_lines(tmp_path, monkeypatch):
    """A side of 60 functions (200,000 took the screen half a minute and 300 MB), a function of 30 rows: each
    table stops at the bound and says how many more there are."""
    monkeypatch.setattr(diff, "SHOWN_LINES", 8, raising=False)
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(v2_section([[(k, 8 + k % 2 * 8) for k in range(30)]] + [[(0, 8)]] * 59))
    b.write_bytes(v2_section([[(0, 8)]]))
    app = DiffApp(*compared(str(a), str(b), keep_same=True))
    async with app.run_test(size=(120, 40)):
        screen = app.screen
        functions = cells(screen.query_one("#diff-functions", DataTable))
        assert len(functions) == 9 and functions[-1][1] == "52 more functions: `sfview diff` lists every one"
        rows = cells(screen.query_one("#diff-rows", DataTable))
        assert len(rows) == 9 and rows[-1][0] == "…"
        assert [row[0] for row in rows[:-1]] == [f"+{k:#x}" for k in range(8)]


async def test_a_screen_of_one_cell_settles(tmp_path, monkeypatch):
    """At 1x1 the summary's wrapping and the screen's scrollbar made each other again and again: the layout
    was redone for as long as the app stayed (a quarter of a core, each key a second or two). Once the
    screen is drawn, waiting lays nothing out again."""
    from textual.screen import Screen

    a, b = tmp_path / "a.sframe", tmp_path / "b.sframe"
    a.write_bytes(v2_section([[(0, 16), (4, 24)]]))
    b.write_bytes(v2_section([[(0, 16), (4, 32)]]))
    app = DiffApp(*compared(str(a), str(b), keep_same=True))
    layouts = []
    refresh_layout = Screen._refresh_layout
    monkeypatch.setattr(
        Screen, "_refresh_layout", lambda self, *args, **kw: layouts.append(1) or refresh_layout(self, *args, **kw)
    )
    async with app.run_test(size=(1, 1)) as pilot:
        await pilot.press("down")
        await pilot.pause()
        layouts.clear()
        for _ in range(20):
            await pilot.pause(0.02)
        assert layouts == []
