"""The committed parser is exactly what the Kaitai compiler makes of sframe.ksy today."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sfview.generated import sframe_docs

ROOT = Path(__file__).parent.parent
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
