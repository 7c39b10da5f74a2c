"""Profiles: what SFrame-based profiling would show of a `perf.data`, sample by sample.

`address_space` follows each process's mappings through the profile's records
and makes the unwinder's modules of the files they name; `walks` unwinds one
sample three ways (SFrame as the kernel would, frame pointers alone, DWARF CFI);
`coverage` compares the walks and counts, sample after sample, where SFrame
gives DWARF's stack and where and why it does not.
"""
