"""The explorer survives every key on every input: damaged sections, damaged ELF files, a core.

Headless (Textual's `run_test`), each input opened and every binding the
focused pane offers pressed in every pane (tab moves between them), a screen
a key opens gets its own keys and is then left (escape); the go-to dialogs
get bad input. An exception in a handler ends `run_test` with it: the test
fails on any.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import DATA, v3_section
from elf_edit import Elf
from handmade import flexible_signed, to_big_endian, v2_section

from sfview.app.app import SfviewApp
from sfview.app.fields import FieldTree
from sfview.app.widgets.frame_picture import picture
from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.core import read_core
from sfview.sframe.model.section import Section
from sfview.unwind import session

pytestmark = pytest.mark.slow

SIZE = (100, 32)
NEVER = {"q", "ctrl+q", "ctrl+c", "ctrl+z"}
PANES = 6
"""Panes visited by tab (tables, tree, hex, detail...)."""
"""Keys that end or suspend the app."""
PROGRAM = DATA / "deep-x86_64"


def _flexible_cut_at_the_fp_word() -> bytes:
    """A version 3 flexible FDE (fde_type 1) whose one row's words stop inside its FP control word."""
    whole = v3_section(1, [(0, 0, [0x3 << 3 | 0x1, 16, 0x1, 0])], size=16)
    return whole[:-2]  # the FP's control word and its offset: gone


def _negative_cfa() -> bytes:
    """A version 2 function whose rows put the CFA below the SP (offsets -8 and -24)."""
    return v2_section([[(0, -8), (4, -24), (8, 16)]])


def _aux_past_the_end() -> bytes:
    data = bytearray((DATA / "shapes-x86_64-O2.sframe").read_bytes())
    data[7] = 0xFF
    return bytes(data)


def _broken_cfi_elf() -> bytes:
    """The program with its `.eh_frame` compressed by a corrupt zlib stream, its `.symtab` damaged too."""
    return Elf.of(PROGRAM.read_bytes()).compress(".eh_frame", stream=b"\x78\x9c" + b"\xff" * 40).set_section(
        ".symtab", sh_entsize=0x17).set_header(e_phoff=1 << 40).bytes()  # fmt: skip


S390X = 4


def _s390x_v3() -> bytes:
    """Version 3 s390x (big-endian): a flexible FDE whose rows name registers 0 to 15 through dereferenced
    control words, one with a CFA not based on a register, one of 15 words."""
    rows = [(j, 1, [j << 3 | 3, -20, j << 3 | 3, 8, (15 - j) << 3 | 1, -8]) for j in range(16)]
    rows += [(20, 1, [0, 0, 0]), (21, 1, [1, 0] + [0] * 13)]
    return to_big_endian(v3_section(1, rows, abi=S390X, flags=0x5))


def _s390x_v3_registers() -> bytes:
    """Version 3 s390x default FDE whose FP and RA words are odd: saved in registers 63 and 62 (v2's rule)."""
    return to_big_endian(v3_section(0, [(0, 1, [0, 127, 125]), (4, 1, [-128, -1, -3]), (8, 0, [])], abi=S390X))


def _signed_rows() -> bytes:
    """AArch64 flexible functions, every row's RA signed, pointer-authentication key B."""
    return flexible_signed(20, 30)


def _damaged_notes_core(tmp_path: Path) -> Path:
    """deep-x86_64.core whose NT_FILE note claims 2^60 files and whose thread's registers are all ones."""
    core = Elf.of((DATA / "deep-x86_64.core").read_bytes())
    notes = next(seg for _, seg in core.segments() if seg["p_type"] == 4)["p_offset"]  # PT_NOTE
    pos, found = notes, {}
    while len(found) < 2:
        namesz, descsz, kind = struct.unpack_from("<III", core.data, pos)
        desc = pos + 12 + (namesz + 3) // 4 * 4
        if kind in (1, 0x46494C45):  # NT_PRSTATUS, NT_FILE
            found.setdefault(kind, desc)
        pos = desc + (descsz + 3) // 4 * 4
    core.poke(found[0x46494C45], struct.pack("<Q", 1 << 60))
    core.poke(found[1] + 112, b"\xff" * 216)  # the general registers of the first thread
    path = tmp_path / "damaged-notes.core"
    path.write_bytes(core.bytes())
    return path


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`w` given a mistyped path writes the patched copy there: in the test's own folder, not the checkout."""
    monkeypatch.chdir(tmp_path)


INPUTS = {
    "flexible-cut": _flexible_cut_at_the_fp_word,
    "negative-cfa": _negative_cfa,
    "broken-cfi-and-headers": _broken_cfi_elf,
    "s390x-v3-flexible": _s390x_v3,
    "s390x-v3-registers": _s390x_v3_registers,
    "aarch64-signed-rows": _signed_rows,
}


async def _press_everything(app: SfviewApp, pilot, depth: int = 0) -> None:
    """Every binding of every pane (tab moves between them), each once for the pane or screen that binds it;
    a screen a key opens gets bad input (the go-to dialogs, the filter), then escape."""
    base = len(app.screen_stack)
    pressed: set[tuple[str, int]] = set()
    for _ in range(PANES):
        bindings = app.active_bindings
        keys = sorted(k for k in bindings if k not in NEVER and k not in ("tab", "shift+tab"))
        for key in keys:
            owner = (key, id(bindings[key].node))
            if owner in pressed:
                continue  # the same binding of the same screen: pressed in an earlier pane
            pressed.add(owner)
            await pilot.press(key)
            if len(app.screen_stack) > base:
                if depth == 0:
                    await _bad_input(pilot)
                while len(app.screen_stack) > base:
                    await pilot.press("escape")
        await pilot.press("tab")


async def _bad_input(pilot) -> None:
    """What a go-to dialog (or any text box) is given by someone who mistypes."""
    await pilot.press(*"0xzz+-", "enter")
    await pilot.pause()


@pytest.mark.parametrize("name", sorted(INPUTS))
async def test_every_key_on_a_damaged_input(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(INPUTS[name]())
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _press_everything(app, pilot)
        for key in "1234":  # every tab, with the cursor moved in it and what is under it opened
            await pilot.press(key, *["down", "enter", "right", "shift+right", "space"] * 4, "f")
            await pilot.pause()
        if app.section is not None:  # the structure tree: every node opened, top to bottom
            await pilot.press("2")
            app.explorer.structure.focus()
            for _ in range(40):
                await pilot.press("space", "down")


async def test_the_app_says_what_it_could_not_read(tmp_path: Path) -> None:
    """A check that finds problems in the section, DWARF that cannot be read: both said, neither hangs."""
    path = tmp_path / "broken"
    path.write_bytes(_broken_cfi_elf())
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d")
        for _ in range(50):
            await pilot.pause(0.05)
            if "reading DWARF" not in str(app.explorer.status_line.render()):
                break
        assert "DWARF CFI cannot be decoded" in str(app.explorer.status_line.render())


async def test_every_key_in_the_debugger_on_a_core() -> None:
    started = session.from_core(str(PROGRAM), read_core(str(DATA / "deep-x86_64.core")), None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _press_everything(app, pilot, depth=1)


async def test_every_key_in_the_debugger_on_a_core_with_damaged_notes(tmp_path: Path) -> None:
    core = read_core(str(_damaged_notes_core(tmp_path)))
    started = session.from_core(str(PROGRAM), core, None, [], None)
    app = SfviewApp(Document.open(str(PROGRAM)), started)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _press_everything(app, pilot, depth=1)


async def test_every_key_in_the_samples_view() -> None:
    """`sfview perf --app`'s places (names with brackets, an escape sequence, one of 5,000 characters), each
    sample failing to load as a damaged profile's does."""
    from sfview.app.profile_app import ProfileApp
    from sfview.profiling.coverage import UNKNOWN, Place, Reason, Seen

    def load(number: int) -> session.Session:
        raise InputError(f"no sample #{number}: the profile has fewer samples")

    places = [
        (Place(UNKNOWN, "/lib/libc.so.6", Reason.NO_SFRAME), Seen(2, 145)),
        (Place("f\x1b[2J" + "x" * 5000, "/bin/[prog]", Reason.PLT), Seen(1, 3)),
    ]
    app = ProfileApp(Document.open(str(DATA / "shapes-x86_64-O2")), "places", places, load)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _press_everything(app, pilot)
        await pilot.press("enter", "g", *"99999", "enter")
        await pilot.pause()


def test_the_inputs_are_damaged_as_they_say() -> None:
    """The generated inputs hold the damage named (so that the key test is not run on sound ones)."""
    cut = Section(_flexible_cut_at_the_fp_word())
    func = cut.function(0)
    assert func.flexible and func.rows.error is not None
    negative = Section(_negative_cfa()).function(0)
    assert [row.cfa.offset for row in negative.rows] == [-8, -24, 16]
    with pytest.raises(InputError, match="auxhdr_len = 255"):
        Section(_aux_past_the_end())
    s390x = Section(_s390x_v3())
    assert s390x.abi == S390X and not s390x.little_endian and s390x.function(0).flexible
    assert {row.mangled_ra for row in Section(_signed_rows()).function(19).rows} == {True}


def test_every_field_of_a_cut_flexible_row_can_be_opened() -> None:
    """The structure tree of a row cut inside its control words: every node opened (what the tree does on
    expand), each cut at a different byte."""
    whole = v3_section(1, [(0, 0, [0x3 << 3 | 0x1, 16, 0x1, 0])], size=16)

    def every(node) -> int:
        return 1 + sum(every(child) for child in node.children())

    for cut in range(1, 5):
        assert every(FieldTree(Section(whole[:-cut])).root) > 10


def test_the_frame_picture_of_every_row_below_the_sp() -> None:
    section = Section(_negative_cfa())
    func = section.function(0)
    for row in func.rows:
        assert f"^ row {row.index}" in picture(section, func, row).plain


async def test_a_section_whose_rest_is_unreadable_shows_its_header(tmp_path: Path) -> None:
    path = tmp_path / "aux"
    path.write_bytes(_aux_past_the_end())
    app = SfviewApp(Document.open(str(path)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = app.explorer.summary.summary(200).plain
        assert "Version: SFRAME_VERSION_1" in shown and "Num FDEs: 9" in shown and "auxhdr_len = 255" in shown
        await _press_everything(app, pilot)


async def test_a_check_that_fails_says_so_in_the_problems_tab(monkeypatch) -> None:
    def failing(doc, pace=None):
        raise ValueError("a damage nobody foresaw")

    from sfview.check import run  # the worker imports the check when it runs it (after the first screen)

    monkeypatch.setattr(run, "check_document", failing)
    app = SfviewApp(Document.open(str(DATA / "shapes-x86_64-O2")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        for _ in range(40):
            await pilot.pause(0.05)
            if app.explorer.problems.option_count:
                break
        text = str(app.explorer.problems.get_option_at_index(0).prompt)
        assert text == "The check failed: ValueError: a damage nobody foresaw"
