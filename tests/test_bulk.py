"""The bulk reader and the Kaitai model say the same thing, error text included.

`sfview dump` reads sections in bulk (`sframe/bulk/reader.py`, `struct` formats from
the generated layout) and hands anything unusual to the Kaitai model. Both
paths must give the same text and stop at the same error: on every fixture,
and on thousands of sections with random damage.
"""

from __future__ import annotations

import random

import pytest
from conftest import ELF_FIXTURES, SECTIONS, load_section_fixture, v3_section
from test_v3_flexible import AMD64_ROWS, PCREL_SORTED

from sfview.document import Document
from sfview.errors import InputError
from sfview.output.readelf import text
from sfview.sframe.bulk.reader import Bulk, bare_function, functions_with_rows
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


def _sections() -> list[tuple[str, bytes, int]]:
    out = [(path.stem, *load_section_fixture(path)[:2]) for path in SECTIONS]
    for path in ELF_FIXTURES:
        if path.exists() and not path.name.endswith("-no-sframe"):
            source = Document.open(str(path)).source
            out.append((path.name, source.data, source.address))
    flexible = v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED)
    out.append(("flexible", flexible, 0))
    return out


SAMPLES = _sections()


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_bulk_and_model_agree_on_fixtures(name: str, data: bytes, address: int) -> None:
    _both(data, address)


def _mutants(seed: int, count: int) -> list[bytes]:
    """Sections with bytes flipped, fields overwritten with extreme values, or cut short."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        _, data, _ = rng.choice(SAMPLES)
        mutant = bytearray(data)
        kind = rng.randrange(4)
        if kind == 0:
            for _ in range(rng.randint(1, 6)):
                mutant[rng.randrange(2, len(mutant))] = rng.randrange(256)
        elif kind == 1:
            at = rng.randrange(2, max(3, len(mutant) - 4))
            value = rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF])
            mutant[at : at + 4] = value.to_bytes(4, "little" if data[0] == 0xE2 else "big")
        elif kind == 2:
            del mutant[rng.randrange(2, len(mutant)) :]
        else:
            bit = rng.randrange(16, len(mutant) * 8)
            mutant[bit // 8] ^= 1 << (bit % 8)
        out.append(bytes(mutant))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_bulk_and_model_agree_on_damaged_sections(seed: int) -> None:
    for mutant in _mutants(seed, 600):
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
        assert (str(func.error), str(func.rows_error)) == (str(expected.error), str(expected.rows_error))
        assert [_facts(row) for row in func.rows] == [_facts(row) for row in expected.rows]


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_rows_for_compare_and_export_are_the_models(name: str, data: bytes, address: int) -> None:
    _rows_both_ways(data, address)


def test_rows_for_compare_and_export_are_the_models_in_damaged_sections() -> None:
    for mutant in _mutants(7, 400):
        _rows_both_ways(mutant)


def _bare_as_records(data: bytes) -> None:
    """`Bulk.functions(bare=True)` (what dump reads) against `functions()`: the same functions in the same
    order, a bare one the same record and rows as the reader's `FastFunction` of it (shared, all read)."""
    try:
        section = Section(data)
    except InputError:
        return
    bares = 0
    for bare, walked in zip(Bulk(section).functions(bare=True), Bulk(section).functions(), strict=True):
        if isinstance(bare, tuple) and len(bare) == 6:
            bares += 1
            func, rows = walked
            assert (bare_function(bare), bare[-1].rows) == (func, rows)
            assert func.shared and func.complete
        elif isinstance(bare, int):
            assert bare == walked
        else:
            assert (bare[0], list(bare[1])) == (walked[0], list(walked[1]))
    assert bares or not any(isinstance(w, tuple) and w[0].shared and w[0].complete for w in Bulk(section).functions())


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_bare_functions_are_the_records(name: str, data: bytes, address: int) -> None:
    _bare_as_records(data)


def test_bare_functions_are_the_records_in_damaged_sections() -> None:
    for mutant in _mutants(11, 400):
        _bare_as_records(mutant)
