/* A thread made while gdb holds the process, for tests/oracles/test_live.py and test_threads.py: main waits
   for a line on stdin, then makes a thread; gdb stops the new thread at clone3's first instruction after the
   syscall, where its new stack holds nothing yet and no CFI covers the code. */
#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg) { return arg; }

int main(void)
{
    char line[8];
    puts("ready");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        return 1;
    pthread_t thread;
    if (pthread_create(&thread, 0, worker, 0) != 0)
        return 1;
    pthread_join(thread, 0);
    return 0;
}
