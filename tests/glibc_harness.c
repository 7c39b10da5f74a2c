/* Runs glibc's own SFrame reader and backtrace() step on sections the test sends, for test_glibc.py.

   Built by the test from a glibc source tree (Debian's glibc-source):
     gcc -I tests/glibc_shim -I GLIBC/sysdeps/generic tests/glibc_harness.c
   It compiles glibc's sysdeps/generic/sframe-read.c (the decoder, the lookup, the getters) and
   sframe.c (__stacktrace_sframe, the step backtrace() takes per frame) as they are; the shims give
   them _dl_find_object (answering with the section) and the generic uw-sigframe.h (no signal-frame
   or outermost-frame check: those read the code at the PC, not the section).

   Requests on stdin, each: u32 section size, the section, u32 number of spans, then per span an i64
   first PC and an i64 end PC (excluded), section-relative.  Answers on stdout:
     D <rc>                         __sframe_decode (0: taken; 5: _URC_END_OF_STACK, refused)
     B <pc> <answer>                a span's first PC and its answer
     S <pc> <answer>                each later PC of the span whose answer differs from the PC before
     E                              the section done
   where <answer> is `crash`, or
     <walk> <cfa> <fp kept> <find> [<start> <info> <cfa offset> <err> [<ra offset> <err> [<fp offset> <err>]]]
   <walk>: what __stacktrace_sframe returned for one frame (0: fall back to DWARF, 1: a frame);
   <cfa>: the frame's new SP less the SP given; <fp kept>: whether the new FP is the one given;
   <find>: __sframe_find_fre's answer, then the row and the getters in the order the step calls them,
   up to the first that fails.

   The section ends where 16 GiB the program may not read start (and 8 GiB before it): glibc's
   reader has no bound but the section's own counts, and a read past the section is a SIGSEGV here
   (`crash`), caught, and the next PC looked up.  The stack the step reads is 12 GiB of zeros.  */

#define _GNU_SOURCE
#include <setjmp.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define libc_hidden_proto(name)
#define libc_hidden_def(name)

#include "sframe-read.c"
#include "sframe.c"

#define GIB ((size_t) 1 << 30)
#define BEFORE (8 * GIB)
#define AFTER (16 * GIB)
#define STACK (12 * GIB)

static const char *section;

int
harness_dl_find_object (void *address, struct dl_find_object *result)
{
  (void) address;
  memset (result, 0, sizeof *result);
  result->dlfo_flags = DLFO_FLAG_SFRAME;
  result->dlfo_sframe = (void *) section;
  return 0;
}

#include "harness_io.h"

static _Unwind_Ptr sp0, fp0;

/* One PC: the backtrace step, then the lookup and the getters as the step calls them.  */
static void
answer (int64_t pc, char *out, size_t size)
{
  void *ra = NULL;
  frame f = { (_Unwind_Ptr) section + (_Unwind_Ptr) pc, sp0, fp0 };
  int walked = __stacktrace_sframe (&ra, 1, &f);
  int n = snprintf (out, size, "%d %lld %d", walked,
		    walked ? (long long) (f.sp - sp0) : 0LL,
		    walked ? f.fp == fp0 : 0);
  sframe_decoder_ctx ctx;
  sframe_frame_row_entry fre;
  memset (&ctx, 0, sizeof ctx);
  memset (&fre, 0, sizeof fre);
  __sframe_decode (&ctx, section);
  int found = __sframe_find_fre (&ctx, (int32_t) pc, &fre);
  n += snprintf (out + n, size - n, " %d", found);
  if (found != _URC_NO_REASON)
    return;
  _Unwind_Reason_Code err;
  int32_t cfa = __sframe_fre_get_cfa_offset (&ctx, &fre, &err);
  n += snprintf (out + n, size - n, " %u %u %d %d", fre.fre_start_addr,
		 fre.fre_info, cfa, err);
  if (err != _URC_NO_REASON)
    return;
  int32_t rao = __sframe_fre_get_ra_offset (&ctx, &fre, &err);
  n += snprintf (out + n, size - n, " %d %d", rao, err);
  if (err != _URC_NO_REASON)
    return;
  int32_t fpo = __sframe_fre_get_fp_offset (&ctx, &fre, &err);
  snprintf (out + n, size - n, " %d %d", fpo, err);
}

int
main (void)
{
  on_crash (crashed);
  char *stack = mmap (NULL, STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED)
    return 2;
  sp0 = (_Unwind_Ptr) stack + STACK / 2;
  fp0 = sp0 + 0x10000;
  char line[512];
  uint32_t size;
  while (take (&size, sizeof size))
    {
      size_t pages = ((size_t) size + 4095) / 4096 * 4096;
      char *base = mmap (NULL, BEFORE + pages + AFTER, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED
	  || (pages && mprotect (base + BEFORE, pages, PROT_READ | PROT_WRITE)))
	return 2;
      char *copy = base + BEFORE + pages - size;
      uint32_t spans;
      if ((size && !take (copy, size)) || !take (&spans, sizeof spans))
	return 3;
      section = copy;
      int rc;
      sframe_decoder_ctx ctx;
      memset (&ctx, 0, sizeof ctx);
      if (sigsetjmp (back, 1) == 0)
	{
	  rc = __sframe_decode (&ctx, copy);
	  snprintf (line, sizeof line, "D %d\n", rc);
	}
      else
	{
	  rc = -1;
	  strcpy (line, "D crash\n");
	}
      say (line);
      for (uint32_t i = 0; i < spans; i++)
	{
	  int64_t low, high;
	  if (!take (&low, sizeof low) || !take (&high, sizeof high))
	    return 3;
	  if (rc != 0)
	    continue;
	  char last[400] = "";
	  for (int64_t pc = low; pc < high; pc++)
	    {
	      char words[400];
	      if (sigsetjmp (back, 1) == 0)
		answer (pc, words, sizeof words);
	      else
		strcpy (words, "crash");
	      if (pc == low || strcmp (words, last) != 0)
		{
		  snprintf (line, sizeof line, "%c %lld %s\n",
			    pc == low ? 'B' : 'S', (long long) pc, words);
		  say (line);
		  strcpy (last, words);
		}
	    }
	}
      munmap (base, BEFORE + pages + AFTER);
      say ("E\n");
    }
  return 0;
}
