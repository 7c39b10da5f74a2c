"""`sfview unwind`: a backtrace as gdb prints one, with the arithmetic on request, or as JSON."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple, TextIO

from sfview import ADDRESS_MASK, quantity
from sfview.dwarf.tail_calls import tail_call_pcs
from sfview.inputs.demangle import demangle
from sfview.output.safe_text import printable_lines
from sfview.unwind.call_sites import ProcessCallSites
from sfview.unwind.engine import Backtrace, Frame, Machine, Walk

if TYPE_CHECKING:
    from sfview.dwarf.source import SourceFrame

Trace = Backtrace | Walk
"""The frames of a walk, and why it stopped once they have all been given: a list, or found as they are printed."""


def _function(frame: Frame) -> str:
    """The function's name as gdb gives it (`leaf`, without the offset, demangled), `??` when no symbol
    names it (only the code section holding it: `.text+0x1f0`, which gdb does not print either)."""
    name = symbol_and_offset(frame.name())[0]
    return "??" if not name or name.startswith(".") else demangle(name)


def symbol_and_offset(name: str) -> tuple[str, int]:
    """`leaf+0x11` as `("leaf", 0x11)`, `leaf` as `("leaf", 0)`: what `Frame.name` joins, apart again."""
    symbol, plus, offset = name.rpartition("+0x")
    if plus and offset and all(c in "0123456789abcdef" for c in offset):
        return symbol, int(offset, 16)
    return name, 0


SIGNAL_FRAME = "<signal handler called>"
"""gdb's line for a sigreturn trampoline, in place of a function and its arguments."""


class GdbLine(NamedTuple):
    """One line of gdb's `bt`, in its parts: `#1  0x0000555555555181 in step () at inline.c:11`."""

    number: int
    """gdb's frame number: each inlined function counts as a frame of its own."""
    address: int | None
    """The frame's PC, where gdb prints it: None on an inlined function's line below the first, on a
    frame 0 at the start of a source line, on a signal frame."""
    function: str
    """The name as gdb prints it (demangled; `??` where nothing names the PC), or `SIGNAL_FRAME`."""
    where: str
    """`at FILE:LINE`, `from LIBRARY`, or ""."""
    inlined: bool = False
    """A function inlined into the frame's code: the lines below it in the same physical frame hold it."""
    tail: bool = False
    """A frame gdb puts back where a function's caller reached it through tail calls (`tail_call_lines`)."""

    @property
    def text(self) -> str:
        if self.function == SIGNAL_FRAME:
            return f"#{self.number:<2} {SIGNAL_FRAME}"
        address = "" if self.address is None else f"{self.address:#018x} in "
        where = f" {self.where}" if self.where else ""
        return f"#{self.number:<2} {address}{self.function} (){where}"


def frame_line(frame: Frame, number: int | None = None) -> str:
    """`#1  0x0000555555555181 in leaf ()`; a sigreturn trampoline as gdb shows it, `#2  <signal handler called>`
    (numbered `number`, else the frame's own number)."""
    return _symbol_line(frame, frame.number if number is None else number).text


def _symbol_line(frame: Frame, number: int) -> GdbLine:
    """The frame named by its module's symbols, as gdb names it without debug information."""
    if frame.signal:
        return GdbLine(number, None, SIGNAL_FRAME, "")
    where = f"from {frame.module.library}" if frame.module and frame.module.library else ""
    return GdbLine(number, frame.pc, _function(frame), where)


def gdb_lines(frame: Frame, number: int, *, inline: bool = True) -> list[GdbLine]:
    """The frame as gdb prints it, numbered from `number`: where its module's debug information names the
    PC, a line for each function inlined there (innermost first, the first with the frame's address, the
    others without, as gdb numbers and prints them), then the physical function, each `at FILE:LINE`,
    the name as DWARF gives it (`__GI___libc_malloc`); `inline` False: the physical function alone. gdb
    leaves the address out where the PC looked up is the PC and a line starts there. Without debug
    information, the one line the symbols give (`frame_line`)."""
    chain, starts = ([], False) if frame.signal else frame.source()
    if not chain:
        return [_symbol_line(frame, number)]
    if not inline:
        chain = chain[-1:]
    lines = []
    for count, source in enumerate(chain):
        shown = count == 0 and not (starts and frame.lookup_pc == frame.pc)
        lines.append(GdbLine(number + count, frame.pc if shown else None, demangle(source.function),
                             _where(frame, source), source.inlined))  # fmt: skip
    return lines


def _where(frame: Frame, source: SourceFrame) -> str:
    """`at FILE:LINE` where the line table says, else `from LIBRARY` for a library's frame, else ""."""
    if source.file and source.line:
        return f"at {source.file}:{source.line}"
    library = frame.module.library if frame.module is not None else None
    return f"from {library}" if library else ""


class TailCall(NamedTuple):
    """A tail call frame: gdb's frame at a call site's address (`pc`, after the jump), `frame` standing
    for it (looked up at `pc - 1`), named by `source` (the innermost function the debug information puts
    at that code), else by the frame's symbol."""

    pc: int
    frame: Frame
    source: SourceFrame | None


def tail_calls(callee: Frame, caller: Frame, sites: ProcessCallSites) -> list[TailCall]:
    """The frames gdb lists between `callee` and its `caller` for the functions the caller went through by
    tail calls, as the call sites' debug information says (`sfview.dwarf.tail_calls`), innermost first;
    none where either frame is a signal's."""
    module = callee.module
    info = module.debug_info() if module is not None and module.debug_info is not None else None
    if callee.signal or caller.signal or module is None or info is None:
        return []
    entry = info.function_entry((callee.lookup_pc - module.bias) & ADDRESS_MASK)
    if entry is None:
        return []
    found = []
    for pc in tail_call_pcs(sites, caller.pc, (entry + module.bias) & ADDRESS_MASK):
        held = sites.module((pc - 1) & ADDRESS_MASK)
        jumped = Frame(callee.number + 1, pc, {}, held[0] if held is not None else None)  # named at pc - 1
        chain = jumped.source()[0]
        found.append(TailCall(pc, jumped, chain[0] if chain else None))
    return found


def tail_call_lines(callee: Frame, caller: Frame, number: int, sites: ProcessCallSites) -> list[GdbLine]:
    """`tail_calls` as gdb prints them, numbered from `number`: each at its call site's address, one line
    named as gdb names it, by the innermost function at the code before that address, inlined or not."""
    lines: list[GdbLine] = []
    for call in tail_calls(callee, caller, sites):
        line = _symbol_line(call.frame, number + len(lines))
        if call.source is not None:
            line = line._replace(function=demangle(call.source.function), where=_where(call.frame, call.source))
        lines.append(line._replace(tail=True))
    return lines


def frame_lines(frame: Frame, number: int, *, inline: bool = True) -> list[str]:
    """`gdb_lines` as text, as gdb prints them. Arguments are not printed: `()`, where gdb gives their values."""
    return [line.text for line in gdb_lines(frame, number, inline=inline)]


def explanation(frame: Frame) -> list[str]:
    """How the caller of `frame` was found: the FDE and FRE used, and every value worked out."""
    lines = []
    func, row = frame.function, frame.row
    if func is not None and frame.module is not None:
        lines.append(
            f"      at {demangle(frame.name()) or hex(frame.pc)}: {frame.module.name} fdes[{func.index}] "
            f"(section offset {func.span.start:#x}), looked up at {frame.lookup_pc:#x}"
        )
    if row is not None:
        lines.append(f"      FRE {row.index} (section offset {row.span.start:#x}), {frame.lookup}")
    elif frame.lookup:
        lines.append(f"      {frame.lookup}")
    for comp in frame.computations:
        lines.append(f"      {comp.text}")
    return lines


def thread_title(number: int, tid: int, registers: dict[str, int], name: str | None = None) -> str:
    """`Thread 2 (Thread 0x7ffff7dd16c0 (LWP 26082)):`, gdb's title of a thread in `thread apply all bt`.

    The `Thread 0x…` is glibc's `pthread_t`, which on x86-64 is the thread pointer (`fs_base`); where
    the core does not give it, gdb's title without it (`Thread 2 (LWP 26082):`). A live process's
    threads have names, which gdb adds (`(LWP 26082) "worker"`); a core's have none.
    """
    pointer = registers.get("fs_base")
    target = f"Thread {pointer:#x} (LWP {tid})" if pointer else f"LWP {tid}"
    return f"Thread {number} ({target}" + (f' "{name}"' if name else "") + "):"


def write_text(
    out: TextIO,
    trace: Trace,
    *,
    explain: bool = False,
    notes: list[str] | None = None,
    inline: bool = True,
    tail_calls: ProcessCallSites | None = None,
) -> None:
    """The backtrace, one line a frame (and one for each function inlined in it, numbered as gdb numbers
    them, unless not `inline`; with `tail_calls` and `inline`, one for each function a caller went through
    by tail calls, as gdb lists them: without `inline`, physical frames alone), then why it stopped (and
    what was noticed on the way): each frame written as the walk gives it."""
    number, callee = 0, None
    for frame in trace:
        mark = f"  [{frame.heuristic}]" if frame.fallback else "  [DWARF CFI]" if frame.dwarf else ""
        jumped = []
        if tail_calls is not None and callee is not None and inline:
            jumped = tail_call_lines(callee, frame, number, tail_calls)
        number += len(jumped)
        callee = frame
        lines = frame_lines(frame, number, inline=inline)
        number += len(lines)
        lines[-1] += mark
        lines[:0] = [line.text for line in jumped]
        if explain:
            lines.extend(explanation(frame))
        out.write(printable_lines(lines))
    out.write(printable_lines([f"stopped: {trace.stop}", *(f"note: {note}" for note in notes or [])]))


def write_notes(out: TextIO, notes: list[str]) -> None:
    """`note: …`, one line a note: what was noticed about the core and its files, kept apart from the
    backtrace (stderr) so that the backtrace alone is the output."""
    out.write(printable_lines([f"note: {note}" for note in notes]))


def agreement(sframe: Trace, dwarf: Trace, machine: Machine) -> str:
    """Where walking with DWARF CFI parts from walking with SFrame: the first frame whose PC, SP or FP
    differ (the registers SFrame describes). Frames both walks found by the same heuristic (no rule on
    either side) are named: their agreement says nothing of the two formats. The walks go side by side,
    a frame of each at a time, and no further than the shorter and one frame."""
    shared = io.StringIO()  # as long as the walks can be: one string, not a list of them
    ours_walk, theirs_walk = iter(sframe), iter(dwarf)
    before: tuple[Frame, Frame] | None = None
    count = 0
    while (ours := next(ours_walk, None)) is not None and (theirs := next(theirs_walk, None)) is not None:
        if _key(ours, machine) != _key(theirs, machine):
            return (
                f"DWARF CFI parts from SFrame at frame #{ours.number}: SFrame finds pc {ours.pc:#x}, "
                f"DWARF {theirs.pc:#x} ({_registers(ours, machine)} against {_registers(theirs, machine)})"
            )
        if before is not None and all(f.fallback for f in before) and before[0].heuristic == before[1].heuristic:
            shared.write(f"{', ' if shared.tell() else ''}#{ours.number} ({before[0].heuristic})")
        before, count = (ours, theirs), count + 1
    found = shared.getvalue()
    guessed = f"; found by the same heuristic in both walks, not by either's data: {found}" if found else ""
    longer = "SFrame" if ours is not None else "DWARF CFI" if next(theirs_walk, None) is not None else None
    if longer is not None:
        shorter, stopped = ("DWARF CFI", dwarf.stop) if longer == "SFrame" else ("SFrame", sframe.stop)
        return (
            f"DWARF CFI agrees on the {quantity(count, 'frame')} both find; "
            f"{longer} goes further ({shorter} stopped: {stopped}){guessed}"
        )
    return f"DWARF CFI finds the same {quantity(count, 'frame')}, with the same PC, SP and FP{guessed}"


def _key(frame: Frame, machine: Machine) -> tuple[int, int | None, int | None]:
    return frame.pc, frame.registers.get(machine.sp), frame.registers.get(machine.fp)


def _registers(frame: Frame, machine: Machine) -> str:
    known = [n for n in (machine.sp, machine.fp) if n in frame.registers]
    return ", ".join(f"{machine.name(n)}={frame.registers[n]:#x}" for n in known)


def write_json(out: TextIO, trace: Trace, notes: list[str], tail_calls: ProcessCallSites | None = None) -> None:
    """`{"frames": [...], "stop": ..., "missing_address": ..., "notes": [...]}` as `json.dumps(indent=1)`
    writes it, each frame written as the walk gives it (the rest, known at the end, after them); each
    frame's `tail_calls` found through `tail_calls` (none without it)."""
    _write_walk(out, trace, 0, {}, {"notes": notes}, tail_calls)
    out.write("\n")


def write_json_threads(
    out: TextIO,
    walks: Iterable[tuple[int, int, Trace]],
    notes: list[str],
    tail_calls: ProcessCallSites | None = None,
) -> None:
    """Every thread's walk in one document, as `json.dumps(indent=1)` writes it: `{"threads": [{"thread": N,
    "tid": LWP, "frames": [...], "stop": ..., "missing_address": ...}, ...], "notes": [...]}`, the threads in
    the order given (gdb's: the last first), the notes of the core and its files once."""
    from json.encoder import encode_basestring_ascii  # only --json needs it

    out.write('{\n "threads": [')
    for count, (number, tid, trace) in enumerate(walks):
        out.write(("," if count else "") + "\n  ")
        _write_walk(out, trace, 2, {"thread": number, "tid": tid}, {}, tail_calls)
    out.write(f'\n ],\n "notes": {_indented(notes, 1, encode_basestring_ascii)}\n}}\n')


def _write_walk(
    out: TextIO,
    trace: Trace,
    level: int,
    head: dict[str, object],
    tail: dict[str, object],
    sites: ProcessCallSites | None,
) -> None:
    """One walk as the object `json.dumps(indent=1)` writes at nesting `level`: `head`'s members, the frames
    as the walk gives them (each with the tail calls `sites` find between it and the frame before), then
    `stop`, `missing_address` (known once the frames are all given) and `tail`'s."""
    from json.encoder import encode_basestring_ascii as escape  # only --json needs it

    pad = " " * (level + 1)
    out.write(
        "{\n" + "".join(f"{pad}{escape(key)}: {_indented(value, level + 1, escape)},\n" for key, value in head.items())
    )
    out.write(f'{pad}"frames": [')
    shift = "\n" + " " * level  # a frame's template is written for the frames of a walk at nesting 0
    callee = None
    for number, frame in enumerate(trace):
        jumped = tail_calls(callee, frame, sites) if sites is not None and callee is not None else []
        callee = frame
        text = _frame_text(frame, escape, jumped)
        out.write(("," if number else "") + "\n" + pad + " " + (text.replace("\n", shift) if level else text))
    rest = {"stop": trace.stop, "missing_address": trace.missing_address, **tail}
    members = ",".join(f"\n{pad}{escape(key)}: {_indented(value, level + 1, escape)}" for key, value in rest.items())
    out.write(f"\n{pad}],{members}\n{' ' * level}}}")


def _frame_text(frame: Frame, escape: Callable[[str], str], jumped: list[TailCall]) -> str:
    """A frame as `json.dumps(indent=1)` writes its document in the list of frames: `number`, `pc`,
    `function` (its name and offset, `leaf+0x11`: kept for the documents written before `name` and `offset`,
    the same apart), `name`, `offset`, `demangled`, `module`, `fde`, `fre` (their indexes), `lookup`,
    `fallback`, `heuristic`, `signal`, `dwarf`, `computations` (`what`, `formula`, `arithmetic`, `value`,
    `address` of each), `source` (`_source_text`) and `tail_calls` (`_tail_calls_text`). Written from one
    template: walking a dict of it with `_indented` would be most of `--json`'s time on a deep stack
    (tests/oracles/test_unwind_stream.py holds the document as a dict, and compares the two)."""
    name = frame.name()
    symbol, offset = symbol_and_offset(name)
    demangled = escape(demangle(name)) if name.startswith("_Z") else "null"
    steps = [
        f'{{\n     "what": {escape(c.what)},\n     "formula": {escape(c.formula)},\n     "arithmetic": '
        f'{escape(c.arithmetic)},\n     "value": {_number(c.value)},\n     "address": {_number(c.address)}\n    }}'
        for c in frame.computations
    ]
    computations = "[\n    " + ",\n    ".join(steps) + "\n   ]" if steps else "[]"
    return (
        f'{{\n   "number": {frame.number:d},\n   "pc": {frame.pc:d},'
        f'\n   "function": {escape(name) if name else "null"},'
        f'\n   "name": {escape(symbol) if name else "null"},\n   "offset": {offset if name else "null"},'
        f'\n   "demangled": {demangled},\n   "module": {escape(frame.module.name) if frame.module else "null"},'
        f'\n   "fde": {frame.function.index if frame.function else "null"},'
        f'\n   "fre": {frame.row.index if frame.row else "null"},\n   "lookup": {escape(frame.lookup)},'
        f'\n   "fallback": {_boolean(frame.fallback)},'
        f'\n   "heuristic": {escape(frame.heuristic) if frame.heuristic else "null"},'
        f'\n   "signal": {_boolean(frame.signal)},\n   "dwarf": {_boolean(frame.dwarf)},'
        f'\n   "computations": {computations},\n   "source": {_source_text(frame, escape)},'
        f'\n   "tail_calls": {_tail_calls_text(jumped, escape)}\n  }}'
    )


def _source_text(frame: Frame, escape: Callable[[str], str]) -> str:
    """`source`: the functions debug information says hold the frame's PC, innermost first, as in the text
    (`function`, `file`, `line`, `inlined` each); `[]` without debug information."""
    chain = [] if frame.signal else frame.source()[0]
    items = [
        f'{{\n     "function": {escape(s.function)},\n     "file": {escape(s.file) if s.file else "null"},'
        f'\n     "line": {_number(s.line)},\n     "inlined": {_boolean(s.inlined)}\n    }}'
        for s in chain
    ]
    return "[\n    " + ",\n    ".join(items) + "\n   ]" if items else "[]"


def _tail_calls_text(jumped: list[TailCall], escape: Callable[[str], str]) -> str:
    """`tail_calls`: gdb's tail call frames between the frame before and this one (this frame's function went
    through them), innermost first, as in the text: each a `source` item at its own address, `pc` (the call
    site's, after the jump), then `function`, `file`, `line`, `inlined` of the function gdb names it by (its
    symbol, file and line null, where no debug information names it); `[]` where gdb finds none."""
    items = []
    for call in jumped:
        place = call.source
        symbol = symbol_and_offset(call.frame.name())[0] if place is None else place.function
        file = escape(place.file) if place is not None and place.file else "null"
        items.append(
            f'{{\n     "pc": {call.pc:d},\n     "function": {escape(symbol) if symbol else "null"},'
            f'\n     "file": {file},\n     "line": {_number(place.line if place is not None else None)},'
            f'\n     "inlined": {_boolean(place is not None and place.inlined)}\n    }}'
        )
    return "[\n    " + ",\n    ".join(items) + "\n   ]" if items else "[]"


def _number(value: int | None) -> str:
    return "null" if value is None else f"{value:d}"


def _boolean(value: bool) -> str:
    return "true" if value else "false"


def _indented(value: object, level: int, escape: Callable[[str], str]) -> str:
    """`value` as `json.dumps(value, indent=1)` writes it at nesting `level`: that, with an indent, runs
    Python's own encoder, several times slower than the C string escaper (`escape`) used here for each
    string (the library stays the reference: tests/oracles/test_unwind_stream.py compares the two)."""
    if isinstance(value, dict | list):
        inner, ends = "\n" + " " * (level + 1), "{}" if isinstance(value, dict) else "[]"
        if not value:
            return ends
        items = (
            (f"{inner}{escape(key)}: {_indented(item, level + 1, escape)}" for key, item in value.items())
            if isinstance(value, dict)
            else (inner + _indented(item, level + 1, escape) for item in value)
        )
        return ends[0] + ",".join(items) + "\n" + " " * level + ends[1]
    if value is None or isinstance(value, bool):
        return "null" if value is None else _boolean(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, str):
        return escape(value)
    raise TypeError(f"no JSON for {type(value).__name__}")
