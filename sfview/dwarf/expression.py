"""DWARF expressions in CFI rules, evaluated: the stack machine of DWARF 5 section 2.5.

pyelftools decodes the operations (`elftools.dwarf.dwarf_expr`: opcode,
name, arguments and byte offset of each); it has no evaluator, so the
machine is here. It holds what CFI expressions use: literals and constants,
`DW_OP_breg*`/`bregx` (a register of the frame being unwound), `deref` and
`deref_size` (a word of the process's memory), the stack operations,
arithmetic and logic, the comparisons, `skip` and `bra`. Anything else (a
register location `DW_OP_reg*`, TLS, `entry_value`, ...) is named and the
evaluation stops there: the unwinder then says which operation it met.

Every operation is recorded with the value it left on top of the stack, so
that a step can be explained with the numbers (`DW_OP_breg7 8 → 0x7ffc…`):
glibc's PLT rule `rsp + 8 + ((rip & 15) >= 11) * 8` and `__restore_rt`'s
rules read as what they compute.
"""

from __future__ import annotations

import io
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from sfview import ADDRESS_MASK

if TYPE_CHECKING:
    from elftools.dwarf.dwarf_expr import DWARFExprOp, DWARFExprParser

SIGN = 1 << 63
MAX_STEPS = 10_000
"""A `bra` loop in a damaged expression must end: no CFI expression takes more than a few dozen steps.
Operations decoded count too: an expression is decoded as it is run, never past this many."""
DESCRIBED = 32
"""Operations an expression is described with in words (`describe`); the bytes of the rest are counted."""
TRACED = (24, 8)
"""The first and the last operations an evaluation's trace keeps; those between are counted."""


@dataclass
class Evaluation:
    """What an expression computed, or where and why it stopped."""

    value: int | None
    trace: list[str] = field(default_factory=list)
    """Each operation with the value it left on top: `DW_OP_breg7 (rsp) 8 → 0x7ffc…` (the first and the
    last `TRACED`, those between counted in one entry)."""
    stop: str = ""
    """Why there is no value (an operation sfview does not evaluate, a register or word not known)."""
    missing_address: int | None = None
    """The memory word the evaluation needed and nobody has."""


class Stop(Exception):
    """The evaluation cannot go on: `reason` says why, `address` which word it wanted, if one."""

    def __init__(self, reason: str, address: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.address = address


@cache
def _parser(little_endian: bool) -> DWARFExprParser:
    # pyelftools' decoder loads when an expression is met: most walks meet none
    from elftools.dwarf.dwarf_expr import DWARFExprParser
    from elftools.dwarf.structs import DWARFStructs

    return DWARFExprParser(DWARFStructs(little_endian=little_endian, dwarf_format=32, address_size=8))


class _Operations:
    """An expression's operations decoded as they are reached, each as pyelftools' `parse_expr` decodes
    it (with its table of operand readers): a huge expression costs what is run or shown of it, not
    its length. Decoding stops past `limit` operations (`Stop`)."""

    def __init__(self, expr: bytes, little_endian: bool, limit: int) -> None:
        from elftools.dwarf.dwarf_expr import DW_OP_opcode2name, DWARFExprOp

        self._expr = expr
        self._stream = io.BytesIO(expr)
        self._size = len(expr)
        self._readers = _parser(little_endian)._dispatch_table  # `parse_expr`'s own table
        self._names, self._op = DW_OP_opcode2name, DWARFExprOp
        self._limit = limit
        self.ops: list[DWARFExprOp] = []
        self.at: dict[int, int] = {}
        """Each decoded operation's index, by its byte offset."""

    @property
    def done(self) -> bool:
        """Every operation is decoded."""
        return self._stream.tell() >= self._size

    def more(self) -> bool:
        """Decode the next operation; False at the end of the expression."""
        if self.done:
            return False
        if len(self.ops) >= self._limit:
            raise Stop(f"the expression runs past {self._limit} operations")
        offset = self._stream.tell()
        code = self._stream.read(1)[0]
        try:
            args = self._readers[code](self._stream)
        except Exception:  # pyelftools' readers fail in many ways on bad bytes (EOF, an unknown opcode...)
            raise Stop(f"the expression {_bytes_text(self._expr)} cannot be decoded at byte {offset}") from None
        self.at[offset] = len(self.ops)
        self.ops.append(self._op(op=code, op_name=self._names.get(code, f"OP:{code:#x}"), args=args, offset=offset))
        return True

    def index_of(self, offset: int) -> int | None:
        """The index of the operation that starts at byte `offset`, decoding up to it; None if none does."""
        while offset not in self.at and (not self.ops or self.ops[-1].offset < offset) and self.more():
            pass
        return self.at.get(offset)

    def remaining(self) -> int:
        """Bytes not yet decoded."""
        return self._size - self._stream.tell()


def describe(expr: bytes, register_name: Callable[[int], str], little_endian: bool = True) -> str:
    """`DW_OP_breg7 (rsp) 8; DW_OP_deref`: the expression in words, register names put in (the first
    `DESCRIBED` operations, then how many bytes follow)."""
    try:
        ops = _Operations(expr, little_endian, DESCRIBED)
        while len(ops.ops) < DESCRIBED and ops.more():
            pass
        text = "; ".join(_op_text(op, register_name) for op in ops.ops)
        return text + (f"; … ({ops.remaining()} more bytes)" if not ops.done else "")
    except Stop:
        return f"an undecodable expression ({_bytes_text(expr)})"


def _bytes_text(expr: bytes) -> str:
    """The expression's bytes in hex, the first 32 of them."""
    return expr[:32].hex() + (f"… ({len(expr)} bytes)" if len(expr) > 32 else "")


def _op_text(op: DWARFExprOp, register_name: Callable[[int], str]) -> str:
    reg = _register_of(op)
    args = op.args[1:] if op.op_name == "DW_OP_bregx" else op.args
    text = op.op_name + (f" ({register_name(reg)})" if reg is not None else "")
    return text + "".join(f" {arg}" for arg in args)


def _register_of(op: DWARFExprOp) -> int | None:
    """The register a `breg` operation reads."""
    if op.op_name == "DW_OP_bregx":
        return op.args[0]
    if op.op_name.startswith("DW_OP_breg"):
        return int(op.op_name[len("DW_OP_breg") :])
    return None


def _signed(value: int) -> int:
    return value - (1 << 64) if value & SIGN else value


def evaluate(
    expr: bytes,
    register: Callable[[int], int | None],
    read: Callable[[int, int], int | None],
    *,
    initial: tuple[int, ...] = (),
    register_name: Callable[[int], str] = lambda n: f"r{n}",
    little_endian: bool = True,
) -> Evaluation:
    """Run `expr` with `initial` on the stack (the CFA, for a register rule); the value on top at the end.

    `register(n)` gives the frame's register n (None: not known); `read(address, size)` a word of memory.
    """
    result = Evaluation(None)
    machine = _Machine(list(initial), register, read, register_name)
    ops = _Operations(expr, little_endian, MAX_STEPS)
    head, tail = TRACED
    last: deque[str] = deque(maxlen=tail)
    i = steps = 0
    try:
        while i < len(ops.ops) or ops.more():
            steps += 1
            if steps > MAX_STEPS:
                raise Stop(f"the expression runs past {MAX_STEPS} operations (a loop)")
            op = ops.ops[i]
            jump = machine.run(op)
            top = f"{machine.stack[-1]:#x}" if machine.stack else "(empty)"
            (result.trace if steps <= head else last).append(f"{_op_text(op, register_name)} → {top}")
            if jump is None:
                i += 1
                continue
            # skip/bra: a 2-byte offset from the end of the operation (1 byte of opcode, 2 of argument)
            target = op.offset + 3 + jump
            if target == len(expr):
                break
            found = ops.index_of(target)
            if found is None:
                raise Stop(f"{op.op_name} jumps to byte {target}, which starts no operation")
            i = found
        if not machine.stack:
            raise Stop("the expression leaves nothing on the stack")
        result.value = machine.stack[-1]
    except Stop as stop:
        result.stop, result.missing_address = stop.reason, stop.address
    if steps > head + tail:
        result.trace.append(f"… {steps - head - len(last)} operations …")
    result.trace.extend(last)
    return result


@dataclass
class _Machine:
    stack: list[int]
    register: Callable[[int], int | None]
    read: Callable[[int, int], int | None]
    register_name: Callable[[int], str]

    def pop(self, op: DWARFExprOp) -> int:
        if not self.stack:
            raise Stop(f"{op.op_name} finds the stack empty")
        return self.stack.pop()

    def push(self, value: int) -> None:
        self.stack.append(value & ADDRESS_MASK)

    def run(self, op: DWARFExprOp) -> int | None:
        """Do one operation; for `skip` and a taken `bra`, the jump (bytes from the operation's end)."""
        name = op.op_name
        if name.startswith("DW_OP_lit"):
            self.push(int(name[len("DW_OP_lit") :]))
        elif name in CONSTANTS:
            self.push(op.args[0])
        elif (reg := _register_of(op)) is not None:
            value = self.register(reg)
            if value is None:
                raise Stop(f"{name} needs {self.register_name(reg)}, which is not known")
            self.push(value + op.args[-1])
        elif name in ("DW_OP_deref", "DW_OP_deref_size"):
            size = op.args[0] if op.args else 8
            address = self.pop(op)
            value = self.read(address, size)
            if value is None:
                raise Stop(f"{name} needs the memory word at {address:#x}, which nobody has given", address)
            self.push(value)
        elif name in STACK_OPS:
            STACK_OPS[name](self.stack, op)
        elif name in UNARY:
            self.push(UNARY[name](self.pop(op)))
        elif name == "DW_OP_plus_uconst":
            self.push(self.pop(op) + op.args[0])
        elif name in BINARY:
            b, a = self.pop(op), self.pop(op)
            self.push(_binary(name, a, b))
        elif name == "DW_OP_skip":
            return op.args[0]
        elif name == "DW_OP_bra":
            return op.args[0] if self.pop(op) else None
        elif name != "DW_OP_nop":
            raise Stop(f"{name} is not an operation sfview evaluates in CFI")
        return None


def _pick(stack: list[int], op: DWARFExprOp) -> None:
    index = {"DW_OP_dup": 0, "DW_OP_over": 1}.get(op.op_name, op.args[0] if op.args else 0)
    if index >= len(stack):
        raise Stop(f"{op.op_name} reaches below the stack")
    stack.append(stack[-1 - index])


def _reorder(stack: list[int], op: DWARFExprOp) -> None:
    count = {"DW_OP_drop": 1, "DW_OP_swap": 2, "DW_OP_rot": 3}[op.op_name]
    if len(stack) < count:
        raise Stop(f"{op.op_name} needs {count} values on the stack")
    if op.op_name == "DW_OP_drop":
        stack.pop()
    elif op.op_name == "DW_OP_swap":
        stack[-1], stack[-2] = stack[-2], stack[-1]
    else:  # rot: the top goes third, the second and third move up
        stack[-3], stack[-2], stack[-1] = stack[-1], stack[-3], stack[-2]


CONSTANTS = frozenset(
    ["DW_OP_addr", "DW_OP_constu", "DW_OP_consts"] + [f"DW_OP_const{n}{s}" for n in (1, 2, 4, 8) for s in "us"]
)
STACK_OPS: dict[str, Callable[[list[int], DWARFExprOp], None]] = {
    "DW_OP_dup": _pick,
    "DW_OP_over": _pick,
    "DW_OP_pick": _pick,
    "DW_OP_drop": _reorder,
    "DW_OP_swap": _reorder,
    "DW_OP_rot": _reorder,
}
UNARY: dict[str, Callable[[int], int]] = {
    "DW_OP_abs": lambda a: abs(_signed(a)),
    "DW_OP_neg": lambda a: -_signed(a),
    "DW_OP_not": lambda a: ~a,
}
BINARY = frozenset(
    "DW_OP_" + name
    for name in "and or xor plus minus mul div mod shl shr shra eq ne lt le gt ge".split()  # noqa: SIM905 - a table
)


def _binary(name: str, a: int, b: int) -> int:
    """`a OP b`, with `a` the second entry and `b` the top (DWARF's order); comparisons and `div` signed."""
    sa, sb = _signed(a), _signed(b)
    match name[len("DW_OP_") :]:
        case "and":
            return a & b
        case "or":
            return a | b
        case "xor":
            return a ^ b
        case "plus":
            return a + b
        case "minus":
            return a - b
        case "mul":
            return a * b
        case "div" | "mod" if b == 0:
            raise Stop(f"{name} by zero")
        case "div":
            return int(sa / sb)
        case "mod":
            return a % b
        case "shl":
            return a << b if b < 64 else 0
        case "shr":
            return a >> b
        case "shra":
            return sa >> min(b, 63)
        case "eq":
            return int(sa == sb)
        case "ne":
            return int(sa != sb)
        case "lt":
            return int(sa < sb)
        case "le":
            return int(sa <= sb)
        case "gt":
            return int(sa > sb)
    return int(sa >= sb)  # ge
