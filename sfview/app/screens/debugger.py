"""`DebuggerScreen`: step a stack frame by frame and see every rule worked out with real numbers.

The state comes from a core file, from registers typed on the command line,
or from the inputs at the top of this screen. Each step finds the caller of
the last frame (`Unwinder.step`) and shows which FDE and FRE it used (with
their section offsets and bytes), the CFA, RA and FP with the arithmetic,
and the caller's registers; the backtrace so far is listed on the left. When
a step needs a memory word nobody gave, the screen asks for it. Each step
also points the explorer at the FDE and FRE used, so that `escape` shows
them there, bytes highlighted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from sfview import ADDRESS_MASK
from sfview.app.screens.goto import GotoNumber
from sfview.app.widgets.footer import KeyFooter
from sfview.app.widgets.row_table import Cut, cells, cut
from sfview.code.disasm import instruction_at
from sfview.inputs.code import loaded_code
from sfview.inputs.core import Memory
from sfview.inputs.demangle import demangle
from sfview.inputs.numbers import evaluate, fitting
from sfview.inputs.symbols import Place
from sfview.output.backtrace import GdbLine, gdb_lines, tail_call_lines
from sfview.output.safe_text import pictured
from sfview.unwind.call_sites import ProcessCallSites
from sfview.unwind.engine import Found, Frame, Module, RuleSource, Unwinder
from sfview.unwind.session import Session, register_numbers

if TYPE_CHECKING:
    from sfview.app.explorer.screen import ExplorerScreen

__all__ = ["DebuggerScreen", "ThreadPicker", "Threads"]


@dataclass(frozen=True)
class Threads:
    """A core's threads for `t`: each with gdb's title (`Thread 2 (… (LWP 26082)):`), its id and PC,
    and how to start a walk on one (`load(tid)`, the same session the command line makes)."""

    listed: list[tuple[str, int, int]]
    load: Callable[[int], Session]


class ThreadPicker(ModalScreen[int | None]):
    """Pick a thread of the core: its title, and the function its PC is in."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, rows: list[tuple[int, str]], current: int | None) -> None:
        super().__init__(classes="goto", id="thread-picker")
        self.rows = rows
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="goto-dialog") as dialog:
            dialog.border_title = "Threads"
            yield Label("enter: walk this thread's stack (escape: stay on this one)", classes="goto-hint")
            yield OptionList(*(Option(text, id=str(tid)) for tid, text in self.rows), id="goto-matches", markup=False)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = next((i for i, (tid, _) in enumerate(self.rows) if tid == self.current), 0)
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.rows[event.option_index][0])


RUN_PAGE = 500
"""Frames `r` adds at a time."""


NAME_AT_LEAST = 24
"""The backtrace's function names keep this much (or all of a shorter name) before the PC takes its room."""

COLUMNS = ("#", "function", "pc", "at", "how")
"""The backtrace's columns: gdb's `bt` line in its parts (number, function, address, `at FILE:LINE` or
`from LIBRARY`), then how the frame's caller was found. The name first: what a frame is known by, cut last."""

INLINED = "inlined"
"""The backtrace's `how` of a function inlined into the code of the frame below it in the list."""
TAIL_CALL = "tail call"
"""The backtrace's `how` of a function its caller went through by a tail call (gdb's tail call frames)."""


def _short_place(where: str) -> str:
    """A backtrace's `at FILE:LINE` or `from LIBRARY` in fewer cells, under the column's title: the source
    file's or the library's name alone (`msort.c:44`, `libc.so.6`), what tells frames apart where the
    whole path cannot show."""
    return os.path.basename(where.partition(" ")[2])


def _frame_widths(rows: list[tuple[str, ...]], room: int, padding: int) -> list[int]:
    """How wide each column of the backtrace (`COLUMNS`) may be in `room` cells, each column taking `padding`
    on either side: the number whole; the name down to `NAME_AT_LEAST` where the PC and the place's short
    form (`_short_place`) need the room; the PC whole if it fits, else cut *with an ellipsis* (a cut PC
    read as a real one); where the source is, then how it was found, in what is left. `room` 0 (not laid
    out yet): every value whole."""
    widest = [max((cells(row[i]) for row in rows), default=0) for i in range(len(COLUMNS))]
    if room <= 0:
        return widest
    short = max((cells(_short_place(row[3])) for row in rows), default=0)
    left = room - 2 * len(COLUMNS) * padding - widest[0]
    name = max(min(widest[1], max(min(widest[1], NAME_AT_LEAST), left - widest[2] - short), left - 1), 1)
    pc = max(min(widest[2], left - name), 1)
    where = max(min(widest[3], left - name - pc), 0)
    return [widest[0], name, pc, where, max(min(widest[4], left - name - pc - where), 0)]


def _fitted(rows: list[tuple[str, ...]], widths: list[int]) -> list[list[str]]:
    """The backtrace's rows, each cell in its column's width: whole, or cut as its column is (`Cut`); the
    places all in their short form (`_short_place`, then cut) when one of them does not fit whole."""
    cuts = (Cut.END, Cut.NAME, Cut.END, Cut.START, Cut.END)
    short = any(cells(row[3]) > widths[3] for row in rows)
    fitted = []
    for row in rows:
        shown = [*row[:3], _short_place(row[3]) if short else row[3], *row[4:]]
        fitted.append([cut(text, width, how) for text, width, how in zip(shown, widths, cuts, strict=True)])
    return fitted


@dataclass(frozen=True)
class Named:
    """A frame of the walk as gdb's `bt` prints it (`lines`: one for each function its callee reached it
    through by tail calls, then one for each function inlined at its PC, then its own), kept while the frame
    is what it was when named (its module and how its caller was found decide its names: a frame is named
    again once a step has looked it up)."""

    frame: Frame
    module: Module | None
    found: Found
    lines: list[GdbLine]

    def holds(self, frame: Frame, number: int) -> bool:
        return (
            self.frame is frame
            and self.module is frame.module
            and self.found is frame.found
            and (self.lines[0].number == number)
        )


class DebuggerScreen(Screen[None]):
    """The unwinding debugger, beside the explorer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space,s", "step", "Step"),
        Binding("b", "back", "Back"),
        Binding("r", "run", "Run to the end"),
        Binding("ctrl+r", "reset", "Reset"),
        Binding("m", "add_word", "Memory word"),
        Binding("d", "toggle_dwarf", "DWARF too"),
        Binding("i", "toggle_inline", "Inlined"),
        Binding("t", "threads", "Threads"),
        Binding("escape", "explorer", "Explorer"),
    ]

    def __init__(
        self,
        unwinder: Unwinder,
        memory: Memory,
        pc: int | None,
        registers: dict[int, int],
        explorer: ExplorerScreen,
        threads: Threads | None = None,
        origin: str | None = None,
        *,
        inline: bool = True,
        memory_from: str | None = None,
    ) -> None:
        super().__init__(id="debugger")
        self.inline = inline
        """The functions the debug information says were inlined at a frame's PC listed as frames of their
        own, as gdb lists them (`--no-inline`: the physical frames alone; `i` turns it)."""
        self.memory_from = memory_from
        """Where the state's memory came from (`the core`, `sample #7's stack copy`), for the memory
        pane's title; None: only the words typed (`m`)."""
        self.named: list[Named] = []
        """The frames as gdb names them, in the walk's order (`_names`)."""
        self.origin = origin
        """Where the state came from when it is a snapshot of a live process, not the process itself: said
        when the screen opens, and in the backtrace's title."""
        self.threads = threads
        self.thread: int | None = next((tid for _, tid, at in threads.listed if at == pc), None) if threads else None
        """The thread being walked (its id), when the core has several."""
        self.unwinder = unwinder
        self.memory = memory
        self.explorer = explorer
        self.machine = unwinder.machine
        self.start_pc = pc
        self.start_registers = dict(registers)
        self.frames: list[Frame] = []
        self.with_dwarf = False
        """Also work each step out with DWARF CFI, and flag a frame where the two differ."""
        self.stop: str = ""
        self.missing: int | None = None
        self.inputs = {name: Input(id=f"reg-{name}", placeholder="0x…") for name in self._register_names()}

    def _register_names(self) -> list[str]:
        return ["pc", "sp", "fp", "lr"] if self.machine.aarch64 else ["pc", "sp", "fp"]

    def _regnum(self, name: str) -> int:
        return {"sp": self.machine.sp, "fp": self.machine.fp, "lr": self.machine.ra}[name]

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        with Horizontal(id="dbg-registers"):
            for name, field in self.inputs.items():
                yield Label(f" {name} ", classes="dbg-reg-label")
                yield field
        with Horizontal(id="dbg-body"):
            with Vertical(id="dbg-left"):
                yield DataTable(id="dbg-frames", cursor_type="row", zebra_stripes=True)
                yield DataTable(id="dbg-memory", cursor_type="row")
            with VerticalScroll(id="dbg-step"):
                yield Static(id="dbg-explain", markup=False)
        yield Static(id="dbg-status", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        frames = self.query_one("#dbg-frames", DataTable)
        self._title_frames()
        frames.add_columns(*COLUMNS)
        memory = self.query_one("#dbg-memory", DataTable)
        memory.border_title = Content(  # plain text, not markup: a path's `[/]` would end the app
            f"memory words read from {self.memory_from}, or given (m)" if self.memory_from else "memory words you gave"
        )
        memory.add_columns("address", "value", "read for")
        self.query_one("#dbg-step").border_title = "the step"
        self._fill_inputs()
        self.action_reset()
        if self.origin:
            self.notify(self.origin, title="Not the process itself", timeout=15)
        if self.start_pc is not None:
            frames.focus()  # space steps; tab reaches the registers
        else:
            self.inputs["pc"].focus()

    def _fill_inputs(self) -> None:
        values = {"pc": self.start_pc} | {
            n: self.start_registers.get(self._regnum(n)) for n in self._register_names()[1:]
        }
        for name, field in self.inputs.items():
            value = values.get(name)
            field.value = f"{value:#x}" if value is not None else ""

    # ------------------------------------------------------------------ stepping

    def action_reset(self) -> None:
        """Back to frame #0, from the registers in the inputs."""
        self.frames = [Frame(0, self.start_pc, dict(self.start_registers))] if self.start_pc is not None else []
        self.stop, self.missing = "", None
        if not self.frames:
            self._show("Type the registers at the top (pc, sp, fp…) and press enter, then `space` to step.")
            return
        self._show_frames()
        self._explain(None)

    def action_step(self) -> None:
        """Find the caller of the last frame."""
        if not self.frames or self.stop:
            self.app.bell()
            return
        frame = self.frames[-1]
        frame.computations.clear()
        caller, stop, missing = self.unwinder.step(frame)
        self._point_explorer(frame)
        if caller is None:
            self.stop, self.missing = stop, missing
        else:
            self.frames.append(caller)
        self._show_frames(frame.number)
        self._explain(frame)
        if missing is not None:
            self._ask_for(missing)

    def action_back(self) -> None:
        """Forget the last frame found (and why the walk stopped after it)."""
        if len(self.frames) > 1:
            self.frames.pop()
        self.stop, self.missing = "", None
        self._show_frames(max(len(self.frames) - 2, 0))
        self._explain(self.frames[-2] if len(self.frames) > 1 else None)

    def action_run(self) -> None:
        """Step until the walk stops, a page of frames at a time (`r` again goes on): a deep recursion
        has thousands, and the engine's loop detection ends a walk that would not."""
        if not self.frames or self.stop:
            self.app.bell()
            return
        self.frames[-1].computations.clear()
        page_end = len(self.frames) + RUN_PAGE
        stop, missing = self.unwinder.walk(self.frames, page_end)
        paged = len(self.frames) == page_end and missing is None and stop.startswith("stopped after")
        if not paged:
            self.stop, self.missing = stop, missing
        stepped = self.frames[-1] if not paged and self.stop else self.frames[-2]
        self._point_explorer(stepped)
        self._show_frames()
        self._explain(stepped)
        if paged:
            self._show(f"{len(self.frames)} frames, the walk goes on: r runs another {RUN_PAGE}")
        if missing is not None:
            self._ask_for(missing)

    def action_toggle_dwarf(self) -> None:
        self.with_dwarf = not self.with_dwarf
        self._explain(self.frames[-2] if len(self.frames) > 1 else None)
        self._show("each step is also worked out with DWARF CFI" if self.with_dwarf else "SFrame only")

    def action_toggle_inline(self) -> None:
        """The functions inlined at each frame's PC listed as frames of their own (gdb's `bt`), or not."""
        self.inline = not self.inline
        self.named = []  # named again, with or without the inlined functions
        cursor = self._frame_at(self.query_one("#dbg-frames", DataTable).cursor_row)
        if self.frames:
            self._show_frames(cursor)
        self._show("inlined functions listed as frames, as gdb lists them" if self.inline else "physical frames only")

    def _dwarf_check(self, frame: Frame) -> Text:
        """The same step with DWARF CFI (`.eh_frame`): the caller it finds, and whether SFrame's is the same."""
        mirror = Frame(frame.number, frame.pc, dict(frame.registers))
        caller, stop, _ = self.unwinder.following(RuleSource.DWARF).step(mirror)
        out = Text("\nWith DWARF CFI instead:\n", style="bold")
        out.append(f"  {mirror.lookup or 'no FDE'}\n")
        for comp in mirror.computations:
            out.append(f"    {comp.text}\n")
        ours = self.frames[frame.number + 1] if len(self.frames) > frame.number + 1 else None
        if caller is None:
            out.append(f"  stops: {stop}\n", style="yellow")
        elif ours is not None and (ours.pc, ours.registers) == (caller.pc, caller.registers):
            out.append("  the same caller: SFrame and DWARF agree here\n", style="green")
        else:
            theirs = f"pc {caller.pc:#x}, " + ", ".join(
                f"{self.machine.name(n)} {v:#x}" for n, v in sorted(caller.registers.items())
            )
            out.append(f"  a different caller: {theirs}\n", style="bold red")
        return out

    def action_explorer(self) -> None:
        self.app.pop_screen()

    @on(DataTable.RowHighlighted, "#dbg-frames")
    def _frame_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The step pane follows the backtrace's cursor: the step from the frame under it."""
        index = self._frame_at(event.cursor_row)
        if 0 <= index < len(self.frames):
            self._explain_frame(index)

    def _explain_frame(self, index: int) -> None:
        """The step from frame `index` if it was taken (or ended the walk), else that frame as it is."""
        stepped = index < len(self.frames) - 1 or bool(self.stop)
        self._explain(self.frames[index] if stepped else None, index)

    @on(DataTable.RowSelected, "#dbg-frames")
    def _frame_chosen(self, event: DataTable.RowSelected) -> None:
        """`enter` on a frame of the backtrace: the explorer on the FDE and row that frame was unwound with."""
        frame = self.frames[self._frame_at(event.cursor_row)]
        if frame.function is None or frame.row is None or frame.module is not self.unwinder.modules[0]:
            self._show(
                f"frame #{self._number(frame)}: no row of this program's section unwound it (step from it first)"
            )
            return
        self.explorer.show_row(frame.function.index, frame.row.index)
        self.app.pop_screen()

    def _point_explorer(self, frame: Frame) -> None:
        """Select the FDE and FRE the step used in the explorer (of the program's section)."""
        if frame.function is not None and frame.row is not None and frame.module is self.unwinder.modules[0]:
            self.explorer.show_row(frame.function.index, frame.row.index)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`t` only for a core with several threads."""
        return self.threads is not None if action == "threads" else True

    def action_threads(self) -> None:
        """The core's threads, to walk another."""
        if self.threads is None:
            return
        rows = [
            (tid, pictured(f"{title.rstrip(':')}  {pc:#x} {demangle(self.unwinder.name_at(pc)) or '??'}"))
            for title, tid, pc in self.threads.listed
        ]
        self.app.push_screen(ThreadPicker(rows, self.thread), self._thread_chosen)

    def _thread_chosen(self, tid: int | None) -> None:
        """Walk thread `tid` from its frame #0: its registers, the same program, libraries and memory."""
        if tid is None or self.threads is None:
            return
        started = self.threads.load(tid)
        self.unwinder, self.memory, self.thread = started.unwinder, started.memory, tid
        self.start_pc, self.start_registers = started.pc, dict(started.registers)
        self._fill_inputs()
        self.action_reset()
        self._title_frames()

    def _title_frames(self) -> None:
        title = next((t for t, tid, _ in self.threads.listed if tid == self.thread), None) if self.threads else None
        frames = self.query_one("#dbg-frames", DataTable)
        short = title.split(" (")[0] if title else ""  # `Thread 2`: the list (`t`) has the rest
        frames.border_title = f"backtrace of {short} (LWP {self.thread})" if title else "backtrace"
        if self.origin:
            frames.border_title += ", a snapshot"  # the whole story in the notification on mount

    # ------------------------------------------------------------------ memory

    def action_add_word(self) -> None:
        self._ask_for(None)

    def _ask_for(self, address: int | None) -> None:
        """Ask for the word at `address` (or for an address first, offering the one the walk needs), then
        try the step again."""
        if address is None:
            needed = f"{self.missing:#x}" if self.missing is not None else ""
            hint = "The address of an 8-byte word you know (sp+8, main+0x34, 7ffc1000)."
            prompt = GotoNumber("Memory word: address", hint, self._value_of, value=needed)
            self.app.push_screen(prompt, lambda a: isinstance(a, int) and self._ask_for(a))
            return
        hint = "Its value (8 bytes), e.g. from gdb's `x/gx` (main+0x34, 401136)."
        prompt = GotoNumber(f"Memory word at {address:#x}", hint, self._value_of, what=f"the word at {address:#x}")
        self.app.push_screen(prompt, lambda value: self._got_word(address, value))

    def _value_of(self, name: str) -> int | None:
        """What a name stands for in what is typed here: a register of the last frame (`sp`, `rsp`,
        `$fp`), else a symbol of the program, where it is loaded."""
        if self.frames:
            last, lowered = self.frames[-1], name.lower()
            if lowered in ("pc", "rip"):
                return last.pc
            regnum = register_numbers(self.machine).get(lowered)
            if regnum is not None:
                return last.registers.get(regnum)
        symbol = self.explorer.doc.symbols.named(name)
        return symbol.address + self.unwinder.modules[0].bias if symbol is not None else None

    def _got_word(self, address: int, value: int | Place | None) -> None:
        if not isinstance(value, int):
            return
        self.memory.words[address] = value
        self._show_memory()
        if self.missing == address:
            self.stop, self.missing = "", None
            self.action_step()

    # ------------------------------------------------------------------ registers typed in

    @on(Input.Submitted)
    def _registers_typed(self) -> None:
        values = {}
        for name, field in self.inputs.items():
            text = field.value.strip()
            if text:
                value = evaluate(text, self._value_of)
                if isinstance(value, int):
                    value = fitting(text, value, name)  # a register holds a machine word: refused as --regs is
                elif isinstance(value, str):
                    value = f"{name}: {value}"
                if not isinstance(value, int):
                    self._show(value if isinstance(value, str) else f"{name}: not an address")
                    return
                values[name] = value
        if "pc" not in values:
            self._show("pc is needed to start")
            return
        self.start_pc = values.pop("pc")
        self.start_registers = {self._regnum(n): v for n, v in values.items()}
        self.action_reset()
        self.query_one("#dbg-frames", DataTable).focus()  # back to the walk: `space` steps, not types

    # ------------------------------------------------------------------ showing

    def _show(self, text: str) -> None:
        self.query_one("#dbg-status", Static).update(pictured(text))

    def _names(self) -> list[Named]:
        """Each frame as gdb's `bt` prints it, numbered as gdb numbers them: a frame named before is named
        again only when a step has looked it up since (the walk's last frame, before its step, is named
        by the module holding its PC)."""
        named, number = self.named[: len(self.frames)], 0
        sites = ProcessCallSites(self.unwinder)
        for index, frame in enumerate(self.frames):
            if index < len(named) and named[index].holds(frame, number):
                number += len(named[index].lines)
                continue
            callee = self.frames[index - 1] if index else None
            lines = [] if callee is None or not self.inline else tail_call_lines(callee, frame, number, sites)
            lines += gdb_lines(self._placed(frame), number + len(lines), inline=self.inline)
            named[index:] = [Named(frame, frame.module, frame.found, lines)]
            number += len(lines)
        self.named = named
        return named

    def _placed(self, frame: Frame) -> Frame:
        """`frame`, or, before a step has looked it up, the same frame in the module holding its PC: what
        names it (its symbols, its debug information)."""
        if frame.module is not None or frame.signal:
            return frame
        module = self.unwinder.module_of(frame.pc)
        return Frame(frame.number, frame.pc, frame.registers, module, interrupted=frame.interrupted)

    def _number(self, frame: Frame) -> int:
        """gdb's number of the frame's first line (an inlined function's, where one is; not a tail call's
        before it): `#3` for the physical frame 1 of a walk whose frame 0 has two functions inlined."""
        named = self.named
        if frame.number < len(named) and named[frame.number].frame is frame:
            return next(line.number for line in named[frame.number].lines if not line.tail)
        return frame.number

    def _frame_at(self, row: int) -> int:
        """The frame (its index in the walk) whose line is row `row` of the backtrace."""
        seen = 0
        for index, named in enumerate(self.named):
            seen += len(named.lines)
            if row < seen:
                return index
        return len(self.frames) - 1

    def _show_frames(self, cursor: int | None = None) -> None:
        """The backtrace so far as gdb prints it, a row for each of its lines (a function inlined at a frame's
        PC has its own, without an address), the cursor on frame `cursor`'s first row (the step shown;
        else the last frame's)."""
        table = self.query_one("#dbg-frames", DataTable)
        table.clear()
        rows: list[tuple[str, ...]] = []
        first_rows = []
        for named in self._names():
            frame = named.frame
            how = frame.heuristic if frame.fallback else frame.module.name if frame.module else ""
            if frame.signal:
                how = "signal"
            first_rows.append(len(rows) + sum(line.tail for line in named.lines))
            for line in named.lines:
                pc = "" if line.address is None else f"{line.address:#x}"
                kind = TAIL_CALL if line.tail else INLINED if line.inlined else how
                rows.append((f"#{line.number}", pictured(line.function), pc, pictured(line.where), pictured(kind)))
        region = table.scrollable_content_region
        scrolls = not table.show_vertical_scrollbar and len(rows) + 1 > region.height  # its bar is coming
        room = region.width - (table.styles.scrollbar_size_vertical if scrolls else 0)
        widths = _frame_widths(rows, room, table.cell_padding)
        for column, width in zip(table.columns.values(), widths, strict=True):
            # fixed: an auto-sized column keeps the width of the widest value it ever held
            column.auto_width, column.width = room <= 0, width
        for fitted in _fitted(rows, widths):
            # escaped: as markup, a C++ name's `[abi:cxx11]` would be read as a style's tag and vanish
            table.add_row(*(escape(text) for text in fitted))
        table.move_cursor(row=first_rows[len(self.frames) - 1 if cursor is None else cursor])
        self._show_memory()
        if self.stop:
            self._show(f"stopped: {self.stop}")
        else:
            many = f"; {len(self.threads.listed)} threads: t lists them" if self.threads else ""
            self._show(
                f"{len(self.frames)} frame{'s' if len(self.frames) > 1 else ''}: space steps, r runs to the end{many}"
            )

    def _show_memory(self) -> None:
        """The memory words the walk read so far, each with the frame and value it was read for (`#1 RA`),
        then the words typed (`m`) that no step read."""
        table = self.query_one("#dbg-memory", DataTable)
        table.clear()
        read = set()
        for frame in self.frames:
            for comp in frame.computations:
                if comp.address is not None:
                    read.add(comp.address)
                    value = "not known" if comp.value is None else f"{comp.value:#x}"
                    given = " (you gave it)" if comp.address in self.memory.words else ""
                    table.add_row(f"{comp.address:#x}", value, f"#{self._number(frame)} {comp.what}{given}")
        for address, value in self.memory.words.items():
            if address not in read:
                table.add_row(f"{address:#x}", f"{value:#x}", "you gave it")

    def on_resize(self) -> None:
        """The backtrace's cells fitted again to the table's new width."""
        if self.frames:
            self._show_frames(self.query_one("#dbg-frames", DataTable).cursor_row)

    def _origin(self, frame: Frame, regnum: int) -> str:
        """Where the caller's register came from, in a word or two."""
        if frame.signal:
            return "signal frame"
        if frame.fallback:
            return frame.heuristic
        what = self.machine.what(regnum)
        if any(comp.what == what for comp in frame.computations):
            return f"{what} rule"
        return "CFA" if regnum == self.machine.sp else "return address"

    def _instruction(self, pc: int) -> str:
        """`  the instruction at pc: callq 0x1160`, from the core's memory (or the program file), or ""."""

        def read(address: int, size: int) -> bytes | None:
            code = self.memory.bytes_at(address, size)
            elf = self.explorer.doc.elf
            if code is None and elf is not None:
                code = loaded_code(elf, (address - self.unwinder.modules[0].bias) & ADDRESS_MASK, size)
            return code

        found = instruction_at(self.machine.abi, read, pc)
        return f"  the instruction at pc: {found}\n" if found else ""

    @staticmethod
    def _places(frame: Frame) -> Text:
        """Where the debug information says the frame is: each function holding its PC, innermost (inlined)
        first, at its line (`inlined: step () at inline.c:11`), whether or not the backtrace lists them."""
        out = Text()
        for place in [] if frame.signal else frame.source()[0]:
            where = f" at {place.file}:{place.line}" if place.file and place.line else ""
            out.append(f"  {'inlined: ' if place.inlined else 'in '}{demangle(place.function)} (){where}\n")
        return out

    def _explain(self, frame: Frame | None, index: int = 0) -> None:
        """A step in full: what was looked up, each value worked out, the caller's registers. Without a
        step (`frame` None), frame `index` as it is, before its caller is found."""
        out = Text()
        if frame is None:
            top = self.frames[index] if index < len(self.frames) else None
            if top is not None:
                name = demangle(self.unwinder.name_at(top.pc, top.lookup_pc))
                out.append(f"Frame #{self._number(top)} at {top.pc:#x} {name}\n", style="bold")
                out.append_text(self._places(self._placed(top)))
                out.append(self._instruction(top.pc))
                for regnum in (self.machine.sp, self.machine.fp, self.machine.ra):
                    if regnum in top.registers:
                        out.append(f"  {self.machine.name(regnum)} = {top.registers[regnum]:#x}\n")
                out.append("\nspace: find its caller, step by step")
            out.plain = pictured(out.plain)  # names and paths from the files: one character for one, styles kept
            self.query_one("#dbg-explain", Static).update(out)
            return
        title = "<signal handler called>" if frame.signal else demangle(frame.name())
        out.append(f"Frame #{self._number(frame)} at {frame.pc:#x} {title}\n", style="bold")
        out.append_text(self._places(frame))
        out.append(self._instruction(frame.pc))
        if frame.lookup_pc != frame.pc:
            out.append(f"  looked up at PC - 1 = {frame.lookup_pc:#x}: a return address points after its call\n")
        elif frame.interrupted:
            out.append("  looked up at PC itself: the instruction the signal interrupted, not a return address\n")
        func, row = frame.function, frame.row
        if func is not None and frame.module is not None and frame.module.section is not None:
            data = frame.module.section.data
            out.append(f"  FDE fdes[{func.index}] at section offset {func.span.start:#x}", style="cyan")
            out.append(f" ({frame.module.name}: {func.start_address + frame.module.bias:#x}, {func.size} bytes)\n")
            if row is not None:
                out.append(f"  FRE {row.index} at section offset {row.span.start:#x}", style="cyan")
                out.append(f": bytes {data[row.span.start : row.span.end].hex(' ')}\n")
        if frame.lookup:
            out.append(f"  {frame.lookup}\n")
        out.append("\n")
        for comp in frame.computations:
            out.append(f"  {comp.what} = {comp.formula}\n", style="bold")
            out.append(f"    {comp.text}\n")
        caller = self.frames[frame.number + 1] if len(self.frames) > frame.number + 1 else None
        if caller is not None:
            out.append(f"\nThe caller, frame #{self._number(caller)}:\n", style="bold")
            origin = "the saved PC" if frame.signal else "RA"
            out.append(
                f"  pc = {origin} = {caller.pc:#x} {demangle(self.unwinder.name_at(caller.pc, caller.lookup_pc))}\n"
            )
            changed, carried = frame.changed(caller)
            for regnum, value in sorted(changed.items()):
                out.append(f"  {self.machine.name(regnum)} = {value:#x}  ({self._origin(frame, regnum)})\n")
            if carried:
                names = ", ".join(self.machine.name(regnum) for regnum in carried)
                out.append(f"  the same as in frame #{self._number(frame)}: {names}\n", style="dim")
        elif self.stop:
            out.append(f"\nstopped: {self.stop}\n", style="yellow")
        if self.with_dwarf:
            out.append_text(self._dwarf_check(frame))
        out.plain = pictured(out.plain)
        self.query_one("#dbg-explain", Static).update(out)
