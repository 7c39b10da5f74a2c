"""Threads whose stacks lead into one another: each frame is walked once (`--thread all`).

Two hand-built frame-pointer chains (no module: the chain is followed whatever
the PCs): thread 2's second record is thread 1's, so its walk reaches a frame
(PC and CFA) thread 1's walk took. 200 such threads each walking a chain of
1,000 records made `--thread all` print every chain again for each thread.
"""

from __future__ import annotations

from sfview.generated.sframe import Sframe
from sfview.unwind.engine import Crossings, Machine, Unwinder

RSP, RBP, RIP = int(Sframe.Amd64Reg.rsp), int(Sframe.Amd64Reg.rbp), int(Sframe.Amd64Reg.rip)
X86 = Machine(Sframe.AbiArch.amd64_endian_little, RSP, RBP, RIP, False)
STACK = 0x7FFC_0000_0000


def chain(words: dict[int, int], records: list[int], pcs: list[int]) -> None:
    """Frame records at `records` (each: the next record, then the RA), the last one ending the chain."""
    for at, (record, pc) in enumerate(zip(records, pcs, strict=True)):
        words[record] = records[at + 1] if at + 1 < len(records) else 0
        words[record + 8] = pc


def test_a_walk_that_reaches_another_threads_frame_stops() -> None:
    words: dict[int, int] = {}
    shared = [STACK + 0x1000 + 0x20 * i for i in range(300)]
    chain(words, shared, [0x40_2000 + 4 * i for i in range(300)])
    words[STACK] = shared[0]  # thread 2's own first record, then thread 1's chain
    words[STACK + 8] = 0x40_1000  # thread 1's PC: thread 2's frame #1 is thread 1's frame #0
    unwinder = Unwinder([], X86, words.get)
    crossings = Crossings()
    one = list(unwinder.frames(0x40_1000, {RSP: shared[0] - 0x40, RBP: shared[0]}, crossings=(crossings, 1)))
    assert len(one) == 301
    walk = unwinder.frames(0x40_1800, {RSP: STACK - 0x40, RBP: STACK}, crossings=(crossings, 2))
    two = list(walk)
    assert [frame.pc for frame in two] == [0x40_1800, 0x40_1000]
    assert (two[1].cfa, two[1].pc) == (one[0].cfa, one[0].pc)
    assert walk.stop == "frame #1 has the PC and CFA of thread 1's frame #0: the walks meet, this one stops"
    alone = list(unwinder.frames(0x40_1800, {RSP: STACK - 0x40, RBP: STACK}))  # one thread's walk: all of it
    assert len(alone) == 302  # its own frame, then thread 1's 301
