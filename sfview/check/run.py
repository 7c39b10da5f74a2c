"""Running the checks of `catalogue.py` over a section: every problem, named at its bytes.

Functions and rows come from the bulk reader (`sframe/bulk/reader.py`), so that a
large section is checked without an object per function or row; a function
the bulk reader finds unusual is read through the model, whose errors name
the exact bytes. Work is bounded by the section's size, never by counts in
the header, however the functions' rows overlap (a function whose rows start
in rows already read is read through `shared.py`, each row once), and
diagnostics are produced as they are found (an iterator), so
that a section with a million bad rows costs no more memory than a good one:
a check that fires on many rows of one function says so a few times, then
once with the count.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from sfview.check.catalogue import CHECKS, Check, Severity
from sfview.check.shared import NAMED, Chain, SharedRows
from sfview.document import Document
from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.bulk.reader import Bulk, BulkFunction
from sfview.sframe.model import terms
from sfview.sframe.model.records import START_ADDR_SIZES, info_bits
from sfview.sframe.model.rules import Kind, Rule
from sfview.sframe.model.section import Function, Placed, Row, Section

HEADER_AT = layout.PREAMBLE.size
"""Where the header's fields start (after the preamble)."""

FDE_TYPES = {int(t) for t in Sframe.FdeType}

SAME_CHECK_PER_FUNCTION = 3
"""How many times one check speaks about the rows of one function before it only counts."""

PACE_EVERY = 256
"""Functions checked between two calls of `check`'s `pace`: few enough for a caller's key to wait little."""


class Diagnostic(NamedTuple):
    """One problem: which check, what is wrong and what was expected, and where.

    A named tuple rather than a frozen dataclass: a section of a million functions makes millions of
    them, most only counted past `--max-problems`, and a tuple is made in a fraction of the time. For
    the same reason the checks that speak of every function word their message only when it is read.
    """

    check: Check
    wording: str | Wording
    """The message, or what words it when read (`message`)."""
    start: int
    """Section offset of the first byte concerned."""
    end: int
    path: str
    """The field, as the structure tree names it (`fdes[2].func_num_fres`)."""
    fde: int | None = None
    """The function concerned, if one is."""
    fre: int | None = None
    """The row concerned, if one is."""

    @property
    def severity(self) -> Severity:
        return self.check.severity

    @property
    def message(self) -> str:
        """What is wrong and what was expected."""
        wording = self.wording
        return wording if isinstance(wording, str) else wording[0].format(*wording[1])


Wording = tuple[str, tuple[object, ...]]
"""A message's `str.format` template and its values, worded when read."""


@dataclass(frozen=True)
class Program:
    """What the ELF file around the section says about code: where it is, and which addresses are named."""

    text: list[tuple[int, int]]
    """Executable address ranges [start, end)."""
    named: Callable[[int], bool] | None
    """Whether a symbol starts at the address; None when the file has no symbols (stripped)."""


def _diag(
    check_id: str,
    message: str | Wording,
    start: int,
    end: int,
    path: str | None,
    fde: int | None = None,
    fre: int | None = None,
) -> Diagnostic:
    """A diagnostic; without a path, the FDE's (`fdes[2]`), made only now: most functions have nothing to say."""
    return Diagnostic(CHECKS[check_id], message, start, end, f"fdes[{fde}]" if path is None else path, fde, fre)


def _header_field(name: str) -> tuple[int, int, str]:
    """Where a header field is (from the generated layout), and its path."""
    offset, char = layout.HEADER.fields[name]
    start = HEADER_AT + offset
    return start, start + struct.calcsize(char), f"header.{name}"


def check_document(doc: Document, pace: Callable[[], None] | None = None) -> Iterator[Diagnostic]:
    """`check` on an opened file: an ELF file's code ranges and symbols included, an object file's
    unrelocated starts left alone, a header that cannot be read reported. `pace`: as `check`'s."""
    relocatable = doc.relocatable
    program = None
    if doc.elf is not None and not relocatable:
        from sfview.inputs.elf.pyelftools_view import executable_ranges  # pyelftools: `dump` uses `RowNotes`

        symbols = doc.symbols
        try:
            program = Program(executable_ranges(doc.elf), symbols.starts_at if len(symbols) else None)
        except InputError as exc:  # no program headers: the checks against the code's ranges are left out
            doc.note_loss(InputError(f"functions not checked against the code's ranges: {exc.message}"))
    if doc.section is None:
        return check_bytes(doc.data, doc.address)
    return check(doc.section, relocatable=relocatable, program=program, pace=pace)


def check_bytes(data: bytes, address: int = 0, **options: Any) -> Iterator[Diagnostic]:
    """`check` on raw section bytes, a header that cannot be read included (reported, not raised)."""
    try:
        section = Section(data, address)
    except InputError as exc:
        offset = exc.offset or 0
        aux_start, aux_end, aux_path = _header_field("auxhdr_len")
        if offset == aux_start and len(data) >= aux_end:
            yield _diag("auxhdr-out-of-bounds", exc.message, aux_start, aux_end, aux_path)
        else:
            yield _diag("section-unreadable", exc.message, offset, offset + 1, "header")
        return
    yield from check(section, **options)


def check(
    section: Section,
    *,
    relocatable: bool = False,
    program: Program | None = None,
    pace: Callable[[], None] | None = None,
) -> Iterator[Diagnostic]:
    """Every problem found in `section`: the header's, then each function's and its rows', then the whole's.

    `relocatable`: the section comes from an object file, whose function starts
    are not relocated yet (all 0): their order and overlaps are not checked.
    `program`: the ELF file's code ranges and symbols, to check functions against.
    `pace`: called every `PACE_EVERY` functions; a caller that runs the checks beside something more
    pressing (the explorer's keys) waits in it, rather than the checks being cut in pieces it must keep.

    What one consumer (the kernel, a libsframe release) does with the section is its profile's
    verdict (`sfview.consumers`), apart from these problems of the format.
    """
    yield from _header(section)
    walk = _Pass(section, relocatable, program)
    yield from walk.functions(pace)
    yield from walk.totals()


Problem = tuple[str, str]
"""What a row pattern breaks: a check's id, and its message with `{j}` for the row's number."""


class RowNotes:
    """What `dump` prints that `check` calls an error, as notes: the header's problems (undefined flags
    printed as if defined), then each distinct row pattern's (a row with no offsets, printed `u`), said once
    with its first place. The dump tells it of its rows as it prints them (`judge`, then `add`): one pass."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self._walk = _Pass(section, relocatable=False, program=None)
        self._seen: dict[Problem, tuple[int, int, int]] = {}  # problem → first function, first row, how many

    def judge(self, key: bytes, cfa: Rule) -> tuple[Problem, ...]:
        """The errors a row pattern (its key from the bulk reader, and its CFA rule) makes: the dump notes
        no warning, so none is kept (a section whose every row has a CFA offset of its own would keep a
        warning, worded, per row)."""
        problems = self._walk.pattern_problems(key[0], cfa)
        return tuple(p for p in problems if CHECKS[p[0]].severity is Severity.ERROR)

    def add(self, index: int, j: int, problem: Problem) -> None:
        """Row `j` of function `index` was printed with `problem`."""
        first = self._seen.get(problem)
        self._seen[problem] = (index, j, 1) if first is None else (first[0], first[1], first[2] + 1)

    def notes(self) -> Iterator[str]:
        """The errors, the header's first, then each row problem with its first place and count."""
        for diag in _header(self.section):
            if diag.severity is Severity.ERROR:
                yield f"{diag.path}: {diag.message} ({diag.check.id})"
        for (check_id, message), (index, j, count) in self._seen.items():
            more = f" (and {count - 1} more rows like it)" if count > 1 else ""
            yield f"fdes[{index}].fres[{j}]: {message.format(j=j)}{more} ({check_id})"


# The header ------------------------------------------------------------------------


def _header(section: Section) -> Iterator[Diagnostic]:
    flags_at = layout.PREAMBLE.fields["flags"][0]
    known = terms.KNOWN_FLAGS & ~(Sframe.Flag.frame_pointer if section.version >= 3 else 0)
    if section.flags & ~known:
        yield _diag(
            "flags-unknown",
            f"flags {section.flags:#04x} set bits {section.flags & ~known:#04x}, which version {section.version} "
            f"does not define (it defines {', '.join(terms.flag_names(known))})",
            flags_at,
            flags_at + 1,
            "preamble.flags",
        )
    if section.abi not in {int(a) for a in Sframe.AbiArch}:
        start, end, path = _header_field("abi_arch")
        yield _diag("abi-unknown", f"ABI/arch {section.abi} is not one of 1 to 4", start, end, path)
    size = len(section.data)
    header = section.header
    if section.error is not None:
        start, end, path = _header_field("num_fdes")
        yield _diag("fde-array-out-of-bounds", section.error.message, start, end, path)
    if section.fre_end > size:
        start, end, path = _header_field("fre_len")
        yield _diag(
            "fre-subsection-out-of-bounds",
            f"the FRE sub-section would end at {section.fre_end:#x} (from {section.fre_start:#x}, "
            f"{header.fre_len} bytes), past the section's end ({size:#x}): the section is {size} bytes long, "
            f"the header needs {section.fre_end}",
            start,
            end,
            path,
        )
    if header.fdeoff > header.freoff:
        start, end, path = _header_field("fdeoff")
        yield _diag(
            "fdeoff-after-freoff",
            f"fdeoff = {header.fdeoff:#x} is past freoff = {header.freoff:#x}: the FDE array must come first "
            "(libsframe refuses the section)",
            start,
            end,
            path,
        )
    fde_end = section.fde_start + header.num_fdes * section.fde_size
    overlap = section.fde_start < section.fre_end and section.fre_start < fde_end and header.num_fdes
    if overlap and section.error is None:  # an FDE array past the section's end is said so once, above
        start, end, path = _header_field("freoff")
        yield _diag(
            "subsections-overlap",
            f"the FDE array [{section.fde_start:#x}, {fde_end:#x}) and the FRE sub-section "
            f"[{section.fre_start:#x}, {section.fre_end:#x}) overlap",
            start,
            end,
            path,
        )
    last = max(section.fre_end, fde_end)
    tail = section.data[last:] if last <= size else b""
    if any(tail):
        first = last + next(i for i, b in enumerate(tail) if b)
        yield _diag(
            "trailing-bytes",
            f"{len(tail)} bytes follow the last sub-section, not all zero (the first non-zero at {first:#x})",
            last,
            size,
            "section",
        )


# Functions and rows --------------------------------------------------------------------


class _Row(NamedTuple):
    start: int
    span: tuple[int, int]
    """The row's bytes in the section [start, end)."""
    problems: tuple[tuple[str, str], ...]
    """What its pattern breaks (`_Pass.pattern_problems`)."""


class _Run(NamedTuple):
    """A function's rows read through `SharedRows`: `count` rows; for each chain they run through, the
    chain, the index of the first row on it and how many (`SharedRows.read`)."""

    rows: SharedRows
    chains: list[tuple[Chain, int, int]]
    count: int


class _Facts(NamedTuple):
    """What the checks of one function need, however it was read."""

    index: int
    start: int
    size: int
    pcmask: bool
    pauth_b: bool
    signal: bool
    rep_size: int
    num_fres: int


class _Blocks:
    """(start, end, index) of the functions' FRE bytes that lie inside the FRE sub-section, in three arrays
    (a tuple per function would weigh several times as much), and whether any two share a byte.

    The linker sorts FDEs, not their rows, so blocks come out of order; only blocks that overlap have
    something to say, and in sorted order. Which bytes are taken is kept in a byte array as the blocks
    come (a byte per byte of the sub-section): while none is taken twice there is nothing to sort.
    """

    def has(self, pos: int) -> bool:
        """Whether a block already holds the byte at `pos`."""
        taken = self.taken
        return taken is not None and self.low <= pos < self.high and taken[pos - self.low] == 1

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high
        wide = "Q" if high >= 1 << 32 else "I"  # offsets inside the section; an index is a 32-bit count's
        self.starts, self.ends, self.indexes = array(wide), array(wide), array("I")
        self.taken: bytearray | None = None
        """A byte for each byte of the sub-section, 1 where a block is (made with the first block): a function
        whose rows start there reads rows another has read (`_Pass` reads those through `SharedRows`)."""
        self.disjoint = True
        """No two blocks share a byte (so far)."""
        self.reach = low
        """The furthest end of a block."""

    def __len__(self) -> int:
        return len(self.starts)

    def append(self, block: tuple[int, int, int], shared: bool = False) -> None:
        """Add a function's block; `shared`: its rows start in bytes already taken (read through `SharedRows`,
        whose chains read each row once): not marked again, which for many such functions would be
        functions times bytes."""
        start, end, index = block
        if not self.low <= start < end <= self.high:
            return  # a function without rows may point anywhere: only bytes inside the sub-section are anyone's
        if self.taken is None:
            self.taken = bytearray(self.high - self.low)
        at, to = start - self.low, end - self.low
        if shared:
            self.disjoint = False
        else:
            if self.disjoint and self.taken.find(1, at, to) >= 0:
                self.disjoint = False
            self.taken[at:to] = b"\x01" * (to - at)
        if end > self.reach:
            self.reach = end
        self.starts.append(start)
        self.ends.append(end)
        self.indexes.append(index)

    def in_order(self) -> Iterator[tuple[int, int, int]]:
        """The blocks, sorted. Each is packed into one integer to be sorted (start and end are below `high`,
        an index below 2**32): far less memory than as many tuples."""
        width = max(self.high.bit_length(), 32)
        mask = (1 << width) - 1
        inside = zip(self.starts, self.ends, self.indexes, strict=True)
        packed = sorted((s << 2 * width) | (e << width) | i for s, e, i in inside)
        return ((value >> 2 * width, (value >> width) & mask, value & mask) for value in packed)


class _Pass:
    """One pass over the functions, keeping what the section-wide checks need at the end."""

    def __init__(self, section: Section, relocatable: bool, program: Program | None) -> None:
        self.section = section
        self.relocatable = relocatable
        self.program = program
        self.total_fres = 0
        self.counted_all = True  # an FDE that cannot be read has no FRE count to add
        self.read_all = True  # every function's rows were read to their count: their bytes' ends are known
        self.blocks = _Blocks(section.fre_start, min(section.fre_end, len(section.data)))  # their FRE bytes
        self.previous: tuple[int, int, int] | None = None  # index, start, end of the last decodable function
        self.allowed = _offset_counts(section)
        self.fdes_sorted = section.fdes_sorted
        self._patterns: dict[bytes, tuple[Problem, ...]] = {}
        self._model_patterns: dict[tuple[bool, int, tuple[int, ...]], tuple[Problem, ...]] = {}
        """What rows the model decoded break, by flexibility, info byte and data words (`_row_problems`)."""
        self._clean_lists: dict[int, tuple[bool, int, int]] = {}
        """For a row list the bulk reader hands out again (by its identity): whether its patterns and order are
        clean, its first start and its last (what `_clean` asks of the function's size and type)."""
        self._shared: dict[int, SharedRows] = {}
        """By FRE type: the rows of functions that read rows another function has read (`_shared_function`)."""
        self._read = 0
        self._budget = 2 * (self.blocks.high - self.blocks.low) + 4096
        """Bytes of rows the bulk reader reads, and how many it may: past that (functions reading rows they
        share, every one another row later), rows are read once each, as shared."""

    def functions(self, pace: Callable[[], None] | None = None) -> Iterator[Diagnostic]:
        section = self.section
        reader = Bulk(section)
        for count, walked in enumerate(reader.functions(self._unread)):
            if pace is not None and not count % PACE_EVERY:
                pace()
            if isinstance(walked, int):
                yield from self._model_function(section.function(walked))
                continue
            index, start, size, pos, rep_size, block = walked
            if not block.read or (block.count and self._read_before(pos)):
                yield from self._shared_function(reader, walked)
                continue
            info, fast_rows = block.info, block.rows
            width = START_ADDR_SIZES[info.fre_type]
            attr = pos - (section.kaitai.attr_size if section.version >= 3 else 0)
            facts = _Facts(index, start, size, info.pcmask, info.pauth_key_b, info.signal, rep_size, block.count)
            # Rows that can start before the end (each at least a start and an info byte; the last may end past it)
            room = (max(0, min(section.fre_end, len(section.data)) - pos) + width) // (width + 1)
            # Known before the rows are gone through: a list has been read, and a count past the room is cut.
            cut_short = (isinstance(fast_rows, list) and not block.complete) or 0 < room < block.count
            if cut_short:  # the cause first (a count, a misplaced start), then what its rows look like
                yield from self._rows_error(*self._stopped(section, walked))
            if isinstance(fast_rows, list) and self._clean(reader, fast_rows, size, info.pcmask, block.shared):
                rows: Iterable[_Row] = ()  # the common case, told in one tight loop: nothing to say of the rows
            else:
                rows = self._bulk_rows(reader, pos, width, fast_rows)
            yield from self._function(facts, rows)
            self.blocks.append((attr, pos + block.length, index))  # known once the rows have been gone through
            self._read += block.length
            if not block.complete and not cut_short:
                yield from self._rows_error(*self._stopped(section, walked))

    @staticmethod
    def _stopped(
        section: Section, walked: BulkFunction
    ) -> tuple[Function | Placed, tuple[InputError, int, int] | None]:
        """A function whose rows stop short, for `_rows_error`: where its rows were read into a list, why they
        stop, said from where the bulk reader stopped (as the model's rows stop there); else the model's."""
        index, _, _, pos, _, block = walked
        if not isinstance(block.rows, list) or not block.read or block.complete:
            return section.function(index), None
        placed = Placed(section, index, block.info.fre_type, block.count, pos)
        found, end = len(block.rows), pos + block.length
        return placed, (section.rows_stop(placed, found, end), end, found)

    def _unread(self, pos: int, count: int) -> bool:
        """Whether the bulk reader should leave a function's rows to `_shared_function`: they start in rows
        already read, or the reader has read more bytes of rows than the sub-section holds twice over."""
        return count > 0 and (self._read > self._budget or self._read_before(pos))

    def _read_before(self, pos: int) -> bool:
        """Whether rows starting at `pos` lie in bytes the bulk reader read, or start a row a chain read."""
        return self.blocks.has(pos) or any(rows.holds(pos) for rows in self._shared.values())

    def _shared_function(self, reader: Bulk, walked: BulkFunction) -> Iterator[Diagnostic]:
        """A function whose rows are read through `SharedRows`: each row read and judged once, whichever
        function reads it; what depends on the function (its first row, its size) judged for each."""
        section = self.section
        index, start, size, pos, rep_size, block = walked
        info = block.info
        rows = self._shared.get(info.fre_type)
        if rows is None:
            address = reader._starts[info.fre_type]
            rows = self._shared[info.fre_type] = SharedRows(
                section.data, self.blocks.low, section.fre_end, address, lambda key: self._problems(reader, key)
            )
        chains = rows.read(pos, block.count)
        found = sum(count for _, _, count in chains)
        end = chains[-1][0].span(chains[-1][1] + chains[-1][2] - 1)[1] if chains else pos
        if found < block.count:  # the row at `end` cannot be read: the model says why, reading no row again
            placed = Placed(section, index, info.fre_type, block.count, pos)
            yield from self._rows_error(placed, (section.rows_stop(placed, found, end), end, found))
        facts = _Facts(index, start, size, info.pcmask, info.pauth_key_b, info.signal, rep_size, block.count)
        yield from self._function(facts, _Run(rows, chains, found))
        attr = pos - (section.kaitai.attr_size if section.version >= 3 else 0)
        self.blocks.append((attr, end, index), shared=True)
        for chain, _, _ in chains:
            chain.readers += 1
            if len(chain.named) < NAMED:
                chain.named.append(index)

    def _problems(self, reader: Bulk, key: bytes) -> tuple[Problem, ...]:
        """What a row pattern breaks (learnt once)."""
        problems = self._patterns.get(key)
        return self._learn(reader, key) if problems is None else problems

    def _row_problems(self, row: Row, flexible: bool) -> tuple[Problem, ...]:
        """What a row the model decoded breaks, learnt once per info byte and data words (which say all its
        rules and control words say) within the section's bound: a flexible function's rows all come here."""
        key = (flexible, row.info, row.offsets)
        problems = self._model_patterns.get(key)
        if problems is None:
            problems = self.pattern_problems(row.info, row.cfa, row.kaitai.flex if flexible else None)
            if len(self._model_patterns) < self.section.kept_max:
                self._model_patterns[key] = problems
        return problems

    def _model_function(self, func: Function) -> Iterator[Diagnostic]:
        if func.error is not None:
            self.counted_all = False
            yield self._fde_error(func)
            return
        if func.fde_type not in FDE_TYPES:
            at = func.attr_offset + layout.FDE_ATTR.fields["func_info2"][0]
            yield _diag(
                "fde-type-undefined",
                f"function {func.index}: func_info2 gives FDE type {func.fde_type}; version 3 defines "
                f"{', '.join(f'{int(t)} ({t.name})' for t in Sframe.FdeType)}; its rows are read as the default "
                "type's",
                at,
                at + 1,
                f"fdes[{func.index}].attr.func_info2",
                fde=func.index,
            )
        rows = func.rows
        end = rows.positions[-1] if len(rows) else func.fres_start
        start = func.attr_span.start if func.attr_span is not None else func.fres_start
        facts = _Facts(
            func.index,
            func.start_address,
            func.size,
            func.pcmask,
            func.pauth_key == Sframe.PauthKey.key_b,
            func.signal,
            func.rep_size,
            func.num_fres,
        )
        flexible = func.flexible
        walked = (
            _Row(
                r.start_offset,
                (r.span.start, r.span.end),
                self._row_problems(r, flexible),
            )
            for r in rows
        )
        yield from self._function(facts, walked)
        self.blocks.append((start, end, func.index))
        if func.rows_error is not None:
            yield from self._rows_error(func)

    def _fde_error(self, func: Function) -> Diagnostic:
        """An FDE that cannot be read: which of the known reasons, at the model's byte."""
        error = func.error
        assert error is not None
        section, index = self.section, func.index
        kind, message = "fde-undecodable", error.message
        info = section.data[func.info_offset] if func.info_offset < len(section.data) else None
        attr_end = func.attr_offset + section.kaitai.attr_size
        if section.version >= 3 and not section.fre_start <= func.attr_offset <= attr_end <= section.fre_end:
            kind = "attr-outside-fre-subsection"
        elif info is not None and info_bits(info, "fde_info", "fre_type") not in layout.FRE_START_ADDR:
            fre_type = info_bits(info, "fde_info", "fre_type")
            kind = "fre-type-undefined"
            message = (
                f"function {index}: func_info = {info:#04x} gives FRE type {fre_type}; the types are "
                f"{', '.join(f'{t} ({w}-byte start addresses)' for t, w in START_ADDR_SIZES.items())}"
            )
        offset = error.offset if error.offset is not None else func.span.start
        return _diag(kind, message, offset, offset + 1, f"fdes[{index}]", fde=index)

    def _rows_error(
        self, func: Function | Placed, stopped: tuple[InputError, int, int] | None = None
    ) -> Iterator[Diagnostic]:
        """Why the rows of `func` stop early: a count, a misplaced start, an undefined offset size, or else.
        `stopped`: why, where the row that cannot be read starts and how many were read before, for a
        function whose rows were read another way (a shared function's: the model's rows would be read again
        for each, and kept); else the model's own rows say."""
        if stopped is None:
            assert isinstance(func, Function)
            rows = func.rows
            assert rows.error is not None
            stopped = (rows.error, rows.positions[-1] if len(rows.positions) else func.fres_start, len(rows))
        error, stop, j = stopped
        self.read_all = False
        data = self.section.data
        if self.section.fre_end > len(data) and stop >= len(data):
            return  # rows in the part of the section that is missing: said once, of the header's fre_len
        index = func.index
        offset = error.offset if error.offset is not None else func.span.start
        if offset == func.num_fres_offset():
            kind, path = "num-fres-too-many", f"fdes[{index}].func_num_fres"
        elif offset == func.field_offset("func_start_fre_off"):
            kind, path = "fres-outside-fre-subsection", f"fdes[{index}].func_start_fre_off"
        else:
            kind, path = "fre-undecodable", f"fdes[{index}].fres[{j}]"
            info_at = stop + START_ADDR_SIZES.get(func.fre_type, 0)
            if info_at < len(data) and info_bits(data[info_at], "fre_info", "offset_size") not in layout.FRE_OFFSET:
                kind = "offset-size-undefined"
        yield _diag(kind, error.message, offset, offset + 1, path, fde=index, fre=None if "fres[" not in path else j)

    def _function(self, facts: _Facts, rows: Iterable[_Row] | _Run) -> Iterator[Diagnostic]:
        """The checks of one function and its rows."""
        section = self.section
        index, start, size = facts.index, facts.start, facts.size
        fde = section.fde_start + index * section.fde_size
        here = (fde, fde + section.fde_size, None)
        self.total_fres += facts.num_fres
        if self.previous is not None:
            p_index, p_start, p_end = self.previous
            if self.fdes_sorted and start <= p_start:
                yield _diag(
                    "fdes-unsorted",
                    (
                        "starts at {:#x}, not after fdes[{}] ({:#x}), though SFRAME_F_FDE_SORTED is set",
                        (start, p_index, p_start),
                    ),
                    *here,
                    fde=index,
                )
            elif p_start <= start < p_end:
                yield _diag(
                    "functions-overlap",
                    ("starts at {:#x}, inside fdes[{}] (ends {:#x})", (start, p_index, p_end)),
                    *here,
                    fde=index,
                )
        if not self.relocatable:
            self.previous = (index, start, start + size)
            if self.program is not None:
                yield from self._program(facts, here)
        if size == 0:
            yield _diag(
                "function-size-zero",
                ("func_size is 0: the function at {:#x} covers no byte", (start,)),
                *here,
                fde=index,
            )
        if facts.pcmask and section.version >= 2 and facts.rep_size == 0:
            yield _diag(
                "pcmask-rep-size-zero",
                "a PCMASK function with func_rep_size 0: no block to match PCs in",
                *here,
                fde=index,
            )
        if facts.pauth_b and not section.is_aarch64:
            yield _diag(
                "pauth-key-not-aarch64",
                f"pointer-authentication key B on {terms.abi_name(section.abi)}",
                *here,
                fde=index,
            )
        if facts.signal and section.version == 1:
            yield _diag(
                "signal-bit-v1",
                "the info byte's bit 7 (signal frame from version 2 on) is set in version 1",
                *here,
                fde=index,
            )
        if isinstance(rows, _Run):
            yield from self._run_rows(facts, rows, here)
        elif rows != ():  # clean rows (most functions) have nothing to say
            yield from self._rows(facts, rows, here)

    def _program(self, facts: _Facts, here: tuple[int, int, None]) -> Iterator[Diagnostic]:
        program = self.program
        if program is None or not facts.size:
            return
        start, end = facts.start, facts.start + facts.size
        for lo, hi in program.text:  # a loop, not any(): this runs for every function
            if lo <= start and end <= hi:
                break
        else:
            yield _diag(
                "function-outside-text",
                ("[{:#x}, {:#x}) is not inside any executable segment of the file", (start, end)),
                *here,
                fde=facts.index,
            )
            return
        if program.named is not None and not program.named(start):
            yield _diag("function-unnamed", ("no symbol starts at {:#x}", (start,)), *here, fde=facts.index)

    def _rows(self, facts: _Facts, rows: Iterable[_Row], here: tuple[int, int, None]) -> Iterator[Diagnostic]:
        """The checks of a function's rows: where each starts, then what its pattern says (found once for
        each distinct pattern: a section has a few hundred among tens of thousands of rows)."""
        index, size, pcmask = facts.index, facts.size, facts.pcmask
        said: dict[str, int] = {}  # how often each check spoke of this function's rows

        def say(check_id: str, j: int, message: str, span: tuple[int, int]) -> Iterator[Diagnostic]:
            said[check_id] = times = said.get(check_id, 0) + 1
            if times <= SAME_CHECK_PER_FUNCTION:
                yield _diag(check_id, message, *span, f"fdes[{index}].fres[{j}]", fde=index, fre=j)

        previous = -1
        for j, row in enumerate(rows):
            start = row.start
            if j == 0 and start != 0 and not pcmask:
                yield from say(
                    "first-row-not-at-zero", j, f"the first row starts at +{start:#x}: nothing covers +0", row.span
                )
            if start <= previous:
                yield from say(
                    "rows-not-increasing", j, f"row {j} starts at +{start:#x}, not after row {j - 1}", row.span
                )
            previous = start
            if not pcmask and size and start >= size:
                yield from say(
                    "row-past-function", j, f"row {j} starts at +{start:#x}, past the function's {size} bytes", row.span
                )
            for check_id, message in row.problems:
                yield from say(check_id, j, message.format(j=j), row.span)
        for check_id, times in said.items():
            if times > SAME_CHECK_PER_FUNCTION:
                more = times - SAME_CHECK_PER_FUNCTION
                yield _diag(check_id, f"and {more} more rows of this function like these", *here, fde=index)

    def _run_rows(self, facts: _Facts, run: _Run, here: tuple[int, int, None]) -> Iterator[Diagnostic]:
        """`_rows` for a function read through `SharedRows`: its first row and the rows past its size, as
        `_rows` says them; the order and patterns of rows no function before it read (a row another read
        was said with that one, and so the order of two rows where a chain links to another:
        `_shared_totals` names the functions that share a chain)."""
        index, size, pcmask = facts.index, facts.size, facts.pcmask
        kinds = run.rows.kinds
        said: dict[str, int] = {}

        def say(check_id: str, chain: Chain, k: int, j: int, message: str) -> Iterator[Diagnostic]:
            said[check_id] = times = said.get(check_id, 0) + 1
            if times <= SAME_CHECK_PER_FUNCTION:
                yield _diag(check_id, message, *chain.span(k), f"fdes[{index}].fres[{j}]", index, j)

        if run.count and not pcmask:
            chain, first, _ = run.chains[0]
            if chain.starts[first] != 0:
                message = f"the first row starts at +{chain.starts[first]:#x}: nothing covers +0"
                yield from say("first-row-not-at-zero", chain, first, 0, message)
        base, before = 0, None  # the number of the chain's first row in the function; the chain before
        for chain, first, count in run.chains:
            stop = first + count
            starts, judged = chain.starts, chain.judged
            if before is not None and not before.crossed:  # the first to read on through the link
                before.crossed = True
                if before.link_down:
                    message = f"row {base} starts at +{starts[first]:#x}, not after row {base - 1}"
                    yield from say("rows-not-increasing", chain, first, base, message)
            k = judged.find(0, first, stop)
            while k >= 0:  # runs of rows no function read before
                end = judged.find(1, k, stop)
                end = stop if end < 0 else end
                for row in range(k, end):
                    j = base + row - first
                    if row > first and starts[row] <= starts[row - 1]:
                        message = f"row {j} starts at +{starts[row]:#x}, not after row {j - 1}"
                        yield from say("rows-not-increasing", chain, row, j, message)
                    for check_id, message in kinds[chain.kinds[row]]:
                        yield from say(check_id, chain, row, j, message.format(j=j))
                judged[k:end] = b"\x01" * (end - k)
                k = judged.find(0, end, stop) if end < stop else -1
            base, before = base + count, chain
        if not pcmask and size:
            base = 0
            for chain, first, count in run.chains:
                yield from self._past_size(chain, first, first + count, base, size, say, said)
                base += count
        for check_id, times in said.items():
            if times > SAME_CHECK_PER_FUNCTION:
                more = times - SAME_CHECK_PER_FUNCTION
                yield _diag(check_id, f"and {more} more rows of this function like these", *here, fde=index)

    @staticmethod
    def _past_size(
        chain: Chain,
        first: int,
        stop: int,
        base: int,
        size: int,
        say: Callable[..., Iterator[Diagnostic]],
        said: dict[str, int],
    ) -> Iterator[Diagnostic]:
        """`row-past-function` for the rows [first, stop) of a chain, the function's rows from number `base`:
        where they increase, the rows past the size are the last ones (counted, the first few said)."""
        starts = chain.starts
        if chain.ordered(first, stop):
            past = range(bisect_left(starts, size, first, stop), stop)
            shown = max(0, min(len(past), SAME_CHECK_PER_FUNCTION - said.get("row-past-function", 0)))
        else:
            past = range(first, stop)
            shown = len(past)
        for row in past[:shown]:
            if starts[row] >= size:
                j = base + row - first
                message = f"row {j} starts at +{starts[row]:#x}, past the function's {size} bytes"
                yield from say("row-past-function", chain, row, j, message)
        if len(past) > shown:
            said["row-past-function"] = said.get("row-past-function", 0) + len(past) - shown

    def pattern_problems(self, info: int, cfa: Rule, flex: Any = None) -> tuple[tuple[str, str], ...]:
        """What a row's info byte and rules (whatever its start) break: (check id, message with `{j}`
        for the row's number)."""
        section = self.section
        abi = terms.abi_name(section.abi)
        out: list[tuple[str, str]] = []
        if info_bits(info, "fre_info", "mangled_ra") and not section.is_aarch64:
            out.append(("mangled-ra-not-aarch64", f"row {{j}} marks its RA signed on {abi}"))
        count = info_bits(info, "fre_info", "offset_count")
        if flex is not None:
            out += self._flexible(flex)
        elif count not in self.allowed:
            allowed = " or ".join(map(str, sorted(self.allowed)))
            out.append(("offset-count-impossible", f"row {{j}} has {count} offsets; on {abi} a row has {allowed}"))
        if (
            cfa.kind is Kind.VALUE
            and cfa.base != -1
            and not cfa.deref
            and (cfa.offset < self.least_cfa_offset or cfa.offset % 8)
        ):
            least = (
                "negative" if not self.least_cfa_offset else f"below {self.least_cfa_offset}, the register save area"
            )
            out.append(
                ("cfa-offset-implausible", f"row {{j}}: CFA offset {cfa.offset} ({least} or not a multiple of 8)")
            )
        return tuple(out)

    @property
    def least_cfa_offset(self) -> int:
        """The smallest CFA offset a frame can have: the CFA is the caller's SP minus the ABI's SP value offset
        (s390x: SP + 160, the register save area every caller reserves; elsewhere SP + 0), and a frame only
        grows the stack down from there."""
        return -self.section.sp_val_offset

    def _flexible(self, flex: Any) -> list[tuple[str, str]]:
        """A version 3 flexible row's control words: a CFA based on a register, no reserved bits, no extra words."""
        abi = self.section.abi
        out = []
        cfa = getattr(flex, "cfa_control", None)
        if cfa is not None and not cfa.reg_p:
            out.append(
                (
                    "flex-cfa-not-register",
                    f"row {{j}}: the CFA's control word {cfa.value:#x} has reg_p clear: a CFA cannot be based on "
                    "itself",
                )
            )
        for name in ("cfa_control", "ra_control", "fp_control"):
            word = getattr(flex, name, None)
            if word is None or word.value == 0:
                continue
            if word.reserved or word.high:
                out.append(("flex-reserved-bits", f"row {{j}}: {name} = {word.value:#x} sets reserved bits"))
            if word.reg_p and not terms.has_register(abi, word.regnum):
                out.append(
                    (
                        "flex-register-unknown",
                        f"row {{j}}: {name} names register {word.regnum}, which {terms.abi_name(abi)} does not have",
                    )
                )
        extra = getattr(flex, "extra", None)
        if extra:
            out.append(("flex-words-left-over", f"row {{j}}: {len(extra)} data words after the FP's rule"))
        return out

    def _learn(self, reader: Bulk, key: bytes) -> tuple[tuple[str, str], ...]:
        """What a pattern the bulk reader met for the first time breaks, kept for its next rows."""
        problems = self.pattern_problems(key[0], reader.pattern(key).cfa)
        if len(self._patterns) < reader.kept_max:
            self._patterns[key] = problems
        return problems

    def _clean(self, reader: Bulk, rows: list[tuple[int, bytes]], size: int, pcmask: bool, shared: bool) -> bool:
        """Whether no row check has anything to say of these rows: the first at +0, starts increasing and
        inside the function, and every pattern without a problem (for a list handed out again, worked out once)."""
        found = self._clean_lists.get(id(rows)) if shared else None
        if found is None:
            found = self._clean_order(reader, rows)
            if shared:
                self._clean_lists[id(rows)] = found
        ordered, first, last = found
        return ordered and (pcmask or not rows or (first == 0 and (not size or last < size)))

    def _clean_order(self, reader: Bulk, rows: list[tuple[int, bytes]]) -> tuple[bool, int, int]:
        """Whether the rows' starts increase and their patterns have no problem; their first start and last."""
        known = self._patterns
        previous = -1
        for start, key in rows:
            if start <= previous:
                return False, 0, 0
            previous = start
            problems = known.get(key)
            if problems is None:
                problems = self._learn(reader, key)
            if problems:
                return False, 0, 0
        return True, rows[0][0] if rows else 0, previous

    def _bulk_rows(self, reader: Bulk, pos: int, width: int, rows: Iterable[tuple[int, bytes]]) -> Iterator[_Row]:
        """The bulk reader's rows for the checks, each with where it lies (its start address, then `key`)."""
        known = self._patterns
        for start, key in rows:
            problems = known.get(key)
            if problems is None:
                problems = self._learn(reader, key)
            end = pos + width + len(key)
            yield _Row(start, (pos, end), problems)
            pos = end

    def totals(self) -> Iterator[Diagnostic]:
        """The section-wide checks, once every function has been seen."""
        section = self.section
        if self.total_fres != section.num_fres and section.error is None and self.counted_all:
            yield _diag(
                "num-fres-mismatch",
                f"num_fres = {section.num_fres}, but the FDEs count {self.total_fres} FREs",
                *_header_field("num_fres"),
            )
        yield from self._shared_totals()
        yield from self._blocks()

    def _shared_totals(self) -> Iterator[Diagnostic]:
        """For each chain of rows several functions read, some with problems: how many functions, and which
        (the first few); the problems of its rows were said once each, with the first function that read it."""
        for rows in self._shared.values():
            for chain in rows.chains:
                if chain.readers < 2 or not (any(chain.kinds) or 1 in chain.down or chain.link_down):
                    continue  # read by one function, or rows without problems: nothing said once for many
                others = chain.readers - len(chain.named)
                names = ", ".join(f"fdes[{i}]" for i in chain.named) + (f" and {others} more" if others else "")
                yield _diag(
                    "fres-overlap",
                    (
                        "{} functions read rows of the one block [{:#x}, {:#x}) ({}): the problems of each row are "
                        "said once, with the first of these that reads it",
                        (chain.readers, chain.positions[chain.head], chain.end, names),
                    ),
                    chain.positions[chain.head],
                    chain.end,
                    f"fdes[{chain.named[0]}]",
                    fde=chain.named[0],
                )

    def _blocks(self) -> Iterator[Diagnostic]:
        """Rows shared or overlapping between functions, and FRE bytes no function uses."""
        section = self.section
        reach = self.blocks.reach
        if not self.blocks.disjoint:
            reach = yield from self._overlaps()
        fre_end = min(section.fre_end, len(section.data))
        if self.blocks and reach < fre_end and section.error is None and self.counted_all and self.read_all:
            yield _diag(
                "fre-len-unused",
                f"fre_len = {section.header.fre_len}, but the functions' rows end at {reach:#x}: the last "
                f"{fre_end - reach} bytes of the FRE sub-section belong to no function",
                reach,
                fre_end,
                "header.fre_len",
            )

    def _overlaps(self) -> Generator[Diagnostic, None, int]:
        """Each function whose rows share bytes with those of a function before it in the sub-section; returns
        where the last rows end."""
        section = self.section
        reach, owner = section.fre_start, None
        for start, end, index in self.blocks.in_order():
            if owner is not None and start < reach and end > start:
                fde = section.fde_start + index * section.fde_size
                yield _diag(
                    "fres-overlap",
                    ("its FRE bytes [{:#x}, {:#x}) overlap those of fdes[{}] (to {:#x})", (start, end, owner, reach)),
                    fde,
                    fde + section.fde_size,
                    f"fdes[{index}]",
                    fde=index,
                )
            if end > reach:
                reach, owner = end, index
        return reach


def _offset_counts(section: Section) -> set[int]:
    """How many offsets a default row may have: the CFA's, then the RA's and FP's unless the header fixes them."""
    tracked = 1 + (0 if section.fixed_ra_offset else 1) + (0 if section.fixed_fp_offset else 1)
    allowed = set(range(1, tracked + 1))  # AArch64 writes CFA and RA alone, before the FP is saved
    if section.version >= 3:
        allowed.add(0)  # no offsets: the return address is undefined (the outermost frame)
    return allowed
