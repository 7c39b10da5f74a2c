/* What the tests' harnesses around a consumer's own code share (libsframe_harness.c,
   glibc_harness.c): requests read whole from stdin, answers written whole to stdout, and a
   crash inside the consumer's code (SIGSEGV, SIGBUS, SIGFPE, or SIGABRT from an assert)
   jumping back to the harness on an alternate stack.  Included once by each harness, after
   the system headers it needs (setjmp.h, signal.h, string.h, unistd.h).  */

/* Write all of TEXT to stdout; a failed write ends the harness (status 3).  */
static void
say (const char *text)
{
  size_t n = strlen (text);
  while (n)
    {
      ssize_t w = write (1, text, n);
      if (w <= 0)
	_exit (3);
      text += w;
      n -= (size_t) w;
    }
}

/* Read N bytes from stdin into INTO: 1, or 0 at the end of the input.  */
static int
take (void *into, size_t n)
{
  char *p = into;
  while (n)
    {
      ssize_t r = read (0, p, n);
      if (r <= 0)
	return 0;
      p += r;
      n -= (size_t) r;
    }
  return 1;
}

/* A crash jumps back here (sigsetjmp (back, 1) before calling the consumer).  */
static sigjmp_buf back;

static void
crashed (int sig)
{
  siglongjmp (back, sig);
}

/* HANDLER (crashed, or SIG_DFL) for every crash signal, on an alternate stack: a consumer
   that overran its own stack still reaches the handler.  */
static void
on_crash (void (*handler) (int))
{
  static char altstack[1 << 16];
  static int ready;
  if (!ready)
    {
      stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack };
      sigaltstack (&ss, NULL);
      ready = 1;
    }
  static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGABRT };
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_ONSTACK | SA_NODEFER;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction (sigs[i], &sa, NULL);
}
