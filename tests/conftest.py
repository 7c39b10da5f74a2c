"""Shared test helpers: where the fixtures are, running sfview as a user does, and the lanes.

The tests live in lanes by what they cover: `model/` (the format model, the
bulk reader, inputs and engines, without the command line), `commands/` (the
commands as a user runs them, bad input above all), `app/` (the explorer,
driven as a person drives it), `oracles/` (sfview against the real tools:
each binutils release's readelf, gdb, qemu, objdump, libsframe, the kernel's
reader, the Kaitai compiler) and `house/` (the layering and the style). Every
test under `oracles/` is marked `oracle`, as are the few elsewhere that run a
real tool; fuzzing and every-key sweeps are marked `slow`. `pytest` runs
everything; `pytest -m "not oracle and not slow" -n 4` is the inner loop.
"""

from __future__ import annotations

import functools
import json
import os
import random
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sfview.cli import main

DATA = Path(__file__).parent / "data"
ORACLES = Path(__file__).parent / "oracles"
SECTIONS = sorted((DATA / "sections").glob("*.json"))
ELF_FIXTURES = sorted(
    p.with_name(p.name.removesuffix(".readelf-sframe.txt")) for p in DATA.glob("*.readelf-sframe.txt")
)


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> Result:
    """Run `sfview ARGS` in this process (fast), capturing what it prints."""
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


PEAK = (
    "import atexit, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
    "    sys.stderr.write('VmHWM ' + status.split()[0] + '\\n')\n"
    "atexit.register(peak)\n"
    "sys.argv[0] = 'sfview'\n"
    "from sfview.cli import run\n"
    "run()\n"
)
"""Runs sfview, then says its peak resident memory (VmHWM: of this process's own memory since exec,
where getrusage would also count the memory of the process that started it)."""


def run_with_peak(*args: str) -> tuple[str, int]:
    """Run sfview in a process of its own (`PEAK`): what it printed, and its peak resident memory in bytes."""
    done = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout, int(done.stderr.split("VmHWM")[-1].split()[0]) << 10


def run_process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m sfview ARGS` as a separate process, as a shell would; `env`: variables set for it,
    beside this process's."""
    environment = None if env is None else {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "sfview", *args], capture_output=True, text=True, timeout=120, env=environment
    )


def load_section_fixture(path: Path) -> tuple[bytes, int, str]:
    """A binutils section fixture: its bytes, load address, and objdump's dump from the title on."""
    fixture = json.loads(path.read_text())
    text = fixture["groundtruth"]
    return bytes(fixture["content"]), fixture["section_base"], text[text.index("Contents of the SFrame section") :]


def fuzzed_section(seed: int, folder: Path) -> Path:
    """A binutils section with a few random bytes changed (the magic kept), written to `folder`."""
    rng = random.Random(seed)
    content = bytearray(load_section_fixture(SECTIONS[seed % len(SECTIONS)])[0])
    for _ in range(rng.randint(1, 6)):
        content[rng.randrange(len(content))] = rng.randrange(256)
    path = folder / "fuzzed.sframe"
    path.write_bytes(b"\xe2\xde" + bytes(content[2:]))
    return path


AMD64, AARCH64 = 3, 2
"""ABI ids, as the spec numbers them (the sections built here are written from the spec, not from the .ksy)."""


def v3_section(
    info2: int,
    fres: list[tuple],
    fixed_ra: int = 0,
    *,
    info: int = 0,
    abi: int = AMD64,
    flags: int = 0x1,
    size: int = 64,
) -> bytes:
    """A version 3 section with one function at 0x1000, laid out as shared/spec's version 3 notes say.

    `fres` are (start, cfa_base_reg, words[, mangled]) with 1-byte data words (control words given
    unsigned, offsets signed); `info`/`info2` are the attribute block's info bytes. With flags 0x4
    (PCREL) the start is written relative to its own field, as binutils 2.45 on writes it.
    """
    block = struct.pack("<HBBB", len(fres), info, info2, 0)
    for start, base, words, *mangled in fres:
        fre_info = (1 << 7 if mangled and mangled[0] else 0) | (len(words) << 1) | base
        block += struct.pack("<BB", start, fre_info) + bytes(w & 0xFF for w in words)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, flags, abi, 0, fixed_ra, 0, 1, len(fres), len(block), 0, 16)
    start = 0x1000 - 28 if flags & 0x4 else 0x1000  # the FDE's start field is at section offset 28
    return header + struct.pack("<qII", start, size, 0) + block


async def settled(app: object, pilot: object) -> None:
    """Everything the explorer's worker delivers after the first screen (the overview, the names, the checks'
    count, the orders) is in, and shown: each lays the screen out when it comes, which on a loaded machine is
    while a test counts the layouts of a key's (`[1, 1, 1]`, `2 == 1`). Call before `count_layouts`."""
    for _ in range(1200):  # the worker starts after the first frames (a timer): until then nothing is running
        await pilot.pause(0.05)  # type: ignore[attr-defined]
        if not app.explorer.fde_table.orders_coming:  # type: ignore[attr-defined]  # its last delivery is in
            break
    await app.workers.wait_for_complete()  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]  # what a delivery laid out, drawn


async def debugger_shown(app: object, pilot: object) -> object:
    """The debugger screen once it is composed and a widget of it has the keys: the app pushes it after its
    first frames, and on a loaded machine a key pressed before that goes nowhere."""
    from sfview.app.screens.debugger import DebuggerScreen

    for _ in range(600):
        await pilot.pause(0.05)  # type: ignore[attr-defined]
        screen = app.screen  # type: ignore[attr-defined]
        keys = getattr(app.focused, "screen", None)  # type: ignore[attr-defined]  # the screen the keys go to
        if isinstance(screen, DebuggerScreen) and screen.query("#dbg-frames") and keys is screen:
            return screen
    raise AssertionError(f"the debugger did not come up: {app.screen!r}")  # type: ignore[attr-defined]


def count_layouts(monkeypatch: pytest.MonkeyPatch, screen: object) -> list[int]:
    """A list that grows by one each time `screen`'s class lays its screen out (while `monkeypatch` holds):
    a move that should only repaint must leave it empty."""
    from sfview.app.textual_compat import REFRESH_LAYOUT

    layouts: list[int] = []
    laid_out = getattr(type(screen), REFRESH_LAYOUT)
    monkeypatch.setattr(
        type(screen), REFRESH_LAYOUT, lambda this, *a, **k: (layouts.append(1), laid_out(this, *a, **k))
    )
    return layouts


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    return lambda *args: run_cli(*args, capsys=capsys)


Built = Callable[[str, str], bytes]
"""The section of `tests/data/src/shapes.c` built by a binutils release for a target."""


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The section of `shapes.c` built by a release for a target: compiled once a session, for every test
    (the consumers' oracles take it; a missing toolchain skips the test that asks)."""
    from toolchains import toolchain

    from sfview.document import Document

    folder = tmp_path_factory.mktemp("built")

    @functools.cache
    def section(release: str, target: str) -> bytes:
        out = folder / f"shapes-{release}-{target}"
        toolchain(release, target).compile("-O2", "-o", out, DATA / "src" / "shapes.c")
        return Document.open(str(out)).data

    return section


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under `oracles/` is an oracle test: it runs a real tool (marked here, not in each file)."""
    for item in items:
        if ORACLES in item.path.parents:
            item.add_marker(pytest.mark.oracle)
