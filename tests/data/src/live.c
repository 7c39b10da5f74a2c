/* A process to read while it runs: main deep in a recursion, one thread inside a signal handler, one
   a few calls down, each blocked reading a pipe. It prints "ready" once every thread is on its way to
   its read; a line on stdin lets main write to the others' pipe, join them and exit 0. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#ifndef DEPTH
#define DEPTH 200
#endif
static int quit[2];
static pthread_barrier_t ready;
volatile int sink;
__attribute__((noinline)) void wait_quit(void) { char c; sink += read(quit[0], &c, 1); }
__attribute__((noinline)) void in_handler(void) { wait_quit(); sink++; }
__attribute__((noinline)) void handler(int sig) { sink += sig; in_handler(); }
__attribute__((noinline)) void *signalled(void *arg) {
    (void)arg;
    pthread_barrier_wait(&ready);
    pthread_kill(pthread_self(), SIGUSR1);
    return 0;
}
__attribute__((noinline)) void nested(int n) { if (n) nested(n - 1); else wait_quit(); sink++; }
__attribute__((noinline)) void *plain(void *arg) { (void)arg; pthread_barrier_wait(&ready); nested(3); return 0; }
__attribute__((noinline)) void wait_input(void) { char c; sink += read(0, &c, 1); }
__attribute__((noinline)) int recurse(int n) {
    if (n == 0) { wait_input(); return 0; }
    int depth = recurse(n - 1) + 1;
    sink += n; /* after the call: no tail call, no loop */
    return depth;
}
int main(void) {
    pthread_t a, b;
    struct sigaction sa = {0};
    sa.sa_handler = handler;
    sigaction(SIGUSR1, &sa, 0);
    if (pipe(quit)) return 1;
    pthread_barrier_init(&ready, 0, 3);
    pthread_create(&a, 0, signalled, 0);
    pthread_create(&b, 0, plain, 0);
    pthread_barrier_wait(&ready);
    puts("ready");
    fflush(stdout);
    int depth = recurse(DEPTH);
    if (write(quit[1], "qq", 2) != 2) return 1;
    pthread_join(a, 0);
    pthread_join(b, 0);
    return depth == DEPTH ? 0 : 1;
}
