"""A `Tree`'s lines drawn as Textual's `Tree._render_line` draws them, with the tree's styles looked up once a frame.

Why by hand: Textual's looks up eight component styles and works out the guides' characters again for every line,
then lays each line out as a Rich `Text` (a copy of the label, spans stylized, rendered). At the Structure tab's
first open at a million functions, its 20 lines took 3.4-3.7 ms of a 24 ms key; drawn here, 0.6 ms. What a line is
(guides, toggle icon, label, their styles and the mouse's `line`, `node` and `toggle` metadata) is Textual's: the
differential test (`tests/test_tree_lines.py`) compares every cell of every line with Textual's own drawing, the
cursor, the mouse and the focus each way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual._segment_tools import line_pad
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets._tree import TOGGLE_STYLE, _TreeLine

__all__ = ["TreeLook", "draw_line"]


@dataclass(frozen=True)
class TreeLook:
    """What every line of one frame is drawn with: the tree's styles and state, looked up once."""

    base: Style
    """The tree's own style (`Widget.rich_style`)."""
    hover_line: Style
    """A line under the mouse (`tree--highlight-line`)."""
    guide: Style
    guide_hover: Style
    guide_selected: Style
    hidden: bool
    """The guides' colour is transparent: they are drawn as spaces."""
    hover_hidden: bool
    selected_hidden: bool
    label: Style
    highlight: Style
    """The label under the mouse (`tree--highlight`)."""
    cursor: Style
    focus: bool
    guide_strings: dict[tuple[Style, bool], tuple[str, str, str, str]] = field(default_factory=dict)
    """Space, vertical, terminator and cross, by guide style and hiding (`guides`)."""

    @classmethod
    def of(cls, tree: Tree[Any]) -> TreeLook:
        guide = tree.get_component_rich_style("tree--guides", partial=True)
        return cls(
            base=tree.rich_style,
            hover_line=tree.get_component_rich_style("tree--highlight-line"),
            guide=guide,
            guide_hover=guide + tree.get_component_rich_style("tree--guides-hover", partial=True),
            guide_selected=guide + tree.get_component_rich_style("tree--guides-selected", partial=True),
            hidden=tree.get_component_styles("tree--guides").color.a == 0,
            hover_hidden=tree.get_component_styles("tree--guides-hover").color.a == 0,
            selected_hidden=tree.get_component_styles("tree--guides-selected").color.a == 0,
            label=tree.get_component_rich_style("tree--label", partial=True),
            highlight=tree.get_component_rich_style("tree--highlight", partial=True),
            cursor=tree.get_component_rich_style("tree--cursor", partial=False),
            focus=tree.has_focus,
        )

    def guides(self, tree: Tree[Any], style: Style, hidden: bool) -> tuple[str, str, str, str]:
        """The guides' strings in `style`: Textual's `get_guides`, worked out once per style."""
        key = (style, hidden)
        found = self.guide_strings.get(key)
        if found is None:
            if tree.show_guides and not hidden:
                lines = tree.LINES["bold" if style.bold else "double" if style.underline2 else "default"]
            else:
                lines = ("  ", "  ", "  ", "  ")
            depth = max(0, tree.guide_depth - 2)
            space, vertical, terminator, cross = (f"{chars[0]}{chars[1] * depth} " for chars in lines)
            found = self.guide_strings[key] = (space, vertical, terminator, cross)
        return found


def draw_line(tree: Tree[Any], look: TreeLook, y: int, line: _TreeLine[Any], is_hover: bool, width: int) -> Strip:
    """Line `y` of the tree, `line`, uncropped: as wide as the tree's widest line or the tree, if wider."""
    line_style = (look.hover_line if is_hover else look.base) + Style(meta={"line": y})
    segments, styled = _guides(tree, look, line, line_style)
    guides_width = sum(cell_len(segment.text) for segment in segments)
    label_width, labelled = _label(tree, look, y, line, line_style, segments)
    if not (styled or labelled):  # as Rich renders a `Text` without spans (its own style is not applied): plain
        segments = [Segment("".join(segment.text for segment in segments))]
    pad_width = max(tree.virtual_size.width, width)
    return Strip(line_pad(segments, 0, pad_width - guides_width - label_width, line_style))


def _guides(tree: Tree[Any], look: TreeLook, line: _TreeLine[Any], line_style: Style) -> tuple[list[Segment], bool]:
    """The guides of the line's path, in the hover's or the selection's style below a hovered or selected node;
    and whether any is drawn in a style (one not null)."""
    path = line.path
    segments = []
    styled = False
    hover = path[0]._hover
    selected = path[0]._selected and look.focus
    guide_style = look.guide
    hidden = True
    combined: dict[Style, Style] = {}
    for node in path[1:]:
        hidden = look.hidden
        if hover:
            guide_style, hidden = look.guide_hover, look.hover_hidden
        if selected:
            guide_style, hidden = look.guide_selected, look.selected_hidden
        if node is not path[-1]:
            space, vertical, _, _ = look.guides(tree, guide_style, hidden)
            style = combined.get(guide_style) or combined.setdefault(guide_style, line_style + guide_style)
            segments.append(Segment(space if node.is_last else vertical, style))
            styled = styled or bool(guide_style)
        hover = hover or node._hover
        selected = (selected or node._selected) and look.focus
    if len(path) > 1:
        _, _, terminator, cross = look.guides(tree, guide_style, hidden)
        segments.append(Segment(terminator if line.last else cross, line_style + guide_style))
        styled = styled or bool(guide_style)
    return segments, styled


def _label(
    tree: Tree[Any], look: TreeLook, y: int, line: _TreeLine[Any], line_style: Style, segments: list[Segment]
) -> tuple[int, bool]:
    """The toggle icon and the label, appended to `segments`, in the styles a Rich `Text` of them renders with
    (later spans over earlier ones); their width, and whether there is any (or the label has a style or spans)."""
    node = line.path[-1]
    label_style = look.label
    if tree.hover_line == y:
        label_style += look.highlight
    if tree.cursor_line == y:
        label_style += look.cursor
    node_meta = Style(meta={"node": node._id})
    tail = label_style + node_meta
    width = 0
    if node._allow_expand:
        icon = tree.ICON_NODE_EXPANDED if node.is_expanded else tree.ICON_NODE
        if icon:
            segments.append(Segment(icon, line_style + (line_style + TOGGLE_STYLE) + node_meta))
            width += cell_len(icon)
    label: Text = node._label
    plain = label.plain
    if not plain:
        return width, bool(width or label.style or label.spans)
    get_style = tree.app.console.get_style
    outer = [label.style] if label.style else []
    spans = [span for span in label.spans if span.start < span.end]
    size = len(plain)
    cuts = sorted({0, size, *(min(span.start, size) for span in spans), *(min(span.end, size) for span in spans)})
    for start, end in pairwise(cuts):
        inner = [span.style for span in spans if span.start <= start and end <= span.end]
        style = line_style
        for part in (*outer, *inner):
            style += get_style(part)
        segments.append(Segment(plain[start:end], style + tail))
    return width + label.cell_len, True
