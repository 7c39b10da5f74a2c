// A process to hold to gdb -p: threads blocked in other calls than read, each through frames gdb names in
// its own ways (tests/oracles/test_live_names.py). One waits on a semaphore (glibc's sem_wait reaches the
// futex by tail calls), one polls (frame 0 after the syscall, in a line with discriminators), one is in a
// signal handler (pthread_kill's frame interrupted), one is DEPTH calls deep, and main is in
// a terminate handler called from a throw through noexcept (libstdc++'s and libgcc's frames, without debug
// information). "ready" once each is on its way; a line on stdin lets it exit 0.
#include <errno.h>
#include <exception>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdexcept>
#include <stdio.h>
#include <unistd.h>
#ifndef DEPTH
#define DEPTH 2000
#endif
static int quit[2];
static sem_t never;
static pthread_barrier_t ready;
volatile int sink;
__attribute__((noinline)) void block() { char c; while (read(quit[0], &c, 1) < 0 && errno == EINTR) {} sink++; }
__attribute__((noinline)) void on_signal(int s) { sink += s; block(); }
__attribute__((noinline)) void *waiting(void *) {
    pthread_barrier_wait(&ready);
    while (sem_wait(&never) && errno == EINTR) {}
    return 0; }
__attribute__((noinline)) void *polling(void *) {
    struct pollfd f = {quit[0], POLLIN, 0};
    pthread_barrier_wait(&ready);
    while (poll(&f, 1, -1) < 0 && errno == EINTR) {}
    return 0; }
__attribute__((noinline)) void *signalled(void *) { pthread_barrier_wait(&ready); pthread_kill(pthread_self(), SIGUSR1); return 0; }
__attribute__((noinline)) int down(int n) { if (n == 0) { block(); return 0; } int d = down(n - 1) + 1; sink += d; return d; }
__attribute__((noinline)) void *deep(void *) { pthread_barrier_wait(&ready); sink += down(DEPTH); return 0; }
__attribute__((noinline)) void on_terminate() { puts("ready"); fflush(stdout); char c; sink += read(0, &c, 1); _exit(0); }
__attribute__((noinline)) void thrower(int n) { if (n > 0) throw std::runtime_error("in flight"); sink++; }
__attribute__((noinline)) void no_escape() noexcept { thrower(1); }
int main() {
    pthread_t t[4];
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, 0);
    if (pipe(quit)) return 1;
    sem_init(&never, 0, 0);
    std::set_terminate(on_terminate);
    pthread_barrier_init(&ready, 0, 5);
    void *(*run[])(void *) = {waiting, polling, signalled, deep};
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, run[i], 0);
    pthread_barrier_wait(&ready);
    no_escape();
}
