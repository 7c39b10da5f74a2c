/* Three threads for the unwinder: one stopped in stop_here, one parked in pause(), main in pthread_join. */
#include <pthread.h>
#include <unistd.h>
volatile int sink;
static pthread_barrier_t ready;
__attribute__((noinline)) void stop_here(void) { sink++; }
__attribute__((noinline)) void park(void) { pthread_barrier_wait(&ready); for (;;) pause(); }
__attribute__((noinline)) void *worker_b(void *arg) { (void)arg; park(); return 0; }
__attribute__((noinline)) void *worker_a(void *arg) { (void)arg; pthread_barrier_wait(&ready); stop_here(); return 0; }
int main(void) {
    pthread_t a, b;
    pthread_barrier_init(&ready, 0, 3);
    pthread_create(&b, 0, worker_b, 0);
    pthread_create(&a, 0, worker_a, 0);
    pthread_barrier_wait(&ready);
    pthread_join(a, 0);
    return sink;
}
