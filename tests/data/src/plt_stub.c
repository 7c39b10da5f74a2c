/* A fault inside a PLT stub: the GOT page made unreadable, the next call through the PLT faults at
   the stub's load of its GOT entry, with the return address still in LR (AArch64). */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

extern char _GLOBAL_OFFSET_TABLE_[];

__attribute__((noinline)) int call_puts(const char *s) { return puts(s) + 1; }
__attribute__((noinline)) int outer(const char *s) { return call_puts(s) * 2; }

int main(void) {
    puts("start");
    uintptr_t page = (uintptr_t)_GLOBAL_OFFSET_TABLE_ & ~(uintptr_t)4095;
    mprotect((void *)page, 4096, PROT_NONE);
    return outer("never") + 1;
}
