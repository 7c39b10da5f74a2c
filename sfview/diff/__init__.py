"""Two SFrame sections compared by what they mean, not by their bytes (`sfview diff`).

`shapes.py` makes each function's meaning (its rules by offset, rows that repeat the one before merged
away) and its encoding, once per block of rows; `engine.py` pairs the functions of the two sections (by
name, by address where names are missing) and tells functions encoded alike, encoded differently and
different in meaning apart, with the PC ranges each meaning difference covers.
"""
