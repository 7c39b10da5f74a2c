"""The machine state an unwind starts from, as `unwind` and the explorer's arguments give it.

From `--core` (a thread of a core file), from `--pid` (a running process,
for the debugger a snapshot of it), or from `--regs` and `--mem` typed by
the numbers rule, names of the program allowed (`pc=main+0x34`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.core import Core, parse_registers, read_core
from sfview.output.backtrace import thread_title
from sfview.unwind import session
from sfview.unwind.session import Session

if TYPE_CHECKING:
    from sfview.app.screens.debugger import Threads
    from sfview.inputs.gdbstub import GuestProcess
    from sfview.inputs.live import LiveProcess


def started(program: str, args: argparse.Namespace) -> Session:
    """The unwind the arguments ask for: from `--core`, or from `--regs` and `--mem`."""
    try:
        if args.core is not None:
            return session.from_core(program, read_core(args.core), args.thread, args.lib_dir, args.sysroot)
        from sfview.inputs.numbers import evaluate, machine_word, quoted  # typed registers and words, not a core

        symbols = _symbol_addresses(program, args.bias)
        registers = {name: machine_word(v, f"--regs {name}") for name, v in parse_registers(args.regs, symbols).items()}
        words = {}
        for item in args.mem:
            address, sep, value = item.partition("=")
            at = evaluate(address, lambda name: registers.get(name.lower(), symbols(name)))
            word = evaluate(value, symbols)
            if not (sep and isinstance(at, int) and isinstance(word, int)):
                why = next((f": {v}" for v in (at, word) if isinstance(v, str)), "")
                raise InputError(
                    f"--mem: {quoted(item)} is not ADDRESS=VALUE (0x7ffc1000=0x401136, sp+8=main+0x34){why}"
                )
            words[machine_word(at, f"--mem {quoted(item)}")] = machine_word(word, f"--mem {quoted(item)}")
        return session.from_registers(program, registers, words, args.bias)
    except InputError as exc:
        raise of_program(exc, program) from None


def for_debugger(program: str, args: argparse.Namespace) -> tuple[Session, Threads | None]:
    """The state the explorer's debugger opens on, and a core's threads for its list (`t`): with
    `--thread all`, the debugger starts on the first."""
    if args.core is None:
        return started(program, args), None
    core = read_core(args.core)
    thread = None if args.thread == "all" else args.thread
    try:
        first = session.from_core(program, core, thread, args.lib_dir, args.sysroot)
    except InputError as exc:
        raise of_program(exc, program) from None
    return first, debugger_threads(program, core, args.lib_dir, args.sysroot)


def debugger_threads(program: str, core: Core, lib_dirs: list[str], sysroot: str | None) -> Threads | None:
    """A core's threads for the debugger's list (`t`), when it has more than one."""
    if len(core.threads) < 2:
        return None
    from sfview.app.screens.debugger import Threads  # the debugger's own type: only the explorer asks

    numbers = {t.tid: n for n, t in enumerate(core.threads, 1)}  # gdb's: an LWP may be another's number
    return Threads(
        [
            (thread_title(n, t.tid, t.registers), t.tid, t.registers[core.pc_name])
            for n, t in enumerate(core.threads, 1)
        ],
        lambda tid: session.from_core(program, core, numbers[tid], lib_dirs, sysroot),
    )


SNAPSHOT_FRAMES = 10_000
"""The most frames of each thread walked for the debugger's snapshot of a live process."""


def process_program(given: str | None, process: LiveProcess) -> str:
    """The program of a live process: the file given, which must be the one it runs, else its own (not
    qemu-user's: ptrace reads the emulator's own threads, not its guest's)."""
    if given is None:
        if os.path.basename(process.program).startswith("qemu-"):
            raise InputError(
                f"process {process.pid} runs {process.program}, an emulator: ptrace reads the emulator's stacks, not"
                " its guest's (run the guest with -g PORT and read it with --gdbstub PORT)"
            )
        return process.program
    if not process.runs(given):
        raise InputError(f"process {process.pid} runs {process.program}, not this file", path=given)
    return given


def guest_program(given: str | None, guest: GuestProcess) -> str:
    """The program of a guest behind a gdbstub: the file given (the unwind checks that its bytes are the
    guest's), else the one the stub names."""
    if given is not None:
        return given
    if guest.program is None:
        raise InputError(
            f"{guest.path} does not name its program (the stub serves no qXfer:exec-file): give the program"
        )
    return guest.program


def _break_address(program: str, guest: GuestProcess, where: str) -> int:
    """`--break WHERE` as an address of the guest: the program's names at its load bias (from `AT_ENTRY`)."""
    from sfview.inputs.core import AT_ENTRY
    from sfview.inputs.numbers import evaluate, machine_word, quoted

    elf = Document.open(program).image
    if elf is None or AT_ENTRY not in guest.auxv:
        raise InputError(f"--break: {guest.path} gives no entry point (AT_ENTRY) to place the program's names by")
    at = evaluate(where, _symbol_addresses(program, guest.auxv[AT_ENTRY] - elf.entry))
    if not isinstance(at, int):
        raise InputError(
            f"--break: {quoted(where)} is no address of the program{f': {at}' if isinstance(at, str) else ''}"
        )
    return machine_word(at, f"--break {quoted(where)}")


@contextlib.contextmanager
def stopped(given: str | None, args: argparse.Namespace) -> Iterator[tuple[str, Core]]:
    """`--pid` or `--gdbstub`: the process (or guest) stopped while the block runs, then let go, and its
    program; with `--break`, the guest first run to where it says."""
    if args.break_at is not None and args.gdbstub is None:
        raise InputError("--break needs --gdbstub: a process read with --pid is read where it is")
    if args.gdbstub is not None:
        from sfview.inputs import gdbstub  # the remote protocol, only for a guest

        with gdbstub.attached(args.gdbstub) as guest:
            program = guest_program(given, guest)
            if args.break_at is not None:
                guest.run_to(_break_address(program, guest, args.break_at))
            yield program, guest
        return
    from sfview.inputs import live  # ptrace, only for a live process

    with live.stopped(args.pid) as process:
        yield process_program(given, process), process


def process_snapshot(given: str | None, args: argparse.Namespace) -> tuple[str, Session, Threads | None]:
    """`--pid` or `--gdbstub` for the debugger: the process stopped, each thread walked both ways (SFrame and
    DWARF CFI, at most `SNAPSHOT_FRAMES` frames) so that the memory they read is kept, then let go at once. The
    debugger steps through that snapshot while the process runs on: a person takes minutes, a process must
    not wait for them. Gives the program, the session and the threads for the list (`t`)."""
    import time

    from sfview.unwind.engine import RuleSource

    with stopped(given, args) as (program, process):
        try:
            first = session.from_core(program, process, None, args.lib_dir, args.sysroot)
            for thread in process.threads:
                begun = session.of_thread(first, process, thread)
                for source in RuleSource:
                    for _ in begun.unwinder.following(source).frames(begun.pc, begun.registers, SNAPSHOT_FRAMES):
                        pass
            chosen = session.for_thread(first, process, None if args.thread == "all" else args.thread)
        except InputError as exc:
            raise of_program(exc, program) from None
        taken = time.strftime("%H:%M:%S")
    chosen.origin = (
        f"a snapshot of {process.path}, taken at {taken} and let go at once: it runs on. Memory the walks"
        " did not read is not known (m gives a word)."
    )
    return program, chosen, _process_threads(first, process)


def _process_threads(first: Session, process: Core) -> Threads | None:
    """A live process's threads for the debugger's list (`t`), when it has more than one, each walked in
    the snapshot already taken."""
    if len(process.threads) < 2:
        return None
    from sfview.app.screens.debugger import Threads  # the debugger's own type: only the explorer asks

    states = {t.tid: t for t in process.threads}
    return Threads(
        [
            (thread_title(n, t.tid, t.registers, t.name), t.tid, t.registers[process.pc_name])
            for n, t in enumerate(process.threads, 1)
        ],
        lambda tid: session.of_thread(first, process, states[tid]),
    )


def of_program(exc: InputError, program: str) -> InputError:
    """An unwind's error that names no file, named as the program's (what the core or an option
    says is already named so): `--thread all` and one thread alike."""
    return exc if exc.path is not None or exc.message.startswith("--") else exc.located(program)


def _symbol_addresses(program: str, bias: int) -> Callable[[str], int | None]:
    """A name of the program → its address where it is loaded (`bias` past its link address), for
    `--regs pc=main+0x34` and `--mem`."""
    symbols = Document.open(program).symbols

    def address(name: str) -> int | None:
        symbol = symbols.named(name)
        return symbol.address + bias if symbol is not None else None

    return address
