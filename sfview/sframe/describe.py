"""Human names for the values an SFrame section holds, as binutils spells them.

Kept apart from the model, as pyelftools keeps `descriptions.py`: the model
holds numbers, and every view that prints one asks here for its name. The
constants themselves are the enums of `sframe.ksy` (in the generated parser);
this module only spells them the way binutils and its users do.
"""

from __future__ import annotations

from sfview.generated.sframe import Sframe

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
AARCH64_ABIS = (Sframe.AbiArch.aarch64_endian_big, Sframe.AbiArch.aarch64_endian_little)

FRE_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.FreType}
PC_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.PcType}
FDE_TYPE_NAMES = {int(t): t.name.upper() for t in Sframe.FdeType}
PAUTH_KEY_NAMES = {int(k): k.name.removeprefix("key_").upper() for k in Sframe.PauthKey}
BASE_REG_NAMES = {int(r): r.name for r in Sframe.BaseReg}
OFFSET_SIZE_BYTES = {int(s): int(s.name.removeprefix("b")) for s in Sframe.OffsetSize}


def flag_names(flags: int) -> list[str]:
    """The names of the flags set in `flags`, then any unknown bits as a number."""
    names = [name for bit, name in FLAG_NAMES if flags & bit]
    if flags & ~KNOWN_FLAGS:
        names.append(f"{flags & ~KNOWN_FLAGS:#x}")
    return names


def abi_name(abi: int) -> str:
    """`AMD64 little-endian`, or the bare number for an unknown ABI id."""
    return ABI_NAMES.get(abi, f"unknown ABI {abi}")
