/* Runs one libsframe release's decoder and lookups on sections the test sends, for test_libsframe.py.

   Usage: libsframe_harness LIBSFRAME.so NEW_API FRE_INFO_AT [FOLLOWED]
     NEW_API: 1 when the getters take the FDE type (binutils 2.47 on) and
     sframe_find_fre takes a 64-bit PC; FRE_INFO_AT: where fre_info sits in
     sframe_frame_row_entry (16 up to 2.46, 28 from then on); FOLLOWED: how
     many readable zero bytes follow the section before the guard (0, the
     default: none; more: a section inside a loaded file, which other bytes
     follow).

   Requests on stdin, each: u32 section size, the section, u32 number of PCs,
   then per PC an i64 PC and a u32 FDE type, then u32 number of spans, then
   per span an i64 first PC, an i64 end PC (excluded) and a u32 FDE type.
   Answers on stdout, one line a step, written before the next step starts so
   that the test knows where a crash happened:
     D <error>                      sframe_decode (0: accepted)
     F <error> <start> <info> <cfa> <cfa error> <fp> <fp error> <ra> <ra error>
                                    sframe_find_fre and the getters, per PC
     B <pc> <error> <start> ... <ra error>, or B <pc> crash
                                    a span's first PC and its answer
     S <pc> ...                     the same, at each later PC of the span
                                    whose answer differs from the PC before
     E                              the decoder freed

   A PC of a span whose lookup crashes (SIGSEGV, SIGBUS, SIGFPE, or SIGABRT
   from an assert) is answered `crash` and the next PC is looked up: the
   handler jumps back out of the library, which keeps no state across
   lookups. A PC of the list ends the run instead (the test restarts the
   harness).

   Every allocation ends exactly where 16 GiB the program may not read start, and is
   unmapped when freed: a read past any buffer (the caller's section or
   libsframe's own copies) stops the program with SIGSEGV at once, instead of
   reading whatever follows it on the heap.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define GUARD ((size_t) 1 << 34)
/* 16 GiB of unreadable addresses after each block: libsframe adds unchecked 32-bit offsets (two at
   most) to its buffers, and each such read must fault, not land in another mapping.  */

/* The guarded allocator: [bookkeeping ... block][16 GiB unreadable].  */

struct block
{
  void *base;
  size_t length;
  size_t size;
  size_t pad;
};

static void *
guarded (size_t size, size_t align)
{
  size_t need, length;
  char *base, *end, *start;
  if (align > 1)
    size = (size + align - 1) / align * align;
  if (size > ((size_t) 1 << 46))
    {
      errno = ENOMEM;
      return NULL;
    }
  need = size + sizeof (struct block) + align;
  length = (need + PAGE - 1) / PAGE * PAGE;
  base = mmap (NULL, length + GUARD, PROT_NONE,
	       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED || mprotect (base, length, PROT_READ | PROT_WRITE))
    {
      errno = ENOMEM;
      return NULL;
    }
  end = base + length;
  length += GUARD;
  start = end - size;
  struct block *b = (struct block *) start - 1;
  b->base = base;
  b->length = length;
  b->size = size;
  return start;
}

void *
malloc (size_t size)
{
  return guarded (size, 1);
}

void
free (void *p)
{
  if (p == NULL)
    return;
  struct block *b = (struct block *) p - 1;
  munmap (b->base, b->length);
}

void *
calloc (size_t n, size_t size)
{
  if (size && n > SIZE_MAX / size)
    {
      errno = ENOMEM;
      return NULL;
    }
  return guarded (n * size, 1);	/* fresh mappings are zeroed */
}

void *
realloc (void *p, size_t size)
{
  void *q = malloc (size);
  if (q == NULL || p == NULL)
    return q;
  size_t old = ((struct block *) p - 1)->size;
  memcpy (q, p, old < size ? old : size);
  free (p);
  return q;
}

int
posix_memalign (void **out, size_t align, size_t size)
{
  void *p = guarded (size, align);
  if (p == NULL)
    return ENOMEM;
  *out = p;
  return 0;
}

void *
aligned_alloc (size_t align, size_t size)
{
  return guarded (size, align);
}

void *
memalign (size_t align, size_t size)
{
  return guarded (size, align);
}

void *
valloc (size_t size)
{
  return guarded (size, PAGE);
}

void *
pvalloc (size_t size)
{
  return guarded (size, PAGE);
}

size_t
malloc_usable_size (void *p)
{
  return p ? ((struct block *) p - 1)->size : 0;
}

/* The library.  */

typedef void *(*decode_fn) (const char *, size_t, int *);
typedef void (*free_fn) (void **);
typedef int (*find_fn) (void *, int64_t, void *);
typedef int32_t (*get3_fn) (void *, void *, int *);
typedef int32_t (*get4_fn) (void *, void *, uint32_t, int *);

#include "harness_io.h"

/* One lookup and the getters, as the line's words after the PC.  */
static void
answer (void *dctx, int new_api, size_t info_at, find_fn find, void **getters,
	int64_t pc, uint32_t fde_type, char *out, size_t size)
{
  unsigned char fre[64];
  memset (fre, 0, sizeof fre);
  int found = find (dctx, new_api ? pc : (int64_t) (int32_t) pc, fre);
  int32_t value[3] = { 0, 0, 0 };
  int errs[3] = { 0, 0, 0 };
  if (found == 0)
    for (int g = 0; g < 3; g++)
      value[g] = new_api
	? ((get4_fn) getters[g]) (dctx, fre, fde_type, &errs[g])
	: ((get3_fn) getters[g]) (dctx, fre, &errs[g]);
  uint32_t start;
  memcpy (&start, fre, sizeof start);
  snprintf (out, size, "%d %u %u %d %d %d %d %d %d", found, start,
	    fre[info_at], value[0], errs[0], value[1], errs[1], value[2],
	    errs[2]);
}

int
main (int argc, char **argv)
{
  if (argc != 4 && argc != 5)
    {
      say ("usage: libsframe_harness LIB NEW_API FRE_INFO_AT [FOLLOWED]\n");
      return 2;
    }
  void *lib = dlopen (argv[1], RTLD_NOW);
  if (lib == NULL)
    {
      say ("cannot load the library\n");
      return 2;
    }
  int new_api = atoi (argv[2]);
  size_t info_at = (size_t) atoi (argv[3]);
  size_t followed = argc == 5 ? (size_t) atoi (argv[4]) : 0;
  decode_fn decode = (decode_fn) dlsym (lib, "sframe_decode");
  free_fn release = (free_fn) dlsym (lib, "sframe_decoder_free");
  find_fn find = (find_fn) dlsym (lib, "sframe_find_fre");
  void *getters[3] = { dlsym (lib, "sframe_fre_get_cfa_offset"),
		       dlsym (lib, "sframe_fre_get_fp_offset"),
		       dlsym (lib, "sframe_fre_get_ra_offset") };
  char line[256];
  uint32_t size;
  while (take (&size, sizeof size))
    {
      char *section = malloc (size + followed);	/* zeros, then a guard page */
      uint32_t count;
      if ((size && !take (section, size)) || !take (&count, sizeof count))
	return 3;
      int err = 0;
      void *dctx = decode (section, size, &err);
      snprintf (line, sizeof line, "D %d\n", dctx ? 0 : (err ? err : -1));
      say (line);
      for (uint32_t i = 0; i < count; i++)
	{
	  int64_t pc;
	  uint32_t fde_type;
	  if (!take (&pc, sizeof pc) || !take (&fde_type, sizeof fde_type))
	    return 3;
	  if (dctx == NULL)
	    continue;
	  char words[200];
	  answer (dctx, new_api, info_at, find, getters, pc, fde_type, words,
		  sizeof words);
	  snprintf (line, sizeof line, "F %s\n", words);
	  say (line);
	}
      uint32_t spans;
      if (!take (&spans, sizeof spans))
	return 3;
      for (uint32_t i = 0; i < spans; i++)
	{
	  int64_t low, high;
	  uint32_t fde_type;
	  if (!take (&low, sizeof low) || !take (&high, sizeof high)
	      || !take (&fde_type, sizeof fde_type))
	    return 3;
	  if (dctx == NULL)
	    continue;
	  char last[200] = "";
	  on_crash (crashed);
	  for (int64_t pc = low; pc < high; pc++)
	    {
	      char words[200];
	      if (sigsetjmp (back, 1) == 0)
		answer (dctx, new_api, info_at, find, getters, pc, fde_type,
			words, sizeof words);
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
	  on_crash (SIG_DFL);
	}
      if (dctx)
	release (&dctx);
      free (section);
      say ("E\n");
    }
  return 0;
}
