"""Human names for the values an SFrame section holds, as binutils spells them.

Kept apart from the model, as pyelftools keeps `descriptions.py`: the model
holds numbers, and every view that prints one asks here for its name.
"""

from __future__ import annotations

FLAG_NAMES: tuple[tuple[int, str], ...] = (
    (0x1, "SFRAME_F_FDE_SORTED"),
    (0x2, "SFRAME_F_FRAME_POINTER"),
    (0x4, "SFRAME_F_FDE_FUNC_START_PCREL"),
)
KNOWN_FLAGS = 0x7

VERSION_NAMES = {1: "SFRAME_VERSION_1", 2: "SFRAME_VERSION_2", 3: "SFRAME_VERSION_3"}

ABI_NAMES = {
    1: "AArch64 big-endian",
    2: "AArch64 little-endian",
    3: "AMD64 little-endian",
    4: "s390x big-endian",
}
ABI_CONSTANTS = {
    1: "SFRAME_ABI_AARCH64_ENDIAN_BIG",
    2: "SFRAME_ABI_AARCH64_ENDIAN_LITTLE",
    3: "SFRAME_ABI_AMD64_ENDIAN_LITTLE",
    4: "SFRAME_ABI_S390X_ENDIAN_BIG",
}
AARCH64_ABIS = (1, 2)

FRE_TYPE_NAMES = {0: "ADDR1", 1: "ADDR2", 2: "ADDR4"}
PC_TYPE_NAMES = {0: "PCINC", 1: "PCMASK"}
FDE_TYPE_NAMES = {0: "DEFAULT", 1: "FLEXIBLE"}
PAUTH_KEY_NAMES = {0: "A", 1: "B"}
BASE_REG_NAMES = {0: "fp", 1: "sp"}
OFFSET_SIZE_BYTES = {0: 1, 1: 2, 2: 4}


def flag_names(flags: int) -> list[str]:
    """The names of the flags set in `flags`, then any unknown bits as a number."""
    names = [name for bit, name in FLAG_NAMES if flags & bit]
    if flags & ~KNOWN_FLAGS:
        names.append(f"{flags & ~KNOWN_FLAGS:#x}")
    return names


def version_name(version: int) -> str:
    """`SFRAME_VERSION_2`, or the bare number for a version binutils doesn't know."""
    return VERSION_NAMES.get(version, f"version {version}")


def abi_name(abi: int) -> str:
    """`AMD64 little-endian`, or the bare number for an unknown ABI id."""
    return ABI_NAMES.get(abi, f"unknown ABI {abi}")
