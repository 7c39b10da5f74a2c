"""The newest revision of the kernel's SFrame reader, linux-mm 5ce6138798d7: what differs from the v14 series.

Written from `kernel/unwind/sframe.c` of linux-mm/linux-mm at
5ce6138798d7b44fa0dd00e4dd00d8a59f0ecb27, with `CONFIG_SFRAME_VALIDATION=y`.
Its header checks are v14's (version 3 only, FDE_SORTED, FDE_FUNC_START_PCREL,
`auxhdr_len` 0, non-zero counts); the rest is stricter and says more:

- `__read_fde` wants the function's *end* inside the text too (`-EFAULT`),
  refuses PCMASK with `rep_size` 0 (no division any more) and `fres_num >
  func_size` (`-EINVAL`);
- `__read_fre`: `ip_off >= func_size` (`>=` rep_size for PCMASK), an FRE
  type or data word size past 2, leftover data words, a flexible row of
  fewer than two words: `-EINVAL`; a row with no data words is a valid
  outermost frame (CFA = SP + 0);
- at lookup, `sframe_init_cfa_rule_data` / `sframe_init_rule_data` fail
  (`-EINVAL`) on a set reserved control bit or a CFA rule without a register;
- `sframe_find` tells `-ENOENT` (no function at the PC, or a gap: the
  unwinder falls back to frame pointers) from every other error (the section
  is removed).

Everything else (the reader, the search over rows) is `sfview.consumers.kernel`'s,
followed here with these rules. `tests/data/consumers/kernel-5ce6138798d7/`
holds the verdicts that revision's own code gave (`scripts/kernel_linux_mm_corpus.py`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import replace
from typing import NamedTuple

from sfview import ADDRESS_MASK
from sfview.consumers import Profile, Verdict, register
from sfview.consumers.kernel import (
    DEFAULT,
    EFAULT,
    EINVAL,
    FDA,
    FDE,
    FLEX,
    UNREGISTERED,
    Arch,
    KernelFunction,
    Lookup,
    Refused,
    Registered,
    _Reader,
    each_lookup,
    lookup_failures,
    text_range,
    validate,
)
from sfview.document import Document

REVISION = "5ce6138798d7"
NAME = f"kernel-{REVISION}"
TITLE = f"the Linux kernel's SFrame reader (linux-mm/linux-mm {REVISION}, the newest revision of the series)"
ENOENT = "-ENOENT"

RESERVED = 0b100
"""`SFRAME_V3_FLEX_FDE_CTRLWORD_RESERVED_P`: bit 2 of a control word."""

GAP = "__find_fde: ip >= func_addr + func_size"
"""The v14 reader's name for a PC past its function (there `-EINVAL`, here `-ENOENT`)."""


class Row(NamedTuple):
    """One row as this revision decodes it (`KernelRow`'s fields, and whether it is an outermost frame)."""

    ip_off: int
    start: int
    failure: tuple[str, str] | None
    frame: tuple[int, int, int, int, int, int] | None
    outermost: bool


class NewestRegistered(Registered):
    """A section this revision took; a successful lookup's rules say `outermost` for a row without words."""

    def rules(self, row: Row) -> str:  # type: ignore[override]
        text = super().rules(row)  # type: ignore[arg-type]
        return f"{text} outermost" if row.outermost else text


class _NewestReader(_Reader):
    """`__read_fde` and `__read_fre` of 5ce6138798d7, over the v14 reader's header and bounds."""

    def fde(self, index: int) -> KernelFunction:
        at = self.fdes_start + index * FDE.size
        start_off, size, fres_off = struct.unpack_from(self.order + FDE.format, self.data, at)
        func_addr = (self.base + at + start_off) & ADDRESS_MASK
        func_end = (func_addr + size) & ADDRESS_MASK
        if func_addr < self.text[0] or func_end > self.text[1]:
            rule = "__read_fde: func_start < text_start || func_end > text_end"
            raise Refused(EFAULT, rule, at + FDE.fields["func_start"][0])
        fda_at = self.fres_start + fres_off
        if fda_at + FDA.size > self.fres_end:
            rule = "__read_fde: fda_addr + sizeof(fda) > fres_end"
            raise Refused(EFAULT, rule, at + FDE.fields["func_start_fre_off"][0])
        num, info, info2, rep = struct.unpack_from(self.order + FDA.format, self.data, fda_at)
        function = KernelFunction(index, func_addr, size, info, info2, rep, num, fda_at + FDA.size)
        if function.pcmask and not rep:
            raise Refused(EINVAL, "__read_fde: PCMASK with rep_size 0", fda_at + FDA.fields["func_rep_size"][0])
        if num > size:
            raise Refused(EINVAL, "__read_fde: fres_num > func_size", fda_at + FDA.fields["func_num_fres"][0])
        return function

    FDE_UNSORTED = (EINVAL, "sframe_validate_section: FDE not sorted (ip <= prev_ip)")
    FRE_UNSORTED = (EINVAL, "sframe_validate_section: FRE not sorted (ip_off <= prev ip_off)")
    BAD_ROW = EINVAL

    def bound(self, function: KernelFunction, ip_off: int, at: int) -> Refused | None:
        if not function.pcmask and ip_off >= function.size:
            return Refused(EINVAL, "__read_fre: ip_off >= func_size", at)
        if function.pcmask and ip_off >= function.rep_size:
            return Refused(EINVAL, "__read_fre: ip_off >= rep_size (PCMASK)", at)
        return None

    def row(  # type: ignore[override]
        self,
        fde_type: int,
        ip_off: int,
        at: int,
        info: int,
        words: tuple[int, ...],
        words_at: int,
        word: int,
    ) -> Row:
        if not words:  # an outermost frame: CFA = SP + 0, RA and FP retained
            return Row(ip_off, at, None, (self.sp_reg << 3 | 1, 0, 0, 0, 0, 0), True)
        if fde_type == DEFAULT:
            frame = self._default_words(info, words, words_at)
        elif fde_type == FLEX:
            frame = self._flex_words(words, words_at, word)
        else:
            raise Refused(EINVAL, "__read_fre_datawords: FDE type neither default nor flexible", words_at - 1)
        return Row(ip_off, at, _rule_failure(frame), frame, False)

    def _default_words(self, info: int, words: tuple[int, ...], words_at: int) -> tuple[int, int, int, int, int, int]:
        try:
            return self._default(info, words, words_at)
        except Refused as refused:  # the same rule, here -EINVAL
            raise Refused(EINVAL, refused.rule, refused.offset) from None

    def _flex_words(self, words: tuple[int, ...], words_at: int, word: int) -> tuple[int, int, int, int, int, int]:
        """`__read_flex_fde_fre_datawords`: the v14 decoding, its refusals `-EINVAL`; the CFA's `reg_p` is
        judged at lookup (`sframe_init_cfa_rule_data`)."""
        count = len(words)
        if count < 2:
            raise Refused(EINVAL, "__read_flex_fde_fre_datawords: dataword_count < 2", words_at)
        mask = (1 << (8 * word)) - 1
        i, left = 2, count - 2
        pairs = []
        for fixed in (self.ra_off, self.fp_off):
            ctl, off = (2 if fixed else 0), fixed
            if left >= 2:
                read, i, left = words[i] & mask, i + 1, left - 1
                if read:
                    ctl, off, i, left = read, words[i], i + 1, left - 1
            pairs += [ctl, off]
        if left:
            raise Refused(EINVAL, "__read_flex_fde_fre_datawords: data words left over", words_at)
        return (words[0] & mask, words[1], *pairs)  # type: ignore[return-value]


def _rule_failure(frame: tuple[int, int, int, int, int, int]) -> tuple[str, str] | None:
    """What `sframe_init_cfa_rule_data` and `sframe_init_rule_data` (RA, then FP) refuse at lookup."""
    cfa_ctl, _, ra_ctl, ra_off, fp_ctl, fp_off = frame
    if cfa_ctl & RESERVED:
        return EINVAL, "sframe_init_cfa_rule_data: CFA control word reserved bit set"
    if not cfa_ctl & 1:
        return EINVAL, "sframe_init_cfa_rule_data: CFA control word reg_p clear"
    for name, ctl, off in (("RA", ra_ctl, ra_off), ("FP", fp_ctl, fp_off)):
        if (ctl or off) and ctl & RESERVED:
            return EINVAL, f"sframe_init_rule_data: {name} control word reserved bit set"
    return None


def register_section(
    data: bytes, address: int = 0, text: tuple[int, int] | None = None, arch: Arch | None = None
) -> NewestRegistered | Refused:
    """`sframe_add_section`'s first check, `sframe_read_header`, then `sframe_validate_section` of this
    revision: the section as registered, or why not."""
    if not data:
        return Refused(EINVAL, "sframe_add_section: sframe_start >= sframe_end", 0)
    if text is not None and text[0] >= text[1]:
        return Refused(EINVAL, "sframe_add_section: text_start >= text_end", 0)
    reader = _NewestReader(data, address, text, arch)
    functions = validate(reader)
    if isinstance(functions, Refused):
        return functions
    return NewestRegistered(functions, reader.order, (reader.sp_reg, reader.fp_reg), reader.size, reader.notes)


def lookups(registered: NewestRegistered, successes: bool = True) -> list[Lookup]:
    """What `sframe_find` gives at every PC of every function: the v14 search (the same `__find_fde` and
    `__find_fre` walk), a PC past its function's end `-ENOENT` here."""
    return list(_each_lookup(registered, successes))


def _each_lookup(registered: Registered, successes: bool) -> Iterator[Lookup]:
    """`lookups`, one range at a time."""
    for f in each_lookup(registered, successes):
        yield replace(f, error=ENOENT, rule=f"{GAP} (a gap)") if f.rule.startswith(GAP) else f


def judge(
    data: bytes, address: int = 0, text: tuple[int, int] | None = None, arch: Arch | None = None, name: str = NAME
) -> Verdict:
    """This revision's verdict on a section at `address` (`text`: the executable range registered with it;
    `arch`: the machine reading it, None: the ABI byte's, said in a note)."""
    registered = register_section(data, address, text, arch)
    if isinstance(registered, Refused):
        return Verdict(name, False, registered.error, registered.rule, registered.offset, notes=[UNREGISTERED])
    failures = lookup_failures(registered, _each_lookup)
    errors = {f.error for f in failures}
    notes = list(registered.notes)
    if ENOENT in errors:
        notes.append(FALLBACK)
    if errors - {ENOENT}:
        notes.append(REMOVED)
    return Verdict(name, True, lookups=failures, notes=notes)


FALLBACK = "where a lookup gives -ENOENT, the unwinder falls back to frame pointers for that frame"
REMOVED = (
    "a lookup failing with any other error removes the section (sframe_remove_section): frame pointers "
    "for its text from then on"
)


def judge_document(doc: Document, arch: str | None = None, name: str = NAME) -> Verdict:
    """The verdict on an opened file's section, its executable segment as the text (`arch`: `Arch`'s value)."""
    return judge(doc.data, doc.address, text_range(doc), Arch(arch) if arch else None, name)


PROFILE = register(Profile(NAME, TITLE, judge, judge_document))
NEWEST = register(
    Profile(
        "kernel",
        TITLE,
        lambda data, address: judge(data, address, name="kernel"),
        lambda doc, arch: judge_document(doc, arch, "kernel"),
    )
)
"""`kernel` is the newest revision sfview follows."""
