/* Calls through libpac.so back into a function that faults. */
int lib_outer(int (*cb)(int), int n);
volatile int *volatile nowhere;
__attribute__((noinline)) int crash(int n) { *nowhere = n; return n; }
int main(int argc, char **argv) { (void)argv; return lib_outer(crash, argc) + 1; }
