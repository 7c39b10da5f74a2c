"""gdb's search for tail call frames (`sfview.dwarf.tail_calls`) over call sites built to cost: every path of
tail calls is tried, and layers of functions that each tail-call every function of the next make the paths
2^layers. The search enters `MAX_ENTERED` call sites at most, then gives the chain up."""

from __future__ import annotations

from sfview.dwarf import tail_calls
from sfview.dwarf.tail_calls import CallSite, tail_call_pcs

CALLEE = 0x1000
CALLER_PC = 0x9000


class Layers:
    """`layers` layers of two functions, each tail-calling both functions of the next (the last: `CALLEE`);
    the caller's call site calls the first layer's first function. Counts the lookups."""

    def __init__(self, layers: int) -> None:
        self.layers = layers
        self.lookups = 0

    def call_site(self, pc: int) -> CallSite | None:
        return CallSite(CALLER_PC, False, self._entry(0, 0)) if pc == CALLER_PC else None

    def tail_calls(self, entry: int) -> list[CallSite] | None:
        self.lookups += 1
        assert self.lookups <= 4 * tail_calls.MAX_ENTERED, "the search went on"
        layer = (entry - 0x2000) // 2
        following = [self._entry(layer + 1, 0), self._entry(layer + 1, 1)]
        if layer + 1 == self.layers:
            following = [CALLEE, CALLEE]
        return [CallSite(0x100000 + 4 * entry + i, True, target) for i, target in enumerate(following)]

    @staticmethod
    def _entry(layer: int, which: int) -> int:
        return 0x2000 + 2 * layer + which


def test_paths_without_end_are_given_up() -> None:
    """40 layers (2^40 paths; 20 took 5.6 s in `unwind`): given up within the bound, no frames put back."""
    sites = Layers(40)
    assert tail_call_pcs(sites, CALLER_PC, CALLEE) == []
    assert sites.lookups <= tail_calls.MAX_ENTERED + 1


class Line:
    """The caller's call site calls f1, which tail-calls f2, which tail-calls `CALLEE`."""

    def call_site(self, pc: int) -> CallSite | None:
        return CallSite(CALLER_PC, False, 0x2000) if pc == CALLER_PC else None

    def tail_calls(self, entry: int) -> list[CallSite] | None:
        return {0x2000: [CallSite(0x2010, True, 0x3000)], 0x3000: [CallSite(0x3010, True, CALLEE)]}.get(entry)


def test_a_chain_of_tail_calls_is_still_found() -> None:
    """f1 and f2 put back between the callee's frame and its caller, innermost first, as gdb lists them."""
    assert tail_call_pcs(Line(), CALLER_PC, CALLEE) == [0x3010, 0x2010]
