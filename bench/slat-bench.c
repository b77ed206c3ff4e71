/* SPDX-License-Identifier: MIT */
/*
 * slat-bench: time libslat's core operations, the ten scenarios of the KVM
 * arm64 peer figures and a few extra ones, against a floor (plain 8-byte
 * stores or loads of the same number of entries, measured in the same
 * process), the peer's figures and the targets of docs/bench.md.
 *
 * Hosted platform: table pages come from an arena, TLB and cache hooks only
 * count. Page caches are topped up with slat_pages_needed() pages before the
 * clock starts, so no timed region allocates or zeroes a page. Every
 * scenario checks what it did (lookups, exact counts from struct slat_stats,
 * table pages left): a failed check makes the exit status 1.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <slat/hosted.h>
#include <slat/slat.h>

/* Under callgrind --collect-atstart=no, only the last timed run of each
 * scenario is counted (docs/PERFORMANCE.md); elsewhere this is a no-op. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)
#endif

#ifdef __clang__
#define COMPILER "clang " __clang_version__
#else
#define COMPILER "gcc " __VERSION__
#endif

#ifndef SLAT_BUILD_TYPE
#define SLAT_BUILD_TYPE "unknown"
#endif

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define JSON_SCHEMA 2

/* ---- configuration ---- */

enum bench_format { BF_ARM_S2, BF_EPT4, BF_EPT5 };

static const char *const format_names[] = { "arm-s2", "ept4", "ept5" };

static struct {
	enum bench_format format;
	uint32_t granule;
	unsigned size_shift;
	int reps;
	bool json;
	const char *only;
	struct slat_config cfg;
	struct slat_geometry geo;
} opt = { BF_ARM_S2, 4096, 0, 7, false, NULL, { 0 }, { 0 } };

/* The peer's configuration: its figures are shown only there. */
static bool peer_config(void)
{
	return opt.format == BF_ARM_S2 && opt.granule == 4096;
}

static uint64_t lsize(int level)
{
	return (uint64_t)opt.granule
	       << (opt.geo.bits_per_level * (unsigned)(SLAT_LAST_LEVEL - level));
}

static bool leaf_ok(int level)
{
	return level >= 0 && level >= opt.geo.start_level &&
	       level <= SLAT_LAST_LEVEL &&
	       (opt.geo.leaf_levels & (1u << level));
}

static unsigned log2u(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

/* ---- scenarios ---- */

/* How the range is mapped: before the timed operation, or by it. */
enum layout {
	LAY_NONE,
	LAY_PAGES,  /* last-level pages (4K at 4K) */
	LAY_L2,     /* level-2 blocks (2M at 4K, 32M at 16K, 512M at 64K) */
	LAY_L1,     /* level-1 blocks (1G at 4K; none at 16K/64K, 40 bits) */
	LAY_BIG,    /* the largest leaf the configuration has */
};

enum op {
	OP_MAP,            /* one call */
	OP_MAP_EACH_SHARED,/* one call per leaf, SLAT_SHARED (a vCPU fault) */
	OP_MAP_EACH,       /* one call per leaf, exclusive */
	OP_UNMAP,          /* one call, SLAT_FLUSH_RANGE */
	OP_UNMAP_LEAVES,   /* one call per table, all but its first page */
	OP_SPLIT,          /* to pages */
	OP_SPLIT_NO_SKIP,  /* to pages, walking every level */
	OP_WRPROTECT,      /* SLAT_FLUSH_RANGE */
	OP_AGE,            /* test and clear the access flag */
	OP_PROMOTE,        /* recover: promote to level-2 blocks, FLUSH_VMID */
};

enum floor_kind { FLOOR_STORE, FLOOR_STORE_ZERO, FLOOR_LOAD };

static const char *const floor_names[] = { "store", "store-zero", "load" };

enum target_kind {
	TGT_NONE,
	TGT_NS,             /* ns/leaf <= a */
	TGT_NS_AND_FLOOR,   /* ns/leaf <= a and x floor <= b */
	TGT_FLOOR,          /* x floor <= b */
	TGT_VISITED_PEER,   /* visited <= a and >= b x faster than the peer
			       (other configurations: <= the minimal walk) */
};

struct scenario {
	const char *id, *key;
	const char *title;       /* %s: the size, %s: the leaf size */
	uint64_t size;           /* nominal bytes, before --size-shift */
	uint64_t ipa;            /* where the range starts */
	enum layout before;      /* mapped before the clock starts */
	enum layout after;       /* the layout the operation leaves */
	enum op op;
	enum floor_kind floor;
	double peer_ns, peer_x;  /* 0: no figure */
	const char *peer_src;
	enum target_kind tk;
	double ta, tb;
	bool extra;
	const char *note;
};

static const struct scenario scenarios[] = {
	{ "1", "map_pages", "map %s as %s pages in one call (SLAT_MAP_PAGES)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP, FLOOR_STORE,
	  13.5, 48, "peer-figures.md", TGT_NS_AND_FLOOR, 1.0, 3.0, false,
	  NULL },
	{ "2", "fault_path", "map %s as %s pages, one call per page, "
	  "SLAT_SHARED (the fault path)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP_EACH_SHARED, FLOOR_STORE,
	  39.4, 139, "peer-figures.md", TGT_NS, 15.0, 0, false, NULL },
	{ "3", "unmap_pages", "unmap %s of %s pages in one call "
	  "(SLAT_FLUSH_RANGE)",
	  GIB, GIB, LAY_PAGES, LAY_NONE, OP_UNMAP, FLOOR_STORE_ZERO,
	  6.95, 25, "peer-figures.md", TGT_NS, 1.5, 0, false,
	  "whole tables are unlinked with one store each: see 12 for the "
	  "per-leaf cost" },
	{ "4", "map_l2_blocks", "map %s as %s blocks in one call",
	  16 * GIB, 16 * GIB, LAY_NONE, LAY_L2, OP_MAP, FLOOR_STORE,
	  0, 0, NULL, TGT_NONE, 0, 0, false, NULL },
	{ "5", "split_l2_blocks", "split %s of %s blocks into pages",
	  16 * GIB, 16 * GIB, LAY_L2, LAY_PAGES, OP_SPLIT, FLOOR_STORE,
	  13.8, 45, "peer-figures.md", TGT_NS, 1.5, 0, false, NULL },
	{ "6", "split_l1_blocks", "split %s of %s blocks into pages",
	  16 * GIB, 16 * GIB, LAY_L1, LAY_PAGES, OP_SPLIT, FLOOR_STORE,
	  14.1, 0, "issue 10", TGT_NS, 1.5, 0, false, NULL },
	{ "7", "split_already_split", "split %s that is already %s pages "
	  "(nothing to do)",
	  16 * GIB, 16 * GIB, LAY_PAGES, LAY_PAGES, OP_SPLIT, FLOOR_LOAD,
	  3.6, 11.5, "peer-figures.md", TGT_VISITED_PEER, 8200, 100.0, false,
	  NULL },
	{ "8", "wrprotect", "write-protect %s of %s pages (SLAT_FLUSH_RANGE)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_WRPROTECT, FLOOR_STORE,
	  4.0, 14, "peer-figures.md", TGT_NS, 1.0, 0, false, NULL },
	{ "9", "test_clear_young", "test and clear the access flag over %s "
	  "of %s pages (all young)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_AGE, FLOOR_STORE,
	  2.65, 9.4, "peer-figures.md", TGT_NS, 1.0, 0, false, NULL },
	{ "10", "promote", "recover (promote) %s of %s pages into level-2 "
	  "blocks (SLAT_FLUSH_VMID)",
	  16 * GIB, 16 * GIB, LAY_PAGES, LAY_L2, OP_PROMOTE, FLOOR_LOAD,
	  0, 0, NULL, TGT_FLOOR, 0, 3.0, false, NULL },
	{ "11", "map_big_blocks", "map %s with %s blocks (the largest) in one "
	  "call",
	  64 * GIB, 64 * GIB, LAY_NONE, LAY_BIG, OP_MAP, FLOOR_STORE,
	  0, 0, NULL, TGT_NONE, 0, 0, true, NULL },
	{ "12", "unmap_leaf_by_leaf", "unmap %s of %s pages but the first of "
	  "each table, one call per table (SLAT_FLUSH_RANGE)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_UNMAP_LEAVES, FLOOR_STORE_ZERO,
	  0, 0, NULL, TGT_NONE, 0, 0, true,
	  "no table goes as a whole: every leaf is cleared (compare with 3)" },
	{ "13", "fault_path_exclusive", "map %s as %s pages, one call per "
	  "page, exclusive (compare with 2)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP_EACH, FLOOR_STORE,
	  0, 0, NULL, TGT_NONE, 0, 0, true, NULL },
	{ "14", "split_already_split_no_skip", "split %s that is already %s "
	  "pages, walking every level (SLAT_SPLIT_NO_SKIP, compare with 7)",
	  16 * GIB, 16 * GIB, LAY_PAGES, LAY_PAGES, OP_SPLIT_NO_SKIP,
	  FLOOR_LOAD, 0, 0, NULL, TGT_NONE, 0, 0, true, NULL },
};

#define NR_SC ((int)(sizeof(scenarios) / sizeof(scenarios[0])))

static int layout_level(enum layout l)
{
	switch (l) {
	case LAY_PAGES: return SLAT_LAST_LEVEL;
	case LAY_L2: return 2;
	case LAY_L1: return 1;
	case LAY_BIG:
		for (int lv = opt.geo.start_level; lv <= SLAT_LAST_LEVEL; lv++)
			if (leaf_ok(lv))
				return lv;
		return SLAT_LAST_LEVEL;
	case LAY_NONE:
	default: return -99;
	}
}

static const char *size_name(uint64_t b, char buf[32])
{
	if (b >= GIB && !(b % GIB))
		snprintf(buf, 32, "%" PRIu64 " GiB", b >> 30);
	else if (b >= MIB && !(b % MIB))
		snprintf(buf, 32, "%" PRIu64 " MiB", b >> 20);
	else
		snprintf(buf, 32, "%" PRIu64 " KiB", b >> 10);
	return buf;
}

static const char *leaf_name(uint64_t b, char buf[32])
{
	if (b >= GIB)
		snprintf(buf, 32, "%" PRIu64 "G", b >> 30);
	else if (b >= MIB)
		snprintf(buf, 32, "%" PRIu64 "M", b >> 20);
	else
		snprintf(buf, 32, "%" PRIu64 "K", b >> 10);
	return buf;
}

/* Why a scenario cannot run in this configuration, or NULL. */
static const char *unsupported(const struct scenario *sc)
{
	if ((sc->before == LAY_L1 || sc->after == LAY_L1) && !leaf_ok(1))
		return "no level-1 blocks in this configuration";
	return NULL;
}

/* The size a scenario runs on: nominal >> --size-shift, at least one
 * last-level table's span and one leaf of each layout it involves. */
static uint64_t sc_size(const struct scenario *sc)
{
	uint64_t s = sc->size >> opt.size_shift, min = lsize(2);
	enum layout lays[2] = { sc->before, sc->after };

	for (int i = 0; i < 2; i++)
		if (lays[i] != LAY_NONE && lsize(layout_level(lays[i])) > min)
			min = lsize(layout_level(lays[i]));
	return s > min ? s : min;
}

/* ---- results ---- */

struct result {
	bool ran;
	uint64_t size, leaves;
	double median_ns, min_ns;     /* per leaf */
	double run_ns;                /* median per run */
	double floor_ns;              /* per entry, median */
	struct slat_stats st;         /* of the last timed run */
	uint64_t table_pages;         /* live after the operation, root included */
	uint64_t mapped;              /* bytes mapped after the operation */
	uint64_t min_pages;           /* minimal tables for that layout */
	uint64_t min_walk;            /* entries above the leaf level (7) */
	uint64_t skip_walk;           /* the same, less the tables known to
					 hold no block (7, exact) */
	bool has_target, pass;
	char target_text[128];
	int failures;
	char failure[8][160];
};

static void fail_check(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail_check(struct result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failures < 8) {
		va_start(ap, fmt);
		vsnprintf(r->failure[r->failures], sizeof(r->failure[0]), fmt,
			  ap);
		va_end(ap);
	}
	r->failures++;
}

/* ---- environment ---- */

struct env {
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	struct slat_stats vcpu;  /* the shared calls' own counters */
};

#define MAP_PA_OFF 0x8000000000ull  /* PA = IPA + this */
#define MAP_ATTRS  (SLAT_RW | SLAT_MT_NORMAL)

static void die(const char *what, int rc)
{
	fprintf(stderr, "slat-bench: %s: %s (%d)\n", what, slat_strerror(rc),
		rc);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The clock around the timed region; @collect: the run callgrind counts. */
static uint64_t clock_start(bool collect)
{
	uint64_t t = now_ns();

	if (collect)
		CALLGRIND_TOGGLE_COLLECT;
	return t;
}

static uint64_t clock_stop(bool collect)
{
	if (collect)
		CALLGRIND_TOGGLE_COLLECT;
	return now_ns();
}

static void env_init(struct env *e)
{
	/* Tables for 16 GiB of 4K pages are 32 MiB; a split's worst-case
	 * cache as much again. Memory is committed as it is touched. */
	uint64_t arena = 256 * MIB;
	int rc;

	memset(e, 0, sizeof(*e));
	rc = slat_hosted_init(&e->h, arena, opt.granule, 0xf000000000ull);
	if (rc < 0)
		die("slat_hosted_init", rc);
	/* its shared scenarios run on this thread alone */
	rc = slat_table_init(&e->t, &opt.cfg, slat_hosted_ops_serial(), &e->h);
	if (rc < 0)
		die("slat_table_init", rc);
	e->h.table = &e->t;
	rc = slat_hosted_cache_init(&e->cache, e->h.nr_pages);
	if (rc < 0)
		die("slat_hosted_cache_init", rc);
}

static void env_fini(struct env *e)
{
	slat_hosted_cache_drain(&e->h, &e->cache);
	slat_hosted_cache_fini(&e->cache);
	slat_table_destroy(&e->t);
	if (slat_hosted_table_pages(&e->h) || e->h.double_frees) {
		fprintf(stderr, "slat-bench: %" PRIu64 " table pages leaked, "
			"%" PRIu64 " double frees\n",
			slat_hosted_table_pages(&e->h), e->h.double_frees);
		exit(1);
	}
	slat_hosted_fini(&e->h);
}

/* Exactly the pages the operation takes; @flags: a map's (its leaf sizes). */
static void topup(struct env *e, enum slat_op_kind op, uint64_t ipa,
		  uint64_t size, uint32_t flags)
{
	int64_t need = slat_pages_needed(
		&e->t, SLAT_NEED(.kind = op, .ipa = slat_ipa(ipa), .size = size,
				 .pa = slat_pa(MAP_PA_OFF + ipa),
				 .attrs = MAP_ATTRS, .flags = flags));
	int rc;

	if (need < 0)
		die("slat_pages_needed", (int)need);
	if (need > e->cache.capacity) {
		fprintf(stderr, "slat-bench: needs %" PRIu64 " pages, the "
			"cache holds %" PRIu32 "\n", need, e->cache.capacity);
		exit(1);
	}
	rc = slat_hosted_cache_topup(&e->h, &e->cache, (uint32_t)need);
	if (rc < 0)
		die("page cache top-up", rc);
}

static uint32_t layout_flags(enum layout l)
{
	switch (l) {
	case LAY_PAGES: return SLAT_MAP_PAGES;
	case LAY_L2: return SLAT_MAP_CAP(log2u(lsize(2)));
	case LAY_L1: return SLAT_MAP_CAP(log2u(lsize(1)));
	default: return 0;
	}
}

static void map_layout(struct env *e, enum layout l, uint64_t ipa,
		       uint64_t size)
{
	int rc;

	topup(e, SLAT_OP_MAP, ipa, size, layout_flags(l));
	rc = slat_map(&e->t, slat_ipa(ipa), size, slat_pa(MAP_PA_OFF + ipa),
		      MAP_ATTRS,
		      SLAT_OP(.flags = layout_flags(l), .cache = &e->cache));
	if (rc != SLAT_OK)
		die("map (setup)", rc);
}

static void unmap_all(struct env *e, uint64_t ipa, uint64_t size)
{
	int rc;

	topup(e, SLAT_OP_UNMAP, ipa, size, 0);
	rc = slat_unmap(&e->t, slat_ipa(ipa), size,
			SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &e->cache));
	if (rc < 0)
		die("unmap (teardown)", rc);
}

/* The minimal number of table pages (root included) for leaves at
 * @leaf_level over [ipa, ipa + size). */
static uint64_t min_tables(int leaf_level, uint64_t ipa, uint64_t size)
{
	uint64_t n = opt.geo.root_pages, last = ipa + size - 1;

	for (int l = opt.geo.start_level + 1; l <= leaf_level; l++) {
		uint64_t span = lsize(l - 1);

		n += last / span - ipa / span + 1;
	}
	return n;
}

/* Entries a walk reads at levels [start_level, @below) over the range. */
static uint64_t walk_above(uint64_t ipa, uint64_t size, int below)
{
	uint64_t n = 0, last = ipa + size - 1;

	for (int l = opt.geo.start_level; l < below; l++)
		n += last / lsize(l) - ipa / lsize(l) + 1;
	return n;
}

/* Entries a walk must read to find every block larger than a page when it
 * knows nothing about the tables: every level above the last. */
static uint64_t min_walk(uint64_t ipa, uint64_t size)
{
	return walk_above(ipa, size, SLAT_LAST_LEVEL);
}

/* What libslat's split reads in memory mapped as pages: the non-root
 * tables above the last level hold no block, and their words say so, so
 * their entries are not read (the root's always are). */
static uint64_t skip_walk(uint64_t ipa, uint64_t size)
{
	int below = SLAT_LAST_LEVEL - 1;

	if (below <= opt.geo.start_level)
		below = opt.geo.start_level + 1;
	return walk_above(ipa, size, below);
}

/* ---- the floor ---- */

/*
 * @n 8-byte entries of a buffer of n * 8 bytes, each a volatile (so plain,
 * one-instruction, never merged or vectorised) store of a descriptor-like
 * value, of zero, or a load. One sample is taken right after each timed run
 * of the scenario, so that both see the same load on the machine; a sample
 * follows one untimed pass and repeats the pass until it covers at least
 * 2^18 entries.
 */
struct floor {
	volatile uint64_t *buf;
	uint64_t n, passes;
	enum floor_kind kind;
	uint64_t sink;
};

static void floor_init(struct floor *f, uint64_t n, enum floor_kind kind)
{
	void *p;

	if (posix_memalign(&p, 4096, n * sizeof(uint64_t)))
		die("floor buffer", SLAT_E_NOMEM);
	memset(p, 0x11, n * sizeof(uint64_t));
	f->buf = p;
	f->n = n;
	f->kind = kind;
	f->passes = n >= (1u << 18) ? 1 : (1u << 18) / n;
	f->sink = 0;
}

/* ns for f->passes passes, after one untimed pass (warm, as the table
 * pages are: the page cache was just filled with zeroed pages). */
static uint64_t floor_sample(struct floor *f)
{
	volatile uint64_t *buf = f->buf;
	uint64_t n = f->n, sink = 0, t0 = 0;

	for (uint64_t q = 0; q <= f->passes; q++) {
		if (q == 1)
			t0 = now_ns();
		switch (f->kind) {
		case FLOOR_STORE: {
			uint64_t pte = MAP_PA_OFF | 0x7ff;

			for (uint64_t i = 0; i < n; i++, pte += 4096)
				buf[i] = pte;
			break;
		}
		case FLOOR_STORE_ZERO:
			for (uint64_t i = 0; i < n; i++)
				buf[i] = 0;
			break;
		case FLOOR_LOAD:
			for (uint64_t i = 0; i < n; i++)
				sink += buf[i];
			break;
		}
	}
	t0 = now_ns() - t0;
	f->sink += sink;
	return t0;
}

static void floor_fini(struct floor *f)
{
	__asm__ volatile("" : : "r"(f->sink));
	free((void *)f->buf);
}

/* ---- checks ---- */

static void check_leaves(struct env *e, struct result *r, uint64_t ipa,
			 uint64_t size, int level, const char *what)
{
	uint64_t leaf = lsize(level);
	uint64_t probes[3] = { ipa, ipa + size / leaf / 2 * leaf,
			       ipa + size - leaf };

	for (int i = 0; i < 3; i++) {
		struct slat_leaf lf;
		int rc = slat_lookup(&e->t, slat_ipa(probes[i]), &lf);

		if (rc < 0 || slat_pa_v(lf.pa) != MAP_PA_OFF + probes[i] ||
		    lf.size != leaf) {
			fail_check(r, "%s: IPA 0x%" PRIx64 " looks up as %d, PA "
				   "0x%" PRIx64 ", leaf %" PRIu64 " bytes",
				   what, probes[i], rc, slat_pa_v(lf.pa),
				   rc < 0 ? 0 : lf.size);
			return;
		}
	}
}

static void check_attr(struct env *e, struct result *r, uint64_t ipa,
		       uint32_t must_clear, const char *what)
{
	struct slat_leaf lf;
	int rc = slat_lookup(&e->t, slat_ipa(ipa), &lf);

	if (rc < 0 || (lf.attrs & must_clear))
		fail_check(r, "%s: attributes 0x%x after the operation", what,
			   rc < 0 ? 0 : lf.attrs);
}

static void check_eq(struct result *r, const char *what, uint64_t got,
		     uint64_t want)
{
	if (got != want)
		fail_check(r, "%s is %" PRIu64 ", expected %" PRIu64, what, got,
			   want);
}

static uint64_t tlbis(const struct slat_stats *s)
{
	uint64_t n = 0;

	for (int i = 0; i < SLAT_TLBI_KINDS; i++)
		n += s->tlbi[i];
	return n;
}

static uint64_t writes(const struct slat_stats *s)
{
	uint64_t n = 0;

	for (int i = 0; i < SLAT_WRITE_KINDS; i++)
		n += s->written[i];
	return n;
}

/* The exact work each operation must do, from its semantics. */
static void check_counts(const struct scenario *sc, struct result *r,
			 uint64_t tables_before)
{
	const struct slat_stats *s = &r->st;
	bool arm = opt.format == BF_ARM_S2;
	uint64_t size = r->size, leaf_after;
	int lvl_after = sc->after == LAY_NONE ? SLAT_LAST_LEVEL :
						layout_level(sc->after);

	leaf_after = lsize(lvl_after);
	check_eq(r, "retries", s->retries, 0);
	check_eq(r, "table pages live", r->table_pages, r->min_pages);
	check_eq(r, "pages allocated - freed",
		 s->pages_alloc - s->pages_freed,
		 r->table_pages - tables_before);
	check_eq(r, "i-cache calls", s->icache_calls, 0);
	switch (sc->op) {
	case OP_MAP:
	case OP_MAP_EACH:
	case OP_MAP_EACH_SHARED:
		check_eq(r, "leaf writes", s->written[SLAT_WRITE_LEAF],
			 size / leaf_after);
		check_eq(r, "table writes", s->written[SLAT_WRITE_TABLE],
			 s->pages_alloc);
		check_eq(r, "other writes", writes(s) - s->written[SLAT_WRITE_LEAF] -
			 s->written[SLAT_WRITE_TABLE], 0);
		check_eq(r, "TLB invalidations", tlbis(s), 0);
		check_eq(r, "D-cache bytes", s->dcache_bytes, arm ? size : 0);
		if (sc->op != OP_MAP)
			check_eq(r, "visited per call",
				 s->visited / r->leaves,
				 (uint64_t)(SLAT_LAST_LEVEL -
					    opt.geo.start_level + 1));
		break;
	case OP_UNMAP:
		check_eq(r, "leaf and attribute writes",
			 s->written[SLAT_WRITE_LEAF] + s->written[SLAT_WRITE_ATTR],
			 0);
		check_eq(r, "by-IPA invalidations",
			 s->tlbi[SLAT_TLBI_IPA] + s->tlbi[SLAT_TLBI_IPA_LOCAL], 0);
		if (tlbis(s) < 1)
			fail_check(r, "no TLB invalidation after unmap");
		/* Without FWB the memory is cleaned and invalidated after the
		 * invalidation: one contiguous run. */
		check_eq(r, "D-cache calls", s->dcache_calls, arm ? 1 : 0);
		check_eq(r, "D-cache bytes", s->dcache_bytes, arm ? size : 0);
		break;
	case OP_UNMAP_LEAVES:
		check_eq(r, "clears", s->written[SLAT_WRITE_CLEAR], r->leaves);
		check_eq(r, "other writes", writes(s) -
			 s->written[SLAT_WRITE_CLEAR], 0);
		/* One per call: a range on Arm, the whole VMID on EPT. */
		check_eq(r, "range and VMID invalidations",
			 s->tlbi[SLAT_TLBI_RANGE] + s->tlbi[SLAT_TLBI_VMID],
			 size / lsize(2));
		/* One contiguous run per call. */
		check_eq(r, "D-cache calls", s->dcache_calls,
			 arm ? size / lsize(2) : 0);
		check_eq(r, "D-cache bytes", s->dcache_bytes,
			 arm ? r->leaves * lsize(SLAT_LAST_LEVEL) : 0);
		break;
	case OP_SPLIT:
	case OP_SPLIT_NO_SKIP:
		if (sc->before == LAY_PAGES) {
			check_eq(r, "writes", writes(s), 0);
			check_eq(r, "TLB invalidations", tlbis(s), 0);
			if (sc->op == OP_SPLIT)
				check_eq(r, "entries visited", s->visited,
					 r->skip_walk);
			else if (s->visited < r->leaves)
				fail_check(r, "visited %" PRIu64 " < leaves",
					   s->visited);
		} else {
			uint64_t blocks = size / lsize(layout_level(sc->before));

			check_eq(r, "leaf writes", s->written[SLAT_WRITE_LEAF],
				 r->leaves);
			check_eq(r, "break writes", s->written[SLAT_WRITE_BREAK],
				 arm ? blocks : 0);
			check_eq(r, "by-IPA invalidations",
				 s->tlbi[SLAT_TLBI_IPA], arm ? blocks : 0);
		}
		check_eq(r, "D-cache calls", s->dcache_calls, 0);
		break;
	case OP_WRPROTECT:
		check_eq(r, "attribute writes", s->written[SLAT_WRITE_ATTR],
			 r->leaves);
		check_eq(r, "other writes", writes(s) -
			 s->written[SLAT_WRITE_ATTR], 0);
		check_eq(r, "by-IPA invalidations",
			 s->tlbi[SLAT_TLBI_IPA] + s->tlbi[SLAT_TLBI_IPA_LOCAL], 0);
		if (tlbis(s) < 1)
			fail_check(r, "no TLB invalidation after wrprotect");
		break;
	case OP_AGE:
		check_eq(r, "attribute writes", s->written[SLAT_WRITE_ATTR],
			 r->leaves);
		check_eq(r, "other writes", writes(s) -
			 s->written[SLAT_WRITE_ATTR], 0);
		check_eq(r, "TLB invalidations", tlbis(s), 0);
		break;
	case OP_PROMOTE:
		check_eq(r, "leaf writes", s->written[SLAT_WRITE_LEAF],
			 size / lsize(2));
		check_eq(r, "pages freed", s->pages_freed,
			 tables_before - r->table_pages);
		check_eq(r, "by-IPA invalidations", s->tlbi[SLAT_TLBI_IPA], 0);
		if (s->visited < r->leaves)
			fail_check(r, "visited %" PRIu64 " < leaves %" PRIu64,
				   s->visited, r->leaves);
		break;
	}
}

/* ---- running a scenario ---- */

static int max_level_l2(void *arg, slat_ipa_t ipa)
{
	(void)arg;
	(void)ipa;
	return 2;
}

static void run(const struct scenario *sc, struct result *r)
{
	struct env e;
	uint64_t size = sc_size(sc), ipa = sc->ipa, page = opt.granule;
	uint64_t *samples = calloc((size_t)opt.reps, sizeof(uint64_t));
	uint64_t *fsamples = calloc((size_t)opt.reps, sizeof(uint64_t));
	struct floor fl;
	uint64_t tables_before = 0, span = lsize(2);
	int lvl_before = layout_level(sc->before);

	if (!samples || !fsamples)
		die("samples", SLAT_E_NOMEM);
	memset(r, 0, sizeof(*r));
	r->size = size;
	switch (sc->op) {
	case OP_MAP: case OP_MAP_EACH: case OP_MAP_EACH_SHARED:
		r->leaves = size / lsize(layout_level(sc->after));
		break;
	case OP_UNMAP:
		r->leaves = size / lsize(lvl_before);
		break;
	case OP_UNMAP_LEAVES:
		r->leaves = size / page - size / span;
		break;
	default:
		r->leaves = size / page;
		break;
	}
	env_init(&e);
	floor_init(&fl, r->leaves, sc->floor);

	for (int rep = -1; rep < opt.reps; rep++) {
		uint64_t t0 = 0, t1 = 0;
		int rc = SLAT_OK;
		bool collect = rep == opt.reps - 1;

		/* Untimed: the layout before, the cache for the operation. */
		if (sc->before != LAY_NONE)
			map_layout(&e, sc->before, ipa, size);
		tables_before = slat_hosted_table_pages(&e.h);
		switch (sc->op) {
		case OP_MAP:
			topup(&e, SLAT_OP_MAP, ipa, size, layout_flags(sc->after));
			break;
		case OP_MAP_EACH: case OP_MAP_EACH_SHARED:
			/* Page by page links what one map of pages does. */
			topup(&e, SLAT_OP_MAP, ipa, size, SLAT_MAP_PAGES);
			break;
		case OP_SPLIT: case OP_SPLIT_NO_SKIP:
			topup(&e, SLAT_OP_SPLIT, ipa, size, 0);
			break;
		case OP_WRPROTECT:
			topup(&e, SLAT_OP_WRPROTECT, ipa, size, 0);
			break;
		case OP_UNMAP:
			topup(&e, SLAT_OP_UNMAP, ipa, size, 0);
			break;
		default:
			break;
		}
		slat_stats_reset(&e.t);

		switch (sc->op) {
		case OP_MAP:
			t0 = clock_start(collect);
			rc = slat_map(&e.t, slat_ipa(ipa), size,
				      slat_pa(MAP_PA_OFF + ipa), MAP_ATTRS,
				      SLAT_OP(.flags = layout_flags(sc->after),
					      .cache = &e.cache));
			t1 = clock_stop(collect);
			break;
		case OP_MAP_EACH:
		case OP_MAP_EACH_SHARED: {
			uint32_t fl = sc->op == OP_MAP_EACH_SHARED ? SLAT_SHARED : 0;
			/* A vCPU counts its shared calls in its own counters
			 * (as KVM's vcpu->stat), added to the table's after. */
			memset(&e.vcpu, 0, sizeof(e.vcpu));
			e.cache.stats = &e.vcpu;
			/* ... and keeps its struct slat_op, as its cache. */
			struct slat_op vop = { .flags = fl, .cache = &e.cache };
			t0 = clock_start(collect);
			for (uint64_t a = ipa; a < ipa + size; a += page) {
				rc = slat_map(&e.t, slat_ipa(a), page,
					      slat_pa(MAP_PA_OFF + a),
					      MAP_ATTRS, &vop);
				if (rc != SLAT_OK)
					break;
			}
			t1 = clock_stop(collect);
			e.cache.stats = NULL;
			break;
		}
		case OP_UNMAP:
			t0 = clock_start(collect);
			rc = slat_unmap(&e.t, slat_ipa(ipa), size,
					SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						.cache = &e.cache));
			t1 = clock_stop(collect);
			break;
		case OP_UNMAP_LEAVES:
			t0 = clock_start(collect);
			for (uint64_t a = ipa; a < ipa + size; a += span) {
				rc = slat_unmap(
					&e.t, slat_ipa(a + page), span - page,
					SLAT_OP(.flush = SLAT_FLUSH_RANGE));
				if (rc != SLAT_OK)
					break;
			}
			t1 = clock_stop(collect);
			break;
		case OP_SPLIT:
		case OP_SPLIT_NO_SKIP:
			t0 = clock_start(collect);
			rc = slat_split(
				&e.t, slat_ipa(ipa), size, 0,
				SLAT_OP(.flags = sc->op == OP_SPLIT_NO_SKIP
							 ? SLAT_SPLIT_NO_SKIP
							 : 0,
					.cache = &e.cache));
			t1 = clock_stop(collect);
			break;
		case OP_WRPROTECT:
			t0 = clock_start(collect);
			rc = slat_wrprotect(&e.t, slat_ipa(ipa), size,
					    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						    .cache = &e.cache));
			t1 = clock_stop(collect);
			break;
		case OP_AGE:
			t0 = clock_start(collect);
			rc = slat_test_clear_young(&e.t, slat_ipa(ipa), size,
						   true, NULL);
			t1 = clock_stop(collect);
			if (rc == SLAT_WAS_YOUNG)
				rc = SLAT_OK;
			else if (rc == SLAT_OK)
				fail_check(r, "test_clear_young found nothing "
					   "young");
			break;
		case OP_PROMOTE:
			t0 = clock_start(collect);
			rc = slat_recover(
				&e.t, slat_ipa(ipa), size,
				SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE,
					      .max_level = max_level_l2,
					      .arg = NULL),
				SLAT_OP(.flush = SLAT_FLUSH_VMID));
			t1 = clock_stop(collect);
			break;
		}
		if (rc != SLAT_OK)
			die(sc->key, rc);
		if (rep >= 0)
			samples[rep] = t1 - t0;
		/* The floor, under the same conditions. */
		uint64_t fns = floor_sample(&fl);

		if (rep >= 0)
			fsamples[rep] = fns;

		/* Untimed: what the operation left. */
		slat_stats_read(&e.t, &r->st);
		slat_stats_add(&r->st, &e.vcpu);
		r->table_pages = slat_hosted_table_pages(&e.h);
		switch (sc->op) {
		case OP_UNMAP: {
			struct slat_leaf lf;

			r->mapped = 0;
			r->min_pages = opt.geo.root_pages;
			if (slat_lookup(&e.t, slat_ipa(ipa + size / 2), &lf) !=
			    SLAT_E_NOENT)
				fail_check(r, "still mapped after unmap");
			break;
		}
		case OP_UNMAP_LEAVES: {
			struct slat_leaf lf;

			r->mapped = size / span * page;
			r->min_pages = min_tables(SLAT_LAST_LEVEL, ipa, size);
			check_leaves(&e, r, ipa, page, SLAT_LAST_LEVEL,
				     "first page kept");
			if (slat_lookup(&e.t, slat_ipa(ipa + page), &lf) !=
			    SLAT_E_NOENT)
				fail_check(r, "second page still mapped");
			break;
		}
		default: {
			int lvl = layout_level(sc->after);

			r->mapped = size;
			r->min_pages = min_tables(lvl, ipa, size);
			check_leaves(&e, r, ipa, size, lvl, sc->key);
			if (sc->op == OP_WRPROTECT)
				check_attr(&e, r, ipa + size / 2, SLAT_W,
					   "wrprotect");
			if (sc->op == OP_AGE)
				check_attr(&e, r, ipa + size / 2, SLAT_YOUNG,
					   "test_clear_young");
			break;
		}
		}
		r->min_walk = min_walk(ipa, size);
		r->skip_walk = skip_walk(ipa, size);
		if (rep == opt.reps - 1)
			check_counts(sc, r, tables_before);
		unmap_all(&e, ipa, size);
		if (slat_hosted_table_pages(&e.h) != opt.geo.root_pages)
			fail_check(r, "%" PRIu64 " table pages left after the "
				   "teardown", slat_hosted_table_pages(&e.h) -
				   opt.geo.root_pages);
		slat_hosted_cache_drain(&e.h, &e.cache);
	}
	r->median_ns = (double)median(samples, opt.reps) / (double)r->leaves;
	r->run_ns = r->median_ns * (double)r->leaves;
	r->min_ns = (double)samples[0] / (double)r->leaves;
	r->floor_ns = (double)median(fsamples, opt.reps) /
		      (double)(fl.passes * fl.n);
	floor_fini(&fl);
	env_fini(&e);
	free(samples);
	free(fsamples);

	/* The target. */
	double x = r->median_ns / r->floor_ns;

	r->has_target = true;
	switch (sc->tk) {
	case TGT_NONE:
		r->has_target = false;
		break;
	case TGT_NS:
		snprintf(r->target_text, sizeof(r->target_text),
			 "<= %.1f ns/leaf", sc->ta);
		r->pass = r->median_ns <= sc->ta;
		break;
	case TGT_NS_AND_FLOOR:
		snprintf(r->target_text, sizeof(r->target_text),
			 "<= %.1f ns/leaf and <= %.0fx floor", sc->ta, sc->tb);
		r->pass = r->median_ns <= sc->ta && x <= sc->tb;
		break;
	case TGT_FLOOR:
		snprintf(r->target_text, sizeof(r->target_text),
			 "<= %.0fx floor (one load of every leaf)", sc->tb);
		r->pass = x <= sc->tb;
		break;
	case TGT_VISITED_PEER:
		if (peer_config()) {
			snprintf(r->target_text, sizeof(r->target_text),
				 "<= %.0f entries visited and >= %.0fx "
				 "faster than the peer", sc->ta, sc->tb);
			r->pass = (double)r->st.visited <= sc->ta &&
				  sc->peer_ns / r->median_ns >= sc->tb;
		} else {
			snprintf(r->target_text, sizeof(r->target_text),
				 "<= %" PRIu64 " entries visited", r->min_walk);
			r->pass = r->st.visited <= r->min_walk;
		}
		break;
	}
	r->ran = true;
}

/* ---- output ---- */

static double per_gib(uint64_t pages, uint64_t mapped)
{
	return (double)pages * opt.granule / ((double)mapped / (double)GIB);
}

static void title_of(const struct scenario *sc, const struct result *r,
		     char *buf, size_t n)
{
	char s1[32], s2[32];
	enum layout l = sc->before == LAY_NONE ? sc->after : sc->before;

	snprintf(buf, n, sc->title, size_name(r->size, s1),
		 leaf_name(lsize(layout_level(l)), s2));
}

static void print_text(const struct scenario *sc, const struct result *r)
{
	const struct slat_stats *s = &r->st;
	char title[192];
	double x = r->median_ns / r->floor_ns;
	double us = r->run_ns / 1e3;

	title_of(sc, r, title, sizeof(title));
	printf("\n%2s. %s%s\n", sc->id, title, sc->extra ? " [extra]" : "");
	if (sc->note)
		printf("    (%s)\n", sc->note);
	printf("    %" PRIu64 " leaves: median %.3f ns/leaf, min %.3f "
	       "(median %.1f %s per run)\n", r->leaves, r->median_ns, r->min_ns,
	       us >= 1000 ? us / 1000 : us, us >= 1000 ? "ms" : "us");
	printf("    floor: %.3f ns/entry (%" PRIu64 " plain 8-byte %s) -> "
	       "%.2fx floor\n", r->floor_ns, r->leaves,
	       sc->floor == FLOOR_LOAD ? "loads" :
	       sc->floor == FLOOR_STORE ? "stores" : "stores of zero", x);
	if (sc->peer_ns > 0 && peer_config()) {
		printf("    peer: %.2f ns/leaf", sc->peer_ns);
		if (sc->peer_x > 0)
			printf(" (%.1fx its floor)", sc->peer_x);
		printf(" [%s] -> %.3fx peer (%.1fx %s)\n", sc->peer_src,
		       r->median_ns / sc->peer_ns,
		       r->median_ns <= sc->peer_ns ? sc->peer_ns / r->median_ns :
						     r->median_ns / sc->peer_ns,
		       r->median_ns <= sc->peer_ns ? "faster" : "SLOWER");
	}
	if (r->has_target)
		printf("    target %s: %s\n", r->target_text,
		       r->pass ? "PASS" : "MISS");
	printf("    counts: visited %" PRIu64 "; written leaf %" PRIu64
	       ", table %" PRIu64 ", clear %" PRIu64 ", break %" PRIu64
	       ", attr %" PRIu64 "\n", s->visited, s->written[SLAT_WRITE_LEAF],
	       s->written[SLAT_WRITE_TABLE], s->written[SLAT_WRITE_CLEAR],
	       s->written[SLAT_WRITE_BREAK], s->written[SLAT_WRITE_ATTR]);
	printf("            tlbi ipa %" PRIu64 ", ipa-local %" PRIu64
	       ", range %" PRIu64 ", vmid %" PRIu64 "; d-cache %" PRIu64
	       " calls (%" PRIu64 " bytes), i-cache %" PRIu64 " calls; pages +%"
	       PRIu64 " -%" PRIu64 "; retries %" PRIu64 "\n",
	       s->tlbi[SLAT_TLBI_IPA], s->tlbi[SLAT_TLBI_IPA_LOCAL],
	       s->tlbi[SLAT_TLBI_RANGE], s->tlbi[SLAT_TLBI_VMID],
	       s->dcache_calls, s->dcache_bytes, s->icache_calls,
	       s->pages_alloc, s->pages_freed, s->retries);
	if (r->mapped)
		printf("    memory: %" PRIu64 " table pages live = %.0f bytes "
		       "per GiB mapped (minimal for the layout: %" PRIu64
		       " pages, %.0f bytes per GiB)\n", r->table_pages,
		       per_gib(r->table_pages, r->mapped), r->min_pages,
		       per_gib(r->min_pages, r->mapped));
	else
		printf("    memory: %" PRIu64 " table pages live (the root), "
		       "nothing mapped\n", r->table_pages);
	for (int i = 0; i < r->failures && i < 8; i++)
		printf("    CHECK FAILED: %s\n", r->failure[i]);
}

static void print_summary(const struct result *res)
{
	printf("\nsummary (median ns per leaf entry; x floor; x peer = ours / "
	       "peer's ns)\n");
	printf("  %-3s %-28s %10s %7s %8s %9s %-44s %12s\n", "id", "scenario",
	       "ns/leaf", "x floor", "x peer", "visited", "target",
	       "bytes/GiB");
	for (int i = 0; i < NR_SC; i++) {
		const struct scenario *sc = &scenarios[i];
		const struct result *r = &res[i];
		char peer[16] = "-", mem[24] = "-", tgt[64] = "-";

		if (!r->ran)
			continue;
		if (sc->peer_ns > 0 && peer_config())
			snprintf(peer, sizeof(peer), "%.3f",
				 r->median_ns / sc->peer_ns);
		if (r->mapped)
			snprintf(mem, sizeof(mem), "%.0f",
				 per_gib(r->table_pages, r->mapped));
		if (r->has_target)
			snprintf(tgt, sizeof(tgt), "%s %s",
				 r->pass ? "PASS" : "MISS", r->target_text);
		printf("  %-3s %-28.28s %10.3f %7.2f %8s %9" PRIu64
		       " %-44.44s %12s\n", sc->id, sc->key, r->median_ns,
		       r->median_ns / r->floor_ns, peer, r->st.visited, tgt,
		       mem);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

/*
 * A measured figure: a JSON number, or null when it is not finite (a
 * floor or a run too short for the clock gives a ratio of x / 0), so that
 * the document stays valid whatever the timings were.
 */
static void json_num(int decimals, double v)
{
	if (isfinite(v))
		printf("%.*f", decimals, v);
	else
		printf("null");
}

static void print_json(const struct result *res, const char **skip_reason)
{
	bool first = true;

	printf("{\n  \"bench\": \"slat-bench\",\n  \"schema\": %d,\n"
	       "  \"format\": \"%s\",\n  \"granule\": %" PRIu32 ",\n"
	       "  \"ia_bits\": %u,\n  \"pa_bits\": %u,\n  \"fwb\": false,\n"
	       "  \"reps\": %d,\n  \"size_shift\": %u,\n"
	       "  \"libslat_build_type\": \"%s\",\n  \"compiler\": ",
	       JSON_SCHEMA, format_names[opt.format], opt.granule,
	       opt.geo.ia_bits, opt.geo.pa_bits, opt.reps, opt.size_shift,
	       SLAT_BUILD_TYPE);
	json_str(COMPILER);
	printf(",\n  \"scenarios\": [");
	for (int i = 0; i < NR_SC; i++) {
		const struct scenario *sc = &scenarios[i];
		const struct result *r = &res[i];
		const struct slat_stats *s = &r->st;
		char title[192];

		if (!r->ran)
			continue;
		title_of(sc, r, title, sizeof(title));
		printf("%s\n    {\"id\": \"%s\", \"key\": \"%s\", \"title\": ",
		       first ? "" : ",", sc->id, sc->key);
		first = false;
		json_str(title);
		printf(", \"extra\": %s,\n     \"size_bytes\": %" PRIu64
		       ", \"leaves\": %" PRIu64 ", \"median_ns_per_leaf\": ",
		       sc->extra ? "true" : "false", r->size, r->leaves);
		json_num(4, r->median_ns);
		printf(", \"min_ns_per_leaf\": ");
		json_num(4, r->min_ns);
		printf(", \"median_ns_per_run\": ");
		json_num(0, r->run_ns);
		printf(",\n     \"floor\": {\"kind\": \"%s\", \"ns_per_entry\": ",
		       floor_names[sc->floor]);
		json_num(4, r->floor_ns);
		printf("}, \"ratio_to_floor\": ");
		json_num(3, r->median_ns / r->floor_ns);
		printf(",\n");
		if (sc->peer_ns > 0 && peer_config()) {
			printf("     \"peer\": {\"ns_per_leaf\": %.2f, "
			       "\"ratio_to_floor\": ", sc->peer_ns);
			if (sc->peer_x > 0)
				printf("%.1f", sc->peer_x);
			else
				printf("null");
			printf(", \"source\": \"%s\"}, \"ratio_to_peer\": ",
			       sc->peer_src);
			json_num(4, r->median_ns / sc->peer_ns);
			printf(",\n");
		} else {
			printf("     \"peer\": null, \"ratio_to_peer\": null,\n");
		}
		if (r->has_target) {
			printf("     \"target\": {\"text\": ");
			json_str(r->target_text);
			printf(", \"pass\": %s},\n", r->pass ? "true" : "false");
		} else {
			printf("     \"target\": null,\n");
		}
		printf("     \"counts\": {\"visited\": %" PRIu64
		       ", \"written_leaf\": %" PRIu64
		       ", \"written_table\": %" PRIu64
		       ", \"written_clear\": %" PRIu64
		       ", \"written_break\": %" PRIu64
		       ", \"written_attr\": %" PRIu64
		       ",\n       \"tlbi_ipa\": %" PRIu64
		       ", \"tlbi_ipa_local\": %" PRIu64
		       ", \"tlbi_range\": %" PRIu64 ", \"tlbi_vmid\": %" PRIu64
		       ", \"dcache_calls\": %" PRIu64
		       ", \"dcache_bytes\": %" PRIu64
		       ", \"icache_calls\": %" PRIu64
		       ", \"icache_bytes\": %" PRIu64
		       ",\n       \"pages_alloc\": %" PRIu64
		       ", \"pages_freed\": %" PRIu64
		       ", \"pages_deferred\": %" PRIu64
		       ", \"retries\": %" PRIu64 "},\n",
		       s->visited, s->written[SLAT_WRITE_LEAF],
		       s->written[SLAT_WRITE_TABLE],
		       s->written[SLAT_WRITE_CLEAR],
		       s->written[SLAT_WRITE_BREAK],
		       s->written[SLAT_WRITE_ATTR], s->tlbi[SLAT_TLBI_IPA],
		       s->tlbi[SLAT_TLBI_IPA_LOCAL], s->tlbi[SLAT_TLBI_RANGE],
		       s->tlbi[SLAT_TLBI_VMID], s->dcache_calls,
		       s->dcache_bytes, s->icache_calls, s->icache_bytes,
		       s->pages_alloc, s->pages_freed, s->pages_deferred,
		       s->retries);
		printf("     \"memory\": {\"table_pages\": %" PRIu64
		       ", \"page_bytes\": %" PRIu32 ", \"bytes_mapped\": %" PRIu64
		       ", \"min_table_pages\": %" PRIu64 ", \"bytes_per_gib\": ",
		       r->table_pages, opt.granule, r->mapped, r->min_pages);
		if (r->mapped)
			printf("%.0f, \"min_bytes_per_gib\": %.0f},\n",
			       per_gib(r->table_pages, r->mapped),
			       per_gib(r->min_pages, r->mapped));
		else
			printf("null, \"min_bytes_per_gib\": null},\n");
		printf("     \"check\": {\"pass\": %s, \"failures\": [",
		       r->failures ? "false" : "true");
		for (int f = 0; f < r->failures && f < 8; f++) {
			printf("%s", f ? ", " : "");
			json_str(r->failure[f]);
		}
		printf("]}}");
	}
	printf("\n  ],\n  \"skipped\": [");
	first = true;
	for (int i = 0; i < NR_SC; i++) {
		if (!skip_reason[i])
			continue;
		printf("%s{\"id\": \"%s\", \"reason\": ", first ? "" : ", ",
		       scenarios[i].id);
		json_str(skip_reason[i]);
		putchar('}');
		first = false;
	}
	printf("]\n}\n");
}

static const char usage[] =
"usage: slat-bench [--format arm-s2|ept4|ept5] [--granule 4k|16k|64k]\n"
"                  [--only ID,...] [--reps N] [--size-shift N | --small]\n"
"                  [--json] [--list]\n"
"\n"
"Times libslat's core on the hosted platform (TLB and cache hooks only\n"
"count; page caches are filled before the clock starts). Default: Armv8\n"
"stage 2, 4K granule, 40-bit IPA, no FWB, the configuration of the KVM\n"
"arm64 peer figures. The ten scenarios of the peer (1-10) and extra ones\n"
"(11-14), see --list. Each: one warm-up run, then N timed runs: median and\n"
"min ns per leaf entry, the floor (plain 8-byte stores or loads of as many\n"
"entries, measured here), the peer's figure, the target (PASS/MISS), the\n"
"exact counts of struct slat_stats and the table memory per GiB mapped.\n"
"\n"
"  --format F      arm-s2 (default; 40-bit IPA), ept4 (48-bit), ept5 (57)\n"
"  --granule G     4k (default), 16k or 64k (arm-s2 only)\n"
"  --only LIST     run only these scenarios, e.g. --only 1,2,10\n"
"  --reps N        timed runs per scenario (1..64, default 7)\n"
"  --size-shift N  divide every size by 2^N (at least one table's span)\n"
"  --small         --size-shift 6 --reps 1: a smoke run in well under a\n"
"                  second\n"
"  --json          machine-readable output only (schema: docs/bench.md)\n"
"  --list          the scenarios, then exit\n"
"  -h, --help      this text\n"
"  --version       print slat-bench's version and exit\n"
"The exit status is 1 when a check of what a scenario did fails (never for\n"
"a missed target). See docs/bench.md.\n";

static bool wanted(const char *id)
{
	const char *p = opt.only;
	size_t n = strlen(id);

	if (!p)
		return true;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, id, n))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

static bool only_valid(void)
{
	const char *p = opt.only;

	while (*p) {
		size_t len = strcspn(p, ",");
		bool found = false;

		for (int i = 0; i < NR_SC; i++)
			if (strlen(scenarios[i].id) == len &&
			    !strncmp(p, scenarios[i].id, len))
				found = true;
		if (!found)
			return false;
		p += len;
		if (*p == ',')
			p++;
	}
	return true;
}

int main(int argc, char **argv)
{
	static struct result res[NR_SC];
	const char *skip_reason[NR_SC] = { 0 };
	bool list = false, small = false, reps_set = false;
	int failures = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("slat-bench (slat) %s\n", slat_version());
			return 0;
		} else if (!strcmp(a, "--json")) {
			opt.json = true;
		} else if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--small")) {
			small = true;
		} else if (!strcmp(a, "--reps") && v) {
			opt.reps = atoi(v), i++, reps_set = true;
			if (opt.reps < 1 || opt.reps > 64) {
				fprintf(stderr, "slat-bench: --reps takes 1..64\n");
				return 2;
			}
		} else if (!strcmp(a, "--size-shift") && v) {
			int s = atoi(v);

			i++;
			if (s < 0 || s > 20) {
				fprintf(stderr, "slat-bench: --size-shift takes "
					"0..20\n");
				return 2;
			}
			opt.size_shift = (unsigned)s;
		} else if (!strcmp(a, "--granule") && v) {
			i++;
			if (!strcasecmp(v, "4k"))
				opt.granule = 4096;
			else if (!strcasecmp(v, "16k"))
				opt.granule = 16384;
			else if (!strcasecmp(v, "64k"))
				opt.granule = 65536;
			else {
				fprintf(stderr, "slat-bench: --granule takes 4k, "
					"16k or 64k\n");
				return 2;
			}
		} else if (!strcmp(a, "--format") && v) {
			i++;
			if (!strcmp(v, "arm-s2"))
				opt.format = BF_ARM_S2;
			else if (!strcmp(v, "ept4"))
				opt.format = BF_EPT4;
			else if (!strcmp(v, "ept5"))
				opt.format = BF_EPT5;
			else {
				fprintf(stderr, "slat-bench: --format takes "
					"arm-s2, ept4 or ept5\n");
				return 2;
			}
		} else if (!strcmp(a, "--only") && v) {
			opt.only = v, i++;
			if (!only_valid()) {
				fprintf(stderr, "slat-bench: --only takes "
					"scenario ids (see --list)\n");
				return 2;
			}
		} else {
			fprintf(stderr, "slat-bench: unknown argument %s (see "
				"--help)\n", a);
			return 2;
		}
	}
	if (small) {
		if (!opt.size_shift)
			opt.size_shift = 6;
		if (!reps_set)
			opt.reps = 1;
	}
	if (opt.format != BF_ARM_S2 && opt.granule != 4096) {
		fprintf(stderr, "slat-bench: EPT has only the 4k granule\n");
		return 2;
	}
	opt.cfg = (struct slat_config){
		.format = opt.format == BF_ARM_S2 ? SLAT_FMT_ARM_S2 : SLAT_FMT_EPT,
		.granule = opt.granule,
		.ia_bits = opt.format == BF_ARM_S2 ? 40 :
			   opt.format == BF_EPT4 ? 48 : 57,
		.pa_bits = 48, .features = 0,
	};
	int rc = slat_config_geometry(&opt.cfg, &opt.geo);

	if (rc < 0)
		die("slat_config_geometry", rc);

	if (list) {
		for (int i = 0; i < NR_SC; i++) {
			struct result r = { .size = sc_size(&scenarios[i]) };
			char title[192];

			title_of(&scenarios[i], &r, title, sizeof(title));
			printf("%3s  %-28s %s%s\n", scenarios[i].id,
			       scenarios[i].key, title,
			       scenarios[i].extra ? " [extra]" : "");
		}
		return 0;
	}
	if (!opt.json) {
		printf("slat-bench: libslat core, %s %uK granule, %u-bit IPA, "
		       "no FWB, hosted platform (hooks only count)\n",
		       format_names[opt.format], opt.granule / 1024,
		       opt.geo.ia_bits);
		printf("libslat build: %s; bench: %s -O2; %d timed run%s after "
		       "1 warm-up%s\n", SLAT_BUILD_TYPE, COMPILER, opt.reps,
		       opt.reps == 1 ? "" : "s",
		       opt.size_shift ? "; sizes reduced (--size-shift)" : "");
		if (!peer_config())
			printf("(the peer's figures are for arm-s2 4K only: not "
			       "shown)\n");
		fflush(stdout);
	}
	for (int i = 0; i < NR_SC; i++) {
		const struct scenario *sc = &scenarios[i];

		if (!wanted(sc->id))
			continue;
		skip_reason[i] = unsupported(sc);
		if (skip_reason[i]) {
			if (!opt.json)
				printf("\n%2s. %s: skipped, %s\n", sc->id, sc->key,
				       skip_reason[i]);
			continue;
		}
		run(sc, &res[i]);
		failures += res[i].failures;
		if (!opt.json) {
			print_text(sc, &res[i]);
			fflush(stdout);
		}
	}
	if (opt.json)
		print_json(res, skip_reason);
	else
		print_summary(res);
	if (failures) {
		fprintf(stderr, "slat-bench: %d check%s failed\n", failures,
			failures == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
