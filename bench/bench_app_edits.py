#!/usr/bin/env python3
"""The app's memory and time per edit on a huge section: an edit, its undo and redo, in a real terminal.

Why: each edit (`e`), undo (`ctrl+z`) and redo (`ctrl+y`) opens a new explorer
on the edited bytes, decoded afresh; the one it replaces must be let go, or
every edit adds a whole section's model to the app. The app runs in a detached
tmux session as a person runs it; after each key the bench waits until the
screen and the process's CPU time have not changed for `IDLE_S` (not counted),
and reads the process's RSS from /proc. Beside it, the same app on a tiny
section: the app's constant, for the bound "10x the file + the constant".

Usage: python bench/bench_app_edits.py [--binary PATH] [--cycles N] [--size WxH]
(default: the 1,000,075-function file of `make_million.py`).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

import make_million
from _common import REPO_ROOT, child_env, sfview_argv

SESSION = "sfview-bench-edits"
IDLE_S = 0.5
"""How long the screen and the CPU time must stay the same for the app to be idle."""
TIMEOUT_S = 300.0
TINY = REPO_ROOT / "tests" / "data" / "shapes-x86_64-O2"
EDIT = ("x", *["Right"] * 8, "e", "9", "Enter")
"""The hex pane, its ninth byte, set to 9: a byte of the first FDE's start address."""
BETWEEN_KEYS_S = 0.3
"""A person's pace: `e` opens a dialog, and a key sent before it is shown goes to the explorer."""


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def _app_pid() -> int:
    """The app's process: the pane's, or its child when a shell forked it."""
    pid = int(_tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip())
    if "python" not in Path(f"/proc/{pid}/comm").read_text():
        pid = int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
    return pid


def _status() -> str:
    """The line above the footer: what the last key did (`edited byte 0x8 ...`, `undone: ...`)."""
    lines = _tmux("capture-pane", "-p", "-t", SESSION).rstrip("\n").split("\n")
    return lines[-2].strip() if len(lines) >= 2 else ""


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks (100 a second on Linux)


def _rss_mb(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM, in MB."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def _idle(pid: int, started: float) -> float:
    """Seconds from `started` until the screen and the CPU time stop changing for `IDLE_S` (not counted)."""
    last = (_tmux("capture-pane", "-p", "-t", SESSION), _cpu_s(pid))
    still_since = time.perf_counter()
    while time.perf_counter() - started < TIMEOUT_S:
        time.sleep(0.1)
        now = (_tmux("capture-pane", "-p", "-t", SESSION), _cpu_s(pid))
        if now != last:
            last, still_since = now, time.perf_counter()
        elif time.perf_counter() - still_since >= IDLE_S:
            return still_since - started
    raise SystemExit("the app never went idle; the screen shows:\n" + last[0])


def _keys(pid: int, keys: tuple[str, ...], said: str) -> tuple[float, float]:
    """Send `keys`, a person's pace apart; seconds from the last until the status line says `said` (the new
    explorer is shown), and until the app is idle."""
    for key in keys[:-1]:
        _tmux("send-keys", "-t", SESSION, key)
        time.sleep(BETWEEN_KEYS_S)
    _tmux("send-keys", "-t", SESSION, keys[-1])
    started = time.perf_counter()
    while said not in _status():
        if time.perf_counter() - started > TIMEOUT_S:
            raise SystemExit(f"{said!r} never shown; the status line: {_status()}")
        time.sleep(0.05)
    return time.perf_counter() - started, _idle(pid, started)


def run(binary: Path, cycles: int, size: tuple[int, int]) -> list[tuple[str, float, float, float, float, float]]:
    """Open `binary`, then an edit and `cycles` undo/redo pairs: (step, seconds until shown, seconds to idle,
    CPU seconds, RSS MB, peak RSS MB)."""
    env = child_env()
    command = shlex.join(["env", f"PYTHONPATH={env['PYTHONPATH']}", *sfview_argv(str(binary))])
    _tmux("kill-session", "-t", SESSION)
    started = time.perf_counter()
    _tmux("new-session", "-d", "-s", SESSION, "-x", str(size[0]), "-y", str(size[1]), command)
    time.sleep(0.2)
    pid = _app_pid()
    rows = []
    try:
        idle = _idle(pid, started)
        rows.append(("open", float("nan"), idle, _cpu_s(pid), *_rss_mb(pid)))
        steps = [("edit", EDIT, "edited")]
        for _ in range(cycles):
            steps += [("undo", ("C-z",), "undone"), ("redo", ("C-y",), "made again")]
        for name, keys, said in steps:
            cpu = _cpu_s(pid)
            shown, idle = _keys(pid, keys, said)
            rows.append((name, shown, idle, _cpu_s(pid) - cpu, *_rss_mb(pid)))
    finally:
        _tmux("kill-session", "-t", SESSION)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=Path)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--size", default="160x45")
    args = parser.parse_args()
    size = tuple(int(n) for n in args.size.split("x"))
    binary = args.binary.resolve() if args.binary else make_million.build()
    from sfview.document import Document

    section = Document.open(str(binary)).data
    tiny = run(TINY, 0, size)[0]
    print(f"the app's constant (on {TINY.name}): RSS {tiny[4]:.0f} MB, peak {tiny[5]:.0f} MB")
    print(f"{binary.name}: file {binary.stat().st_size / 1e6:.1f} MB, section {len(section) / 1e6:.1f} MB")
    print(f"bound: 10 x the file + the constant = {10 * binary.stat().st_size / 2**20 + tiny[4]:.0f} MB")
    for name, shown, idle, cpu, rss, peak in run(binary, args.cycles, size):
        times = f"shown {shown:5.1f} s, idle {idle:5.1f} s ({cpu:5.1f} s CPU)"
        print(f"{name:5} {times}  RSS {rss:4.0f} MB  peak {peak:4.0f} MB")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_ROOT))
    main()
