"""Signal frames: how an unwinder gets from a signal handler back to the code the signal interrupted.

A handler returns into a small trampoline (glibc's `__restore_rt` on x86-64,
the vDSO's `__kernel_rt_sigreturn` or qemu-user's copy of it on AArch64) that
calls `rt_sigreturn`. Nothing in SFrame describes it (glibc gives it no SFrame
FDE, and its DWARF CFI is an expression), so unwinders recognise it by its
instructions, as gdb does, and take the interrupted registers from the signal
frame the kernel wrote at the trampoline's SP. The interrupted frame's PC is
the instruction the signal stopped, not a return address: it is looked up as
it is, not at PC - 1.

These are facts of the Linux ABI, not of the SFrame format: the layouts are
the kernel's (`arch/x86/include/uapi/asm/sigcontext.h` and `ucontext.h`;
`arch/arm64/include/uapi/asm/sigcontext.h` and `arch/arm64/kernel/signal.c`,
whose `struct rt_sigframe` qemu-user copies; `arch/s390/kernel/signal.c`, whose
`sigframe` and `rt_sigframe` qemu-user copies too).
"""

from __future__ import annotations

from typing import NamedTuple

from sfview.generated.sframe import Sframe

PC = -1
"""Where the interrupted PC is saved (it has no DWARF register number on AArch64)."""


class Trampoline(NamedTuple):
    """One architecture's sigreturn trampoline and its signal frame (a named tuple, not a dataclass:
    see `sfview.unwind`)."""

    code: bytes
    """The trampoline's instructions, from its first byte."""
    starts: tuple[int, ...]
    """The offset of each of its instructions: a thread can be stopped at any of them."""
    saved: dict[int, int]
    """Register (DWARF number, or `PC`) → offset from the trampoline's SP of the word saving it."""


# x86-64: the handler's `ret` popped `pretcode`, so SP points at the `struct ucontext`:
# uc_flags (8), uc_link (8), uc_stack (24), then `struct sigcontext`, whose first 8-byte
# words are r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
_X86_SIGCONTEXT = 40
_X86_ORDER = ("r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx")
X86_64 = Trampoline(
    code=bytes.fromhex("48c7c00f0000000f05"),  # mov $15 (rt_sigreturn), %rax; syscall
    starts=(0, 7),
    saved={
        **{int(Sframe.Amd64Reg[name]): _X86_SIGCONTEXT + i * 8 for i, name in enumerate(_X86_ORDER)},
        int(Sframe.Amd64Reg.rsp): _X86_SIGCONTEXT + 15 * 8,
        PC: _X86_SIGCONTEXT + 16 * 8,
    },
)

# AArch64: SP points at `struct rt_sigframe`: siginfo (128 bytes), then `struct ucontext`:
# uc_flags (8), uc_link (8), uc_stack (24), uc_sigmask with its padding (128), then
# `struct sigcontext` aligned to 16 (at 128 + 176 = 304): fault_address, regs[31], sp, pc.
_ARM_REGS = 304 + 8
AARCH64 = Trampoline(
    code=bytes.fromhex("681180d2010000d4"),  # mov x8, #139 (rt_sigreturn); svc #0
    starts=(0, 4),
    saved={
        **{int(Sframe.Aarch64Reg[f"x{n}"]): _ARM_REGS + n * 8 for n in range(31)},
        int(Sframe.Aarch64Reg.sp): _ARM_REGS + 31 * 8,
        PC: _ARM_REGS + 32 * 8,
    },
)


# s390x: the handler returns through r14 to `svc 119` (sigreturn: a handler without SA_SIGINFO) or
# `svc 173` (rt_sigreturn), on the kernel's (or qemu-user's) trampoline page. SP points at the frame:
# the 160 bytes the callee may use, then for sigreturn `struct sigcontext` (oldmask 8, the pointer to
# the registers 8) and `_sigregs` right after it (at 176); for rt_sigreturn the svc halfword padded to
# 8, siginfo (128), then `struct ucontext`: uc_flags (8), uc_link (8), uc_stack (24), `_sigregs` (at
# 336). `_sigregs` starts with the PSW (mask, then the address: the interrupted PC), then r0..r15.
def _s390x(sigregs: int, code: str) -> Trampoline:
    gprs = sigregs + 16
    return Trampoline(
        code=bytes.fromhex(code),
        starts=(0,),
        saved={
            int(Sframe.S390xReg.r11): gprs + 11 * 8,
            int(Sframe.S390xReg.r14): gprs + 14 * 8,
            int(Sframe.S390xReg.r15): gprs + 15 * 8,
            PC: sigregs + 8,
        },
    )


S390X_SIGRETURN = _s390x(176, "0a77")  # svc 119
S390X_RT_SIGRETURN = _s390x(336, "0aad")  # svc 173


def trampolines(abi: int) -> tuple[Trampoline, ...]:
    """The sigreturn trampolines of the ABI's Linux (the section's `abi_arch`)."""
    if abi == Sframe.AbiArch.s390x_endian_big:
        return S390X_SIGRETURN, S390X_RT_SIGRETURN
    if abi in (Sframe.AbiArch.aarch64_endian_little, Sframe.AbiArch.aarch64_endian_big):
        return (AARCH64,)
    return (X86_64,)
