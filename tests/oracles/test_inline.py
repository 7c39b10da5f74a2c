"""Frames named from DWARF debug information as gdb names them: `sfview unwind --core` against `gdb -batch -ex bt`
on the same core, gdb the oracle for each frame's name, its `at FILE:LINE`, the inlined calls it prints as frames
of their own (without an address), which frame 0 it prints without its address, and libc's frames named from its
separate debug file (libc6-dbg: `__GI___libc_malloc`, where the symbol table says `malloc`). Arguments are compared
as `()`: gdb prints their values, sfview does not."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, debugger_shown, run_process
from test_unwind import need

from sfview.inputs.elf.image import ElfImage
from sfview.inputs.elf.names import debug_file

LINE = re.compile(r"^(#\d+)\s+((?:0x[0-9a-f]+ in )?\S+) \(.*\)((?: at \S+:\d+| from \S+)?)$")
"""A frame line as gdb prints one: its number, address and name; its arguments; `at FILE:LINE` or `from LIB`."""
MARK = re.compile(r"  \[[^]]*\]$")
"""sfview's mark after a frame its walk found otherwise than by SFrame (`[DWARF CFI]`)."""
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def frame_lines(text: str, ours: bool = False) -> list[str]:
    """The frame lines of the last backtrace in `text` (gdb prints frame 0 once more as it opens a core), the
    arguments as `()`, sfview's marks left out."""
    lines = [MARK.sub("", line) if ours else line for line in text.splitlines() if line.startswith("#")]
    last = max((n for n, line in enumerate(lines) if line.startswith("#0 ")), default=0)
    out = []
    for line in lines[last:]:
        m = LINE.match(line)
        assert m is not None, f"not a frame line: {line!r}"
        out.append(f"{m[1]:<3} {m[2]} (){m[3]}")
    return out


def physical(lines: list[str]) -> list[tuple[str, str]]:
    """gdb's frames grouped into the physical frames they are: a group starts at a line with an address (or
    at #0) and is named after its last line, the function the others were inlined into: (address, that
    line without its number and address)."""
    groups: list[list[str]] = []
    for line in lines:
        if " in " in line.split(" (")[0] or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    return [(_address(group[0]), _named(group[-1])) for group in groups]


def _address(line: str) -> str:
    head = line.split()[1]
    return head if head.startswith("0x") else ""


def _named(line: str) -> str:
    return line.split(" in ", 1)[1] if " in " in line.split(" (")[0] else line.split(None, 1)[1]


def _core(program: Path, core: Path, *commands: str) -> str:
    """A core of `program` written by gdb where `commands` stop it, and gdb's `bt` on that core (past main)."""
    steps = [arg for command in commands for arg in ("-ex", command)]
    subprocess.run(
        ["gdb", "-batch", "-nx", *steps, "-ex", f"generate-core-file {core}", str(program)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert core.exists()
    return subprocess.run(
        ["gdb", "-batch", "-nx", "-ex", "set backtrace past-main on", "-ex", "bt", str(program), str(core)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need("gcc", "gdb")
    program = tmp_path_factory.mktemp("inline") / "inline"
    subprocess.run(["gcc", "-g", "-O2", "-Wa,--gsframe", str(DATA / "src" / "inline.c"), "-o", str(program)],
                   check=True)  # fmt: skip
    return program


@pytest.fixture(scope="module")
def stopped(program: Path) -> tuple[Path, str]:
    """The program stopped in `stop_here`, called from `step` inlined into `inner` inlined into `outer`."""
    core = program.parent / "stop.core"
    return core, _core(program, core, "break stop_here", "run")


@pytest.fixture(scope="module")
def in_malloc(program: Path) -> tuple[Path, str]:
    """The program stopped in libc's malloc, in `checked_request2size`, which malloc's code inlines."""
    with open(LIBC, "rb") as f:
        found = debug_file(ElfImage.of(f), LIBC)
    if found is None:
        pytest.skip("libc's separate debug file is not installed (libc6-dbg): gdb could not name its frames")
    core = program.parent / "malloc.core"
    return core, _core(program, core, "break grab", "run", "break checked_request2size", "continue")


def test_inlined_frames_are_printed_as_gdb_prints_them(program: Path, stopped: tuple[Path, str]) -> None:
    core, bt = stopped
    expected = frame_lines(bt)
    assert any(line.startswith("#2  inner () at ") for line in expected), "gdb shows the inlined frames: " + bt
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert frame_lines(result.stdout, ours=True) == expected, result.stdout + bt


def test_libc_frames_are_named_from_its_debug_file(program: Path, in_malloc: tuple[Path, str]) -> None:
    core, bt = in_malloc
    expected = frame_lines(bt)
    named = " ".join(expected)
    assert "checked_request2size () at" in named and "__GI___libc_malloc () at" in named, bt
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert frame_lines(result.stdout, ours=True) == expected, result.stdout + bt


@pytest.mark.parametrize("where", ["stopped", "in_malloc"])
def test_no_inline_prints_the_physical_frames(program: Path, where: str, request: pytest.FixtureRequest) -> None:
    """`--no-inline`: a line for each physical frame, at its address, named after the function the others
    were inlined into, at the line of the call inlined there (gdb's last line of the frame)."""
    core, bt = request.getfixturevalue(where)
    result = run_process("unwind", str(program), "--core", str(core), "--no-inline")
    assert result.returncode == 0, result.stderr
    ours = [(_address(line), _named(line)) for line in frame_lines(result.stdout, ours=True)]
    assert ours == physical(frame_lines(bt)), result.stdout + bt


def test_json_gives_each_frames_inline_chain(program: Path, stopped: tuple[Path, str]) -> None:
    """`source` of each frame: the lines gdb prints for that physical frame, innermost first, at its PC."""
    core, bt = stopped
    result = run_process("unwind", str(program), "--core", str(core), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    groups: list[list[str]] = []
    for line in frame_lines(bt):
        if _address(line) or not groups:
            groups.append([])
        groups[-1].append(_named(line))
    frames = doc["frames"][: len(groups) - 1]  # the last, `_start`, has no debug information
    given = [[f"{p['function']} () at {p['file']}:{p['line']}" for p in frame["source"]] for frame in frames]
    assert given == groups[:-1], result.stdout + bt
    assert [place["inlined"] for place in doc["frames"][1]["source"]] == [True, True, False]
    assert {"number", "pc", "function", "module", "computations"} <= set(doc["frames"][0]), "the members kept"


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_damaged_debug_information_costs_the_names_not_the_walk(
    program: Path, stopped: tuple[Path, str], tmp_path: Path, damage: str
) -> None:
    """A program whose `.debug_info` is garbage: its frames named from its symbols, as without debug
    information; or cut short by the end of the file; either way the walk goes on through libc, whose
    frames are named from its debug file; no traceback."""
    core, _ = stopped
    damaged = tmp_path / program.name
    shutil.copy(program, damaged)
    with open(damaged, "rb") as f:
        header = ElfImage.of(f).section(".debug_info")
    assert header is not None
    with open(damaged, "r+b") as f:
        if damage == "truncated":
            f.truncate(header.offset + header.size // 2)  # the section headers, after it, go too
        else:
            f.seek(header.offset)
            f.write(b"\xff" * header.size)
    result = run_process("unwind", str(damaged), "--core", str(core))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    lines = frame_lines(result.stdout, ours=True)
    if damage == "garbage":  # (cut short, the file loses its section headers, after it, and its symbols too)
        assert [_named(line) for line in lines[:3]] == ["stop_here ()", "outer ()", "main ()"], result.stdout
    assert any("in __libc_start_call_main () at " in line for line in lines), result.stdout


async def test_the_debugger_says_where_each_frame_is_as_gdb_does(program: Path, stopped: tuple[Path, str]) -> None:
    """The step pane of frame #1 (the frame `step` and `inner` were inlined into `outer`): the lines gdb prints
    for it, innermost first, each marked inlined or not."""
    from textual.widgets import DataTable

    from sfview.app.app import SfviewApp
    from sfview.app.screens.debugger import DebuggerScreen
    from sfview.document import Document
    from sfview.inputs.core import read_core
    from sfview.unwind import session

    core, bt = stopped
    groups: list[list[str]] = []
    for line in frame_lines(bt):
        if _address(line) or not groups:
            groups.append([])
        groups[-1].append(_named(line))
    started = session.from_core(str(program), read_core(str(core)), None, [], None)
    app = SfviewApp(Document.open(str(program)), started)
    async with app.run_test(size=(160, 50)) as pilot:
        debugger = await debugger_shown(app, pilot)
        assert isinstance(debugger, DebuggerScreen)
        await pilot.press("r")
        assert debugger.stop and len(debugger.frames) >= len(groups), "r walks to the end"
        debugger.query_one("#dbg-frames", DataTable).move_cursor(row=1)
        for _ in range(600):  # the step pane follows the cursor's message
            await pilot.pause(0.05)
            text = str(debugger.query_one("#dbg-explain").render())
            if text.startswith("Frame #1"):
                break
    shown = [line.strip().removeprefix("inlined: ").removeprefix("in ") for line in text.splitlines()[1:4]]
    assert shown == groups[1], text + bt
    assert [line.split()[0] for line in text.splitlines()[1:4]] == ["inlined:", "inlined:", "in"]


def test_cplusplus_frames_are_named_by_their_scopes_as_gdb_names_them(tmp_path: Path) -> None:
    """C++ (`tests/data/src/thrower.cc`, `-g`): a method of a class in a namespace, `ns::Shape::area`, and an
    overloaded function, `ns::thrower`, named by their DIEs' scopes as gdb names them (not demangled with
    their parameter types, as the symbol table would give them)."""
    need("g++", "gdb")
    program, core = tmp_path / "thrower", tmp_path / "thrower.core"
    subprocess.run(["g++", "-g", "-O0", "-Wa,--gsframe", str(DATA / "src" / "thrower.cc"), "-o", str(program)],
                   check=True)  # fmt: skip
    expected = frame_lines(_core(program, core, "break ns::Shape::area", "run"))
    assert expected[0].startswith("#0  ns::Shape::area () at "), expected
    result = run_process("unwind", str(program), "--core", str(core))
    assert result.returncode == 0, result.stderr
    assert frame_lines(result.stdout, ours=True) == expected, result.stdout


async def _table_rows(
    program: Path, core: Path, size: tuple[int, int], *, inline: bool = True, keys: tuple[str, ...] = ()
) -> list[list[str]]:
    """The cells of the debugger's backtrace on `core` in a terminal of `size`, run to its end (`r`), then
    `keys` pressed."""
    from textual.widgets import DataTable

    from sfview.app.app import SfviewApp
    from sfview.document import Document
    from sfview.inputs.core import read_core
    from sfview.unwind import session

    started = session.from_core(str(program), read_core(str(core)), None, [], None)
    app = SfviewApp(Document.open(str(program)), started, inline=inline)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("r", *keys)
        await pilot.pause()
        table = app.screen.query_one("#dbg-frames", DataTable)
        return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def _debugger_rows(program: Path, core: Path, *, inline: bool = True, keys: tuple[str, ...] = ()) -> list[str]:
    """The debugger's backtrace on `core` run to its end (`r`), then `keys` pressed, each row of its table
    as the line of gdb's `bt` it stands for: the cells a person reads put back in gdb's order, wide enough
    that none is cut."""
    rows = await _table_rows(program, core, (400, 60), inline=inline, keys=keys)
    assert not any("…" in cell for row in rows for cell in row), rows
    return [
        f"{number:<3} {f'{int(pc, 16):#018x} in ' if pc else ''}{name} (){f' {where}' if where else ''}"
        for number, name, pc, where, _ in rows
    ]


@pytest.mark.parametrize("where", ["stopped", "in_malloc"])
async def test_the_debuggers_backtrace_is_gdbs(program: Path, where: str, request: pytest.FixtureRequest) -> None:
    """The debugger's frames table, row by row, is gdb's `bt` on the same core: each function inlined at a
    frame's PC a row of its own without an address, the functions named from DWARF (libc's from its debug
    file), `at FILE:LINE`, gdb's numbers."""
    core, bt = request.getfixturevalue(where)
    expected = frame_lines(bt)
    assert any(" in " not in line.split(" (")[0] for line in expected[1:]), "gdb shows inlined frames: " + bt
    assert await _debugger_rows(program, core) == expected, bt


async def test_a_narrow_backtrace_names_each_place_by_its_file(program: Path, in_malloc: tuple[Path, str]) -> None:
    """Where the backtrace's pane cannot show every `at FILE:LINE` whole (140 columns, libc's sources under
    `./malloc/`), each place is its source file's name and line (`from LIBRARY`: the library's name), as
    gdb's `bt` gives them, not the path's last cells: frames are told apart by their files."""
    core, bt = in_malloc
    rows = await _table_rows(program, core, (140, 50))
    places = [line.split(") ", 1)[1].split(" ", 1)[1] if ") " in line else "" for line in frame_lines(bt)]
    assert any("/" in place for place in places), bt
    shown = [row[3] for row in rows]
    assert len(shown) == len(places) and all(
        cell == os.path.basename(place) or (cell.startswith("…") and place.endswith(cell[1:]))
        for cell, place in zip(shown, places, strict=True)
    ), (shown, places)
    assert sum(not cell.startswith("…") for cell in shown) * 2 > len(shown), rows


async def test_the_debugger_without_inlined_frames_shows_the_physical_ones(
    program: Path, stopped: tuple[Path, str]
) -> None:
    """`--no-inline`: a row for each physical frame, at its address, named after the function the others were
    inlined into (gdb's last line of that frame); `i` lists the inlined ones again, as gdb does."""
    core, bt = stopped
    rows = await _debugger_rows(program, core, inline=False)
    assert [(_address(line), _named(line)) for line in rows] == physical(frame_lines(bt)), bt
    assert await _debugger_rows(program, core, inline=False, keys=("i",)) == frame_lines(bt), bt


def test_a_cpp_name_with_an_abi_tag_is_printed_whole_as_gdb_prints_it(tmp_path: Path) -> None:
    """`name_of[abi:cxx11](int)`: gdb takes a C++ frame's parameters off its demangled name, but its name
    parser does not read ABI tags, and the name is printed whole (sfview said `name_of`)."""
    need("g++", "gdb")
    program = tmp_path / "abi_tag"
    subprocess.run(["g++", "-g", "-O1", "-Wa,--gsframe", str(DATA / "src" / "abi_tag.cc"), "-o", str(program)],
                   check=True)  # fmt: skip
    bt = _core(program, tmp_path / "abi.core", "run")
    expected = frame_lines(bt)
    assert any("name_of[abi:cxx11](int) ()" in line for line in expected), bt
    result = run_process("unwind", str(program), "--core", str(tmp_path / "abi.core"))
    assert result.returncode == 0, result.stderr
    assert frame_lines(result.stdout, ours=True) == expected, result.stdout + bt
