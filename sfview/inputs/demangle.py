"""C++ names as people read them: `ns::thrower()` for `_ZN2ns7throwerEv`.

Through `cxxfilt`, which calls the C++ runtime's own `abi::__cxa_demangle`
(libstdc++, found with ctypes): the demangler the compiler's library ships,
so its output is the toolchain's. On every `_Z` name of libstdc++ it gives
exactly what `c++filt` gives but for the standard abbreviations
(`std::istream` where `c++filt` spells out
`std::basic_istream<char, std::char_traits<char> >`), quickly enough for a
whole symbol table; the pure-Python and Rust candidates tried beside it got
hundreds of names wrong (see `tests/oracles/test_demangle.py`). Without a C++ runtime on the machine
names are shown as they are stored.

A name on screen can carry more than the symbol: `name+0x12` (an offset into
it), `name@plt` (a PLT entry), `name@@GLIBCXX_3.4` (a version): only the
symbol is demangled, the rest kept as it is.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["both", "demangle", "without_parameters"]

_PARTS = r"^(?P<symbol>_Z[^@+]*)(?P<rest>(?:@.*|\+0x[0-9a-f]+)?)$"
"""Compiled (by `re`'s cache) when a C++ name is first met, not when every unwind starts."""


@cache
def _symbol(symbol: str) -> str:
    import cxxfilt  # its import looks for libstdc++: only once a C++ name is met

    try:
        return cxxfilt.demangle(symbol)
    except cxxfilt.Error:  # not a C++ name after all, or no C++ runtime on this machine (LibraryNotFound)
        return symbol
    except UnicodeEncodeError:  # bytes of the file that are not UTF-8 (kept as surrogates): no mangled name
        return symbol


def demangle(name: str) -> str:
    """`name` as people read it: a C++ symbol demangled, whatever follows it (`+0x12`, `@plt`) kept."""
    if not name.startswith("_Z"):
        return name
    m = re.match(_PARTS, name)
    if m is None:
        return name
    return _symbol(m["symbol"]) + m["rest"]


OPENING, CLOSING = "(<[{", ")>]}"
OPERATOR = re.compile(r"\boperator\s*(?:<=>|<<=|>>=|->\*|<<|>>|<=|>=|->|<|>|\(\)|\[\])?")
"""An operator's name, whose brackets do not open or close anything (`operator<<`, `operator()`)."""
SPECIAL = ("_ZT", "_ZG")
"""Special names (`typeinfo for …`, `virtual thunk to …`, `guard variable for …`), which the demangler
prints whole, parameters and all, with or without `DMGL_PARAMS`."""
QUALIFIERS = (" const", " volatile", " &&", " &", " noexcept")
CLONE = re.compile(r"( \[clone [^]]*\])+$")
"""`[clone .constprop.0]`: a copy of the function that the compiler made, named after it (without it here)."""


@cache
def without_parameters(name: str) -> str:
    """A C++ symbol demangled as perf names a function (libiberty's demangler without `DMGL_PARAMS`, as
    `c++filt -p`): without the parameters, what qualifies them (`const`) and a function template's return
    type: `shapes::mixed<unsigned char>` for `_ZN6shapes5mixedIhEET_S1_i`, `shapes::label[abi:cxx11]`;
    the name as it is where it is no C++ symbol. Worked out of the runtime's demangled name: the demangler
    with that option is not a library on the machine."""
    full = demangle(name)
    text = CLONE.sub("", full)
    if full == name or name.startswith(SPECIAL) or not text.endswith((")", *QUALIFIERS)):
        return full
    while text.endswith(QUALIFIERS):
        text = text[: text.rindex(" ")]
    depth, cut, start, named = 0, None, 0, False
    at = 0
    while at < len(text):
        operator = OPERATOR.match(text, at) if text[at] == "o" else None
        if operator is not None and (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")):
            named = named or depth == 0  # past the return type: an operator's spaces are its name's
            at = operator.end()
            continue
        char = text[at]
        if char in OPENING:
            if char == "(" and depth == 0:
                cut = at
            depth += 1
        elif char in CLOSING:
            depth = max(depth - 1, 0)
        elif char == " " and depth == 0 and not named:
            start = at + 1  # what came before was the return type
        at += 1
    return full if cut is None else text[start:cut]


def both(name: str) -> str:
    """`ns::thrower() [_ZN2ns7throwerEv]`: the demangled name with the stored one, when they differ."""
    shown = demangle(name)
    return shown if shown == name else f"{shown} [{name}]"
