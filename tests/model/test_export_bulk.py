"""The Breakpad export written from the bulk reader's records is the one written from the model."""

from __future__ import annotations

import pytest
from conftest import ELF_FIXTURES, fuzzed_section

from sfview.document import Document
from sfview.dwarf.cfi import ABIS
from sfview.errors import InputError
from sfview.output.breakpad import section_stack_cfi, stack_cfi
from sfview.sframe.bulk.shapes import Shapes, iter_functions_with_rows
from sfview.sframe.model.section import Section


def _both(data: bytes, address: int, machine: str) -> tuple[tuple, tuple]:
    """The records from the bulk reader's light records, and from a model of its own that decodes each;
    and those written by shape (what `export` writes) are the first."""
    abi = ABIS[machine]
    light = stack_cfi(iter_functions_with_rows(Section(data, address)), abi, 0)
    records, problems = section_stack_cfi(Shapes(Section(data, address)), abi, 0)
    assert ([line for function in records for line in function], problems) == light
    return light, stack_cfi(Section(data, address).functions(), abi, 0)


@pytest.mark.parametrize("path", [p for p in ELF_FIXTURES if "no-sframe" not in p.name], ids=lambda p: p.name)
def test_light_records_write_what_the_model_writes(path) -> None:
    doc = Document.open(str(path))
    light, model = _both(doc.data, doc.address, doc.elf["e_machine"])
    assert light == model and light[0]


@pytest.mark.parametrize("seed", range(40))
def test_on_damaged_sections_too(tmp_path, seed: int) -> None:
    data = fuzzed_section(seed, tmp_path).read_bytes()
    try:
        light, model = _both(data, 0x1000, "EM_X86_64")
    except InputError:  # a section the model refuses has nothing to export
        return
    assert light == model
