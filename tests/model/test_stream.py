"""`BufferStream` reads exactly what Kaitai's own stream reads, field by field."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SECTIONS, load_section_fixture
from kaitaistruct import BytesIO, KaitaiStream, KaitaiStruct

from sfview.generated.sframe_debug import Sframe as SframeDebug
from sfview.sframe.model.stream import BufferStream


def snapshot(obj: object, depth: int = 0) -> object:
    """Every field value and debug position of a parsed object, recursively."""
    if isinstance(obj, KaitaiStruct):
        out = {"_debug": {k: dict(v) for k, v in obj._debug.items()}}
        for name in getattr(obj, "SEQ_FIELDS", []):
            if hasattr(obj, name):
                out[name] = snapshot(getattr(obj, name), depth + 1)
        for name in ("fdes", "fres", "attr"):
            if depth < 8 and hasattr(type(obj), name):
                out[name] = snapshot(getattr(obj, name), depth + 1)
        return out
    if isinstance(obj, list):
        return [snapshot(x, depth + 1) for x in obj]
    return obj


@pytest.mark.parametrize("path", SECTIONS, ids=lambda p: p.stem)
def test_same_values_and_positions(path: Path) -> None:
    content, _, _ = load_section_fixture(path)
    ours = SframeDebug(BufferStream(content))
    ours._read()
    theirs = SframeDebug(KaitaiStream(BytesIO(content)))
    theirs._read()
    assert snapshot(ours) == snapshot(theirs)


@pytest.mark.parametrize("length", [0, 1, 3, 27, 40])
def test_same_errors_on_truncation(length: int) -> None:
    content = load_section_fixture(SECTIONS[0])[0][:length]
    errors = []
    for stream in (BufferStream(content), KaitaiStream(BytesIO(content))):
        try:
            root = SframeDebug(stream)
            root._read()
            snapshot(root)
            errors.append(None)
        except Exception as exc:  # whatever both raise, compared
            errors.append((type(exc).__name__, str(exc)))
    assert errors[0] == errors[1]
