"""The format's own terms: binutils' names for flags, versions, ABIs and record types, DWARF registers per ABI.

Facts of the format, not notation: the names come from the enums of
`sframe.ksy` (in the generated parser), spelled as binutils' `sframe.h` and
readelf spell them, and every view (the dump, JSON, check, the app, the
unwinder) asks here for them. How rules are written as text is the views'
business (`sfview.rule_notation`, `sfview.output.readelf`,
`sfview.app.notation`).
"""

from __future__ import annotations

import enum

from sfview.generated.sframe import Sframe
from sfview.sframe.model.rules import CFA

FLAG_NAMES: tuple[tuple[int, str], ...] = tuple((int(f), f"SFRAME_F_{f.name.upper()}") for f in Sframe.Flag)
"""Each flag bit with its binutils name, in bit order (the order binutils prints them)."""
KNOWN_FLAGS = sum(bit for bit, _ in FLAG_NAMES)
VERSION_NAMES = {int(v): f"SFRAME_VERSION_{int(v)}" for v in Sframe.Version}
ABI_NAMES = {
    Sframe.AbiArch.aarch64_endian_big: "AArch64 big-endian",
    Sframe.AbiArch.aarch64_endian_little: "AArch64 little-endian",
    Sframe.AbiArch.amd64_endian_little: "AMD64 little-endian",
    Sframe.AbiArch.s390x_endian_big: "s390x big-endian",
}
FRE_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.FreType}
PC_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.PcType}
FDE_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.FdeType}
PAUTH_KEY_NAMES = {int(k): k.name.removeprefix("key_").upper() for k in Sframe.PauthKey}
BASE_REG_NAMES = {int(r): r.name for r in Sframe.BaseReg}


_REGISTERS = {
    Sframe.AbiArch.amd64_endian_little: Sframe.Amd64Reg,
    Sframe.AbiArch.aarch64_endian_big: Sframe.Aarch64Reg,
    Sframe.AbiArch.aarch64_endian_little: Sframe.Aarch64Reg,
    Sframe.AbiArch.s390x_endian_big: Sframe.S390xReg,
}
_REGISTER_NUMBERS = {abi: frozenset(map(int, names)) for abi, names in _REGISTERS.items()}
"""Each ABI's DWARF register numbers, made once: a check asks for every control word of every row."""


def flag_names(flags: int) -> list[str]:
    """The names of the flags set in `flags`, then any unknown bits as a number."""
    names = [name for bit, name in FLAG_NAMES if flags & bit]
    if flags & ~KNOWN_FLAGS:
        names.append(f"{flags & ~KNOWN_FLAGS:#x}")
    return names


def abi_name(abi: int) -> str:
    """`AMD64 little-endian`, or the bare number for an unknown ABI id."""
    return ABI_NAMES.get(abi, f"unknown ABI {abi}")


def registers(abi: int) -> list[enum.IntEnum]:
    """The ABI's DWARF registers, as `sframe.ksy`'s register enum for it lists them (none for an unknown ABI)."""
    names = _REGISTERS.get(abi)
    return list(names) if names is not None else []


def has_register(abi: int, regnum: int) -> bool:
    """Whether the ABI's DWARF register numbering has `regnum` (as `sframe.ksy`'s register enums list them)."""
    return regnum in _REGISTER_NUMBERS.get(abi, ())


def register_name(abi: int, regnum: int) -> str:
    """The ABI's name for a DWARF register (`rsp`, `x29`, `sp`), `r<N>` when it has none."""
    if regnum == CFA:
        return "CFA"
    names = _REGISTERS.get(abi)
    try:
        return names(regnum).name if names is not None else f"r{regnum}"
    except ValueError:
        return f"r{regnum}"
