"""`sfview check`'s report: one line a problem, or JSON, each located in the section and in the file."""

from __future__ import annotations

import json

from sfview.check.run import Diagnostic
from sfview.document import Document


def line(doc: Document, diag: Diagnostic) -> str:
    """`FILE: section offset 0x4a (file offset 0x…): error fdes-unsorted: fdes[2]: …`."""
    where = doc.source.where(diag.start)
    return f"{doc.path}: {where}: {diag.severity.value} {diag.check.id}: {diag.path}: {diag.message}"


def as_json(doc: Document, diags: list[Diagnostic]) -> dict[str, object]:
    return {
        "file": doc.path,
        "problems": [
            {
                "id": d.check.id,
                "severity": d.severity.value,
                "about": d.check.about,
                "message": d.message,
                "path": d.path,
                "section_offset": d.start,
                "end": d.end,
                "file_offset": doc.source.file_offset + d.start if doc.source.file_offset else None,
                "spec": d.check.spec,
            }
            for d in diags
        ],
    }


def json_text(reports: list[dict[str, object]]) -> str:
    return json.dumps(reports, indent=1)
