"""A backtrace as gdb prints one (`#1  0x0000555555555181 in leaf ()`), with the steps explained on request."""

from __future__ import annotations

import json

from sfview.unwind.state import Backtrace, Frame


def frame_line(frame: Frame) -> str:
    """`#1  0x0000555555555181 in leaf ()`, gdb's layout; the module when no symbol names the PC."""
    where = f"{frame.function} ()" if frame.function else f"?? ({frame.module})" if frame.module else "??"
    line = f"#{frame.index:<2} 0x{frame.pc:016x} in {where}"
    if frame.fallback:
        line += "  [frame-pointer chain]"
    return line


def explain(frame: Frame) -> list[str]:
    """The FDE and FRE used for a frame, the rules and the arithmetic, indented under it."""
    step = frame.step
    lines = []
    if frame.note:
        lines.append(f"    {frame.note}")
    if step is None:
        return lines
    if step.method == "sframe":
        lines.append(
            f"    lookup {step.lookup_pc:#x}: FDE {step.fde_index} at section offset {step.fde_offset:#x} "
            f"(function at {step.function_start:#x})"
        )
        if step.fre_index is not None:
            assert step.fre_offset is not None
            lines.append(f"    FRE {step.fre_index} at section offset {step.fre_offset:#x}; {step.row_choice}")
            rules = ", ".join(f"{k.upper()} {v}" for k, v in step.rules.items())
            lines.append(f"    rules: {rules}" + ("; RA signed" if step.mangled_ra else ""))
    else:
        lines.append(f"    lookup {step.lookup_pc:#x}: {step.row_choice}")
    lines += [f"    {value.text()}" for value in step.values]
    return lines


def text(trace: Backtrace, explained: bool = False) -> str:
    lines = []
    for frame in trace.frames:
        lines.append(frame_line(frame))
        if explained:
            lines += explain(frame)
    lines.append(f"stopped: {trace.stop}")
    lines += [f"note: {note}" for note in trace.notes]
    return "\n".join(lines) + "\n"


def json_text(trace: Backtrace) -> str:
    return json.dumps(trace.to_json(), indent=2)
