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
    ("host", "said"),
    [
        ("a" * 300, "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'… (300 characters):8000: not a host name"),
        ("a..b", "a..b:8000: not a host name"),
    ],
    ids=["300 letters", "an empty label"],
)
def test_a_host_name_that_cannot_be_looked_up_is_said_in_one_line(host: str, said: str) -> None:
    """Python's IDNA codec refuses these before any lookup: a `UnicodeError` traceback on main."""
    done = run_process("serve", str(DATA / "shapes-x86_64-O2"), "--host", host)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"sfview: cannot serve on {said}"]


def test_a_host_not_found_says_why_in_words() -> None:
    """getaddrinfo's errors are negative numbers: `os.strerror` made them "Unknown error -2"."""
    done = run_process("serve", str(DATA / "shapes-x86_64-O2"), "--host", "999.1.1.1")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("sfview: cannot serve on 999.1.1.1:8000: ") and "Unknown error" not in line
