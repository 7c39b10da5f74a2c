"""The rooms of the package and the one direction of flow between them.

bytes → Kaitai objects (`sfview/generated`) → the format model (`sfview/sframe`)
→ engines and outputs → views (`sfview/app`). Inputs (`sfview/inputs`) find
bytes and names and know nothing of the model; the model never imports a view,
nor the bulk reader built on it (`sfview/sframe/bulk`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "sfview"

# Room → modules (prefixes) it must not import.
FORBIDDEN = {
    "sframe": (
        "sfview.app",
        "sfview.output",
        "sfview.inputs",
        "sfview.document",
        "sfview.cli",
        "sfview.check",
        "sfview.dwarf",
        "sfview.unwind",
        "sfview.code",
        "sfview.consumers",
        "textual",
        "rich",
    ),
    "sframe/model": ("sfview.sframe.bulk",),
    "inputs": ("sfview.sframe", "sfview.app", "sfview.output", "sfview.document", "textual", "rich"),
    "output": ("sfview.app", "textual", "rich"),
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_rooms_import_only_downstream(room: str) -> None:
    for path in sorted((PACKAGE / room).rglob("*.py")):
        bad = {name for name in _imports(path) for prefix in FORBIDDEN[room] if name.startswith(prefix)}
        assert not bad, f"{path.relative_to(PACKAGE.parent)} imports {sorted(bad)}"


def test_no_format_constant_outside_the_ksy() -> None:
    """The layout facts the model once kept as its own constants now come from generated code."""
    old = ("FDE_SIZES", "ADDR_SIZES", "V3_ATTR_SIZE", "HEADER_SIZE", "DWARF_SP_FP", "OFFSET_SIZE_BYTES")
    for path in PACKAGE.rglob("*.py"):
        if "generated" in path.parts:
            continue
        text = path.read_text()
        kept = [name for name in old if re.search(rf"\b{name}\b", text)]
        assert not kept, f"{path.name} keeps a format constant of its own: {kept}"
