"""Rules as numbers: how an unwinder recovers the caller's CFA, FP and RA.

After pyelftools' `dwarf/callframe.py`, which decodes CFI into plain rule
objects (`CFARule(reg, offset)`, `RegisterRule(type, arg)`) and leaves words
to `descriptions.py`: a `Rule` here holds DWARF register numbers and offsets,
never display text. The views turn rules into words (`sfview.output.readelf`
readelf's `sp+16`/`c-8`/`f`/`u`, `sfview.rule_notation` sfview's own),
with the register names `terms` gives per ABI; the unwinder computes with
them directly.

Every FRE gives three rules, for the CFA, the caller's FP and its RA:

- `Kind.VALUE`: `base + offset`, or, when `deref`, the word stored there. The
  base is a DWARF register number, or `CFA` for "relative to the CFA". A
  saved RA at CFA-8 is `Rule(VALUE, CFA, -8, deref=True)`; a CFA of SP+16 on
  AMD64 is `Rule(VALUE, 7, 16)`. `fixed` says the offset came from the
  header (`cfa_fixed_ra_offset`), not from the row.
- `Kind.SAME`: the row does not track it ("u"): the register still holds the
  caller's value (an FP not yet saved; on AArch64, an RA still in the link
  register).
- `padding` (on any kind): the row holds the padding word for this value
  ("U"). Padding is not "not saved": the value keeps its default rule, the
  one a default row would give. On AMD64 that is the header's fixed RA
  offset (`Rule(VALUE, CFA, -8, deref=True, fixed=True, padding=True)`: how
  binutils 2.47 describes DRAP functions, and how libsframe and the Linux
  kernel read it); where the default is "not saved" (AArch64: the RA is
  still in the link register), it is `SAME` with `padding`.
- `Kind.UNDEFINED`: the row has no offsets at all (version 3): the return
  address is undefined, this is the outermost frame.

A `Rule` is a named tuple, not a dataclass: `sfview unwind` imports this module (see `sfview.unwind`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

CFA = -1
"""The pseudo-register "the CFA", the base of rules for values saved on the stack."""

STACK_SLOT = 8
"""Bytes in one stack slot: every ABI SFrame describes (AMD64, AArch64, s390x) is 64-bit, and pushes
and saves registers a word at a time (the unwinder reads 8-byte words too)."""


class Kind(enum.Enum):
    VALUE = "value"
    SAME = "same"
    UNDEFINED = "undefined"


class Rule(NamedTuple):
    """How one value of the caller's frame is recovered (see the module's doc)."""

    kind: Kind
    base: int = CFA
    """A DWARF register number, or `CFA`."""
    offset: int = 0
    deref: bool = False
    """The value is the word at `base + offset`, not the sum itself."""
    fixed: bool = False
    """The offset is the header's fixed one (`cfa_fixed_ra_offset`/`cfa_fixed_fp_offset`)."""
    padding: bool = False
    """The row holds the padding word here: the rule is the value's default one (see the module's doc)."""

    @property
    def is_value(self) -> bool:
        return self.kind is Kind.VALUE

    @property
    def saved_on_stack(self) -> bool:
        """The value was saved at CFA + offset (the common case for FP and RA)."""
        return self.kind is Kind.VALUE and self.base == CFA and self.deref


def interned(limit: int) -> Callable[..., Rule]:
    """`Rule`, made once for each distinct rule among the last `limit` asked for, the same object given again.

    Rules repeat endlessly (`sp+8`, `c-16`): decoding 90,000 rows should not build 270,000 of them. The
    bound is the caller's: an SFrame section sets it from its bytes (`Section.rule`), for a cache of a
    fixed count, filled by a section whose every row has a CFA offset of its own, is many times the bytes
    of a small section.
    """
    return lru_cache(maxsize=limit)(Rule)


rule = interned(65536)
"""The rules of DWARF CFI, Breakpad records and `diff`'s shapes (an SFrame section's are `Section.rule`'s)."""


SAME = Rule(Kind.SAME)
PADDING = Rule(Kind.SAME, padding=True)
"""The padding word where the default is "not saved": the register still holds the caller's value."""


def padded(default: Rule) -> Rule:
    """The padding word in place of `default`, the rule a default row gives the value."""
    return rule(default.kind, default.base, default.offset, default.deref, default.fixed, True)


UNDEFINED = Rule(Kind.UNDEFINED)
