#!/usr/bin/env python3
"""How fast the explorer opens and moves on a big section (40,000 functions).

Why: the explorer must stay instant on big binaries: first screen within
1 s, a move within 50 ms, under 300 MB. Two ways of measuring, because each
misses something the other sees:

* headless, in this process (`App.run_test`): start-up up to the first
  paint of the FDE table, up to the overview being ready (on a section of
  more than 5,000 functions it is made in a worker after the first paint)
  and up to the app settling (names read, checks done, sort orders made), then per key
  pressed in the FDE table the wall time of
  `press` + `pause` (which includes the Pilot's own idle detection, a few
  ms of sleeping) and the CPU time spent; the same for sorting every
  function (`S`, `R`), the filter bar's moves: opening it (`/`), typing
  a filter a key at a time, `enter`, `escape` (in the line and in the
  table), sorting what it keeps (each timed alone, the keys leading to it
  not). The Pilot's wall time is not the app's: `press` waits for every animation to end and then,
  like `pause`, for a quiet window with little CPU (a key bound to nothing,
  `idle_key`, shows that cost). A tab's key is the worst: `press` waits for
  the tab's underline to finish sliding, long after the tree is on the
  screen. So the Structure tab's first open is timed from
  the key posted to the frame that draws the selected FDE's line in the tree
  (its `render_line`), as tmux sees it, with the CPU spent until then; and at
  the same place and time as in tmux, a function in a full chunk (the cursor
  after the moves down), `BEFORE_THE_TREE_S` after the last, before the jumps;
* a real process in a detached tmux session, as a person runs it: from
  spawning `python -m sfview BINARY` until the FDE table and the status line
  are on the screen, until the header's "working…" is gone (the overview),
  and per key (`send-keys`) until the status line names the new
  selection (`capture-pane`), both over a tmux control-mode client
  (`tmux_control.py`), the screen read again each time the pane writes
  (a `tmux` process per command, polling while waiting, would take a CPU's
  share from the app measured); its peak memory is the process's VmHWM.
  Its keys start half a second after the overview is ready: on a
  million functions the worker still makes the sort orders and runs the
  checks (the Problems tab's) then, for seconds, as for a person who starts
  moving at once (the report says whether the checks were done by the last
  move: the header counts the problems once they are, if they found any).
  The Structure tab's first open happens once a process: it is timed in
  `--opens` fresh sessions (3 by default) for its median and 90th
  percentile, each as a person gets there: half a second after the
  overview, `--keys` moves down the FDE table (the worker still busy), then
  `2` (`BEFORE_THE_TREE_S` later), until the tree shows the selected FDE's
  line; and
  the filter bar's moves as headless. tmux writes an escape key alone, and
  sfview hands an escape byte read alone on at once (`sfview/app/driver.py`,
  `ALONE`): with `ESCDELAY` set, the two escapes include that wait.

Usage: python bench/bench_app.py [--binary PATH] [--keys N] [--opens N] [--size WxH] [--json] [--no-tmux]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import make_big
from _common import REPO_ROOT, big_binary, child_env, sfview_argv
from tmux_control import Control

sys.path.insert(0, str(REPO_ROOT))

if TYPE_CHECKING:  # textual is imported as part of the start-up measured
    from textual.strip import Strip

SESSION = "sfview-bench-app"
POLL_TIMEOUT_S = 30.0
POLL_PAUSE_S = 0.0005
"""Headless, between two looks for the frame that draws the Structure tab's selected line."""
LOOK_AGAIN_S = 0.05
"""In tmux, how long the bench waits for the pane to write before it reads the screen again anyway."""
BEFORE_THE_TREE_S = 0.3
"""Between the last move down the FDE table and `2`, headless and in tmux: a person looks at the function reached
before asking for its structure (the explorer readies the hidden tree once no key has come for a while)."""


def _stats(samples: list[float]) -> dict[str, float]:
    """Median, 90th percentile and maximum, in milliseconds."""
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p90_ms": ordered[int(0.9 * (len(ordered) - 1))] * 1000,
        "max_ms": ordered[-1] * 1000,
    }


# ---------------------------------------------------------------- headless


async def _headless(binary: Path, keys: int, size: tuple[int, int]) -> dict[str, object]:
    started = time.perf_counter()
    from sfview.app.app import SfviewApp  # the import is part of start-up
    from sfview.app.widgets.fde_table import FdeTable
    from sfview.document import Document

    imported = time.perf_counter()
    painted: list[float] = []
    render_line = FdeTable.render_line

    def timed_render_line(table: FdeTable, y: int) -> Strip:
        if not painted:
            painted.append(time.perf_counter())
        return render_line(table, y)

    FdeTable.render_line = timed_render_line  # type: ignore[method-assign]  # notes the first paint
    app = SfviewApp(Document.open(str(binary)))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.explorer.fde_table.row_count and app.explorer.fde_table.region.height, (
            "the FDE table is on the screen"
        )
        FdeTable.render_line = render_line  # type: ignore[method-assign]
        # What runs after the first screen (the overview, the names, the checks) is done before keys are
        # timed: the keys are measured as they are once everything is ready.
        while not getattr(app.explorer.overview, "ready", True):
            await asyncio.sleep(0.01)
        overview_ready = time.perf_counter()
        while app.explorer.summary.problems is None or not app.explorer.fde_table.orders_made:
            await asyncio.sleep(0.01)
        await pilot.pause()
        settled = time.perf_counter()

        async def per_key(key: str, count: int) -> tuple[list[float], list[float]]:
            walls, cpus = [], []
            for _ in range(count):
                wall, cpu = time.perf_counter(), time.process_time()
                await pilot.press(key)
                await pilot.pause()
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            return walls, cpus

        idle_walls, idle_cpus = await per_key("f12", keys // 2)  # bound to nothing: the Pilot's own cost
        down_walls, down_cpus = await per_key("down", keys)
        assert app.explorer.fde_table.cursor == keys
        await asyncio.sleep(BEFORE_THE_TREE_S)
        first_open = await _first_open(app, pilot)
        tree_nodes = _nodes(app.explorer.structure.root)
        await pilot.press("1")
        await pilot.pause()
        jumps = {}
        for name, key in (("pagedown", "pagedown"), ("end", "end")):
            walls, _ = await per_key(key, 1)
            jumps[name] = walls[0] * 1000
        await pilot.press("2")
        await pilot.pause()
        started_goto = time.perf_counter()
        app.explorer.goto_address(app.section.function(len(app.section) * 7 // 8).start_address + 2)
        await pilot.pause()
        jumps["go to address (chunk not yet opened in the tree)"] = (time.perf_counter() - started_goto) * 1000
        sort_walls, sort_cpus = [], []
        for digit in "123":  # by start, by end, by size: each a sort of every function, timed from its key
            await pilot.press("S")  # the picker: which column
            await pilot.pause()
            walls, cpus = await per_key(digit, 1)
            sort_walls += walls
            sort_cpus += cpus
        reverse_walls, reverse_cpus = await per_key("R", 1)
        filter_bar = await _filter_bar_keys(app, pilot, per_key, max(keys // 4, 10))
        panes = await _pane_keys(app, pilot, per_key, keys)
    return {
        "fdes": app.section.num_fdes,
        "fres": app.section.num_fres,
        "import_s": imported - started,
        "first_paint_s": painted[0] - started,
        "overview_ready_s": overview_ready - started,
        "settled_s": settled - started,
        "idle_key": {"wall": _stats(idle_walls), "cpu": _stats(idle_cpus)},
        "down_key": {"wall": _stats(down_walls), "cpu": _stats(down_cpus)},
        "jumps_ms": jumps,
        "structure_first_open": first_open,
        "tree_nodes_on_first_open": tree_nodes,
        "sort_key": {"wall": _stats(sort_walls + reverse_walls), "cpu": _stats(sort_cpus + reverse_cpus)},
        **filter_bar,
        **panes,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


async def _first_open(app, pilot) -> dict[str, float]:
    """The Structure tab's first open: `2` posted → the frame that draws the selected FDE's line in the tree
    (wall), and the CPU spent until then. Not `press` + `pause`, which wait for the tab's underline to stop
    sliding and for the process to idle (see the module's docstring)."""
    from sfview.app.widgets.structure_tree import StructureTree

    wanted = f"fdes[{app.explorer.state.selected.fde}]  0x"
    drawn: list[float] = []
    render_line = StructureTree.render_line

    def watched(tree: StructureTree, y: int) -> Strip:
        strip = render_line(tree, y)
        if not drawn and wanted in strip.text:
            drawn.append(time.perf_counter())
        return strip

    StructureTree.render_line = watched  # type: ignore[method-assign]  # notes the frame that shows it
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        pressed = asyncio.ensure_future(pilot.press("2"))
        while not drawn:
            if time.perf_counter() - wall > POLL_TIMEOUT_S:
                raise SystemExit(f"timed out waiting for the tree to show {wanted!r}")
            await asyncio.sleep(POLL_PAUSE_S)
        cpu = time.process_time() - cpu
        await pressed
        await pilot.pause()
    finally:
        StructureTree.render_line = render_line  # type: ignore[method-assign]
    return {"drawn_ms": (drawn[0] - wall) * 1000, "cpu_ms": cpu * 1000}


def _nodes(node) -> int:
    """Nodes of the tree from `node` down, `node` included: what opening it built."""
    return 1 + sum(_nodes(child) for child in node.children)


FILTER = "f3999"
"""The filter typed a key at a time: a name (40,000 functions: 11 of them keep it; a million: none, 9 names)."""
FILTER_BAR_KEYS = (
    ("open_filter", "opening the filter bar (/)"),
    ("filter_key", f"typing a filter ({FILTER})"),
    ("enter_filter", "enter in the filter"),
    ("clear_filter", "escape in the filter (clears)"),
    ("sort_filtered_key", "sort (S) with the filter kept"),
    ("clear_kept_filter", "escape in the table (clears)"),
)
"""The filter bar's moves, each timed alone (`_filter_bar_keys`), headless and in tmux."""


async def _filter_bar_keys(app, pilot, per_key, count: int) -> dict[str, object]:
    """Each move of the filter bar, `count` times at least, the keys that lead to it not timed: in turns, `/`
    and a name typed a key at a time, then `escape` while typing it (the footer's letters' keys come back, and
    every row), or `enter` on it, `S` on the rows it kept and `escape` in the table."""
    samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _ in FILTER_BAR_KEYS}

    async def timed(name: str, key: str) -> None:
        walls, cpus = await per_key(key, 1)
        samples[name][0].extend(walls)
        samples[name][1].extend(cpus)

    table = app.explorer.fde_table
    for cycle in range(2 * count):
        await timed("open_filter", "slash")
        for key in FILTER:
            await timed("filter_key", key)
        assert table.row_count < len(app.section), "the filter keeps some of the functions"
        if cycle % 2:
            await timed("clear_filter", "escape")
        else:
            await timed("enter_filter", "enter")
            await pilot.press("S")  # the picker; the column's key is timed
            await pilot.pause()
            await timed("sort_filtered_key", "31"[cycle // 2 % 2])
            assert table.filtered, "the sort kept the filter"
            await timed("clear_kept_filter", "escape")
        assert not table.filtered and table.row_count == len(app.section)
    return {name: {"wall": _stats(walls), "cpu": _stats(cpus)} for name, (walls, cpus) in samples.items()}


PANE_KEYS = (
    ("fre_key", "down in the FRE table"),
    ("code_next_key", "n with the instructions shown"),
    ("code_key", "down in the instructions"),
    ("hex_key", "down in the hex pane"),
    ("frame_key", "right in the frame picture"),
    ("tree_key", "down in the tree"),
)
"""Each pane's key, measured headless (`_pane_keys`)."""


async def _pane_keys(app, pilot, per_key, keys: int) -> dict[str, object]:
    """Each pane's own key, pressed `keys // 2` times; and the disassembly alone, per function changed to."""
    from sfview.code.disasm import listing

    figures: dict[str, object] = {}
    explorer = app.explorer

    async def measure(name: str, setup: tuple[str, ...], key: str) -> None:
        await pilot.press(*setup)
        await pilot.pause()
        walls, cpus = await per_key(key, keys // 2)
        figures[name] = {"wall": _stats(walls), "cpu": _stats(cpus)}

    await pilot.press("home")
    await measure("fre_key", ("1", "tab"), "down")
    explorer.fde_table.focus()
    await measure("code_next_key", ("i",), "n")
    await measure("code_key", ("i", "i"), "down")  # focus on the instructions of the function reached
    await measure("hex_key", ("i", "x"), "down")
    await measure("frame_key", ("f",), "right")
    await measure("tree_key", ("2", "tab"), "down")
    section, doc = app.section, explorer.doc
    step = max(len(section) // (keys * 4), 1)
    functions = [section.function(i) for i in range(0, len(section), step)][: keys * 4]
    costs = []
    for func in functions:
        started = time.perf_counter()
        listing(doc, func)
        costs.append(time.perf_counter() - started)
    figures["disassembly_per_function"] = {"wall": _stats(costs), "cpu": _stats(costs)}
    return figures


# ---------------------------------------------------------------- tmux


OWN_COSTS: dict[str, list[float]] = {"send-keys": [], "capture-pane": []}
"""How long each `send-keys` and `capture-pane` took, sent and answered over the control client: the bench's own
share of every tmux figure (a key's figure starts before its `send-keys` is sent, and ends when a `capture-pane`
asked for after the pane wrote returns)."""

CLIENT: list[Control] = []
"""The control client attached to the session while it lives (`_start`, `_kill`)."""


def _tmux(*args: str) -> str:
    """A tmux command: over the control client while one is attached, else by a `tmux` process."""
    started = time.perf_counter()
    if CLIENT and args[0] != "kill-session":
        out = CLIENT[0].command(*args)
    else:
        out = subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout
    if args[0] in OWN_COSTS:
        OWN_COSTS[args[0]].append(time.perf_counter() - started)
    return out


def _kill() -> None:
    """The session ended, and the app with it; its control client detached first."""
    if CLIENT:
        CLIENT.pop().close()
    _tmux("kill-session", "-t", SESSION)


def _screen() -> list[str]:
    return _tmux("capture-pane", "-p", "-t", SESSION).rstrip("\n").split("\n")


def _status_line() -> str:
    """The line above the footer."""
    lines = _screen()
    return lines[-2] if len(lines) >= 2 else ""


def _wait_for(predicate: Callable[[], bool], what: str) -> float:
    """Look at the screen until `predicate` holds, again each time the pane writes (or after `LOOK_AGAIN_S`
    without a write); the time it took."""
    started = time.perf_counter()
    output = CLIENT[0].output
    while True:
        output.clear()  # a write while `predicate` reads the screen is looked at again
        if predicate():
            return time.perf_counter() - started
        if time.perf_counter() - started > POLL_TIMEOUT_S:
            raise SystemExit(f"timed out waiting for {what}; the screen shows:\n" + "\n".join(_screen()))
        output.wait(LOOK_AGAIN_S)


def _peak_rss_mb(pid: int) -> float:
    """VmHWM of `pid`, or of its first child when the pane's process is a shell that forked."""
    status = Path(f"/proc/{pid}/status").read_text()
    if "python" not in Path(f"/proc/{pid}/comm").read_text():
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return _peak_rss_mb(int(children[0]))
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(kib) / 1024


def _typing_in_the_symbol_dialog(binary: Path, text: str) -> list[float]:
    """Open go-to-symbol (`s`), type `text` a key at a time: per key, until the dialog shows the text typed and
    the matches for it (not any change: a frame drawing the letter before its matches must not count)."""
    from sfview.app.screens.goto import SYMBOLS_SHOWN
    from sfview.document import Document
    from sfview.inputs.demangle import demangle
    from sfview.inputs.symbols import SymbolSearch

    search = SymbolSearch(Document.open(str(binary)).symbols)
    _tmux("send-keys", "-t", SESSION, "s")
    _wait_for(lambda: any("Go to symbol" in line for line in _screen()), "the symbol dialog")
    time.sleep(0.1)  # a person reads the dialog before typing (its list is laid out again a frame after it shows)
    samples = []
    for typed in range(1, len(text) + 1):
        found, _ = search.find(text[:typed], SYMBOLS_SHOWN)
        names = [demangle(symbol.name) for symbol in found]
        sent = time.perf_counter()
        _tmux("send-keys", "-t", SESSION, "-l", text[typed - 1])
        line = text[:typed]
        _wait_for(lambda line=line, names=names: _matches_shown(_screen(), line, names), f"matches for {line!r}")
        samples.append(time.perf_counter() - sent)
        time.sleep(0.05)
    _tmux("send-keys", "-t", SESSION, "Escape")
    return samples


def _matches_shown(screen: list[str], text: str, names: list[str]) -> bool:
    """The symbol dialog's line holds `text` and its list the first of `names`, in order (or says none match)."""
    if not any(re.search(rf"▊  {re.escape(text)} +▎", line) for line in screen):
        return False
    listed = [match.group(1) for line in screen if (match := re.search(r"▊ (.+?)  0x[0-9a-f]+  \d+ bytes", line))]
    if not names:
        return not listed and any("no match" in line for line in screen)
    return bool(listed) and listed == names[: len(listed)]


def _filter_hint_shown(screen: list[str]) -> bool:
    """The filter line, always above the FDE table, shows what it takes: it holds no filter."""
    from sfview.app.explorer.screen import FILTER_HINT

    return any(line.startswith(f" filter {FILTER_HINT[:40]}") for line in screen)


def _letters_in_the_footer(screen: list[str]) -> bool:
    """The footer shows the letters' keys (`q Quit`): the filter line does not have the focus."""
    return bool(screen) and "q Quit" in screen[-1]


def _filtered(screen: list[str]) -> bool:
    """The header counts the functions the filter shows (`11 of 40003 FDEs shown`)."""
    return any("FDEs shown" in line for line in screen[:3])


def _filter_bar_in_tmux(count: int) -> dict[str, list[float]]:
    """The filter bar's moves as `_filter_bar_keys` makes them, each from the key sent until the screen shows
    all it changes: the bar, the footer's keys, the header's count, the line typed, the status line."""
    samples: dict[str, list[float]] = {name: [] for name, _ in FILTER_BAR_KEYS}
    _wait_for(lambda: not any("Go to symbol" in line for line in _screen()), "the symbol dialog to close")
    time.sleep(0.3)

    def timed(name: str, key: str, shown: Callable[[list[str]], bool]) -> None:
        sent = time.perf_counter()
        _tmux("send-keys", "-t", SESSION, *(("-l", key) if len(key) == 1 else (key,)))
        _wait_for(lambda: shown(_screen()), f"{name} ({key})")
        samples[name].append(time.perf_counter() - sent)
        time.sleep(0.05)  # one key at a time, as a person presses them

    for cycle in range(2 * count):
        timed("open_filter", "/", lambda sc: not _letters_in_the_footer(sc))
        for typed in range(1, len(FILTER) + 1):
            line = f" filter {FILTER[:typed]}"
            timed(
                "filter_key",
                FILTER[typed - 1],
                lambda sc, line=line: _filtered(sc) and any(ln.rstrip() == line for ln in sc),
            )
        if cycle % 2:
            cleared = lambda sc: _filter_hint_shown(sc) and _letters_in_the_footer(sc) and not _filtered(sc)  # noqa: E731
            timed("clear_filter", "Escape", cleared)
        else:
            timed("enter_filter", "Enter", _letters_in_the_footer)
            before = _status_line()
            _tmux("send-keys", "-t", SESSION, "-l", "S")  # the picker; the column's key is timed
            _wait_for(lambda: any("Sort the functions by" in line for line in _screen()), "the sort picker")
            digit = "31"[cycle // 2 % 2]
            timed("sort_filtered_key", digit, lambda sc, before=before: "functions by" in sc[-2] and sc[-2] != before)
            cleared = lambda sc: _filter_hint_shown(sc) and not _filtered(sc)  # noqa: E731
            timed("clear_kept_filter", "Escape", cleared)
    return samples


def _moves(key: str, count: int, expect: Callable[[int, str, str], bool]) -> list[float]:
    """`key` sent `count` times, a person's pace apart: each until `expect(n, status before, status now)`."""
    samples = []
    for n in range(1, count + 1):
        before = _status_line()
        sent = time.perf_counter()
        _tmux("send-keys", "-t", SESSION, key)
        _wait_for(lambda n=n, before=before: expect(n, before, _status_line()), f"{key} #{n}")
        samples.append(time.perf_counter() - sent)
        time.sleep(0.03)  # one key at a time, as a person presses them
    return samples


def _start(binary: Path, size: tuple[int, int]) -> tuple[float, float]:
    """`python -m sfview BINARY` in a fresh detached session: times to its first screen and to the overview."""
    env = child_env()
    command = shlex.join(["env", f"PYTHONPATH={env['PYTHONPATH']}", *sfview_argv(str(binary))])
    _kill()
    started = time.perf_counter()
    _tmux("new-session", "-d", "-s", SESSION, "-x", str(size[0]), "-y", str(size[1]), command)
    CLIENT.append(Control(SESSION))
    shown = _tmux("display-message", "-p", "-t", SESSION, "#{window_width}x#{window_height}").strip()
    if shown != f"{size[0]}x{size[1]}":
        raise SystemExit(f"the session is {shown}, not {size[0]}x{size[1]}")
    _wait_for(lambda: "fdes[0] at" in _status_line() and any(" 0x" in line for line in _screen()), "first screen")
    first_screen = time.perf_counter() - started
    _wait_for(lambda: not any("working…" in line for line in _screen()), "the overview")
    return first_screen, time.perf_counter() - started


def _first_opens(binary: Path, keys: int, size: tuple[int, int], opens: int) -> list[float]:
    """The Structure tab's first open in `opens` fresh processes, each after `keys` moves down the FDE table
    begun half a second after the overview: `2` sent → the tree showing the selected FDE's line."""
    samples = []
    for _ in range(opens):
        try:
            _start(binary, size)
            time.sleep(0.5)
            _moves("Down", keys, lambda n, before, now: f"fdes[{n}] at" in now)
            time.sleep(BEFORE_THE_TREE_S)
            wanted = f"fdes[{keys}]  0x"
            sent = time.perf_counter()
            _tmux("send-keys", "-t", SESSION, "2")
            _wait_for(lambda wanted=wanted: any(wanted in line for line in _screen()), "the structure tab")
            samples.append(time.perf_counter() - sent)
        finally:
            _kill()
    return samples


def _in_tmux(binary: Path, keys: int, size: tuple[int, int], opens: int) -> dict[str, object]:
    try:
        first_screen, overview_ready = _start(binary, size)
        time.sleep(0.5)  # let it settle (symbol table, idle work) before timing keys
        fde = _moves("Down", keys, lambda n, before, now: f"fdes[{n}] at" in now)
        checked = any("(4: list)" in line for line in _screen())
        _tmux("send-keys", "-t", SESSION, "i")  # the instructions in place of the rows
        time.sleep(0.3)
        code_next = _moves("n", keys // 2, lambda n, before, now: f"fdes[{keys + n}] at" in now)
        _tmux("send-keys", "-t", SESSION, "i")
        time.sleep(0.3)
        _tmux("send-keys", "-t", SESSION, "x")
        time.sleep(0.3)
        hex_moves = _moves("Down", keys // 2, lambda n, before, now: now != before)
        _tmux("send-keys", "-t", SESSION, "2")  # the tree's FDE nodes, to the selected one
        _wait_for(lambda: any("─ ▼ fdes[" in ln or "─ ▶ fdes[" in ln for ln in _screen()), "the structure tab")
        time.sleep(0.5)
        tree = _moves("Down", keys // 2, lambda n, before, now: now != before)
        symbol_keys = _typing_in_the_symbol_dialog(binary, FILTER)
        filter_bar = _filter_bar_in_tmux(max(keys // 4, 10))
        pid = int(_tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip())
        peak = _peak_rss_mb(pid)
    finally:
        _kill()
    return {
        "first_screen_s": first_screen,
        "overview_ready_s": overview_ready,
        "fde_table_key": _stats(fde),
        "checks_done_after_fde_keys": checked,
        "code_next_key": _stats(code_next),
        "hex_pane_key": _stats(hex_moves),
        "structure_first_open": _stats(_first_opens(binary, keys, size, opens)),
        "tree_key": _stats(tree),
        "symbol_dialog_key": _stats(symbol_keys),
        **{name: _stats(samples) for name, samples in filter_bar.items()},
        "peak_rss_mb": peak,
        "send_keys": _stats(OWN_COSTS["send-keys"]),
        "capture_pane": _stats(OWN_COSTS["capture-pane"]),
    }


# ---------------------------------------------------------------- report


def print_report(figures: dict[str, object]) -> None:
    print(f"binary: {figures['binary']} ({figures['fdes']} FDEs, {figures['fres']} FREs), terminal {figures['size']}")
    head = figures["headless"]
    assert isinstance(head, dict)
    print("\nheadless (App.run_test, in this process)")
    print(f"  import sfview.app           {head['import_s']:7.3f} s")
    print(f"  start to first paint        {head['first_paint_s']:7.3f} s   (import, open, parse, mount, FDE table)")
    print(f"  start to overview ready     {head['overview_ready_s']:7.3f} s   (every function gone through)")
    print(f"  start to settled            {head['settled_s']:7.3f} s   (and idle: names, checks, sort orders)")
    keys = (
        ("idle_key", "key bound to nothing"),
        ("down_key", "down in the FDE table"),
        ("sort_key", "sort (S, R), every FDE"),
        *FILTER_BAR_KEYS,
        *PANE_KEYS,
        ("disassembly_per_function", "disassembly alone, a function"),
    )
    for name, label in keys:
        wall, cpu = head[name]["wall"], head[name]["cpu"]
        print(
            f"  {label:30}  wall {wall['median_ms']:5.1f} ms median, {wall['p90_ms']:5.1f} p90, {wall['max_ms']:5.1f}"
            f" max;  cpu {cpu['median_ms']:5.1f} ms median, {cpu['p90_ms']:5.1f} p90"
        )
    for name, ms in head["jumps_ms"].items():
        print(f"  {name:26}  wall {ms:5.1f} ms")
    first = head["structure_first_open"]
    print(
        f"  structure tab, first open   {first['drawn_ms']:7.1f} ms  wall, {first['cpu_ms']:5.1f} ms cpu"
        "  (key posted → the selected FDE's line drawn)"
    )
    print(f"  tree nodes, first open      {head['tree_nodes_on_first_open']:7d}     (of {figures['fdes']} FDEs)")
    print(f"  peak RSS (this process)     {head['peak_rss_mb']:7.1f} MB")
    real = figures.get("tmux")
    if isinstance(real, dict):
        print("\nreal process in tmux (key sent → the screen shows the move, read each time the pane writes)")
        print(f"  spawn to first screen       {real['first_screen_s']:7.3f} s")
        print(f"  spawn to overview ready     {real['overview_ready_s']:7.3f} s   (the header's working… gone)")
        rows = (
            ("structure_first_open", "structure tab, first open"),
            ("fde_table_key", "down in the FDE table"),
            ("code_next_key", "n, instructions shown"),
            ("hex_pane_key", "down in the hex pane"),
            ("tree_key", "down in the tree"),
            ("symbol_dialog_key", "typing in go-to-symbol"),
            *FILTER_BAR_KEYS,
        )
        for name, label in rows:
            ms = real[name]
            print(f"  {label:26}  {ms['median_ms']:5.1f} ms median, {ms['p90_ms']:5.1f} p90, {ms['max_ms']:5.1f} max")
            if name == "structure_first_open":
                print(f"  {'':26}  (fresh processes, {figures['opens']}: key sent → the selected FDE's line shown)")
            if name == "fde_table_key":
                print(
                    f"  {'':26}  (at the last move, the checks "
                    f"{'were done' if real['checks_done_after_fde_keys'] else 'still ran, or had found nothing'})"
                )
        print(f"  peak RSS (VmHWM)            {real['peak_rss_mb']:7.1f} MB")
        send, capture = real["send_keys"], real["capture_pane"]
        print(
            f"  the bench's own, in each figure above (over tmux's control connection): `send-keys`"
            f" {send['median_ms']:.2f} ms median ({send['p90_ms']:.2f} p90), `capture-pane` {capture['median_ms']:.2f}"
            f" ms ({capture['p90_ms']:.2f}), one each time the pane writes"
        )
    elif real is not None:
        print(f"\nreal process in tmux: {real}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, help="default: build/reuse bench/build/big-N")
    parser.add_argument("--functions", type=int, default=make_big.DEFAULT_FUNCTIONS)
    parser.add_argument("--keys", type=int, default=40, help="keys pressed per measurement (default 40)")
    parser.add_argument("--opens", type=int, default=3, help="fresh processes for the tree's first open (tmux)")
    parser.add_argument("--size", default="120x40", help="terminal size, WxH (default 120x40)")
    parser.add_argument("--no-tmux", action="store_true", help="only the headless figures")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    width, height = (int(n) for n in args.size.lower().split("x"))
    binary = big_binary(args.binary, functions=args.functions)
    figures: dict[str, object] = {"binary": str(binary), "size": f"{width}x{height}", "opens": args.opens}
    headless = asyncio.run(_headless(binary, args.keys, (width, height)))
    figures["fdes"], figures["fres"] = headless.pop("fdes"), headless.pop("fres")
    figures["headless"] = headless
    if not args.no_tmux:
        found = shutil.which("tmux")
        figures["tmux"] = _in_tmux(binary, args.keys, (width, height), args.opens) if found else "tmux not found"
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_report(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
