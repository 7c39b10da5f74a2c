"""ELF files: `image` (read with `struct`), `pyelftools_view` (what only pyelftools reads), `locate`, `names`.

`image.ElfImage` reads what every command needs, and all an unwind reads; `pyelftools_view` opens
pyelftools' view of the same file when relocations or DWARF are asked for; `locate` finds the SFrame
bytes, `names` the function names. The image and the view know nothing of each other:
`sfview.document.Document` holds both.
"""
