"""The explorer's first screen comes before the overview (every function gone through) is ready.

On a big section the overview takes seconds, so it is made in a worker after
the first frame. Here it is made to wait (its worker held back on an event),
on a small fixture made to take the big section's path: the FDE table must
already show its rows and the header say "working…", every key must answer
(those that need the overview with "working…", none with a traceback), and
once the worker is let go the app must be the app that had the overview from
the start.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, fuzzed_section
from test_app_every_key import INPUTS, _press_everything

from sfview.app.app import SfviewApp
from sfview.app.explorer import background
from sfview.app.widgets.fde_table import COLUMNS
from sfview.document import Document
from sfview.sframe.bulk.overview import Overview

pytestmark = pytest.mark.slow

SHAPES = DATA / "shapes-x86_64-O2"
SIZE = (120, 36)


class Hold:
    """From `start()` on, every explorer takes the big section's path, and its overview waits for `release`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.release = threading.Event()

    def start(self) -> None:
        build = Overview.build

        def held_build(overview: Overview, *args, **kwargs) -> None:
            if threading.current_thread() is not threading.main_thread():  # the worker's (an empty one is not)
                assert self.release.wait(30), "the test let the overview go"
            build(overview, *args, **kwargs)

        self.monkeypatch.setattr(background, "OVERVIEW_IN_THE_BACKGROUND", 0)
        self.monkeypatch.setattr(Overview, "build", held_build)

    def set(self) -> None:
        self.release.set()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hold]:
    """Explorers whose overview is held back (from `start()`) until `set()`."""
    hold = Hold(monkeypatch)
    yield hold
    hold.set()  # never leave a worker thread waiting


def status(app: SfviewApp) -> str:
    return str(app.explorer.status_line.render())


async def ready(app: SfviewApp, pilot) -> None:
    """Wait for the overview (and the checks after it) as a person would: until the header stops working."""
    for _ in range(400):
        if app.explorer.overview.ready and app.explorer.summary.problems is not None:
            break
        await asyncio.sleep(0.02)
    await pilot.pause()
    assert app.explorer.overview.ready


def what_shows(app: SfviewApp) -> dict[str, object]:
    """Everything the FDE and FRE tables and the header hold, cell by cell."""
    explorer = app.explorer
    fdes, fres = explorer.fde_table, explorer.fre_table
    return {
        "fde rows": [fdes.row_cells(row) for row in range(fdes.row_count)],
        "fde columns": fdes.columns,
        "fde widths": fdes.widths(fdes.size.width),
        "fre rows": [fres.row_cells(row) for row in range(fres.row_count)],
        "fre columns": fres.columns,
        "code columns": explorer.code_table.columns,
        "header": explorer.summary.summary(SIZE[0]).plain,
        "status": status(app),
    }


async def whole_from_the_start(path: Path = SHAPES) -> dict[str, object]:
    """What the app shows when the overview is made before the first screen (a small section's path)."""
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        return what_shows(app)


async def test_the_first_screen_comes_before_the_overview(held: Hold) -> None:
    expected = await whole_from_the_start()
    held.start()
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        explorer = app.explorer
        assert not explorer.overview.ready
        fdes = explorer.fde_table
        assert fdes.row_count == len(app.section) and fdes.region.height, "the FDE table is on the screen"
        drawn = "\n".join(fdes.render_line(y).text for y in range(fdes.size.height))
        assert "0x" in drawn and "ADDR" in drawn, "its rows show"
        assert "working…" in explorer.summary.summary(SIZE[0]).plain
        assert status(app).startswith("fdes[0] at")
        assert [fdes.row_cells(row)[:4] for row in range(fdes.row_count)] == [
            row[:4] for row in expected["fde rows"]
        ], "each row read alone says what the overview says"
        held.set()
        await ready(app, pilot)
        assert "working…" not in explorer.summary.summary(SIZE[0]).plain
        assert what_shows(app) == expected, "once ready, the app is the one that had the overview from the start"


async def test_every_key_answers_while_the_overview_is_pending(held: Hold) -> None:
    held.start()
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _press_everything(app, pilot)
        assert not app.explorer.overview.ready, "every key was pressed before the overview was ready"
        await pilot.press("1")
        app.explorer.fde_table.focus()
        for key in ("n", "n", "p", "end", "home", "pagedown"):
            await pilot.press(key)
        await pilot.pause()
        assert status(app).startswith("fdes[")


async def test_a_sort_and_a_filter_asked_for_early_are_done_when_it_is_ready(held: Hold) -> None:
    """`S` and `/` before the overview: "working…", and done once it is ready, as if asked then."""
    held.start()
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        fdes = app.explorer.fde_table
        frame = [spec.title for spec in COLUMNS].index("frame")
        app.explorer.sort_functions(frame, reverse=True)
        await pilot.pause()
        assert "working…" in status(app)
        assert list(fdes.order) == list(range(len(app.section))), "the rows wait in FDE order"
        held.set()
        await ready(app, pilot)
        frames = [-1 if f is None else f for f in app.explorer.overview.column("frame")]
        assert [frames[i] for i in fdes.order] == sorted(frames, reverse=True)
        assert fdes.cursor == 0 and app.explorer.state.selected.fde == fdes.order[0], "the largest frame, selected"


async def test_a_filter_typed_early_is_applied_when_it_is_ready(held: Hold) -> None:
    held.start()
    app = SfviewApp(Document.open(str(SHAPES)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"pcmask")
        await pilot.pause()
        assert "working…" in status(app)
        held.set()
        await ready(app, pilot)
        fdes = app.explorer.fde_table
        assert fdes.row_count == 1 and fdes.overview.facts(fdes.fde_at(0)).pcmask, "the PLT alone"
        assert "1 of" in app.explorer.summary.summary(SIZE[0]).plain


DAMAGED = [*sorted(INPUTS), *(f"fuzzed-{seed}" for seed in range(12))]


@pytest.mark.parametrize("name", DAMAGED)
async def test_a_damaged_section_before_and_after_its_overview(tmp_path: Path, held: Hold, name: str) -> None:
    """Damaged functions (cut flexible FDEs, undefined offsets, random bytes changed) read alone for the first
    screen, then gone through by the pass: the app ends as it would have been with the overview at once."""
    if name.startswith("fuzzed-"):
        path = fuzzed_section(int(name.removeprefix("fuzzed-")), tmp_path)
    else:
        path = tmp_path / name
        path.write_bytes(INPUTS[name]())
    expected = await whole_from_the_start(path)
    held.start()
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if app.section is None:
            return
        fdes = app.explorer.fde_table
        assert app.explorer.overview.ready == (not len(app.section)), "only a section without FDEs is gone through"
        assert fdes.row_count == len(app.section)
        assert [fdes.row_cells(row)[:4] for row in range(fdes.row_count)] == [
            row[:4] for row in expected["fde rows"]
        ], "each row read alone says what the overview says"
        held.set()
        await ready(app, pilot)
        assert what_shows(app) == expected
