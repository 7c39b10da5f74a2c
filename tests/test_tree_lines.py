"""The tree's lines drawn by `tree_lines.draw_line` are Textual's own (`Tree._render_line`), cell for cell.

Every line of the Structure tree of real sections (FDE chunks, bit fields, problems, names), and of a plain Textual
tree whose labels have what the Structure tree's lack (a label's own style, overlapping spans, empty labels, wide
characters, custom icons); with the focus and without, the cursor on each line, the mouse over a line; guides
bold, hidden, off and deeper. A cell is its character and its style, the mouse's metadata included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, fuzzed_section
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widgets import Tree

from sfview.app.app import SfviewApp
from sfview.app.widgets.tree_lines import TreeLook, draw_line
from sfview.document import Document


def _cells(strip: Strip) -> list[tuple[str, Style | None]]:
    return [(char, segment.style) for segment in strip for char in segment.text]


def _assert_drawn_as_textual_draws(tree: Tree[Any]) -> int:
    """Every line of the tree both ways; the number of lines compared."""
    look = TreeLook.of(tree)
    width = tree.size.width
    assert width
    for y, line in enumerate(tree._tree_lines):
        is_hover = tree.hover_line >= 0 and any(node._hover for node in line.path)
        wide = max(tree.virtual_size.width, width)
        ours = draw_line(tree, look, y, line, is_hover, width).crop(0, wide)
        tree._line_cache.clear()  # lines Textual drew before the focus, cursor or mouse last moved
        textual = Tree._render_line(tree, y, 0, wide, tree.rich_style)
        assert _cells(ours) == _cells(textual), f"line {y}: {textual.text!r}"
        assert ours.cell_length == textual.cell_length
    return len(tree._tree_lines)


async def _every_state(pilot, tree: Tree[Any]) -> int:
    """The tree's lines compared with the cursor on every line, focused and not, the mouse over some."""
    compared = 0
    for focused in (True, False):
        tree.screen.set_focus(tree if focused else None)
        await pilot.pause()
        assert tree.has_focus is focused
        for line in range(len(tree._tree_lines)):
            tree.cursor_line = line
            tree.hover_line = (line + 2) % len(tree._tree_lines) if line % 2 else -1
            compared += _assert_drawn_as_textual_draws(tree)
    return compared


def _damaged(folder: Path) -> Path:
    """The first fuzzed section with a function that cannot be decoded (labelled so, in red)."""
    for seed in range(60):
        path = fuzzed_section(seed, folder)
        section = Document.open(str(path)).section
        if section is not None and any(section.function(index).error for index in range(len(section))):
            return path
    raise AssertionError("no fuzzed section has a function that cannot be decoded")


@pytest.mark.parametrize("name", ["shapes-x86_64-O2", "shapes-aarch64-O2", "deep-x86_64", "damaged"])
async def test_the_structure_trees_lines_are_those_textual_draws(name: str, tmp_path: Path) -> None:
    path = _damaged(tmp_path) if name == "damaged" else DATA / name
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        explorer = app.explorer
        await pilot.press("2")
        await pilot.pause()
        tree = explorer.structure
        for node in list(tree.root.children)[:3]:  # the header, its bit fields, the first FDEs and their rows
            node.expand_all()
        await pilot.pause()
        assert len(tree._tree_lines) > 40
        assert await _every_state(pilot, tree) > 2 * 40 * 40


class _Trees(App[None]):
    CSS = """
    Tree > .tree--highlight { text-style: underline; }
    Tree > .tree--highlight-line { background: darkblue; }
    Tree > .tree--guides-hover { color: orange; }
    #bold > .tree--guides { text-style: bold; }
    #bold > .tree--guides-selected { text-style: underline; color: red; }
    #hidden > .tree--guides { color: transparent; }
    """

    def __init__(self, tree_id: str) -> None:
        super().__init__()
        self.tree_id = tree_id

    def compose(self) -> ComposeResult:
        yield Tree("root", id=self.tree_id)


def _fill(tree: Tree[Any]) -> None:
    """Labels with their own style, overlapping and empty spans, no text, wide characters, markup."""
    styled = Text("styled label", style="bold magenta")
    overlapping = Text("abcdefghij")
    overlapping.stylize("red", 0, 6)
    overlapping.stylize("italic on blue", 3, 9)
    overlapping.stylize(Style(underline=True), 2, 2)  # empty
    overlapping.stylize("green", 8, 20)  # past the end
    first = tree.root.add(styled, expand=True)
    first.add_leaf(overlapping)
    first.add_leaf("")
    second = first.add("日本語 wide", expand=True)
    second.add_leaf("[b]markup[/b] and more")
    second.add("collapsed").add_leaf("never shown")
    tree.root.add_leaf(Text("last", style=Style(meta={"own": 1})))
    tree.root.expand()


@pytest.mark.parametrize("tree_id", ["plain", "bold", "hidden", "unguided", "deep"])
async def test_a_plain_trees_lines_are_those_textual_draws(tree_id: str) -> None:
    app = _Trees(tree_id)
    async with app.run_test(size=(80, 60)) as pilot:
        tree = app.query_one(f"#{tree_id}", Tree)
        _fill(tree)
        if tree_id == "unguided":
            tree.show_guides = False
            tree.ICON_NODE = ""
        if tree_id == "deep":
            tree.guide_depth = 6
            tree.show_root = False
        await pilot.pause()
        assert await _every_state(pilot, tree) > 0
