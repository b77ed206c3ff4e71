/* SPDX-License-Identifier: MIT */
/*
 * Allocation-fault injection.
 *
 * The core takes table pages only from the caller's page cache, so "fail the
 * n-th allocation" means "give the operation a cache holding n - 1 pages".
 * For every round:
 *
 *  1. a random starting layout (blocks of every level the granule allows,
 *     runs of pages, holes punched into blocks, a recovery (promote, or
 *     zap-leaf of whole block slots), old leaves) is built on a fresh table
 *     from a recipe;
 *  2. one operation (map of pages, map of blocks, map that splits partly
 *     covered blocks, remap over existing leaves, unmap / wrprotect / relax
 *     with both ends inside blocks, split to a smaller leaf size) runs once
 *     with a full cache: it pops k pages;
 *  3. for every i in 0..k the layout is rebuilt from the recipe and the
 *     operation runs with a cache of exactly i pages. Then:
 *       - i < k: it returns SLAT_E_NOMEM (success is tolerated only when it
 *         really completed: *done == size), *done is granule-aligned and
 *         short of the size, it popped at most i pages;
 *       - i == k: it succeeds;
 *       - the invariant checker passes on the whole table, against the
 *         model updated with [ipa, ipa + *done) only;
 *       - no page leaked: the pages reachable from the root plus the root
 *         are the arena's table pages (checker), the counters agree;
 *       - a split that ran out stopped before the first block it could not
 *         finish, that block unchanged, everything before it split;
 *       - resuming the operation at ipa + *done with a full cache succeeds,
 *         and the table again equals the model;
 *       - after a split, promoting its range back keeps every translation;
 *       - after slat_table_destroy() and draining the caches the arena is
 *         empty and nothing was freed twice.
 *
 * Usage: test_alloc_faults [--config NAME|all] [--rounds N] [--seed N]
 *                          [--round N] [--list] [--verbose]
 * SLAT_FAULT_ROUNDS overrides the default number of rounds per config.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "checker.h"
#include "model.h"

/* ------------------------------------------------------------ configs */

struct fcfg {
	const char *name;
	struct slat_config cfg;
	uint64_t pa_base; /* where the arena's table pages live */
};

#define ARM(g, ia, pa, f)                                                  \
	{ .format = SLAT_FMT_ARM_S2, .granule = (g), .ia_bits = (ia),      \
	  .pa_bits = (pa), .features = (f) }

static const struct fcfg configs[] = {
	{ "4k-32", ARM(4096, 32, 40, 0), 0x40000000ull },
	{ "4k-40", ARM(4096, 40, 48, SLAT_FEAT_XNX), 0x80000000ull },
	{ "4k-48", ARM(4096, 48, 48, SLAT_FEAT_FWB), 0x8000000000ull },
	{ "16k-36", ARM(16384, 36, 40, 0), 0x40000000ull },
	{ "16k-42", ARM(16384, 42, 48, SLAT_FEAT_XNX), 0x80000000ull },
	{ "16k-48", ARM(16384, 48, 48, 0), 0x80000000ull },
	{ "64k-40", ARM(65536, 40, 48, 0), 0x80000000ull },
	{ "64k-48", ARM(65536, 48, 48, SLAT_FEAT_XNX), 0x80000000ull },
	{ "64k-52", ARM(65536, 52, 52, 0), 0xf000000000000ull },
	/* FEAT_LPA2: PA[51:50] in bits [9:8], level-0 blocks */
	{ "4k-52-lpa2", ARM(4096, 52, 52, SLAT_FEAT_LPA2), 0xf000000000000ull },
	{ "16k-52-lpa2", ARM(16384, 52, 52, SLAT_FEAT_LPA2),
	  0xf000000000000ull },
	/* AMD NPT: break-before-make splits, every flush an ASID flush, the
	 * CPU's A and D */
	{ "npt4", { .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		    .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY },
	  0x80000000ull },
	{ "npt5", { .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 57,
		    .pa_bits = 52, .features = SLAT_FEAT_HWDIRTY },
	  0xf000000000000ull },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* ------------------------------------------------------------ random */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng;

static uint64_t below(uint64_t n)
{
	return n ? splitmix(&rng) % n : 0;
}

static int chance(unsigned percent)
{
	return below(100) < percent;
}

/* ------------------------------------------------------------ operations */

enum op_kind {
	OP_MAP, OP_UNMAP, OP_WRPROTECT, OP_RELAX, OP_MKOLD, OP_SPLIT,
	OP_RECOVER, OP_KINDS
};
static const char *op_names[OP_KINDS] = {
	"map", "unmap", "wrprotect", "relax", "test_clear_young", "split",
	"recover"
};

/* What the round's operation is meant to exercise (for the summary). */
enum scenario {
	SC_MAP_PAGES, SC_MAP_BLOCKS, SC_MAP_SPLIT, SC_REMAP, SC_UNMAP,
	SC_WRPROTECT, SC_RELAX, SC_SPLIT, SC_KINDS
};
static const char *sc_names[SC_KINDS] = {
	"map pages", "map blocks", "map splitting blocks", "remap",
	"unmap (partial blocks)", "wrprotect", "relax", "split"
};

struct op {
	enum op_kind kind;
	uint64_t ipa, size, pa;
	uint32_t attrs, flags;
	enum slat_tlbi_policy policy;
	uint64_t leaf_size;                  /* split */
	enum slat_recover_strategy strategy; /* recover */
};

#define MAX_RECIPE 24

struct round {
	uint64_t seed;
	struct op layout[MAX_RECIPE];
	unsigned nlayout;
	struct op op;
	enum scenario sc;
};

/* ------------------------------------------------------------ state */

#define FULL_CACHE 64u
#define ARENA_PAGES 256u

struct env {
	const struct fcfg *fc;
	struct slat_hosted h;
	struct slat_table t;
	struct checker ck;
	struct model *m;
	struct slat_page_cache cache;  /* topped up to what is needed */
	struct slat_page_cache exact;  /* exactly i pages */
	uint64_t G;
};

static struct {
	const struct fcfg *fc;
	uint64_t G, lsize[4];
	uint8_t leaf_levels;
	int start_level;
	uint64_t win, wsize;      /* the IPA window of the round */
	uint64_t pwin;            /* the PA window base */
	uint64_t big;             /* largest leaf */
	uint64_t seed, roundno;
	long iteration;           /* the cache size under test, -1: none */
	bool verbose;
	const char *what;
	/* summary */
	uint64_t rounds[SC_KINDS], points[SC_KINDS], nomem[SC_KINDS];
	uint64_t early_ok[SC_KINDS], skipped, total_points;
} S;

static struct round R;

static struct {
	uint64_t rounds[SC_KINDS], points[SC_KINDS], nomem[SC_KINDS];
	uint64_t early_ok[SC_KINDS];
} T; /* totals over the configurations */

static void describe_op(FILE *f, const struct op *o)
{
	fprintf(f, "%s(ipa %#" PRIx64 ", size %#" PRIx64, op_names[o->kind],
		o->ipa, o->size);
	if (o->kind == OP_MAP)
		fprintf(f, ", pa %#" PRIx64 ", attrs %#x, flags %#x", o->pa,
			o->attrs, o->flags);
	if (o->kind == OP_RELAX)
		fprintf(f, ", perms %#x", o->attrs);
	if (o->kind == OP_UNMAP || o->kind == OP_WRPROTECT ||
	    o->kind == OP_RECOVER)
		fprintf(f, ", policy %d", o->policy);
	if (o->kind == OP_SPLIT)
		fprintf(f, ", leaf_size %#" PRIx64 ", flags %#x", o->leaf_size,
			o->flags);
	if (o->kind == OP_RECOVER)
		fprintf(f, ", strategy %d", (int)o->strategy);
	fprintf(f, ")");
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\nFAIL [%s] round %" PRIu64 " (%s), cache of %ld pages: ",
		S.fc->name, S.roundno, sc_names[R.sc], S.iteration);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  while: %s\n  layout:\n", S.what ? S.what : "?");
	for (unsigned i = 0; i < R.nlayout; i++) {
		fprintf(stderr, "    ");
		describe_op(stderr, &R.layout[i]);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  operation: ");
	describe_op(stderr, &R.op);
	fprintf(stderr,
		"\nreplay: tests/faults/test_alloc_faults --config %s --seed %#" PRIx64
		" --round %" PRIu64 " --verbose\n",
		S.fc->name, S.seed, S.roundno);
	exit(1);
}

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond))                                                \
			die(__VA_ARGS__);                                   \
	} while (0)

/* ------------------------------------------------------------ env */

static void env_open(struct env *E)
{
	memset(E, 0, sizeof(*E));
	E->fc = S.fc;
	E->G = S.G;
	if (slat_hosted_init(&E->h, (uint64_t)ARENA_PAGES * S.G, (uint32_t)S.G,
			     S.fc->pa_base))
		die("slat_hosted_init failed");
	int ret = slat_table_init(&E->t, &S.fc->cfg, slat_hosted_ops(), &E->h);
	CHECK(ret == SLAT_OK, "slat_table_init: %s", check_status_name(ret));
	E->h.table = &E->t;
	if (slat_hosted_cache_init(&E->cache, FULL_CACHE) ||
	    slat_hosted_cache_init(&E->exact, FULL_CACHE))
		die("cache init");
	if (checker_init(&E->ck, &E->t, &E->h))
		die("checker_init: %s", E->ck.msg);
	E->m = model_new(S.G);
	model_dirty_rules(E->m, E->t.cfg.features & SLAT_FEAT_HWDIRTY,
			  !E->ck.fmt->wrprotect_keeps_dirty);
}

/* Destroy the table; the arena must be empty afterwards. */
static void env_close(struct env *E)
{
	slat_table_destroy(&E->t);
	slat_hosted_cache_drain(&E->h, &E->cache);
	slat_hosted_cache_drain(&E->h, &E->exact);
	CHECK(E->h.pages_in_use == 0,
	      "%" PRIu64 " arena pages still in use after destroy (leak)",
	      E->h.pages_in_use);
	CHECK(E->h.double_frees == 0, "%" PRIu64 " double frees",
	      E->h.double_frees);
	slat_hosted_cache_fini(&E->cache);
	slat_hosted_cache_fini(&E->exact);
	checker_fini(&E->ck);
	model_free(E->m);
	slat_hosted_fini(&E->h);
}

static void full_check(struct env *E, const char *when)
{
	if (checker_full(&E->ck, E->m)) {
		fprintf(stderr, "model near the problem:\n");
		model_dump(E->m, R.op.ipa > S.big ? R.op.ipa - S.big : 0,
			   R.op.ipa + R.op.size + S.big);
		die("checker (%s): %s", when, E->ck.msg);
	}
}

/* ------------------------------------------------------------ leaves */

struct leafvec {
	struct check_leaf *v;
	size_t n, cap;
};

static int collect_cb(void *arg, const struct check_leaf *l)
{
	struct leafvec *v = arg;
	if (!l->valid)
		return 0;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
		if (!v->v)
			abort();
	}
	v->v[v->n++] = *l;
	return 0;
}

static void collect(struct env *E, struct leafvec *v, uint64_t s, uint64_t e)
{
	v->n = 0;
	if (checker_walk(&E->ck, s, e, collect_cb, v))
		die("raw walk: %s", E->ck.msg);
}

static struct leafvec pre;

/* ------------------------------------------------------------ running */

static uint64_t need(struct env *E, const struct op *o)
{
	if (o->kind == OP_MKOLD || o->kind == OP_RECOVER)
		return 0;
	enum slat_op_kind k = o->kind == OP_MAP		? SLAT_OP_MAP
			      : o->kind == OP_UNMAP	? SLAT_OP_UNMAP
			      : o->kind == OP_WRPROTECT ? SLAT_OP_WRPROTECT
			      : o->kind == OP_SPLIT	? SLAT_OP_SPLIT
							: SLAT_OP_RELAX;
	int64_t n = slat_pages_needed(
		&E->t, SLAT_NEED(.kind = k, .ipa = slat_ipa(o->ipa),
				 .size = o->size, .pa = slat_pa(o->pa),
				 .attrs = o->attrs, .flags = o->flags,
				 .leaf_size = o->leaf_size));
	/* Refused input: the operation refuses it too, taking nothing. */
	return n < 0 ? 0 : (uint64_t)n;
}

static int call_op(struct env *E, const struct op *o, struct slat_page_cache *c,
		   uint64_t *done)
{
	struct slat_op args = { .flush = o->policy, .cache = c };
	int r;

	switch (o->kind) {
	case OP_MAP:
		args.flags = o->flags;
		args.flush = SLAT_FLUSH_ENTRY;
		r = slat_map(&E->t, slat_ipa(o->ipa), o->size, slat_pa(o->pa),
			     o->attrs, &args);
		break;
	case OP_UNMAP:
		r = slat_unmap(&E->t, slat_ipa(o->ipa), o->size, &args);
		break;
	case OP_WRPROTECT:
		r = slat_wrprotect(&E->t, slat_ipa(o->ipa), o->size, &args);
		break;
	case OP_RELAX:
		args.flush = SLAT_FLUSH_ENTRY;
		r = slat_relax(&E->t, slat_ipa(o->ipa), o->size, o->attrs,
			       &args);
		break;
	case OP_SPLIT:
		args.flags = o->flags;
		r = slat_split(&E->t, slat_ipa(o->ipa), o->size, o->leaf_size,
			       &args);
		break;
	default:
		return SLAT_E_INVAL;
	}
	*done = args.done;
	return r;
}

static int call(struct env *E, const struct op *o, struct slat_page_cache *c,
		uint64_t *done)
{
	switch (o->kind) {
	case OP_MAP:
	case OP_UNMAP:
	case OP_WRPROTECT:
	case OP_RELAX:
	case OP_SPLIT:
		return call_op(E, o, c, done);
	case OP_MKOLD: {
		*done = o->size;
		int r = slat_test_clear_young(&E->t, slat_ipa(o->ipa), o->size,
					      true, NULL);
		return r < 0 ? r : SLAT_OK;
	}
	case OP_RECOVER: {
		int r = slat_recover(&E->t, slat_ipa(o->ipa), o->size,
				     SLAT_RECOVERY(.strategy = o->strategy),
				     SLAT_OP(.flush = o->policy));
		*done = r ? 0 : o->size;
		return r;
	}
	default:
		abort();
	}
}

/*
 * What zap-leaf recovery over [ipa, ipa + size), both aligned to the
 * largest block, removes: each block-sized slot that a table translates
 * (the table is replaced by nothing); a slot that is one block, or a hole,
 * stays. Taken before the call, into zap_slots.
 */
static uint64_t zap_slots[64];
static unsigned nzap;

static void plan_zap(struct env *E, const struct op *o)
{
	nzap = 0;
	for (uint64_t a = o->ipa; a < o->ipa + o->size && nzap < 64; a += S.big) {
		struct check_leaf l;
		int k = checker_leaf_at(&E->ck, a, &l);
		CHECK(k >= 0, "raw walk: %s", E->ck.msg);
		/* a leaf or a hole smaller than the slot: inside a table */
		if (l.size < S.big)
			zap_slots[nzap++] = a;
	}
}

/*
 * Update the model for @o having completed [ipa, ipa + done); @pre holds
 * the valid leaves overlapping the operation's range before it ran.
 */
static void model_apply(struct env *E, const struct op *o, uint64_t done,
			int ret)
{
	if (ret < 0 && ret != SLAT_E_NOMEM)
		return; /* refused: nothing changed */
	switch (o->kind) {
	case OP_MAP:
		model_map(E->m, o->ipa, done, o->pa, o->attrs);
		break;
	case OP_UNMAP:
		model_unmap(E->m, o->ipa, done);
		break;
	case OP_WRPROTECT:
		model_wrprotect(E->m, o->ipa, done);
		break;
	case OP_RELAX: {
		uint64_t de = o->ipa + done;
		/*
		 * An old leaf whose permissions do not change may be made
		 * young whole (it is not split): the parts of it outside
		 * [ipa, de) may then be young or old.
		 */
		for (size_t i = 0; i < pre.n; i++) {
			const struct check_leaf *l = &pre.v[i];
			uint64_t s0 = l->base > o->ipa ? l->base : o->ipa;
			if (s0 >= de || (l->attrs & SLAT_YOUNG))
				continue;
			if ((l->attrs | o->attrs) & ~l->attrs & SLAT_PERMS)
				continue;
			if (l->base < o->ipa)
				model_old_to_unknown(E->m, l->base, o->ipa);
			if (l->base + l->size > de)
				model_old_to_unknown(E->m, de,
						     l->base + l->size);
		}
		model_relax(E->m, o->ipa, done, o->attrs, NULL);
		break;
	}
	case OP_MKOLD:
		/* whole leaves */
		for (size_t i = 0; i < pre.n; i++)
			model_set_young(E->m, pre.v[i].base,
					pre.v[i].base + pre.v[i].size,
					MODEL_OLD);
		break;
	case OP_SPLIT:
		break; /* every translation kept, done or not */
	case OP_RECOVER:
		if (o->strategy == SLAT_RECOVER_PROMOTE)
			/* the same translations; a block is young when one of
			 * the leaves it replaces was */
			model_old_to_unknown(E->m, o->ipa, o->ipa + o->size);
		else
			for (unsigned i = 0; i < nzap; i++)
				model_unmap(E->m, zap_slots[i], S.big);
		break;
	default:
		abort();
	}
}

/* Run @o with a full cache; returns the status, *popped the pages taken. */
static int run_full(struct env *E, const struct op *o, uint32_t *popped,
		    uint64_t *done)
{
	uint64_t n = o->kind == OP_MKOLD ? 0 : need(E, o);
	/* the worst case of a map of huge blocks is far above what it takes */
	if (n > FULL_CACHE)
		n = FULL_CACHE;
	if (n > E->cache.nr &&
	    slat_hosted_cache_topup(&E->h, &E->cache, (uint32_t)n))
		die("arena exhausted");
	collect(E, &pre, o->ipa, o->ipa + o->size);
	if (o->kind == OP_RECOVER && o->strategy != SLAT_RECOVER_PROMOTE)
		plan_zap(E, o);
	uint32_t nr0 = E->cache.nr;
	*done = 0xdead;
	int ret = call(E, o, &E->cache, done);
	*popped = nr0 - E->cache.nr;
	model_apply(E, o, *done, ret);
	return ret;
}

static void build_layout(struct env *E)
{
	S.what = "building the layout";
	for (unsigned i = 0; i < R.nlayout; i++) {
		uint32_t popped;
		uint64_t done;
		int ret = run_full(E, &R.layout[i], &popped, &done);
		CHECK(ret >= 0, "layout step %u returned %s (the full cache "
		      "is capped at %u pages)", i, check_status_name(ret),
		      FULL_CACHE);
		CHECK(done == R.layout[i].size,
		      "layout step %u: *done %#" PRIx64, i, done);
	}
}

/* ------------------------------------------------------------ generation */

static uint64_t align_down(uint64_t x, uint64_t a)
{
	return x & ~(a - 1);
}

/* A random leaf level that is a block level, or 3. */
static int rand_leaf_level(bool blocks_only)
{
	int lv[4], n = 0;
	for (int l = S.start_level; l <= 3; l++)
		if ((S.leaf_levels & (1u << l)) && (l < 3 || !blocks_only))
			lv[n++] = l;
	return n ? lv[below((uint64_t)n)] : 3;
}

static uint32_t rand_attrs(void)
{
	unsigned c = (unsigned)below(100);
	uint32_t mt = c < 70 ? SLAT_MT_NORMAL
		      : c < 85 ? SLAT_MT_NORMAL_NC : SLAT_MT_DEVICE;
	uint32_t a = mt;
	/* an NPT leaf always reads (P is read) */
	if (chance(85) || S.fc->cfg.format == SLAT_FMT_NPT)
		a |= SLAT_R;
	if (chance(50))
		a |= SLAT_W;
	if (mt != SLAT_MT_DEVICE && chance(35)) {
		if (S.fc->cfg.features & SLAT_FEAT_XNX) {
			static const uint32_t xs[] = { SLAT_X, SLAT_XK, SLAT_XU };
			a |= xs[below(3)];
		} else {
			a |= SLAT_X;
		}
	}
	if (chance(30))
		a |= SLAT_SW(below(16));
	return a;
}

/* A PA for a leaf run at @ipa: block-aligned like the IPA, or not. */
static uint64_t rand_pa(uint64_t ipa, bool page_offset)
{
	uint64_t pa = S.pwin + below(8) * S.big + (ipa - S.win);
	if (page_offset)
		pa += (1 + below(7)) * S.G;
	return pa;
}

/* Interesting addresses: leaf boundaries of the layout, +- a few pages. */
static uint64_t rand_point(void)
{
	uint64_t p;
	unsigned c = (unsigned)below(100);
	if (c < 60 && R.nlayout) {
		const struct op *o = &R.layout[below(R.nlayout)];
		p = chance(50) ? o->ipa : o->ipa + o->size;
		if (chance(50) && o->size > S.G)
			p = o->ipa + align_down(below(o->size), S.G);
	} else {
		int l = S.start_level + 1 + (int)below((uint64_t)(3 - S.start_level));
		if (l > 3)
			l = 3;
		p = S.win + align_down(below(S.wsize), S.lsize[l]);
	}
	if (chance(70)) {
		int64_t d = (int64_t)below(9) - 4;
		if (d < 0 && (uint64_t)(-d) * S.G > p - S.win)
			d = 0;
		p += (uint64_t)(d * (int64_t)S.G);
	}
	if (p > S.win + S.wsize)
		p = S.win + S.wsize;
	return p;
}

/* A range [s, e) inside the window with both ends at interesting points. */
static void rand_range(uint64_t *ipa, uint64_t *size, uint64_t max)
{
	for (;;) {
		uint64_t a = rand_point(), b;
		if (chance(40))
			b = a + (1 + below(8)) * S.G;
		else
			b = rand_point();
		if (a > b) {
			uint64_t x = a;
			a = b;
			b = x;
		}
		if (b > S.win + S.wsize)
			b = S.win + S.wsize;
		if (a == b)
			continue;
		if (b - a > max)
			b = a + max;
		*ipa = a;
		*size = b - a;
		return;
	}
}

/* Bound on the pages one map may write (page-offset PAs force pages). */
static uint64_t page_bound(void)
{
	return 4 * S.lsize[2] > 4096 * S.G ? 4 * S.lsize[2] : 4096 * S.G;
}

static void gen_layout(void)
{
	R.nlayout = 0;
	unsigned items = 2 + (unsigned)below(5);
	for (unsigned i = 0; i < items && R.nlayout < MAX_RECIPE - 4; i++) {
		struct op *o = &R.layout[R.nlayout++];
		memset(o, 0, sizeof(*o));
		o->kind = OP_MAP;
		o->attrs = rand_attrs();
		if (chance(70)) {
			/* blocks of one level */
			int l = rand_leaf_level(true);
			uint64_t L = S.lsize[l];
			uint64_t n = 1 + below(2);
			if (L * n > S.wsize)
				n = 1;
			o->ipa = S.win + align_down(below(S.wsize - L * n + 1), L);
			o->size = L * n;
			o->pa = rand_pa(o->ipa, false);
		} else {
			/* a run of pages */
			o->size = (1 + below(80)) * S.G;
			o->ipa = S.win + align_down(below(S.wsize - o->size + 1),
						    S.G);
			o->pa = rand_pa(o->ipa, chance(50));
			o->flags = SLAT_MAP_PAGES;
		}
	}
	/* holes punched into blocks, old leaves */
	unsigned holes = (unsigned)below(3);
	for (unsigned i = 0; i < holes; i++) {
		struct op *o = &R.layout[R.nlayout++];
		memset(o, 0, sizeof(*o));
		o->kind = OP_UNMAP;
		o->policy = SLAT_FLUSH_RANGE;
		rand_range(&o->ipa, &o->size, 64 * S.G);
	}
	/* Recovery: promotion anywhere, or a zap over whole block-sized
	 * slots. */
	if (chance(30)) {
		struct op *o = &R.layout[R.nlayout++];
		memset(o, 0, sizeof(*o));
		o->kind = OP_RECOVER;
		o->policy = (enum slat_tlbi_policy)below(4);
		if (chance(60)) {
			o->strategy = SLAT_RECOVER_PROMOTE;
			rand_range(&o->ipa, &o->size, S.wsize);
		} else {
			uint64_t slots = S.wsize / S.big;
			uint64_t a = below(slots), b = a + 1 + below(slots - a);
			o->strategy = chance(50) ? SLAT_RECOVER_ZAP_LEAF
						 : SLAT_RECOVER_ZAP_TABLE;
			o->ipa = S.win + a * S.big;
			o->size = (b - a) * S.big;
		}
	}
	if (chance(40)) {
		struct op *o = &R.layout[R.nlayout++];
		memset(o, 0, sizeof(*o));
		o->kind = OP_MKOLD;
		rand_range(&o->ipa, &o->size, S.wsize);
	}
}

static void gen_op(void)
{
	struct op *o = &R.op;
	memset(o, 0, sizeof(*o));
	R.sc = (enum scenario)below(SC_KINDS);
	o->policy = (enum slat_tlbi_policy)below(4);
	switch (R.sc) {
	case SC_MAP_PAGES:
		o->kind = OP_MAP;
		o->flags = SLAT_MAP_PAGES;
		rand_range(&o->ipa, &o->size, 256 * S.G);
		o->pa = rand_pa(o->ipa, chance(50));
		o->attrs = rand_attrs();
		break;
	case SC_MAP_BLOCKS: {
		o->kind = OP_MAP;
		int l = rand_leaf_level(true);
		uint64_t L = S.lsize[l];
		uint64_t n = 1 + below(3);
		if (L * n > S.wsize)
			n = 1;
		o->ipa = S.win + align_down(below(S.wsize - L * n + 1), L);
		o->size = L * n;
		/* sometimes pages around the blocks */
		if (chance(40) && o->ipa > S.win) {
			o->ipa -= S.G * (1 + below(3));
			o->size += S.G * (1 + below(3));
		}
		if (o->ipa + o->size > S.win + S.wsize)
			o->size = S.win + S.wsize - o->ipa;
		o->pa = rand_pa(o->ipa, false);
		o->attrs = rand_attrs();
		break;
	}
	case SC_MAP_SPLIT:
	case SC_REMAP:
		o->kind = OP_MAP;
		rand_range(&o->ipa, &o->size,
			   R.sc == SC_REMAP ? page_bound() : 64 * S.G);
		if (R.sc == SC_REMAP && chance(30)) {
			/* the same translation as a layout item: some kept */
			const struct op *l = &R.layout[below(R.nlayout)];
			o->pa = l->pa + (o->ipa - l->ipa);
			o->attrs = l->attrs;
			if (chance(50))
				o->attrs ^= SLAT_W;
		} else {
			o->pa = rand_pa(o->ipa, chance(40));
			o->attrs = rand_attrs();
		}
		if (chance(15))
			o->flags = SLAT_MAP_CAP(__builtin_ctzll(
				S.lsize[rand_leaf_level(false)]));
		break;
	case SC_UNMAP:
	case SC_WRPROTECT:
		o->kind = R.sc == SC_UNMAP ? OP_UNMAP : OP_WRPROTECT;
		rand_range(&o->ipa, &o->size, S.wsize);
		break;
	case SC_SPLIT: {
		/*
		 * Every block meeting the range to tables of a smaller leaf:
		 * one level down costs each block one page (more levels do
		 * not fit the full cache, and such rounds are skipped).
		 */
		o->kind = OP_SPLIT;
		rand_range(&o->ipa, &o->size, S.wsize);
		int lv[4], n = 0;
		for (int l = S.start_level + 1; l <= 3; l++)
			if (l == 3 || (S.leaf_levels & (1u << l)))
				lv[n++] = l;
		int target = n ? lv[below((uint64_t)n)] : 3;
		o->leaf_size = target == 3 && chance(50) ? 0 : S.lsize[target];
		o->flags = chance(30) ? SLAT_SPLIT_NO_SKIP : 0;
		break;
	}
	case SC_RELAX: {
		o->kind = OP_RELAX;
		/* inside one mapped layout item, ends away from its edges */
		const struct op *l = NULL;
		for (unsigned tries = 0; tries < 8 && !l; tries++) {
			const struct op *c = &R.layout[below(R.nlayout)];
			if (c->kind == OP_MAP)
				l = c;
		}
		if (!l)
			l = &R.layout[0];
		uint64_t pages = l->size / S.G;
		uint64_t a = below(pages), b = below(pages);
		if (a > b) {
			uint64_t x = a;
			a = b;
			b = x;
		}
		o->ipa = l->ipa + a * S.G;
		o->size = (b - a + 1) * S.G;
		uint32_t p = 0;
		while (!p) {
			p = (chance(50) ? SLAT_R : 0) | (chance(60) ? SLAT_W : 0);
			if (SLAT_MT(l->attrs) != SLAT_MT_DEVICE && chance(30))
				p |= SLAT_X;
		}
		o->attrs = p;
		break;
	}
	default:
		abort();
	}
}

static void gen_round(uint64_t seed)
{
	rng = seed;
	R.seed = seed;
	S.win = align_down(below(1ull << S.fc->cfg.ia_bits), S.wsize);
	uint64_t pa_space = 1ull << (S.fc->cfg.pa_bits ? S.fc->cfg.pa_bits : 48);
	uint64_t pw = 16 * S.big;
	S.pwin = pw < pa_space ? align_down(below(pa_space - pw), S.big) : 0;
	gen_layout();
	gen_op();
}

/* ------------------------------------------------------------ a round */

/* The level of a split's leaves. */
static int split_target(const struct op *o)
{
	for (int l = S.start_level; l <= 3 && o->leaf_size; l++)
		if (S.lsize[l] == o->leaf_size)
			return l;
	return 3;
}

/*
 * A split that ran out of pages stopped before the first block it could
 * not finish: *done is that block's start (or 0 when it straddles the
 * range's start), the block is still there, and every block before it
 * that met the range is split.
 */
static void check_split_stop(struct env *E, uint64_t done)
{
	int target = split_target(&R.op);
	uint64_t at = R.op.ipa + done;
	const struct check_leaf *b = NULL;
	for (size_t i = 0; i < pre.n && !b; i++)
		if (pre.v[i].base <= at && at - pre.v[i].base < pre.v[i].size)
			b = &pre.v[i];
	CHECK(b && b->level < target,
	      "split stopped at %#" PRIx64 ", which is no block to split", at);
	CHECK(b->base >= R.op.ipa ? b->base == at : done == 0,
	      "split stopped at %#" PRIx64 ", inside the block %#" PRIx64
	      "+%#" PRIx64, at, b->base, b->size);
	struct check_leaf l;
	CHECK(checker_leaf_at(&E->ck, at, &l) == 1 && l.base == b->base &&
		      l.pte == b->pte,
	      "the block at *done %#" PRIx64 " was changed", at);
	struct leafvec post = { 0 };
	if (done)
		collect(E, &post, R.op.ipa, at);
	for (size_t i = 0; i < post.n; i++)
		CHECK(post.v[i].level >= target,
		      "leaf %#" PRIx64 "+%#" PRIx64 " (level %d) before *done "
		      "is not split to level %d", post.v[i].base,
		      post.v[i].size, post.v[i].level, target);
	free(post.v);
}

static void verbose_op(const char *what, const struct op *o, int ret,
		       uint64_t done, uint32_t popped)
{
	if (!S.verbose)
		return;
	fprintf(stderr, "  %s ", what);
	describe_op(stderr, o);
	fprintf(stderr, " -> %s done %#" PRIx64 " popped %u\n",
		check_status_name(ret), done, popped);
}

static void run_round(void)
{
	struct env E;
	uint32_t k;
	uint64_t done;

	/* the reference run: how many pages does the operation take? */
	S.iteration = -1;
	env_open(&E);
	build_layout(&E);
	full_check(&E, "after the layout");
	S.what = "the reference run with a full cache";
	/* asked before the run: a split that ran out has done part of it */
	uint64_t need0 = need(&E, &R.op);
	int ref = run_full(&E, &R.op, &k, &done);
	verbose_op("reference", &R.op, ref, done, k);
	if (ref == SLAT_E_NOMEM) {
		/* it needs more than the capped full cache: not this test's
		 * business (test_random checks slat_pages_needed) */
		CHECK(need0 > FULL_CACHE,
		      "SLAT_E_NOMEM with slat_pages_needed() pages");
		S.skipped++;
		env_close(&E);
		return;
	}
	if (ref < 0) {
		/* refused input (relax over a hole, execute on Device...) */
		CHECK(k == 0, "a refused operation popped %u pages", k);
		S.skipped++;
		env_close(&E);
		return;
	}
	CHECK(done == R.op.size, "*done %#" PRIx64 " after success", done);
	full_check(&E, "after the reference run");
	env_close(&E);

	S.rounds[R.sc]++;
	S.points[R.sc] += k;
	S.total_points += k;

	for (uint32_t i = 0; i <= k; i++) {
		S.iteration = i;
		env_open(&E);
		build_layout(&E);
		collect(&E, &pre, R.op.ipa, R.op.ipa + R.op.size);
		struct slat_stats st0 = E.t.stats;
		if (i && slat_hosted_cache_topup(&E.h, &E.exact, i))
			die("arena exhausted");
		S.what = "the operation with a short cache";
		done = 0xdead;
		int ret = call(&E, &R.op, &E.exact, &done);
		uint32_t popped = i - E.exact.nr;
		verbose_op("injected", &R.op, ret, done, popped);
		CHECK(popped <= i, "popped more than the cache held");
		CHECK(E.t.stats.pages_alloc - st0.pages_alloc == popped,
		      "pages_alloc grew by %" PRIu64 " but %u pages were popped",
		      E.t.stats.pages_alloc - st0.pages_alloc, popped);
		CHECK(done != 0xdead && done <= R.op.size && done % S.G == 0,
		      "*done %#" PRIx64 " (size %#" PRIx64 ") after %s", done,
		      R.op.size, check_status_name(ret));
		if (i == k) {
			CHECK(ret == ref,
			      "with exactly the %u pages the full run took: %s "
			      "(the full run: %s)",
			      k, check_status_name(ret), check_status_name(ref));
		} else if (ret == SLAT_E_NOMEM) {
			CHECK(done < R.op.size, "SLAT_E_NOMEM with *done == size");
			if (R.op.kind == OP_SPLIT)
				check_split_stop(&E, done);
			S.nomem[R.sc]++;
		} else {
			CHECK(ret >= 0, "returned %s with a cache of %u pages",
			      check_status_name(ret), i);
			CHECK(done == R.op.size, "success with *done %#" PRIx64,
			      done);
			S.early_ok[R.sc]++;
		}
		model_apply(&E, &R.op, done, ret);
		full_check(&E, ret == SLAT_E_NOMEM
				       ? "after SLAT_E_NOMEM, against the model "
					 "with the reported progress"
				       : "after success with a short cache");

		if (ret == SLAT_E_NOMEM) {
			/* resume where it stopped */
			struct op rest = R.op;
			rest.ipa += done;
			rest.size -= done;
			rest.pa += done;
			S.what = "resuming after SLAT_E_NOMEM";
			slat_hosted_cache_drain(&E.h, &E.exact);
			uint32_t p2;
			uint64_t d2;
			int r2 = run_full(&E, &rest, &p2, &d2);
			verbose_op("resumed", &rest, r2, d2, p2);
			CHECK(r2 >= 0 && d2 == rest.size,
			      "resuming at %#" PRIx64 " returned %s, *done %#" PRIx64,
			      rest.ipa, check_status_name(r2), d2);
			full_check(&E, "after resuming");
		}
		if (R.op.kind == OP_SPLIT) {
			/* recovery over what the split left (all of it split
			 * now, or part of it): the same translations */
			S.what = "promoting the split range back";
			int r3 = slat_recover(
				&E.t, slat_ipa(R.op.ipa), R.op.size,
				SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
				SLAT_OP(.flush = R.op.policy));
			CHECK(r3 == SLAT_OK, "promote returned %s",
			      check_status_name(r3));
			model_old_to_unknown(E.m, R.op.ipa, R.op.ipa + R.op.size);
			full_check(&E, "after promoting the split range back");
		}
		S.what = "destroying the table";
		env_close(&E);
	}
}

/* ------------------------------------------------------------ main */

static void setup_config(const struct fcfg *fc)
{
	struct slat_geometry geo;
	if (slat_config_geometry(&fc->cfg, &geo)) {
		fprintf(stderr, "config %s refused\n", fc->name);
		exit(1);
	}
	S.fc = fc;
	S.G = fc->cfg.granule;
	/* The levels the rounds aim at: a 5-level walk's PML5 (level -1)
	 * holds no leaf, and lsize[] starts at level 0. */
	S.start_level = geo.start_level < 0 ? 0 : geo.start_level;
	S.leaf_levels = geo.leaf_levels;
	for (int l = 0; l < 4; l++)
		S.lsize[l] = l < geo.start_level
				     ? 0
				     : 1ull << (geo.bits_per_level * (3 - l) +
						geo.granule_shift);
	S.big = S.G;
	for (int l = 3; l >= S.start_level; l--)
		if (geo.leaf_levels & (1u << l))
			S.big = S.lsize[l];
	S.wsize = 4 * S.big;
	if (S.wsize > (1ull << fc->cfg.ia_bits))
		S.wsize = 1ull << fc->cfg.ia_bits;
	memset(S.rounds, 0, sizeof(S.rounds));
	memset(S.points, 0, sizeof(S.points));
	memset(S.nomem, 0, sizeof(S.nomem));
	memset(S.early_ok, 0, sizeof(S.early_ok));
	S.skipped = S.total_points = 0;
}

int main(int argc, char **argv)
{
	const char *cfgname = "all";
	uint64_t rounds = 300, seed = 0x5eedfa17, only = UINT64_MAX;
	const char *env = getenv("SLAT_FAULT_ROUNDS");
	if (env)
		rounds = strtoull(env, NULL, 0);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			cfgname = argv[++i];
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--round") && i + 1 < argc) {
			only = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--verbose")) {
			S.verbose = true;
		} else if (!strcmp(argv[i], "--list")) {
			for (size_t c = 0; c < NR_CONFIGS; c++)
				printf("%s\n", configs[c].name);
			return 0;
		} else {
			fprintf(stderr,
				"usage: %s [--config NAME|all] [--rounds N] "
				"[--seed N] [--round N] [--verbose] [--list]\n",
				argv[0]);
			return 2;
		}
	}
	S.seed = seed;
	bool any = false;
	uint64_t grand = 0;
	for (size_t c = 0; c < NR_CONFIGS; c++) {
		if (strcmp(cfgname, "all") && strcmp(cfgname, configs[c].name))
			continue;
		any = true;
		setup_config(&configs[c]);
		uint64_t x = seed ^ (0x1000193ull * (c + 1));
		for (uint64_t r = 0; r < rounds || only != UINT64_MAX; r++) {
			uint64_t rs = splitmix(&x);
			if (only != UINT64_MAX && r != only) {
				if (r > only)
					break;
				continue;
			}
			S.roundno = r;
			gen_round(rs);
			if (S.verbose) {
				fprintf(stderr, "round %" PRIu64 " (%s):\n", r,
					sc_names[R.sc]);
				for (unsigned i = 0; i < R.nlayout; i++) {
					fprintf(stderr, "  layout ");
					describe_op(stderr, &R.layout[i]);
					fprintf(stderr, "\n");
				}
			}
			run_round();
		}
		uint64_t nr = 0, nn = 0, ne = 0;
		for (int k = 0; k < SC_KINDS; k++) {
			nr += S.rounds[k];
			nn += S.nomem[k];
			ne += S.early_ok[k];
			T.rounds[k] += S.rounds[k];
			T.points[k] += S.points[k];
			T.nomem[k] += S.nomem[k];
			T.early_ok[k] += S.early_ok[k];
		}
		printf("%-7s %5" PRIu64 " rounds, %5" PRIu64
		       " allocation points failed (%" PRIu64 " SLAT_E_NOMEM, %"
		       PRIu64 " success), %" PRIu64 " rounds skipped\n",
		       S.fc->name, nr, S.total_points, nn, ne, S.skipped);
		grand += S.total_points;
	}
	for (int k = 0; k < SC_KINDS; k++)
		printf("  %-24s %5" PRIu64 " rounds, %5" PRIu64
		       " points (%" PRIu64 " SLAT_E_NOMEM, %" PRIu64
		       " success)\n",
		       sc_names[k], T.rounds[k], T.points[k], T.nomem[k],
		       T.early_ok[k]);
	if (!any) {
		fprintf(stderr, "unknown config %s (see --list)\n", cfgname);
		return 2;
	}
	printf("alloc_fault_injection: %" PRIu64
	       " allocation points failed, all checks passed\n",
	       grand);
	return 0;
}
