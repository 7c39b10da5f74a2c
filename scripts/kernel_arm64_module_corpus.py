"""Hold `sfview check --profile kernel-arm64-module` to the series' own code, and keep what it said.

The code is `kernel/unwind/sframe.c` of dylanbhatch/linux at 3231d5c571fa6e6b8f78d8039a3429eb0d953caa with
the sframe.c hunks of patches 5 to 8 of Dylan Hatch's arm64 series v6 applied (message id
20260519064950.493949-7-dylanbhatch@google.com; each applies without fuzz, and the result is the blob the
next patch names: after patch 8, `git hash-object` d256e72620fe). Neither it nor the kernel's lib/sort.c is
in this repository: give the patched file as --kernel-source (checked by its blob id; the harness includes
what follows its `#include "sframe_debug.h"`), and a file holding lib/sort.c's `sort()` (with its `parent()`,
`do_swap()`, `do_cmp()` and the `cmp_func_t`/`swap_func_t` types, as a static function) as --sort-source.
The corpus in tests/data was recorded with `sort()` (`__sort_r` without its `cond_resched`) transcribed from
lib/sort.c of ColinIanKing/linux-next at aeb033320bf880fb83d09a589bfcc68719930818: lib/sort.c of the
series' own base (v7.1-rc2) was not at hand, so the order of equal starts is that tree's;
`sfview.consumers.kernel_arm64_module.sort_order` follows it.

scripts/kernel_harness/harness.c, built with -DSFRAME_ARM64_MODULE and arm64's SFRAME_REG_SP 31 and
SFRAME_REG_FP 29, maps each section at the address the corpus records (MAP_FIXED_NOREPLACE, zeros after
it), calls `sframe_module_init` (header, `sframe_sort_fdes`, `sframe_validate_section`), then
`sframe_find_kernel` at every PC of each function's first bytes, taking every PC to lie in the module.
An arm64 kernel reads every section little-endian, so the harness runs natively on any little-endian host
for every section, whatever its ABI byte.

The sections: the programs given with --elf (the corpus: tests/data/src/{shapes,deep,signal,qsort}.c built
with `aarch64-linux-gnu-gcc -B <sid>/bin/aarch64/ -Wa,--gsframe -O2`, binutils 2.47), each as written
(sorted flag set), with the flag cleared, and with the flag cleared and its FDEs shuffled (addresses kept);
the v14 script's crafted sections and ones for the sort (equal starts, unsigned order past 2^63); sections
with functions at few distinct addresses, some of them broken (the tie order decides which error); random
sections; and mutants of all (the v14 script's mutator, and shuffles). Programs are moved by MOVE (a module's
section lies where the loader puts it; the low addresses of a PIE cannot be mapped), a crafted or random
section alone, its functions kept where they were:

    python scripts/kernel_arm64_module_corpus.py --kernel-source /tmp/armmodule/sframe-v6-d256e72620fe.c \\
        --sort-source /tmp/armmodule/sort.c --elf PROGRAMS... [--write tests/data/consumers/kernel-arm64-module]

The corpus in tests/data: seed 15, the default counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sfview import ADDRESS_MASK  # noqa: E402
from sfview.consumers import kernel_arm64_module as module  # noqa: E402
from sfview.consumers.kernel import lookups  # noqa: E402
from sfview.consumers.kernel_arm64_module import register_section  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from kernel_oracle import load_script  # noqa: E402

base = load_script("kernel_corpus")
ERRNO = base.ERRNO
BLOB = "d256e72620fe"
"""The patched sframe.c's blob id (`git hash-object`), as patch 8/9's index line gives it."""
MOVE = 0x10_0000_0000
"""Where sections are moved to: above what a small program maps, below what the harness's own maps use."""
AARCH64_SP, AARCH64_FP = 31, 29
FDE_AT = base.HEADER


def core(source: Path, folder: Path) -> Path:
    """The patched file after its `#include "sframe_debug.h"`, once its blob id is checked."""
    text = source.read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(text) + text).hexdigest()
    if not blob.startswith(BLOB):
        raise SystemExit(f"{source}: blob {blob[:12]}, not {BLOB} (sframe.c after patch 8/9 of the v6 series)")
    _, marker, rest = text.decode().partition('#include "sframe_debug.h"\n')
    if not marker:
        raise SystemExit(f'{source}: no `#include "sframe_debug.h"` line')
    out = folder / "sframe-arm64-module-core.c"
    out.write_text(rest)
    return out


class Harness:
    """One harness for every section: the module path, arm64's registers, native little-endian."""

    def __init__(self, source: Path, sort: Path, folder: Path) -> None:
        exe = folder / "harness-arm64-module"
        flags = ["-O1", "-DSFRAME_ARM64_MODULE", f'-DKERNEL_SFRAME_CORE="{source}"', f'-DKERNEL_LIB_SORT="{sort}"']
        flags += [f"-DSFRAME_REG_SP={AARCH64_SP}", f"-DSFRAME_REG_FP={AARCH64_FP}"]
        subprocess.run(["cc", *flags, str(base.HARNESS), "-o", str(exe)], check=True)
        self.exe = str(exe)

    def command(self, data: bytes) -> list[str]:
        return [self.exe]


def profile_result(case: dict) -> dict:
    """The profile's verdict in the harness's terms (`kernel_corpus.profile_result`, this one's lookups)."""
    return base.judged(case, register_section, lookups, ERRNO)


# Sections ----------------------------------------------------------------------------


def _s64(value: int) -> int:
    value &= ADDRESS_MASK
    return value - (1 << 64) if value >> 63 else value


def _fdes(data: bytes) -> tuple[int, int]:
    """(where the FDE table starts, how many FDEs of it lie inside the section)."""
    num, fdeoff = struct.unpack_from("<I", data, 8)[0], struct.unpack_from("<I", data, 20)[0]
    start = FDE_AT + fdeoff
    return start, max(0, min(num, (len(data) - start) // 16))


def moved(case: dict, keep_functions: bool) -> dict:
    """`case` at MOVE bytes higher: its text and functions too, or (`keep_functions`) its functions kept
    where they were (their offsets rewritten: a crafted section's addresses near 2^64 stay there)."""
    data = bytearray(bytes.fromhex(case["hex"]))
    text = list(case["text"])
    if keep_functions and len(data) >= base.HEADER:
        start, count = _fdes(bytes(data))
        for i in range(count):
            at = start + 16 * i
            struct.pack_into("<q", data, at, _s64(struct.unpack_from("<q", data, at)[0] - MOVE))
    elif not keep_functions and text != list(base.ANY_TEXT):
        text = [text[0] + MOVE, text[1] + MOVE]
    return {**case, "hex": bytes(data).hex(), "address": case["address"] + MOVE, "text": text}


def unsorted(case: dict, rng: random.Random | None, suffix: str) -> dict:
    """`case` with SFRAME_F_FDE_SORTED cleared and (given `rng`) its FDEs shuffled, each function kept at its
    address (its offset rewritten for its new place)."""
    data = bytearray(bytes.fromhex(case["hex"]))
    if len(data) < base.HEADER:
        return case
    data[3] &= ~1
    start, count = _fdes(bytes(data))
    fdes = [struct.unpack_from("<qII", data, start + 16 * i) for i in range(count)]
    order = list(range(count))
    if rng is not None:
        rng.shuffle(order)
    for i, j in enumerate(order):
        off, size, fres = fdes[j]
        struct.pack_into("<qII", data, start + 16 * i, _s64(off + 16 * (j - i)), size, fres)
    return {**case, "name": case["name"] + suffix, "hex": bytes(data).hex()}


def crafted() -> list[dict]:
    """The v14 script's crafted sections, and ones for the module path (flag clear: sorted, then validated)."""
    fn = lambda start, rows, size=0x20, **kw: {"start": start, "size": size, "rows": rows, **kw}  # noqa: E731
    sane = [(0, 1, [8]), (4, 1, [16])]
    v3, top = base.v3, base.TOP
    clear = {"flags": 0x4}
    out = {
        "unsorted-flag-clear": v3([fn(0x1020, sane), fn(0x1000, sane)], **clear),
        "unsorted-flag-set": v3([fn(0x1020, sane), fn(0x1000, sane)]),
        "reversed-7-flag-clear": v3([fn(0x1000 + 0x40 * (6 - k), sane) for k in range(7)], **clear),
        "equal-starts-flag-clear": v3([fn(0x1000, sane), fn(0x1000, sane)], **clear),
        "unsigned-order-past-2^63": v3([fn(top + 0x1000, sane), fn(0x1000, sane)], **clear),
        "start-wraps-past-2^64-unsorted": v3([fn(-0x20, sane), fn(0x10, sane)], **clear),
        "overlapping-unsorted": v3([fn(0x1010, sane, 0x10), fn(0x1000, sane, 0x40)], **clear),
    }
    cases = [base.case(f"crafted/{name}", data, 0) for name, data in out.items()]
    return [moved(c, keep_functions=True) for c in base.crafted() + cases]


def tied_section(rng: random.Random, n: int) -> dict:
    """A section with the sorted flag clear whose functions start at few distinct addresses, some with
    attributes past the FRE data (`__read_fde` refuses those: which error comes first depends on where the
    sort leaves equal starts)."""
    functions = [
        {"start": 0x1000 + 0x40 * rng.randrange(3), "size": 0x20, "rows": [(0, 1, [8]), (4, 1, [16])]}
        for _ in range(rng.randrange(2, 10))
    ]
    data = bytearray(base.v3(functions, flags=0x4, abi=base.AARCH64_LE))
    start, count = _fdes(bytes(data))
    for i in range(count):
        if rng.random() < 0.3:
            struct.pack_into("<I", data, start + 16 * i + 12, 0x1000)
    return moved(base.case(f"ties~{n}", bytes(data), 0), keep_functions=True)


def programs(paths: list[Path], rng: random.Random) -> list[dict]:
    """Each program's section as written, with the flag cleared, and cleared with its FDEs shuffled."""
    out = []
    for path in paths:
        c = moved(base.case(path.name, *_section(path)), keep_functions=False)
        out += [c, unsorted(c, None, "+flag-clear"), unsorted(c, rng, "+unsorted")]
    return out


def _section(path: Path) -> tuple[bytes, int, tuple[int, int]]:
    from sfview.document import Document

    doc = Document.open(str(path), None)
    return doc.data, doc.address, base._text(doc)


def _order_decides(case: dict) -> bool:
    """A section of `tied_section` whose verdict a stable sort would change (kept whole in the corpus): the
    profile judges it with `sorted()` in place of `sort()`'s order. Picks sections, never answers."""
    if not case["name"].startswith("ties~"):
        return False
    heapsort = profile_result(case)
    saved = module.sort_order
    module.sort_order = lambda keys: sorted(range(len(keys)), key=keys.__getitem__)
    try:
        return profile_result(case) != heapsort
    finally:
        module.sort_order = saved


ABOUT = (
    "Sections judged by the Linux kernel's SFrame reader for arm64 modules itself (kernel/unwind/sframe.c of "
    "dylanbhatch/linux 3231d5c5 with the sframe.c hunks of Dylan Hatch's series v6 patches 5-8, blob "
    "d256e72620fe; lib/sort.c's sort() of ColinIanKing/linux-next aeb03332; CONFIG_SFRAME_VALIDATION=y) in user "
    "space by scripts/kernel_arm64_module_corpus.py, each section mapped at its address: register is "
    "sframe_module_init's (0 when sframe_init was set, else the error its WARN_ON saw); lookups what "
    "sframe_find_kernel gave over each function's first scan_limit bytes (every PC taken to lie in the module), "
    "as PC ranges [start, end, -errno, 'crash' or the frame found: 'cfa=sp+16 ra=*(cfa-8) fp=retain']."
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel-source", type=Path, required=True, help="sframe.c after patch 8/9 (d256e72620fe)")
    parser.add_argument("--sort-source", type=Path, required=True, help="lib/sort.c's sort(), as a static function")
    parser.add_argument("--elf", type=Path, nargs="*", default=[], help="AArch64 programs whose sections to add")
    parser.add_argument("--mutants", type=int, default=3000)
    parser.add_argument("--ties", type=int, default=300)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--write", type=Path, help="write the corpus to this folder")
    parser.add_argument(
        "--add-crafted", type=Path, help="add to this corpus.json the crafted sections it does not hold yet, and stop"
    )
    args = parser.parse_args()
    base.profile_result = profile_result  # the v14 script's report and sampling, with this profile
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        harness = Harness(core(args.kernel_source.resolve(), Path(tmp)), args.sort_source.resolve(), Path(tmp))
        if args.add_crafted:
            base.add_crafted(args.add_crafted, harness, crafted())  # type: ignore[arg-type]
            return 0
        real = programs(args.elf, rng) + crafted()
        seeds = [c for c in real if len(c["hex"]) >= 2 * base.HEADER and bytes.fromhex(c["hex"])[2] == 3]
        mutator = base.Mutator(args.seed)
        mutants = [mutator.mutate(mutator.rng.choice(seeds)) for _ in range(args.mutants)]
        mutants += [unsorted(m, rng, "~shuffled") for m in mutants[: args.mutants // 3] if len(m["hex"]) >= 56]
        randoms = [moved(base.random_section(mutator.rng), keep_functions=True) for _ in range(args.mutants // 3)]
        mutants += randoms + [unsorted(c, rng, "~shuffled") for c in randoms[::2]]
        mutants += [tied_section(rng, n) for n in range(args.ties)]
        cases = real + mutants
        kernel = base.run_kernel(harness, cases)
    unmapped = [c["name"] for c, k in zip(cases, kernel, strict=True) if k["register"] is None]
    if unmapped:
        raise SystemExit(f"sections the harness could not map at their address: {unmapped[:5]}")
    base.report(cases, kernel, len(real))
    if args.write:
        cases = [{**c, "name": c["name"].replace("~", "/order-")} if _order_decides(c) else c for c in cases]
        base.write_corpus(args.write, cases, kernel, random.Random(args.seed))
        path = args.write / "corpus.json"
        corpus = json.loads(path.read_text())
        path.write_text(json.dumps({**corpus, "about": ABOUT}, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
