/* A library without SFrame (DWARF CFI only), built with -mbranch-protection=pac-ret: its frames'
   return addresses are signed, and only its CFI's DW_CFA_AARCH64_negate_ra_state says so. */
__attribute__((noinline)) int lib_inner(int (*cb)(int), int n) { return cb(n + 1) * 3 + n; }
int lib_outer(int (*cb)(int), int n) { return lib_inner(cb, n * 2) + 7; }
