"""The bulk reader: passes over every function of a section with `struct`, no object per record.

`reader` (`Bulk`: a `BulkFunction` per function, blocks of rows read once), `shapes` (functions by the
shape of their rows, for compare and export), `overview` (a few `Facts` of every function in arrays,
for the app's FDE table).
"""
