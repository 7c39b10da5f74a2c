"""Edits that make the section unreadable, undone; where the patched copy is written (`w`, and `sfview
patch`): places that are not files, writes that fail.

An edit of the magic opened an explorer with no panes (the section cannot be
read), and undoing it there ended the app (`AttributeError`: its tab asked of
panes it does not have).

`w` opened its path for writing in the app's own thread: a FIFO there froze
the app until something read it (no key, not even quit, answered). A write
that failed part way (a full disk, a file size limit) left the copy cut short,
and when the copy was the file itself (asked twice), the file was lost.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import DATA
from textual import events

from sfview.app.app import SfviewApp
from sfview.app.textual_compat import notifications
from sfview.document import Document

PROGRAM = DATA / "shapes-x86_64-O2"
LIMIT = 4096
"""The file size limit the failing writes run under: less than the program's 90 KB."""


def _drained_if_still_waited_for(fifo: Path, done: threading.Event) -> None:
    """Read the FIFO to its end unless `done` comes first: what lets a write that waits for a reader return."""
    if done.wait(30):
        return
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        while True:
            try:
                if not os.read(reader, 65536):
                    return
            except BlockingIOError:
                done.wait(0.05)
    finally:
        os.close(reader)


async def test_a_fifo_is_refused_by_the_write_dialog_and_the_app_answers(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = threading.Event()
    rescue = threading.Thread(target=_drained_if_still_waited_for, args=(fifo, done), daemon=True)
    rescue.start()
    app = SfviewApp(Document.open(str(PROGRAM)))
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("w", "ctrl+u")
            await pilot.pause()
            app.focused.post_message(events.Paste(str(fifo)))
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            said = [str(note.message) for note in notifications(app)]
    finally:
        done.set()
        rescue.join()
    assert said == [f"{fifo}: not a regular file (a directory, a FIFO or a device): no copy written"]


def _limited() -> None:
    """In the child: files past `LIMIT` bytes cannot be written (EFBIG, the signal ignored), as a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


@pytest.mark.parametrize("onto", ["itself", "a new copy"])
def test_a_write_that_fails_part_way_leaves_what_was_there(tmp_path: Path, onto: str) -> None:
    program = tmp_path / "program"
    program.write_bytes(PROGRAM.read_bytes())
    out = program if onto == "itself" else tmp_path / "copy"
    patch = ["patch", str(program), "--set", "fdes[3].func_size=0x40", "-o", str(out), "--overwrite"]
    done = subprocess.run(
        [sys.executable, "-m", "sfview", *patch],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
    )
    assert done.returncode == 2 and done.stderr.splitlines()[-1].endswith(f"{out}: cannot write: File too large")
    assert program.read_bytes() == PROGRAM.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["program"], "no copy cut short, no temporary file"


async def test_an_edit_that_makes_the_section_unreadable_is_undone_and_made_again() -> None:
    app = SfviewApp(Document.open(str(PROGRAM)))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("o", "0", "enter", "e", "0", "enter")  # the magic's first byte: 0xe2 → 0
        await pilot.pause()
        assert app.section is None and "bad magic" in str(app.error)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert (
            app.section is not None and app.doc.data == PROGRAM.read_bytes()[app.doc.file_offset :][: len(app.doc.data)]
        )
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert app.section is None
        await pilot.press("d")
        await pilot.pause()
        assert (
            str(notifications(app)[-1].message) == "The section cannot be read: it has no rows to set DWARF CFI beside."
        )
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.section is not None and app.explorer.fde_table.row_count == 9


@pytest.mark.parametrize(
    ("key", "pasted", "said"),
    [
        (
            "w",
            "9" * 1_000_000,
            "'99999999999999999999999999999999'… (1,000,000 characters): cannot write: File name too long",
        ),
        (
            "ctrl+f",
            "ab" * 3000,
            "ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab… (3,000 bytes) is not in the section.",
        ),
    ],
    ids=["write", "search"],
)
async def test_a_pasted_megabyte_is_quoted_cut_in_the_notification(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, pasted: str, said: str
) -> None:
    """The notification quoted the whole of what was pasted: in a terminal the toast ran off the screen, its
    title and the reason with it."""
    monkeypatch.chdir(tmp_path)
    app = SfviewApp(Document.open(str(PROGRAM)))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(key, "ctrl+u")
        await pilot.pause()
        app.focused.post_message(events.Paste(pasted))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert [str(note.message) for note in notifications(app)] == [said]
