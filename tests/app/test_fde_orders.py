"""The FDE table's sorts and filters against the straightforward ones they replace.

The table sorts by orders made once (`SortOrders`: ascending, descending read
from it with its runs of equals put back in FDE order) and filters with C
loops over a byte per function, narrowing the rows already kept as a filter
grows. Here `sorted(..., key=...)` with the column's value and a plain test of
every word on every function are the reference, on sections with many equal
values (starts, sizes, names, notes) and on damaged ones.
"""

from __future__ import annotations

import itertools
import math
import random
import struct
from array import array
from pathlib import Path

import pytest
from conftest import DATA, fuzzed_section

from sfview import ADDRESS_MASK
from sfview.app.app import SfviewApp
from sfview.app.widgets import fde_orders
from sfview.app.widgets.fde_orders import order_of
from sfview.app.widgets.fde_table import COLUMNS, FILTER_WORDS, PROBLEMS, FdeTable, note
from sfview.check.catalogue import Severity
from sfview.document import Document
from sfview.inputs.opening import raw_section

SIZE = (120, 36)
WORDS = ["Alpha", "alphabet", "beta", "BETA_2", "gamma", "", "_Z3fooi", "delta.cold"]
FILTERS = [
    "a", "al", "alp", "alpha", "alph", "alpha b", "alpha be", "alpha pcmask", "alpha pcmask f", "alpha pcmask flex",
    "pcmask", "signal", "key:a", "key:b", "problems", "problems e", "problems et", "et problems", "e", "", "zzz",
    "zzzz", "BeTa", "beta_", "fle", "flex", "flex alpha",
]  # fmt: skip
"""Typed one after the other, as a person would: longer (narrowing), shorter, other words."""


@pytest.mark.parametrize("piece", [3, 64, fde_orders.PIECE])
@pytest.mark.parametrize("reverse", [False, True])
def test_an_order_is_python_sorts(monkeypatch: pytest.MonkeyPatch, reverse: bool, piece: int) -> None:
    """Numbers packed with their index (the top of 64 bits included), strings, floats, keys already in order
    (a `range`): ascending and read backwards as `sorted` with a key has them (by index among equals, both
    ways), whatever the pieces the C loops go through at once."""
    monkeypatch.setattr(fde_orders, "PIECE", piece)
    rng = random.Random(19)
    for size in (0, 1, 2, 7, 1000):
        numbers = array("Q", (rng.choice([0, 1, 7, 2**63, 2**64 - 1, rng.getrandbits(64)]) for _ in range(size)))
        words = [rng.choice(WORDS) for _ in range(size)]
        for keys in (numbers, list(numbers), array("Q", sorted(numbers)), words, sorted(words), range(size)):
            made = order_of(keys)
            expected = sorted(range(size), key=keys.__getitem__, reverse=reverse)
            assert list(made.descending() if reverse else made.ascending) == expected
        frames = [rng.choice([-math.inf, 0, 8, 16]) for _ in range(size)]
        made = order_of(frames)
        assert list(made.descending() if reverse else made.ascending) == sorted(
            range(size), key=frames.__getitem__, reverse=reverse
        )


@pytest.mark.parametrize("piece", [3, 64])
def test_an_order_made_at_a_pace_is_the_same_and_paced_every_piece(monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    """The worker's orders wait for the keys between pieces (`pace`): it is called before every piece of every
    C loop (the sorted runs, the merge's buckets, the values read, the runs of equals found), and the order made
    is the one made at once."""
    monkeypatch.setattr(fde_orders, "PIECE", piece)
    rng = random.Random(23)
    size = 40 * piece
    numbers = array("Q", (rng.choice([0, 7, 2**63, rng.getrandbits(64)]) for _ in range(size)))
    words = [rng.choice(WORDS) for _ in range(size)]
    for keys in (numbers, words, range(size)):
        paced: list[int] = []
        made = order_of(keys, lambda paced=paced: paced.append(1))
        assert made == order_of(keys)
        assert len(paced) >= len(keys) // piece, "at least once per piece of the keys"
    calls: list[int] = []
    sort = sorted

    def counted_sort(items, key=None):
        calls.append(1)
        return sort(items, key=key)

    monkeypatch.setattr(fde_orders, "sorted", counted_sort, raising=False)
    paces: list[int] = []
    order_of(numbers, lambda: paces.append(len(calls)))
    # Between two paces, one sort (a piece, or a bucket), and once the sample the buckets are cut by
    between = [b - a for a, b in zip(paces, [*paces[1:], len(calls)], strict=True)]
    assert max(between) <= 2, between


@pytest.mark.parametrize("piece", [3, 64])
def test_a_column_of_few_values_is_sorted_a_piece_at_a_time(monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    """A column of few values (the FRE type, the frame size) leaves most functions equal to a value of the
    sample the buckets are cut by: those are a bucket of their own, in order already, not sorted. No sort goes
    through more than a piece but the sample's (a bucket held the interpreter 45 ms at a million functions)."""
    monkeypatch.setattr(fde_orders, "PIECE", piece)
    rng = random.Random(29)
    keys = [rng.choice([-math.inf, 8, 16]) for _ in range(40 * piece)]
    sizes: list[int] = []
    sort = sorted

    def measured_sort(items, key=None):
        items = list(items)
        sizes.append(len(items))
        return sort(items, key=key)

    monkeypatch.setattr(fde_orders, "sorted", measured_sort, raising=False)
    made = order_of(keys, lambda: None)
    assert list(made.ascending) == sort(range(len(keys)), key=keys.__getitem__)
    assert sorted(sizes)[-2] <= piece, sizes


@pytest.mark.parametrize("piece", [3, 64])
def test_the_runs_of_equal_values_are_found_a_piece_at_a_time(monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    """Where equal values run, from where the values change: as a loop over every pair finds them, and at the
    worker's pace once a piece of the changes (a million distinct values are a million changes)."""
    monkeypatch.setattr(fde_orders, "PIECE", piece)
    rng = random.Random(31)
    for distinct in (1, 2, 40 * piece):
        values = sorted(rng.randrange(distinct) for _ in range(40 * piece))
        changes = [0, *(i for i in range(1, len(values)) if values[i] != values[i - 1]), len(values)]
        expected = [edge for start, end in itertools.pairwise(changes) if end - start > 1 for edge in (start, end)]
        paced: list[int] = []
        assert list(fde_orders._ties(changes, lambda paced=paced: paced.append(1))) == expected
        assert len(paced) >= (len(changes) - 1) // piece or not expected, "once a piece of the changes"


def _tied_document(functions: int, seed: int) -> Document:
    """A version 2 AMD64 section of `functions` functions, one row each, whose starts and sizes repeat (not
    sorted: the header does not say so), so that every column has runs of equal values."""
    rng = random.Random(seed)
    header = struct.pack("<HBB", 0xDEE2, 2, 0) + struct.pack(
        "<BbbBIIIII", 3, 0, -8, 0, functions, functions, 3 * functions, 0, 20 * functions
    )
    address = 0x100000
    fdes = b"".join(
        struct.pack(
            "<iIIIBBH",
            0x1000 + 16 * rng.randrange(functions // 2) - address,
            rng.choice([7, 16, 32, 48]),
            3 * i,
            1,
            rng.choice([0, 0x20, 0x01]),  # FRE type, key B
            0,
            0,
        )
        for i in range(functions)
    )
    return Document("tied.sframe", raw_section(header + fdes + bytes([0, 0x03, 8]) * functions, address))


def _value(table: FdeTable, column: int, index: int) -> object:
    """What column `column` sorts FDE `index` by, from its facts as `Overview.facts` gives them alone."""
    facts = table.overview.facts(index)
    title = COLUMNS[column].title
    values = {
        "#": index,
        "start": facts.start,
        "end": (facts.start + facts.size) & ADDRESS_MASK,
        "size": facts.size,
        "symbol": table.names[index].lower(),
        "FREs": facts.num_fres,
        "frame": -math.inf if facts.frame is None else facts.frame,
        "FRE type": facts.fre_type,
        "PC type": facts.pc_type,
        "key": facts.pauth_key,
        "notes": note(facts, table.problems.get(index)),
    }
    return values[title]


def _keeps(table: FdeTable, query: str, index: int) -> bool:
    facts = table.overview.facts(index)
    for word in query.lower().split():
        if word in FILTER_WORDS:
            kept = FILTER_WORDS[word](facts)  # a function's `Facts`, as the shapes the words test
        elif word == PROBLEMS:
            kept = facts.broken or index in table.problems
        else:
            kept = word in table.names[index].lower()
        if not kept:
            return False
    return True


async def _agree(doc: Document, seed: int) -> None:
    rng = random.Random(seed)
    app = SfviewApp(doc)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.explorer.fde_table
        count = len(table.overview)
        table.names_changed([rng.choice(WORDS) + rng.choice(["", "", str(rng.randrange(3))]) for _ in range(count)])
        table.set_problems(
            {rng.randrange(count): rng.choice([Severity.ERROR, Severity.WARNING]) for _ in range(count // 5)}
        )
        for column in range(len(COLUMNS)):
            for reverse in (False, True):
                table.sort_by(column, reverse)
                values = [_value(table, column, i) for i in range(count)]
                expected = sorted(range(count), key=values.__getitem__, reverse=reverse)
                assert list(table.order) == expected, (COLUMNS[column].title, reverse)
                for query in rng.sample(FILTERS, 8) if column else FILTERS:
                    table.filter(query)
                    assert list(table.order) == [i for i in expected if _keeps(table, query, i)], query
                table.filter("")
                assert list(table.order) == expected


@pytest.mark.parametrize("seed", range(3))
async def test_sorts_and_filters_of_a_section_with_ties(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(fde_orders, "PIECE", [fde_orders.PIECE, 100, 7][seed])
    await _agree(_tied_document(3000, seed), seed)


async def test_sorts_and_filters_of_a_real_section() -> None:
    await _agree(Document.open(str(DATA / "shapes-x86_64-O2")), 0)


@pytest.mark.parametrize("seed", range(6))
async def test_sorts_and_filters_of_a_damaged_section(tmp_path: Path, seed: int) -> None:
    await _agree(Document.open(str(fuzzed_section(seed, tmp_path))), seed)
