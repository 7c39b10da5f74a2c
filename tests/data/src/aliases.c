/* Symbols sharing an address for tests/oracles/test_inline.py, built without -g so that gdb names the frames
   from its minimal symbols: `work_impl` (local) with its global alias `work`, which sorts before it;
   `step_c` (local), `step_b` (local) and the global `step_a`; `last_weak`, a weak alias sorting after the
   local `held`. */
volatile int sink;

__attribute__((noinline)) void stop_here(int n) { sink = n; }

static __attribute__((noinline, used)) int work_impl(int n) { stop_here(n); return n + 1; }
extern int work(int) __attribute__((alias("work_impl")));

static __attribute__((noinline, used)) int step_c(int n) { return work(n) * 2; }
static int step_b(int) __attribute__((alias("step_c"), used));
extern int step_a(int) __attribute__((alias("step_c")));

static __attribute__((noinline, used)) int held(int n) { return step_a(n) + 3; }
extern int last_weak(int) __attribute__((weak, alias("held")));

int main(int argc, char **argv)
{
    (void)argv;
    return last_weak(argc) == 0;
}
