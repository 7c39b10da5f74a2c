"""The checks `sfview check` makes: a stable id, a severity, what it is about, and where the rule comes from.

Kept as data, apart from the code that runs them (`run.py`), so that the
list can be read (and tested) as a whole: one crafted section per check
triggers exactly that check. These are the format's rules; what one real
consumer (the kernel's reader, each libsframe release) does with a section
is that consumer's verdict, modelled on its own code in `sfview/consumers/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(Enum):
    """How much a problem matters: wrong, most likely a mistake, or worth knowing."""

    ERROR = "error"
    """A consumer (libsframe, the kernel's unwinder) rejects the section, or unwinds wrongly with it."""
    WARNING = "warning"
    """Allowed, but not what an assembler writes: most likely a mistake."""
    INFO = "info"
    """Worth knowing, not wrong (a function no symbol names)."""


@dataclass(frozen=True)
class Check:
    """One check of the catalogue: a stable id, a severity, what it looks at, where its rule is written."""

    id: str
    severity: Severity
    about: str
    """What the check looks at, in a few words."""
    spec: str
    """Where the rule is written: a section of the SFrame specification."""


E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

_ALL = [
    # The section as a whole.
    Check("section-unreadable", E, "a preamble or header that cannot be read", "SFrame Preamble, SFrame Header"),
    Check("flags-unknown", E, "flag bits the version does not define", "SFrame Preamble, Flags"),
    Check("abi-unknown", E, "an ABI/arch id no version defines", "SFrame ABI/arch Identifier"),
    Check("auxhdr-out-of-bounds", E, "an auxiliary header running past the section", "SFrame Header"),
    Check("fde-array-out-of-bounds", E, "the FDE array runs past the section", "SFrame Header"),
    Check("fre-subsection-out-of-bounds", E, "the FRE sub-section runs past the section", "SFrame Header"),
    Check("subsections-overlap", E, "the FDE array and the FRE sub-section overlap", "SFrame Header"),
    Check("fdeoff-after-freoff", E, "the FDE array placed after the FRE sub-section", "SFrame Header"),
    Check("num-fres-mismatch", W, "the header's FRE count is not the FDEs' total", "SFrame Header"),
    Check("fre-len-unused", W, "FRE sub-section bytes that no function's rows use", "SFrame Header"),
    Check("trailing-bytes", W, "non-zero bytes after the FRE sub-section", "SFrame Section"),
    # Functions.
    Check("fdes-unsorted", E, "FDEs not in increasing order though FDE_SORTED", "SFrame Preamble, Flags"),
    Check("functions-overlap", E, "a function overlaps the next one", "SFrame FDE"),
    Check("function-size-zero", W, "a function of 0 bytes", "SFrame Function Descriptor Entries"),
    Check("fde-undecodable", E, "an FDE that cannot be read", "SFrame Function Descriptor Entries"),
    Check("fre-type-undefined", E, "an FDE whose FRE type no version defines", "The SFrame FRE Types"),
    Check("fde-type-undefined", E, "a version 3 FDE type no version defines", "SFrame FDE Info Word"),
    Check("attr-outside-fre-subsection", E, "a version 3 attribute block outside the FRE sub-section", "SFrame FDE"),
    Check("fres-outside-fre-subsection", E, "a function's rows starting outside the FRE sub-section", "SFrame FDE"),
    Check("num-fres-too-many", E, "a function claiming more rows than its bytes hold", "SFrame FDE"),
    Check("fres-overlap", W, "a function's rows overlapping another function's", "SFrame Frame Row Entries"),
    Check("pcmask-rep-size-zero", E, "a PCMASK function without a block size", "The SFrame FDE Types"),
    Check("pauth-key-not-aarch64", W, "a pointer-authentication key outside AArch64", "SFrame FDE Info Word"),
    Check("signal-bit-v1", W, "a signal-frame bit in version 1, which has none", "SFrame FDE Info Word"),
    Check("function-outside-text", E, "a function outside every executable segment", "SFrame FDE"),
    Check("function-unnamed", INFO, "a function at an address no symbol names", "SFrame FDE"),
    # Rows.
    Check("fre-undecodable", E, "a row that cannot be read", "SFrame Frame Row Entries"),
    Check("offset-size-undefined", E, "a row whose offset size no version defines", "SFrame FRE Info Word"),
    Check("first-row-not-at-zero", W, "a function whose first row starts after it", "SFrame FRE"),
    Check("rows-not-increasing", E, "row starts not strictly increasing", "SFrame Frame Row Entries"),
    Check("row-past-function", E, "a row starting past its function's end", "SFrame Frame Row Entries"),
    Check("mangled-ra-not-aarch64", E, "a signed return address outside AArch64", "SFrame FRE Info Word"),
    Check("offset-count-impossible", E, "a row with more offsets than the ABI tracks", "SFrame FRE"),
    Check("cfa-offset-implausible", W, "a negative or misaligned CFA offset", "SFrame FRE"),
    Check("flex-cfa-not-register", E, "a flexible CFA rule based on no register", "SFrame FDE Type Flexible"),
    Check("flex-reserved-bits", E, "a control word with reserved bits set", "SFrame FDE Type Flexible"),
    Check("flex-words-left-over", E, "data words past the FP's rule", "SFrame FDE Type Flexible"),
    Check("flex-register-unknown", E, "a register number the ABI does not have", "SFrame FDE Type Flexible"),
]

CHECKS = {check.id: check for check in _ALL}
