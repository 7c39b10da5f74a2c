"""`sfview dump`: the section as binutils prints it, or as JSON.

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

import struct
from collections.abc import Callable
from typing import TextIO

from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe import describe
from sfview.sframe.bulk import Bulk
from sfview.sframe.rules import Kind, Rule
from sfview.sframe.section import ADDRESS_MASK, Function, Row, Section

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
    for bit, name in describe.FLAG_NAMES:
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
    lines = ["  Header :", "", f"    Version: {describe.VERSION_NAMES[version]}"]
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


def _columns(section: Section, cfa: Rule, fp: Rule, ra: Rule, mangled: bool) -> str:
    """What follows a row's start address: its three columns, or `RA undefined`."""
    if ra.kind is Kind.UNDEFINED:
        return "  RA undefined"
    cfa_text, fp_text, ra_text = describe.binutils_columns(section, cfa, fp, ra, mangled)
    return f"  {cfa_text:<10}{fp_text:<10}{ra_text:<13}"


TABLE_HEADS = {
    pcmask: f"    {'STARTPC':<7}{'[m]' if pcmask else '':<8} {'CFA':<10}{'FP':<10}{'RA':<13}"
    for pcmask in (False, True)
}
"""The column titles over a function's rows; `[m]` marks a PCMASK function's."""


CHUNK_LINES = 4096
"""Lines a streamed dump gathers before it writes them: few writes, little memory."""


def write(section: Section, out: TextIO) -> list[InputError]:
    """The dump written to `out` as it is made, a few thousand lines at a time; the problems met.

    What `text` returns, without ever holding the whole of it: 9 MB of text
    for 40,000 functions, which is memory, and time, to build and then copy.
    """
    lines = [TITLE, *_header_lines(section), "", "  Function Index :"]
    errors: list[InputError] = []

    def flush(lines: list[str]) -> None:
        out.write("\n".join(lines))
        out.write("\n")
        lines.clear()

    _bulk_functions(section, lines, errors, flush)
    flush(lines)
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
    # The dumper prints the title without a newline, then "\n  Header :".
    lines = [TITLE, *_header_lines(section), "", "  Function Index :"]
    errors: list[InputError] = []
    if bulk:
        _bulk_functions(section, lines, errors)
    else:
        for index in range(section.num_fdes):
            _model_function(section, index, lines, errors)
    return "\n".join(lines) + "\n", errors


def _bulk_functions(
    section: Section,
    lines: list[str],
    errors: list[InputError],
    flush: Callable[[list[str]], None] | None = None,
) -> None:
    """Every function through the bulk reader (the hot path of a dump: kept tight)."""
    reader = Bulk(section)
    texts: dict[bytes, str] = {}
    known = texts.get
    blocks: dict[int, list[tuple[int, str]]] = {}

    def describe_row(key: bytes) -> str:
        pattern = reader.pattern(key)
        text = texts[key] = _columns(section, pattern.cfa, pattern.fp, pattern.ra, pattern.mangled_ra)
        return text

    append = lines.append
    aarch64 = section.is_aarch64
    for walked in reader.functions():
        if isinstance(walked, int):  # unusual: the model reads it, and words its error
            _model_function(section, walked, lines, errors, flush)
            continue
        func, rows = walked
        info = func.info
        pauth_b = aarch64 and info.pauth_key_b
        if info.signal or pauth_b or func.size > INT32_MAX:
            title = _title(section, func.index, func.start_address, func.size, info.signal, False, pauth_b)
        else:  # the common case, written out here: this line is printed 40,000 times
            title = f"    func idx [{func.index}]: pc = {func.start_address:#x}, size = {func.size} bytes"
        append(f"\n{title}\n{TABLE_HEADS[info.pcmask]}")  # joined by newlines: a blank line, title, head
        base = 0 if info.pcmask else func.start_address
        mask = base + func.size + (1 << 32) > ADDRESS_MASK  # only near the top of the address space
        if func.shared:  # the bulk reader hands out one list per distinct block, and keeps it
            described = blocks.get(id(rows))
            if described is None:
                described = blocks[id(rows)] = [(start, known(key) or describe_row(key)) for start, key in rows]
        else:  # rows of this function alone (or very many of them, read as they are written out)
            described = ((start, known(key) or describe_row(key)) for start, key in rows)
        for start, columns in described:
            append(f"    {(base + start) & ADDRESS_MASK if mask else base + start:016x}{columns}")
            if flush is not None and len(lines) > CHUNK_LINES:
                flush(lines)
        if not func.complete:  # the rows stop early: the model says why
            problem = section.function(func.index).rows.error
            assert problem is not None, "the bulk reader and the model stop at the same row"
            errors.append(problem)
            append(_problem(problem))
        if flush is not None and len(lines) > CHUNK_LINES:
            flush(lines)


def _problem(error: InputError) -> str:
    """A problem as a line of the dump, where the function or row would have been."""
    where = f" at section offset {error.offset:#x}" if error.offset is not None else ""
    return f"    [cannot be decoded{where}: {error.message}]"


def _model_function(
    section: Section,
    index: int,
    lines: list[str],
    errors: list[InputError],
    flush: Callable[[list[str]], None] | None = None,
) -> None:
    """Function `index` through the Kaitai model: its lines, then the problem that cut it short, if any."""
    func = section.function(index)
    if func.error is not None:
        errors.append(func.error)
        lines.append("")
        lines.append(f"    func idx [{index}]:")
        lines.append(_problem(func.error))
        return
    lines.append("")
    lines.append(
        _title(
            section,
            func.index,
            func.start_address,
            func.size,
            func.signal,
            func.flexible,
            section.is_aarch64 and func.pauth_key == Sframe.PauthKey.key_b,
        )
    )
    lines.append(TABLE_HEADS[func.pcmask])
    for row in func.rows:
        lines.append(_row_line(section, func, row))
        if flush is not None and len(lines) > CHUNK_LINES:
            flush(lines)
    if func.rows_error is not None:
        errors.append(func.rows_error)
        lines.append(_problem(func.rows_error))


def _row_line(section: Section, func: Function, row: Row) -> str:
    start = row.start_offset if func.pcmask else row.address
    return f"    {start:016x}{_columns(section, row.cfa, row.fp, row.ra, row.mangled_ra)}"
