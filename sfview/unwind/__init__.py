"""The unwinder: `engine` walks the frames, `session` gathers what it needs, `sigframe` the signal frames.

`sfview unwind`'s start-up is most of its time, and it is to be no slower than gdb's `bt` of the same
core; that is the one start-up budget of the project. So the modules it imports (this package, the
model's `section` and `rules`, the inputs' `core`, `symbols` and `elf.image`, `sfview.dwarf`'s `cfi`
and `ehframe`) use no dataclasses (named tuples and plain classes with slots instead): importing
`dataclasses` (with `inspect`) and building its classes would be a large share of that start. Nor do
they load pyelftools' readers, Textual or the position-recording parser. `NOT_IMPORTED_BY_AN_UNWIND`
in tests/oracles/test_unwind.py lists what an unwind must not import, and why, and fails when one is loaded;
the figures are in bench/README.md.
"""
