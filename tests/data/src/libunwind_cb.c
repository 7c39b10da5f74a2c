/* The library half of unwind_cb_main.c: calls back into the program from its own frame. */
__attribute__((noinline)) int lib_apply(int (*fn)(int), int x) { volatile int pad[4]; pad[x & 3] = x; return fn(x) + pad[x & 3]; }
