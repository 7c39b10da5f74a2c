"""The arm64 module variant of the kernel's SFrame reader (Dylan Hatch's series, v6): what differs from v14.

Written from `kernel/unwind/sframe.c` of dylanbhatch/linux at 3231d5c571fa6e6b8f78d8039a3429eb0d953caa
(the v14 series, `sfview.consumers.kernel`) with the sframe.c hunks of patches 5 to 8 of the series' v6
applied (message id 20260519064950.493949-7-dylanbhatch@google.com; the file after them is blob
d256e72620fe), followed along its module path, `sframe_module_init` then `sframe_find_kernel`, with
`CONFIG_SFRAME_VALIDATION=y`:

- `sframe_read_header` no longer requires `SFRAME_F_FDE_SORTED` (the flag's value is kept);
- `sframe_sort_fdes`: with the flag clear, the FDEs are sorted in place by their function's absolute start
  (unsigned) with lib/sort.c's `sort()`, a heapsort, not stable (`sort_order` follows it step for step, so
  that FDEs starting at one address end in its order); the swap rewrites `func_start_off` so that each
  function keeps its address, `fres_off` untouched;
- then v14's `sframe_validate_section` on the sorted table, and v14's search at lookup;
- `sframe_find_kernel` asks `__module_address` which module a PC is in: every PC looked up is taken to
  lie in this one;
- a failed load is a `WARN_ON` (the module loads without SFrame: every lookup in it `-EINVAL`), a failed
  lookup is returned to the unwinder; nothing removes the section.

The machine is arm64 (little-endian, SP 31, FP 29), whatever the section's ABI byte or `--arch` says.
`tests/data/consumers/kernel-arm64-module/` holds the verdicts that code gave
(`scripts/kernel_arm64_module_corpus.py`).
"""

from __future__ import annotations

import struct
from dataclasses import replace

from sfview import ADDRESS_MASK
from sfview.consumers import Profile, Verdict, register
from sfview.consumers.kernel import (
    CRASH,
    FDE,
    SORTED,
    Arch,
    Refused,
    Registered,
    _Reader,
    lookup_failures,
    text_range,
    validate,
)
from sfview.document import Document
from sfview.generated import sframe_layout as layout

NAME = "kernel-arm64-module"
TITLE = (
    "the Linux kernel's SFrame reader for arm64 modules (Dylan Hatch's series v6, "
    "20260519064950.493949-7-dylanbhatch@google.com, on dylanbhatch/linux 3231d5c5)"
)
FLAGS_AT = layout.PREAMBLE.fields["flags"][0]
SIGN = 1 << 63


def sort_order(keys: list[int]) -> list[int]:
    """lib/sort.c's `sort()` on items with these keys (`cmp_int`): which item ends at each position.

    A bottom-up heapsort, transcribed by element instead of by byte (the kernel's `parent()` rounds a byte
    offset to the element before halving it: `(i - 1) // 2` here); its order of equal keys is the kernel's.
    Followed: `__sort_r` of ColinIanKing/linux-next aeb03332 (lib/sort.c of the series' base, v7.1-rc2, was
    not at hand)."""
    items = list(range(len(keys)))
    n, a, shift = len(items), len(items) // 2, 0

    def cmp(x: int, y: int) -> int:
        left, right = keys[items[x]], keys[items[y]]
        return (left > right) - (left < right)

    def swap(x: int, y: int) -> None:
        items[x], items[y] = items[y], items[x]

    if not a:
        return items
    while True:
        if a:  # building the heap: sift a down
            a -= 1 << shift
        elif n > 3:  # sorting: take the two largest out
            n -= 1
            swap(0, n)
            shift = int(cmp(1, 2) <= 0)
            a = 1 << shift
            n -= 1
            swap(a, n)
        else:
            break
        b = a
        while True:  # down to a leaf, by the larger child
            c = 2 * b + 1
            d = c + 1
            if d >= n:
                break
            b = c if cmp(c, d) > 0 else d
        if d == n:  # the last leaf, with no sibling
            b = c
        while b != a and cmp(a, b) >= 0:  # back up to where a belongs
            b = (b - 1) // 2
        c = b
        while b != a:  # and shift it into place
            b = (b - 1) // 2
            swap(b, c)
    n -= 1
    swap(0, n)
    if n == 2 and cmp(0, 1) > 0:
        swap(0, 1)
    return items


class _ModuleReader(_Reader):
    """`sframe_read_header` without the sorted flag's requirement, then `sframe_sort_fdes`."""

    SORTED_REQUIRED = False
    MACHINE_SAID = "the series reads modules' SFrame on arm64 alone"

    def header(self) -> Refused | None:
        refused = super().header()
        if refused is None and not self.field("B", FLAGS_AT) & SORTED:
            self.data = self._sorted()
            self.notes.append(
                f"SFRAME_F_FDE_SORTED is clear: sframe_sort_fdes sorted the {self.num_fdes} FDEs in place by "
                "function start (the FDE indexes here are the sorted table's)"
            )
        return refused

    def _sorted(self) -> bytes:
        """The section with its FDE table as `sort()` and `sframe_sort_swap_fde` leave it."""
        data = bytearray(self.data)
        fmt = self.order + FDE.format
        places = [self.fdes_start + i * FDE.size for i in range(self.num_fdes)]
        fdes = [struct.unpack_from(fmt, data, at) for at in places]
        starts = [(self.base + at + off) & ADDRESS_MASK for at, (off, _, _) in zip(places, fdes, strict=True)]
        for at, j in zip(places, sort_order(starts), strict=True):
            off = ((starts[j] - self.base - at + SIGN) & ADDRESS_MASK) - SIGN
            struct.pack_into(fmt, data, at, off, fdes[j][1], fdes[j][2])
        return bytes(data)


def register_section(data: bytes, address: int = 0, text: tuple[int, int] | None = None) -> Registered | Refused:
    """`sframe_module_init`: the header read, the FDEs sorted if the flag is clear, the section validated."""
    reader = _ModuleReader(data, address, text, Arch.ARM64)
    functions = validate(reader)
    if isinstance(functions, Refused):
        return functions
    return Registered(functions, reader.order, (reader.sp_reg, reader.fp_reg), reader.size, reader.notes)


IN_MODULE = "every PC looked up is taken to lie in this module (sframe_find_kernel asks __module_address)"
NOT_LOADED = (
    "WARN_ON: the module loads without SFrame (sframe_init stays false): every lookup in it fails with -EINVAL "
    "and the unwinder uses frame pointers"
)
FALLBACK = (
    "a failing lookup is returned to the unwinder, which falls back to frame pointers for that frame; "
    "nothing removes the section"
)


def judge(data: bytes, address: int = 0, text: tuple[int, int] | None = None, name: str = NAME) -> Verdict:
    """The verdict on a module's section at `address`, its text `text` (None: any address)."""
    registered = register_section(data, address, text)
    if isinstance(registered, Refused):
        return Verdict(name, False, registered.error, registered.rule, registered.offset, notes=[NOT_LOADED])
    failures = lookup_failures(registered)
    notes = [*registered.notes, IN_MODULE]
    if {f.error for f in failures} - {CRASH}:
        notes.append(FALLBACK)
    return Verdict(name, True, lookups=failures, notes=notes)


UNRELOCATED = (
    "a relocatable object (a .ko): its start fields are judged as written, before the module loader "
    "applies their relocations; the loaded module's functions lie elsewhere"
)


def judge_document(doc: Document, arch: str | None = None) -> Verdict:
    """The verdict on an opened file's section, its executable segment as the text (`arch` is not asked:
    the machine is arm64); an object file's said to be judged before its relocations."""
    verdict = judge(doc.data, doc.address, text_range(doc))
    return replace(verdict, notes=[*verdict.notes, UNRELOCATED]) if doc.relocatable else verdict


PROFILE = register(Profile(NAME, TITLE, lambda data, address: judge(data, address), judge_document))
