"""`sfview serve FILE`: the explorer served to a web browser, through textual-serve.

textual-serve runs the command it is given once for each browser that
connects, with Textual's web driver, and carries the terminal's bytes over a
websocket to xterm.js in the page: the browser shows the very app that
`sfview FILE` runs in a terminal, keys and all. The file is opened here first,
so that a file that cannot be read is said at once, not in each browser.
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import sys

from sfview.cli.common import Parser, TerminalWidth, address, parse
from sfview.document import Document
from sfview.errors import InputError
from sfview.inputs.numbers import quoted

DEFAULT_PORT = 8000
"""textual-serve's own default port."""


def _port(text: str) -> int:
    """`--port`: a TCP port, 1 to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {quoted(text)} (write 8000)") from None
    if not 0 < value < 1 << 16:
        raise argparse.ArgumentTypeError(f"not a port: {quoted(text)} (1 to 65535)")
    return value


def parser() -> argparse.ArgumentParser:
    """`sfview serve`'s arguments, its help and its usage."""
    parser = Parser(
        prog="sfview serve",
        formatter_class=TerminalWidth,
        description="Serve the explorer to a web browser (textual-serve): open the address it prints.",
    )
    parser.add_argument("file", help="an ELF file, or a raw .sframe section")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"the port to listen on ({DEFAULT_PORT})")
    parser.add_argument("--host", default="localhost", help="the address to listen on (localhost)")
    parser.add_argument("--base", type=address, default=None, help="load address of a raw section (default 0)")
    return parser


def app_command(args: argparse.Namespace) -> str:
    """The shell command that runs the explorer on `args.file`, as textual-serve runs it for each browser."""
    argv = [sys.executable, "-m", "sfview", os.path.abspath(args.file), "--max-size", str(args.max_size)]
    if args.base is not None:
        argv += ["--base", hex(args.base)]
    return shlex.join(argv)


def _resolve(host: str, port: int) -> None:
    """Refuse a host the resolver cannot name, in its own words, before the server tries: aiohttp's error
    then carries a negative errno (`getaddrinfo`'s), and a label past IDNA's 63 characters is a
    `UnicodeError`. An empty host is refused: aiohttp would serve on every interface, which is asked for
    by name."""
    if not host:
        raise InputError("an empty host: give --host 0.0.0.0 to serve on every interface")
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise InputError(f"cannot serve on {quoted(host)}:{port}: {exc.strerror}") from None
    except UnicodeError as exc:  # the `idna` codec's: "label too long", "label empty or too long"
        raise InputError(f"cannot serve on {quoted(host)}:{port}: not a host name ({exc.__cause__ or exc})") from None


def run(argv: list[str]) -> int:
    """Run `sfview serve` with `argv` (the arguments after the command's name) until Ctrl-C; its exit status."""
    args = parse(parser(), argv)
    Document.open(args.file, args.base)  # a file that cannot be opened is said here, once
    _resolve(args.host, args.port)
    from textual_serve.server import Server  # aiohttp and the server: only when serving

    server = Server(app_command(args), host=args.host, port=args.port, title=f"sfview {os.path.basename(args.file)}")
    try:
        server.serve()
    except OSError as exc:  # the port taken, the host unknown
        why = os.strerror(exc.errno) if exc.errno else str(exc)  # aiohttp's own words repeat the address
        raise InputError(f"cannot serve on {args.host}:{args.port}: {why}") from None
    return 0
