/* Stack-realigning functions: gcc's DRAP (CFA from r10, then *(rbp-8)) on x86-64. */
#include <string.h>
int consume(char *p, int n);

__attribute__((noinline, force_align_arg_pointer)) int realigned(int n) {
    char big[n] __attribute__((aligned(64)));
    memset(big, n, n);
    return consume(big, n);
}

__attribute__((noinline)) int overaligned(int n) {
    _Alignas(64) char buf[128];
    char vla[n];
    memset(buf, 1, sizeof buf);
    memset(vla, 2, n);
    return consume(buf, 128) + consume(vla, n);
}

__attribute__((noinline)) int consume(char *p, int n) { return p[0] + p[n - 1]; }

int main(int argc, char **argv) { (void)argv; return realigned(argc + 16) + overaligned(argc + 8) == 12345; }
