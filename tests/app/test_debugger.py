"""The unwinding debugger in the app: from a core or from typed registers, step by step to `main`."""

from __future__ import annotations

from conftest import DATA, debugger_shown

from sfview.app.app import SfviewApp
from sfview.app.screens.debugger import DebuggerScreen
from sfview.app.screens.goto import GotoNumber
from sfview.document import Document
from sfview.inputs.core import read_core
from sfview.unwind import session
from sfview.unwind.engine import RuleSource

PROGRAM = DATA / "deep-x86_64"
CORE = DATA / "deep-x86_64.core"
SIZE = (130, 40)


def _explanation(screen: DebuggerScreen) -> str:
    return str(screen.query_one("#dbg-explain").render())


async def test_stepping_a_core_shows_the_arithmetic_and_points_the_explorer() -> None:
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("space", "space")
        assert [f.pc for f in debugger.frames] == [0x555555555160, 0x555555555181, 0x5555555551C5]
        text = _explanation(debugger)
        assert "Frame #1 at 0x555555555181 leaf+0x11" in text
        assert "looked up at PC - 1 = 0x555555555180" in text
        assert "FRE 1 at section offset 0xaa: bytes 06 03 30" in text
        assert "CFA = rsp + 48 = 0x7fffffffec30 + 0x30 = 0x7fffffffec60" in text
        assert "*(CFA - 8 = 0x7fffffffec60 - 0x8 = 0x7fffffffec58) = 0x5555555551c5" in text
        await pilot.press("escape")
        selected = app.explorer.state.selected
        assert selected is not None and (selected.fde, selected.fre) == (4, 1), "the FDE and FRE of the last step"
        await pilot.press("u", "r")
        assert [f.name().split("+")[0] for f in debugger.frames[:6]] == [
            "stop_here", "leaf", "with_alloca", "recurse", "fp_func", "main"
        ]  # fmt: skip
        # Past main, into libc: it has no SFrame data, so its DWARF CFI takes the walk to _start, whose
        # CFI ends it. (When this machine's libc is not the one the core mapped, it is not used, and the
        # walk stops in it, saying so.)
        assert debugger.frames[6].pc == 0x7FFFF7DFC24A
        if debugger.frames[6].dwarf:
            assert debugger.frames[-1].name().split("+")[0] == "_start"
            assert debugger.stop == "the outermost frame: DWARF says the return address is undefined"
        else:
            assert debugger.stop.startswith("no FDE covers 0x7ffff7dfc249")
        walked = len(debugger.frames)
        await pilot.press("b")
        assert len(debugger.frames) == walked - 1 and not debugger.stop


async def test_typed_registers_and_a_memory_word_asked_for() -> None:
    """From the explorer (`u`), with registers typed in: the step that needs a stack word asks for it."""
    core = read_core(str(CORE))
    regs = core.threads[0].registers
    app = SfviewApp(Document.open(str(PROGRAM)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen) and not debugger.frames
        # The program is at its link addresses: the core's PC less the PIE's load bias.
        await pilot.press(*f"{regs['rip'] - 0x555555554000:x}", "tab", *f"{regs['rsp']:x}", "enter")
        assert debugger.frames and debugger.frames[0].pc == 0x1160
        await pilot.press("tab", "tab")  # to the backtrace
        await pilot.press("space")
        assert isinstance(app.screen, GotoNumber), "the RA is on the stack: its word is asked for"
        assert debugger.missing == regs["rsp"]
        await pilot.press(*f"{core.memory.read(regs['rsp']) - 0x555555554000:x}", "enter")
        await pilot.pause()
        assert app.screen is debugger
        assert [f.pc for f in debugger.frames] == [0x1160, 0x1181]
        assert debugger.memory.words == {regs["rsp"]: core.memory.read(regs["rsp"]) - 0x555555554000}


async def test_each_step_with_dwarf_cfi_too() -> None:
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        debugger = await debugger_shown(app, pilot)
        await pilot.press("d", "space", "space")
        text = _explanation(debugger)
        assert "With DWARF CFI instead:" in text
        assert "DWARF CFI: the FDE at .eh_frame+0x" in text
        assert "the same caller: SFrame and DWARF agree here" in text
        assert debugger.unwinder.rule_source is RuleSource.SFRAME_DWARF, (
            "the walk itself still follows SFrame (DWARF where it has none)"
        )


async def test_a_step_shows_the_registers_that_changed_and_run_pages_a_long_walk(monkeypatch) -> None:
    """Frame 0 has every register of the core; its caller lists the ones the step changed (SP from the
    CFA, the RA column), then the callee-saved ones carried over. `r` adds a page of frames at a time."""
    from sfview.app.screens import debugger as screen_module

    monkeypatch.setattr(screen_module, "RUN_PAGE", 2)
    started = session.from_core(str(PROGRAM), read_core(str(CORE)), None, [], None)
    assert {"rbx", "r12", "rax", "rip"} <= {started.unwinder.machine.name(n) for n in started.registers}
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("space")
        text = _explanation(debugger)
        assert "rsp = 0x" in text and "(CFA)" in text and "rip = 0x555555555181  (RA rule)" in text
        assert "the same as in frame #0: rbx, rbp, r12, r13, r14, r15" in text
        assert "rax = " not in text.split("The caller")[1], "a caller-saved register is not carried"
        await pilot.press("r")
        assert len(debugger.frames) == 4 and not debugger.stop
        assert "the walk goes on: r runs another 2" in str(debugger.query_one("#dbg-status").render())
        await pilot.press("r")
        last = debugger.frames[-1]
        assert len(debugger.frames) == 6 and debugger.unwinder.name_at(last.pc, last.lookup_pc).startswith("main+")
