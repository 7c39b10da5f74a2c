"""Editing a section in place: byte patches over the document's bytes, undone and redone, written to a copy.

The model knows bytes, not the format: a `Slot` says where a value sits
(its bytes, its bits, its sign, the names it may be given), and whoever
names the field (the app's field tree, `sfview patch`'s paths) makes one
from the Kaitai description. `Edits` keeps the patches in the order made; its
`data` is what the section reads with them applied, decoded again by a new
`Document`. A patch never changes the section's size.
"""
