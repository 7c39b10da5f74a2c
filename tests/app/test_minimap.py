"""The minimap (`m`): the section by part, driven by keys and clicks; one colour per kind of field."""

from __future__ import annotations

from conftest import DATA

from sfview.app import palette
from sfview.app.app import SfviewApp
from sfview.app.widgets.minimap import Minimap
from sfview.document import Document

SIZE = (120, 40)


async def test_m_shows_the_section_by_part_and_its_keys_and_clicks_go_there() -> None:
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        explorer = app.explorer
        section = explorer.section
        minimap = explorer.query_one(Minimap)
        assert not minimap.display
        await pilot.press("m")
        assert minimap.display and app.focused is minimap and minimap.region.width == 4
        per = minimap.per_line
        lines = [minimap.part_at(y * per, (y + 1) * per) for y in range(-(-len(section.data) // per))]
        assert lines[0] is palette.Part.HEADER and lines[-1] is palette.Part.FRES
        assert palette.Part.FDES in lines
        await pilot.press("end")
        last = (len(lines) - 1) * per
        assert explorer.hex_view.cursor == last
        assert explorer.state.selected.field.span.start <= last < explorer.state.selected.field.span.end
        assert explorer.state.selected.fde is not None  # a row's bytes, in the FRE sub-section
        await pilot.click(Minimap, offset=(1, 0))
        assert explorer.hex_view.cursor == 0 and explorer.state.selected.field.path == "preamble.magic"
        assert app.focused is minimap
        await pilot.press("m")
        assert not minimap.display and app.focused is explorer.hex_view


async def test_every_instance_of_a_field_has_its_kind_s_colour() -> None:
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        explorer = app.explorer
        await pilot.press("m")
        fields = explorer.fields
        style = explorer.hex_view.kind_style
        sizes = {style(fields.find(f"fdes[{i}].func_size").span.start) for i in range(len(explorer.section))}
        starts = {style(fields.find(f"fdes[{i}].func_start").span.start) for i in range(len(explorer.section))}
        assert len(sizes) == len(starts) == 1 and sizes != starts
        assert style(fields.find("fdes[0].fres[1].start_addr").span.start) == style(
            fields.find("fdes[7].fres[2].start_addr").span.start
        )
        assert explorer.fde_table.title_colours["size"] == palette.KIND_COLOURS["func_size"]
        assert explorer.fre_table.title_colours["start"] == palette.KIND_COLOURS["start_addr"]
        await pilot.press("m")
        assert explorer.hex_view.kind_style is None and not explorer.fde_table.title_colours
