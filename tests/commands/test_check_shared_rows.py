"""`check` reads rows that many functions share once each, and says their problems once.

Not timed (timings flake on a shared machine): what is counted is the rows
decoded, by the bulk reader and along the shared chains, on the shapes that
cost the most per byte (`handmade.overlapping`: 2,000 functions reading
overlapping blocks of one pool of rows, where reading every function's rows
again is four million rows). What is said is held to the pool's construction:
row k's CFA offset is 8 + k % 64, implausible unless a multiple of 8.
bench/bench_profiles.py times `check --profile` on the same shapes.
"""

from __future__ import annotations

import contextlib
import random
import struct
import tracemalloc
from collections.abc import Iterator

import pytest
from handmade import mutate, overlapping

from sfview.check import shared
from sfview.check.run import check_bytes
from sfview.errors import InputError
from sfview.sframe.bulk.reader import Bulk
from sfview.sframe.model import section
from sfview.sframe.model.records import FRE_LENGTHS

FUNCTIONS = ROWS = 2000


def _implausible(first: int, stop: int) -> int:
    """How many pool rows in [first, stop) have a CFA offset that is not a multiple of 8."""
    return sum(1 for k in range(first, stop) if (8 + k % 64) % 8)


class _CountedStarts:
    """A row start's `struct.Struct` that counts the rows read with it."""

    def __init__(self, address: struct.Struct, count: list[int]) -> None:
        self.size, self._unpack, self._count = address.size, address.unpack_from, count

    def unpack_from(self, data: bytes, pos: int) -> tuple[int, ...]:
        self._count[0] += 1
        return self._unpack(data, pos)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Rows decoded while the test runs: by the bulk reader's walk, and onto the shared chains."""
    count = [0]
    walk, init = Bulk._walk, shared.SharedRows.__init__

    def counted_walk(*args: object) -> Iterator[object]:
        for row in walk(*args):  # type: ignore[arg-type]
            count[0] += 1
            yield row

    def counted_init(
        self: shared.SharedRows, data: bytes, low: int, fre_end: int, address: struct.Struct, problems: object
    ) -> None:
        init(self, data, low, fre_end, _CountedStarts(address, count), problems)  # type: ignore[arg-type]

    monkeypatch.setattr(Bulk, "_walk", counted_walk)
    monkeypatch.setattr(shared.SharedRows, "__init__", counted_init)
    return count


@pytest.mark.parametrize(
    ("version", "slide"), [(1, True), (1, False), (2, True), (2, False), (3, True)], ids=lambda v: str(v)
)
def test_check_decodes_each_row_a_bounded_number_of_times(decoded: list[int], version: int, slide: bool) -> None:
    """Each pool row is decoded at most twice (by the first function, through the bulk reader, then along
    the chain the others share), where reading each function's rows again decodes millions; the memory
    held stays within a few times the section."""
    data = overlapping(version, FUNCTIONS, ROWS, slide)
    pool = ROWS + (FUNCTIONS if slide and version < 3 else 0)
    tracemalloc.start()
    try:
        overlaps = sum(1 for p in check_bytes(data) if p.check.id == "functions-overlap")  # as said, not held
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 < decoded[0] <= 2 * pool
    assert peak < 10 * len(data) + (1 << 20), peak
    assert overlaps == FUNCTIONS - 1


def test_functions_in_reverse_order_join_one_chain(decoded: list[int]) -> None:
    """The overlapping shape with its FDE table reversed (each function's rows start a row before the last
    one's): the bulk reader reads a few functions' rows, up to its bound (twice the sub-section's bytes),
    then each function's first row is put in front of the chain the others read, never read again."""
    data = bytearray(overlapping(2, FUNCTIONS, ROWS))
    size, table = 20, 28  # version 2: an FDE's bytes, and where the table starts (no auxiliary header)
    fdes = [data[table + size * i : table + size * (i + 1)] for i in range(FUNCTIONS)]
    data[table : table + size * FUNCTIONS] = b"".join(reversed(fdes))
    pool = ROWS + FUNCTIONS
    problems = sum(1 for _ in check_bytes(bytes(data)))
    assert problems > FUNCTIONS
    assert 0 < decoded[0] <= 4 * pool  # the bulk reader's bound in rows (4 bytes each), then the pool once


@pytest.mark.parametrize(("version", "slide"), [(1, True), (2, False), (3, True)], ids=lambda v: str(v))
def test_shared_rows_are_said_once_with_their_readers_named(version: int, slide: bool) -> None:
    """Every implausible CFA offset of the pool is said (or counted) with the first function that reads its
    row, the rows of the first function once more along the chain (it was read by the bulk reader before
    any function was known to share it), and one line names how many functions share the chain."""
    functions, rows = 40, 30
    data = overlapping(version, functions, rows, slide)
    problems = list(check_bytes(data))
    said = [p for p in problems if p.check.id == "cfa-offset-implausible"]
    counted = sum(1 for p in said if p.fre is not None)
    counted += sum(int(p.message.split()[1]) for p in said if p.fre is None)  # "and N more rows ..."
    if version == 3:
        chain = (0, rows)  # every function reads the one block
    elif slide:
        chain = (1, functions + rows - 1)  # function i reads rows [i, i + rows)
    else:
        chain = (0, rows - 1)  # function i reads rows [0, rows - i)
    assert counted == _implausible(0, rows) + _implausible(*chain)  # function 0's, then the chain's
    summary = [p for p in problems if p.check.id == "fres-overlap" and "functions read rows" in p.message]
    assert len(summary) == 1
    assert summary[0].message.startswith(f"{functions - 1} functions read rows of the one block")
    assert f"(fdes[1], fdes[2], fdes[3] and {functions - 4} more)" in summary[0].message
    assert sum(1 for p in problems if p.check.id == "first-row-not-at-zero") == (
        functions - 1 if slide and version < 3 else 0
    )


def test_functions_reading_past_the_pool_each_say_why_and_keep_nothing() -> None:
    """Every function of the shape (all from row 0) claims 10 rows more than the pool holds: each says so
    (`num-fres-too-many`), and the rows read to find why are let go, not kept for every function (16 MB
    here). The model still keeps a `Function` for each (about half a megabyte here): within the constant."""
    functions = rows = 1000
    data = bytearray(overlapping(2, functions, rows, slide=False))
    size, table, count_at = 20, 28, 12  # version 2: an FDE's bytes, the table's start, func_num_fres in an FDE
    for i in range(functions):
        struct.pack_into("<I", data, table + size * i + count_at, rows + 10)
    tracemalloc.start()
    try:
        too_many = sum(1 for p in check_bytes(bytes(data)) if p.check.id == "num-fres-too-many")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert too_many == functions
    assert peak < 10 * len(data) + (4 << 20), peak


def test_functions_falling_into_step_read_each_row_once(decoded: list[int]) -> None:
    """The overlapping shape (version 2, each block a row later) with function i's rows from byte i of the
    pool: three functions in four begin inside a row, read a few rows of their own from bytes that are not
    a row boundary, then fall into step with rows another function's chain read, in its middle. They go on
    along that chain: no byte starts more than one row read onto a chain, where reading its own copy of the
    rest for each such function decodes about 900,000; the memory held stays within ten times the section and
    the patterns it learns."""
    data = bytearray(overlapping(2, FUNCTIONS, ROWS))
    size, table, offset_at = 20, 28, 8  # version 2: an FDE's bytes, the table's start, func_start_fre_off
    for i in range(FUNCTIONS):
        struct.pack_into("<I", data, table + size * i + offset_at, i)
    fre_bytes = 4 * (ROWS + FUNCTIONS)
    section._debug()  # imported once, on the first error: not what the section costs
    tracemalloc.start()
    try:
        overlaps = sum(1 for p in check_bytes(bytes(data)) if p.check.id == "functions-overlap")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert overlaps == FUNCTIONS - 1
    assert 0 < decoded[0] <= ROWS + fre_bytes  # function 0's rows through the bulk reader, then each byte once
    assert peak < 10 * len(data) + (2 << 20), peak  # ~1,500 distinct patterns of garbage rows: 2 MB (main: 15)


def test_a_chain_falling_into_step_says_only_its_own_rows() -> None:
    """Version 2, 1-byte starts, rows of 3 bytes. fdes[0] reads rows 0-5; fdes[1] rows 2-5 (a chain of rows
    read again); fdes[2] begins at row 2's last byte: its row 0 is that byte (start 16), row 3's start byte
    (info 0x05: two 1-byte offsets, 3 and 8: CFA offset 3) and the rest of row 3, so its row 1 is row 4,
    in the middle of fdes[1]'s chain. Its own row is said (the start, the CFA offset), and the order of its
    rows 0 and 1 (the step into the chain is its own); row 4's CFA offset 20, said with fdes[1], is not said
    again, and one line names the two functions reading the chain."""
    rows = [(0, 8), (1, 8), (2, 16), (5, 8), (6, 20), (7, 8)]
    block = b"".join(struct.pack("<BBB", start, 0x03, cfa) for start, cfa in rows)
    fdes = [(0x1000, 0, 6), (0x1100, 6, 4), (0x1200, 8, 3)]
    table = b"".join(struct.pack("<iIIIBBH", at, 0x100, off, count, 0, 0, 0) for at, off, count in fdes)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(fdes), 13, len(block), 0, len(table))
    said = [(p.check.id, p.fde, p.fre) for p in check_bytes(header + table + block)]
    assert [s for s in said if s[1] == 2 and s[2] is not None] == [
        ("first-row-not-at-zero", 2, 0),
        ("cfa-offset-implausible", 2, 0),
        ("rows-not-increasing", 2, 1),
    ]
    assert ("cfa-offset-implausible", 1, 2) in said  # row 4, with the first function of the chain
    chain = [p for p in check_bytes(header + table + block) if "functions read rows" in p.message]
    assert [(p.fde, p.message.split(" (")[1]) for p in chain] == [
        (1, "fdes[1], fdes[2]): the problems of each row are said once, with the first of these that reads it")
    ]


def test_rows_read_along_chains_are_the_rows_the_bytes_give(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sections of the overlapping shape whose functions' rows begin at random bytes of the pool (and some
    damaged at random): every function's rows as `SharedRows.read` gives them, through however many
    chains and links, are those a plain walk of the bytes from its first row gives (each row's length
    from its info byte, stopping where the next cannot be read), with their starts."""
    read, checked, linked = shared.SharedRows.read, [0], [0]

    def walked(rows: shared.SharedRows, pos: int, count: int) -> list[tuple[shared.Chain, int, int]]:
        runs = read(rows, pos, count)
        got = [(chain.positions[k], chain.starts[k]) for chain, first, n in runs for k in range(first, first + n)]
        want: list[tuple[int, int]] = []
        while len(want) < count:
            info_at = pos + rows.address.size
            if pos >= rows.fre_end or info_at >= rows.limit or info_at + FRE_LENGTHS[rows.data[info_at]] > rows.limit:
                break
            want.append((pos, rows.address.unpack_from(rows.data, pos)[0]))
            pos = info_at + FRE_LENGTHS[rows.data[info_at]]
        assert got == want
        checked[0] += 1
        linked[0] += len(runs) > 1
        return runs

    monkeypatch.setattr(shared.SharedRows, "read", walked)
    rng = random.Random(35)
    for n in range(60):
        version, slide = (1, 2)[n % 2], n % 3 > 0
        data = bytearray(overlapping(version, 30, 30, slide))
        size = {1: 17, 2: 20}[version]  # an FDE's bytes; func_start_fre_off is at 8 in both
        for i in range(30):
            if rng.random() < 0.7:
                struct.pack_into("<I", data, 28 + size * i + 8, rng.randrange(130))
        mutant = mutate(rng, bytes(data)) if n % 4 == 0 else bytes(data)
        with contextlib.suppress(InputError):
            sum(1 for _ in check_bytes(mutant))
    assert checked[0] > 800 and linked[0] > 200, (checked, linked)


def test_a_staircase_of_chains_is_read_in_few(decoded: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """1-byte starts, a pool of 4-byte rows g_j = [j, 0x05, 0x03, 8] (two offsets); the bytes from g_j + 1
    read as a 3-byte row (start 5, one offset) that ends at g_(j+1). Functions, the first from the top down,
    start at g_j + 1 for j = N-1 .. 0: each reads its row, then g_(j+1), which the function before read as
    its second row; then N more functions all start at g_0 + 1. Linked as found, the pool would be N
    chains of a row each, every function running through all of them; the rows before a link that are
    fewer go, and the pool stays one chain: each function runs through at most two, and no byte starts
    two rows read (where reading a copy of the rest each time decodes N * N)."""
    n = 300
    pool = b"".join(bytes([j % 256, 0x05, 0x03, 8]) for j in range(n + 2))
    starts = [4 * j + 1 for j in range(n - 1, -1, -1)] + [1] * n
    table = b"".join(
        struct.pack("<iIIIBBH", 0x1000 + 0x100 * k, 0x100, at, 2 * n, 0, 0, 0) for k, at in enumerate(starts)
    )
    count = 2 * n * len(starts)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(starts), count, len(pool), 0, len(table))
    read, chains = shared.SharedRows.read, [0, 0]

    def counted(rows: shared.SharedRows, pos: int, want: int) -> list[tuple[shared.Chain, int, int]]:
        runs = read(rows, pos, want)
        chains[0] += 1
        chains[1] = max(chains[1], len(runs))
        return runs

    monkeypatch.setattr(shared.SharedRows, "read", counted)
    too_many = sum(1 for p in check_bytes(header + table + pool) if p.check.id == "num-fres-too-many")
    assert too_many == len(starts)  # each claims 2n rows; the pool holds n + 2 and a few rows of 3 bytes
    assert chains[0] > len(starts) // 2 and chains[1] <= 2  # the bulk reader reads the first (short) ones
    assert 0 < decoded[0] <= len(pool) + 4 * 2 * n  # the bulk reader's first few functions, then each byte once
