/* Frame shapes s390x compilers make: leaf functions that keep call-saved registers
   (r11, r14, r15) in floating-point registers instead of on the stack, a variable-length
   array that needs the frame pointer (r11), a frame over 2 KB, and a deep call chain
   that ends in abort() (SIGABRT: qemu-user writes a core); with the argument `leaf`, a NULL
   store in busy_leaf instead, while it keeps its caller's r11 in a floating-point register. */
#include <stdlib.h>
#include <string.h>

volatile long sink;
volatile int crash_in_leaf;  /* set when the program's argument is "leaf" */

/* Many live values in a leaf: gcc keeps r6..r15 in FPRs (f0..f7) on z10 and later. */
__attribute__((noinline)) long busy_leaf(long a, long b, long c, long d, long e) {
    long x = a * b, y = b * c, z = c * d, w = d * e, v = e * a;
    long p = x ^ y, q = y ^ z, r = z ^ w, s = w ^ v, t = v ^ x;
    for (int i = 0; i < (int)(a & 7); i++) { p += q * r; q ^= s + t; r -= p; s += q; t ^= r; }
    if (crash_in_leaf)  /* a NULL store, while r11 is kept in a floating-point register */
        *(volatile long *)(long)(crash_in_leaf - 1) = p;
    return p + q + r + s + t + x + y + z + w + v;
}

__attribute__((noinline)) long tiny_leaf(long x) { return x * 7 + 3; }

__attribute__((noinline)) long with_vla(long n) {
    char buf[16 + (n & 0xff)];             /* alloca-like: the CFA moves to r11 */
    memset(buf, (int)n, sizeof buf);
    return buf[n & 7] + busy_leaf(n, n + 1, n + 2, n + 3, n + 4);
}

__attribute__((noinline)) long big_frame(long x) {
    volatile char buf[3000];               /* more than 2 KB */
    buf[x % 3000] = (char)x;
    return buf[x % 3000] + with_vla(x);
}

__attribute__((noinline)) void stop_here(long x) {
    sink += x;
    if (sink >= 0)
        abort();
}

__attribute__((noinline)) long chain(int n, long x) {
    if (n == 0) {
        long v = big_frame(x) + tiny_leaf(x);
        stop_here(v);
        return v;
    }
    return chain(n - 1, x + 1) + 1;
}

int main(int argc, char **argv) {
    crash_in_leaf = argc > 1 && strcmp(argv[1], "leaf") == 0;
    return (int)chain(3, argc);
}
