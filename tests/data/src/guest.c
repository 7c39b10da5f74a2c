/* A guest for qemu-user's gdbstub: main deep in a recursion, then reading its stdin (`wait_input`), one
   more thread blocked reading a pipe. It prints "ready" once the thread runs; a line on stdin lets main
   write to the thread's pipe, join it and exit 0. No signal: gdb and qemu-user would each stop on it. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#ifndef DEPTH
#define DEPTH 50
#endif
static int quit[2];
volatile int sink;
__attribute__((noinline)) void *waiting(void *arg) { char c; (void)arg; sink += read(quit[0], &c, 1); return 0; }
__attribute__((noinline)) void wait_input(void) { char c; sink += read(0, &c, 1); }
__attribute__((noinline)) int recurse(int n) {
    if (n == 0) { wait_input(); return 0; }
    int depth = recurse(n - 1) + 1;
    sink += n; /* after the call: no tail call, no loop */
    return depth;
}
int main(void) {
    pthread_t thread;
    if (pipe(quit) || pthread_create(&thread, 0, waiting, 0)) return 1;
    puts("ready");
    fflush(stdout);
    int depth = recurse(DEPTH);
    if (write(quit[1], "q", 1) != 1) return 1;
    pthread_join(thread, 0);
    return depth == DEPTH ? 0 : 1;
}
