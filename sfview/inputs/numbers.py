"""One rule for every number and address a person types, in the app and on the command line.

- A number is hex, with or without `0x` (`1080` is 0x1080): every address and
  offset sfview shows, and readelf and gdb print, is written in hex.
- Decimal is a number with a trailing dot, as gdb reads one (`16.` is 0x10).
- An expression adds and subtracts terms: numbers, names (`main`, a C++ name
  in either form, `.text` in an object file), and in the debugger and with
  `--mem` registers (`sp`, `fp`, `pc`, `lr`, the ABI's own names, a leading
  `$` allowed, as gdb writes them): `main+0x34`, `sp+8`, `$rsp-10.`.

What a name means is the caller's (`lookup`): a symbol's address, a register's
value, a place in an object file (`Place`, which an offset moves). Anything
else is refused with a sentence saying what is wrong, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sfview import ADDRESS_MASK
from sfview.errors import InputError
from sfview.inputs.symbols import Place

__all__ = [
    "RULE",
    "TOO_BIG",
    "evaluate",
    "fitting",
    "machine_word",
    "parse_number",
    "quoted",
    "quoted_path",
    "typed_word",
]

RULE = "numbers are hex (1080 = 0x1080); decimal has a trailing dot (16.); names and registers add up: main+0x34, sp+8"
"""The rule in one line, for `?` and `--help`."""

TOO_BIG = "more than a 64-bit word holds"
"""What a refusal of a number too big for a machine word says, whatever else it says."""

_SIGN = re.compile(r"([+-])")
_HEX = re.compile(r"(?:0x)?([0-9a-f]+)", re.I)
_DECIMAL = re.compile(r"([0-9]+)\.")

_WORD_DIGITS = {16: 16, 10: 20}
"""The most significant digits a 64-bit word has, in hex and in decimal, as a refusal says them."""

_DIGITS_READ = 64
"""The most significant digits a number may have to be converted at all: `int()` of an unbounded string
is quadratic, and refuses past 4,300 digits. A number a little too big for a word is still read, so that
the caller's own check (`machine_word`) names what does not fit: a register, an address."""

_SHOWN = 40
"""The most characters of a refused text that a sentence quotes (a prefix, `…`, and the length)."""

PATH_MAX = 4096
"""The longest path Linux takes (`PATH_MAX`, the terminating zero included): a longer name, as a record
of a profile may claim one, names no file and is quoted cut."""


def quoted(text: str) -> str:
    """`text` in quotes for a sentence, cut to its start and length when long: a refusal names the text,
    not a screenful of it."""
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[: _SHOWN - 8]!r}… ({len(text):,} characters)"


def quoted_path(path: str) -> str:
    """`path` as it is when a file could have it, else `quoted` (cut): a note naming a 60 KB name a
    profile recorded is one line, not a screenful."""
    return path if len(path) < PATH_MAX else quoted(path)


def machine_word(value: int, what: str) -> int:
    """`value` if it fits a 64-bit machine word, else an `InputError` naming `what` and the value.

    The one check of every number typed for an address, register or memory
    word (`--base`, `--bias`, `--regs`, `--mem`, the app's `g` and the
    debugger's boxes): a parser of richer expressions calls it on what it computes.
    """
    if not 0 <= value <= ADDRESS_MASK:
        raise InputError(f"{what}: {value:#x} does not fit a 64-bit machine word (0 to {ADDRESS_MASK:#x})")
    return value


def fitting(text: str, value: int, what: str) -> int | str:
    """`value`, worked out from `text`, if it fits a machine word (`machine_word`); else the sentence the
    command line refuses it with: `text` quoted, then `what` and the value."""
    try:
        return machine_word(value, what)
    except InputError as exc:
        return f"{quoted(text)}: {exc.message}"


def typed_word(
    text: str, lookup: Callable[[str], Place | int | None] | None = None, what: str = "address"
) -> Place | int | str:
    """`evaluate`, with a number that does not fit a machine word refused (`fitting`): an address, a
    register or a memory word typed in the app, which a negative sum or one past 64 bits is not."""
    value = evaluate(text, lookup)
    return fitting(text, value, what) if isinstance(value, int) else value


def parse_number(text: str) -> int | None:
    """`0x1030`, `1030` → 0x1030; `16.` → 16; None if it is not a number by the rule, or has far more
    digits than a 64-bit word."""
    number = _number(text)
    return number if isinstance(number, int) else None


def _number(text: str) -> int | str | None:
    """A number by the rule; a sentence when it is one with far more digits than a 64-bit word; else None."""
    text = text.strip()
    if m := _DECIMAL.fullmatch(text):
        base, kind = 10, "decimal"
    elif m := _HEX.fullmatch(text):
        base, kind = 16, "hex"
    else:
        return None
    digits = m[1].lstrip("0") or "0"
    if len(digits) > _DIGITS_READ:
        return f"{quoted(text)}: {len(digits):,} {kind} digits, {TOO_BIG} ({_WORD_DIGITS[base]} at most)"
    return int(digits, base)


def evaluate(text: str, lookup: Callable[[str], Place | int | None] | None = None) -> Place | int | str:
    """The value of `text` by the rule; a sentence saying what is wrong when it has none.

    A name is looked up (with and without a leading `$`) before it is read as hex, so that a
    register called `fp` or a function called `add` is what it says; a name `lookup` does not
    know that is hex (`beef`) is the number. The whole text is looked up first, for a C++ name
    with a `+` or `-` in it (`operator+`).
    """
    text = text.strip()
    if not text:
        return "type a number or a name"
    whole = _value(text, lookup) if lookup is not None else None
    if whole is not None and not isinstance(whole, str):
        return whole
    terms = _terms(text)
    if terms is None:
        return f"not a number or an expression of names and numbers: {quoted(text)}"
    total: Place | int = 0
    for position, (sign, body) in enumerate(terms):
        value = _value(body, lookup)
        if isinstance(value, str):
            return value
        if isinstance(value, Place):
            if position or sign == "-":
                return f"{body!r} can only come first: it is a place in a section, not a number to add"
            total = value
            continue
        delta = -value if sign == "-" else value
        total = total.moved(delta) if isinstance(total, Place) else total + delta
    return total


def _value(body: str, lookup: Callable[[str], Place | int | None] | None) -> Place | int | str:
    """One term: a name `lookup` knows, else a number by the rule, else what is wrong."""
    if lookup is not None:
        for name in (body, body.removeprefix("$")):
            found = lookup(name)
            if found is not None:
                return found
    number = _number(body)
    if number is not None:
        return number
    if lookup is None:  # no names here (an offset, a field's value): saying a name was not found would mislead
        return f"not a hex number (decimal has a trailing dot: 16.): {quoted(body)}"
    return f"neither a hex number nor a function name: {quoted(body)}"


def _terms(text: str) -> list[tuple[str, str]] | None:
    """`main + 0x34 - 8` → [("", "main"), ("+", "0x34"), ("-", "8")]: each term with the sign before it,
    the spaces around it dropped; None when a term is missing (`1+`, `1++2`, `+`).

    One split at the signs, so that the work is linear in the text (a pattern that finds the terms
    by matching, with spaces optional around them, backtracks over a long run of spaces).
    """
    pieces = _SIGN.split(text)
    terms = [("", pieces[0].strip())] if pieces[0].strip() or len(pieces) == 1 else []
    terms += [(pieces[at], pieces[at + 1].strip()) for at in range(1, len(pieces), 2)]
    if not terms or any(not body for _, body in terms):
        return None
    return terms
