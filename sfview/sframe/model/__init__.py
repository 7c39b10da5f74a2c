"""The format model: a `Section`, its `Function`s (FDEs) and their `Row`s (FREs), decoded on demand.

`section` (the model), `rules` (a row's CFA, FP and RA as numbers), `records` (record widths from the
generated layout), `terms` (the format's names: flags, ABIs, registers), `lazy` (sequences made as asked
for), `stream` (the Kaitai stream over bytes in memory).
"""
