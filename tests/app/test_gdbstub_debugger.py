"""`sfview --gdbstub PORT PROG`: the debugger opens on a snapshot of the guest, read through the stub and
detached before the app opens. The stub is `tests/fake_stub.py`'s, serving qemu-aarch64's core of
`deep-aarch64` (its frames as gdb printed them: `deep-aarch64.core.gdb-bt.txt`)."""

from __future__ import annotations

import re

from conftest import DATA, debugger_shown
from fake_stub import core_stub

from sfview.app.app import SfviewApp
from sfview.app.screens.debugger import DebuggerScreen
from sfview.app.textual_compat import notifications
from sfview.cli import explore, state
from sfview.document import Document

PROGRAM = str(DATA / "deep-aarch64")
GDB_PC = re.compile(r"^#\d+\s+(0x[0-9a-f]+) in ", re.M)


async def test_the_debugger_walks_the_guest_as_gdb_did() -> None:
    stub, _ = core_stub(str(DATA / "deep-aarch64.core"))
    args = explore.parser().parse_args(["--gdbstub", str(stub.port), PROGRAM])
    program, first, threads = state.process_snapshot(args.file, args)
    stub.thread.join(5)
    assert stub.requests[-1] == b"D" and threads is None  # detached before the app opens; one thread
    gdb = [int(pc, 16) for pc in GDB_PC.findall((DATA / "deep-aarch64.core.gdb-bt.txt").read_text())]
    app = SfviewApp(Document.open(program), first, threads)
    async with app.run_test(size=(130, 40)) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        assert any(f"a snapshot of the guest at {stub.port}" in n.message for n in notifications(app))
        await pilot.press("r")
        assert [frame.pc for frame in debugger.frames][: len(gdb)] == gdb
