"""Each libsframe release's verdict on a section: `sframe_decode`'s answer, then the lookups at every PC.

The PCs judged are those of every function the section describes, as the
format reads it (a function whose rows sfview cannot read included: the
library walks them all the same), each function's PCs from its start to its
end or to the next function's start, whichever comes first, so that a
damaged size does not judge the PCs of the functions after it twice. Where
sfview cannot read the section at all, the functions are those the library
itself holds.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Iterator, Sequence

from sfview import ADDRESS_MASK
from sfview.consumers import FailuresBound, LookupFailure, LookupFailures, Profile, Verdict, register
from sfview.consumers.libsframe import (
    Crash,
    Decoder,
    Fre,
    Refusal,
    Unjudged,
    describe,
    named,
    outcome,
    own_order,
    relative,
)
from sfview.consumers.libsframe_lookups import Budget, Lookups, row_bound
from sfview.consumers.libsframe_releases import NEWEST, RELEASES, Release
from sfview.errors import InputError
from sfview.sframe.bulk.reader import Bulk
from sfview.sframe.model.section import Section

END = 1 << 64
RUNS_PER_BYTE = 1
"""The most runs of answers a verdict gives per byte of the section (a PCMASK function claiming gigabytes
whose lookups fail every few bytes: each failing range is listed, 28 bytes held and some microseconds of
work each; past the bound, the verdict says where it stopped). A real section's rows take 3 bytes or more
each, and a stretch of PCMASK blocks finding rows is one run (`Periodic`)."""


def _functions(dec: Decoder, data: bytes, address: int, rows: bool) -> Iterator[tuple[int, int, int, array | None]]:
    """(index, start, size, the format's row starts or None) of every function, by the format when sfview
    reads the section, else by the library's own FDE table; the row starts only when `rows` asks, and only
    where they increase (packed: a function may have 65,535 rows)."""
    try:
        section = Section(data, address)
    except InputError:
        for index in range(len(dec._table)):
            yield index, (address + dec.start(index)) & ADDRESS_MASK, dec.fde(index).size, None
        return
    for walked in Bulk(section).functions(None if rows else lambda pos, count: True):  # rows read if asked
        if isinstance(walked, int):
            func = section.function(walked)
            yield walked, func.start_address, func.size, None
        else:
            index, start, size, _, _, block = walked
            if not rows:
                yield index, start, size, None
                continue
            starts = None if block.info.pcmask else array("I", (r[0] for r in block.rows))
            rising = starts is not None and all(a < b for a, b in itertools.pairwise(starts))
            yield index, start, size, starts if rising else None


def domains(
    dec: Decoder, data: bytes, address: int, rows: bool = False
) -> Iterator[tuple[int, int, int, Sequence[int] | None]]:
    """(index, start, end, row starts) in index order: each function's PCs, up to the next function's start
    and 2^64 (the format's row starts only when `rows` asks). Held as columns of numbers, a tuple made as
    each is given."""
    indexes, starts, lasts = array("I"), array("Q"), array("Q")
    row_from, has_rows, row_starts = array("Q"), array("B"), array("I")
    """Where each function's row starts begin in `row_starts` (one more: their end), and whether it has any."""
    for index, start, size, found in _functions(dec, data, address, rows):
        if size:
            indexes.append(index)
            starts.append(start)
            lasts.append(min(start + size, END) - 1)
            row_from.append(len(row_starts))
            has_rows.append(found is not None)
            row_starts.extend(found or ())
    row_from.append(len(row_starts))
    ascending = all(a < b for a, b in itertools.pairwise(indexes))
    by_index = range(len(indexes)) if ascending else array("Q", sorted(range(len(indexes)), key=indexes.__getitem__))
    in_order = all(starts[i] <= starts[j] for i, j in itertools.pairwise(by_index))
    order = by_index if in_order else sorted(by_index, key=starts.__getitem__)  # stable: by start, then index
    for i, j in itertools.pairwise(order):
        if starts[j] > starts[i]:
            lasts[i] = min(lasts[i], starts[j] - 1)
    del order
    found = None  # (the last function's row starts let go: `row_starts` holds them)
    view = memoryview(row_starts)
    for i in by_index:
        found = view[row_from[i] : row_from[i + 1]] if has_rows[i] else None  # (a view: not copied)
        yield indexes[i], starts[i], lasts[i] + 1, found


def lookups(dec: Decoder, data: bytes, address: int) -> tuple[LookupFailures, list[str]]:
    """The lookups that fail or crash at every PC of every function, and notes: PCs given another row than
    the format's, and where the judging stopped if a bound was met (on the work, or on the failing ranges
    listed: `LookupFailures`)."""
    bound = row_bound(data)
    claimed = sum(min(fde.num_fres, len(data)) for fde in dec._table)  # no more rows than bytes: a row has 2
    compared = claimed <= bound
    engine = Lookups(dec, RUNS_PER_BYTE * len(data) + 4096, bound, rows_alike=not compared)
    failures = LookupFailures(len(data))
    other, first_other = 0, ""
    notes: list[str] = []
    if not compared:
        notes.append(f"rows not compared with the format's: the functions claim {claimed} rows, more than {bound}")
    try:
        for index, start, end, rows in domains(dec, data, address, compared):
            rel = relative(start, address)
            for run in engine.runs([(rel, rel + end - start)], alike=rows is None):  # rows found: only compared
                low, high = start + run.start - rel, start + run.end - rel
                found = run.outcome
                if not isinstance(found, Fre):
                    error = "crash" if isinstance(found, Crash) else named(found.error)
                    failures.add(LookupFailure(low, high, error, found.rule, index))
                elif rows:
                    wrong = _other_row(rows, found.start, low - start, high - start)
                    if wrong and not other:
                        first_other = f"{low:#x} (function {index}: row at +{found.start:#x})"
                    other += wrong
    except Budget as stop:
        pc = (address + stop.pc) & ADDRESS_MASK
        notes.append(f"lookups past {pc:#x} not judged: {stop.reason}")
    except FailuresBound as full:
        notes.append(full.note)
    if other:
        notes.insert(0, f"{other} PCs get another row than the format's, first at {first_other}")
    return failures, notes


def _other_row(rows: Sequence[int], found: int, low: int, high: int) -> int:
    """How many offsets in [low, high) the format gives a row other than the one starting at `found`."""
    if not rows:
        return 0
    i = max(bisect.bisect_right(rows, low) - 1, 0)
    wrong = 0
    while i < len(rows) and rows[i] < high:
        a = max(rows[i], low) if i else low
        b = min(rows[i + 1], high) if i + 1 < len(rows) else high
        if a < b and rows[i] != found:
            wrong += b - a
        i += 1
    return wrong


def judge(rel: Release, data: bytes, address: int = 0) -> Verdict:
    """The release's verdict on a host of the section's own byte order, the other order in a note."""
    order = own_order(data)
    result = outcome(rel, data, order)
    host = "big" if order == "<" else "little"
    swapped = describe(outcome(rel, data, "<" if order == ">" else ">"))  # its decoder let go before the lookups
    notes = [f"on a {host}-endian host (the byte-swapping walk): {swapped}"]
    name = f"libsframe-{rel.name}"
    assert not isinstance(result, Unjudged)  # the section's own byte order takes no byte-swapping walk
    if isinstance(result, Crash):
        return Verdict(name, False, "crash", result.rule, result.offset, notes=notes)
    if isinstance(result, Refusal):
        return Verdict(name, False, named(result.error), result.rule, result.offset, notes=notes)
    failures, more = lookups(result, data, address)
    return Verdict(name, True, lookups=failures, notes=more + notes)


def _profile(name: str, rel: Release) -> Profile:
    title = f"binutils {rel.name}'s libsframe (sframe_decode, sframe_find_fre)"
    return register(Profile(name, title, lambda data, address: judge(rel, data, address)))


for _name, _rel in RELEASES.items():
    _profile(f"libsframe-{_name}", _rel)
_profile("libsframe", RELEASES[NEWEST])
