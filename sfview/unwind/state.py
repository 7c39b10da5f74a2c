"""What an unwind produces: frames, and for each the step that found its caller, as plain data.

Everything a view needs to *explain* a step is here (which FDE and FRE, the
rules, every value computed with its inputs, every address read), so that a
debugger screen can show `CFA = rsp + 16 = 0x7ffc…c0 + 0x10 = 0x7ffc…d0`
without asking the model again. No objects of the model are kept: the data
survives JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Value:
    """One computed value: `name = formula = inputs = value`, and the word read, if any."""

    name: str
    """`CFA`, `RA`, `FP`, `SP`."""
    formula: str
    """The rule with register names: `rsp + 16`, `*(CFA - 8)`, `unchanged`."""
    inputs: str
    """The formula with numbers: `0x7ffc0 + 0x10`, `*(0x7ffd0 - 0x8)`."""
    value: int | None
    """None when it could not be computed (`problem` says why)."""
    address: int | None = None
    """The memory address read, for a dereferencing rule."""
    note: str = ""
    problem: str = ""

    def text(self) -> str:
        """`CFA = rsp + 16 = 0x7ffc0 + 0x10 = 0x7ffd0`."""
        parts = [self.name, self.formula]
        if self.inputs and self.inputs != self.formula:
            parts.append(self.inputs)
        if self.address is not None:
            parts.append(f"*{self.address:#x}")
        if self.value is not None:
            parts.append(f"{self.value:#x}")
        text = " = ".join(parts)
        if self.note:
            text += f"  ({self.note})"
        if self.problem:
            text += f"  [{self.problem}]"
        return text


@dataclass
class Step:
    """How the caller of a frame was found: by SFrame (FDE and FRE), or by the frame-pointer chain."""

    method: str
    """`sframe` or `frame pointer`."""
    lookup_pc: int
    """The PC looked up: the frame's own, or PC - 1 for a return address."""
    fde_index: int | None = None
    fde_offset: int | None = None
    """Section offset of the FDE."""
    function_start: int | None = None
    fre_index: int | None = None
    fre_offset: int | None = None
    """Section offset of the FRE."""
    row_choice: str = ""
    """Which rule picked the row: PCINC, or PCMASK and how (`(pc - start) % rep_size`)."""
    rules: dict[str, str] = field(default_factory=dict)
    """`cfa`, `fp`, `ra`: each rule as a formula."""
    mangled_ra: bool = False
    values: list[Value] = field(default_factory=list)


@dataclass
class Frame:
    """One frame of the backtrace: its PC and where it is."""

    index: int
    pc: int
    sp: int | None
    fp: int | None
    module: str
    function: str
    """The symbol holding the PC (`leaf`, `leaf+0x12`), "" when none does."""
    fallback: bool = False
    """Found through the frame-pointer chain, not SFrame."""
    note: str = ""
    """E.g. `no SFrame for this code`."""
    step: Step | None = None
    """How this frame's caller was found (None for the last frame)."""


@dataclass
class Backtrace:
    frames: list[Frame]
    stop: str
    """Why there is no further frame, in words."""
    notes: list[str] = field(default_factory=list)
    """About the inputs: files not found, and the like."""

    def to_json(self) -> dict:
        return asdict(self)
