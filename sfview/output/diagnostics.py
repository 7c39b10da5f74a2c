"""`sfview check`'s report: one line a problem, or JSON, each located in the section and in the file."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sfview.check.catalogue import PROFILES, Severity
from sfview.check.run import Diagnostic
from sfview.document import Document
from sfview.errors import InputError
from sfview.output.safe_text import printable


def line(doc: Document, diag: Diagnostic) -> str:
    """`FILE: section offset 0x4a (file offset 0x…): error fdes-unsorted: fdes[2]: …`."""
    where = doc.source.where(diag.start)
    return printable(f"{doc.path}: {where}: {diag.severity.value} {diag.check.id}: {diag.path}: {diag.message}")


def verdict(diags: list[Diagnostic], profile: str) -> tuple[bool, Diagnostic | None]:
    """Whether the profile's consumer would take the section, and the first reason it would not."""
    first = next((d for d in diags if d.severity is Severity.ERROR), None)
    return first is None, first


def lines(doc: Document, diags: list[Diagnostic], profile: str | None) -> Iterator[str]:
    """Each problem's line, then (with a profile) whether that consumer would take the section."""
    for diag in diags:
        yield line(doc, diag)
    if profile is not None:
        accepted, first = verdict(diags, profile)
        who = PROFILES[profile]
        if accepted:
            yield printable(f"{doc.path}: {who} would accept this section")
        else:
            assert first is not None
            yield printable(
                f"{doc.path}: {who} would refuse this section: first, {first.check.about} ({first.check.id})"
            )


def as_json(doc: Document, diags: list[Diagnostic], profile: str | None = None) -> dict[str, object]:
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
    if profile is not None:
        report["profile"] = profile
        report["accepted"] = verdict(diags, profile)[0]
    return report


def unreadable(path: str, error: InputError) -> dict[str, object]:
    """A file `check` could not read at all, as its entry in the JSON report (exit 2 says it too)."""
    return {"file": path, "unreadable": error.where + ": " + error.message if error.where else error.message,
            "problems": []}  # fmt: skip


def json_text(reports: list[dict[str, object]]) -> str:
    return json.dumps(reports, indent=1)
