/* The shared library of callback.c: it calls back into the program, then does more work (no tail call). */
volatile int lib_sink;
__attribute__((noinline)) void through_lib(void (*f)(int), int x) { lib_sink += x; f(x + 1); lib_sink++; }
