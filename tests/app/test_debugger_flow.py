"""Driving the debugger by keys: the step pane follows the backtrace cursor, Enter in a register box gives
the keys back to the walk, `m` offers the address the walk needs, and each frame shows its instruction."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import DATA, debugger_shown
from textual.widgets import DataTable

from sfview.app.app import SfviewApp
from sfview.app.screens.debugger import DebuggerScreen
from sfview.app.screens.goto import GotoNumber
from sfview.document import Document
from sfview.inputs.core import read_core
from sfview.unwind import session

pytestmark = pytest.mark.oracle  # each instruction shown is compared with objdump's

PROGRAM = DATA / "deep-x86_64"
CORE = DATA / "deep-x86_64.core"
BT = DATA / "deep-x86_64.core.gdb-bt.txt"
SIZE = (130, 40)
BIAS = 0x555555554000


def _explanation(screen: DebuggerScreen) -> str:
    return str(screen.query_one("#dbg-explain").render())


def _objdump_at(address: int) -> tuple[str, str]:
    """objdump's mnemonic and operands at `address` of the program (comment dropped)."""
    out = subprocess.run(
        ["objdump", "-d", f"--start-address={address:#x}", f"--stop-address={address + 16:#x}", str(PROGRAM)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(line for line in out.splitlines() if line.strip().startswith(f"{address:x}:"))
    text = line.split("\t")[-1].split("#")[0].split()
    return text[0], "".join(text[1:])


async def test_the_step_pane_follows_the_backtrace_cursor() -> None:
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("space", "space", "space")
        frames = debugger.query_one("#dbg-frames")
        assert frames.cursor_row == 2, "the cursor on the frame whose step is shown"
        assert "Frame #2 at" in _explanation(debugger)
        await pilot.press("up")  # frame #1: its step, with its arithmetic
        await pilot.pause()
        text = _explanation(debugger)
        assert "Frame #1 at 0x555555555181 leaf+0x11" in text
        assert "CFA = rsp + 48 = 0x7fffffffec30 + 0x30 = 0x7fffffffec60" in text
        await pilot.press("down", "down")  # the last frame, not stepped from yet
        await pilot.pause()
        assert "space: find its caller" in _explanation(debugger)


async def test_each_frame_shows_the_instruction_at_its_pc() -> None:
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        debugger = await debugger_shown(app, pilot)
        await pilot.press("space", "space")
        for index in (0, 1):
            frame = debugger.frames[index]
            debugger._explain_frame(index)
            shown = re.search(r"the instruction at pc: (\S+) ?(.*)", _explanation(debugger))
            assert shown is not None
            mnemonic, operands = _objdump_at(frame.pc - BIAS)
            assert shown[1].startswith(mnemonic) and shown[2].replace(" ", "") == operands


async def test_enter_in_a_register_box_returns_to_the_walk_and_m_offers_the_address_needed() -> None:
    core = read_core(str(CORE))
    regs = core.threads[0].registers
    app = SfviewApp(Document.open(str(PROGRAM)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press(*f"{regs['rip'] - BIAS:x}", "tab", *f"{regs['rsp']:x}", "enter")
        assert debugger.focused is debugger.query_one("#dbg-frames"), "enter gives the keys back to the walk"
        await pilot.press("space")  # steps (it is not typed into the box): the RA's word is asked for
        assert isinstance(app.screen, GotoNumber) and debugger.missing == regs["rsp"]
        await pilot.press("escape", "m")
        assert isinstance(app.screen, GotoNumber)
        assert app.screen.query_one("#goto-input").value == f"{regs['rsp']:#x}", "m offers the address needed"
        await pilot.press("enter")  # accepted as it is: now its value
        await pilot.press(*f"{core.memory.read(regs['rsp']) - BIAS:x}", "enter")
        await pilot.pause()
        assert [f.pc for f in debugger.frames] == [0x1160, 0x1181]


@pytest.fixture(autouse=True)
def _objdump() -> None:
    import shutil

    if shutil.which("objdump") is None:
        pytest.skip("objdump is not installed: it gives the instructions to compare with")


async def test_the_boxes_and_prompts_take_names_and_registers() -> None:
    core = read_core(str(CORE))
    rsp = core.threads[0].registers["rsp"]
    app = SfviewApp(Document.open(str(PROGRAM)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        debugger = await debugger_shown(app, pilot)
        await pilot.press(*"stop_here", "tab", *f"{rsp:x}", "enter")
        assert debugger.frames and debugger.frames[0].pc == 0x1160
        await pilot.press("m", *"sp", "enter")  # the address: the stack pointer's value
        assert isinstance(app.screen, GotoNumber) and f"{rsp:#x}" in app.screen.title_text
        await pilot.press(*"leaf+11", "enter")  # its value: a return address into leaf
        await pilot.pause()
        assert debugger.memory.words == {rsp: 0x1181}
        await pilot.press("space")
        assert [f.pc for f in debugger.frames] == [0x1160, 0x1181]


async def test_at_64x24_the_backtrace_shows_each_frames_name() -> None:
    """The backtrace has half of 64 columns, too few for the longest name and a PC: each frame's name, as
    gdb's `bt` gives it (the core's stored backtrace), comes right after its number, whole, and the PC (in
    the step pane's title too, with the symbol's offset) and where and how it was found come after it."""
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=(64, 24)) as pilot:
        debugger = await debugger_shown(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        frames = debugger.query_one("#dbg-frames", DataTable)
        columns = list(frames.columns.values())
        assert [str(c.label) for c in columns] == ["#", "function", "pc", "at", "how"]
        names = [str(frames.get_row_at(i)[1]) for i in range(frames.row_count)]
        gdb = [line.split(" (")[0].split()[-1] for line in BT.read_text().splitlines() if line.startswith("#")]
        assert names[: len(gdb)] == gdb and len(names) == len(debugger.frames), names
        frames.move_cursor(row=1)
        await pilot.pause()
        assert "Frame #1 at 0x555555555181 leaf+0x11\n" in _explanation(debugger), "the offset, in the detail"
        room = frames.scrollable_content_region.width - columns[0].get_render_width(frames) - 2 * frames.cell_padding
        assert all(len(name) <= room for name in names[:6]), "the program's own frames, whole"
        assert room - len("0x555555555181") - 2 * frames.cell_padding < len(names[2]), "after the PC, cut"


@pytest.mark.parametrize("width", [100, 120, 160])
async def test_the_backtraces_pc_is_whole_or_cut_with_an_ellipsis(width: int) -> None:
    """A PC cut at the pane's edge read as a real value (`0x5555`): the columns are fitted to the pane, so
    that nothing is clipped; the name gives way first (in the middle), the PC is whole or ends with `…`. Frame
    #0, at the start of a source line, has none, as gdb's `bt` prints it (the core's stored backtrace)."""
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=(width, 30)) as pilot:
        debugger = await debugger_shown(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        frames = debugger.query_one("#dbg-frames", DataTable)
        drawn = sum(c.get_render_width(frames) for c in frames.columns.values())
        assert drawn <= frames.scrollable_content_region.width, "no column runs past the pane's edge"
        assert BT.read_text().startswith("#0  stop_here () at ") and str(frames.get_row_at(0)[2]) == ""
        for i, frame in enumerate(debugger.frames[1:], 1):
            pc = str(frames.get_row_at(i)[2])
            assert pc == f"{frame.pc:#x}" or (pc.endswith("…") and f"{frame.pc:#x}".startswith(pc[:-1])), pc
        if width >= 120:
            assert [str(frames.get_row_at(i)[2]) for i in range(1, frames.row_count)] == [
                f"{f.pc:#x}" for f in debugger.frames[1:]
            ]
