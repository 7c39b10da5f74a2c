"""`sfview gdb`: the one line that loads the `sframe` commands into gdb's own Python."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import pytest
from conftest import run_cli

PREFIX = "python import sys; sys.path[:0] = "
SUFFIX = "; import sfview.gdb.commands"


def test_the_line_puts_this_package_and_the_running_pythons_packages_first(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli("gdb", capsys=capsys)
    assert result.code == 0 and result.err == ""
    line = result.out.removesuffix("\n")
    assert "\n" not in line and line.startswith(PREFIX) and line.endswith(SUFFIX), line
    paths = ast.literal_eval(line.removeprefix(PREFIX).removesuffix(SUFFIX))
    assert (Path(paths[0]) / "sfview" / "gdb" / "commands.py").is_file()
    assert sysconfig.get_paths()["purelib"] in paths
    assert len(paths) == len(set(paths))


def test_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_cli("gdb", "extra", capsys=capsys)
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "sfview gdb: error: unrecognized arguments: extra" in captured.err
