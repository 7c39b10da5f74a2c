"""Machine code beside the SFrame rows: the instructions of a function, each on the row that holds it."""
