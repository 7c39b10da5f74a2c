"""Every consumer profile, found by importing the package's modules, and a verdict on an opened file."""

from __future__ import annotations

import functools
import importlib
import pkgutil

import sfview.consumers as package
from sfview.consumers import PROFILES, Profile, Verdict
from sfview.document import Document


@functools.cache
def profiles() -> dict[str, Profile]:
    """Each module of this package registers its profiles when imported: import them all once."""
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return PROFILES


def judge_document(doc: Document, name: str, arch: str | None = None) -> Verdict:
    """`name`'s verdict on the section of an opened file (`arch`: the machine reading it, where it matters)."""
    profile = profiles()[name]
    if profile.judge_document is not None:
        return profile.judge_document(doc, arch)
    return profile.judge(doc.data, doc.address)
