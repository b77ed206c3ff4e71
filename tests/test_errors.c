/* SPDX-License-Identifier: MIT */
/*
 * Bad input gets a clear error code and leaves the table unchanged (every
 * byte of every table page, every refcount, the arena, the counters and the
 * cache), and the semantics of docs/design.md, one property per test.
 *
 * Every test runs on each configuration of params[] (Armv8 stage 2 and
 * Intel EPT, with and without hardware dirty state): one test body, and
 * what differs between formats comes from the checker's struct
 * check_format (which attributes exist, cache maintenance, invalidation by
 * address or by whole-VMID flushes only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture.h"

#define K4 4096u
#define M2 0x200000ull
#define G1 0x40000000ull
#define PA48 (1ull << 48)

struct param {
	const char *name;
	struct slat_config cfg;
};

/* 4K pages everywhere: the tests use 2M and 1G blocks. */
static const struct param params[] = {
	{ "arm-s2 4K ia40", { SLAT_FMT_ARM_S2, K4, 40, 48, 0, 0 } },
	{ "arm-s2 4K ia40 hwdirty xnx",
	  { SLAT_FMT_ARM_S2, K4, 40, 48,
	    SLAT_FEAT_HWDIRTY | SLAT_FEAT_XNX, 0 } },
	{ "ept 4-level ia40", { SLAT_FMT_EPT, K4, 40, 48, 0, 0 } },
	{ "ept 5-level ia57 mbec xonly a/d",
	  { SLAT_FMT_EPT, K4, 57, 48,
	    SLAT_FEAT_EPT_MBEC | SLAT_FEAT_EPT_XONLY | SLAT_FEAT_HWDIRTY, 0 } },
	/* NPT's A and D are always the CPU's */
	{ "npt 4-level ia40", { SLAT_FMT_NPT, K4, 40, 48, SLAT_FEAT_HWDIRTY, 0 } },
	{ "npt 5-level ia57",
	  { SLAT_FMT_NPT, K4, 57, 48, SLAT_FEAT_HWDIRTY, 0 } },
	{ "arm-s1 4K va48", { SLAT_FMT_ARM_S1, K4, 48, 48, 0, 0 } },
	{ "arm-s1 4K va48 pa40 hwdirty",
	  { SLAT_FMT_ARM_S1, K4, 48, 40, SLAT_FEAT_HWDIRTY, 0 } },
};

/* The configuration the tests run on. */
static const struct param *P;

static bool has(uint32_t feature)
{
	return (P->cfg.features & feature) != 0;
}

static bool by_address(void)
{
	return check_format_for(P->cfg.format)->tlbi_by_address;
}

/*
 * Invalidations counted the way the configuration issues them: a format
 * without invalidation by address (EPT) turns every by-IPA and range
 * invalidation into one whole-VMID flush.
 */
static void assert_tlbi(struct fx *f, size_t ipa, size_t range, size_t vmid)
{
	if (!by_address()) {
		vmid += ipa + range;
		ipa = range = 0;
	}
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_IPA), ipa);
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_RANGE), range);
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_VMID), vmid);
}

/* ------------------------------------------------------------ snapshot */

struct snapshot {
	uint8_t *mem;      /* every arena page not free and not in our cache */
	uint32_t *refc;
	uint8_t *used;
	uint64_t pages_in_use, nr_free, double_frees, table_pages;
	struct slat_stats stats;
	uint32_t cache_nr;
	size_t nev;
};

static void in_cache_map(struct fx *f, uint8_t *in)
{
	for (uint32_t i = 0; i < f->cache.nr; i++)
		in[((uint8_t *)f->cache.pages[i] - f->h.arena) / f->h.granule] = 1;
}

static void snap(struct fx *f, struct snapshot *s)
{
	uint64_t n = f->h.nr_pages, g = f->h.granule;
	s->mem = calloc(n, g);
	s->refc = calloc(n, sizeof(*s->refc));
	s->used = calloc(n, 1);
	uint8_t *in = calloc(n, 1);
	assert_non_null(s->mem);
	in_cache_map(f, in);
	for (uint64_t i = 0; i < n; i++) {
		if (f->h.state[i] == SLAT_HOSTED_PAGE_FREE || in[i])
			continue;
		s->used[i] = 1;
		memcpy(s->mem + i * g, f->h.arena + i * g, g);
		s->refc[i] = f->h.refcounts[i];
	}
	free(in);
	s->pages_in_use = f->h.pages_in_use;
	s->nr_free = f->h.nr_free;
	s->double_frees = f->h.double_frees;
	s->table_pages = slat_hosted_table_pages(&f->h);
	s->stats = f->t.stats;
	s->cache_nr = f->cache.nr;
	s->nev = f->nev;
}

/* Everything as it was; returns 0, or 1 after printing what changed. */
static int check_unchanged(struct fx *f, const struct snapshot *s,
			   const char *what)
{
	uint64_t n = f->h.nr_pages, g = f->h.granule;
	uint8_t *in = calloc(n, 1);
	const char *bad = NULL;
	in_cache_map(f, in);
	for (uint64_t i = 0; i < n && !bad; i++) {
		bool used = f->h.state[i] != SLAT_HOSTED_PAGE_FREE && !in[i];
		if (used != !!s->used[i])
			bad = "an arena page changed use";
		else if (used && memcmp(s->mem + i * g, f->h.arena + i * g, g))
			bad = "table memory changed";
		else if (used && s->refc[i] != f->h.refcounts[i])
			bad = "a refcount changed";
	}
	free(in);
	const struct slat_stats *a = &f->t.stats, *b = &s->stats;
	if (bad)
		;
	else if (f->h.pages_in_use != s->pages_in_use ||
		 f->h.nr_free != s->nr_free ||
		 f->h.double_frees != s->double_frees ||
		 slat_hosted_table_pages(&f->h) != s->table_pages)
		bad = "the arena changed";
	else if (f->cache.nr != s->cache_nr)
		bad = "pages were taken from the cache";
	else if (f->nev != s->nev)
		bad = "maintenance events";
	else if (memcmp(a->written, b->written, sizeof(a->written)) ||
		 memcmp(a->tlbi, b->tlbi, sizeof(a->tlbi)) ||
		 a->dcache_calls != b->dcache_calls ||
		 a->icache_calls != b->icache_calls ||
		 a->pages_alloc != b->pages_alloc ||
		 a->pages_freed != b->pages_freed)
		bad = "the counters say something was done";
	if (!bad)
		return 0;
	print_error("%s: %s\n", what, bad);
	return 1;
}

static void assert_unchanged(struct fx *f, const struct snapshot *s,
			     const char *what)
{
	if (check_unchanged(f, s, what))
		fail_msg("%s changed the table", what);
}

static void snap_free(struct snapshot *s)
{
	free(s->mem);
	free(s->refc);
	free(s->used);
	s->mem = NULL;
	s->refc = NULL;
	s->used = NULL;
}

/* The snapshot of the running test (freed by teardown if it fails). */
static struct snapshot cur;

/* ------------------------------------------------------------ fixture */

/*
 * A 4K, 40-bit table with a bit of everything: a 1G block, 2M blocks,
 * pages (device, NC, read-only, executable), and a hole between them.
 *   [0x40000000, +1G)        1G block -> 0x1_0000_0000, RW
 *   [0x80000000, +4M)        two 2M blocks -> 0x2_0000_0000, RW
 *   [0x80400000, +16K)       pages -> 0x3_0000_0000, R X
 *   [0x80404000, +4K)        device page -> 0x9000_0000, RW
 *   [0x80405000, +4K)        NC page -> 0x9000_1000, RW
 *   [0x80406000, +0x1fa000)  hole
 */
static int setup_populated(void **state)
{
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &P->cfg, 0x80000000ull), SLAT_OK);
	assert_int_equal(fx_map(f, G1, G1, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(fx_map(f, 2 * G1, 2 * M2, 0x200000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, 2 * G1 + 2 * M2, 0x4000, 0x300000000ull,
				SLAT_R | SLAT_X, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, 2 * G1 + 2 * M2 + 0x4000, 0x1000, 0x90000000,
				SLAT_RW | SLAT_MT_DEVICE, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, 2 * G1 + 2 * M2 + 0x5000, 0x1000, 0x90001000,
				SLAT_RW | SLAT_MT_NORMAL_NC, 0),
			 SLAT_OK);
	fx_topup(f, 16);
	fx_clear_events(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	snap_free(&cur);
	if (checker_full(&f->ck, NULL))
		fail_msg("checker: %s", f->ck.msg);
	fx_fini(f);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ errors */

enum eop {
	E_MAP, E_UNMAP, E_WRPROTECT, E_RELAX, E_TCY, E_MKYOUNG, E_LOOKUP,
	E_DIRTY, E_HW, E_RESTRICT,
};

/* Which configurations a case is an error for. */
enum when {
	ANY = 0,
	ARM_ONLY,       /* Armv8 stage 2 */
	ARM_NO_XNX,     /* Arm without FEAT_XNX */
	EPT_ONLY,       /* EPT */
	EPT_NO_XONLY,   /* EPT without execute-only */
	EPT_NO_MBEC,    /* EPT without mode-based execute control */
	S1_ONLY,        /* Armv8 stage 1 */
	NPT_ONLY,       /* AMD NPT */
	NO_HWDIRTY,     /* without hardware dirty state */
	HWDIRTY,        /* with it */
};

/* ipa and size may count from the end of the IPA space (1 << ia_bits). */
#define IA_IPA 1u
#define IA_SIZE 2u

struct err_case {
	const char *what;
	enum eop op;
	uint64_t ipa, size, pa;
	uint32_t attrs;  /* map: attributes; relax, restrict: permissions; hw:
			  * access */
	uint32_t flags;  /* flags, or the policy for unmap/wrprotect */
	int want;
	enum when when;
	unsigned rel;    /* IA_IPA, IA_SIZE */
};

static bool applies(enum when w)
{
	bool arm = P->cfg.format == SLAT_FMT_ARM_S2;
	bool ept = P->cfg.format == SLAT_FMT_EPT;
	switch (w) {
	case ARM_ONLY: return arm;
	case ARM_NO_XNX: return arm && !has(SLAT_FEAT_XNX);
	case EPT_ONLY: return ept;
	case EPT_NO_XONLY: return ept && !has(SLAT_FEAT_EPT_XONLY);
	case EPT_NO_MBEC: return ept && !has(SLAT_FEAT_EPT_MBEC);
	case S1_ONLY: return P->cfg.format == SLAT_FMT_ARM_S1;
	case NPT_ONLY: return P->cfg.format == SLAT_FMT_NPT;
	case NO_HWDIRTY: return !has(SLAT_FEAT_HWDIRTY);
	case HWDIRTY: return has(SLAT_FEAT_HWDIRTY);
	default: return true;
	}
}

#define DEV (2 * G1 + 2 * M2 + 0x4000) /* the device page */
#define HOLE (2 * G1 + 2 * M2 + 0x6000)
#define END(x) ((uint64_t)0 - (x))      /* x before the end (with IA_*) */

static const struct err_case errs[] = {
	{ "map: IPA not page aligned", E_MAP, 0x1800, 0x1000, 0x1000, SLAT_RW, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "map: size not page aligned", E_MAP, 0x1000, 0x1800, 0x1000, SLAT_RW, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "map: PA not page aligned", E_MAP, 0x1000, 0x1000, 0x1010, SLAT_RW, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "map: size 0", E_MAP, 0x1000, 0, 0x1000, SLAT_RW, 0, SLAT_E_RANGE, ANY, 0 },
	{ "map: IPA range wraps", E_MAP, 0xfffffffffffff000ull, 0x2000, 0x1000, SLAT_RW, 0, SLAT_E_RANGE, ANY, 0 },
	{ "map: IPA range wraps to 0", E_MAP, 0x1000, 0ull - 0x1000, 0x1000, SLAT_RW, 0, SLAT_E_RANGE, ANY, 0 },
	{ "map: IPA range beyond ia_bits", E_MAP, END(0x1000), 0x2000, 0x1000, SLAT_RW, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "map: IPA at ia_bits", E_MAP, 0, 0x1000, 0x1000, SLAT_RW, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "map: PA range beyond pa_bits", E_MAP, 0x1000, 0x2000, PA48 - 0x1000, SLAT_RW, 0, SLAT_E_RANGE, ANY, 0 },
	{ "map: PA range wraps", E_MAP, 0x1000, 0x2000, 0xfffffffffffff000ull, SLAT_RW, 0, SLAT_E_RANGE, ANY, 0 },
	{ "map: execute on device", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_X | SLAT_MT_DEVICE, 0, SLAT_E_ATTR, ANY, 0 },
	{ "map: EL1 execute on device", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_XK | SLAT_MT_DEVICE, 0, SLAT_E_ATTR, ANY, 0 },
	{ "map: memory type 3", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_MT_MASK, 0, SLAT_E_ATTR, ANY, 0 },
	{ "map: SLAT_YOUNG is not an input", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_YOUNG, 0, SLAT_E_ATTR, ANY, 0 },
	{ "map: SLAT_DIRTY is not an input", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_RW | SLAT_DIRTY, 0, SLAT_E_ATTR, ANY, 0 },
	{ "map: unknown attribute bit 20", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | (1u << 20), 0, SLAT_E_ATTR, ANY, 0 },
	{ "map: unknown attribute bit 31", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | (1u << 31), 0, SLAT_E_ATTR, ANY, 0 },
	/* what one format cannot express */
	{ "map: XU only without FEAT_XNX", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_XU, 0, SLAT_E_ATTR, ARM_NO_XNX, 0 },
	{ "map: XK only without FEAT_XNX", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_XK, 0, SLAT_E_ATTR, ARM_NO_XNX, 0 },
	{ "map: ignore-PAT is EPT's", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_IPAT, 0, SLAT_E_ATTR, ARM_ONLY, 0 },
	{ "map: suppress-#VE is EPT's", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_SVE, 0, SLAT_E_ATTR, ARM_ONLY, 0 },
	{ "map: write without read", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_W, 0, SLAT_E_ATTR, EPT_ONLY, 0 },
	{ "map: write and execute without read", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_W | SLAT_X, 0, SLAT_E_ATTR, EPT_ONLY, 0 },
	{ "map: no read and no execute", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_MT_NORMAL_NC, 0, SLAT_E_ATTR, EPT_ONLY, 0 },
	{ "map: user execute alone (bits 2:0 clear)", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_XU, 0, SLAT_E_ATTR, EPT_ONLY, 0 },
	{ "map: execute-only without the capability", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_X, 0, SLAT_E_ATTR, EPT_NO_XONLY, 0 },
	{ "map: XU only without MBEC", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_XU, 0, SLAT_E_ATTR, EPT_NO_MBEC, 0 },
	{ "map: NPT without read (P is read)", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_W | SLAT_X, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "map: NPT execute without read", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_X, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "map: NPT user execute only (one NX bit)", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_XU, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "map: NPT supervisor execute only", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_XK, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "map: ignore-PAT on NPT", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_IPAT, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "map: suppress-#VE on NPT", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_SVE, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "relax: NPT user execute only", E_RELAX, G1, 0x1000, 0, SLAT_R | SLAT_XU, 0, SLAT_E_ATTR, NPT_ONLY, 0 },
	{ "map: stage 1 without read", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_W | SLAT_XK, 0, SLAT_E_ATTR, S1_ONLY, 0 },
	{ "map: EL1 execute on EL0-writable", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_RW | SLAT_XK | SLAT_USER, 0, SLAT_E_ATTR, S1_ONLY, 0 },
	{ "map: an EPT bit on stage 1", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_R | SLAT_SVE, 0, SLAT_E_ATTR, S1_ONLY, 0 },
	{ "map: unknown flag bit 2", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_RW, 1u << 2, SLAT_E_INVAL, ANY, 0 },
	{ "map: unknown flag bit 31", E_MAP, 0x1000, 0x1000, 0x1000, SLAT_RW, 1u << 31, SLAT_E_INVAL, ANY, 0 },
	{ "map: NO_REPLACE over another PA", E_MAP, 2 * G1 - 0x1000, 0x2000, 0x5000000, SLAT_RW, SLAT_MAP_NO_REPLACE, SLAT_E_EXISTS, ANY, 0 },
	{ "map: NO_REPLACE over another memory type", E_MAP, DEV, 0x1000, 0x90000000, SLAT_RW, SLAT_MAP_NO_REPLACE, SLAT_E_EXISTS, ANY, 0 },
	{ "map: NO_REPLACE, a hole then another PA", E_MAP, G1 - 0x1000, 0x2000, 0x5000000, SLAT_RW, SLAT_MAP_NO_REPLACE, SLAT_E_EXISTS, ANY, 0 },

	{ "unmap: IPA not aligned", E_UNMAP, G1 + 0x10, 0x1000, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_ALIGN, ANY, 0 },
	{ "unmap: size not aligned", E_UNMAP, G1, 0x10, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_ALIGN, ANY, 0 },
	{ "unmap: size 0", E_UNMAP, G1, 0, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_RANGE, ANY, 0 },
	{ "unmap: wraps", E_UNMAP, G1, 0ull - G1, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_RANGE, ANY, 0 },
	{ "unmap: beyond ia_bits", E_UNMAP, G1, 0, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_RANGE, ANY, IA_SIZE },
	{ "unmap: policy 4", E_UNMAP, G1, 0x1000, 0, 0, 4, SLAT_E_INVAL, ANY, 0 },
	{ "unmap: policy -1", E_UNMAP, G1, 0x1000, 0, 0, 0xffffffffu, SLAT_E_INVAL, ANY, 0 },

	{ "wrprotect: IPA not aligned", E_WRPROTECT, G1 + 0x800, 0x1000, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_ALIGN, ANY, 0 },
	{ "wrprotect: size 0", E_WRPROTECT, G1, 0, 0, 0, SLAT_FLUSH_ENTRY, SLAT_E_RANGE, ANY, 0 },
	{ "wrprotect: beyond ia_bits", E_WRPROTECT, END(0x1000), 0x2000, 0, 0, SLAT_FLUSH_RANGE, SLAT_E_RANGE, ANY, IA_IPA },
	{ "wrprotect: policy 7", E_WRPROTECT, G1, 0x1000, 0, 0, 7, SLAT_E_INVAL, ANY, 0 },

	{ "relax: IPA not aligned", E_RELAX, G1 + 4, 0x1000, 0, SLAT_X, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "relax: size not aligned", E_RELAX, G1, 0x1004, 0, SLAT_X, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "relax: size 0", E_RELAX, G1, 0, 0, SLAT_X, 0, SLAT_E_RANGE, ANY, 0 },
	{ "relax: beyond ia_bits", E_RELAX, END(0x1000), 0x2000, 0, SLAT_X, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "relax: a memory type is not a permission", E_RELAX, G1, 0x1000, 0, SLAT_R | SLAT_MT_DEVICE, 0, SLAT_E_ATTR, ANY, 0 },
	{ "relax: software bits are not permissions", E_RELAX, G1, 0x1000, 0, SLAT_SW(1), 0, SLAT_E_ATTR, ANY, 0 },
	{ "relax: ignore-PAT is not a permission", E_RELAX, G1, 0x1000, 0, SLAT_R | SLAT_IPAT, 0, SLAT_E_ATTR, ANY, 0 },
	{ "relax: XU only without FEAT_XNX", E_RELAX, G1, 0x1000, 0, SLAT_XU, 0, SLAT_E_ATTR, ARM_NO_XNX, 0 },
	{ "relax: XU only without MBEC", E_RELAX, G1, 0x1000, 0, SLAT_R | SLAT_XU, 0, SLAT_E_ATTR, EPT_NO_MBEC, 0 },
	{ "relax: unknown flag", E_RELAX, G1, 0x1000, 0, SLAT_X, 1u << 6, SLAT_E_INVAL, ANY, 0 },
	{ "relax: execute on device", E_RELAX, DEV - 0x1000, 0x2000, 0, SLAT_R | SLAT_X, 0, SLAT_E_ATTR, ANY, 0 },
	{ "relax: over a hole, SLAT_NO_HOLES", E_RELAX, HOLE - 0x2000, 0x3000, 0, SLAT_R | SLAT_W, SLAT_NO_HOLES, SLAT_E_NOENT, ANY, 0 },
	{ "relax: over nothing at all, SLAT_NO_HOLES", E_RELAX, 0x1000, 0x1000, 0, SLAT_R | SLAT_W, SLAT_NO_HOLES, SLAT_E_NOENT, ANY, 0 },

	{ "restrict: IPA not aligned", E_RESTRICT, G1 + 4, 0x1000, 0, SLAT_W, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "restrict: size 0", E_RESTRICT, G1, 0, 0, SLAT_W, 0, SLAT_E_RANGE, ANY, 0 },
	{ "restrict: beyond ia_bits", E_RESTRICT, END(0x1000), 0x2000, 0, SLAT_W, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "restrict: no permission", E_RESTRICT, G1, 0x1000, 0, 0, 0, SLAT_E_ATTR, ANY, 0 },
	{ "restrict: a memory type is not a permission", E_RESTRICT, G1, 0x1000, 0, SLAT_R | SLAT_MT_DEVICE, 0, SLAT_E_ATTR, ANY, 0 },
	{ "restrict: unknown flag", E_RESTRICT, G1, 0x1000, 0, SLAT_W, 1u << 6, SLAT_E_INVAL, ANY, 0 },
	{ "restrict: map's own flag", E_RESTRICT, G1, 0x1000, 0, SLAT_W, SLAT_MAP_NO_REPLACE, SLAT_E_INVAL, ANY, 0 },
	{ "restrict: over a hole, SLAT_NO_HOLES", E_RESTRICT, HOLE - 0x2000, 0x3000, 0, SLAT_W, SLAT_NO_HOLES, SLAT_E_NOENT, ANY, 0 },
	{ "restrict: read from a writable leaf (EPT write without read)", E_RESTRICT, G1 + 0x1000, 0x1000, 0, SLAT_R, 0, SLAT_E_ATTR, EPT_ONLY, 0 },
	{ "restrict: read (a stage-1 leaf always lets EL1 read)", E_RESTRICT, G1 + 0x1000, 0x1000, 0, SLAT_R, 0, SLAT_E_ATTR, S1_ONLY, 0 },
	{ "restrict: read from R X pages without execute-only", E_RESTRICT, 2 * G1 + 2 * M2, 0x4000, 0, SLAT_R, 0, SLAT_E_ATTR, EPT_NO_XONLY, 0 },
	{ "restrict: EL0 execute alone without FEAT_XNX", E_RESTRICT, 2 * G1 + 2 * M2, 0x1000, 0, SLAT_XU, 0, SLAT_E_ATTR, ARM_NO_XNX, 0 },

	{ "test_clear_young: IPA not aligned", E_TCY, G1 + 8, 0x1000, 0, 0, 0, SLAT_E_ALIGN, ANY, 0 },
	{ "test_clear_young: size 0", E_TCY, G1, 0, 0, 0, 0, SLAT_E_RANGE, ANY, 0 },
	{ "test_clear_young: beyond ia_bits", E_TCY, END(0x1000), 0x2000, 0, 0, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "test_clear_young: unknown flag", E_TCY, G1, 0x1000, 0, 0, 1u << 3, SLAT_E_INVAL, ANY, 0 },

	{ "mkyoung: unknown flag", E_MKYOUNG, G1, 0, 0, 0, 1u << 1, SLAT_E_INVAL, ANY, 0 },
	{ "mkyoung: beyond ia_bits", E_MKYOUNG, 0, 0, 0, 0, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "mkyoung: a hole", E_MKYOUNG, HOLE, 0, 0, 0, 0, SLAT_E_NOENT, ANY, 0 },

	{ "lookup: beyond ia_bits", E_LOOKUP, 0, 0, 0, 0, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "lookup: far beyond", E_LOOKUP, 0xfffffffffffff000ull, 0, 0, 0, 0, SLAT_E_RANGE, ANY, 0 },
	{ "lookup: a hole", E_LOOKUP, HOLE, 0, 0, 0, 0, SLAT_E_NOENT, ANY, 0 },

	{ "dirty_read: no hardware dirty state", E_DIRTY, G1, 0x1000, 0, 1, SLAT_FLUSH_VMID, SLAT_E_CONFIG, NO_HWDIRTY, 0 },
	{ "dirty_read: IPA not aligned", E_DIRTY, G1 + 8, 0x1000, 0, 1, SLAT_FLUSH_VMID, SLAT_E_ALIGN, HWDIRTY, 0 },
	{ "dirty_read: size not aligned", E_DIRTY, G1, 0x1008, 0, 1, SLAT_FLUSH_VMID, SLAT_E_ALIGN, HWDIRTY, 0 },
	{ "dirty_read: size 0", E_DIRTY, G1, 0, 0, 1, SLAT_FLUSH_VMID, SLAT_E_RANGE, HWDIRTY, 0 },
	{ "dirty_read: beyond ia_bits", E_DIRTY, END(0x1000), 0x2000, 0, 1, SLAT_FLUSH_VMID, SLAT_E_RANGE, HWDIRTY, IA_IPA },
	{ "dirty_read: policy 4", E_DIRTY, G1, 0x1000, 0, 1, 4, SLAT_E_INVAL, HWDIRTY, 0 },
	{ "dirty_read: no bitmap", E_DIRTY, G1, 0x1000, 0, 0, SLAT_FLUSH_VMID, SLAT_E_INVAL, HWDIRTY, 0 },

	{ "hw_access: beyond ia_bits", E_HW, 0, 0, 0, SLAT_ACCESS_WRITE, 0, SLAT_E_RANGE, ANY, IA_IPA },
	{ "hw_access: no such access", E_HW, G1, 0, 0, 8, 0, SLAT_E_INVAL, ANY, 0 },
	{ "hw_access: an EL0 instruction fetch as a data access", E_HW, G1, 0, 0, SLAT_ACCESS_USER | SLAT_ACCESS_EXEC_EL1, 0, SLAT_E_INVAL, ANY, 0 },
};

static void every_error_leaves_the_table_unchanged(void **state)
{
	struct fx *f = *state;
	uint64_t IA = 1ull << f->t.geo.ia_bits;
	/* old leaves too: test_clear_young must not touch them */
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), G1, true,
					       NULL),
			 SLAT_WAS_YOUNG);
	fx_clear_events(f);
	int failures = 0;
	/* Twice: the second time each map case's attributes were just mapped
	 * with the same cache (its memo then holds them, checked before). */
	for (size_t k = 0; k < 2 * sizeof(errs) / sizeof(errs[0]); k++) {
		size_t i = k % (sizeof(errs) / sizeof(errs[0]));
		struct err_case c = errs[i];
		if (!applies(c.when))
			continue;
		if (k != i && c.op == E_MAP)
			(void)slat_map(&f->t, slat_ipa(HOLE + M2 / 2), 0x1000,
				       slat_pa(0x1000), c.attrs,
				       SLAT_OP(.cache = &f->cache));
		if (c.rel & IA_IPA)
			c.ipa += IA;
		if (c.rel & IA_SIZE)
			c.size += IA;
		struct snapshot *sp = &cur, s;
		struct slat_leaf l;
		struct slat_hw_result hr;
		uint64_t done = 0x5a5a, bitmap[2];
		int64_t ret;
		/* c.flags: the flags of map and relax, the policy of the
		 * operations that restrict */
		struct slat_op flags_op = { .flags = c.flags,
					    .cache = &f->cache,
					    .done = 0x5a5a };
		struct slat_op policy_op = {
			.flush = (enum slat_tlbi_policy)c.flags,
			.cache = &f->cache,
			.done = 0x5a5a
		};
		print_message("  %s\n", c.what);
		snap(f, sp);
		s = *sp;
		switch (c.op) {
		case E_MAP:
			ret = slat_map(&f->t, slat_ipa(c.ipa), c.size,
				       slat_pa(c.pa), c.attrs, &flags_op);
			done = flags_op.done;
			break;
		case E_UNMAP:
			ret = slat_unmap(&f->t, slat_ipa(c.ipa), c.size,
					 &policy_op);
			done = policy_op.done;
			break;
		case E_WRPROTECT:
			ret = slat_wrprotect(&f->t, slat_ipa(c.ipa), c.size,
					     &policy_op);
			done = policy_op.done;
			break;
		case E_RELAX:
			ret = slat_relax(&f->t, slat_ipa(c.ipa), c.size,
					 c.attrs, &flags_op);
			done = flags_op.done;
			break;
		case E_RESTRICT:
			ret = slat_restrict(&f->t, slat_ipa(c.ipa), c.size,
					    c.attrs, &flags_op);
			done = flags_op.done;
			break;
		case E_TCY:
			ret = slat_test_clear_young(&f->t, slat_ipa(c.ipa),
						    c.size, true,
						    SLAT_OP(.flags = c.flags));
			done = 0;
			break;
		case E_MKYOUNG:
			ret = slat_mkyoung(&f->t, slat_ipa(c.ipa), c.flags);
			done = 0;
			break;
		case E_DIRTY:
			/* attrs: whether to pass a bitmap */
			ret = slat_dirty_read(
				&f->t, slat_ipa(c.ipa), c.size,
				c.attrs ? bitmap : NULL, 2, true,
				SLAT_OP(.flush = (enum slat_tlbi_policy)c.flags,
					.cache = &f->cache));
			done = 0;
			break;
		case E_HW:
			ret = slat_hw_access(&f->t, slat_ipa(c.ipa), c.attrs,
					     &hr);
			done = 0;
			break;
		default:
			ret = slat_lookup(&f->t, slat_ipa(c.ipa), &l);
			done = 0;
			break;
		}
		if (ret != c.want) {
			print_error("%s: returned %s, expected %s\n", c.what,
				    check_status_name((int)ret),
				    check_status_name(c.want));
			failures++;
		}
		if (done != 0) {
			print_error("%s: *done = %#llx after an error\n",
				    c.what, (unsigned long long)done);
			failures++;
		}
		failures += check_unchanged(f, &s, c.what);
		snap_free(sp);
	}
	if (failures)
		fail_msg("%d of the error cases failed", failures);
}

/* Unknown flags and policies are refused even with nothing else to do. */
static void errors_need_no_table_access(void **state)
{
	struct fx *f = *state;
	snap(f, &cur);
	/* no cache at all: input checks come first */
	assert_int_equal(slat_map(&f->t, slat_ipa(0x1800), 0x1000,
				  slat_pa(0x1000), SLAT_RW, NULL),
			 SLAT_E_ALIGN);
	assert_int_equal(slat_unmap(&f->t, slat_ipa(G1), 0x1000,
				    SLAT_OP(.flush = (enum slat_tlbi_policy)9)),
			 SLAT_E_INVAL);
	assert_unchanged(f, &cur, "errors without a cache");
	snap_free(&cur);
}

/* ------------------------------------------------------------ semantics */

/*
 * A table of the configuration under test, with @extra features on top;
 * NULL when its format has no such feature (FWB and DIC are Arm's).
 */
static struct fx *new_fx(uint32_t extra)
{
	struct fx *f = malloc(sizeof(*f));
	struct slat_config cfg = P->cfg;
	cfg.features |= extra;
	int ret = fx_init_cfg(f, &cfg, 0x80000000ull);
	if (ret == SLAT_E_CONFIG && extra) {
		free(f);
		return NULL;
	}
	assert_int_equal(ret, SLAT_OK);
	return f;
}

static const struct check_format *fmt(struct fx *f)
{
	return f->ck.fmt;
}

/* D-cache cleans a new Normal write-back leaf gets (0 or 1). */
static size_t dc(struct fx *f)
{
	return fmt(f)->dcache_on_install(&f->cfg, SLAT_MT_NORMAL);
}

/* I-cache invalidations a new executable leaf gets (0 or 1). */
static size_t ic(struct fx *f)
{
	return fmt(f)->icache_on_exec(&f->cfg);
}

/* Levels of tables below the root down to the last level. */
static int levels_below_root(struct fx *f)
{
	return 3 - f->t.geo.start_level;
}

static void done_fx(struct fx *f)
{
	if (checker_full(&f->ck, NULL))
		fail_msg("checker: %s", f->ck.msg);
	fx_fini(f);
	free(f);
}

static void assert_leaf(struct fx *f, uint64_t ipa, int level, uint64_t pa,
			uint32_t attrs)
{
	struct slat_leaf l;
	int ret = fx_lookup(f, ipa, &l);
	if (ret != SLAT_OK)
		fail_msg("lookup %#llx: %s", (unsigned long long)ipa,
			 check_status_name(ret));
	if (l.level != level || slat_pa_v(l.pa) != pa ||
	    (l.attrs & ~(SLAT_YOUNG | SLAT_DIRTY)) != attrs)
		fail_msg("lookup %#llx: level %d pa %#llx attrs %#x; expected "
			 "level %d pa %#llx attrs %#x",
			 (unsigned long long)ipa, l.level,
			 (unsigned long long)slat_pa_v(l.pa), l.attrs, level,
			 (unsigned long long)pa, attrs);
}

static void map_uses_largest_block_allowed(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	/* 2M-aligned start, then a 1G-aligned part, then one page:
	 * [1G-2M, 1G) one 2M block, [1G, 2G) one 1G block, [2G, 2G+4K) a page */
	uint64_t ipa = G1 - M2, pa = 0x500000000ull - M2;
	assert_int_equal(fx_map(f, ipa, M2 + G1 + 0x1000, pa, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, ipa, 2, pa, SLAT_RW);
	assert_leaf(f, G1, 1, pa + M2, SLAT_RW);
	assert_leaf(f, 2 * G1, 3, pa + M2 + G1, SLAT_RW);
	assert_int_equal(f->t.stats.written[SLAT_WRITE_LEAF], 3);
	/* PA congruent with the IPA only modulo 2M: no 1G block */
	assert_int_equal(fx_map(f, 4 * G1, G1, 0x600000000ull + M2, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, 4 * G1, 2, 0x600000000ull + M2, SLAT_RW);
	assert_leaf(f, 5 * G1 - M2, 2, 0x600000000ull + G1 - M2 + M2, SLAT_RW);
	/* PA congruent modulo 4K only: pages */
	assert_int_equal(fx_map(f, 6 * G1, 4 * 0x1000, 0x700001000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, 6 * G1, 3, 0x700001000ull, SLAT_RW);
	done_fx(f);
}

static void map_respects_cap(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	/* at most 2M: a 1G-aligned gigabyte becomes 512 2M blocks */
	assert_int_equal(fx_map(f, G1, G1, 0x100000000ull, SLAT_RW,
				SLAT_MAP_CAP(21)),
			 SLAT_OK);
	assert_leaf(f, G1, 2, 0x100000000ull, SLAT_RW);
	assert_leaf(f, 2 * G1 - M2, 2, 0x100000000ull + G1 - M2, SLAT_RW);
	/* a cap between two levels: the next smaller level */
	assert_int_equal(fx_map(f, 4 * G1, G1, 0x200000000ull, SLAT_RW,
				SLAT_MAP_CAP(29)),
			 SLAT_OK);
	assert_leaf(f, 4 * G1, 2, 0x200000000ull, SLAT_RW);
	/* SLAT_MAP_PAGES: pages only */
	assert_int_equal(fx_map(f, 8 * G1, 2 * M2, 0x300000000ull, SLAT_RW,
				SLAT_MAP_PAGES),
			 SLAT_OK);
	assert_leaf(f, 8 * G1, 3, 0x300000000ull, SLAT_RW);
	assert_leaf(f, 8 * G1 + 2 * M2 - 0x1000, 3,
		    0x300000000ull + 2 * M2 - 0x1000, SLAT_RW);
	done_fx(f);
}

static void map_same_pa_different_perms_is_nothing_to_do(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW | SLAT_SW(5),
				0),
			 SLAT_OK);
	fx_clear_events(f);
	/* the same PA and memory type: only permissions and sw bits differ */
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R | SLAT_X, 0),
			 SLAT_NOTHING_TO_DO);
	assert_leaf(f, G1, 2, 0x100000000ull, SLAT_RW | SLAT_SW(5));
	assert_int_equal(f->nev, 0);
	for (int k = 0; k < SLAT_WRITE_KINDS; k++)
		assert_int_equal(f->t.stats.written[k], 0);
	/* with NO_REPLACE as well: nothing is "different" */
	assert_int_equal(fx_map(f, G1 + 0x1000, 0x1000, 0x100001000ull, SLAT_R,
				SLAT_MAP_NO_REPLACE),
			 SLAT_NOTHING_TO_DO);
	/* a partly covered block with the same translation is not split */
	assert_leaf(f, G1, 2, 0x100000000ull, SLAT_RW | SLAT_SW(5));
	done_fx(f);
}

static void map_replacing_block_breaks_before_make(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	fx_clear_events(f);
	f->watching = true; /* a VMID flush has no address: watch the block */
	f->watch = G1;
	assert_int_equal(fx_map(f, G1, M2, 0x200000000ull, SLAT_RW, 0), SLAT_OK);
	assert_leaf(f, G1, 2, 0x200000000ull, SLAT_RW);
	/* one invalidation for the old block, while the entry was invalid
	 * (the new one not yet written): by IPA at level 2, or on EPT the
	 * single-context flush that stands for it */
	assert_tlbi(f, 1, 0, 0);
	bool seen = false;
	for (size_t i = 0; i < f->nev; i++) {
		const struct fx_event *e = &f->ev[i];
		if (e->ev.kind == SLAT_EV_TLBI_VMID) {
			assert_false(e->mapped);
			seen = true;
		}
		if (e->ev.kind != SLAT_EV_TLBI_IPA)
			continue;
		assert_true(e->ev.addr >= G1 && e->ev.addr < G1 + M2);
		assert_true(e->ev.level == 2 || e->ev.level == SLAT_LEVEL_ANY);
		assert_int_equal(e->ev.scope, SLAT_TLBI_INNER_SHAREABLE);
		assert_false(e->mapped);
		seen = true;
	}
	assert_true(seen);
	assert_int_equal(f->t.stats.written[SLAT_WRITE_BREAK], 1);
	/* the D-cache clean of the new memory comes with it (Arm without
	 * FWB; x86 caches need none) */
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), dc(f));
	done_fx(f);
}

static void map_partial_block_keeps_rest(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, G1, 0x100000000ull,
				SLAT_RW | SLAT_SW(3), 0),
			 SLAT_OK);
	fx_clear_events(f);
	/* one page in the middle of the 1G block gets another PA */
	uint64_t mid = G1 + 0x12345000;
	assert_int_equal(fx_map(f, mid, 0x1000, 0x900000000ull, SLAT_R, 0),
			 SLAT_OK);
	assert_leaf(f, mid, 3, 0x900000000ull, SLAT_R);
	/* split one level at a time: 2M blocks around, pages next to it */
	assert_leaf(f, G1, 2, 0x100000000ull, SLAT_RW | SLAT_SW(3));
	assert_leaf(f, 2 * G1 - M2, 2, 0x100000000ull + G1 - M2,
		    SLAT_RW | SLAT_SW(3));
	assert_leaf(f, mid - 0x1000, 3, 0x100000000ull + 0x12344000,
		    SLAT_RW | SLAT_SW(3));
	assert_leaf(f, mid + 0x1000, 3, 0x100000000ull + 0x12346000,
		    SLAT_RW | SLAT_SW(3));
	/* only the new page's memory is cleaned: the rest was mapped */
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), dc(f));
	assert_int_equal(f->t.stats.dcache_bytes, dc(f) * 0x1000);
	for (size_t i = 0; i < f->nev; i++)
		if (f->ev[i].ev.kind == SLAT_EV_DCACHE_CLEAN_INVAL)
			assert_int_equal(f->ev[i].ev.addr, 0x900000000ull);
	done_fx(f);
}

/*
 * Normal WB leaves are cleaned also when read-only; where the format needs
 * no cache maintenance at all (EPT: x86 caches are coherent), never.
 */
static void cache_clean_only_for_new_normal_leaf(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	fx_clear_events(f);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R, 0), SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), dc(f));
	if (dc(f)) {
		assert_int_equal(f->ev[0].ev.addr, 0x100000000ull);
		assert_int_equal(f->ev[0].ev.size, M2);
	}
	assert_int_equal(f->t.stats.dcache_bytes, dc(f) * M2);
	/* device and NC: never */
	fx_clear_events(f);
	assert_int_equal(fx_map(f, 2 * G1, 0x1000, 0x90000000,
				SLAT_RW | SLAT_MT_DEVICE, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, 2 * G1 + 0x1000, 0x1000, 0x90001000,
				SLAT_RW | SLAT_MT_NORMAL_NC, 0),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), 0);
	/* the same mapping again: nothing changed, nothing cleaned */
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R, 0),
			 SLAT_NOTHING_TO_DO);
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), 0);
	/* a partial unmap: the split needs no clean (the memory was already
	 * mapped); the page it takes away is cleaned and invalidated, after
	 * the invalidation of its translation */
	assert_int_equal(fx_unmap(f, G1 + 0x1000, 0x1000, SLAT_FLUSH_ENTRY),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), dc(f));
	if (dc(f)) {
		size_t last = f->nev - 1;
		assert_int_equal(f->ev[last].ev.kind, SLAT_EV_DCACHE_CLEAN_INVAL);
		assert_int_equal(f->ev[last].ev.addr, 0x100001000ull);
		assert_int_equal(f->ev[last].ev.size, 0x1000);
		assert_true(fx_count(f, SLAT_EV_TLBI_IPA) >= 1);
	}
	fx_clear_events(f);
	/* NC -> WB at the same PA is a new Normal leaf: cleaned */
	assert_int_equal(fx_map(f, 2 * G1 + 0x1000, 0x1000, 0x90001000,
				SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), dc(f));
	done_fx(f);
}

static void icache_only_for_exec(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	fx_clear_events(f);
	assert_int_equal(fx_map(f, G1, 0x2000, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_ICACHE_INVAL), 0);
	assert_int_equal(fx_map(f, 2 * G1, 0x2000, 0x200000000ull,
				SLAT_R | SLAT_X, 0),
			 SLAT_OK);
	assert_true(fx_count(f, SLAT_EV_ICACHE_INVAL) >= ic(f));
	assert_int_equal(f->t.stats.icache_bytes, ic(f) * 0x2000);
	/* relax adding execute invalidates for those pages only */
	fx_clear_events(f);
	fx_topup(f, 4);
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), 0x1000,
				    SLAT_R | SLAT_X,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_ICACHE_INVAL), ic(f));
	assert_int_equal(f->t.stats.icache_bytes, ic(f) * 0x1000);
	/* relax adding write only: none */
	fx_clear_events(f);
	assert_int_equal(slat_relax(&f->t, slat_ipa(2 * G1), 0x2000,
				    SLAT_R | SLAT_W,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_ICACHE_INVAL), 0);
	done_fx(f);

	/* with DIC: never (DIC is Arm's; EPT never invalidates anyway) */
	f = new_fx(SLAT_FEAT_DIC);
	if (!f)
		return;
	fx_clear_events(f);
	assert_int_equal(fx_map(f, 2 * G1, 0x2000, 0x200000000ull, SLAT_RWX, 0),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_ICACHE_INVAL), 0);
	done_fx(f);
}

/* The raw leaf at @ipa with its output address taken out. */
static uint64_t leaf_without_pa(struct fx *f, uint64_t ipa)
{
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, ipa, &l), SLAT_OK);
	return l.pte ^ slat_pa_v(l.pa);
}

/* Page @i of [G1, G1 + 2M), mapped with @cache (NULL: no memo at all). */
static void map_page(struct fx *f, uint64_t i, uint32_t attrs,
		     struct slat_page_cache *cache)
{
	assert_int_equal(slat_map(&f->t, slat_ipa(G1 + i * 0x1000), 0x1000,
				  slat_pa(0x100000000ull + i * 0x1000), attrs,
				  SLAT_OP(.flags = SLAT_SHARED,
					  .cache = cache)),
			 SLAT_OK);
}

/*
 * A page cache remembers how it last encoded the attributes, for one table
 * (the fault path then skips that work). Another table through the same
 * cache, or a new table in the same struct with other features, gets its
 * own encoding: every leaf equals one mapped without any memo.
 */
static void cache_memo_follows_its_table(void **state)
{
	(void)state;
	struct slat_config other = P->cfg.format == SLAT_FMT_EPT
		? (struct slat_config){ SLAT_FMT_ARM_S2, K4, 40, 48, 0, 0 }
		: (struct slat_config){ SLAT_FMT_EPT, K4, 40, 48, 0, 0 };
	struct fx *a = new_fx(0), *b = malloc(sizeof(*b));
	struct slat_page_cache memo_only = { 0 }; /* no pages: tables exist */
	assert_int_equal(fx_init_cfg(b, &other, 0x80000000ull), SLAT_OK);

	for (int round = 0; round < 2; round++) {
		/* the tables over [G1, G1 + 2M), and a reference leaf */
		for (struct fx *f = a; f; f = f == a ? b : NULL) {
			assert_int_equal(fx_map(f, G1 + M2 - 0x1000, 0x1000,
						0x100000000ull, SLAT_R, 0),
					 SLAT_OK);
			map_page(f, 0, SLAT_RW, NULL);
		}
		for (uint64_t i = 1; i < 6; i++) {
			struct fx *f = i % 2 ? a : b;
			map_page(f, i, SLAT_RW, &memo_only);
			assert_leaf(f, G1 + i * 0x1000, 3,
				    0x100000000ull + i * 0x1000, SLAT_RW);
			assert_int_equal(leaf_without_pa(f, G1 + i * 0x1000),
					 leaf_without_pa(f, G1));
		}
		if (checker_full(&b->ck, NULL))
			fail_msg("checker: %s", b->ck.msg);
		/* A new table in a's struct, its leaves encoded otherwise
		 * (hardware dirty state); the memo still holds the old one. */
		struct slat_config cfg = P->cfg;
		cfg.features ^= SLAT_FEAT_HWDIRTY;
		/* NPT has no feature to turn off: EPT's leaves instead */
		if (cfg.format == SLAT_FMT_NPT)
			cfg = (struct slat_config){ SLAT_FMT_EPT, K4,
						    cfg.ia_bits, 48, 0, 0 };
		if (checker_full(&a->ck, NULL))
			fail_msg("checker: %s", a->ck.msg);
		fx_fini(a);
		assert_int_equal(fx_init_cfg(a, &cfg, 0x80000000ull), SLAT_OK);
		fx_fini(b);
		assert_int_equal(fx_init_cfg(b, &other, 0x80000000ull), SLAT_OK);
	}
	done_fx(a);
	done_fx(b);
}

static void fwb_skips_dcache_clean(void **state)
{
	(void)state;
	struct fx *f = new_fx(SLAT_FEAT_FWB);
	if (!f)
		skip(); /* FWB is Arm's */
	fx_clear_events(f);
	assert_int_equal(fx_map(f, G1, G1, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(fx_map(f, 2 * G1, 0x3000, 0x200000000ull, SLAT_RWX, 0),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL), 0);
	assert_int_equal(f->t.stats.dcache_calls, 0);
	/* the I-cache still needs invalidating */
	assert_true(fx_count(f, SLAT_EV_ICACHE_INVAL) >= 1);
	assert_int_equal(f->t.stats.icache_bytes, 0x3000);
	done_fx(f);
}

/* Three pages and a 2M block, then unmap/wrprotect under each policy. */
static void populate_flush(struct fx *f)
{
	assert_int_equal(fx_map(f, G1, 0x1000, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1 + 0x2000, 0x2000, 0x100002000ull,
				SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1 + M2, M2, 0x200000000ull, SLAT_RW, 0),
			 SLAT_OK);
	fx_topup(f, 8);
	fx_clear_events(f);
}

/*
 * The counts are those of a format with invalidation by address; on EPT
 * each by-IPA or range invalidation is a single-context flush instead
 * (assert_tlbi), so SLAT_FLUSH_ENTRY costs one flush per entry.
 */
static void flush_policy_counts(void **state)
{
	(void)state;
	static const struct {
		enum slat_tlbi_policy p;
		size_t ipa, range, vmid;
	} pol[] = {
		{ SLAT_FLUSH_ENTRY, 4, 0, 0 },
		{ SLAT_FLUSH_RANGE, 0, 1, 0 },
		{ SLAT_FLUSH_VMID, 0, 0, 1 },
		{ SLAT_FLUSH_NONE, 0, 0, 0 },
	};
	for (size_t i = 0; i < 4; i++) {
		/* wrprotect: in place, per policy */
		struct fx *f = new_fx(0);
		populate_flush(f);
		assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1), 2 * M2,
						SLAT_OP(.flush = pol[i].p,
							.cache = &f->cache)),
				 SLAT_OK);
		assert_tlbi(f, pol[i].ipa, pol[i].range, pol[i].vmid);
		assert_int_equal(f->t.stats.tlbi[SLAT_TLBI_VMID],
				 fx_count(f, SLAT_EV_TLBI_VMID));
		assert_int_equal(f->t.stats.written[SLAT_WRITE_ATTR], 4);
		for (size_t j = 0; j < f->nev; j++) {
			const struct slat_hosted_event *e = &f->ev[j].ev;
			if (e->kind == SLAT_EV_TLBI_IPA)
				assert_int_equal(e->level,
						 e->addr >= G1 + M2 ? 2 : 3);
			if (e->kind == SLAT_EV_TLBI_RANGE) {
				assert_true(e->addr <= G1);
				assert_true(e->addr + e->size >= G1 + 2 * M2);
			}
		}
		/* again: nothing changes, nothing is invalidated */
		fx_clear_events(f);
		assert_true(slat_wrprotect(&f->t, slat_ipa(G1), 2 * M2,
					   SLAT_OP(.flush = pol[i].p,
						   .cache = &f->cache)) >= 0);
		assert_int_equal(f->nev, 0);
		done_fx(f);

		/* unmap of the leaves (their tables stay: the block's L2
		 * table still holds... nothing else, so only compare leaves) */
		f = new_fx(0);
		populate_flush(f);
		/* keep the tables alive with a page outside the range */
		assert_int_equal(fx_map(f, G1 + 3 * M2, 0x1000, 0x300000000ull,
					SLAT_RW, 0),
				 SLAT_OK);
		fx_topup(f, 8);
		fx_clear_events(f);
		assert_int_equal(fx_unmap(f, G1 + 0x1000, 2 * M2 - 0x1000,
					  pol[i].p),
				 SLAT_OK);
		/* [G1+0x1000, G1+2M): the two pages; [G1+2M, G1+4M): the
		 * block; the page at G1 stays, so no table is freed */
		size_t want_ipa = pol[i].p == SLAT_FLUSH_ENTRY ? 3 : 0;
		assert_tlbi(f, want_ipa, pol[i].range, pol[i].vmid);
		assert_int_equal(fx_count(f, SLAT_EV_PAGE_FREE), 0);
		for (size_t j = 0; j < f->nev; j++)
			assert_false(f->ev[j].mapped);
		/* an unmap of nothing: no invalidation whatever the policy */
		fx_clear_events(f);
		assert_int_equal(fx_unmap(f, 4 * G1, G1, pol[i].p), SLAT_OK);
		assert_int_equal(f->nev, 0);
		done_fx(f);
	}
}

static void unmap_frees_empty_tables(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	unsigned root = f->t.geo.root_pages;
	int below = levels_below_root(f);
	/* one page: a table at every level below the root (Arm 4K ia40: L2
	 * and L3 below the level-1 root; EPT: PDPT, PD, PT below the PML4,
	 * and the PML4 too below a PML5) */
	assert_int_equal(fx_map(f, 5 * G1 + 0x7000, 0x1000, 0x100000000ull,
				SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(slat_hosted_table_pages(&f->h), root + below);
	fx_clear_events(f);
	assert_int_equal(fx_unmap(f, 5 * G1 + 0x7000, 0x1000, SLAT_FLUSH_ENTRY),
			 SLAT_OK);
	assert_int_equal(slat_hosted_table_pages(&f->h), root);
	assert_int_equal(f->t.stats.pages_freed, (uint64_t)below);
	assert_int_equal(fx_count(f, SLAT_EV_PAGE_FREE), (size_t)below);
	unsigned top = check_level_shift(&f->ck.geo, f->t.geo.start_level);
	assert_int_equal(((uint64_t *)f->t.root)[(5 * G1) >> top], 0);
	/* freed only after the TLB was told */
	size_t first_tlbi = f->nev, first_free = f->nev;
	for (size_t i = 0; i < f->nev; i++) {
		if (f->ev[i].ev.kind == SLAT_EV_PAGE_FREE && first_free == f->nev)
			first_free = i;
		if (f->ev[i].ev.kind <= SLAT_EV_TLBI_VMID && first_tlbi == f->nev)
			first_tlbi = i;
	}
	assert_true(first_tlbi < first_free);

	/* replacing a table by a block frees it as well */
	assert_int_equal(fx_map(f, 6 * G1 + 0x3000, 0x1000, 0x200003000ull,
				SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(slat_hosted_table_pages(&f->h), root + below);
	fx_clear_events(f);
	assert_int_equal(fx_map(f, 6 * G1, G1, 0x300000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, 6 * G1 + 0x3000, 1, 0x300003000ull, SLAT_RW);
	/* the level-2 and level-3 tables go; those above level 1 stay */
	assert_int_equal(slat_hosted_table_pages(&f->h),
			 root + (1 - f->t.geo.start_level));
	assert_int_equal(fx_count(f, SLAT_EV_PAGE_FREE), 2);
	done_fx(f);
}

/* A table holding a leaf with the requested translation is kept. */
static void map_keeps_table_with_same_translation(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1 + 0x3000, 0x1000, 0x100003000ull,
				SLAT_R, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	/* the page keeps its permissions; the rest is mapped RW */
	assert_leaf(f, G1 + 0x3000, 3, 0x100003000ull, SLAT_R);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1 + 0x4000, &l), SLAT_OK);
	assert_int_equal(slat_pa_v(l.pa), 0x100004000ull);
	assert_int_equal(l.attrs & ~(SLAT_YOUNG | SLAT_DIRTY), SLAT_RW);
	done_fx(f);
}

static void test_clear_young_acts_on_whole_leaves(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	/* one page of the block asked: the whole block gets old */
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1 + 0x5000),
					       0x1000, true, NULL),
			 SLAT_WAS_YOUNG);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.level, 2);
	assert_int_equal(l.attrs & SLAT_YOUNG, 0);
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), M2, false,
					       NULL),
			 0);
	/* mkyoung on any byte of it: the whole block is young again */
	assert_int_equal(slat_mkyoung(&f->t, slat_ipa(G1 + M2 - 1), 0), SLAT_OK);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_YOUNG, SLAT_YOUNG);
	assert_int_equal(slat_mkyoung(&f->t, slat_ipa(G1), 0),
			 SLAT_NOTHING_TO_DO);
	/* without mkold, nothing changes */
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), 0x1000,
					       false, NULL),
			 SLAT_WAS_YOUNG);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_YOUNG, SLAT_YOUNG);
	done_fx(f);
}

static void relax_adds_permissions_and_young_exactly(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R, 0), SLAT_OK);
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), M2, true,
					       NULL),
			 SLAT_WAS_YOUNG);
	fx_topup(f, 4);
	/* one page gets write: the block is split, the rest keeps R, old */
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1 + 0x1000), 0x1000,
				    SLAT_W, SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1 + 0x1000, &l), SLAT_OK);
	assert_int_equal(l.attrs & ~SLAT_DIRTY, SLAT_RW | SLAT_YOUNG);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs, SLAT_R);
	assert_int_equal(fx_lookup(f, G1 + 0x2000, &l), SLAT_OK);
	assert_int_equal(l.attrs, SLAT_R);
	/* already there and young: nothing to do */
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1 + 0x1000), 0x1000,
				    SLAT_R, SLAT_OP(.cache = &f->cache)),
			 SLAT_NOTHING_TO_DO);
	done_fx(f);
}

/*
 * wrprotect, restrict and relax treat a hole alike: skipped, the mapped
 * pages around it changed; refused before any change with SLAT_NO_HOLES.
 */
static void holes_skipped_or_refused_alike(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	/* two pages, a hole, two pages */
	assert_int_equal(fx_map(f, G1, 0x2000, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1 + 0x3000, 0x2000, 0x100003000ull,
				SLAT_RW, 0),
			 SLAT_OK);
	struct slat_leaf l;
	struct slat_op op = { .flags = SLAT_NO_HOLES };

	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1), 0x5000, &op),
			 SLAT_E_NOENT);
	assert_int_equal(op.done, 0);
	assert_int_equal(slat_restrict(&f->t, slat_ipa(G1), 0x5000, SLAT_W,
				       &op),
			 SLAT_E_NOENT);
	assert_int_equal(fx_lookup(f, G1 + 0x4000, &l), SLAT_OK);
	assert_true(l.attrs & SLAT_W);

	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1), 0x5000, NULL),
			 SLAT_OK);
	for (uint64_t a = G1; a < G1 + 0x5000; a += 0x1000) {
		if (a == G1 + 0x2000)
			continue;
		assert_int_equal(fx_lookup(f, a, &l), SLAT_OK);
		assert_false(l.attrs & SLAT_W);
	}
	assert_int_equal(fx_lookup(f, G1 + 0x2000, &l), SLAT_E_NOENT);

	op.flags = SLAT_NO_HOLES;
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), 0x5000, SLAT_W, &op),
			 SLAT_E_NOENT);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_false(l.attrs & SLAT_W);
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), 0x5000, SLAT_W, NULL),
			 SLAT_OK);
	assert_int_equal(fx_lookup(f, G1 + 0x4000, &l), SLAT_OK);
	assert_true(l.attrs & SLAT_W);
	/* A hole and nothing else: nothing to do, nothing mapped. */
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1 + 0x2000), 0x1000,
				    SLAT_W, NULL),
			 SLAT_NOTHING_TO_DO);
	assert_int_equal(fx_lookup(f, G1 + 0x2000, &l), SLAT_E_NOENT);
	done_fx(f);
}

/* restrict removes exactly what it is given, splitting a block it covers
 * only in part, and keeps the rest of each leaf. */
static void restrict_removes_exactly(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RWX, 0),
			 SLAT_OK);
	fx_topup(f, 4);
	int64_t need = slat_pages_needed(
		&f->t, SLAT_NEED(.kind = SLAT_OP_RESTRICT,
				 .ipa = slat_ipa(G1 + 0x1000), .size = 0x1000,
				 .attrs = SLAT_X));
	assert_int_equal(need, 1);
	assert_int_equal(slat_restrict(&f->t, slat_ipa(G1 + 0x1000), 0x1000,
				       SLAT_X, SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1 + 0x1000, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_PERMS, SLAT_RW);
	assert_int_equal(l.pa.pa, 0x100001000ull);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_PERMS, SLAT_RWX);
	/* nothing left to remove there: no split needed, nothing changes */
	assert_int_equal(slat_pages_needed(
				 &f->t, SLAT_NEED(.kind = SLAT_OP_RESTRICT,
						  .ipa = slat_ipa(G1 + 0x1000),
						  .size = 0x1000,
						  .attrs = SLAT_X)),
			 0);
	assert_int_equal(slat_restrict(&f->t, slat_ipa(G1), 0x2000,
				       SLAT_W | SLAT_X, NULL),
			 SLAT_OK);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_PERMS, SLAT_R);
	assert_int_equal(fx_lookup(f, G1 + 0x2000, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_PERMS, SLAT_RWX);
	done_fx(f);
}

static void wrprotect_splits_partial_block(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	fx_topup(f, 4);
	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1 + M2 - 0x1000),
					0x1000, SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	assert_leaf(f, G1 + M2 - 0x1000, 3, 0x100000000ull + M2 - 0x1000,
		    SLAT_R);
	assert_leaf(f, G1, 3, 0x100000000ull, SLAT_RW);
	done_fx(f);
}

static void pages_needed_is_exact(void **state)
{
	(void)state;
	/* the geometries of the configuration's format, with its features */
	static const struct {
		enum slat_format_id format;
		uint32_t granule;
		uint8_t ia, pa;
	} cfgs[] = {
		{ SLAT_FMT_ARM_S2, 4096, 48, 48 },
		{ SLAT_FMT_ARM_S2, 4096, 32, 48 },
		{ SLAT_FMT_ARM_S2, 16384, 48, 48 },
		{ SLAT_FMT_ARM_S2, 65536, 52, 52 },
		{ SLAT_FMT_EPT, 4096, 48, 48 },
		{ SLAT_FMT_EPT, 4096, 40, 48 },
		{ SLAT_FMT_EPT, 4096, 57, 52 },
		{ SLAT_FMT_NPT, 4096, 48, 48 },
		{ SLAT_FMT_NPT, 4096, 40, 48 },
		{ SLAT_FMT_NPT, 4096, 57, 52 },
	};
	bool hwdirty = has(SLAT_FEAT_HWDIRTY);
	uint64_t x = 12345;
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		if (cfgs[c].format != P->cfg.format)
			continue;
		struct slat_config cfg = {
			.format = cfgs[c].format, .granule = cfgs[c].granule,
			.ia_bits = cfgs[c].ia, .pa_bits = cfgs[c].pa,
			.features = P->cfg.features,
		};
		struct fx *f = malloc(sizeof(*f));
		assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000ull), SLAT_OK);
		uint64_t g = cfgs[c].granule;
		uint64_t *bitmap = malloc(8192 * 4 / 8 + 64);
		assert_non_null(bitmap);
		uint64_t top = slat_level_size(&f->t, f->t.geo.start_level);
		/* straddle a top-level boundary */
		uint64_t l2 = slat_level_size(&f->t, 2);
		uint64_t base = top > 32 * l2 ? top : 32 * l2;
		for (int i = 0; i < 3000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t r = x >> 11;
			uint64_t lvl = slat_level_size(&f->t, 2 + (int)(r % 2));
			uint64_t ipa = base - 4 * lvl + (r >> 8) % (8 * lvl);
			ipa &= ~(g - 1);
			uint64_t size = g * (1 + (r >> 20) % 64);
			if (r & 1)
				size += lvl * ((r >> 30) % 3);
			uint64_t pa = ipa + 0x100000000ull * (1 + (r >> 40) % 2);
			if ((r >> 45) & 1)
				pa += g;
			enum slat_op_kind op = (enum slat_op_kind)(
				(r >> 50) % (hwdirty ? 5 : 4));
			uint32_t flags = op == SLAT_OP_MAP && (r >> 55) & 1
						 ? SLAT_MAP_PAGES : 0;
			int64_t need = slat_pages_needed(
				&f->t, SLAT_NEED(.kind = op,
						 .ipa = slat_ipa(ipa),
						 .size = size, .pa = slat_pa(pa),
						 .attrs = op == SLAT_OP_MAP
							  ? SLAT_RW
							  : SLAT_R | SLAT_W,
						 .flags = flags));
			assert_true(need >= 0);
			slat_hosted_cache_drain(&f->h, &f->cache);
			fx_topup(f, (uint32_t)need);
			int ret;
			switch (op) {
			case SLAT_OP_MAP:
				ret = slat_map(&f->t, slat_ipa(ipa), size,
					       slat_pa(pa), SLAT_RW,
					       SLAT_OP(.flags = flags,
						       .cache = &f->cache));
				break;
			case SLAT_OP_UNMAP:
				ret = slat_unmap(
					&f->t, slat_ipa(ipa), size,
					SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						.cache = &f->cache));
				break;
			case SLAT_OP_WRPROTECT:
				ret = slat_wrprotect(
					&f->t, slat_ipa(ipa), size,
					SLAT_OP(.flush = SLAT_FLUSH_VMID,
						.cache = &f->cache));
				break;
			case SLAT_OP_RELAX:
				ret = slat_relax(&f->t, slat_ipa(ipa), size,
						 SLAT_R | SLAT_W,
						 SLAT_OP(.cache = &f->cache));
				/* A hole: refused, nothing taken. */
				if (ret == SLAT_E_NOENT) {
					ret = SLAT_OK;
					slat_hosted_cache_drain(&f->h,
								&f->cache);
				}
				break;
			default:
				ret = (int)slat_dirty_read(
					&f->t, slat_ipa(ipa), size, bitmap,
					(8192 * 4 / 8 + 64) / 8, true,
					SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						.cache = &f->cache));
				break;
			}
			if (ret < 0)
				fail_msg("op %d [%#llx, +%#llx) with %llu "
					 "pages: %s",
					 op, (unsigned long long)ipa,
					 (unsigned long long)size,
					 (unsigned long long)need,
					 check_status_name(ret));
			/* Exact: it took every page counted. */
			if (f->cache.nr)
				fail_msg("op %d [%#llx, +%#llx) left %u of "
					 "%llu pages", op,
					 (unsigned long long)ipa,
					 (unsigned long long)size, f->cache.nr,
					 (unsigned long long)need);
		}
		if (checker_full(&f->ck, NULL))
			fail_msg("%s", f->ck.msg);

		/* the worst case for the others: both ends inside blocks of
		 * the largest size, splitting all the way down */
		uint64_t S = 0;
		for (int l = 0; l < 3; l++)
			if (!S && l >= f->t.geo.start_level &&
			    (f->t.geo.leaf_levels & (1u << l)))
				S = slat_level_size(&f->t, l);
		uint64_t B = 8 * S;
		int last = hwdirty ? SLAT_OP_DIRTY_CLEAR : SLAT_OP_RELAX;
		size_t big_words = ((3 * S / g + 64) / 8 + 8) / 8;
		uint64_t *big = malloc(big_words * 8);
		assert_non_null(big);
		for (int op = SLAT_OP_UNMAP; op <= last; op++) {
			fx_topup(f, 64);
			assert_int_equal(
				slat_unmap(&f->t, slat_ipa(B), 4 * S,
					   SLAT_OP(.flush = SLAT_FLUSH_VMID,
						   .cache = &f->cache)),
				SLAT_OK);
			assert_int_equal(fx_map(f, B, 4 * S, 0x100000000000ull,
						SLAT_RW, 0),
					 SLAT_OK);
			uint64_t ipa = B + g, size = 3 * S - 2 * g;
			int64_t need = slat_pages_needed(
				&f->t, SLAT_NEED(.kind = (enum slat_op_kind)op,
						 .ipa = slat_ipa(ipa),
						 .size = size,
						 .attrs = SLAT_R | SLAT_X));
			assert_true(need > 0);
			slat_hosted_cache_drain(&f->h, &f->cache);
			fx_topup(f, (uint32_t)need);
			struct slat_op args = { .cache = &f->cache };
			int ret =
				op == SLAT_OP_UNMAP
					? slat_unmap(&f->t, slat_ipa(ipa), size,
						     &args)
				: op == SLAT_OP_WRPROTECT
					? slat_wrprotect(&f->t, slat_ipa(ipa),
							 size, &args)
				: op == SLAT_OP_RELAX
					? slat_relax(&f->t, slat_ipa(ipa), size,
						     SLAT_R | SLAT_X, &args)
					: (int)slat_dirty_read(&f->t,
							       slat_ipa(ipa),
							       size, big,
							       big_words, true,
							       &args);
			if (ret < 0)
				fail_msg("op %d over two partial %#llx blocks "
					 "with %llu pages: %s",
					 op, (unsigned long long)S,
					 (unsigned long long)need,
					 check_status_name(ret));
			assert_int_equal(f->cache.nr, 0);
			if (checker_full(&f->ck, NULL))
				fail_msg("%s", f->ck.msg);
		}
		free(big);
		free(bitmap);
		fx_fini(f);
		free(f);
	}
}

static void nomem_leaves_valid_table_and_reports_progress(void **state)
{
	(void)state;
	struct fx *f = new_fx(0);
	struct model *m = model_new(K4);
	model_dirty_rules(m, has(SLAT_FEAT_HWDIRTY),
			  !fmt(f)->wrprotect_keeps_dirty);
	struct slat_op op = { .cache = &f->cache, .done = 77 };
	slat_hosted_cache_drain(&f->h, &f->cache);
	/* an empty table and no pages: nothing can be done */
	assert_int_equal(slat_map(&f->t, slat_ipa(G1), 0x4000,
				  slat_pa(0x100000000ull), SLAT_RW, &op),
			 SLAT_E_NOMEM);
	assert_int_equal(op.done, 0);
	assert_int_equal(slat_hosted_table_pages(&f->h), f->t.geo.root_pages);
	if (checker_full(&f->ck, m))
		fail_msg("%s", f->ck.msg);

	/* pages for one chain (a table at each level below the root): the
	 * pages of the first 2M get mapped, the second 2M needs another */
	fx_topup(f, (uint32_t)levels_below_root(f));
	op.flags = SLAT_MAP_PAGES;
	assert_int_equal(slat_map(&f->t, slat_ipa(G1 + M2 - 0x2000), 0x4000,
				  slat_pa(0x100000000ull), SLAT_RW, &op),
			 SLAT_E_NOMEM);
	assert_int_equal(op.done, 0x2000);
	op.flags = 0;
	model_map(m, G1 + M2 - 0x2000, op.done, 0x100000000ull, SLAT_RW);
	if (checker_full(&f->ck, m))
		fail_msg("%s", f->ck.msg);

	/* a block split for a partial unmap needs a page */
	assert_int_equal(fx_map(f, 4 * G1, M2, 0x200000000ull, SLAT_RW, 0),
			 SLAT_OK);
	model_map(m, 4 * G1, M2, 0x200000000ull, SLAT_RW);
	slat_hosted_cache_drain(&f->h, &f->cache);
	op.done = 77;
	assert_int_equal(slat_unmap(&f->t, slat_ipa(4 * G1 + 0x1000), 0x1000,
				    &op),
			 SLAT_E_NOMEM);
	assert_int_equal(op.done, 0);
	if (checker_full(&f->ck, m))
		fail_msg("%s", f->ck.msg);
	op.done = 77;
	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(4 * G1 + 0x1000),
					0x1000, &op),
			 SLAT_E_NOMEM);
	assert_int_equal(op.done, 0);
	op.done = 77;
	assert_int_equal(slat_relax(&f->t, slat_ipa(4 * G1 + 0x1000), 0x1000,
				    SLAT_R | SLAT_X, &op),
			 SLAT_E_NOMEM);
	assert_int_equal(op.done, 0);
	if (has(SLAT_FEAT_HWDIRTY)) {
		/* cleaning one page of a dirty block keeps the rest dirty:
		 * that takes a split, so a page */
		uint64_t bm[1] = { 0 };
		assert_int_equal(slat_dirty_read(&f->t,
						 slat_ipa(4 * G1 + 0x1000),
						 0x1000, bm, 1, true,
						 SLAT_OP(.cache = &f->cache)),
				 SLAT_E_NOMEM);
		assert_int_equal(bm[0], 0); /* nothing reported or cleaned */
	}
	if (checker_full(&f->ck, m))
		fail_msg("%s", f->ck.msg);
	/* with the page it works, and only that page changes */
	fx_topup(f, 1);
	assert_int_equal(slat_unmap(&f->t, slat_ipa(4 * G1 + 0x1000), 0x1000,
				    &op),
			 SLAT_OK);
	assert_int_equal(op.done, 0x1000);
	model_unmap(m, 4 * G1 + 0x1000, 0x1000);
	if (checker_full(&f->ck, m))
		fail_msg("%s", f->ck.msg);
	model_free(m);
	done_fx(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			every_error_leaves_the_table_unchanged, setup_populated,
			teardown),
		cmocka_unit_test_setup_teardown(errors_need_no_table_access,
						setup_populated, teardown),
		cmocka_unit_test(map_uses_largest_block_allowed),
		cmocka_unit_test(map_respects_cap),
		cmocka_unit_test(map_same_pa_different_perms_is_nothing_to_do),
		cmocka_unit_test(map_replacing_block_breaks_before_make),
		cmocka_unit_test(map_partial_block_keeps_rest),
		cmocka_unit_test(map_keeps_table_with_same_translation),
		cmocka_unit_test(unmap_frees_empty_tables),
		cmocka_unit_test(cache_clean_only_for_new_normal_leaf),
		cmocka_unit_test(icache_only_for_exec),
		cmocka_unit_test(fwb_skips_dcache_clean),
		cmocka_unit_test(cache_memo_follows_its_table),
		cmocka_unit_test(flush_policy_counts),
		cmocka_unit_test(test_clear_young_acts_on_whole_leaves),
		cmocka_unit_test(relax_adds_permissions_and_young_exactly),
		cmocka_unit_test(wrprotect_splits_partial_block),
		cmocka_unit_test(holes_skipped_or_refused_alike),
		cmocka_unit_test(restrict_removes_exactly),
		cmocka_unit_test(pages_needed_is_exact),
		cmocka_unit_test(nomem_leaves_valid_table_and_reports_progress),
	};
	int failed = 0;
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		P = &params[i];
		failed += cmocka_run_group_tests_name(P->name, tests, NULL, NULL);
	}
	return failed ? 1 : 0;
}
