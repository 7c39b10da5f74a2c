/* check() ends in a call that never returns: its return address points past check's end,
   into after_check, and only the call before it (return address - 1) names the caller right. */
#include <stdio.h>
volatile int sink;
#ifdef CRASH_AT_STOP
__attribute__((noinline)) void stop_here(void){ sink++; *(volatile int *)(long)(sink - sink) = 1; }
#else
__attribute__((noinline)) void stop_here(void){ sink++; }
#endif
__attribute__((noinline, noreturn)) void fatal(int x){ sink = x; stop_here(); for (;;) sink++; }
__attribute__((noinline)) int check(int x){ if (x > 0) fatal(x); return x + 1; }
__attribute__((noinline)) int after_check(int x){ return x * sink + 3; }
__attribute__((noinline)) int layer(int x){ int r = check(x); return r + after_check(r); }
int main(int argc, char **argv){ printf("%d\n", layer(argc)); return 0; }
