"""What the explorer's main screens look like (SVG snapshots, `pytest --snapshot-update` to renew).

Inputs are opened by a path relative to the working directory, so that the
path shown in the header summary is the same on every machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA

from sfview.app.app import SfviewApp
from sfview.document import Document

ROOT = DATA.parent.parent
SHAPES = "tests/data/shapes-x86_64-O2"
AARCH64 = "tests/data/shapes-aarch64-O2"
OBJECT = "tests/data/shapes-x86_64-O2.o"
BY_FRAME_DESCENDING = ["S", "6", "R", "home"]
"""Sort by the frame column (`S 6`), largest first, and choose the top function."""


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def explorer(path: str = SHAPES) -> SfviewApp:
    return SfviewApp(Document.open(path))


def test_explorer_80x24(snap_compare) -> None:
    assert snap_compare(explorer(), press=["down", "down"], terminal_size=(80, 24))


def test_explorer_wide(snap_compare) -> None:
    assert snap_compare(explorer(), press=["down", "tab", "down"], terminal_size=(200, 50))


def test_field_detail_with_bit_breakdown(snap_compare) -> None:
    async def info_byte(pilot) -> None:
        pilot.app.explorer.goto_offset(0x3D)  # FDE 1's info byte: PCMASK
        await pilot.press("2")
        await pilot.pause()

    assert snap_compare(explorer(), terminal_size=(120, 45), run_before=info_byte)


def test_go_to_address(snap_compare) -> None:
    assert snap_compare(explorer(), press=["g", *"1035"], terminal_size=(100, 30))


def test_go_to_symbol(snap_compare) -> None:
    assert snap_compare(explorer(), press=["s", *"frame"], terminal_size=(100, 30))


def test_help(snap_compare) -> None:
    assert snap_compare(explorer(), press=["question_mark"], terminal_size=(110, 40))


async def _checked(pilot) -> None:
    """Wait for the check the explorer runs in a worker as a section opens: its results are on screen."""
    while pilot.app.explorer.summary.problems is None:
        await pilot.pause(0.02)


def test_section_cut_short(snap_compare, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "cut.sframe").write_bytes((DATA / "shapes-x86_64-O2.sframe").read_bytes()[:150])
    monkeypatch.chdir(tmp_path)
    assert snap_compare(explorer("cut.sframe"), terminal_size=(100, 24), run_before=_checked)


def test_function_that_cannot_be_decoded(snap_compare, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    raw = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    raw[0xC6] = 0x63  # FDE 5, FRE 1 info byte: offset size 3 does not exist
    (tmp_path / "broken.sframe").write_bytes(bytes(raw))
    monkeypatch.chdir(tmp_path)
    assert snap_compare(
        explorer("broken.sframe"), press=["end", "up", "up", "up"], terminal_size=(100, 30), run_before=_checked
    )


FP_BUILD = "tests/data/shapes-x86_64-O0-fp"


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_frame_picture(snap_compare, size: tuple[int, int]) -> None:
    """small_leaf's row 1 (after `push rbp`): RA at CFA-8, the caller's FP at CFA-16, SP at the bottom."""
    assert snap_compare(explorer(FP_BUILD), press=["n", "n", "tab", "down", "f"], terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_help_of_a_version_1_file(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(explorer(FP_BUILD), press=["question_mark"], terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_sorted_by_frame_size(snap_compare, size: tuple[int, int]) -> None:
    """AArch64, largest frame first: huge_frame's rows (`c-70016`) whole, even at 80 columns."""
    assert snap_compare(explorer(AARCH64), press=BY_FRAME_DESCENDING, terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_filtered(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(explorer(), press=["slash", *"frame", "enter", "down"], terminal_size=size)


def test_filter_being_typed(snap_compare) -> None:
    assert snap_compare(explorer(), press=["slash", *"pcmask"], terminal_size=(80, 24))


def test_relocatable_object_80x24(snap_compare) -> None:
    """Every start 0x0 (not relocated yet) under a whole `start` title; ADDR4 rows' bytes whole."""
    assert snap_compare(explorer(OBJECT), press=["end"], terminal_size=(80, 24))
