#!/usr/bin/env python3
"""The explorer's first screen beside a bare Textual app's and `python -c pass`, in one run.

Why: the goal is sfview's first screen within 0.2 s of a bare Textual app's
first screen, at 40,000 and at 1,000,000 functions: what sfview adds to
starting Python and Textual must stay small, whatever the section's size.
Each figure is from spawning the program in a fresh detached tmux session
until the screen shows what the person waits for: the bare app's one line
(`minimal_app.py`, a `Static` in a Textual `App`), sfview's FDE table and the
status line naming `fdes[0]` (as `bench_app.py` times it); the screen is read
over a tmux control-mode client each time the pane writes (`tmux_control.py`).
`python -c pass` is spawned directly: the floor under both. The runs are
interleaved, so that a busy moment of the machine hits every program alike;
each figure is the median (and the 90th percentile) of `--repeat` runs after
one warm-up run each (the bytecode cache written, the files in the page
cache).

Usage: python bench/bench_first_screen.py [--repeat N] [--size WxH]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import make_big
import make_million
from _common import REPO_ROOT, child_env, sfview_argv
from tmux_control import Control, ControlError

SESSION = "sfview-bench-first-screen"
KEEPER = "sfview-bench-first-screen-keeper"
TIMEOUT_S = 60.0
LOOK_AGAIN_S = 0.05
"""How long to wait for the pane to write before the screen is read again anyway."""
MINIMAL_APP = Path(__file__).with_name("minimal_app.py")


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


def _in_tmux(argv: list[str], shown: Callable[[list[str]], bool], size: tuple[int, int]) -> float:
    """Seconds from spawning `argv` in a fresh session until `shown(screen lines)` holds."""
    env = child_env()
    command = shlex.join(["env", f"PYTHONPATH={env['PYTHONPATH']}", *argv])
    _tmux("kill-session", "-t", SESSION)
    started = time.perf_counter()
    _tmux("new-session", "-d", "-s", SESSION, "-x", str(size[0]), "-y", str(size[1]), command)
    client = Control(SESSION)
    try:
        while True:
            client.output.clear()  # a write while the screen is read is looked at again
            screen = client.command("capture-pane", "-p", "-t", SESSION).rstrip("\n").split("\n")
            if shown(screen):
                return time.perf_counter() - started
            if time.perf_counter() - started > TIMEOUT_S:
                raise SystemExit(f"timed out waiting for {shlex.join(argv)}; the screen shows:\n" + "\n".join(screen))
            client.output.wait(LOOK_AGAIN_S)
    finally:
        client.close()
        _tmux("kill-session", "-t", SESSION)


def _python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=child_env())
    return time.perf_counter() - started


def _sfview_shown(screen: list[str]) -> bool:
    """The FDE table and the status line naming the first function: what `bench_app.py` waits for."""
    return len(screen) >= 2 and "fdes[0] at" in screen[-2] and any(" 0x" in line for line in screen)


def _bare_shown(screen: list[str]) -> bool:
    from minimal_app import SHOWN

    return any(SHOWN in line for line in screen)


RETRIES: list[str] = []
"""The runs made again because tmux's control client went unanswered (said with the figures)."""


def _measured(name: str, run: Callable[[], float]) -> float:
    """One run of `name`, made again (twice at most) when tmux's control client goes unanswered: on a loaded
    machine its attach to a session just made sometimes hears nothing back."""
    for attempt in range(3):
        try:
            return run()
        except ControlError as exc:
            RETRIES.append(name)
            if attempt == 2:
                raise SystemExit(f"{name}: {exc}") from None
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", default="120x40", help="the terminal's size, WxH")
    args = parser.parse_args(argv)
    size = tuple(int(n) for n in args.size.split("x"))
    assert len(size) == 2
    if subprocess.run(["tmux", "-V"], capture_output=True, check=False).returncode != 0:
        raise SystemExit("tmux is needed (Debian package tmux)")
    big, million = make_big.build(verbose=False), make_million.build()
    programs: dict[str, Callable[[], float]] = {
        "python -c pass": _python_pass,
        "bare Textual app, first screen": lambda: _in_tmux([sys.executable, str(MINIMAL_APP)], _bare_shown, size),
        "sfview, 40,003 functions": lambda: _in_tmux(sfview_argv(str(big)), _sfview_shown, size),
        "sfview, 1,000,075 functions": lambda: _in_tmux(sfview_argv(str(million)), _sfview_shown, size),
    }
    times: dict[str, list[float]] = {name: [] for name in programs}
    # A session of its own keeps the tmux server up between the runs: the server of a session killed alone
    # goes with it, and a control client attached to the next one, started with a new server, went unanswered.
    _tmux("new-session", "-d", "-s", KEEPER, "sleep 86400")
    try:
        for name, run in programs.items():
            _measured(name, run)  # warm-up: bytecode cached, files in the page cache
        for _ in range(args.repeat):
            for name, run in programs.items():
                times[name].append(_measured(name, run))
    finally:
        _tmux("kill-session", "-t", KEEPER)
    print(f"first screen, {args.size} in tmux, median (90th percentile) of {args.repeat} interleaved runs:")
    bare = statistics.median(times["bare Textual app, first screen"])
    for name, samples in times.items():
        median = statistics.median(samples)
        p90 = sorted(samples)[min(len(samples) - 1, int(len(samples) * 0.9))]
        beyond = f"   {median - bare:+.3f} s beside the bare Textual app" if name.startswith("sfview") else ""
        print(f"  {name:<32} {median:6.3f} s ({p90:.3f}){beyond}")
    print(f"goal: sfview within 0.2 s of the bare Textual app ({REPO_ROOT.name})")
    if RETRIES:
        print(f"made again, tmux's control client unanswered: {', '.join(RETRIES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
