"""The Structure tab's FDE labels made from the overview equal those made by decoding each function."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, fuzzed_section, v3_section
from rich.text import Text

from sfview.app.fields import FieldTree
from sfview.app.names import ExplorerNames
from sfview.app.widgets.structure_tree import StructureTree
from sfview.check.catalogue import Severity
from sfview.document import Document
from sfview.errors import InputError
from sfview.sframe.bulk.overview import Overview
from sfview.sframe.model.section import Section

FUZZ_SEEDS = range(60)


def _tree(path: Path) -> StructureTree:
    """A tree of the file's section, its overview whole and its names read."""
    doc = Document.open(str(path))
    section = doc.require_section()
    names = ExplorerNames(doc)
    names.load()
    tree = StructureTree(FieldTree(doc.require_section()), names, Overview.of(section))
    tree.problems = {index: Severity.ERROR if index % 2 else Severity.WARNING for index in range(1, len(section), 3)}
    return tree


def _as_compared(labels: list[Text]) -> list[tuple[str, list[object], object]]:
    return [(label.plain, list(label.spans), label.style) for label in labels]


def _assert_same_labels(tree: StructureTree) -> None:
    """Every FDE's label, by chunks of 3 (so that chunks start past 0), both ways."""
    count = len(tree.section)
    for first in range(0, count, 3):
        chunk = range(first, min(first + 3, count))
        fast = tree._fde_labels(chunk)
        assert _as_compared(fast) == _as_compared([tree._fde_label(index) for index in chunk])


@pytest.mark.parametrize(
    "name", ["shapes-x86_64-O2", "shapes-x86_64-O2.o", "libshapes-x86_64.so", "shapes-aarch64-O2", "deep-x86_64"]
)
def test_a_chunks_labels_from_the_overview_are_those_of_its_functions(name: str) -> None:
    tree = _tree(DATA / name)
    _assert_same_labels(tree)
    labels = tree._fde_labels(range(len(tree.section)))
    assert any(span.style == "italic" for label in labels for span in label.spans), "names are in the labels"


@pytest.mark.parametrize("flags", [0x1, 0x5], ids=["absolute", "pcrel"])
def test_a_version_3_flexible_functions_label_from_the_overview_is_that_of_its_function(
    tmp_path: Path, flags: int
) -> None:
    """A flexible FDE (read through the model by the overview too), its start written relative or not."""
    path = tmp_path / "v3.sframe"
    path.write_bytes(v3_section(1, [(0, 0, [0x3 << 3 | 0x1, 16, 0x1, 0])], flags=flags, size=16))
    tree = _tree(path)
    _assert_same_labels(tree)
    assert "0x1000" in tree._fde_labels(range(1))[0].plain


def test_a_damaged_sections_labels_from_the_overview_are_those_of_its_functions(tmp_path: Path) -> None:
    """Fuzzed sections: FDEs that cannot be decoded, or whose rows cannot, are labelled as before."""
    undecodable = trees = 0
    for seed in FUZZ_SEEDS:
        try:
            tree = _tree(fuzzed_section(seed, tmp_path))
        except InputError:  # a header the model refuses: no tree to label
            continue
        _assert_same_labels(tree)
        trees += 1
        undecodable += sum("cannot be decoded" in label.plain for label in tree._fde_labels(range(len(tree.section))))
    assert trees > len(FUZZ_SEEDS) // 2, "most fuzzed sections are read"
    assert undecodable, "some fuzzed FDE cannot be decoded"


def test_before_the_overview_is_ready_labels_come_from_the_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = Document.open(str(DATA / "shapes-x86_64-O2"))
    names = ExplorerNames(doc)
    names.load()
    tree = StructureTree(FieldTree(doc.require_section()), names, Overview(doc.require_section()))
    chunk = range(len(tree.section))
    decoded = set()
    decode = Section._decode_function
    monkeypatch.setattr(Section, "_decode_function", lambda self, index: decoded.add(index) or decode(self, index))
    assert _as_compared(tree._fde_labels(chunk)) == _as_compared([tree._fde_label(index) for index in chunk])
    assert decoded == set(chunk), "each function decoded"
