/* A program for the perf profile tests (tests/oracles/test_perf.py): a few call levels doing real work
   (a sort through qsort, a loop of its own, a recursion), built with gcc -Wa,--gsframe -O2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long mix(unsigned long x) { x ^= x >> 13; x *= 0x9e3779b97f4a7c15UL; return x ^ (x >> 29); }

__attribute__((noinline)) unsigned long leaf(unsigned long *a, int n) {
    unsigned long s = 0;
    for (int i = 0; i < n; i++) s += mix(a[i] + s);
    return s;
}

static int cmp(const void *x, const void *y) {
    unsigned long a = *(const unsigned long *)x, b = *(const unsigned long *)y;
    return a < b ? -1 : a > b;
}

__attribute__((noinline)) unsigned long middle(unsigned long *a, int n, int depth) {
    if (depth > 0) return middle(a, n, depth - 1) + 1;
    qsort(a, n, sizeof *a, cmp);
    return leaf(a, n);
}

__attribute__((noinline)) unsigned long outer(int rounds) {
    int n = 20000;
    unsigned long *a = malloc(n * sizeof *a), t = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) a[i] = mix(i + r);
        t += middle(a, n, r % 4);
        char buf[64];
        snprintf(buf, sizeof buf, "%lu", t);
        t += strlen(buf);
    }
    free(a);
    return t;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 120;
    printf("%lu\n", outer(rounds));
    return 0;
}
