/* One program, several states for gdb and sfview to unwind (tests/test_unwind_states.py): the
   argument chooses what main does. 1: a first call through a lazy PLT (ld.so's resolver); 2:
   clock_gettime (the vDSO); 3: a signal whose handler returns (the sigreturn trampoline); 4: a
   1,000-frame recursion; 5: a DRAP function (a realigned stack and a VLA: its CFA is an expression). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile int sink;

__attribute__((noinline)) void stop_here(void) { sink++; }

__attribute__((noinline)) int recurse(int n) {
    if (n == 0) {
        stop_here();
        return 0;
    }
    int (*volatile self)(int) = recurse; /* no tail call, no loop: one frame per level */
    return self(n - 1) + 1;
}

__attribute__((noinline, force_align_arg_pointer)) int drap(int n) {
    char vla[n];
    memset(vla, 1, n);
    stop_here();
    return vla[n - 1];
}

static void handler(int sig) { sink += sig; }

int main(int argc, char **argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    struct timespec ts;
    switch (mode) {
    case 1: puts("lazy"); break;
    case 2: clock_gettime(CLOCK_MONOTONIC, &ts); break;
    case 3: signal(SIGUSR1, handler); raise(SIGUSR1); break;
    case 4: recurse(1000); break;
    case 5: drap(argc + 40); break;
    }
    return sink & 1;
}
