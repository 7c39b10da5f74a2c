"""Function names, source lines and inline chains from DWARF `.debug_info` and `.debug_line`, as gdb reads them.

A `DebugInfo` answers for one file (its own DWARF, or its separate debug file's)
which functions hold an address, innermost inlined function first, each with
the source line it is at: what gdb prints as `#1  0x… in step (...) at inl.c:11`
followed by `#2  inner (...) at inl.c:19` for the function `step` was inlined
into. It is read lazily and bounded: the compilation unit covering an address
is found through `.debug_aranges` (else by the CUs' own ranges, read a header
and a DIE each), and only that CU's DIEs and line program are read, once, when
an address in it is first asked for: a frame in libc's `malloc` reads
`malloc.c`'s CU, never the rest of libc's debug information. Every failure of
pyelftools on damaged DWARF costs the names of that CU only (the frame is then
named from the symbol table, as without debug information).
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import struct
from array import array
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, NamedTuple

from elftools.dwarf.die import DIE
from elftools.dwarf.dwarfinfo import DebugSectionDescriptor, DWARFInfo

from sfview.dwarf.address_ranges import RangeLists
from sfview.dwarf.aranges import AddressTable, sorted_by_start
from sfview.dwarf.line_program import LineRows, check_header, line_rows
from sfview.dwarf.tail_calls import CallSite
from sfview.errors import InputError
from sfview.inputs.boundary import TerminatedStrings, reading
from sfview.inputs.demangle import demangle, without_parameters
from sfview.inputs.elf.image import ElfImage
from sfview.inputs.elf.pyelftools_view import ElfFile, SectionStream
from sfview.inputs.leb128 import leb128

MAX_DIES = 1 << 17
"""The DIEs of one compilation unit at most (the largest of a distribution's C libraries has some 8,000): a
DIE may be one byte, and parsing one costs pyelftools some 10 µs."""

MAX_HELD = 1 << 12
"""The DIEs a unit's listed children may hold whatever its size (each kept as its offset and the hull of its
ranges: three words)..."""
HELD_BYTES = 32
"""... and one more for every this many bytes of the unit: the scopes and call sites of a distribution's C
library are one in 27 bytes of a unit at most."""

FUNCTIONS = frozenset({"DW_TAG_subprogram"})
"""The DIEs that are functions (a unit's, with their ranges of code)."""
FUNCTIONS_INSIDE = frozenset(("DW_TAG_namespace", "DW_TAG_class_type", "DW_TAG_structure_type", "DW_TAG_subprogram"))
"""The DIEs among whose children (and the top DIE's) a unit's functions are looked for."""
REFERENCES = frozenset(
    {
        "DW_FORM_ref",
        "DW_FORM_ref1",
        "DW_FORM_ref2",
        "DW_FORM_ref4",
        "DW_FORM_ref8",
        "DW_FORM_ref_udata",
        "DW_FORM_ref_addr",
    }
)
"""The forms of a `DW_AT_sibling` pyelftools follows (the last one from the section's start, the others from
the unit's)."""

CALL_SITES = frozenset({"DW_TAG_call_site", "DW_TAG_GNU_call_site"})
"""A call in a function's code (DWARF 5's, and GCC's extension before it)."""
ALL_CALLS = (
    "DW_AT_call_all_calls",
    "DW_AT_GNU_all_call_sites",
    "DW_AT_call_all_tail_calls",
    "DW_AT_GNU_all_tail_call_sites",
)
"""A function's flags saying its call sites list all its tail calls: only those are searched through (gdb's rule)."""

ABBREV_SLACK = 1 << 16
"""The bytes of abbreviation tables read past the section's own size (tables that overlap), at most."""

MAX_OUTLINED = 1 << 14
"""The CUs `.debug_aranges` does not list that are looked through for an address, at most (libc leaves out 126)."""

MAX_PARSED = 1 << 10
"""The DIEs parsed again from their offsets that are kept, for the addresses asked next (a few kilobytes each)."""

SCOPES = frozenset({"DW_TAG_subprogram", "DW_TAG_inlined_subroutine", "DW_TAG_lexical_block"})
"""The DIEs an address's chain of functions descends through: functions, the inlined calls in them, and
the blocks holding those."""
LISTED = SCOPES | CALL_SITES
"""The children of a scope that are kept when listed."""
EVERYWHERE = (0, (1 << 64) - 1)
"""The hull of a listed scope whose ranges could not be read: looked at for every address (and refused then)."""


class SourceFrame(NamedTuple):
    """One function holding an address: its name as gdb prints it (the DIE's linkage name, else its name:
    `__GI___libc_malloc`), the source file and line it is at there (None when the line table says
    nothing), and whether it is an inlined call (printed as its own frame, without an address)."""

    function: str
    file: str | None
    line: int | None
    inlined: bool


class _Lines(NamedTuple):
    """A CU's line table: its rows (sorted by address), its file names, and the number of the first file
    (0 from DWARF 5 on, 1 before)."""

    rows: LineRows
    files: list[str | tuple[int, str]]
    """Each file's name as gdb shows it, or (its directory's index, its name) to be joined when asked for:
    joined at once, names sharing one long directory made a copy of it each."""
    directories: list[str]
    first_file: int


_NO_LINES = _Lines(LineRows(array("Q"), array("Q")), [], [], 1)
"""The line table of a CU that has none."""


_FIXED = {
    **dict.fromkeys(("DW_FORM_flag_present", "DW_FORM_implicit_const"), 0),
    **dict.fromkeys(("DW_FORM_data1", "DW_FORM_ref1", "DW_FORM_flag", "DW_FORM_strx1", "DW_FORM_addrx1"), 1),
    **dict.fromkeys(("DW_FORM_data2", "DW_FORM_ref2", "DW_FORM_strx2", "DW_FORM_addrx2"), 2),
    **dict.fromkeys(("DW_FORM_strx3", "DW_FORM_addrx3"), 3),
    **dict.fromkeys(("DW_FORM_data4", "DW_FORM_ref4", "DW_FORM_strx4", "DW_FORM_addrx4", "DW_FORM_ref_sup4"), 4),
    **dict.fromkeys(("DW_FORM_data8", "DW_FORM_ref8", "DW_FORM_ref_sig8", "DW_FORM_ref_sup8"), 8),
    "DW_FORM_data16": 16,
}
"""The forms of a fixed size, in bytes."""
_OFFSETS = frozenset(
    ("DW_FORM_strp", "DW_FORM_line_strp", "DW_FORM_sec_offset", "DW_FORM_strp_sup", "DW_FORM_GNU_ref_alt",
     "DW_FORM_GNU_strp_alt")
)  # fmt: skip
"""The forms of a section offset's size (4 bytes in 32-bit DWARF, 8 in 64-bit)."""
_LEB, _STRING, _BLOCK = -1, -2, -3
_VARIABLE = {
    **dict.fromkeys(
        (
            "DW_FORM_udata",
            "DW_FORM_sdata",
            "DW_FORM_ref_udata",
            "DW_FORM_strx",
            "DW_FORM_addrx",
            "DW_FORM_loclistx",
            "DW_FORM_rnglistx",
            "DW_FORM_GNU_addr_index",
            "DW_FORM_GNU_str_index",
        ),
        (_LEB, 0),
    ),
    "DW_FORM_string": (_STRING, 0),
    "DW_FORM_block1": (_BLOCK, 1),
    "DW_FORM_block2": (_BLOCK, 2),
    "DW_FORM_block4": (_BLOCK, 4),
    "DW_FORM_block": (_BLOCK, 0),
    "DW_FORM_exprloc": (_BLOCK, 0),
}
"""The forms of a size their bytes say: a LEB128 number, a string to its NUL, a block after its length (of 1, 2
or 4 bytes, 0: a LEB128 number)."""


class _Layouts:
    """Where the DIE after one starts, from its abbreviation's forms alone, its attributes passed over unparsed
    (pyelftools parses each value: a pass over a unit's DIEs to find where their children end needs only
    their sizes, tags and whether they have children). A form it does not know (`DW_FORM_indirect`, a
    vendor's) leaves that DIE to pyelftools (`after` says None), as does an abbreviation code the unit's
    table lacks (pyelftools' error is then the unit's)."""

    def __init__(self, cu: Any, contents: bytes) -> None:
        self.table = cu.get_abbrev_table()
        self.data = contents
        self.little = cu.dwarfinfo.config.little_endian
        address = cu["address_size"]
        offset = 8 if cu.structs.dwarf_format == 64 else 4
        self.sizes = {**_FIXED, **dict.fromkeys(_OFFSETS, offset), "DW_FORM_addr": address}
        self.sizes["DW_FORM_ref_addr"] = offset if cu["version"] >= 3 else address
        self.known: dict[int, tuple[str, bool, tuple[tuple[int, int, int], ...]] | None] = {}

    def _layout(self, code: int) -> tuple[str, bool, tuple[tuple[int, int, int], ...]] | None:
        """An abbreviation's tag, whether it has children, and its attributes as steps: a run of fixed bytes,
        then a form whose bytes say its size (its kind and the size of its length, `_VARIABLE`; the last
        step's kind 0: none)."""
        try:
            decl = self.table.get_abbrev(code)
        except KeyError:
            return None
        steps, fixed = [], 0
        for spec in decl["attr_spec"]:
            size = self.sizes.get(spec.form)
            if size is not None:
                fixed += size
                continue
            variable = _VARIABLE.get(spec.form)
            if variable is None:
                return None
            steps.append((fixed, *variable))
            fixed = 0
        steps.append((fixed, 0, 0))
        return decl["tag"], decl.has_children(), tuple(steps)

    def after(self, position: int) -> tuple[int, str | None, bool] | None:
        """Where the DIE at `position` ends, its tag (None: the null DIE that ends a DIE's children) and whether
        it has children; None where pyelftools is to read it (and to say what is wrong: a DIE past the
        section's end)."""
        try:
            return self._after(position)
        except IndexError:
            return None

    def _after(self, position: int) -> tuple[int, str | None, bool] | None:
        data = self.data
        code, position = leb128(data, position, False)
        if code == 0:
            return position, None, False
        layout = self.known.get(code, False)
        if layout is False:
            layout = self.known[code] = self._layout(code)
        if layout is None:
            return None
        tag, children, steps = layout
        for fixed, kind, width in steps:
            position += fixed
            if kind == _LEB:
                while data[position] >= 0x80:
                    position += 1
                position += 1
            elif kind == _STRING:
                position = data.find(b"\0", position) + 1
                if not position:
                    return None
            elif kind == _BLOCK:
                if width:
                    length = int.from_bytes(data[position : position + width], "little" if self.little else "big")
                    position += width
                else:
                    length, position = leb128(data, position, False)
                position += length
        return position, tag, children


class _Tree:
    """Where a unit's DIEs and their children are, read forward only: the end of a DIE's children from its
    `DW_AT_sibling` or from one pass over the unit (`scan`), DIEs parsed as reached and not kept."""

    def __init__(self, info: Any, cu: Any) -> None:
        self.cu = cu
        self.end = cu.cu_offset + cu.size
        self.stream = info.debug_info_sec.stream
        self.opened: array | None = None
        """The offsets in the unit of the DIEs with children, in order (`scan`); `closed` where each one's
        children end."""
        self.closed = array("Q")
        self.offsets: dict[int, array] = {}
        """By DIE offset, the offsets of the children of the scopes `ancestors` went through."""

    def scan(
        self,
        visit: Callable[[Any], None] | None = None,
        into: frozenset[str] = frozenset(),
        given: frozenset[str] = frozenset(),
    ) -> None:
        """Where the children of every DIE that has some end, in one pass over the unit's DIEs (`MAX_DIES` at
        most), each DIE passed over by its abbreviation's forms (`_Layouts`), not parsed: pyelftools finds the
        end of children without a `DW_AT_sibling` by reading them recursively and holds every DIE it parses (a
        unit of nested blocks ran out of recursion, then held a kilobyte a DIE); here a DIE with children
        costs three offsets in the unit.

        `visit`, in the same pass, is given (parsed) each DIE whose tag is in `given` among those reached:
        each child of the top DIE and each child of a reached DIE whose tag is in `into`, what walking down
        from the top DIE by `each_child` would reach, without reading the unit a second time (`_Unit`'s
        functions)."""
        words = "I" if self.cu.size < 1 << 32 else "Q"
        opened, closed, pending = array(words), array(words), array(words)
        entered = bytearray()  # for each DIE whose children are being read: whether they are reached (a byte)
        base, position, count = self.cu.cu_offset, self.cu.cu_die_offset, 0
        layouts = _Layouts(self.cu, self.stream.contents)
        while position < self.end:
            count += 1
            if count > MAX_DIES:
                raise InputError(f"a compilation unit of more than {MAX_DIES} DIEs: sfview reads {MAX_DIES} at most")
            found = layouts.after(position)
            if found is None:  # a form passed over by pyelftools alone
                die = DIE(self.cu, self.stream, position)
                found = (die.offset + die.size, None if die.is_null() else die.tag, die.has_children)
            following, tag, children = found
            if tag is None:
                position = following
                if pending:
                    closed[pending.pop()] = position - base
                    entered.pop()
                continue
            reached = visit is not None and bool(entered) and entered[-1] == 1
            if reached and tag in given:
                visit(DIE(self.cu, self.stream, position))  # type: ignore[misc]
            if children:
                pending.append(len(opened))
                opened.append(position - base)
                closed.append(self.end - base)  # children that run to the unit's end end there
                entered.append(count == 1 or (reached and tag in into))
            position = following
        self.opened, self.closed = opened, closed

    def after(self, die: Any) -> int:
        """Where the DIE after `die` and its children starts: its `DW_AT_sibling` where that points past it
        and within the unit (a sibling pointing back made pyelftools list one child for ever), else where
        the scan found its children end."""
        if not die.has_children:
            return die.offset + die.size
        sibling = die.attributes.get("DW_AT_sibling")
        if sibling is not None and sibling.form in REFERENCES:
            target = sibling.value + (0 if sibling.form == "DW_FORM_ref_addr" else self.cu.cu_offset)
            if die.offset + die.size <= target <= self.end:
                return target
        if self.opened is None:
            self.scan()
        assert self.opened is not None
        inside = die.offset - self.cu.cu_offset
        at = bisect.bisect_left(self.opened, inside)
        if at == len(self.opened) or self.opened[at] != inside:
            raise InputError(f"the DIE at {die.offset:#x} is not where the unit's DIEs start")
        return self.cu.cu_offset + self.closed[at]

    def each_child(self, die: Any) -> Iterator[Any]:
        """A DIE's children, without the null one that ends them, each parsed as reached and not kept (its
        parent set): the walk moves forward only, so its work is the children's bytes."""
        if not die.has_children:
            return
        position = die.offset + die.size
        while position < self.end:
            child = DIE(self.cu, self.stream, position)
            if child.is_null():
                return
            child.set_parent(die)
            yield child
            position = self.after(child)

    def ancestors(self, die: Any) -> list[Any]:
        """The DIEs `die` is inside, the innermost first (empty where the descent does not meet it), found by
        one descent from the top DIE, a DIE parsed a level, among each scope's children's offsets (listed once
        per scope): pyelftools' `get_parent` read the unit's DIEs recursively."""
        path, scope = [], self.cu.get_top_DIE()
        while True:
            path.append(scope)
            offsets = self.offsets.get(scope.offset)
            if offsets is None:
                offsets = self.offsets[scope.offset] = array("Q", (child.offset for child in self.each_child(scope)))
            at = bisect.bisect_right(offsets, die.offset) - 1
            if at < 0:
                return []
            if offsets[at] == die.offset:
                return path[::-1]
            scope = DIE(self.cu, self.stream, offsets[at])
            scope.set_parent(path[-1])


class _Children:
    """The listed children of one DIE (`_Unit._children`), in order: where each is, and for the scopes the
    hull [low, high) of its ranges ((0, 0) for the call sites), so that an address's chain parses only the
    children that may hold it: three words a child, where pyelftools' DIE kept was hundreds of bytes."""

    def __init__(self) -> None:
        self.offsets = array("Q")
        self.lows, self.highs = array("Q"), array("Q")

    def add(self, offset: int, hull: tuple[int, int]) -> None:
        self.offsets.append(offset)
        self.lows.append(min(hull[0], EVERYWHERE[1]))
        self.highs.append(min(hull[1], EVERYWHERE[1]))


class _Unit:
    """One CU, read when first asked for: its functions' address ranges (sorted); the DIEs inside a function
    only as an address's chain descends into them (pyelftools passes over a DIE's children by its
    `DW_AT_sibling`), and the line table's rows (sorted by address) and file names only when a line is
    asked for (`sfview perf` names frames without their lines)."""

    def __init__(self, info: Any, lists: RangeLists, cu: Any, parsed: dict[int, Any]) -> None:
        self.info, self.lists, self.cu, self.parsed = info, lists, cu, parsed
        self.whole = False
        self.listed: dict[int, _Children] = {}
        """By DIE offset, the children of the DIEs asked for (`_children`)."""
        self.held = MAX_HELD + cu.size // HELD_BYTES
        """How many more DIEs the listed children may hold."""
        self.tree = _Tree(info, cu)
        top = cu.get_top_DIE()
        self.base = _attribute(top, "DW_AT_low_pc") or 0
        self.cplusplus = _attribute(top, "DW_AT_language") in CPLUSPLUS
        self.starts, self.ends, self.offsets = array("Q"), array("Q"), array("Q")
        """Each range of each function with code, sorted by start: its start, end and the function's DIE."""
        # One pass over the unit: where each DIE's children end (`MAX_DIES` at most), and the functions. Walking
        # down from the top DIE by `DW_AT_sibling` reads fewer DIEs, but a DIE with children and no sibling
        # (the last of a level, as gcc writes them) needs that pass anyway: most units were read twice.
        self.tree.scan(self._function, FUNCTIONS_INSIDE, FUNCTIONS)
        self.starts, self.ends, self.offsets = sorted_by_start(self.starts, self.ends, self.offsets)
        self._lines: _Lines | None = None
        self._sites: dict[int, CallSite] | None = None
        self._tails: dict[int, list[CallSite]] = {}

    def lines(self) -> _Lines:
        """The line table, read when first asked for; none where it cannot be read (the unit's functions are
        still named)."""
        if self._lines is None:
            self._lines = _NO_LINES
            with contextlib.suppress(InputError), reading("the line table"):
                stmt_list = _attribute(self.cu.get_top_DIE(), "DW_AT_stmt_list")
                if stmt_list is not None and self.info.debug_line_sec is not None:
                    order = "<" if self.info.config.little_endian else ">"
                    check_header(self.info.debug_line_sec.stream.contents, stmt_list, order)
                program = self.info.line_program_for_CU(self.cu)
                self._lines = self._read_lines(program) if program is not None else _NO_LINES
            self.info._linetable_cache.clear()  # pyelftools' header, an object an entry: the unit keeps its own
        return self._lines

    def die(self, offset: int) -> Any:
        """The DIE at `offset` in `.debug_info`: the unit keeps offsets, not DIEs, and parses them again as
        asked, the last `MAX_PARSED` of the file kept (addresses of one function ask for the same ones)."""
        found = self.parsed.get(offset)
        if found is None or found.cu is not self.cu:
            if len(self.parsed) >= MAX_PARSED:
                self.parsed.clear()
            found = self.parsed[offset] = DIE(self.cu, self.tree.stream, offset)
        return found

    def _children(self, die: Any) -> _Children:
        """A DIE's children that are scopes or call sites (what an address's chain and a function's calls look
        through), listed once and kept (an address's chain passes through them again); all the listed children
        together at most `MAX_HELD` and one for every `HELD_BYTES` of the unit."""
        found = self.listed.get(die.offset)
        if found is None:
            found = _Children()
            hulls: dict[int, Any] = {}  # by list: children sharing one long range list
            for child in self.tree.each_child(die):
                if child.tag not in LISTED:
                    continue
                self.held -= 1
                if self.held < 0:
                    raise InputError(f"the children of the DIE at {die.offset:#x}: more DIEs than sfview keeps")
                found.add(child.offset, self._hull(child, hulls) if child.tag in SCOPES else (0, 0))
            self.listed[die.offset] = found
        return found

    def _hull(self, die: Any, hulls: dict[int, Any]) -> tuple[int, int]:
        """The lowest start and the highest end of a scope's ranges ((0, 0): none), `EVERYWHERE` where they
        cannot be read (the chain reads them again when it reaches the scope, and fails as it did)."""
        try:
            ranges = self.ranges(die)
        except InputError:
            return EVERYWHERE
        if not ranges:
            return 0, 0
        if len(ranges) == 1:
            return ranges[0]
        kept = hulls.get(id(ranges))  # a list `RangeLists` keeps (and the entry too): its id is its own
        if kept is None:
            kept = hulls[id(ranges)] = (ranges, (min(start for start, _ in ranges), max(end for _, end in ranges)))
        return kept[1]

    def _function(self, die: Any) -> None:
        """A subprogram's ranges of code, kept with its offset: every subprogram with code, also those nested in
        namespaces, classes and other subprograms, is given (`_Tree.scan`)."""
        for start, end in self.ranges(die):
            self.starts.append(start)
            self.ends.append(end)
            self.offsets.append(die.offset)

    def _read_lines(self, program: Any) -> _Lines:
        """The line table's rows and file names, the names as gdb shows them: a file's directory joined
        to its name (from DWARF 5 on, directory 0 is the CU's own and is joined too), except that the file
        which is the CU's own (the same path once both are joined to `DW_AT_comp_dir`) keeps the CU's
        `DW_AT_name` (`inl.c`, where the directory is absolute; `./malloc/malloc.c`, where it is not)."""
        header, top = program.header, self.cu.get_top_DIE()
        version = header["version"]
        directories = [_text(d) for d in header["include_directory"]]
        own, home = _text(_attribute(top, "DW_AT_name") or ""), _text(_attribute(top, "DW_AT_comp_dir") or "")

        def for_id(name: str) -> str:
            return name if os.path.isabs(name) or not home else f"{home}/{name}"

        files: list[str | tuple[int, str]] = []
        for entry in header["file_entry"]:
            name, index = _text(entry.name), entry.dir_index if version >= 5 else entry.dir_index - 1
            if 0 <= index < len(directories) and not os.path.isabs(name):
                joined = f"{directories[index]}/{name}"
                files.append(own if own and for_id(joined) == for_id(own) else (index, name))
            else:
                files.append(own if own and for_id(name) == for_id(own) else name)
        return _Lines(line_rows(program), files, directories, 0 if version >= 5 else 1)

    def file(self, number: int | None) -> str | None:
        """The name of the line table's file `number` (numbered from 0 in DWARF 5, from 1 before)."""
        if number is None:
            return None
        _, files, directories, first = self.lines()
        index = number - first
        if not 0 <= index < len(files):
            return None
        found = files[index]
        return found if isinstance(found, str) else f"{directories[found[0]]}/{found[1]}"

    def line_at(self, address: int) -> tuple[str | None, int | None, bool]:
        """The file and line holding `address`, and whether a line starts exactly there (a row gdb records,
        a statement's, where gdb prints a frame without its address)."""
        rows = self.lines().rows
        addresses = rows.addresses
        at = bisect.bisect_right(addresses, address) - 1
        if at < 0 or rows.ends(at):
            return None, None, False
        first = bisect.bisect_left(addresses, address)
        # of rows at one address, the last; gdb goes back from one that is not a statement to the last
        # that is, at the same address
        back = at
        while not rows.is_stmt(back) and back > 0 and addresses[back - 1] == addresses[at]:
            back -= 1
        row = back if rows.is_stmt(back) else at
        starts = any(rows.is_stmt(i) and rows.recorded(i) for i in range(first, at + 1))
        return self.file(rows.file(row)), rows.line(row) or None, starts

    def ranges(self, die: Any) -> list[tuple[int, int]]:
        """A DIE's address ranges [start, end) in this CU (`_ranges`; a list is read once, by `RangeLists`)."""
        return _ranges(self.lists, self.cu, self.base, die)

    def chain(self, address: int) -> list[Any]:
        """The subprogram holding `address` and the inlined calls inside it down to the innermost, outermost
        first; empty when no function of this CU holds it."""
        at = bisect.bisect_right(self.starts, address) - 1
        # the latest start that holds it (a function's ranges may enclose another's: the CU's functions
        # are looked through at most once)
        holding = (i for i in range(at, -1, -1) if self.starts[i] <= address < self.ends[i])
        found = next(holding, None)
        if found is None:
            return []
        die = self.die(self.offsets[found])
        chain, scope = [die], die
        while True:
            inner = self._inner(scope, address)
            if inner is None:
                return chain
            if inner.tag == "DW_TAG_inlined_subroutine":
                chain.append(inner)
            scope = inner

    def _inner(self, scope: Any, address: int) -> Any:
        """The first of a scope's listed children that is a scope holding `address`; None if none is."""
        children = self._children(scope)
        for i, offset in enumerate(children.offsets):
            if children.lows[i] <= address < children.highs[i]:
                child = self.die(offset)
                if self._holds(child, address):
                    child.set_parent(scope)
                    return child
        return None

    def _holds(self, die: Any, address: int) -> bool:
        return any(start <= address < end for start, end in self.ranges(die))

    def entry(self, die: Any) -> int | None:
        """Where a function with code is entered (gdb's `entry_pc`: its first range's start)."""
        ranges = self.ranges(die)
        return ranges[0][0] if ranges else None

    def call_sites(self) -> tuple[dict[int, CallSite], dict[int, list[CallSite]]]:
        """The CU's call sites by their address (the return address), and each function's tail calls by its
        entry, for the functions that list all their calls, in gdb's order (the last in the DIEs first);
        read when first asked for."""
        if self._sites is None:
            self._sites = {}
            seen = bytearray(self.cu.size)  # one function's ranges are each listed
            for offset in self.offsets:
                if seen[offset - self.cu.cu_offset]:
                    continue
                seen[offset - self.cu.cu_offset] = 1
                function = self.die(offset)
                entry = self.entry(function)
                complete = any(_attribute(function, flag) for flag in ALL_CALLS)
                for site in self._calls_in(function):
                    self._sites[site.pc] = site
                    if site.tail and complete and entry is not None:
                        self._tails.setdefault(entry, []).insert(0, site)
        return self._sites, self._tails

    def _calls_in(self, function: Any) -> list[CallSite]:
        """The call sites in a function's code (in its blocks and the calls inlined in it, not in the
        functions nested in it)."""
        out, pending = [], self._listed(function)
        while pending:
            die = self.die(pending.pop(0))
            if die.tag in CALL_SITES:
                pc = _attribute(die, "DW_AT_call_return_pc")
                pc = _attribute(die, "DW_AT_low_pc") if pc is None else pc
                if pc is not None:
                    tail = bool(_attribute(die, "DW_AT_call_tail_call") or _attribute(die, "DW_AT_GNU_tail_call"))
                    out.append(CallSite(pc, tail, *self._target(die)))
            elif die.tag in ("DW_TAG_lexical_block", "DW_TAG_inlined_subroutine"):
                pending[:0] = self._listed(die)
        return out

    def _listed(self, die: Any) -> list[int]:
        """The offsets of a DIE's listed children, in order (a copy: the listing is kept)."""
        return list(self._children(die).offsets)

    def _target(self, site: Any) -> tuple[int | None, str | None]:
        """The entry of the function a call site calls, as gdb finds it: where its DIE is a function with
        code, its lowest address; where it is a declaration, its linkage name (else, in C, its name), for the
        symbols of the process's files to find (`ProcessCallSites`); (None, None) for a call through a
        register, or one gdb finds no symbol for."""
        if any(key in site.attributes for key in ("DW_AT_call_target", "DW_AT_GNU_call_site_target")):
            return None, None
        key = next((k for k in ("DW_AT_call_origin", "DW_AT_abstract_origin") if k in site.attributes), None)
        if key is None:
            return None, None
        target = site.get_DIE_from_attribute(key)
        if _attribute(target, "DW_AT_declaration"):
            # gdb's physname: the linkage name; else, in C++, the name with its parameters' types, which no
            # symbol has (an `extern "C"` function declared in C++): then the target is not known
            keys = ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name") + (() if self.cplusplus else ("DW_AT_name",))
            name = next((_text(target.attributes[k].value) for k in keys if k in target.attributes), None)
            return None, name
        base = self.base if target.cu is self.cu else _attribute(target.cu.get_top_DIE(), "DW_AT_low_pc") or 0
        ranges = _ranges(self.lists, target.cu, base, target)
        return (min(start for start, _ in ranges) if ranges else None), None


def _ranges(lists: RangeLists, cu: Any, base: int, die: Any) -> list[tuple[int, int]]:
    """The address ranges [start, end) of a DIE's code: `DW_AT_low_pc`/`DW_AT_high_pc`, or `DW_AT_ranges`
    (`base`: the CU's base address, for the lists' offsets)."""
    attrs = die.attributes
    if "DW_AT_low_pc" in attrs and "DW_AT_high_pc" in attrs:
        low, high = attrs["DW_AT_low_pc"].value, attrs["DW_AT_high_pc"]
        end = high.value if high.form == "DW_FORM_addr" else low + high.value
        return [(low, end)] if end > low else []
    if "DW_AT_ranges" not in attrs:
        return []
    return lists.at(cu, base, _ranges_offset(cu, attrs["DW_AT_ranges"]))


def _attribute(die: Any, name: str) -> Any:
    attr = die.attributes.get(name)
    return attr.value if attr is not None else None


def _ranges_offset(cu: Any, attr: Any) -> int:
    """`DW_AT_ranges` as an offset into `.debug_ranges`/`.debug_rnglists`: an index (`DW_FORM_rnglistx`) read
    through the CU's `DW_AT_rnglists_base` table."""
    if attr.form != "DW_FORM_rnglistx":
        return attr.value
    top = cu.get_top_DIE()
    base = _attribute(top, "DW_AT_rnglists_base") or 0
    info = cu.dwarfinfo
    stream = info.debug_rnglists_sec.stream
    size = 8 if cu.structs.dwarf_format == 64 else 4
    stream.seek(base + attr.value * size)
    return base + int.from_bytes(stream.read(size), "little" if info.config.little_endian else "big")


def _text(value: Any) -> str:
    """A name's text; "??" (gdb's word for what is not known) where its string could not be read."""
    if value is None:
        return "??"
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


CPLUSPLUS = frozenset({0x4, 0x1A, 0x21, 0x2A, 0x2B, 0x33})
"""`DW_AT_language` codes of C++ (C++, C++03, C++11, C++14, C++17, C++20)."""

SCOPE_NAMES = frozenset({"DW_TAG_namespace", "DW_TAG_class_type", "DW_TAG_structure_type", "DW_TAG_union_type"})
"""The DIEs whose names qualify a C++ function's (`ns::Klass::method`)."""


def _name(die: Any, cplusplus: bool, ancestors: Callable[[Any], list[Any]]) -> str | None:
    """gdb's name for a function's DIE, found through the DIE it is an inlined or out-of-line instance of
    (`DW_AT_abstract_origin`) or the declaration it completes (`DW_AT_specification`): in C, its linkage
    name, else its name (`__GI___libc_malloc`); in C++, its name qualified by its namespaces and classes
    (`ns::thrower`, from the scopes `ancestors` gives), as gdb prints a frame (without the parameter types a
    demangled name has) -- except where the linkage name demangles with an ABI tag (`name_of[abi:cxx11](int)`):
    gdb's C++ name parser cannot take the tag off with the parameters, and gdb prints the demangled name whole."""
    keys = ("DW_AT_name",) if cplusplus else ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_name")
    linkage = None
    for _ in range(8):  # a chain of origins is short; a damaged one may loop
        if cplusplus and linkage is None:
            linkage = next((_text(die.attributes[k].value) for k in LINKAGE if k in die.attributes), None)
        key = next((k for k in keys if k in die.attributes), None)
        if key is not None:
            name = _text(die.attributes[key].value)
            if not cplusplus:
                return name
            tagged = demangle(linkage) if linkage is not None else ""
            return tagged if "[abi:" in tagged and "<" not in tagged else _qualified(name, ancestors(die))
        origin = next((k for k in ("DW_AT_abstract_origin", "DW_AT_specification") if k in die.attributes), None)
        if origin is None:
            return None
        die = die.get_DIE_from_attribute(origin)
    return None


LINKAGE = ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name")
"""A DIE's mangled name, DWARF 4's and GCC's before it."""


def _linkage_name(die: Any) -> tuple[str | None, bool]:
    """BFD's name for a function's DIE (`find_abstract_instance` in its `dwarf2.c`), through the DIEs it is an
    instance of (`DW_AT_abstract_origin`) or completes (`DW_AT_specification`): a linkage name found on the
    way, else the first name; and whether it is a linkage name."""
    name = None
    for _ in range(8):  # a chain of origins is short; a damaged one may loop
        linkage = next((k for k in LINKAGE if k in die.attributes), None)
        if linkage is not None:
            return _text(die.attributes[linkage].value), True
        if name is None and "DW_AT_name" in die.attributes:
            name = _text(die.attributes["DW_AT_name"].value)
        origin = next((k for k in ("DW_AT_abstract_origin", "DW_AT_specification") if k in die.attributes), None)
        if origin is None:
            break
        die = die.get_DIE_from_attribute(origin)
    return name, False


def _qualified(name: str, scopes: list[Any]) -> str:
    """`name` inside the namespaces and classes among `scopes` (innermost first) it is directly in, as gdb's
    `determine_prefix`: an unnamed namespace is `(anonymous namespace)`; an unnamed class (a lambda's
    closure) has no name to give, and ends the prefix."""
    parts = [name]
    for scope in itertools.takewhile(lambda scope: scope.tag in SCOPE_NAMES, scopes):
        inner = _attribute(scope, "DW_AT_name")
        if inner is None and scope.tag != "DW_TAG_namespace":
            break
        parts.append(_text(inner) if inner is not None else "(anonymous namespace)")
    return "::".join(reversed(parts))


class _DebugView(ElfFile):
    """pyelftools' view of a file for its DWARF, where a separate debug file's sections without contents
    (its `.eh_frame`, kept in the stripped file) read as empty rather than refused."""

    def _read_dwarf_section(self, section: Any, relocate_dwarf_sections: bool) -> DebugSectionDescriptor:
        if section["sh_type"] == "SHT_NOBITS":
            return DebugSectionDescriptor(SectionStream(b""), section.name, section["sh_offset"], 0, section["sh_addr"])
        return super()._read_dwarf_section(section, relocate_dwarf_sections)


class DebugInfo:
    """A file's DWARF debugging information, read a CU at a time as addresses (the file's own, as linked)
    are asked for."""

    def __init__(self, stream: BinaryIO, path: str) -> None:
        self.path = path
        self.stream = stream
        with reading(f"{path}: the DWARF debugging information"):
            image = ElfImage.of(stream)
            if image.section(".debug_info") is None:
                raise InputError("no .debug_info section")
            view = _DebugView(stream, image.lost, image.sections)
            self.info = view.get_dwarf_info(relocate_dwarf_sections=False)
        abbrev = self.info.debug_abbrev_sec
        self._abbrev_left = (abbrev.size if abbrev is not None else 0) + ABBREV_SLACK
        self._abbrev_offsets: set[int] = set()
        self._abbrev_ends: set[int] = set()
        self.info.get_abbrev_table = self._abbrev_table  # every unit's table comes through the bound
        self.info.get_CU_containing = self._unit_containing  # a DIE another unit names, without the units between
        self._unit_starts: array | None = None
        for name, section in (
            ("get_string_from_table", self.info.debug_str_sec),
            ("get_string_from_linetable", self.info.debug_line_str_sec),
        ):
            if section is not None:  # each string found once however many DIEs point into a long one
                setattr(self.info, name, TerminatedStrings(section.stream.contents).at)
        self.units: dict[int, _Unit | None] = {}
        self._parsed: dict[int, Any] = {}
        """By offset, the DIEs the units parsed last (`_Unit.die`)."""
        self.trees: dict[int, _Tree] = {}
        """By unit offset, the trees of units a DIE names a DIE in (an inlined call's origin in another unit)."""
        self._aranges: AddressTable | bool | None = False
        self._outline: list[tuple[int, int, int]] | None = None
        self._range_lists: RangeLists | None = None

    def _abbrev_table(self, offset: int) -> Any:
        """pyelftools' abbreviation table at `offset`, the bytes read counted: tables at many offsets into one
        long table (a unit each) were each read to its end and kept (units times its length). A table that
        ends where one read before ended is one read again in part: past the section's bytes and
        `ABBREV_SLACK` of those, an `InputError` costs the unit asking (tables of their own ends, those of
        sound units, are not counted)."""
        table = DWARFInfo.get_abbrev_table(self.info, offset)
        if offset not in self._abbrev_offsets:
            self._abbrev_offsets.add(offset)
            end = self.info.debug_abbrev_sec.stream.tell()
            if end in self._abbrev_ends:
                self._abbrev_left -= end - offset
                if self._abbrev_left < 0:
                    raise InputError(
                        f".debug_abbrev: the table at {offset:#x} is read past the section's bytes "
                        "(tables at many offsets into one)"
                    )
            self._abbrev_ends.add(end)
        return table

    def _ancestors(self, die: Any) -> list[Any]:
        """The DIEs `die` is inside, the innermost first, in whichever unit it is."""
        unit = self.units.get(die.cu.cu_offset)
        tree = unit.tree if unit is not None and unit.cu is die.cu else None
        if tree is None:
            tree = self.trees.get(die.cu.cu_offset)
            if tree is None or tree.cu is not die.cu:
                tree = self.trees[die.cu.cu_offset] = _Tree(self.info, die.cu)
        return tree.ancestors(die)

    def _unit_containing(self, offset: int) -> Any:
        """pyelftools' unit holding the DIE at `offset` in `.debug_info` (a `DW_FORM_ref_addr`'s), found among
        the units' starts read once from their lengths: pyelftools parsed and kept every unit from the first
        to it (100,000 units of 12 bytes before the one a name's origin is in: 63 MB, 3.7 s)."""
        if self._unit_starts is None:
            data, order = self.info.debug_info_sec.stream.contents, "<" if self.info.config.little_endian else ">"
            starts, at = array("Q"), 0
            while at + 4 <= len(data):
                (length,) = struct.unpack_from(order + "I", data, at)
                head = 4
                if length == 0xFFFFFFFF:
                    if at + 12 > len(data):
                        break
                    (length,), head = struct.unpack_from(order + "Q", data, at + 4), 12
                starts.append(at)
                at += head + length
            self._unit_starts = starts
        found = bisect.bisect_right(self._unit_starts, offset) - 1
        if found < 0 or offset >= self.info.debug_info_sec.size:
            raise InputError(f"no unit of .debug_info holds offset {offset:#x}")
        return self.info.get_CU_at(self._unit_starts[found])

    def _lists(self) -> RangeLists:
        """The file's range lists, their sections read when a DIE first names one."""
        if self._range_lists is None:
            with reading(f"{self.path}: the range lists"):
                self._range_lists = RangeLists(self.info)
        return self._range_lists

    def frames(self, address: int) -> tuple[list[SourceFrame], bool]:
        """The functions holding `address`, innermost (inlined) first, the physical function last, each
        at its source line; and whether a line starts exactly at `address`. Nothing when no DIE covers it
        or its CU cannot be read."""
        unit = self._unit(address)
        if unit is None:
            return [], False
        try:
            with reading(f"{self.path}: the DWARF debugging information at {address:#x}"):
                chain = unit.chain(address)
                file, line, starts = unit.line_at(address)
                out = []
                for die in reversed(chain):
                    out.append(
                        SourceFrame(
                            _name(die, unit.cplusplus, self._ancestors) or "??",
                            file,
                            line,
                            die.tag == "DW_TAG_inlined_subroutine",
                        )
                    )
                    file = unit.file(_attribute(die, "DW_AT_call_file"))
                    line = _attribute(die, "DW_AT_call_line")
                return out, starts
        except InputError:
            return [], False

    def functions(self, address: int, symbol: str) -> list[str]:
        """The names of the functions holding `address` as `perf script` prints them, the physical function
        first, then those inlined in it down to the innermost ("??" for a DIE without a name); its line table
        is not read. Nothing when no DIE covers it or its CU cannot be read.

        perf 6.1 has them from addr2line, that is from BFD: a DIE's linkage name (through the DIEs it is an
        instance of), else its name, which in C is as good; in C++, a name that is no linkage name is
        replaced by the symbol holding the address (`symbol`, as perf demangles it) for the innermost
        function, and for the physical one: BFD renames a function after the symbol that starts where it
        does once it has been the innermost function at an address looked up (the return address of a call
        it makes, a sample in its own code), so that perf's name for it as the caller of a function inlined
        depends on what was looked up before; sfview gives the name after the renaming. A lambda's
        `operator()` is `main::{lambda(unsigned long)#1}::operator()`, a function inlined without a linkage
        name is named after the function it is in. perf demangles a linkage name
        without its parameters (`shapes::label[abi:cxx11]`)."""
        unit = self._unit(address)
        if unit is None:
            return []
        try:
            with reading(f"{self.path}: the DWARF debugging information at {address:#x}"):
                chain = unit.chain(address)
                names = []
                for depth, die in enumerate(chain, 1):
                    name, linkage = _linkage_name(die)
                    if linkage:
                        name = without_parameters(name) if unit.cplusplus else name
                    elif unit.cplusplus and depth in (1, len(chain)):
                        name = symbol
                    names.append(name or "??")
                return names
        except InputError:
            return []

    def call_site(self, pc: int) -> CallSite | None:
        """The call site whose return address is `pc` (in the CU holding `pc - 1`, as gdb looks it up)."""
        unit = self._unit(pc - 1)
        if unit is None:
            return None
        try:
            with reading(f"{self.path}: the call sites at {pc:#x}"):
                return unit.call_sites()[0].get(pc)
        except InputError:
            return None

    def tail_calls(self, entry: int) -> list[CallSite] | None:
        """The tail calls of the function entered at `entry` (empty where it does not list all its calls);
        None where no function of the debug information starts there."""
        unit = self._unit(entry)
        if unit is None:
            return None
        try:
            with reading(f"{self.path}: the call sites of the function at {entry:#x}"):
                chain = unit.chain(entry)
                if not chain or unit.entry(chain[0]) != entry:
                    return None
                return unit.call_sites()[1].get(entry, [])
        except InputError:
            return None

    def function_entry(self, address: int) -> int | None:
        """Where the function holding `address` is entered (the physical one, not a call inlined in it)."""
        unit = self._unit(address)
        if unit is None:
            return None
        try:
            with reading(f"{self.path}: the DWARF debugging information at {address:#x}"):
                chain = unit.chain(address)
                return unit.entry(chain[0]) if chain else None
        except InputError:
            return None

    def _unit(self, address: int) -> _Unit | None:
        offset = self._cu_offset(address)
        if offset is None:
            return None
        if offset not in self.units:
            try:
                with reading(f"{self.path}: the compilation unit at {offset:#x}"):
                    cu = self.info.get_CU_at(offset)
                    self.units[offset] = _Unit(self.info, self._lists(), cu, self._parsed)
            except InputError:
                self.units[offset] = None
        return self.units[offset]

    def _cu_offset(self, address: int) -> int | None:
        """The offset of the CU covering `address`: by `.debug_aranges`, else by each CU's top DIE's ranges."""
        if self._aranges is False:
            section = self.info.debug_aranges_sec
            try:
                with reading(self.path):
                    self._aranges = None
                    if section is not None:
                        self._aranges = AddressTable(section.stream.contents, self.info.config.little_endian)
            except InputError:
                self._aranges = None
        if isinstance(self._aranges, AddressTable):
            found = self._aranges.unit_at(address)
            if found is not None:
                return found
        for start, end, offset in self._outlined():
            if start <= address < end:
                return offset
        return None

    def _outlined(self) -> list[tuple[int, int, int]]:
        """The address ranges of each CU `.debug_aranges` does not list (all, for a file without it), from its
        top DIE alone: a CU's top DIE costs its abbreviation table, so those listed are not read again (libc's
        2,063 CUs took seconds; the 126 it does not list, a fraction of that). Each unit is parsed and let go
        (pyelftools' own iteration keeps every unit and its top DIE, a kilobyte each, for units of a dozen
        bytes), and at most `MAX_OUTLINED` are looked through: an address in a unit past them is named from
        the symbols."""
        if self._outline is None:
            self._outline = []
            table = self._aranges if isinstance(self._aranges, AddressTable) else None
            try:
                with reading(f"{self.path}: the compilation units' headers"):
                    for cu in itertools.islice(self._units(table), MAX_OUTLINED):
                        top = cu.get_top_DIE()
                        base = _attribute(top, "DW_AT_low_pc") or 0
                        self._outline.extend((s, e, cu.cu_offset) for s, e in _ranges(self._lists(), cu, base, top))
            except InputError:
                pass
        return self._outline

    def _units(self, listed: AddressTable | None) -> Iterator[Any]:
        """The CUs of `.debug_info` `listed` does not list, in order, each parsed anew (not kept by pyelftools)."""
        offset, size = 0, self.info.debug_info_sec.size
        while offset < size:
            cu = self.info._parse_CU_at_offset(offset)  # iter_CUs() would keep every unit it parses
            if listed is None or not listed.lists(offset):
                yield cu
            offset += cu["unit_length"] + cu.structs.initial_length_field_size()


def open_debug_info(candidates: list[str]) -> DebugInfo | None:
    """The DWARF debugging information of the first of `candidates` (a file, then its separate debug file)
    that has readable DWARF; None when none has."""
    for candidate in candidates:
        try:
            stream = open(candidate, "rb")  # noqa: SIM115 - held open while the module is: its CUs are read later
        except OSError:
            continue
        try:
            return DebugInfo(stream, candidate)
        except InputError:
            stream.close()
    return None
