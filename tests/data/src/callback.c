/* A call chain that passes through a shared library: main -> through_lib (libcallback.so) -> on_callback -> stop_here. */
volatile int sink;
void through_lib(void (*f)(int), int x);
__attribute__((noinline)) void stop_here(void) { sink++; }
__attribute__((noinline)) void on_callback(int x) { volatile char pad[32]; pad[x & 31] = (char)x; stop_here(); sink += pad[x & 31]; }
int main(int argc, char **argv) { (void)argv; through_lib(on_callback, argc); return sink & 1; }
