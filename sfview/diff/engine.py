"""Two sections' functions paired and compared by meaning (`sfview diff`).

Functions are paired by name (the n-th function of a name with the n-th of that name in the other
section, for static functions that share one), and by start address where a function has no name; a
function that moved is the same function. PCMASK functions (PLT entries, whose rules repeat every entry) are
named by their code section (`.plt`, `.plt.sec`), so that a PLT is paired with the other file's PLT of the
same name whichever entry comes first.

A pair is `SAME` when its encoding (info byte, rep size, FDE type, the rows' bytes) and its size are
equal; `ENCODING` when only the encoding differs and an unwinder gets the same rules at every PC;
`MEANING` when at some PC it gets different ones, or the two cover different code (sizes). Each
meaning difference is a `Change`: a range of offsets into the function, a column, and both values.

The work is one pass over each section through the bulk reader: the pairs of shapes already compared
(most functions share their rows with another) are not compared again. The pairs that are not the same
are held while they weigh a small share of the sections' bytes; past it (two builds that differ
everywhere), each is kept as a mark on its A function and made again, as it is read, by a second pass
(`Pairs`): memory bounded by the bytes, not by how many pairs differ.
"""

from __future__ import annotations

import bisect
import enum
import itertools
import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, overload

from sfview.diff.shapes import BulkShapes, Meaning, MeaningRow, Shape, of_function
from sfview.errors import InputError, Problems
from sfview.sframe.bulk.reader import LISTED_ROWS, Bulk, BulkFunction, kept_max
from sfview.sframe.model.rules import Rule
from sfview.sframe.model.section import Placed, Section
from sfview.sframe.model.terms import abi_name

EXPANDED_MAX = 1 << 16
"""The most bytes of a PCMASK function compared with a function that is not one (its rows laid out block
after block for that long: its size may claim gigabytes), and the most rows two PCMASK functions of
different block sizes are laid out to over their common cycle."""


class Verdict(enum.Enum):
    """What a pair of functions is to each other."""

    SAME = "same"
    ENCODING = "encoded differently"
    MEANING = "different meaning"


class Column(enum.Enum):
    """What differs in a `Change`."""

    CFA = "CFA"
    FP = "FP"
    RA = "RA"
    RA_SIGNING = "RA signed"
    SIGNAL = "signal frame"
    PAUTH_KEY = "PAuth key"
    SIZE = "size"
    """The two cover different code: the values are the sizes, the range what one covers alone."""
    PC_TYPE = "PCMASK block"
    """The values are the blocks the rows repeat every (0: not PCMASK)."""


Value = Rule | bool | int | None
"""A change's value on one side: a rule, a flag, a size; None for a PC no row covers."""


@dataclass(slots=True)
class Change:
    """Offsets [start, end) into a function where one column differs, and its value on each side."""

    start: int
    end: int
    column: Column
    a: Value
    b: Value
    every: int = 0
    """PCMASK: the change recurs every so many bytes (the blocks' least common multiple); 0 for none."""


class Entry(NamedTuple):
    """One function of one side, as the pairing holds it."""

    name: str
    start: int
    size: int
    index: int
    """Its FDE's index."""
    shape: Shape | None
    """None for a function whose rows cannot be read (`Diff.not_compared`)."""


@dataclass(slots=True)
class Pair:
    """Two functions, one of each side, that are the same function; its verdict and the changes of meaning."""

    a: Entry
    b: Entry
    verdict: Verdict
    changes: list[Change] = field(default_factory=list)
    entries_only: tuple[list[str], list[str]] = ([], [])
    """Two PLTs (PCMASK functions) of different sizes: the entries, by their symbols (`memset@plt`), that
    only A's and only B's has; their rules are the same block's, so the entries are what differs."""


HELD_SHARE = 2
"""The pairs that are not the same are held (as `Pair` objects) while they weigh at most the sections'
bytes times this; past it, they are made again when read (`Pairs`)."""
PAIR_WEIGHT, CHANGE_WEIGHT = 600, 100
"""About what a held pair (its two entries, their numbers, its list of changes) and each of its changes
weigh, as `tracemalloc` counts them."""


class Pairs(Sequence[Pair]):
    """The pairs of one verdict (`Verdict.ENCODING`, `Verdict.MEANING`), in A's order: held while they weigh
    under `HELD_SHARE` times the sections' bytes, else made again as they are read (`again`: a second pass
    of the pairing over both sections, for the pairs of A's functions marked with this verdict)."""

    def __init__(self, again: Callable[[], Iterator[Pair]] | None = None) -> None:
        self.held: list[Pair] | None = []
        """None once let go: the pairs are made again."""
        self.count = 0
        self.again = again

    def add(self, pair: Pair) -> None:
        self.count += 1
        if self.held is not None:
            self.held.append(pair)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Pair]:
        if self.held is not None:
            return iter(self.held)
        assert self.again is not None  # let go only where they can be made again
        return self.again()

    @overload
    def __getitem__(self, i: int) -> Pair: ...
    @overload
    def __getitem__(self, i: slice) -> list[Pair]: ...
    def __getitem__(self, i: int | slice) -> Pair | list[Pair]:
        if self.held is not None:
            return self.held[i]
        if isinstance(i, slice):
            return list(itertools.islice(self, *i.indices(len(self))))
        return next(itertools.islice(self, range(len(self))[i], None))


@dataclass(slots=True)
class Diff:
    """What `diff` found: how many pairs are the same, the others, and the functions one side alone has."""

    same: int = 0
    encoding: Pairs = field(default_factory=Pairs)
    meaning: Pairs = field(default_factory=Pairs)
    only_a: Sequence[Entry] = field(default_factory=list)
    only_b: Sequence[Entry] = field(default_factory=list)
    """In A's order, and B's by start (`Entries`: made as they are read)."""
    unreadable_a: Problems = field(default_factory=Problems)
    unreadable_b: Problems = field(default_factory=Problems)
    """Why functions of either side were left out (their FDE or rows cannot be read): the first held, the
    rest counted (`Problems`), as the command says them."""
    kept_same: list[Pair] = field(default_factory=list)
    """The pairs that are the same, when the caller asked for them (`diff(keep_same=True)`: a view that
    lists every function); else only counted."""
    not_compared: Sequence[Entry] = field(default_factory=list)
    """Functions (of either side) whose rows cannot be read: not compared, and their counterparts on the
    other side not said to be that side's alone."""
    paired_only: int = 0
    """Pairs not compared at all: the two sections' ABIs name registers differently (`diff(rules=False)`)."""

    @property
    def same_meaning(self) -> bool:
        """An unwinder gets the same rules from both at every PC either describes."""
        return not self.meaning and not self.only_a and not self.only_b


class Side(NamedTuple):
    """One section to compare, and how its functions are named."""

    section: Section
    name_at: Callable[[int, int], str]
    """A function's name from its start address and its FDE's section offset, or ""."""
    section_at: Callable[[int], str]
    """The code section an address is in (`.plt`), or "": a PCMASK function's name."""


def comparable(a: Section, b: Section) -> str | None:
    """Why two sections' rules cannot be compared (their ABIs number registers differently), or None."""
    if _registers(a) == _registers(b):
        return None
    return f"A is {abi_name(a.abi)}, B is {abi_name(b.abi)}: their rules name different registers"


def _registers(section: Section) -> tuple:
    return section.is_aarch64, section.is_s390x, section.sp_reg, section.fp_reg, section.ra_reg


def diff(a: Side, b: Side, keep_same: bool = False, rules: bool = True) -> Diff:
    """Pair the functions of `a` and `b` and compare each pair (see the module's doc); `keep_same`: keep
    the pairs that are the same too (`Diff.kept_same`); without `rules` (sections of two ABIs), pair them
    only, for the functions one side alone has (`Diff.paired_only` counts the pairs)."""
    marks = bytearray(a.section.num_fdes)  # each A function's pair: in `encoding` or `meaning` (`_MARKS`), or 0
    partners = array("q", bytes(8 * a.section.num_fdes))  # each A function's pair: its B function (`_Store`)
    result = Diff()
    waiting = _Store(b, result.unreadable_b)
    result.encoding = Pairs(lambda: _again(a, waiting, marks, partners, Verdict.ENCODING))
    result.meaning = Pairs(lambda: _again(a, waiting, marks, partners, Verdict.MEANING))
    budget = HELD_SHARE * (len(a.section.data) + len(b.section.data))
    weight = 0
    # By the two shapes' identities: their verdict, and the shapes, held so that no other shape takes their ids.
    outcomes: dict[tuple[int, int], tuple[Verdict | None, Shape, Shape]] = {}
    outcomes_max = kept_max(a.section) + kept_max(b.section)
    same = 0
    alone_a = _Store(a)
    unpaired = Entries((_Store(a), waiting))  # in the order the pairing meets them
    for left in _entries(a, result.unreadable_a):
        found = waiting.pop(_label(left))
        right = None if found < 0 else waiting.found(found)
        if left[4] is None or (right is not None and right[4] is None):
            if left[4] is None:
                unpaired.keep(left)
            if right is not None and right[4] is None:
                unpaired.add(1, found)
            continue
        if right is None:
            alone_a.add(left)
            continue
        if not rules:
            result.paired_only += 1
            continue
        size, shape_a, shape_b = left[2], left[4], right[4]
        pair = None
        if size == right[2] and shape_a.last < size and shape_b.last < size:
            known = (id(shape_a), id(shape_b))
            outcome = outcomes.get(known)
            verdict = _verdict(shape_a, shape_b) if outcome is None else outcome[0]
            if outcome is None and len(outcomes) < outcomes_max:
                outcomes[known] = verdict, shape_a, shape_b
            if verdict is Verdict.SAME:
                same += 1
                if keep_same:
                    result.kept_same.append(Pair(Entry._make(left), Entry._make(right), verdict))
                continue
            if verdict is Verdict.ENCODING:
                pair = Pair(Entry._make(left), Entry._make(right), verdict)
        if pair is None:
            pair = _made(a, Entry._make(left), b, Entry._make(right), Verdict.MEANING)
            if not pair.changes:
                if shape_a.encoding == shape_b.encoding:
                    same += 1
                    if keep_same:
                        pair.verdict = Verdict.SAME
                        result.kept_same.append(pair)
                    continue
                pair.verdict = Verdict.ENCODING
        marks[left[3]], partners[left[3]] = _MARKS[pair.verdict], found
        held = result.meaning if pair.verdict is Verdict.MEANING else result.encoding
        held.add(pair)
        weight += PAIR_WEIGHT + CHANGE_WEIGHT * len(pair.changes)
        if weight > budget and not keep_same:  # a view that lists every pair holds them all (`kept_same`)
            result.meaning.held = result.encoding.held = None
    result.same = same
    for j in waiting.left():
        if waiting.shapes[j] is None:
            unpaired.add(1, j)
    result.not_compared = unpaired
    result.only_a = Entries((alone_a,), array("I", range(len(alone_a.shapes))))
    result.only_b = Entries((waiting,), waiting.left_by_start())
    return result


class _Store:
    """One side's functions in arrays, in the order `_entries` yields them: each one's name made again from
    its start, FDE and shape when asked for (`found`), so that a section of a million functions holds some
    45 bytes a function, not a tuple, a name and a dict slot.

    Given `unreadable`, every function of the side is read into it at once, their labels (`_label`) hashed
    and sorted (each hash with its place in one integer, sorted as one: a label's functions in order), for
    `pop`: the B side, which A's functions are paired with."""

    def __init__(self, side: Side, unreadable: Problems | None = None) -> None:
        self.side = side
        self.starts, self.sizes, self.indices = array("Q"), array("Q"), array("I")
        self.shapes: list[Shape | None] = []
        self.taken = bytearray()
        self.hashes, self.order, self.free = array("q"), array("I"), array("I")
        if unreadable is None:
            return
        hashes = array("q")
        for found in _entries(side, unreadable):
            self.add(found)
            hashes.append(hash(_label(found)))
        self.taken = bytearray(len(hashes))
        packed = [(hashed << 32) | j for j, hashed in enumerate(hashes)]
        del hashes
        packed.sort()
        self.hashes = array("q", (p >> 32 for p in packed))
        self.order = array("I", (p & 0xFFFFFFFF for p in packed))
        del packed
        self.free = array("I", range(len(self.order) + 1))
        """For each sorted place: the first at or after it whose function is not taken (where known)."""

    def add(self, found: _Found) -> None:
        _, start, size, index, shape = found
        self.starts.append(start)
        self.sizes.append(size)
        self.indices.append(index)
        self.shapes.append(shape)

    def found(self, j: int) -> _Found:
        """The `j`-th function, as `_entries` yielded it."""
        start, index, shape = self.starts[j], self.indices[j], self.shapes[j]
        return _name(self.side, start, index, shape), start, self.sizes[j], index, shape

    def pop(self, label: _Label) -> int:
        """The place of the first function of `label` not taken yet, taken (no longer `left`); -1 for none."""
        hashes, order = self.hashes, self.order
        hashed = hash(label)
        at = self._free(bisect.bisect_left(hashes, hashed))
        while at < len(hashes) and hashes[at] == hashed:
            j = order[at]
            if _label(self.found(j)) == label:
                self.taken[j] = 1
                self.free[at] = at + 1
                return j
            at = self._free(at + 1)
        return -1

    def _free(self, at: int) -> int:
        """The first sorted place at or after `at` not taken (the way there halved for the next look)."""
        free = self.free
        while free[at] != at:
            free[at] = free[free[at]]
            at = free[at]
        return at

    def left(self) -> Iterator[int]:
        """The places of the functions not taken, in order."""
        return (j for j, taken in enumerate(self.taken) if not taken)

    def left_by_start(self) -> array:
        """The places of the functions not taken whose rows were read, by start (in order among equal
        starts); the pairing's arrays let go first."""
        self.hashes, self.order, self.free = array("q"), array("I"), array("I")
        shapes, starts = self.shapes, self.starts
        places = array("I", (j for j in self.left() if shapes[j] is not None))
        if any(starts[places[k]] > starts[places[k + 1]] for k in range(len(places) - 1)):
            packed = [(starts[j] << 32) | j for j in places]
            packed.sort()
            places = array("I", (p & 0xFFFFFFFF for p in packed))
        return places


class Entries(Sequence[Entry]):
    """Functions held in `_Store`s, by their places (and which store, `sides`), each `Entry` made as it is
    read: the functions one side alone has, and those not compared (an `Entry` held for each of a damaged
    section's functions was some 300 bytes)."""

    def __init__(self, stores: tuple[_Store, ...], places: array | None = None) -> None:
        self.stores = stores
        self.places = array("I") if places is None else places
        self.sides = bytearray(len(self.places))

    def add(self, side: int, place: int) -> None:
        """The function at `place` in `stores[side]`, next."""
        self.sides.append(side)
        self.places.append(place)

    def keep(self, found: _Found) -> None:
        """A function of the first store's side, added to that store, next."""
        store = self.stores[0]
        store.add(found)
        self.add(0, len(store.shapes) - 1)

    def __len__(self) -> int:
        return len(self.places)

    @overload
    def __getitem__(self, i: int) -> Entry: ...
    @overload
    def __getitem__(self, i: slice) -> list[Entry]: ...
    def __getitem__(self, i: int | slice) -> Entry | list[Entry]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return Entry._make(self.stores[self.sides[i]].found(self.places[i]))


_MARKS = {Verdict.ENCODING: 1, Verdict.MEANING: 2}


def _made(a: Side, entry_a: Entry, b: Side, entry_b: Entry, verdict: Verdict) -> Pair:
    """A pair of `verdict` with its changes of meaning (and for two PLTs of different sizes, their entries
    only one has), for a meaning difference; without, for an encoding one."""
    if verdict is not Verdict.MEANING:
        return Pair(entry_a, entry_b, verdict)
    pair = Pair(entry_a, entry_b, verdict, _changes(entry_a, entry_b))
    shape_a, shape_b = entry_a.shape, entry_b.shape
    if pair.changes and shape_a.meaning.period and shape_b.meaning.period and entry_a.size != entry_b.size:
        pair.entries_only = _plt_entries_only(a, entry_a, b, entry_b)
    return pair


def _again(a: Side, b: _Store, marks: bytearray, partners: array, verdict: Verdict) -> Iterator[Pair]:
    """The pairs `diff` found of `verdict` (their A functions marked so in `marks`, their B functions in
    `partners`), made again as `diff` made them: over A's functions again."""
    mark = _MARKS[verdict]
    for left in _entries(a, Problems()):
        if marks[left[3]] == mark:
            yield _made(a, Entry._make(left), b.side, Entry._make(b.found(partners[left[3]])), verdict)


def _verdict(a: Shape, b: Shape) -> Verdict | None:
    """Two shapes at one size their rows fit in: the verdict, or None when the meaning differs (see the changes)."""
    if a.meaning != b.meaning:
        return None
    return Verdict.SAME if a.encoding == b.encoding else Verdict.ENCODING


_Label = str | int
_Found = tuple[str, int, int, int, Shape | None]
"""An `Entry`'s fields as a plain tuple: a million of them are made, and most never become an `Entry`."""


def _entries(side: Side, unreadable: Problems) -> Iterator[_Found]:
    """Each readable function of a side, in FDE order; what cannot be read goes to `unreadable`. Its name,
    else its start, is what it is paired by (`_label`)."""
    section, name_at = side.section, side.name_at
    bulk = Bulk(section)
    shapes = BulkShapes(bulk)
    fde_start, fde_size = section.fde_start, section.fde_size
    # The shapes of blocks of more than LISTED_ROWS rows, which the reader hands out afresh to each function
    # pointing at them, by where they start, their info byte, row count and rep size: FDEs sharing one long
    # block made it anew each (200 of 65,535 rows: 13 M rows). Kept while their bytes are within the section's.
    long_made: dict[tuple[int, int, int, int], Shape] = {}
    long_room = len(section.data)
    for walked in bulk.functions():
        if isinstance(walked, int) or walked[5].info.pcmask:
            index = walked if isinstance(walked, int) else walked[0]
            found = _modelled(section, index, unreadable)
            if found is None:
                continue
            start, size, shape = found
            if shape is None:  # its rows cannot be read: paired, and so kept out of the other side's own
                yield name_at(start, fde_start + index * fde_size), start, size, index, None
                continue
        else:
            index, start, size, pos, rep, block = walked
            long = None if block.count <= LISTED_ROWS else (pos, block.info.byte, block.count, rep)
            shape = block.made if long is None else long_made.get(long)
            if shape is None:
                rows = block.rows if isinstance(block.rows, list) else list(block.rows)
                if not block.complete:
                    _rows_stop(section, walked, rows, unreadable)
                    yield name_at(start, fde_start + index * fde_size), start, size, index, None
                    continue
                shape = shapes.of_block(block, pos, rep, rows)
                if block.shared:
                    block.made = shape
                elif long is not None and block.length <= long_room:
                    long_made[long] = shape
                    long_room -= block.length
        yield _name(side, start, index, shape), start, size, index, shape


def _rows_stop(section: Section, walked: BulkFunction, rows: list, unreadable: Problems) -> None:
    """Why a function's rows stop, into `unreadable`: where the bulk reader listed its rows, said from where
    it stopped (as the model's rows stop there), without decoding the FDE again through Kaitai (tens of
    microseconds a function, the whole of `diff` on a section of damaged functions), and worded only when it
    is the one said (`Problems.add`); else the model's."""
    index, _, _, pos, _, block = walked
    if not isinstance(block.rows, list):
        _modelled(section, index, unreadable)
        return
    fre_type, count, found, end = block.info.fre_type, block.count, len(rows), pos + block.length
    unreadable.add(lambda: section.rows_stop(Placed(section, index, fre_type, count, pos), found, end))


def _label(found: _Found) -> _Label:
    """What a function is paired by: its name, else its start (the n-th function of a label on one side
    with the n-th of it on the other: a damaged section's functions that share a start are each paired,
    not all but one dropped)."""
    return found[0] or found[1]


def _name(side: Side, start: int, index: int, shape: Shape | None) -> str:
    """A function's name: a PCMASK one's code section, else its symbol (or "")."""
    section = side.section
    return (shape is not None and shape.meaning.period and side.section_at(start)) or side.name_at(
        start, section.fde_start + index * section.fde_size
    )


def _modelled(section: Section, index: int, unreadable: list[InputError]) -> tuple[int, int, Shape | None] | None:
    """A function the model reads: its start, size and shape; why not in `unreadable`, and None for the
    shape when only its rows cannot be read, None for all when its FDE cannot (a decoded function makes
    no reference cycle: let go, it is freed, the cyclic collector paused)."""
    func = section.function(index)
    if func.error is not None:
        unreadable.append(func.error)
        return None
    shape = of_function(func)
    if func.rows_error is not None:
        unreadable.append(func.rows_error)
        return func.start_address, func.size, None
    return func.start_address, func.size, shape


def _plt_entries_only(a: Side, entry_a: Entry, b: Side, entry_b: Entry) -> tuple[list[str], list[str]]:
    """The PLT entries (every block of a PCMASK function, named by the symbol at its start) only one side
    has, as many as `EXPANDED_MAX` blocks of each (a size may claim gigabytes)."""

    def names(side: Side, entry: Entry) -> list[str]:
        period = entry.shape.meaning.period if entry.shape is not None else 0
        if not period:
            return []
        starts = range(entry.start, entry.start + entry.size, period)[:EXPANDED_MAX]
        return [name for name in (side.name_at(start, -1) for start in starts) if name and "+" not in name]

    in_a, in_b = names(a, entry_a), names(b, entry_b)
    set_a, set_b = set(in_a), set(in_b)
    return [n for n in in_a if n not in set_b], [n for n in in_b if n not in set_a]


def _changes(a: Entry, b: Entry) -> list[Change]:
    """Where a pair differs in meaning: the FDE's flags, the code covered, and the rules, range by range."""
    ma, mb = a.shape.meaning, b.shape.meaning
    common = min(a.size, b.size)
    whole = max(a.size, b.size)
    changes = []
    if ma.signal != mb.signal:
        changes.append(Change(0, whole, Column.SIGNAL, ma.signal, mb.signal))
    if ma.pauth_key != mb.pauth_key and ma.pauth_key and mb.pauth_key:
        changes.append(Change(0, whole, Column.PAUTH_KEY, ma.pauth_key, mb.pauth_key))
    if a.size != b.size:
        changes.append(Change(common, whole, Column.SIZE, a.size, b.size))
    every = 0
    if ma.period and mb.period:
        span = every = min(math.lcm(ma.period, mb.period), common)
        if span // ma.period * len(ma.rows) + span // mb.period * len(mb.rows) > EXPANDED_MAX:
            span = every = min(max(ma.period, mb.period), common)  # the blocks' first stretch, not their cycle
    elif ma.period or mb.period:
        changes.append(Change(0, whole, Column.PC_TYPE, ma.period, mb.period))
        span = min(common, EXPANDED_MAX)
    else:
        span = common
    laid_a, laid_b = _lay(ma, span), _lay(mb, span)
    changes += _rule_changes(laid_a, laid_b, span, every)
    return changes


def _lay(meaning: Meaning, span: int) -> list[MeaningRow]:
    """The rows over offsets [0, span): a PCMASK function's block after block."""
    rows = [row for row in meaning.rows if row[0] < (meaning.period or span)]
    if meaning.period and span > meaning.period:
        rows = [(block + row[0], *row[1:]) for block in range(0, span, meaning.period) for row in rows]
    return [row for row in rows if row[0] < span]


def _rule_changes(rows_a: list[MeaningRow], rows_b: list[MeaningRow], span: int, every: int) -> list[Change]:
    """The ranges of [0, span) where a column's rule differs, adjacent ranges of the same values joined.
    Where one side has no row yet, only the CFA column says so (`None`): the other columns follow from it."""
    cuts = sorted({0, *(row[0] for row in rows_a), *(row[0] for row in rows_b)})
    changes: list[Change] = []
    open_changes: dict[Column, Change] = {}
    ia = ib = -1
    for i, cut in enumerate(cuts):
        if cut >= span:
            break
        end = cuts[i + 1] if i + 1 < len(cuts) else span
        end = min(end, span)
        while ia + 1 < len(rows_a) and rows_a[ia + 1][0] <= cut:
            ia += 1
        while ib + 1 < len(rows_b) and rows_b[ib + 1][0] <= cut:
            ib += 1
        ra = rows_a[ia] if ia >= 0 else None
        rb = rows_b[ib] if ib >= 0 else None
        for column, position in _RULE_COLUMNS if ra is not None and rb is not None else _RULE_COLUMNS[:1]:
            va = ra[position] if ra is not None else None
            vb = rb[position] if rb is not None else None
            if va == vb:
                open_changes.pop(column, None)
                continue
            last = open_changes.get(column)
            if last is not None and last.end == cut and last.a == va and last.b == vb:
                last.end = end
                continue
            change = open_changes[column] = Change(cut, end, column, va, vb, every)
            changes.append(change)
    return sorted(changes, key=lambda c: (c.start, list(Column).index(c.column)))


_RULE_COLUMNS = ((Column.CFA, 1), (Column.FP, 2), (Column.RA, 3), (Column.RA_SIGNING, 4))
