"""Consumers' verdicts laid over the section's rows: at which PCs each one's lookups fail, and by which rule.

The Problems tab cycles through the consumers (`v`): the format's own checks,
then each profile of `sfview.consumers` (the kernel's reader, ...); `V` keeps
the one shown marked while the cycle goes on, so that several are marked at
once. For each marked one, the FRE table says what its lookups do at the PCs
each row covers (all found, fail at some or all of them, crash; `refused`
when it does not take the section), the field detail names the PCs and the
consumer's rule, the Problems tab lists its failing ranges, and the FDE
table's filter word `fails:NAME` keeps the functions where it fails.

The per-PC truth is the profile's (`Verdict.lookups`, runs of PCs clipped to
their function); this module only lays those runs over the rows.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from sfview.consumers import LookupFailure, Verdict
from sfview.consumers.verdicts import profiles
from sfview.sframe.model.section import Function, Row

FORMAT = "format"
"""The first consumer of the cycle: no consumer, the format's own checks."""
CRASH = "crash"
"""A consumer's error when its code crashes (`LookupFailure.error`)."""
BLOCKS_COUNTED = 4096
"""A PCMASK row's PCs are counted in at most this many of its function's repeated blocks (a damaged size may
claim billions): past them the cell says what the blocks counted say."""


class Outcome(Enum):
    """What a consumer's lookups do at the PCs a row covers: the FRE table's cell, before its counts."""

    FOUND = "ok"
    SOME_FAIL = "fails"
    ALL_FAIL = "fails all"
    CRASH = CRASH
    REFUSED = "refused"


CELLS = ("ok", "fails 99/999", "fails all", CRASH, "refused")
"""What a consumer's column can say of a row (its width fits the longest: counts wider say `fails part`)."""
CELL_WIDTH = max(map(len, CELLS))


def consumer_names() -> list[str]:
    """The cycle: the format, then every registered consumer once (`libsframe`, a name for the newest
    release, is left out: its release's own name is there), the libraries after the kernel's reader and
    glibc's, whose reader is libsframe's cut down, after them."""
    seen: set[str] = set()
    names = [FORMAT]
    for name in sorted(profiles(), key=lambda n: (n == "libsframe", n.startswith("glibc"), n)):
        if profiles()[name].title not in seen:
            seen.add(profiles()[name].title)
            names.append(name)
    return names


def column_title(name: str) -> str:
    """A consumer's column title, short enough for several at 80 columns (`lsf-2.44` for `libsframe-2.44`)."""
    return name.replace("libsframe", "lsf")


@dataclass(frozen=True)
class RowVerdict:
    """What one consumer's lookups do at the PCs one row covers."""

    outcome: Outcome
    failing: int
    """How many of the row's PCs fail or crash (of the blocks counted, for PCMASK)."""
    covered: int
    """How many PCs the row covers (likewise)."""
    ranges: tuple[tuple[int, int, LookupFailure], ...]
    """The failing PCs [start, end) inside the row, each with the profile's failure."""

    @property
    def cell(self) -> str:
        """The FRE table's cell: `ok`, `fails 7/8` (of the row's PCs), `fails all`, `crash`, `refused`."""
        if self.outcome is Outcome.SOME_FAIL:
            counted = f"fails {self.failing}/{self.covered}"
            return counted if len(counted) <= CELL_WIDTH else "fails part"
        return self.outcome.value


class ConsumerMarks:
    """A consumer's verdict on the section, asked row by row and function by function.

    Made in a worker (indexing the failures costs a pass over them): the screen only asks it.
    """

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self._by_function: dict[int, list[LookupFailure]] = {}
        for failure in verdict.lookups:
            if failure.function is not None and failure.start < failure.end:
                self._by_function.setdefault(failure.function, []).append(failure)
        for failures in self._by_function.values():
            failures.sort(key=lambda f: f.start)
        self._starts = {index: [f.start for f in failures] for index, failures in self._by_function.items()}
        self._failures = [f for index in sorted(self._by_function) for f in self._by_function[index]]
        self.failing_pcs = sum(f.end - f.start for f in self._failures)
        """How many PCs of the section's functions fail or crash."""
        self._failing = None if self.refused else set(self._by_function)

    @property
    def name(self) -> str:
        """The consumer's name (`kernel`), which starts the field detail's line."""
        return self.verdict.consumer

    @property
    def refused(self) -> bool:
        return not self.verdict.accepted

    def failing_functions(self) -> set[int] | None:
        """The functions (FDE indexes) where some lookup fails or crashes; None: every one (refused)."""
        return self._failing

    def failures(self) -> list[LookupFailure]:
        """The failing ranges, by function, then by PC."""
        return self._failures

    def row(self, func: Function, row: Row) -> RowVerdict:
        """What the consumer's lookups do at the PCs `row` covers (those a lookup by the format's rule lands
        on: from its start to the next row's, in each repeated block for PCMASK)."""
        if self.refused:
            return RowVerdict(Outcome.REFUSED, 0, 0, ())
        failures = self._by_function.get(func.index, [])
        starts = self._starts.get(func.index, [])
        ranges: list[tuple[int, int, LookupFailure]] = []
        covered = failing = 0
        for low, high in _covered(func, row):
            covered += high - low
            i = max(bisect.bisect_right(starts, low) - 1, 0)
            while i < len(failures) and failures[i].start < high:
                failure = failures[i]
                a, b = max(failure.start, low), min(failure.end, high)
                if a < b:
                    ranges.append((a, b, failure))
                    failing += b - a
                i += 1
        if not failing:
            outcome = Outcome.FOUND
        elif any(f.error == CRASH for _, _, f in ranges):
            outcome = Outcome.CRASH
        else:
            outcome = Outcome.ALL_FAIL if failing == covered else Outcome.SOME_FAIL
        return RowVerdict(outcome, failing, covered, tuple(ranges))

    def mark(self, func: Function, row: Row) -> str:
        """The FRE table's cell for `row`."""
        return self.row(func, row).cell

    def explain(self, func: Function, row: Row) -> str | None:
        """The field detail's line: `kernel: fails at 0x1031..0x1037: rule (error)`; None where all are found."""
        verdict = self.verdict
        if self.refused:
            inside = verdict.offset is not None and row.span.start <= verdict.offset < row.span.end
            where = "refused the section here" if inside else "refused the section"
            return f"{self.name}: {where}: {verdict.rule or ''} ({verdict.error})"
        ranges = self.row(func, row).ranges
        if not ranges:
            return None
        shown = ", ".join(f"{a:#x}..{b - 1:#x}: {f.rule} ({f.error})" for a, b, f in ranges[:3])
        more = f", and {len(ranges) - 3} more ranges" if len(ranges) > 3 else ""
        return f"{self.name}: fails at {shown}{more}"


def _covered(func: Function, row: Row) -> Iterator[tuple[int, int]]:
    """The PCs [low, high) of `func` whose lookup lands on `row` by the format's rule (`Function.row_for`)."""
    rows = func.rows
    start = func.start_address
    end_offset = rows[row.index + 1].start_offset if row.index + 1 < len(rows) else None
    if func.pcmask and func.block_size:
        block = func.block_size
        last = min(end_offset if end_offset is not None else block, block)
        for base in range(0, min(func.size, block * BLOCKS_COUNTED), block):
            low, high = base + row.start_offset, min(base + last, func.size)
            if low < high:
                yield start + low, start + high
        return
    high = min(end_offset if end_offset is not None else func.size, func.size)
    if row.start_offset < high:
        yield start + row.start_offset, start + high
