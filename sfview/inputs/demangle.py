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

__all__ = ["both", "demangle"]

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


def both(name: str) -> str:
    """`ns::thrower() [_ZN2ns7throwerEv]`: the demangled name with the stored one, when they differ."""
    shown = demangle(name)
    return shown if shown == name else f"{shown} [{name}]"
