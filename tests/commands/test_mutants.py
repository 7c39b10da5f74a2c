"""No damaged section crashes or hangs any part of sfview.

A seeded corpus of mutants of every fixture section (ELF fixtures' sections,
binutils 2.40 to 2.46 sections, a version 3 flexible one): bytes flipped,
header and FDE fields overwritten with 0, 1, 0x7fffffff and 0xffffffff,
counts inflated, records spliced over others, the section cut short or
lengthened. Each mutant goes through everything that reads a section: the
model, the bulk reader against the model, the validator with every profile,
both dumps, the field tree, and an unwind; only `InputError` (an unreadable
header) may come out, and each mutant has a few seconds. Hypothesis adds
sections of arbitrary bytes behind a real header.
"""

from __future__ import annotations

import io
import random
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from handmade import SAMPLES, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfview.app.fields import FieldTree
from sfview.check.run import check, check_bytes
from sfview.consumers.verdicts import profiles
from sfview.document import Document
from sfview.errors import InputError
from sfview.generated import sframe_layout as layout
from sfview.inputs.opening import raw_section
from sfview.output import jsondoc, readelf
from sfview.sframe.model.section import Section
from sfview.unwind.session import from_registers

pytestmark = pytest.mark.slow

SECONDS_EACH = 10


def corpus(seed: int, count: int) -> Iterator[tuple[str, bytes, int]]:
    rng = random.Random(seed)
    for _ in range(count):
        name, data, address = rng.choice(SAMPLES)
        yield name, mutate(rng, data), address


class Sink(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError(f"took more than {SECONDS_EACH} s")


def exercise(data: bytes, address: int, folder: Path) -> None:
    """Everything that reads a section, on `data`."""
    for profile in profiles().values():  # the libsframe profiles are also held to the libraries in test_libsframe.py
        verdict = profile.judge(data, address)
        assert verdict.accepted or verdict.offset is None or 0 <= verdict.offset <= len(data), profile.name
    try:
        section = Section(data, address)
    except InputError:
        assert list(check_bytes(data, address)), "an unreadable header is a problem found"
        return
    for diag in check(section):
        assert 0 <= diag.start <= len(data), f"{diag.check.id} points outside the section"
    text, errors = readelf.text(section)
    assert readelf.text(Section(data, address), bulk=False)[0] == text
    for error in errors:
        assert error.offset is None or 0 <= error.offset < len(data), f"an offset outside the section: {error}"
    jsondoc.write(Document("mutant", raw_section(data, address)), Sink())
    tree = FieldTree(section)
    for offset in range(0, len(data), max(1, len(data) // 7)):
        tree.field_at(offset)
    if len(section):
        path = folder / "mutant.sframe"
        path.write_bytes(data)
        func = section.function(0)
        session = from_registers(str(path), {"pc": func.start_address + 1, "sp": 0x7FFF0000, "fp": 0x7FFF0040}, {})
        session.unwinder.backtrace(session.pc, session.registers)


@pytest.mark.parametrize("seed", range(8))
def test_no_mutant_crashes_or_hangs_anything(tmp_path: Path, seed: int) -> None:
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for name, data, address in corpus(seed, 500):
            signal.alarm(SECONDS_EACH)
            try:
                exercise(data, address, tmp_path)
            except (AssertionError, TimeoutError) as exc:
                raise AssertionError(f"a mutant of {name} ({data.hex()}): {exc}") from exc
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)


HEADER = SAMPLES[0][1][: layout.PREAMBLE.size + layout.HEADER.size]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=400), header=st.binary(min_size=24, max_size=24))
def test_any_bytes_behind_a_real_preamble(tmp_path: Path, body: bytes, header: bytes) -> None:
    for version in (1, 2, 3):
        data = HEADER[:2] + bytes([version, header[0] & 0x7]) + header + body
        exercise(data, 0, tmp_path)


@pytest.mark.parametrize("seed", range(3))
async def test_the_app_opens_mutants_and_answers_keys(tmp_path: Path, seed: int) -> None:
    """A sample of mutants opened in the explorer (headless): tabs, problems, rows, the tree, the hex pane."""
    from sfview.app.app import SfviewApp

    for n, (_, data, address) in enumerate(corpus(100 + seed, 4)):
        path = tmp_path / f"mutant{n}.sframe"
        path.write_bytes(data)
        app = SfviewApp(Document.open(str(path), address))
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause(0.2)
            await pilot.press("4", "enter", "1", "down", "down", "f", "2", "down", "enter", "x", "end", "1")
            assert app.is_running
