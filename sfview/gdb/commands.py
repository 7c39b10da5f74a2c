"""The `sframe` commands of gdb: `sframe info`, `sframe bt`, `sframe check`, `sframe unwinder on|off`.

Importing this module (inside gdb: `sfview gdb` prints the line that does it) registers them. Each
reads what gdb has loaded and the selected frame through `sfview.gdb.inferior`, walks or checks with
sfview's engines, and prints as `sfview unwind` and `sfview check` do. Whatever goes wrong is one line
(`gdb.GdbError`, which gdb prints without a traceback) and gdb goes on; nothing writes to the inferior.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

import gdb

from sfview import ADDRESS_MASK, quantity, rule_notation
from sfview.check.catalogue import Severity
from sfview.check.run import check_document
from sfview.document import Document
from sfview.errors import InputError
from sfview.gdb import inferior, unwinder
from sfview.inputs.numbers import fitting, quoted
from sfview.output import diagnostics
from sfview.output.backtrace import explanation, frame_line
from sfview.output.safe_text import printable
from sfview.unwind.engine import Backtrace, Frame, RuleSource, Unwinder, Walk, in_stub


def _one_line(invoke: Callable[[gdb.Command, str, bool], None]) -> Callable[[gdb.Command, str, bool], None]:
    """A command's `invoke` whose every failure is one line from gdb (`sframe: …`), never a traceback."""

    def guarded(self: gdb.Command, arg: str, from_tty: bool) -> None:
        try:
            invoke(self, arg, from_tty)
        except gdb.GdbError:
            raise
        except (InputError, inferior.NoSframe) as exc:
            raise gdb.GdbError(f"sframe: {exc}") from None
        except gdb.error as exc:
            raise gdb.GdbError(f"sframe: {exc}") from None
        except Exception as exc:  # a bug of ours: one line, and gdb goes on
            raise gdb.GdbError(f"sframe: internal error: {type(exc).__name__}: {exc}") from None

    return guarded


def _write(lines: Iterable[str]) -> None:
    """Each line to gdb's output, no byte of the input reaching the terminal as a control sequence."""
    for line in lines:
        gdb.write(printable(line) + "\n")


class Sframe(gdb.Command):
    """SFrame stack-trace data at the live PC (sfview): `sframe info`, `sframe bt`, `sframe check`,
    `sframe unwinder on|off`."""

    def __init__(self) -> None:
        super().__init__("sframe", gdb.COMMAND_STACK, gdb.COMPLETE_COMMAND, prefix=True)


def _start(walker: Unwinder) -> Frame:
    """The selected frame as the first frame of a walk: its PC, its registers as gdb has them."""
    selected = gdb.selected_frame()
    registers = inferior.registers(selected.read_register, walker.machine)
    return Frame(selected.level(), selected.pc(), registers)


class SframeInfo(gdb.Command):
    """What SFrame says at ADDR (default: the selected frame's PC): the FDE, the row, the CFA, FP and RA
    rules, and at the frame's own PC the arithmetic with its registers and the caller it gives.

    Usage: sframe info [ADDR]"""

    def __init__(self) -> None:
        super().__init__("sframe info", gdb.COMMAND_STACK, gdb.COMPLETE_EXPRESSION)

    @_one_line
    def invoke(self, arg: str, from_tty: bool) -> None:
        address = _address(arg) if arg.strip() else None  # the argument first, whatever gdb has loaded
        if address is None:
            inferior.require_inferior()
        walker, _ = inferior.unwinder(RuleSource.SFRAME)
        frame = _start(walker) if inferior.has_frames() else None
        if address is not None and (frame is None or address != frame.pc):  # the rules there, no registers
            _write(info_lines(walker, Frame(0, address, {}), live=False))
            return
        assert frame is not None
        _write(info_lines(walker, frame, live=True))


def _address(arg: str) -> int:
    """The address `sframe info ADDR` asks about: gdb's value of the expression (a function's start for a
    function), refused as the command line refuses a number that fits no machine word (negative, past
    64 bits)."""
    value = gdb.parse_and_eval(arg)
    if value.type.code == gdb.TYPE_CODE_FUNC:  # `sframe info leaf`: where the function starts
        value = value.address
    if value is None:
        raise gdb.GdbError(f"sframe info: {arg.strip()} has no address")
    address = fitting(arg.strip(), int(value), "address")
    if isinstance(address, str):
        raise gdb.GdbError(f"sframe info: {address}")
    return address


def info_lines(walker: Unwinder, frame: Frame, live: bool) -> list[str]:
    """`sframe info`'s lines for `frame`: its FDE and row, their rules, and (`live`: the frame's own
    registers) the arithmetic and the caller they give."""
    step = walker.step(frame)
    module, row = frame.module, frame.row
    lines = [f"{frame.pc:#x} in {frame.name() or '??'}" + (f" ({module.name})" if module else "")]
    found = explanation(frame)
    lines.extend(found if live else found[: len(found) - len(frame.computations)])
    if row is not None and module is not None and module.section is not None:
        section = module.section
        rules = (rule_notation.cfa_text(section, row.cfa), rule_notation.saved_text(section, row.fp),
                 rule_notation.saved_text(section, row.ra))  # fmt: skip
        lines.insert(3, "      rules: CFA {}, FP {}, RA {}".format(*rules))  # after the FDE's and the row's lines
    if frame.function is None and not live:
        lacking = f" (in {module.name}, which has no SFrame data)" if module and module.section is None else ""
        lines.append(f"      no FDE covers {frame.pc:#x}{lacking}")
    if live and step.caller is not None:
        caller, sp = step.caller, walker.machine.sp
        name = walker.name_at(caller.pc, caller.pc - 1) or "??"
        at = f", {walker.machine.name(sp)} {caller.registers[sp]:#x}" if sp in caller.registers else ""
        lines.append(f"caller: {caller.pc:#x} in {name}{at}")
    elif live:
        lines.append(f"no caller: {step.stop}")
    return lines


class SframeBacktrace(gdb.Command):
    """The backtrace SFrame alone gives from the selected frame, as the kernel's unwinder would walk it
    (the frame-pointer chain where no FDE covers a PC), beside gdb's own frames: where they part, and why.

    Usage: sframe bt [N]   (at most N frames)"""

    def __init__(self) -> None:
        super().__init__("sframe bt", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    @_one_line
    def invoke(self, arg: str, from_tty: bool) -> None:
        limit = None
        if arg.strip():
            try:
                limit = int(arg.strip(), 0)
            except ValueError:
                raise gdb.GdbError(f"sframe bt: {quoted(arg.strip())} is not a number of frames") from None
            if limit < 1:
                raise gdb.GdbError("sframe bt: needs at least 1 frame")
        inferior.require_inferior()
        walker, _ = inferior.unwinder(RuleSource.SFRAME)
        first = _start(walker)
        # one frame past the limit, so that the last one shown has been stepped (its module, its name)
        walk = Walk(walker, first, None if limit is None else first.number + limit + 1)
        frames, cut = [], False
        for frame in walk:
            if limit is not None and len(frames) == limit:
                walk.stop, cut = f"stopped after {quantity(limit, 'frame')} (the limit asked for)", True
                break
            mark = f"  [{frame.heuristic}]" if frame.fallback else ""
            _write([frame_line(frame) + mark])
            frames.append(frame)
        _write([f"stopped: {walk.stop}"])
        beside = beside_gdb(walker, Backtrace(frames, walk.stop), gdb.selected_frame(), cut)
        # with the unwinder on, gdb's frames are SFrame's where an FDE covers the PC: said, lest they be
        # taken for gdb's own
        _write([f"{beside} (gdb unwinds with `sframe unwinder on`)" if unwinder.enabled() else beside])


def _gdb_frames(selected: gdb.Frame, count: int) -> list[gdb.Frame]:
    """gdb's own frames from the selected one, at most `count`; not the frames gdb makes for functions
    inlined into another (each has the PC and SP of the frame it is inlined in, which holds it: a stack
    walk sees that one only)."""
    frames, frame = [], selected
    while frame is not None and len(frames) < count:
        if frame.type() != gdb.INLINE_FRAME:
            frames.append(frame)
        try:
            frame = frame.older()
        except gdb.error:
            break
    return frames


def _gdb_line(frame: gdb.Frame) -> str:
    """A frame as gdb's `bt` names it: `#6  0x… in main ()`, `from LIB` for a shared library's."""
    if frame.type() == gdb.SIGTRAMP_FRAME:
        return f"#{frame.level():<2} <signal handler called>"
    library = gdb.solib_name(frame.pc())
    where = f" from {library}" if library else ""
    return f"#{frame.level():<2} {frame.pc():#018x} in {frame.name() or '??'} (){where}"


def beside_gdb(walker: Unwinder, ours: Backtrace, selected: gdb.Frame, limited: bool) -> str:
    """Where SFrame's walk and gdb's frames part (the first frame whose PC or SP differ), and why: the
    step before it had no SFrame data (which library), went through a PLT, or took a row that differs
    from the DWARF CFI gdb follows; or one walk ended first. `limited`: the walk was cut at the frames
    asked for (gdb's going on is no parting)."""
    m = walker.machine
    sp_name = m.name(m.sp)
    theirs = _gdb_frames(selected, len(ours.frames) + 1)
    for index, frame in enumerate(ours.frames):
        if index >= len(theirs):
            past = " (`set backtrace past-main on` to go on)" if theirs[-1].name() == "main" else ""
            return (
                f"gdb: the same {quantity(index, 'frame')}; gdb's backtrace ends at {_gdb_line(theirs[-1])}{past},"
                f" SFrame's goes on to #{ours.frames[-1].number}"
            )
        gdb_frame = theirs[index]
        try:
            gdb_sp = int(gdb_frame.read_register(sp_name)) & ADDRESS_MASK
        except gdb.error:
            gdb_sp = None
        if frame.pc != gdb_frame.pc() or (gdb_sp is not None and frame.registers.get(m.sp) != gdb_sp):
            if index == 0:
                return f"gdb: parts at #{frame.number}: gdb's frame is {_gdb_line(gdb_frame)}"
            why = _why_parted(walker, ours.frames[index - 1], frame, gdb_frame)
            parted = f"they part at #{frame.number}: gdb has {_gdb_line(gdb_frame)}"
            return f"gdb: the same {quantity(index, 'frame')}; {parted}: {why}"
    if len(theirs) > len(ours.frames) and not limited:
        beyond = theirs[len(ours.frames)]
        why = _why_parted(walker, ours.frames[-1], None, beyond)
        return (
            f"gdb: the same {quantity(len(ours.frames), 'frame')}; gdb goes on to {_gdb_line(beyond)}"
            f" where SFrame stopped ({ours.stop}): {why}"
        )
    return f"gdb: the same {quantity(len(ours.frames), 'frame')}, with the same PC and SP"


def _why_parted(walker: Unwinder, callee: Frame, found: Frame | None, gdb_caller: gdb.Frame) -> str:
    """Why SFrame found another caller of `callee` (`found`, or None when the walk stopped there) than gdb."""
    module = callee.module
    name = callee.name() or f"{callee.pc:#x}"
    if in_stub(name):
        return f"{name} is a PLT stub"
    if callee.function is None:
        if module is None:
            where = f"no file gdb loaded holds {callee.lookup_pc:#x}"
        elif module.section is None:
            where = f"{module.name} has no SFrame data"
        else:
            where = f"no FDE of {module.name} covers {callee.lookup_pc:#x}"
        guess = f", and the SFrame walk went on by the {callee.heuristic}" if callee.fallback else ""
        return f"{where} ({name}){guess}"
    ours = f"caller pc {found.pc:#x}" if found is not None else "no caller"
    table = module.cfi() if module is not None and module.cfi is not None else None
    if table is None or table.find((callee.lookup_pc - module.bias) & ADDRESS_MASK) is None:
        return (
            f"no DWARF CFI of {module.name if module else 'any file'} covers {name}, SFrame's row does "
            f"({ours}): gdb, which does not read SFrame, guessed"
        )
    dwarf = Frame(callee.number, callee.pc, dict(callee.registers))
    step = walker.following(RuleSource.DWARF).step(dwarf)
    if step.caller is not None and step.caller.pc == gdb_caller.pc():
        rules = f"fdes[{callee.function.index}] FRE {callee.row.index if callee.row else '?'}"
        return (
            f"SFrame's row for {name} ({rules}) differs from its DWARF CFI, which gdb follows "
            f"(SFrame: {ours}; DWARF: caller pc {step.caller.pc:#x})"
        )
    return f"gdb found the caller of {name} by its own means (not the DWARF CFI sfview reads)"


class SframeCheck(gdb.Command):
    """`sfview check` on every file gdb has loaded: one line each (clean, or its problems counted and
    the first as `sfview check` words it, or why it has no SFrame data).

    Usage: sframe check"""

    def __init__(self) -> None:
        super().__init__("sframe check", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    @_one_line
    def invoke(self, arg: str, from_tty: bool) -> None:
        mapped = inferior.OBJFILES.mapped()
        for path, why in inferior.OBJFILES.unreadable.items():
            _write([why if why.startswith(path) else f"{path}: {why}"])
        if not mapped:
            _write(["sframe: gdb has loaded no file (give gdb a program or a core)"])
        for found in mapped:
            _write([check_line(found.path)])


def check_line(path: str) -> str:
    """One file's line: `PATH: clean (N FDEs)`, `PATH: 2 errors, 1 warning; the first: …`, or why not."""
    try:
        doc = Document.open(path)
    except InputError as exc:
        return str(exc)
    found = list(check_document(doc))
    counts = {s: sum(1 for d in found if d.severity is s) for s in Severity}
    problems = [f"{n} {s.value}{'s' if n > 1 else ''}" for s, n in counts.items() if n]
    if not problems:
        return f"{path}: clean ({len(doc.section)} FDEs)"
    first = next((d for d in found if d.severity is not Severity.INFO), found[0] if found else None)
    said = f"; the first: {diagnostics.line(doc, first).removeprefix(path + ': ')}" if first is not None else ""
    more = f" (sfview check {os.path.basename(path)}: all of them)" if len(found) > 1 else ""
    return f"{path}: {', '.join(problems)}{said}{more}"


SWITCH = {"on": True, "off": False}
"""`sframe unwinder`'s argument: whether gdb asks the SFrame unwinder."""


class SframeUnwinderCommand(gdb.Command):
    """Unwind with SFrame inside gdb: `on` registers an unwinder that gives the caller of every frame an
    SFrame FDE covers (in the files that have `.sframe`), before gdb's own; `off` removes it. A frame it
    cannot unwind, for any reason, it leaves to gdb's unwinders.

    Usage: sframe unwinder on|off"""

    def __init__(self) -> None:
        super().__init__("sframe unwinder", gdb.COMMAND_STACK)

    def complete(self, text: str, word: str) -> list[str]:
        """`on` and `off`, as typed so far."""
        return [choice for choice in SWITCH if choice.startswith(word or "")]

    @_one_line
    def invoke(self, arg: str, from_tty: bool) -> None:
        on = SWITCH.get(arg.strip())
        if on is None:
            raise gdb.GdbError("sframe unwinder: say on or off")
        unwinder.enable(on)
        gdb.write(f"sframe unwinder: {arg.strip()}\n")


Sframe()
SframeInfo()
SframeBacktrace()
SframeCheck()
SframeUnwinderCommand()
