"""`sfview check`'s report: one line a problem, or JSON, each located in the section and in the file."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sfview.check.catalogue import Severity
from sfview.check.run import Diagnostic
from sfview.consumers import LookupFailure, Verdict
from sfview.document import Document
from sfview.errors import InputError
from sfview.output.safe_text import printable


def line(doc: Document, diag: Diagnostic) -> str:
    """`FILE: section offset 0x4a (file offset 0x…): error fdes-unsorted: fdes[2]: …`."""
    where = doc.where(diag.start)
    return printable(f"{doc.path}: {where}: {diag.severity.value} {diag.check.id}: {diag.path}: {diag.message}")


def lines(doc: Document, diags: list[Diagnostic], verdicts: list[Verdict] | None = None) -> Iterator[str]:
    """Each problem's line, then each profile's verdict (`FILE: kernel: accepted`) and its notes."""
    for diag in diags:
        yield line(doc, diag)
    for answer in verdicts or []:
        yield printable(f"{doc.path}: {answer.consumer}: {verdict_text(answer)}")
        for note in answer.notes:
            yield printable(f"{doc.path}: {answer.consumer}:   {note}")


DEFAULT_MAX_PROBLEMS = 1000
"""`check --max-problems`'s default: the most problems of one kind said for a file."""


class Tally:
    """A file's problems as `check` finds them: the first `bound` of each kind kept (said), the rest of
    that kind counted; whether any is more than an info. What `check` holds is then within the bound
    (times the kinds), whatever a section repeats: a million functions outside the text made a million
    problems held until the end (490 MB).
    """

    def __init__(self, bound: int) -> None:
        self.bound = bound
        """0: every problem kept."""
        self.counts: dict[str, int] = {}
        self.checks: dict[str, Diagnostic] = {}
        """The first problem of each kind (its check's severity, for the line that counts the rest)."""
        self.serious = False
        """A problem more than an info was found (the exit status 1)."""

    def keep(self, diag: Diagnostic) -> bool:
        """Count `diag`; whether it is within its kind's bound (said)."""
        kind = diag.check.id
        count = self.counts.get(kind, 0) + 1
        self.counts[kind] = count
        if count == 1:
            self.checks[kind] = diag
        if diag.severity is not Severity.INFO:
            self.serious = True
        return not self.bound or count <= self.bound

    def more(self) -> dict[str, int]:
        """Each kind past the bound: how many of it were counted and not said."""
        if not self.bound:
            return {}
        return {kind: count - self.bound for kind, count in self.counts.items() if count > self.bound}

    def lines(self, doc: Document) -> Iterator[str]:
        """`FILE: and 999,000 more warning function-size-zero problems (--max-problems 1000)`, a kind each."""
        for kind, more in self.more().items():
            severity = self.checks[kind].severity.value
            yield printable(f"{doc.path}: and {more:,} more {severity} {kind} problems (--max-problems {self.bound})")


MAX_RANGES = 3
"""How many failing PC ranges of one kind a verdict's line names before it counts the rest."""


def verdict_text(answer: Verdict) -> str:
    """`accepted`, `accepted, but lookups at 0x…-0x… fail with -EINVAL (rule)`, or `refused: -EINVAL at
    section offset 0x…: rule`."""
    where = f" at section offset {answer.offset:#x}" if answer.offset is not None else ""
    if not answer.accepted and answer.error == "crash":
        return f"crashes{where}: {answer.rule}"
    if not answer.accepted:
        return f"refused: {answer.error}{where}: {answer.rule}"
    if not answer.lookups:
        return "accepted"
    kinds: dict[tuple[str, str], tuple[list[LookupFailure], list[int]]] = {}
    """The first `MAX_RANGES` failures of each kind, and how many in all (not every failure: there may be
    millions)."""
    for failure in answer.lookups:
        first, count = kinds.setdefault((failure.error, failure.rule), ([], [0]))
        count[0] += 1
        if len(first) < MAX_RANGES:
            first.append(failure)
    parts = []
    for (error, rule), (failures, (count,)) in kinds.items():
        spans = ", ".join(f"{f.start:#x}-{f.end:#x}" for f in failures)
        more = f" and {count - MAX_RANGES} more ranges" if count > MAX_RANGES else ""
        outcome = "crash the consumer" if error == "crash" else f"fail with {error}"
        parts.append(f"lookups at {spans}{more} {outcome} ({rule})")
    return "accepted, but " + "; ".join(parts)


def verdict_json(answer: Verdict) -> dict[str, object]:
    """A verdict for CI jobs to gate on: accepted, the error (or `crash`), the failing lookups."""
    crashes = any(f.error == "crash" for f in answer.lookups)
    return {
        "consumer": answer.consumer,
        "accepted": answer.accepted,
        "error": answer.error if not answer.accepted else ("crash" if crashes else None),
        "rule": answer.rule,
        "section_offset": answer.offset,
        "lookups": [
            {"start": f.start, "end": f.end, "error": f.error, "rule": f.rule, "function": f.function}
            for f in answer.lookups
        ],
        "notes": answer.notes,
    }


def as_json(doc: Document, diags: list[Diagnostic], verdicts: list[Verdict] | None = None) -> dict[str, object]:
    report: dict[str, object] = {
        "file": doc.path,
        "problems": [
            {
                "id": d.check.id,
                "severity": d.severity.value,
                "about": d.check.about,
                "message": d.message,
                "path": d.path,
                "fde": d.fde,
                "fre": d.fre,
                "section_offset": d.start,
                "end": d.end,
                "file_offset": doc.file_offset + d.start if doc.file_offset else None,
                "spec": d.check.spec,
            }
            for d in diags
        ],
    }
    if verdicts:
        report["profiles"] = {answer.consumer: verdict_json(answer) for answer in verdicts}
    return report


def unreadable(path: str, error: InputError) -> dict[str, object]:
    """A file `check` could not read at all, as its entry in the JSON report (exit 2 says it too)."""
    return {"file": path, "unreadable": error.where + ": " + error.message if error.where else error.message,
            "problems": []}  # fmt: skip


def json_text(reports: list[dict[str, object]]) -> str:
    return json.dumps(reports, indent=1)
