"""Hold `sfview check --profile kernel` to the Linux kernel's own SFrame reader, and keep what it said.

The kernel's reader is `kernel/unwind/sframe.c` of the unwind_user/sframe v14 series; the copy
this project followed is dylanbhatch/linux at commit 3231d5c571fa6e6b8f78d8039a3429eb0d953caa
(the series with `__read_default_fre_datawords` and flexible FDEs). No package carries it, so
it is not in this repository: put its lines from `struct sframe_fde_internal` to the end of
`sframe_read_header()` in a file (unchanged), and give that file as --kernel-source. This script
compiles it inside `scripts/kernel_harness/harness.c` (ours: the user-memory and registration
plumbing around it), natively for little-endian sections and for s390x under qemu-s390x for
big-endian ones, then:

- judges every section it is given, real and mutated, with both the kernel's code and
  `sfview.consumers.kernel`, and prints how often they agree (registration: accepted or the
  same error; lookups: the same failing PC ranges with the same error) and every disagreement;
- with --write DIR, writes a small corpus of those sections with the kernel's verdicts
  (`tests/data/consumers/kernel/corpus.json`), which tests/oracles/test_consumer_kernel.py holds the
  profile to.

    python scripts/kernel_corpus.py --kernel-source /tmp/kernel-sframe/sframe-core.c \
        --elf PROGRAMS... --mutants 3000 [--write tests/data/consumers/kernel]

The sections: tests/data/sections (binutils 2.40 to 2.46), sections crafted here one per class
the kernel's code treats apart (`crafted()`), and the programs given with --elf; the corpus in
tests/data was written with tests/data/src/{shapes,deep,signal,qsort}.c built by binutils 2.47
(`bash tools/toolchains.sh`; `gcc -B <sid>/bin/TARGET/ -Wa,--gsframe -O2`, TARGET x86_64, aarch64
and s390x with the cross compilers), seed 15. Mutants change one field or byte of a version 3
section at a time (header, flags, counts, offsets, FDE index, attributes, rep_size, row start
addresses and info bytes, control words, truncation, the text range), and random version 3
sections are built whole (`random_section`).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sfview import ADDRESS_MASK  # noqa: E402
from sfview.consumers.kernel import CRASH, Refused, lookups, register_section  # noqa: E402
from sfview.document import Document  # noqa: E402
from sfview.generated import sframe_layout as layout  # noqa: E402

HARNESS = ROOT / "scripts" / "kernel_harness" / "harness.c"
SCAN_LIMIT = 0x400
"""The harness looks up each function's first bytes only (a mutant's function may be 4 GiB long)."""
ANY_TEXT = (0, ADDRESS_MASK)
HEADER = layout.PREAMBLE.size + layout.HEADER.size


MACHINES = {3: ("x86_64", 7, 6), 4: ("s390x", 15, 11)}
"""The kernel that would read a section: by its ABI byte, with that machine's SFRAME_REG_SP and _FP."""
OTHER_MACHINE = ("arm64", 31, 29)


class Harnesses:
    """The harness built for each (byte order, machine) a section needs: natively for little-endian
    sections, for s390x under qemu-s390x for big-endian ones; the machine sets SFRAME_REG_SP/FP."""

    def __init__(self, source: Path, folder: Path) -> None:
        self.source, self.folder = source, folder
        self.commands: dict[tuple[str, str], list[str] | None] = {}

    def command(self, data: bytes) -> list[str] | None:
        order = _order(data)
        name, sp, fp = MACHINES.get(data[4] if len(data) > 4 else 0, OTHER_MACHINE)
        key = (order, name)
        if key not in self.commands:
            self.commands[key] = self._build(order, name, sp, fp)
        return self.commands[key]

    def _build(self, order: str, name: str, sp: int, fp: int) -> list[str] | None:
        exe = self.folder / f"harness-{'be' if order == '>' else 'le'}-{name}"
        flags = ["-O1", f'-DKERNEL_SFRAME_CORE="{self.source}"', f"-DSFRAME_REG_SP={sp}", f"-DSFRAME_REG_FP={fp}"]
        if order == "<":
            subprocess.run(["cc", *flags, str(HARNESS), "-o", str(exe)], check=True)
            return [str(exe)]
        if not (shutil.which("s390x-linux-gnu-gcc") and shutil.which("qemu-s390x")):
            return None
        subprocess.run(["s390x-linux-gnu-gcc", "-static", *flags, str(HARNESS), "-o", str(exe)], check=True)
        return ["qemu-s390x", str(exe)]


def run_kernel(harnesses: Harnesses, cases: list[dict]) -> list[dict]:
    """The kernel's verdict on each case, from the harness of the case's byte order and machine."""
    results: list[dict | None] = [None] * len(cases)
    groups: dict[tuple[str, ...], list[int]] = collections.defaultdict(list)
    for i, c in enumerate(cases):
        command = harnesses.command(bytes.fromhex(c["hex"]))
        if command is not None:
            groups[tuple(command)].append(i)
    for command, picked in groups.items():
        lines = "".join(
            f"{cases[i]['hex'] or '00'} {cases[i]['address']:x} {cases[i]['text'][0]:x} "
            f"{cases[i]['text'][1]:x} {SCAN_LIMIT:x}\n"
            for i in picked
        )
        out = subprocess.run(list(command), input=lines, capture_output=True, text=True, check=True).stdout
        for i, line in zip(picked, out.splitlines(), strict=True):
            results[i] = json.loads(line)
    return [r if r is not None else {"register": None} for r in results]


def _order(data: bytes) -> str:
    return ">" if data[:2] == b"\xde\xe2" else "<"


ERRNO = {"-EINVAL": -22, "-EFAULT": -14}


def profile_result(case: dict) -> dict:
    """The profile's verdict in the harness's terms: register 0/-errno; lookups over the PCs the harness
    scans, each [start, end, -errno / "crash" / the frame rules, the failing check]."""
    return judged(case, register_section, lookups, ERRNO)


def judged(case: dict, register, find, errno: dict) -> dict:
    """`profile_result` with a revision's or variant's own `register_section`, `lookups` and errno numbers
    (each corpus script passes its profile's)."""
    data = bytes.fromhex(case["hex"])
    registered = register(data, case["address"], tuple(case["text"]))
    if isinstance(registered, Refused):
        return {"register": errno[registered.error], "rule": registered.rule, "lookups": []}
    domain = scanned(data, case["address"])
    found = []
    for f in find(registered):
        for lo, hi in domain:
            start, end = max(lo, f.start), min(hi, f.end)
            if start < end:
                result = f.rule if f.error is None else f.error if f.error == CRASH else errno[f.error]
                found.append([start, end, result, f.rule])
    return {"register": 0, "lookups": merge(found)}


def scanned(data: bytes, address: int) -> list[tuple[int, int]]:
    """The PCs the harness looks up: each function's first SCAN_LIMIT bytes, merged."""
    order = _order(data)
    fields = {
        n: struct.unpack_from(order + c, data, layout.PREAMBLE.size + at)[0]
        for n, (at, c) in layout.HEADER.fields.items()
    }
    fde = layout.FDE[3]
    start = HEADER + fields["fdeoff"]
    spans = []
    for i in range(fields["num_fdes"]):
        at = start + i * fde.size
        off, size, _ = struct.unpack_from(order + fde.format, data, at)
        lo = (address + at + off) & ADDRESS_MASK
        if lo + min(size, SCAN_LIMIT) <= ADDRESS_MASK + 1:  # the harness's end wraps past 2^64: none scanned
            spans.append((lo, lo + min(size, SCAN_LIMIT)))
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        elif lo < hi:
            out.append((lo, hi))
    return out


def merge(ranges: list[list]) -> list[list]:
    """Touching ranges with the same result made one (the harness merges PC by PC the same way)."""
    out: list[list] = []
    for r in sorted(ranges, key=lambda r: r[0]):
        if out and out[-1][1] == r[0] and out[-1][2] == r[2]:
            out[-1][1] = r[1]
        else:
            out.append(list(r))
    return out


def agree(kernel: dict, ours: dict) -> bool:
    if kernel["register"] != ours["register"]:
        return False
    return [r[:3] for r in kernel["lookups"]] == [r[:3] for r in ours["lookups"]]


# Sections ----------------------------------------------------------------------------


def real_sections(extra: list[Path]) -> list[dict]:
    """Every section of the fixtures (all versions: the kernel refuses all but 3) and of the given ELF files."""
    cases = []
    for folder in (ROOT / "tests" / "data" / "sections", ROOT.parent / "shared" / "fixtures" / "sections"):
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            d = json.loads(path.read_text())
            content = d["content"]
            data = bytes(json.loads(content) if isinstance(content, str) else content)
            cases.append(case(f"{folder.parent.name}/{path.name}", data, d["section_base"]))
    for path in extra:
        doc = Document.open(str(path), None)
        cases.append(case(path.name, doc.data, doc.address, _text(doc)))
    return cases


def _text(doc: Document) -> tuple[int, int]:
    from sfview.consumers.kernel import text_range

    return text_range(doc) or ANY_TEXT


def case(name: str, data: bytes, address: int, text: tuple[int, int] = ANY_TEXT) -> dict:
    return {"name": name, "hex": data.hex(), "address": address, "text": list(text)}


class Mutator:
    """Mutants of a version 3 section, each aimed at one rule: header fields, flags, counts, FDE fields,
    attributes (rep_size 0, types), row info bytes, start addresses, flexible control words, truncation."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def mutate(self, base: dict) -> dict:
        try:
            return self._mutate(base)
        except (struct.error, IndexError, ValueError):  # an earlier mutation cut the section short
            data = bytes.fromhex(base["hex"])
            return {**base, "name": base["name"] + "~short", "hex": data[: len(data) // 2].hex()}

    def _mutate(self, base: dict) -> dict:
        data = bytearray(bytes.fromhex(base["hex"]))
        order = _order(bytes(data))
        r = self.rng
        hdr = {n: layout.PREAMBLE.size + at for n, (at, _) in layout.HEADER.fields.items()}
        num_fdes, fdeoff, freoff = (
            struct.unpack_from(order + "I", data, hdr[k])[0] for k in ("num_fdes", "fdeoff", "freoff")
        )
        fde_at = HEADER + fdeoff
        fre_at = HEADER + freoff
        text = list(base["text"])
        kind = r.choice(
            [
                "flags",
                "version",
                "abi",
                "fixed",
                "count",
                "offsets",
                "fde",
                "attr",
                "row",
                "byte",
                "truncate",
                "text",
                "multi",
            ]
        )
        fdes = [fde_at + i * 16 for i in range(min(num_fdes, len(data) // 16))]
        attr_offsets = [struct.unpack_from(order + "I", data, at + 12)[0] for at in fdes]

        def put(fmt: str, at: int, value: int) -> None:
            if at >= 0 and at + struct.calcsize(fmt) <= len(data):
                struct.pack_into(order + fmt, data, at, value)

        if kind == "flags":
            data[3] = r.choice([data[3] ^ (1 << r.randrange(8)), r.randrange(256)])
        elif kind == "version":
            data[2] = r.choice([1, 2, 4, r.randrange(256)])
        elif kind == "abi":
            data[4] = r.randrange(256)
        elif kind == "fixed":
            data[r.choice([5, 6])] = r.choice([0, 0xF8, 0xF0, r.randrange(256)])
        elif kind == "count":
            field = r.choice(["num_fdes", "num_fres", "fre_len"])
            old = struct.unpack_from(order + "I", data, hdr[field])[0]
            put("I", hdr[field], max(0, old + r.choice([-1, 1, -old, 1000, r.randrange(-4, 5)])))
        elif kind == "offsets":
            field = r.choice(["fdeoff", "freoff", "auxhdr_len"])
            if field == "auxhdr_len":
                data[hdr[field]] = r.choice([1, 4, r.randrange(256)])
            else:
                old = struct.unpack_from(order + "I", data, hdr[field])[0]
                put("I", hdr[field], max(0, old + r.choice([-16, -1, 1, 16, 5])))
        elif kind == "fde" and fdes:
            at = r.choice(fdes)
            part = r.choice(["start", "size", "fre_off", "swap"])
            if part == "start":
                old = struct.unpack_from(order + "q", data, at)[0]
                put("q", at, old + r.choice([-16, -1, 1, 16, 0x1000, -(1 << 20), r.randrange(-64, 64)]))
            elif part == "size":
                old = struct.unpack_from(order + "I", data, at + 8)[0]
                put(
                    "I",
                    at + 8,
                    r.choice([0, 1, old - 1, old + 1, old * 2, 0xFFFFFFFF, r.randrange(0x100)]) & 0xFFFFFFFF,
                )
            elif part == "fre_off":
                old = struct.unpack_from(order + "I", data, at + 12)[0]
                put("I", at + 12, max(0, old + r.choice([-5, -1, 1, 5, 1000])))
            elif len(fdes) > 1:
                i = fdes.index(at)
                j = (i + 1) % len(fdes)
                a, b = bytes(data[fdes[i] : fdes[i] + 16]), bytes(data[fdes[j] : fdes[j] + 16])
                data[fdes[i] : fdes[i] + 16], data[fdes[j] : fdes[j] + 16] = b, a
        elif kind == "attr" and fdes:
            at = fre_at + r.choice(attr_offsets)
            part = r.randrange(4)
            if part == 0:
                old = struct.unpack_from(order + "H", data, at)[0] if at + 2 <= len(data) else 0
                put("H", at, max(0, old + r.choice([-1, 1, 5])))
            elif part == 1 and at + 2 < len(data):
                data[at + 2] = r.choice(
                    [data[at + 2] ^ (1 << r.randrange(8)), 0x10, 0x11, 0x12, 0x13, r.randrange(256)]
                )
            elif part == 2 and at + 3 < len(data):
                data[at + 3] = r.choice([0, 1, 2, 0x10, 0x11, r.randrange(256)])
            elif at + 4 < len(data):
                data[at + 4] = r.choice([0, 1, 16, r.randrange(256)])
        elif kind == "row" and fdes:
            # A byte of a function's first rows: start address, info byte, data word / control word.
            at = fre_at + r.choice(attr_offsets) + 5 + r.randrange(12)
            if at < len(data):
                data[at] = r.choice([0, 1, 0xFF, data[at] ^ (1 << r.randrange(8)), r.randrange(256)])
        elif kind == "byte" and data:
            at = r.randrange(len(data))
            data[at] = r.randrange(256)
        elif kind == "truncate" and data:
            data = data[: r.randrange(len(data))]
        elif kind == "text":
            lo, hi = scanned_bounds(bytes(data), base["address"])
            text = r.choice([[lo, hi], [lo + 1, hi], [lo, max(lo + 1, hi - 1)], [0, lo], [hi, ADDRESS_MASK]])
        elif kind == "multi":
            out = base
            for _ in range(r.randrange(2, 4)):
                out = self.mutate(out)
            return out
        return {"name": base["name"] + "~" + kind, "hex": bytes(data).hex(), "address": base["address"], "text": text}


def scanned_bounds(data: bytes, address: int) -> tuple[int, int]:
    try:
        spans = scanned(data, address)
    except struct.error:
        return (0, ADDRESS_MASK)
    return (spans[0][0], spans[-1][1]) if spans else (0, ADDRESS_MASK)


# Crafted sections -----------------------------------------------------------------------

AMD64, AARCH64_LE = 3, 2
RSP, RBP, R10 = 7, 6, 10


def ctl(reg: int, deref: bool = False, reg_p: bool = True) -> int:
    """A flexible control word: register, deref_p, reg_p."""
    return (reg << 3) | (2 if deref else 0) | (1 if reg_p else 0)


def v3(functions: list[dict], *, flags: int = 0x5, abi: int = AMD64, ra: int = -8, fp: int = 0) -> bytes:
    """A version 3 section (little-endian, at address 0) of `functions`, each a dict with start, size,
    rows [(ip_off, cfa_base, words, word_size_kind=0, mangled=0)], and optional info, info2, rep, pcmask."""
    blocks, fdes, offset = b"", [], 0
    for f in functions:
        info = f.get("info", (0x10 if f.get("pcmask") else 0) | f.get("fre_type", 0))
        rows = f["rows"]
        block = struct.pack("<HBBB", f.get("num", len(rows)), info, f.get("info2", 0), f.get("rep", 0))
        addr_char = layout.FRE_START_ADDR.get(info & 0xF, "B")
        for ip_off, base, words, *more in rows:
            kind = more[0] if more else 0
            mangled = more[1] if len(more) > 1 else 0
            block += struct.pack("<" + addr_char, ip_off) + bytes([mangled << 7 | kind << 5 | len(words) << 1 | base])
            width = struct.calcsize(layout.FRE_OFFSET.get(kind, "b"))
            block += b"".join((w % (1 << 8 * width)).to_bytes(width, "little") for w in words)
        fdes.append((f["start"], f["size"], offset))
        blocks += block
        offset += len(block)
    num_fres = sum(len(f["rows"]) for f in functions)
    header = struct.pack(
        "<HBBBbbBIIIII", 0xDEE2, 3, flags, abi, fp, ra, 0, len(functions), num_fres, len(blocks), 0, 16 * len(functions)
    )
    index = b"".join(
        struct.pack("<qII", _s64(start - (HEADER + 16 * i)), size, off) for i, (start, size, off) in enumerate(fdes)
    )
    return header + index + blocks


def _s64(value: int) -> int:
    """`value` as the s64 a start field holds (the address wraps at 2^64)."""
    value &= ADDRESS_MASK
    return value - (1 << 64) if value >> 63 else value


TOP = 1 << 63


def crafted() -> list[dict]:
    """One section for each class the issue names, the kernel's rule and the format's apart."""
    fn = lambda start, rows, size=0x20, **kw: {"start": start, "size": size, "rows": rows, **kw}  # noqa: E731
    flex = {"info2": 1}
    sane = [(0, 1, [8]), (4, 1, [16])]
    out = {
        "aarch64-cfa-only-no-fixed-ra": v3([fn(0x1000, [(0, 1, [16]), (4, 0, [16, -8, -16])])], abi=AARCH64_LE, ra=0),
        "overlapping-functions": v3([fn(0x1000, sane, 0x40), fn(0x1010, sane, 0x10)]),
        "zero-size-in-bigger": v3([fn(0x1000, sane, 0x40), fn(0x1010, [(0, 1, [8])], 0)]),
        "unknown-flag-bits": v3([fn(0x1000, sane)], flags=0xFD),
        "unknown-abi": v3([fn(0x1000, sane)], abi=0x77),
        "mangled-ra-on-amd64": v3([fn(0x1000, [(0, 1, [8], 0, 1)])]),
        "flex-reserved-bits": v3([fn(0x1000, [(0, 1, [ctl(RSP) | 4, 8])], **flex)]),
        "flex-unknown-register": v3([fn(0x1000, [(0, 1, [ctl(99), 8])], **flex)]),
        "row-at-function-end": v3([fn(0x1000, [(0, 1, [8]), (0x20, 1, [16])])]),
        "row-past-function-end": v3([fn(0x1000, [(0, 1, [8]), (0x21, 1, [16])])]),
        "flex-cfa-reg-p-clear": v3([fn(0x1000, [(0, 1, [ctl(RSP), 8]), (4, 1, [ctl(RSP, reg_p=False), 16])], **flex)]),
        "pcmask-rep-size-0": v3([fn(0x1000, [(0, 1, [8])], pcmask=True, rep=0)]),
        "pcmask-rep-size-16": v3(
            [
                fn(
                    0x1000,
                    [(0, 1, [ctl(RSP), 8]), (6, 1, [ctl(RSP, reg_p=False), 16])],
                    0x40,
                    pcmask=True,
                    rep=16,
                    **flex,
                )
            ]
        ),
        "pcmask-first-row-late": v3([fn(0x1000, [(4, 1, [8])], 0x40, pcmask=True, rep=16)]),
        "pcmask-row-past-size": v3([fn(0x1000, [(0, 1, [8]), (0x30, 1, [16])], 0x20, pcmask=True, rep=0x40)]),
        "overlap-later-reaches-further": v3([fn(0x1000, sane, 0x20), fn(0x1010, sane, 0x40)]),
        "three-nested": v3([fn(0x1000, sane, 0x80), fn(0x1010, sane, 0x10), fn(0x1030, sane, 0x10)]),
        "func-start-0": v3([fn(0, sane)]),
        "row-without-words": v3([fn(0x1000, [(0, 1, [8]), (4, 1, [])])]),
        "flex-1-word": v3([fn(0x1000, [(0, 1, [ctl(RSP)])], **flex)]),
        "flex-3-words-ra-ctl": v3([fn(0x1000, [(0, 1, [ctl(RSP), 8, 2])], **flex)]),
        "flex-3-words-padding": v3([fn(0x1000, [(0, 1, [ctl(RSP), 8, 0])], **flex)]),
        "flex-5-words-ra-ctl": v3([fn(0x1000, [(0, 1, [ctl(RSP), 8, 2, -8, 2])], **flex)]),
        "flex-5-words-padding": v3([fn(0x1000, [(0, 1, [ctl(RSP), 16, 0, 2, -16])], **flex)]),
        "flex-6-words": v3([fn(0x1000, [(0, 1, [ctl(RSP), 16, 2, -8, 2, -16])], **flex)]),
        "zero-size-function-rows": v3([fn(0x1000, [(0, 1, [8]), (1, 1, [16])], 0)]),
        "zero-size-function-row-0": v3([fn(0x1000, [(0, 1, [8])], 0), fn(0x1010, sane)]),
        "rows-past-fre-len": v3([fn(0x1000, sane)])[:-1] + b"\x10",
        "first-row-after-start": v3([fn(0x1000, [(4, 1, [8])])]),
        "unsorted-fdes": v3([fn(0x1020, sane), fn(0x1000, sane)]),
        "equal-starts": v3([fn(0x1000, sane), fn(0x1000, sane)]),
        "unsorted-rows": v3([fn(0x1000, [(4, 1, [8]), (2, 1, [16])])]),
        "fde-type-2": v3([fn(0x1000, sane, info2=2)]),
        "fde-type-17": v3([fn(0x1000, sane, info2=0x11)]),
        "fre-type-3": v3([fn(0x1000, sane, info=3)]),
        "word-size-3": v3([fn(0x1000, [(0, 1, [8], 3)])]),
        "default-4-words": v3([fn(0x1000, [(0, 1, [8, -8, -16, 4])])], ra=0),
        "fixed-fp-and-ra": v3([fn(0x1000, [(0, 1, [8])])], fp=-16),
        "fixed-fp-and-ra-extra-word": v3([fn(0x1000, [(0, 1, [8, -16])])], fp=-16),
        "aux-header": v3([fn(0x1000, sane)])[:7] + b"\x04" + v3([fn(0x1000, sane)])[8:],
        # Addresses past 2^63 (the kernel's unsigned long compares) and functions whose end wraps past 2^64.
        "starts-past-2^63": v3([fn(TOP + 0x1000, sane), fn(TOP + 0x2000, sane)]),
        "starts-across-2^63": v3([fn(TOP - 0x10, sane), fn(TOP + 0x10, sane)]),
        "end-wraps-past-2^64": v3([fn(-0x100, sane), fn(-0x40, sane, 0x80)]),
        "start-wraps-past-2^64": v3([fn(-0x20, sane), fn(0x10, sane)]),
        "size-wraps-past-2^64": v3([fn(-0x2000, sane), fn(-0x1000, sane, 0xFFFFFFFF)]),
    }
    # The row at the end of the section's FRE data, with fre_len cut by one: past fre_len, inside the section.
    whole = bytearray(v3([fn(0x1000, sane)]))
    struct.pack_into("<I", whole, 16, struct.unpack_from("<I", whole, 16)[0] - 1)
    out["row-past-fre-len-inside-section"] = bytes(whole)
    # Functions reading one block of rows (each validated and looked up again: the profile reads it once).
    many = [(2 * k, 1, [] if k % 7 == 3 else [8 + k % 64]) for k in range(40)]
    out["one-block-for-all"] = shared_block(v3([fn(0x1000, many, 0x60)]), 30)
    out["one-block-for-all-unsorted"] = shared_block(v3([fn(0x1000, many[:20] + many[:20], 0x60)]), 30)
    # AArch64 functions of many signed rows (key B), most alike, each function its own block (issue 35's
    # shape): a row without words and one of 4-byte words last.
    signed = [(k, 1, [16, -8, -16], 0, 1) for k in range(40)] + [
        (60, 1, [], 0, 1),
        (61, 0, [2**31 - 1, -(2**31), 0], 2, 1),
    ]
    keyb = [fn(0x1000 + 0x100 * k, signed, 0x50, info=0x20) for k in range(4)]
    out["aarch64-signed-rows"] = v3(keyb, abi=AARCH64_LE, ra=0)
    out["fde-types-mixed"] = fde_types_mixed()
    return [case(f"crafted/{name}", data, 0) for name, data in out.items()]


def fde_types_mixed() -> bytes:
    """Functions of FDE types 0, 1, 2, 3, 5, 7, 9, 11, 15 and 18 (the kernel's four bits: 2), where types
    past flexible read the same rows: each of four functions of types 2, 15, 7 and 0 has a second one whose
    attributes are its own attributes' last byte and first rows' bytes (rep_size, then a row's start and
    info: the second's row count, FRE type 0 and, from its second row's start, FDE type 5, 3, 9 or 11), so
    that the second reads the first's rows from its third on, as another FDE type past flexible (the last
    pair: rows read as default and as past flexible)."""
    fn = lambda start, rows, size=0x20, **kw: {"start": start, "size": size, "rows": rows, **kw}  # noqa: E731
    bare = lambda starts: [(ip, k % 2, []) for k, ip in enumerate(starts)]  # noqa: E731
    functions = [fn(0x1000, [(0, 1, [8]), (4, 1, [16])]), fn(0x1040, [(0, 1, [ctl(RSP), 8])], info2=1)]
    seconds = []
    for k, (first, second) in enumerate([(2, 5), (15, 3), (7, 9), (0, 11)]):
        rows = [(0, 0, []), (second, 1, []), *bare(range(second + 1, second + 1 + 2 * (4 + k), 2))]
        functions.append(fn(0x1080 + 0x80 * k, rows, 0x20, info2=first, rep=len(rows) - 2))
        functions.append(fn(0x10C0 + 0x80 * k, [], 0x20))  # its attributes moved below
        seconds.append(len(functions) - 1)
    functions.append(fn(0x1280, bare([0, 2, 4]), info2=0x12))
    data = bytearray(v3(functions))
    fdeoff = struct.unpack_from("<I", data, 20)[0]
    for index in seconds:
        first_off = struct.unpack_from("<I", data, HEADER + fdeoff + 16 * (index - 1) + 12)[0]
        struct.pack_into("<I", data, HEADER + fdeoff + 16 * index + 12, first_off + 4)
    return bytes(data)


def shared_block(data: bytes, functions: int) -> bytes:
    """A version 3 section of one function made into `functions` functions 4 bytes apart, every one
    pointing at its attributes and rows (the FDE index grows; the FRE sub-section stays as it was)."""
    fdeoff, freoff = struct.unpack_from("<II", data, 20)
    start, size, off = struct.unpack_from("<qII", data, HEADER + fdeoff)
    address = start + HEADER + fdeoff
    index = b"".join(struct.pack("<qII", address + 4 * i - (HEADER + 16 * i), size, off) for i in range(functions))
    header = bytearray(data[:HEADER])
    struct.pack_into("<I", header, 8, functions)
    struct.pack_into("<II", header, 20, 0, 16 * functions)
    return bytes(header) + index + data[HEADER + freoff :]


def random_section(rng: random.Random) -> dict:
    """A random version 3 section: a few functions of either type, rows with random words."""
    functions, start = [], 0x1000
    for _ in range(rng.randrange(1, 4)):
        size = rng.choice([0, 1, 8, 0x20, 0x40])
        flexible = rng.random() < 0.5
        rows, ip = [], rng.choice([0, 0, 0, 1])
        for _ in range(rng.randrange(0, 4)):
            n = rng.choice([0, 1, 2, 3, 4, 5, 6]) if flexible else rng.choice([0, 1, 2, 3])
            words = [
                rng.choice([ctl(RSP), ctl(RBP), ctl(R10), ctl(RSP, True), 0, 2, 3, 4, 8, 16, 0xF8]) for _ in range(n)
            ]
            rows.append((ip, rng.randrange(2), words, rng.choice([0, 0, 1, 2])))
            ip += rng.choice([1, 2, 4, 8, 0])
        pcmask = rng.random() < 0.15
        functions.append(
            {
                "start": start,
                "size": size,
                "rows": rows,
                "info2": int(flexible),
                "pcmask": pcmask,
                "rep": rng.choice([0, 4, 16]),
            }
        )
        start += rng.choice([0, 4, 0x10, 0x40])
    data = v3(functions, abi=rng.choice([AMD64, AARCH64_LE]), ra=rng.choice([0, -8]), fp=rng.choice([0, 0, -16]))
    return case("random", data, 0)


# The corpus ---------------------------------------------------------------------------


def write_corpus(folder: Path, cases: list[dict], kernel: list[dict], rng: random.Random) -> None:
    """A small set of sections, each class of the kernel's verdict kept a few times, with its verdict."""
    by_class: dict[tuple, list[int]] = collections.defaultdict(list)
    for i, (c, k) in enumerate(zip(cases, kernel, strict=True)):
        if k["register"] is None or len(c["hex"]) > 2048:
            continue
        ours = profile_result(c)
        rules = tuple(sorted({r[3] for r in ours["lookups"] if not isinstance(r[2], str) or r[2] == CRASH}))
        key = (k["register"], ours.get("rule"), rules, "~" in c["name"])
        by_class[key].append(i)
    made = {i for i, c in enumerate(cases) if "~" not in c["name"] and c["name"] != "random"}
    sampled = {i for members in by_class.values() for i in rng.sample(members, min(len(members), 4))}
    picked = sorted((made | sampled) - {i for i, c in enumerate(cases) if len(c["hex"]) > 2048})
    entries = [
        {
            "name": cases[i]["name"],
            "section": cases[i]["hex"],
            "address": cases[i]["address"],
            "text": cases[i]["text"],
            "scan_limit": SCAN_LIMIT,
            "kernel": {"register": kernel[i]["register"], "lookups": kernel[i]["lookups"]},
        }
        for i in picked
    ]
    folder.mkdir(parents=True, exist_ok=True)
    about = {
        "about": "Sections judged by the Linux kernel's SFrame reader itself (kernel/unwind/sframe.c, v14 series, "
        "dylanbhatch/linux 3231d5c5, CONFIG_SFRAME_VALIDATION=y) compiled in user space by "
        "scripts/kernel_corpus.py: register is sframe_read_header + sframe_validate_section's return, "
        "lookups what sframe_find_user gave over each function's first scan_limit bytes, as PC ranges [start, end, "
        "-errno, 'crash' (a division by zero) or the frame found: 'cfa=sp+16 ra=*(cfa-8) fp=retain'].",
        "sections": entries,
    }
    (folder / "corpus.json").write_text(json.dumps(about, indent=0) + "\n")
    print(f"wrote {len(entries)} sections to {folder / 'corpus.json'}")


def add_crafted(path: Path, harnesses: Harnesses, sections: list[dict] | None = None) -> None:
    """Add the crafted sections (`sections`, else this script's) `path` lacks, with the kernel's verdicts,
    keeping every entry it has."""
    corpus = json.loads(path.read_text())
    held = {e["name"] for e in corpus["sections"]}
    new = [c for c in (crafted() if sections is None else sections) if c["name"] not in held]
    kernel = run_kernel(harnesses, new)
    report(new, kernel, len(new))
    for c, k in zip(new, kernel, strict=True):
        verdict = {"register": k["register"], "lookups": k["lookups"]}
        entry = {"name": c["name"], "section": c["hex"], "address": c["address"], "text": c["text"]}
        corpus["sections"].append({**entry, "scan_limit": SCAN_LIMIT, "kernel": verdict})
    path.write_text(json.dumps(corpus, indent=0) + "\n")
    print(f"added {len(new)} sections to {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel-source", type=Path, required=True, help="the kernel's sframe.c functions")
    parser.add_argument("--elf", type=Path, nargs="*", default=[], help="ELF files whose sections to add")
    parser.add_argument("--mutants", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--write", type=Path, help="write the corpus to this folder")
    parser.add_argument(
        "--add-crafted", type=Path, help="add to this corpus.json the crafted sections it does not hold yet, and stop"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        harnesses = Harnesses(args.kernel_source.resolve(), Path(tmp))
        if args.add_crafted:
            add_crafted(args.add_crafted, harnesses)
            return 0
        real = real_sections(args.elf) + crafted()
        seeds = [c for c in real if len(c["hex"]) >= 2 * HEADER and bytes.fromhex(c["hex"])[2] == 3]
        mutator = Mutator(args.seed)
        mutants = [mutator.mutate(mutator.rng.choice(seeds)) for _ in range(args.mutants)] if seeds else []
        mutants += [random_section(mutator.rng) for _ in range(args.mutants // 2)]
        cases = real + mutants
        kernel = run_kernel(harnesses, cases)
    report(cases, kernel, len(real))
    if args.write:
        write_corpus(args.write, cases, kernel, random.Random(args.seed))
    return 0


def report(cases: list[dict], kernel: list[dict], real: int) -> None:
    tally = collections.Counter()
    wrong: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    for i, (c, k) in enumerate(zip(cases, kernel, strict=True)):
        if k["register"] is None:
            tally["no harness for its byte order"] += 1
            continue
        group = "real" if i < real else "mutant"
        ours = profile_result(c)
        ok = agree(k, ours)
        tally[group, ok] += 1
        if not ok:
            key = f"kernel {k['register']} {k['lookups'][:2]} / sfview {ours['register']} {ours['lookups'][:2]}"
            cls = f"{group}: kernel register {k['register']}, sfview {ours['register']} ({ours.get('rule')})"
            wrong[cls] += 1
            examples.setdefault(cls, c["name"] + ": " + key)
    for group in ("real", "mutant"):
        yes, no = tally[group, True], tally[group, False]
        if yes + no:
            print(f"{group}: {yes}/{yes + no} agree ({100 * yes / (yes + no):.1f} %)")
    for cls, n in wrong.most_common():
        print(f"  {n:5d}  {cls}\n         e.g. {examples[cls][:300]}")
    if tally["no harness for its byte order"]:
        print(f"skipped (no harness for the byte order): {tally['no harness for its byte order']}")


if __name__ == "__main__":
    raise SystemExit(main())
