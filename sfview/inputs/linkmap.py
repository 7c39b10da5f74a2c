"""The shared libraries a process had loaded, from the dynamic linker's list in its memory.

A core written by the kernel names every mapped file (`NT_FILE`); qemu-user's
cores do not. gdb then finds the libraries as the dynamic linker left them: the
program's `DT_DEBUG` entry points at glibc's `struct r_debug`, whose `r_map`
heads a list of `struct link_map` (`<link.h>`), one per loaded object, each with
its load bias (`l_addr`) and path (`l_name`). The layouts are glibc's on LP64.
"""

from __future__ import annotations

from collections.abc import Callable

DT_NULL = 0
DT_DEBUG = 21
R_MAP = 8
"""`struct r_debug { int r_version; struct link_map *r_map; ... }`: r_map after the int and its padding."""
L_ADDR, L_NAME, L_NEXT = 0, 8, 24
"""`struct link_map { ElfW(Addr) l_addr; char *l_name; ElfW(Dyn) *l_ld; struct link_map *l_next, *l_prev; }`."""
MAX_OBJECTS = 512
"""A list longer than this is taken for a loop in damaged memory."""
MAX_NAME = 4096


def loaded_objects(
    read: Callable[[int], int | None], little_endian: bool, dynamic: int, dynamic_size: int
) -> list[tuple[str, int]]:
    """(path, load bias) of each loaded object but the program, from the program's `.dynamic` at
    `dynamic` (its address in the process); empty when memory does not hold the list."""
    r_debug = None
    for entry in range(dynamic, dynamic + dynamic_size, 16):
        tag = read(entry)
        if tag is None or tag == DT_NULL:
            break
        if tag == DT_DEBUG:
            r_debug = read(entry + 8)
    if not r_debug:
        return []
    found = []
    node = read(r_debug + R_MAP)
    seen: set[int] = set()
    while node and node not in seen and len(seen) < MAX_OBJECTS:
        seen.add(node)
        bias, name_at = read(node + L_ADDR), read(node + L_NAME)
        name = _string(read, little_endian, name_at) if name_at else None
        if bias is not None and name:  # the program's own entry has an empty name
            found.append((name, bias))
        node = read(node + L_NEXT)
    return found


def _string(read: Callable[[int], int | None], little_endian: bool, address: int) -> str | None:
    """The NUL-terminated string at `address`, or None where memory does not hold it."""
    out = b""
    while len(out) < MAX_NAME:
        word = read(address + len(out))
        if word is None:
            return None
        chunk = word.to_bytes(8, "little" if little_endian else "big")
        if 0 in chunk:
            return (out + chunk[: chunk.index(0)]).decode("utf-8", "replace")
        out += chunk
    return None
