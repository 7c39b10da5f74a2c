"""The model's functions bounded by the section's bytes: a pass over every function through the model (each
one unusual, as the bulk reader hands them over) holds a few at a time, and a lookup in an unsorted section
decodes only the functions that hold the address.

The sections are written here from the specification (version 2, AMD64): `count` functions 16 bytes apart,
each with one row of 3 bytes, their FDEs in the order asked.
"""

from __future__ import annotations

import gc
import io
import struct
import tracemalloc
from collections.abc import Callable

import pytest
from handmade import SAMPLES

from sfview import uncollected
from sfview.document import Document
from sfview.dwarf.cfi import ABIS
from sfview.inputs.opening import raw_section
from sfview.output import jsondoc, readelf
from sfview.output.breakpad import section_stack_cfi
from sfview.sframe.bulk.reader import LISTED_ROWS, Bulk
from sfview.sframe.bulk.shapes import Shapes
from sfview.sframe.model.section import KEPT_FUNCTIONS, Section


def _section(count: int, *, sorted_: bool, rows_claimed: int = 1) -> bytes:
    """`count` functions of 16 bytes at 0x1000 on, their FDEs listed last to first unless `sorted_`, all
    pointing at one row (a CFA of SP+8); each claims `rows_claimed` rows."""
    order = range(count) if sorted_ else range(count - 1, -1, -1)
    fdes = b"".join(struct.pack("<iIIIBBH", 0x1000 + 16 * i, 16, 0, rows_claimed, 0, 0, 0) for i in order)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, int(sorted_), 3, 0, -8, 0, count, 1, 3, 0, len(fdes))
    return header + fdes + bytes([0, 0x03, 8])


PER_FUNCTION = 200
"""Bytes of memory a damaged function may add, for an FDE of 20 bytes: what the export writes of it at the end
(its start, size and steps' number) and no object of the model's."""


class _Discarded(io.TextIOBase):
    """A text stream that keeps nothing written to it."""

    def write(self, text: str) -> int:
        return len(text)


def _peak(work: object) -> int:
    tracemalloc.start()
    try:
        work()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_pass_over_every_function_holds_a_few() -> None:
    """20,000 functions each claiming more rows than the section holds (the bulk reader hands each to the
    model to say why): every `Function` was kept, about 1.5 KB each for an FDE of 20 bytes."""
    data = _section(20_000, sorted_=True, rows_claimed=1000)
    section = Section(data)

    def every() -> None:
        for index in range(len(section)):
            assert section.function(index).rows.error is not None

    assert _peak(every) < 10 * len(data) + (1 << 20)
    assert section.function(7) is section.function(7)  # one object while it is held


def test_a_lookup_in_an_unsorted_section_decodes_what_holds_the_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unsorted section of 20,000 functions: each lookup decoded and kept every function."""
    section = Section(_section(20_000, sorted_=False))
    decoded: list[int] = []
    decode = Section._decode_function
    monkeypatch.setattr(Section, "_decode_function", lambda self, index: decoded.append(index) or decode(self, index))
    func = section.find_function(0x1000 + 16 * 123 + 5)
    assert func is not None and func.start_address == 0x1000 + 16 * 123 and func.index == 20_000 - 1 - 123
    assert section.find_function(0x1000 + 16 * 20_000) is None
    before, after = section.around(0x1000 + 16 * 500 + 4)
    assert before is not None and after is not None
    assert (before.start_address, after.start_address) == (0x1000 + 16 * 500, 0x1000 + 16 * 501)
    assert len(decoded) <= 3


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_dump_of_damaged_functions_holds_the_first_problem_and_a_count(form: str) -> None:
    """20,000 functions each claiming rows the section does not hold: `dump` kept every problem (some 300
    bytes each) to say the first and how many more."""
    data = _section(20_000, sorted_=True, rows_claimed=1000)
    out = _Discarded()
    found = []

    def dump() -> None:
        if form == "json":
            found.append(jsondoc.write(Document("damaged", raw_section(data, 0)), out))
        else:
            found.append(readelf.write(Section(data), out))

    assert _peak(dump) < 10 * len(data) + (1 << 20)
    (errors,) = found
    assert len(errors) == 20_000
    assert "fdes[0].func_num_fres = 1000" in errors[0].message


def test_the_bulk_reader_leaves_no_cycles_behind() -> None:
    """Blocks whose rows are an iterator never gone through (each function claiming more rows than
    `LISTED_ROWS`, handed to the model) were each a cycle with it: `stats`, which pauses the cyclic collector,
    kept 120 MB for a section of 3.2 MB."""
    data = _section(20_000, sorted_=True, rows_claimed=LISTED_ROWS + 1)

    def every() -> None:
        gc.disable()
        try:
            for _ in Bulk(Section(data)).functions():
                pass
        finally:
            gc.enable()

    assert _peak(every) < 10 * len(data) + (1 << 20)


def _growth(work: Callable[[Section], object]) -> float:
    """The peak memory `work` takes on a section of damaged functions, with the cyclic collector paused as
    `compare` and `export` pause it: bytes more per function from 1,000 functions to 3,000."""

    def peak(count: int) -> int:
        section = Section(_section(count, sorted_=True, rows_claimed=1000))

        def paused() -> None:
            with uncollected():
                work(section)

        return _peak(paused)

    peak(10)  # the modules imported
    return (peak(3000) - peak(1000)) / 2000


def test_damaged_functions_are_let_go_with_the_collector_paused() -> None:
    """Each function claiming rows the section does not hold, handed to the model and let go: a function held
    its rows and its rows it, and each Kaitai object its children and they it, cycles kept until the cyclic
    collector runs (some 2 KB a function)."""

    def every(section: Section) -> None:
        for index in range(len(section)):
            assert section.function(index).rows.error is not None

    assert _growth(every) < PER_FUNCTION


def test_export_keeps_no_damaged_function() -> None:
    """`export`'s writer through `Shapes`, which kept every function it handed over as the model's (to say
    their errors at the end), and a copy of each one's steps (some 2.8 KB a function)."""
    errors = []

    def export(section: Section) -> None:
        shapes = Shapes(section)
        records, _ = section_stack_cfi(shapes, ABIS["EM_X86_64"], 0)
        for _ in records:
            pass
        errors.append(shapes.errors())

    assert _growth(export) < PER_FUNCTION
    assert [len(e) for e in errors] == [10, 3000, 1000] and "fdes[0].func_num_fres = 1000" in errors[1][0].message


@pytest.mark.parametrize("name, data, address", SAMPLES, ids=[name for name, _, _ in SAMPLES])
def test_functions_and_rows_let_go_leave_no_cycles(name: str, data: bytes, address: int) -> None:
    """Every function of each fixture section (all versions, ABIs and FDE types, flexible rows too) decoded
    with its rows and let go: nothing is left for the cyclic collector (the functions the section keeps, the
    last asked for, are one function asked for again)."""
    section = Section(data, address)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept, to be told ours or not
    try:
        for func in section.functions():
            assert len(list(func.rows)) == len(func.rows)
        for _ in range(KEPT_FUNCTIONS):
            section.function(0)
        gc.collect()
        # ours alone: what other tests' threads let go meanwhile (an app's, a pool's) is not this section's
        left = [type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("sfview")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
