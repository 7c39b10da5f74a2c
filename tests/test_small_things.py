"""The small things a daily user trips on, each as a person meets it (issue 18's list)."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA

from sfview.app.app import SfviewApp
from sfview.document import Document

SHAPES = DATA / "shapes-x86_64-O2"


def explorer(path: Path = SHAPES) -> SfviewApp:
    return SfviewApp(Document.open(str(path)))


def status(app: SfviewApp) -> str:
    return str(app.explorer.status_line.render())


async def test_ctrl_c_quits() -> None:
    app = explorer()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit, "ctrl+c leaves, as in any terminal program"


async def test_sorting_selects_the_top_row() -> None:
    """After `S` / `R` the answer is the top rows: the selection jumps there, not left scrolled away."""
    app = explorer()
    async with app.run_test(size=(100, 32)) as pilot:
        ex = app.explorer
        await pilot.press("n", "n", "n")  # small_leaf selected
        await pilot.press(*"SSSSSS")  # by frame size
        assert ex.fde_table.sort.column == 6
        sizes = [int(ex.fde_table.row_cells(r)[6]) for r in range(ex.fde_table.row_count)]
        assert sizes == sorted(sizes)
        assert ex.fde_table.cursor == 0 and ex.selected.fde == ex.fde_table.fde_at(0)
        await pilot.press("R")  # the largest first, and selected
        assert ex.fde_table.cursor == 0 and ex.fde_table.scroll_offset.y == 0
        assert int(ex.fde_table.row_cells(0)[6]) == max(sizes)
        assert ex.selected.fde == ex.fde_table.fde_at(0) == 5  # huge_frame
        assert "frame" in status(app) and "descending" in status(app)


async def test_the_headers_second_line_is_the_same_at_every_width() -> None:
    lines = set()
    for width in (80, 120, 200):
        app = explorer()
        async with app.run_test(size=(width, 30)) as pilot:
            await pilot.pause()
            lines.add(app.explorer.summary.summary(width).plain.splitlines()[1])
    assert len(lines) == 1
    assert lines.pop().startswith("v1 · FDE_SORTED · AMD64 little-endian · 9 FDEs")
