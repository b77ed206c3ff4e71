/* SPDX-License-Identifier: MIT */
/*
 * Random operation sequences against the reference model.
 *
 * For each configuration (Armv8 stage 2, Intel EPT and Armv8 stage 1, with
 * and without hardware dirty state; one test body, the format's rules come
 * from its struct check_format), a seeded sequence of operations (map with random
 * sizes, alignments, output addresses, attributes, caps and NO_REPLACE,
 * and the shapes the leaf-fit rule must get right; unmap; wrprotect;
 * relax; mkyoung; test_clear_young; lookup; hardware accesses through
 * slat_hw_access; slat_dirty_read with and without clear; slat_split;
 * slat_recover with every strategy and flush policy; bad input; starved
 * page caches) runs on a real table. After every operation:
 *
 *  - the status is the one the model predicts (SLAT_NOTHING_TO_DO exactly
 *    when nothing needed writing; SLAT_E_NOMEM only with a starved cache;
 *    bad input gets its error code and no descriptor, counter or cache
 *    changes);
 *  - the raw table over the range the operation could affect equals the
 *    model, and slat_lookup agrees with the raw walk;
 *  - new leaves of a map are the largest the alignment and the cap allow,
 *    and no leaf a map installed or changed maps outside what was asked
 *    (checker_map_bounds);
 *  - a split keeps every translation and makes leaves of exactly the size
 *    asked; a recovery does what the documented semantics predict from the
 *    table's shape and the model, frees exactly the tables it must, each
 *    after an invalidation covering it once unlinked, and publishes each
 *    promoted block after an invalidation while its entry was invalid
 *    (Arm) or swaps it in place (EPT);
 *  - the observer saw the right maintenance: D-cache cleans exactly for new
 *    Normal leaves without FWB (never on EPT or stage 1), I-cache
 *    invalidation only for executable installs (never with DIC, never on
 *    EPT or stage 1), a TLB invalidation covering every leaf replaced or
 *    removed, issued while the entry was invalid (break before make),
 *    invalidations per the flush policy, none when nothing changed. EPT has no invalidation by address: there every
 *    invalidation is a whole-VMID flush, and "covering a leaf" means a
 *    flush issued after the leaf changed (probed at each flush);
 *  - the hardware dirty state equals the model: every page written through
 *    slat_hw_access since the last clear is reported exactly once per
 *    clear, and a hardware write dirties its whole leaf;
 *  - the table's counters agree with what the observer saw.
 * Every --check-every operations and at the end the full checker runs.
 *
 * Usage: test_random [--config NAME|all] [--seed N] [--ops N]
 *                    [--check-every N] [--list] [--verbose]
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "checker.h"
#include "cover.h"
#include "model.h"

/* ------------------------------------------------------------ configs */

struct rcfg {
	const char *name;
	struct slat_config cfg;
	uint64_t pa_base; /* where the arena's table pages live */
};

#define ARM(g, ia, pa, f)                                                  \
	{ .format = SLAT_FMT_ARM_S2, .granule = (g), .ia_bits = (ia),      \
	  .pa_bits = (pa), .features = (f) }

#define EPT(ia, pa, f)                                                     \
	{ .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = (ia),        \
	  .pa_bits = (pa), .features = (f) }

/* NPT's A and D are always the CPU's: SLAT_FEAT_HWDIRTY, nothing else. */
#define NPT(ia, pa, lv)                                                    \
	{ .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = (ia),        \
	  .pa_bits = (pa), .features = SLAT_FEAT_HWDIRTY, .levels = (lv) }

#define S1(g, ia, pa, f)                                                   \
	{ .format = SLAT_FMT_ARM_S1, .granule = (g), .ia_bits = (ia),      \
	  .pa_bits = (pa), .features = (f) }

/* The same with a start level of 4 - lv instead of the default. */
#define ARM_LV(g, ia, pa, f, lv)                                           \
	{ .format = SLAT_FMT_ARM_S2, .granule = (g), .ia_bits = (ia),      \
	  .pa_bits = (pa), .features = (f), .levels = (lv) }

#define HWD SLAT_FEAT_HWDIRTY
#define LPA2 SLAT_FEAT_LPA2

static const struct rcfg configs[] = {
	{ "4k-32", ARM(4096, 32, 40, 0), 0x40000000ull },
	{ "4k-36-fwb", ARM(4096, 36, 48, SLAT_FEAT_FWB), 0x80000000ull },
	{ "4k-40", ARM(4096, 40, 48, 0), 0x80000000ull },
	{ "4k-40-fwb-xnx-dic",
	  ARM(4096, 40, 44, SLAT_FEAT_FWB | SLAT_FEAT_XNX | SLAT_FEAT_DIC),
	  0x100000000ull },
	{ "4k-48-xnx", ARM(4096, 48, 48, SLAT_FEAT_XNX), 0x8000000000ull },
	{ "16k-36", ARM(16384, 36, 36, 0), 0x40000000ull },
	{ "16k-40-fwb", ARM(16384, 40, 48, SLAT_FEAT_FWB), 0x80000000ull },
	{ "16k-48-xnx-dic", ARM(16384, 48, 48, SLAT_FEAT_XNX | SLAT_FEAT_DIC),
	  0x80000000ull },
	{ "64k-40", ARM(65536, 40, 48, 0), 0x80000000ull },
	{ "64k-48-fwb-xnx", ARM(65536, 48, 48, SLAT_FEAT_FWB | SLAT_FEAT_XNX),
	  0x80000000ull },
	/* tables above 2^48: PA[51:48] in bits [15:12] of table entries */
	{ "64k-52", ARM(65536, 52, 52, 0), 0xf000000000000ull },
	/* hardware dirty state: DBM, S2AP.W set by the hardware */
	{ "4k-40-hwdirty", ARM(4096, 40, 48, HWD), 0x80000000ull },
	{ "16k-48-xnx-hwdirty", ARM(16384, 48, 48, SLAT_FEAT_XNX | HWD),
	  0x80000000ull },
	/* FEAT_LPA2 (VTCR_EL2.DS): 52-bit IPA in 16 concatenated level-0
	 * tables, 512 GiB level-0 blocks, tables above 2^50: PA[51:50] in
	 * bits [9:8] of table entries */
	{ "4k-52-lpa2", ARM(4096, 52, 52, LPA2), 0xf000000000000ull },
	/* 16K with DS: a 32-entry level-0 root, 64 GiB level-1 blocks */
	{ "16k-52-lpa2-xnx", ARM(16384, 52, 52, LPA2 | SLAT_FEAT_XNX),
	  0xf000000000000ull },
	/* DS with a 48-bit PA: no SH field, a level-0 block, DBM */
	{ "4k-48-lpa2-hwdirty", ARM(4096, 48, 48, LPA2 | HWD), 0x80000000ull },
	/* Start levels other than the default (slat_config.levels): 4K
	 * 40-bit from a 2-entry level 0 (not 2 level-1 pages); 4K 34-bit from
	 * a 16-entry level 1 (not 16 level-2 pages); 16K 40-bit from level 1
	 * (16 entries), 64K 44-bit from level 1 (4 entries), 4K 50-bit with
	 * DS from a 4-entry level -1 (SL2) */
	{ "4k-40-l0", ARM_LV(4096, 40, 48, 0, 4), 0x80000000ull },
	{ "4k-34-l1-hwdirty", ARM_LV(4096, 34, 44, HWD, 3), 0x80000000ull },
	{ "16k-40-l1-xnx", ARM_LV(16384, 40, 42, SLAT_FEAT_XNX, 3),
	  0x80000000ull },
	{ "64k-44-l1-fwb", ARM_LV(65536, 44, 44, SLAT_FEAT_FWB, 3),
	  0x80000000ull },
	{ "4k-50-lpa2-l-1", ARM_LV(4096, 50, 52, LPA2, 5),
	  0xf000000000000ull },
	/* EPT, 4-level (48-bit) with a 46-bit MAXPHYADDR */
	{ "ept4", EPT(48, 46, 0), 0x200000000000ull },
	/* EPT, 5-level (57-bit), tables near the top of a 52-bit PA space */
	{ "ept5", EPT(57, 52, 0), 0xff00000000000ull },
	/* EPT, a 5-level walk of a 48-bit space (EPTP walk length 5) */
	{ "ept5-48", { .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
		       .pa_bits = 48, .levels = 5 }, 0x80000000ull },
	/* EPT with accessed and dirty flags */
	{ "ept4-ad", EPT(48, 48, HWD), 0x80000000ull },
	/* EPT with mode-based execute control and execute-only leaves */
	{ "ept4-mbec-xonly",
	  EPT(48, 48, SLAT_FEAT_EPT_MBEC | SLAT_FEAT_EPT_XONLY),
	  0x80000000ull },
	/* AMD NPT, 4-level (48-bit) with a 46-bit host PA */
	{ "npt4", NPT(48, 46, 0), 0x200000000000ull },
	/* NPT, 5-level (the host's CR4.LA57), tables near the top of a
	 * 52-bit PA space */
	{ "npt5", NPT(57, 52, 0), 0xff00000000000ull },
	/* NPT, a 5-level walk of a 40-bit space (the PML5's first entry) */
	{ "npt5-40", NPT(40, 48, 5), 0x80000000ull },
	/* Armv8 stage 1 (a guest's own tables): 4-level 48-bit VA */
	{ "s1-4k-48", S1(4096, 48, 48, 0), 0x80000000ull },
	/* 3 levels from L1 (39-bit VA), 40-bit PA */
	{ "s1-4k-39", S1(4096, 39, 40, 0), 0x40000000ull },
	/* 16K, 47-bit VA: a 2048-entry L1 root, 32 MiB blocks */
	{ "s1-16k-47", S1(16384, 47, 48, 0), 0x80000000ull },
	/* 64K, 42-bit VA: two levels, an 8192-entry L2 root */
	{ "s1-64k-42", S1(65536, 42, 48, 0), 0x80000000ull },
	/* 64K, 52-bit VA and PA: 4 TiB L1 blocks, tables above 2^48 */
	{ "s1-64k-52", S1(65536, 52, 52, 0), 0xf000000000000ull },
	/* TCR_EL1.DS (FEAT_LPA2): 52-bit VA from a 16-entry level -1 root,
	 * level-0 blocks, tables above 2^50 */
	{ "s1-4k-52-lpa2", S1(4096, 52, 52, LPA2), 0xf000000000000ull },
	/* 16K with DS: a 32-entry level-0 root, 64 GiB level-1 blocks */
	{ "s1-16k-52-lpa2-hwdirty", S1(16384, 52, 52, LPA2 | HWD),
	  0xf000000000000ull },
	/* hardware access flag and dirty state (TCR_EL1.HA/HD): DBM, AP[2]
	 * cleared by the hardware's first write */
	{ "s1-4k-48-hwdirty", S1(4096, 48, 48, HWD), 0x80000000ull },
	/* 16K, 48-bit VA: a 2-entry L0 root */
	{ "s1-16k-48-hwdirty", S1(16384, 48, 48, HWD), 0x80000000ull },
	/* the EL2 regime (HCR_EL2.E2H = 0): AP[1] RES1, XN alone, no EL0;
	 * slat-hyp's 32-bit VA from a 4-entry L1 root, and TCR_EL2.HA/HD */
	{ "s1-el2-4k-32", S1(4096, 32, 40, SLAT_FEAT_S1_EL2), 0x40000000ull },
	{ "s1-el2-4k-48-hwdirty", S1(4096, 48, 48, SLAT_FEAT_S1_EL2 | HWD),
	  0x80000000ull },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* ------------------------------------------------------------ state */

#define NR_WIN 3
#define NR_HOT 6
#define NR_DELTA 3
/* bound on the leaves one map may create: 8 MiB of pages */
#define MAX_LEAVES (2048 * 4096 / R.G)

struct window {
	uint64_t base, size;
	uint64_t hot[NR_HOT];
	uint64_t delta[NR_DELTA]; /* pa - ipa, multiples of the top leaf */
};

struct rec {
	struct slat_hosted_event ev;
	bool unmapped; /* TLBI: ev.addr had no valid leaf at that moment */
};

enum op_kind {
	OP_MAP, OP_UNMAP, OP_WRPROTECT, OP_RELAX, OP_MKYOUNG, OP_TCY,
	OP_LOOKUP, OP_HW_ACCESS, OP_DIRTY, OP_SPLIT, OP_RECOVER, OP_BAD,
	OP_RESTRICT, OP_KINDS
};
static const char *op_names[OP_KINDS] = {
	"map", "unmap", "wrprotect", "relax", "mkyoung", "test_clear_young",
	"lookup", "hw_access", "dirty_read", "split", "recover", "bad-input",
	"restrict"
};

struct vec_leaf {
	struct check_leaf *v;
	size_t n, cap;
};

struct rt {
	const struct rcfg *rc;
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	struct checker ck;
	const struct check_format *fmt;
	struct model *m;
	struct slat_page_cache cache;  /* topped up to slat_pages_needed() */
	struct slat_page_cache scache; /* starved: fewer pages than needed */
	struct slat_page_cache *cur;   /* the one the operation gets */
	uint32_t cache_limit;
	uint64_t need;                 /* what slat_pages_needed() counted */
	int need_err;                  /* ...or the error it returned */
	uint64_t s[4]; /* xoshiro256** */
	uint64_t seed;
	uint64_t G, top, ia_end, pa_end;
	uint64_t lsize_[5]; /* by level + 1: EPT's 5-level walk starts at -1 */
	uint8_t leaf_levels;
	int start_level;
	struct window win[NR_WIN];

	struct rec *ev;
	size_t nev, evcap;
	bool recording;
	uint64_t breaks0; /* SLAT_WRITE_BREAK when the recording started */

	struct vec_leaf pre, post;

	uint64_t opno, nops, check_every;
	bool verbose;
	char opdesc[512];
	uint64_t count[OP_KINDS];
	uint64_t nomem, nothing, exists, noent, bad_ok;
	uint64_t shapes[8], shape_premaps; /* op_map_shape's draws */
	uint64_t batch_shapes; /* batch_shape()'s draws */
	uint64_t map_bounds_checked;
	uint64_t blocks_split, promoted, zapped, blocks_broken;
	struct { uint64_t base, size; } recent[8]; /* blocks split lately */
	unsigned nrecent;
	uint64_t faults[4];     /* hw_access results by enum slat_fault */
	uint64_t dirty_pages;   /* reported by slat_dirty_read */
	uint64_t max_tables, max_runs;
	/* check the permissions the CPU enforces where they differ from the
	 * leaf's (check_format.hw_perms), instead of avoiding those accesses */
};

static struct rt R;

#define LSIZE(l) R.lsize_[(l) + 1]


/* A leaf is allowed at @level (levels below 0 never hold one). */
static bool leaf_level(int level)
{
	return level >= 0 && (R.leaf_levels >> level) & 1;
}

/* ------------------------------------------------------------ helpers */

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rnd(void)
{
	uint64_t *s = R.s;
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned percent)
{
	return below(100) < percent;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t align_down(uint64_t x, uint64_t a)
{
	return x & ~(a - 1);
}

static void replay_hint(void)
{
	fprintf(stderr,
		"replay: tests/test_random --seed %#" PRIx64
		" --config %s --ops %" PRIu64 " --check-every 1\n",
		R.seed, R.rc->name, R.opno + 1);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\nFAIL [%s] op %" PRIu64 ": %s\n  ", R.rc->name,
		R.opno, R.opdesc);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	replay_hint();
	exit(1);
}

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond))                                                \
			die(__VA_ARGS__);                                   \
	} while (0)

static void ck_fail(const char *what, uint64_t s, uint64_t e)
{
	fprintf(stderr, "model near the range:\n");
	model_dump(R.m, s > R.top ? s - R.top : 0, e + R.top);
	die("%s: %s", what, R.ck.msg);
}

static void check_range(uint64_t s, uint64_t e)
{
	if (checker_range(&R.ck, R.m, s, e))
		ck_fail("table != model", s, e);
}

static void check_full(void)
{
	if (checker_full(&R.ck, R.m))
		ck_fail("full check", 0, 0);
	if (R.ck.tables_seen > R.max_tables)
		R.max_tables = R.ck.tables_seen;
}

static void vec_push(struct vec_leaf *v, const struct check_leaf *l)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
		if (!v->v)
			abort();
	}
	v->v[v->n++] = *l;
}

static int collect_cb(void *arg, const struct check_leaf *l)
{
	if (l->valid)
		vec_push(arg, l);
	return 0;
}

/* Counts the valid leaves of a raw walk. */
static int count_leaf_cb(void *arg, const struct check_leaf *l)
{
	*(uint64_t *)arg += l->valid;
	return 0;
}

/* The valid leaves overlapping [s, e) of the raw table. */
static void collect(struct vec_leaf *v, uint64_t s, uint64_t e)
{
	v->n = 0;
	if (checker_walk(&R.ck, s, e, collect_cb, v))
		die("raw walk: %s", R.ck.msg);
}

/* [s, e) grown to the leaves that straddle its ends. */
static void touched(uint64_t s, uint64_t e, uint64_t *ts, uint64_t *te)
{
	struct check_leaf l;
	*ts = s;
	*te = e;
	if (checker_leaf_at(&R.ck, s, &l) == 1 && l.base < s)
		*ts = l.base;
	if (checker_leaf_at(&R.ck, e - R.G, &l) == 1 && l.base + l.size > e)
		*te = l.base + l.size;
}

static const char *ev_name(enum slat_hosted_event_kind k)
{
	switch (k) {
	case SLAT_EV_TLBI_IPA: return "tlbi-ipa";
	case SLAT_EV_TLBI_RANGE: return "tlbi-range";
	case SLAT_EV_TLBI_VMID: return "tlbi-vmid";
	case SLAT_EV_DCACHE_CLEAN_INVAL: return "dcache-clean";
	case SLAT_EV_ICACHE_INVAL: return "icache-inval";
	case SLAT_EV_PAGE_FREE: return "page-free";
	}
	return "?";
}

/* ------------------------------------------------------------ flush probe */

/*
 * Without invalidation by address (EPT) a flush does not say which leaf it
 * is for. So at each whole-VMID flush during an operation the probe looks
 * at the pre-op leaves the operation changes, in address order (the order
 * the walk changes them), and marks those whose change the flush covers:
 * removed (unmap, and the invalid step of a map's break-before-make),
 * permissions gone (wrprotect, restrict), or clean (dirty_read with clear). A
 * leaf it finds changed some other way (a map's new translation already
 * in place) was changed without a flush after it: it stays unmarked, and
 * the operation's checks report it.
 */
enum probe_mode {
	PROBE_OFF,
	PROBE_UNMAPPED,     /* map, unmap */
	PROBE_RESTRICTED,   /* wrprotect, restrict: P.perms gone */
	PROBE_CLEAN,        /* dirty_read with clear */
};

static struct {
	enum probe_mode mode;
	uint64_t s;            /* the operation's first IPA */
	bool map;              /* a map: leaves it keeps do not change */
	/* which pre-op leaves the operation removes (NULL: all) */
	bool (*removes)(const struct check_leaf *);
	uint64_t map_ipa, map_pa;
	uint32_t map_attrs;
	uint32_t perms;        /* PROBE_RESTRICTED: the permissions removed */
	size_t cur;            /* next pre-op leaf to look at */
	uint8_t *mark;         /* per pre-op leaf: a flush covered its change */
	size_t cap;
} P;

static bool leaf_kept(const struct check_leaf *l, uint64_t ipa, uint64_t pa,
		      uint32_t attrs);

/* Does the operation change the pre-op leaf @l? */
static bool probe_affected(const struct check_leaf *l)
{
	switch (P.mode) {
	case PROBE_UNMAPPED:
		if (P.removes)
			return P.removes(l);
		return !P.map ||
		       !leaf_kept(l, P.map_ipa, P.map_pa, P.map_attrs);
	case PROBE_RESTRICTED:
		return l->attrs & P.perms;
	case PROBE_CLEAN:
		return l->attrs & SLAT_DIRTY;
	default:
		return false;
	}
}

static void probe_start(enum probe_mode mode, uint64_t s)
{
	P.mode = R.fmt->tlbi_by_address ? PROBE_OFF : mode;
	P.s = s;
	P.map = false;
	P.removes = NULL;
	P.cur = 0;
	if (P.cap < R.pre.n + 1) {
		P.cap = 2 * (R.pre.n + 1);
		P.mark = realloc(P.mark, P.cap);
		if (!P.mark)
			abort();
	}
	memset(P.mark, 0, R.pre.n + 1);
}

static void probe_advance(void)
{
	R.ck.tolerant = true;
	while (P.cur < R.pre.n) {
		const struct check_leaf *l = &R.pre.v[P.cur];
		if (!probe_affected(l)) {
			P.cur++;
			continue;
		}
		uint64_t a = l->base > P.s ? l->base : P.s;
		struct check_leaf n;
		int k = checker_leaf_at(&R.ck, a, &n);
		bool covered, changed;
		switch (P.mode) {
		case PROBE_UNMAPPED:
			covered = k != 1;
			changed = covered ||
				  n.oa + (a - n.base) != l->oa + (a - l->base) ||
				  MODEL_MEMTYPE(n.attrs) != MODEL_MEMTYPE(l->attrs);
			break;
		case PROBE_RESTRICTED:
			covered = changed = k != 1 || !(n.attrs & P.perms);
			break;
		default:
			covered = changed = k != 1 || !(n.attrs & SLAT_DIRTY);
			break;
		}
		if (!changed)
			break; /* not reached yet */
		P.mark[P.cur++] = covered;
	}
	R.ck.tolerant = false;
}

/* ------------------------------------------------------------ observer */

/* slat_recover's probe (op_recover): at each invalidation and free */
static bool recover_on;
static void recover_probe(const struct slat_hosted_event *ev);

static void observe(void *arg, const struct slat_hosted_event *ev)
{
	(void)arg;
	if (!R.recording)
		return;
	if (R.nev == R.evcap) {
		R.evcap = R.evcap ? 2 * R.evcap : 1024;
		R.ev = realloc(R.ev, R.evcap * sizeof(*R.ev));
		if (!R.ev)
			abort();
	}
	struct rec *r = &R.ev[R.nev++];
	r->ev = *ev;
	r->unmapped = false;
	if (ev->kind == SLAT_EV_TLBI_IPA || ev->kind == SLAT_EV_TLBI_RANGE) {
		struct check_leaf l;
		R.ck.tolerant = true;
		int k = checker_leaf_at(&R.ck, ev->addr, &l);
		R.ck.tolerant = false;
		r->unmapped = k == 0;
	}
	if (ev->kind == SLAT_EV_TLBI_VMID && P.mode != PROBE_OFF)
		probe_advance();
	if (recover_on)
		recover_probe(ev);
	if (R.verbose)
		fprintf(stderr,
			"    event %s addr %#" PRIx64 " size %#" PRIx64
			" level %d scope %d%s\n",
			ev_name(ev->kind), ev->addr, ev->size, ev->level,
			ev->scope, r->unmapped ? " (unmapped then)" : "");
}

/* Record the events of one operation (start the probe after this). */
static void start_recording(void)
{
	R.nev = 0;
	R.recording = true;
	R.breaks0 = R.t.stats.written[SLAT_WRITE_BREAK];
	P.mode = PROBE_OFF;
}

static size_t count_events(enum slat_hosted_event_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < R.nev; i++)
		n += R.ev[i].ev.kind == k;
	return n;
}

static void dump_events(void)
{
	for (size_t i = 0; i < R.nev && i < 40; i++) {
		const struct slat_hosted_event *e = &R.ev[i].ev;
		fprintf(stderr,
			"  event %zu: %s addr %#" PRIx64 " size %#" PRIx64
			" level %d scope %d%s\n",
			i, ev_name(e->kind), e->addr, e->size, e->level,
			e->scope, R.ev[i].unmapped ? " (unmapped then)" : "");
	}
}

static void dump_leaves(const char *what, const struct vec_leaf *v)
{
	for (size_t i = 0; i < v->n && i < 20; i++)
		fprintf(stderr,
			"  %s leaf %#" PRIx64 "+%#" PRIx64 " level %d -> %#" PRIx64
			" pte %#018" PRIx64 "\n",
			what, v->v[i].base, v->v[i].size, v->v[i].level,
			v->v[i].oa, v->v[i].pte);
}

#define ECHECK(cond, ...)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			dump_events();                                      \
			dump_leaves("pre", &R.pre);                         \
			dump_leaves("post", &R.post);                       \
			die(__VA_ARGS__);                                   \
		}                                                           \
	} while (0)

/*
 * The invalidations of one operation, indexed: by-IPA ones sorted by
 * address, range ones as recorded and as a normalised union.
 */
struct ipa_ev {
	uint64_t addr;
	int level;
	bool unmapped;
};

static struct {
	struct ipa_ev *ipa;
	size_t nipa, ipacap;
	struct rec *range;
	size_t nrange, rangecap;
	struct { uint64_t s, e; } *runion;
	size_t nunion, unioncap;
	bool vmid;
} X;

static int ipa_ev_cmp(const void *a, const void *b)
{
	const struct ipa_ev *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->ev.addr < y->ev.addr ? -1 : x->ev.addr > y->ev.addr;
}

#define GROW(arr, n, cap)                                                   \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? 2 * (cap) : 64;                     \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));     \
			if (!(arr))                                         \
				abort();                                    \
		}                                                           \
	} while (0)

static void index_events(void)
{
	X.nipa = X.nrange = X.nunion = 0;
	X.vmid = false;
	for (size_t i = 0; i < R.nev; i++) {
		const struct rec *r = &R.ev[i];
		if (r->ev.kind == SLAT_EV_TLBI_VMID)
			X.vmid = true;
		if (r->ev.kind == SLAT_EV_TLBI_IPA) {
			GROW(X.ipa, X.nipa, X.ipacap);
			X.ipa[X.nipa++] = (struct ipa_ev){ r->ev.addr,
							   r->ev.level,
							   r->unmapped };
		}
		if (r->ev.kind == SLAT_EV_TLBI_RANGE) {
			GROW(X.range, X.nrange, X.rangecap);
			X.range[X.nrange++] = *r;
		}
	}
	bool sorted = true;
	for (size_t i = 1; i < X.nipa && sorted; i++)
		sorted = X.ipa[i - 1].addr <= X.ipa[i].addr;
	if (!sorted)
		qsort(X.ipa, X.nipa, sizeof(*X.ipa), ipa_ev_cmp);
	if (X.nrange > 1)
		qsort(X.range, X.nrange, sizeof(*X.range), rec_cmp);
	for (size_t i = 0; i < X.nrange; i++) {
		uint64_t s = X.range[i].ev.addr, e = s + X.range[i].ev.size;
		if (X.nunion && s <= X.runion[X.nunion - 1].e) {
			if (e > X.runion[X.nunion - 1].e)
				X.runion[X.nunion - 1].e = e;
			continue;
		}
		GROW(X.runion, X.nunion, X.unioncap);
		X.runion[X.nunion].s = s;
		X.runion[X.nunion].e = e;
		X.nunion++;
	}
}

/*
 * Is there an invalidation that covers the pre-op leaf @l: by IPA inside
 * it with its level as hint (or no hint), by a range overlapping it, or
 * the whole VMID; with @while_invalid, issued while the address was
 * unmapped (break-before-make).
 */
static bool tlbi_covers(const struct check_leaf *l, bool while_invalid)
{
	uint64_t e = l->base + l->size;
	if (!R.fmt->tlbi_by_address)
		return P.mark[l - R.pre.v]; /* a flush after its change */
	if (X.vmid)
		return true;
	size_t lo = 0, hi = X.nipa;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (X.ipa[mid].addr < l->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < X.nipa && X.ipa[i].addr < e; i++)
		if ((!while_invalid || X.ipa[i].unmapped) &&
		    (X.ipa[i].level == l->level ||
		     X.ipa[i].level == SLAT_LEVEL_ANY))
			return true;
	for (size_t i = 0; i < X.nrange; i++) {
		const struct rec *r = &X.range[i];
		if (r->ev.addr >= e)
			break;
		if ((!while_invalid || r->unmapped) &&
		    r->ev.addr + r->ev.size > l->base)
			return true;
	}
	return false;
}

/* Does the pre-op leaf @l have pages in the completed part [ipa, de)? */
static bool in_done(const struct check_leaf *l, uint64_t ipa, uint64_t de)
{
	uint64_t s = l->base > ipa ? l->base : ipa;
	return s < de && l->base + l->size > ipa;
}

/* The counters moved exactly as the observer saw. */
static void check_stats_delta(const struct slat_stats *b, uint32_t popped)
{
	const struct slat_stats *a = &R.t.stats;
	uint64_t ipa = 0, ipa_local = 0;
	uint64_t dbytes = 0, ibytes = 0;
	for (size_t i = 0; i < R.nev; i++) {
		const struct slat_hosted_event *e = &R.ev[i].ev;
		if (e->kind == SLAT_EV_TLBI_IPA) {
			if (e->scope == SLAT_TLBI_LOCAL)
				ipa_local++;
			else
				ipa++;
		}
		if (e->kind == SLAT_EV_DCACHE_CLEAN_INVAL)
			dbytes += e->size;
		if (e->kind == SLAT_EV_ICACHE_INVAL)
			ibytes += e->size;
	}
	ECHECK(a->tlbi[SLAT_TLBI_IPA] - b->tlbi[SLAT_TLBI_IPA] == ipa &&
		       a->tlbi[SLAT_TLBI_IPA_LOCAL] -
				       b->tlbi[SLAT_TLBI_IPA_LOCAL] ==
			       ipa_local &&
		       a->tlbi[SLAT_TLBI_RANGE] - b->tlbi[SLAT_TLBI_RANGE] ==
			       count_events(SLAT_EV_TLBI_RANGE) &&
		       a->tlbi[SLAT_TLBI_VMID] - b->tlbi[SLAT_TLBI_VMID] ==
			       count_events(SLAT_EV_TLBI_VMID),
	       "stats.tlbi disagree with the observed invalidations");
	ECHECK(a->dcache_calls - b->dcache_calls ==
			       count_events(SLAT_EV_DCACHE_CLEAN_INVAL) &&
		       a->dcache_bytes - b->dcache_bytes == dbytes &&
		       a->icache_calls - b->icache_calls ==
			       count_events(SLAT_EV_ICACHE_INVAL) &&
		       a->icache_bytes - b->icache_bytes == ibytes,
	       "stats cache counters disagree with the observed maintenance");
	ECHECK(a->pages_alloc - b->pages_alloc == popped,
	       "stats.pages_alloc grew by %" PRIu64 " but %u pages left the "
	       "cache",
	       a->pages_alloc - b->pages_alloc, popped);
	ECHECK(a->pages_freed - b->pages_freed ==
		       count_events(SLAT_EV_PAGE_FREE),
	       "stats.pages_freed grew by %" PRIu64 " but %zu pages were "
	       "freed",
	       a->pages_freed - b->pages_freed,
	       count_events(SLAT_EV_PAGE_FREE));
	CHECK(R.h.double_frees == 0, "double free in the arena");
}

static bool stats_unchanged(const struct slat_stats *b)
{
	const struct slat_stats *a = &R.t.stats;
	if (memcmp(a->written, b->written, sizeof(a->written)) ||
	    memcmp(a->tlbi, b->tlbi, sizeof(a->tlbi)))
		return false;
	return a->dcache_calls == b->dcache_calls &&
	       a->icache_calls == b->icache_calls &&
	       a->pages_alloc == b->pages_alloc &&
	       a->pages_freed == b->pages_freed;
}

/* ------------------------------------------------------------ cache */

/*
 * Fill the cache for an operation: usually with what slat_pages_needed
 * says (then SLAT_E_NOMEM is a bug), sometimes with less (starved).
 * Returns whether SLAT_E_NOMEM is acceptable. The count is kept in R.need
 * for check_pages_taken().
 */
static bool prepare_cache(const struct slat_need *req)
{
	int64_t counted = slat_pages_needed(&R.t, req);
	/* Refused input: the operation must refuse it too (its caller
	 * checks R.need_err). */
	R.need_err = counted < 0 ? (int)counted : SLAT_OK;
	uint64_t need = counted < 0 ? 0 : (uint64_t)counted;
	bool starve = need > 0 && chance(8);
	bool exact = !starve && need <= 64 && chance(40);
	uint32_t n;
	R.need = need;
	if (starve || exact) {
		/* a cache of exactly @n pages: fewer than needed, or exactly
		 * as many (then SLAT_E_NOMEM means slat_pages_needed lied) */
		R.cur = &R.scache;
		n = exact ? (uint32_t)need
			  : (uint32_t)below(need < R.cache_limit ? need
								 : R.cache_limit);
		if (R.scache.nr > n)
			slat_hosted_cache_drain(&R.h, &R.scache);
	} else {
		R.cur = &R.cache;
		n = need < R.cache_limit ? (uint32_t)need : R.cache_limit;
	}
	if (n > R.cur->nr &&
	    slat_hosted_cache_topup(&R.h, R.cur, n) != SLAT_OK)
		die("arena exhausted topping up %u pages", n);
	return starve || need > R.cache_limit;
}

/* A success took exactly the pages slat_pages_needed() counted: the cache
 * held @nr0 before. */
static void check_pages_taken(uint32_t nr0)
{
	uint64_t taken = nr0 - R.cur->nr;
	CHECK(R.need_err == SLAT_OK,
	      "slat_pages_needed() refused the input with %s, the operation "
	      "took it", check_status_name(R.need_err));
	CHECK(taken == R.need,
	      "took %" PRIu64 " table pages, slat_pages_needed() counted %" PRIu64,
	      taken, R.need);
}

/* ------------------------------------------------------------ generation */

static uint64_t cap_size(uint32_t flags)
{
	unsigned c = SLAT_MAP_CAP_SHIFT(flags);
	return c ? 1ull << c : UINT64_MAX;
}

/* Largest leaf for [ipa..) -> pa.. by alignment of IPA and PA and the cap. */
static uint64_t max_leaf(uint64_t ipa, uint64_t pa, uint32_t flags)
{
	uint64_t cap = cap_size(flags);
	for (int l = R.start_level; l <= 3; l++) {
		uint64_t s = LSIZE(l);
		if (!leaf_level(l) || (s > cap && l != 3))
			continue;
		if (((ipa ^ pa) & (s - 1)) == 0)
			return s;
	}
	return R.G;
}

static void gen_range(uint64_t *ipa, uint64_t *size, struct window **wp)
{
	struct window *w = &R.win[below(NR_WIN)];
	uint64_t G = R.G, s, sz;
	unsigned cls = (unsigned)below(100);
	*wp = w;
	if (cls < 45) {
		uint64_t hot = w->hot[below(NR_HOT)];
		int64_t off = (int64_t)below(129) - 64;
		s = hot + (uint64_t)off * G;
		if (s < w->base || s >= w->base + w->size)
			s = hot;
		sz = (1 + below(16)) * G;
	} else if (cls < 80) {
		int levels[4], n = 0;
		for (int l = R.start_level; l < 3; l++)
			if (leaf_level(l))
				levels[n++] = l;
		uint64_t S = n ? LSIZE(levels[below(n)]) : 16 * G;
		if (S > w->size)
			S = w->size;
		sz = (1 + below(3)) * S;
		if (chance(40)) {
			int64_t adj = (int64_t)below(7) - 3;
			if ((int64_t)sz + adj * (int64_t)G > 0)
				sz += (uint64_t)(adj * (int64_t)G);
		}
		s = w->base + align_down(below(w->size), S);
		if (chance(30))
			s += below(8) * G;
	} else if (cls < 98) {
		sz = G * (1 + below(512));
		s = w->base + align_down(below(w->size), G);
	} else {
		s = w->base + align_down(below(w->size), R.top);
		sz = R.top * (1 + below(w->size / R.top));
	}
	if (s + sz > w->base + w->size)
		sz = w->base + w->size - s;
	if (sz == 0)
		sz = G;
	*ipa = s;
	*size = sz;
}

static uint64_t gen_pa(uint64_t ipa, uint64_t size, struct window *w)
{
	uint64_t delta = w->delta[below(NR_DELTA)];
	unsigned c = (unsigned)below(100);
	struct model_run run;
	if (c < 45) {
		/* block-friendly */
	} else if (c < 65) {
		if (model_find(R.m, ipa, &run))
			delta = run.pa - run.start; /* same translation */
	} else if (c < 85) {
		uint64_t S = LSIZE(3 - 1) < R.top ? LSIZE(2) : 16 * R.G;
		delta += S * (1 + below(7));
	} else {
		delta += R.G * (1 + below(1000));
	}
	uint64_t pa = ipa + delta;
	if (pa + size > R.pa_end || pa + size < pa)
		pa = ipa + w->delta[0];
	return pa;
}

static uint32_t gen_perms(bool allow_x)
{
	uint32_t p = 0;
	if (chance(85))
		p |= SLAT_R;
	if (chance(60))
		p |= SLAT_W;
	if (allow_x && chance(35)) {
		if (R.fmt->separate_exec(&R.cfg)) {
			static const uint32_t xs[] = { SLAT_X, SLAT_XK, SLAT_XU };
			p |= xs[below(3)];
		} else {
			p |= SLAT_X;
		}
	}
	return p;
}

static uint32_t gen_attrs(void)
{
	unsigned c = (unsigned)below(100);
	uint32_t mt = c < 70 ? SLAT_MT_NORMAL
		      : c < 85 ? SLAT_MT_NORMAL_NC
			       : SLAT_MT_DEVICE;
	uint32_t a;
	do {
		a = mt | gen_perms(mt != SLAT_MT_DEVICE);
		/* the format's own bits (EPT: ignore PAT, suppress #VE; Arm
		 * stage 1: EL0 access, not global) */
		uint32_t extra = R.fmt->extra_attrs;
		while (extra) {
			uint32_t bit = extra & -extra;
			if (chance(20))
				a |= bit;
			extra &= ~bit;
		}
	} while (!R.fmt->attrs_ok(&R.cfg, a)); /* e.g. EPT: no write-only */
	if (chance(30))
		a |= SLAT_SW(below(16));
	return a;
}

/* ------------------------------------------------------------ map */

static int first_run_cb(void *arg, const struct model_run *r)
{
	*(struct model_run *)arg = *r;
	return 1;
}

/*
 * A pre-op leaf's pages in the map range are left alone when it already
 * translates to the same pa + offset with the same memory type.
 */
/* The map in progress, when it has SLAT_MAP_BREAK_BLOCK without
 * SLAT_MAP_NO_REPLACE: size 0 otherwise. */
static struct {
	uint64_t ipa, size, pa;
	uint32_t flags;
} B;

/* The pre-op block @l that B's map breaks: one it meets (only in part, or
 * whole where its PA or cap allows no leaf of the block's size). */
static bool map_breaks(const struct check_leaf *l)
{
	uint64_t e = B.ipa + B.size;
	if (!B.size || l->size <= R.G || l->base + l->size <= B.ipa ||
	    l->base >= e)
		return false;
	bool inside = l->base >= B.ipa && l->base + l->size <= e;
	bool aligned = ((B.pa + (l->base - B.ipa)) & (l->size - 1)) == 0;
	return !inside || !aligned || l->size > cap_size(B.flags);
}

static bool leaf_kept(const struct check_leaf *l, uint64_t ipa, uint64_t pa,
		      uint32_t attrs)
{
	return !map_breaks(l) && l->oa - l->base == pa - ipa &&
	       MODEL_MEMTYPE(l->attrs) == MODEL_MEMTYPE(attrs);
}

/*
 * A post-op leaf that keeps a pre-op kept leaf's translation and attributes
 * (the same leaf, or a piece of it if the core split it needlessly).
 */
static bool post_is_kept(const struct check_leaf *n, uint64_t ipa,
			 uint64_t pa, uint32_t attrs)
{
	size_t lo = 0, hi = R.pre.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (R.pre.v[mid].base + R.pre.v[mid].size <= n->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == R.pre.n)
		return false;
	const struct check_leaf *l = &R.pre.v[lo];
	return l->base <= n->base &&
	       l->base + l->size >= n->base + n->size &&
	       leaf_kept(l, ipa, pa, attrs) &&
	       l->oa - l->base == n->oa - n->base &&
	       (l->attrs & ~SLAT_YOUNG) == (n->attrs & ~SLAT_YOUNG);
}

/* The pre-op leaves a map leaves alone, in address order. */
static struct vec_leaf kept_leaves;

static void collect_kept(uint64_t ipa, uint64_t pa, uint32_t attrs)
{
	kept_leaves.n = 0;
	for (size_t i = 0; i < R.pre.n; i++)
		if (leaf_kept(&R.pre.v[i], ipa, pa, attrs))
			vec_push(&kept_leaves, &R.pre.v[i]);
}

/* Is there a pre-op kept page in [s, e)? */
static bool pre_kept_in(uint64_t s, uint64_t e)
{
	size_t lo = 0, hi = kept_leaves.n;
	const struct check_leaf *v = kept_leaves.v;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].base + v[mid].size <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < kept_leaves.n && v[lo].base < e;
}

static uint64_t expected_leaf(uint64_t b, uint64_t ipa, uint64_t size,
			      uint64_t pa, uint32_t flags)
{
	uint64_t cap = cap_size(flags);
	for (int l = R.start_level; l < 3; l++) {
		uint64_t S = LSIZE(l);
		if (!leaf_level(l) || S > cap)
			continue;
		uint64_t r = align_down(b, S);
		if (r < ipa || r + S > ipa + size)
			continue;
		if ((pa + (r - ipa)) & (S - 1))
			continue;
		if (pre_kept_in(r, r + S))
			continue;
		return S;
	}
	return R.G;
}

struct ival {
	uint64_t s, e;
};

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* Sort, refuse overlaps, merge touching intervals; returns the new count. */
static size_t ival_norm(struct ival *v, size_t n, bool *overlap)
{
	size_t k = 0;
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = v[i - 1].s <= v[i].s;
	if (!sorted)
		qsort(v, n, sizeof(*v), ival_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].s < v[k - 1].e)
			*overlap = true;
		if (k && v[i].s <= v[k - 1].e) {
			if (v[i].e > v[k - 1].e)
				v[k - 1].e = v[i].e;
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

/* Bytes of [s, e) inside the normalised intervals @v[0..n). */
static uint64_t ival_covered(const struct ival *v, size_t n, uint64_t s,
			     uint64_t e)
{
	size_t lo = 0, hi = n;
	uint64_t c = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].e <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && v[i].s < e; i++) {
		uint64_t a = v[i].s > s ? v[i].s : s;
		uint64_t b = v[i].e < e ? v[i].e : e;
		if (a < b)
			c += b - a;
	}
	return c;
}

/*
 * Cache maintenance of @kind must cover exactly the memory of the new
 * leaves that need it, each byte once (the core may batch leaves that are
 * contiguous in PA into one call).
 */
static void check_cache_events(enum slat_hosted_event_kind kind,
			       const bool *wanted, size_t nnew,
			       const struct check_leaf *const *newl)
{
	size_t ne = 0, nw = 0;
	for (size_t i = 0; i < R.nev; i++)
		ne += R.ev[i].ev.kind == kind;
	struct ival *ev = malloc((ne + 1) * sizeof(*ev));
	struct ival *w = malloc((nnew + 1) * sizeof(*w));
	if (!ev || !w)
		abort();
	ne = 0;
	for (size_t i = 0; i < R.nev; i++)
		if (R.ev[i].ev.kind == kind)
			ev[ne++] = (struct ival){ R.ev[i].ev.addr,
						  R.ev[i].ev.addr +
							  R.ev[i].ev.size };
	for (size_t j = 0; j < nnew; j++)
		if (wanted[j])
			w[nw++] = (struct ival){ newl[j]->oa,
						 newl[j]->oa + newl[j]->size };
	bool overlap = false, dummy = false;
	ne = ival_norm(ev, ne, &overlap);
	nw = ival_norm(w, nw, &dummy);
	ECHECK(!overlap, "%s: the same memory twice", ev_name(kind));
	bool same = ne == nw;
	for (size_t i = 0; same && i < ne; i++)
		same = ev[i].s == w[i].s && ev[i].e == w[i].e;
	if (!same) {
		for (size_t i = 0; i < nw && i < 10; i++)
			fprintf(stderr,
				"  wanted PA %#" PRIx64 "..%#" PRIx64 "\n",
				w[i].s, w[i].e);
	}
	ECHECK(same,
	       "%s does not cover exactly the new leaves that need it",
	       ev_name(kind));
	free(ev);
	free(w);
}

/*
 * The order property: every table page freed and every run of unmapped
 * memory cleaned comes after invalidations that cover what it translated
 * (tests/cover.h), in the order the observer saw the events, however the
 * walk queued them (a parent emptied by its children's removal is queued
 * after them). The pre-op tables of the range, sorted by address, name a
 * freed page's span; the pre-op leaves (R.pre, in IPA order) what lay
 * under it or behind a PA cleaned.
 */
struct otable {
	uint64_t va, base, size;
};

static struct {
	struct otable *t;
	size_t nt, tcap;
	size_t *bypa;     /* R.pre indexes by output address */
	size_t pcap;
	struct { uint64_t s, e; } *pa; /* a clean's covered PA pieces */
	size_t npa, pacap;
	struct cover c;
} O;

static int otable_cb(void *arg, const struct check_table *t)
{
	(void)arg;
	GROW(O.t, O.nt, O.tcap);
	O.t[O.nt++] = (struct otable){ (uint64_t)(uintptr_t)t->va, t->base,
				       t->size };
	return 0;
}

static int otable_cmp(const void *a, const void *b)
{
	const struct otable *x = a, *y = b;
	return x->va < y->va ? -1 : x->va > y->va;
}

/* Before the operation: the tables of [ipa, e). */
static void order_snapshot(uint64_t ipa, uint64_t e)
{
	O.nt = 0;
	if (checker_tables(&R.ck, ipa, e, otable_cb, NULL))
		die("raw walk: %s", R.ck.msg);
	if (O.nt)
		qsort(O.t, O.nt, sizeof(*O.t), otable_cmp);
}

static const struct otable *otable_of(uint64_t va)
{
	size_t lo = 0, hi = O.nt;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (O.t[mid].va < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < O.nt && O.t[lo].va == va ? &O.t[lo] : NULL;
}

/* Every pre-op leaf's part in [s, x) is covered now. */
static bool order_leaves_covered(uint64_t s, uint64_t x)
{
	size_t lo = 0, hi = R.pre.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (R.pre.v[mid].base + R.pre.v[mid].size <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < R.pre.n && R.pre.v[i].base < x; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		uint64_t a = l->base > s ? l->base : s;
		uint64_t b = l->base + l->size < x ? l->base + l->size : x;
		if (!cover_has(&O.c, a, b))
			return false;
	}
	return true;
}

static int bypa_cmp(const void *a, const void *b)
{
	uint64_t x = R.pre.v[*(const size_t *)a].oa;
	uint64_t y = R.pre.v[*(const size_t *)b].oa;
	return x < y ? -1 : x > y;
}

static int piece_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * The clean of [p, p + n) is covered: every byte of it is the output of
 * a pre-op leaf's part in [ipa, e) whose IPAs are covered now (one such
 * leaf per byte is enough: a PA two leaves map is cleaned when either
 * goes).
 */
static bool order_clean_covered(uint64_t p, uint64_t n, uint64_t ipa,
				uint64_t e, uint64_t max_leaf)
{
	size_t lo = 0, hi = R.pre.n;
	uint64_t from = p > max_leaf ? p - max_leaf : 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (R.pre.v[O.bypa[mid]].oa < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	O.npa = 0;
	for (size_t i = lo; i < R.pre.n && R.pre.v[O.bypa[i]].oa < p + n; i++) {
		const struct check_leaf *l = &R.pre.v[O.bypa[i]];
		uint64_t a = l->base > ipa ? l->base : ipa;
		uint64_t b = l->base + l->size < e ? l->base + l->size : e;
		if (a >= b || !cover_has(&O.c, a, b))
			continue;
		GROW(O.pa, O.npa, O.pacap);
		O.pa[O.npa].s = l->oa + (a - l->base);
		O.pa[O.npa].e = l->oa + (b - l->base);
		O.npa++;
	}
	if (O.npa)
		qsort(O.pa, O.npa, sizeof(*O.pa), piece_cmp);
	uint64_t at = p;
	for (size_t i = 0; i < O.npa && at < p + n; i++)
		if (O.pa[i].s <= at && O.pa[i].e > at)
			at = O.pa[i].e;
	return at >= p + n;
}

/* After an operation on [ipa, e) (R.pre and order_snapshot() taken
 * before it): frees, and with @cleans the cleans, in order. */
static void check_order(uint64_t ipa, uint64_t e, bool cleans)
{
	uint64_t max_leaf = 0;
	cover_reset(&O.c);
	if (cleans) {
		if (R.pre.n > O.pcap) {
			O.pcap = R.pre.n;
			O.bypa = realloc(O.bypa, O.pcap * sizeof(*O.bypa));
			if (!O.bypa)
				abort();
		}
		for (size_t i = 0; i < R.pre.n; i++) {
			O.bypa[i] = i;
			if (R.pre.v[i].size > max_leaf)
				max_leaf = R.pre.v[i].size;
		}
		if (R.pre.n)
			qsort(O.bypa, R.pre.n, sizeof(*O.bypa), bypa_cmp);
	}
	for (size_t i = 0; i < R.nev; i++) {
		const struct slat_hosted_event *ev = &R.ev[i].ev;
		cover_event(&O.c, &R.t, ev);
		if (ev->kind == SLAT_EV_PAGE_FREE) {
			const struct otable *t = otable_of(ev->addr);
			ECHECK(t, "event %zu frees %#" PRIx64 ", no table of "
			       "the range before the operation", i, ev->addr);
			uint64_t s = t->base > ipa ? t->base : ipa;
			uint64_t x = t->base + t->size < e ? t->base + t->size
							   : e;
			ECHECK(cover_meets(&O.c, t->base, t->base + t->size) &&
				       order_leaves_covered(s, x),
			       "event %zu frees the table of [%#" PRIx64
			       ", %#" PRIx64 ") before invalidations cover "
			       "what it translated in [%#" PRIx64 ", %#" PRIx64
			       ")", i, t->base, t->base + t->size, s, x);
		} else if (cleans && ev->kind == SLAT_EV_DCACHE_CLEAN_INVAL) {
			ECHECK(order_clean_covered(ev->addr, ev->size, ipa, e,
						   max_leaf),
			       "event %zu cleans PA [%#" PRIx64 ", %#" PRIx64
			       ") before invalidations cover the IPAs that "
			       "mapped it", i, ev->addr, ev->addr + ev->size);
		}
	}
}

/* One slat_map call, checked against the model and the rules. */
static void do_map(uint64_t ipa, uint64_t size, uint64_t pa, uint32_t attrs,
		   uint32_t flags, const char *shape)
{
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_map(ipa %#" PRIx64 ", size %#" PRIx64 ", pa %#" PRIx64
		 ", attrs %#x, flags %#x)%s%s",
		 ipa, size, pa, attrs, flags, shape ? ": " : "",
		 shape ? shape : "");

	uint64_t e = ipa + size, ts, te;
	touched(ipa, e, &ts, &te);
	collect(&R.pre, ipa, e);
	R.post.n = 0;
	bool conflict = (flags & SLAT_MAP_NO_REPLACE) &&
			model_map_conflicts(R.m, ipa, e, pa, attrs);
	bool brk = (flags & SLAT_MAP_BREAK_BLOCK) &&
		   !(flags & SLAT_MAP_NO_REPLACE);
	B.ipa = ipa;
	B.size = brk ? size : 0;
	B.pa = pa;
	B.flags = flags;
	uint64_t kept = 0;
	collect_kept(ipa, pa, attrs);
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (leaf_kept(l, ipa, pa, attrs)) {
			uint64_t s0 = l->base < ipa ? ipa : l->base;
			uint64_t e0 = l->base + l->size > e ? e
							    : l->base + l->size;
			kept += e0 - s0;
		}
	}
	bool allow_nomem = prepare_cache(SLAT_NEED(
		.kind = SLAT_OP_MAP, .ipa = slat_ipa(ipa), .size = size,
		.pa = slat_pa(pa), .attrs = attrs, .flags = flags));
	uint32_t nr0 = R.cur->nr;
	struct slat_stats st0 = R.t.stats;
	uint64_t done = 0xdead;

	order_snapshot(ipa, e);
	start_recording();
	probe_start(PROBE_UNMAPPED, ipa);
	P.map = true;
	P.map_ipa = ipa;
	P.map_pa = pa;
	P.map_attrs = attrs;
	struct slat_op args = { .flags = flags, .cache = R.cur };
	int ret =
		slat_map(&R.t, slat_ipa(ipa), size, slat_pa(pa), attrs, &args);
	done = args.done;
	R.recording = false;
	index_events();
	check_order(ipa, e, false);

	if (conflict) {
		CHECK(ret == SLAT_E_EXISTS,
		      "NO_REPLACE over a different mapping returned %s, "
		      "expected SLAT_E_EXISTS",
		      check_status_name(ret));
		CHECK(stats_unchanged(&st0) && R.nev == 0 &&
			      R.cur->nr == nr0,
		      "SLAT_E_EXISTS changed the table");
		CHECK(done == 0, "*done %#" PRIx64 " after SLAT_E_EXISTS", done);
		R.exists++;
		check_range(ts, te);
		return;
	}
	if (ret == SLAT_E_NOMEM) {
		CHECK(allow_nomem,
		      "SLAT_E_NOMEM with slat_pages_needed() = %" PRIu64
		      " pages in the cache",
		      R.need);
		CHECK(done < size && done % R.G == 0,
		      "SLAT_E_NOMEM with *done %#" PRIx64, done);
		R.nomem++;
	} else {
		check_pages_taken(nr0);
		uint64_t written = size - kept;
		int want = written ? SLAT_OK : SLAT_NOTHING_TO_DO;
		CHECK(ret == want, "returned %s, expected %s (%#" PRIx64
				   " bytes to write)",
		      check_status_name(ret), check_status_name(want),
		      written);
		CHECK(done == size, "*done %#" PRIx64 " after success", done);
		if (ret == SLAT_NOTHING_TO_DO) {
			R.nothing++;
			CHECK(R.nev == 0 && R.t.stats.written[SLAT_WRITE_LEAF] ==
						    st0.written[SLAT_WRITE_LEAF],
			      "SLAT_NOTHING_TO_DO but something was done");
		}
	}
	uint64_t de = ipa + done;

	/* new leaves: inside [ipa, ipa+done) and not unchanged pre leaves;
	 * none, new or changed, maps outside what was asked */
	collect(&R.post, ts, te);
	if (checker_map_bounds_leaves(&R.ck, R.pre.v, R.pre.n, R.post.v,
				      R.post.n, ipa, done, pa))
		ECHECK(false, "mapping outside what was asked: %s", R.ck.msg);
	R.map_bounds_checked++;
	/* On the heap: a map of many leaves has more than a stack holds. */
	static const struct check_leaf **newl;
	static bool *dwant, *iwant;
	static size_t newcap;
	if (newcap < R.post.n + 1) {
		newcap = 2 * (R.post.n + 1);
		newl = realloc(newl, newcap * sizeof(*newl));
		dwant = realloc(dwant, newcap * sizeof(*dwant));
		iwant = realloc(iwant, newcap * sizeof(*iwant));
		if (!newl || !dwant || !iwant)
			abort();
	}
	size_t nnew = 0;
	for (size_t i = 0; i < R.post.n; i++) {
		const struct check_leaf *l = &R.post.v[i];
		if (l->base < ipa || l->base + l->size > de)
			continue;
		if (post_is_kept(l, ipa, pa, attrs))
			continue;
		uint64_t want = expected_leaf(l->base, ipa, size, pa, flags);
		ECHECK(l->size == want,
		       "new leaf %#" PRIx64 "+%#" PRIx64
		       " but the largest allowed is %#" PRIx64,
		       l->base, l->size, want);
		dwant[nnew] = R.fmt->dcache_on_install(&R.cfg, attrs);
		iwant[nnew] = (attrs & SLAT_X) && R.fmt->icache_on_exec(&R.cfg);
		newl[nnew++] = l;
	}
	check_cache_events(SLAT_EV_DCACHE_CLEAN_INVAL, dwant, nnew, newl);
	check_cache_events(SLAT_EV_ICACHE_INVAL, iwant, nnew, newl);

	/* break-before-make for every replaced leaf */
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (!in_done(l, ipa, de) || leaf_kept(l, ipa, pa, attrs))
			continue;
		ECHECK(tlbi_covers(l, true),
		       "replaced leaf %#" PRIx64 "+%#" PRIx64
		       " level %d got no TLB invalidation while invalid%s",
		       l->base, l->size, l->level,
		       R.fmt->tlbi_by_address ? "" : " (no VMID flush then)");
	}
	bool replaced = false;
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		bool straddles = l->base < ipa || l->base + l->size > e;
		if (leaf_kept(l, ipa, pa, attrs))
			continue;
		/* replaced, or split (also when it then ran out of pages) */
		if (in_done(l, ipa, de) || straddles)
			replaced = true;
	}
	if (!replaced)
		ECHECK(count_events(SLAT_EV_TLBI_IPA) +
				       count_events(SLAT_EV_TLBI_RANGE) +
				       count_events(SLAT_EV_TLBI_VMID) ==
			       0,
		       "TLB invalidation although no valid leaf was replaced");
	check_stats_delta(&st0, nr0 - R.cur->nr);

	/* A block broken goes whole, once the walk reached it; the map then
	 * maps its part of the range. */
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (map_breaks(l) && in_done(l, ipa, de)) {
			model_remove(R.m, l->base, l->base + l->size);
			R.blocks_broken++;
		}
	}
	B.size = 0;
	model_map(R.m, ipa, done, pa, attrs);
	check_range(ts, te);
}

static uint32_t gen_map_flags(void)
{
	uint32_t flags = 0;
	unsigned c = (unsigned)below(100);
	if (c < 10) {
		flags |= SLAT_MAP_PAGES;
	} else if (c < 25) {
		/* a level's size, or something between two levels */
		int l = R.start_level + (int)below(4 - R.start_level);
		unsigned sh = (unsigned)__builtin_ctzll(LSIZE(l));
		if (chance(30))
			sh += (unsigned)below(R.ck.geo.bits_per_level);
		flags |= SLAT_MAP_CAP(sh);
	}
	if (chance(10))
		flags |= SLAT_MAP_NO_REPLACE;
	if (chance(10))
		flags |= SLAT_MAP_BREAK_BLOCK;
	if (chance(10))
		flags |= SLAT_SHARED;
	return flags;
}

/* The map generator of every shape: random ranges, output addresses,
 * attributes and caps. */
static void op_map_plain(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	uint64_t pa = gen_pa(ipa, size, w);
	uint32_t attrs = gen_attrs();
	uint32_t flags = gen_map_flags();
	/* bound the number of leaves one map may create */
	uint64_t ml = max_leaf(ipa, pa, flags);
	if (size / ml > MAX_LEAVES)
		size = MAX_LEAVES * ml;
	do_map(ipa, size, pa, attrs, flags, NULL);
}

/* The block levels (leaves above the last level), largest first. */
static int block_levels(int *levels)
{
	int n = 0;
	for (int l = R.start_level; l < 3; l++)
		if (leaf_level(l))
			levels[n++] = l;
	return n;
}

/* The leaves a map of [ipa, ipa+size) -> pa would install into an empty
 * table (the largest that alignment, size and cap allow), up to @limit. */
static uint64_t leaves_for(uint64_t ipa, uint64_t size, uint64_t pa,
			   uint32_t flags, uint64_t limit)
{
	uint64_t cap = cap_size(flags), n = 0, a = ipa, e = ipa + size;
	while (a < e && n < limit) {
		uint64_t S = R.G;
		for (int l = R.start_level; l < 3; l++) {
			uint64_t L = LSIZE(l);
			if (leaf_level(l) && L <= cap && !((a | (pa + (a - ipa))) & (L - 1)) &&
			    e - a >= L) {
				S = L;
				break;
			}
		}
		a += S;
		n++;
	}
	return n;
}

/* The leaves an awkward shape may take every time (more: now and then). */
#define SHAPE_LEAVES 512

static const char *const shape_names[] = {
	"IPA a few pages into a block, size over a block",
	"IPA inside a block, PA block-aligned",
	"IPA block-aligned, PA inside a block",
	"ending a few pages into the next block",
	"one block's size at an unaligned IPA (the fault path's shape)",
	"one block's size, aligned",
};
#define NR_SHAPES (sizeof(shape_names) / sizeof(shape_names[0]))

/*
 * The shapes the leaf-fit rule must get right (docs/design.md, "One rule,
 * one place"): sizes larger than the IPA's own alignment, IPA and PA
 * aligned differently to a block, ranges ending a few pages into the next
 * block, a single call of exactly a block's size at an unaligned IPA (the
 * fault path's shape), mostly where tables already exist: next to a
 * mapping, or after mapping a page elsewhere in the same parent entry
 * (the same 1 GiB or 512 GiB with 4K pages), so that the fault path's
 * descent finds the tables and an empty entry.
 */
static void op_map_shape(void)
{
	int levels[4];
	int n = block_levels(levels);
	struct window *w = &R.win[below(NR_WIN)];
	uint64_t G = R.G;
	unsigned shape = (unsigned)below(NR_SHAPES);
	/* shapes whose IPA and PA differ modulo the block map it with
	 * pages: the smallest block, and rarely where a block holds many
	 * pages (16K, 64K), to bound the work */
	bool incongruent = shape == 1 || shape == 2 ||
			   ((shape == 3 || shape == 4) && chance(50));
	if (!n) {
		op_map_plain();
		return;
	}
	int li = incongruent ? n - 1 : (int)below(n);
	uint64_t B = LSIZE(levels[li]);
	while (li < n - 1 && 4 * B > w->size)
		B = LSIZE(levels[++li]);
	if (4 * B > w->size) {
		op_map_plain();
		return;
	}
	/* the block-sized region: next to a mapping (its tables exist),
	 * or anywhere in the window */
	uint64_t lim = w->base + w->size - 4 * B, region;
	struct model_run run;
	uint64_t from = w->base + align_down(below(w->size), G);
	if (chance(60) && model_for_each(R.m, from, w->base + w->size,
					 first_run_cb, &run))
		region = align_down(run.start + below(run.end - run.start), B);
	else
		region = w->base + align_down(below(w->size), B);
	if (region > lim)
		region = align_down(lim, B);
	if (region < w->base)
		region = w->base;
	uint64_t k = 1 + below(8), j = below(8);
	uint64_t delta = w->delta[below(NR_DELTA)]; /* multiple of the top */
	uint64_t pblock = region + delta;            /* block-aligned PA */
	uint64_t ipa, size, pa;
	switch (shape) {
	case 0:
		ipa = region + (chance(50) ? k : B / G - k) * G;
		size = B * (1 + below(2)) + j * G;
		pa = ipa + delta;
		break;
	case 1:
		ipa = region + (chance(50) ? k : B / G - k) * G;
		size = B + j * G;
		pa = pblock;
		break;
	case 2:
		ipa = region;
		size = B + j * G;
		pa = pblock + k * G;
		break;
	case 3:
		ipa = region + (chance(50) ? 0 : below(B / G) * G);
		size = region + B * (1 + below(2)) + k * G - ipa;
		pa = incongruent ? pblock + (chance(50) ? 0 : k * G)
				 : ipa + delta;
		if (incongruent && size > B + j * G)
			size = B + j * G;
		break;
	case 4:
		ipa = region + (chance(50) ? k : below(B / G - 1) + 1) * G;
		size = B;
		pa = !incongruent ? ipa + delta
				  : chance(60) ? pblock : pblock + k * G;
		break;
	default:
		ipa = region;
		size = B;
		pa = pblock;
		break;
	}
	if (pa + size > R.pa_end || pa + size < pa)
		pa = ipa + w->delta[0];
	uint32_t flags = 0;
	if (chance(10))
		flags |= SLAT_MAP_CAP((unsigned)__builtin_ctzll(B));
	/* bound the work: a shape that takes many leaves (pages up to a
	 * block boundary where a table has 2048 or 8192 entries) only now
	 * and then */
	uint64_t cost = leaves_for(ipa, size, pa, flags, 64 * SHAPE_LEAVES);
	if (cost > SHAPE_LEAVES && below(cost) >= SHAPE_LEAVES) {
		op_map_plain();
		return;
	}
	if (chance(10))
		flags |= SLAT_MAP_NO_REPLACE;
	if (chance(15))
		flags |= SLAT_SHARED;
	/* the tables of the region's parent entry first: one page in it */
	if (chance(50) && levels[li] > R.start_level) {
		uint64_t P = LSIZE(levels[li] - 1);
		uint64_t ps = align_down(region, P), pe = ps + P;
		if (ps < w->base)
			ps = w->base;
		if (pe > w->base + w->size || pe < ps)
			pe = w->base + w->size;
		uint64_t page = ps + align_down(below(pe - ps), G);
		if (chance(60) && page >= region && page < region + 3 * B)
			page = region >= ps + G ? region - G : region + 3 * B;
		if (page < pe) {
			R.shape_premaps++;
			do_map(page, G, page + w->delta[0], gen_attrs(), 0,
			       "a page in the parent entry first");
		}
	}
	R.shapes[shape]++;
	do_map(ipa, size, pa, gen_attrs(), flags, shape_names[shape]);
}

static void op_map(void)
{
	if (chance(35))
		op_map_shape();
	else
		op_map_plain();
}

/* ------------------------------------------------------------ unmap, wrprotect */

/* Is [s, e) inside the union of the range invalidations? */
static bool range_events_cover(uint64_t s, uint64_t e)
{
	size_t lo = 0, hi = X.nunion;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (X.runion[mid].e <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < X.nunion && X.runion[lo].s <= s && X.runion[lo].e >= e;
}

/* A freed table page was invalidated first (the walker may cache it). */
static void check_frees_after_tlbi(void)
{
	bool tlbi = false;
	for (size_t i = 0; i < R.nev; i++) {
		enum slat_hosted_event_kind k = R.ev[i].ev.kind;
		if (k == SLAT_EV_TLBI_IPA || k == SLAT_EV_TLBI_RANGE ||
		    k == SLAT_EV_TLBI_VMID)
			tlbi = true;
		ECHECK(k != SLAT_EV_PAGE_FREE || tlbi,
		       "table page freed before any TLB invalidation");
	}
}

/*
 * The invalidations of an operation that removes or restricts translations
 * (unmap, wrprotect, dirty_read with clear), against its policy. @affected
 * says which pre-op leaves it changes; @bbm_invalid: the change makes the
 * entry invalid, so a by-IPA invalidation must come after it.
 */
static void check_policy(enum slat_tlbi_policy policy, bool changed,
			 uint64_t ipa, uint64_t de, uint64_t e,
			 bool (*affected)(const struct check_leaf *),
			 bool bbm_invalid)
{
	size_t nipa = count_events(SLAT_EV_TLBI_IPA);
	size_t nrange = count_events(SLAT_EV_TLBI_RANGE);
	size_t nvmid = count_events(SLAT_EV_TLBI_VMID);
	size_t nfree = count_events(SLAT_EV_PAGE_FREE);
	bool by_addr = R.fmt->tlbi_by_address;
	check_frees_after_tlbi();
	ECHECK(by_addr || nipa + nrange == 0,
	       "%zu by-IPA and %zu range invalidations on a format without "
	       "invalidation by address",
	       nipa, nrange);
	if (!changed) {
		/* splits alone (no leaf changed) may still break-before-make */
		bool split = false;
		for (size_t i = 0; i < R.pre.n; i++) {
			const struct check_leaf *l = &R.pre.v[i];
			if (l->base < ipa || l->base + l->size > e)
				split = split || affected(l);
		}
		split = split && R.fmt->split_bbm;
		ECHECK(split || nipa + nrange + nvmid + nfree == 0,
		       "TLB invalidation although nothing changed");
		ECHECK(!by_addr || nrange + nvmid == 0,
		       "range/VMID invalidation although nothing changed");
		return;
	}
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (!in_done(l, ipa, de) || !affected(l))
			continue;
		bool partial = l->base < ipa || l->base + l->size > de;
		uint64_t s0 = l->base < ipa ? ipa : l->base;
		uint64_t e0 = l->base + l->size > de ? de : l->base + l->size;
		if (!by_addr) {
			/* one flush after the change, whatever the policy
			 * but "none" (splits need no flush: done in place) */
			if (policy != SLAT_FLUSH_NONE)
				ECHECK(tlbi_covers(l, true),
				       "leaf %#" PRIx64 "+%#" PRIx64
				       " level %d: no VMID flush after its "
				       "change",
				       l->base, l->size, l->level);
			continue;
		}
		if (partial) {
			ECHECK(tlbi_covers(l, true),
			       "split leaf %#" PRIx64 "+%#" PRIx64
			       " level %d: no invalidation while invalid",
			       l->base, l->size, l->level);
		}
		switch (policy) {
		case SLAT_FLUSH_ENTRY:
			if (!partial)
				ECHECK(tlbi_covers(l, bbm_invalid),
				       "leaf %#" PRIx64 "+%#" PRIx64
				       " level %d: no TLB invalidation by IPA%s",
				       l->base, l->size, l->level,
				       bbm_invalid ? " after it was cleared"
						   : "");
			break;
		case SLAT_FLUSH_RANGE:
			ECHECK(range_events_cover(s0, e0),
			       "range invalidations miss %#" PRIx64
			       "..%#" PRIx64,
			       s0, e0);
			break;
		default:
			break;
		}
	}
	if (!by_addr) {
		/* every invalidation is a VMID flush: one per entry changed,
		 * or one after the walk (and one per batch of freed tables);
		 * with break-before-make (NPT) also one per block split, while
		 * it was invalid, whatever the policy */
		uint64_t nbrk = R.fmt->split_bbm
					? R.t.stats.written[SLAT_WRITE_BREAK] -
						  R.breaks0
					: 0;
		ECHECK(nvmid >= nbrk,
		       "%zu VMID flushes for %" PRIu64 " blocks broken", nvmid,
		       nbrk);
		nvmid -= nvmid >= nbrk ? nbrk : 0;
		switch (policy) {
		case SLAT_FLUSH_ENTRY:
			ECHECK(nvmid >= 1, "SLAT_FLUSH_ENTRY: no VMID flush");
			break;
		case SLAT_FLUSH_RANGE:
		case SLAT_FLUSH_VMID:
			ECHECK(nvmid >= 1 && (nvmid == 1 || nfree),
			       "policy %d: %zu VMID flushes", policy, nvmid);
			break;
		case SLAT_FLUSH_NONE:
			ECHECK(nvmid == 0 || nfree,
			       "SLAT_FLUSH_NONE flushed without freeing tables");
			break;
		}
		return;
	}
	switch (policy) {
	case SLAT_FLUSH_ENTRY:
		ECHECK(nrange + nvmid == 0,
		       "SLAT_FLUSH_ENTRY issued range/VMID invalidations");
		break;
	case SLAT_FLUSH_RANGE:
		ECHECK(nvmid == 0 && nrange >= 1,
		       "SLAT_FLUSH_RANGE: %zu range and %zu VMID "
		       "invalidations",
		       nrange, nvmid);
		break;
	case SLAT_FLUSH_VMID:
		/* one, or one per batch of freed tables */
		ECHECK(nvmid >= 1 && nrange == 0 && (nvmid == 1 || nfree),
		       "SLAT_FLUSH_VMID: %zu VMID and %zu range "
		       "invalidations",
		       nvmid, nrange);
		break;
	case SLAT_FLUSH_NONE:
		/* only to free tables the hardware may still walk */
		ECHECK(nrange + nvmid == 0 || nfree,
		       "SLAT_FLUSH_NONE issued range/VMID invalidations "
		       "without freeing tables");
		break;
	}
}

static bool affected_any(const struct check_leaf *l)
{
	(void)l;
	return true;
}


struct edge {
	uint64_t x;
	int d;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *p = a, *q = b;
	return p->x < q->x ? -1 : p->x > q->x;
}

/*
 * The events of @kind cover each PA exactly as often as the @n output
 * ranges of @want do (two IPAs may map the same PA: then twice).
 */
static void check_cache_coverage(enum slat_hosted_event_kind kind,
				 const struct check_leaf *want, size_t n)
{
	size_t ne = 0, k = 0;
	for (size_t i = 0; i < R.nev; i++)
		ne += R.ev[i].ev.kind == kind;
	struct edge *e = malloc((2 * (ne + n) + 1) * sizeof(*e));
	if (!e)
		abort();
	for (size_t i = 0; i < R.nev; i++) {
		if (R.ev[i].ev.kind != kind)
			continue;
		e[k++] = (struct edge){ R.ev[i].ev.addr, 1 };
		e[k++] = (struct edge){ R.ev[i].ev.addr + R.ev[i].ev.size, -1 };
	}
	for (size_t i = 0; i < n; i++) {
		e[k++] = (struct edge){ want[i].oa, -1 };
		e[k++] = (struct edge){ want[i].oa + want[i].size, 1 };
	}
	qsort(e, k, sizeof(*e), edge_cmp);
	long depth = 0;
	bool same = true;
	for (size_t i = 0; i < k; i++) {
		depth += e[i].d;
		if (depth && (i + 1 == k || e[i + 1].x != e[i].x))
			same = false;
	}
	if (!same)
		for (size_t i = 0; i < n && i < 10; i++)
			fprintf(stderr, "  wanted PA %#" PRIx64 "..%#" PRIx64 "\n",
				want[i].oa, want[i].oa + want[i].size);
	ECHECK(same, "%s does not cover exactly the memory of the leaves "
		     "removed", ev_name(kind));
	free(e);
}

struct inv_at {
	uint64_t addr;
	size_t ev;       /* index of the event */
};

static int inv_at_cmp(const void *a, const void *b)
{
	const struct inv_at *p = a, *q = b;
	if (p->addr != q->addr)
		return p->addr < q->addr ? -1 : 1;
	return p->ev < q->ev ? -1 : p->ev > q->ev;
}

/* The first inner-shareable by-IPA invalidation of @ipa in @v (sorted). */
static size_t first_ipa_inv(const struct inv_at *v, size_t n, uint64_t ipa)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].addr < ipa)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].addr == ipa ? v[lo].ev : SIZE_MAX;
}

/* For each removed piece, the index of the first event that invalidates
 * its first IPA: a VMID flush, a range over it, or a by-IPA of it. */
static void first_invalidations(const struct check_leaf *piece, size_t n,
				size_t *first)
{
	size_t nipa = 0, nrange = 0, vmid = SIZE_MAX;
	struct inv_at *ipa = malloc((R.nev + 1) * sizeof(*ipa));
	size_t *range = malloc((R.nev + 1) * sizeof(*range));
	if (!ipa || !range)
		abort();
	for (size_t k = 0; k < R.nev; k++) {
		const struct slat_hosted_event *ev = &R.ev[k].ev;
		if (ev->kind == SLAT_EV_TLBI_VMID && vmid == SIZE_MAX)
			vmid = k;
		if (ev->kind == SLAT_EV_TLBI_RANGE)
			range[nrange++] = k;
		if (ev->kind == SLAT_EV_TLBI_IPA &&
		    ev->scope == SLAT_TLBI_INNER_SHAREABLE)
			ipa[nipa++] = (struct inv_at){ ev->addr, k };
	}
	qsort(ipa, nipa, sizeof(*ipa), inv_at_cmp);
	for (size_t j = 0; j < n; j++) {
		size_t f = vmid, b = first_ipa_inv(ipa, nipa, piece[j].base);
		if (b < f)
			f = b;
		for (size_t r = 0; r < nrange && range[r] < f; r++) {
			const struct slat_hosted_event *ev = &R.ev[range[r]].ev;
			if (piece[j].base - ev->addr < ev->size)
				f = range[r];
		}
		first[j] = f;
	}
	free(range);
	free(ipa);
}

static int piece_oa_cmp(const void *a, const void *b)
{
	const struct check_leaf *p = a, *q = b;
	return p->oa < q->oa ? -1 : p->oa > q->oa;
}

/*
 * Each byte a clean (event @k) covers belongs to a removed piece already
 * invalidated (two pieces may map the same PA). @piece is sorted by output
 * address; no piece is larger than @max.
 */
static bool clean_after_inv(size_t k, const struct check_leaf *piece,
			    const size_t *first, size_t n, uint64_t max,
			    struct ival *ok)
{
	const struct slat_hosted_event *ev = &R.ev[k].ev;
	uint64_t from = ev->addr > max ? ev->addr - max : 0, end = ev->addr + ev->size;
	size_t lo = 0, hi = n, nok = 0;
	bool overlap;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (piece[mid].oa < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j < n && piece[j].oa < end; j++) {
		uint64_t a = piece[j].oa > ev->addr ? piece[j].oa : ev->addr;
		uint64_t b = piece[j].oa + piece[j].size < end
				? piece[j].oa + piece[j].size : end;
		if (a < b && first[j] < k)
			ok[nok++] = (struct ival){ a, b };
	}
	nok = ival_norm(ok, nok, &overlap);
	return nok == 1 && ok[0].s == ev->addr && ok[0].e == end;
}

/*
 * Without FWB, unmap cleans and invalidates exactly the memory of the
 * cacheable (Normal write-back) leaves it removed, each byte once, and
 * each after an invalidation covering its IPA (under SLAT_FLUSH_NONE the
 * caller invalidates later: no order).
 */
static void check_unmap_cmo(enum slat_tlbi_policy policy, uint64_t ipa,
			    uint64_t de)
{
	size_t n = 0;
	uint64_t max = 0;
	struct check_leaf *piece = calloc(R.pre.n + 1, sizeof(*piece));
	size_t *first = calloc(R.pre.n + 1, sizeof(*first));
	struct ival *ok = malloc((R.pre.n + 1) * sizeof(*ok));
	if (!piece || !first || !ok)
		abort();
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (!l->valid || !in_done(l, ipa, de) ||
		    !R.fmt->dcache_on_install(&R.cfg, SLAT_MT(l->attrs)))
			continue;
		uint64_t s0 = l->base < ipa ? ipa : l->base;
		uint64_t e0 = l->base + l->size > de ? de : l->base + l->size;
		piece[n] = *l;
		piece[n].base = s0;
		piece[n].size = e0 - s0;
		piece[n++].oa = l->oa + (s0 - l->base);
		if (e0 - s0 > max)
			max = e0 - s0;
	}
	check_cache_coverage(SLAT_EV_DCACHE_CLEAN_INVAL, piece, n);
	qsort(piece, n, sizeof(*piece), piece_oa_cmp);
	first_invalidations(piece, n, first);
	for (size_t k = 0; policy != SLAT_FLUSH_NONE && k < R.nev; k++)
		if (R.ev[k].ev.kind == SLAT_EV_DCACHE_CLEAN_INVAL)
			ECHECK(clean_after_inv(k, piece, first, n, max, ok),
			       "D-cache clean of PA %#" PRIx64 "+%#" PRIx64
			       " before the invalidation of what mapped it",
			       R.ev[k].ev.addr, R.ev[k].ev.size);
	free(ok);
	free(first);
	free(piece);
}

/*
 * The batch's own shape, now and then: a parent table holding exactly @n
 * children (63, 64, 65, 127, 128 or 129; a batch holds 64), each a chain
 * of tables down to one page (its last, or anywhere), mapped quietly (the model follows, the
 * operation's checks come after); the unmap or recovery drawn next covers
 * exactly the children, so that the parent empties and is queued after
 * them, in post-order, when the batch may be full. False when the
 * configuration has no such parent in a window.
 */
static bool batch_shape(uint64_t *ipa, uint64_t *size)
{
	static const uint32_t ns[] = { 63, 64, 65, 127, 128, 129 };
	int lo = R.start_level + 1;
	if (lo > 2)
		return false;
	int lc = lo + (int)below((uint64_t)(3 - lo));
	uint64_t C = LSIZE(lc), P = LSIZE(lc - 1);
	uint64_t n = ns[below(6)];
	if (n > P / C)
		n = P / C;
	struct window *w = &R.win[below(NR_WIN)];
	uint64_t ps = align_down(w->base + P - 1, P), we = w->base + w->size;
	if (ps < w->base || ps + P > we || ps + P < ps)
		return false;
	ps += below((we - ps) / P) * P;
	int64_t need = slat_pages_needed(
		&R.t, SLAT_NEED(.kind = SLAT_OP_UNMAP, .ipa = slat_ipa(ps),
				.size = P));
	if (need > 0 && slat_hosted_cache_topup(&R.h, &R.cache,
						(uint32_t)need))
		die("arena exhausted");
	CHECK(slat_unmap(&R.t, slat_ipa(ps), P,
			 SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &R.cache)) ==
		      SLAT_OK,
	      "batch shape: unmap of the parent's span");
	model_unmap(R.m, ps, P);
	for (uint64_t k = 0; k < n; k++) {
		/* anywhere in the child: a flush that reached only its first
		 * page would miss it */
		uint64_t a = ps + k * C + (chance(50) ? C - R.G
					     : align_down(below(C), R.G));
		uint64_t pa = a + w->delta[0];
		if (slat_hosted_cache_topup(&R.h, &R.cache, 4))
			die("arena exhausted");
		int ret = slat_map(&R.t, slat_ipa(a), R.G, slat_pa(pa), SLAT_RW,
				   SLAT_OP(.cache = &R.cache));
		CHECK(ret == SLAT_OK, "batch shape: map %#" PRIx64 ": %s", a,
		      check_status_name(ret));
		model_map(R.m, a, R.G, pa, SLAT_RW);
	}
	R.batch_shapes++;
	*ipa = ps;
	*size = n * C;
	return true;
}

/* The permissions a restrict removes (affected_restricted()). */
static uint32_t restrict_cur;

static bool affected_restricted(const struct check_leaf *l)
{
	return l->attrs & restrict_cur;
}

struct restrict_arg {
	uint32_t perms;
	bool bad;
};

/* A leaf the removal would leave one the format cannot express. */
static int restrict_attr_cb(void *arg, const struct model_run *r)
{
	struct restrict_arg *a = arg;
	if ((r->attrs & a->perms) &&
	    !R.fmt->attrs_ok(&R.cfg, r->attrs & ~a->perms))
		a->bad = true;
	return 0;
}

/* A refused restrict (a hole with SLAT_NO_HOLES, a leaf it cannot
 * express) changes nothing. */
static void check_restrict_refused(int ret, bool hole, bool bad,
				   const struct slat_stats *st0, uint32_t nr0,
				   uint64_t done)
{
	CHECK((hole && ret == SLAT_E_NOENT) || (bad && ret == SLAT_E_ATTR),
	      "returned %s, expected %s", check_status_name(ret),
	      hole ? "SLAT_E_NOENT" : "SLAT_E_ATTR");
	CHECK(stats_unchanged(st0) && R.nev == 0 && R.cur->nr == nr0,
	      "%s changed the table", check_status_name(ret));
	CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
	      check_status_name(ret));
	R.noent += hole;
}

/*
 * unmap (@perms 0), or remove @perms: slat_wrprotect() for SLAT_W alone
 * unless @restrict_api, else slat_restrict().
 */
static void op_unmap_restrict(uint32_t perms, bool restrict_api)
{
	uint64_t ipa, size;
	struct window *w;
	bool unmap = !perms;
	gen_range(&ipa, &size, &w);
	if (unmap && chance(1))
		batch_shape(&ipa, &size);
	enum slat_tlbi_policy policy = (enum slat_tlbi_policy)below(4);
	uint32_t flags = !unmap && chance(30) ? SLAT_NO_HOLES : 0;
	const char *name = unmap ? "unmap" : restrict_api ? "restrict"
							   : "wrprotect";
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_%s(ipa %#" PRIx64 ", size %#" PRIx64
		 ", perms %#x, policy %d, flags %#x)",
		 name, ipa, size, perms, policy, flags);
	uint64_t e = ipa + size, ts, te;
	touched(ipa, e, &ts, &te);
	collect(&R.pre, ipa, e);
	order_snapshot(ipa, e);
	R.post.n = 0;
	bool hole = (flags & SLAT_NO_HOLES) && !model_fully_mapped(R.m, ipa, e);
	struct restrict_arg ra = { perms, false };
	if (!unmap)
		model_for_each(R.m, ipa, e, restrict_attr_cb, &ra);
	enum slat_op_kind op = unmap ? SLAT_OP_UNMAP
			       : restrict_api ? SLAT_OP_RESTRICT
					      : SLAT_OP_WRPROTECT;
	bool allow_nomem = prepare_cache(SLAT_NEED(
		.kind = op, .ipa = slat_ipa(ipa), .size = size, .attrs = perms,
		.flags = flags));
	uint32_t nr0 = R.cur->nr;
	struct slat_stats st0 = R.t.stats;
	uint64_t done = 0xdead;

	start_recording();
	probe_start(unmap ? PROBE_UNMAPPED : PROBE_RESTRICTED, ipa);
	P.perms = restrict_cur = perms;
	struct slat_op args = { .flags = flags, .flush = policy, .cache = R.cur };
	int ret = unmap ? slat_unmap(&R.t, slat_ipa(ipa), size, &args)
		  : restrict_api
			? slat_restrict(&R.t, slat_ipa(ipa), size, perms, &args)
			: slat_wrprotect(&R.t, slat_ipa(ipa), size, &args);
	done = args.done;
	R.recording = false;
	index_events();
	if (hole || ra.bad) {
		check_restrict_refused(ret, hole, ra.bad, &st0, nr0, done);
		check_range(ts, te);
		return;
	}
	check_order(ipa, e, policy != SLAT_FLUSH_NONE);

	if (ret == SLAT_E_NOMEM) {
		CHECK(allow_nomem,
		      "SLAT_E_NOMEM with slat_pages_needed() = %" PRIu64
		      " pages in the cache",
		      R.need);
		CHECK(done < size && done % R.G == 0,
		      "SLAT_E_NOMEM with *done %#" PRIx64, done);
		R.nomem++;
	} else {
		check_pages_taken(nr0);
		CHECK(ret == SLAT_OK, "returned %s", check_status_name(ret));
		CHECK(done == size, "*done %#" PRIx64 " after success", done);
	}
	uint64_t de = ipa + done;
	bool changed = false;
	for (size_t i = 0; i < R.pre.n; i++)
		if (in_done(&R.pre.v[i], ipa, de) &&
		    (unmap || (R.pre.v[i].attrs & perms)))
			changed = true;
	ECHECK(count_events(SLAT_EV_ICACHE_INVAL) == 0,
	       "I-cache invalidation during %s", name);
	if (!unmap)
		ECHECK(count_events(SLAT_EV_DCACHE_CLEAN_INVAL) == 0,
		       "D-cache maintenance during %s", name);
	else
		check_unmap_cmo(policy, ipa, de);
	check_policy(policy, changed, ipa, de, e,
		     unmap ? affected_any : affected_restricted, unmap);
	for (size_t i = 0; i < R.nev; i++)
		ECHECK(R.ev[i].ev.kind != SLAT_EV_TLBI_IPA ||
			       R.ev[i].ev.scope == SLAT_TLBI_INNER_SHAREABLE,
		       "local TLB invalidation while removing permissions");
	check_stats_delta(&st0, nr0 - R.cur->nr);

	if (unmap)
		model_unmap(R.m, ipa, done);
	else
		model_restrict(R.m, ipa, done, perms);
	check_range(ts, te);
}

/* restrict: one to three permissions, the awkward ones on purpose (read,
 * which EPT and Arm stage 1 cannot lose alone; one of the two executes). */
static void op_restrict(void)
{
	uint32_t perms;
	do
		perms = gen_perms(true);
	while (!perms);
	op_unmap_restrict(perms, true);
}

/* ------------------------------------------------------------ relax */

struct relax_arg {
	uint32_t perms;
	bool bad;
};

static int relax_attr_cb(void *arg, const struct model_run *r)
{
	struct relax_arg *a = arg;
	if (!R.fmt->attrs_ok(&R.cfg, r->attrs | a->perms))
		a->bad = true;
	return 0;
}

static void op_relax(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	uint32_t perms;
	do
		perms = gen_perms(true);
	while (!perms);
	/* the permissions are added to leaves: on their own they need not
	 * make a leaf (EPT: W alone, or X alone without execute-only), the
	 * leaves they make must (relax_attr_cb) */
	/* prefer ranges that are mapped: relax is for faults on mappings */
	struct model_run run;
	if (chance(80) && model_for_each(R.m, ipa, w->base + w->size,
					 first_run_cb, &run)) {
		if (run.start > ipa)
			ipa = run.start;
		if (run.end - ipa < size)
			size = run.end - ipa;
	}
	uint32_t flags = (chance(10) ? SLAT_SHARED : 0) |
			 (chance(50) ? SLAT_NO_HOLES : 0);
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_relax(ipa %#" PRIx64 ", size %#" PRIx64
		 ", perms %#x, flags %#x)",
		 ipa, size, perms, flags);
	uint64_t e = ipa + size, ts, te;
	touched(ipa, e, &ts, &te);
	collect(&R.pre, ipa, e);
	R.post.n = 0;
	bool hole = (flags & SLAT_NO_HOLES) && !model_fully_mapped(R.m, ipa, e);
	struct relax_arg ra = { perms, false };
	model_for_each(R.m, ipa, e, relax_attr_cb, &ra);
	bool allow_nomem = prepare_cache(SLAT_NEED(
		.kind = SLAT_OP_RELAX, .ipa = slat_ipa(ipa), .size = size,
		.attrs = perms, .flags = flags));
	uint32_t nr0 = R.cur->nr;
	struct slat_stats st0 = R.t.stats;
	uint64_t done = 0xdead;

	start_recording();
	struct slat_op args = { .flags = flags, .cache = R.cur };
	int ret = slat_relax(&R.t, slat_ipa(ipa), size, perms, &args);
	done = args.done;
	R.recording = false;
	index_events();

	if (hole || ra.bad) {
		CHECK((hole && ret == SLAT_E_NOENT) ||
			      (ra.bad && ret == SLAT_E_ATTR),
		      "returned %s, expected %s", check_status_name(ret),
		      hole ? "SLAT_E_NOENT" : "SLAT_E_ATTR");
		CHECK(stats_unchanged(&st0) && R.nev == 0 &&
			      R.cur->nr == nr0,
		      "%s changed the table", check_status_name(ret));
		CHECK(done == 0,
		      "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		R.noent += hole;
		check_range(ts, te);
		return;
	}
	if (ret == SLAT_E_NOMEM) {
		CHECK(allow_nomem,
		      "SLAT_E_NOMEM with slat_pages_needed() = %" PRIu64
		      " pages in the cache",
		      R.need);
		CHECK(done < size && done % R.G == 0,
		      "SLAT_E_NOMEM with *done %#" PRIx64, done);
		R.nomem++;
	} else {
		check_pages_taken(nr0);
		CHECK(ret == SLAT_OK || ret == SLAT_NOTHING_TO_DO,
		      "returned %s", check_status_name(ret));
		CHECK(done == size, "*done %#" PRIx64 " after success", done);
	}
	uint64_t de = ipa + done;

	/* what the model knows must change: permissions, known-old pages */
	bool perms_change = false, old = false, unknown = false;
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (!in_done(l, ipa, de))
			continue;
		if ((l->attrs | perms) & ~l->attrs & SLAT_PERMS)
			perms_change = true;
		if (!(l->attrs & SLAT_YOUNG))
			old = true;
	}
	(void)unknown;
	if (ret == SLAT_NOTHING_TO_DO)
		CHECK(!perms_change && !old,
		      "SLAT_NOTHING_TO_DO but a leaf lacked a permission or "
		      "was old");
	if (ret == SLAT_OK && done == size)
		CHECK(perms_change || old,
		      "SLAT_OK but every leaf had the permissions and was "
		      "young (expected SLAT_NOTHING_TO_DO)");
	/* A shared relax invalidates this CPU's entry for every leaf it meets,
	 * changed or not (another vCPU may have relaxed it first): one per
	 * leaf of the range afterwards. */
	bool shared_local = (flags & SLAT_SHARED) && !R.fmt->fault_invalidates;
	if (ret == SLAT_NOTHING_TO_DO && !shared_local)
		ECHECK(R.nev == 0, "events although nothing changed");

	/* no D-cache; I-cache only for pages that became executable */
	ECHECK(count_events(SLAT_EV_DCACHE_CLEAN_INVAL) == 0,
	       "D-cache clean during relax");
	/* the memory that gained execute, as PA intervals */
	struct ival *gain = malloc((R.pre.n + 1) * sizeof(*gain));
	if (!gain)
		abort();
	size_t ngain = 0;
	for (size_t j = 0; j < R.pre.n; j++) {
		const struct check_leaf *l = &R.pre.v[j];
		uint64_t s0 = l->base < ipa ? ipa : l->base;
		uint64_t e0 = l->base + l->size > de ? de : l->base + l->size;
		if (s0 >= e0 || !((l->attrs | perms) & ~l->attrs & SLAT_X))
			continue;
		gain[ngain++] = (struct ival){ l->oa + (s0 - l->base),
					       l->oa + (e0 - l->base) };
	}
	bool gov = false;
	ngain = ival_norm(gain, ngain, &gov);
	/* one local invalidation per leaf changed in place on Arm; none on
	 * EPT, where the violation that asked for the change drops the stale
	 * entry; on NPT one ASID flush per leaf changed, and one per block
	 * split (break-before-make), which the same flush stands for */
	bool vmid_ok = !R.fmt->tlbi_by_address && !R.fmt->fault_invalidates;
	size_t nlocal = 0;
	for (size_t i = 0; i < R.nev; i++) {
		const struct slat_hosted_event *ev = &R.ev[i].ev;
		if (ev->kind == SLAT_EV_TLBI_RANGE ||
		    (ev->kind == SLAT_EV_TLBI_VMID && !vmid_ok) ||
		    (ev->kind == SLAT_EV_TLBI_IPA && !R.fmt->tlbi_by_address))
			ECHECK(false, "relax: unexpected %s", ev_name(ev->kind));
		nlocal += ev->kind == SLAT_EV_TLBI_VMID ||
			  (ev->kind == SLAT_EV_TLBI_IPA &&
			   ev->scope == SLAT_TLBI_LOCAL);
		if (ev->kind != SLAT_EV_ICACHE_INVAL)
			continue;
		ECHECK(R.fmt->icache_on_exec(&R.cfg),
		       "I-cache invalidation with DIC");
		ECHECK(ival_covered(gain, ngain, ev->addr,
				    ev->addr + ev->size) == ev->size,
		       "I-cache invalidation of PA %#" PRIx64 "+%#" PRIx64
		       " is not for memory that gained execute",
		       ev->addr, ev->size);
	}
	free(gain);
	uint64_t changed = R.t.stats.written[SLAT_WRITE_ATTR] -
			   st0.written[SLAT_WRITE_ATTR];
	uint64_t met = 0;
	if (shared_local && de > ipa &&
	    checker_walk(&R.ck, ipa, de, count_leaf_cb, &met))
		die("raw walk: %s", R.ck.msg);
	uint64_t brk = vmid_ok ? R.t.stats.written[SLAT_WRITE_BREAK] -
					 st0.written[SLAT_WRITE_BREAK]
			       : 0;
	ECHECK(nlocal == (shared_local ? met
			  : R.fmt->fault_invalidates ? 0 : changed) + brk,
	       "relax: %zu invalidations for %" PRIu64 " leaves changed "
	       "(%" PRIu64 " met, %" PRIu64 " blocks broken)", nlocal,
	       changed, met, brk);
	if (R.fmt->icache_on_exec(&R.cfg)) {
		size_t nic = 0;
		struct ival *icache = malloc((R.nev + 1) * sizeof(*icache));
		if (!icache)
			abort();
		for (size_t i = 0; i < R.nev; i++)
			if (R.ev[i].ev.kind == SLAT_EV_ICACHE_INVAL)
				icache[nic++] = (struct ival){
					R.ev[i].ev.addr,
					R.ev[i].ev.addr + R.ev[i].ev.size
				};
		bool ov = false;
		nic = ival_norm(icache, nic, &ov);
		for (size_t j = 0; j < R.pre.n; j++) {
			const struct check_leaf *l = &R.pre.v[j];
			uint64_t s0 = l->base < ipa ? ipa : l->base;
			uint64_t e0 = l->base + l->size > de ? de
							     : l->base + l->size;
			if (s0 >= e0 || (l->attrs & SLAT_X) || !(perms & SLAT_X))
				continue;
			uint64_t p0 = l->oa + (s0 - l->base);
			uint64_t p1 = l->oa + (e0 - l->base);
			uint64_t covered = ival_covered(icache, nic, p0, p1);
			ECHECK(covered >= p1 - p0,
			       "memory that became executable (PA %#" PRIx64
			       "..%#" PRIx64 ") got no I-cache invalidation",
			       p0, p1);
		}
		free(icache);
	}
	check_stats_delta(&st0, nr0 - R.cur->nr);

	/*
	 * Leaves straddling the ends: when their permissions change they are
	 * split (the outside part keeps its young state); when only the young
	 * state changes, the whole leaf may be made young.
	 */
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (!in_done(l, ipa, de) || (l->attrs & SLAT_YOUNG))
			continue;
		if ((l->attrs | perms) & ~l->attrs & SLAT_PERMS)
			continue;
		if (l->base < ipa)
			model_old_to_unknown(R.m, l->base, ipa);
		if (l->base + l->size > de)
			model_old_to_unknown(R.m, de, l->base + l->size);
	}
	model_relax(R.m, ipa, done, perms, NULL);
	check_range(ts, te);
}

/* ------------------------------------------------------------ young */

static void op_mkyoung(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	ipa += below(size / R.G) * R.G + below(R.G); /* any byte */
	uint32_t flags = chance(10) ? SLAT_SHARED : 0;
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_mkyoung(ipa %#" PRIx64 ", flags %#x)", ipa, flags);
	struct check_leaf l;
	int k = checker_leaf_at(&R.ck, ipa, &l);
	CHECK(k >= 0, "raw walk: %s", R.ck.msg);
	struct slat_stats st0 = R.t.stats;
	start_recording();
	int ret = slat_mkyoung(&R.t, slat_ipa(ipa), flags);
	R.recording = false;
	index_events();
	ECHECK(R.nev == 0, "mkyoung caused maintenance");
	if (k == 0) {
		CHECK(ret == SLAT_E_NOENT, "returned %s on a hole",
		      check_status_name(ret));
		CHECK(stats_unchanged(&st0), "SLAT_E_NOENT changed counters");
		R.noent++;
		return;
	}
	int want = (l.attrs & SLAT_YOUNG) ? SLAT_NOTHING_TO_DO : SLAT_OK;
	CHECK(ret == want, "returned %s, expected %s (leaf pte %#018" PRIx64
			   ")",
	      check_status_name(ret), check_status_name(want), l.pte);
	model_set_young(R.m, l.base, l.base + l.size, MODEL_YOUNG);
	check_range(l.base, l.base + l.size);
}

static int young_leaf_cb(void *arg, const struct check_leaf *l)
{
	int *y = arg;
	if (l->valid && (l->attrs & SLAT_YOUNG))
		*y = 1;
	return 0;
}

static void op_tcy(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	bool mkold = chance(70);
	uint32_t flags = chance(10) ? SLAT_SHARED : 0;
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_test_clear_young(ipa %#" PRIx64 ", size %#" PRIx64
		 ", mkold %d, flags %#x)",
		 ipa, size, mkold, flags);
	uint64_t e = ipa + size, ts, te;
	touched(ipa, e, &ts, &te);
	int young = 0;
	if (checker_walk(&R.ck, ipa, e, young_leaf_cb, &young))
		die("raw walk: %s", R.ck.msg);
	int msum = model_young_summary(R.m, ipa, e);
	CHECK(msum < 0 || msum == young, "model and table disagree on young");
	struct slat_stats st0 = R.t.stats;
	start_recording();
	int ret = slat_test_clear_young(&R.t, slat_ipa(ipa), size, mkold,
					SLAT_OP(.flags = flags));
	R.recording = false;
	index_events();
	ECHECK(R.nev == 0, "test_clear_young caused maintenance");
	int want = young ? SLAT_WAS_YOUNG : SLAT_OK;
	CHECK(ret == want, "returned %s (%d), expected %d",
	      ret < 0 ? check_status_name(ret) : "", ret, want);
	if (!mkold || !young)
		CHECK(stats_unchanged(&st0), "counters changed but nothing to do");
	if (mkold)
		model_set_young(R.m, ts, te, MODEL_OLD);
	check_range(ts, te);
}

static void op_lookup(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	ipa += below(size); /* any byte */
	snprintf(R.opdesc, sizeof(R.opdesc), "slat_lookup(ipa %#" PRIx64 ")",
		 ipa);
	struct slat_leaf l;
	struct model_run run;
	int ret = slat_lookup(&R.t, slat_ipa(ipa), &l);
	bool mapped = model_find(R.m, align_down(ipa, R.G), &run);
	if (!mapped) {
		CHECK(ret == SLAT_E_NOENT, "returned %s on a hole",
		      check_status_name(ret));
		return;
	}
	CHECK(ret == SLAT_OK, "returned %s", check_status_name(ret));
	uint64_t want = run.pa + (ipa - run.start);
	CHECK(slat_pa_v(l.pa) == want,
	      "pa %#" PRIx64 ", expected %#" PRIx64 " (the PA of the byte)",
	      slat_pa_v(l.pa), want);
	CHECK((l.attrs & ~(SLAT_YOUNG | SLAT_DIRTY)) == run.attrs,
	      "attrs %#x, expected %#x", l.attrs, run.attrs);
	CHECK(!!(l.attrs & SLAT_DIRTY) == run.dirty,
	      "attrs %#x, expected %s", l.attrs, run.dirty ? "dirty" : "clean");
	CHECK(slat_ipa_v(l.base) <= ipa && ipa - slat_ipa_v(l.base) < l.size,
	      "leaf %#" PRIx64 "+%#" PRIx64 " does not contain the IPA",
	      slat_ipa_v(l.base), l.size);
}

/* ------------------------------------------------------------ hardware */

static const char *fault_name(enum slat_fault f)
{
	switch (f) {
	case SLAT_FAULT_NONE: return "none";
	case SLAT_FAULT_TRANSLATION: return "translation";
	case SLAT_FAULT_PERMISSION: return "permission";
	case SLAT_FAULT_ACCESS_FLAG: return "access flag";
	}
	return "?";
}

/* The permission an access needs. */
static uint32_t access_needs(unsigned access)
{
	switch (access & ~SLAT_ACCESS_USER) {
	case SLAT_ACCESS_READ: return SLAT_R;
	case SLAT_ACCESS_WRITE: return SLAT_W;
	case SLAT_ACCESS_EXEC_EL1: return SLAT_XK;
	default: return SLAT_XU;
	}
}

/*
 * The CPU translates one access (slat_hw_access), with the updates its
 * walker makes: the result must be what the model and the raw leaf say,
 * and afterwards the whole leaf is young (hardware access flag) and, for a
 * write with hardware dirty state, dirty.
 */
static void op_hw_access(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	struct model_run run;
	/* mostly where something is mapped: that is what the CPU touches */
	if (chance(75) && model_for_each(R.m, ipa, w->base + w->size,
					 first_run_cb, &run)) {
		if (run.start > ipa)
			ipa = run.start;
		if (run.end - ipa < size)
			size = run.end - ipa;
	}
	ipa += below(size / R.G) * R.G + below(R.G); /* any byte */
	unsigned access = (unsigned)below(4);
	static const char *const an[] = { "read", "write", "exec-el1",
					  "exec-el0" };
	/* a data access made at EL0, sometimes */
	bool user = access <= SLAT_ACCESS_WRITE && chance(25);
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_hw_access(ipa %#" PRIx64 ", %s%s)", ipa,
		 user ? "el0 " : "", an[access]);
	if (user)
		access |= SLAT_ACCESS_USER;
	struct check_leaf l;
	int k = checker_leaf_at(&R.ck, ipa, &l);
	CHECK(k >= 0, "raw walk: %s", R.ck.msg);
	bool mapped = model_find(R.m, align_down(ipa, R.G), &run);
	CHECK(mapped == (k == 1), "model and table disagree at the IPA");
	/* the permissions the CPU enforces, from the model */
	uint32_t perms = run.attrs & SLAT_PERMS;
	if (mapped && R.fmt->hw_perms)
		perms = R.fmt->hw_perms(&R.cfg, run.attrs |
						    (run.dirty ? SLAT_DIRTY : 0));
	struct slat_stats st0 = R.t.stats;
	struct slat_hw_result res;
	memset(&res, 0x5a, sizeof(res));
	start_recording();
	int ret = slat_hw_access(&R.t, slat_ipa(ipa), access, &res);
	R.recording = false;
	index_events();
	CHECK(ret == SLAT_OK, "returned %s", check_status_name(ret));
	ECHECK(R.nev == 0, "the CPU's walk caused maintenance");
	CHECK(stats_unchanged(&st0), "the CPU's walk moved libslat's counters");
	if (res.fault <= SLAT_FAULT_ACCESS_FLAG)
		R.faults[res.fault]++;
	if (k == 0) {
		CHECK(res.fault == SLAT_FAULT_TRANSLATION && res.level == l.level,
		      "fault %s at level %d, expected a translation fault at "
		      "level %d",
		      fault_name(res.fault), res.level, l.level);
		check_range(l.base, l.base + l.size);
		return;
	}
	enum check_af af = R.fmt->hw_af(&R.cfg);
	bool young = l.attrs & SLAT_YOUNG;
	enum slat_fault want = SLAT_FAULT_NONE;
	/* an access flag fault comes before a permission fault */
	if (!young && af == CHECK_AF_FAULT)
		want = SLAT_FAULT_ACCESS_FLAG;
	else if (!(perms & access_needs(access)))
		want = SLAT_FAULT_PERMISSION;
	/* stage 1 keeps EL0 out of privileged memory (AP[1]); stage 2 and
	 * EPT do not see the level of a data access */
	else if ((access & SLAT_ACCESS_USER) &&
		 R.cfg.format == SLAT_FMT_ARM_S1 && !(run.attrs & SLAT_USER))
		want = SLAT_FAULT_PERMISSION;
	CHECK(res.fault == want && res.level == l.level,
	      "fault %s at level %d, expected %s at level %d (leaf %#" PRIx64
	      "+%#" PRIx64 " pte %#018" PRIx64 ")",
	      fault_name(res.fault), res.level, fault_name(want), l.level,
	      l.base, l.size, l.pte);
	if (want == SLAT_FAULT_NONE) {
		uint64_t pa = run.pa + (ipa - run.start);
		CHECK(slat_pa_v(res.pa) == pa,
		      "pa %#" PRIx64 ", expected %#" PRIx64,
		      slat_pa_v(res.pa), pa);
		if (af == CHECK_AF_HW_SETS)
			model_set_young(R.m, l.base, l.base + l.size,
					MODEL_YOUNG);
		if ((access & ~SLAT_ACCESS_USER) == SLAT_ACCESS_WRITE)
			model_set_dirty(R.m, l.base, l.base + l.size, true);
		struct slat_leaf sl;
		CHECK(slat_lookup(&R.t, slat_ipa(ipa), &sl) == SLAT_OK &&
			      sl.attrs == res.attrs,
		      "result attrs %#x, but lookup says %#x afterwards",
		      res.attrs, sl.attrs);
	} else if (want == SLAT_FAULT_PERMISSION && af == CHECK_AF_HW_SETS &&
		   !young) {
		/* Arm: whether the hardware sets AF on an access that takes
		 * a permission fault is CONSTRAINED UNPREDICTABLE */
		model_old_to_unknown(R.m, l.base, l.base + l.size);
	}
	check_range(l.base, l.base + l.size);
}

static int dirty_bits_cb(void *arg, const struct model_run *r)
{
	uint64_t *bm = ((uint64_t **)arg)[0];
	uint64_t base = *((uint64_t **)arg)[1];
	if (!r->dirty)
		return 0;
	for (uint64_t a = r->start; a < r->end; a += R.G) {
		uint64_t i = (a - base) / R.G;
		bm[i / 64] |= 1ull << (i % 64);
	}
	return 0;
}

static bool affected_dirty(const struct check_leaf *l)
{
	return l->attrs & SLAT_DIRTY;
}

/*
 * slat_dirty_read: the bitmap holds exactly the pages of the range the
 * model says are dirty, the count is their number; with clear they become
 * clean (a dirty block the range covers only partly is split so the pages
 * outside keep their state), invalidated per the policy like wrprotect.
 */
static void op_dirty(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	if (size / R.G > 4096)
		size = 4096 * R.G;
	bool clear = chance(60);
	enum slat_tlbi_policy policy = (enum slat_tlbi_policy)below(4);
	uint32_t flags = chance(10) ? SLAT_SHARED : 0;
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_dirty_read(ipa %#" PRIx64 ", size %#" PRIx64
		 ", clear %d, policy %d, flags %#x)",
		 ipa, size, clear, policy, flags);
	uint64_t e = ipa + size, ts, te;
	uint64_t pages = size / R.G, words = (pages + 63) / 64;
	uint64_t *bm = malloc((words + 1) * sizeof(*bm));
	uint64_t *want = calloc(words + 1, sizeof(*want));
	if (!bm || !want)
		abort();
	for (uint64_t i = 0; i < words + 1; i++)
		bm[i] = 0xa5a5a5a5a5a5a5a5ull; /* every word must be written */
	touched(ipa, e, &ts, &te);
	collect(&R.pre, ipa, e);
	R.post.n = 0;
	bool allow_nomem = false;
	if (clear) {
		allow_nomem = prepare_cache(SLAT_NEED(
			.kind = SLAT_OP_DIRTY_CLEAR, .ipa = slat_ipa(ipa),
			.size = size, .flags = flags));
	} else {
		R.cur = &R.cache;
	}
	uint32_t nr0 = R.cur->nr;
	struct slat_stats st0 = R.t.stats;

	start_recording();
	probe_start(PROBE_CLEAN, ipa);
	int64_t ret =
		slat_dirty_read(&R.t, slat_ipa(ipa), size, bm, words, clear,
				SLAT_OP(.flags = flags, .flush = policy,
					.cache = R.cur));
	R.recording = false;
	index_events();

	if (!(R.cfg.features & SLAT_FEAT_HWDIRTY)) {
		CHECK(ret == SLAT_E_CONFIG,
		      "returned %s without hardware dirty state",
		      check_status_name((int)ret));
		CHECK(stats_unchanged(&st0) && R.nev == 0 && R.cur->nr == nr0,
		      "SLAT_E_CONFIG changed something");
		free(bm);
		free(want);
		return;
	}
	uint64_t *args[2] = { want, &ipa };
	model_for_each(R.m, ipa, e, dirty_bits_cb, args);
	CHECK(bm[words] == 0xa5a5a5a5a5a5a5a5ull,
	      "wrote beyond the bitmap's %" PRIu64 " words", words);
	uint64_t de = e, reported = 0;
	if (ret == SLAT_E_NOMEM) {
		/* only a split needs a page: at the range's two ends. The
		 * pages reported are the ones cleaned, a prefix of the dirty
		 * pages; done = up to the first dirty page not reported */
		CHECK(clear && allow_nomem,
		      "SLAT_E_NOMEM with slat_pages_needed() = %" PRIu64
		      " pages in the cache",
		      R.need);
		R.nomem++;
		for (uint64_t i = 0; i < pages; i++) {
			bool got = bm[i / 64] >> (i % 64) & 1;
			bool is = want[i / 64] >> (i % 64) & 1;
			CHECK(!got || is,
			      "page %#" PRIx64 " reported dirty, but it is clean",
			      ipa + i * R.G);
			if (is && !got && de == e)
				de = ipa + i * R.G;
			CHECK(!got || de == e,
			      "after SLAT_E_NOMEM the pages reported are not a "
			      "prefix of the dirty ones (page %#" PRIx64 ")",
			      ipa + i * R.G);
			reported += got;
		}
	} else {
		if (clear)
			check_pages_taken(nr0);
		uint64_t n = model_dirty_pages(R.m, ipa, e);
		CHECK(ret == (int64_t)n, "returned %" PRId64 ", expected %" PRIu64
					 " dirty pages",
		      ret, n);
		for (uint64_t i = 0; i < words; i++) {
			uint64_t mask = i == words - 1 && pages % 64
						? (1ull << (pages % 64)) - 1
						: ~0ull;
			CHECK(bm[i] == (want[i] & mask),
			      "bitmap word %" PRIu64 " is %#" PRIx64
			      ", expected %#" PRIx64 " (pages from %#" PRIx64 ")",
			      i, bm[i], want[i], ipa + i * 64 * R.G);
		}
		reported = n;
	}
	R.dirty_pages += reported;
	ECHECK(count_events(SLAT_EV_DCACHE_CLEAN_INVAL) +
			       count_events(SLAT_EV_ICACHE_INVAL) ==
		       0,
	       "cache maintenance during dirty_read");
	if (clear) {
		bool changed = false;
		for (size_t i = 0; i < R.pre.n; i++)
			if (in_done(&R.pre.v[i], ipa, de) &&
			    affected_dirty(&R.pre.v[i]))
				changed = true;
		check_policy(policy, changed, ipa, de, e, affected_dirty,
			     false);
		/* the pages reported are clean now, in runs */
		for (uint64_t i = 0; i < pages;) {
			if (!(bm[i / 64] >> (i % 64) & 1)) {
				i++;
				continue;
			}
			uint64_t j = i;
			while (j < pages && (bm[j / 64] >> (j % 64) & 1))
				j++;
			model_set_dirty(R.m, ipa + i * R.G, ipa + j * R.G,
					false);
			i = j;
		}
	} else {
		ECHECK(R.nev == 0, "dirty_read without clear caused events");
		CHECK(stats_unchanged(&st0) && R.cur->nr == nr0,
		      "dirty_read without clear changed the table");
	}
	check_stats_delta(&st0, nr0 - R.cur->nr);
	free(bm);
	free(want);
	check_range(ts, te);
}

/* ------------------------------------------------------------ split */

/* The pre-op leaf that is @l unchanged (same entry, same value)? */
static bool pre_has(const struct vec_leaf *v, const struct check_leaf *l)
{
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v->v[mid].base + v->v[mid].size <= l->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->n && v->v[lo].base == l->base &&
	       v->v[lo].size == l->size && v->v[lo].ptep == l->ptep &&
	       v->v[lo].pte == l->pte;
}

/* The first leaf of @v ending after @a. */
static size_t leaf_index(const struct vec_leaf *v, uint64_t a)
{
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v->v[mid].base + v->v[mid].size <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Table pages a block at @level needs to become leaves at @target. */
static uint64_t split_pages(int level, int target)
{
	uint64_t n = 0, per = 1;
	for (int l = level + 1; l <= target; l++) {
		n += per;
		per *= R.ck.geo.entries;
	}
	return n;
}

/* The leaves a split to @T bytes creates from the blocks of R.pre. */
static uint64_t split_cost(uint64_t T)
{
	uint64_t n = 0;
	for (size_t i = 0; i < R.pre.n; i++)
		if (R.pre.v[i].size > T)
			n += R.pre.v[i].size / T;
	return n;
}

/* Splits: how many leaves one may create every time (more: rarely). */
#define SPLIT_LEAVES 4096

/*
 * slat_split (docs/split-recover.md): every block meeting the range becomes
 * leaves of the asked size, every translation, attribute, young and dirty
 * state kept (the model does not change); leaves already that small are
 * not touched; on Arm each block is broken before the table is made
 * (a by-IPA invalidation with the block's level while it is invalid), on
 * EPT it changes in place with no invalidation. With
 * slat_pages_needed(SLAT_OP_SPLIT) pages it never runs out; with fewer it
 * stops before the first block it cannot finish, *done at that block.
 */
static void op_split(void)
{
	uint64_t ipa, size;
	struct window *w;
	gen_range(&ipa, &size, &w);
	int levels[4], n = block_levels(levels);
	/* often one block where something is mapped: what dirty logging
	 * splits, and what recovery later finds uniform */
	for (int tries = chance(50) ? 4 : 0; tries > 0; tries--) {
		struct model_run run;
		struct check_leaf l;
		uint64_t from = w->base + align_down(below(w->size), R.G);
		if (!model_for_each(R.m, from, w->base + w->size, first_run_cb,
				    &run))
			continue;
		uint64_t a = run.start + align_down(below(run.end - run.start),
						    R.G);
		if (checker_leaf_at(&R.ck, a, &l) == 1 && l.size > R.G) {
			ipa = l.base;
			size = l.size;
			break;
		}
	}
	unsigned c = (unsigned)below(100);
	uint64_t leaf_size;
	int target = 3;
	bool bad = false;
	if (c < 30) {
		leaf_size = 0;
	} else if (c < 45 || !n) {
		leaf_size = R.G;
	} else if (c < 95) {
		target = levels[below(n)];
		leaf_size = LSIZE(target);
	} else {
		/* not a leaf size of the format */
		bad = true;
		switch (below(4)) {
		case 0: leaf_size = 3 * R.G; break;
		case 1: leaf_size = 2 * R.G; break;
		case 2: leaf_size = R.G / 2; break;
		default:
			/* the size of a level without leaves, if any */
			leaf_size = 4 * R.G;
			for (int l = R.start_level; l < 3; l++)
				if (!leaf_level(l))
					leaf_size = LSIZE(l);
			break;
		}
	}
	uint64_t T = LSIZE(target);
	uint32_t flags = chance(30) ? SLAT_SPLIT_NO_SKIP : 0;
	uint64_t e = ipa + size, ts, te;
	touched(ipa, e, &ts, &te);
	collect(&R.pre, ipa, e);
	if (!bad) {
		/* bound the work: larger leaves, or now and then many */
		uint64_t cost = split_cost(T);
		while (cost > SPLIT_LEAVES && target > R.start_level &&
		       below(cost) >= SPLIT_LEAVES) {
			int l = target - 1;
			while (l > R.start_level && !leaf_level(l))
				l--;
			if (!leaf_level(l))
				break;
			target = l;
			T = LSIZE(l);
			leaf_size = T;
			cost = split_cost(T);
		}
		if (cost > 16 * SPLIT_LEAVES ||
		    (cost > SPLIT_LEAVES && below(cost) >= SPLIT_LEAVES)) {
			R.count[OP_SPLIT]--;
			R.count[OP_LOOKUP]++;
			op_lookup();
			return;
		}
	}
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_split(ipa %#" PRIx64 ", size %#" PRIx64
		 ", leaf_size %#" PRIx64 ", flags %#x)",
		 ipa, size, leaf_size, flags);
	R.post.n = 0;
	bool allow_nomem = prepare_cache(SLAT_NEED(
		.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(ipa), .size = size,
		.leaf_size = leaf_size, .flags = flags));
	uint32_t nr0 = R.cur->nr;
	struct slat_stats st0 = R.t.stats;
	uint64_t done = 0xdead;

	start_recording();
	struct slat_op args = { .flags = flags, .cache = R.cur };
	int ret = slat_split(&R.t, slat_ipa(ipa), size, leaf_size, &args);
	done = args.done;
	R.recording = false;
	index_events();

	if (bad) {
		CHECK(ret == SLAT_E_INVAL && R.need_err == SLAT_E_INVAL,
		      "leaf size %#" PRIx64 " is none of the format's, but "
		      "split returned %s, slat_pages_needed() %s",
		      leaf_size, check_status_name(ret),
		      check_status_name(R.need_err));
		CHECK(stats_unchanged(&st0) && R.nev == 0 && R.cur->nr == nr0,
		      "SLAT_E_INVAL changed the table");
		CHECK(done == 0, "*done %#" PRIx64 " after SLAT_E_INVAL", done);
		R.bad_ok++;
		check_range(ts, te);
		return;
	}
	uint64_t de = e;
	if (ret == SLAT_E_NOMEM) {
		CHECK(allow_nomem,
		      "SLAT_E_NOMEM with slat_pages_needed() = %" PRIu64
		      " pages in the cache",
		      R.need);
		CHECK(done < size && done % R.G == 0,
		      "SLAT_E_NOMEM with *done %#" PRIx64, done);
		de = ipa + done;
		R.nomem++;
	} else {
		check_pages_taken(nr0);
		CHECK(ret == SLAT_OK, "returned %s", check_status_name(ret));
		CHECK(done == size, "*done %#" PRIx64 " after success", done);
	}

	/* the blocks split, and what became of each pre-op leaf */
	collect(&R.post, ts, te);
	uint64_t nsplit = 0, leaves = 0, pages = 0;
	bool stop_found = ret != SLAT_E_NOMEM;
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		uint64_t le = l->base + l->size;
		bool split = l->size > T && in_done(l, ipa, de);
		if (!split) {
			ECHECK(pre_has(&R.post, l),
			       "leaf %#" PRIx64 "+%#" PRIx64 " level %d (pte %#018"
			       PRIx64 ") %s, but split changed it",
			       l->base, l->size, l->level, l->pte,
			       l->size <= T ? "is no larger than the leaves asked"
					    : "lies beyond *done");
			if (l->size > T && !stop_found)
				stop_found = (l->base > ipa ? l->base : ipa) == de;
			continue;
		}
		for (size_t j = leaf_index(&R.post, l->base);
		     j < R.post.n && R.post.v[j].base < le; j++)
			ECHECK(R.post.v[j].size == T,
			       "block %#" PRIx64 "+%#" PRIx64 " level %d split "
			       "into a leaf %#" PRIx64 "+%#" PRIx64
			       ", not of the %#" PRIx64 " bytes asked",
			       l->base, l->size, l->level, R.post.v[j].base,
			       R.post.v[j].size, T);
		nsplit++;
		R.recent[R.nrecent++ % 8].base = l->base;
		R.recent[(R.nrecent - 1) % 8].size = l->size;
		leaves += l->size / T;
		pages += split_pages(l->level, target);
		/* NPT: one ASID flush per block, which has no address; their
		 * number is checked below, against the breaks */
		if (R.fmt->split_bbm && R.fmt->tlbi_by_address) {
			/* exactly one by-IPA invalidation inside the block,
			 * with its level, while it was invalid */
			size_t k = 0;
			for (size_t x = 0; x < X.nipa; x++)
				k += X.ipa[x].addr >= l->base && X.ipa[x].addr < le;
			ECHECK(k == 1 && tlbi_covers(l, true),
			       "split block %#" PRIx64 "+%#" PRIx64 " level %d: "
			       "%zu by-IPA invalidations in it, %s one with its "
			       "level while it was invalid",
			       l->base, l->size, l->level, k,
			       tlbi_covers(l, true) ? "with" : "without");
		}
	}
	CHECK(stop_found,
	      "SLAT_E_NOMEM with *done %#" PRIx64 ", which is no block's "
	      "start that split left as it was",
	      done);
	ECHECK(count_events(SLAT_EV_DCACHE_CLEAN_INVAL) +
			       count_events(SLAT_EV_ICACHE_INVAL) +
			       count_events(SLAT_EV_PAGE_FREE) ==
		       0,
	       "split: cache maintenance or a page freed");
	bool bbm_ipa = R.fmt->split_bbm && R.fmt->tlbi_by_address;
	bool bbm_vmid = R.fmt->split_bbm && !R.fmt->tlbi_by_address;
	ECHECK(count_events(SLAT_EV_TLBI_RANGE) == 0 &&
		       count_events(SLAT_EV_TLBI_VMID) ==
			       (bbm_vmid ? nsplit : 0) &&
		       X.nipa == (bbm_ipa ? nsplit : 0),
	       "split of %" PRIu64 " blocks: %zu by-IPA, %zu range and %zu "
	       "VMID invalidations (%s)",
	       nsplit, X.nipa, count_events(SLAT_EV_TLBI_RANGE),
	       count_events(SLAT_EV_TLBI_VMID),
	       bbm_ipa ? "one by IPA per block"
	       : bbm_vmid ? "one VMID flush per block"
			  : "none: EPT splits in place");
	for (size_t x = 0; x < R.nev; x++)
		ECHECK(R.ev[x].ev.kind != SLAT_EV_TLBI_IPA ||
			       R.ev[x].ev.scope == SLAT_TLBI_INNER_SHAREABLE,
		       "split: a local invalidation");
	check_stats_delta(&st0, nr0 - R.cur->nr);
	const struct slat_stats *a = &R.t.stats;
	uint64_t brk = a->written[SLAT_WRITE_BREAK] - st0.written[SLAT_WRITE_BREAK];
	ECHECK(a->pages_alloc - st0.pages_alloc == pages &&
		       a->written[SLAT_WRITE_TABLE] -
				       st0.written[SLAT_WRITE_TABLE] ==
			       pages &&
		       a->written[SLAT_WRITE_LEAF] -
				       st0.written[SLAT_WRITE_LEAF] ==
			       leaves &&
		       a->written[SLAT_WRITE_CLEAR] ==
			       st0.written[SLAT_WRITE_CLEAR] &&
		       a->written[SLAT_WRITE_ATTR] ==
			       st0.written[SLAT_WRITE_ATTR] &&
		       (R.fmt->split_bbm ? brk == nsplit
			: R.cfg.features & SLAT_FEAT_HWDIRTY ? brk <= nsplit
							     : brk == 0),
	       "split of %" PRIu64 " blocks into %" PRIu64 " leaves with %"
	       PRIu64 " pages: the counters say %" PRIu64 " pages, %" PRIu64
	       " tables, %" PRIu64 " leaves, %" PRIu64 " breaks",
	       nsplit, leaves, pages, a->pages_alloc - st0.pages_alloc,
	       a->written[SLAT_WRITE_TABLE] - st0.written[SLAT_WRITE_TABLE],
	       a->written[SLAT_WRITE_LEAF] - st0.written[SLAT_WRITE_LEAF], brk);
	R.blocks_split += nsplit;
	check_range(ts, te);
}

/* ------------------------------------------------------------ recover */

/*
 * A table page of the range before slat_recover, and what the observer
 * saw happen to it: an invalidation covering its span issued once it was
 * unlinked (so no CPU can still walk it), and its free.
 */
struct rtable {
	struct check_table t;
	uint64_t parent_pte; /* the entry that linked it */
	bool inval_ok;       /* covered by an invalidation while unlinked */
	bool free_ok;        /* freed after that */
	unsigned freed;
};

/* A region the recovery must act on: a qualifying table's span. */
struct rregion {
	uint64_t base, size;
	int level;           /* of the entry: the block's level */
	bool bbm_ok;         /* an invalidation covering it while invalid */
	bool seen_invalid;
	bool swapped_at_flush; /* EPT: a flush after the block was in */
};

static struct {
	struct rtable *t;
	size_t nt, tcap;
	struct rregion *r;   /* the handled regions */
	size_t nr, rcap;
	bool promote;
	uint64_t stray_free; /* VA freed that was no table of the range */
	/* the max_level callback */
	int ml[8];
	unsigned ml_shift;
	uint64_t ml_calls, ml_bad;
	uint64_t ml_lo, ml_hi;
} RP;

static int max_level_cb(void *arg, slat_ipa_t ipa)
{
	(void)arg;
	uint64_t a = slat_ipa_v(ipa);
	RP.ml_calls++;
	if (a < RP.ml_lo || a >= RP.ml_hi)
		RP.ml_bad = a + 1;
	return RP.ml[(a >> RP.ml_shift) & 7];
}

/* Does the invalidation @ev cover [b, b+S) as a table's span? */
static bool ev_covers_span(const struct slat_hosted_event *ev, uint64_t b,
			   uint64_t S)
{
	switch (ev->kind) {
	case SLAT_EV_TLBI_VMID:
		return true;
	case SLAT_EV_TLBI_RANGE:
		return ev->addr < b + S && ev->addr + ev->size > b;
	case SLAT_EV_TLBI_IPA:
		return ev->level == SLAT_LEVEL_ANY &&
		       ev->scope == SLAT_TLBI_INNER_SHAREABLE &&
		       ev->addr >= b && ev->addr < b + S;
	default:
		return false;
	}
}

/* Is the table page @t still linked where it was? */
static bool rtable_linked(const struct rtable *t)
{
	uint64_t pte;
	struct check_desc d;
	int k = checker_entry_at(&R.ck, t->t.base, t->t.level - 1, &pte, &d);
	return k == 1 && pte == t->parent_pte;
}

static void recover_probe(const struct slat_hosted_event *ev)
{
	if (ev->kind == SLAT_EV_PAGE_FREE) {
		for (size_t i = 0; i < RP.nt; i++) {
			struct rtable *t = &RP.t[i];
			if ((uint64_t)(uintptr_t)t->t.va != ev->addr)
				continue;
			t->freed++;
			t->free_ok = t->inval_ok;
			return;
		}
		RP.stray_free = ev->addr;
		return;
	}
	if (ev->kind != SLAT_EV_TLBI_IPA && ev->kind != SLAT_EV_TLBI_RANGE &&
	    ev->kind != SLAT_EV_TLBI_VMID)
		return;
	R.ck.tolerant = true;
	for (size_t i = 0; i < RP.nt; i++) {
		struct rtable *t = &RP.t[i];
		if (!t->inval_ok && ev_covers_span(ev, t->t.base, t->t.size) &&
		    !rtable_linked(t))
			t->inval_ok = true;
	}
	for (size_t i = 0; RP.promote && i < RP.nr; i++) {
		struct rregion *r = &RP.r[i];
		if (!ev_covers_span(ev, r->base, r->size))
			continue;
		uint64_t pte;
		struct check_desc d;
		int k = checker_entry_at(&R.ck, r->base, r->level, &pte, &d);
		bool invalid = k == 1 && d.kind == CHECK_DESC_INVALID;
		if (invalid) {
			r->seen_invalid = true;
			r->bbm_ok = true;
		}
		if (k == 1 && d.kind == CHECK_DESC_LEAF &&
		    ev->kind == SLAT_EV_TLBI_VMID)
			r->swapped_at_flush = true;
	}
	R.ck.tolerant = false;
}

static int rtable_cb(void *arg, const struct check_table *t)
{
	(void)arg;
	GROW(RP.t, RP.nt, RP.tcap);
	RP.t[RP.nt++] = (struct rtable){ .t = *t, .parent_pte = *t->parent };
	return 0;
}

/* A region handled by a recovery: inside which region is @a, if any? */
static const struct rregion *in_region(uint64_t a)
{
	size_t lo = 0, hi = RP.nr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (RP.r[mid].base + RP.r[mid].size <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < RP.nr && RP.r[lo].base <= a ? &RP.r[lo] : NULL;
}

static bool leaf_in_region(const struct check_leaf *l)
{
	return in_region(l->base) != NULL;
}

/* Is the span of the table page @t inside a handled region? */
static bool table_in_region(const struct check_table *t)
{
	const struct rregion *r = in_region(t->base);
	return r && t->base + t->size <= r->base + r->size;
}

/* Recovery: leaves at most, every time (more: now and then), and tables. */
#define RECOVER_LEAVES 4096
#define RECOVER_TABLES 256

/*
 * slat_recover (docs/split-recover.md): a table qualifies when its whole
 * span lies in the range, its entry's level allows a block and the
 * max_level callback allows a block there, asked at the span's start.
 * The strategies act on the first qualifying table from the top: zap-leaf
 * and zap-table remove its translations, promote replaces it by the block
 * its leaves add up to when they are uniform (model_uniform) and else
 * tries the tables below. Predicted from the table's shape before the
 * call (which entries are tables) and the model (what they map). Checked:
 * the translations, the tables freed (exactly those below a handled
 * region and those left with nothing mapped), each freed only after an
 * invalidation covering its span issued once it was unlinked, each
 * promoted block published only after an invalidation covering it while
 * the entry was invalid (Arm, break-before-make) or swapped in place
 * (EPT), the invalidations against the policy, the counters.
 */
static void op_recover(void)
{
	uint64_t ipa, size;
	struct window *w;
	int levels[4], nb = block_levels(levels);
	if (!nb) {
		op_lookup();
		return;
	}
	gen_range(&ipa, &size, &w);
	if (R.nrecent && chance(50)) {
		/* a block split lately: dirty logging ends */
		unsigned i = (unsigned)below(R.nrecent < 8 ? R.nrecent : 8);
		ipa = R.recent[i].base;
		size = R.recent[i].size;
		if (chance(30) && ipa >= R.G)
			ipa -= R.G, size += 2 * R.G;
		if (ipa + size > R.ia_end)
			size = R.ia_end - ipa;
	} else if (chance(65)) {
		/* whole blocks where something is mapped */
		uint64_t S = LSIZE(levels[below(nb)]);
		struct model_run run;
		if (S > w->size / 2)
			S = LSIZE(levels[nb - 1]);
		if (chance(70) && model_for_each(R.m, ipa, w->base + w->size,
						 first_run_cb, &run))
			ipa = run.start;
		ipa = align_down(ipa, S);
		if (ipa < w->base)
			ipa = w->base;
		size = S * (1 + below(3));
		if (chance(20))
			size += (uint64_t)below(5) * R.G;
		if (chance(10) && ipa > w->base)
			ipa += R.G, size -= size > R.G ? R.G : 0;
		if (ipa + size > w->base + w->size)
			size = w->base + w->size - ipa;
		if (!size)
			size = R.G;
	}
	if (chance(2))
		batch_shape(&ipa, &size);
	uint64_t e = ipa + size, ts, te;
	touched(ipa, e, &ts, &te);
	collect(&R.pre, ipa, e);
	RP.nt = 0;
	if (checker_tables(&R.ck, ipa, e, rtable_cb, NULL))
		die("raw walk: %s", R.ck.msg);
	if (RP.nt > RECOVER_TABLES ||
	    (R.pre.n > RECOVER_LEAVES && below(R.pre.n) >= RECOVER_LEAVES)) {
		R.count[OP_RECOVER]--;
		R.count[OP_LOOKUP]++;
		op_lookup();
		return;
	}
	enum slat_recover_strategy strategy =
		(enum slat_recover_strategy)below(3);
	enum slat_tlbi_policy policy = (enum slat_tlbi_policy)below(4);
	bool with_ml = chance(40);
	RP.ml_shift = (unsigned)__builtin_ctzll(LSIZE(levels[nb - 1]));
	for (int i = 0; i < 8; i++) {
		unsigned c = (unsigned)below(4);
		RP.ml[i] = c < 2 ? R.start_level : c < 3 ? levels[nb - 1] : 3;
	}
	static const char *const sn[] = { "zap-leaf", "zap-table", "promote" };
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "slat_recover(ipa %#" PRIx64 ", size %#" PRIx64
		 ", %s, policy %d, max_level %s)",
		 ipa, size, sn[strategy], policy,
		 with_ml ? "by 8 slots" : "none");
	if (with_ml) {
		size_t k = strlen(R.opdesc);
		snprintf(R.opdesc + k, sizeof(R.opdesc) - k,
			 " [slot = ipa >> %u & 7: %d %d %d %d %d %d %d %d]",
			 RP.ml_shift, RP.ml[0], RP.ml[1], RP.ml[2], RP.ml[3],
			 RP.ml[4], RP.ml[5], RP.ml[6], RP.ml[7]);
	}

	/* the prediction: the regions acted on, top down */
	RP.nr = 0;
	RP.promote = strategy == SLAT_RECOVER_PROMOTE;
	uint64_t handled_end = 0;
	for (size_t i = 0; i < RP.nt; i++) {
		const struct check_table *t = &RP.t[i].t;
		int L = t->level - 1;
		if (t->base < handled_end || !leaf_level(L) || t->base < ipa ||
		    t->base + t->size > e)
			continue;
		if (with_ml && RP.ml[(t->base >> RP.ml_shift) & 7] > L)
			continue;
		if (RP.promote &&
		    !model_uniform(R.m, t->base, t->base + t->size, t->size))
			continue; /* the tables below may still be */
		GROW(RP.r, RP.nr, RP.rcap);
		RP.r[RP.nr++] = (struct rregion){ t->base, t->size, L, false,
						  false, false };
		handled_end = t->base + t->size;
	}
	struct model *after = model_clone(R.m);
	for (size_t i = 0; i < RP.nr; i++) {
		if (RP.promote)
			model_promote(after, RP.r[i].base,
				      RP.r[i].base + RP.r[i].size);
		else
			model_remove(after, RP.r[i].base,
				     RP.r[i].base + RP.r[i].size);
	}
	/* the tables that must go: below a promoted block, or with nothing
	 * mapped any more (no table is left empty) */
	uint64_t below_handled = 0, leaves_in = 0;
	bool *must_free = calloc(RP.nt + 1, sizeof(*must_free));
	if (!must_free)
		abort();
	for (size_t i = 0; i < RP.nt; i++) {
		const struct check_table *t = &RP.t[i].t;
		bool under = table_in_region(t);
		below_handled += under;
		must_free[i] = (RP.promote && under) ||
			       !model_any_mapped(after, t->base,
						 t->base + t->size);
	}
	for (size_t i = 0; i < R.pre.n; i++)
		leaves_in += in_region(R.pre.v[i].base) != NULL;

	struct slat_stats st0 = R.t.stats;
	RP.ml_calls = RP.ml_bad = 0;
	RP.ml_lo = ipa;
	RP.ml_hi = e;
	RP.stray_free = 0;
	order_snapshot(ipa, e);
	start_recording();
	probe_start(PROBE_UNMAPPED, ipa);
	if (!RP.promote)
		P.removes = leaf_in_region;
	recover_on = true;
	int ret = slat_recover(&R.t, slat_ipa(ipa), size,
			       SLAT_RECOVERY(.strategy = strategy,
					     .max_level = with_ml ? max_level_cb
								  : NULL,
					     .arg = NULL),
			       SLAT_OP(.flush = policy));
	recover_on = false;
	R.recording = false;
	index_events();
	check_order(ipa, e, policy != SLAT_FLUSH_NONE);

	CHECK(ret == SLAT_OK, "returned %s", check_status_name(ret));
	CHECK(!RP.ml_bad, "max_level asked about IPA %#" PRIx64
			  ", outside the range",
	      RP.ml_bad - 1);
	ECHECK(!RP.stray_free,
	       "freed the page at VA %#" PRIx64 ", no table of the range",
	       RP.stray_free);
	ECHECK(count_events(SLAT_EV_DCACHE_CLEAN_INVAL) +
			       count_events(SLAT_EV_ICACHE_INVAL) ==
		       0,
	       "recover: cache maintenance (the refault cleans)");

	/* what the call did to each table and region */
	uint64_t nfree = 0;
	for (size_t i = 0; i < RP.nt; i++) {
		const struct rtable *t = &RP.t[i];
		nfree += t->freed;
		ECHECK(t->freed == must_free[i],
		       "table page PA %#" PRIx64 " (entries at level %d, span "
		       "%#" PRIx64 "+%#" PRIx64 ") %s%s",
		       t->t.pa, t->t.level, t->t.base, t->t.size,
		       t->freed > 1 ? "freed twice" :
		       t->freed ? "freed, but it still maps something" :
		       table_in_region(&t->t) ? "not freed, though below a "
					      "promoted block" :
					      "not freed, though nothing is "
					      "mapped in its span any more "
					      "(a table left empty)",
		       t->freed || !rtable_linked(t) ? ""
						       : " (still linked)");
		ECHECK(!t->freed || t->free_ok,
		       "table page PA %#" PRIx64 " (entries at level %d, span "
		       "%#" PRIx64 "+%#" PRIx64 ") freed before an "
		       "invalidation covering its span after it was unlinked",
		       t->t.pa, t->t.level, t->t.base, t->t.size);
	}
	free(must_free);
	/* the tables that stay keep an exact count (or an unknown one) */
	for (size_t i = 0; i < RP.nt; i++) {
		const struct rtable *t = &RP.t[i];
		if (t->freed)
			continue;
		uint32_t used = 0;
		for (uint32_t k = 0; k < R.ck.geo.entries; k++)
			used += t->t.va[k] != 0;
		uint32_t word = R.h.refcounts[((uint8_t *)t->t.va - R.h.arena) /
					      R.h.granule];
		ECHECK(word == SLAT_REFCOUNT_UNKNOWN ||
			       (word & ~SLAT_REFCOUNT_HAS_BLOCKS) == used,
		       "table page PA %#" PRIx64 " (entries at level %d, span "
		       "%#" PRIx64 "+%#" PRIx64 "): its count word %#x says %u "
		       "entries, it has %u",
		       t->t.pa, t->t.level, t->t.base, t->t.size, word,
		       word & ~SLAT_REFCOUNT_HAS_BLOCKS, used);
	}
	bool by_addr = R.fmt->tlbi_by_address;
	for (size_t i = 0; RP.promote && i < RP.nr; i++) {
		const struct rregion *r = &RP.r[i];
		struct check_leaf l;
		CHECK(checker_leaf_at(&R.ck, r->base, &l) == 1 &&
			      l.base == r->base && l.size == r->size,
		      "the uniform table at %#" PRIx64 "+%#" PRIx64
		      " is not one block after promote",
		      r->base, r->size);
		if (R.fmt->split_bbm)
			ECHECK(r->bbm_ok,
			       "block %#" PRIx64 "+%#" PRIx64 " level %d "
			       "published without an invalidation covering it "
			       "while the entry was invalid",
			       r->base, r->size, r->level);
		else
			ECHECK(!r->seen_invalid && r->swapped_at_flush,
			       "block %#" PRIx64 "+%#" PRIx64 " level %d: %s",
			       r->base, r->size, r->level,
			       r->seen_invalid
				       ? "the entry was invalid at a flush "
					 "(EPT swaps in place)"
				       : "no VMID flush after the swap");
	}
	/* the leaves outside the regions are untouched */
	collect(&R.post, ts, te);
	for (size_t i = 0; i < R.pre.n; i++) {
		const struct check_leaf *l = &R.pre.v[i];
		if (!in_region(l->base))
			ECHECK(pre_has(&R.post, l),
			       "leaf %#" PRIx64 "+%#" PRIx64 " level %d (pte %#018"
			       PRIx64 ") outside every qualifying table changed",
			       l->base, l->size, l->level, l->pte);
	}
	/* the invalidations against the policy */
	size_t nipa = count_events(SLAT_EV_TLBI_IPA);
	size_t nrange = count_events(SLAT_EV_TLBI_RANGE);
	size_t nvmid = count_events(SLAT_EV_TLBI_VMID);
	bool changed = RP.nr || nfree;
	if (!changed) {
		ECHECK(R.nev == 0, "recover changed nothing but caused events");
	} else if (!by_addr) {
		ECHECK(nipa + nrange == 0 && nvmid >= 1,
		       "EPT: %zu by-IPA, %zu range, %zu VMID invalidations",
		       nipa, nrange, nvmid);
	} else {
		switch (policy) {
		case SLAT_FLUSH_ENTRY:
			ECHECK(nvmid == 0, "SLAT_FLUSH_ENTRY: %zu VMID flushes",
			       nvmid);
			break;
		case SLAT_FLUSH_VMID:
			ECHECK(nipa + nrange == 0 && nvmid >= 1,
			       "SLAT_FLUSH_VMID: %zu by-IPA, %zu range, %zu "
			       "VMID invalidations",
			       nipa, nrange, nvmid);
			break;
		default:
			/* a range per batch, also under "none": tables are
			 * freed and blocks published after it */
			ECHECK(nipa + nvmid == 0 && nrange >= 1,
			       "policy %d: %zu by-IPA, %zu range, %zu VMID "
			       "invalidations",
			       policy, nipa, nrange, nvmid);
			break;
		}
	}
	if (strategy == SLAT_RECOVER_ZAP_LEAF && policy == SLAT_FLUSH_ENTRY)
		for (size_t i = 0; i < R.pre.n; i++) {
			const struct check_leaf *l = &R.pre.v[i];
			if (in_region(l->base))
				ECHECK(tlbi_covers(l, true),
				       "zap-leaf: leaf %#" PRIx64 "+%#" PRIx64
				       " level %d got no invalidation of its "
				       "own after it was cleared",
				       l->base, l->size, l->level);
		}
	check_stats_delta(&st0, 0);
	const struct slat_stats *a = &R.t.stats;
	uint64_t dl = a->written[SLAT_WRITE_LEAF] - st0.written[SLAT_WRITE_LEAF];
	uint64_t db = a->written[SLAT_WRITE_BREAK] - st0.written[SLAT_WRITE_BREAK];
	uint64_t dc = a->written[SLAT_WRITE_CLEAR] - st0.written[SLAT_WRITE_CLEAR];
	uint64_t da = a->written[SLAT_WRITE_ATTR] - st0.written[SLAT_WRITE_ATTR];
	uint64_t dt = a->written[SLAT_WRITE_TABLE] - st0.written[SLAT_WRITE_TABLE];
	uint64_t want_clear = strategy == SLAT_RECOVER_PROMOTE ? 0
			      : strategy == SLAT_RECOVER_ZAP_TABLE
				      ? RP.nr + (nfree - below_handled)
				      : leaves_in + nfree;
	bool hw = R.cfg.features & SLAT_FEAT_HWDIRTY;
	ECHECK(dt == 0 && dc == want_clear &&
		       dl == (RP.promote ? RP.nr : 0) &&
		       db == (RP.promote && R.fmt->split_bbm ? RP.nr : 0) &&
		       (hw && RP.promote ? da <= RP.nr : da == 0),
	       "recover (%zu regions, %" PRIu64 " tables freed): the counters "
	       "say %" PRIu64 " leaves, %" PRIu64 " breaks, %" PRIu64
	       " clears (expected %" PRIu64 "), %" PRIu64 " attribute "
	       "updates, %" PRIu64 " tables written",
	       RP.nr, nfree, dl, db, dc, want_clear, da, dt);
	model_free(R.m);
	R.m = after;
	if (RP.promote)
		R.promoted += RP.nr;
	else
		R.zapped += RP.nr;
	check_range(ts, te);
}

/* ------------------------------------------------------------ bad input */

/* A hash of every table page (contents, refcount) outside our cache. */
static uint64_t table_hash(void)
{
	uint64_t hsh = 1469598103934665603ull;
	uint8_t *incache = calloc(R.h.nr_pages, 1);
	if (!incache)
		abort();
	for (uint32_t i = 0; i < R.cache.nr; i++)
		incache[((uint8_t *)R.cache.pages[i] - R.h.arena) / R.h.granule] = 1;
	for (uint32_t i = 0; i < R.scache.nr; i++)
		incache[((uint8_t *)R.scache.pages[i] - R.h.arena) / R.h.granule] = 1;
	for (uint32_t i = 0; i < R.h.nr_pages; i++) {
		uint8_t *va = R.h.arena + (uint64_t)i * R.h.granule;
		if (R.h.state[i] == SLAT_HOSTED_PAGE_FREE || incache[i])
			continue;
		const uint64_t *p = (const uint64_t *)va;
		for (uint32_t j = 0; j < R.h.granule / 8; j++)
			hsh = (hsh ^ p[j]) * 1099511628211ull;
		hsh = (hsh ^ R.h.refcounts[i]) * 1099511628211ull;
		hsh = (hsh ^ i) * 1099511628211ull;
	}
	free(incache);
	return hsh;
}

static const char *const bad_op_names[] = {
	"map", "unmap", "wrprotect", "relax", "test_clear_young",
	"dirty_read", "hw_access",
};

static void op_bad(void)
{
	uint64_t ipa, size, G = R.G;
	struct window *w;
	gen_range(&ipa, &size, &w);
	if (ipa + size + 2 * G > R.ia_end)
		ipa -= 2 * G; /* one error at a time: stay inside the IPA space */
	uint64_t pa = ipa + w->delta[0];
	uint32_t attrs = SLAT_RW, flags = 0, perms = SLAT_R;
	unsigned access = SLAT_ACCESS_READ;
	enum slat_tlbi_policy policy = SLAT_FLUSH_ENTRY;
	bool hwdirty = R.cfg.features & SLAT_FEAT_HWDIRTY;
	int want;
	unsigned which = (unsigned)below(15);
	/* map unmap wrprotect relax tcy dirty_read (hw_access: below) */
	unsigned op = (unsigned)below(6);
	switch (which) {
	case 0: ipa += G / 2; want = SLAT_E_ALIGN; break;
	case 1: size += 512; want = SLAT_E_ALIGN; break;
	case 2: pa += 2048; op = 0; want = SLAT_E_ALIGN; break;
	case 3: size = 0; want = SLAT_E_RANGE; break;
	case 4: ipa = R.ia_end - G; size = 2 * G; want = SLAT_E_RANGE; break;
	case 5: ipa = G; size = 0 - G; want = SLAT_E_RANGE; break; /* wraps */
	case 6: ipa = R.ia_end; size = G; want = SLAT_E_RANGE; break;
	case 7: pa = R.pa_end - G; size = 2 * G; op = 0; want = SLAT_E_RANGE; break;
	case 8: case 9: case 10: case 11: {
		/* attributes the format refuses (asked from check_format):
		 * on Arm, EPT's bits and one-level execute without XNX; on
		 * EPT, W without R, X without R (no execute-only), XU alone
		 * (no MBEC), no R and no X */
		static const uint32_t cand[] = {
			SLAT_MT_DEVICE | SLAT_R | SLAT_X,
			SLAT_MT_DEVICE | SLAT_R | SLAT_XK,
			SLAT_MT_DEVICE | SLAT_R | SLAT_XU,
			SLAT_MT_MASK | SLAT_R,
			SLAT_R | SLAT_XU,
			SLAT_R | SLAT_XK,
			SLAT_W,
			SLAT_W | SLAT_X,
			SLAT_X,
			SLAT_XU,
			SLAT_XK,
			SLAT_XU | SLAT_W,
			0,
			SLAT_MT_NORMAL_NC,
			SLAT_R | SLAT_IPAT,
			SLAT_R | SLAT_SVE,
			SLAT_R | SLAT_YOUNG,
			SLAT_RW | SLAT_DIRTY,
		};
		uint32_t bad[sizeof(cand) / sizeof(cand[0]) + 1];
		size_t nb = 0;
		for (size_t k = 0; k < sizeof(cand) / sizeof(cand[0]); k++)
			if (!R.fmt->attrs_ok(&R.cfg, cand[k]))
				bad[nb++] = cand[k];
		if (which == 11 || !nb) {
			/* a bit that is no attribute of this format */
			do
				attrs = SLAT_R | (1u << (12 + below(20)));
			while (R.fmt->attrs_ok(&R.cfg, attrs));
		} else {
			attrs = bad[below(nb)];
		}
		op = 0;
		want = SLAT_E_ATTR;
		break;
	}
	case 12:
		if (op == 1 || op == 2 || (op == 5 && chance(50))) {
			policy = (enum slat_tlbi_policy)(4 + below(100));
		} else {
			flags = 1u << (16 + below(16));
			if (op == 0 && chance(50))
				flags = 1u << 2;
		}
		want = SLAT_E_INVAL;
		break;
	case 13: op = 3; perms = SLAT_R | SLAT_MT_DEVICE; want = SLAT_E_ATTR; break;
	default:
		if (chance(30)) {
			/* the CPU's walk: beyond the IPA space, or no such
			 * access */
			op = 6;
			if (chance(50)) {
				ipa = R.ia_end + below(R.ia_end);
				want = SLAT_E_RANGE;
			} else {
				/* an EL0 fetch (that is EXEC_EL0), or
				 * no kind at all */
				access = 6 + (unsigned)below(100);
				want = SLAT_E_INVAL;
			}
			break;
		}
		op = 3;
		perms = SLAT_R | SLAT_SW(1 + below(15));
		want = SLAT_E_ATTR;
		break;
	}
	if (op == 4 && which == 12)
		flags = 1u << (16 + below(16));
	/* without hardware dirty state dirty_read is refused as such */
	bool config_too = op == 5 && !hwdirty && want != SLAT_E_INVAL;
	snprintf(R.opdesc, sizeof(R.opdesc),
		 "bad input %u to %s: ipa %#" PRIx64 " size %#" PRIx64
		 " pa %#" PRIx64 " attrs %#x perms %#x flags %#x policy %d"
		 " access %u",
		 which, bad_op_names[op], ipa, size, pa, attrs, perms, flags,
		 policy, access);
	bool deep = R.count[OP_BAD] % 16 == 0;
	uint64_t h0 = deep ? table_hash() : 0;
	R.cur = &R.cache;
	uint32_t nr0 = R.cur->nr;
	struct slat_stats st0 = R.t.stats;
	uint64_t done = 0;
	uint64_t bitmap[8];
	struct slat_hw_result res;
	start_recording();
	int64_t ret;
	/* every operation gets the same flags, policy and cache */
	struct slat_op args = { .flags = flags,
				.flush = policy,
				.cache = R.cur };
	switch (op) {
	case 0:
		ret = slat_map(&R.t, slat_ipa(ipa), size, slat_pa(pa), attrs,
			       &args);
		break;
	case 1:
		ret = slat_unmap(&R.t, slat_ipa(ipa), size, &args);
		break;
	case 2:
		ret = slat_wrprotect(&R.t, slat_ipa(ipa), size, &args);
		break;
	case 3:
		ret = slat_relax(&R.t, slat_ipa(ipa), size, perms, &args);
		break;
	case 4:
		ret = slat_test_clear_young(&R.t, slat_ipa(ipa), size, true,
					    &args);
		break;
	case 5:
		/* a small bitmap: bad input is refused before it is used */
		ret = slat_dirty_read(&R.t, slat_ipa(ipa), size, bitmap, 8,
				      chance(50), &args);
		break;
	default:
		ret = slat_hw_access(&R.t, slat_ipa(ipa), access, &res);
		break;
	}
	done = args.done;
	R.recording = false;
	index_events();
	CHECK(ret == want || (config_too && ret == SLAT_E_CONFIG),
	      "returned %s, expected %s%s", check_status_name((int)ret),
	      check_status_name(want), config_too ? " or SLAT_E_CONFIG" : "");
	CHECK(done == 0, "*done %#" PRIx64 " after bad input", done);
	CHECK(stats_unchanged(&st0) && R.nev == 0 && R.cur->nr == nr0,
	      "bad input changed counters, caused events or took pages");
	if (deep)
		CHECK(table_hash() == h0, "bad input changed table memory");
	R.bad_ok++;
}

/* ------------------------------------------------------------ driver */

static void setup_windows(void)
{
	uint64_t wsize = 4 * R.top;
	if (wsize < 512 * R.G)
		wsize = 512 * R.G;
	if (wsize > R.ia_end / 4)
		wsize = R.ia_end / 4;
	uint64_t top_entry = LSIZE(R.start_level);
	for (int i = 0; i < NR_WIN; i++) {
		struct window *w = &R.win[i];
		uint64_t nslots = R.ia_end / wsize;
		w->size = wsize;
		if (i == 0 && R.ia_end / top_entry > 1) {
			/* straddle the boundary between two top-level entries
			 * (and root pages, when concatenated) */
			uint64_t span = top_entry * R.t.geo.entries;
			uint64_t b = span < R.ia_end ? span : top_entry;
			w->base = b > wsize / 2 ? align_down(b - wsize / 2, R.top)
						: 0;
		} else if (i == 1) {
			w->base = R.ia_end - wsize; /* the top of the IPA space */
		} else {
			w->base = below(nslots) * wsize;
		}
		for (int j = 0; j < NR_HOT; j++) {
			uint64_t S = LSIZE(2) < wsize ? LSIZE(2) : R.G * 64;
			w->hot[j] = w->base + align_down(below(wsize), S);
		}
		w->hot[0] = w->base + wsize / 2; /* a top-leaf boundary */
		for (int j = 0; j < NR_DELTA; j++) {
			uint64_t slots = (R.pa_end - 2 * wsize) / R.top;
			uint64_t pbase = (1 + below(slots)) * R.top;
			if (pbase + 2 * wsize > R.pa_end)
				pbase = R.top;
			w->delta[j] = pbase - w->base;
		}
	}
}

static int run_config(const struct rcfg *rc, uint64_t seed, uint64_t nops,
		      uint64_t check_every, bool verbose)
{
	memset(&R, 0, sizeof(R));
	R.rc = rc;
	R.cfg = rc->cfg;
	R.seed = seed;
	R.nops = nops;
	R.check_every = check_every;
	R.verbose = verbose;
	snprintf(R.opdesc, sizeof(R.opdesc), "setup");
	uint64_t x = seed ^ (uint64_t)(rc - configs) * 0x1000193ull;
	for (int i = 0; i < 4; i++)
		R.s[i] = splitmix(&x);

	R.G = rc->cfg.granule;
	uint64_t arena = 65536ull * R.G;
	CHECK(slat_hosted_init(&R.h, arena, rc->cfg.granule, rc->pa_base) ==
		      SLAT_OK,
	      "slat_hosted_init");
	slat_hosted_set_observer(&R.h, observe, NULL);
	int ret = slat_table_init(&R.t, &rc->cfg, slat_hosted_ops_serial(), &R.h);
	CHECK(ret == SLAT_OK, "slat_table_init: %s", check_status_name(ret));
	R.h.table = &R.t;
	CHECK(checker_init(&R.ck, &R.t, &R.h) == 0, "%s", R.ck.msg);
	R.fmt = R.ck.fmt;
	R.m = model_new(R.G);
	model_dirty_rules(R.m, rc->cfg.features & SLAT_FEAT_HWDIRTY,
			  !R.fmt->wrprotect_keeps_dirty);
	CHECK(slat_hosted_cache_init(&R.cache, 32768) == SLAT_OK &&
		      slat_hosted_cache_init(&R.scache, 32768) == SLAT_OK,
	      "cache");
	R.cur = &R.cache;
	R.cache_limit = (uint32_t)((16ull << 20) / R.G);

	R.start_level = R.ck.geo.start_level;
	R.leaf_levels = R.ck.geo.leaf_levels;
	for (int l = R.start_level; l < 4; l++)
		LSIZE(l) = 1ull << check_level_shift(&R.ck.geo, l);
	R.top = R.G;
	for (int l = 3; l >= R.start_level; l--)
		if (leaf_level(l))
			R.top = LSIZE(l);
	R.ia_end = 1ull << R.ck.geo.ia_bits;
	R.pa_end = 1ull << R.ck.geo.pa_bits;
	setup_windows();
	check_full();

	bool hwdirty = rc->cfg.features & SLAT_FEAT_HWDIRTY;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (R.opno = 0; R.opno < nops; R.opno++) {
		/* dirty_read without hardware dirty state only checks that it
		 * is refused: rarely; with it, the draws after it move up
		 * rather than fall off the end (restrict was never drawn with
		 * hardware dirty state: NPT always has it) */
		unsigned dirty = hwdirty ? 60 : 10;
		unsigned c = (unsigned)below(990 + dirty);
		enum op_kind k = c < 310   ? OP_MAP
				 : c < 440 ? OP_UNMAP
				 : c < 510 ? OP_WRPROTECT
				 : c < 610 ? OP_RELAX
				 : c < 670 ? OP_MKYOUNG
				 : c < 740 ? OP_TCY
				 : c < 810 ? OP_LOOKUP
				 : c < 880 ? OP_HW_ACCESS
				 : c < 880 + dirty ? OP_DIRTY
				 : c < 905 + dirty ? OP_SPLIT
				 : c < 930 + dirty ? OP_RECOVER
				 : c < 940 + dirty ? OP_RESTRICT
				 : c < 960 + dirty ? OP_LOOKUP
					   : OP_BAD;
		R.count[k]++;
		switch (k) {
		case OP_MAP: op_map(); break;
		case OP_UNMAP: op_unmap_restrict(0, false); break;
		case OP_WRPROTECT: op_unmap_restrict(SLAT_W, chance(20)); break;
		case OP_RESTRICT: op_restrict(); break;
		case OP_RELAX: op_relax(); break;
		case OP_MKYOUNG: op_mkyoung(); break;
		case OP_TCY: op_tcy(); break;
		case OP_LOOKUP: op_lookup(); break;
		case OP_HW_ACCESS: op_hw_access(); break;
		case OP_DIRTY: op_dirty(); break;
		case OP_SPLIT: op_split(); break;
		case OP_RECOVER: op_recover(); break;
		default: op_bad(); break;
		}
		if (verbose)
			fprintf(stderr, "%" PRIu64 " %s: %s\n", R.opno,
				op_names[k], R.opdesc);
		if (model_nr_runs(R.m) > R.max_runs)
			R.max_runs = model_nr_runs(R.m);
		if ((R.opno + 1) % check_every == 0)
			check_full();
	}
	snprintf(R.opdesc, sizeof(R.opdesc), "final full check");
	check_full();
	uint64_t tables = R.ck.tables_seen, leaves = R.ck.leaves_seen;

	/* tear down: unmap everything; no table may remain */
	snprintf(R.opdesc, sizeof(R.opdesc), "final unmap of everything");
	slat_hosted_cache_topup(&R.h, &R.cache, 8);
	ret = slat_unmap(&R.t, slat_ipa(0), R.ia_end,
			 SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &R.cache));
	CHECK(ret == SLAT_OK, "unmap of everything: %s",
	      check_status_name(ret));
	model_unmap(R.m, 0, R.ia_end);
	check_full();
	CHECK(R.ck.tables_seen == 0, "tables left after unmapping everything");
	slat_table_destroy(&R.t);
	slat_hosted_cache_drain(&R.h, &R.cache);
	slat_hosted_cache_drain(&R.h, &R.scache);
	CHECK(R.h.pages_in_use == 0 && R.h.double_frees == 0,
	      "after destroy: %" PRIu64 " pages in use, %" PRIu64
	      " double frees",
	      R.h.pages_in_use, R.h.double_frees);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("%-20s %" PRIu64 " ops in %.1fs: map %" PRIu64 " unmap %" PRIu64
	       " wrprotect %" PRIu64 " relax %" PRIu64 " mkyoung %" PRIu64
	       " tcy %" PRIu64 " lookup %" PRIu64 " hw_access %" PRIu64
	       " dirty_read %" PRIu64 " split %" PRIu64 " recover %" PRIu64
	       " bad %" PRIu64 " restrict %" PRIu64
	       "; nomem %" PRIu64 " nothing-to-do %" PRIu64 " exists %" PRIu64
	       " noent %" PRIu64 "; faults: none %" PRIu64 " translation %"
	       PRIu64 " permission %" PRIu64 " access-flag %" PRIu64
	       "; dirty pages reported %" PRIu64
	       "; max tables %" PRIu64 " runs %" PRIu64
	       "; at the end %" PRIu64 " tables %" PRIu64 " leaves"
	       "; maps bounds-checked %" PRIu64 ", of awkward shapes %" PRIu64
	       " (%" PRIu64 " after a page in the parent entry); blocks split %"
	       PRIu64 ", broken by map %" PRIu64 ", promoted %" PRIu64
	       ", zapped %" PRIu64 "; batch shapes %" PRIu64 "\n",
	       rc->name, nops, secs, R.count[OP_MAP], R.count[OP_UNMAP],
	       R.count[OP_WRPROTECT], R.count[OP_RELAX], R.count[OP_MKYOUNG],
	       R.count[OP_TCY], R.count[OP_LOOKUP], R.count[OP_HW_ACCESS],
	       R.count[OP_DIRTY], R.count[OP_SPLIT], R.count[OP_RECOVER],
	       R.count[OP_BAD], R.count[OP_RESTRICT], R.nomem,
	       R.nothing, R.exists, R.noent, R.faults[0], R.faults[1],
	       R.faults[2], R.faults[3], R.dirty_pages, R.max_tables,
	       R.max_runs, tables, leaves, R.map_bounds_checked,
	       R.shapes[0] + R.shapes[1] + R.shapes[2] + R.shapes[3] +
		       R.shapes[4] + R.shapes[5],
	       R.shape_premaps, R.blocks_split, R.blocks_broken, R.promoted,
	       R.zapped, R.batch_shapes);
	fflush(stdout);

	slat_hosted_cache_fini(&R.cache);
	slat_hosted_cache_fini(&R.scache);
	checker_fini(&R.ck);
	model_free(R.m);
	slat_hosted_fini(&R.h);
	free(R.ev);
	free(R.pre.v);
	free(R.post.v);
	free(kept_leaves.v);
	kept_leaves = (struct vec_leaf){ 0 };
	free(P.mark);
	P.mark = NULL;
	P.cap = 0;
	free(RP.t);
	free(RP.r);
	RP.t = NULL;
	RP.r = NULL;
	RP.tcap = RP.rcap = 0;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: test_random [--config NAME|all] [--seed N] [--ops N]\n"
		"                   [--check-every N] [--list] [--verbose]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *config = "all";
	uint64_t seed = 0x5eed, nops = 200000, every = 2000;
	bool verbose = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--list")) {
			for (size_t j = 0; j < NR_CONFIGS; j++)
				printf("%s\n", configs[j].name);
			return 0;
		} else if (!strcmp(a, "--verbose")) {
			verbose = true;
		} else if (v && !strcmp(a, "--config")) {
			config = v;
			i++;

		} else if (v && !strcmp(a, "--seed")) {
			seed = strtoull(v, NULL, 0);
			i++;
		} else if (v && !strcmp(a, "--ops")) {
			nops = strtoull(v, NULL, 0);
			i++;
		} else if (v && !strcmp(a, "--check-every")) {
			every = strtoull(v, NULL, 0);
			if (!every)
				every = 1;
			i++;
		} else {
			usage();
		}
	}
	const char *env = getenv("SLAT_TEST_OPS");
	if (env)
		nops = strtoull(env, NULL, 0);
	bool found = false;
	for (size_t j = 0; j < NR_CONFIGS; j++) {
		if (strcmp(config, "all") && strcmp(config, configs[j].name))
			continue;
		found = true;
		run_config(&configs[j], seed, nops, every, verbose);
	}
	if (!found) {
		fprintf(stderr, "no configuration %s (see --list)\n", config);
		return 2;
	}
	return 0;
}
