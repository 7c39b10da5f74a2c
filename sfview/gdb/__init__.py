"""sfview inside gdb: the `sframe` commands and an SFrame unwinder, in gdb's own Python.

`sfview gdb` prints the line that loads it (`sfview.gdb.commands`, which registers the commands);
`inferior` reads what gdb knows of the process, `unwinder` is the unwinder gdb asks for frames.
Only gdb can import these modules (they import gdb's `gdb` module); nothing else in sfview imports them.
"""
