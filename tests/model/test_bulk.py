"""The bulk reader and the Kaitai model say the same thing, error text included.

`sfview dump` reads sections in bulk (`sframe/bulk/reader.py`, `struct` formats from
the generated layout) and hands anything unusual to the Kaitai model. Both
paths must give the same text and stop at the same error: on every fixture,
and on thousands of sections with random damage.
"""

from __future__ import annotations

import pytest
from handmade import SAMPLES, mutants

from sfview.errors import InputError
from sfview.output.readelf import text
from sfview.sframe.bulk.reader import Bulk
from sfview.sframe.bulk.shapes import functions_with_rows
from sfview.sframe.model.section import Row, Section


def _both(data: bytes, address: int = 0) -> None:
    """Dump `data` both ways (when it has a header at all) and require the same text and error."""
    try:
        fast_section = Section(data, address)
    except InputError:
        return  # no header: neither path has anything to say beyond the header's error
    fast, fast_errors = text(fast_section)
    slow, slow_errors = text(Section(data, address), bulk=False)
    assert fast == slow
    assert [(str(e), e.offset) for e in fast_errors] == [(str(e), e.offset) for e in slow_errors]


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_bulk_and_model_agree_on_fixtures(name: str, data: bytes, address: int) -> None:
    _both(data, address)


@pytest.mark.parametrize("seed", range(4))
def test_bulk_and_model_agree_on_damaged_sections(seed: int) -> None:
    for mutant in mutants(seed, 600):
        _both(mutant)


def _facts(row: Row) -> tuple:
    """Everything a row holds but its Kaitai object (the bulk reader has none)."""
    return tuple(getattr(row, name) for name in Row.__slots__ if name != "kaitai")


def _rows_both_ways(data: bytes, address: int = 0) -> None:
    """`functions_with_rows` (what compare and export read) against the model: the same functions,
    facts and rows (every field but the Kaitai object), or the model's own function where it fails."""
    try:
        fast_section, model = Section(data, address), Section(data, address)
    except InputError:
        return
    for func in functions_with_rows(fast_section):
        expected = model.function(func.index)
        assert (func.start_address, func.size, func.span, func.pcmask, func.block_size) == (
            expected.start_address,
            expected.size,
            expected.span,
            expected.pcmask,
            expected.block_size,
        )
        assert [_facts(row) for row in func.rows] == [_facts(row) for row in expected.rows]
        # (after the rows: a function's `rows_error` is known once its rows have been read)
        assert (str(func.error), str(func.rows_error)) == (str(expected.error), str(expected.rows_error))


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_rows_for_compare_and_export_are_the_models(name: str, data: bytes, address: int) -> None:
    _rows_both_ways(data, address)


def test_rows_for_compare_and_export_are_the_models_in_damaged_sections() -> None:
    for mutant in mutants(7, 400):
        _rows_both_ways(mutant)


def _functions_as_model(data: bytes) -> None:
    """Every `BulkFunction` (what dump, JSON, check and the overview read) against the model's `Function`:
    the same start, size, rep size, row count and info byte fields, rows that start where the model's do,
    and that stop where the model's stop."""
    try:
        section, model = Section(data), Section(data)
    except InputError:
        return
    for walked in Bulk(section).functions():
        if isinstance(walked, int):
            continue
        index, start, size, pos, rep_size, block = walked
        func, info = model.function(index), block.info
        starts = [offset for offset, _ in block.rows]
        assert (start, size, pos, rep_size, block.count) == (
            func.start_address,
            func.size,
            func.fres_start,
            func.rep_size,
            func.num_fres,
        )
        assert (info.fre_type, info.pc_type, info.pauth_key, info.signal) == (
            func.fre_type,
            func.pc_type,
            func.pauth_key,
            func.signal,
        )
        assert starts == [row.start_offset for row in func.rows]
        positions = func.rows.positions
        assert (block.complete, pos + block.length) == (
            func.rows_error is None,
            positions[-1] if len(positions) else func.fres_start,
        )


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_bulk_functions_are_the_models(name: str, data: bytes, address: int) -> None:
    _functions_as_model(data)


def test_bulk_functions_are_the_models_in_damaged_sections() -> None:
    for mutant in mutants(11, 400):
        _functions_as_model(mutant)
