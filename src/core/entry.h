/* SPDX-License-Identifier: MIT */
/*
 * The entry primitives every operation is built from (entry.c): install,
 * break-before-make, in-place swaps, clearing runs, unlinking tables,
 * splitting blocks, merging the CPU's state into a block. Each writes
 * through pte_write() and keeps the counters, the count words and the
 * cache maintenance of what it writes.
 */
#ifndef SLAT_CORE_ENTRY_H
#define SLAT_CORE_ENTRY_H

#include "lines.h"
#include "cmo.h"
#include "batch.h"

/*
 * Installing one leaf into an empty entry is two steps. core_claim_leaf()
 * takes the entry beside other walkers: with the locked marker when the
 * leaf's memory needs maintenance (another vCPU then never uses the leaf
 * before its memory is clean, seed 000), else with the leaf itself, in one
 * CAS; alone, the entry is the caller's already. core_publish_leaf() then
 * cleans the memory (and invalidates the I-cache) and stores the leaf; it
 * is needed when @cmo is not 0 or the caller is alone
 * (core_leaf_claimed()). Whichever writes the leaf keeps the count word
 * and the counters.
 *
 * @t: the table.
 * @ptep: the entry, empty (0) when the caller read it.
 * @level: its level.
 * @leaf: the leaf; @pa: its output address; @size: the bytes it maps.
 * @cmo: the CORE_CMO_* the leaf needs (0 under SLAT_SKIP_CMO).
 * @shared: other walkers may run.
 * @rc: the count word of @ptep's table when the caller knows it (a fault's
 *	memo; never the root's), else NULL.
 * @st: the operation's counters.
 *
 * core_claim_leaf() returns SLAT_OK, or SLAT_E_AGAIN when a shared walker
 * lost the entry (nothing changed).
 */
static SLAT_ALWAYS_INLINE int
core_claim_leaf(struct slat_table *t, slat_pte_t *ptep, int level,
		slat_pte_t leaf, unsigned cmo, bool shared, uint32_t *rc,
		struct slat_stats *st)
{
	slat_pte_t was;

	if (!shared)
		return SLAT_OK;
	if (!pte_try_set(t, PTE_SHARED, ptep, 0, ~0ull,
			 cmo ? t->locked : leaf, &was)) {
		st->retries++;
		return SLAT_E_AGAIN;
	}
	/* Counted before the clean, which then keeps only the entry and the
	 * leaf live across its call: a shared note only marks the count
	 * unknown, and no exclusive recount can run meanwhile. */
	st->written[SLAT_WRITE_LEAF]++;
	refcount_note_known(t, rc, ptep, level, 1, level < SLAT_LAST_LEVEL,
			    true);
	return SLAT_OK;
}

/* core_claim_leaf() left the rest to core_publish_leaf(). */
static SLAT_ALWAYS_INLINE bool core_leaf_claimed(unsigned cmo, bool shared)
{
	return cmo || !shared;
}

static SLAT_ALWAYS_INLINE int
core_publish_leaf(struct slat_table *t, slat_pte_t *ptep, int level,
		  slat_pte_t leaf, slat_pa_t pa, uint64_t size, unsigned cmo,
		  bool shared, uint32_t *rc, struct slat_stats *st)
{
	cmo_do(t, pa, size, cmo, st);
	/* The entry is the caller's: locked, or empty in an exclusive call.
	 * A release store: what the leaf maps was cleaned before. */
	pte_write_owned(t, ptep, leaf);
	if (shared)
		return SLAT_OK;
	/* After the store: a recount of an unknown count must see it. */
	st->written[SLAT_WRITE_LEAF]++;
	refcount_note_known(t, rc, ptep, level, 1, level < SLAT_LAST_LEVEL,
			    false);
	return SLAT_OK;
}

/**
 * core_install_leaf() - both steps: one leaf into an empty entry (see
 * core_claim_leaf()).
 *
 * Return: SLAT_OK, or SLAT_E_AGAIN when a shared walker lost the entry.
 */
static SLAT_ALWAYS_INLINE int
core_install_leaf(struct slat_table *t, slat_pte_t *ptep, int level,
		  slat_pte_t leaf, slat_pa_t pa, uint64_t size, unsigned cmo,
		  bool shared, uint32_t *rc, struct slat_stats *st)
{
	int ret = core_claim_leaf(t, ptep, level, leaf, cmo, shared, rc, st);
	if (ret || !core_leaf_claimed(cmo, shared))
		return ret;
	return core_publish_leaf(t, ptep, level, leaf, pa, size, cmo, shared,
				 rc, st);
}

/**
 * core_install_run() - install @n leaves into empty entries from @ptep, in
 * one exclusive call.
 * @t: the table.
 * @ptep: the first entry; all @n are empty (0).
 * @n: how many.
 * @level: their level.
 * @size: the bytes one of them maps (level_size() of @level).
 * @leaf: the first leaf; the next ones map the next PAs.
 * @pa: its output address.
 * @cmo: the CORE_CMO_* the leaves need (0 under SLAT_SKIP_CMO).
 * @cache: the operation's page cache (its pages are filled in turn: the
 *	run asks for the same lines of a later one, entries_ahead()), or NULL.
 * @st: the operation's counters.
 *
 * The memory of the whole run is cleaned in one call before any leaf is
 * visible. Keeps the count word and the counters.
 */
static SLAT_ALWAYS_INLINE void
core_install_run(struct slat_table *t, slat_pte_t *ptep, uint32_t n,
		 int level, uint64_t size, slat_pte_t leaf, slat_pa_t pa,
		 unsigned cmo, const struct slat_page_cache *cache,
		 struct slat_stats *st)
{
	slat_pte_t was;

	if (cmo)
		cmo_do(t, pa, n * size, cmo, st);
	if (pa_run_linear(pa, n * size)) {
		lines_install(t, ptep, n, leaf, size,
			      entries_ahead(t, cache, ptep, level));
	} else {
		for (uint32_t i = 0; i < n; i++)
			pte_try_set(t, PTE_ALONE, &ptep[i], 0, ~0ull,
				    t->fmt->pte_with_pa(t, leaf,
					slat_pa(pa.pa + i * size)), &was);
	}
	st->written[SLAT_WRITE_LEAF] += n;
	refcount_note(t, ptep, level, (int32_t)n, level < SLAT_LAST_LEVEL,
		      false);
}

/*
 * Break-before-make, in two steps. core_break() makes ctx's entry invalid
 * (locked, for a shared walker) and invalidates the old translation: by IPA
 * for a leaf, over its span for a table (the walk caches below it too);
 * *@was gets the value it replaced, with the CPU's latest AF and dirty
 * state. With a batch @b (exclusive), the invalidation is left to its next
 * flush. SLAT_E_AGAIN: a shared walker lost the race and changed nothing.
 * core_make() then publishes the new descriptor into the entry it owns.
 */
int core_break(const struct slat_walk_ctx *ctx, slat_pte_t *was,
	       struct core_batch *b) SLAT_INTERNAL;
void core_make(const struct slat_walk_ctx *ctx, slat_pte_t new) SLAT_INTERNAL;

/*
 * Take the block at ctx's entry, to be replaced by a table that translates
 * the same: break-before-make where the format needs it, else out of the
 * CPU's reach when the CPU may update it meanwhile. *@block gets its latest
 * value, which the table must be built from.
 */
int core_take_block(const struct slat_walk_ctx *ctx,
		    slat_pte_t *block) SLAT_INTERNAL;

/*
 * Replace ctx's block by an empty table with break-before-make (its
 * translation goes: invalidated by IPA, not cleaned), from @cache, which
 * must hold @pages (the table and those that go below it) so that no empty
 * table is left behind. SLAT_E_NOMEM, or SLAT_E_AGAIN when a shared walker
 * lost the entry: nothing changed.
 */
int core_break_block(const struct slat_walk_ctx *ctx,
		     struct slat_page_cache *cache, uint64_t pages) SLAT_INTERNAL;

/* Replace ctx's valid entry by @new in place (exclusive, no break-before-
 * make: the same translation); returns the value replaced. */
slat_pte_t core_swap(const struct slat_walk_ctx *ctx,
		     slat_pte_t new) SLAT_INTERNAL;

/*
 * Clear the leaves of ctx's run up to the first table or @end (exclusive):
 * each invalidated per @b's policy; with @cmo, the cacheable ones cleaned
 * and invalidated after their invalidation, in contiguous PA runs. Returns
 * the entries dealt with (0: the first is a table).
 */
int core_clear_leaves(const struct slat_walk_ctx *ctx, struct core_batch *b,
		      uint64_t end, bool cmo) SLAT_INTERNAL;

/*
 * Unlink the table at ctx's entry (exclusive): the entry becomes 0, and the
 * table is freed once an invalidation covers it (at once under
 * SLAT_FLUSH_ENTRY, else with @b's next flush), its cacheable leaves
 * cleaned first when the batch says so.
 */
void core_unlink_table(const struct slat_walk_ctx *ctx,
		       struct core_batch *b) SLAT_INTERNAL;

/* Fill @page (unpublished, popped from @cache) with the next-level leaves
 * that translate like @block at @level. */
void core_fill_split(struct slat_table *t, slat_pte_t *page, slat_pte_t block,
		     int level, const struct slat_page_cache *cache,
		     struct slat_stats *st) SLAT_INTERNAL;

/*
 * Turn the block at ctx's entry into a table of next-level leaves with the
 * same translation (one page from @cache). The walker then descends into it.
 */
int core_split_block(const struct slat_walk_ctx *ctx,
		     struct slat_page_cache *cache) SLAT_INTERNAL;

/*
 * The AF and dirty state of every leaf under the unlinked @table (@level),
 * merged into @block by hw_state_apply(): read after an invalidation covers
 * the table, so that no update the CPU made through it is lost.
 */
slat_pte_t core_merge_hw_state(const struct slat_table *t, slat_pte_t block,
			       const slat_pte_t *table, int level) SLAT_INTERNAL;

#endif
