"""One number rule everywhere (`sfview.inputs.numbers`): hex, decimal with a trailing dot, names and
registers added up, the same in the app's prompts, the debugger's boxes and on the command line."""

from __future__ import annotations

import argparse
import time

import pytest
from conftest import DATA, run_process

from sfview.errors import InputError
from sfview.inputs.core import parse_registers, read_core
from sfview.inputs.numbers import evaluate, parse_number
from sfview.inputs.symbols import Place

NAMES = {"main": 0x1050, "sp": 0x7FF0, "ns::f(int, char)": 0x2000, "operator+": 0x3000, "add": 0x4000}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0x10", 0x10),
        ("1080", 0x1080),  # bare numbers are hex, like every address on screen
        ("16.", 16),  # decimal: a trailing dot, as gdb reads it
        ("main+10", 0x1060),  # the offset too: one rule, not decimal after a name
        ("main+0x34", 0x1084),
        ("main+16.", 0x1060),
        ("sp+8", 0x7FF8),
        ("$sp-10.", 0x7FF0 - 10),
        ("sp + 8", 0x7FF8),
        ("ns::f(int, char)+4", 0x2004),
        ("operator+", 0x3000),
        ("add", 0x4000),  # a name before hex
        ("beef", 0xBEEF),
    ],
)
def test_the_rule(text: str, value: int) -> None:
    assert evaluate(text, NAMES.get) == value


@pytest.mark.parametrize("text", ["mian", "1+", "", "main+zz", "0x"])
def test_what_is_refused_is_said(text: str) -> None:
    assert isinstance(evaluate(text, NAMES.get), str)


def test_a_place_moves_by_an_offset() -> None:
    assert evaluate(".text+10", {".text": Place(".text", 0)}.get) == Place(".text", 0x10)
    assert isinstance(evaluate("8+.text", {".text": Place(".text", 0)}.get), str)


def test_numbers_alone() -> None:
    assert parse_number("1030") == parse_number("0x1030") == 0x1030
    assert parse_number("16.") == 16
    assert parse_number("main") is None


HUGE_DECIMAL = "9" * 5000 + "."
"""More digits than `int()` converts (4,300) and than a 64-bit word holds."""


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        (HUGE_DECIMAL, "5,000 decimal digits"),
        ("f" * 5000, "5,000 hex digits"),
        ("main+" + HUGE_DECIMAL, "5,000 decimal digits"),
    ],
    ids=["decimal", "hex", "name+decimal"],
)
def test_a_number_longer_than_a_word_is_refused_saying_which_and_why(text: str, digits: str) -> None:
    """Refused before it is converted (`int()` of 5,000 decimal digits is a ValueError), with a sentence that
    quotes the number cut short and says why."""
    said = evaluate(text, NAMES.get)
    assert isinstance(said, str) and "more than a 64-bit word holds" in said and digits in said, said
    assert len(said) < 200, "the number is named, not repeated whole"
    assert parse_number(text.removeprefix("main+")) is None


def test_a_number_a_little_past_a_word_is_read_for_its_caller_to_refuse() -> None:
    """17 hex digits or 2**64 in decimal are numbers by the rule: `--regs` and `--base` then name what does
    not fit (`machine_word`), the register or the address, rather than the rule refusing the text."""
    assert evaluate("0x1" + "0" * 16) == evaluate("18446744073709551616.") == 2**64


def test_the_largest_word_and_leading_zeros_are_numbers() -> None:
    assert evaluate("ffffffffffffffff") == evaluate("18446744073709551615.") == 2**64 - 1
    assert evaluate("0x" + "0" * 5000 + "10") == evaluate("0" * 5000 + "16.") == 0x10


@pytest.mark.parametrize(
    "text",
    [
        "1" + " " * 100_000 + "x",  # the attack: spaces a pattern with optional spaces backtracks over
        "1" + " " * 100_000 + "+",
        "main" + " +" * 50_000,
        "+".join(["1"] * 50_000),
        "main" + "-" * 100_000 + "1",
    ],
    ids=["spaces-then-not-hex", "spaces-then-sign", "empty-terms", "many-terms", "signs"],
)
def test_an_expression_is_read_in_time_linear_in_its_length(text: str) -> None:
    """A 100,000-character text is answered (a value or a sentence) by the rule and in `--regs` within a
    bound of CPU time a backtracking parser (minutes) cannot meet; a bound, not a timing: the process's own
    CPU time, which a loaded machine does not stretch as it does the wall clock."""
    start = time.process_time()
    evaluate(text)
    evaluate(text, NAMES.get)
    with pytest.raises(InputError):
        parse_registers(f"pc={text}x,sp=0", NAMES.get)
    assert time.process_time() - start < 5.0


def test_the_command_line_takes_names_and_registers() -> None:
    """`--regs pc=stop_here`, `--mem sp=…`, `--bias` in bare hex: the same walk as with every number in hex."""
    core = read_core(str(DATA / "deep-x86_64.core"))
    regs = core.threads[0].registers
    bias = 0x555555554000
    program = str(DATA / "deep-x86_64")
    ra = core.memory.read(regs["rsp"])
    plain = run_process(
        "unwind", program, "--regs", f"pc={regs['rip']:#x},sp={regs['rsp']:#x}", "--bias", f"{bias:#x}",
        "--mem", f"{regs['rsp']:#x}={ra:#x}",
    )  # fmt: skip
    named = run_process(
        "unwind", program, "--regs", f"pc=stop_here,sp={regs['rsp']:x}", "--bias", f"{bias:x}",
        "--mem", f"sp=leaf+{ra - bias - 0x1170:x}",
    )  # fmt: skip
    assert regs["rip"] - bias == 0x1160 and plain.returncode == 0, plain.stderr
    assert named.returncode == 0, named.stderr
    assert named.stdout == plain.stdout
    assert "#1  0x0000555555555181 in leaf ()" in named.stdout
    refused = run_process("unwind", program, "--regs", "pc=no_such+4")
    assert refused.returncode == 2 and "no_such" in refused.stderr


def test_help_lists_every_command_and_the_rule() -> None:
    from importlib.metadata import version

    from sfview.cli import COMMANDS

    shown = run_process("--help")
    assert shown.returncode == 0
    listed = shown.stdout.split("commands (", 1)[1]  # the commands, to the end: their lines may say "commands"
    for name in COMMANDS:
        assert f"\n  {name} " in listed, name
    assert "decimal has a trailing dot" in shown.stdout
    said = run_process("--version")
    assert said.returncode == 0 and said.stdout.strip() == f"sfview {version('sfview')}"


@pytest.mark.parametrize("columns", [40, 80, 200])
def test_help_and_usage_wrap_to_the_terminal_as_argparse_s_own_formatter_wraps_them(
    monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """Each parser's formatter asks for the terminal's width only when it writes (`cli.common.TerminalWidth`, for
    the unwind's start): its help and usage are argparse's own formatter's, at every width."""
    from sfview.cli import check, compare, dump, explore, export, unwind

    monkeypatch.setenv("COLUMNS", str(columns))
    helps = set()
    for make in (explore.parser, dump.parser, check.parser, compare.parser, export.parser,
                 unwind.parser):  # fmt: skip
        ours, reference = make(), make()
        raw = issubclass(ours.formatter_class, argparse.RawDescriptionHelpFormatter)
        reference.formatter_class = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
        assert ours.formatter_class is not reference.formatter_class
        assert (ours.format_help(), ours.format_usage()) == (reference.format_help(), reference.format_usage())
        helps.add(ours.format_help())
    assert len(helps) == 6
    narrow = unwind.parser().format_usage()
    monkeypatch.setenv("COLUMNS", "1000")
    assert narrow.count("\n") > unwind.parser().format_usage().count("\n") == 1, "the width is the terminal's"
