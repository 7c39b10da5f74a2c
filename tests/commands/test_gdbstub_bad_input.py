"""`sfview unwind --gdbstub` against stubs that fail: one line naming the stub, exit 2, no traceback, no hang.

Each stub is `tests/fake_stub.py`'s, served by a thread of the test (a small server of gdb's remote
protocol: an AArch64 guest of one thread, described as qemu-user describes it) with one answer changed,
or no protocol at all. Where the protocol worked far enough, sfview must have detached (`D`), so that a real
guest runs on. A real qemu-user guest is tests/oracles/test_gdbstub.py's.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading

import pytest
from conftest import DATA, run_process
from fake_stub import INTERRUPT, Answers, FakeStub, core_stub, packet, speaking

from sfview import cli
from sfview.inputs import gdbstub

PROGRAM = str(DATA / "shapes-x86_64-O2")
"""Any program: each stub fails before the program is read."""


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gdbstub, "REPLY_TIMEOUT", 0.5)


def _unwind(port: int, capsys: pytest.CaptureFixture[str], *more: str) -> str:
    """sfview's one line on stderr (its exit status must be 2, nothing on stdout)."""
    status = cli.main(["unwind", PROGRAM, "--gdbstub", f"127.0.0.1:{port}", *more])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (status, out, err)
    return err


def test_nothing_listening_is_one_line_exit_2() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there after
    result = run_process("unwind", PROGRAM, "--gdbstub", str(port))
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr == f"sfview: gdbstub at {port}: nothing listens there (start the guest with qemu-aarch64"\
        f" -g {port} PROGRAM; it takes one debugger at a time)\n"  # fmt: skip


def test_a_server_of_another_protocol(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(lambda connection, _: (connection.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"), connection.recv(100)))
    err = _unwind(stub.port, capsys)
    assert 'answered "SSH-2.0-OpenSSH_9.2\\x0d\\x0a"' in err and "not gdb's remote protocol" in err, err


def test_a_connection_closed_at_once(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(lambda connection, _: None)
    assert "the connection closed without an answer" in _unwind(stub.port, capsys)


def test_a_stub_that_never_answers_times_out(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda request: None))
    assert f"gdbstub at 127.0.0.1:{stub.port}: no answer in 0.5 s" in _unwind(stub.port, capsys)


def test_a_checksum_that_never_adds_up(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda request: b"$OK#00", raw=True))
    err = _unwind(stub.port, capsys)
    assert "3 replies in a row whose checksum does not add up" in err, err
    assert stub.requests == [b"qSupported:swbreak+;vContSupported+"]  # each bad reply refused with -, not re-asked


def test_a_checksum_error_once_is_asked_again(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    """One damaged reply is refused (`-`) and the stub's second sending read: the unwind goes on to the
    next failure (here, memory refused)."""
    sent: set[bytes] = set()

    def answer(request: bytes) -> bytes:
        good = packet(Answers()(request) or b"")
        if request == b"?" and request not in sent:
            sent.add(request)
            return good[:-2] + b"00"  # a damaged reply; asked again (`-`), the good one
        return good

    stub = FakeStub(speaking(answer, raw=True))
    assert "reads no memory" in _unwind(stub.port, capsys)


def test_an_architecture_sfview_does_not_unwind(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda request: Answers(architecture="riscv:rv64")(request)))
    err = _unwind(stub.port, capsys)
    assert "the guest is a riscv:rv64 process: sfview unwinds x86-64, AArch64 and s390x" in err, err
    stub.thread.join(5)
    assert stub.requests[-1] == b"D"  # detached: the guest runs on


def test_error_replies_to_every_memory_read(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(Answers()))
    err = _unwind(stub.port, capsys)
    assert err.endswith("reads no memory: E14 at the PC (0x400000) and at the stack pointer (0x7ff000)\n"), err
    stub.thread.join(5)
    assert stub.requests[-1] == b"D"


def test_a_guest_that_has_exited(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda request: b"W00" if request == b"?" else Answers()(request)))
    assert "the guest exited with status 0: no stack is left" in _unwind(stub.port, capsys)


def test_a_description_that_is_not_xml(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda r: b"l<target" if b"target.xml" in r else Answers()(r)))
    assert "its target.xml is not XML" in _unwind(stub.port, capsys)


def test_a_description_without_the_registers(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda r: b"l<feature/>" if b"core.xml" in r else Answers()(r)))
    assert "its target description has no pc, sp" in _unwind(stub.port, capsys)


@pytest.mark.parametrize("where", ["", "host:", "1234x", "99999", ":0"])
def test_an_address_that_is_no_port(where: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["unwind", PROGRAM, "--gdbstub", where])
    assert status == 2 and "is not PORT or HOST:PORT" in capsys.readouterr().err


def test_break_needs_a_gdbstub(capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["unwind", PROGRAM, "--regs", "pc=0x1000,sp=0x2000", "--break", "main"])
    assert status == 2 and "--break needs --gdbstub" in capsys.readouterr().err


def test_ctrl_c_while_the_guest_runs_to_the_breakpoint(tmp_path) -> None:
    """A guest that never reaches `--break`: Ctrl-C interrupts it (`\\x03`), removes the breakpoint, detaches
    (the guest runs on), and sfview ends in one line, exit 130."""
    continued = threading.Event()

    def answer(request: bytes) -> bytes | None:
        if request == b"c":
            continued.set()
            return None  # running: the stop reply comes after the interrupt
        if request == INTERRUPT:
            return b"T02thread:01;"
        if request.startswith(b"m"):
            return b"00" * int(request.partition(b",")[2], 16)
        if request.startswith((b"Z0", b"z0")):
            return b"OK"
        return Answers()(request)

    stub = FakeStub(speaking(answer))
    sfview = subprocess.Popen([sys.executable, "-m", "sfview", "unwind", PROGRAM, "--gdbstub", str(stub.port),
                               "--break", "0x1000"], stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert continued.wait(60), "sfview never continued the guest"
        sfview.send_signal(signal.SIGINT)
        _, err = sfview.communicate(timeout=60)
    finally:
        if sfview.poll() is None:
            sfview.kill()
            sfview.wait()
    assert (sfview.returncode, err) == (130, "sfview: interrupted\n")
    stub.thread.join(5)
    assert stub.requests[-5:] == [b"Z0,1000,4", b"c", INTERRUPT, b"z0,1000,4", b"D"], stub.requests


def test_registers_the_stub_cannot_read(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    """`xx` for a register's bytes: gdb's word for a value the stub does not have."""
    hidden = Answers().registers.hex().encode()[: 2 * 31 * 8] + b"x" * 32 + b"00000000"
    stub = FakeStub(speaking(lambda r: hidden if r == b"g" else Answers()(r)))
    assert "thread 1: its g reply (268 bytes) gives no value for sp, pc" in _unwind(stub.port, capsys)


def test_a_description_that_includes_itself_is_read_once(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    looped = b'l<target><architecture>aarch64</architecture><xi:include href="target.xml"/></target>'
    stub = FakeStub(speaking(lambda r: looped if b"target.xml" in r else Answers()(r)))
    assert "its target description has no pc, sp" in _unwind(stub.port, capsys)
    assert sum(b"target.xml" in r for r in stub.requests) == 1


def test_a_transfer_that_promises_more_and_gives_nothing(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    stub = FakeStub(speaking(lambda r: b"m" if b"target.xml" in r else Answers()(r)))
    assert "qXfer:features:read:target.xml said more follows, and gave nothing" in _unwind(stub.port, capsys)


def test_a_guest_that_exits_before_the_breakpoint(quick: None, capsys: pytest.CaptureFixture[str]) -> None:
    """qemu-user ends with its guest: the exit is said, and nothing more is asked of a stub that is gone."""
    reads = Answers(memory=lambda address, size: bytes(size))
    stub = FakeStub(speaking(lambda r: b"W00" if r == b"c" else b"OK" if r.startswith(b"Z0") else reads(r)))
    err = _unwind(stub.port, capsys, "--break", "0x1000")
    assert err.endswith("the guest exited with status 0 before it reached 0x1000: no stack is left\n"), err
    stub.thread.join(0.5)
    assert stub.requests[-2:] == [b"Z0,1000,4", b"c"]


@pytest.mark.parametrize(
    ("program", "said"),
    [
        ("shapes-aarch64-O2", "not a guest running shapes-aarch64-O2: the process had its entry point at 0x4005c0"),
        ("shapes-x86_64-O2", "the guest is of a AArch64 process, the program is x86-64"),
    ],
)
def test_a_program_the_guest_does_not_run(program: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The guest (qemu-aarch64's core of deep-aarch64, served) unwound with another program: refused."""
    stub, _ = core_stub(str(DATA / "deep-aarch64.core"))
    assert cli.main(["unwind", str(DATA / program), "--gdbstub", str(stub.port)]) == 2
    assert said in capsys.readouterr().err
    stub.thread.join(5)
    assert stub.requests[-1] == b"D"
