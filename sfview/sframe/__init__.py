"""SFrame sections read two ways: the model, and the bulk reader for passes over every function.

`model/` turns the Kaitai objects generated from `sframe.ksy` into a `Section` whose `Function`s (FDEs) and
their `Row`s (FREs) are decoded when first asked for, with a byte span each and errors located at the
failing field; it reads any section, damaged or flexible. `bulk/` goes through a whole section with
`struct` and no object per record: a `BulkFunction` per function, each distinct block of rows read once and
handed out again; it leaves every unusual function (a flexible FDE, damaged bytes) to the model, which also
words every error. The model never imports the bulk reader.

A function on each path: the model's `Function`, its rows `Row`s; the bulk reader's `BulkFunction`, its rows
`BulkRow`s (start offset, pattern key) in a `Block` that functions with the same rows share; for compare and
export, `Shaped`, which stands in for a `Function`; for the app's FDE table, `Facts`.

Which path serves which command:

| command                    | path                                                                        |
|----------------------------|-----------------------------------------------------------------------------|
| `dump`                     | bulk (`Bulk.functions`); the model for unusual functions, and words errors  |
| `dump --json`              | bulk (`Bulk.functions`); the model for unusual functions, and words errors  |
| `check`, `dump`'s notes    | bulk (`Bulk.functions`); the model for unusual functions, and words errors  |
| `check --profile`          | bulk (`Bulk.functions`) for the libsframe profile's lookups                 |
| `compare`, `export`        | bulk (`Shapes`, a `Shaped` per function read whole); the model for the rest |
| `unwind`, the debugger     | model (`Section.find_function`, `Function.row_for`)                         |
| app: FDE table             | bulk (`Overview`, built in a worker); the model until it is ready           |
| app: FRE table, frame, `g` | model (`Function.rows`, decoded as they are shown); `Overview` for widths   |
| app: Structure tree        | model, through the field tree (`sfview.app.fields`); `Overview` for labels  |
"""
