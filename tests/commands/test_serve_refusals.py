"""`sfview serve`: what it refuses, in one line each (the browser itself: tests/oracles/test_browser.py)."""

from __future__ import annotations

import socket

import pytest
from conftest import DATA, run_process


def test_a_file_that_cannot_be_opened_is_said_before_serving() -> None:
    done = run_process("serve", "/nonexistent/a.out", "--port", "1")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("sfview: /nonexistent/a.out: ") and "No such file" in line


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_a_port_out_of_range_is_refused(port: str) -> None:
    done = run_process("serve", str(DATA / "shapes-x86_64-O2"), "--port", port)
    assert done.returncode == 2
    assert f"not a port: '{port}'" in done.stderr.splitlines()[-1]


def test_a_port_taken_is_said_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("localhost", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_process("serve", str(DATA / "shapes-x86_64-O2"), "--port", str(port))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"sfview: cannot serve on localhost:{port}: Address already in use"]


@pytest.mark.parametrize(
    ("host", "why"),
    [("a" * 100_000, "label too long"), ("a..b", "label empty or too long"), ("-x", "")],
    ids=["100000-letters", "an-empty-label", "unknown"],
)
def test_a_host_that_is_no_name_is_said_in_one_line(host: str, why: str) -> None:
    """A host name past IDNA's 63 characters a label was a `UnicodeError` traceback, and one the resolver
    does not know said "Unknown error -2"; each is now one line quoting the host (cut) and the reason."""
    done = run_process("serve", str(DATA / "shapes-x86_64-O2"), f"--host={host}", "--port", "1")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("sfview: cannot serve on ") and why in line and len(line) < 300
    assert "Unknown error" not in line  # the resolver's own reason ("Name or service not known" here, offline another)


def test_an_empty_host_is_refused_not_read_as_every_interface() -> None:
    """`--host ""` served on every interface (aiohttp's reading of an empty host): refused now, saying how
    to ask for that. (The port is taken on every interface, so that main's serving ends at once too.)"""
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_process("serve", str(DATA / "shapes-x86_64-O2"), "--host", "", "--port", str(port))
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["sfview: an empty host: give --host 0.0.0.0 to serve on every interface"]
