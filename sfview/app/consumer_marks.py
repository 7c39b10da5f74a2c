"""A consumer's verdict laid over the section's rows: which rows its lookups fail on, and by which rule.

The Problems tab cycles through the consumers (`v`): the format's own checks,
then each profile of `sfview.consumers` (the kernel's reader, ...). For the
chosen one, the FRE table marks the rows a lookup of that consumer fails on
(`-EINVAL`, `crash`, or `refused` on the row the registration stopped at),
and the field detail names the consumer's rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from sfview.consumers import LookupFailure, Verdict
from sfview.consumers.verdicts import profiles
from sfview.sframe.model.section import Function, Row

FORMAT = "format"
"""The first consumer of the cycle: no consumer, the format's own checks."""


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


@dataclass
class ConsumerMarks:
    """A consumer's verdict on the section, asked row by row (by the FRE table and the field detail)."""

    verdict: Verdict

    def __post_init__(self) -> None:
        self._by_function: dict[int, list[LookupFailure]] = {}
        for failure in self.verdict.lookups:
            if failure.function is not None:
                self._by_function.setdefault(failure.function, []).append(failure)

    @property
    def name(self) -> str:
        """The consumer's name (`kernel`), which starts the field detail's line."""
        return self.verdict.consumer

    def failure(self, func: Function, row: Row) -> tuple[str, str] | None:
        """(error, rule) of the consumer at `row`: its registration stopped in the row's bytes, or a lookup
        of an address the row covers fails."""
        verdict = self.verdict
        if not verdict.accepted:
            inside = verdict.offset is not None and row.span.start <= verdict.offset < row.span.end
            return (f"refused {verdict.error}", verdict.rule or "") if inside else None
        rows = func.rows
        end = rows[row.index + 1].address if row.index + 1 < len(rows) else func.end_address
        for failure in self._by_function.get(func.index, []):
            if failure.start < max(end, row.address + 1) and failure.end > row.address:
                return failure.error, failure.rule
        return None

    def mark(self, func: Function, row: Row) -> str:
        """The FRE table's cell: the consumer's error at this row, or nothing."""
        found = self.failure(func, row)
        return found[0] if found else ""

    def explain(self, func: Function, row: Row) -> str | None:
        """The field detail's line: `kernel: __read_fre: ip_off > func_size (-EFAULT)`."""
        found = self.failure(func, row)
        return f"{self.name}: {found[1]} ({found[0]})" if found else None
