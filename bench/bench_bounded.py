#!/usr/bin/env python3
"""What small inputs built to cost make sfview spend: issue 35's shapes, beside readelf on the same files.

Why: each shape is a few kilobytes that claim or repeat far more (an FDE of
1,000 registers and 8,000 advances, a `.plt` that inflates to 256 MiB, a
section whose 8,000 FDEs share one block of rows...). The tests check the
bounds without timing; this prints the time and peak memory of each command
on each shape, readelf's beside where readelf reads the same file, and with
`--baseline DIR` another checkout's (`git worktree add /tmp/before main`) in
the same run, for a before/after. A baseline may take minutes and write
gigabytes to a temporary file (the JSON dump of shared rows): that is what it
did.

Usage: python bench/bench_bounded.py [--repeat N] [--baseline DIR] [--only NAME]
"""

from __future__ import annotations

import argparse
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import zstandard
from _common import BUILD_DIR, REPO_ROOT, child_env, interleaved, sfview_argv

sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT))
from handmade import (
    bare_rows,
    distinct_rows,
    flexible_signed,
    nested,
    overlapping,
    pcmask_gigabytes,
    rows_alike,
    signed_rows,
)
from leb128_bytes import uleb
from toolchains import SUITES, cache_dir

OUT = BUILD_DIR / "bounded"
PROGRAM = REPO_ROOT / "tests" / "data" / "shapes-x86_64-O2"
OBJECT = REPO_ROOT / "tests" / "data" / "shapes-x86_64-O2.o"


def eh_frame(instructions: bytes, code_align: bytes = b"\x01") -> bytes:
    """One x86-64 CIE (its code alignment factor as given, a LEB128) and one FDE at 0 of `instructions` (an
    object's `.eh_frame`, its own address 0)."""
    body = struct.pack("<I", 0) + b"\x01zR\0" + code_align + b"\x78" + uleb(16) + uleb(1) + b"\x1b"
    body += bytes([0x0C, 7, 8, 0x90, 1])
    body += b"\0" * (-(len(body) + 4) % 8)
    cie = struct.pack("<I", len(body)) + body
    fde = struct.pack("<Iii", len(cie) + 4, -(len(cie) + 8), 0x1000) + b"\0" + instructions
    fde += b"\0" * (-(len(fde) + 4) % 8)
    return cie + struct.pack("<I", len(fde)) + fde + bytes(4)


def object_with_eh_frame(name: str, instructions: bytes, code_align: bytes = b"\x01") -> Path:
    """The fixture object with its `.eh_frame` replaced (its relocations removed: the FDE is at 0)."""
    blob, out = OUT / f"{name}.eh_frame", OUT / f"{name}.o"
    blob.write_bytes(eh_frame(instructions, code_align))
    subprocess.run(["objcopy", "--remove-section", ".rela.eh_frame", "--update-section", f".eh_frame={blob}",
                    str(OBJECT), str(out)], check=True)  # fmt: skip
    return out


def compressed(name: str, section: str, inflated_size: int) -> Path:
    """The fixture program with `section` a zstd stream of `inflated_size` zero bytes."""
    data = bytearray(PROGRAM.read_bytes())
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    names_at = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        at = shoff + i * shentsize
        name_off = struct.unpack_from("<I", data, at)[0]
        if data[names_at + name_off :].split(b"\0", 1)[0].decode() == section:
            break
    else:
        raise SystemExit(f"{PROGRAM} has no {section}")
    stream = zstandard.ZstdCompressor(level=19).compress(bytes(inflated_size))
    blob = struct.pack("<IIQQ", 2, 0, inflated_size, 8) + stream
    offset = (len(data) + 7) & ~7
    data += bytes(offset - len(data)) + blob
    flags = struct.unpack_from("<Q", data, at + 8)[0] | 0x800
    struct.pack_into("<Q", data, at + 8, flags)
    struct.pack_into("<QQ", data, at + 0x18, offset, len(blob))
    out = OUT / f"{name}"
    out.write_bytes(data)
    return out


def raw_section(name: str, fdes: list[tuple[int, int, int]], rows: int) -> Path:
    """A raw version 2 section: each FDE (start, size, rows) pointing at one block of `rows` rows."""
    block = b"".join(bytes([j % 256, 0x03, 8]) for j in range(rows))
    table = b"".join(struct.pack("<iIIIBBH", start, size, 0, count, 0, 0, 0) for start, size, count in fdes)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(fdes), sum(c for *_, c in fdes),
                         len(block), 0, len(table))  # fmt: skip
    out = OUT / f"{name}.sframe"
    out.write_bytes(header + table + block)
    return out


IN_PROCESS = {
    "expression": (
        "from sfview.dwarf.expression import evaluate, describe\n"
        "e = bytes([0x31]) + bytes([0x96]) * 1_500_000\n"
        "r = evaluate(e, {7: 0x1000}.get, lambda a, s: None)\n"
        "print(r.stop, len('; '.join(r.trace)), len(describe(e, str)))\n"
    ),
    "threads": (
        "from sfview.generated.sframe import Sframe as S\n"
        "from sfview.unwind import engine\n"
        "m = engine.Machine(S.AbiArch.amd64_endian_little, 7, 6, 16, False)\n"
        "base, n = 0x7ffc00000000, 1000\n"
        "w = {}\n"
        "for i in range(n):\n"
        "    w[base + 32 * i] = base + 32 * ((i + 1) % n); w[base + 32 * i + 8] = 0x400000 + 4 * ((i + 1) % n)\n"
        "u, frames = engine.Unwinder([], m, w.get), 0\n"
        "c = engine.Crossings() if hasattr(engine, 'Crossings') else None\n"
        "for t in range(200):\n"
        "    fp = base + 32 * (t * 5 % n)\n"
        "    kw = {'crossings': (c, t)} if c else {}\n"
        "    frames += sum(1 for _ in u.frames(0x400000 + 4 * (t * 5 % n), {7: fp - 64, 6: fp}, **kw))\n"
        "print('frames', frames)\n"
    ),
    "core-aliases": (
        "import os, sys, tempfile\n"
        "from sfview.inputs.core import Mapping, read_core\n"
        "from sfview.unwind import session\n"
        "libc = '/usr/lib/x86_64-linux-gnu/libc.so.6'\n"
        "core = read_core('tests/data/deep-x86_64.core')\n"
        "d = tempfile.mkdtemp()\n"
        "for i in range(300):\n"
        "    os.symlink(libc, f'{d}/libc-{i}.so.6')\n"
        "    core.mappings += [Mapping(m.start, m.end, m.file_offset, f'{d}/libc-{i}.so.6')"
        " for m in list(core.mappings) if m.path == libc]\n"
        "s = session.from_core('tests/data/deep-x86_64', core, None, [], None)\n"
        "print('modules', len(s.unwinder.modules))\n"
    ),
}
"""Shapes measured through sfview's engine (no command reads them from a file): run from the checkout."""


DEEP = REPO_ROOT / "tests" / "data" / "deep-x86_64"
DEEP_CORE = REPO_ROOT / "tests" / "data" / "deep-x86_64.core"


def deep_with(name: str, section: str, grow: Callable[[bytes], bytes]) -> Path:
    """deep-x86_64 with a debug section's bytes grown by `grow` (objcopy writes it back)."""
    old, new, out = OUT / f"{name}.old", OUT / f"{name}.new", OUT / name
    subprocess.run(["objcopy", "--dump-section", f"{section}={old}", str(DEEP), str(OUT / "scratch")], check=True)
    new.write_bytes(grow(old.read_bytes()))
    subprocess.run(["objcopy", "--update-section", f"{section}={new}", str(DEEP), str(out)], check=True)
    return out


def _unit_grown(unit: bytes, inserted: bytes) -> bytes:
    """A one-unit section (32-bit DWARF) with `inserted` before its last byte, its length made to match."""
    body = unit[4:-1] + inserted + unit[-1:]
    return struct.pack("<I", len(body)) + body


def one_byte_rows(unit: bytes) -> bytes:
    """deep-x86_64's one line program with a second sequence of 1,000,000 one-byte rows after its own (a special
    opcode advancing a byte: its opcode_base 13, line_base -5, line_range 14)."""
    sequence = b"\x00\x09\x02" + struct.pack("<Q", 1 << 20) + b"\x20" * 1_000_000 + b"\x02\x01\x00\x01\x01"
    body = unit[4:] + sequence
    return struct.pack("<I", len(body)) + body


def one_byte_dies(count: int) -> Path:
    """deep-x86_64's one compilation unit with `count` one-byte DIEs (code 99, no attributes) at its end."""
    abbrev = deep_with("dies.abbrev", ".debug_abbrev", lambda table: table[:-1] + bytes([99, 0x34, 0, 0, 0, 0]))
    grown = OUT / f"dies-{count}"
    info = OUT / "dies.info"
    subprocess.run(["objcopy", "--dump-section", f".debug_info={info}", str(DEEP), str(OUT / "scratch")], check=True)
    info.write_bytes(_unit_grown(info.read_bytes(), bytes([99]) * count))
    subprocess.run(["objcopy", "--update-section", f".debug_info={info}", str(abbrev), str(grown)], check=True)
    return grown


def perf_data(records: bytes) -> bytes:
    """A perf.data of x86_64 samples with user registers and stack (perf's layout: header, one attribute,
    the records, the architecture feature)."""
    attr = bytearray(128)
    struct.pack_into("<II", attr, 0, 1, 128)
    struct.pack_into("<Q", attr, 24, 0x3007)  # IP, TID, TIME, REGS_USER, STACK_USER
    struct.pack_into("<QI", attr, 80, (1 << 9) - 1 | 0xFF << 16, 64)
    attrs = bytes(attr) + bytes(16)
    data_at = 104 + len(attrs)
    arch = b"x86_64\0\0"
    feature = struct.pack("<QQI", data_at + len(records) + 16, 4 + len(arch), len(arch)) + arch
    header = struct.pack("<8sQQQQQQQQ", b"PERFILE2", 104, len(attrs), 104, len(attrs), data_at, len(records), 0, 0)
    return header + (1 << 6).to_bytes(32, "little") + attrs + records + feature


def _record(kind: int, body: bytes) -> bytes:
    return struct.pack("<IHH", kind, 0, 8 + len(body)) + body


def mmap2(pid: int, start: int, path: str) -> bytes:
    name = path.encode() + b"\0"
    return _record(
        10, struct.pack("<IIQQQIIQQII", pid, pid, start, 0x1000, 0, 0, 0, 0, 0, 5, 2) + name + bytes(-len(name) % 8)
    )


def sample() -> bytes:
    registers = struct.pack("<17Q", *range(17))
    return _record(
        9,
        struct.pack("<QIIQQ", 0x401000, 7, 7, 0, 2)
        + registers
        + struct.pack("<Q", 64)
        + bytes(64)
        + struct.pack("<Q", 64),
    )


def two_sections(count: int) -> tuple[Path, Path]:
    """Two raw sections of `count` functions at one start, each its own rows, the two different everywhere."""
    paths = []
    for side, cfa in (("a", 16), ("b", 24)):
        blocks, fdes = b"", b""
        for i in range(count):
            fdes += struct.pack("<iIIIBBH", 0x1000, 0x100, len(blocks), 2, 0, 0, 0)
            blocks += bytes([0, 0x03, 8 + 8 * (i % 12), 1 + i % 200, 0x03, cfa])
        header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, 2 * count, len(blocks), 0, len(fdes))
        path = OUT / f"differ-{side}.sframe"
        path.write_bytes(header + fdes + blocks)
        paths.append(path)
    return paths[0], paths[1]


def misaligned(count: int) -> Path:
    """`handmade.overlapping` (version 2, each block a row later) with function i's rows from byte i of the
    pool: most functions begin inside a row and fall into step with the rows of another in its middle."""
    data = bytearray(overlapping(2, count, count))
    for i in range(count):
        struct.pack_into("<I", data, 28 + 20 * i + 8, i)  # after the header, FDE i's func_start_fre_off
    out = OUT / f"misaligned-{count}.sframe"
    out.write_bytes(data)
    return out


def staircase(count: int) -> Path:
    """1-byte starts, a pool of 4-byte rows g_j = [j, 0x05, 0x03, 8]; the bytes from g_j + 1 read as a 3-byte
    row ending at g_(j+1). `count` functions from g_j + 1 for j from the top down (each landing on the row
    the one before read second), then `count` more from g_0 + 1, every one claiming 2 * `count` rows."""
    pool = b"".join(bytes([j % 256, 0x05, 0x03, 8]) for j in range(count + 2))
    starts = [4 * j + 1 for j in range(count - 1, -1, -1)] + [1] * count
    table = b"".join(
        struct.pack("<iIIIBBH", 0x1000 + 0x100 * k, 0x100, at, 2 * count, 0, 0, 0) for k, at in enumerate(starts)
    )
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, len(starts), 2 * count * len(starts),
                         len(pool), 0, len(table))  # fmt: skip
    out = OUT / f"staircase-{count}.sframe"
    out.write_bytes(header + table + pool)
    return out


def written(name: str, data: bytes) -> Path:
    """`data` as a raw section file named `name` under the output folder."""
    out = OUT / f"{name}.sframe"
    out.write_bytes(data)
    return out


def past_the_pool(count: int) -> Path:
    """`handmade.overlapping` (version 2, all from row 0) with every function claiming 10 rows past the pool."""
    data = bytearray(overlapping(2, count, count, slide=False))
    for i in range(count):
        struct.pack_into("<I", data, 28 + 20 * i + 12, count + 10)  # FDE i's func_num_fres
    out = OUT / f"past-the-pool-{count}.sframe"
    out.write_bytes(data)
    return out


def _deep_with_dwarf(name: str, info: bytes, abbrev: bytes, lists: bytes = b"") -> Path:
    """deep-x86_64 with `info`, `abbrev` (and `lists`, if any) after its own `.debug_info`, `.debug_abbrev`
    and `.debug_rnglists` (its own unit still the first, as its `.debug_aranges` says)."""
    old = {s: OUT / f"{name}{s}.old" for s in (".debug_info", ".debug_abbrev", ".debug_rnglists")}
    dumps = [arg for s, path in old.items() for arg in ("--dump-section", f"{s}={path}")]
    subprocess.run(["objcopy", *dumps, str(DEEP), str(OUT / "scratch")], check=True)
    updates = []
    for section, added in ((".debug_info", info), (".debug_abbrev", abbrev), (".debug_rnglists", lists)):
        new = OUT / f"{name}{section}.new"
        new.write_bytes(old[section].read_bytes() + added)
        updates += ["--update-section", f"{section}={new}"]
    subprocess.run(["objcopy", *updates, str(DEEP), str(OUT / name)], check=True)
    return OUT / name


def _size(section: str) -> int:
    """The size of one of deep-x86_64's sections."""
    dumped = OUT / f"size{section}"
    subprocess.run(["objcopy", "--dump-section", f"{section}={dumped}", str(DEEP), str(OUT / "scratch")], check=True)
    return dumped.stat().st_size


def units_on_one_list(units: int, entries: int) -> Path:
    """`units` DWARF 5 units of a top DIE whose `DW_AT_ranges` is one list of `entries` offset pairs."""
    table = _size(".debug_abbrev")
    lists = _size(".debug_rnglists")
    abbrev = uleb(200) + bytes([0x11, 0, 0x55, 0x17, 0, 0, 0])
    body = struct.pack("<HBBI", 5, 1, 8, table) + uleb(200) + struct.pack("<I", lists + 12)
    pairs = struct.pack("<HBBI", 5, 8, 0, 0) + bytes([4, 0x10, 0x20]) * entries + b"\0"
    return _deep_with_dwarf(
        f"lists-{units}", (struct.pack("<I", len(body)) + body) * units, abbrev, struct.pack("<I", len(pairs)) + pairs
    )


def units_of_12_bytes(units: int) -> Path:
    """`units` DWARF 4 units of a top DIE without attributes, none in `.debug_aranges`."""
    table = _size(".debug_abbrev")
    body = struct.pack("<HIB", 4, table, 8) + uleb(200)
    return _deep_with_dwarf(f"units-{units}", (struct.pack("<I", len(body)) + body) * units,
                            uleb(200) + bytes([0x11, 0, 0, 0, 0]))  # fmt: skip


def units_into_one_table(units: int, codes: int) -> Path:
    """`units` DWARF 4 units whose abbreviation tables start at different codes of one table of `codes`."""
    start = _size(".debug_abbrev")
    decls = [uleb(code) + bytes([0x11, 0, 0, 0]) for code in range(1, codes + 1)]
    starts = [start]
    for decl in decls[:-1]:
        starts.append(starts[-1] + len(decl))
    info = b""
    for unit in range(units):
        body = struct.pack("<HIB", 4, starts[unit * 7919 % codes], 8) + uleb(codes)
        info += struct.pack("<I", len(body)) + body
    return _deep_with_dwarf(f"tables-{units}", info, b"".join(decls) + b"\0")


def damaged_functions(count: int, *, sorted_: bool, rows: int = 1000) -> Path:
    """A raw version 2 section of `count` functions 16 bytes apart at one row; sorted, each claims `rows` rows
    (each damaged: the bulk reader hands it to the model); unsorted (listed last to first), one each."""
    order = range(count) if sorted_ else range(count - 1, -1, -1)
    rows = rows if sorted_ else 1
    table = b"".join(struct.pack("<iIIIBBH", 0x1000 + 16 * i, 16, 0, rows, 0, 0, 0) for i in order)
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, int(sorted_), 3, 0, -8, 0, count, 1, 3, 0, len(table))
    out = OUT / f"{'damaged' if sorted_ else 'unsorted'}-{count}-{rows}.sframe"
    out.write_bytes(header + table + bytes([0, 0x03, 8]))
    return out


def undefined_offset_size(count: int) -> Path:
    """A raw version 2 section of `count` functions, each two rows of its own whose first has offset size 3
    (which no version defines): each function's rows stop at its first."""
    table = b"".join(struct.pack("<iIIIBBH", 0x1000 + 16 * i, 16, 3 * i, 2, 0, 0, 0) for i in range(count))
    rows = bytes([0, 0x63, 8]) * count
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, 2 * count, len(rows), 0, len(table))
    out = OUT / f"undefined-offset-size-{count}.sframe"
    out.write_bytes(header + table + rows)
    return out


def own_rows(count: int) -> Path:
    """A raw version 2 section of `count` functions, each one row whose CFA offset (4 bytes) no other has."""
    table = b"".join(struct.pack("<iIIIBBH", 0x1000 + 0x100 * i, 0x100, 6 * i, 1, 0, 0, 0) for i in range(count))
    rows = b"".join(struct.pack("<BBi", 0, 0x43, i) for i in range(count))
    header = struct.pack("<HBBBbbBIIIII", 0xDEE2, 2, 1, 3, 0, -8, 0, count, count, len(rows), 0, len(table))
    out = OUT / f"own-rows-{count}.sframe"
    out.write_bytes(header + table + rows)
    return out


def in_elf(raw: Path) -> Path:
    """`raw` as the `.sframe` of a small program that has none (`objcopy --add-section`), for readelf."""
    out = raw.with_suffix(".elf")
    carrier = REPO_ROOT / "tests" / "data" / "shapes-x86_64-no-sframe"
    subprocess.run(["objcopy", "--add-section", f".sframe={raw}", "--set-section-flags", ".sframe=contents,readonly",
                    str(carrier), str(out)], check=True)  # fmt: skip
    return out


def readelf_2_47() -> str | None:
    """binutils 2.47's readelf (`tools/toolchains.sh` unpacks it), which reads versions 1 to 3; None without it."""
    cache = cache_dir()
    found = cache / SUITES["2.47"] / "bin" / "x86_64" / "readelf" if cache is not None else None
    return str(found) if found is not None and found.exists() else None


def cases() -> dict[str, tuple[list[str], list[str] | None]]:
    """Each shape: sfview's arguments, and readelf's on the same file (None where readelf reads none)."""
    OUT.mkdir(parents=True, exist_ok=True)
    registers = b"".join(b"\x05" + uleb(r) + b"\x01" for r in range(1000)) + b"\x41" * 8000
    changes = b"".join(b"\x05" + uleb(r) + b"\x01" for r in range(128)) + b"\x41\x85\x02" * 4000
    rows = object_with_eh_frame("registers", registers)
    worst = object_with_eh_frame("changes", changes)
    alternating = changes[: -3 * 4000] + b"\x41\x85\x02\x41\x85\x03" * 2000  # each row a rule other than the last
    turns = object_with_eh_frame("alternating", alternating)
    every = changes[: -3 * 4000]
    cfa_expressions = object_with_eh_frame("cfa-expressions", every + b"\x41\x0f\x02\x77\x08" * 2400)
    remembered = object_with_eh_frame("remembered", every + b"\x0a" * 6000 + b"\x41\x85\x02\x41\x0b" * 1200)
    sframe = compressed("zstd-sframe", ".sframe", 256 << 20)
    plt = compressed("zstd-plt", ".plt", 256 << 20)
    note = compressed("zstd-build-id", ".note.gnu.build-id", 256 << 20)
    dynsym = compressed("zstd-dynsym", ".dynsym", 256 << 20)
    problems = raw_section("problems", [(0x1000 + 0x10 * i, 0, 1) for i in range(1_000_000)], 1)
    shared = raw_section("shared-rows", [(0x1000 * (i + 1), 0x1000, 256) for i in range(8000)], 256)
    frames = ["readelf", "--debug-dump=frames-interp"]
    long_leb = object_with_eh_frame("long-leb", b"", b"\xff" * 800_000 + b"\x01")
    lines = deep_with("lines", ".debug_line", one_byte_rows)
    dies = one_byte_dies(1_000_000)
    program = str(PROGRAM.resolve())
    mapped = OUT / "mapped.data"
    mapped.write_bytes(
        perf_data(b"".join(mmap2(7, 0x10000000 + (20_000 - i) * 0x10000, program) for i in range(20_000)) + sample())
    )
    forks = OUT / "forks.data"
    parent = b"".join(mmap2(1, 0x10000000 + i * 0x10000, f"/nowhere/{i}") for i in range(2000))
    children = b"".join(
        _record(7, struct.pack("<IIIIQ", 100 + i, 1, 100 + i, 1, 0)) + mmap2(100 + i, 0x1000, "/nowhere/x")
        for i in range(20_000)
    )
    forks.write_bytes(perf_data(parent + children + sample()))
    differ_a, differ_b = two_sections(50_000)
    stepping = misaligned(2000)
    stairs = staircase(2000)
    past = past_the_pool(1000)
    unwind_deep = ["unwind", "--core", str(DEEP_CORE)]
    gdb_bt = ["gdb", "-batch", "-nx", "-ex", "bt"]
    lists = units_on_one_list(20, 50_000)
    units = units_of_12_bytes(60_000)
    tables = units_into_one_table(2000, 10_000)
    damaged = damaged_functions(200_000, sorted_=True)
    unsorted = damaged_functions(200_000, sorted_=False)
    past_listed = damaged_functions(200_000, sorted_=True, rows=5000)
    kernel_nested = written("nested-20000", nested(20_000))
    kernel_pcmask = written("pcmask-20000", pcmask_gigabytes(20_000, 3))
    kernel_gaps = written("pcmask-gaps-20000", pcmask_gigabytes(20_000, 3, first=4))
    kernel_alike = written("rows-alike-2000", rows_alike(2000, 2000))
    kernel_signed = written("signed-rows-3000", signed_rows(3000))
    kernel_distinct = written("distinct-rows-3000", distinct_rows(3000))
    kernel_bare = written("bare-rows-3000", bare_rows(3000))
    regs = ["--regs", "pc=0x1014,sp=0x7000", "--mem", "0x7000=0x1024", "--mem", "0x7008=0x1034"]
    newer = readelf_2_47()
    round_10: dict[str, tuple[list[str], list[str] | None]] = {}
    for what, raw in (
        ("200,000 functions claiming rows past the pool", damaged),
        ("200,000 functions, an undefined offset size", undefined_offset_size(200_000)),
        ("200,000 sound functions sharing a row", damaged_functions(200_000, sorted_=True, rows=1)),
        ("50,000 functions, rows of their own", own_rows(50_000)),
    ):
        elf = str(in_elf(raw))
        round_10[f"round 10: {what}, check (raw)"] = (["check", str(raw)], ["readelf", "-W", "--sframe", elf])
        round_10[f"round 10: {what}, dump"] = (["dump", elf], [newer, "-W", "--sframe", elf] if newer else None)
        round_10[f"round 10: {what}, stats"] = (["stats", str(raw)], None)
    flexible = BUILD_DIR / "bounded-flexible-signed.sframe"
    flexible.write_bytes(flexible_signed(3000, 100))
    flexible_elf = str(in_elf(flexible))
    reference = [newer, "-W", "--sframe", flexible_elf] if newer else None
    round_11: dict[str, tuple[list[str], list[str] | None]] = {
        f"round 11: 3,000 flexible AArch64 functions of 100 signed rows, {' '.join(command)}": (
            [*command, str(flexible)],
            reference,
        )
        for command in (["dump"], ["dump", "--json"], ["check"], ["stats"])
    }
    flat = one_byte_dies(130_000)
    round_11["round 11: a unit of 130,000 flat one-byte DIEs, unwind"] = (
        [*unwind_deep[:1], str(flat), *unwind_deep[1:]],
        [*gdb_bt, str(flat), str(DEEP_CORE)],
    )
    rounds = round_10 | round_11
    named = {
        "class 1: 1,000 registers x 8,000 rows, compare": (["compare", str(rows)], [*frames, str(rows)]),
        "class 1: 128 registers, 4,000 changed rows, compare": (["compare", str(worst)], [*frames, str(worst)]),
        "class 1: 128 registers, 4,000 rows alternating a rule, compare": (
            ["compare", str(turns)],
            [*frames, str(turns)],
        ),
        "class 1: 128 registers, a CFA expression at each of 2,400 rows, compare": (
            ["compare", str(cfa_expressions)],
            [*frames, str(cfa_expressions)],
        ),
        "class 1: 128 registers, 6,000 states remembered, 1,200 restored, compare": (
            ["compare", str(remembered)],
            [*frames, str(remembered)],
        ),
        "class 3: zstd .plt of 256 MiB, check": (["check", str(plt)], ["readelf", "-W", "--sframe", str(plt)]),
        "class 3: zstd build-id of 256 MiB, export": (
            ["export", "--breakpad", str(note)],
            ["readelf", "-n", str(note)],
        ),
        "class 4: zstd .dynsym of 256 MiB, check": (["check", str(dynsym)], ["readelf", "--dyn-syms", str(dynsym)]),
        "class 4: zstd .sframe of 256 MiB, unwind": (
            ["unwind", str(sframe), "--regs", "pc=0x1000,sp=0x7000"],
            ["readelf", "-W", "--sframe", str(sframe)],
        ),
        "class 11: /proc/self/status as a core": (["unwind", str(PROGRAM), "--core", "/proc/self/status"], None),
        "class 12: 1,000,000 zero-size functions, check": (["check", str(problems)], None),
        "lesser: 8,000 FDEs sharing 256 rows, dump": (["dump", str(shared)], None),
        "lesser: 8,000 FDEs sharing 256 rows, dump --json": (["dump", "--json", str(shared)], None),
        "round 4: a CIE's code alignment of 800 KB of LEB128, compare": (
            ["compare", str(long_leb)],
            [*frames, str(long_leb)],
        ),
        "round 4: .debug_line of 1,000,000 one-byte rows, unwind": (
            [*unwind_deep[:1], str(lines), *unwind_deep[1:]],
            ["readelf", "--debug-dump=decodedline", str(lines)],
        ),
        "round 4: a unit of 1,000,000 one-byte DIEs, unwind": (
            [*unwind_deep[:1], str(dies), *unwind_deep[1:]],
            ["readelf", "--debug-dump=info", str(dies)],
        ),
        "round 4: one program mapped at 20,000 places, perf": (["perf", "--jobs", "1", str(mapped)], None),
        "round 4: 20,000 forks of 2,000 mappings that map, perf": (["perf", "--jobs", "1", str(forks)], None),
        "round 4: 50,000 functions different, diff --json": (["diff", "--json", str(differ_a), str(differ_b)], None),
        "round 4: 50,000 functions different, diff": (["diff", str(differ_a), str(differ_b)], None),
        "round 8: 50,000 functions at one start, check --profile libsframe": (
            ["check", "--profile", "libsframe", str(differ_a)],
            None,
        ),
        "round 8: 50,000 functions at one start, check --profile glibc-2.43": (
            ["check", "--profile", "glibc-2.43", str(differ_a)],
            None,
        ),
        "round 8: 2,000 functions from bytes 0..1999 (misaligned), check": (["check", str(stepping)], None),
        "round 8: a staircase of 2,000 chains, 4,000 functions, check": (["check", str(stairs)], None),
        "round 8: 1,000 functions reading 10 rows past a shared pool, check": (["check", str(past)], None),
        "round 9: 20 units on one range list of 50,000 entries, unwind": (
            ["unwind", str(lists), "--core", str(DEEP_CORE)],
            [*gdb_bt, str(lists), str(DEEP_CORE)],
        ),
        "round 9: 60,000 units of 12 bytes outside .debug_aranges, unwind": (
            ["unwind", str(units), "--core", str(DEEP_CORE)],
            [*gdb_bt, str(units), str(DEEP_CORE)],
        ),
        "round 9: 2,000 units into one abbreviation table of 10,000 codes, unwind": (
            ["unwind", str(tables), "--core", str(DEEP_CORE)],
            [*gdb_bt, str(tables), str(DEEP_CORE)],
        ),
        "round 9: 200,000 damaged functions, check": (["check", str(damaged)], None),
        "round 9: 200,000 damaged functions, dump": (["dump", str(damaged)], None),
        "round 9: 200,000 functions unsorted, unwind --regs": (["unwind", str(unsorted), *regs], None),
        "round 9: 200,000 functions each claiming 5,000 rows, stats": (["stats", str(past_listed)], None),
    }
    kernel = {
        f"kernel profiles: {what}, check --profile {profile}": (["check", "--profile", profile, str(path)], None)
        for what, profile, path in (
            ("20,000 nested v3 functions", "kernel", kernel_nested),
            ("20,000 v3 PCMASK functions of 4 GB", "kernel", kernel_pcmask),
            ("the same, each repeat's first 4 bytes failing", "kernel", kernel_gaps),
            ("2,000 functions of 4 KB over 2,000 failing rows", "kernel-v14", kernel_alike),
            ("3,000 AArch64 functions of 102 signed rows", "kernel", kernel_signed),
            ("3,000 functions of 100 rows all different", "kernel", kernel_distinct),
            ("3,000 functions of 100 two-byte rows", "kernel-v14", kernel_bare),
        )
    }
    return rounds | named | kernel


def _from(checkout: Path, argv: list[str]) -> list[str]:
    """`argv` run in another checkout, its directory first on the path."""
    return ["sh", "-c", 'cd "$0" && PYTHONPATH="$0" exec "$@"', str(checkout), *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another checkout of sfview to run beside this one")
    parser.add_argument("--only", help="only the shapes whose name holds this")
    args = parser.parse_args(argv)
    if shutil.which("objcopy") is None or shutil.which("readelf") is None:
        raise SystemExit("needs objcopy and readelf (binutils)")
    checkouts: dict[str, Callable[[list[str]], list[str]]] = {"sfview": lambda a: _from(REPO_ROOT, a)}
    if args.baseline:
        checkouts["baseline"] = lambda a: _from(args.baseline.resolve(), a)
    commands: dict[str, list[str]] = {}
    for name, (ours, reference) in cases().items():
        if args.only and args.only not in name:
            continue
        for who, run in checkouts.items():
            commands[f"{name} [{who}]"] = run(sfview_argv(*ours))
        if reference is not None:
            commands[f"{name} [{reference[0]}]"] = reference
    for name, code in IN_PROCESS.items():
        if args.only and args.only not in name:
            continue
        for who, run in checkouts.items():
            commands[f"{name}, in process [{who}]"] = run([sys.executable, "-c", code])
    interleaved(commands, args.repeat, child_env())
    return 0


if __name__ == "__main__":
    sys.exit(main())
