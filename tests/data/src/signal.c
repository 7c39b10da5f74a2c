/* A signal handler on the stack: main -> middle -> fault, whose NULL store raises SIGSEGV;
   the handler calls stop_here. Under gdb (SIGSEGV passed on) a core is written at stop_here;
   built with -DCRASH_AT_STOP (for qemu-user) stop_here faults again and the process dumps core. */
#include <signal.h>
#include <string.h>
#include <unistd.h>
volatile int sink;
volatile int *volatile null_pointer;
#ifdef CRASH_AT_STOP
__attribute__((noinline)) void stop_here(void){ sink++; *(volatile int *)(long)(sink - sink) = 1; }
#else
__attribute__((noinline)) void stop_here(void){ sink++; }
#endif
__attribute__((noinline)) void handler(int sig){ sink += sig; stop_here(); _exit(0); }
#ifdef SIGINFO
/* With -DSIGINFO the handler takes SA_SIGINFO: the kernel writes an rt_sigframe (on s390x another
   layout and another trampoline than a plain handler's sigframe). */
__attribute__((noinline)) void handler_info(int sig, siginfo_t *info, void *context){
    sink += info != 0 && context != 0; handler(sig);
}
#endif
__attribute__((noinline)) int fault(int x){ *null_pointer = x; return sink + x; }
__attribute__((noinline)) int middle(int x){ return fault(x + 1) * 2; }
int main(int argc, char **argv){
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
#ifdef SIGINFO
    sa.sa_sigaction = handler_info;
    sa.sa_flags = SA_SIGINFO;
#else
    sa.sa_handler = handler;
#endif
    sigaction(SIGSEGV, &sa, 0);
    return middle(argc);
}
