"""DWARF call frame information as a second source of unwind rules.

`cfi` reads `.eh_frame` and `.debug_frame` (through pyelftools) into tables
of numeric `rules.Rule` rows, kept apart from SFrame's; `compare` sets the
two sources side by side.
"""
