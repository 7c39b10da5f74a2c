"""A guest process qemu-user runs, read through its gdbstub (gdb's remote serial protocol) as a core.

ptrace sees qemu, not its guest: `qemu-aarch64 -g PORT prog` hands the
guest's threads, registers and memory to one debugger at a time over TCP.
`attached(where)` is that debugger, as small as the walk needs: packets
`$…#cs` with their acks, `qSupported`, `?`, the registers by the target
description (`qXfer:features:read`: the architecture, and where each
register lies in a `g` reply), the threads (`qfThreadInfo`), the auxiliary
vector (`qXfer:auxv:read`: the program's load bias, from which the unwind
finds the libraries in the dynamic linker's list as for a qemu-user core),
the program (`qXfer:exec-file:read`, where the stub serves it), and memory
with `m` a page at a time as the walk asks, never the whole address space.
`run_to` sets a breakpoint (`Z0`), continues and waits for the guest to stop
(qemu-user starts the guest stopped at its entry, waiting for the debugger).
When the block ends (normally, on an error or on Ctrl-C) the breakpoint is
removed and the stub detached (`D`): the guest runs on.

What qemu-user's stub serves decides the rest: qemu 7.2's answers
`qXfer:features:read` and `qXfer:auxv:read`, `g` (and `p` only once the
description was read), `m`, `Z0`, `qfThreadInfo`, `qOffsets`, and nothing to
`qXfer:exec-file`, `qXfer:libraries-svr4`, `vFile` (the guest's
`/proc/self/maps`) or `qRcmd` (`info proc mappings`); it stops only the
thread that stopped, the others' registers are read as they run on.

Every reply is bounded (`MOST_BYTES` a packet) and awaited at most
`REPLY_TIMEOUT` seconds (a breakpoint as long as the guest takes to reach it);
what is not gdb's protocol, a checksum that does not add up, an error reply
where an answer is needed, each is an `InputError` that names the stub.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Iterator
from typing import NamedTuple
from xml.parsers.expat import ExpatError, ParserCreate

from sfview.errors import InputError
from sfview.inputs.core import PRSTATUS_REGS, Core, Thread
from sfview.inputs.live import PAGE, PagedMemory, signals_held

__all__ = ["GuestProcess", "StubMemory", "attached"]

REPLY_TIMEOUT = 10.0
"""Seconds to wait for the stub to connect and for each reply."""
MOST_BYTES = 1 << 20
"""The most bytes of one packet, and of a target description with its includes."""
MOST_THREADS = 4096
MOST_DOCUMENTS = 64
"""The most documents of a target description read (target.xml and what it includes)."""
MOST_TRIES = 3
"""How often a packet is sent again after the other side said its checksum did not add up (`-`)."""
ARCHITECTURES = {"aarch64": "EM_AARCH64", "s390:64-bit": "EM_S390", "i386:x86-64": "EM_X86_64"}
"""The target description's `<architecture>` → the ELF machine sfview unwinds."""
GDB_NAMES = {"cpsr": "pstate"}
"""A register gdb names otherwise than the kernel's `user_regs_struct` (`PRSTATUS_REGS`)."""
BREAKPOINT_KINDS = {"EM_AARCH64": 4, "EM_S390": 2, "EM_X86_64": 1}
"""A software breakpoint's `kind` (`Z0,ADDR,KIND`): the size of the instruction it replaces."""
BIG_ENDIAN = {"EM_S390"}
PC_AND_SP = {"EM_AARCH64": ("pc", "sp"), "EM_S390": ("pswa", "r15"), "EM_X86_64": ("rip", "rsp")}
"""The registers a walk cannot start without, as `PRSTATUS_REGS` names them."""
INTERRUPT = b"\x03"
SIGTRAP = 5
"""What a stub says a breakpoint stopped the guest with."""
ENDED = (b"W", b"X")
"""Stop replies that say the guest is gone: exited (`W`), killed by a signal (`X`)."""


class RegisterPlace(NamedTuple):
    """Where one register lies in a `g` reply."""

    name: str
    offset: int
    size: int


class Stub:
    """One connection to a gdbstub: a request, its reply, checked and decoded."""

    def __init__(self, where: str, connection: socket.socket) -> None:
        self.where = where
        self.connection = connection
        self._pending = b""
        self.broken = False
        """The connection failed (closed, timed out, not the protocol): nothing more is sent."""

    def error(self, message: str) -> InputError:
        """The error for an answer that is wrong, or that says the guest cannot be read, the stub named."""
        return InputError(f"gdbstub at {self.where}: {message}")

    def lost(self, message: str) -> InputError:
        """The error for a connection that can carry nothing more."""
        self.broken = True
        return self.error(message)

    def send(self, request: str) -> None:
        """Send one packet and wait for its ack, sending it again when the stub asks (`-`)."""
        body = request.encode("latin-1")
        packet = b"$%s#%02x" % (body, sum(body) & 0xFF)
        for _ in range(MOST_TRIES):
            self._write(packet)
            ack = self._byte()
            while ack == b"$":  # a late packet (a second stop reply after an interrupt): acked and let be
                self._until_hash()
                self._exactly(2)
                self._write(b"+")
                ack = self._byte()
            if ack == b"+":
                return
            if ack != b"-":
                raise self._foreign(ack)
        raise self.lost(f"the stub refused the checksum of {request[:20]!r} {MOST_TRIES} times")

    def ask(self, request: str) -> bytes:
        """Send `request`, its reply's payload (run-length encoding and escapes undone)."""
        self.send(request)
        return self.reply()

    def reply(self) -> bytes:
        """The next packet's payload, acked; one whose checksum does not add up is asked for again."""
        for _ in range(MOST_TRIES):
            start = self._byte()
            while start == b"+":  # a second ack of the request: harmless
                start = self._byte()
            if start != b"$":
                raise self._foreign(start)
            body = self._until_hash()
            given = self._exactly(2)
            try:
                sum_ok = int(given, 16) == sum(body) & 0xFF
            except ValueError:
                raise self.lost(f"a packet ended with {_shown(given)}, not a two-digit checksum") from None
            if sum_ok:
                self._write(b"+")
                return _decoded(body)
            self._write(b"-")
        raise self.lost(f"{MOST_TRIES} replies in a row whose checksum does not add up (a damaged connection?)")

    def _foreign(self, got: bytes) -> InputError:
        rest = self._pending[:20]
        return self.lost(f"answered {_shown(got + rest)}, which is not gdb's remote protocol (a packet starts with $)")

    def _write(self, data: bytes) -> None:
        try:
            self.connection.sendall(data)
        except (ConnectionResetError, BrokenPipeError):
            raise self._closed() from None
        except OSError as exc:
            raise self.lost(f"the connection broke ({exc.strerror or exc})") from None

    def _more(self) -> None:
        try:
            data = self.connection.recv(65536)
        except ConnectionResetError:
            raise self._closed() from None
        except TimeoutError:
            raise self.lost(f"no answer in {REPLY_TIMEOUT:g} s (not a gdbstub, or a stopped one?)") from None
        except OSError as exc:
            raise self.lost(f"the connection broke ({exc.strerror or exc})") from None
        if not data:
            raise self._closed()
        self._pending += data

    def _closed(self) -> InputError:
        return self.lost("the connection closed without an answer (not a gdbstub, or one another debugger holds)")

    def _byte(self) -> bytes:
        return self._exactly(1)

    def _exactly(self, count: int) -> bytes:
        while len(self._pending) < count:
            self._more()
        out, self._pending = self._pending[:count], self._pending[count:]
        return out

    def _until_hash(self) -> bytes:
        while (end := self._pending.find(b"#")) < 0:
            if len(self._pending) > MOST_BYTES:
                raise self.lost(f"a packet of more than {MOST_BYTES} bytes")
            self._more()
        out, self._pending = self._pending[:end], self._pending[end + 1 :]
        return out

    def wait_stop(self) -> bytes:
        """The stop reply after `c`, as long as the guest takes."""
        self.connection.settimeout(None)
        try:
            return self.reply()
        finally:
            self.connection.settimeout(REPLY_TIMEOUT)

    def interrupt(self) -> None:
        """Stop the running guest (`\\x03`) and read its stop reply."""
        self._write(INTERRUPT)
        self.reply()


def _shown(data: bytes) -> str:
    """What a stub sent, quoted, for a message (the command line escapes what a terminal would obey)."""
    return f'"{data.decode("latin-1")}"'


def _decoded(body: bytes) -> bytes:
    """A packet's payload with its escapes (`}` and the byte xor 0x20) and run lengths (`X*N`) undone."""
    if b"}" not in body and b"*" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        byte = body[i]
        if byte == 0x7D and i + 1 < len(body):
            out.append(body[i + 1] ^ 0x20)
            i += 2
        elif byte == 0x2A and out and i + 1 < len(body):
            out += bytes([out[-1]]) * (body[i + 1] - 29)
            i += 2
        else:
            out.append(byte)
            i += 1
    return bytes(out)


class StubMemory(PagedMemory):
    """The guest's memory through `m` packets, a page at a time (in pieces a packet can carry)."""

    def __init__(self, stub: Stub, chunk: int, little_endian: bool) -> None:
        super().__init__([], little_endian)
        self.stub = stub
        self.chunk = chunk
        self.refused: bytes | None = None
        """The last error reply to a read (`E14`), to say why a read that must succeed did not."""

    def read_page(self, number: int) -> bytes | None:
        """The page, a packet at a time; a stub may answer fewer bytes than asked, the rest is asked again."""
        out, end = b"", (number + 1) * PAGE
        while (at := number * PAGE + len(out)) < end:
            reply = self.stub.ask(f"m{at:x},{min(self.chunk, end - at):x}")
            if reply[:1] == b"E" or not reply:
                self.refused = reply or b"an empty reply"
                return None
            try:
                out += bytes.fromhex(reply.decode("latin-1"))
            except ValueError:
                raise self.stub.error(f"answered a memory read with {_shown(reply[:20])}, not hex digits") from None
        return out[:PAGE]


class GuestProcess(Core):
    """The guest stopped, as a `Core`: its threads in the stub's order, its auxiliary vector, no mapped
    files (the libraries come from the dynamic linker's list in memory), its memory read as asked."""

    stub: Stub
    memory: StubMemory
    program: str | None
    """The program the guest runs, where the stub says (`qXfer:exec-file:read`)."""
    layout: list[RegisterPlace]
    breakpoint: int | None
    running: bool
    """Continued (`c`) and not yet seen stopped."""
    gone: bool
    """The guest ended while it ran."""
    described = "the guest"
    kind = "a guest running"
    without_files = "the gdbstub names no mapped files"

    def reread(self, stop: bytes) -> None:
        """The threads again, after the guest ran to `stop` (its stop reply); the pages read before forgotten."""
        self.stopped_thread = _check_stopped(self.stub, stop)
        self.threads = _threads(self.stub, self.machine, self.layout)
        self.memory.forget()

    def run_to(self, address: int) -> None:
        """Continue the guest until it stops at `address` (a breakpoint, removed when the stub is let go).
        The signals it gets meanwhile are handed to it, as gdb's `handle SIG nostop pass`: a handler runs,
        an unhandled one ends the guest (an error, then)."""
        kind = BREAKPOINT_KINDS[self.machine]
        if self.stub.ask(f"Z0,{address:x},{kind}") != b"OK":
            raise self.stub.error(f"the stub sets no breakpoint at {address:#x} (Z0 refused)")
        self.breakpoint = address
        self.running = True  # from here on, a Ctrl-C (or an error) stops it again before the detach
        self.stub.send("c")
        stop = self.stub.wait_stop()
        while stop[:1] in (b"T", b"S") and _signal(stop) not in (SIGTRAP, None):
            self.stub.send(f"C{_signal(stop):02x}")  # the guest's own signal (a handled SIGSEGV): handed to it
            stop = self.stub.wait_stop()
        self.running = False
        if stop[:1] in ENDED:
            self.gone = True  # nothing left to detach from: qemu-user ends with its guest
            raise self.stub.error(f"the guest {_ended(stop)} before it reached {address:#x}: no stack is left")
        self.reread(stop)

    def let_go(self) -> None:
        """Remove the breakpoint, detach: the guest runs on. Nothing is read after."""
        self.memory.let_go()
        if self.stub.broken or self.gone:
            return
        if self.running:
            self.stub.interrupt()
            self.running = False
        if self.breakpoint is not None:
            self.stub.ask(f"z0,{self.breakpoint:x},{BREAKPOINT_KINDS[self.machine]}")
            self.breakpoint = None
        self.stub.ask("D")


def _address(where: str) -> tuple[str, int]:
    """`PORT` or `HOST:PORT` (`[::1]:PORT`)."""
    host, _, port = where.rpartition(":")
    host = host.strip("[]") or "localhost"
    if not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise InputError(f'--gdbstub: "{where}" is not PORT or HOST:PORT (qemu-aarch64 -g 1234 listens at 1234)')
    return host, int(port)


def _connect(where: str) -> socket.socket:
    host, port = _address(where)
    try:
        connection = socket.create_connection((host, port), timeout=REPLY_TIMEOUT)
    except ConnectionRefusedError:
        raise InputError(
            f"gdbstub at {where}: nothing listens there (start the guest with qemu-aarch64 -g {port} PROGRAM;"
            " it takes one debugger at a time)"
        ) from None
    except TimeoutError:
        raise InputError(f"gdbstub at {where}: no connection in {REPLY_TIMEOUT:g} s") from None
    except OSError as exc:
        raise InputError(f"gdbstub at {where}: {exc.strerror or exc}") from None
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _features(reply: bytes) -> tuple[set[str], int]:
    """`qSupported`'s answer: the features the stub has (`qXfer:auxv:read`), and its packet size."""
    supported, size = set(), 4096
    for item in reply.decode("latin-1").split(";"):
        name, _, value = item.partition("=")
        if item.endswith("+"):
            supported.add(item[:-1])
        elif name == "PacketSize":
            with contextlib.suppress(ValueError):
                size = int(value, 16)
    return supported, size


def _transfer(stub: Stub, what: str) -> bytes | None:
    """A `qXfer` object whole (at most `MOST_BYTES`), None when the stub has none (an empty or E reply)."""
    out = b""
    while True:
        reply = stub.ask(f"qXfer:{what}:{len(out):x},ffb")
        if reply[:1] not in (b"m", b"l"):
            return out or None
        out += reply[1:]
        if reply[:1] == b"l":
            return out
        if len(reply) == 1:
            raise stub.error(f"qXfer:{what} said more follows, and gave nothing")
        if len(out) > MOST_BYTES:
            raise stub.error(f"qXfer:{what} runs past {MOST_BYTES} bytes")


def _description(stub: Stub) -> tuple[str, list[tuple[str, int, int]]]:
    """The architecture and the registers (name, number, bits) the target description gives, following
    its includes as far as the registers an unwind reads."""
    architecture = ""
    registers: list[tuple[str, int, int]] = []
    documents, read, seen = ["target.xml"], 0, set()
    while documents and read < MOST_BYTES and len(seen) < MOST_DOCUMENTS:
        annex = documents.pop(0)
        if annex in seen:
            continue
        seen.add(annex)
        text = _transfer(stub, f"features:read:{annex}")
        if text is None:
            if annex == "target.xml":
                raise stub.error("the stub describes no registers (no target.xml): sfview cannot tell its architecture")
            continue
        read += len(text)
        try:
            found = _elements(text)
        except ExpatError as exc:
            raise stub.error(f"its {annex} is not XML ({exc})") from None
        for tag, attributes, content in found:
            if tag == "architecture":
                architecture = content.strip()
            elif tag.rpartition(":")[2] == "include" and attributes.get("href"):
                documents.append(attributes["href"])
            elif tag == "reg":
                number = attributes.get("regnum", "")
                at = int(number) if number.isdigit() else (registers[-1][1] + 1 if registers else 0)
                bits = attributes.get("bitsize", "0")
                registers.append((attributes.get("name", ""), at, int(bits) if bits.isdigit() else 0))
        machine = ARCHITECTURES.get(architecture)
        if machine is not None and {GDB_NAMES.get(n, n) for n, _, _ in registers} >= set(PRSTATUS_REGS[machine]):
            break  # the core registers are all known: the system registers that follow are not needed
    return architecture, registers


def _elements(text: bytes) -> list[tuple[str, dict[str, str], str]]:
    """Every element of an XML document: its tag as written (qemu's `xi:include` declares no namespace,
    which a namespace-aware parser refuses), its attributes, and its text."""
    found: list[tuple[str, dict[str, str], str]] = []
    parser = ParserCreate()
    parser.StartElementHandler = lambda tag, attributes: found.append((tag, attributes, ""))

    def text_of(data: str) -> None:
        if found:
            tag, attributes, held = found[-1]
            found[-1] = (tag, attributes, held + data)

    parser.CharacterDataHandler = text_of
    parser.Parse(text, True)
    return found


def _layout(stub: Stub, machine: str, registers: list[tuple[str, int, int]]) -> list[RegisterPlace]:
    """Where each register of `PRSTATUS_REGS` lies in a `g` reply: in register number order, one after the
    other from the first."""
    wanted, offset, layout, number = set(PRSTATUS_REGS[machine]), 0, [], 0
    for name, at, bits in sorted(registers, key=lambda r: r[1]):
        if at != number or bits % 8:
            break
        name = GDB_NAMES.get(name, name)
        if name in wanted:
            layout.append(RegisterPlace(name, offset, bits // 8))
        offset, number = offset + bits // 8, number + 1
    missing = [name for name in PC_AND_SP[machine] if name not in {r.name for r in layout}]
    if missing:
        raise stub.error(f"its target description has no {', '.join(missing)} among the registers a g reply holds")
    return layout


def _thread_ids(stub: Stub) -> list[str]:
    ids: list[str] = []
    reply = stub.ask("qfThreadInfo")
    while reply[:1] == b"m" and len(ids) < MOST_THREADS:
        ids += [t for t in reply[1:].decode("latin-1").split(",") if t]
        reply = stub.ask("qsThreadInfo")
    return ids


def _tid(text: str) -> int:
    """A thread id as the stub writes it (`1d22`, or `p01.1d22` in the multiprocess form)."""
    try:
        return int(text.rpartition(".")[2], 16)
    except ValueError:
        return 0


def _threads(stub: Stub, machine: str, layout: list[RegisterPlace]) -> list[Thread]:
    order = ">" if machine in BIG_ENDIAN else "<"
    threads = []
    for tid in _thread_ids(stub) or ["0"]:
        if stub.ask(f"Hg{tid}") != b"OK":
            continue  # gone meanwhile
        reply = stub.ask("g")
        try:
            block = bytes.fromhex(reply.replace(b"x", b"0").decode("latin-1"))  # `xx`: a register it cannot read
        except ValueError:
            raise stub.error(f"answered g (the registers) with {_shown(reply[:20])}, not hex digits") from None
        registers = {
            r.name: int.from_bytes(block[r.offset : r.offset + r.size], "big" if order == ">" else "little")
            for r in layout
            if r.offset + r.size <= len(block) and b"x" not in reply[2 * r.offset : 2 * (r.offset + r.size)]
        }
        if len(registers) < len(layout):
            missing = ", ".join(r.name for r in layout if r.name not in registers)
            raise stub.error(f"thread {tid}: its g reply ({len(block)} bytes) gives no value for {missing}")
        threads.append(Thread(_tid(tid), {n: registers.get(n, 0) for n in PRSTATUS_REGS[machine]}))
    if not threads:
        raise stub.error("the stub lists no thread")
    return threads


def _signal(stop: bytes) -> int | None:
    """The signal a stop reply `T05…` or `S05` gives."""
    try:
        return int(stop[1:3], 16)
    except ValueError:
        return None


def _ended(stop: bytes) -> str:
    """How a stop reply `W…` or `X…` says the guest ended."""
    how = "exited with status" if stop[:1] == b"W" else "was killed by signal"
    try:
        return f"{how} {int(stop[1:3], 16)}"
    except ValueError:
        return how.rpartition(" ")[0]


def _check_stopped(stub: Stub, stop: bytes) -> int | None:
    """The thread a stop reply names (`T05thread:1d22;`), None where it names none (`S05`); an error when it
    says the guest is gone, or is no stop reply."""
    if stop[:1] in ENDED:
        raise stub.error(f"the guest {_ended(stop)}: no stack is left")
    if stop[:1] not in (b"T", b"S"):
        raise stub.error(f"answered {_shown(stop[:20])} to ? (why it stopped), not a stop reply")
    for item in stop[3:].decode("latin-1").split(";"):
        name, _, value = item.partition(":")
        if name == "thread":
            return _tid(value)
    return None


def _auxv(data: bytes | None, order: str) -> dict[int, int]:
    if not data:
        return {}
    words = struct.unpack(f"{order}{len(data) // 8}Q", data[: len(data) // 8 * 8])
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def _open(stub: Stub) -> GuestProcess:
    supported, packet_size = _features(stub.ask("qSupported:swbreak+;vContSupported+"))
    stop = stub.ask("?")
    stopped_thread = _check_stopped(stub, stop)
    architecture, registers = _description(stub)
    machine = ARCHITECTURES.get(architecture)
    if machine is None:
        raise stub.error(
            f"the guest is a {architecture or 'undescribed'} process: sfview unwinds x86-64, AArch64 and s390x"
        )
    layout = _layout(stub, machine, registers)
    order = ">" if machine in BIG_ENDIAN else "<"
    chunk = PAGE
    while 2 * chunk + 16 > max(packet_size, 64):  # a reply carries each byte as two hex digits
        chunk //= 2
    memory = StubMemory(stub, chunk, order == "<")
    auxv = _auxv(_transfer(stub, "auxv:read:") if "qXfer:auxv:read" in supported else None, order)
    guest = GuestProcess(f"the guest at {stub.where}", machine, _threads(stub, machine, layout), memory, [], auxv, None)
    guest.stub, guest.layout, guest.breakpoint, guest.running, guest.gone = stub, layout, None, False, False
    guest.stopped_thread = stopped_thread
    program = _transfer(stub, "exec-file:read:") if "qXfer:exec-file:read" in supported else None
    guest.program = program.decode(errors="surrogateescape") if program else None
    _check_readable(guest)
    return guest


def _check_readable(guest: GuestProcess) -> None:
    """Refuse a stub that reads no memory: neither at the first thread's PC nor at its stack pointer."""
    registers = guest.threads[0].registers
    pc, sp = (registers[name] for name in PC_AND_SP[guest.machine])
    if guest.memory.read(pc, 1) is None and guest.memory.read(sp, 1) is None:
        why = (guest.memory.refused or b"").decode("latin-1")
        raise guest.stub.error(f"reads no memory: {why} at the PC ({pc:#x}) and at the stack pointer ({sp:#x})")


@contextlib.contextmanager
def attached(where: str) -> Iterator[GuestProcess]:
    """The guest behind the gdbstub at `where` (`PORT`, `HOST:PORT`), stopped while the block runs, then
    detached (the breakpoint `run_to` set removed first): the guest runs on."""
    connection = _connect(where)
    connection.settimeout(REPLY_TIMEOUT)
    stub = Stub(where, connection)
    guest = None
    try:
        guest = _open(stub)
        yield guest
    except BaseException:
        with contextlib.suppress(InputError):  # the first failure is the one to say
            _release(stub, guest)
        raise
    _release(stub, guest)


def _release(stub: Stub, guest: GuestProcess | None) -> None:
    """Let the guest go (`let_go`), or detach a stub that answered before the guest could be read; then
    close the connection. A Ctrl-C meanwhile waits until it is done."""
    with signals_held():
        try:
            if guest is not None:
                guest.let_go()
            elif not stub.broken:
                with contextlib.suppress(InputError):
                    stub.ask("D")  # leave its guest running as it was
        finally:
            stub.connection.close()
