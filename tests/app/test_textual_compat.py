"""Textual's private members sfview relies on (`sfview/app/textual_compat.py`) are still in the installed Textual.

A Textual release that renames or drops one fails here, by name, rather than
breaking a frame or a key somewhere in the app without a word.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from sfview.app import textual_compat
from sfview.app.textual_compat import PRIVATE, Private

PACKAGE = Path(__file__).parents[2] / "sfview"


def _owner(private: Private) -> type:
    module, name = private.owner.split(":")
    return getattr(importlib.import_module(module), name)


def _assigned_in(cls: type, name: str) -> bool:
    """Whether a class of `cls`'s MRO sets `self.<name>` (an attribute made in `__init__` or later)."""
    pattern = re.compile(rf"self\.{re.escape(name)}\s*(:[^=\n]*)?=[^=]")
    for klass in cls.__mro__:
        if klass.__module__.startswith("textual") and pattern.search(inspect.getsource(klass)):
            return True
    return False


@pytest.mark.parametrize("private", PRIVATE, ids=lambda private: f"{private.owner}.{private.name}")
def test_each_private_member_is_still_there(private: Private) -> None:
    cls = _owner(private)
    if private.parameters is None:
        assert hasattr(cls, private.name) or _assigned_in(cls, private.name), f"{private.name}: {private.user}"
        return
    member = getattr(cls, private.name, None)
    assert callable(member), f"{private.owner}.{private.name} is gone ({private.user})"
    parameters = tuple(inspect.signature(member).parameters)[1:]
    assert parameters == private.parameters, f"{private.owner}.{private.name}{parameters}: {private.user}"


def test_the_private_modules_are_imported_through_the_compat_module_alone() -> None:
    """No module of sfview imports a private Textual module (`textual._x`) but `textual_compat.py`."""
    private_import = re.compile(r"^\s*(from|import) textual\._", re.M)
    compat = Path(textual_compat.__file__)
    found = [
        path.relative_to(PACKAGE.parent)
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != compat and private_import.search(path.read_text())
    ]
    assert not found


def test_the_parser_deadline_is_read_and_ended() -> None:
    parser = textual_compat.XTermParser(False)
    assert textual_compat.parser_deadline(parser) is None, "no escape byte pending"
    textual_compat.end_parser_wait(parser)
    assert textual_compat.parser_deadline(parser) == pytest.approx(textual_compat.get_time(), abs=1.0)
