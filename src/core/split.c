/* SPDX-License-Identifier: MIT */
/*
 * Eager page splitting (seed 002) and huge-page recovery (seed 001).
 */
#include "internal.h"

/* ---- split ---- */

struct split_data {
	struct core_op op;
	int target;              /* level of the leaves wanted */
	bool skip;               /* never walk a subtree just built */
};

/* Building the subtree that translates like a block, before it is
 * published: the pages come from the cache, pre-order. */
struct build_walk {
	struct slat_table *t;
	struct slat_page_cache *cache;
	struct slat_stats *st;
	slat_pte_t block;        /* the block, as taken out */
	slat_pte_t as_level[SLAT_LAST_LEVEL + 1]; /* ...encoded for each level */
	uint64_t base;           /* the first IPA it maps */
	uint64_t pa;             /* ...and its output address */
	int target;              /* the level of the leaves */
};

/* A page popped for the subtree, linked from @ptep, the entry of @level
 * that translates like the block @part: filled with the target's leaves
 * when it holds them (true), else left to be built. */
static SLAT_ALWAYS_INLINE bool build_page(struct build_walk *w, slat_pte_t *ptep,
					  int level, slat_pte_t part)
{
	struct slat_table *t = w->t;
	slat_pte_t *page = core_cache_pop(t, w->cache, w->st);

	pte_init(ptep, t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx,
								 page)));
	if (level + 1 == w->target) {
		core_fill_split(t, page, part, level, w->cache, w->st);
		return true;
	}
	*table_refcount(t, page) = t->geo.entries;
	return false;
}

/* Each entry of a page being built gets its page; the walk goes on into
 * those that are not full yet. */
static SLAT_ALWAYS_INLINE int build_pre(void *arg, slat_pte_t *ptep,
					uint32_t nr_left, int level,
					uint64_t addr)
{
	(void)nr_left;
	struct build_walk *w = arg;
	const struct slat_table *t = w->t;
	/* The part of the block the entry maps, as a block of its level. */
	slat_pte_t part = t->fmt->pte_with_pa(t, w->as_level[level],
					      slat_pa(w->pa + (addr - w->base)));
	w->st->written[SLAT_WRITE_TABLE]++;
	return build_page(w, ptep, level, part) ? 1 : 0;
}

/* Build, off-line, the subtree that translates like @block at ctx's entry,
 * its table descriptor into @link (a local: core_make() publishes it). */
static void build_subtree(const struct slat_walk_ctx *ctx, slat_pte_t block,
			  int target, struct slat_page_cache *cache,
			  slat_pte_t *link)
{
	struct slat_table *t = ctx->t;
	/* Field by field: an initializer would zero the rest with a memset,
	 * which the freestanding core does not have. */
	struct build_walk w;
	w.t = t;
	w.cache = cache;
	w.st = ctx->stats;
	w.block = block;
	w.base = ctx->addr;
	w.target = target;
	if (build_page(&w, link, ctx->level, block))
		return;
	w.pa = t->fmt->pte_pa(t, block).pa;
	for (int l = ctx->level + 1; l < target; l++)
		w.as_level[l] = t->fmt->leaf_for_level(t, block, l);
	core_subtree_walk(ctx->t, table_va(ctx->t, *link), ctx->level + 1,
			  ctx->addr, build_pre, NULL, &w);
}

/*
 * Level skipping, one level further: a table whose entries the walk reads
 * last (its children cannot hold blocks to split) and whose word says it
 * holds no block has nothing to split, so it is not read at all.
 */
static int split_table_pre(const struct slat_walk_ctx *ctx,
			   const struct split_data *d)
{
	struct slat_table *t = ctx->t;
	bool last_read = ctx->level + 1 == d->target - 1;
	return last_read && !core_table_may_hold_blocks(t, table_va(t, ctx->old));
}

/* The walk split every block of the table below, if it covered it all. */
static void split_table_post(const struct slat_walk_ctx *ctx)
{
	if (walk_entry_covered(ctx) && pte_table(ctx->t, ctx->old, ctx->level))
		core_table_blocks_gone(ctx->t, table_va(ctx->t, ctx->old));
}

/* Entries at or below the target level are no blocks to split: a run of
 * them is read through to the next table. */
static SLAT_ALWAYS_INLINE int split_pass_step(const struct slat_walk_ctx *ctx,
					     slat_pte_t *ptep, slat_pte_t pte,
					     uint64_t addr, void *arg)
{
	(void)ctx, (void)ptep, (void)pte, (void)addr, (void)arg;
	return 0;
}

static int split_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct split_data *d = ctx->arg;
	struct slat_table *t = ctx->t;

	if (visit != SLAT_VISIT_LEAF) {
		if (visit == SLAT_VISIT_TABLE_PRE)
			return split_table_pre(ctx, d);
		split_table_post(ctx);
		return 0;
	}
	if (ctx->level >= d->target) {
		uint32_t none;
		if (ctx->level == SLAT_LAST_LEVEL)
			return (int)lines_read(ctx->ptep, walk_run(ctx));
		return walk_leaf_run(ctx, split_pass_step, NULL, &none);
	}
	if (!pte_valid(t, ctx->old))
		return 1;
	uint64_t need = split_pages(t, ctx->level, d->target);
	struct slat_page_cache *cache = d->op.cache;
	int ret = core_cache_check(t, cache, need);
	if (ret)
		return op_fail(&d->op, ctx->addr, ret);
	/* Built from the value taken out: the CPU may have updated it. */
	slat_pte_t block, link;
	core_take_block(ctx, &block);
	build_subtree(ctx, block, d->target, cache, &link);
	core_make(ctx, link);
	return d->skip ? 1 : 0;
}

int slat_split(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	       uint64_t leaf_size, struct slat_op *args)
{
	struct split_data d;
	int ret = core_op_begin(&d.op, t, ipa, size, args, SLAT_SPLIT_NO_SKIP);
	if (ret)
		return ret;
	/* Break-before-make invalidates each block before its table is
	 * installed: nothing is left for a policy to do. */
	d.op.policy = SLAT_FLUSH_NONE;
	d.target = leaf_level_of_size(t, leaf_size);
	if (d.target < 0)
		return core_op_refuse(&d.op, SLAT_E_INVAL);
	d.skip = !(d.op.flags & SLAT_SPLIT_NO_SKIP);
	ret = core_op_walk(&d.op, split_visitor, &d,
			   SLAT_VISIT_LEAF | (d.skip ? SLAT_VISIT_TABLE_PRE |
					      SLAT_VISIT_TABLE_POST : 0),
			   /* Entries at the target level cannot be blocks. */
			   d.skip ? d.target - 1 : SLAT_LAST_LEVEL);
	return core_op_end(&d.op, ret);
}

/* ---- recover ---- */

struct recover_data {
	struct core_op op;
	enum slat_recover_strategy strategy;
	slat_max_level_fn max_level;
	void *arg;
	uint64_t zap_end;        /* zap-leaf: clearing leaves below this IPA */
	struct core_batch batch;
};

/*
 * What a uniform subtree adds up to. Leaves are compared as descriptors:
 * each must equal the first one with its output address advanced, except
 * for the access flag and the dirty state, which are merged.
 */
struct promote_scan {
	const struct slat_table *t;
	slat_pte_t expect;       /* the next leaf, as it must be (at any level) */
	slat_pte_t ignore;       /* bits that may differ: AF, dirty */
	slat_pte_t any, all;     /* OR and AND of the leaves: merged bits */
	bool linear;             /* OA field linear over the block */
	uint64_t pa;             /* PA of the next leaf when not linear */
	const slat_pte_t *ahead; /* the table promotion scans next, or NULL */
	/* A leaf's type bits per level: leaf_for_level only sets or clears
	 * them, whatever the output address. */
	slat_pte_t type_set[SLAT_LAST_LEVEL + 1], type_keep[SLAT_LAST_LEVEL + 1];
	struct slat_stats *st;
};

/*
 * A last-level table's leading lines of leaves that continue the run
 * (leaf_lines_continue()). Returns the entries they hold; promote_pre()
 * goes on from there one by one, to find where the run stops.
 */
static uint32_t promote_scan_lines(const struct slat_table *t,
				   const slat_pte_t *table, slat_pte_t expect,
				   struct promote_scan *s)
{
	const uint32_t lines = t->geo.entries & ~(LEAF_GROUP - 1u);
	/* In locals, which the entries' loads cannot alias. */
	slat_pte_t any = s->any, all = s->all;
	const slat_pte_t *stop = leaf_lines_continue(
		table, table + lines, s->ahead ? s->ahead : table, expect,
		level_size(t, SLAT_LAST_LEVEL),
		~s->ignore, &any, &all);
	s->any = any;
	s->all = all;
	return (uint32_t)(stop - table);
}

/* The next entry, or the leading lines of a last-level table, continue
 * the run; a leaf that does not ends the walk. */
static SLAT_ALWAYS_INLINE int promote_pre(void *arg, slat_pte_t *ptep,
					  uint32_t nr_left, int level,
					  uint64_t addr)
{
	(void)addr;
	struct promote_scan *s = arg;
	const struct slat_table *t = s->t;
	uint64_t size = level_size(t, level);

	if (level == SLAT_LAST_LEVEL && s->linear && nr_left == t->geo.entries) {
		uint32_t k = promote_scan_lines(
			t, ptep, (s->expect & s->type_keep[level]) |
				 s->type_set[level], s);
		s->expect += k * size;
		s->pa += k * size;
		s->st->visited += k;
		if (k)
			return (int)k;
	}
	slat_pte_t pte = pte_read(ptep);
	s->st->visited++;
	if (pte_table(t, pte, level))
		return 0;
	slat_pte_t expect = s->linear ? s->expect
		: t->fmt->pte_with_pa(t, s->expect, slat_pa(s->pa));
	expect = (expect & s->type_keep[level]) | s->type_set[level];
	if (!pte_valid(t, pte) || ((pte ^ expect) & ~s->ignore))
		return SLAT_E_EXISTS;
	s->any |= pte;
	s->all &= pte;
	s->expect += size;
	s->pa += size;
	return 1;
}

/* The block the table at ctx's entry can become, or 0. */
static slat_pte_t promoted_block(const struct slat_walk_ctx *ctx)
{
	struct slat_table *t = ctx->t;
	slat_pte_t *table = table_va(t, ctx->old);
	/* Its first leaf: the descent from the table, down its first
	 * entries. */
	slat_pte_t first = core_descend(t, descend_below(t, ctx->old,
							 ctx->level),
					ctx->addr, SLAT_LAST_LEVEL, 0, NULL).pte;
	if (!pte_valid(t, first))
		return 0;
	uint64_t base = t->fmt->pte_pa(t, first).pa;
	uint64_t block_size = level_size(t, ctx->level);
	if (base & (block_size - 1))
		return 0;

	slat_pte_t ignore = hw_state_bits(t);
	/* Field by field: an initializer would zero the type arrays with a
	 * memset, which the freestanding core does not have. */
	struct promote_scan s;
	s.t = t;
	s.expect = first & ~ignore;
	s.ignore = ignore;
	s.any = 0;
	s.all = ~0ull;
	s.linear = pa_run_linear(slat_pa(base), block_size);
	s.pa = base;
	/* Its lines are the next last-level table's only when this one holds
	 * leaves. */
	s.ahead = ctx->level + 1 == SLAT_LAST_LEVEL ? walk_next_table(ctx) : NULL;
	s.st = ctx->stats;

	for (int l = ctx->level + 1; l <= SLAT_LAST_LEVEL; l++) {
		s.type_set[l] = t->fmt->leaf_for_level(t, 0, l);
		s.type_keep[l] = t->fmt->leaf_for_level(t, ~0ull, l);
	}
	if (core_subtree_walk(t, table, ctx->level + 1, ctx->addr, promote_pre,
			      NULL, &s))
		return 0;
	return hw_state_apply(t, t->fmt->leaf_for_level(t, first, ctx->level),
			      s.any, s.all);
}

/*
 * Replace the uniform table at ctx's entry by @block. The CPU may update
 * the old leaves until an invalidation covers them: their AF and dirty
 * state are merged into the block after it (core_merge_hw_state()), before
 * the block is published where break-before-make holds it back, into the
 * block in place where the format swaps without it.
 */
static void promote(const struct slat_walk_ctx *ctx, struct recover_data *d,
		    slat_pte_t block)
{
	struct slat_table *t = ctx->t;
	void *table = table_va(t, ctx->old);
	bool in_place = !t->fmt->split_needs_bbm;
	bool now = d->batch.policy == SLAT_FLUSH_ENTRY;

	if (in_place)
		core_swap(ctx, block);
	else
		core_break(ctx, NULL, now ? NULL : &d->batch);
	if (!now) {
		core_batch_add(t, &d->batch, ctx->addr, table, ctx->level + 1,
			       ctx->ptep, in_place ? 0 : block, ctx->stats);
		return;
	}
	if (in_place)
		core_tlbi_range(t, ctx->addr, level_size(t, ctx->level), ctx->stats);
	core_promote_publish(t, ctx->ptep, table, ctx->level + 1,
			     in_place ? 0 : block, ctx->stats);
	core_release_unlinked(t, table, ctx->level + 1, NULL, ctx->stats);
}

static int recover_table(const struct slat_walk_ctx *ctx, struct recover_data *d)
{
	slat_pte_t block;

	switch (d->strategy) {
	case SLAT_RECOVER_ZAP_LEAF:
		d->zap_end = ctx->addr + level_size(ctx->t, ctx->level);
		return 0;
	case SLAT_RECOVER_ZAP_TABLE:
		core_unlink_table(ctx, &d->batch);
		return 1;
	default:
		block = promoted_block(ctx);
		if (!block)
			return 0; /* a lower level may still promote */
		promote(ctx, d, block);
		return 1;
	}
}

static bool may_be_block(const struct slat_walk_ctx *ctx,
			 const struct recover_data *d)
{
	struct slat_table *t = ctx->t;
	return leaf_allowed(t, ctx->level) && walk_entry_covered(ctx) &&
	       (!d->max_level || d->max_level(d->arg, slat_ipa(ctx->addr)) <= ctx->level);
}

static int recover_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct recover_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	bool zapping = ctx->addr < d->zap_end;

	switch (visit) {
	case SLAT_VISIT_TABLE_PRE:
		return !zapping && may_be_block(ctx, d) ? recover_table(ctx, d) : 0;
	case SLAT_VISIT_TABLE_POST:
		/* A table whose last entry a zap removed goes too. */
		if ((zapping || d->strategy == SLAT_RECOVER_ZAP_TABLE) &&
		    core_refcount_get(t, table_va(t, ctx->old)) == 0)
			core_unlink_table(ctx, &d->batch);
		return 0;
	default:
		/* The refault maps the memory again and cleans it then: a zap
		 * does no cache maintenance. */
		return zapping ? core_clear_leaves(ctx, &d->batch, d->zap_end, false)
			       : 1;
	}
}

int slat_recover(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		 const struct slat_recovery *how, struct slat_op *args)
{
	/* Field by field: the batch's arrays need no zeroing. */
	struct recover_data d;
	int ret = core_op_begin(&d.op, t, ipa, size, args, 0);
	if (ret)
		return ret;
	if (!how || (unsigned)how->strategy > SLAT_RECOVER_PROMOTE)
		return core_op_refuse(&d.op, SLAT_E_INVAL);
	enum slat_recover_strategy strategy = how->strategy;
	d.strategy = strategy;
	d.max_level = how->max_level;
	d.arg = how->arg;
	d.zap_end = 0;
	core_batch_init(&d.batch, d.op.policy, d.op.ipa, d.op.end, false);
	uint32_t visits = SLAT_VISIT_TABLE_PRE |
			  (strategy == SLAT_RECOVER_ZAP_TABLE ? SLAT_VISIT_TABLE_POST : 0);
	int stop = SLAT_LAST_LEVEL - 1;
	/* Tables below the deepest block level cannot become blocks. */
	while (stop > t->geo.start_level && !leaf_allowed(t, stop))
		stop--;
	if (strategy == SLAT_RECOVER_ZAP_LEAF) {
		visits |= SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_POST;
		stop = SLAT_LAST_LEVEL;
	}
	ret = core_op_walk(&d.op, recover_visitor, &d, visits, stop);
	core_batch_flush(t, &d.batch, d.op.st);
	return core_op_end(&d.op, ret);
}
