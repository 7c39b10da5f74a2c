"""Text from a file made safe to print: names and paths cannot colour a terminal or forge a line.

Names come from symbol tables, paths from a core's `NT_FILE` note, both
bytes an attacker chooses: an escape sequence in one would be obeyed by the
terminal, a newline would start a line of its own. In text output every
control character (C0, DEL, C1), every line or paragraph separator and every
byte that was not UTF-8 (held as a lone surrogate, `surrogateescape`) is
written as a `\\x..` escape; JSON output keeps the raw value (JSON escapes it).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\\\\]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\\":
        return "\\\\"
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as surrogateescape holds it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with what a terminal would obey or split on escaped (a backslash doubled, so that it is read back
    the same)."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def pictured(text: str) -> str:
    """`text` with each control character but the newline shown as its Unicode control picture (`␛` for
    ESC, `␇` for BEL; C1 and the line separators as `�`): one character for one, so that a rich text's
    styles still fall where they did. What the explorer shows of a file (names, paths), which a terminal
    would otherwise obey (an `OSC 52` in a symbol's name set the clipboard)."""
    return _CONTROL.sub(_picture, text) if _CONTROL.search(text) else text


def printable_lines(lines: list[str]) -> str:
    """Lines, each made printable, one a line: a name's newline stays inside its line."""
    return "".join(printable(line) + "\n" for line in lines)
