/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: what the real KVM selftests print and return, shared by the
 * commands that stand for them: guest modes, backing sources, parse_size,
 * the assertion block, the seed banner, notes.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- guest modes ---- */

/* Linux 7.2 tools/testing/selftests/kvm/lib/kvm_util.c,
 * vm_guest_mode_string(), in ID order. */
const struct perf_mode perf_modes[] = {
	{ "PA-bits:52,  VA-bits:48,  4K pages", SLAT_FMT_ARM_S2, 4096, 52 },
	{ "PA-bits:52,  VA-bits:48, 16K pages", SLAT_FMT_ARM_S2, 16384, 52 },
	{ "PA-bits:52,  VA-bits:48, 64K pages", SLAT_FMT_ARM_S2, 65536, 52 },
	{ "PA-bits:48,  VA-bits:48,  4K pages", SLAT_FMT_ARM_S2, 4096, 48 },
	{ "PA-bits:48,  VA-bits:48, 16K pages", SLAT_FMT_ARM_S2, 16384, 48 },
	{ "PA-bits:48,  VA-bits:48, 64K pages", SLAT_FMT_ARM_S2, 65536, 48 },
	{ "PA-bits:40,  VA-bits:48,  4K pages", SLAT_FMT_ARM_S2, 4096, 40 },
	{ "PA-bits:40,  VA-bits:48, 16K pages", SLAT_FMT_ARM_S2, 16384, 40 },
	{ "PA-bits:40,  VA-bits:48, 64K pages", SLAT_FMT_ARM_S2, 65536, 40 },
	{ "PA-bits:ANY, VA-bits:48 or 57, 4K pages", SLAT_FMT_EPT, 4096, 48 },
	{ "PA-bits:47,  VA-bits:64,  4K pages", SLAT_FMT_ARM_S2, 4096, 47 },
	{ "PA-bits:44,  VA-bits:64,  4K pages", SLAT_FMT_ARM_S2, 4096, 44 },
	{ "PA-bits:36,  VA-bits:48,  4K pages", SLAT_FMT_ARM_S2, 4096, 36 },
	{ "PA-bits:36,  VA-bits:48, 16K pages", SLAT_FMT_ARM_S2, 16384, 36 },
	{ "PA-bits:36,  VA-bits:48, 64K pages", SLAT_FMT_ARM_S2, 65536, 36 },
	{ "PA-bits:47,  VA-bits:47, 16K pages", SLAT_FMT_ARM_S2, 16384, 47 },
	{ "PA-bits:36,  VA-bits:47, 16K pages", SLAT_FMT_ARM_S2, 16384, 36 },
	/* RISC-V G-stage modes: no slat format. */
	{ "PA-bits:56,  VA-bits:57,  4K pages", 0, 4096, 56 },
	{ "PA-bits:56,  VA-bits:48,  4K pages", 0, 4096, 56 },
	{ "PA-bits:56,  VA-bits:39,  4K pages", 0, 4096, 56 },
	{ "PA-bits:50,  VA-bits:57,  4K pages", 0, 4096, 50 },
	{ "PA-bits:50,  VA-bits:48,  4K pages", 0, 4096, 50 },
	{ "PA-bits:50,  VA-bits:39,  4K pages", 0, 4096, 50 },
	{ "PA-bits:41,  VA-bits:57,  4K pages", 0, 4096, 41 },
	{ "PA-bits:41,  VA-bits:48,  4K pages", 0, 4096, 41 },
	{ "PA-bits:41,  VA-bits:39,  4K pages", 0, 4096, 41 },
};
const int perf_nr_modes = (int)(sizeof(perf_modes) / sizeof(perf_modes[0]));

_Static_assert(sizeof(perf_modes) / sizeof(perf_modes[0]) <= PERF_MAX_MODES,
	       "a mode mask holds every mode");

int perf_mode_default(const struct perf_opts *o)
{
	return o->arch == PERF_ARCH_X86 ? PERF_MODE_EPT : PERF_MODE_ARM64;
}

bool perf_mode_config(const struct perf_opts *o, int id, struct slat_config *cfg)
{
	enum slat_format_id want = o->arch == PERF_ARCH_X86 ? SLAT_FMT_EPT
							    : SLAT_FMT_ARM_S2;
	const struct perf_mode *m;
	struct slat_geometry geo;

	if (id < 0 || id >= perf_nr_modes || perf_modes[id].fmt != want)
		return false;
	m = &perf_modes[id];
	memset(cfg, 0, sizeof(*cfg));
	cfg->format = m->fmt;
	cfg->granule = m->granule;
	cfg->ia_bits = m->ia_bits;
	if (m->fmt == SLAT_FMT_EPT) {
		/* The x86 mode runs the vendor's table (--format); an NPT
		 * walk always sets A and D. */
		cfg->format = o->x86_fmt;
		if (o->x86_fmt == SLAT_FMT_NPT)
			cfg->features = SLAT_FEAT_HWDIRTY;
		cfg->ia_bits = o->ept_levels == 5 ? 57 : 48;
	}
	/* The selftests' 52-bit 4K and 16K modes are FEAT_LPA2 (DS = 1). */
	if (m->fmt == SLAT_FMT_ARM_S2 && m->granule != 65536 && m->ia_bits > 48)
		cfg->features |= SLAT_FEAT_LPA2;
	return slat_config_geometry(cfg, &geo) == SLAT_OK;
}

void perf_modes_help(FILE *f, const struct perf_opts *o)
{
	struct slat_config cfg;

	fputs(" -m: specify the guest mode ID to test\n"
	      "     (default: test all supported modes)\n"
	      "     This option may be used multiple times.\n"
	      "     Guest mode IDs:\n", f);
	for (int i = 0; i < perf_nr_modes; i++)
		fprintf(f, "         %d:    %s%s\n", i, perf_modes[i].str,
			perf_mode_config(o, i, &cfg) ? " (supported)" : "");
}

int perf_parse_mode(const char *s)
{
	int m = perf_parse_nonneg("Guest mode ID", s);

	if (m >= perf_nr_modes)
		perf_usage_error("Guest mode ID %d too big (IDs 0..%d; -h lists "
				 "them)", m, perf_nr_modes - 1);
	return m;
}

void perf_arch_from_modes(struct perf_opts *o, uint32_t mask)
{
	if (!o->arch_set && mask && !(mask & ~(1u << PERF_MODE_EPT)))
		o->arch = PERF_ARCH_X86;
}

int perf_modes_all(const struct perf_opts *o, int *modes)
{
	struct slat_config cfg;
	int n = 0;

	for (int i = 0; i < perf_nr_modes; i++)
		if (perf_mode_config(o, i, &cfg))
			modes[n++] = i;
	return n;
}

void perf_mode_check(const struct perf_opts *o, int id)
{
	struct slat_config cfg;

	if (!perf_mode_config(o, id, &cfg))
		perf_assert_fail(o, "lib/guest_modes.c:120: guest_modes[i].supported",
				 o->arch == PERF_ARCH_X86 ?
				 "--arch x86 runs mode 9 only; --arch arm64 the "
				 "Armv8 modes" : "pick one marked (supported) in -h, "
				 "or --arch x86 for mode 9",
				 "Guest mode ID %d (%s) not supported.", id,
				 perf_modes[id].str);
}

/* ---- the real tools' lines ---- */

void perf_selftest_banner(void)
{
	/* The selftests' library prints random() of glibc's default seed. */
	printf("Random seed: 0x6b8b4567\n");
}

void perf_assert_fail(const struct perf_opts *o, const char *where,
		      const char *hint, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	if (o->strict) {
		fprintf(stderr, "slat-perf: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fprintf(stderr, " (%s)\n", hint);
		exit(2);
	}
	fprintf(stderr, "==== Test Assertion Failure ====\n  %s\n"
		"  pid=%d tid=%d errno=0 - Success\n  ", where, (int)getpid(),
		(int)gettid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(254);
}

void perf_bad_option(const struct perf_opts *o, int opt,
		     void (*help)(FILE *, const struct perf_opts *))
{
	fflush(stdout);
	/* glibc getopt's two messages, with the program name */
	if (opt == ':')
		fprintf(stderr, "%s: option requires an argument -- '%c'\n",
			o->prog, optopt);
	else
		fprintf(stderr, "%s: invalid option -- '%c'\n", o->prog, optopt);
	if (o->strict)
		perf_usage_error("%s: unknown option or missing value: -%c (%s -h "
				 "lists the options)", o->cmd, optopt, o->prog);
	help(stdout, o);
	exit(0);
}

static char notes[1024];

void perf_note(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* once, though every mode of a run may say it */
	if (!strstr(notes, line) && strlen(notes) + strlen(line) < sizeof(notes))
		strcat(notes, line);
}

void perf_print_notes(FILE *f)
{
	fputs(notes, f);
	notes[0] = 0;
}

/* ---- backing sources ---- */

enum { PS_BASE = 0, PS_THP = 1, PS_HUGE = 2 };

static const struct {
	const char *name, *sim;
	uint64_t size;             /* PS_* or bytes */
	bool hugetlb;
} backings[] = {
	{ "anonymous", "anonymous", PS_BASE, false },
	{ "anonymous_thp", "anonymous_thp", PS_THP, false },
	{ "anonymous_hugetlb", "anonymous_hugetlb", PS_HUGE, true },
	{ "anonymous_hugetlb_16kb", NULL, 16ull << 10, true },
	{ "anonymous_hugetlb_64kb", NULL, 64ull << 10, true },
	{ "anonymous_hugetlb_512kb", NULL, 512ull << 10, true },
	{ "anonymous_hugetlb_1mb", NULL, 1ull << 20, true },
	{ "anonymous_hugetlb_2mb", "anonymous_hugetlb_2mb", 2ull << 20, true },
	{ "anonymous_hugetlb_8mb", NULL, 8ull << 20, true },
	{ "anonymous_hugetlb_16mb", NULL, 16ull << 20, true },
	{ "anonymous_hugetlb_32mb", NULL, 32ull << 20, true },
	{ "anonymous_hugetlb_256mb", NULL, 256ull << 20, true },
	{ "anonymous_hugetlb_512mb", NULL, 512ull << 20, true },
	{ "anonymous_hugetlb_1gb", "anonymous_hugetlb_1gb", 1ull << 30, true },
	{ "anonymous_hugetlb_2gb", NULL, 2ull << 30, true },
	{ "anonymous_hugetlb_16gb", NULL, 16ull << 30, true },
	{ "shmem", "shmem", PS_BASE, false },
	{ "shared_hugetlb", NULL, PS_HUGE, true },
	/* slat-perf's own: no data, any size fits */
	{ "synthetic", "synthetic", 4096, false },
	{ "synthetic_2mb", "synthetic_2mb", 2ull << 20, false },
	{ "synthetic_1gb", "synthetic_1gb", 1ull << 30, false },
};
#define NBACKINGS (sizeof(backings) / sizeof(backings[0]))
#define NREAL_BACKINGS (NBACKINGS - 3)

static int backing_index(const char *s)
{
	for (size_t i = 0; i < NBACKINGS; i++)
		if (!strcmp(s, backings[i].name))
			return (int)i;
	return -1;
}

const char *perf_parse_backing(const char *s)
{
	if (backing_index(s) < 0)
		perf_usage_error("Unknown backing src type: %s (-h lists them; "
				 "also synthetic, synthetic_2mb, synthetic_1gb)", s);
	return s;
}

void perf_backing_help(FILE *f, const char *flag)
{
	fprintf(f, " %s: specify the type of memory that should be used to\n"
		   "     back the guest data region. (default: anonymous)\n"
		   "     Available backing src types:\n", flag);
	for (size_t i = 0; i < NREAL_BACKINGS; i++)
		fprintf(f, "         %s\n", backings[i].name);
}

bool perf_backing_hugetlb(const char *name)
{
	int i = backing_index(name);

	return i >= 0 && backings[i].hugetlb;
}

static uint64_t page_size_of(int i)
{
	switch (backings[i].size) {
	case PS_BASE: return (uint64_t)sysconf(_SC_PAGESIZE);
	case PS_THP: return slat_vm_backing_page_size("anonymous_thp");
	case PS_HUGE: return slat_vm_backing_page_size("anonymous_hugetlb");
	default: return backings[i].size;
	}
}

/* MemAvailable of /proc/meminfo in bytes (0: unknown). */
static uint64_t host_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb = 0;
	char line[128];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

static const char *stand_in(uint64_t page_size)
{
	if (!(page_size % (1ull << 30)))
		return "synthetic_1gb";
	return page_size % (2ull << 20) ? "synthetic" : "synthetic_2mb";
}

void perf_backing_resolve(const char *name, uint64_t bytes,
			  struct perf_backing *b)
{
	int i = backing_index(name);
	char why[256] = "the simulator has no such source";
	uint64_t avail;

	b->name = backings[i].name;
	b->page_size = page_size_of(i);
	b->sim = backings[i].sim;
	b->real = strncmp(name, "synthetic", 9) != 0;
	if (!b->real)
		return;
	if (b->sim && slat_vm_backing_available(b->sim, bytes, why, sizeof(why))) {
		avail = host_available();
		if (!backings[i].hugetlb && avail && bytes > avail) {
			fflush(stdout);
			fprintf(stderr, "slat-perf: -s %s: 0x%llx bytes of guest memory "
				"are more than this host has available (0x%llx); "
				"lower -b or -v, or use -s synthetic (no data)\n",
				name, (unsigned long long)bytes,
				(unsigned long long)avail);
			exit(1);
		}
		return;
	}
	b->sim = stand_in(b->page_size);
	b->real = false;
	perf_note("slat-perf: -s %s: %s; ran on %s instead (no data, pages of "
		  "0x%llx bytes in the table)", name, why, b->sim,
		  (unsigned long long)slat_vm_backing_page_size(b->sim));
}

/* ---- parse_size ---- */

uint64_t perf_parse_size(const char *what, const char *s)
{
	char *end;
	unsigned long long base;
	int shift = 0;

	errno = 0;
	if (!s || !isdigit((unsigned char)*s))
		perf_usage_error("%s: '%s' is not a size (a number with an optional "
				 "b, k, m, g or t suffix, e.g. 1G)", what, s ? s : "");
	base = strtoull(s, &end, 0);
	if (errno)
		perf_usage_error("%s: '%s' is out of range", what, s);
	/* Like the selftests, only the letter after the number counts. */
	switch (tolower((unsigned char)*end)) {
	case 0: case 'b': break;
	case 'k': shift = 10; break;
	case 'm': shift = 20; break;
	case 'g': shift = 30; break;
	case 't': shift = 40; break;
	default:
		perf_usage_error("%s: unknown size suffix in '%s' (use b, k, m, g "
				 "or t)", what, s);
	}
	if ((base << shift) >> shift != base)
		perf_usage_error("%s: '%s' is too large", what, s);
	return base << shift;
}
