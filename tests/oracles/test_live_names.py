"""A running process no other test reads, held to `gdb -p`'s `thread apply all bt` line for line: each frame's
number, PC (where gdb prints one), name and `at FILE:LINE` or `from LIBRARY`; then a core of it (`gcore`) held
to gdb's backtrace on the core, in `unwind --core` and in the debugger's rows.

The program (`tests/data/src/blocked.cc`, built once with `-g -O2 -Wa,--gsframe`) has what gdb names in ways
of its own: tail call frames put back from the call sites' debug information (inside glibc's `sem_wait`; none
after the program's call to `pthread_kill`, which a C++ unit declares without a linkage name, so that gdb finds
no symbol for it), frame 0 after a system call in a line with discriminators (printed with its address), a
frame interrupted by a signal, a deep recursion, the program's own tail calls (one way: each put back; two
ways: none; two ways ending in one: that one), and libraries without debug information named as the dynamic
linker's list names them (`from /lib/x86_64-linux-gnu/libstdc++.so.6`). Arguments are compared as `()`: gdb
prints their values, sfview not.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import DATA, run_process
from test_inline import LIBC, _debugger_rows
from test_live import _need_ptrace, _wait_until

from sfview.inputs.demangle import demangle
from sfview.inputs.elf.image import ElfImage
from sfview.inputs.elf.names import debug_file

DEPTH = 2000
TITLE = re.compile(r"^Thread \d+ \(.*\):$", re.M)
HEAD = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(.*)$")
TAIL = re.compile(r" (at \S+:\d+|from \S+)$")
MARK = re.compile(r"  \[[^]]*\]$")
"""sfview's mark after a frame its walk found otherwise than by SFrame (`[DWARF CFI]`)."""
LIMIT = ["-ex", "set backtrace past-main on", "-ex", "set backtrace limit 100000", "-ex", "thread apply all bt"]


def frames(text: str) -> list[str]:
    """Each frame line as `#N [ADDRESS in ]NAME () [at FILE:LINE|from LIB]`: arguments left out, marks too."""
    out = []
    for line in text.splitlines():
        m = HEAD.match(MARK.sub("", line))
        if m is None:
            continue
        rest = m[3]
        tail = TAIL.search(rest)
        where, rest = (tail[1], rest[: tail.start()]) if tail else ("", rest)
        name = rest if rest.startswith("<signal") else rest.split(" (")[0]
        address = f"{int(m[2], 16):#018x} in " if m[2] else ""
        out.append(f"#{m[1]} {address}{name}" + (f" {where}" if where else ""))
    return out


def threads(text: str) -> dict[str, list[str]]:
    titles, parts = TITLE.findall(text), TITLE.split(text)[1:]
    return {title: frames(body) for title, body in zip(titles, parts, strict=True)}


class Seen(NamedTuple):
    """What gdb and sfview said of the process and its core, and what became of the process."""

    program: Path
    gdb: str
    ours: str
    states: tuple[dict[str, str], dict[str, str]]
    """Each thread's state and system call before sfview read the process, and once it let it go."""
    core: Path
    exit_status: int


def _states(pid: int) -> dict[str, str]:
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        stat = (task / "stat").read_text()
        out[task.name] = stat[stat.rfind(")") + 2] + " " + (task / "syscall").read_text().split()[0]
    return out


def _blocked(pid: int) -> bool:
    states = _states(pid)
    return len(states) == 8 and all(state.startswith("S ") for state in states.values())


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Seen:
    _need_ptrace()
    with open(LIBC, "rb") as f:
        if debug_file(ElfImage.of(f), LIBC) is None:
            pytest.skip("libc's separate debug file is not installed (libc6-dbg): gdb names none of its frames")
    folder = tmp_path_factory.mktemp("blocked")
    program = folder / "blocked"
    subprocess.run(["g++", "-g", "-O2", "-Wa,--gsframe", "-pthread", f"-DDEPTH={DEPTH}",
                    str(DATA / "src" / "blocked.cc"), "-o", str(program)], check=True)  # fmt: skip
    started = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert started.stdout is not None and started.stdout.readline() == b"ready\n"
        _wait_until(lambda: _blocked(started.pid))
        gdb = subprocess.run(["gdb", "-p", str(started.pid), "-batch", "-nx", *LIMIT],
                             capture_output=True, text=True, timeout=300, check=True).stdout  # fmt: skip
        _wait_until(lambda: _blocked(started.pid))
        before = _states(started.pid)
        result = run_process("unwind", "--pid", str(started.pid), "--thread", "all")
        assert result.returncode == 0, result.stderr
        _wait_until(lambda: _blocked(started.pid))
        after = _states(started.pid)
        subprocess.run(["gcore", "-o", str(folder / "core"), str(started.pid)], capture_output=True, timeout=300,
                       check=True)  # fmt: skip
        started.communicate(b"\n", timeout=60)
    finally:
        if started.poll() is None:
            started.kill()
        started.wait()
    return Seen(program, gdb, result.stdout, (before, after), folder / f"core.{started.pid}", started.returncode)


def test_every_line_is_gdb_ps_and_the_process_runs_on(seen: Seen) -> None:
    theirs, ours = threads(seen.gdb), threads(seen.ours)
    assert list(ours) == list(theirs)
    assert sum(len(lines) for lines in theirs.values()) > DEPTH, "the deep thread's frames, all of them"
    named = "\n".join(line for lines in theirs.values() for line in lines)
    for seen_by_gdb in ("in do_futex_wait", "in __GI___poll", "<signal handler called>", "from /lib/", "in via_d"):
        assert seen_by_gdb in named, f"gdb shows {seen_by_gdb!r} here (what this program is for):\n{named}"
    for title, lines in theirs.items():
        assert ours[title] == lines, title
    before, after = seen.states
    assert after == before, "every thread as it was, blocked in the same call"
    assert seen.exit_status == 0


@pytest.fixture(scope="module")
def core_bt(seen: Seen) -> str:
    """gdb's `thread apply all bt` on the core of the process."""
    return subprocess.run(["gdb", "-batch", "-nx", *LIMIT, str(seen.program), str(seen.core)],
                          capture_output=True, text=True, timeout=300, check=True).stdout  # fmt: skip


def test_a_core_of_it_is_gdbs(seen: Seen, core_bt: str) -> None:
    result = run_process("unwind", str(seen.program), "--core", str(seen.core), "--thread", "all")
    assert result.returncode == 0, result.stderr
    theirs, ours = threads(core_bt), threads(result.stdout)
    assert [frames for frames in ours.values()] == [frames for frames in theirs.values()]


def _json_lines(frame: dict[str, Any]) -> list[tuple[str, str | None]]:
    """A frame of `--json` as the names of gdb's lines for it, each with the whole line for a tail call frame
    (`0x… in NAME at FILE:LINE`, its address and place given), else None: its tail calls, then the
    functions of its `source`, innermost first, or its symbol."""
    lines: list[tuple[str, str | None]] = []
    for call in frame["tail_calls"]:
        name = demangle(call["function"])
        where = f" at {call['file']}:{call['line']}" if call["file"] else ""
        lines.append((name, f"{call['pc']:#018x} in {name}{where}"))
    if frame["signal"]:
        return [*lines, ("<signal handler called>", None)]
    symbol = frame["name"] if frame["name"] and not frame["name"].startswith(".") else "??"  # `.text`: no symbol
    names = [demangle(place["function"]) for place in frame["source"]] or [demangle(symbol)]
    return lines + [(name, None) for name in names]


def test_json_gives_gdbs_tail_call_frames(seen: Seen, core_bt: str) -> None:
    """`--json` on the core: each frame's `tail_calls` and then its functions are gdb's lines, one for one, a
    tail call frame at the address, name and `at FILE:LINE` gdb prints for it; the document as `json.dumps`
    writes it."""
    result = run_process("unwind", str(seen.program), "--core", str(seen.core), "--thread", "all", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert json.dumps(doc, indent=1) + "\n" == result.stdout
    theirs = list(threads(core_bt).values())
    assert len(doc["threads"]) == len(theirs)
    calls = []
    for thread, lines in zip(doc["threads"], theirs, strict=True):
        ours = [line for frame in thread["frames"] for line in _json_lines(frame)]
        named = [HEAD.match(line)[3] for line in lines]  # type: ignore[index]
        assert [name for name, _ in ours] == [TAIL.sub("", name) for name in named]
        for (_, whole), line in zip(ours, lines, strict=True):
            if whole is not None:
                calls.append(whole)
                assert line.split(" ", 1)[1] == whole
    jumped = " ".join(calls)
    for seen_by_gdb in ("do_futex_wait", "via_d", "via_b"):
        assert f"in {seen_by_gdb} at " in jumped, f"gdb's tail call frame {seen_by_gdb} in --json: {calls}"


async def test_the_debugger_shows_gdbs_lines_of_the_core(seen: Seen) -> None:
    """The debugger on the core's first thread (main, in the terminate handler: libstdc++'s and libgcc's
    frames without debug information, named from their symbols and libraries), row by row gdb's `bt`."""
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set backtrace past-main on", "-ex", "bt",
                          str(seen.program), str(seen.core)], capture_output=True, text=True, timeout=300,
                         check=True).stdout  # fmt: skip
    expected = frames(gdb[gdb.rfind("\n#0 ") :])
    assert any(" from /lib/" in line for line in expected), gdb
    rows = await _debugger_rows(seen.program, seen.core)
    assert frames("\n".join(rows)) == expected
