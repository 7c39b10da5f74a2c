"""A section's functions for the engines that go through every row (compare, export), read in bulk.

Most functions of a program share their rows, byte for byte, with another:
what an engine works out from one function's rows relative to its start (an
export's records, a comparison's outcome) holds for every function of the
same shape. `Shapes` hands out each function the bulk reader reads whole as
a `Shaped`, with that shape, and makes its rows the model's `Row`s only when
asked (from the reader's patterns, not Kaitai objects); every other function
is the model's `Function`, errors and all.
"""

from __future__ import annotations

from collections.abc import Iterator

from sfview.errors import InputError, Problems
from sfview.sframe.bulk.reader import Bulk, BulkRow
from sfview.sframe.model.records import OFFSET_SIZES, START_ADDR_SIZES, info_bits
from sfview.sframe.model.section import ADDRESS_MASK, Function, Row, Section, Span


class Shaped:
    """A function the bulk reader read whole, as the engines see it: what `Function` says of it (its rows the
    model's `Row`s, made when first asked for), and its shape, the same for every function whose rows are the
    same bytes.

    PCINC functions only stand in for the model's `Function` (`Shapes.model_function`): a PCMASK one's rows
    repeat every block, which the model's `Function` knows.
    """

    __slots__ = ("_rows", "bulk_rows", "fres_start", "index", "pcmask", "shape", "shapes", "size", "start_address")

    block_size = 0
    error: InputError | None = None
    rows_error: InputError | None = None

    def __init__(
        self,
        shapes: Shapes,
        index: int,
        start_address: int,
        size: int,
        fres_start: int,
        pcmask: bool,
        bulk_rows: list[BulkRow],
        shape: tuple[int, bytes],
    ) -> None:
        self.shapes = shapes
        self.index = index
        self.start_address = start_address
        self.size = size
        self.fres_start = fres_start
        self.pcmask = pcmask
        self.bulk_rows = bulk_rows
        """The rows as the bulk reader read them: (start offset, pattern key)."""
        self.shape = shape
        """The FRE type and the rows' bytes."""
        self._rows: list[Row] | None = None

    @property
    def section(self) -> Section:
        return self.shapes.section

    @property
    def span(self) -> Span:
        section = self.shapes.section
        place = section.fde_start + self.index * section.fde_size
        return Span(place, place + section.fde_size)

    @property
    def rows(self) -> list[Row]:
        """The rows as the model's `Row`s, made on first use from the bulk reader's patterns (not Kaitai objects)."""
        if self._rows is None:
            self._rows = self.shapes.model_rows(self)
        return self._rows

    row_for = Function.row_for


def functions_with_rows(section: Section) -> list[Shaped | Function]:
    """Every function in FDE order, rows decoded (`iter_functions_with_rows`, all at once: compare pairs them)."""
    return list(iter_functions_with_rows(section))


def iter_functions_with_rows(section: Section) -> Iterator[Shaped | Function]:
    """Every function in FDE order, with the model's rows: a PCINC one the bulk reader reads whole as
    `Shaped`, any other as the model's `Function`, errors and all.

    Made one at a time, so that a writer that drops each function once written (export) holds one: the
    model keeps every function it decodes, 85 bytes of memory per section byte for 10,000 functions."""
    return Shapes(section).with_rows()


class Shapes:
    """A section's functions in FDE order for the engines that go through every row (compare, export):
    `Shaped` for each the bulk reader reads whole (PCMASK ones too), the model's `Function` for the others
    (those the bulk reader leaves to the Kaitai path, or whose rows stop short), errors and all.

    A caller has a function's model rows made (`Shaped.rows`) only when it needs them: most functions of a
    program share their shape with another, and what was worked out for that one holds."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self.bulk = Bulk(section)
        self._made: dict[bytes, tuple] = {}
        self._errors = Problems()
        """Why the functions handed out as the model's cannot be decoded, or their rows stop short: the first
        held, the others counted (each function let go once its caller is done with it)."""

    def __iter__(self) -> Iterator[Shaped | Function]:
        data = self.section.data
        for walked in self.bulk.functions():
            if isinstance(walked, int):
                yield self._model(walked)
                continue
            index, start, size, pos, _, block = walked
            rows = block.rows if isinstance(block.rows, list) else list(block.rows)
            if not block.complete:  # the model says why rows stop
                yield self._model(index)
                continue
            shape = (block.info.fre_type, data[pos : pos + block.length])
            yield Shaped(self, index, start, size, pos, block.info.pcmask, rows, shape)

    def with_rows(self) -> Iterator[Shaped | Function]:
        """Every function with the model's rows (`iter_functions_with_rows`)."""
        for item in self:
            yield self.model_function(item) if isinstance(item, Shaped) else item

    def model_function(self, shaped: Shaped) -> Shaped | Function:
        """A function read whole, as one that has the model's rows: the model's own for a PCMASK one (which
        knows the block its rows repeat every), else itself."""
        return self.section.function(shaped.index) if shaped.pcmask else shaped

    def _model(self, index: int) -> Function:
        func = self.section.function(index)
        if func.error is None:
            _ = func.rows  # finds the rows, and why they stop
        for error in (func.error, func.rows_error):
            if error is not None:
                self._errors.append(error)
        return func

    def errors(self) -> Problems:
        """Why the functions handed out so far as the model's (not PCMASK ones read whole) cannot be
        decoded, or their rows stop short: what the engines leave out (the first, and how many)."""
        return self._errors

    def model_rows(self, shaped: Shaped) -> list[Row]:
        """A function's rows as the model's `Row`s (made from the patterns, not Kaitai objects)."""
        made, bulk = self._made, self.bulk
        start, width = shaped.start_address, START_ADDR_SIZES[shaped.shape[0]]
        pos = shaped.fres_start
        rows = []
        for index, (offset, key) in enumerate(shaped.bulk_rows):
            facts = made.get(key)
            if facts is None:
                facts = made[key] = _row_facts(bulk, key)
            end = pos + width + len(key)
            rows.append(Row(index, offset, (start + offset) & ADDRESS_MASK, Span(pos, end), *facts))
            pos = end
        return rows


def _row_facts(bulk: Bulk, key: bytes) -> tuple:
    """A row's fields after its place (`Row`'s info, base_reg, offset_size, offsets, mangled_ra, cfa, fp, ra)."""
    info = key[0]
    pattern = bulk.pattern(key)
    return (
        info,
        info_bits(info, "fre_info", "cfa_base_reg"),
        OFFSET_SIZES[info_bits(info, "fre_info", "offset_size")],
        pattern.offsets,
        pattern.mangled_ra,
        pattern.cfa,
        pattern.fp,
        pattern.ra,
    )
