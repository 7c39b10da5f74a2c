"""Going to an address, a symbol or an offset, and back and forward: where a request lands, or why it cannot.

Pure functions of the section, the names and what was asked: each answers a
`Landing` (the function and row to select, what the status line says), or a
`Refusal` (what to tell). The screen applies the answer. In a relocatable
object every function starts at 0 until it is linked: there an address is
looked for in the functions' places (`.text+0x10`), and one that several
functions hold is listed, not guessed.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from textual.notifications import SeverityLevel

from sfview import rule_notation
from sfview.app.explorer.state import History, Selection
from sfview.app.names import ExplorerNames
from sfview.consumers import LookupFailure
from sfview.inputs.symbols import Place, Symbol, SymbolTable
from sfview.sframe.model.section import Function, Section

__all__ = [
    "Landing",
    "OffsetLanding",
    "Refusal",
    "Way",
    "address_landing",
    "failure_landing",
    "lookup",
    "offset_landing",
    "symbol_target",
    "walk",
]


class Landing(NamedTuple):
    """Where a jump to an address lands: function `fde`, its row `fre` (None: no row covers it)."""

    fde: int
    fre: int | None
    pc: int
    """The address gone to (the instructions pane shows its instruction)."""
    status: str
    """What the status line says of it."""


class OffsetLanding(NamedTuple):
    """Where a jump to an offset lands: a section offset, and how a file offset was read as one ("" if not)."""

    offset: int
    said: str


class Refusal(NamedTuple):
    """A request that lands nowhere: what the notification says (and the status line, if `status`)."""

    message: str
    severity: SeverityLevel = "warning"
    title: str = ""
    timeout: float | None = None
    status: str = ""


class Way(Enum):
    """Which way through the history."""

    BACK = "back"
    FORWARD = "forward"


NO_SECTION = Refusal("The section could not be read: there are no functions.", severity="error")


def address_landing(section: Section | None, names: ExplorerNames, target: int | Place) -> Landing | Refusal:
    """The function an unwinder would use for `target`, and its row (PCMASK included).

    In a relocatable object every function starts at 0 until it is linked:
    there the address is looked for in the functions' places (`.text+0x10`),
    and one that several functions hold is not guessed at.
    """
    if section is None:
        return NO_SECTION
    if isinstance(target, Place) or names.relocatable:
        return _in_object(section, names, target)
    func = section.find_function(target)
    if func is None:
        return Refusal(f"No function covers {target:#x}{_neighbours(section, names, target)}.")
    return _row_landing(section, names, func, target, f"{target:#x}")


def failure_landing(
    section: Section | None, names: ExplorerNames, consumer: str, failure: LookupFailure
) -> Landing | Refusal:
    """The function a consumer's failing range belongs to (the profile's, not a lookup's: functions may
    overlap) and its row at the range's first PC; the status line says what fails there and why."""
    if section is None:
        return NO_SECTION
    if failure.function is None or not 0 <= failure.function < len(section):
        return Refusal(f"{consumer} fails at {failure.start:#x}, in no function of the section.")
    func = section.function(failure.function)
    landing = _row_landing(section, names, func, failure.start, f"{failure.start:#x}")
    said = f"{consumer} fails at {failure.start:#x}..{failure.end - 1:#x}: {failure.rule} ({failure.error})"
    return landing._replace(status=f"{said}; {landing.status}")


def _in_object(section: Section, names: ExplorerNames, target: int | Place) -> Landing | Refusal:
    """An address of a relocatable object: a place, or an offset that one function alone holds."""
    address, where_section = (target.offset, target.section) if isinstance(target, Place) else (target, None)
    where = str(target) if isinstance(target, Place) else f"{address:#x}"
    found = names.holding(address, where_section)
    if not found:
        return Refusal(f"No function of this object covers {where}.")
    if len(found) > 1:
        return _ambiguous(names, where, found)
    func, place = found[0]
    start = names.place_of(func)
    assert start is not None  # `holding` only finds functions with a place
    return _row_landing(section, names, func, func.start_address + place.offset - start.offset, str(place))


def _ambiguous(names: ExplorerNames, where: str, found: list[tuple[Function, Place]]) -> Refusal:
    """Which functions hold an address of a `.o`, and how to name the one meant."""
    listed = "; ".join(f"{place} in {names.of(func) or '?'} (fdes[{func.index}])" for func, place in found)
    return Refusal(
        f"{where} is ambiguous: in a relocatable object every function starts at 0 until it is linked. "
        f"It is {listed}. Name the section (.text+0x10) or the function (main+0x10).",
        title="Which function?",
        timeout=15,
        status=f"{where}: ambiguous, {len(found)} functions hold it: {listed}",
    )


def _row_landing(section: Section, names: ExplorerNames, func: Function, pc: int, where: str) -> Landing:
    """The row of `func` that holds `pc`, and what is said of where `where` (what was typed) landed."""
    row = func.row_for(pc)
    if row is None:
        return Landing(func.index, None, pc, f"{where}: fdes[{func.index}], but none of its rows covers it")
    name = names.of(func)
    rules = rule_notation.rules_text(section, row)
    status = f"{where} → fdes[{func.index}]{f' {name}' if name else ''}, FRE {row.index}: {rules}"
    if func.pcmask:
        offset = (pc - func.start_address) % (func.block_size or 1 << 64)
        status += f" (PCMASK: offset {offset:#x} in the repeated block)"
    return Landing(func.index, row.index, pc, status)


def _neighbours(section: Section, names: ExplorerNames, pc: int) -> str:
    """`: between main (ends 0x108b) and small_leaf (0x1180)`, the functions around an address no FDE covers."""
    before, after = section.around(pc)
    parts = []
    if before is not None:
        parts.append(f"after {names.of(before) or f'fdes[{before.index}]'} (ends {before.end_address:#x})")
    if after is not None:
        parts.append(f"before {names.of(after) or f'fdes[{after.index}]'} ({after.start_address:#x})")
    return ": " + ", ".join(parts) if parts else ""


def symbol_target(names: ExplorerNames, symbol: Symbol) -> int | Place | None:
    """Where a symbol chosen in the go-to-symbol dialog is: its address, or in a `.o` its place."""
    return names.named(symbol.name) if names.relocatable else symbol.address


def lookup(names: ExplorerNames, symbols: SymbolTable, name: str) -> int | Place | None:
    """A name's address, or in a relocatable object its place (a function's or a section's)."""
    if names.relocatable:
        return names.named(name)
    symbol = symbols.named(name)
    return symbol.address if symbol is not None else None


def offset_landing(size: int, file_offset: int, offset: int) -> OffsetLanding | Refusal:
    """Section offset `offset`, or a file offset inside the section (as `check` prints them) read as one."""
    said = ""
    if not 0 <= offset < size and file_offset and file_offset <= offset < file_offset + size:
        said = f"file offset {offset:#x} = section offset {offset - file_offset:#x}: "
        offset -= file_offset
    if not 0 <= offset < size:
        files = f", or file offsets {file_offset:#x}..{file_offset + size - 1:#x}" if file_offset else ""
        return Refusal(f"{offset:#x} is outside the section (0..{size - 1:#x}{files}).")
    return OffsetLanding(offset, said)


def walk(history: History[Selection], here: Selection, way: Way) -> Selection | None:
    """The place one step `way` in the history from `here` (the current place as it is now); None at the end."""
    return history.back(here) if way is Way.BACK else history.forward(here)
