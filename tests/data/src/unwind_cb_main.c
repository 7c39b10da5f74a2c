/* A callback through a shared library: main -> lib_apply (in libunwind_cb.so) -> callback -> stop_here. */
volatile int sink;
int lib_apply(int (*fn)(int), int x);
__attribute__((noinline)) void stop_here(void) { sink++; }
__attribute__((noinline)) int callback(int x) { stop_here(); return x + sink; }
int main(int argc, char **argv) { (void)argv; return lib_apply(callback, argc) == 12345; }
