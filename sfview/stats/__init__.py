"""Where a section's bytes go (`sfview stats`): every byte counted in one part, the parts adding up to the
section's size, beside the DWARF unwind tables of the same file (`tally.py`)."""
