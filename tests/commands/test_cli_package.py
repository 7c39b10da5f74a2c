"""The command line as a package: a module per command, the dispatcher importing only the one that runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from conftest import DATA

from sfview.cli import COMMANDS, unwind
from sfview.unwind.engine import RuleSource


def test_a_command_loads_its_own_module_and_no_other_command_s() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from sfview.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['dump', {str(DATA / 'shapes-x86_64-O2.sframe')!r}])\n"
        "print(sorted(m for m in sys.modules if m.startswith('sfview.cli')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['sfview.cli', 'sfview.cli.common', 'sfview.cli.dump']"


@pytest.mark.parametrize("name", [*sorted(COMMANDS), "explore"])
def test_each_command_module_holds_its_parser_and_its_run(name: str) -> None:
    module = importlib.import_module(f"sfview.cli.{name}")
    assert callable(module.run)
    assert module.parser().prog == ("sfview" if name == "explore" else f"sfview {name}")


def test_each_cfi_choice_names_a_rule_source() -> None:
    """`--cfi`'s choices are the mapping's keys, each a rule source; no choice is SFrame with DWARF beside it."""
    (choices,) = [a.choices for a in unwind.parser()._actions if a.dest == "cfi"]
    assert list(choices) == ["sframe", "dwarf", "both"] == [c for c in unwind.RULE_SOURCES if c is not None]
    assert unwind.RULE_SOURCES[None] is unwind.RULE_SOURCES["both"] is RuleSource.SFRAME_DWARF


def test_a_command_line_of_too_many_options_is_refused_before_argparse(cli) -> None:
    """argparse looks through every option string again for each one it takes: 40,000 `--mem` words ran
    past 30 s before sfview saw one. Past `MAX_OPTIONS`, the command line is refused at once, saying why."""
    from sfview.cli import MAX_OPTIONS

    words = [arg for i in range(MAX_OPTIONS) for arg in ("--mem", f"{0x7000 + 8 * i:#x}=1")]
    result = cli("unwind", str(DATA / "shapes-x86_64-O2"), "--regs", "pc=0x1190,sp=0x7000", *words)
    assert result.code == 2 and result.out == ""
    said = f"{MAX_OPTIONS + 1} options on the command line: at most {MAX_OPTIONS} are read (each --mem word is one)"
    assert result.err == f"sfview: {said}\n"
