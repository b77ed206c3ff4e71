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
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "hosted-env.h"

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

/* Built with KVM's own stage-2 code (make bench-kvm): --kvm runs it in this
 * process beside libslat, on the same scenarios (docs/bench.md). */
#ifdef SLAT_BENCH_KVM_PEER
#include "kvm-peer/kvm-peer.h"
#define HAVE_KVM_PEER 1
#else
#define HAVE_KVM_PEER 0
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
#define JSON_SCHEMA 4

/* ---- configuration ---- */

enum bench_format { BF_ARM_S2, BF_EPT4, BF_EPT5, BF_NPT4, BF_NPT5 };

static const char *const format_names[] = { "arm-s2", "ept4", "ept5",
					     "npt4", "npt5" };

static struct {
	enum bench_format format;
	uint32_t granule;
	unsigned size_shift;
	int reps;
	bool json;
	bool count_floor;  /* callgrind counts the floor, not the operation */
	bool kvm;          /* run KVM's code beside (HAVE_KVM_PEER) */
	bool count_kvm;    /* callgrind counts KVM's run, not ours */
	const char *only;
	const char *cost_out; /* slat-perf's cost file of KVM's code */
	struct slat_config cfg;
	struct slat_geometry geo;
} opt = { BF_ARM_S2, 4096, 0, 9, false, false, false, false, NULL, NULL,
	  { 0 }, { 0 } };

/* The machine's load: on a machine busier than its CPUs the wall clock
 * measures the scheduler too, so the run says so. */
static struct {
	long cpus;
	double before[3], after[3];
	double peak;  /* the highest 1-minute load average seen */
} mach;

static void note_load(double l)
{
	if (l > mach.peak)
		mach.peak = l;
}

static bool loaded(void)
{
	return mach.cpus > 0 && mach.peak > (double)mach.cpus;
}

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
	OP_DIRTY_READ,     /* read the hardware dirty state */
	OP_DIRTY_CLEAR,    /* read and clear it, SLAT_FLUSH_RANGE */
	OP_MAP_SCATTERED,  /* one call per leaf, SLAT_SHARED, the leaves in a
			      seeded random order (faults in other tables) */
};

/* FLOOR_CLAIM: a shared fault's protocol by hand, per entry: CAS 0 -> the
 * locked marker, a call of an empty clean hook, the release store of the
 * leaf. FLOOR_CALL_STORE: an exclusive fault's, the call and a store. */
enum floor_kind { FLOOR_STORE, FLOOR_STORE_ZERO, FLOOR_LOAD, FLOOR_CLAIM,
		  FLOOR_CALL_STORE };

static const char *const floor_names[] = { "store", "store-zero", "load",
					   "claim", "call-store" };

/* Every target is judged on the CPU-time median (the wall clock also
 * measures the scheduler on a loaded machine) and, by bench/callgrind.sh,
 * on instructions per leaf. */
enum target_kind {
	TGT_NONE,
	TGT_PEER_X,         /* >= tv x faster than KVM (arm-s2 4K only) */
	TGT_FLOOR_X,        /* <= tv x the floor */
	TGT_VISITED_PEER,   /* visited <= the walk that knows nothing, and
			       >= tv x faster than KVM (arm-s2 4K only) */
	TGT_HERE_X,         /* >= tv x faster than KVM's code measured in the
			       same run (--kvm), and <= ir_max instructions
			       per leaf (bench/callgrind.sh) */
};

static const char *const target_names[] = { "-", "peer-x", "floor-x",
					     "visited-peer-x", "here-x" };

/* Where KVM's published figures are, with the measurement's setup. */
#define PEER_SRC "docs/PERFORMANCE.md, KVM 2026-12-01"

struct scenario {
	const char *id, *key;
	const char *title;       /* %s: the size, %s: the leaf size */
	uint64_t size;           /* nominal bytes, before --size-shift */
	uint64_t ipa;            /* where the range starts */
	enum layout before;      /* mapped before the clock starts */
	enum layout after;       /* the layout the operation leaves */
	enum op op;
	enum floor_kind floor;
	uint32_t features;       /* SLAT_FEAT_* beyond the bench's own */
	/* KVM's figures as published (PEER_SRC; thread CPU time,
	 * median, and callgrind instructions per leaf; 0: none) and its row */
	double peer_ns, peer_ir;
	const char *peer_row;
	enum target_kind tk;
	double tv;
	bool extra;
	const char *note;
	double ir_max;           /* TGT_HERE_X: instructions per leaf, at most */
};

static const struct scenario scenarios[] = {
	{ "1", "map_pages", "map %s as %s pages in one call (SLAT_MAP_PAGES)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP, FLOOR_STORE, 0,
	  14.7, 251.6, "1 map 1 GiB as 4K, one call", TGT_PEER_X, 30, false,
	  NULL, 0 },
	{ "2", "fault_path", "map %s as %s pages, one call per page, "
	  "SLAT_SHARED (the fault path)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP_EACH_SHARED, FLOOR_CLAIM, 0,
	  46.9, 776.2, "2 fault path: one call per 4K page, shared",
	  TGT_PEER_X, 6, false, NULL, 0 },
	{ "3", "unmap_pages", "unmap %s of %s pages in one call, KVM's duties "
	  "(SLAT_FLUSH_RANGE, no FWB)",
	  GIB, GIB, LAY_PAGES, LAY_NONE, OP_UNMAP, FLOOR_STORE_ZERO, 0,
	  9.90, 125.4, "3 unmap 1 GiB of 4K, KVM's work", TGT_PEER_X, 10,
	  false,
	  "libslat cleans and invalidates every cacheable leaf to the PoC after "
	  "the range TLBI (no stale entry after); whole tables are unlinked "
	  "with one store each: see 12 for the per-leaf clear", 0 },
	{ "4", "map_l2_blocks", "map %s as %s blocks in one call",
	  16 * GIB, 16 * GIB, LAY_NONE, LAY_L2, OP_MAP, FLOOR_STORE, 0,
	  16.2, 264.0, "4 map 16 GiB as 2M blocks", TGT_PEER_X, 30, false,
	  NULL, 0 },
	{ "5", "split_l2_blocks", "split %s of %s blocks into pages",
	  16 * GIB, 16 * GIB, LAY_L2, LAY_PAGES, OP_SPLIT, FLOOR_STORE, 0,
	  16.0, 266.8, "5 split 16 GiB of 2M to 4K", TGT_FLOOR_X, 1.2, false,
	  NULL, 0 },
	{ "6", "split_l1_blocks", "split %s of %s blocks into pages",
	  16 * GIB, 16 * GIB, LAY_L1, LAY_PAGES, OP_SPLIT, FLOOR_STORE, 0,
	  17.7, 266.7, "6 split 16 GiB of 1G to 4K", TGT_FLOOR_X, 1.2, false,
	  NULL, 0 },
	{ "7", "split_already_split", "split %s that is already %s pages "
	  "(nothing to do)",
	  16 * GIB, 16 * GIB, LAY_PAGES, LAY_PAGES, OP_SPLIT, FLOOR_LOAD, 0,
	  5.26, 59.2, "7 split 16 GiB already 4K (KVM walks every level)",
	  TGT_VISITED_PEER, 100, false, NULL, 0 },
	{ "8", "wrprotect", "write-protect %s of %s pages (SLAT_FLUSH_RANGE)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_WRPROTECT, FLOOR_STORE, 0,
	  7.73, 79.2, "8 write-protect 1 GiB of 4K", TGT_PEER_X, 10, false,
	  NULL, 0 },
	{ "9", "test_clear_young", "test and clear the access flag over %s "
	  "of %s pages (all young)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_AGE, FLOOR_STORE, 0,
	  4.63, 58.2, "9 test-and-clear young 1 GiB (all young)", TGT_PEER_X,
	  10, false, NULL, 0 },
	{ "10", "promote", "recover (promote) %s of %s pages into level-2 "
	  "blocks (SLAT_FLUSH_VMID)",
	  16 * GIB, 16 * GIB, LAY_PAGES, LAY_L2, OP_PROMOTE, FLOOR_LOAD, 0,
	  6.58, 66.6, "10 back to 2M (KVM refaults: a different operation)",
	  TGT_FLOOR_X, 2, false, NULL, 0 },
	{ "11", "map_big_blocks", "map %s with %s blocks (the largest) in one "
	  "call",
	  64 * GIB, 64 * GIB, LAY_NONE, LAY_BIG, OP_MAP, FLOOR_STORE, 0,
	  0, 0, NULL, TGT_NONE, 0, true, NULL, 0 },
	{ "12", "unmap_leaf_by_leaf", "unmap %s of %s pages but the first of "
	  "each table, one call per table (SLAT_FLUSH_RANGE)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_UNMAP_LEAVES, FLOOR_STORE_ZERO, 0,
	  0, 0, NULL, TGT_NONE, 0, true,
	  "no table goes as a whole: every leaf is cleared (compare with 3)", 0 },
	{ "13", "fault_path_exclusive", "map %s as %s pages, one call per "
	  "page, exclusive (compare with 2)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP_EACH, FLOOR_CALL_STORE, 0,
	  47.5, 777.2, "2x the same, exclusive", TGT_NONE, 0, true, NULL, 0 },
	{ "14", "split_already_split_no_skip", "split %s that is already %s "
	  "pages, walking every level (SLAT_SPLIT_NO_SKIP, compare with 7)",
	  16 * GIB, 16 * GIB, LAY_PAGES, LAY_PAGES, OP_SPLIT_NO_SKIP,
	  FLOOR_LOAD, 0, 5.26, 59.2,
	  "7 split 16 GiB already 4K, walking every level", TGT_PEER_X, 4,
	  true, NULL, 0 },
	{ "15", "unmap_pages_fwb", "unmap %s of %s pages in one call with FWB "
	  "(SLAT_FLUSH_RANGE, compare with 3)",
	  GIB, GIB, LAY_PAGES, LAY_NONE, OP_UNMAP, FLOOR_STORE_ZERO,
	  SLAT_FEAT_FWB, 6.44, 102.4, "3f unmap, FWB and range TLBI on both",
	  TGT_NONE, 0, true, "FWB: no cache maintenance is needed", 0 },
	{ "16", "dirty_read", "read the hardware dirty state of %s of %s "
	  "pages (all dirty)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_DIRTY_READ, FLOOR_LOAD,
	  SLAT_FEAT_HWDIRTY, 0, 0, NULL, TGT_FLOOR_X, 2, true,
	  "every page written by slat_hw_access() before the clock starts", 0 },
	{ "17", "dirty_read_clear", "read and clear the hardware dirty state "
	  "of %s of %s pages (all dirty, SLAT_FLUSH_RANGE)",
	  GIB, GIB, LAY_PAGES, LAY_PAGES, OP_DIRTY_CLEAR, FLOOR_LOAD,
	  SLAT_FEAT_HWDIRTY, 0, 0, NULL, TGT_FLOOR_X, 2, true,
	  "every page written by slat_hw_access() before the clock starts", 0 },
	{ "18", "fault_path_scattered", "map %s as %s pages, one call per "
	  "page in a seeded random order, SLAT_SHARED (compare with 2)",
	  GIB, GIB, LAY_NONE, LAY_PAGES, OP_MAP_SCATTERED, FLOOR_CLAIM, 0,
	  0, 0, NULL, TGT_HERE_X, 6, true,
	  "consecutive faults fall in different last-level tables, as a "
	  "guest's faults do; KVM's code takes the same pages in the same "
	  "order", 140 },
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
	if ((sc->features & SLAT_FEAT_FWB) && opt.format != BF_ARM_S2)
		return "FWB is an Arm stage-2 feature (EPT has no cache "
		       "maintenance: 3 is the same)";
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

/* A time in both clocks: the thread's CPU time and the wall clock. */
struct tpair {
	uint64_t cpu, wall;
};

/* Per leaf (per entry for the floor) from the samples of both clocks. */
struct figures {
	double median, min;
};

struct result {
	bool ran;
	uint64_t size, leaves;
	struct figures cpu, wall;     /* per leaf */
	double cpu_run, wall_run;     /* median per run */
	struct figures floor_cpu, floor_wall; /* per entry, median */
	uint64_t floor_entries;       /* in one floor sample */
	double load;                  /* 1-minute load average at the start */
	struct slat_stats st;         /* of the last timed run */
	uint64_t table_pages;         /* live after the operation, root included */
	uint64_t mapped;              /* bytes mapped after the operation */
	uint64_t min_pages;           /* minimal tables for that layout */
	uint64_t min_walk;            /* entries above the leaf level (7) */
	uint64_t skip_walk;           /* the same, less the tables known to
					 hold no block (7, exact) */
	int64_t dirty;                /* pages slat_dirty_read() reported */
	bool kvm_ran;                 /* KVM's code ran beside (--kvm) */
	struct figures kvm_cpu, kvm_wall; /* its time per leaf */
	double kvm_x;                 /* median of its CPU time / ours, run
					 by run (each pair ran back to back) */
	uint64_t kvm_tlbis, kvm_dcache, kvm_pages; /* its last run's */
	bool has_target, pass;
	char target_text[160];
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
	uint64_t *bitmap;        /* for slat_dirty_read(): a bit per page */
	size_t words;
	uint32_t *scatter;       /* page indexes in the scattered order */
	/* The order of an unmap's hooks, watched on its warm-up run: KVM's
	 * duty is to clean each leaf after the invalidation that removes it
	 * from every TLB, so that no CPU can refill the line from it. */
	struct {
		uint64_t ipa, size;
		bool covered;    /* a TLBI over the whole range was seen */
		uint64_t early;  /* D-cache calls before it */
	} order;
};

#define MAP_PA_OFF 0x8000000000ull  /* PA = IPA + this */
#define MAP_ATTRS  (SLAT_RW | SLAT_MT_NORMAL)

static void die(const char *what, int rc)
{
	fprintf(stderr, "slat-bench: %s: %s (%d)\n", what, slat_strerror(rc),
		rc);
	exit(1);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The two clocks are read nested, the CPU time outside: the wall interval
 * holds none of the CPU clock's reads, which are system calls (no vDSO
 * serves a thread's CPU time; about 1.3 us each in some virtual machines).
 */
static struct tpair now_start(void)
{
	struct tpair t;

	t.cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t.wall = clock_ns(CLOCK_MONOTONIC);
	return t;
}

static struct tpair now_stop(void)
{
	struct tpair t;

	t.wall = clock_ns(CLOCK_MONOTONIC);
	t.cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return t;
}

/*
 * What an interval holds of the clocks' own reads, the least of many empty
 * ones (calibrate_clocks()): taken off every sample, so that an operation
 * of a few microseconds is not charged a system call's cost, and a floor
 * timed over several passes is not favoured for it.
 */
static struct tpair clock_cost;

static uint64_t less_cost(uint64_t dt, uint64_t cost)
{
	return dt > cost ? dt - cost : 0;
}

static struct tpair elapsed(struct tpair t0, struct tpair t1)
{
	return (struct tpair){ less_cost(t1.cpu - t0.cpu, clock_cost.cpu),
			       less_cost(t1.wall - t0.wall, clock_cost.wall) };
}

static void calibrate_clocks(void)
{
	struct tpair least = { UINT64_MAX, UINT64_MAX };

	for (int i = 0; i < 201; i++) {
		struct tpair t0 = now_start(), t1 = now_stop();

		if (t1.cpu - t0.cpu < least.cpu)
			least.cpu = t1.cpu - t0.cpu;
		if (t1.wall - t0.wall < least.wall)
			least.wall = t1.wall - t0.wall;
	}
	clock_cost = least;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median and minimum of @n samples (sorted in place), divided by @per. */
static struct figures stats_of(uint64_t *v, int n, double per)
{
	struct figures f;

	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	f.median = (n % 2 ? (double)v[n / 2] :
			    ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2) / per;
	f.min = (double)v[0] / per;
	return f;
}

/* The clock around the timed region; @collect: the run callgrind counts. */
static struct tpair clock_start(bool collect)
{
	struct tpair t = now_start();

	if (collect)
		CALLGRIND_TOGGLE_COLLECT;
	return t;
}

static struct tpair clock_stop(bool collect)
{
	if (collect)
		CALLGRIND_TOGGLE_COLLECT;
	return now_stop();
}

/* The load averages of /proc/loadavg (1, 5, 15 minutes); -1 if unreadable
 * (not Linux): the figures are then printed without it. */
static void loadavg(double la[3])
{
	FILE *f = fopen("/proc/loadavg", "r");

	la[0] = la[1] = la[2] = -1;
	if (!f)
		return;
	if (fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3)
		la[0] = la[1] = la[2] = -1;
	fclose(f);
}

static double load1(void)
{
	double la[3];

	loadavg(la);
	return la[0];
}

/* @features: the scenario's own, beyond the bench's configuration. */
/* 0 .. n-1 in a seeded random order (Fisher-Yates, splitmix64): the same
 * order in every run and on every machine. */
static uint32_t *scattered_order(uint64_t n)
{
	uint32_t *v = malloc(n * sizeof(*v));
	uint64_t x = 0x5ca77e5ed;

	if (!v)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull), j, tmp;

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		j = z % (i + 1);
		tmp = v[i], v[i] = v[j], v[j] = (uint32_t)tmp;
	}
	return v;
}

static void env_init(struct env *e, uint32_t features, uint64_t size)
{
	struct slat_config cfg = opt.cfg;
	/* Tables for 16 GiB of 4K pages are 32 MiB; a split's worst-case
	 * cache as much again. Memory is committed as it is touched. */
	uint64_t arena = 256 * MIB;
	const char *what;
	int rc;

	memset(e, 0, sizeof(*e));
	/* its shared scenarios run on this thread alone */
	cfg.features |= features;
	rc = bench_hosted_env(&e->h, &e->t, &e->cache, &cfg, arena, &what);
	if (rc < 0)
		die(what, rc);
	e->words = (size / opt.granule + 63) / 64;
	e->bitmap = calloc(e->words, sizeof(uint64_t));
	e->scatter = scattered_order(size / opt.granule);
	if (!e->bitmap || !e->scatter)
		die("dirty bitmap", SLAT_E_NOMEM);
}

static void env_fini(struct env *e)
{
	free(e->bitmap);
	free(e->scatter);
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

/* The clean hook of the protocol floors: a call the compiler cannot
 * remove, as a platform's hook through slat_mm_ops. */
static __attribute__((noinline)) void floor_hook(void *ctx, uint64_t pa,
						 uint64_t bytes)
{
	__asm__ volatile("" : : "r"(ctx), "r"(pa), "r"(bytes) : "memory");
}

static void (*volatile floor_hook_ptr)(void *, uint64_t, uint64_t) = floor_hook;

/* One pass of a protocol floor. Pass q stores pte + q in each entry, so
 * that pass q + 1's claim, expecting it, succeeds as a fault's does on an
 * empty entry (pass 0, untimed, finds the fill pattern and fails). Without
 * a clean (EPT), as the fault: a CAS of the leaf, or a store. */
static void floor_protocol(struct floor *f, uint64_t q)
{
	uint64_t *buf = (uint64_t *)f->buf;
	void (*hook)(void *, uint64_t, uint64_t) = floor_hook_ptr;
	uint64_t pte = (MAP_PA_OFF | 0x7ff) + q;
	bool clean = opt.format == BF_ARM_S2;

	for (uint64_t i = 0; i < f->n; i++, pte += 4096) {
		uint64_t old = pte - 1;
		bool claim = f->kind == FLOOR_CLAIM;
		if (claim)
			__atomic_compare_exchange_n(&buf[i], &old,
						    clean ? 0x400 : pte, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
		if (clean)
			hook(NULL, pte & ~0xfffull, 4096);
		if (clean || !claim)
			__atomic_store_n(&buf[i], pte, __ATOMIC_RELEASE);
	}
}

/* Both clocks for f->passes passes, after one untimed pass (warm, as the
 * table pages are: the page cache was just filled with zeroed pages);
 * @collect: the sample callgrind counts (--count-floor). */
static struct tpair floor_sample(struct floor *f, bool collect)
{
	volatile uint64_t *buf = f->buf;
	uint64_t n = f->n, sink = 0;
	struct tpair t0 = { 0, 0 };

	for (uint64_t q = 0; q <= f->passes; q++) {
		if (q == 1)
			t0 = clock_start(collect);
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
		case FLOOR_CLAIM:
		case FLOOR_CALL_STORE:
			floor_protocol(f, q);
			break;
		}
	}
	t0 = elapsed(t0, clock_stop(collect));
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

/* The updates in place (8, 9, 16, 17): an attribute store per leaf (none
 * for a read), and no invalidation by IPA: one for the call, or none where
 * a stale entry is harmless (the access flag) or nothing changed. */
static void check_in_place(const struct scenario *sc, struct result *r)
{
	const struct slat_stats *s = &r->st;
	uint64_t attr = sc->op == OP_DIRTY_READ ? 0 : r->leaves;
	uint64_t once = sc->op == OP_WRPROTECT || sc->op == OP_DIRTY_CLEAR;

	check_eq(r, "attribute writes", s->written[SLAT_WRITE_ATTR], attr);
	check_eq(r, "other writes", writes(s) - s->written[SLAT_WRITE_ATTR], 0);
	check_eq(r, "by-IPA invalidations",
		 s->tlbi[SLAT_TLBI_IPA] + s->tlbi[SLAT_TLBI_IPA_LOCAL], 0);
	check_eq(r, "range and VMID invalidations",
		 s->tlbi[SLAT_TLBI_RANGE] + s->tlbi[SLAT_TLBI_VMID], once);
	if (sc->op == OP_DIRTY_READ || sc->op == OP_DIRTY_CLEAR)
		check_eq(r, "dirty pages reported", (uint64_t)r->dirty,
			 r->leaves);
}

/* A split of pages has nothing to do (7, 14); of blocks, it writes every
 * page and, on Arm and NPT, breaks and invalidates each block (NPT: an
 * ASID flush each). */
static void check_split(const struct scenario *sc, struct result *r)
{
	const struct slat_stats *s = &r->st;
	bool arm = opt.format == BF_ARM_S2;
	bool npt = opt.format == BF_NPT4 || opt.format == BF_NPT5;

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
		uint64_t blocks = r->size / lsize(layout_level(sc->before));

		check_eq(r, "leaf writes", s->written[SLAT_WRITE_LEAF],
			 r->leaves);
		check_eq(r, "break writes", s->written[SLAT_WRITE_BREAK],
			 arm || npt ? blocks : 0);
		check_eq(r, "by-IPA invalidations",
			 s->tlbi[SLAT_TLBI_IPA], arm ? blocks : 0);
		check_eq(r, "VMID invalidations",
			 s->tlbi[SLAT_TLBI_VMID], npt ? blocks : 0);
	}
	check_eq(r, "D-cache calls", s->dcache_calls, 0);
}

/* The exact work each operation must do, from its semantics. */
static void check_counts(const struct scenario *sc, struct result *r,
			 uint64_t tables_before)
{
	const struct slat_stats *s = &r->st;
	bool arm = opt.format == BF_ARM_S2;
	bool cmo = arm && !(sc->features & SLAT_FEAT_FWB);
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
	case OP_MAP_SCATTERED:
		check_eq(r, "leaf writes", s->written[SLAT_WRITE_LEAF],
			 size / leaf_after);
		check_eq(r, "table writes", s->written[SLAT_WRITE_TABLE],
			 s->pages_alloc);
		check_eq(r, "other writes", writes(s) - s->written[SLAT_WRITE_LEAF] -
			 s->written[SLAT_WRITE_TABLE], 0);
		check_eq(r, "TLB invalidations", tlbis(s), 0);
		check_eq(r, "D-cache bytes", s->dcache_bytes, arm ? size : 0);
		/* One entry read per fault: the page cache's memo holds the
		 * last table; a descent from the root refills it per table. */
		if (sc->op != OP_MAP && sc->op != OP_MAP_SCATTERED)
			check_eq(r, "visited per call",
				 s->visited / r->leaves, 1);
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
		check_eq(r, "D-cache calls", s->dcache_calls, cmo ? 1 : 0);
		check_eq(r, "D-cache bytes", s->dcache_bytes, cmo ? size : 0);
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
		check_split(sc, r);
		break;
	case OP_WRPROTECT:
	case OP_AGE:
	case OP_DIRTY_READ:
	case OP_DIRTY_CLEAR:
		check_in_place(sc, r);
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

static uint64_t leaves_of(const struct scenario *sc, uint64_t size)
{
	switch (sc->op) {
	case OP_MAP: case OP_MAP_EACH: case OP_MAP_EACH_SHARED:
	case OP_MAP_SCATTERED:
		return size / lsize(layout_level(sc->after));
	case OP_UNMAP:
		return size / lsize(layout_level(sc->before));
	case OP_UNMAP_LEAVES:
		return size / opt.granule - size / lsize(2);
	default:
		return size / opt.granule;
	}
}

/* Every page dirty as the CPU leaves it: the map installed them dirty, so
 * clear that first, then write each page through the emulated walker. */
static void dirty_every_page(struct env *e, uint64_t ipa, uint64_t size)
{
	struct slat_hw_result hr;
	int64_t n = slat_dirty_read(&e->t, slat_ipa(ipa), size, e->bitmap,
				    e->words, true,
				    SLAT_OP(.flush = SLAT_FLUSH_VMID));

	if (n < 0)
		die("dirty_read (setup)", (int)n);
	for (uint64_t a = ipa; a < ipa + size; a += opt.granule) {
		int rc = slat_hw_access(&e->t, slat_ipa(a), SLAT_ACCESS_WRITE,
					&hr);

		if (rc != SLAT_OK || hr.fault != SLAT_FAULT_NONE)
			die("hw_access write (setup)",
			    rc != SLAT_OK ? rc : SLAT_E_INVAL);
	}
}

/* Untimed: the layout before, the cache for the operation, the counters. */
static void prepare(const struct scenario *sc, struct env *e, uint64_t ipa,
		    uint64_t size)
{
	if (sc->before != LAY_NONE)
		map_layout(e, sc->before, ipa, size);
	switch (sc->op) {
	case OP_MAP:
		topup(e, SLAT_OP_MAP, ipa, size, layout_flags(sc->after));
		break;
	case OP_MAP_EACH: case OP_MAP_EACH_SHARED: case OP_MAP_SCATTERED:
		/* Page by page links what one map of pages does. */
		topup(e, SLAT_OP_MAP, ipa, size, SLAT_MAP_PAGES);
		/* A vCPU counts its shared calls in its own counters (as
		 * KVM's vcpu->stat), added to the table's after. */
		memset(&e->vcpu, 0, sizeof(e->vcpu));
		e->cache.stats = &e->vcpu;
		break;
	case OP_SPLIT: case OP_SPLIT_NO_SKIP:
		topup(e, SLAT_OP_SPLIT, ipa, size, 0);
		break;
	case OP_WRPROTECT:
		topup(e, SLAT_OP_WRPROTECT, ipa, size, 0);
		break;
	case OP_UNMAP:
		topup(e, SLAT_OP_UNMAP, ipa, size, 0);
		break;
	case OP_DIRTY_READ: case OP_DIRTY_CLEAR:
		dirty_every_page(e, ipa, size);
		topup(e, SLAT_OP_DIRTY_CLEAR, ipa, size, 0);
		break;
	default:
		break;
	}
	slat_stats_reset(&e->t);
}

static int map_each(struct env *e, uint64_t ipa, uint64_t size, uint32_t fl)
{
	/* ... and keeps its struct slat_op, as its cache. */
	struct slat_op vop = { .flags = fl, .cache = &e->cache };
	uint64_t page = opt.granule;
	int rc = SLAT_OK;

	for (uint64_t a = ipa; a < ipa + size; a += page) {
		rc = slat_map(&e->t, slat_ipa(a), page, slat_pa(MAP_PA_OFF + a),
			      MAP_ATTRS, &vop);
		if (rc != SLAT_OK)
			break;
	}
	return rc;
}

/* The pages of [ipa, ipa + size) in e->scatter, one shared call each. */
static int map_scattered(struct env *e, uint64_t ipa, uint64_t size)
{
	struct slat_op vop = { .flags = SLAT_SHARED, .cache = &e->cache };
	uint64_t page = opt.granule, n = size / page;
	int rc = SLAT_OK;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = ipa + (uint64_t)e->scatter[i] * page;

		rc = slat_map(&e->t, slat_ipa(a), page, slat_pa(MAP_PA_OFF + a),
			      MAP_ATTRS, &vop);
		if (rc != SLAT_OK)
			break;
	}
	return rc;
}

static int unmap_leaves(struct env *e, uint64_t ipa, uint64_t size)
{
	uint64_t page = opt.granule, span = lsize(2);
	int rc = SLAT_OK;

	for (uint64_t a = ipa; a < ipa + size; a += span) {
		rc = slat_unmap(&e->t, slat_ipa(a + page), span - page,
				SLAT_OP(.flush = SLAT_FLUSH_RANGE));
		if (rc != SLAT_OK)
			break;
	}
	return rc;
}

/* The timed operation. Returns a status, or for the dirty reads the
 * count (r->dirty) as SLAT_OK. */
static int operate(const struct scenario *sc, struct env *e, struct result *r,
		   uint64_t ipa, uint64_t size)
{
	int64_t n;

	switch (sc->op) {
	case OP_MAP:
		return slat_map(&e->t, slat_ipa(ipa), size,
				slat_pa(MAP_PA_OFF + ipa), MAP_ATTRS,
				SLAT_OP(.flags = layout_flags(sc->after),
					.cache = &e->cache));
	case OP_MAP_EACH:
		return map_each(e, ipa, size, 0);
	case OP_MAP_EACH_SHARED:
		return map_each(e, ipa, size, SLAT_SHARED);
	case OP_MAP_SCATTERED:
		return map_scattered(e, ipa, size);
	case OP_UNMAP:
		return slat_unmap(&e->t, slat_ipa(ipa), size,
				  SLAT_OP(.flush = SLAT_FLUSH_RANGE,
					  .cache = &e->cache));
	case OP_UNMAP_LEAVES:
		return unmap_leaves(e, ipa, size);
	case OP_SPLIT: case OP_SPLIT_NO_SKIP:
		return slat_split(&e->t, slat_ipa(ipa), size, 0,
				  SLAT_OP(.flags = sc->op == OP_SPLIT_NO_SKIP
							   ? SLAT_SPLIT_NO_SKIP
							   : 0,
					  .cache = &e->cache));
	case OP_WRPROTECT:
		return slat_wrprotect(&e->t, slat_ipa(ipa), size,
				      SLAT_OP(.flush = SLAT_FLUSH_RANGE,
					      .cache = &e->cache));
	case OP_AGE:
		return slat_test_clear_young(&e->t, slat_ipa(ipa), size, true,
					     NULL);
	case OP_PROMOTE:
		return slat_recover(
			&e->t, slat_ipa(ipa), size,
			SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE,
				      .max_level = max_level_l2, .arg = NULL),
			SLAT_OP(.flush = SLAT_FLUSH_VMID));
	case OP_DIRTY_READ: case OP_DIRTY_CLEAR:
		n = slat_dirty_read(&e->t, slat_ipa(ipa), size, e->bitmap,
				    e->words, sc->op == OP_DIRTY_CLEAR,
				    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
					    .cache = &e->cache));
		r->dirty = n;
		return n < 0 ? (int)n : SLAT_OK;
	}
	return SLAT_E_INVAL;
}

static void order_observer(void *arg, const struct slat_hosted_event *ev)
{
	struct env *e = arg;

	if (ev->kind == SLAT_EV_TLBI_VMID ||
	    (ev->kind == SLAT_EV_TLBI_RANGE && ev->addr <= e->order.ipa &&
	     ev->addr + ev->size >= e->order.ipa + e->order.size))
		e->order.covered = true;
	if (ev->kind == SLAT_EV_DCACHE_CLEAN_INVAL && !e->order.covered)
		e->order.early++;
}

static void order_watch(struct env *e, uint64_t ipa, uint64_t size)
{
	e->order.ipa = ipa;
	e->order.size = size;
	e->order.covered = false;
	e->order.early = 0;
	slat_hosted_set_observer(&e->h, order_observer, e);
}

static void order_check(struct env *e, struct result *r)
{
	slat_hosted_set_observer(&e->h, NULL, NULL);
	if (!e->order.covered)
		fail_check(r, "no invalidation covers the unmapped range: a "
			   "stale TLB entry may remain");
	if (e->order.early)
		fail_check(r, "%" PRIu64 " D-cache cleans before the "
			   "invalidation", e->order.early);
}

/* The status of the timed call, as the scenario expects it. */
static int status_ok(const struct scenario *sc, struct result *r, int rc)
{
	if (sc->op != OP_AGE)
		return rc;
	if (rc == SLAT_OK)
		fail_check(r, "test_clear_young found nothing young");
	return rc == SLAT_WAS_YOUNG ? SLAT_OK : rc;
}

static void check_bitmap(const struct env *e, struct result *r)
{
	uint64_t bits = 0;

	for (size_t i = 0; i < e->words; i++)
		bits += (uint64_t)__builtin_popcountll(e->bitmap[i]);
	check_eq(r, "dirty bits in the bitmap", bits, r->leaves);
}

/* Untimed: what the operation left in the table. */
static void check_after(const struct scenario *sc, struct env *e,
			struct result *r, uint64_t ipa, uint64_t size)
{
	uint64_t page = opt.granule, span = lsize(2);
	struct slat_leaf lf;

	r->table_pages = slat_hosted_table_pages(&e->h);
	if (sc->op == OP_UNMAP) {
		r->mapped = 0;
		r->min_pages = opt.geo.root_pages;
		if (slat_lookup(&e->t, slat_ipa(ipa + size / 2), &lf) !=
		    SLAT_E_NOENT)
			fail_check(r, "still mapped after unmap");
		return;
	}
	if (sc->op == OP_UNMAP_LEAVES) {
		r->mapped = size / span * page;
		r->min_pages = min_tables(SLAT_LAST_LEVEL, ipa, size);
		check_leaves(e, r, ipa, page, SLAT_LAST_LEVEL, "first page kept");
		if (slat_lookup(&e->t, slat_ipa(ipa + page), &lf) !=
		    SLAT_E_NOENT)
			fail_check(r, "second page still mapped");
		return;
	}
	r->mapped = size;
	r->min_pages = min_tables(layout_level(sc->after), ipa, size);
	check_leaves(e, r, ipa, size, layout_level(sc->after), sc->key);
	if (sc->op == OP_WRPROTECT)
		check_attr(e, r, ipa + size / 2, SLAT_W, "wrprotect");
	if (sc->op == OP_AGE)
		check_attr(e, r, ipa + size / 2, SLAT_YOUNG, "test_clear_young");
	if (sc->op == OP_DIRTY_CLEAR)
		check_attr(e, r, ipa + size / 2, SLAT_DIRTY, "dirty clear");
	if (sc->op == OP_DIRTY_READ &&
	    (slat_lookup(&e->t, slat_ipa(ipa + size / 2), &lf) < 0 ||
	     !(lf.attrs & SLAT_DIRTY)))
		fail_check(r, "dirty_read without clear cleaned a page");
	if (sc->op == OP_DIRTY_READ || sc->op == OP_DIRTY_CLEAR)
		check_bitmap(e, r);
}

/* ---- KVM's code beside (--kvm) ---- */

/* KVM's code runs the peer's scenarios but promote (KVM refaults) and FWB
 * (the shim has none), in the peer's configuration. */
static bool kvm_here(const struct scenario *sc)
{
	return HAVE_KVM_PEER && opt.kvm && peer_config() &&
	       (sc->peer_row || sc->tk == TGT_HERE_X) &&
	       sc->op != OP_PROMOTE && !sc->features;
}

#if HAVE_KVM_PEER
static struct kvm_peer *kvm;

/* Where KVM maps an IPA. Scenario 4's one call of 2M blocks is given a PA
 * 2M off a 1G boundary, KVM's only way to stop at level 2. */
static uint64_t kvm_pa(const struct scenario *sc, uint64_t ipa)
{
	bool l2_map = sc->op == OP_MAP && sc->after == LAY_L2;

	return MAP_PA_OFF + ipa + (l2_map ? lsize(2) : 0);
}

static void kvm_die(const char *what, int rc)
{
	fprintf(stderr, "slat-bench: KVM's %s failed: %d\n", what, rc);
	exit(1);
}

/* The layout before the clock starts, with KVM's own map: 2M blocks one
 * call each, so that their PAs are slat's. */
static void kvm_layout(enum layout l, uint64_t ipa, uint64_t size)
{
	uint64_t step = l == LAY_L2 ? lsize(2) : size;
	int rc = kvm_peer_topup(kvm, size);

	for (uint64_t a = ipa; !rc && a < ipa + size; a += step)
		rc = kvm_peer_map(kvm, a, step, MAP_PA_OFF + a,
				  l == LAY_PAGES ? KVM_PEER_PAGES
						 : KVM_PEER_BLOCKS, KVM_PEER_RW);
	if (rc)
		kvm_die("map (setup)", rc);
}

static int kvm_operate(const struct scenario *sc, const struct env *e,
		       uint64_t ipa, uint64_t size)
{
	switch (sc->op) {
	case OP_MAP_SCATTERED:
		return kvm_peer_fault_pages(kvm, ipa, e->scatter,
					    size / opt.granule,
					    kvm_pa(sc, ipa), true);
	case OP_MAP:
		return kvm_peer_map(kvm, ipa, size, kvm_pa(sc, ipa),
				    sc->after == LAY_PAGES ? KVM_PEER_PAGES
							   : KVM_PEER_BLOCKS,
				    KVM_PEER_RW);
	case OP_MAP_EACH_SHARED: case OP_MAP_EACH:
		return kvm_peer_fault_each(kvm, ipa, size, kvm_pa(sc, ipa),
					   sc->op == OP_MAP_EACH_SHARED);
	case OP_UNMAP:
		return kvm_peer_unmap(kvm, ipa, size);
	case OP_SPLIT: case OP_SPLIT_NO_SKIP:
		return kvm_peer_split(kvm, ipa, size);
	case OP_WRPROTECT:
		return kvm_peer_wrprotect(kvm, ipa, size);
	case OP_AGE:
		return kvm_peer_test_clear_young(kvm, ipa, size) ? 0 : -ENOENT;
	default:
		return -EINVAL;
	}
}

/* KVM's table against ours, descriptor for descriptor, at every page or,
 * in a range of more than 2^16 pages, at one page of each of 2^16 equal
 * stretches (a different page of each): the same leaf, at the same
 * level, with the same bits; and as many table pages. */
static void kvm_compare(const struct scenario *sc, struct env *e,
			struct result *r, uint64_t ipa, uint64_t size)
{
	uint64_t page = opt.granule, n = size / page;
	uint64_t stretch;

	n = n > 65536 ? 65536 : n;
	stretch = size / n;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = ipa + i * stretch + (i * 4099 * page) % stretch;
		uint64_t off = kvm_pa(sc, a) - (MAP_PA_OFF + a);
		struct kvm_peer_leaf_info k;
		struct slat_leaf lf;
		bool ours = slat_lookup(&e->t, slat_ipa(a), &lf) == SLAT_OK;

		kvm_peer_leaf(kvm, a, &k);
		if (!ours && !(k.pte & 1))
			continue;
		if (ours && (k.pte & 1) && k.level == lf.level &&
		    k.pte - off == lf.pte)
			continue;
		fail_check(r, "IPA 0x%" PRIx64 ": KVM's leaf 0x%016" PRIx64
			   " at level %d, ours 0x%016" PRIx64 " at %d", a,
			   k.pte, k.level, ours ? lf.pte : 0,
			   ours ? lf.level : -1);
		return;
	}
	if (kvm_peer_table_pages(kvm) != slat_hosted_table_pages(&e->h))
		fail_check(r, "KVM's table has %" PRIu64 " pages, ours %" PRIu64,
			   kvm_peer_table_pages(kvm),
			   slat_hosted_table_pages(&e->h));
}

/* One run of KVM's code, timed as ours (right after it, so that both see
 * the same machine); the last one is checked against our table. */
static struct tpair kvm_sample(const struct scenario *sc, struct env *e,
			       struct result *r, bool last)
{
	uint64_t ipa = sc->ipa, size = r->size;
	bool collect = last && opt.count_kvm;
	struct kvm_peer_counts c0, c;
	struct tpair t0;
	int rc;

	rc = kvm_peer_reset(kvm);
	if (rc)
		kvm_die("init", rc);
	if (sc->before != LAY_NONE)
		kvm_layout(sc->before, ipa, size);
	if (sc->op != OP_UNMAP && sc->op != OP_WRPROTECT && sc->op != OP_AGE)
		rc = kvm_peer_topup(kvm, size);
	if (rc)
		kvm_die("memcache top-up", rc);
	kvm_peer_read_counts(kvm, &c0);
	t0 = clock_start(collect);
	rc = kvm_operate(sc, e, ipa, size);
	t0 = elapsed(t0, clock_stop(collect));
	if (rc)
		kvm_die(sc->key, rc);
	if (!last)
		return t0;
	kvm_compare(sc, e, r, ipa, size);
	/* The operation's own counts, without the layout's */
	kvm_peer_read_counts(kvm, &c);
	r->kvm_tlbis = c.tlbi_ipa + c.tlbi_vmid - c0.tlbi_ipa - c0.tlbi_vmid;
	r->kvm_dcache = c.dcache - c0.dcache;
	r->kvm_pages = c.pages_alloc - c0.pages_alloc;
	return t0;
}

static void kvm_start(void)
{
	/* 16 GiB of 4K pages: 32 MiB of tables, a split's cache as much. */
	if (opt.kvm && !(kvm = kvm_peer_create(256 * MIB)))
		die("KVM's table (kvm_peer_create)", SLAT_E_NOMEM);
}

static const char *kvm_source(void)
{
	return kvm_peer_source();
}
#else
static struct tpair kvm_sample(const struct scenario *sc, struct env *e,
			       struct result *r, bool last)
{
	(void)sc, (void)e, (void)r, (void)last;
	return (struct tpair){ 0, 0 };
}

static void kvm_start(void)
{
}

static const char *kvm_source(void)
{
	return "";
}
#endif

/* KVM's CPU ns per leaf: measured here (--kvm), else as published. */
static double kvm_ns(const struct scenario *sc, const struct result *r)
{
	return r->kvm_ran ? r->kvm_cpu.median : sc->peer_ns;
}

/* How many times faster than KVM in CPU time: measured here, the median
 * of the runs' ratios, each of a pair run back to back (the machine's
 * load changes less within a pair than over the runs); else against the
 * published figure. */
static double kvm_over_ours(const struct scenario *sc, const struct result *r)
{
	return r->kvm_ran ? r->kvm_x : sc->peer_ns / r->cpu.median;
}

/* Pass or miss, on the CPU-time median. */
static void judge(const struct scenario *sc, struct result *r)
{
	double x = r->cpu.median / r->floor_cpu.median;
	double kvm_x = kvm_over_ours(sc, r);
	bool peer = peer_config() && sc->peer_ns > 0;
	const char *here = r->kvm_ran ? " here" : "";

	r->has_target = true;
	switch (sc->tk) {
	case TGT_PEER_X:
		if (!peer) {
			r->has_target = false;
			break;
		}
		snprintf(r->target_text, sizeof(r->target_text),
			 ">= %.0fx KVM%s (<= %.2f CPU ns, <= %.1f instr./leaf)",
			 sc->tv, here, kvm_ns(sc, r) / sc->tv,
			 sc->peer_ir / sc->tv);
		r->pass = kvm_x >= sc->tv;
		break;
	case TGT_FLOOR_X:
		snprintf(r->target_text, sizeof(r->target_text),
			 "<= %.1fx the %s floor", sc->tv,
			 sc->floor == FLOOR_LOAD ? "load" : "store");
		r->pass = x <= sc->tv;
		break;
	case TGT_VISITED_PEER:
		if (peer) {
			snprintf(r->target_text, sizeof(r->target_text),
				 "<= %" PRIu64 " entries visited and >= %.0fx "
				 "KVM%s", r->min_walk, sc->tv, here);
			r->pass = r->st.visited <= r->min_walk &&
				  kvm_x >= sc->tv;
		} else {
			snprintf(r->target_text, sizeof(r->target_text),
				 "<= %" PRIu64 " entries visited", r->min_walk);
			r->pass = r->st.visited <= r->min_walk;
		}
		break;
	case TGT_HERE_X:
		/* No published figure: KVM's code in this run is the peer. */
		if (!r->kvm_ran) {
			r->has_target = false;
			break;
		}
		snprintf(r->target_text, sizeof(r->target_text),
			 ">= %.0fx KVM here (<= %.2f CPU ns), <= %.0f "
			 "instr./leaf", sc->tv, kvm_ns(sc, r) / sc->tv,
			 sc->ir_max);
		r->pass = kvm_x >= sc->tv;
		break;
	case TGT_NONE:
	default:
		r->has_target = false;
		break;
	}
}

/* Per run: ours, the floor's and KVM's, in both clocks; KVM's CPU time
 * over ours, x 1000. */
struct samples {
	uint64_t *cpu, *wall, *fcpu, *fwall, *kcpu, *kwall, *kx;
};

static void samples_alloc(struct samples *s)
{
	uint64_t *v = calloc((size_t)opt.reps * 7, sizeof(uint64_t));

	if (!v)
		die("samples", SLAT_E_NOMEM);
	s->cpu = v, s->wall = v + opt.reps;
	s->fcpu = v + 2 * opt.reps, s->fwall = v + 3 * opt.reps;
	s->kcpu = v + 4 * opt.reps, s->kwall = v + 5 * opt.reps;
	s->kx = v + 6 * opt.reps;
}

static void samples_free(struct samples *s)
{
	free(s->cpu);
}

/* One warm-up and opt.reps timed runs, each followed by a floor sample. */
static void run(const struct scenario *sc, struct result *r)
{
	struct env e;
	struct samples sm;
	struct floor fl;
	uint64_t size = sc_size(sc), ipa = sc->ipa, tables_before;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->leaves = leaves_of(sc, size);
	r->load = load1();
	samples_alloc(&sm);
	env_init(&e, sc->features, size);
	floor_init(&fl, r->leaves, sc->floor);
	for (int rep = -1; rep < opt.reps; rep++) {
		bool last = rep == opt.reps - 1;
		bool collect = last && !opt.count_floor && !opt.count_kvm;
		struct tpair t0, dt, ft;
		int rc;

		bool watch = rep < 0 && sc->op == OP_UNMAP;

		prepare(sc, &e, ipa, size);
		tables_before = slat_hosted_table_pages(&e.h);
		if (watch)
			order_watch(&e, ipa, size);
		t0 = clock_start(collect);
		rc = operate(sc, &e, r, ipa, size);
		dt = elapsed(t0, clock_stop(collect));
		e.cache.stats = NULL;
		if (status_ok(sc, r, rc) != SLAT_OK)
			die(sc->key, rc);
		if (watch)
			order_check(&e, r);
		/* The floor, under the same conditions. */
		ft = floor_sample(&fl, last && opt.count_floor);
		if (rep >= 0) {
			sm.cpu[rep] = dt.cpu, sm.wall[rep] = dt.wall;
			sm.fcpu[rep] = ft.cpu, sm.fwall[rep] = ft.wall;
		}
		slat_stats_read(&e.t, &r->st);
		slat_stats_add(&r->st, &e.vcpu);
		check_after(sc, &e, r, ipa, size);
		if (kvm_here(sc)) {
			struct tpair kt = kvm_sample(sc, &e, r, last);

			if (rep >= 0) {
				sm.kcpu[rep] = kt.cpu, sm.kwall[rep] = kt.wall;
				sm.kx[rep] = kt.cpu * 1000 / (dt.cpu ? dt.cpu : 1);
			}
		}
		r->min_walk = min_walk(ipa, size);
		r->skip_walk = skip_walk(ipa, size);
		if (last)
			check_counts(sc, r, tables_before);
		unmap_all(&e, ipa, size);
		if (slat_hosted_table_pages(&e.h) != opt.geo.root_pages)
			fail_check(r, "%" PRIu64 " table pages left after the "
				   "teardown", slat_hosted_table_pages(&e.h) -
				   opt.geo.root_pages);
		slat_hosted_cache_drain(&e.h, &e.cache);
	}
	r->floor_entries = fl.passes * fl.n;
	r->cpu = stats_of(sm.cpu, opt.reps, (double)r->leaves);
	r->wall = stats_of(sm.wall, opt.reps, (double)r->leaves);
	r->cpu_run = r->cpu.median * (double)r->leaves;
	r->wall_run = r->wall.median * (double)r->leaves;
	r->floor_cpu = stats_of(sm.fcpu, opt.reps, (double)r->floor_entries);
	r->floor_wall = stats_of(sm.fwall, opt.reps, (double)r->floor_entries);
	r->kvm_ran = kvm_here(sc);
	r->kvm_cpu = stats_of(sm.kcpu, opt.reps, (double)r->leaves);
	r->kvm_wall = stats_of(sm.kwall, opt.reps, (double)r->leaves);
	r->kvm_x = stats_of(sm.kx, opt.reps, 1000.0).median;
	floor_fini(&fl);
	env_fini(&e);
	samples_free(&sm);
	judge(sc, r);
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

static const char *floor_words(enum floor_kind k)
{
	switch (k) {
	case FLOOR_LOAD: return "plain 8-byte loads";
	case FLOOR_STORE: return "plain 8-byte stores";
	case FLOOR_STORE_ZERO: return "plain 8-byte stores of zero";
	case FLOOR_CLAIM:
		return opt.format == BF_ARM_S2
			? "claims by hand: CAS to the locked marker, a clean "
			  "hook's call, the release store"
			: "claims by hand: a CAS of the leaf (nothing to clean)";
	default:
		return opt.format == BF_ARM_S2
			? "clean hook calls and stores by hand"
			: "stores of the leaf by hand (nothing to clean)";
	}
}

/* The figures of both clocks; targets and ratios are the CPU time's. */
static void print_times(const struct scenario *sc, const struct result *r)
{
	double us = r->cpu_run / 1e3;
	double kvm_x = kvm_over_ours(sc, r);

	printf("    %" PRIu64 " leaves; load average %.2f at the start\n",
	       r->leaves, r->load);
	printf("    CPU time:  median %.3f ns/leaf, min %.3f (median %.1f %s "
	       "per run)\n", r->cpu.median, r->cpu.min,
	       us >= 1000 ? us / 1000 : us, us >= 1000 ? "ms" : "us");
	printf("    wall time: median %.3f ns/leaf, min %.3f\n", r->wall.median,
	       r->wall.min);
	printf("    floor: %.3f CPU ns/entry, %.3f wall (%" PRIu64 " %s) -> "
	       "%.2fx floor (CPU), %.2fx (wall)\n",
	       r->floor_cpu.median, r->floor_wall.median, r->leaves,
	       floor_words(sc->floor), r->cpu.median / r->floor_cpu.median,
	       r->wall.median / r->floor_wall.median);
	if (sc->peer_ns > 0 && peer_config())
		printf("    KVM: %.2f CPU ns/leaf, %.1f instructions/leaf "
		       "[%s, \"%s\"]%s\n", sc->peer_ns, sc->peer_ir, PEER_SRC,
		       sc->peer_row, r->kvm_ran ? "" : " ->");
	if (r->kvm_ran)
		printf("    KVM here (%s, this process, after each of our "
		       "runs): CPU median %.3f ns/leaf, min %.3f; wall median "
		       "%.3f; %" PRIu64 " TLBIs, %" PRIu64 " D-cache calls, %"
		       PRIu64 " table pages ->\n", kvm_source(),
		       r->kvm_cpu.median, r->kvm_cpu.min, r->kvm_wall.median,
		       r->kvm_tlbis, r->kvm_dcache, r->kvm_pages);
	if (sc->peer_ns > 0 && peer_config())
		printf("    %.1fx %s than KVM (CPU%s)\n",
		       kvm_x >= 1 ? kvm_x : 1 / kvm_x,
		       kvm_x >= 1 ? "faster" : "SLOWER",
		       r->kvm_ran ? ", the median of the runs' ratios" : "");
	if (r->has_target)
		printf("    target %s, CPU time: %s\n", r->target_text,
		       r->pass ? "PASS" : "MISS");
}

static void print_text(const struct scenario *sc, const struct result *r)
{
	const struct slat_stats *s = &r->st;
	char title[192];

	title_of(sc, r, title, sizeof(title));
	printf("\n%2s. %s%s\n", sc->id, title, sc->extra ? " [extra]" : "");
	if (sc->note)
		printf("    (%s)\n", sc->note);
	print_times(sc, r);
	if (sc->op == OP_DIRTY_READ || sc->op == OP_DIRTY_CLEAR)
		printf("    dirty pages reported: %" PRId64 "\n", r->dirty);
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
	printf("\nsummary: ns per leaf entry, thread CPU time (median, min) "
	       "and wall (median); x floor and KVM/ours\n"
	       "in CPU time, KVM's CPU ns as published in %s (h: "
	       "measured here, --kvm);\ntargets on the CPU median\n",
	       PEER_SRC);
	printf("  %-3s %-24s %9s %9s %9s %7s %7s %8s %6s %7s  %s\n", "id",
	       "scenario", "cpu med", "cpu min", "wall med", "x floor",
	       "KVM ns", "KVM/ours", "TLBIs", "D-cache", "target");
	for (int i = 0; i < NR_SC; i++) {
		const struct scenario *sc = &scenarios[i];
		const struct result *r = &res[i];
		char kvm[16] = "-", ratio[16] = "-", tgt[sizeof(r->target_text) + 8] = "-";

		if (!r->ran)
			continue;
		if (sc->peer_ns > 0 && peer_config()) {
			snprintf(kvm, sizeof(kvm), "%.2f%s", kvm_ns(sc, r),
				 r->kvm_ran ? "h" : "");
			snprintf(ratio, sizeof(ratio), "%.2fx",
				 kvm_over_ours(sc, r));
		}
		if (r->has_target)
			snprintf(tgt, sizeof(tgt), "%s %s",
				 r->pass ? "PASS" : "MISS", r->target_text);
		printf("  %-3s %-24.24s %9.3f %9.3f %9.3f %7.2f %7s %8s %6"
		       PRIu64 " %7" PRIu64 "  %s\n", sc->id, sc->key,
		       r->cpu.median, r->cpu.min, r->wall.median,
		       r->cpu.median / r->floor_cpu.median, kvm, ratio,
		       tlbis(&r->st), r->st.dcache_calls, tgt);
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

static void json_clock(const struct figures *f, double run)
{
	printf("\"median_ns_per_leaf\": ");
	json_num(4, f->median);
	printf(", \"min_ns_per_leaf\": ");
	json_num(4, f->min);
	printf(", \"median_ns_per_run\": ");
	json_num(0, run);
}

static void json_times(const struct scenario *sc, const struct result *r)
{
	printf(",\n     \"load_average\": ");
	json_num(2, r->load);
	/* The wall clock's fields keep their schema-2 names. */
	printf(", ");
	json_clock(&r->wall, r->wall_run);
	printf(",\n     \"cpu\": {");
	json_clock(&r->cpu, r->cpu_run);
	printf("},\n     \"floor\": {\"kind\": \"%s\", \"entries\": %" PRIu64
	       ", \"ns_per_entry\": ", floor_names[sc->floor], r->floor_entries);
	json_num(4, r->floor_wall.median);
	printf(", \"cpu_ns_per_entry\": ");
	json_num(4, r->floor_cpu.median);
	printf("}, \"ratio_to_floor\": ");
	json_num(3, r->cpu.median / r->floor_cpu.median);
	printf(", \"wall_ratio_to_floor\": ");
	json_num(3, r->wall.median / r->floor_wall.median);
	printf(",\n");
}

static void json_peer_target(const struct scenario *sc, const struct result *r)
{
	if (sc->peer_ns > 0 && peer_config()) {
		printf("     \"peer\": {\"name\": \"KVM\", \"ns_per_leaf\": %.2f, "
		       "\"ir_per_leaf\": %.1f, \"clock\": \"thread-cpu\", "
		       "\"source\": \"%s\", \"row\": ", sc->peer_ns,
		       sc->peer_ir, PEER_SRC);
		json_str(sc->peer_row);
		printf("},\n     \"ratio_to_peer\": ");
		json_num(4, r->cpu.median / sc->peer_ns);
		printf(", \"peer_over_ours\": ");
		json_num(3, sc->peer_ns / r->cpu.median);
		printf(",\n");
	} else {
		printf("     \"peer\": null, \"ratio_to_peer\": null, "
		       "\"peer_over_ours\": null,\n");
	}
	if (r->kvm_ran) {
		printf("     \"kvm_here\": {\"source\": ");
		json_str(kvm_source());
		printf(", \"cpu\": {");
		json_clock(&r->kvm_cpu, r->kvm_cpu.median * (double)r->leaves);
		printf("}, ");
		json_clock(&r->kvm_wall, r->kvm_wall.median * (double)r->leaves);
		printf(", \"tlbis\": %" PRIu64 ", \"dcache_calls\": %" PRIu64
		       ", \"pages_alloc\": %" PRIu64 ", \"kvm_over_ours\": ",
		       r->kvm_tlbis, r->kvm_dcache, r->kvm_pages);
		json_num(3, r->kvm_x);
		printf("},\n");
	} else {
		printf("     \"kvm_here\": null,\n");
	}
	if (!r->has_target) {
		printf("     \"target\": null,\n");
		return;
	}
	printf("     \"target\": {\"text\": ");
	json_str(r->target_text);
	printf(", \"kind\": \"%s\", \"value\": %g, \"clock\": \"thread-cpu\", "
	       "\"max_ir_per_leaf\": ", target_names[sc->tk], sc->tv);
	if (sc->tk == TGT_FLOOR_X)
		printf("null");
	else if (sc->tk == TGT_HERE_X)
		printf("%.2f", sc->ir_max);
	else
		printf("%.2f", sc->peer_ir / sc->tv);
	printf(", \"pass\": %s},\n", r->pass ? "true" : "false");
}

static void json_counts(const struct slat_stats *s)
{
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
}

static void print_json(const struct result *res, const char **skip_reason)
{
	bool first = true;

	printf("{\n  \"bench\": \"slat-bench\",\n  \"schema\": %d,\n"
	       "  \"format\": \"%s\",\n  \"granule\": %" PRIu32 ",\n"
	       "  \"ia_bits\": %u,\n  \"pa_bits\": %u,\n  \"fwb\": false,\n"
	       "  \"reps\": %d,\n  \"size_shift\": %u,\n"
	       "  \"cpus\": %ld,\n  \"load_average\": {\"before\": [%.2f, "
	       "%.2f, %.2f], \"after\": [%.2f, %.2f, %.2f]},\n"
	       "  \"loaded\": %s,\n"
	       "  \"clock_cost_ns\": {\"cpu\": %" PRIu64 ", \"wall\": %" PRIu64
	       "},\n"
	       "  \"libslat_build_type\": \"%s\",\n  \"compiler\": ",
	       JSON_SCHEMA, format_names[opt.format], opt.granule,
	       opt.geo.ia_bits, opt.geo.pa_bits, opt.reps, opt.size_shift,
	       mach.cpus, mach.before[0], mach.before[1], mach.before[2],
	       mach.after[0], mach.after[1], mach.after[2],
	       loaded() ? "true" : "false", clock_cost.cpu, clock_cost.wall,
	       SLAT_BUILD_TYPE);
	json_str(COMPILER);
	printf(",\n  \"scenarios\": [");
	for (int i = 0; i < NR_SC; i++) {
		const struct scenario *sc = &scenarios[i];
		const struct result *r = &res[i];
		char title[192];

		if (!r->ran)
			continue;
		title_of(sc, r, title, sizeof(title));
		printf("%s\n    {\"id\": \"%s\", \"key\": \"%s\", \"title\": ",
		       first ? "" : ",", sc->id, sc->key);
		first = false;
		json_str(title);
		printf(", \"extra\": %s, \"features\": {\"fwb\": %s, "
		       "\"hwdirty\": %s},\n     \"size_bytes\": %" PRIu64
		       ", \"leaves\": %" PRIu64, sc->extra ? "true" : "false",
		       sc->features & SLAT_FEAT_FWB ? "true" : "false",
		       sc->features & SLAT_FEAT_HWDIRTY ? "true" : "false",
		       r->size, r->leaves);
		json_times(sc, r);
		json_peer_target(sc, r);
		if (sc->op == OP_DIRTY_READ || sc->op == OP_DIRTY_CLEAR)
			printf("     \"dirty_pages\": %" PRId64 ",\n", r->dirty);
		else
			printf("     \"dirty_pages\": null,\n");
		json_counts(&r->st);
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
"usage: slat-bench [--format arm-s2|ept4|ept5|npt4|npt5] [--granule 4k|16k|64k]\n"
"                  [--only ID,...] [--reps N] [--size-shift N | --small]\n"
"                  [--json] [--list] [--targets] [--count-floor]\n"
"                  [--kvm] [--count-kvm] [--cost-out FILE]\n"
"\n"
"Times libslat's core on the hosted platform (TLB and cache hooks only\n"
"count; page caches are filled before the clock starts). Default: Armv8\n"
"stage 2, 4K granule, 40-bit IPA, no FWB, the configuration of the KVM\n"
"arm64 peer figures. The ten scenarios of the peer (1-10) and extra ones\n"
"(11-17), see --list. Each: one warm-up run, then N timed runs, each timed\n"
"in the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and the wall clock\n"
"(CLOCK_MONOTONIC): median and min ns per leaf entry of both, the floor\n"
"(plain 8-byte stores or loads of as many entries, measured here), KVM's\n"
"figures as published (docs/PERFORMANCE.md: CPU ns and instructions per\n"
"leaf), the target (PASS/MISS on the CPU-time median), the exact counts\n"
"of struct slat_stats and the table memory per GiB mapped. The load\n"
"average is printed before and after; above the number of CPUs the run\n"
"says the wall-clock figures are not reliable.\n"
"\n"
"  --format F      arm-s2 (default; 40-bit IPA), ept4 (48-bit), ept5 (57),\n"
"                  npt4 (48), npt5 (57)\n"
"  --granule G     4k (default), 16k or 64k (arm-s2 only)\n"
"  --only LIST     run only these scenarios, e.g. --only 1,2,10\n"
"  --reps N        timed runs per scenario (1..64, default 9)\n"
"  --size-shift N  divide every size by 2^N (at least one table's span)\n"
"  --small         --size-shift 6 --reps 1: a smoke run in well under a\n"
"                  second\n"
"  --json          machine-readable output only (schema: docs/bench.md)\n"
"  --list          the scenarios, then exit\n"
"  --targets       each scenario's KVM instructions per leaf and target,\n"
"                  tab-separated (id, key, KVM instr./leaf or -, target\n"
"                  kind, value, instr./leaf at most or -), for\n"
"                  bench/callgrind.sh; then exit\n"
"  --count-floor   under callgrind (--collect-atstart=no): count the last\n"
"                  floor sample instead of the last timed run\n"
"  --kvm           also run KVM's own stage-2 code (pgtable.c from Debian's\n"
"                  linux-source) after each of our runs, timed the same\n"
"                  way, its table checked against ours descriptor for\n"
"                  descriptor; the KVM ratios and targets then use its\n"
"                  figures measured here. Only in a build with it: make\n"
"                  bench-kvm (docs/bench.md)\n"
"  --count-kvm     with --kvm, under callgrind: count KVM's last run\n"
"  --cost-out FILE with --kvm: write slat-perf's software costs of KVM's\n"
"                  code measured in this run (entry_visit from scenario 7,\n"
"                  entry_write from 8, leaf_install from 5, CPU-time\n"
"                  medians) with the machine and the date, for slat-perf\n"
"                  --cost FILE\n"
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

/* What the command line asks for besides opt. */
struct request {
	bool list, targets, small, reps_set;
};

static int parse_value(const char *a, const char *v, struct request *rq)
{
	if (!strcmp(a, "--reps")) {
		opt.reps = atoi(v), rq->reps_set = true;
		if (opt.reps < 1 || opt.reps > 64) {
			fprintf(stderr, "slat-bench: --reps takes 1..64\n");
			return 2;
		}
	} else if (!strcmp(a, "--size-shift")) {
		int s = atoi(v);

		if (s < 0 || s > 20) {
			fprintf(stderr, "slat-bench: --size-shift takes 0..20\n");
			return 2;
		}
		opt.size_shift = (unsigned)s;
	} else if (!strcmp(a, "--granule")) {
		if (!strcasecmp(v, "4k"))
			opt.granule = 4096;
		else if (!strcasecmp(v, "16k"))
			opt.granule = 16384;
		else if (!strcasecmp(v, "64k"))
			opt.granule = 65536;
		else {
			fprintf(stderr, "slat-bench: --granule takes 4k, 16k or "
				"64k\n");
			return 2;
		}
	} else if (!strcmp(a, "--format")) {
		if (!strcmp(v, "arm-s2"))
			opt.format = BF_ARM_S2;
		else if (!strcmp(v, "ept4"))
			opt.format = BF_EPT4;
		else if (!strcmp(v, "ept5"))
			opt.format = BF_EPT5;
		else if (!strcmp(v, "npt4"))
			opt.format = BF_NPT4;
		else if (!strcmp(v, "npt5"))
			opt.format = BF_NPT5;
		else {
			fprintf(stderr, "slat-bench: --format takes arm-s2, ept4, "
				"ept5, npt4 or npt5\n");
			return 2;
		}
	} else if (!strcmp(a, "--cost-out")) {
		opt.cost_out = v;
	} else {
		opt.only = v;
		if (!only_valid()) {
			fprintf(stderr, "slat-bench: --only takes scenario ids "
				"(see --list)\n");
			return 2;
		}
	}
	return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct request *rq)
{
	static const char *const with_value[] = {
		"--reps", "--size-shift", "--granule", "--format", "--only",
		"--cost-out",
	};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool valued = false;

		for (size_t k = 0; k < sizeof(with_value) / sizeof(*with_value);
		     k++)
			valued |= !strcmp(a, with_value[k]);
		if (valued && v) {
			int rc = parse_value(a, v, rq);

			if (rc)
				return rc;
			i++;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("slat-bench (slat) %s\n", slat_version());
			return 0;
		} else if (!strcmp(a, "--json")) {
			opt.json = true;
		} else if (!strcmp(a, "--list")) {
			rq->list = true;
		} else if (!strcmp(a, "--targets")) {
			rq->targets = true;
		} else if (!strcmp(a, "--count-floor")) {
			opt.count_floor = true;
		} else if (!strcmp(a, "--kvm") || !strcmp(a, "--count-kvm")) {
			if (!HAVE_KVM_PEER) {
				fprintf(stderr, "slat-bench: %s needs a build "
					"with KVM's code: run make bench-kvm "
					"(docs/bench.md)\n", a);
				return 2;
			}
			opt.kvm = true;
			opt.count_kvm |= !strcmp(a, "--count-kvm");
		} else if (!strcmp(a, "--small")) {
			rq->small = true;
		} else {
			fprintf(stderr, "slat-bench: %s argument %s (see "
				"--help)\n", valued ? "a value is missing after the" :
				"unknown", a);
			return 2;
		}
	}
	return -1;
}

static void list_scenarios(void)
{
	for (int i = 0; i < NR_SC; i++) {
		struct result r = { .size = sc_size(&scenarios[i]) };
		char title[192];

		title_of(&scenarios[i], &r, title, sizeof(title));
		printf("%3s  %-28s %s%s\n", scenarios[i].id, scenarios[i].key,
		       title, scenarios[i].extra ? " [extra]" : "");
	}
}

/* For bench/callgrind.sh: KVM's instructions per leaf and the target of
 * each scenario in this configuration (as judge() sets them). */
static void print_targets(void)
{
	for (int i = 0; i < NR_SC; i++) {
		const struct scenario *sc = &scenarios[i];
		bool peer = peer_config() && sc->peer_ir > 0;
		enum target_kind tk = sc->tk;

		if (!peer && tk == TGT_PEER_X)
			tk = TGT_NONE;
		if (!peer && tk == TGT_VISITED_PEER)
			tk = TGT_NONE;  /* its instruction target is KVM's */
		if (tk == TGT_HERE_X && !peer_config())
			tk = TGT_NONE;
		if (peer)
			printf("%s\t%s\t%.1f\t%s\t%g\t-\n", sc->id, sc->key,
			       sc->peer_ir, target_names[tk], sc->tv);
		else if (tk == TGT_HERE_X)
			printf("%s\t%s\t-\t%s\t%g\t%g\n", sc->id, sc->key,
			       target_names[tk], sc->tv, sc->ir_max);
		else
			printf("%s\t%s\t-\t%s\t%g\t-\n", sc->id, sc->key,
			       target_names[tk], tk == TGT_NONE ? 0 : sc->tv);
	}
}

static void print_header(void)
{
	printf("slat-bench: libslat core, %s %uK granule, %u-bit IPA, "
	       "no FWB, hosted platform (hooks only count)\n",
	       format_names[opt.format], opt.granule / 1024, opt.geo.ia_bits);
	printf("libslat build: %s; bench: %s -O2; %d timed run%s after "
	       "1 warm-up%s\n", SLAT_BUILD_TYPE, COMPILER, opt.reps,
	       opt.reps == 1 ? "" : "s",
	       opt.size_shift ? "; sizes reduced (--size-shift)" : "");
	printf("clocks: thread CPU time (CLOCK_THREAD_CPUTIME_ID) and wall "
	       "(CLOCK_MONOTONIC); targets on the CPU-time median\n");
	printf("clock reads: %" PRIu64 " ns CPU, %" PRIu64 " ns wall per "
	       "interval (the least of 201 empty ones), taken off every "
	       "sample\n", clock_cost.cpu, clock_cost.wall);
	printf("load average before: %.2f %.2f %.2f, %ld CPUs online\n",
	       mach.before[0], mach.before[1], mach.before[2], mach.cpus);
	if (!peer_config())
		printf("(KVM's figures are for arm-s2 4K only: not shown)\n");
	fflush(stdout);
}

static void print_load_after(void)
{
	printf("\nload average after: %.2f %.2f %.2f, %ld CPUs online\n",
	       mach.after[0], mach.after[1], mach.after[2], mach.cpus);
}

/* To stderr too under --json, so that a reader of the figures sees it. */
static void warn_if_loaded(void)
{
	if (!loaded())
		return;
	fprintf(opt.json ? stderr : stdout,
		"machine loaded: load average %.2f > cores %ld, wall-clock "
		"figures are not reliable (read the CPU time)\n", mach.peak,
		mach.cpus);
}

static int setup_config(struct request *rq)
{
	int rc;

	if (rq->small) {
		if (!opt.size_shift)
			opt.size_shift = 6;
		if (!rq->reps_set)
			opt.reps = 1;
	}
	if (opt.cost_out && !opt.kvm) {
		fprintf(stderr, "slat-bench: --cost-out writes KVM's costs: "
			"add --kvm (a build with KVM's code: make bench-kvm)\n");
		return 2;
	}
	if (opt.format != BF_ARM_S2 && opt.granule != 4096) {
		fprintf(stderr, "slat-bench: EPT and NPT have only the 4k "
			"granule\n");
		return 2;
	}
	bool npt = opt.format == BF_NPT4 || opt.format == BF_NPT5;
	opt.cfg = (struct slat_config){
		.format = opt.format == BF_ARM_S2 ? SLAT_FMT_ARM_S2
			  : npt ? SLAT_FMT_NPT : SLAT_FMT_EPT,
		.granule = opt.granule,
		.ia_bits = opt.format == BF_ARM_S2 ? 40 :
			   opt.format == BF_EPT4 || opt.format == BF_NPT4 ? 48 : 57,
		/* NPT's A and D are always the CPU's */
		.pa_bits = 48, .features = npt ? SLAT_FEAT_HWDIRTY : 0,
	};
	rc = slat_config_geometry(&opt.cfg, &opt.geo);
	if (rc < 0)
		die("slat_config_geometry", rc);
	return -1;
}

/* Every wanted scenario; returns the number of failed checks. */
static int run_all(struct result *res, const char **skip_reason)
{
	int failures = 0;

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
		note_load(res[i].load);
		failures += res[i].failures;
		if (!opt.json) {
			print_text(sc, &res[i]);
			fflush(stdout);
		}
	}
	return failures;
}

/* ---- KVM's software costs for slat-perf (--cost-out) ---- */

/* The scenario @id's index when KVM's code ran beside it, else -1. */
static int kvm_index(const struct result *res, const char *id)
{
	for (int i = 0; i < NR_SC; i++)
		if (!strcmp(scenarios[i].id, id))
			return res[i].ran && res[i].kvm_ran ? i : -1;
	return -1;
}

/* The CPU as the first processor of /proc/cpuinfo names it (x86: its
 * model name; arm64: implementer and part), else "an unknown CPU". */
static void cpu_name(char *buf, size_t n)
{
	static const char *const keys[] = { "model name", "CPU implementer",
					    "CPU part" };
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	size_t len = 0;

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f) && line[0] != '\n') {
		char *colon = strchr(line, ':');

		line[strcspn(line, "\n")] = 0;
		for (size_t k = 0; colon && k < sizeof(keys) / sizeof(*keys);
		     k++)
			if (!strncmp(line, keys[k], strlen(keys[k])) &&
			    len < n)
				len += (size_t)snprintf(buf + len, n - len,
							"%s%s%s", len ? ", " :
							"", k ? keys[k] : "",
							colon + (k ? 1 : 2));
	}
	if (f)
		fclose(f);
	if (!buf[0])
		snprintf(buf, n, "an unknown CPU");
}

/* KVM's CPU time per leaf of @r beyond reading each leaf and the entries
 * above them at @visit ns each; never below 0 (a write cheaper than the
 * noise of the visits). */
static double beyond_visits(const struct result *r, double visit)
{
	double ns = r->kvm_cpu.median - visit *
		    (double)(r->leaves + r->min_walk) / (double)r->leaves;

	return ns < 0 ? 0 : ns;
}

/*
 * The software costs slat-perf charges per entry, from KVM's own code in
 * this run: a visit is what KVM's walk of memory already split costs per
 * entry (7: every leaf and every entry above them); a write is what
 * write-protecting a leaf costs beyond its visits (8); an install is what
 * a split costs per leaf it makes beyond its visits (5: a table page per
 * block and its 512 leaves, each reached by KVM's map walker). Returns 0,
 * or the exit status after a message.
 */
static int write_kvm_costs(const struct result *res, const char *path)
{
	int iw = kvm_index(res, "7"), ip = kvm_index(res, "8");
	int is = kvm_index(res, "5");
	char cpu[160], date[32];
	time_t now = time(NULL);
	FILE *f;

	if (iw < 0 || ip < 0 || is < 0) {
		fprintf(stderr, "slat-bench: --cost-out needs KVM's runs of "
			"scenarios 5, 7 and 8: run with --kvm in the default "
			"configuration (arm-s2, 4k), without --only or with "
			"--only 5,7,8\n");
		return 2;
	}
	const struct result *walk = &res[iw], *wp = &res[ip], *sp = &res[is];
	double visit = walk->kvm_cpu.median * (double)walk->leaves /
		       (double)(walk->leaves + walk->min_walk);
	double write = beyond_visits(wp, visit);
	double install = beyond_visits(sp, visit);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "slat-bench: %s: %s\n", path, strerror(errno));
		return 2;
	}
	cpu_name(cpu, sizeof(cpu));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "# KVM's stage-2 code (arch/arm64/kvm/hyp/pgtable.c%s%s) "
		"measured by slat-bench --kvm\n# on %s, %ld CPUs, %s; load "
		"average %.2f before, %.2f after;\n# %d timed run%s, sizes "
		"divided by 2^%u, CPU-time medians per leaf.\n",
		*kvm_source() ? ", " : "", kvm_source(), cpu, mach.cpus, date,
		mach.before[0], mach.after[0], opt.reps,
		opt.reps == 1 ? "" : "s", opt.size_shift);
	fprintf(f, "# 7 %s: %.3f ns per leaf, %" PRIu64 " entries read for "
		"%" PRIu64 " leaves\nentry_visit = %.3f\n", scenarios[iw].key,
		walk->kvm_cpu.median, walk->leaves + walk->min_walk,
		walk->leaves, visit);
	fprintf(f, "# 8 %s: %.3f ns per leaf, less its visits\n"
		"entry_write = %.3f\n", scenarios[ip].key, wp->kvm_cpu.median,
		write);
	fprintf(f, "# 5 %s: %.3f ns per leaf, less its visits\n"
		"leaf_install = %.3f\n", scenarios[is].key, sp->kvm_cpu.median,
		install);
	if (fclose(f)) {
		fprintf(stderr, "slat-bench: %s: %s\n", path, strerror(errno));
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct result res[NR_SC];
	const char *skip_reason[NR_SC] = { 0 };
	struct request rq = { false, false, false, false };
	int rc, failures;

	rc = parse_args(argc, argv, &rq);
	if (rc < 0)
		rc = setup_config(&rq);
	if (rc >= 0)
		return rc;
	if (rq.list) {
		list_scenarios();
		return 0;
	}
	if (rq.targets) {
		print_targets();
		return 0;
	}
	kvm_start();
	calibrate_clocks();
	mach.cpus = sysconf(_SC_NPROCESSORS_ONLN);
	loadavg(mach.before);
	note_load(mach.before[0]);
	if (!opt.json) {
		print_header();
		warn_if_loaded();
	}
	failures = run_all(res, skip_reason);
	loadavg(mach.after);
	note_load(mach.after[0]);
	if (opt.json) {
		print_json(res, skip_reason);
	} else {
		print_summary(res);
		print_load_after();
	}
	warn_if_loaded();
	if (!failures && opt.cost_out && (rc = write_kvm_costs(res, opt.cost_out)))
		return rc;
	if (failures) {
		fprintf(stderr, "slat-bench: %d check%s failed\n", failures,
			failures == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
