// A process to hold to gdb -p: threads blocked in other calls than read, each through frames gdb names in
// its own ways (tests/oracles/test_live_names.py). One waits on a semaphore (glibc's sem_wait reaches the
// futex by tail calls), one polls (frame 0 after the syscall, in a line with discriminators), one is in a
// signal handler (pthread_kill's frame interrupted), one is DEPTH calls deep, three are under tail calls of
// the program's own (one way, several ways, several ways ending in one: gdb puts back those it can), and main is in
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
__attribute__((noinline)) void leaf_wait() { block(); sink++; }
__attribute__((noinline)) void via_d() { sink += 4; leaf_wait(); }
__attribute__((noinline)) void via_b() { sink += 1; leaf_wait(); }
__attribute__((noinline)) void via_c() { sink += 2; leaf_wait(); }
__attribute__((noinline)) void via_bd() { sink += 5; via_d(); }
__attribute__((noinline)) void via_cd() { sink += 6; via_d(); }
__attribute__((noinline)) void one_way() { sink += 3; via_b(); }
__attribute__((noinline)) void two_ways() { if (sink & 1) via_b(); else via_c(); }
__attribute__((noinline)) void two_ways_to_d() { if (sink & 1) via_bd(); else via_cd(); }
__attribute__((noinline)) void *tail_one(void *) { pthread_barrier_wait(&ready); one_way(); sink++; return 0; }
__attribute__((noinline)) void *tail_two(void *) { pthread_barrier_wait(&ready); two_ways(); sink++; return 0; }
__attribute__((noinline)) void *tail_to_d(void *) { pthread_barrier_wait(&ready); two_ways_to_d(); sink++; return 0; }
__attribute__((noinline)) void on_terminate() { puts("ready"); fflush(stdout); char c; sink += read(0, &c, 1); _exit(0); }
__attribute__((noinline)) void thrower(int n) { if (n > 0) throw std::runtime_error("in flight"); sink++; }
__attribute__((noinline)) void no_escape() noexcept { thrower(1); }
int main() {
    pthread_t t[7];
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, 0);
    if (pipe(quit)) return 1;
    sem_init(&never, 0, 0);
    std::set_terminate(on_terminate);
    pthread_barrier_init(&ready, 0, 8);
    void *(*run[])(void *) = {waiting, polling, signalled, deep, tail_one, tail_two, tail_to_d};
    for (int i = 0; i < 7; i++) pthread_create(&t[i], 0, run[i], 0);
    pthread_barrier_wait(&ready);
    no_escape();
}
