/* SPDX-License-Identifier: MIT */
/*
 * Eager page splitting (seed 002) and huge-page recovery (seed 001).
 */
#include "internal.h"

/* ---- split ---- */

struct split_data {
	int target;              /* level of the leaves wanted */
	bool skip;               /* never walk a subtree just built */
	struct slat_page_cache *cache;
	uint64_t fail_addr;
};

/* Table pages to split one block at @level down to @target. */
static uint64_t pages_for_block(const struct slat_table *t, int level, int target)
{
	uint64_t n = 0, per_level = 1;
	for (int l = level + 1; l <= target; l++) {
		n += per_level;
		per_level *= t->geo.entries;
	}
	return n;
}

/* Build, off-line, the subtree that translates like @leaf (at @level). */
static slat_pte_t *build_subtree(struct slat_table *t, slat_pte_t leaf,
				 int level, int target,
				 struct slat_page_cache *cache,
				 struct slat_stats *st)
{
	slat_pte_t *page = slat_cache_pop(t, cache, st);
	if (level + 1 == target) {
		slat_fill_split(t, page, leaf, level, st);
		return page;
	}
	uint64_t step = level_size(t, level + 1);
	slat_pte_t child = t->fmt->leaf_for_level(t, leaf, level + 1);
	uint64_t pa = t->fmt->pte_pa(t, leaf).pa;
	for (uint32_t i = 0; i < t->geo.entries; i++) {
		slat_pte_t c = t->fmt->pte_with_pa(t, child, slat_pa(pa + i * step));
		slat_pte_t *sub = build_subtree(t, c, level + 1, target, cache, st);
		slat_pa_t sub_pa = t->mm->virt_to_phys(t->mm_ctx, sub);
		__atomic_store_n(&page[i], t->fmt->make_table(t, sub_pa),
				 __ATOMIC_RELAXED);
	}
	*table_refcount(t, page) = t->geo.entries;
	st->written[SLAT_WRITE_TABLE] += t->geo.entries;
	return page;
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
	return last_read && !slat_table_may_hold_blocks(t, table_va(t, ctx->old));
}

/* The walk split every block of the table below, if it covered it all. */
static void split_table_post(const struct slat_walk_ctx *ctx)
{
	if (walk_entry_covered(ctx) && pte_table(ctx->t, ctx->old, ctx->level))
		slat_table_blocks_gone(ctx->t, table_va(ctx->t, ctx->old));
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
	if (!pte_valid(t, ctx->old) || ctx->level >= d->target)
		return 1;
	uint64_t need = pages_for_block(t, ctx->level, d->target);
	if (!d->cache || d->cache->nr < need) {
		d->fail_addr = walk_first_addr(ctx);
		return SLAT_E_NOMEM;
	}
	/* Same translation, so x86 needs no flush; Arm needs the invalid step.
	 * Built from the value taken out: the hardware may have updated it. */
	slat_pte_t block = ctx->old;
	if (t->fmt->split_needs_bbm)
		slat_break_entry(ctx, false, &block);
	else if (hw_updates_ptes(t))
		block = slat_lock_entry(ctx);
	slat_pte_t *sub = build_subtree(t, block, ctx->level, d->target,
					d->cache, ctx->stats);
	slat_pte_t table = t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx, sub));
	slat_make_entry(ctx, table);
	return d->skip ? 1 : 0;
}

/* The level whose leaves are @leaf_size bytes (0: the last level). */
static int leaf_level_of(const struct slat_table *t, uint64_t leaf_size)
{
	if (leaf_size == 0)
		return SLAT_LAST_LEVEL;
	if (leaf_size & (leaf_size - 1))
		return SLAT_E_INVAL;
	int level = t->leaf_level[__builtin_ctzll(leaf_size)];
	return level < 0 ? SLAT_E_INVAL : level;
}

int slat_split(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	       uint64_t leaf_size, uint32_t flags,
	       struct slat_page_cache *cache, uint64_t *done)
{
	if (done)
		*done = 0;
	if (!t || (flags & ~SLAT_SPLIT_NO_SKIP))
		return SLAT_E_INVAL;
	int ret = slat_check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;
	int target = leaf_level_of(t, leaf_size);
	if (target < 0)
		return SLAT_E_INVAL;

	bool skip = !(flags & SLAT_SPLIT_NO_SKIP);
	struct split_data d = {
		.target = target, .skip = skip, .cache = cache,
		.fail_addr = ipa.ipa + size,
	};
	struct slat_walker w = {
		.cb = split_visitor, .arg = &d,
		.flags = SLAT_VISIT_LEAF |
			 (skip ? SLAT_VISIT_TABLE_PRE | SLAT_VISIT_TABLE_POST : 0),
		/* Entries at the target level cannot be blocks to split. */
		.stop_level = skip ? target - 1 : SLAT_LAST_LEVEL,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, false, NULL);
	ret = slat_walk(t, ipa.ipa, size, &w, st);
	if (done)
		*done = d.fail_addr - ipa.ipa;
	slat_stats_end(t, st, &local);
	return ret;
}

/* ---- recover ---- */

struct recover_data {
	enum slat_recover_strategy strategy;
	slat_max_level_fn max_level;
	void *arg;
	uint64_t zap_end;        /* zap-leaf: clearing leaves below this IPA */
	struct slat_batch batch;
};

/*
 * What a uniform subtree adds up to. Leaves are compared as descriptors:
 * each must equal the first one with its output address advanced, except
 * for the access flag and the dirty state, which are merged.
 */
struct promote_scan {
	slat_pte_t expect;       /* the next leaf, as it must be */
	slat_pte_t ignore;       /* bits that may differ: AF, dirty */
	slat_pte_t any, all;     /* OR and AND of the leaves: merged bits */
	bool linear;             /* OA field linear over the block */
	uint64_t pa;             /* PA of the next leaf when not linear */
};

static bool promote_scan(struct slat_table *t, slat_pte_t *table, int level,
			 struct promote_scan *s, struct slat_stats *st)
{
	uint64_t size = level_size(t, level);
	/* A leaf's type bits at this level, once per table: leaf_for_level
	 * only sets or clears them, whatever the output address. */
	slat_pte_t type_set = t->fmt->leaf_for_level(t, 0, level);
	slat_pte_t type_keep = t->fmt->leaf_for_level(t, ~0ull, level);
	for (uint32_t i = 0; i < t->geo.entries; i++) {
		slat_pte_t pte = pte_read(&table[i]);
		if (pte_table(t, pte, level)) {
			st->visited++;
			if (!promote_scan(t, table_va(t, pte), level + 1, s, st))
				return false;
			continue;
		}
		slat_pte_t expect = s->linear ? s->expect
			: t->fmt->pte_with_pa(t, s->expect, slat_pa(s->pa));
		expect = (expect & type_keep) | type_set;
		if (!pte_valid(t, pte) || ((pte ^ expect) & ~s->ignore)) {
			st->visited += i + 1;
			return false;
		}
		s->any |= pte;
		s->all &= pte;
		s->expect += size;
		s->pa += size;
	}
	st->visited += t->geo.entries;
	return true;
}

/* The block the table at ctx->ptep can become, or 0. */
static slat_pte_t promoted_block(const struct slat_walk_ctx *ctx)
{
	struct slat_table *t = ctx->t;
	slat_pte_t *table = table_va(t, ctx->old);
	slat_pte_t first = pte_read(&table[0]);
	int level = ctx->level + 1;
	while (pte_table(t, first, level)) {
		first = pte_read(&((slat_pte_t *)table_va(t, first))[0]);
		level++;
	}
	if (!pte_valid(t, first))
		return 0;
	uint64_t base = t->fmt->pte_pa(t, first).pa;
	uint64_t block_size = level_size(t, ctx->level);
	if (base & (block_size - 1))
		return 0;

	bool hwdirty = t->cfg.features & SLAT_FEAT_HWDIRTY;
	slat_pte_t dirty = hwdirty ? t->fmt->dirty_bit : 0;
	struct promote_scan s = {
		.expect = first & ~(t->fmt->young_bit | dirty),
		.ignore = t->fmt->young_bit | dirty,
		.linear = pa_run_linear(slat_pa(base), block_size),
		.pa = base,
		.all = ~0ull,
	};
	if (!promote_scan(t, table, ctx->level + 1, &s, ctx->stats))
		return 0;
	slat_pte_t block = t->fmt->leaf_for_level(t, first, ctx->level);
	block &= ~(t->fmt->young_bit | dirty);
	/* Young if any leaf was; dirty if any was, whichever way it is encoded. */
	slat_pte_t dirty_now = t->fmt->dirty_bit_clear ? s.all : s.any;
	return block | (s.any & t->fmt->young_bit) | (dirty_now & dirty);
}

static void recover_unlink(const struct slat_walk_ctx *ctx,
			   struct recover_data *d, slat_pte_t *publish,
			   slat_pte_t block)
{
	struct slat_table *t = ctx->t;
	void *table = table_va(t, ctx->old);
	uint64_t size = level_size(t, ctx->level);

	if (d->batch.policy == SLAT_FLUSH_ENTRY) {
		if (t->fmt->tlbi_by_address)
			slat_tlbi_range(t, ctx->addr, size, ctx->stats);
		else
			slat_tlbi_vmid(t, ctx->stats);
		if (publish)
			slat_make_entry(ctx, block);
		slat_release_unlinked(t, table, ctx->level + 1, true, ctx->stats);
		return;
	}
	d->batch.changed = true;
	slat_batch_add(t, &d->batch, ctx->addr, table, ctx->level + 1, publish,
		       block, ctx->stats);
}

static int recover_table(const struct slat_walk_ctx *ctx, struct recover_data *d)
{
	struct slat_table *t = ctx->t;
	slat_pte_t block = 0;

	switch (d->strategy) {
	case SLAT_RECOVER_ZAP_LEAF:
		d->zap_end = ctx->addr + level_size(t, ctx->level);
		return 0;
	case SLAT_RECOVER_ZAP_TABLE:
		pte_write(ctx->ptep, 0);
		ctx->stats->written[SLAT_WRITE_CLEAR]++;
		slat_refcount_add(t, ctx->ptep, ctx->level, -1, false);
		recover_unlink(ctx, d, NULL, 0);
		return 1;
	default:
		block = promoted_block(ctx);
		if (!block)
			return 0; /* a lower level may still promote */
		if (!t->fmt->split_needs_bbm) {
			/* Same translation: x86 swaps in place. */
			slat_make_entry(ctx, block);
			recover_unlink(ctx, d, NULL, 0);
			return 1;
		}
		/* The batch publishes the block later. */
		slat_note_block(t, ctx->ptep, ctx->level, false);
		pte_write(ctx->ptep, 0);
		ctx->stats->written[SLAT_WRITE_BREAK]++;
		recover_unlink(ctx, d, ctx->ptep, block);
		return 1;
	}
}

static int zap_leaves(const struct slat_walk_ctx *ctx, struct recover_data *d)
{
	struct slat_table *t = ctx->t;
	uint64_t size = level_size(t, ctx->level);
	uint32_t n, cleared = 0;
	for (n = 0; n < ctx->nr_left && ctx->addr + n * size < d->zap_end; n++) {
		slat_pte_t pte = pte_read(&ctx->ptep[n]);
		if (pte_table(t, pte, ctx->level))
			break;
		if (pte == 0)
			continue;
		__atomic_store_n(&ctx->ptep[n], 0, __ATOMIC_RELAXED);
		cleared++;
		if (d->batch.policy == SLAT_FLUSH_ENTRY)
			slat_tlbi_ipa(t, ctx->addr + n * size, ctx->level,
				      SLAT_TLBI_INNER_SHAREABLE, ctx->stats);
	}
	ctx->stats->written[SLAT_WRITE_CLEAR] += cleared;
	slat_refcount_add(t, ctx->ptep, ctx->level, -(int32_t)cleared, false);
	d->batch.changed |= cleared != 0;
	/* n == 0: the entry became a table meanwhile; descend. */
	return n ? (int)n : 0;
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
		if (zapping && slat_refcount_get(t, table_va(t, ctx->old)) == 0) {
			pte_write(ctx->ptep, 0);
			ctx->stats->written[SLAT_WRITE_CLEAR]++;
			slat_refcount_add(t, ctx->ptep, ctx->level, -1, false);
			recover_unlink(ctx, d, NULL, 0);
		}
		return 0;
	default:
		return zapping ? zap_leaves(ctx, d) : 1;
	}
}

int slat_recover(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		 enum slat_recover_strategy strategy,
		 enum slat_tlbi_policy policy, slat_max_level_fn max_level,
		 void *arg)
{
	if (!t || (unsigned)strategy > SLAT_RECOVER_PROMOTE ||
	    !tlbi_policy_ok(policy))
		return SLAT_E_INVAL;
	int ret = slat_check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;

	/* Field by field: the batch's array needs no zeroing. */
	struct recover_data d;
	d.strategy = strategy;
	d.max_level = max_level;
	d.arg = arg;
	d.zap_end = 0;
	slat_batch_init(&d.batch, policy, ipa.ipa);
	uint32_t visits = SLAT_VISIT_TABLE_PRE;
	int stop = SLAT_LAST_LEVEL - 1;
	/* Tables below the deepest block level cannot become blocks. */
	while (stop > t->geo.start_level && !leaf_allowed(t, stop))
		stop--;
	if (strategy == SLAT_RECOVER_ZAP_LEAF) {
		visits |= SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_POST;
		stop = SLAT_LAST_LEVEL;
	}
	struct slat_walker w = {
		.cb = recover_visitor, .arg = &d, .flags = visits,
		.stop_level = stop,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, false, NULL);
	ret = slat_walk(t, ipa.ipa, size, &w, st);
	slat_batch_flush(t, &d.batch, ipa.ipa + size, st);
	slat_stats_end(t, st, &local);
	return ret;
}
