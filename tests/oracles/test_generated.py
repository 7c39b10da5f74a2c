"""The committed parser is exactly what the Kaitai compiler makes of sframe.ksy today."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import SECTIONS, load_section_fixture

from sfview.generated import sframe_docs
from sfview.generated import sframe_layout as layout
from sfview.generated.sframe import Sframe
from sfview.sframe.model.stream import BufferStream

ROOT = Path(__file__).parents[2]
GENERATED = ROOT / "sfview" / "generated"
COMPILER = ROOT / "tools" / "kaitai"


def test_fresh_compile_matches_committed(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: it runs the Kaitai compiler")
    if not (COMPILER / "node_modules" / "kaitai-struct-compiler").is_dir():
        pytest.skip("the Kaitai compiler is not installed: run `npm ci --prefix tools/kaitai`")
    subprocess.run(["node", str(COMPILER / "compile.js"), str(tmp_path)], check=True, capture_output=True)
    fresh = sorted(p.name for p in tmp_path.iterdir())
    assert fresh == ["sframe.py", "sframe_debug.py", "sframe_docs.py", "sframe_layout.py"]
    for name in fresh:
        assert (tmp_path / name).read_text() == (GENERATED / name).read_text(), (
            f"sfview/generated/{name} differs from a fresh compile of sframe.ksy: run `node tools/kaitai/compile.js`"
        )


def test_every_field_and_enum_value_is_documented() -> None:
    for type_name, spec in sframe_docs.TYPES.items():
        assert spec["doc"], f"type {type_name} has no doc"
        for name, field in spec["fields"].items():
            assert field["doc"], f"{type_name}.{name} has no doc"
    for enum, values in sframe_docs.ENUMS.items():
        for value, entry in values.items():
            assert entry["doc"], f"enum {enum} value {value} has no doc"


def test_bit_fields_fill_their_bytes() -> None:
    """Info bytes are described bit by bit: their widths add up to whole bytes."""
    for type_name in ("flags", "fde_info", "fde_info2", "fre_info"):
        spec = sframe_docs.TYPES[type_name]
        assert sum(spec["fields"][name]["bits"] for name in spec["seq"]) == 8, type_name


LAYOUT_HARNESS = """
const fs = require("fs");
const yaml = require(process.argv[1] + "/node_modules/js-yaml");
const { layoutModule } = require(process.argv[1] + "/layout");
process.stdout.write(layoutModule(yaml.load(fs.readFileSync(process.argv[2], "utf8"))));
"""


def _layout_of(ksy_text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run tools/kaitai/layout.js on a .ksy text (node and js-yaml from `npm ci --prefix tools/kaitai`)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: it runs the layout generator")
    if not (COMPILER / "node_modules" / "js-yaml").is_dir():
        pytest.skip("js-yaml is not installed: run `npm ci --prefix tools/kaitai`")
    ksy = tmp_path / "sframe.ksy"
    ksy.write_text(ksy_text)
    return subprocess.run(
        ["node", "-e", LAYOUT_HARNESS, str(COMPILER), str(ksy)], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("original", "changed"),
    [
        # a field read only under a condition that is not a version comparison
        ("            if: _parent.version == 2\n", "            if: _parent.version * 2 == 4\n"),
        # a repeated field in a fixed-size record
        (
            "          - id: num_fres\n            type: u4\n",
            "          - id: num_fres\n            type: u4\n            repeat: expr\n            repeat-expr: 2\n",
        ),
        # a bit-field type that does not fill its byte
        ("          - id: unused\n            type: b3\n", "          - id: unused\n            type: b2\n"),
    ],
    ids=["condition", "repeat", "bit-width"],
)
def test_layout_generator_refuses_what_it_does_not_understand(tmp_path: Path, original: str, changed: str) -> None:
    ksy = (ROOT / "sframe.ksy").read_text()
    assert original in ksy, "the construct to change is no longer in sframe.ksy: update this test"
    proc = _layout_of(ksy.replace(original, changed, 1), tmp_path)
    assert proc.returncode != 0
    assert "is not a construct the layout generator understands" in proc.stderr


def test_layout_generator_reads_the_unchanged_ksy(tmp_path: Path) -> None:
    """The harness above, on sframe.ksy itself, gives the committed module (so its refusals mean something)."""
    proc = _layout_of((ROOT / "sframe.ksy").read_text(), tmp_path)
    assert proc.returncode == 0, proc.stderr
    committed = (GENERATED / "sframe_layout.py").read_text()
    assert committed.endswith(proc.stdout)


@pytest.mark.parametrize("version", layout.VERSIONS)
def test_layout_agrees_with_the_parser(version: int) -> None:
    """The struct layout and the Kaitai parser's own instances give the same sizes and offsets."""
    content = bytearray(load_section_fixture(SECTIONS[0])[0])
    content[layout.PREAMBLE.fields["version"][0]] = version
    content[layout.PREAMBLE.size + layout.HEADER.fields["auxhdr_len"][0]] = 3
    section = Sframe(BufferStream(bytes(content) + bytes(3))).section
    assert section.version == version
    assert section.header_end == layout.PREAMBLE.size + layout.HEADER.size + 3
    assert section.fde_size == layout.FDE[version].size == struct.calcsize("<" + layout.FDE[version].format)
    assert section.attr_size == layout.FDE_ATTR.size == struct.calcsize("<" + layout.FDE_ATTR.format)
    info_record = layout.FDE_ATTR if "func_info" not in layout.FDE[version].fields else layout.FDE[version]
    assert section.info_offset == info_record.fields["func_info"][0]
