"""Sections built by hand and damaged on purpose, shared by the test lanes.

Written from the specification, not from `sframe.ksy`, so that the tests
check the description rather than repeat it: a version 2 AMD64 section of
given rows, version 3 rows with flexible FDEs, a byte-swapped twin of any
section, and the mutations a damaged section gets. `SAMPLES` holds every
fixture's section (and a version 3 flexible one) to start from.
"""

from __future__ import annotations

import random
import struct
from itertools import accumulate

from conftest import ELF_FIXTURES, SECTIONS, load_section_fixture, v3_section

from sfview.document import Document
from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.sframe.model.section import Section

PCREL_SORTED = 0x5
SAVED = 0b010  # control word: reg_p 0, deref_p 1: the value was saved at CFA + offset


def reg(n: int, deref: bool = False) -> int:
    """A control word whose base is DWARF register `n`."""
    return (n << 3) | 1 | (2 if deref else 0)


RSP, RBP, R10 = 7, 6, 10

AMD64_ROWS = [
    (0, 1, [reg(RSP), 8]),  # CFA only: the RA is the header's (f), the FP untracked (u)
    (1, 1, [reg(RSP), 16, 0]),  # RA padding word
    (2, 1, [reg(RSP), 16, SAVED, -8]),  # RA saved at CFA-8, given by the row
    (3, 1, [reg(RSP), 16, 0, SAVED, -16]),  # RA padding, FP at CFA-16
    (4, 0, [reg(RBP), 16, reg(2), 0, reg(RBP, True), 0]),  # RA in r2, FP loaded from (fp+0)
    (5, 0, [reg(RBP, True), -48, reg(RBP, True), 8, SAVED, -16]),  # dereferenced CFA, negative offset
    (6, 1, [reg(R10), 0]),  # CFA from a register that is neither SP nor FP
    (7, 1, []),  # no words: the outermost frame
]


def v2_section(functions: list[list[tuple[int, int]]], *, reverse: bool = False) -> bytes:
    """A version 2 AMD64 section from the spec: each function its rows (start, CFA offset), 1-byte fields.
    `reverse`: the FDEs list the functions in the opposite order of their row blocks."""
    blocks, offsets = b"", []
    for rows in functions:
        offsets.append(len(blocks))
        blocks += b"".join(bytes([start, 0x03]) + struct.pack("<b", cfa) for start, cfa in rows)
    order = range(len(functions) - 1, -1, -1) if reverse else range(len(functions))
    fdes = b"".join(
        struct.pack("<iIIIBBH", 0x1000 + 0x100 * i, 0x100, offsets[i], len(functions[i]), 0, 0, 0) for i in order
    )
    num_fres = sum(map(len, functions))
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(functions), num_fres, len(blocks), 0, len(fdes)
    )
    return header + fdes + blocks


FDE_LAYOUT = {1: "iIIIB", 2: "iIIIBBH", 3: "qII"}


def long_function(version: int, rows: int = 6000, bare: bool = False) -> bytes:
    """An AMD64 section of one function at 0x1000 (PCREL from version 3) with `rows` rows two bytes apart
    (2-byte starts, one 1-byte CFA offset each), the middle row starting before the one above it: 4 bytes a row
    (`bare`: no CFA offset, 3 bytes a row)."""
    starts = [2 * i - 3 * (i == rows // 2) for i in range(rows)]
    rows_made = (
        struct.pack("<HB", s, 1) if bare else struct.pack("<HBb", s, 3, 8 + i % 64) for i, s in enumerate(starts)
    )
    block = b"".join(rows_made)
    if version >= 3:
        block = struct.pack("<HBBB", rows, 0x01, 0, 0) + block
        fde = struct.pack("<qII", 0x1000 - 28, 2 * rows, 0)
    else:
        fde = struct.pack("<" + FDE_LAYOUT[version], 0x1000, 2 * rows, 0, rows, 0x01, *((0, 0) if version == 2 else ()))
    flags = 0x5 if version >= 3 else 0x1
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, version, flags, 3, 0, -8, 0, 1, rows, len(block), 0, len(fde))
    return header + fde + block


def overlapping(version: int, fdes: int, rows: int, slide: bool = True) -> bytes:
    """An AMD64 section whose `fdes` functions, 4 bytes apart, read overlapping blocks of one pool of rows
    (2-byte starts two apart, one 1-byte CFA offset each: 4 bytes a row), each function long enough for every
    row. Versions 1 and 2: with `slide`, function i's `rows` rows start at the pool's row i, else they all
    start at row 0 and function i has `rows - i` of them. Version 3 (the count is the block's): every
    function reads the one block. The shapes that cost a profile the most per byte (each function's rows
    walked again)."""
    pool = rows + (fdes if slide and version < 3 else 0)
    block = b"".join(struct.pack("<HBb", 2 * k, 0x03, 8 + k % 64) for k in range(pool))
    size = 2 * pool + 2
    if version >= 3:
        block = struct.pack("<HBBB", rows, 0x01, 0, 0) + block
        table = [struct.pack("<qII", 0x1000 + 4 * i - (28 + 16 * i), size, 0) for i in range(fdes)]
    else:
        extra = (0, 0) if version == 2 else ()
        table = [
            struct.pack(
                "<" + FDE_LAYOUT[version],
                0x1000 + 4 * i,
                size,
                4 * i if slide else 0,
                rows if slide else max(rows - i, 1),
                0x01,
                *extra,
            )
            for i in range(fdes)
        ]
    fde = b"".join(table)
    flags = 0x5 if version >= 3 else 0x1
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, version, flags, 3, 0, -8, 0, fdes, pool, len(block), 0, len(fde))
    return header + fde + block


def at_one_start(version: int, fdes: int) -> bytes:
    """An AMD64 section of `fdes` functions all starting at 0x1000 (PCREL in version 3), 0x100 bytes each,
    each with its own two rows (at +0, CFA offset 8 + 8 * (i % 12), and at +(1 + i % 200), 16): every
    function's PCs are the same ones, judged again for each (2.47 takes a version 2 start relative to its
    own field: in its eyes the starts are 20 bytes apart, and each function's PCs meet a dozen FDEs)."""
    blocks, table = b"", []
    for i in range(fdes):
        rows = struct.pack("<HBbHBb", 0, 0x03, 8 + 8 * (i % 12), 1 + i % 200, 0x03, 16)
        if version >= 3:
            table.append(struct.pack("<qII", 0x1000 - (28 + 16 * i), 0x100, len(blocks)))
            rows = struct.pack("<HBBB", 2, 0x01, 0, 0) + rows
        else:
            extra = (0, 0) if version == 2 else ()
            table.append(struct.pack("<" + FDE_LAYOUT[version], 0x1000, 0x100, len(blocks), 2, 0x01, *extra))
        blocks += rows
    fde = b"".join(table)
    flags = 0x5 if version >= 3 else 0x1
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, version, flags, 3, 0, -8, 0, fdes, 2 * fdes, len(blocks), 0, len(fde))
    return header + fde + blocks


def past_the_pool(
    version: int, fdes: int, pool: int, claimed: int = 65535, size: int = 0x100, pcmask: bool = False
) -> bytes:
    """An AMD64 section of `fdes` functions `size` bytes apart and long, all reading one pool of `pool` rows
    (2-byte starts two apart, one 1-byte CFA offset each) and each claiming `claimed` rows (version 3: the
    one block's count): the rows past the pool cannot exist, and every function's walk runs into the pool's
    end at the same row. With `pcmask`, PCMASK functions whose blocks repeat every 16 bytes."""
    info = 0x01 | (0x10 if pcmask else 0)
    block = b"".join(struct.pack("<HBb", 2 * k, 0x03, 8 + k % 64) for k in range(pool))
    if version >= 3:
        block = struct.pack("<HBBB", claimed, info, 0, 16 if pcmask else 0) + block
        table = [struct.pack("<qII", 0x1000 + size * i - (28 + 16 * i), size, 0) for i in range(fdes)]
    else:
        extra = (16 if pcmask else 0, 0) if version == 2 else ()
        table = [
            struct.pack("<" + FDE_LAYOUT[version], 0x1000 + size * i, size, 0, claimed, info, *extra)
            for i in range(fdes)
        ]
    fde = b"".join(table)
    flags = 0x5 if version >= 3 else 0x1
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, version, flags, 3, 0, -8, 0, fdes, pool, len(block), 0, len(fde))
    return header + fde + block


def _v3(functions: int, rows: int, table: list[bytes], blocks: bytes) -> bytes:
    """A version 3 AMD64 section (PCREL, sorted) of these FDEs and blocks."""
    fdes = b"".join(table)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 3, 5, 3, 0, -8, 0, functions, rows, len(blocks), 0, len(fdes))
    return header + fdes + blocks


def nested(functions: int) -> bytes:
    """A version 3 AMD64 section of `functions` functions each inside the one before (4 bytes further on,
    8 bytes shorter), each its own block of two rows: the kernel's validation reads every row, and the
    bytes after each block (the next block's attributes) as rows too, refused."""
    blocks, table = b"", []
    for i in range(functions):
        table.append(struct.pack("<qII", 0x1000 + 4 * i - (28 + 16 * i), 0x100000 - 8 * i, len(blocks)))
        blocks += struct.pack("<HBBBHBbHBb", 2, 0x01, 0, 0, 0, 0x03, 8, 1, 0x03, 16)
    return _v3(functions, 2 * functions, table, blocks)


def rows_alike(functions: int, rows: int, size: int = 0x1000) -> bytes:
    """A version 3 AMD64 section of `functions` functions `size` bytes long and apart, all reading one block
    of `rows` rows two bytes apart, none with data words (every lookup fails in the kernel's v14
    reader, one way): each function holds all the rows."""
    block = struct.pack("<HBBB", rows, 0x01, 0, 0) + b"".join(struct.pack("<HB", 2 * k, 0x01) for k in range(rows))
    table = [struct.pack("<qII", 0x1000 + size * i - (28 + 16 * i), size, 0) for i in range(functions)]
    return _v3(functions, rows, table, block)


def pcmask_gigabytes(fdes: int, version: int = 2, apart: int = 0x10000, first: int = 0) -> bytes:
    """An AMD64 section of `fdes` PCMASK functions `apart` bytes apart (each owns the PCs to the next one's
    start), each claiming 4 GB with its own two rows, at `first` (CFA offset 8) and `first + 4` (16): the
    rows' pattern repeats for billions of PCs. Version 3 and 2 repeat every 16 bytes (`rep_size`); 2.40 keys
    version 1's on the PC & 0xff. With `first` 4, the first 4 bytes of every repeat find no row."""
    if version >= 3:
        blocks, table = b"", []
        for i in range(fdes):
            table.append(struct.pack("<qII", 0x1000 + apart * i - (28 + 16 * i), 0xFFFFFFFF, len(blocks)))
            blocks += struct.pack("<HBBBHBbHBb", 2, 0x11, 0, 16, first, 0x03, 8, first + 4, 0x03, 16)
        return _v3(fdes, 2 * fdes, table, blocks)
    rows = struct.pack("<HBbHBb", first, 0x03, 8, first + 4, 0x03, 16)
    extra = (16, 0) if version == 2 else ()
    fde = b"".join(
        struct.pack("<" + FDE_LAYOUT[version], 0x1000 + apart * i, 0xFFFFFFFF, 8 * i, 2, 0x11, *extra)
        for i in range(fdes)
    )
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, version, 1, 3, 0, -8, 0, fdes, 2 * fdes, 8 * fdes, 0, len(fde))
    return header + fde + rows * fdes


ADDR = {0: "B", 1: "H", 2: "I"}
OFFSET = {0: "b", 1: "h", 2: "i"}


def flexible_signed(functions: int, rows: int) -> bytes:
    """A version 3 AArch64 section of `functions` flexible functions 0x100 apart (PCREL), each `rows` rows (at
    most 256) of two patterns: CFA sp+16 and the RA in the LR; then CFA sp+32 and the FP saved at (fp-32) too.
    2-byte words, every row's RA marked signed (mangled), every FDE pointer-authentication key B."""
    sp, lr, fp, key_b, mangled, flexible = 31, 30, 29, 0x20, 0x80, 1
    words = ([reg(sp), 16, reg(lr), 0], [reg(sp), 32, reg(lr), 0, reg(fp, deref=True), -32])
    block = b""
    for j in range(rows):
        row = words[j % 2]
        info = 1 | len(row) << 1 | 1 << 5 | mangled  # CFA from SP, 2-byte words
        block += bytes([j, info]) + struct.pack(f"<{len(row)}h", *row)
    attr = struct.pack("<HBBB", rows, key_b, flexible, 0)  # ADDR1 starts, PCINC
    fdes = b"".join(
        struct.pack("<qII", 0x1000 + 0x100 * i - (28 + 16 * i), 0x100, i * len(attr + block)) for i in range(functions)
    )
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 3, PCREL_SORTED, 2, 0, 0, 0, functions, functions * rows,
        functions * len(attr + block), 0, len(fdes),
    )  # fmt: skip
    return header + fdes + (attr + block) * functions


def _own_blocks(blocks: list[bytes], rows: int, abi: int = 3, ra: int = -8) -> bytes:
    """A version 3 section of one function a block (attributes and `rows` rows), the functions 0x100 bytes
    long and apart (PCREL, sorted)."""
    offsets = accumulate(map(len, blocks), initial=0)
    fdes = b"".join(
        struct.pack("<qII", 0x1000 + 0x100 * i - (28 + 16 * i), 0x100, offset)
        for i, offset in zip(range(len(blocks)), offsets, strict=False)
    )
    data = b"".join(blocks)
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 3, PCREL_SORTED, abi, 0, ra, 0, len(blocks), len(blocks) * rows, len(data), 0,
        len(fdes),
    )  # fmt: skip
    return header + fdes + data


def signed_rows(functions: int, rows: int = 100) -> bytes:
    """A version 3 AArch64 section of `functions` functions, each its own block of `rows` signed rows alike
    (CFA sp+16, RA and FP saved at cfa-8 and cfa-16, 1-byte words, RA mangled) one byte apart, then a row
    without words and one of 4-byte words (CFA fp+2^31-1): every FDE pointer-authentication key B."""
    key_b, mangled = 0x20, 0x80
    block = struct.pack("<HBBB", rows + 2, key_b, 0, 0)
    block += b"".join(bytes([j, mangled | 3 << 1 | 1]) + struct.pack("<3b", 16, -8, -16) for j in range(rows))
    block += bytes([rows + 100, mangled | 1]) + bytes([rows + 101, mangled | 2 << 5 | 3 << 1])
    block += struct.pack("<3i", 2**31 - 1, -(2**31), 0)
    return _own_blocks([block] * functions, rows + 2, abi=2, ra=0)


def distinct_rows(functions: int, rows: int = 100) -> bytes:
    """A version 3 AMD64 section of `functions` functions, each its own block of `rows` 4-byte rows (CFA and
    FP offsets of one byte each) all different, across functions too, up to 65,536."""
    blocks = []
    for i in range(functions):
        block = struct.pack("<HBBB", rows, 0, 0, 0)
        for j in range(rows):
            k = i * rows + j
            block += bytes([j, 2 << 1 | 1, k & 0xFF, k >> 8 & 0xFF])
        blocks.append(block)
    return _own_blocks(blocks, rows)


def bare_rows(functions: int, rows: int = 100) -> bytes:
    """A version 3 AMD64 section of `functions` functions, each its own block of `rows` rows without data words
    (two bytes a row, the smallest: outermost frames in the newest revision, failing lookups in v14)."""
    block = struct.pack("<HBBB", rows, 0, 0, 0) + b"".join(bytes([j, 1]) for j in range(rows))
    return _own_blocks([block] * functions, rows)


def across_fde_types(pairs: int, rows: int = 200) -> bytes:
    """A version 3 AMD64 section of `pairs` pairs of functions over one block each of `rows` rows without
    data words (two bytes a row): the first of FDE type 0, the second of type 5 (past flexible), its
    attributes the first's rep_size and first rows' bytes (`scripts/kernel_corpus.py`'s `fde_types_mixed`),
    so that it reads the first's rows from the third on. Each row is read by two FDE types the kernel's
    reader reads apart (two tables): the most nodes a row of the smallest size makes."""
    blocks, table = b"", []
    starts = [0, 5, *range(6, 6 + rows - 2)]  # the second row's start: the second function's FDE type
    body = b"".join(bytes([start, k % 2]) for k, start in enumerate(starts))  # the first's info: FRE type 0
    for _ in range(pairs):
        table += [len(blocks), len(blocks) + 4]
        blocks += struct.pack("<HBBB", rows, 0, 0, rows - 2) + body
    fdes = [struct.pack("<qII", 0x1000 + 0x200 * i - (28 + 16 * i), 0x200, at) for i, at in enumerate(table)]
    return _v3(len(fdes), 2 * pairs * rows, fdes, blocks)


ROW_HEAVY = {
    "aarch64": ("<", 2, 0x20, [16, -8, -16], 0x80),  # little-endian AArch64, key B, every RA signed
    "s390x": (">", 4, 0, [127, 0, -1], 0),  # big-endian s390x: the FP (and RA) in registers
}
"""Each ABI of `row_heavy`: byte order, ABI id, FDE info bits, a row's 1-byte words, its info bits."""


def row_heavy(version: int, abi: str, functions: int, rows: int, size: int = 0x100, rep: int = 0) -> bytes:
    """A version 2 or 3 section of `functions` ordinary functions `size` bytes apart (`rows` rows each, a
    byte apart, the starts modulo 256), each its own block of rows: 2 MB of them is a real program's worth of
    rows, not a pathological shape (`ROW_HEAVY` says the ABIs' rows). With `rep`, PCMASK functions of that
    rep_size: more than 256 rows repeat the first 256 rows' tests."""
    order, arch, fde_info, words, row_bits = ROW_HEAVY[abi]
    fde_info |= 0x10 if rep else 0  # PCMASK
    info = 1 | len(words) << 1 | row_bits  # CFA from SP, 1-byte words
    block = b"".join(struct.pack(f"{order}BB{len(words)}b", j & 0xFF, info, *words) for j in range(rows))
    attr = struct.pack(f"{order}HBBB", rows, fde_info, 0, rep) if version >= 3 else b""
    block_size = len(attr + block)
    if version >= 3:
        fdes = [
            struct.pack(f"{order}qII", 0x1000 + size * i - (28 + 16 * i), size, i * block_size)
            for i in range(functions)
        ]
    else:
        fdes = [
            struct.pack(f"{order}iIIIBBH", 0x1000 + size * i, size, i * block_size, rows, fde_info, rep, 0)
            for i in range(functions)
        ]
    flags = PCREL_SORTED if version >= 3 else 1
    header = struct.pack(
        f"{order}HBBBbbBIIIII", 0xDEE2, version, flags, arch, 0, 0, 0, functions, functions * rows,
        functions * block_size, 0, len(b"".join(fdes)),
    )  # fmt: skip
    return header + b"".join(fdes) + (attr + block) * functions


def _swap(buf: bytearray, at: int, fmt: str) -> int:
    """Rewrite the fields `fmt` at `at` from little- to big-endian; return the end."""
    values = struct.unpack_from("<" + fmt, buf, at)
    struct.pack_into(">" + fmt, buf, at, *values)
    return at + struct.calcsize("<" + fmt)


def to_big_endian(data: bytes) -> bytes:
    """`data` (little-endian) with every field in big-endian order: each row once, however many functions
    read it, and none past the section's end (functions claiming rows past a pool)."""
    src = bytearray(data)
    out = bytearray(data)
    version = src[2]
    num_fdes, _, _, fdeoff, freoff = struct.unpack_from("<5I", src, 8)
    header_end = 28 + src[7]
    _swap(out, 0, "H")
    _swap(out, 8, "5I")
    if src[4] == 2:  # AArch64 little-endian → AArch64 big-endian
        out[4] = 1
    fde_size = struct.calcsize("<" + FDE_LAYOUT[version])
    fre_start = header_end + freoff
    swapped: set[int] = set()
    for i in range(num_fdes):
        at = header_end + fdeoff + i * fde_size
        fields = struct.unpack_from("<" + FDE_LAYOUT[version], src, at)
        _swap(out, at, FDE_LAYOUT[version])
        fre_off = fields[2]
        if version == 3:
            num_fres, info = struct.unpack_from("<HB", src, fre_start + fre_off)
            pos = _swap(out, fre_start + fre_off, "H") + 3
        else:
            num_fres, info = fields[3], fields[4]
            pos = fre_start + fre_off
        for _ in range(num_fres):
            addr = ADDR[info & 0xF]
            if pos >= len(src) or pos in swapped:  # rows past the section, or read again: swapped once
                break
            swapped.add(pos)
            pos = _swap(out, pos, addr)
            fre_info = src[pos]
            pos += 1
            count, size = (fre_info >> 1) & 0xF, (fre_info >> 5) & 3
            for _ in range(count):
                pos = _swap(out, pos, OFFSET[size])
    return bytes(out)


EXTREMES = (0, 1, 0x7FFFFFFF, 0xFFFFFFFF)


def _field_spots(data: bytes) -> list[tuple[int, str]]:
    """Where the header's and the first FDEs' fields are, with their struct chars."""
    spots = [(layout.PREAMBLE.size + at, char) for at, char in layout.HEADER.fields.values()]
    try:
        section = Section(data)
    except InputError:
        return spots
    fde = layout.FDE[section.version]
    for index in range(min(len(section), 8)):
        start = section.fde_start + index * section.fde_size
        spots += [(start + at, char) for at, char in fde.fields.values()]
    return spots


def mutate(rng: random.Random, data: bytes) -> bytes:
    mutant = bytearray(data)
    order = "<" if data[0] == 0xE2 else ">"
    kind = rng.randrange(7)
    if kind == 0:  # bytes flipped
        for _ in range(rng.randint(1, 8)):
            mutant[rng.randrange(2, len(mutant))] = rng.randrange(256)
    elif kind == 1:  # a field overwritten with an extreme value
        at, char = rng.choice(_field_spots(data))
        size = struct.calcsize(char)
        if at + size <= len(mutant):
            mutant[at : at + size] = (rng.choice(EXTREMES) & ((1 << (8 * size)) - 1)).to_bytes(
                size, "little" if order == "<" else "big"
            )
    elif kind == 2:  # a count inflated
        at, char = rng.choice([s for s in _field_spots(data) if s[1] in "IH"])
        size = struct.calcsize(char)
        if at + size <= len(mutant):
            value = int.from_bytes(mutant[at : at + size], "little" if order == "<" else "big")
            value = min(value * rng.choice((2, 16, 1000)) + 1, (1 << (8 * size)) - 1)
            mutant[at : at + size] = value.to_bytes(size, "little" if order == "<" else "big")
    elif kind == 3:  # cut short
        del mutant[rng.randrange(2, len(mutant)) :]
    elif kind == 4:  # lengthened
        mutant += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif kind == 5:  # a record spliced over another
        size = rng.choice((5, 16, 17, 20))
        src, dst = rng.randrange(4, len(mutant)), rng.randrange(4, len(mutant))
        chunk = mutant[src : src + size]
        mutant[dst : dst + len(chunk)] = chunk
    else:  # one bit
        bit = rng.randrange(16, len(mutant) * 8)
        mutant[bit // 8] ^= 1 << (bit % 8)
    return bytes(mutant)


def _sections() -> list[tuple[str, bytes, int]]:
    out = [(path.stem, *load_section_fixture(path)[:2]) for path in SECTIONS]
    for path in ELF_FIXTURES:
        if path.exists() and not path.name.endswith("-no-sframe"):
            doc = Document.open(str(path))
            out.append((path.name, doc.data, doc.address))
    flexible = v3_section(1, AMD64_ROWS, fixed_ra=-8, info=0x80, flags=PCREL_SORTED)
    out.append(("flexible", flexible, 0))
    return out


SAMPLES = _sections()


def mutants(seed: int, count: int) -> list[bytes]:
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
