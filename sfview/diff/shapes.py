"""A function as `diff` compares it: what its rows mean, and how they are written.

Two functions mean the same when an unwinder gets the same CFA, FP and RA rules at every PC of them:
the row boundaries and the FRE type do not matter, nor whether an RA offset is the header's fixed one
(`f`) or written out (`c-8`), nor a padding word against "not saved". So the meaning is the rows with
their rules in plain form (kind, base, offset, deref), each row that repeats the one before it dropped,
and the FDE's own say (signal frame, PAuth key, the block a PCMASK function's rows repeat every). The
encoding is the bytes: the FDE's info byte, its rep size, its type, and the rows' bytes.

Both are made once per block of rows the bulk reader hands out (`Block.made`): most functions share
theirs with another.
"""

from __future__ import annotations

from typing import NamedTuple

from sfview.sframe.bulk.reader import Block, Bulk
from sfview.sframe.model.rules import Kind, Rule, rule
from sfview.sframe.model.section import Function, Row

MeaningRow = tuple[int, Rule, Rule, Rule, bool]
"""From this offset on: the CFA, FP and RA rules in plain form, and whether the RA is signed."""


class Meaning(NamedTuple):
    """What a function's rows tell an unwinder, whatever their encoding."""

    signal: bool
    pauth_key: int
    """The PAuth key that signs the RA; 0 when no row signs it (the key says nothing then)."""
    period: int
    """A PCMASK function's block size: its rows repeat every so many bytes; 0 for any other."""
    rows: tuple[MeaningRow, ...]


class Shape(NamedTuple):
    """A function's rows as `diff` compares them: their meaning and their encoding."""

    meaning: Meaning
    encoding: tuple[int, int, int, bytes]
    """The FDE's info byte, rep size and type, and the rows' bytes."""
    rows: int
    """How many rows are written."""
    last: int
    """The offset of the last row written (-1 for none): the meaning holds for a function longer than it."""
    fre_type: int
    length: int
    """The rows' bytes."""


def plain(value: Rule) -> Rule:
    """A rule as what it computes: whether its offset is the header's fixed one, or it is the padding word,
    is how it is written, not what it means."""
    if not value.fixed and not value.padding:
        return value
    if value.kind is Kind.VALUE:
        return rule(value.kind, value.base, value.offset, value.deref)
    return rule(value.kind)


def meaning_rows(rows: list[tuple[int, Rule, Rule, Rule, bool]]) -> tuple[MeaningRow, ...]:
    """Rows in start order, each that repeats the rules of the one before dropped."""
    out: list[MeaningRow] = []
    before = None
    for offset, cfa, fp, ra, mangled in rows:
        rules = (plain(cfa), plain(fp), plain(ra), mangled)
        if rules != before:
            out.append((offset, *rules))
            before = rules
    return tuple(out)


class BulkShapes:
    """The shapes of the functions one bulk reader reads whole, each made once per block."""

    def __init__(self, bulk: Bulk) -> None:
        self.bulk = bulk
        self._plain: dict[bytes, tuple[Rule, Rule, Rule, bool]] = {}

    def of_block(self, block: Block, pos: int, rep: int, rows: list) -> Shape:
        """The shape of a block of rows (kept in `block.made` by the caller), read from section offset `pos`."""
        plains = self._plain
        pattern = self.bulk.pattern
        written = []
        for offset, key in rows:
            found = plains.get(key)
            if found is None:
                p = pattern(key)
                found = (p.cfa, p.fp, p.ra, p.mangled_ra)
                if len(plains) < self.bulk.kept_max:
                    plains[key] = found
            written.append((offset, *found))
        info = block.info
        meaning = Meaning(info.signal, _key_if_signed(info.pauth_key, written), 0, meaning_rows(written))
        data = self.bulk.data[pos : pos + block.length]
        last = max((offset for offset, _ in rows), default=-1)
        return Shape(meaning, (info.byte, rep, 0, data), len(rows), last, info.fre_type, block.length)


def of_function(func: Function) -> Shape:
    """The shape of a function the model reads (PCMASK, flexible, or one the bulk reader leaves to it);
    its `error` and `rows_error` say what could not be read."""
    rows: list[Row] = list(func.rows)
    written = [(row.start_offset, row.cfa, row.fp, row.ra, row.mangled_ra) for row in rows]
    period = func.block_size if func.pcmask else 0
    meaning = Meaning(func.signal, _key_if_signed(func.pauth_key, written), period, meaning_rows(written))
    data = func.section.data
    start, end = (rows[0].span.start, rows[-1].span.end) if rows else (func.fres_start, func.fres_start)
    encoding = (func.info_byte, func.rep_size, func.fde_type, data[start:end])
    last = max((row.start_offset for row in rows), default=-1)
    return Shape(meaning, encoding, len(rows), last, func.fre_type, end - start)


def _key_if_signed(key: int, written: list[tuple[int, Rule, Rule, Rule, bool]]) -> int:
    return key if any(row[4] for row in written) else 0
