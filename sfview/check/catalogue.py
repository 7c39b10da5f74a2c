"""The checks `sfview check` makes: a stable id, a severity, what it is about, and where the spec says so.

Kept as data, apart from the code that runs them (`run.py`), so that the
list can be read (and tested) as a whole: one crafted section per check
triggers exactly that check.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(Enum):
    ERROR = "error"
    """A consumer (libsframe, the kernel's unwinder) rejects the section, or unwinds wrongly with it."""
    WARNING = "warning"
    """Allowed, but not what an assembler writes: most likely a mistake."""


@dataclass(frozen=True)
class Check:
    id: str
    severity: Severity
    about: str
    """What the check looks at, in a few words."""
    spec: str
    """Where the SFrame specification describes what is expected."""


_ALL = [
    Check("flags-unknown", Severity.ERROR, "flag bits the version does not define", "SFrame Preamble, Flags"),
    Check("abi-unknown", Severity.ERROR, "an ABI/arch id no version defines", "SFrame ABI/arch Identifier"),
    Check("fde-array-out-of-bounds", Severity.ERROR, "the FDE array runs past the section", "SFrame Header"),
    Check("fre-subsection-out-of-bounds", Severity.ERROR, "the FRE sub-section runs past the section", "SFrame Header"),
    Check("subsections-overlap", Severity.ERROR, "the FDE array and the FRE sub-section overlap", "SFrame Header"),
    Check("num-fres-mismatch", Severity.WARNING, "the header's FRE count is not the FDEs' total", "SFrame Header"),
    Check("trailing-bytes", Severity.WARNING, "non-zero bytes after the FRE sub-section", "SFrame Section"),
    Check("fdes-unsorted", Severity.ERROR, "FDEs not in increasing order though FDE_SORTED", "SFrame Preamble, Flags"),
    Check("functions-overlap", Severity.ERROR, "a function overlaps the next one", "SFrame FDE"),
    Check("function-size-zero", Severity.WARNING, "a function of 0 bytes", "SFrame Function Descriptor Entries"),
    Check("fde-undecodable", Severity.ERROR, "an FDE that cannot be read", "SFrame Function Descriptor Entries"),
    Check("pcmask-rep-size-zero", Severity.ERROR, "a PCMASK function without a block size", "The SFrame FDE Types"),
    Check("pauth-key-not-aarch64", Severity.WARNING, "a pointer-authentication key outside AArch64", "SFrame FDE Info"),
    Check("fre-undecodable", Severity.ERROR, "a row that cannot be read", "SFrame Frame Row Entries"),
    Check("first-row-not-at-zero", Severity.WARNING, "a function whose first row starts after it", "SFrame FRE"),
    Check("rows-not-increasing", Severity.ERROR, "row starts not strictly increasing", "SFrame Frame Row Entries"),
    Check("row-past-function", Severity.ERROR, "a row starting past its function's end", "SFrame Frame Row Entries"),
    Check("mangled-ra-not-aarch64", Severity.ERROR, "a signed return address outside AArch64", "SFrame FRE Info Word"),
    Check("offset-count-impossible", Severity.ERROR, "a row with more offsets than the ABI tracks", "SFrame FRE"),
    Check("cfa-offset-implausible", Severity.WARNING, "a negative or misaligned CFA offset", "SFrame FRE"),
]

CHECKS = {check.id: check for check in _ALL}
