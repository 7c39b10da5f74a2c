/* A process that never stops calling exec: two threads each wait 2 ms, then exec the program again (the
   first to get there replaces the process: every other thread ends, it takes the leader's id). */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static char **args;

static void *again(void *unused) {
    (void)unused;
    struct timespec moment = {0, 2000000};
    nanosleep(&moment, NULL);
    execv("/proc/self/exe", args);
    return NULL;
}

int main(int argc, char **argv) {
    (void)argc;
    args = argv;
    pthread_t thread;
    pthread_create(&thread, NULL, again, NULL);
    pthread_create(&thread, NULL, again, NULL);
    for (;;)
        pause();
}
