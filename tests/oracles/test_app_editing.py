"""Editing in the explorer, as a person does it, held to the real tools.

A byte of a real version 3 section (binutils 2.47's shapes.c) broken in the
hex pane: the kernel verdict the Problems tab shows turns to what the
kernel's own code said of that very mutant (the corpus of
tests/data/consumers/kernel, written by scripts/kernel_corpus.py around the
kernel's reader); undone, back to accepted. A field changed in the Structure
tab and written with `w`: readelf reads the new value in the copy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA

from sfview.app.app import SfviewApp
from sfview.app.screens.goto import Prompt
from sfview.document import Document

CORPUS = {e["name"]: e for e in json.loads((DATA / "consumers" / "kernel" / "corpus.json").read_text())["sections"]}
NEWEST = {
    e["name"]: e
    for e in json.loads((DATA / "consumers" / "kernel-5ce6138798d7" / "corpus.json").read_text())["sections"]
}
"""The same sections as judged by the newest revision's code (`kernel`), under `v14/NAME` (`~` made `+`)."""
SIZE = (120, 40)


async def _verdict(app: SfviewApp, pilot, consumer: str) -> str:
    """The Problems tab's consumer line once `consumer`'s verdict on the section shown has come."""
    for _ in range(400):  # worked out in a thread
        if consumer in app.explorer.state.verdicts:
            break
        await pilot.pause(0.05)
    return str(app.explorer.consumer_line.render())


async def test_a_byte_broken_in_the_hex_pane_changes_the_kernel_s_verdict_as_the_kernel_s_code_did(
    tmp_path: Path,
) -> None:
    original, mutant = CORPUS["shapes-x86_64"], CORPUS["shapes-x86_64~fde"]
    data, broken = bytes.fromhex(original["section"]), bytes.fromhex(mutant["section"])
    (at,) = [i for i in range(len(data)) if data[i] != broken[i]]
    assert (original["kernel"]["register"], mutant["kernel"]["register"]) == (0, -14)  # v14: accepted, then -EFAULT
    newest = NEWEST["v14/shapes-x86_64"]["kernel"]["register"], NEWEST["v14/shapes-x86_64+fde"]["kernel"]["register"]
    assert newest == (0, -22)  # the newest revision (`kernel`): accepted, then -EINVAL (FRE type > 2)
    path = tmp_path / "shapes.sframe"
    path.write_bytes(data)
    app = SfviewApp(Document.open(str(path), original["address"]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        assert (await _verdict(app, pilot, "kernel")).startswith("kernel: accepted")
        await pilot.press("o", *f"{at:x}", "enter", "e")
        assert isinstance(app.screen, Prompt)
        await pilot.press(*f"{broken[at]:x}", "enter")
        assert app.explorer.doc.data == broken
        line = await _verdict(app, pilot, "kernel")
        assert line.startswith("kernel: refused: -EINVAL"), line
        assert app.explorer.tabs.active == "problems-tab"
        assert f"edited byte {at:#x} = {broken[at]:#x}" in str(app.explorer.status_line.render())
        await pilot.press("ctrl+z")
        assert app.explorer.doc.data == data
        assert (await _verdict(app, pilot, "kernel")).startswith("kernel: accepted")
        await pilot.press("ctrl+y")
        assert (await _verdict(app, pilot, "kernel")).startswith("kernel: refused: -EINVAL")


async def test_a_field_edited_in_the_tree_and_written_is_what_readelf_reads(tmp_path: Path) -> None:
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    program = tmp_path / "shapes"
    program.write_bytes((DATA / "shapes-x86_64-O2").read_bytes())
    app = SfviewApp(Document.open(str(program)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("o", *"53", "enter", "2")  # fdes[3].func_size's first byte, then the Structure tab
        await pilot.pause()
        assert app.explorer.state.selected.field.path == "fdes[3].func_size"
        assert app.focused is app.explorer.structure
        await pilot.press("e", *"64.", "enter")
        assert app.explorer.state.selected.field.path == "fdes[3].func_size"  # the new explorer resumes there
        assert app.explorer.state.selected.field.value == 64
        assert app.explorer.fde_table.row_cells(3)[3].strip() == "64"  # the FDE table's size column
        await pilot.press("E")
        assert app.screen.lines == ["  1  fdes[3].func_size = 0x40  at 0x53: 06 00 00 00 → 40 00 00 00"]
        await pilot.press("escape", "w")
        copy = tmp_path / "copy"
        app.screen.query_one("#goto-input").value = str(program)
        await pilot.press("enter")
        assert "this is the file itself" in str(app.screen.query_one("#goto-message").render())
        app.screen.query_one("#goto-input").value = str(copy)
        await pilot.press("enter")
        await pilot.pause()
    assert program.read_bytes() == (DATA / "shapes-x86_64-O2").read_bytes()
    shown = subprocess.run(["readelf", "--sframe", str(copy)], capture_output=True, text=True, check=True).stdout
    assert "func idx [3]: pc = 0x1180, size = 64 bytes" in shown


async def test_the_debugger_walks_the_edited_section_and_gdb_s_walk_again_once_undone() -> None:
    """A core's walk, as gdb's backtrace gives it; `leaf`'s row that says CFA = rsp + 48 edited to 64: the
    walk from the same registers now misses the return address gdb found; undone, gdb's walk again."""
    from sfview.inputs.core import read_core
    from sfview.unwind import session

    program, core = DATA / "deep-x86_64", DATA / "deep-x86_64.core"
    gdb = [int(line.split()[1], 16) for line in (DATA / "deep-x86_64.core.gdb-bt.txt").read_text().splitlines()[1:3]]
    started = session.from_core(str(program), read_core(str(core)), None, [], None)
    app = SfviewApp(Document.open(str(program)), started)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("space", "space")
        assert [f.pc for f in app.screen.frames[1:]] == gdb  # #1 leaf, #2 with_alloca
        await pilot.press("escape", "o", *"ac", "enter")  # fdes[4].fres[1].offsets[0] of leaf: 0x30
        assert app.explorer.state.selected.field.path == "fdes[4].fres[1].offsets[0]"
        await pilot.press("e", *"64.", "enter", "u", "space", "space")
        walked = [f.pc for f in app.screen.frames[1:]]
        assert walked[0] == gdb[0] and walked[1] != gdb[1]
        assert "CFA = rsp + 64" in str(app.screen.query_one("#dbg-explain").render())  # the step from #1
        await pilot.press("escape", "ctrl+z", "u", "space", "space")
        assert [f.pc for f in app.screen.frames[1:]] == gdb
