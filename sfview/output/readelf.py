"""`sfview dump`'s text: the section as binutils prints it (`jsondoc.py` writes `--json`).

The text follows libsframe's dumper (`readelf --sframe`, `objdump --sframe`)
byte for byte. Its wording changed with the format, so the dialect follows the
section's version, that is the binutils that emits it:

- version 1 as binutils 2.40 prints it: no "CFA fixed" lines, an RA that the
  header fixes shown as `u`, and the flag line as 2.40 builds it (its string
  copy keeps only the last flag when both SORTED and FRAME_POINTER are set);
- versions 2 and 3 as binutils 2.45/2.46 print them: one flag per line,
  "CFA fixed FP/RA offset" lines, a fixed RA shown as `f`, `attr = "S"` for
  signal frames, `RA undefined` rows and `U` for a padded RA.
"""

from __future__ import annotations

import codecs
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, TextIO

from sfview import ADDRESS_MASK
from sfview.errors import InputError, Problems
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.rule_notation import short_register, value_text
from sfview.sframe.bulk.reader import FDE_INFOS, Block, Bulk, BulkFunction, BulkRow
from sfview.sframe.model import terms
from sfview.sframe.model.rules import Kind, Rule
from sfview.sframe.model.section import Function, Placed, Row, Section

if TYPE_CHECKING:
    from sfview.check.run import Problem, RowNotes

TITLE = "Contents of the SFrame section .sframe:"


INT32_MAX = (1 << 31) - 1


def _i32(value: int) -> int:
    """A 32-bit field printed with `%d`, as the C dumper does."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _flags_v1(flags: int) -> str:
    if not flags:
        return "NONE"
    text = ""
    if flags & Sframe.Flag.fde_sorted:
        text = "SFRAME_F_FDE_SORTED"
    if flags & Sframe.Flag.frame_pointer:
        text = "SFRAME_F_FRAME_POINTER"
    return text


def _flag_lines(flags: int, version: int) -> list[str]:
    """One flag per line, as binutils 2.45 on; version 3 has no SFRAME_F_FRAME_POINTER (a bare number then)."""
    if not flags:
        return ["    Flags: NONE"]
    lines = []
    prefix = "Flags: "
    for bit, name in terms.FLAG_NAMES:
        if flags & bit and not (version >= 3 and bit == Sframe.Flag.frame_pointer):
            flags &= ~bit
            lines.append(f"{prefix:>11}{name}{',' if flags else ''}")
            prefix = " "
    if flags:
        lines.append(f"{prefix:>11}{flags}")
    return lines


def _header_lines(section: Section) -> list[str]:
    return _header_text(
        section.version,
        section.flags,
        section.fixed_fp_offset,
        section.fixed_ra_offset,
        section.header.num_fdes,
        section.num_fres,
    )


def _header_text(version: int, flags: int, fixed_fp: int, fixed_ra: int, num_fdes: int, num_fres: int) -> list[str]:
    lines = ["  Header :", "", f"    Version: {terms.VERSION_NAMES[version]}"]
    if version == 1:
        lines.append(f"    Flags: {_flags_v1(flags)}")
    else:
        lines.extend(_flag_lines(flags, version))
        if fixed_fp:
            lines.append(f"    CFA fixed FP offset: {fixed_fp}")
        if fixed_ra:
            lines.append(f"    CFA fixed RA offset: {fixed_ra}")
    lines.append(f"    Num FDEs: {_i32(num_fdes)}")
    lines.append(f"    Num FREs: {_i32(num_fres)}")
    return lines


def header_only(data: bytes) -> str:
    """The title and header of a section whose rest cannot be modelled (an `auxhdr_len` past its end), as
    binutils 2.40 prints them before it goes on; "" when the preamble and header themselves are not whole."""
    size = layout.PREAMBLE.size + layout.HEADER.size
    magics = {int(Sframe.Magic.sframe).to_bytes(2, order): order for order in ("little", "big")}
    order = magics.get(data[:2])
    if order is None or len(data) < size:
        return ""
    endian = "<" if order == "little" else ">"
    _, version, flags = struct.unpack_from(endian + layout.PREAMBLE.format, data)
    if version not in layout.VERSIONS:
        return ""
    header = dict(zip(layout.HEADER.fields, struct.unpack_from(endian + layout.HEADER.format, data, 4), strict=True))
    lines = _header_text(version, flags, header["cfa_fixed_fp_offset"], header["cfa_fixed_ra_offset"],
                         header["num_fdes"], header["num_fres"])  # fmt: skip
    return "\n".join([TITLE, *lines]) + "\n"


def _title(section: Section, index: int, start: int, size: int, signal: bool, flexible: bool, pauth_b: bool) -> str:
    title = f"    func idx [{index}]: pc = {start:#x}, size = {_i32(size)} bytes"
    if section.version >= 2:
        attrs = ("S" if signal else "") + ("F" if flexible else "")
        if attrs:
            title += f', attr = "{attrs}"'
    if pauth_b:
        title += ", pauth = B key"
    return title


# Rules as binutils writes them ----------------------------------------------


def binutils_cfa(section: Section, rule: Rule) -> str:
    """The CFA column; binutils 2.40 (version 1) wrote it `%s+%d`, so `sp+-8`."""
    if rule.kind is not Kind.VALUE:
        return "u"
    if section.version == 1:
        return f"{short_register(section, rule.base)}+{rule.offset}"
    return value_text(section, rule)


def binutils_saved(section: Section, rule: Rule) -> str:
    """An FP column: `c-16`, `(fp+0)`, or `u` when the row does not track it."""
    return value_text(section, rule) if rule.kind is Kind.VALUE else "u"


def binutils_ra(section: Section, rule: Rule) -> str:
    """The RA column without its `[s]`.

    Version 1 (binutils 2.40) shows an RA the header fixes as `u` and has no
    padding word (`c+0`); later versions show `f` and `U`.
    """
    if rule.padding:
        return "U" if section.version >= 2 else "c+0"
    if rule.kind is not Kind.VALUE:
        return "u"
    if rule.fixed:
        return "f" if section.version >= 2 else "u"
    return binutils_saved(section, rule)


def binutils_columns(section: Section, cfa: Rule, fp: Rule, ra: Rule, mangled_ra: bool) -> tuple[str, str, str]:
    """(CFA, FP, RA) exactly as the binutils of the section's version prints a row's rules."""
    ra_text = binutils_ra(section, ra) + ("[s]" if mangled_ra else "   ")
    return binutils_cfa(section, cfa), binutils_saved(section, fp), ra_text


def _columns(section: Section, cfa: Rule, fp: Rule, ra: Rule, mangled: bool) -> str:
    """What follows a row's start address: its three columns, or `RA undefined`."""
    if ra.kind is Kind.UNDEFINED:
        return "  RA undefined"
    cfa_text, fp_text, ra_text = binutils_columns(section, cfa, fp, ra, mangled)
    return f"  {cfa_text:<10}{fp_text:<10}{ra_text:<13}"


TABLE_HEADS = {
    pcmask: f"    {'STARTPC':<7}{'[m]' if pcmask else '':<8} {'CFA':<10}{'FP':<10}{'RA':<13}"
    for pcmask in (False, True)
}
"""The column titles over a function's rows; `[m]` marks a PCMASK function's."""


CHUNK_LINES = 4096
"""Lines a streamed dump gathers before it writes them: few writes, little memory."""


ENCODING = "utf-8"
"""What the dump is made in: bytes, for a `%` on bytes formats a function faster than on text, and they go
to a UTF-8 stream's buffer without an encoding pass."""


class _Pieces:
    """The dump as it is made, in `ENCODING`, and where it goes when `flush`ed (`sink`: nowhere before the end)."""

    def __init__(self, errors: str, sink: Callable[[bytes], object] | None = None) -> None:
        self.bytes: list[bytes] = []
        self.errors = errors
        """What the encoding does with what it cannot encode: the stream's own choice, so that the bytes are
        those the stream would have written."""
        self.sink = sink

    def add(self, text: str) -> None:
        """Text the dump prints outside the templates (titles of their own, problems, rows one by one)."""
        self.bytes.append(text.encode(ENCODING, self.errors))

    def encode(self, text: str) -> bytes:
        """Text as the bytes of this dump (a template, to be formatted, or part of a piece)."""
        return text.encode(ENCODING, self.errors)

    def flush(self) -> None:
        """What is gathered written out, if it goes anywhere before the end."""
        if self.sink is not None:
            self.sink(b"".join(self.bytes))
            self.bytes.clear()

    def full(self) -> bool:
        """Whether enough is gathered to be written out (never, when it is all kept to the end)."""
        return self.sink is not None and len(self.bytes) > CHUNK_LINES


def write(section: Section, out: TextIO, notes: RowNotes | None = None) -> list[InputError]:
    """The dump written to `out` as it is made, a few thousand lines at a time; the problems met.

    What `text` returns, without ever holding the whole of it: a large
    section's text is memory, and time, to build and then copy.
    `notes`, when given, is told of every row the dump prints that `check`
    calls an error, in the same pass (a second pass would cost a good part of a dump).
    A UTF-8 stream over a buffer (standard output) is given the bytes; another, their text.
    """
    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if buffer is not None and encoding and codecs.lookup(encoding).name == ENCODING:
        out.flush()  # what the stream holds comes first
        pieces = _Pieces(out.errors or "strict", buffer.write)
    else:  # surrogates pass both ways: the text as it was made
        pieces = _Pieces("surrogatepass", lambda chunk: out.write(chunk.decode(ENCODING, "surrogatepass")))
    pieces.add(_head(section))
    errors = Problems()
    _BulkDump(section, pieces, errors, notes).run()
    pieces.flush()
    return errors


def text(section: Section, *, bulk: bool = True) -> tuple[str, list[InputError]]:
    """The whole dump, and the problems met on the way, each also said in the dump where it was met.

    A function that cannot be decoded is replaced by a line saying why, and
    the dump goes on with the next one: one broken record hides nothing else.
    Functions are read in bulk (`sframe.bulk`, with `struct`, every distinct
    block of rows described once); one the bulk reader finds unusual goes
    through the Kaitai model instead, which also words any error. `bulk=False`
    takes every function through the model: the two must agree, and a test
    makes sure they do.
    """
    pieces = _Pieces("surrogatepass")
    pieces.add(_head(section))
    errors: list[InputError] = []
    if bulk:
        _BulkDump(section, pieces, errors).run()
    else:
        for index in range(section.num_fdes):
            _model_function(section, index, pieces, errors)
    return b"".join(pieces.bytes).decode(ENCODING, "surrogatepass"), errors


def _head(section: Section) -> str:
    """The title and header, up to the functions (the dumper prints the title without a newline, then
    "\n  Header :")."""
    return "".join(f"{line}\n" for line in (TITLE, *_header_lines(section), "", "  Function Index :"))


COMMON_TITLE = "\n    func idx [%d]: pc = %#x, size = %d bytes\n"
"""A function's title when it has no attributes (the common case): a `%` template, with the blank line before."""


class _Template(NamedTuple):
    """What every function with one block of rows prints."""

    full: bytes
    """Title, column heads and rows, a `%` template of the index, address, size and each row's address."""
    rows: bytes
    """The rows alone, a template of each row's address."""
    starts: tuple[int, ...]
    """The rows' start offsets."""
    flagged: list[tuple[int, Problem]]
    """The rows `notes` is told of, and what each breaks."""
    lines: int
    """How many lines the function takes."""
    low: int = 0
    high: int = 1 << 64
    """`full` prints the rows of a function that starts from `low`, before `high` (`_padded`)."""


UNCOMMON = _Template(b"", b"", (), [], 0)
"""What a block of rows whose functions each print their own title is made into (`lines` 0: not the common case)."""

ROW_ADDRESS = "%016x"
"""A row's address in a template: 16 hex digits, zero-padded."""


def _padded(digits: int) -> str:
    """A row's address of exactly `digits` hex digits, as `ROW_ADDRESS` prints it: the zeros written out, the
    digits by `%x`, which a `%` on bytes formats straight into its result, where a width or a precision
    makes a str first (twice the time, on every row of a dump)."""
    return "0" * (16 - digits) + "%x"


class _BulkDump:
    """Every function through the bulk reader, each written out as one piece of bytes (the hot path of a dump).

    Functions share their blocks of rows (a few hundred distinct among tens
    of thousands of functions): each block's rows become one `%` template, title and column
    heads included, so that a function costs one formatting of its index,
    address, size and row addresses, not one per line.
    """

    def __init__(
        self,
        section: Section,
        pieces: _Pieces,
        errors: list[InputError],
        notes: RowNotes | None = None,
    ) -> None:
        self.section, self.pieces, self.errors, self.notes = section, pieces, errors, notes
        self.reader = Bulk(section)
        self.texts: dict[bytes, str] = {}
        """A row pattern's columns, by its key."""
        self.problems: dict[bytes, tuple[Problem, ...]] = {}
        """What `notes` finds wrong in a row pattern, by its key."""
        self.templates: tuple[dict[int, _Template], dict[int, _Template]] = ({}, {})
        """By a shared row list's identity, for PCINC and PCMASK functions: what they print, as templates."""
        self.padded: dict[tuple[int, int], _Template] = {}
        """By a shared row list's identity and a number of digits: the template of the functions whose rows'
        addresses have that many (`_padded`)."""
        aarch64 = section.is_aarch64
        self.plain = [not (i.pcmask or i.signal or (aarch64 and i.pauth_key_b)) for i in FDE_INFOS]
        """By FDE info byte: whether a function's title is the common one, and its rows at its address."""

    def run(self) -> None:
        """The dump of every function, in FDE order (a function the bulk reader finds unusual through the model)."""
        section, pieces = self.section, self.pieces
        append, streamed = pieces.bytes.append, pieces.sink is not None
        limit = min(ADDRESS_MASK - (1 << 32), INT32_MAX)  # addresses to the end of the function do not wrap
        pending = 0
        for walked in self.reader.functions():
            try:  # most functions: a block of rows the reader hands out again, all read
                index, start, size, _, _, block = walked
            except TypeError:  # an index: the function is unusual, the model reads it and words its error
                _model_function(section, walked, pieces, self.errors)
                pending += 1
            else:
                full, _, starts, flagged, lines, low, high = block.made or self._made(block, start)
                if not low <= start < high:  # rows' addresses of another number of digits
                    full, _, starts, flagged, lines, low, high = self._made(block, start)
                if lines and size <= INT32_MAX and start + size <= limit:
                    if lines == 4:  # one to three rows, most functions: their addresses without a map
                        append(full % (index, start, size, start + starts[0]))
                    elif lines == 5:
                        append(full % (index, start, size, start + starts[0], start + starts[1]))
                    elif lines == 6:
                        append(full % (index, start, size, start + starts[0], start + starts[1], start + starts[2]))
                    else:
                        append(full % (index, start, size, *map(start.__add__, starts)))
                    if flagged:
                        self._after_rows(walked, flagged)
                    pending += lines
                else:
                    pending += self._other(walked)
            if streamed and pending > CHUNK_LINES:
                pieces.flush()
                pending = 0

    def _made(self, block: Block, start: int) -> _Template:
        """What the dump keeps with a block of rows the reader hands out again: the template its functions
        print, for rows' addresses of as many digits as those of the function at `start` (the next function
        mostly starts near it), or `UNCOMMON` when the FDE's info byte gives them a title of their own
        (PCMASK, a signal frame, a B key), or while no other function has these rows, or they stop short."""
        if not (block.shared and block.complete):
            return UNCOMMON  # not kept: the block may be handed out again, and shared then
        if not self.plain[block.info.byte]:
            made = block.made = UNCOMMON
            return made
        rows = block.rows
        digits = max(1, (start.bit_length() + 3) // 4)
        low, high = 16 ** (digits - 1) if digits > 1 else 0, 16**digits - max((s for s, _ in rows), default=0)
        if low <= start < high:  # every row's address has `digits` digits
            made = self.padded.get((id(rows), digits)) or self._template(rows, False, digits, low, high)
        else:  # the rows' addresses do not all have as many digits (from `high` on): padded by `%016x`, there
            generic = self.templates[False].get(id(rows)) or self._template(rows, False)
            made = generic._replace(low=high, high=16**digits)
        block.made = made
        return made

    def _other(self, func: BulkFunction) -> int:
        """A function the common case leaves out (a PCMASK one, a signal frame, a B key, an address that
        wraps, rows of its own or cut short); the lines it added."""
        _, start, size, _, _, block = func
        pcmask, rows = block.info.pcmask, block.rows
        base = 0 if pcmask else start
        if not block.shared or base + size + (1 << 32) > ADDRESS_MASK:  # near the top: addresses wrap
            self._rows_one_by_one(func, base)
            return CHUNK_LINES + 1  # written out already
        assert isinstance(rows, list)
        _, part, starts, flagged, lines, _, _ = self.templates[pcmask].get(id(rows)) or self._template(rows, pcmask)
        pieces = self.pieces
        title = pieces.encode(f"\n{self._title(func)}\n{TABLE_HEADS[pcmask]}\n")
        pieces.bytes.append(title + part % tuple(map(base.__add__, starts)))
        self._after_rows(func, flagged)
        return lines

    def _after_rows(self, func: BulkFunction, flagged: list[tuple[int, Problem]]) -> None:
        """`notes` told of the rows it judges, and why the rows stop early, if they do."""
        index, block = func[0], func[5]
        if self.notes is not None:
            for j, problem in flagged:
                self.notes.add(index, j, problem)
        if not block.complete:
            assert isinstance(block.rows, list)  # (a block handed out again is a list)
            self._rows_error(func, len(block.rows))

    def _template(
        self, rows: list[BulkRow], pcmask: bool, digits: int | None = None, low: int = 0, high: int = 1 << 64
    ) -> _Template:
        """What every function with these rows prints, as templates (made once for each distinct block); with
        `digits`, for functions from `low` to `high`, whose rows' addresses all have that many digits."""
        columns, flagged = [], []
        for j, (_, key) in enumerate(rows):  # a pattern's problems read with its text: `_describe` may forget others
            columns.append(self.texts.get(key) or self._describe(key))
            flagged += [(j, problem) for problem in self.problems.get(key, ())]
        address = ROW_ADDRESS if digits is None else _padded(digits)
        part = self.pieces.encode("".join(f"    {address}{text.replace('%', '%%')}\n" for text in columns))
        full = self.pieces.encode(COMMON_TITLE + TABLE_HEADS[pcmask] + "\n") + part
        made = _Template(full, part, tuple(s for s, _ in rows), flagged, len(rows) + 3, low, high)
        if digits is None:
            self.templates[pcmask][id(rows)] = made
        else:
            self.padded[id(rows), digits] = made
        return made

    def _describe(self, key: bytes) -> str:
        """A row pattern's columns (and what `notes` finds wrong in it), kept in `texts` (and `problems`)
        until the reader's `kept_max` of them are, then all forgotten and begun again."""
        pattern = self.reader.pattern(key)
        if len(self.texts) >= self.reader.kept_max:  # as many as the reader keeps patterns: begun again past that
            self.texts.clear()
            self.problems.clear()
        text = self.texts[key] = _columns(self.section, pattern.cfa, pattern.fp, pattern.ra, pattern.mangled_ra)
        if self.notes is not None:
            self.problems[key] = self.notes.judge(key, pattern.cfa)
        return text

    def _title(self, func: BulkFunction) -> str:
        index, start, size, _, _, block = func
        info = block.info
        pauth_b = self.section.is_aarch64 and info.pauth_key_b
        return _title(self.section, index, start, size, info.signal, False, pauth_b)

    def _rows_one_by_one(self, func: BulkFunction, base: int) -> None:
        """A function whose rows are its own (or very many, read as they are written out), or whose addresses
        wrap: line by line."""
        index, _, size, _, _, block = func
        pieces, notes, texts = self.pieces, self.notes, self.texts
        pieces.add(f"\n{self._title(func)}\n{TABLE_HEADS[block.info.pcmask]}\n")
        mask = base + size + (1 << 32) > ADDRESS_MASK
        j = -1
        for j, (start, key) in enumerate(block.rows):
            columns = texts.get(key) or self._describe(key)
            pieces.add(f"    {(base + start) & ADDRESS_MASK if mask else base + start:016x}{columns}\n")
            if notes is not None:
                for problem in self.problems[key]:
                    notes.add(index, j, problem)
            if pieces.full():
                pieces.flush()
        if not block.complete:
            self._rows_error(func, j + 1)

    def _rows_error(self, func: BulkFunction, read: int) -> None:
        """The rows stop early, after `read` of them: the model says why, from where the bulk reader stopped
        (the model's rows stop there too), the FDE not decoded again."""
        index, _, _, pos, _, block = func
        section = self.section
        placed = Placed(section, index, block.info.fre_type, block.count, pos)
        problem = section.rows_stop(placed, read, pos + block.length)
        self.errors.append(problem)
        self.pieces.add(_problem(problem) + "\n")


def _problem(error: InputError) -> str:
    """A problem as a line of the dump, where the function or row would have been."""
    where = f" at section offset {error.offset:#x}" if error.offset is not None else ""
    return f"    [cannot be decoded{where}: {error.message}]"


def _model_function(
    section: Section,
    index: int,
    pieces: _Pieces,
    errors: list[InputError],
) -> None:
    """Function `index` through the Kaitai model: its lines, then the problem that cut it short, if any."""
    func = section.function(index)
    if func.error is not None:
        errors.append(func.error)
        pieces.add(f"\n    func idx [{index}]:\n{_problem(func.error)}\n")
        return
    pauth_b = section.is_aarch64 and func.pauth_key == Sframe.PauthKey.key_b
    title = _title(section, func.index, func.start_address, func.size, func.signal, func.flexible, pauth_b)
    pieces.add(f"\n{title}\n{TABLE_HEADS[func.pcmask]}\n")
    for row in func.rows:
        pieces.add(_row_line(section, func, row) + "\n")
        if pieces.full():
            pieces.flush()
    if func.rows_error is not None:
        errors.append(func.rows_error)
        pieces.add(_problem(func.rows_error) + "\n")


def _row_line(section: Section, func: Function, row: Row) -> str:
    start = row.start_offset if func.pcmask else row.address
    return f"    {start:016x}{_columns(section, row.cfa, row.fp, row.ra, row.mangled_ra)}"
