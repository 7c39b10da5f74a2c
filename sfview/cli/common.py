"""What the commands share: their argument types, the help's formatter, `--max-size`, saying, output.

Every input problem ends as one line on stderr (`sfview: FILE: where: what`)
and exit status 2; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TextIO

from sfview import uncollected
from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs import limits

EXIT_BAD_INPUT = 2


def address(text: str) -> int:
    """An address by the one number rule (`sfview.inputs.numbers`): hex, decimal with a dot."""
    from sfview.inputs.numbers import TOO_BIG, evaluate, fitting, quoted  # only an address typed needs the parser

    value = evaluate(text)
    if isinstance(value, str) and TOO_BIG in value:
        raise argparse.ArgumentTypeError(f"not an address: {value}")
    if not isinstance(value, int):
        raise argparse.ArgumentTypeError(f"not an address: {quoted(text)} (write 0x1000, 1000, or 4096. in decimal)")
    word = fitting(text, value, "address")
    if isinstance(word, str):
        raise argparse.ArgumentTypeError(word)
    return word


def _thread(text: str) -> int | str:
    """`--thread`: gdb's thread number or a thread id (decimal, as the kernel and gdb write LWPs), or `all`."""
    if text == "all":
        return text
    if text.isascii() and text.isdigit() and len(text) <= _THREAD_DIGITS:
        return int(text)
    from sfview.inputs.numbers import quoted  # as for an address: only a refusal needs it

    raise argparse.ArgumentTypeError(f"not a thread: {quoted(text)} (write gdb's number, 3, its LWP, 12345, or all)")


_THREAD_DIGITS = 10
"""A thread id is a kernel pid (`pid_max` is at most 2^22): a decimal of more digits is none."""


def _process_id(text: str) -> int:
    """`--pid`: a process id, in decimal as `ps` and the kernel write it."""
    if not (text.isascii() and text.isdigit() and len(text) <= _THREAD_DIGITS) or not 0 < int(text) < 1 << 31:
        from sfview.inputs.numbers import quoted  # as for an address: only a refusal needs it

        raise argparse.ArgumentTypeError(f"not a process id: {quoted(text)} (write 12345)")
    return int(text)


def whole_number(text: str) -> int:
    """A decimal number of at most `_COUNT_DIGITS` digits (a sample's number, a count of frames or processes):
    `int` would take 4,300 digits, and argparse would echo all of them."""
    if not (text.isascii() and text.isdigit() and len(text) <= _COUNT_DIGITS):
        from sfview.inputs.numbers import quoted  # only a refusal needs it

        raise argparse.ArgumentTypeError(f"not a number: {quoted(text)} (write 12, in decimal)")
    return int(text)


_COUNT_DIGITS = 19
"""As many decimal digits as a 64-bit count has."""


def _size(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        from sfview.inputs.numbers import quoted  # only a refusal needs it

        raise argparse.ArgumentTypeError(
            f"not a size in bytes: {quoted(text)} (write 268435456 or 0x10000000)"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (more than 0)")
    return value


def add_state_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """The machine state to unwind from: a core file, or registers and memory words typed here; and how its
    frames are named (`--no-inline`)."""
    state = parser.add_mutually_exclusive_group(required=required)
    state.add_argument("--core", help="a core file of the program")
    state.add_argument("--regs", help="registers: pc=0x…,sp=0x…,fp=0x…[,lr=0x…] (any of the ABI's by name)")
    state.add_argument(
        "--pid",
        type=_process_id,
        help="a running process: stopped while it is read, then let go as it was (the program: its own by default)",
    )
    state.add_argument(
        "--gdbstub",
        metavar="[HOST:]PORT",
        help="a guest process run by qemu-user (qemu-aarch64 -g PORT PROGRAM), read through its gdbstub, then"
        " detached: it runs on (the program: the one the stub names, else give it)",
    )
    parser.add_argument(
        "--break",
        dest="break_at",
        metavar="WHERE",
        help="with --gdbstub: run the guest to WHERE (a function of the program, main+0x10, an address) first",
    )
    parser.add_argument("--mem", action="append", default=[], metavar="ADDR=VALUE", help="a memory word (8 bytes)")
    parser.add_argument(
        "--bias", type=address, default=0, help="with --regs: where a PIE program was loaded (its load bias)"
    )
    parser.add_argument(
        "--thread",
        type=_thread,
        help="the thread: gdb's number for it (`Thread 3 (… LWP 26800)` is 3) or its id (26800); default the"
        " first; `all`: every thread, as gdb's `thread apply all bt` prints them (with --json, one document)",
    )
    parser.add_argument("--lib-dir", action="append", default=[], help="where to look for shared libraries by name")
    parser.add_argument("--sysroot", help="a root to find the core's libraries under")
    parser.add_argument(
        "--no-inline",
        dest="inline",
        action="store_false",
        help="physical frames only: leave out the functions the debug information says were inlined",
    )


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The arguments, with `--max-size` added to the parser and the limit it gives applied to this process."""
    parser.add_argument(
        "--max-size",
        type=_size,
        default=limits.DEFAULT_MAX_SIZE,
        metavar="BYTES",
        help=(
            "the most bytes read of one section, raw file, inflated stream or library read whole"
            f" (default {limits.DEFAULT_MAX_SIZE})"
        ),
    )
    args = parser.parse_args(argv)
    limits.max_size = args.max_size
    return args


class Parser(argparse.ArgumentParser):
    """argparse's parser, its errors escaped as every other message is (`say`): argparse quotes what it
    refuses as typed (`unrecognized arguments: …`), and an argument is a name in a folder (`sfview dump *`)
    that can hold an escape sequence. Every command's parser and the explorer's is one; the exit status
    stays argparse's (2)."""

    def error(self, message: str) -> NoReturn:
        from sfview.output.safe_text import printable  # only a command line refused needs it

        super().error(printable(message))


class TerminalWidth(argparse.HelpFormatter):
    """argparse's formatter, the terminal's width asked for when help or usage is written, not when it is made.

    argparse makes a formatter for every argument it adds (to check its
    metavar), and each asked `shutil` for the width: importing it (with bz2,
    lzma and zlib) is not worth a command's start. The width is still
    `shutil`'s, worked out as argparse works it out.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        width_for_now = 0 if width is None else width  # the terminal's is asked for in format_help
        super().__init__(prog, indent_increment, max_help_position, width_for_now)
        self._asked = (max_help_position, width)

    def format_help(self) -> str:
        max_help_position, width = self._asked
        if width is None:
            import shutil  # only to write help or usage: see the class's docstring

            width = shutil.get_terminal_size().columns - 2
        self._width = width
        self._max_help_position = min(max_help_position, max(width - 20, self._indent_increment * 2))
        return super().format_help()


def say(message: str) -> None:
    """`sfview: MESSAGE` on stderr, what the file put in it escaped."""
    from sfview.output.safe_text import printable  # only a command that has something to say needs it

    print(f"sfview: {printable(message)}", file=sys.stderr)


def say_losses(doc: Document) -> None:
    """What around the section could not be read and what it cost, one line each on stderr."""
    for exc in doc.lost:
        say(str(exc))


def raise_first(doc: Document, errors: list[InputError], where: str) -> None:
    """After the output: the section's first problem as the command's error (exit 2), with how many more."""
    error = doc.error or (doc.locate(errors[0]) if errors else None)
    if error is not None and len(errors) > 1:
        more = len(errors) - 1
        error = InputError(f"{error.message} (and {more} more problem{'s' * (more > 1)}, {where})",
                           offset=error.offset, path=error.path, where=error.where)  # fmt: skip
    if error is not None:
        sys.stdout.flush()
        raise error


def elf_document(path: str) -> Document:
    """The opened ELF file, with its SFrame section readable."""
    doc = Document.open(path)
    doc.require_section()
    if doc.elf is None:
        raise InputError("a raw section: this command needs the ELF file around it", path=path)
    return doc


def collector_paused(command: Callable[[list[str]], int]) -> Callable[[list[str]], int]:
    """`command` with the cyclic collector paused (`sfview.uncollected`): compare and export keep what they build
    until they end (the symbols, the FDE outline, each shape's outcome)."""

    @functools.wraps(command)
    def run(argv: list[str]) -> int:
        with uncollected():
            return command(argv)

    return run


class Output:
    """Standard output for the commands: once its reader has gone (`sfview check BAD | head -1`), the
    rest is dropped and the command goes on, so that it still ends with the exit status it earns
    (1 for problems, 2 for an unreadable file) rather than one a closed pipe chose."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self.inner.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        """What is still buffered goes nowhere: the descriptor is pointed at /dev/null, so that the
        interpreter's last flush at exit does not fail again."""
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.inner.fileno())
            os.close(null)

    @property
    def buffer(self) -> _BinaryOutput:
        """The stream's bytes (what `dump` writes), dropped as its text is once the reader has gone; none
        (AttributeError) for a stream of text only."""
        if not hasattr(self.inner, "buffer"):
            raise AttributeError("buffer")
        return _BinaryOutput(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _BinaryOutput:
    """`Output`'s buffer: bytes written to the stream's own, or nowhere once its reader has gone."""

    def __init__(self, outer: Output) -> None:
        self.outer = outer

    def write(self, data: bytes) -> int:
        outer = self.outer
        if not outer.gone:
            try:
                return outer.inner.buffer.write(data)
            except BrokenPipeError:
                outer._reader_gone()
        return len(data)

    def flush(self) -> None:
        self.outer.flush()


def flush_quietly() -> None:
    """Standard output flushed, or dropped if it cannot be."""
    try:
        sys.stdout.flush()
    except OSError:
        drop_stdout()


def drop_stdout() -> None:
    """What could not be written is dropped: the interpreter would try again at exit and fail with a traceback."""
    with contextlib.suppress(OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces stdout until the process ends
