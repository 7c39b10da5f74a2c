"""sfview: a viewer, checker and unwinder for SFrame stack-trace sections.

The package holds the few constants every layer shares, below them all (the
model, the inputs, the engines and the command line import them from here),
so that none defines its own.
"""

ADDRESS_MASK = (1 << 64) - 1
"""2**64 - 1: the largest 64-bit address or machine word, and the mask that wraps a sum to one."""

EXIT_INTERRUPTED = 130
"""The exit status of a command ended by Ctrl-C, as a shell reports it (128 + SIGINT)."""
