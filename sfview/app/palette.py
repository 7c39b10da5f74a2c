"""One colour per kind of field, the same in the minimap, the hex pane, the field tree and the tables' titles.

A kind is what a field is in every record that has it: `func_size` is one
kind in every FDE (and in a version 3 FDE's attributes), `start_addr` one in
every row, the header's fields one kind together. The minimap draws the
section by part (`Part`), each in the colour of the part's first field kind.
Shown with the minimap (`m`), so that the panes' everyday colours stay calm.
"""

from __future__ import annotations

import re
from enum import Enum

from rich.style import Style

from sfview.sframe.model.section import Section


class Part(Enum):
    """The parts of a section, as the minimap draws them."""

    HEADER = "header"
    FDES = "FDEs"
    FRES = "FREs"
    OTHER = "other bytes"


KIND_COLOURS = {
    "header": "orchid1",
    "func_start": "dodger_blue1",
    "func_size": "cyan",
    "func_start_fre_off": "medium_purple1",
    "func_num_fres": "steel_blue1",
    "func_info": "sky_blue1",
    "func_info2": "sky_blue1",
    "func_rep_size": "light_slate_blue",
    "padding2": "grey50",
    "start_addr": "green3",
    "info": "yellow3",
    "offsets": "dark_orange",
    "flex": "dark_orange",
}
"""Each kind's colour (Rich's names: they hold on a dark and a light theme)."""

PART_COLOURS = {
    Part.HEADER: KIND_COLOURS["header"],
    Part.FDES: KIND_COLOURS["func_start"],
    Part.FRES: KIND_COLOURS["start_addr"],
    Part.OTHER: "grey35",
}

TITLE_KINDS = {
    "start": "func_start",
    "end": "func_size",
    "size": "func_size",
    "FREs": "func_num_fres",
    "FRE type": "func_info",
    "PC type": "func_info",
    "key": "func_info",
    "CFA": "offsets",
    "FP": "offsets",
    "RA": "offsets",
    "base": "info",
    "off.size": "info",
    "mangled": "info",
}
"""The tables' columns by the kind of field they show (`start` in the FRE table is the row's: `ROW_TITLES`)."""

ROW_TITLES = {**TITLE_KINDS, "start": "start_addr"}
"""The FRE table's columns by kind."""

TITLE_KINDS_COLOURS = {title: KIND_COLOURS[kind] for title, kind in TITLE_KINDS.items()}
"""The FDE table's column titles' colours."""

ROW_TITLES_COLOURS = {title: KIND_COLOURS[kind] for title, kind in ROW_TITLES.items()}
"""The FRE table's column titles' colours."""


def section_parts(section: Section) -> list[tuple[int, int, Part]]:
    """The section's parts, in order: (start, end, part), the bytes between them `Part.OTHER`."""
    size = len(section.data)
    fde_end = min(size, section.fde_start + section.num_fdes * section.fde_size)
    fre_end = min(size, section.fre_start + section.header.fre_len)
    return [
        (0, min(size, section.header_end), Part.HEADER),
        (min(size, section.fde_start), fde_end, Part.FDES),
        (min(size, section.fre_start), fre_end, Part.FRES),
    ]


def legend() -> str:
    """The minimap's colours in words, for the status line."""
    return ", ".join(f"{part.value} {PART_COLOURS[part].replace('_', ' ')}" for part in Part) + ", ! a problem"


_INDEX = re.compile(r"\[\d+\]")
_PASS_THROUGH = {"fdes", "fres", "attr"}


def kind_of(path: str) -> str | None:
    """The kind of the field at `path` (`fdes[3].attr.func_info.fre_type` → `func_info`), None for a whole
    record or array."""
    names = _INDEX.sub("", path).split(".")
    if names[0] in ("preamble", "header", "auxhdr"):
        return "header" if len(names) > 1 or names[0] == "auxhdr" else None
    rest = [n for n in names if n not in _PASS_THROUGH]
    return rest[0] if rest else None


def colour_of(path: str) -> Style | None:
    """The colour of the field at `path`'s kind, None when it has none."""
    kind = kind_of(path)
    colour = KIND_COLOURS.get(kind) if kind is not None else None
    return Style(color=colour) if colour is not None else None
