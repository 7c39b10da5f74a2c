"""`sfview check`: the format's rules as data (`catalogue`) and the pass that applies them to a section (`run`)."""
