"""The overview (one pass of the bulk reader) says what the model says of every function.

The FDE table sorts, filters and sizes its columns from `Overview`, never
from a `Function` per FDE: each fact must be the model's, on every fixture,
on version 3 flexible FDEs (which the bulk reader hands to the model) and on
damaged sections.
"""

from __future__ import annotations

import random

import pytest
from conftest import fuzzed_section, v3_section
from handmade import AMD64_ROWS, PCREL_SORTED, SAMPLES

from sfview import ADDRESS_MASK
from sfview.errors import InputError
from sfview.sframe.bulk.overview import Facts, Overview
from sfview.sframe.model.rules import Kind
from sfview.sframe.model.section import Section


def _model_facts(section: Section, index: int) -> Facts:
    """What the model says of FDE `index`, worked out here from its rows."""
    func = section.function(index)
    rows = func.rows
    offsets = [row.cfa.offset for row in rows if row.cfa.kind is Kind.VALUE and not row.cfa.deref]
    count, fre_type = func.num_fres, func.fre_type
    if func.error is not None:  # an FDE that could not be decoded: what its bytes say
        count, fre_type = (0 if value is None else value for value in func.stored())
    return Facts(
        func.start_address,
        func.size,
        count,
        max(offsets) if offsets else None,
        fre_type,
        func.pc_type,
        func.pauth_key,
        func.signal,
        func.flexible,
        func.error is not None or func.rows_error is not None,
    )


def _agree(data: bytes, address: int) -> None:
    try:
        section = Section(data, address)
    except InputError:
        return
    alone = Overview(Section(data, address))  # before the pass: each function read alone
    overview = Overview.of(section)
    model = Section(data, address)  # decoded anew: the overview may not lean on what it decoded
    expected = [_model_facts(model, i) for i in range(len(model))]
    assert [overview.facts(i) for i in range(len(overview))] == expected
    assert [alone.facts(i) for i in range(len(alone))] == expected
    rows = [row for func in model.functions() for row in func.rows]
    assert overview.rules == {(row.cfa, row.fp, row.ra) for row in rows}
    assert overview.widest_row == max((len(row.span) for row in rows), default=0)
    assert overview.most_rows == max((len(func.rows) for func in model.functions()), default=0)
    ends = [func.end_address for func in model.functions()] + [row.address for row in rows]
    assert overview.last_address == max((end & ADDRESS_MASK for end in ends), default=0)


@pytest.mark.parametrize(("name", "data", "address"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_the_overview_and_the_model_agree(name: str, data: bytes, address: int) -> None:
    _agree(data, address)


def test_a_flexible_function_is_counted_as_one() -> None:
    data = v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED)
    overview = Overview.of(Section(data))
    assert overview.column("flexible") == [True] and overview.flexible_count == 1
    _agree(data, 0)


@pytest.mark.parametrize("seed", range(150))
def test_damaged_sections(tmp_path, seed: int) -> None:
    _agree(fuzzed_section(seed, tmp_path).read_bytes(), random.Random(seed).choice([0, 0x401000]))


def test_columns_hold_one_fact_of_every_function() -> None:
    _, data, address = next(s for s in SAMPLES if s[0] == "shapes-x86_64-O2")
    overview = Overview.of(Section(data, address))
    functions = [overview.facts(i) for i in range(len(overview))]
    assert list(overview.column("size")) == [f.size for f in functions]
    assert overview.column("frame") == [f.frame for f in functions]
    assert [f.pcmask for f in functions].count(True) == overview.pcmask_count == 1, "the PLT"
    assert list(overview.passing(lambda shape: shape.pcmask)) == [int(f.pcmask) for f in functions]


def test_functions_share_their_shapes() -> None:
    """A few bytes a function: its shape (frame, encoding, attributes) is one of a few, kept once."""
    _, data, address = next(s for s in SAMPLES if s[0] == "shapes-x86_64-O2")
    overview = Overview.of(Section(data, address))
    assert len(overview.shapes) < len(overview)
    assert sum(overview.shape_counts.values()) == len(overview)


def test_a_sample_sizes_what_it_read_before_the_pass() -> None:
    """Before the pass, the figures are those of the functions read alone; the pass makes them whole."""
    _, data, address = next(s for s in SAMPLES if s[0] == "shapes-x86_64-O2")
    section = Section(data, address)
    overview = Overview(section)
    overview.sample([0])
    first = section.function(0)
    assert not overview.ready and overview.most_rows == len(first.rows)
    assert overview.rules == {(row.cfa, row.fp, row.ra) for row in first.rows}
    overview.build(Section(data, address))
    whole = Overview.of(Section(data, address))
    assert overview.ready and overview.done == len(overview)
    assert (overview.rules, overview.most_rows, overview.last_address) == (
        whole.rules,
        whole.most_rows,
        whole.last_address,
    )
