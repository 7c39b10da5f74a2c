/* Functions without CFI, as hand-written assembly without `.cfi_` directives has none (and glibc's
   clone3 after its `cfi_endproc`): neither .eh_frame nor .sframe covers them, and gdb unwinds them
   by analysing their prologue. `frameless` pushes nothing (its return address stays at SP),
   `pushed` saves rbp without making it the frame pointer, `framed` keeps the frame-pointer chain. */
volatile int sink;

__attribute__((noinline)) void stop_here(void) { sink++; }

void frameless(void);
void pushed(void);
void framed(void);

__asm__(".text\n"
        ".globl frameless\n.type frameless, @function\nframeless:\n"
        "  call stop_here\n  ret\n.size frameless, .-frameless\n"
        ".globl pushed\n.type pushed, @function\npushed:\n"
        "  push %rbp\n  call stop_here\n  pop %rbp\n  ret\n.size pushed, .-pushed\n"
        ".globl framed\n.type framed, @function\nframed:\n"
        "  push %rbp\n  mov %rsp, %rbp\n  call stop_here\n  pop %rbp\n  ret\n.size framed, .-framed\n");

int main(void) {
    frameless();
    pushed();
    framed();
    return sink & 1;
}
