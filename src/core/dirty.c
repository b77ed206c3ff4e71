/* SPDX-License-Identifier: MIT */
/*
 * Hardware dirty state (Arm DBM, EPT D bits) and the CPU's own walk: what
 * the hardware does to the table when it translates an access.
 */
#include "internal.h"

struct dirty_data {
	struct core_op op;
	uint64_t *bitmap;       /* bit 0: op.ipa */
	bool clear;
	uint64_t dirty_pages;
};

/* Bits [first, first + n) of @bitmap set, a word (or part of one) at a
 * time. */
static void set_bits(uint64_t *bitmap, uint64_t first, uint64_t n)
{
	while (n) {
		unsigned off = (unsigned)(first & 63);
		uint64_t k = 64 - off < n ? 64 - off : n;
		uint64_t ones = k == 64 ? ~0ull : (1ull << k) - 1;
		bitmap[first / 64] |= ones << off;
		first += k;
		n -= k;
	}
}

/* The @n leaves from @addr at ctx's level are dirty: their pages inside
 * the range are reported. */
static void report_dirty(const struct slat_walk_ctx *ctx, struct dirty_data *d,
			 uint64_t addr, uint32_t n)
{
	uint64_t lo = addr > ctx->start ? addr : ctx->start;
	uint64_t hi = addr + n * level_size(ctx->t, ctx->level);
	if (hi > ctx->end)
		hi = ctx->end;
	unsigned g = ctx->t->geo.granule_shift;
	set_bits(d->bitmap, (lo - d->op.ipa) >> g, (hi - lo) >> g);
	d->dirty_pages += (hi - lo) >> g;
}

/* Cleaning is the opposite of the CPU's dirty update. */
static void clean_change(const struct slat_table *t, slat_pte_t *clear,
			 slat_pte_t *set)
{
	*clear = t->fmt->dirty_bit_clear ? 0 : t->fmt->dirty_bit;
	*set = t->fmt->dirty_bit_clear ? t->fmt->dirty_bit : 0;
}

/* Report a dirty leaf, and clean it, retrying against concurrent faults. */
static int dirty_step(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
		      slat_pte_t pte, uint64_t addr, void *arg)
{
	struct dirty_data *d = arg;
	struct slat_table *t = ctx->t;
	slat_pte_t clear, set, was;

	if (!pte_valid(t, pte) || !leaf_dirty(t, pte))
		return 0;
	report_dirty(ctx, d, addr, 1);
	if (!d->clear)
		return 0;
	clean_change(t, &clear, &set);
	while (!pte_try_update(t, walk_writers(ctx), ptep, pte, clear, set,
				 &was)) {
		ctx->stats->retries++;
		pte = pte_read(ptep);
		if (!pte_leaf(t, pte, ctx->level) || !leaf_dirty(t, pte))
			return 0;
	}
	if (d->op.policy == SLAT_FLUSH_ENTRY)
		core_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,
			      ctx->stats);
	return 1;
}

/* The AND and OR of the line at @p, read in pairs of entries when @pairs
 * (a constant at each call: p is then 16-byte aligned). */
static SLAT_ALWAYS_INLINE void line_and_or(const slat_pte_t *p, bool pairs,
					   slat_pte_t *all, slat_pte_t *any)
{
	slat_pte_t a = ~0ull, o = 0;
#ifdef SLAT_PTE_PAIRS
	if (pairs) {
		pte_pair v[LEAF_GROUP / 2];
		line_peek_pairs(p, v);
		*all = line_and(v);
		*any = line_or(v);
		return;
	}
#endif
	(void)pairs;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++) {
		slat_pte_t v = pte_peek(&p[j]);
		a &= v;
		o |= v;
	}
	*all = a;
	*any = o;
}

/* Clean a line of leaves nobody else changes meanwhile (in pairs when
 * @pairs); inlined, so that a constant @set folds. */
static SLAT_ALWAYS_INLINE void clean_line_alone(const struct slat_table *t,
					       slat_pte_t *p, slat_pte_t clear,
					       slat_pte_t set, bool pairs)
{
	slat_pte_t was;
#ifdef SLAT_PTE_PAIRS
	if (pairs) {
		const pte_pair keep = { ~clear, ~clear }, add = { set, set };
		pte_pair v[LEAF_GROUP / 2];
		line_peek_pairs(p, v);
		line_store_pairs(p, v, keep, add);
		return;
	}
#endif
	(void)pairs;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++)
		pte_try_update(t, PTE_ALONE, &p[j], pte_peek(&p[j]), clear, set,
			       &was);
}

/* The dirty leaves [run, end) of c's run, when @run is not NULL, are
 * reported; returns how many. */
static SLAT_ALWAYS_INLINE uint32_t dirty_run_end(const struct slat_walk_ctx *c,
						 struct dirty_data *d,
						 const slat_pte_t *run,
						 const slat_pte_t *end)
{
	if (!run)
		return 0;
	report_dirty(c, d, c->addr + ((uint64_t)(run - c->ptep) <<
				      c->t->geo.granule_shift),
		     (uint32_t)(end - run));
	return (uint32_t)(end - run);
}

/* What dirty_groups() does with a group of dirty leaves: report them;
 * report and clean them (exclusive), with a constant 0 to set (Arm stage 2,
 * EPT) or not; or leave each to the step (a shared walker may lose any). */
enum dirty_mode { DIRTY_REPORT, DIRTY_CLEAN, DIRTY_CLEAN_SET, DIRTY_STEP };

/*
 * dirty_groups() for one @mode, a constant: the loop then tests nothing
 * per group that is the same for every group. None dirty: a bit
 * leaf_dirty() wants that no entry has, or one it must not have that every
 * entry has. All dirty: every entry valid, with every wanted bit and no
 * refused one (a present bit all share: valid).
 */
static SLAT_ALWAYS_INLINE uint32_t
dirty_groups_as(const struct slat_walk_ctx *c, uint32_t max,
		struct dirty_data *d, uint32_t *changed, const enum dirty_mode mode,
		const bool pairs)
{
	const struct slat_table *t = c->t;
	const slat_pte_t present = t->fmt->present_mask;
	const slat_pte_t want = t->fmt->dirty_match;
	const slat_pte_t refuse = t->fmt->dirty_mask & ~want;
	const slat_pte_t young = t->fmt->young_bit;
	const enum pte_writers who = walk_writers(c);
	slat_pte_t clear, set, was;
	slat_pte_t *run = NULL; /* the first of the dirty groups in a row */
	uint32_t dirty = 0; /* leaves in the runs reported */
	size_t n; /* pointer-sized: no widening per group */

	clean_change(t, &clear, &set);
	for (n = 0; n + LEAF_GROUP <= max; n += LEAF_GROUP) {
		slat_pte_t *p = &c->ptep[n], all, any;
		line_and_or(p, pairs, &all, &any);
		if ((((all & want) ^ want) | (any & refuse)) || !(all & present)) {
			if (!((~any & want) | (all & refuse)))
				break; /* some dirty: the step's */
			dirty += dirty_run_end(c, d, run, p);
			run = NULL;
			continue;
		}
		if (mode == DIRTY_STEP)
			break;
		if (!run)
			run = p;
		if (mode == DIRTY_REPORT)
			continue;
		/* Young and dirty, they are entries the CPU is done with
		 * (cpu_done_with()): nothing changes them under a store. */
		if (all & young) {
			clean_line_alone(t, p, clear,
					 mode == DIRTY_CLEAN_SET ? set : 0, pairs);
		} else {
			for (int j = 0; j < LEAF_GROUP; j++)
				pte_try_update(t, who, &p[j], pte_peek(&p[j]), clear,
					       set, &was);
		}
	}
	dirty += dirty_run_end(c, d, run, &c->ptep[n]);
	/* Every group of a run was cleaned, when cleaning. */
	if (mode == DIRTY_CLEAN || mode == DIRTY_CLEAN_SET)
		*changed += dirty;
	return (uint32_t)n;
}

/*
 * Whole groups for dirty_read: none dirty, skipped; or every one valid and
 * dirty: its pages reported at once, and cleaned when asked. Stops at the
 * first group that is neither, as walk_leaf_groups() wants.
 */
static SLAT_ALWAYS_INLINE uint32_t
dirty_groups_read(const struct slat_walk_ctx *c, uint32_t max,
		  struct dirty_data *d, uint32_t *changed, const bool pairs)
{
	if (!d->clear)
		return dirty_groups_as(c, max, d, changed, DIRTY_REPORT, pairs);
	if (walk_writers(c) == PTE_SHARED)
		return dirty_groups_as(c, max, d, changed, DIRTY_STEP, pairs);
	if (c->t->fmt->dirty_bit_clear)
		return dirty_groups_as(c, max, d, changed, DIRTY_CLEAN_SET,
				       pairs);
	return dirty_groups_as(c, max, d, changed, DIRTY_CLEAN, pairs);
}

/* dirty_groups_read() in pairs of entries where the core may and the run
 * starts 16-byte aligned. */
static SLAT_ALWAYS_INLINE uint32_t
dirty_groups(const struct slat_walk_ctx *c, uint32_t max, void *arg,
	     uint32_t *changed)
{
#ifdef SLAT_PTE_PAIRS
	if (pte_pair_aligned(c->ptep))
		return dirty_groups_read(c, max, arg, changed, true);
#endif
	return dirty_groups_read(c, max, arg, changed, false);
}

static int dirty_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct dirty_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	uint32_t changed;

	/* Cleaning a whole block would lose the state of pages outside. */
	if (d->clear && pte_valid(t, ctx->old) && !walk_entry_covered(ctx) &&
	    leaf_dirty(t, ctx->old)) {
		int ret = core_split_block(ctx, d->op.cache);
		return ret ? op_fail(&d->op, ctx->addr, ret) : 0;
	}
	/* A per-entry invalidation needs the step at every leaf. */
	int n = d->op.policy == SLAT_FLUSH_ENTRY
		? walk_leaf_run(ctx, dirty_step, d, &changed)
		: walk_leaf_groups(ctx, dirty_groups, d, dirty_step, d, &changed);
	ctx->stats->written[SLAT_WRITE_ATTR] += changed;
	d->op.changed |= changed != 0;
	return n;
}

int64_t slat_dirty_read(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			uint64_t *bitmap, size_t words, bool clear,
			struct slat_op *args)
{
	/* Set field by field: an initializer would zero the op's counters
	 * with a memset, which the freestanding core does not have. */
	struct dirty_data d;
	d.bitmap = bitmap;
	d.clear = clear;
	d.dirty_pages = 0;
	int ret = core_op_begin(&d.op, t, ipa, size, args, SLAT_SHARED);
	if (ret)
		return ret;
	uint64_t pages = size >> t->geo.granule_shift;
	if (!bitmap || words < (pages + 63) / 64)
		return core_op_refuse(&d.op, SLAT_E_INVAL);
	if (!(t->cfg.features & SLAT_FEAT_HWDIRTY))
		return core_op_refuse(&d.op, SLAT_E_CONFIG);

	for (uint64_t i = 0; i < (pages + 63) / 64; i++)
		bitmap[i] = 0;
	ret = core_op_walk(&d.op, dirty_visitor, &d, SLAT_VISIT_LEAF,
			   SLAT_LAST_LEVEL);
	ret = core_op_end(&d.op, ret);
	return ret ? ret : (int64_t)d.dirty_pages;
}

int slat_hw_access(struct slat_table *t, slat_ipa_t ipa, unsigned access,
		   struct slat_hw_result *res)
{
	unsigned kind = access & ~SLAT_ACCESS_USER;
	if (!table_live(t) || !res || kind > SLAT_ACCESS_EXEC_EL0 ||
	    ((access & SLAT_ACCESS_USER) && kind > SLAT_ACCESS_WRITE))
		return SLAT_E_INVAL;
	if (ipa.ipa >> t->geo.ia_bits)
		return SLAT_E_RANGE;

	for (;;) {
		slat_pte_t new;
		struct descent d = core_descend(t, descend_root(t), ipa.ipa,
						SLAT_LAST_LEVEL, DESCEND_CPU,
						NULL);
		slat_pte_t pte = d.pte, *ptep = d.ptep;
		int level = d.level;
		res->level = level;
		/* A locked entry is invalid to the hardware. */
		if (!pte_valid(t, pte)) {
			res->fault = SLAT_FAULT_TRANSLATION;
			return SLAT_OK;
		}
		res->fault = t->fmt->hw_update(t, pte, access, &new);
		/* The CPU's own atomic update; changed under it: walk again. */
		if (res->fault == SLAT_FAULT_NONE && new != pte &&
		    !pte_cpu_update(t, ptep, pte, new))
			continue;
		uint64_t base = ipa.ipa & ~(level_size(t, level) - 1);
		res->pa = slat_pa(t->fmt->pte_pa(t, pte).pa + (ipa.ipa - base));
		res->attrs = t->fmt->leaf_attrs(t, new);
		return SLAT_OK;
	}
}
