"""The rooms of the package, the one direction of flow between them, and no module importing itself back.

bytes → Kaitai objects (`generated`) → the format model (`sframe`) → the
opened file (`document`) → engines (`check`, `consumers`, `code`, `unwind`)
→ outputs (`output`) → views (`app`) → the command line (`cli`). Inputs
(`inputs`) find bytes and names and know nothing of the model. ARCHITECTURE.md
draws the same picture; this test keeps it true. Every import counts: at
module level, inside a function, or under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "sfview"

LAYERS = [
    {"sfview", "errors", "generated"},
    {"inputs"},
    {"sframe"},
    {"rule_notation", "dwarf"},
    {"document"},
    {"check", "consumers", "code", "unwind", "diff", "stats", "profiling", "edit"},
    {"output"},
    {"app", "gdb"},
    {"cli"},
    {"entry", "__main__"},
]
"""Each room may import its own layer's rooms and those of the layers above it in this list, never below."""

LAYER = {room: depth for depth, rooms in enumerate(LAYERS) for room in rooms}

BELOW = {"sframe/model": ("sfview.sframe.bulk",)}
"""Within a room: the model never imports the bulk reader built on it."""

VIEWS_ONLY = ("textual", "rich")
"""What only the app may import (the command line reaches the app, and so Textual, through `sfview.app`)."""


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "sfview"


MODULES = {_module(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, wherever the import stands, as full names (`from a import b` gives `a.b`
    when `a.b` is a module, else `a`)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES)
    return names


def _graph() -> dict[str, set[str]]:
    """sfview's modules → the sfview modules each imports (a package stands for its `__init__`)."""
    return {
        module: {name for name in _imports(path) if name in MODULES and name != module}
        for module, path in MODULES.items()
    }


def test_every_room_has_a_layer() -> None:
    rooms = {_room(module) for module in MODULES}
    assert rooms == set(LAYER), f"rooms without a layer: {sorted(rooms - set(LAYER))}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_only_its_layer_and_those_below(module: str) -> None:
    room = _room(module)
    for name in _imports(MODULES[module]):
        if name.startswith("sfview"):
            assert LAYER[_room(name)] <= LAYER[room], f"{module} ({room}) imports {name} ({_room(name)}), a layer above"
        elif name.split(".")[0] in VIEWS_ONLY:
            assert room == "app", f"{module} imports {name}: only the app draws"
    for inner, forbidden in BELOW.items():
        if MODULES[module].is_relative_to(PACKAGE / inner):
            bad = sorted(name for name in _imports(MODULES[module]) if name.startswith(forbidden))
            assert not bad, f"{module} imports {bad}"


def test_no_module_imports_itself_back() -> None:
    """No cycle of imports of any length: Tarjan's strongly connected components, each of one module."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert not cycles, f"modules that import each other back: {cycles}"


def test_the_cycle_finder_finds_a_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above can fail: two modules that import each other are found."""
    graph = _graph()
    graph["sfview.errors"] = {"sfview.document"}
    monkeypatch.setattr(sys.modules[__name__], "_graph", lambda: graph)
    with pytest.raises(AssertionError, match=re.escape("sfview.document")):
        test_no_module_imports_itself_back()


def test_no_format_constant_outside_the_ksy() -> None:
    """The layout facts the model once kept as its own constants now come from generated code."""
    old = ("FDE_SIZES", "ADDR_SIZES", "V3_ATTR_SIZE", "HEADER_SIZE", "DWARF_SP_FP", "OFFSET_SIZE_BYTES")
    for path in PACKAGE.rglob("*.py"):
        if "generated" in path.parts:
            continue
        text = path.read_text()
        kept = [name for name in old if re.search(rf"\b{name}\b", text)]
        assert not kept, f"{path.name} keeps a format constant of its own: {kept}"
