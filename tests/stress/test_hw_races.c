/* SPDX-License-Identifier: MIT */
/*
 * hw_races: the CPU's table walker against every exclusive operation that
 * may run beside it. With hardware dirty state (Arm FEAT_HAFDBS, EPT A/D)
 * the CPU sets the access flag and the dirty state of a leaf itself, with
 * an atomic update, whenever it translates an access, whatever lock the
 * hypervisor holds. An exclusive operation excludes other walkers of the
 * table, never the hardware: every change it makes to a leaf the hardware
 * may be updating must keep what the hardware did.
 *
 * One thread plays the CPU: it calls slat_hw_access() (reads and writes) on
 * a few leaves, pages and 2 MiB blocks, while the owner thread runs one
 * exclusive operation on the same leaves: relax (adding execute, adding
 * write, adding nothing but the access flag), mkyoung, test_clear_young
 * with mkold, wrprotect under every flush policy and shared (SLAT_SHARED:
 * a lost compare-and-swap retried), dirty_read with clear,
 * split (blocks to pages), recover with SLAT_RECOVER_PROMOTE (pages to a
 * block). Each round starts from a known state (every leaf mapped afresh,
 * clean, old or young as the round drew), runs the two threads together
 * and then checks each access that the hardware completed (no fault):
 *
 *  - a write must leave its page dirty (slat_lookup: SLAT_DIRTY), unless
 *    the operation consumed it: dirty_read(clear) reported that page dirty
 *    in this round (the leaves start clean and each is written at most once
 *    before the report, so a reported page was this write), or wrprotect on
 *    a format where write protection clears the dirty state with write
 *    permission (Arm: S2AP.W and DBM; stage 1: AP[2] and DBM), where the
 *    page must then be read-only. On EPT wrprotect keeps D;
 *  - any access must leave its page young, unless test_clear_young(mkold)
 *    reported that leaf young in this round (it then cleared the flag the
 *    access had set, or found set).
 *
 * Each operation must also have done its own job (relax added what it was
 * asked, split made pages, promote made the block, ...).
 *
 * The hardware's accesses are spread over the time the operation takes (a
 * running estimate, kept per operation) and aligned with the order in
 * which it visits the leaves, so that they land inside its windows; where
 * they land only decides how often a race happens, never what is checked.
 *
 * A TLB invalidation in this test completes only once every walk that had
 * begun before it has finished (the observer waits for the hardware thread
 * to leave slat_hw_access), as TLBI + DSB (or INVEPT) waits for the walks
 * and the descriptor updates of the CPUs: after it, no hardware update of a
 * table the core unlinked can still happen, and the core may free the
 * table. Without it a walk could be left in a freed table page.
 *
 * Lost updates are counted per operation and format and printed with the
 * first case of each; the test fails if there is any.
 *
 *   test_hw_races [--config NAME|all] [--op NAME|all] [--rounds N]
 *                 [--check-every N] [--seed N] [--list] [--help]
 *
 * --rounds: per operation and configuration, rounds in which the two
 * threads met (some access began while the operation ran; default 3000).
 * On a loaded machine the threads may also take turns: such rounds are
 * checked as well but not counted, up to 2 x N rounds in all.
 * SLAT_HW_ROUNDS in the environment overrides the default (the
 * ThreadSanitizer run). --check-every: the whole table through the
 * invariant checker every N rounds (default 512; each round's own checks
 * run every round).
 */
#include <pthread.h>

#include "checker.h"
#include "stress.h"

#define MIB (1ull << 20)
#define G4K 4096ull
#define PA_OFF (1ull << 39)           /* PA = IPA + 512 GiB: blocks aligned */
#define PAGES_AT (1ull << 30)         /* NPAGES pages in one table */
#define NPAGES 32
#define BLOCKS_AT (PAGES_AT + 2 * MIB) /* NBLOCKS blocks of 2 MiB */
#define NBLOCKS 2
#define TABLE_AT (PAGES_AT + 8 * MIB) /* 512 pages: one table to promote */
#define REGION_END (TABLE_AT + 2 * MIB)
#define MAX_LEAVES (NPAGES + NBLOCKS)
#define LEAF_ACCESSES 8
#define MAX_ACCESSES 8
#define BITMAP_WORDS (NBLOCKS * 2 * MIB / G4K / 64)

/* ------------------------------------------------------- configurations */

struct hw_config {
	const char *name;
	struct slat_config cfg;
};

static const struct hw_config configs[] = {
	{ "arm-s2", { .format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		      .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY } },
	{ "ept", { .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
		   .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY } },
	{ "npt", { .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		   .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY } },
	{ "arm-s1", { .format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		      .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY } },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* ---------------------------------------------------------- the leaves */

/* Which leaves an operation works on. */
enum layout {
	LAYOUT_LEAVES, /* NPAGES pages and NBLOCKS blocks, one access to
			  each of LEAF_ACCESSES of them */
	LAYOUT_BLOCKS, /* NBLOCKS blocks (to split), 3 accesses each */
	LAYOUT_TABLE,  /* one table of 512 pages (to promote), 8 accesses */
};

/* A range the operation is called on: pages or blocks. */
struct group {
	uint64_t ipa, size;
	bool pages;
};

/* A leaf at the start of the round. */
struct leaf {
	uint64_t ipa, size;
	bool young;
	bool dirty;           /* written by the CPU before the round */
};

struct access {
	uint64_t ipa;
	unsigned leaf;        /* index in round.leaves */
	unsigned kind;        /* SLAT_ACCESS_READ or SLAT_ACCESS_WRITE */
	int64_t at_ns;        /* when, from the hardware thread's start */
	/* what happened */
	uint64_t t_ns;        /* when it began (st_ns) */
	enum slat_fault fault;
	uint32_t attrs;       /* the leaf as the access left it */
	bool after_op;        /* the operation had returned when it began */
};

enum age { AGE_OLD, AGE_ANY };
/* How an operation may legitimately take a hardware write's dirty state. */
enum consumes { CONSUMES_NONE, CONSUMES_REPORTED, CONSUMES_WRPROTECT };

struct round;

struct op {
	const char *name;
	enum layout layout;
	uint32_t perms;           /* of the leaves at the start */
	enum age age;
	enum consumes consumes;
	void (*run)(struct round *r);
	uint32_t arg;             /* relax: permissions; wrprotect: policy */
	/* What is wrong with @l, the leaf at @ipa after the round, or NULL. */
	const char *(*effect)(const struct round *r, const struct slat_leaf *l);
};

struct round {
	const struct op *op;
	unsigned number;
	unsigned nr_groups, nr_leaves, nr_acc;
	struct group groups[2];
	struct leaf leaves[MAX_LEAVES];
	struct access acc[MAX_ACCESSES];
	enum slat_tlbi_policy policy;  /* dirty_read and recover: drawn */
	/* what the operation reported */
	bool reported_young[MAX_LEAVES];
	uint64_t dirty[2][BITMAP_WORDS];
	/* the hardware thread's start, the operation's start and end */
	uint64_t hw_t0, op_t0, op_t1;
};

/* --------------------------------------------------------- the state */

static struct st_table S;
static struct checker CK;
static struct slat_page_cache cache;
static const struct hw_config *cur;
static bool keeps_dirty;          /* wrprotect keeps the dirty state (EPT) */
static struct round R;
static uint64_t rng;

/* Hand-offs: the round number, published by a release store. */
static unsigned go, ack, op_done, hw_done;
static bool quit;

/* ------------------------------------------- walks and invalidations */

/* Odd while the hardware thread is inside slat_hw_access(). */
static unsigned long walk_seq;

static void walk_begin(void)
{
	__atomic_fetch_add(&walk_seq, 1, __ATOMIC_ACQ_REL);
}

static void walk_end(void)
{
	__atomic_fetch_add(&walk_seq, 1, __ATOMIC_ACQ_REL);
}

/*
 * A TLB invalidation completes once the walk in progress, if any, has
 * finished. The read-modify-write orders the entries the core changed
 * before the invalidation against the walks that begin after it: either
 * the walk's begin comes later in walk_seq's order (and sees the changes)
 * or this reads an odd count and waits for its end.
 */
static void wait_for_walks(void)
{
	unsigned long s = __atomic_fetch_add(&walk_seq, 0, __ATOMIC_ACQ_REL);
	if (!(s & 1))
		return;
	for (unsigned spin = 1; __atomic_load_n(&walk_seq, __ATOMIC_ACQUIRE) == s;
	     spin++)
		if (spin % 1024 == 0)
			sched_yield();
}

static void hw_observer(void *arg, const struct slat_hosted_event *ev)
{
	(void)arg;
	if (ev->kind == SLAT_EV_TLBI_IPA || ev->kind == SLAT_EV_TLBI_RANGE ||
	    ev->kind == SLAT_EV_TLBI_VMID)
		wait_for_walks();
}

/* ------------------------------------------------- the exclusive calls */

static const char *status(int ret)
{
	return check_status_name(ret);
}

static void topup(uint32_t n)
{
	st_topup(&S, &cache, n);
}

static void run_relax(struct round *r)
{
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		int ret = slat_relax(&S.t, slat_ipa(gr->ipa), gr->size,
				     r->op->arg, SLAT_OP(.cache = &cache));
		ST_CHECK(ret == SLAT_OK || ret == SLAT_NOTHING_TO_DO,
			 "%s %s round %u: slat_relax(%#" PRIx64 ", %#" PRIx64
			 ") = %s", cur->name, r->op->name, r->number, gr->ipa,
			 gr->size, status(ret));
	}
}

static void run_mkyoung(struct round *r)
{
	for (unsigned i = 0; i < r->nr_leaves; i++) {
		int ret = slat_mkyoung(&S.t, slat_ipa(r->leaves[i].ipa), 0);
		ST_CHECK(ret == SLAT_OK || ret == SLAT_NOTHING_TO_DO,
			 "%s mkyoung round %u: slat_mkyoung(%#" PRIx64 ") = %s",
			 cur->name, r->number, r->leaves[i].ipa, status(ret));
	}
}

static void run_mkold(struct round *r)
{
	for (unsigned i = 0; i < r->nr_leaves; i++) {
		const struct leaf *l = &r->leaves[i];
		int ret = slat_test_clear_young(&S.t, slat_ipa(l->ipa), l->size,
						true, NULL);
		ST_CHECK(ret == SLAT_OK || ret == SLAT_WAS_YOUNG,
			 "%s mkold round %u: slat_test_clear_young(%#" PRIx64
			 ") = %s",
			 cur->name, r->number, l->ipa, status(ret));
		r->reported_young[i] = ret == SLAT_WAS_YOUNG;
	}
}

static void run_wrprotect(struct round *r)
{
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		int ret =
			slat_wrprotect(&S.t, slat_ipa(gr->ipa), gr->size,
				       SLAT_OP(.flush = (enum slat_tlbi_policy)
								r->op->arg,
					       .cache = &cache));
		ST_CHECK(ret == SLAT_OK, "%s %s round %u: slat_wrprotect = %s",
			 cur->name, r->op->name, r->number, status(ret));
	}
}

/* As the x86 TDP MMU under the read lock: a lost race with the CPU's own
 * update is retried inside; the call stops early (SLAT_E_AGAIN) only for
 * an entry another walker replaces, and the rest is done again. */
static void run_wrprotect_shared(struct round *r)
{
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		uint64_t at = gr->ipa, end = gr->ipa + gr->size;
		int ret;
		do {
			struct slat_op op = { .flags = SLAT_SHARED,
					      .flush = SLAT_FLUSH_RANGE,
					      .cache = &cache };
			ret = slat_wrprotect(&S.t, slat_ipa(at), end - at, &op);
			at += op.done;
		} while (ret == SLAT_E_AGAIN && at < end);
		ST_CHECK(ret == SLAT_OK || ret == SLAT_NOTHING_TO_DO,
			 "%s %s round %u: slat_wrprotect(SLAT_SHARED) = %s",
			 cur->name, r->op->name, r->number, status(ret));
	}
}

/* Permissions removed in place while the CPU sets access flags and dirty
 * state; shared, as wrprotect-shared, when W goes too. */
static void run_restrict(struct round *r)
{
	bool shared = r->op->arg & SLAT_W;
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		uint64_t at = gr->ipa, end = gr->ipa + gr->size;
		int ret;
		do {
			struct slat_op op = { .flags = shared ? SLAT_SHARED : 0,
					      .flush = SLAT_FLUSH_RANGE,
					      .cache = &cache };
			ret = slat_restrict(&S.t, slat_ipa(at), end - at,
					    r->op->arg, &op);
			at += op.done;
		} while (shared && ret == SLAT_E_AGAIN && at < end);
		ST_CHECK(ret == SLAT_OK, "%s %s round %u: slat_restrict = %s",
			 cur->name, r->op->name, r->number, status(ret));
	}
}

static void run_dirty_clear(struct round *r)
{
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		int64_t n = slat_dirty_read(&S.t, slat_ipa(gr->ipa), gr->size,
					    r->dirty[g], BITMAP_WORDS, true,
					    SLAT_OP(.flush = r->policy,
						    .cache = &cache));
		ST_CHECK(n >= 0, "%s dirty_read round %u: %s", cur->name,
			 r->number, status((int)n));
	}
}

static void run_split(struct round *r)
{
	const struct group *gr = &r->groups[0];
	int ret = slat_split(&S.t, slat_ipa(gr->ipa), gr->size, 0,
			     SLAT_OP(.cache = &cache));
	ST_CHECK(ret == SLAT_OK, "%s split round %u: slat_split = %s",
		 cur->name, r->number, status(ret));
}

static void run_promote(struct round *r)
{
	const struct group *gr = &r->groups[0];
	int ret = slat_recover(&S.t, slat_ipa(gr->ipa), gr->size,
			       SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
			       SLAT_OP(.flush = r->policy));
	ST_CHECK(ret == SLAT_OK, "%s promote round %u: slat_recover = %s",
		 cur->name, r->number, status(ret));
}

/* ------------------------------------------- what each must have done */

static const char *has_added(const struct round *r, const struct slat_leaf *l)
{
	if ((l->attrs & r->op->arg) != r->op->arg)
		return "the permissions relax added are missing";
	return l->attrs & SLAT_YOUNG ? NULL : "relax left the leaf old";
}

static const char *is_young(const struct round *r, const struct slat_leaf *l)
{
	(void)r;
	return l->attrs & SLAT_YOUNG ? NULL : "the leaf is old";
}

static const char *is_read_only(const struct round *r,
				const struct slat_leaf *l)
{
	(void)r;
	return l->attrs & SLAT_W ? "wrprotect left the leaf writable" : NULL;
}

static const char *lacks_removed(const struct round *r,
				 const struct slat_leaf *l)
{
	if (l->attrs & r->op->arg)
		return "restrict left a permission it was to remove";
	if ((l->attrs & SLAT_PERMS) != (SLAT_RWX & ~r->op->arg))
		return "restrict removed a permission it was to keep";
	return NULL;
}

static const char *is_page(const struct round *r, const struct slat_leaf *l)
{
	(void)r;
	return l->size == G4K ? NULL : "split left a block";
}

static const char *is_block(const struct round *r, const struct slat_leaf *l)
{
	(void)r;
	return l->size == 2 * MIB ? NULL : "promote left the pages";
}

static const struct op ops[] = {
	{ "relax+X", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_NONE,
	  run_relax, SLAT_X, has_added },
	{ "relax+W", LAYOUT_LEAVES, SLAT_R, AGE_ANY, CONSUMES_NONE,
	  run_relax, SLAT_W, has_added },
	{ "relax-young", LAYOUT_LEAVES, SLAT_RW, AGE_OLD, CONSUMES_NONE,
	  run_relax, SLAT_R, has_added },
	{ "mkyoung", LAYOUT_LEAVES, SLAT_RW, AGE_OLD, CONSUMES_NONE,
	  run_mkyoung, 0, is_young },
	{ "mkold", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_NONE,
	  run_mkold, 0, NULL },
	{ "wrprotect-entry", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_WRPROTECT,
	  run_wrprotect, SLAT_FLUSH_ENTRY, is_read_only },
	{ "wrprotect-range", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_WRPROTECT,
	  run_wrprotect, SLAT_FLUSH_RANGE, is_read_only },
	{ "wrprotect-vmid", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_WRPROTECT,
	  run_wrprotect, SLAT_FLUSH_VMID, is_read_only },
	{ "wrprotect-none", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_WRPROTECT,
	  run_wrprotect, SLAT_FLUSH_NONE, is_read_only },
	{ "wrprotect-shared", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_WRPROTECT,
	  run_wrprotect_shared, 0, is_read_only },
	{ "restrict-X", LAYOUT_LEAVES, SLAT_RWX, AGE_ANY, CONSUMES_NONE,
	  run_restrict, SLAT_X, lacks_removed },
	{ "restrict-WX-shared", LAYOUT_LEAVES, SLAT_RWX, AGE_ANY,
	  CONSUMES_WRPROTECT, run_restrict, SLAT_W | SLAT_X, lacks_removed },
	{ "dirty_read-clear", LAYOUT_LEAVES, SLAT_RW, AGE_ANY, CONSUMES_REPORTED,
	  run_dirty_clear, 0, NULL },
	{ "split", LAYOUT_BLOCKS, SLAT_RW, AGE_ANY, CONSUMES_NONE,
	  run_split, 0, is_page },
	{ "promote", LAYOUT_TABLE, SLAT_RW, AGE_OLD, CONSUMES_NONE,
	  run_promote, 0, is_block },
};
#define NR_OPS (sizeof(ops) / sizeof(ops[0]))

/* --------------------------------------------------- setting a round up */

static void add_group(struct round *r, uint64_t ipa, uint64_t size, bool pages)
{
	r->groups[r->nr_groups++] = (struct group){ ipa, size, pages };
}

/* Dirty and old is where the CPU still has a bit to set (AF) in a leaf
 * with dirty state: a store instead of a CAS loses it. */
static void add_leaf(struct round *r, uint64_t ipa, uint64_t size, bool dirty)
{
	bool young = r->op->age == AGE_ANY && st_below(&rng, 2);
	r->leaves[r->nr_leaves++] = (struct leaf){ ipa, size, young, dirty };
}

static bool draw_dirty(void)
{
	return st_below(&rng, 4) == 0;
}

static int by_ipa(const void *a, const void *b)
{
	uint64_t x = ((const struct access *)a)->ipa;
	uint64_t y = ((const struct access *)b)->ipa;
	return x < y ? -1 : x > y;
}

static int by_time(const void *a, const void *b)
{
	int64_t x = ((const struct access *)a)->at_ns;
	int64_t y = ((const struct access *)b)->at_ns;
	return x < y ? -1 : x > y;
}

/* @n accesses to distinct pages of the leaf, each a write 3 times in 4. */
static void add_accesses(struct round *r, unsigned leaf, unsigned n)
{
	const struct leaf *l = &r->leaves[leaf];
	uint64_t pages = l->size / G4K;
	unsigned first = r->nr_acc;
	while (r->nr_acc < first + n) {
		uint64_t ipa = l->ipa + st_below(&rng, pages) * G4K;
		bool seen = false;
		for (unsigned k = first; k < r->nr_acc; k++)
			seen |= r->acc[k].ipa == ipa;
		if (seen)
			continue;
		unsigned kind = st_below(&rng, 4) ? SLAT_ACCESS_WRITE
						  : SLAT_ACCESS_READ;
		r->acc[r->nr_acc++] = (struct access){
			.ipa = ipa, .leaf = leaf, .kind = kind,
		};
	}
	/* In address order, the order the operation visits them. */
	qsort(&r->acc[first], n, sizeof(r->acc[0]), by_ipa);
}

/* One access each to LEAF_ACCESSES distinct leaves, in the op's order. */
static void add_leaf_accesses(struct round *r)
{
	bool chosen[MAX_LEAVES] = { false };
	for (unsigned n = 0; n < LEAF_ACCESSES;) {
		unsigned i = (unsigned)st_below(&rng, r->nr_leaves);
		if (!chosen[i])
			chosen[i] = true, n++;
	}
	for (unsigned i = 0; i < r->nr_leaves; i++)
		if (chosen[i])
			add_accesses(r, i, 1);
}

static void lay_out(struct round *r)
{
	switch (r->op->layout) {
	case LAYOUT_LEAVES:
		add_group(r, PAGES_AT, NPAGES * G4K, true);
		add_group(r, BLOCKS_AT, NBLOCKS * 2 * MIB, false);
		/* Dirty by lines of eight pages: the bulk loops take a line
		 * whose every leaf is dirty at once. */
		for (unsigned i = 0, line = 0; i < NPAGES; i++) {
			if (i % 8 == 0)
				line = st_below(&rng, 2);
			add_leaf(r, PAGES_AT + i * G4K, G4K, line);
		}
		for (unsigned i = 0; i < NBLOCKS; i++)
			add_leaf(r, BLOCKS_AT + i * 2 * MIB, 2 * MIB, draw_dirty());
		add_leaf_accesses(r);
		break;
	case LAYOUT_BLOCKS:
		add_group(r, BLOCKS_AT, NBLOCKS * 2 * MIB, false);
		for (unsigned i = 0; i < NBLOCKS; i++)
			add_leaf(r, BLOCKS_AT + i * 2 * MIB, 2 * MIB, draw_dirty());
		for (unsigned i = 0; i < r->nr_leaves; i++)
			add_accesses(r, i, 3);
		break;
	case LAYOUT_TABLE:
		add_group(r, TABLE_AT, 2 * MIB, true);
		/* One "leaf" for the ages: the whole table, all old. */
		add_leaf(r, TABLE_AT, 2 * MIB, draw_dirty());
		add_accesses(r, 0, 8);
		break;
	}
}

/* A running estimate of the operation's duration and of when it starts. */
struct timing {
	int64_t op_ns, lag_ns;
};

/*
 * Spread the accesses over the operation, each near the time the operation
 * reaches its page, taking every leaf to cost the same: the page at
 * fraction f of the leaves (by leaf, then within it) at lag + dur * (f + u),
 * u drawn in [-1/n, 1/n) for n accesses; then sorted by time.
 */
static void plan_times(struct round *r, const struct timing *tm)
{
	int64_t n = r->nr_acc;
	for (unsigned k = 0; k < r->nr_acc; k++) {
		const struct access *a = &r->acc[k];
		const struct leaf *l = &r->leaves[a->leaf];
		/* in per mille */
		int64_t f = (int64_t)((a->leaf * 1000 +
				       (a->ipa - l->ipa) * 1000 / l->size) /
				      r->nr_leaves);
		int64_t u = (int64_t)st_below(&rng, 2000 / (uint64_t)n) - 1000 / n;
		r->acc[k].at_ns = tm->lag_ns + tm->op_ns * (f + u) / 1000;
	}
	qsort(r->acc, n, sizeof(r->acc[0]), by_time);
}

static void map_groups(const struct round *r)
{
	uint32_t attrs = r->op->perms | SLAT_MT_NORMAL;
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		topup(8);
		int ret = slat_map(&S.t, slat_ipa(gr->ipa), gr->size,
				   slat_pa(gr->ipa + PA_OFF), attrs,
				   SLAT_OP(.flags = gr->pages ? SLAT_MAP_PAGES
							      : 0,
					   .cache = &cache));
		ST_CHECK(ret == SLAT_OK, "%s: map of %#" PRIx64 " = %s",
			 cur->name, gr->ipa, status(ret));
	}
}

/* The leaf at @ipa is mapped, clean, and young as drawn. */
static void check_start(const struct round *r, uint64_t ipa, bool young,
			bool dirty)
{
	struct slat_leaf l;
	int ret = slat_lookup(&S.t, slat_ipa(ipa), &l);
	ST_CHECK(ret == SLAT_OK, "%s %s round %u: %#" PRIx64 " unmapped at the "
		 "start", cur->name, r->op->name, r->number, ipa);
	ST_CHECK(!(l.attrs & SLAT_DIRTY) == !dirty &&
		 !(l.attrs & SLAT_YOUNG) == !young,
		 "%s %s round %u: %#" PRIx64 " starts as %#x (pte %#" PRIx64
		 "), not %s and %s", cur->name, r->op->name, r->number, ipa,
		 l.attrs, l.pte, dirty ? "dirty" : "clean", young ? "young" : "old");
}

/* The CPU writes the leaf at @ipa before the round: whether it could (a
 * read-only leaf stays clean). */
static bool write_before(uint64_t ipa)
{
	struct slat_hw_result res;
	int ret = slat_hw_access(&S.t, slat_ipa(ipa), SLAT_ACCESS_WRITE, &res);
	ST_CHECK(ret == SLAT_OK, "%s: slat_hw_access = %s", cur->name,
		 status(ret));
	return res.fault == SLAT_FAULT_NONE;
}

/* Every leaf mapped afresh, clean or (written by the CPU) dirty, old or
 * young as drawn. */
static void reset_leaves(struct round *r)
{
	topup(8);
	int ret =
		slat_unmap(&S.t, slat_ipa(PAGES_AT), REGION_END - PAGES_AT,
			   SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &cache));
	ST_CHECK(ret == SLAT_OK, "%s: unmap = %s", cur->name, status(ret));
	map_groups(r);
	uint64_t bitmap[BITMAP_WORDS * 2];
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		int64_t n = slat_dirty_read(&S.t, slat_ipa(gr->ipa), gr->size,
					    bitmap, BITMAP_WORDS * 2, true,
					    SLAT_OP(.flush = SLAT_FLUSH_NONE,
						    .cache = &cache));
		ST_CHECK(n >= 0, "%s: dirty_read = %s", cur->name,
			 status((int)n));
	}
	/* A leaf may be a region of pages (promote's): the pages the round
	 * accesses are written too, before any is made old. */
	for (unsigned i = 0; i < r->nr_leaves; i++)
		r->leaves[i].dirty = r->leaves[i].dirty &&
				     write_before(r->leaves[i].ipa);
	for (unsigned k = 0; k < r->nr_acc; k++)
		if (r->leaves[r->acc[k].leaf].dirty)
			ST_CHECK(write_before(r->acc[k].ipa),
				 "%s: a page of a writable leaf is read-only",
				 cur->name);
	for (unsigned i = 0; i < r->nr_leaves; i++) {
		struct leaf *l = &r->leaves[i];
		if (!l->young)
			slat_test_clear_young(&S.t, slat_ipa(l->ipa), l->size,
					      true, NULL);
		check_start(r, l->ipa, l->young, l->dirty);
	}
	for (unsigned k = 0; k < r->nr_acc; k++) {
		const struct leaf *l = &r->leaves[r->acc[k].leaf];
		check_start(r, r->acc[k].ipa, l->young, l->dirty);
	}
	topup(8);
}

static void prepare_round(const struct op *op, unsigned number,
			  const struct timing *tm)
{
	memset(&R, 0, sizeof(R));
	R.op = op;
	R.number = number;
	R.policy = (enum slat_tlbi_policy)st_below(&rng, 4);
	lay_out(&R);
	reset_leaves(&R);
	plan_times(&R, tm);
}

/* ------------------------------------------------ the hardware thread */

static void spin_until(uint64_t t0, int64_t at_ns)
{
	if (at_ns <= 0)
		return;
	while ((int64_t)(st_ns() - t0) < at_ns)
		;
}

static void hw_round(unsigned n)
{
	struct slat_hw_result res;
	uint64_t t0 = st_ns();
	R.hw_t0 = t0;
	for (unsigned k = 0; k < R.nr_acc; k++) {
		struct access *a = &R.acc[k];
		spin_until(t0, a->at_ns);
		a->after_op = __atomic_load_n(&op_done, __ATOMIC_ACQUIRE) == n;
		a->t_ns = st_ns();
		walk_begin();
		int ret = slat_hw_access(&S.t, slat_ipa(a->ipa), a->kind, &res);
		walk_end();
		ST_CHECK(ret == SLAT_OK, "slat_hw_access = %s", status(ret));
		a->fault = res.fault;
		a->attrs = res.attrs;
	}
}

static void *hw_main(void *arg)
{
	(void)arg;
	st_pin_to_cpu(1);
	for (unsigned n = 1;; n++) {
		st_wait_for(&go, n);
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			break;
		__atomic_store_n(&ack, n, __ATOMIC_RELEASE);
		hw_round(n);
		__atomic_store_n(&hw_done, n, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* ------------------------------------------------------------ checking */

struct op_stats {
	uint64_t rounds, overlapping;    /* rounds run; where the two met */
	uint64_t writes, reads;          /* accesses that completed */
	uint64_t lost_dirty, lost_young, wrong;
	char first_lost[400], first_wrong[400]; /* the first of each */
};

static void note(char *first, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keep the first message of a kind (the buffers are 400 bytes). */
static void note(char *first, const char *fmt, ...)
{
	if (first[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(first, 400, fmt, ap);
	va_end(ap);
}

/* dirty_read(clear) reported the page at @ipa dirty in this round. */
static bool reported_dirty(const struct round *r, uint64_t ipa)
{
	for (unsigned g = 0; g < r->nr_groups; g++) {
		const struct group *gr = &r->groups[g];
		if (ipa - gr->ipa >= gr->size)
			continue;
		uint64_t bit = (ipa - gr->ipa) / G4K;
		return (r->dirty[g][bit / 64] >> (bit % 64)) & 1;
	}
	return false;
}

/* The operation may have taken the dirty state of a write to @l. */
static bool write_consumed(const struct round *r, const struct access *a,
			   const struct slat_leaf *l)
{
	switch (r->op->consumes) {
	case CONSUMES_REPORTED:
		return reported_dirty(r, a->ipa);
	case CONSUMES_WRPROTECT:
		return !keeps_dirty && !(l->attrs & SLAT_W);
	default:
		return false;
	}
}

static const char *when(const struct access *a)
{
	return a->after_op ? "after the operation returned" : "during the operation";
}

static void check_access(const struct round *r, const struct access *a,
			 struct op_stats *os)
{
	const char *kind = a->kind == SLAT_ACCESS_WRITE ? "write" : "read";
	struct slat_leaf l;
	if (slat_lookup(&S.t, slat_ipa(a->ipa), &l) != SLAT_OK) {
		os->wrong++;
		note(os->first_wrong, "round %u: %#" PRIx64 " unmapped after a "
		     "%s", r->number, a->ipa, kind);
		return;
	}
	if (a->kind == SLAT_ACCESS_WRITE) {
		os->writes++;
		if (!(l.attrs & SLAT_DIRTY) && !write_consumed(r, a, &l)) {
			os->lost_dirty++;
			note(os->first_lost, "round %u: hardware write at %#" PRIx64 " %s "
			     "succeeded (the leaf then %#x), but the leaf is now "
			     "clean: pte %#" PRIx64 " (%s, %#" PRIx64 " bytes)",
			     r->number, a->ipa, when(a), a->attrs, l.pte,
			     (l.attrs & SLAT_W) ? "writable" : "read-only", l.size);
		}
	} else {
		os->reads++;
	}
	bool mkold_took = r->op->run == run_mkold &&
			  r->reported_young[a->leaf];
	if (!(l.attrs & SLAT_YOUNG) && !mkold_took) {
		os->lost_young++;
		note(os->first_lost, "round %u: hardware %s at %#" PRIx64 " %s succeeded "
		     "(the leaf then %#x), but the leaf is now old: pte %#"
		     PRIx64, r->number, kind, a->ipa, when(a), a->attrs, l.pte);
	}
}

static void check_effects(const struct round *r, struct op_stats *os)
{
	if (!r->op->effect)
		return;
	for (unsigned i = 0; i < r->nr_leaves; i++) {
		struct slat_leaf l;
		uint64_t ipa = r->leaves[i].ipa;
		const char *why = slat_lookup(&S.t, slat_ipa(ipa), &l) != SLAT_OK
					  ? "the leaf is unmapped"
					  : r->op->effect(r, &l);
		if (why) {
			os->wrong++;
			note(os->first_wrong, "round %u: at %#" PRIx64 ": %s (pte %#" PRIx64 ")",
			     r->number, ipa, why, l.pte);
		}
	}
}

static void check_round(const struct round *r, struct op_stats *os)
{
	for (unsigned k = 0; k < r->nr_acc; k++)
		if (r->acc[k].fault == SLAT_FAULT_NONE)
			check_access(r, &r->acc[k], os);
	check_effects(r, os);
	os->rounds++;
}

/* ----------------------------------------------------------- the driver */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Some access began while the operation ran: the threads met. On a loaded
 * machine the two threads may take turns on one CPU instead; such a round
 * is checked all the same but does not count towards --rounds.
 */
static bool overlapped(const struct round *r)
{
	return r->acc[0].t_ns < r->op_t1 && r->acc[r->nr_acc - 1].t_ns > r->op_t0;
}

/* One round: both threads at once, then the checks. */
static void one_round(const struct op *op, unsigned n, unsigned number,
		      struct timing *tm, struct op_stats *os)
{
	prepare_round(op, number, tm);
	__atomic_store_n(&go, n, __ATOMIC_RELEASE);
	st_wait_for(&ack, n);
	R.op_t0 = st_ns();
	op->run(&R);
	R.op_t1 = st_ns();
	__atomic_store_n(&op_done, n, __ATOMIC_RELEASE);
	st_wait_for(&hw_done, n);

	/* Aim the next round's accesses at this operation's span. */
	int64_t dur = (int64_t)(R.op_t1 - R.op_t0);
	int64_t lag = (int64_t)(R.op_t0 - R.hw_t0);
	bool met = overlapped(&R);
	tm->op_ns = clamp((tm->op_ns * 7 + dur) / 8, 20, 50000);
	tm->lag_ns = clamp((tm->lag_ns * 7 + clamp(lag, 0, 5000)) / 8, 0, 5000);
	os->overlapping += met;
	check_round(&R, os);
}

static unsigned hw_rounds_started;

/* The table's invariants (descriptors, refcounts, no leak): a bad one counts
 * as a wrong result. */
static void check_table(unsigned round, struct op_stats *os)
{
	if (checker_full(&CK, NULL) == 0)
		return;
	os->wrong++;
	note(os->first_wrong, "round %u: checker: %s", round, CK.msg);
}

/* Rounds between two full checks of the table. */
static unsigned check_every = 512;

static void run_op(const struct op *op, unsigned rounds, struct op_stats *os)
{
	struct timing tm = { .op_ns = 1000, .lag_ns = 100 };
	memset(os, 0, sizeof(*os));
	unsigned i;
	for (i = 0; os->overlapping < rounds && i < 2 * rounds; i++) {
		one_round(op, ++hw_rounds_started, i, &tm, os);
		if (i % check_every == check_every - 1)
			check_table(i, os);
	}
	check_table(i, os);
}

static void print_stats(const struct op *op, const struct op_stats *os)
{
	printf("  %-17s %7" PRIu64 " %7" PRIu64 " %9" PRIu64 " %8" PRIu64
	       " %11" PRIu64 " %10" PRIu64 " %6" PRIu64 "\n", op->name,
	       os->rounds, os->overlapping, os->writes,
	       os->reads, os->lost_dirty, os->lost_young, os->wrong);
}

/* Every selected operation on @c; returns the number of problems. */
static uint64_t run_config(const struct hw_config *c, const char *op_name,
			   unsigned rounds)
{
	static struct op_stats st[NR_OPS];
	cur = c;
	keeps_dirty = check_format_for(c->cfg.format)->wrprotect_keeps_dirty;
	st_table_init_cfg(&S, &c->cfg, 16 * MIB, false);
	slat_hosted_set_observer(&S.h, hw_observer, NULL);
	ST_CHECK(checker_init(&CK, &S.t, &S.h) == 0, "checker: %s", CK.msg);
	ST_CHECK(slat_hosted_cache_init(&cache, 16) == SLAT_OK, "cache");

	st_pin_to_cpu(0);
	pthread_t hw;
	ST_CHECK(pthread_create(&hw, NULL, hw_main, NULL) == 0, "pthread_create");
	printf("%s (4K, %u-bit, hardware dirty state): %u rounds per operation "
	       "where the threads met\n"
	       "  %-17s %7s %7s %9s %8s %11s %10s %6s\n", c->name,
	       c->cfg.ia_bits, rounds, "operation", "rounds", "met", "hw writes",
	       "hw reads", "lost writes", "lost young", "wrong");
	uint64_t bad = 0;
	for (unsigned i = 0; i < NR_OPS; i++) {
		if (strcmp(op_name, "all") && strcmp(op_name, ops[i].name))
			continue;
		run_op(&ops[i], rounds, &st[i]);
		print_stats(&ops[i], &st[i]);
		bad += st[i].lost_dirty + st[i].lost_young + st[i].wrong;
	}
	for (unsigned i = 0; i < NR_OPS; i++) {
		if (st[i].first_lost[0])
			printf("  %s %s, first loss: %s\n", c->name, ops[i].name,
			       st[i].first_lost);
		if (st[i].first_wrong[0])
			printf("  %s %s, first wrong result: %s\n", c->name,
			       ops[i].name, st[i].first_wrong);
	}
	memset(st, 0, sizeof(st));

	__atomic_store_n(&quit, true, __ATOMIC_RELEASE);
	__atomic_store_n(&go, hw_rounds_started + 1, __ATOMIC_RELEASE);
	pthread_join(hw, NULL);
	quit = false;
	go = ack = op_done = hw_done = 0;
	hw_rounds_started = 0;

	topup(8);
	ST_CHECK(slat_unmap(&S.t, slat_ipa(PAGES_AT), REGION_END - PAGES_AT,
			    SLAT_OP(.flush = SLAT_FLUSH_VMID,
				    .cache = &cache)) == SLAT_OK,
		 "unmap");
	slat_hosted_cache_fini(&cache);
	checker_fini(&CK);
	st_table_fini(&S);
	return bad;
}

#define USAGE "usage: test_hw_races [--config NAME|all] [--op NAME|all] " \
	      "[--rounds N] [--check-every N] [--seed N] [--list] [--help]"

static void usage(void)
{
	st_fail(USAGE);
}

static void list(void)
{
	printf("configurations:");
	for (unsigned i = 0; i < NR_CONFIGS; i++)
		printf(" %s", configs[i].name);
	printf("\noperations:");
	for (unsigned i = 0; i < NR_OPS; i++)
		printf(" %s", ops[i].name);
	printf("\n");
	exit(0);
}

int main(int argc, char **argv)
{
	const char *config = "all", *op = "all";
	uint64_t rounds = 3000, seed = 0x5eed;
	bool rounds_given = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			config = argv[++i];
		else if (!strcmp(argv[i], "--op") && i + 1 < argc)
			op = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = strtoull(argv[++i], NULL, 0), rounds_given = true;
		else if (!strcmp(argv[i], "--check-every") && i + 1 < argc)
			check_every = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--list"))
			list();
		else if (!strcmp(argv[i], "--help"))
			printf("%s\n", USAGE), exit(0);
		else
			usage();
	}
	bool known = !strcmp(op, "all");
	for (unsigned i = 0; i < NR_OPS; i++)
		known |= !strcmp(op, ops[i].name);
	if (!known)
		usage();
	if (!rounds_given)
		rounds = st_env_count("SLAT_HW_ROUNDS", rounds);
	ST_CHECK(rounds >= 1 && rounds <= 100000000 && seed && check_every >= 1,
		 "bad arguments");
	rng = seed;

	uint64_t bad = 0;
	bool any = false;
	for (unsigned i = 0; i < NR_CONFIGS; i++) {
		if (strcmp(config, "all") && strcmp(config, configs[i].name))
			continue;
		any = true;
		bad += run_config(&configs[i], op, (unsigned)rounds);
	}
	if (!any)
		usage();
	if (bad)
		st_fail("hw_races: %" PRIu64 " hardware updates lost or operations "
			"undone (table above)", bad);
	printf("hw_races: ok\n");
	return 0;
}
