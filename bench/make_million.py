#!/usr/bin/env python3
"""Build the million-function input: `make_big.py`'s section repeated 25 times, in an ELF file.

Why: programs with 300,000 to 1,000,000 functions (browsers, compilers) are
where unwind tables are most worth looking at, and compiling a million
functions would take far too long. So the 40,003-function section of
`make_big.py`'s binary is repeated 25 times at shifted addresses, each copy
with its own rows (1,000,075 functions, 2.3 million rows, 24 MB), and put into
a small ELF file with `objcopy --add-section`, where readelf and sfview both
read it. The layout of the header and the FDEs comes from the formats
generated from `sframe.ksy` (`sfview/generated/sframe_layout.py`).

The result is cached as bench/build/big-<functions>.

Usage: python bench/make_million.py [--copies N] [--force]
"""

from __future__ import annotations

import argparse
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import make_big

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from elftools.elf.elffile import ELFFile  # noqa: E402

from sfview.generated import sframe_layout as layout  # noqa: E402

COPIES = 25
PAGE = 0x1000


def repeated_section(data: bytes, address: int, copies: int) -> bytes:
    """The section `data` (at `address`) repeated `copies` times into one section at address 0: every
    copy's functions shifted past the previous copy's code, its FDEs pointing at its own copy of the rows."""
    order = "<" if data[:2] == b"\xe2\xde" else ">"
    version = data[layout.PREAMBLE.fields["version"][0]]
    header = struct.Struct(order + layout.PREAMBLE.format + layout.HEADER.format)
    names = list(layout.PREAMBLE.fields) + list(layout.HEADER.fields)
    fields = dict(zip(names, header.unpack_from(data), strict=True))
    if fields["flags"] & 0x4:  # SFRAME_F_FDE_FUNC_START_PCREL: the starts would need to be made absolute
        raise SystemExit("a section with PC-relative function starts is not handled")
    header_end = header.size + fields["auxhdr_len"]
    fde = struct.Struct(order + layout.FDE[version].format)
    fde_names = list(layout.FDE[version].fields)
    fdes_at, fres_at = header_end + fields["fdeoff"], header_end + fields["freoff"]
    records = [
        dict(zip(fde_names, r, strict=True))
        for r in fde.iter_unpack(data[fdes_at : fdes_at + fields["num_fdes"] * fde.size])
    ]
    fres = data[fres_at : fres_at + fields["fre_len"]]
    first = min(r["func_start"] for r in records)
    last = max(r["func_start"] + r["func_size"] for r in records)
    shift = (last - first + PAGE) // PAGE * PAGE
    out_fdes = bytearray()
    for copy in range(copies):
        for r in records:
            moved = dict(r, func_start=address + r["func_start"] + copy * shift)
            moved["func_start_fre_off"] = r["func_start_fre_off"] + copy * len(fres)
            out_fdes += fde.pack(*(moved[name] for name in fde_names))
    fields.update(
        num_fdes=fields["num_fdes"] * copies,
        num_fres=fields["num_fres"] * copies,
        fre_len=len(fres) * copies,
        fdeoff=0,
        freoff=len(out_fdes),
    )
    head = header.pack(*(fields[name] for name in names)) + data[header.size : header_end]
    return head + bytes(out_fdes) + fres * copies


def build(copies: int = COPIES, force: bool = False) -> Path:
    """Build (or reuse) the repeated section's ELF file; return its path."""
    source = make_big.build(verbose=False)
    with source.open("rb") as f:
        section = ELFFile(f).get_section_by_name(".sframe")
        data, address = section.data(), section["sh_addr"]
    functions = struct.unpack_from("<I", data, layout.PREAMBLE.size + layout.HEADER.fields["num_fdes"][0])[0]
    out = make_big.BUILD_DIR / f"big-{functions * copies}"
    if out.exists() and not force and out.stat().st_mtime > max(source.stat().st_mtime, Path(__file__).stat().st_mtime):
        return out
    raw = out.with_suffix(".sframe")
    raw.write_bytes(repeated_section(data, address, copies))
    empty = make_big.BUILD_DIR / "empty.c"
    empty.write_text("int main(void) { return 0; }\n")
    carrier = make_big.BUILD_DIR / "empty"
    subprocess.run([make_big.CC, "-O2", str(empty), "-o", str(carrier)], check=True)
    objcopy = shutil.which("objcopy") or "objcopy"
    subprocess.run(
        [
            objcopy,
            "--add-section",
            f".sframe={raw}",
            "--set-section-flags",
            ".sframe=contents,readonly",
            str(carrier),
            str(out),
        ],
        check=True,
    )
    raw.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=COPIES)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    print(build(args.copies, args.force))
    return 0


if __name__ == "__main__":
    sys.exit(main())
