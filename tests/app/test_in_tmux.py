"""The explorer in a real tmux, driven as a person drives it (`send-keys`, `capture-pane`): what the
headless Pilot cannot show, tmux's own behaviour around the app."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0
"""How long the screen may take to show what is waited for, on a loaded machine: a bound, not a timing."""


class Tmux:
    """A tmux server of its own (`-L`, no configuration: `set-clipboard external`, tmux's default)."""

    def __init__(self) -> None:
        self.socket = f"sfview-test-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True, check=True, env=env
        ).stdout

    def open(self, arguments: str) -> None:
        """`sfview ARGUMENTS` in a session `app` of 120 x 30, outside any tmux this test runs in."""
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        command = f"cd {ROOT} && {sys.executable} -m sfview {arguments}"
        self("new-session", "-d", "-s", "app", "-x", "120", "-y", "30", command, env=env)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "app")

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never shown:\n{self.screen()}")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (Debian package tmux): these tests drive the app in it")
    server = Tmux()
    yield server
    subprocess.run(["tmux", "-L", server.socket, "kill-server"], capture_output=True, check=False)


def test_copying_inside_tmux_reaches_its_paste_buffer(tmux: Tmux) -> None:
    """`c`/`C` copied through OSC 52 alone, which tmux's default `set-clipboard external` drops: "Copied",
    and nothing anywhere. Inside tmux the text goes into tmux's paste buffer too (`prefix ]` pastes it)."""
    tmux.open(str(DATA / "shapes-x86_64-O2"))
    screen = tmux.wait_for("2 0x1050")  # the row copied below (a loaded tmux may keep its 80 columns)
    assert tmux("show-options", "-gv", "set-clipboard").strip() == "external"
    tmux("send-keys", "-t", "app", "down", "down", "C")
    shown = tmux.wait_for("Copied")
    assert "tmux's paste buffer" in shown
    row = next(line for line in screen.splitlines() if line.startswith("2 0x1050"))
    assert tmux("show-buffer").split() == row.split(), "the FDE table's row, as the screen shows it"


def test_a_core_says_it_is_being_read_before_the_debugger_opens(tmp_path: Path) -> None:
    """Opening a 26 MB core left the terminal blank for seconds: on a terminal, a line says what is read
    (and how big it is) before the debugger's screen; nowhere else (a pipe keeps the one-line errors alone)."""
    import io
    import pty

    from sfview.cli.explore import reading_note

    core = DATA / "deep-x86_64.core"
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        reading_note(str(core), terminal)
    said = os.read(master, 4096).decode()
    os.close(master)
    size = f"{core.stat().st_size / 1e6:.0f} MB"
    assert said.replace("\r\n", "\n") == f"sfview: reading {core} ({size}) and the libraries it maps…\n"
    piped = io.StringIO()
    reading_note(str(core), piped)
    assert piped.getvalue() == ""


def _named(name: bytes) -> bytes:
    """shapes-x86_64-O2 whose `.symtab` names every function `name`: a new string table of that one name."""
    import struct

    from elf_edit import Elf

    elf = Elf.of((DATA / "shapes-x86_64-O2").read_bytes())
    symbols = bytearray(elf.contents(".symtab"))
    for at in range(24, len(symbols), 24):
        struct.pack_into("<I", symbols, at, 1)
    return elf.replace(".strtab", b"\0" + name + b"\0").replace(".symtab", bytes(symbols)).bytes()


@pytest.mark.parametrize("view", ["explorer", "diff"])
def test_a_name_that_is_an_escape_sequence_reaches_no_terminal(tmux: Tmux, tmp_path: Path, view: str) -> None:
    """A function named `ESC ] 52 ; c ; ZXZpbA== BEL` (OSC 52: set the clipboard to "evil") was written to the
    terminal as it is by the FDE table and by `--diff`'s functions: tmux with `set-clipboard on` put "evil"
    in its paste buffer, and the row was drawn short. The app shows a name's control characters as their
    pictures (`␛`, `␇`)."""
    path = tmp_path / "osc52"
    path.write_bytes(_named(b"\x1b]52;c;ZXZpbA==\x07"))
    tmux.open(f"{path}" if view == "explorer" else f"{DATA / 'shapes-x86_64-O2'} --diff {path}")
    tmux("set-option", "-s", "set-clipboard", "on")
    screen = tmux.wait_for("2 0x1050" if view == "explorer" else "only B")
    assert tmux("list-buffers") == "", "nothing the file holds set tmux's clipboard"
    assert "␛]52;c;ZXZpbA==␇" in screen
