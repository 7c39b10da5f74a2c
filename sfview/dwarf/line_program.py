"""A CU's DWARF line program run to its rows, held as two arrays of words: bounded by the program's bytes.

pyelftools decodes a line program into an object and a copy of the line
state for every opcode, some 600 bytes a row: a `.debug_line` of 1 MB of
one-byte special opcodes held 617 MB and took 20 s. The header stays
pyelftools' (its file names, its opcode parameters); the opcodes are run
here (DWARF 5 §6.2.5, as pyelftools and gdb run them), each row kept as its
address and one word packing its line, file and flags: 16 bytes a row. A
program longer than `MAX_PROGRAM` is not run (its CU's frames then have no
line, as with a damaged program).
"""

from __future__ import annotations

import mmap
import struct
from array import array
from typing import Any

from sfview.errors import InputError
from sfview.inputs.leb128 import leb128

MAX_PROGRAM = 1 << 20
"""The bytes of one CU's line program at most (the largest in a distribution's debug files is some 50 KB)."""
ADDRESS_MASK = (1 << 64) - 1
END, STMT, RECORDED = 1, 2, 4
"""A row's flags in the low bits of its word: it ends a sequence; it is a statement; gdb records it in its
line table (`recorded`)."""
FILE_SHIFT, LINE_SHIFT = 3, 32
FIELD = (1 << 29) - 1
"""A file number is kept to 29 bits, a line to 32 bits with its sign (a damaged program's larger ones wrap;
its lines below 1, as pyelftools gives them)."""


def _leb(data: bytes, pos: int, signed: bool) -> tuple[int, int]:
    try:
        return leb128(data, pos, signed)
    except IndexError:
        raise InputError(f"a LEB128 number runs past the program's end at +{pos:#x}") from None


class LineRows:
    """A line program's rows sorted by address (a sequence's end before the next one's start at the same
    address): `addresses[i]`, and `words[i]` packing the line, file and flags (`line`, `file`, `is_stmt`,
    `ends`)."""

    def __init__(self, addresses: array, words: array) -> None:
        self.addresses = addresses
        self.words = words

    def line(self, i: int) -> int:
        line = self.words[i] >> LINE_SHIFT
        return line - (1 << 32) if line >> 31 else line

    def file(self, i: int) -> int:
        return self.words[i] >> FILE_SHIFT & FIELD

    def is_stmt(self, i: int) -> bool:
        return bool(self.words[i] & STMT)

    def ends(self, i: int) -> bool:
        return bool(self.words[i] & END)

    def recorded(self, i: int) -> bool:
        """Whether gdb keeps row `i` in its line table, where a line then starts: not a row of the same file
        and line as the last one kept in its sequence once a block of that line had a discriminator (gdb's
        `dwarf_record_line_p`, its pr 17276: the blocks of one line are one line to a person)."""
        return bool(self.words[i] & RECORDED)


def line_rows(program: Any) -> LineRows:
    """The rows of pyelftools' `LineProgram` `program`, run from its bytes; an `InputError` when it is too
    long or runs past its end."""
    header = program.header
    start, end = program.program_start_offset, program.program_end_offset
    if end - start > MAX_PROGRAM:
        raise InputError(f"a line program of {end - start} bytes: sfview runs {MAX_PROGRAM} at most")
    program.stream.seek(start)
    data = program.stream.read(max(end - start, 0))
    opcode_base, line_base, line_range = header["opcode_base"], header["line_base"], header["line_range"]
    min_length = header["minimum_instruction_length"]
    max_ops = header.get("maximum_operations_per_instruction", 1) or 1
    if not line_range:
        raise InputError("a line program whose line_range is 0")
    lengths = list(header["standard_opcode_lengths"])
    address_size = program.structs.address_size
    order = "little" if program.structs.little_endian else "big"
    default_stmt = bool(header["default_is_stmt"])
    addresses, words = array("Q"), array("Q")

    address, file, line, stmt, op_index = 0, 1, 1, default_stmt, 0
    discriminator, discriminated, last = 0, False, (0, 0)

    def emit(ends: bool) -> None:
        nonlocal discriminator, last
        recorded = not ends and not (discriminated and last == (file, line))
        last = (file, line) if recorded else last
        discriminator = 0
        addresses.append(address & ADDRESS_MASK)
        flags = (STMT if stmt else 0) | (RECORDED if recorded else 0) | ends
        words.append((line & 0xFFFFFFFF) << LINE_SHIFT | (file & FIELD) << FILE_SHIFT | flags)

    def advance_line(delta: int) -> None:
        """gdb's: a line reached with a discriminator set is one whose blocks are told apart."""
        nonlocal line, discriminated
        line += delta
        if delta:
            discriminated = discriminator != 0

    pos = 0
    while pos < len(data):
        opcode = data[pos]
        pos += 1
        if opcode >= opcode_base:
            adjusted = opcode - opcode_base
            advance = op_index + adjusted // line_range
            address += min_length * (advance // max_ops)
            op_index = advance % max_ops
            advance_line(line_base + adjusted % line_range)
            emit(False)
        elif opcode == 0:
            length, pos = _leb(data, pos, False)
            if not length or pos >= len(data):
                pos += length
                continue
            extended, operands, pos = data[pos], pos + 1, pos + length
            if extended == 1:  # DW_LNE_end_sequence
                stmt = False
                emit(True)
                address, file, line, stmt, op_index = 0, 1, 1, default_stmt, 0
                discriminated, last = False, (0, 0)
            elif extended == 2:  # DW_LNE_set_address
                address, op_index = int.from_bytes(data[operands : operands + address_size], order), 0
            elif extended == 4:  # DW_LNE_set_discriminator
                discriminator = _leb(data, operands, False)[0]
                discriminated = discriminated or discriminator != 0
        elif opcode == 1:  # DW_LNS_copy
            emit(False)
        elif opcode == 2:  # DW_LNS_advance_pc
            advance, pos = _leb(data, pos, False)
            address += advance * min_length
        elif opcode == 3:  # DW_LNS_advance_line
            advance, pos = _leb(data, pos, True)
            advance_line(advance)
        elif opcode == 4:  # DW_LNS_set_file
            file, pos = _leb(data, pos, False)
        elif opcode == 6:  # DW_LNS_negate_stmt
            stmt = not stmt
        elif opcode == 8:  # DW_LNS_const_add_pc
            address += (255 - opcode_base) // line_range * min_length
        elif opcode == 9:  # DW_LNS_fixed_advance_pc
            address += int.from_bytes(data[pos : pos + 2], order)
            pos += 2
        else:  # set_column, set_isa and any other: their operands, as the header counts them, read past
            for _ in range(lengths[opcode - 1] if opcode - 1 < len(lengths) else 0):
                pos = _leb(data, pos, False)[1]
    return _sorted(addresses, words)


def _key(addresses: array, words: array, i: int) -> int:
    """Row `i`'s place in the table: its address, a sequence's end first among rows there."""
    return addresses[i] << 1 | (not words[i] & END)


def _sorted(addresses: array, words: array) -> LineRows:
    """The rows in address order, a sequence's end first among rows of one address (a stable sort of the
    program's order). A compiler writes each sequence in order, the sequences in any order (a function in
    `.text.startup` after those in `.text`): those are put in order as blocks; only rows out of order within
    a sequence, or sequences that overlap, are sorted one by one."""
    sequences, first = [], 0
    for i, word in enumerate(words):
        if word & END or i == len(words) - 1:
            sequences.append((first, i + 1))
            first = i + 1
    keys = [(_key(addresses, words, lo), _key(addresses, words, hi - 1), lo, hi) for lo, hi in sequences]
    blocks = sorted(keys)
    in_order = all(
        _key(addresses, words, i) <= _key(addresses, words, i + 1) for lo, hi in sequences for i in range(lo, hi - 1)
    ) and all(blocks[j][1] < blocks[j + 1][0] for j in range(len(blocks) - 1))
    if in_order:
        if [lo for _, _, lo, _ in blocks] == [lo for lo, _ in sequences]:
            return LineRows(addresses, words)
        ordered_addresses, ordered_words = array("Q"), array("Q")
        for _, _, lo, hi in blocks:
            ordered_addresses.extend(addresses[lo:hi])
            ordered_words.extend(words[lo:hi])
        return LineRows(ordered_addresses, ordered_words)
    order = sorted(range(len(addresses)), key=lambda i: _key(addresses, words, i))
    return LineRows(array("Q", (addresses[i] for i in order)), array("Q", (words[i] for i in order)))


FIXED_FORMS = {0x0B: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x1E: 16, 0x0C: 1, 0x19: 0, 0x25: 1, 0x26: 2, 0x27: 3, 0x28: 4}
"""The forms of a DWARF 5 line table header's entries that take a fixed number of bytes (data1…data16, flag,
flag_present, strx1…strx4)."""
OFFSET_FORMS = frozenset({0x0E, 0x1F, 0x17})
"""strp, line_strp, sec_offset: an offset in the section's offset size."""
LEB_FORMS = frozenset({0x0F, 0x0D, 0x1A})
"""udata, sdata, strx."""
STRING, BLOCK = 0x08, 0x09
MAX_ENTRIES = 1 << 14
"""The directories, and the file names, of one line table header at most (gcc's largest units list a few
hundred): pyelftools makes an object of some 500 bytes for each."""


def check_header(data: bytes | mmap.mmap, offset: int, order: str) -> None:
    """Refuse a line table header (of `.debug_line`'s bytes `data`, at `offset`, its numbers in the byte
    `order` of `struct`, `<` or `>`: s390x's DWARF is big-endian) whose directory or file name
    lists hold more than `MAX_ENTRIES`, or (DWARF 5) claim more entries than its bytes hold, before pyelftools
    reads it: pyelftools makes an object for every entry claimed, and an entry of no field is no byte (a count
    of 2³² in a 20 KB file: 1.5 GB)."""
    try:
        (length,) = struct.unpack_from(order + "I", data, offset)
        wide = length == 0xFFFFFFFF
        at = offset + (12 if wide else 4)
        (version,) = struct.unpack_from(order + "H", data, at)
        size = 8 if wide else 4
        at += 4 if version >= 5 else 2  # address_size and segment_selector_size from DWARF 5
        (header_length,) = struct.unpack_from(order + ("Q" if wide else "I"), data, at)
        at += size
        end = min(at + header_length, len(data))
        at += 5 if version >= 4 else 4  # up to opcode_base (maximum_operations_per_instruction from DWARF 4)
        at += data[at]  # opcode_base, then the standard opcodes' lengths
        if version < 5:
            _check_lists(data, at, offset)
            return
        for what in ("directories", "file names"):
            formats, at = [], at + 1
            for _ in range(data[at - 1]):
                _, at = leb128(data, at, False)
                form, at = leb128(data, at, False)
                formats.append(form)
            count, at = leb128(data, at, False)
            least = sum(FIXED_FORMS.get(form, size if form in OFFSET_FORMS else 1) for form in formats)
            if count > MAX_ENTRIES:
                raise InputError(f"the line table header at {offset:#x} lists {count} {what}: sfview reads fewer")
            if count and (not least or count * least > end - at):
                raise InputError(
                    f"the line table header at {offset:#x} lists {count} {what} of {least} bytes or more"
                    f" in {max(end - at, 0)} bytes"
                )
            for _ in range(count):
                for form in formats:
                    at = _past(data, at, form, size)
    except (struct.error, IndexError):
        raise InputError(f"the line table header at {offset:#x} runs past the section's end") from None


def _check_lists(data: bytes, at: int, offset: int) -> None:
    """Refuse a DWARF 2 to 4 header's directories or file names past `MAX_ENTRIES` (each list ends at an empty
    name; a file's name is followed by three LEB128 numbers)."""
    for what, numbers in (("directories", 0), ("file names", 3)):
        for _ in range(MAX_ENTRIES + 1):
            end = data.find(b"\0", at)
            if end < 0:
                raise IndexError  # no NUL: the list runs past the section's end
            if end == at:
                break
            at = end + 1
            for _ in range(numbers):
                _, at = leb128(data, at, False)
        else:
            raise InputError(f"the line table header at {offset:#x} lists more than {MAX_ENTRIES} {what}")
        at += 1


def _past(data: bytes, at: int, form: int, size: int) -> int:
    """Where a line table header entry's field of `form` at `at` ends."""
    if form in FIXED_FORMS:
        return at + FIXED_FORMS[form]
    if form in OFFSET_FORMS:
        return at + size
    if form in LEB_FORMS:
        return leb128(data, at, False)[1]
    if form == STRING:
        end = data.find(b"\0", at)
        if end < 0:
            raise IndexError  # no NUL: the entry runs past the section's end
        return end + 1
    if form == BLOCK:
        length, at = leb128(data, at, False)
        return at + length
    raise InputError(f"a line table header's field of form {form:#x}: not one a line table holds")
