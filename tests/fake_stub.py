"""A fake gdbstub for the tests: a small server of gdb's remote serial protocol, on a socket a thread serves.

`speaking(answer)` acks each packet and sends `answer(request)`, escaped and run-length encoded as a stub
may (`}` escapes, `X*N` runs); `Answers` is what a good AArch64 stub answers, described as qemu-user
describes one (a target.xml that includes the core registers), for one thread, its registers, auxiliary
vector and memory given (memory refused by default). A real qemu-user guest is tests/oracles/test_gdbstub.py's.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from typing import NamedTuple

CORE_XML = "".join(f'<reg name="x{i}" bitsize="64"/>' for i in range(31)) + (
    '<reg name="sp" bitsize="64"/><reg name="pc" bitsize="64"/><reg name="cpsr" bitsize="32"/>'
)
INTERRUPT = b"\x03"
ESCAPED = b"$#}*"


def run_length(body: bytes) -> bytes:
    """`body` with each run of 4 to 97 equal bytes written `X*N` (N the repeats after the first, plus 29),
    never with a count that would read as `#` or `$`, as gdbserver writes them."""
    out, i = bytearray(), 0
    while i < len(body):
        run = 1
        while i + run < len(body) and body[i + run] == body[i] and run < 98:
            run += 1
        while run > 3 and chr(run - 1 + 29) in "#$+-":
            run -= 1
        out += bytes([body[i]]) + (b"*" + bytes([run - 1 + 29]) if run > 3 else bytes([body[i]]) * (run - 1))
        i += run
    return bytes(out)


def packet(body: bytes, compress: bool = False) -> bytes:
    """`$BODY#CS`, the body's `$#}*` escaped (and then its runs encoded, when `compress`)."""
    escaped = bytearray()
    for byte in body:
        escaped += bytes([0x7D, byte ^ 0x20]) if byte in ESCAPED else bytes([byte])
    data = run_length(bytes(escaped)) if compress else bytes(escaped)
    return b"$%s#%02x" % (data, sum(data) & 0xFF)


class Answers(NamedTuple):
    """A good AArch64 stub's answers: one thread, its registers, its auxiliary vector, its memory (an
    address and a size → the bytes, None where there are none: an `E14`) and what most a memory reply
    carries (a stub may answer fewer bytes than asked)."""

    registers: bytes = struct.pack("<31QQQI", *range(31), 0x7FF000, 0x400000, 0)
    auxv: bytes = struct.pack("<6Q", 9, 0x400000, 3, 0x400040, 0, 0)
    memory: Callable[[int, int], bytes | None] = lambda address, size: None
    tid: int = 1
    architecture: str = "aarch64"
    most: int = 1 << 16
    program: str | None = None
    """The program it names (`qXfer:exec-file:read`, as newer qemu releases serve it), None: it names none."""

    def __call__(self, request: bytes) -> bytes | None:
        if request.startswith(b"qSupported"):
            named = b";qXfer:exec-file:read+" if self.program is not None else b""
            return b"PacketSize=1000;qXfer:features:read+;qXfer:auxv:read+" + named
        if request.startswith(b"qXfer:exec-file:read:") and self.program is not None:
            return b"l" + self.program.encode()
        if request == b"?":
            return b"T05thread:%x;" % self.tid
        if request.startswith(b"qXfer:features:read:target.xml:"):
            return b'l<?xml version="1.0"?><target><architecture>%s</architecture><xi:include href="core.xml"/>' \
                   b"</target>" % self.architecture.encode()  # fmt: skip
        if request.startswith(b"qXfer:features:read:core.xml:"):
            return b'l<?xml version="1.0"?><feature name="org.gnu.gdb.aarch64.core">%s</feature>' % CORE_XML.encode()
        if request.startswith(b"qXfer:auxv:read:"):
            return b"l" + self.auxv
        if request == b"qfThreadInfo":
            return b"m%x" % self.tid
        if request == b"qsThreadInfo":
            return b"l"
        if request.startswith(b"Hg") or request == b"D":
            return b"OK"
        if request == b"g":
            return self.registers.hex().encode()
        if request.startswith(b"m"):
            address, _, size = request[1:].partition(b",")
            held = self.memory(int(address, 16), min(int(size, 16), self.most))
            return b"E14" if held is None else held.hex().encode()
        return b""


class FakeStub:
    """A stub listening on a free port: `serve(connection, requests)` speaks to the one client; the requests
    it read are kept."""

    def __init__(self, serve: Callable[[socket.socket, list[bytes]], None]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self._run, args=(serve,), daemon=True)
        self.thread.start()

    def _run(self, serve: Callable[[socket.socket, list[bytes]], None]) -> None:
        connection, _ = self.listener.accept()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # an ack, then a reply: no Nagle wait
        with connection, contextlib.suppress(OSError):  # the client gone: what it did is in `requests`
            serve(connection, self.requests)
        self.listener.close()


def speaking(
    answer: Callable[[bytes], bytes | None], raw: bool = False, compress: bool = False
) -> Callable[[socket.socket, list[bytes]], None]:
    """A stub that acks each packet (and an interrupt, `\\x03`) and sends `answer(request)` as a packet (as
    bytes already framed when `raw`; run-length encoded when `compress`); None: no answer at all."""

    def reply(connection: socket.socket, request: bytes) -> None:
        answered = answer(request)
        if answered is not None:
            connection.sendall(answered if raw else packet(answered, compress))

    def serve(connection: socket.socket, requests: list[bytes]) -> None:
        pending = b""
        while data := connection.recv(4096):
            pending += data
            while pending[:1] in (b"+", b"-", INTERRUPT) or (pending.startswith(b"$") and b"#" in pending[:-2]):
                if pending[:1] != b"$":
                    if pending[:1] == b"-":  # the client refused the last reply's checksum: answered again
                        reply(connection, requests[-1])
                    elif pending[:1] == INTERRUPT:
                        requests.append(INTERRUPT)
                        reply(connection, INTERRUPT)
                    pending = pending[1:]
                    continue
                end = pending.find(b"#")
                requests.append(pending[1:end])
                pending = pending[end + 3 :]
                connection.sendall(b"+")
                reply(connection, requests[-1])

    return serve


def core_answers(path: str, most: int = 300, program: str | None = None) -> Answers:
    """A stub's answers for the one thread of an AArch64 core (qemu-user's): its registers, auxiliary vector
    and memory, memory at most `most` bytes a reply; naming `program` if given."""
    from sfview.inputs.core import read_core

    core = read_core(path)
    (thread,) = core.threads
    names = [f"x{i}" for i in range(31)] + ["sp", "pc"]
    registers = struct.pack("<33QI", *(thread.registers[n] for n in names), thread.registers["pstate"] & 0xFFFFFFFF)
    auxv = b"".join(struct.pack("<QQ", key, value) for key, value in core.auxv.items() if key) + bytes(16)
    return Answers(registers, auxv, core.memory.bytes_at, tid=thread.tid, most=most, program=program)


def core_stub(path: str, most: int = 300, program: str | None = None) -> tuple[FakeStub, Answers]:
    """A stub serving `core_answers`, its replies run-length encoded."""
    answers = core_answers(path, most, program)
    return FakeStub(speaking(answers, compress=True)), answers
