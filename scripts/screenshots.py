#!/usr/bin/env python3
"""Make the SVG screenshots in `screenshots/` from the test fixtures.

Why a script: the screenshots show the explorer as it is, so they are made
by driving the real app (headless, `App.run_test`) and regenerated whenever
it changes, never drawn by hand.

Usage: python scripts/screenshots.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sfview.app.app import SfviewApp  # noqa: E402 - after making the checkout importable
from sfview.document import Document  # noqa: E402
from sfview.inputs.core import read_core  # noqa: E402
from sfview.sframe.model.section import Section  # noqa: E402
from sfview.unwind import session  # noqa: E402

SHAPES = "tests/data/shapes-x86_64-O2"
AARCH64 = "tests/data/shapes-aarch64-O2"
DEEP = "tests/data/deep-x86_64"

Steps = Callable[[SfviewApp, object], Awaitable[None]]


@dataclass
class Shot:
    """One screenshot: which input, which terminal size, what to press (or do) first."""

    name: str
    title: str
    path: str = SHAPES
    size: tuple[int, int] = (120, 36)
    keys: list[str] = field(default_factory=list)
    steps: Steps | None = None
    core: str | None = None
    """A core of the program: the shot opens the unwinding debugger on it."""


async def _info_byte(app: SfviewApp, pilot: object) -> None:
    app.explorer.goto_offset(0x3D)  # FDE 1's info byte: the PLT, a PCMASK function


async def _aarch64_row(app: SfviewApp, pilot: object) -> None:
    row = app.section.function(2).rows[1]  # medium_frame once its frame is set up: RA saved at c-312
    start_addr = app.explorer.fields.field_at(row.span.start)
    app.explorer.goto_offset(next(c for c in start_addr.parent.children() if c.name == "info").span.start)


async def _instructions(app: SfviewApp, pilot: object) -> None:
    """small_leaf of the -O0 build: push %rbp makes CFA sp+16, mov %rsp,%rbp makes it fp+16; DWARF beside."""
    await pilot.press("n", "n", "i", "d")  # type: ignore[attr-defined]
    await app.workers.wait_for_complete()  # DWARF CFI is read in a worker
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.press("down", "down")  # type: ignore[attr-defined]


BROKEN = "broken.sframe"
"""A damaged copy of the x86-64 section the script writes for the problems shot (the file name it shows)."""


def _write_broken() -> None:
    """Two FDEs swapped under FDE_SORTED, one row with offset size 3: what the Problems tab is for."""
    data = bytearray(Path(f"{SHAPES}.sframe").read_bytes())
    section = Section(bytes(data))
    a, b = section.function(3).span, section.function(4).span
    data[a.start : a.end], data[b.start : b.end] = data[b.start : b.end], data[a.start : a.end]
    info = section.function(5).rows[1].span.start + 1  # the row's info byte, after its 1-byte start address
    data[info] |= 0x60  # offset size 3: no version defines it
    Path(BROKEN).write_bytes(bytes(data))


SHOTS = [
    Shot("explorer", "sfview: functions, rows and bytes", keys=["down", "down", "tab", "down"]),
    Shot("explorer-80x24", "sfview at 80x24", size=(80, 24), keys=["down", "down"]),
    Shot("explorer-wide", "sfview on a wide terminal", size=(200, 50), keys=["n", "n", "n", "n", "n"]),
    Shot("field-detail", "sfview: an info byte, bit by bit", size=(120, 45), keys=["2"], steps=_info_byte),
    Shot(
        "fre-info-aarch64",
        "sfview: an AArch64 row's info byte",
        path=AARCH64,
        size=(120, 45),
        keys=["2"],
        steps=_aarch64_row,
    ),
    Shot("goto-address", "sfview: go to address", size=(100, 30), keys=["g", *"1035"]),
    Shot(
        "goto-address-result",
        "sfview: the row an unwinder uses at 0x1035",
        size=(100, 30),
        keys=["g", *"1035", "enter"],
    ),
    Shot("goto-symbol", "sfview: go to symbol", size=(100, 30), keys=["s", *"frame"]),
    Shot("help", "sfview: help", size=(110, 45), keys=["question_mark"]),
    Shot(
        "sorted-by-frame",
        "sfview: AArch64 functions, largest frame first",
        path=AARCH64,
        size=(120, 36),
        keys=["S", "6", "R", "home"],
    ),
    Shot("filtered", "sfview: the functions a filter keeps", size=(120, 30), keys=["slash", *"frame", "enter"]),
    Shot(
        "frame-picture",
        "sfview: a row's stack frame, drawn to scale",
        path="tests/data/shapes-x86_64-O0-fp",
        size=(120, 40),
        keys=["n", "n", "tab", "down", "f"],
    ),
    Shot("problems", "sfview: what a check of the section found", path=BROKEN, keys=["4", "down", "enter"]),
    Shot(
        "instructions",
        "sfview: each instruction on its row, what each row changed, DWARF beside",
        path="tests/data/shapes-x86_64-O0-fp",
        size=(120, 36),
        steps=_instructions,
    ),
    Shot(
        "debugger",
        "sfview: unwinding a core, frame by frame",
        path=DEEP,
        core=f"{DEEP}.core",
        size=(130, 36),
        keys=["space", "space"],
    ),
    Shot(
        "debugger-frame",
        "sfview: the step pane follows the backtrace's cursor",
        path=DEEP,
        core=f"{DEEP}.core",
        size=(130, 36),
        keys=["space", "space", "space", "space", "up", "up"],
    ),
]


async def take(shot: Shot, out: Path) -> Path:
    """Run the app headless, do the shot's steps and keys, save the screen as SVG."""
    started = session.from_core(shot.path, read_core(shot.core), None, [], None) if shot.core else None
    app = SfviewApp(Document.open(shot.path), started)
    async with app.run_test(size=shot.size) as pilot:
        await pilot.pause()
        while app.explorer.section is not None and app.explorer.summary.problems is None:
            await pilot.pause(0.02)  # the check the explorer runs in a worker as a section opens
        if shot.steps is not None:
            await shot.steps(app, pilot)
            await pilot.pause()
        if shot.keys:
            await pilot.press(*shot.keys)
        await pilot.pause()
        app.title = shot.title
        app.save_screenshot(filename=f"{shot.name}.svg", path=str(out))
    return out / f"{shot.name}.svg"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots", help="where to write (default screenshots/)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)  # fixture paths as the summary shows them: relative, the same on every machine
    _write_broken()
    try:
        for shot in SHOTS:
            print(asyncio.run(take(shot, out)).relative_to(ROOT) if out.is_relative_to(ROOT) else out / shot.name)
    finally:
        Path(BROKEN).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
