"""The call sites of every file a walk went through, in the process's addresses: the tail call frames'
search (`sfview.dwarf.tail_calls`) across files, as gdb searches its objfiles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sfview import ADDRESS_MASK
from sfview.dwarf.tail_calls import CallSite

if TYPE_CHECKING:
    from sfview.dwarf.source import DebugInfo
    from sfview.unwind.engine import Module, Unwinder


class ProcessCallSites:
    """The call sites of the unwinder's modules, each file's debug information asked at its own addresses;
    a function a file only declares is found by name in the others, the program first (gdb's minimal
    symbols), and its tail calls in the file holding it."""

    def __init__(self, unwinder: Unwinder) -> None:
        self.unwinder = unwinder

    def module(self, address: int) -> tuple[Module, DebugInfo] | None:
        """The module holding `address`, with its debug information; None where it has none."""
        module = self.unwinder.module_of(address)
        if module is None or module.debug_info is None:
            return None
        info = module.debug_info()
        return (module, info) if info is not None else None

    def call_site(self, pc: int) -> CallSite | None:
        held = self.module((pc - 1) & ADDRESS_MASK)
        if held is None:
            return None
        module, info = held
        site = info.call_site((pc - module.bias) & ADDRESS_MASK)
        return self._placed(site, module) if site is not None else None

    def tail_calls(self, entry: int) -> list[CallSite] | None:
        held = self.module(entry)
        if held is None:
            return None
        module, info = held
        sites = info.tail_calls((entry - module.bias) & ADDRESS_MASK)
        return None if sites is None else [self._placed(site, module) for site in sites]

    def _placed(self, site: CallSite, module: Module) -> CallSite:
        """`site` of `module` at the process's addresses, its target found by name in another file where
        its own only declares it."""
        target = None if site.target is None else (site.target + module.bias) & ADDRESS_MASK
        if target is None and site.name is not None:
            target = self._named(site.name)
        return CallSite((site.pc + module.bias) & ADDRESS_MASK, site.tail, target, site.name)

    def _named(self, name: str) -> int | None:
        """gdb's `lookup_minimal_symbol`: the first file, in the process's order, with a global symbol of the
        name; else the last with a local one."""
        local = None
        for module in self.unwinder.modules:
            if module.symbol_named is None:
                continue
            external, own = module.symbol_named(name)
            if external is not None:
                return (external + module.bias) & ADDRESS_MASK
            if own is not None:
                local = (own + module.bias) & ADDRESS_MASK
        return local
