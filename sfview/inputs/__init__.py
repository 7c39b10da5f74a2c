"""What sfview reads besides the SFrame format: files opened and bounded, ELF files, cores, names, numbers.

`opening` finds an input's SFrame bytes (an ELF file's, or a raw section); `elf/` reads ELF files;
`core` and `linkmap` a process's state; `symbols`, `plt` and `demangle` name functions; `numbers` is the
one rule for what a person types; `boundary` and `limits` guard every read. Inputs know nothing of the
format model: `sfview.document.Document` puts the two together.
"""
