"""The functions a frame's caller reached through tail calls, found as gdb finds them: its "tail call frames".

A function that ends by jumping to another (`jmp`, a tail call) leaves no
return address: the callee's caller is the function's caller. gdb puts the
functions jumped through back between the two frames where the debug
information says they are the only way (`DW_TAG_call_site` with
`DW_AT_call_tail_call`, in functions that list all their calls): from the call
site at the caller's return address, each function it may have reached by tail
calls, depth first, up to the callee's function (`call_site_find_chain` in gdb's
`dwarf2/loc.c`). Where several chains lead there, only the call sites all of
them share at either end are kept; where none does, or a call site's target is
not known, none. Each such frame is printed at its call site's address (after
the jump), named as the code there is.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol


class CallSite(NamedTuple):
    """A call in a function's code: its address (the return address, after the instruction), whether it is a
    tail call, and the entry address of the function it calls (None: not known, as for a call through a
    register, or a function declared here and defined in another file: then its `name`)."""

    pc: int
    tail: bool
    target: int | None
    name: str | None = None


class CallSites(Protocol):
    """What the chain is found through: a file's call sites, by address, and the tail calls of a function
    that lists all its calls, by the function's entry address; None where the debug information has none."""

    def call_site(self, pc: int) -> CallSite | None: ...

    def tail_calls(self, entry: int) -> list[CallSite] | None: ...


class _Unknown(Exception):
    """A call site of the chain whose target is not known: gdb gives up the whole chain (and sfview past
    `MAX_ENTERED` call sites)."""


MAX_ENTERED = 1 << 14
"""The call sites the search enters at most. gdb's search tries every path of tail calls, each once: layers of
two functions each tail-calling both of the next are 2^layers paths (20 layers, a few kilobytes of DWARF:
5.6 s; 40: for ever). Past the bound the chain is given up, as where a target is not known."""


def tail_call_pcs(sites: CallSites, caller_pc: int, callee_entry: int) -> list[int]:
    """The addresses of the tail call frames between a frame of the function at `callee_entry` and its
    caller, at `caller_pc` (its return address), innermost first, as gdb lists them: empty where gdb finds
    none."""
    start = sites.call_site(caller_pc)
    if start is None:
        return []
    try:
        chain = _chain(sites, start, callee_entry)
    except _Unknown:
        return []
    if chain is None:
        return []
    sites_, callers, callees = chain
    pcs = [site.pc for site in reversed(sites_[len(sites_) - callees :])]
    if callees != len(sites_):
        pcs += [site.pc for site in reversed(sites_[:callers])]
    return pcs


def _chain(sites: CallSites, call_site: CallSite, callee: int) -> tuple[list[CallSite], int, int] | None:
    """gdb's search (`call_site_find_chain_1`): every chain of tail calls from `call_site` reaching `callee`,
    intersected (the call sites, the common callers at one end and callees at the other); None where none
    reaches it or two have nothing in common. As gdb: a function's first tail call is tried, and where it is
    on the chain already, the search backs up to the sibling of the last call site entered."""
    found: tuple[list[CallSite], int, int] | None = None
    chain: list[tuple[list[CallSite], int]] = []  # each call site entered: its function's list, its place there
    visited: set[int] = set()
    entered = 0
    while True:
        if call_site.target is None:
            raise _Unknown
        attempt: tuple[list[CallSite], int] | None = None
        if call_site.target == callee:
            found = _intersected(found, [listed[at] for listed, at in chain])
            if found is None:
                return None
        else:
            following = sites.tail_calls(call_site.target)
            if following is None:
                raise _Unknown
            attempt = (following, 0) if following else None
        while True:
            if attempt is not None and attempt[0][attempt[1]].pc not in visited:
                entered += 1
                if entered > MAX_ENTERED:
                    raise _Unknown
                visited.add(attempt[0][attempt[1]].pc)
                chain.append(attempt)
                break
            attempt = None
            while chain:  # back up: the sibling of the last call site entered, else of the one before
                listed, at = chain.pop()
                visited.discard(listed[at].pc)
                if at + 1 < len(listed):
                    attempt = (listed, at + 1)
                    break
            if attempt is None:
                break
        if not chain:
            return found
        listed, at = chain[-1]
        call_site = listed[at]


def _intersected(
    found: tuple[list[CallSite], int, int] | None, chain: list[CallSite]
) -> tuple[list[CallSite], int, int] | None:
    """gdb's `chain_candidate`: the first chain whole; each other keeps only the callers (from the start) and
    callees (from the end) it shares; None when it shares neither."""
    if found is None:
        return list(chain), len(chain), len(chain)
    sites, callers, callees = found
    length = len(chain)
    for index in range(min(callers, length)):
        if sites[index] != chain[index]:
            callers = index
            break
    for index in range(min(callees, length)):
        if sites[len(sites) - 1 - index] != chain[length - 1 - index]:
            callees = index
            break
    if callers == 0 and callees == 0:
        return None
    return sites, callers, callees
