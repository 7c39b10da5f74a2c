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
import json
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
    base: int | None = None
    """The load address of a raw section."""


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


V3 = "shapes-v3.sframe"
"""binutils 2.47's section of shapes.c (version 3), from the kernel corpus, which the editing shots break."""


def _write_v3() -> int:
    """The version 3 section the editing shots open; its load address."""
    corpus = json.loads(Path("tests/data/consumers/kernel/corpus.json").read_text())["sections"]
    entry = next(e for e in corpus if e["name"] == "shapes-x86_64")
    Path(V3).write_bytes(bytes.fromhex(entry["section"]))
    return entry["address"]


async def _kernel_verdict(app: SfviewApp, pilot: object) -> None:
    """The kernel's verdict chosen (`v`), once its worker has judged the section."""
    await pilot.press("v")  # type: ignore[attr-defined]
    while "kernel" not in app.explorer.state.verdicts:
        await pilot.pause(0.05)  # type: ignore[attr-defined]


async def _edit_dialog(app: SfviewApp, pilot: object) -> None:
    """The kernel's verdict, then `e` on fdes[7]'s FRE offset in the Structure tab, `0x23` typed."""
    await _kernel_verdict(app, pilot)
    await pilot.press("o", *"98", "enter", "2", "e", *"23")  # type: ignore[attr-defined]


async def _edited(app: SfviewApp, pilot: object) -> None:
    """The same edit made: the kernel's verdict on the edited section, in the Problems tab."""
    await _edit_dialog(app, pilot)
    await pilot.press("enter")  # type: ignore[attr-defined]
    while "kernel" not in app.explorer.state.verdicts or app.explorer.summary.problems is None:
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    await pilot.press("4")  # type: ignore[attr-defined]


async def _minimap(app: SfviewApp, pilot: object) -> None:
    """`m`, then a few lines down the minimap: into the FDE array."""
    await pilot.press("m", "down", "down", "down", "down")  # type: ignore[attr-defined]


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
    Shot("edit-dialog", "sfview: e edits the field selected", path=V3, size=(120, 36), steps=_edit_dialog),
    Shot("edited", "sfview: the kernel refuses the edited section", path=V3, size=(120, 36), steps=_edited),
    Shot("minimap", "sfview: the minimap, and one colour per kind of field", size=(120, 36), steps=_minimap),
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
    app = SfviewApp(Document.open(shot.path, shot.base), started)
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
    address = _write_v3()
    try:
        for shot in SHOTS:
            if shot.path == V3:
                shot.base = address
            made = asyncio.run(take(shot, out))  # taken wherever `--out` is (then said relative to the checkout)
            print(made.relative_to(ROOT) if out.is_relative_to(ROOT) else made)
    finally:
        Path(BROKEN).unlink()
        Path(V3).unlink()
    print(browser_shot(out))
    return 0


def browser_shot(out: Path) -> Path | str:
    """`sfview serve` in Debian's headless chromium (Selenium), saved as PNG: the same app in a browser."""
    import shutil
    import socket
    import subprocess
    import time
    import urllib.request

    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        return "browser.png: not made (apt-get install chromium chromium-driver)"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains

    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "sfview", "serve", SHAPES, "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,720"):
        options.add_argument(argument)
    chrome = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://localhost:{port}/", timeout=5).close()
                break
            except OSError:
                time.sleep(0.2)
        chrome.get(f"http://localhost:{port}/")
        time.sleep(6)  # the app starts, xterm.js draws
        chrome.find_element("css selector", ".xterm-screen").click()
        ActionChains(chrome).send_keys("nn").perform()
        time.sleep(2)
        chrome.save_screenshot(str(out / "browser.png"))
    finally:
        chrome.quit()
        server.terminate()
        server.wait()
    return out / "browser.png"


if __name__ == "__main__":
    sys.exit(main())
