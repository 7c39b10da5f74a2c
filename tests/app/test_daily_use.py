"""The small things a daily user trips on, each as a person meets it (issue 18's list)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
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
        await pilot.press("S", "6")  # by frame size
        assert ex.fde_table.sort.column == 6
        sizes = [int(ex.fde_table.row_cells(r)[6]) for r in range(ex.fde_table.row_count)]
        assert sizes == sorted(sizes)
        assert ex.fde_table.cursor == 0 and ex.state.selected.fde == ex.fde_table.fde_at(0)
        await pilot.press("R")  # the largest first, and selected
        assert ex.fde_table.cursor == 0 and ex.fde_table.scroll_offset.y == 0
        assert int(ex.fde_table.row_cells(0)[6]) == max(sizes)
        assert ex.state.selected.fde == ex.fde_table.fde_at(0) == 5  # huge_frame
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


async def test_o_takes_file_offsets_as_check_prints_them() -> None:
    """`sfview check` says `section offset 0x3d (file offset 0x141e5)`: either goes to the same byte."""
    app = explorer()
    async with app.run_test(size=(100, 32)) as pilot:
        file_offset = app.explorer.doc.file_offset
        assert file_offset == 0x141A8
        await pilot.press("o", *f"{file_offset + 0x3D:x}", "enter")
        await pilot.pause()
        assert app.explorer.state.selected.field.path == "fdes[1].func_info"
        assert f"file offset {file_offset + 0x3D:#x} = section offset 0x3d" in status(app)
        await pilot.press("o", *"3d", "enter")
        assert app.explorer.state.selected.field.path == "fdes[1].func_info"


@pytest.mark.parametrize("name", ["shapes-x86_64-O2", "shapes-x86_64-O0-fp", "shapes-aarch64-O0-fp"])
async def test_a_frame_from_fp_is_said_to_be_variable(name: str) -> None:
    """`var` in the frame column exactly where readelf's dump shows a CFA from FP (`fp+16`) in a function."""
    dump = (DATA / f"{name}.readelf-sframe.txt").read_text()
    from_fp = {
        int(block.split("pc = 0x")[1].split(",")[0], 16)
        for block in dump.split("func idx")[1:]
        if re.search(r"^\s+[0-9a-f]{16}\s+fp[+-]", block, re.M)
    }
    app = explorer(DATA / name)
    async with app.run_test(size=(120, 40)):
        table = app.explorer.fde_table
        marked = {int(table.row_cells(r)[1], 16) for r in range(table.row_count) if table.row_cells(r)[6] == "var"}
    assert marked == from_fp
    assert name == "shapes-x86_64-O2" or marked, "the -fp builds have frame-pointer functions"


async def test_a_row_a_check_found_wrong_is_marked(tmp_path: Path) -> None:
    """main's last row made to start past the function: `sfview check` says row-past-function for
    fdes[2].fres[2], and the FRE table draws that row, and only it, as an error."""
    raw = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    raw[0xFB] = 0x50  # fdes[2].fres[2]'s start offset: +0x50, past main's 59 bytes
    path = tmp_path / "past.sframe"
    path.write_bytes(bytes(raw))
    app = explorer(path)
    async with app.run_test(size=(100, 32)) as pilot:
        for _ in range(50):  # the checks run in a worker
            if app.explorer.summary.problems is not None:
                break
            await pilot.pause(0.05)
        assert [d.check.id for d in app.explorer.problems.diagnostics] == ["row-past-function"]
        app.explorer.show_row(2, 0)
        rows = app.explorer.fre_table
        assert [rows.row_is_error(i) for i in range(rows.row_count)] == [False, False, True]
        app.explorer.show_row(3, 0)
        assert not any(rows.row_is_error(i) for i in range(rows.row_count))


@pytest.mark.parametrize(
    "keys", [("1",), ("f",), ("2", "tab"), ("x",), ("i",)], ids=["fdes", "frame", "detail", "hex", "code"]
)
async def test_z_zooms_the_focused_pane_to_the_whole_screen(keys: tuple[str, ...]) -> None:
    app = explorer()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "n", *keys)
        await pilot.pause()
        pane = app.explorer.focused
        await pilot.press("z")
        await pilot.pause()
        assert app.explorer.maximized is pane, f"{pane} zoomed"
        assert pane.region.height == 23 and pane.region.width == 80, "all of the screen but the footer"
        await pilot.press("z")
        assert app.explorer.maximized is None


@pytest.mark.parametrize(("width", "per_line"), [(80, 8), (100, 16), (200, 16)])
async def test_the_hex_pane_shows_every_column_at_any_width(width: int, per_line: int) -> None:
    """At 80 columns 8 bytes a line, so that the ASCII column is not cut; 16 where they fit."""
    app = explorer()
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        hexview = app.explorer.hex_view
        assert hexview.bytes_per_line == per_line
        data = app.explorer.doc.data
        line = hexview.line_text(1)
        assert line.endswith(
            data[per_line : 2 * per_line]
            .decode("latin-1")
            .translate({i: "." for i in range(256) if not 0x20 <= i < 0x7F})
        )
        assert len(line) <= hexview.scrollable_content_region.width, "nothing cut at the right"
        await pilot.press("x")
        before = hexview.cursor
        await pilot.press("down")
        assert hexview.cursor == before + per_line
