"""Work is bounded by the section's size: memory and output grow in step with it, whatever it claims.

Not timed (timings flake on a shared machine): what is measured is the peak
resident memory of a `sfview` process and the size of what it writes, for
sections of 10 KB, 100 KB and 1 MB built the same way, and for a section
whose counts claim far more than it holds.
"""

from __future__ import annotations

import itertools
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PEAK
from handmade import v2_section

from sfview.output import readelf
from sfview.sframe.model.section import Section


def sized(size: int, seed: int = 1) -> bytes:
    """A valid section of about `size` bytes: functions of 1 to 8 rows, as a compiler makes them."""
    rng = random.Random(seed)
    functions: list[list[tuple[int, int]]] = []
    total = 28
    while total < size:
        rows = [(4 * j, 8 * rng.randint(1, 15)) for j in range(rng.randint(1, 8))]
        functions.append(rows)
        total += 20 + 3 * len(rows)
    return v2_section(functions)


COMMANDS = {"dump": ["dump"], "json": ["dump", "--json"], "check": ["check"]}


def run(name: str, data: bytes, folder: Path) -> tuple[int, int]:
    """`sfview` on the section in a process of its own: (peak resident memory in KB, bytes written)."""
    path = folder / f"{name}-{len(data)}.sframe"
    path.write_bytes(data)
    out = folder / "out"
    with out.open("wb") as sink:
        done = subprocess.run([sys.executable, "-c", PEAK, *COMMANDS[name], str(path)], stdout=sink,
                              stderr=subprocess.PIPE, text=True, check=False)  # fmt: skip
    assert "Traceback" not in done.stderr
    return int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0]), out.stat().st_size


SIZES = (10_000, 300_000, 1_000_000)
"""The sections measured. The middle one is far from the first, so that the memory its extra bytes cost stands
well above a process's own noise (its peak at start varies by a megabyte or two with the environment: a 100 KB
section's 2 MB, times 10, made the bound of the next step swing by 15 MB)."""


@pytest.mark.parametrize("name", ["dump", "json", "check"])
def test_memory_and_output_grow_with_the_section(tmp_path: Path, name: str) -> None:
    sections = [sized(size) for size in SIZES]
    measured = [run(name, data, tmp_path) for data in sections]
    lengths = [len(data) for data in sections]
    peaks = [kb for kb, _ in measured]
    written = [size for _, size in measured]
    # A process starts at ~20 MB whatever it reads: the next bytes of section must cost no more memory a byte
    # than the ones before did, give or take 6 MB.
    growth = (peaks[1] - peaks[0]) / (lengths[1] - lengths[0])
    assert peaks[2] - peaks[1] < 6 * 1024 + growth * (lengths[2] - lengths[1]), (
        f"peak RSS {peaks} KB grows faster than the sections {lengths}"
    )
    assert peaks[-1] < 150 * 1024
    if name != "check":
        for (small, big), (shorter, longer) in zip(
            itertools.pairwise(written), itertools.pairwise(lengths), strict=True
        ):
            assert 0.8 < (big / small) / (longer / shorter) < 1.2, f"output {written} is not in step with {lengths}"


@pytest.mark.parametrize("name", ["dump", "json", "check"])
def test_claims_cost_nothing(tmp_path: Path, name: str) -> None:
    """A count of 0xffffffff rows in each of 200 FDEs that all share one block: memory stays small."""
    block = b"".join(bytes([j % 256, 0x03, 8]) for j in range(3000))
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 * (i + 1), 0x1000, 0, 0xFFFFFFFF, 0, 0, 0) for i in range(200))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 200, 0xFFFFFFFF, len(block), 0, len(fdes))
    kb, written = run(name, header + fdes + block, tmp_path)
    assert kb < 60 * 1024 and written


def test_functions_whose_row_lists_are_not_kept_print_their_own_rows() -> None:
    """The bulk reader keeps a list of rows only for blocks that can repeat; the others are each their own."""
    rng = random.Random(7)
    functions = [[(4 * j, 8 * rng.randint(1, 15)) for j in range(rng.randint(1, 6))] for _ in range(300)]
    data = v2_section(functions, reverse=True)
    section = Section(data)
    assert readelf.text(section)[0] == readelf.text(section, bulk=False)[0]


APP = """
import asyncio, sys
from sfview.app.app import SfviewApp
from sfview.document import Document

async def main():
    app = SfviewApp(Document.open(sys.argv[1], 0x1000))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*sys.argv[2], "enter")
        await pilot.pause()
        print("row", app.explorer.fre_table.cursor)
        await pilot.press("2", "down", "down", "enter", "down", "enter")
        await pilot.pause(0.2)
    print("VmHWM", open("/proc/self/status").read().split("VmHWM:")[1].split()[0])

asyncio.run(main())
"""


@pytest.mark.slow
def test_the_app_on_a_function_of_300000_rows(tmp_path: Path) -> None:
    """`g` into it, the Structure tab, the tree: rows and nodes built for what is shown (memory says so)."""
    count = 300_000
    rows = b"".join(struct.pack("<IBb", 4 * j, 0x03, 8) for j in range(count))  # 4-byte starts, CFA = SP + 8
    fde = struct.pack("<iIIIBBH", 0x1000, 4 * count, 0, count, 2, 0, 0)  # FRE type 2: 4-byte start addresses
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 1, count, len(rows), 0, len(fde))
    path = tmp_path / "long.sframe"
    path.write_bytes(header + fde + rows)
    target = 0x1000 + 0x1000 + 4 * 123_456 + 2  # inside row 123456 of the function at section + 0x1000
    done = subprocess.run([sys.executable, "-c", APP, str(path), hex(target)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert out["row"] == "123456"
    assert int(out["VmHWM"]) < 150 * 1024, f"peak {out['VmHWM']} KB"


def test_fdes_pointing_at_the_same_rows_print_them_each() -> None:
    """Rows read once for every FDE that points at them (with the same count), printed for each."""
    block = b"".join(bytes([4 * j, 0x03, 8 * (j % 15 + 1)]) for j in range(40))  # row 39: +0x9c, sp+80
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 * (i + 1), 0x100, 0, 40 - (i % 2), 0, 0, 0) for i in range(30))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, 30, 40, len(block), 0, len(fdes))
    section = Section(header + fdes + block)
    text = readelf.text(section)[0]
    assert text == readelf.text(section, bulk=False)[0]
    assert text.count("09c  sp+80 ") == 15, "the 40th row, in each of the 15 FDEs that count 40"
