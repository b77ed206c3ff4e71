/* SPDX-License-Identifier: MIT */
/*
 * Entry updates that every operation shares: break-before-make, and the
 * translation-preserving split of one block into a table.
 */
#include "internal.h"

int slat_break_entry(const struct slat_walk_ctx *ctx, bool old_is_table,
		     slat_pte_t *was)
{
	struct slat_table *t = ctx->t;
	slat_pte_t old = ctx->old;
	if (walk_shared(ctx)) {
		if (!pte_cas(ctx->ptep, old, t->fmt->locked)) {
			ctx->stats->retries++;
			return SLAT_E_AGAIN;
		}
	} else if (hw_updates_ptes(t)) {
		/* The hardware may have set AF or dirty since we read it. */
		old = __atomic_exchange_n(ctx->ptep, 0, __ATOMIC_ACQ_REL);
	} else {
		pte_write(ctx->ptep, 0);
	}
	if (was)
		*was = old;
	ctx->stats->written[SLAT_WRITE_BREAK]++;
	if (!pte_valid(t, old))
		return SLAT_OK;
	/* A table's span also invalidates the walk caches below it. */
	if (old_is_table)
		slat_tlbi_range(t, ctx->addr, level_size(t, ctx->level), ctx->stats);
	else
		slat_tlbi_ipa(t, ctx->addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,
			    ctx->stats);
	return SLAT_OK;
}

/*
 * Take the block at ctx->ptep out of the hardware's reach without a TLBI
 * (the table that replaces it translates the same), returning its latest
 * value: formats without break-before-make whose hardware updates entries.
 */
slat_pte_t slat_lock_entry(const struct slat_walk_ctx *ctx)
{
	ctx->stats->written[SLAT_WRITE_BREAK]++;
	return __atomic_exchange_n(ctx->ptep, ctx->t->fmt->locked, __ATOMIC_ACQ_REL);
}

void slat_make_entry(const struct slat_walk_ctx *ctx, slat_pte_t new)
{
	bool table = pte_table(ctx->t, new, ctx->level);
	if (!table)
		slat_note_block(ctx->t, ctx->ptep, ctx->level, walk_shared(ctx));
	pte_write(ctx->ptep, new);
	ctx->stats->written[table ? SLAT_WRITE_TABLE : SLAT_WRITE_LEAF]++;
}

/* Fill @page with the next-level leaves that translate like @block. */
void slat_fill_split(struct slat_table *t, slat_pte_t *page, slat_pte_t block,
		       int level, struct slat_stats *st)
{
	uint32_t n = t->geo.entries;
	uint64_t step = level_size(t, level + 1);
	slat_pte_t child = t->fmt->leaf_for_level(t, block, level + 1);
	slat_pa_t pa = t->fmt->pte_pa(t, block);

	if (pa_run_linear(pa, level_size(t, level))) {
		for (uint32_t i = 0; i < n; i++, child += step)
			__atomic_store_n(&page[i], child, __ATOMIC_RELAXED);
	} else {
		for (uint32_t i = 0; i < n; i++)
			__atomic_store_n(&page[i],
					 t->fmt->pte_with_pa(t, child,
							     slat_pa(pa.pa + i * step)),
					 __ATOMIC_RELAXED);
	}
	*table_refcount(t, page) =
		n | (level + 1 < SLAT_LAST_LEVEL ? SLAT_REFCOUNT_HAS_BLOCKS : 0);
	st->written[SLAT_WRITE_LEAF] += n;
}

int slat_split_block(const struct slat_walk_ctx *ctx, struct slat_page_cache *cache)
{
	struct slat_table *t = ctx->t;
	slat_pte_t *page = slat_cache_pop(t, cache, ctx->stats);
	if (!page)
		return SLAT_E_NOMEM;

	slat_pte_t table = t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx, page));
	slat_pte_t block = ctx->old;
	if (!t->fmt->split_needs_bbm && walk_shared(ctx)) {
		slat_fill_split(t, page, block, ctx->level, ctx->stats);
		if (!pte_cas(ctx->ptep, block, table)) {
			/* Lost: the page goes back zeroed, as it came. */
			for (uint32_t i = 0; i < t->geo.entries; i++)
				page[i] = 0;
			*table_refcount(t, page) = 0;
			slat_cache_unpop(cache, page, ctx->stats);
			ctx->stats->retries++;
			return SLAT_E_AGAIN;
		}
		ctx->stats->written[SLAT_WRITE_TABLE]++;
		return SLAT_OK;
	}
	if (!t->fmt->split_needs_bbm) {
		if (hw_updates_ptes(t))
			block = slat_lock_entry(ctx);
		slat_fill_split(t, page, block, ctx->level, ctx->stats);
		slat_make_entry(ctx, table);
		return SLAT_OK;
	}

	int ret = slat_break_entry(ctx, false, &block);
	if (ret) {
		slat_cache_unpop(cache, page, ctx->stats);
		return ret;
	}
	slat_fill_split(t, page, block, ctx->level, ctx->stats);
	slat_make_entry(ctx, table);
	return SLAT_OK;
}
