/* Inlined calls for tests/oracles/test_inline.py: `step` and `inner` are inlined into `outer` (a static
   inline called in a loop), `stop_here` is where gdb stops; `grab` calls libc's malloc, whose frames gdb
   names from libc6-dbg with their own inlined calls (`checked_request2size`). */
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) void stop_here(int n) { sink = n; }

static inline int step(int i)
{
    if (i == 7)
        stop_here(i);
    return i * 3;
}

static inline int inner(int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        total += step(i);
    return total;
}

__attribute__((noinline)) int outer(int n)
{
    return inner(n) + 1;
}

__attribute__((noinline)) void *grab(size_t n)
{
    void *p = malloc(n);
    sink = p != 0;
    return p;
}

int main(int argc, char **argv)
{
    (void)argv;
    int r = outer(10 + argc);
    free(grab(5760 + argc));
    return r == 0;
}
