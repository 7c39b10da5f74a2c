"""Text the app did not write: names from the file and what a person types, shown as they are.

Textual reads a string as markup unless told not to, and ends the app on a
closing tag it cannot match (`[/]`): every dialog's message quoted what was
typed, the rows' titles the function's name, the notifications both. Each is
shown here as plain text, in the headless app (the widgets' text) and in tmux
(the notification, which only a real terminal draws).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest
from conftest import DATA, debugger_shown, settled
from rich.cells import cell_len
from test_in_tmux import ROOT, Tmux, tmux  # noqa: F401  (the fixture)
from textual import events
from textual.geometry import Region
from textual.widgets import Input

from sfview.app.app import SfviewApp
from sfview.app.screens.goto import GotoNumber
from sfview.app.textual_compat import notifications
from sfview.app.widgets.fde_table import FdeTable
from sfview.document import Document

SIZE = (120, 36)
MARKUP = "a[/b]"
"""A closing tag that matches nothing: Textual's markup refuses it (`MarkupError`) and the app ended."""


def _renamed(tmp_path: Path, renames: dict[bytes, bytes]) -> Path:
    """shapes-x86_64-O2 with symbols renamed in its string table (each new name as long as the old)."""
    data = (DATA / "shapes-x86_64-O2").read_bytes()
    for old, new in renames.items():
        assert len(old) == len(new) and data.count(b"\0" + old + b"\0") == 1
        data = data.replace(b"\0" + old + b"\0", b"\0" + new + b"\0")
    path = tmp_path / "renamed"
    path.write_bytes(data)
    return path


def shown(table: FdeTable) -> list[int]:
    """The FDE index on each row, top to bottom."""
    return [table.fde_at(row) for row in range(table.row_count)]


def _shown(app: SfviewApp) -> str:
    """The text of the dialog's message, or of the debugger's status line."""
    return " ".join(str(w.render()) for w in app.screen.query("#goto-message, #dbg-status"))


def _drawn(app: SfviewApp) -> str:
    """The dialog's message as its lines are drawn on the screen, joined."""
    (label,) = app.screen.query("#goto-message")
    if not label.parent.content_region.contains_region(label.region):
        return "(the message goes past the dialog's edge, cut there)"
    lines = label.render_lines(Region(0, 0, *label.size))
    return " ".join(line.text.strip() for line in lines if line.text.strip())


@pytest.mark.parametrize("key", ["g", "o", "ctrl+f", "u"])
async def test_markup_typed_into_a_dialog_is_quoted_as_typed(key: str) -> None:
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.focused, Input)
        app.focused.post_message(events.Paste(MARKUP))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert repr(MARKUP) in _shown(app)


async def test_a_name_that_looks_like_markup_titles_its_rows_and_notifications(tmp_path: Path) -> None:
    path = _renamed(tmp_path, {b"small_leaf": MARKUP.encode() + b"_leaf"})
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down", "down", "down")  # fdes[3], the renamed function
        await pilot.pause()
        assert f"FREs of fdes[3] {MARKUP}_leaf" in app.explorer.fre_table.border_title.replace("\\[", "[")
        await pilot.press("g", *"1187", "enter")  # just past its end: the refusal names it
        await pilot.pause()
        said = [n for n in notifications(app) if "1187" in n.message]
        assert said and f"{MARKUP}_leaf" in said[0].message and not said[0].markup


def test_a_path_that_looks_like_markup_is_said_in_the_notification(tmux: Tmux, tmp_path: Path) -> None:  # noqa: F811
    """`w` to a path with a closing tag no tag opened: the notification says it could not write there (the
    headless app draws no notification: only a terminal shows that it no longer ends the app)."""
    command = f"cd {tmp_path} && PYTHONPATH={ROOT} {sys.executable} -m sfview {DATA / 'shapes-x86_64-O2'}; sleep 60"
    tmux("new-session", "-d", "-s", "app", "-x", "120", "-y", "30", command)
    tmux.wait_for("2 0x1050")
    tmux("send-keys", "-t", "app", "w", "C-u")
    tmux.wait_for("Write a patched copy")
    tmux("send-keys", "-t", "app", "-l", f"{MARKUP}/copy")
    tmux("send-keys", "-t", "app", "Enter")
    screen = tmux.wait_for("cannot write")
    assert f"{MARKUP}/copy: cannot write" in screen  # as typed, in the notification
    assert "MarkupError" not in screen


def test_an_escape_sequence_in_a_name_is_shown_not_obeyed(tmux: Tmux, tmp_path: Path) -> None:  # noqa: F811
    """A symbol named `ESC ]0;pwn BEL` set the terminal's title, one named `ESC [2J` cleared the screen (and a
    backspace moved the cursor into the next column): each control character is now shown as its picture."""
    path = _renamed(tmp_path, {b"main": b"\x1b[2J", b"small_leaf": b"\x1b]0;pwn\x07\x08a"})
    command = f"cd {tmp_path} && PYTHONPATH={ROOT} {sys.executable} -m sfview {path}; sleep 60"
    tmux("new-session", "-d", "-s", "app", "-x", "120", "-y", "30", command)
    screen = tmux.wait_for("3 0x1180")
    tmux("send-keys", "-t", "app", "down", "down", "down")
    screen = tmux.wait_for("FREs of fdes[3]")
    assert tmux("display-message", "-p", "-t", "app", "#{pane_title}").strip() != "pwn"
    lines = screen.splitlines()
    assert lines[0].startswith(" renamed · .sframe section"), "the screen was not cleared"
    assert next(line for line in lines if line.startswith("2 0x1050")).split()[4] == "\u241b[2J"
    assert "\u241b]0;pwn\u2407\u2408a " in next(line for line in lines if line.startswith("3 0x1180"))
    assert "─FREs of fdes[3] \u241b]0;pwn\u2407\u2408a─" in screen


async def test_a_path_holding_a_nul_is_refused_in_the_write_dialog(tmp_path: Path, monkeypatch) -> None:
    """`w` given a pasted path with a NUL in it ended the app (`ValueError: embedded null byte`)."""
    monkeypatch.chdir(tmp_path)
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("w", "ctrl+u")
        await pilot.pause()
        app.focused.post_message(events.Paste("copy\0.elf"))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert _shown(app) == "'copy\\x00.elf': a path cannot hold a NUL character"
    assert list(tmp_path.iterdir()) == []


async def test_a_terminal_of_ten_columns_shows_a_list_in_what_room_it_has() -> None:
    """The problems tab beside the minimap in a 10x3 terminal: the list had no cell for its text, and Rich's
    wrapping of an option into none ended the app (`ValueError` in `chop_cells`)."""
    app = SfviewApp(Document.open(str(DATA / "deep-x86_64")))
    async with app.run_test(size=(10, 3)) as pilot:
        await pilot.pause()
        for key in ("4", "m"):
            await pilot.press(key)
            await pilot.pause()
        assert app.screen.query_one("OptionList").size.width > 0  # cells for its text


async def test_a_name_that_looks_like_markup_is_offered_by_the_palette(tmp_path: Path) -> None:
    """The command palette offers the functions whose names hold what is typed: `Go to a[/b]_leaf` ended it
    (`MarkupError` in the palette's worker)."""
    path = _renamed(tmp_path, {b"small_leaf": MARKUP.encode() + b"_leaf"})
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        app.focused.post_message(events.Paste("a[/"))
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.explorer.fde_table.cursor == 3  # gone to the function so named


async def test_a_path_that_looks_like_markup_heads_the_diff(tmp_path: Path) -> None:
    """`sfview A --diff B` where B's folder is named `a[` and B `b]`: the summary line quoted the path `…a[/b]`
    as markup, and the app ended before its first screen."""
    from sfview.app.screens.diff import DiffApp
    from sfview.cli.diff import compared

    (tmp_path / "a[").mkdir()
    other = tmp_path / "a[" / "b]"
    other.write_bytes((DATA / "shapes-x86_64-O2").read_bytes())
    app = DiffApp(*compared(str(DATA / "shapes-x86_64-O2"), str(other), keep_same=True))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert f"B {tmp_path}/a[/b]: 9 same" in str(app.screen.query_one("#diff-summary").render())


@pytest.mark.parametrize("typed", ["-1", "ffffffffffffffff+1", "10000000000000000", "main-0x100000"])
async def test_an_address_that_fits_no_machine_word_is_refused_as_the_command_line_refuses_it(typed: str) -> None:
    """`g` with a negative address or one past 64 bits: refused in the dialog in the words of `--base`'s refusal
    (the command line's own, asked here), not taken as an address no function covers."""
    from sfview.cli.common import address

    with pytest.raises(argparse.ArgumentTypeError) as cli:
        address(typed.replace("main", "1050"))  # the command line knows no names: main's address
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", *typed, "enter")
        assert isinstance(app.screen, GotoNumber), "the dialog stays, saying why"
        assert _shown(app) == str(cli.value).replace("1050", "main")
        assert "does not fit a 64-bit machine word (0 to 0xffffffffffffffff)" in _shown(app)
        assert _drawn(app) == _shown(app), "the refusal is read whole in the dialog, wrapped, not cut at its edge"


async def test_the_palette_refuses_an_address_past_64_bits_as_g_does() -> None:
    """The command palette offered `Go to address 0x10000000000000000` (17 hex digits), past any machine
    word; it now says `g`'s refusal, and choosing it notifies it (the selection unmoved)."""
    typed = "10000000000000000"
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", *typed, "enter")
        refusal = _shown(app)
        assert "does not fit a 64-bit machine word" in refusal
        await pilot.press("escape")
        before = app.explorer.fde_table.cursor
        await pilot.press("ctrl+p")
        await pilot.pause()
        app.focused.post_message(events.Paste(typed))
        await pilot.pause(0.5)
        offered = [str(o.prompt) for o in app.screen.query_one("CommandList").options]
        assert f"Go to address: {refusal}" in offered, offered
        assert not any(o.startswith("Go to address 0x") for o in offered), offered
        await pilot.press("enter")
        await pilot.pause()
        assert any(n.message == refusal for n in notifications(app)), notifications(app)
        assert app.explorer.fde_table.cursor == before


async def test_the_debugger_refuses_a_register_or_memory_word_that_fits_no_machine_word() -> None:
    """The pc box, the register boxes and `m` (its address, then its value), each refused as `--regs` and
    `--mem` are: quoted, named, the value and the range."""
    app = SfviewApp(Document.open(str(DATA / "deep-x86_64")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        debugger = await debugger_shown(app, pilot)
        await pilot.press(*"-1", "tab", *"7ffc1000", "enter")
        assert _shown(app) == "'-1': pc: -0x1 does not fit a 64-bit machine word (0 to 0xffffffffffffffff)"
        assert not debugger.frames
        await pilot.press("shift+tab", *["backspace"] * 2, *"stop_here", "tab", "end", "+", *"f" * 16, "enter")
        said = "'7ffc1000+ffffffffffffffff': sp: 0x1000000007ffc0fff does not fit a 64-bit machine word"
        assert _shown(app).startswith(said)
        await pilot.press(*["backspace"] * 17, "enter")
        assert debugger.frames and debugger.frames[0].pc == 0x1160
        await pilot.press("m", *"sp-0x80000000", "enter")
        assert _shown(app).startswith("'sp-0x80000000': address: -0x")
        await pilot.press(*["backspace"] * 11, "enter", *"-8", "enter")
        assert _shown(app) == (
            "'-8': the word at 0x7ffc1000: -0x8 does not fit a 64-bit machine word (0 to 0xffffffffffffffff)"
        )
        await pilot.press("escape")
        assert debugger.memory.words == {}


WIDE_NAMES = {
    b"dynamic_frame": "関数_測定".encode(),  # CJK: two cells a character
    b"small_leaf": "e\u0301\u0301\u0301_lf".encode(),  # three combining accents: no cell of their own
    b"huge_frame": "دالةق".encode(),  # Arabic, right to left
    b"medium_frame": "\u05e4\u05d5\u05e0\u05e7\u05e6\u05d9".encode(),  # Hebrew, right to left
}


async def test_wide_combining_and_right_to_left_names_keep_the_fde_table_s_columns_in_line(tmp_path: Path) -> None:
    """The symbol column is as wide as its widest name in cells, and each name padded by its cells: the FREs
    column after it ends where its title ends on every row (by characters, the CJK row ran 4 cells long and
    the accented one 3 short, pushing the later columns out of line)."""
    app = SfviewApp(Document.open(str(_renamed(tmp_path, WIDE_NAMES))))
    async with app.run_test(size=(150, 60)) as pilot:
        await settled(app, pilot)
        table = app.explorer.fde_table
        lines = [table.render_line(y).text for y in range(table.row_count + 1)]
        title_ends = cell_len(lines[0][: lines[0].index("FREs") + len("FREs")])
        ends = {}
        for line, fde in zip(lines[1:], shown(table), strict=True):
            name = table.names[fde]
            after = line.index(name) + len(name)
            count = re.match(r" *\d+", line[after:])
            assert count is not None, line
            ends[name] = cell_len(line[: after + count.end()])
        assert {name.encode() for name in ends} >= set(WIDE_NAMES.values()), "every name shown whole"
        assert set(ends.values()) == {title_ends}, ends
