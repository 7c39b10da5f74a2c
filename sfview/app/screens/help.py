"""The help screen (`?`): the keys, what every column and notation means, and the section's records.

What it says of the format is said for the section at hand: the notation
the FRE table can show in its version (`notation.notation`), and the fields
of its FDEs and FREs with the docs `sframe.ksy` gives them, less what they
say of other versions (`format_docs.for_version`).
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from sfview.app import format_docs, notation
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe_docs import TYPES
from sfview.sframe.model import terms
from sfview.sframe.model.section import Section

__all__ = ["HelpScreen", "help_text"]

INTRO = """\
# sfview

An SFrame section tells an unwinder, for every address of every function, how to
find the caller's frame: the **CFA** (canonical frame address, the stack pointer
before the call), and where the caller's **FP** (frame pointer) and **RA** (return
address) were saved. Each function has an **FDE** (function descriptor entry) and
a list of **FREs** (frame row entries): each row holds from its start address up
to the next row's.

Everything is linked: choosing a function, a row or a tree node highlights its
bytes in the hex pane (alternate shades mark where each field starts; the pane's top
line names the byte columns, `00` to `0f`); moving the hex cursor selects the
innermost field at that byte, opens the tree down to it, and names it on the status
line. Columns are as wide as their widest value; on a narrow screen the `symbol`
column gives up width first.
"""

KEYS = (
    ("`q`", "quit"),
    ("`?`", "this help (`escape` closes it)"),
    ("`g`", "go to an address: the function an unwinder would use for that PC, and its row"),
    ("`s`", "go to a symbol: type part of a name, pick a match"),
    ("`o`", "go to a section offset: the field that holds that byte"),
    ("`n` / `p`", "next / previous function (in the FDE table's order)"),
    (
        "`/`",
        "filter the functions: words that must all hold, each a part of a name (any case) or one of"
        " `pcmask`, `flex` (version 3 flexible FDEs), `signal`, `key:a`, `key:b` and `problems`"
        " (what cannot be decoded, and what a check of the section found), `fails:NAME` (where consumer NAME's"
        " lookups fail: `fails:kernel`, judged if it is not yet); `enter` keeps the filter,"
        " `escape` clears it; the summary counts what is shown",
    ),
    (
        "`S` / `R`",
        "sort the functions by a column, picked with one key (`6`: frame) / the other way round; a click on a"
        " column's title"
        " sorts by that column, another click reverses (`▲` / `▼` mark it)",
    ),
    ("`[` / `]`", "back / forward through the places jumped to, as in a browser (also `alt+←` / `alt+→`, `ctrl+o`)"),
    (
        "`1` / `2` / `3` / `4`",
        "the *Functions* tab (FDE and FRE tables) / the *Structure* tab (tree and detail) / the *Frame* tab"
        " / the *Problems* tab (what a check of the section found; `!` too)",
    ),
    (
        "`v`",
        "the *Problems* tab through each consumer in turn: the format's own checks, then what the Linux"
        " kernel's reader (and each other profile) does with the section: its verdict on top, what its"
        " lookups do at each row's PCs in the FRE table (a column named after it: `ok`, `fails 7/8`,"
        " `fails all`, `crash`), its failing ranges listed (enter: the function and row), the PCs and its"
        " rule in the field detail",
    ),
    ("`V`", "keep the consumer shown marked while `v` goes on: several consumers' columns at once (again: drop it)"),
    ("`f`", "the *Frame* tab: the selected row's stack frame drawn to scale (`←` / `→` previous / next row), and back"),
    ("`x`", "the hex pane"),
    ("`/` (hex pane), `ctrl+f`", 'search the bytes: hex (`e2 de`, `e2de`) or text in quotes (`"main"`)'),
    ("`n` / `N` (hex pane)", "next / previous match of the search"),
    ("`c`", "copy the selected value (a structure's bytes)"),
    ("`C`", "copy the row of the focused table, else the selected field's path"),
    ("`z`", "zoom the focused pane to the whole screen, and back"),
    ("`u`", "the unwinding debugger (below): walk a stack frame by frame"),
    (
        "`i`",
        "the selected function's instructions (Capstone) in place of its rows, each on the row that holds it;"
        " `▶` marks a row's first instruction with what the row changed (`CFA sp+8 → sp+16`): the instruction"
        " just above it made the row. `i` again: the rows",
    ),
    ("`d`", "DWARF CFI beside each row of the FRE table: `=` where `.eh_frame` says the same, else what it says"),
    (
        "`e`",
        "edit the selected field (from the Structure tab) or, from the hex pane, the byte under the cursor: a"
        " number by the rule below, an enum by name (`addr4`), a flags byte by its flags (`fde_sorted|frame_pointer`);"
        " the section is decoded again and every pane, check, verdict and the debugger's walk follow",
    ),
    (
        "`m`",
        "the minimap: the whole section in a column at the right, by part (header, FDEs, FREs), `!` where a check"
        " found a problem, `◀` the selection; a click or `up`/`down` goes there. Meanwhile every kind of field has"
        " its colour in the bytes, the tree and the tables' titles (every `func_size` alike)",
    ),
    ("`E`", "the edits made, oldest first (`enter`: go to one's bytes)"),
    ("`ctrl+z` / `ctrl+y`", "undo the last edit / make it again"),
    ("`w`", "write the file with the edits to a copy (over the file itself only when asked twice)"),
    ("`tab` / `shift+tab`", "move between panes"),
    ("`ctrl+p`", "command palette: every command; a hex number or part of a name typed there goes to it"),
    ("arrows, `pageup` / `pagedown`, `home` / `end`", "move in the focused pane"),
    ("`enter` / click", "open or close a tree node"),
    (
        "numbers",
        "everywhere (`g`, `o`, the debugger's boxes and prompts, `--regs`, `--mem`, `--bias`): hex, with or"
        " without `0x` (`1080` is 0x1080); decimal with a trailing dot (`16.`); names and registers added up"
        " (`main+0x34`, `sp+8`, `$rsp-16.`); a C++ function by either name (`ns::f(int)`, `_ZN2ns1fEi`)",
    ),
)

FDE_COLUMNS = (
    ("`#`", "the FDE's index in the section"),
    ("`start`, `end`", "the function's address range (end excluded)"),
    ("`size`", "its size in bytes"),
    ("`symbol`", "its name, from the symbol table (in a `.o`, from the relocation)"),
    ("`FREs`", "how many rows it has"),
    ("`frame`", "its frame size: the largest CFA offset over its rows (`sp+48` at its deepest: 48)"),
    ("`FRE type`", "width of each row's start address: `ADDR1`, `ADDR2`, `ADDR4` (1, 2 or 4 bytes)"),
    ("`PC type`", "`PCINC`: rows match PC - start; `PCMASK`: rows match (PC - start) modulo a block size (PLT)"),
    ("`key`", "AArch64 pointer-authentication key (`A` or `B`) signing return addresses; unused elsewhere"),
    (
        "`notes`",
        "`signal` (a signal trampoline), `flexible` (version 3 flexible rules), `error` (the FDE or a row"
        " cannot be decoded, or a check found an error in it), `warning` (a check found something odd)",
    ),
)

NOTES_V3 = ("`notes`", "`signal` (a signal trampoline), `flexible` (flexible rules), `error` (cannot be decoded)")

FRE_COLUMNS = (
    ("`#`", "the row's index in its function"),
    ("`start`", "the first address the row covers; `[m]`: PCMASK, the row applies at that offset of every block"),
    ("`CFA`", "how to compute the CFA: `sp+16` is SP + 16, `fp+16` FP + 16, `(fp+48)` the word stored there"),
    ("`FP`, `RA`", "where the caller's value is (see the notation below)"),
    ("`base`", "the register the CFA is computed from (`sp` or `fp`)"),
    ("`offset size`", "bytes per stack offset in this row (1, 2 or 4)"),
    ("`mangled RA`", "the saved return address is signed (AArch64 pointer authentication)"),
    (
        "`bytes`",
        "the row's bytes as stored: start address, info byte, offsets (left out when the pane is too"
        " narrow: the hex pane highlights them)",
    ),
)

DEBUGGER = """\
## The unwinding debugger (`u`)

Walks a stack the way an unwinder does with SFrame: for each frame, the FDE of
the function holding the PC (the PC minus one for a frame that made a call), the
row that applies there, then the CFA, the return address and the caller's FP
worked out with real numbers. Start it on a core (`sfview PROG --core CORE`), on
registers (`sfview PROG --regs pc=…,sp=…,fp=…`), or type the registers at its
top (`main+0x34`, `7ffc1000`) and press `enter`: the keys go back to the walk.
Each frame shows the instruction at its PC. The backtrace reads as gdb's `bt`:
each function named from the debug information where there is some, `at
FILE:LINE`, each function inlined at a frame's PC a row of its own without an
address (`inlined`), numbered as gdb numbers them; the step pane's title keeps
the symbol and its offset (`leaf+0x11`). The memory pane lists the words the
steps read (from the core, the process, a sample's stack copy) and those given.

| key | does |
|---|---|
| `space` / `s` | find the caller of the last frame |
| `b` | back one frame |
| `r` | run to where the walk stops |
| `ctrl+r` | back to frame #0 |
| `m` | give a memory word (a step that needs one nobody gave asks for it; `m` then offers its address) |
| `↑` / `↓` | the backtrace's cursor: the step pane shows the step from the frame under it |
| `t` | a core's threads (when it has several), numbered as gdb numbers them: walk another |
| `d` | also work each step out with DWARF CFI (`.eh_frame`), and say whether it finds the same caller |
| `i` | the functions inlined at each frame's PC as rows (gdb's `bt`), or the physical frames only |
| `enter` | on a frame of the backtrace: the explorer on the FDE and row it was unwound with |
| `escape` | the explorer, on the FDE and row of the last step |
"""

STRUCTURE = """\
## The Structure tab

The tree shows every field with its value and what it means here; the detail
panel beside it explains the selected field: where it is, its bytes, its value in
decimal and hex, what the format says it is, and for an info byte, every bit.
"""

FRAME = """\
## The Frame tab (`f`)

The selected row's frame as a picture: the stack from the CFA (the SP before the
call) down to SP, one line per 8-byte slot, each slot named by its offset from the
CFA and from SP (or FP); the slots where the return address and the caller's FP
were saved; which registers point into the frame. When the CFA is computed from FP,
SP can be anywhere below: the frame's size is not known from the rules, and the
picture says so. Under it, what changed from the row before (`CFA offset 8 → 16:
push`), and the CFA offset of every row of the function as a sparkline.
"""


def _table(title: str, header: tuple[str, str], rows: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    """A Markdown table under a heading."""
    lines = [f"## {title}", "", f"| {header[0]} | {header[1]} |", "|---|---|"]
    lines += [f"| {left} | {_cell(right)} |" for left, right in rows]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text that stays in its Markdown table cell."""
    return text.replace("|", "\\|")


def _notation(section: Section) -> str:
    """The FRE table's notation, as this section's version and ABI can show it."""
    rows = [(f"`{n.symbol}`", n.long) for n in notation.notation(section)]
    title = f"Notation in this section (version {section.version}, {terms.abi_name(section.abi)})"
    return _table(title, ("symbol", "means"), rows)


def _fields(section: Section) -> str:
    """The fields of this version's FDEs and FREs, with the docs `sframe.ksy` gives them."""
    version = section.version
    parts = [f"## The records of a version {version} section", "", format_docs.type_doc("fde", version), ""]
    parts.append(_field_table("FDE fields", "fde", list(layout.FDE[version].fields), version))
    if version >= 3:
        parts += [format_docs.type_doc("fde_attr", version), ""]
        parts.append(_field_table("Attribute block fields", "fde_attr", list(layout.FDE_ATTR.fields), version))
    parts += [format_docs.type_doc("fre", version), ""]
    parts.append(_field_table("FRE fields", "fre", TYPES["fre"]["seq"], version))
    parts.append(_field_table("FRE info byte", "fre_info", TYPES["fre_info"]["seq"], version))
    return "\n".join(parts)


def _field_table(title: str, type_name: str, names: list[str], version: int) -> str:
    """One record's fields and their docs (fields whose doc is all about other versions left out)."""
    rows = [(f"`{name}`", format_docs.field_doc(type_name, name, version)) for name in names]
    lines = [f"**{title}**", "", "| field | what it is |", "|---|---|"]
    lines += [f"| {name} | {_cell(doc)} |" for name, doc in rows if doc]
    return "\n".join(lines) + "\n"


def help_text(section: Section | None) -> str:
    """The whole help, as Markdown, for `section` (None: a section that could not be read)."""
    parts = [INTRO, _table("Keys", ("key", "does"), KEYS)]
    if section is not None:
        fde_columns = FDE_COLUMNS[:-1] + ((NOTES_V3,) if section.version >= 3 else FDE_COLUMNS[-1:])
        parts.append(_table("The FDE table: one row per function", ("column", "meaning"), fde_columns))
        parts.append(_table("The FRE table: the rows of the chosen function", ("column", "meaning"), FRE_COLUMNS))
        parts.append(_notation(section))
        parts.append(_fields(section))
    parts += [FRAME, STRUCTURE, DEBUGGER]
    return "\n".join(parts)


class HelpScreen(ModalScreen[None]):
    """Keys, columns and notation, over the explorer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
        # The page scrolls whatever has focus inside it (a Markdown table takes keys of its own otherwise).
        Binding("down,j", "scroll('scroll_down')", "Down", show=False, priority=True),
        Binding("up,k", "scroll('scroll_up')", "Up", show=False, priority=True),
        Binding("pagedown,space", "scroll('scroll_page_down')", "Page down", show=False, priority=True),
        Binding("pageup", "scroll('scroll_page_up')", "Page up", show=False, priority=True),
        Binding("home", "scroll('scroll_home')", "Top", show=False, priority=True),
        Binding("end", "scroll('scroll_end')", "Bottom", show=False, priority=True),
    ]

    def __init__(self, section: Section | None = None) -> None:
        super().__init__()
        self.section = section

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(help_text(self.section))

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one("#help-body", VerticalScroll), how)(animate=False)
