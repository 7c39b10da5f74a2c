"""DWARF call frame information as a second source of unwind rules.

`ehframe` reads `.eh_frame` and `.debug_frame` (with `struct`, held to
pyelftools' reading by a differential test) into `cfi`'s tables of numeric
`rules.Rule` rows, kept apart from SFrame's; `expression` evaluates the rules
that are DWARF expressions; `compare` sets the two sources side by side.
"""
