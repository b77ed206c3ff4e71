/* SPDX-License-Identifier: MIT */
/*
 * The entry primitives every operation is built from: break-before-make,
 * in-place updates, clearing runs of leaves, unlinking tables, splitting a
 * block, merging the CPU's state into a block. Each writes through
 * pte_try_set() and keeps the counters, the count words and the cache
 * maintenance of what it writes.
 */
#include "internal.h"

int core_break(const struct slat_walk_ctx *ctx, slat_pte_t *was,
	       struct core_batch *b)
{
	struct slat_table *t = ctx->t;
	bool shared = walk_shared(ctx);
	slat_pte_t old;

	/* The entry stays counted until its owner notes the change, which
	 * may come after a batch's invalidation: an unknown count must be
	 * recounted while the entry still holds its value. */
	if (!shared && !is_root_level(t, ctx->level))
		(void)core_refcount_get(t, table_page_of(t, ctx->ptep));
	if (!pte_try_set(t, walk_writers(ctx), ctx->ptep, ctx->old, ~0ull,
			 shared ? t->locked : 0, &old)) {
		ctx->stats->retries++;
		return SLAT_E_AGAIN;
	}
	if (was)
		*was = old;
	ctx->stats->written[SLAT_WRITE_BREAK]++;
	if (!pte_valid(t, old))
		return SLAT_OK;
	if (b) {
		core_batch_changed(b, ctx->addr, level_size(t, ctx->level));
		return SLAT_OK;
	}
	/* A table's span also invalidates the walk caches below it. */
	if (pte_table(t, old, ctx->level))
		core_tlbi_range(t, ctx->addr, level_size(t, ctx->level), ctx->stats);
	else
		core_tlbi_ipa(t, ctx->addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,
			      ctx->stats);
	return SLAT_OK;
}

void core_make(const struct slat_walk_ctx *ctx, slat_pte_t new)
{
	struct slat_table *t = ctx->t;
	bool table = pte_table(t, new, ctx->level);

	pte_write_owned(t, ctx->ptep, new);
	refcount_note(t, ctx->ptep, ctx->level, 0,
		      !table && ctx->level < SLAT_LAST_LEVEL, walk_shared(ctx));
	ctx->stats->written[table ? SLAT_WRITE_TABLE : SLAT_WRITE_LEAF]++;
}

/* Take ctx's entry out of the CPU's reach without an invalidation (the
 * table replacing it translates the same), returning its latest value. */
static slat_pte_t core_lock(const struct slat_walk_ctx *ctx)
{
	slat_pte_t was;
	pte_try_set(ctx->t, pte_writers_of(ctx->t, false), ctx->ptep, ctx->old, ~0ull,
		    ctx->t->locked, &was);
	ctx->stats->written[SLAT_WRITE_BREAK]++;
	return was;
}

int core_take_block(const struct slat_walk_ctx *ctx, slat_pte_t *block)
{
	struct slat_table *t = ctx->t;
	if (t->fmt->split_needs_bbm)
		return core_break(ctx, block, NULL);
	*block = hw_updates_ptes(t) ? core_lock(ctx) : ctx->old;
	return SLAT_OK;
}

slat_pte_t core_swap(const struct slat_walk_ctx *ctx, slat_pte_t new)
{
	struct slat_table *t = ctx->t;
	bool table = pte_table(t, new, ctx->level);
	slat_pte_t was;

	pte_try_set(t, pte_writers_of(t, false), ctx->ptep, ctx->old, ~0ull, new,
		    &was);
	refcount_note(t, ctx->ptep, ctx->level, 0,
		      !table && ctx->level < SLAT_LAST_LEVEL, false);
	ctx->stats->written[table ? SLAT_WRITE_TABLE : SLAT_WRITE_LEAF]++;
	return was;
}

/* A run of unmapped memory to clean, of leaves cleared in [from, to): at
 * once when they were already invalidated (or the caller invalidates
 * later), else after the batch's invalidation, which must cover them. */
static void clear_cmo(struct slat_table *t, struct core_batch *b, uint64_t from,
		      uint64_t to, struct cmo_run r, struct slat_stats *st)
{
	if (!r.bytes)
		return;
	if (b->policy == SLAT_FLUSH_ENTRY || b->policy == SLAT_FLUSH_NONE) {
		cmo_run_emit(t, r, st);
		return;
	}
	core_batch_changed(b, from, to - from);
	core_batch_add_cmo(t, b, r, st);
}

int core_clear_leaves(const struct slat_walk_ctx *ctx, struct core_batch *b,
		      uint64_t end, bool cmo)
{
	/* Locals: the stores to the entries may alias anything in memory. */
	struct slat_table *t = ctx->t;
	const int level = ctx->level;
	const uint64_t size = level_size(t, level), base = ctx->addr;
	const uint32_t max = walk_run(ctx);
	const bool per_entry = b->policy == SLAT_FLUSH_ENTRY;
	const bool tables = level < SLAT_LAST_LEVEL;
	const slat_pte_t memattr = t->fmt->memattr_mask, wb = t->normal_memattr;
	const enum pte_writers who = pte_writers_of(t, false);
	slat_pte_t *ptep = ctx->ptep;
	struct cmo_run run = { 0, 0 };
	uint32_t n, cleared = 0;

	for (n = 0; n < max && base + n * size < end; n++) {
		slat_pte_t pte = pte_peek(&ptep[n]), was;
		uint64_t addr = base + n * size;
		if (pte == 0)
			continue;
		if (tables && pte_table(t, pte, level))
			break;
		pte_try_set(t, who, &ptep[n], pte, ~0ull, 0, &was);
		cleared++;
		if (per_entry)
			core_tlbi_ipa(t, addr, level, SLAT_TLBI_INNER_SHAREABLE,
				      ctx->stats);
		/* pte_cacheable(), the mask hoisted */
		if (!cmo || (was & memattr) != wb)
			continue;
		uint64_t pa = pte_oa(t, was).pa;
		if (!cmo_run_extend(&run, pa, size)) {
			clear_cmo(t, b, base, addr, run, ctx->stats);
			run.pa = pa;
			run.bytes = size;
		}
	}
	clear_cmo(t, b, base, base + n * size, run, ctx->stats);
	ctx->stats->written[SLAT_WRITE_CLEAR] += cleared;
	refcount_note(t, ptep, level, -(int32_t)cleared, false, false);
	if (cleared)
		core_batch_changed(b, base, n * size);
	return (int)n;
}

void core_unlink_table(const struct slat_walk_ctx *ctx, struct core_batch *b)
{
	struct slat_table *t = ctx->t;
	void *table = table_va(t, ctx->old);
	slat_pte_t was;

	pte_try_set(t, pte_writers_of(t, false), ctx->ptep, ctx->old, ~0ull, 0,
		    &was);
	ctx->stats->written[SLAT_WRITE_CLEAR]++;
	refcount_note(t, ctx->ptep, ctx->level, -1, false, false);
	if (b->policy != SLAT_FLUSH_ENTRY) {
		core_batch_add(t, b, ctx->addr, table, ctx->level + 1, NULL, 0,
			       ctx->stats);
		return;
	}
	/* Only the walk caches can hold an empty table; leaves below need
	 * the whole span. */
	if (core_refcount_get(t, table) == 0)
		core_tlbi_ipa(t, ctx->addr, SLAT_LEVEL_ANY,
			      SLAT_TLBI_INNER_SHAREABLE, ctx->stats);
	else
		core_tlbi_range(t, ctx->addr, level_size(t, ctx->level),
				ctx->stats);
	struct cmo_run run = { 0, 0 };
	core_release_unlinked(t, table, ctx->level + 1, b->cmo ? &run : NULL,
			      ctx->stats);
	cmo_run_emit(t, run, ctx->stats);
}

void core_fill_split(struct slat_table *t, slat_pte_t *page, slat_pte_t block,
		     int level, const struct slat_page_cache *cache,
		     struct slat_stats *st)
{
	uint32_t n = t->geo.entries;
	uint64_t step = level_size(t, level + 1);
	slat_pte_t child = t->fmt->leaf_for_level(t, block, level + 1);
	slat_pa_t pa = t->fmt->pte_pa(t, block);

	/* The page is not published yet: nobody reads it before the release
	 * store that links it (the writer's one exception, pte_init()). */
	if (pa_run_linear(pa, level_size(t, level))) {
		lines_install(t, page, n, child, step,
			      core_cache_next(cache, page));
	} else {
		for (uint32_t i = 0; i < n; i++)
			pte_init(&page[i],
				 t->fmt->pte_with_pa(t, child,
						     slat_pa(pa.pa + i * step)));
	}
	*table_refcount(t, page) =
		n | (level + 1 < SLAT_LAST_LEVEL ? SLAT_REFCOUNT_HAS_BLOCKS : 0);
	st->written[SLAT_WRITE_LEAF] += n;
}

/* A page filled for a split that was never published goes back as it came. */
static void unfill(struct slat_table *t, slat_pte_t *page)
{
	for (uint32_t i = 0; i < t->geo.entries; i++)
		pte_init(&page[i], 0);
	*table_refcount(t, page) = 0;
}

int core_break_block(const struct slat_walk_ctx *ctx,
		     struct slat_page_cache *cache, uint64_t pages)
{
	struct slat_table *t = ctx->t;
	int ret = core_cache_check(t, cache, pages);
	if (ret)
		return ret;
	slat_pte_t *page = core_cache_pop(t, cache, ctx->stats);
	ret = core_break(ctx, NULL, NULL);
	if (ret) {
		core_cache_unpop(cache, page, ctx->stats);
		return ret;
	}
	core_make(ctx, t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx,
								 page)));
	return SLAT_OK;
}

int core_split_block(const struct slat_walk_ctx *ctx,
		     struct slat_page_cache *cache)
{
	struct slat_table *t = ctx->t;
	int ret = core_cache_check(t, cache, 1);
	if (ret)
		return ret;
	slat_pte_t *page = core_cache_pop(ctx->t, cache, ctx->stats);
	slat_pte_t table = t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx, page));
	slat_pte_t block = ctx->old, was;

	/* Without break-before-make a shared walker swaps in one CAS. */
	if (!t->fmt->split_needs_bbm && walk_shared(ctx)) {
		core_fill_split(t, page, block, ctx->level, cache, ctx->stats);
		if (!pte_try_set(t, PTE_SHARED, ctx->ptep, block, ~0ull, table, &was)) {
			unfill(t, page);
			core_cache_unpop(cache, page, ctx->stats);
			ctx->stats->retries++;
			return SLAT_E_AGAIN;
		}
		ctx->stats->written[SLAT_WRITE_TABLE]++;
		return SLAT_OK;
	}
	ret = core_take_block(ctx, &block);
	if (ret) {
		core_cache_unpop(cache, page, ctx->stats);
		return ret;
	}
	core_fill_split(t, page, block, ctx->level, cache, ctx->stats);
	core_make(ctx, table);
	return SLAT_OK;
}

struct merge_walk {
	const struct slat_table *t;
	slat_pte_t any, all;
};

static SLAT_ALWAYS_INLINE int merge_pre(void *arg, slat_pte_t *ptep,
					uint32_t nr_left, int level,
					uint64_t addr)
{
	(void)addr;
	struct merge_walk *w = arg;
	slat_pte_t any = w->any, all = w->all;
	uint32_t n;
	/* The entries up to the next table, in one go. */
	for (n = 0; n < nr_left; n++) {
		slat_pte_t pte = pte_read(&ptep[n]);
		if (pte_table(w->t, pte, level))
			break;
		any |= pte;
		all &= pte;
	}
	w->any = any;
	w->all = all;
	return (int)n;
}

slat_pte_t core_merge_hw_state(const struct slat_table *t, slat_pte_t block,
			       const slat_pte_t *table, int level)
{
	/* The block counts as one more leaf: the CPU may have made it young
	 * or dirty itself, which merging must not undo. */
	struct merge_walk w = { t, block, block };
	core_subtree_walk(t, (slat_pte_t *)table, level, 0, merge_pre, NULL,
			  &w);
	return hw_state_apply(t, block, w.any, w.all);
}
