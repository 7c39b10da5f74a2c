/*
 * A user-space harness around the Linux kernel's SFrame reader (kernel/unwind/sframe.c).
 *
 * This file is sfview's own; the kernel's code is not in the repository. Build it with the
 * kernel's functions given as KERNEL_SFRAME_CORE (see scripts/kernel_corpus.py, which says
 * where they come from):
 *
 *     cc -O1 -DKERNEL_SFRAME_CORE='"/tmp/kernel-sframe/sframe-core.c"' harness.c -o harness
 *
 * It plays the parts of the kernel the reader leans on: user memory is the section's bytes
 * mapped at its load address, followed by zeros, and sframe_add_section()/sframe_find_user() are re-enacted in their order:
 * sframe_read_header(), then sframe_validate_section() (CONFIG_SFRAME_VALIDATION=y); then a
 * lookup, __sframe_find(), at every PC of every function. A division by zero in a lookup (the
 * kernel's oops) is caught as SIGFPE and reported as a crash.
 *
 * With -DSFRAME_ARM64_MODULE (and KERNEL_LIB_SORT, the kernel's lib/sort.c sort(); see
 * scripts/kernel_arm64_module_corpus.py) it follows the arm64 series' module path instead: the section
 * is kernel memory, mapped at its load address, sframe_module_init() registers it, sframe_find_kernel()
 * looks PCs up.
 *
 * Input, one section a line:  HEX LOAD TEXT_START TEXT_END SCAN_LIMIT  (numbers in hex)
 * Output, one JSON object a line:
 *   {"register": 0|-errno, "lookups": [[start, end, -errno|"crash"|"cfa=.. ra=.. fp=.."], ...], ...}
 * where lookups are the PC ranges (merged by result) over each function's first
 * SCAN_LIMIT bytes, and past_reads counts reads past the section's end (only the header's
 * copy_from_user of a section shorter than a header reads there).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define __user
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __packed __attribute__((packed))
#define BIT(n) (1UL << (n))

/* The configuration the profile follows: user sections (kernel ones with SFRAME_ARM64_MODULE), validation on. */
#ifdef SFRAME_ARM64_MODULE
#define CONFIG_HAVE_UNWIND_KERNEL_SFRAME 1
#else
#define CONFIG_HAVE_UNWIND_USER_SFRAME 1
#endif
#define CONFIG_SFRAME_VALIDATION 1
#define DEFINE_STATIC_SRCU(name) static int name __attribute__((unused))

/* The format, as the kernel's kernel/unwind/sframe.h declares it (written here from the format). */
#define SFRAME_VERSION_3 3
#define SFRAME_MAGIC 0xdee2
#define SFRAME_F_FDE_SORTED 0x1
#define SFRAME_F_FDE_FUNC_START_PCREL 0x4

struct sframe_preamble {
	u16 magic;
	u8 version;
	u8 flags;
} __packed;

struct sframe_header {
	struct sframe_preamble preamble;
	u8 abi_arch;
	s8 cfa_fixed_fp_offset;
	s8 cfa_fixed_ra_offset;
	u8 auxhdr_len;
	u32 num_fdes;
	u32 num_fres;
	u32 fre_len;
	u32 fdes_off;
	u32 fres_off;
} __packed;

#define SFRAME_HEADER_SIZE(header) ((sizeof(struct sframe_header) + (header).auxhdr_len))

struct sframe_fde_v3 {
	s64 func_start_off;
	u32 func_size;
	u32 fres_off;
} __packed;

struct sframe_fda_v3 {
	u16 fres_num;
	u8 info;
	u8 info2;
	u8 rep_size;
} __packed;

#define SFRAME_FDE_PCTYPE_INC 0
#define SFRAME_FDE_PCTYPE_MASK 1
#define SFRAME_V3_FDE_FRE_TYPE(info) ((info) & 0xf)
#define SFRAME_V3_FDE_PCTYPE(info) (((info) >> 4) & 0x1)
#define SFRAME_FDE_TYPE_DEFAULT 0
#define SFRAME_FDE_TYPE_FLEX 1
#define SFRAME_V3_FDE_TYPE(info2) ((info2) & 0x0f)
#define SFRAME_BASE_REG_FP 0
#define SFRAME_BASE_REG_SP 1
#define SFRAME_V3_FRE_CFA_BASE_REG_ID(info) ((info) & 0x1)
#define SFRAME_V3_FRE_DATAWORD_COUNT(info) (((info) >> 1) & 0xf)
#define SFRAME_V3_FRE_DATAWORD_SIZE(info) (((info) >> 5) & 0x3)
#define SFRAME_V3_FRE_RA_UNDEFINED_P(info) (SFRAME_V3_FRE_DATAWORD_COUNT(info) == 0)
#define SFRAME_V3_FLEX_FDE_CTRLWORD_REGNUM(data) ((data) >> 3)
#define SFRAME_V3_FLEX_FDE_CTRLWORD_DEREF_P(data) (((data) >> 1) & 0x1)
#define SFRAME_V3_FLEX_FDE_CTRLWORD_REG_P(data) ((data) & 0x1)

/* asm/unwind_sframe.h: the machine's DWARF numbers of its stack and frame pointers (x86-64's unless given). */
#ifndef SFRAME_REG_SP
#define SFRAME_REG_SP 7
#define SFRAME_REG_FP 6
#endif

/* include/linux/sframe.h and unwind_types.h. */
#define UNWIND_RULE_DEREF BIT(31)
enum unwind_cfa_rule { UNWIND_CFA_RULE_SP_OFFSET, UNWIND_CFA_RULE_FP_OFFSET, UNWIND_CFA_RULE_REG_OFFSET };
struct unwind_cfa_rule_data {
	enum unwind_cfa_rule rule;
	s32 offset;
	unsigned int regnum;
};
enum unwind_rule { UNWIND_RULE_RETAIN, UNWIND_RULE_CFA_OFFSET, UNWIND_RULE_REG_OFFSET };
struct unwind_rule_data {
	enum unwind_rule rule;
	s32 offset;
	unsigned int regnum;
};
struct unwind_frame {
	struct unwind_cfa_rule_data cfa;
	struct unwind_rule_data ra;
	struct unwind_rule_data fp;
	bool outermost;
};
enum sframe_sec_type { SFRAME_KERNEL, SFRAME_USER };
struct sframe_section {
	enum sframe_sec_type sec_type;
	unsigned long sframe_start, sframe_end, text_start, text_end;
	bool fdes_sorted;
	unsigned long fdes_start, fres_start, fres_end;
	unsigned int num_fdes;
	signed char ra_off, fp_off;
};

/*
 * User memory: the section's bytes at its load address, then PAST zero bytes (what follows a
 * section in memory is mapped: the next section of the segment; zeros make it deterministic).
 * Reads beyond that fault.
 */
#define PAST 64
static const unsigned char *user_bytes;
static unsigned long user_base, user_len, past_reads;

static const void *user_at(unsigned long addr, unsigned long size)
{
	unsigned long mapped = user_len + PAST;

	if (addr < user_base || addr - user_base > mapped || size > mapped - (addr - user_base))
		return NULL;
	if (addr - user_base + size > user_len)
		past_reads++;
	return user_bytes + (addr - user_base);
}

#define unsafe_copy_from_user(to, from, size, label)                          \
	do {                                                                      \
		const void *__src = user_at((unsigned long)(from), (size));        \
		if (!__src)                                                        \
			goto label;                                                \
		memcpy((to), __src, (size));                                       \
	} while (0)
#define unsafe_get_user(to, ptr, label)                                       \
	do {                                                                      \
		const void *__src = user_at((unsigned long)(ptr), sizeof(*(ptr)));  \
		__typeof__(*(ptr)) __v;                                            \
		if (!__src)                                                        \
			goto label;                                                \
		memcpy(&__v, __src, sizeof(__v));                                  \
		(to) = __v;                                                        \
	} while (0)

static unsigned long copy_from_user(void *to, const void *from, unsigned long size)
{
	const void *src = user_at((unsigned long)from, size);

	if (!src)
		return size;
	memcpy(to, src, size);
	return 0;
}

static bool user_read_access_begin(const void *ptr, unsigned long len)
{
	(void)ptr;
	(void)len;
	return true;
}
static void user_read_access_end(void) {}
#define dbg_sec(...) do { } while (0)

#ifdef SFRAME_NEWEST
/*
 * linux-mm 5ce6138798d7 names the frame types unwind_user_* and reads a reserved control-word bit; its
 * sframe_find() looks the section up in the mm's maple tree, re-enacted below around its __find_fde()
 * and __find_fre().
 */
#define unwind_user_frame unwind_frame
#define unwind_user_cfa_rule_data unwind_cfa_rule_data
#define unwind_user_rule_data unwind_rule_data
#define UNWIND_USER_CFA_RULE_SP_OFFSET UNWIND_CFA_RULE_SP_OFFSET
#define UNWIND_USER_CFA_RULE_FP_OFFSET UNWIND_CFA_RULE_FP_OFFSET
#define UNWIND_USER_CFA_RULE_REG_OFFSET UNWIND_CFA_RULE_REG_OFFSET
#define UNWIND_USER_RULE_DEREF UNWIND_RULE_DEREF
#define UNWIND_USER_RULE_RETAIN UNWIND_RULE_RETAIN
#define UNWIND_USER_RULE_CFA_OFFSET UNWIND_RULE_CFA_OFFSET
#define UNWIND_USER_RULE_REG_OFFSET UNWIND_RULE_REG_OFFSET
#define SFRAME_V3_FLEX_FDE_CTRLWORD_RESERVED_P(data) (((data) >> 2) & 0x1)
#define BUILD_BUG_ON(x) do { } while (0)
#define IS_ENABLED(x) 1
#endif

#ifdef SFRAME_ARM64_MODULE
/*
 * Dylan Hatch's arm64 series (v6) reads a module's section in kernel memory: sframe_module_init() reads
 * the header, sorts unsorted FDEs in place with lib/sort.c's sort() (given as KERNEL_LIB_SORT: the
 * kernel's sort(), outside the repository), validates; sframe_find_kernel() looks PCs up. The module
 * is one: every PC looked up is taken to lie in it (__module_address). A failed WARN_ON keeps the error.
 */
#include <sys/mman.h>
#define __ro_after_init
#define __init
#define dbg_init(sec) do { } while (0)
static long warned;
#define WARN_ON(x) ({ long __r = (x); if (__r) warned = __r; __r != 0; })
#define cmp_int(l, r) (((l) > (r)) - ((l) < (r)))
struct mod_arch_specific {
	struct sframe_section sframe_sec;
	bool sframe_init;
};
struct module {
	struct mod_arch_specific arch;
};
static struct module the_module;
static char __start_sframe[1], __end_sframe[1], _stext[1], _etext[1];
static bool is_ksym_addr(unsigned long ip)
{
	(void)ip;
	return false;
}
static struct module *__module_address(unsigned long ip)
{
	(void)ip;
	return &the_module;
}
#include KERNEL_LIB_SORT
#endif

#include KERNEL_SFRAME_CORE

#ifdef SFRAME_NEWEST
/* sframe_find(): the maple tree holds the section over [text_start, text_end); then the FDE and FRE. */
static int __sframe_find(struct sframe_section *sec, unsigned long ip, struct unwind_frame *frame)
{
	struct sframe_fde_internal fde;
	int ret;

	if (ip < sec->text_start || ip >= sec->text_end)
		return -ENOENT;
	ret = __find_fde(sec, ip, &fde);
	if (!ret)
		ret = __find_fre(sec, &fde, ip, frame);
	return ret;
}
#endif

static sigjmp_buf on_fpe;

static void fpe(int sig)
{
	(void)sig;
	siglongjmp(on_fpe, 1);
}

/* One entity of a found frame, as sfview's profile writes it: `sp+16`, `*(cfa-8)`, `r10+0`, `retain`. */
static int entity(char *out, bool cfa, unsigned int rule, int offset, unsigned int regnum)
{
	unsigned int base = rule & ~UNWIND_RULE_DEREF;
	bool deref = rule & UNWIND_RULE_DEREF;
	char name[16];

	if (!cfa && rule == UNWIND_RULE_RETAIN)
		return sprintf(out, "retain");
	if (cfa && base == UNWIND_CFA_RULE_SP_OFFSET)
		strcpy(name, "sp");
	else if (cfa && base == UNWIND_CFA_RULE_FP_OFFSET)
		strcpy(name, "fp");
	else if (!cfa && base == UNWIND_RULE_CFA_OFFSET)
		strcpy(name, "cfa");
	else
		sprintf(name, "r%u", regnum);
	return sprintf(out, deref ? "*(%s%+d)" : "%s%+d", name, offset);
}

/*
 * One lookup as sframe_find_user() makes it: "-22", "-14", "crash" (a division by zero), or the
 * frame found: "cfa=... ra=... fp=...".
 */
static void lookup(struct sframe_section *sec, unsigned long ip, char *out)
{
	struct unwind_frame frame;
	int ret;

	memset(&frame, 0, sizeof(frame));
	if (sigsetjmp(on_fpe, 1)) {
		strcpy(out, "crash");
		return;
	}
#ifdef SFRAME_ARM64_MODULE
	(void)sec;
	ret = sframe_find_kernel(ip, &frame);
#else
	ret = __sframe_find(sec, ip, &frame);
#endif
	if (ret) {
		sprintf(out, "%d", ret);
		return;
	}
	out += sprintf(out, "cfa=");
	out += entity(out, true, frame.cfa.rule, frame.cfa.offset, frame.cfa.regnum);
	out += sprintf(out, " ra=");
	out += entity(out, false, frame.ra.rule, frame.ra.offset, frame.ra.regnum);
	out += sprintf(out, " fp=");
	out += entity(out, false, frame.fp.rule, frame.fp.offset, frame.fp.regnum);
#ifdef SFRAME_NEWEST
	if (frame.outermost)
		strcpy(out, " outermost");
#endif
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

struct range {
	unsigned long start, end;
	bool top; /* the range ends at 2^64 exactly: end is ULONG_MAX, and ULONG_MAX is scanned too */
};

static int by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Lookups, merged into runs of one result over consecutive PCs. */
struct runs {
	unsigned long start, next;
	char result[160];
	bool printed;
};

static void flush(struct runs *runs)
{
	const char *r = runs->result;

	if (!r[0])
		return;
	char end[24];

	/* A run to the last address ends at 2^64 (runs->next wrapped to 0). */
	if (runs->next)
		sprintf(end, "%lu", runs->next);
	else
		strcpy(end, "18446744073709551616");
	if (r[0] == '-')
		printf("%s[%lu, %s, %s]", runs->printed ? ", " : "", runs->start, end, r);
	else
		printf("%s[%lu, %s, \"%s\"]", runs->printed ? ", " : "", runs->start, end, r);
	runs->printed = true;
}

static void add(struct runs *runs, unsigned long ip, const char *result)
{
	if (strcmp(result, runs->result) || ip != runs->next) {
		flush(runs);
		runs->start = ip;
		strcpy(runs->result, result);
	}
	runs->next = ip + 1;
}

static void judge(const unsigned char *bytes, unsigned long len, unsigned long load,
		  unsigned long text_start, unsigned long text_end, unsigned long limit)
{
	struct sframe_section sec = {
		.sec_type = SFRAME_USER,
		.sframe_start = load,
		.sframe_end = load + len,
		.text_start = text_start,
		.text_end = text_end,
	};
	struct runs runs = { 0 };
	struct range *ranges;
	unsigned long i, ip, done = 0;
	bool topped = false;
	int ret;

	user_bytes = bytes;
	user_base = load;
	user_len = len;
	past_reads = 0;
#ifdef SFRAME_ARM64_MODULE
	/* Kernel memory: the section at its load address, zeros after it (reads past them fault). */
	unsigned long page = 4096, low = load & ~(page - 1), high = (load + len + PAST + page - 1) & ~(page - 1);
	void *map = mmap((void *)low, high - low, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (map != (void *)low) {
		printf("{\"register\": null, \"unmapped\": \"%lx\"}\n", load);
		fflush(stdout);
		if (map != MAP_FAILED)
			munmap(map, high - low);
		return;
	}
	memcpy((void *)load, bytes, len);
	user_bytes = (const unsigned char *)load;
	memset(&the_module, 0, sizeof(the_module));
	warned = 0;
	sframe_module_init(&the_module, (void *)load, len, (void *)text_start, text_end - text_start);
	ret = the_module.arch.sframe_init ? 0 : warned;
	sec = the_module.arch.sframe_sec;
#else
#ifdef SFRAME_NEWEST
	/* sframe_add_section()'s first check (the VMA checks are the loader's business). */
	if (!len || text_start >= text_end)
		ret = -EINVAL;
	else
#endif
		ret = sframe_read_header(&sec);
	if (!ret)
		ret = sframe_validate_section(&sec);
#endif
	printf("{\"register\": %d, \"lookups\": [", ret);
	if (!ret) {
		/* Every function's PCs, as the FDE index gives them (the validation read each FDE). */
		ranges = calloc(sec.num_fdes, sizeof(*ranges));
		for (i = 0; i < sec.num_fdes; i++) {
			struct sframe_fde_v3 fde;
			unsigned long at = sec.fdes_start + i * sizeof(fde);

			memcpy(&fde, user_at(at, sizeof(fde)), sizeof(fde));
			ranges[i].start = at + fde.func_start_off;
			ranges[i].end = ranges[i].start + (fde.func_size < limit ? fde.func_size : limit);
			/* Ending at 2^64 exactly, the end reads 0; one that wraps further is not scanned. */
			ranges[i].top = ranges[i].end == 0 && ranges[i].start;
			if (ranges[i].top)
				ranges[i].end = ULONG_MAX;
		}
		qsort(ranges, sec.num_fdes, sizeof(*ranges), by_start);
		for (i = 0; i < sec.num_fdes && !topped; i++) {
			for (ip = ranges[i].start > done ? ranges[i].start : done; ip < ranges[i].end; ip++) {
				char result[160];

				lookup(&sec, ip, result);
				add(&runs, ip, result);
			}
			if (ranges[i].top) {
				char result[160];

				lookup(&sec, ULONG_MAX, result);
				add(&runs, ULONG_MAX, result);
				topped = true;
			}
			done = ranges[i].end > done ? ranges[i].end : done;
		}
		flush(&runs);
		free(ranges);
	}
	printf("], \"past_reads\": %lu}\n", past_reads);
	fflush(stdout);
#ifdef SFRAME_ARM64_MODULE
	munmap(map, high - low);
#endif
}

int main(void)
{
	static char line[1 << 22];
	static unsigned char bytes[(1 << 21) + PAST];

	signal(SIGFPE, fpe);
	while (fgets(line, sizeof(line), stdin)) {
		char *hex = strtok(line, " ");
		unsigned long len = 0, load, ts, te, limit;

		load = strtoul(strtok(NULL, " "), NULL, 16);
		ts = strtoul(strtok(NULL, " "), NULL, 16);
		te = strtoul(strtok(NULL, " "), NULL, 16);
		limit = strtoul(strtok(NULL, " \n"), NULL, 16);
		for (; hex[0] && hex[1] && len < sizeof(bytes); hex += 2)
			bytes[len++] = hexval(hex[0]) << 4 | hexval(hex[1]);
		memset(bytes + len, 0, PAST);
		judge(bytes, len, load, ts, te, limit);
	}
	return 0;
}
