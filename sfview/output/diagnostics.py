"""`sfview check`'s report: one line a problem, or JSON, each located in the section and in the file."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sfview.check.catalogue import PROFILES, Severity
from sfview.check.run import Diagnostic
from sfview.consumers import PROFILES as CONSUMERS
from sfview.consumers import Verdict
from sfview.document import Document

LOOKUPS_SAID = 10
"""How many failing lookup ranges a verdict lists before it only counts the rest."""


def line(doc: Document, diag: Diagnostic) -> str:
    """`FILE: section offset 0x4a (file offset 0x…): error fdes-unsorted: fdes[2]: …`."""
    where = doc.source.where(diag.start)
    return f"{doc.path}: {where}: {diag.severity.value} {diag.check.id}: {diag.path}: {diag.message}"


def verdict(diags: list[Diagnostic], profile: str) -> tuple[bool, Diagnostic | None]:
    """Whether the profile's consumer would take the section, and the first reason it would not."""
    first = next((d for d in diags if d.severity is Severity.ERROR), None)
    return first is None, first


def verdict_lines(doc: Document, verdict: Verdict) -> Iterator[str]:
    """A consumer profile's verdict: accepted, refused with the consumer's error, or a crash; then the lookups
    that fail and what else the consumer's behaviour shows."""
    who = CONSUMERS[verdict.consumer].title
    where = f" (section offset {verdict.offset:#x})" if verdict.offset is not None else ""
    if verdict.accepted:
        yield f"{doc.path}: {verdict.consumer}: {who} accepts this section"
    elif verdict.error == "crash":
        yield f"{doc.path}: {verdict.consumer}: {who} crashes on this section: {verdict.rule}{where}"
    else:
        yield f"{doc.path}: {verdict.consumer}: {who} refuses this section with {verdict.error}: {verdict.rule}{where}"
    for failure in verdict.lookups[:LOOKUPS_SAID]:
        what = "crash" if failure.error == "crash" else f"fail ({failure.error})"
        yield (
            f"{doc.path}:   lookups at {failure.start:#x}..{failure.end:#x} (fdes[{failure.function}]) {what}: "
            f"{failure.rule}"
        )
    if len(verdict.lookups) > LOOKUPS_SAID:
        yield f"{doc.path}:   and {len(verdict.lookups) - LOOKUPS_SAID} more failing lookup ranges"
    for note in verdict.notes:
        yield f"{doc.path}:   {note}"


def lines(doc: Document, diags: list[Diagnostic], profile: str | None, judged: Verdict | None = None) -> Iterator[str]:
    """Each problem's line, then (with a profile) whether that consumer would take the section."""
    for diag in diags:
        yield line(doc, diag)
    if judged is not None:
        yield from verdict_lines(doc, judged)
    elif profile is not None:
        accepted, first = verdict(diags, profile)
        who = PROFILES[profile]
        if accepted:
            yield f"{doc.path}: {who} would accept this section"
        else:
            assert first is not None
            yield f"{doc.path}: {who} would refuse this section: first, {first.check.about} ({first.check.id})"


def as_json(
    doc: Document, diags: list[Diagnostic], profile: str | None = None, judged: Verdict | None = None
) -> dict[str, object]:
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
                "file_offset": doc.source.file_offset + d.start if doc.source.file_offset else None,
                "spec": d.check.spec,
            }
            for d in diags
        ],
    }
    if judged is not None:
        report.update(verdict_json(judged))
    elif profile is not None:
        report["profile"] = profile
        report["accepted"] = verdict(diags, profile)[0]
    return report


def verdict_json(verdict: Verdict) -> dict[str, object]:
    """`accepted`, `error` (the consumer's, or `crash`), `rule`, `lookups` (failing PC ranges and why), `notes`."""
    return {
        "profile": verdict.consumer,
        "accepted": verdict.accepted,
        "error": verdict.error,
        "rule": verdict.rule,
        "section_offset": verdict.offset,
        "lookups": [
            {"start": f.start, "end": f.end, "error": f.error, "rule": f.rule, "fde": f.function}
            for f in verdict.lookups
        ],
        "notes": verdict.notes,
    }


def json_text(reports: list[dict[str, object]]) -> str:
    return json.dumps(reports, indent=1)
