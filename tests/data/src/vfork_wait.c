/* A thread in an uninterruptible wait: a vfork parent waits in state D until its child execs or exits.
   `vfork_wait N`: N more threads blocked in pause() beside the one that vforks (the leader, when N is 0).
   The child pauses until it is killed; the parent then says "resumed" and the program exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *waits(void *unused) {
    (void)unused;
    for (;;)
        pause();
}

static void *forks(void *unused) {
    (void)unused;
    if (vfork() == 0)
        for (;;)
            pause();
    printf("resumed\n");
    fflush(stdout);
    exit(0);
}

int main(int argc, char **argv) {
    int others = argc > 1 ? atoi(argv[1]) : 0;
    printf("ready\n");
    fflush(stdout);
    if (others == 0)
        forks(NULL);
    pthread_t thread;
    for (int i = 0; i < others - 1; i++)
        pthread_create(&thread, NULL, waits, NULL);
    pthread_create(&thread, NULL, forks, NULL);
    waits(NULL);
}
