"""Every thread of a core: `sfview unwind --thread all` as gdb's `thread apply all bt`, and `t` in the
debugger. gdb is the oracle for how threads are numbered and titled and for each thread's frames."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, debugger_shown, run_process
from test_unwind import need

from sfview.app.app import SfviewApp
from sfview.app.screens.debugger import DebuggerScreen, ThreadPicker
from sfview.document import Document
from sfview.inputs.core import read_core
from sfview.unwind import session

TITLE = re.compile(r"^Thread \d+ \(.*\):$", re.M)
FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(", re.M)


@pytest.fixture(scope="module")
def threads(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A program with three threads, its core taken by gdb, and gdb's `thread apply all bt` on that core."""
    need("gcc", "gdb")
    tmp = tmp_path_factory.mktemp("threads")
    program, core = tmp / "threads", tmp / "threads.core"
    subprocess.run(
        ["gcc", "-O2", "-Wa,--gsframe", "-pthread", str(DATA / "src" / "threads.c"), "-o", str(program)], check=True
    )
    subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "break stop_here", "-ex", "run", "-ex", f"generate-core-file {core}",
         str(program)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    bt = subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "thread apply all bt", str(program), str(core)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    return program, core, bt


def _by_thread(text: str) -> dict[str, list[int]]:
    """Each thread's title → the PCs of its frames (frame #0's, which gdb prints without one, left out)."""
    parts = TITLE.split(text)
    titles = TITLE.findall(text)
    return {
        t: [int(pc, 16) for _, pc, _ in FRAME.findall(body) if pc] for t, body in zip(titles, parts[1:], strict=True)
    }


def test_thread_all_titles_and_orders_threads_as_gdb(threads: tuple[Path, Path, str]) -> None:
    program, core, bt = threads
    result = run_process("unwind", str(program), "--core", str(core), "--thread", "all")
    assert result.returncode == 0, result.stderr
    assert TITLE.findall(result.stdout) == TITLE.findall(bt), "the same threads, numbered and titled as gdb does"
    ours, theirs = _by_thread(result.stdout), _by_thread(bt)
    compared = 0
    for title, pcs in theirs.items():
        # gdb's return addresses, in order (gdb adds inlined frames from libc's debug info, without a PC
        # of their own, and stops at main; sfview goes on into _start). Where each thread is when the
        # core is taken varies from run to run: some have few frames.
        walked = iter(ours[title])
        assert all(pc in walked for pc in pcs[1:]), (title, pcs, ours[title])
        compared += len(pcs[1:])
    assert compared >= 3


def test_thread_all_says_the_notes_once_and_as_json_is_one_document(threads: tuple[Path, Path, str]) -> None:
    """The notes are the core's and its files' (a library without SFrame data): said once, after the last
    thread, not after each; `--json` is one document (it was a JSON document per thread between the titles,
    which no parser reads), each thread's frames those `--thread TID --json` gives, in gdb's order."""
    program, core, bt = threads
    argv = ["unwind", str(program), "--core", str(core)]
    every = run_process(*argv, "--thread", "all")
    one = run_process(*argv)
    notes = one.stderr.splitlines()
    assert notes, "the libraries the core maps have no SFrame data here: there is something to say once"
    assert all(note.startswith("note: ") for note in notes), notes
    assert every.stderr.splitlines() == notes, "said once, on stderr"
    assert "note: " not in every.stdout + one.stdout, "stdout is the backtraces alone"

    result = run_process(*argv, "--thread", "all", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert result.stdout == json.dumps(document, indent=1) + "\n", "written as json.dumps writes it"
    assert [(t["thread"], t["tid"]) for t in document["threads"]] == [
        (int(number), int(tid)) for number, tid in re.findall(r"^Thread (\d+) \(.*LWP (\d+)\)\):$", bt, re.M)
    ]
    for thread in document["threads"]:
        alone = json.loads(run_process(*argv, "--thread", str(thread["tid"]), "--json").stdout)
        assert {key: thread[key] for key in ("frames", "stop", "missing_address")} == {
            key: alone[key] for key in ("frames", "stop", "missing_address")
        }
        assert alone["notes"] == document["notes"] == [note.removeprefix("note: ") for note in notes]


def test_thread_takes_gdbs_number_as_printed_and_the_lwp(threads: tuple[Path, Path, str]) -> None:
    """`--thread 3` refused the number gdb's own output prints (`Thread 3 (… LWP 26800)`): gdb's numbers
    are taken as gdb takes them, LWPs still; each gives the thread gdb titles so."""
    program, core, bt = threads
    argv = ["unwind", str(program), "--core", str(core)]
    numbered = re.findall(r"^Thread (\d+) \(.*LWP (\d+)\)\):$", bt, re.M)
    assert len(numbered) >= 3
    for number, tid in numbered:
        by_number, by_tid = run_process(*argv, "--thread", number), run_process(*argv, "--thread", tid)
        assert by_number.returncode == 0, by_number.stderr
        assert by_number.stdout == by_tid.stdout
        title = next(t for t in TITLE.findall(bt) if t.startswith(f"Thread {number} "))
        walked = iter(_by_thread(f"{title}\n{by_number.stdout}")[title])
        assert all(pc in walked for pc in _by_thread(bt)[title][1:]), title  # gdb's frames, inlined ones aside
    refused = run_process(*argv, "--thread", str(len(numbered) + 1))
    assert refused.returncode == 2
    assert f"gdb's numbers 1 to {len(numbered)}, or LWPs" in refused.stderr


def test_thread_all_needs_a_core() -> None:
    result = run_process("unwind", str(DATA / "deep-x86_64"), "--regs", "pc=0x1160", "--thread", "all")
    assert result.returncode == 2 and "--thread all needs --core" in result.stderr


async def test_t_lists_the_threads_and_walks_the_one_chosen(threads: tuple[Path, Path, str]) -> None:
    program, core_path, _ = threads
    core = read_core(str(core_path))
    started = session.from_core(str(program), core, None, [], None)
    listed = session_threads(str(program), core)
    app = SfviewApp(Document.open(str(program)), started, listed)
    async with app.run_test(size=(130, 40)) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        assert "3 threads" in str(debugger.query_one("#dbg-status").render())
        await pilot.press("t")
        picker = app.screen
        assert isinstance(picker, ThreadPicker)
        await pilot.press("down", "enter")  # the second thread, as gdb numbers them
        await pilot.pause()
        assert app.screen is debugger
        second = core.threads[1]
        assert debugger.frames[0].pc == second.registers["rip"]
        assert f"LWP {second.tid}" in debugger.query_one("#dbg-frames").border_title
        await pilot.press("r")
        assert any(f.name().startswith("main") for f in debugger.frames), "thread 2 is main's: it walks to main"


def session_threads(program: str, core):
    from sfview.cli.state import debugger_threads

    return debugger_threads(program, core, [], None)
