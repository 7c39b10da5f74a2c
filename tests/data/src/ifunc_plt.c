/* Calls into libc functions that reach an IFUNC (memset, strlen, memcpy) through libc's own PLT, whose slots
   have IRELATIVE relocations and no symbol: objdump and gdb name them `*ABS*+0x…@plt`, perf 6.1 `@plt`
   (tests/oracles/test_ifunc_plt.py). Built with -fno-builtin so that the calls stay calls; the loop does little
   else, so that a profile has samples in the PLT's jump. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) unsigned long work(long rounds, const char *name) {
    char b[8] = "abcdefg";
    unsigned long t = 0;
    for (long i = 0; i < rounds; i++) {
        explicit_bzero(b, 0); /* calls memset through libc's PLT */
        if ((i & 1023) == 0) { /* strdup calls strlen and memcpy so */
            char *p = strdup(name);
            t += p[0];
            free(p);
        }
    }
    return t;
}

int main(int argc, char **argv) { return work(argc > 1 ? atol(argv[1]) : 1000, argv[0]) == 1; }
