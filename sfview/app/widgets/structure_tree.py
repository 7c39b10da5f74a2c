"""`StructureTree`: the section as a tree of fields, opened on demand.

Every node is a `fields.Field`, labelled with its value and what it means.
Nothing is built before it is opened: a node's children are added when it is
expanded. The FDE array of a big section is split into chunks of `CHUNK`
(`fdes[0..199]`), so that opening it adds hundreds of nodes, not 40,000, and an
FDE node holds only its index until it is opened itself. Past `CHUNKS_AT_MOST`
chunks the chunks are grouped in turn (`fdes[0..49999]`): a million functions
would otherwise open as five thousand chunks, each line of which the tree
measures again on every change, which makes a first look at the tab slow. A
first look opens the group and the chunk of the selected FDE: a few hundred
nodes, each to be labelled, added and laid out (which is why `CHUNK` is a few
hundred, not a thousand). A function's rows are chunked too
(`fres[0..999]`, by `ROW_CHUNK`): a function may have a million.
A chunk's FDE labels come from the overview's start column once it is ready,
not from its functions decoded (`_fde_labels`).
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text, TextType
from textual import on
from textual.geometry import Region, Size
from textual.signal import Signal
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from sfview import rule_notation
from sfview.app.fields import Field, FieldTree, RowFields
from sfview.app.names import ExplorerNames
from sfview.app.palette import colour_of
from sfview.check.catalogue import Severity
from sfview.sframe.bulk.overview import Overview
from sfview.sframe.model.section import Span

__all__ = ["CHUNK", "CHUNK_TYPE", "ROW_CHUNK", "ROW_CHUNK_TYPE", "StructureTree"]

CHUNK = 200
"""FDEs per chunk node when the section has more than this many."""
CHUNKS_AT_MOST = 250
"""Chunks shown side by side at most; more are grouped by this many (and so on). 40,000 functions are 201
chunks side by side; a million, 21 groups of 250 chunks."""
ROW_CHUNK = 1000
"""A function's rows per chunk node when it has more than this many."""

CHUNK_TYPE = "fde_chunk"
"""`Field.type_name` of the chunk nodes, which the tree makes up (they are no part of the format)."""
ROW_CHUNK_TYPE = "fre_chunk"
"""`Field.type_name` of the chunks of a function's rows; their parent is the `fres` array."""

NodeData = Field | int
"""A field, or the index of an FDE whose field is not built yet."""


class StructureTree(Tree[NodeData]):
    """Header, FDEs, each function's FREs, down to every field and bit."""

    def __init__(self, fields: FieldTree, names: ExplorerNames, overview: Overview, *, id: str | None = None) -> None:
        self.fields = fields
        self.coloured = False
        """Each field's name in its kind's colour (with the minimap: `colour_by_kind`)."""
        self.section = fields.section
        self.overview = overview
        """Every function's start, once ready: a chunk's labels without decoding its functions."""
        self.problems: dict[int, Severity] = {}
        """FDEs a check of the section found problems in (their worst severity), said on their nodes."""
        self.names = names
        self._adding = False
        """Children are being added to a node: the tree is invalidated once they all are (`_load`)."""
        super().__init__(self._label(fields.root), data=fields.root, id=id)
        self.guide_depth = 3
        self._loaded: set[int] = set()
        """`id()` of every node whose children have been added."""
        self._fde_nodes: dict[int, TreeNode[NodeData]] = {}
        """The FDE nodes built so far, by FDE index."""
        self._scroll_pending = False
        """The cursor was put on a node before the tree had a size: it is scrolled to when it has one."""
        self._line_style = Style()
        """The tree's own style, worked out once a frame (`render_lines`)."""
        self._unseen: list[TreeNode[NodeData]] = []
        """The nodes a reveal opened while the tree was hidden (`reveal(hidden=True)`), not shown since."""
        self.field_highlighted: Signal[Field] = Signal(self, "field-highlighted")
        """Published with the field under the cursor when the user moves it.

        A signal, for the same reason as `RowTable.row_highlighted`: the other
        panes follow in the same frame. The tree also moves its cursor by itself
        (on mount, for one), which is not the user choosing a field.
        """
        self._load(self.root)
        self.root.expand()

    # ------------------------------------------------------------------ public API

    def field_of(self, node: TreeNode[NodeData]) -> Field:
        """The node's field, building an FDE's field on first use."""
        data = node.data
        if isinstance(data, int):
            node.data = data = self.fields.function_field(data)
        assert data is not None
        return data

    def reveal(self, field: Field, *, hidden: bool = False) -> None:
        """Expand the path down to `field` and put the cursor on it, without announcing it.

        This follows a choice made elsewhere (table, hex pane), so it must not
        come back as a `NodeHighlighted`.

        `hidden`: the tree's tab is not shown (the explorer readies the tree while nobody types). The nodes this
        opens are closed again by the next reveal off their path, unless the tree is shown meanwhile: the tree
        then shows what it would have, had it been brought to the selection as it was shown.
        """
        unseen, self._unseen = self._unseen, []
        opening = self._unseen if hidden else None
        node = self.root
        for step in self._ancestry(field):
            self._open(node, opening)
            node = self._child_for(node, step, opening)
        if unseen:  # opened for a selection nobody saw in the tree: closed again, but for this one's path
            path = {id(ancestor) for ancestor in _ancestors(node)}
            self._unseen += (opened for opened in unseen if id(opened) in path)
            for opened in unseen:
                if id(opened) not in path:
                    opened.collapse()
        with self.prevent(Tree.NodeHighlighted):
            _ = self.last_line  # lays the new nodes out, so that `node.line` is current
            if self.size.height:
                self.move_cursor(node)
            else:  # never laid out (its tab not shown yet): scrolled to once it has its size (`_size_updated`)
                self.cursor_line = node.line
                self._scroll_pending = True

    def on_show(self) -> None:
        """The tree is on the screen: what hidden reveals opened has been seen, and stays open."""
        self._unseen.clear()

    def problems_changed(self, problems: dict[int, Severity]) -> None:
        """A check of the section found problems in these functions: say so on their nodes."""
        self.problems = problems
        self.names_changed()

    def names_changed(self) -> None:
        """The names have arrived: label the FDE nodes already built with them."""
        for index, node in self._fde_nodes.items():
            node.set_label(self._fde_label(index))

    def notify_style_update(self) -> None:
        """Textual's, but for the tree's lines, which Textual's makes again from every node it shows
        (`_invalidate`), and lays the screen out for: new styles (the focus gained or lost, at each visit of the
        tab) change how the lines are drawn, not which they are nor how wide. Only the lines drawn are dropped:
        else the Structure tab's first open would measure all its lines again in the key, after they had been
        made while nobody typed (`Panes.ready_the_tree`)."""
        super(Tree, self).notify_style_update()
        self._line_cache.clear()
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Textual's, with the tree's own style worked out once (for `render_line`)."""
        self._line_style = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """Textual's, drawn in the style `render_lines` worked out, not worked out again for every line: it goes
        through the styles of every ancestor, a good part of drawing the tree's lines."""
        scroll_x, scroll_y = self.scroll_offset
        return self._render_line(y + scroll_y, scroll_x, scroll_x + self.size.width, self._line_style)

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        """Textual's; and the first time the tree has a size, the cursor `reveal` placed scrolled into view
        now, in the layout that gives the size, not a frame later: the Structure tab's first look is one layout
        and one frame (`move_cursor` before the tab is shown scrolls by a window of no height, and Textual's
        scrolling waits for the next refresh)."""
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        if self._scroll_pending and self.scrollable_content_region.height:
            self._scroll_pending = False
            line = Region(0, self.cursor_line, 1, 1)  # the cursor's line, as `scroll_to_line` scrolls to it
            self.scroll_to_region(line, animate=False, immediate=True, force=True, origin_visible=False, x_axis=False)
        return resized

    # ------------------------------------------------------------------ loading

    @on(Tree.NodeExpanded)
    def _on_expanded(self, event: Tree.NodeExpanded[NodeData]) -> None:
        self._load(event.node)

    @on(Tree.NodeHighlighted)
    def _on_highlighted(self, event: Tree.NodeHighlighted[NodeData]) -> None:
        if self.has_focus:
            self.field_highlighted.publish(self.field_of(event.node))

    def _open(self, node: TreeNode[NodeData], opening: list[TreeNode[NodeData]] | None = None) -> None:
        """Load and expand `node`; if it was not expanded, it is added to `opening` (if any)."""
        self._load(node)
        if not node.is_expanded:
            node.expand()
            if opening is not None:
                opening.append(node)

    def _load(self, node: TreeNode[NodeData]) -> None:
        """Add the node's children once: fields, chunks of FDEs, or unbuilt FDEs."""
        if id(node) in self._loaded:
            return
        self._loaded.add(id(node))
        self._adding = True
        try:
            self._add_children(node)
        finally:
            self._adding = False
            self._invalidate()

    def _invalidate(self) -> None:
        """Textual's, once per node opened rather than once per child added (`TreeNode.add` invalidates the
        tree and asks for a layout each time, a good part of adding a chunk's FDEs)."""
        if not self._adding:
            super()._invalidate()

    def _add_children(self, node: TreeNode[NodeData]) -> None:
        field = self.field_of(node)
        if field is self.fields.fdes_field:
            self._add_fdes(node, range(len(self.section)))
        elif field.type_name == CHUNK_TYPE:
            first, last = field.value
            self._add_fdes(node, range(first, last + 1))
        elif field.type_name == ROW_CHUNK_TYPE and field.parent is not None:
            first, last = field.value
            rows = field.parent.children()
            for index in range(first, last + 1):
                self._add(node, rows[index])
        elif isinstance(children := field.children(), RowFields) and len(children) > ROW_CHUNK:
            self._add_row_chunks(node, field, children)
        else:
            for child in children:
                self._add(node, child)

    def _add_row_chunks(self, node: TreeNode[NodeData], fres: Field, rows: RowFields) -> None:
        """A function's rows by chunks of `ROW_CHUNK`, each cut by the rows' positions (no row decoded)."""
        positions = rows.func.rows.positions
        for first in range(0, len(rows), ROW_CHUNK):
            last = min(first + ROW_CHUNK, len(rows)) - 1
            end = positions[last + 1] if last + 1 < len(positions) else fres.span.end
            chunk = Field(
                f"fres[{first}..{last}]",
                f"{fres.path}[{first}..{last}]",
                Span(positions[first] if first < len(positions) else fres.span.start, end),
                "group",
                value=(first, last),
                type_name=ROW_CHUNK_TYPE,
                doc=f"Rows {first} to {last}. (sfview groups the rows of a long function by {ROW_CHUNK}; "
                "the groups are not part of the format.)",
                parent=fres,
            )
            node.add(self._label(chunk), data=chunk)

    def _add(self, node: TreeNode[NodeData], field: Field) -> None:
        if field.has_children:
            node.add(self._label(field), data=field)
        else:
            node.add_leaf(self._label(field), data=field)

    def _add_fdes(self, node: TreeNode[NodeData], indexes: range) -> None:
        """One node per FDE, or per chunk of `CHUNK` FDEs when there are more (per group of chunks when
        there are more than `CHUNKS_AT_MOST` chunks)."""
        if len(indexes) <= CHUNK:
            for index, label in zip(indexes, self._fde_labels(indexes), strict=True):
                self._fde_nodes[index] = node.add(label, data=index)
            return
        size = self.section.fde_size
        start = self.section.fde_start
        step = CHUNK
        while -(-len(indexes) // step) > CHUNKS_AT_MOST:
            step *= CHUNKS_AT_MOST
        for first in range(indexes.start, indexes.stop, step):
            last = min(first + step, indexes.stop) - 1
            chunk = Field(
                f"fdes[{first}..{last}]",
                f"fdes[{first}..{last}]",
                Span(start + first * size, start + (last + 1) * size),
                "group",
                value=(first, last),
                type_name=CHUNK_TYPE,
                doc=f"FDEs {first} to {last}. (sfview groups the FDEs of a big section by {step}; "
                "the groups are not part of the format.)",
                parent=node.data if isinstance(node.data, Field) else None,
            )
            node.add(self._label(chunk), data=chunk)

    # ------------------------------------------------------------------ finding

    def _ancestry(self, field: Field) -> list[Field]:
        """The fields from below the root down to `field`."""
        chain = []
        step: Field | None = field
        while step is not None and step is not self.fields.root:
            chain.append(step)
            step = step.parent
        return chain[::-1]

    def _child_for(
        self, node: TreeNode[NodeData], field: Field, opening: list[TreeNode[NodeData]] | None = None
    ) -> TreeNode[NodeData]:
        """The child of `node` that shows `field`; an FDE is reached through its chunk (chunks opened on the way
        are added to `opening`, as `_open` does)."""
        if field.parent is self.fields.fdes_field:
            index = field.fde
            assert index is not None
            found = self._fde_nodes.get(index)
            while found is None or not _open_down_to(node, found):  # through its group (if any) and its chunk
                node = next(c for c in node.children if _in_chunk(self.field_of(c), index))
                self._open(node, opening)
                found = self._fde_nodes.get(index)
            return found
        found = next((c for c in node.children if c.data is field), None)
        if found is None and field.fre is not None:  # a row, in one of its array's chunks
            chunk = next(c for c in node.children if _in_chunk(self.field_of(c), field.fre))
            self._open(chunk, opening)
            found = next(c for c in chunk.children if c.data is field)
        assert found is not None
        return found

    # ------------------------------------------------------------------ labels

    def colour_by_kind(self, on: bool) -> None:
        """Each field's name in its kind's colour (`palette`), or not."""
        self.coloured = on
        self._line_cache.clear()
        self.refresh()

    def render_label(self, node: TreeNode[NodeData], base_style: Style, style: Style) -> Text:
        """Textual's, the field's name in its kind's colour while `coloured`."""
        text = super().render_label(node, base_style, style)
        data = node.data
        if self.coloured and isinstance(data, Field) and (colour := colour_of(data.path)) is not None:
            at = text.plain.find(data.name)
            if at >= 0:
                text.stylize(colour, at, at + len(data.name))
        return text

    def process_label(self, label: TextType) -> Text:
        """A one-line `Text` as it is: Textual's own cuts every label at its first line (`Text.split`, a copy),
        twice per node added, a good part of adding a chunk's FDEs."""
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def get_label_width(self, node: TreeNode[NodeData]) -> int:
        """The cells of the node's line, counted: Textual's own draws the label (a copy, styled) to count them,
        for every line of the tree each time a node is added or opened (a thousand FDEs and their chunks)."""
        icon = (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE) if node.allow_expand else ""
        return cell_len(icon) + node.label.cell_len

    def _fde_labels(self, indexes: range) -> list[Text]:
        """The labels of a chunk's FDEs, as `_fde_label` makes them. Once the overview is ready, from its start
        column and the names listed from it: decoding and naming a chunk's functions one by one would be most of
        opening it. A function the overview says is broken (its FDE may not decode) is still
        decoded, as is every function before the overview is ready."""
        if not self.overview.ready:
            return [self._fde_label(index) for index in indexes]
        starts = self.overview.start[indexes.start : indexes.stop]
        names = self.names.listing(self.section, starts, first=indexes.start)
        broken = [shape.broken for shape in self.overview.shapes]
        shape = self.overview.shape
        return [
            self._fde_label(index) if broken[shape[index]] else self._readable_label(index, start, name)
            for index, start, name in zip(indexes, starts, names, strict=True)
        ]

    def _fde_label(self, index: int) -> Text:
        """FDE `index`'s label, its function decoded: `fdes[3]  0x1040  main`, or that it cannot be decoded."""
        func = self.section.function(index)
        if func.error:
            label = Text.assemble((f"fdes[{index}]", "bold"))
            label.append("  cannot be decoded", style="red")
            return label
        return self._readable_label(index, func.start_address, self.names.of(func))

    def _readable_label(self, index: int, start: int, name: str) -> Text:
        """The label of an FDE that can be decoded: its index, start address, name and problem (if any)."""
        label = Text.assemble((f"fdes[{index}]", "bold"))
        label.append(f"  {start:#x}")
        if name:
            label.append(f"  {name}", style="italic")
        problem = self.problems.get(index)
        if problem is not None:
            label.append(f"  {problem.value}", style="red" if problem is Severity.ERROR else "yellow")
        return label

    def _label(self, field: Field) -> Text:
        """`name = value  meaning` for a value; `name  0x1c..0x2d` for a structure."""
        index, row = field.fde, field.fre
        if index is not None and field.parent is self.fields.fdes_field:
            return self._fde_label(index)
        if field.kind in ("struct", "array", "group"):
            label = Text.assemble((field.name or "section", "bold"))
            if field.is_bit_byte:
                byte = self.section.data[field.span.start]
                label.append(f" = {byte:#04x} = {byte:08b}")
            elif field.problem:  # a partial record: what could be read is below it
                label.append("  cannot be decoded", style="red")
            elif index is not None and row is not None and field.type_name == "fre":
                decoded = self.section.function(index).rows[row]
                label.append(f"  {decoded.address:#x}  {rule_notation.rules_text(self.section, decoded)}")
            label.append(f"  {field.span.start:#x}..{field.span.end:#x}", style="dim")
            return label
        name = field.name
        if field.bits is not None:
            high, low = field.bits
            name += f" [{high}]" if high == low else f" [{high}..{low}]"
        label = Text(name)
        label.append(f" = {field.display}", style="bold")
        if field.meaning:
            label.append(f"  {field.meaning}", style="dim")
        return label


def _ancestors(node: TreeNode[NodeData]) -> Iterator[TreeNode[NodeData]]:
    """The nodes above `node`, up to the root."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _open_down_to(ancestor: TreeNode[NodeData], node: TreeNode[NodeData]) -> bool:
    """Whether `node` is below `ancestor` with every node between expanded (a hidden reveal closes chunks again)."""
    for parent in _ancestors(node):
        if parent is ancestor:
            return True
        if not parent.is_expanded:
            return False
    return False


def _in_chunk(chunk: Field, index: int) -> bool:
    first, last = chunk.value
    return first <= index <= last
