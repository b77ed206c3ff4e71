/* SPDX-License-Identifier: MIT */
/*
 * The walk and the descent: what a visitor knows of the entry it visits
 * and the run of entries it may deal with at once (walk_leaf_run()), and
 * core_descend(), the one descent that bypasses the walker (walk.c).
 * Writes no entry but, as the CPU, table access flags.
 */
#ifndef SLAT_CORE_WALKER_H
#define SLAT_CORE_WALKER_H

#include "tables.h"

static inline bool walk_shared(const struct slat_walk_ctx *ctx)
{
	return (ctx->flags & SLAT_WALK_SHARED) != 0;
}

static inline enum pte_writers walk_writers(const struct slat_walk_ctx *ctx)
{
	return pte_writers_of(ctx->t, walk_shared(ctx));
}

/* The first IPA of the range inside ctx's entry. */
static inline uint64_t walk_first_addr(const struct slat_walk_ctx *ctx)
{
	return ctx->addr > ctx->start ? ctx->addr : ctx->start;
}

/* The range covers ctx's entry whole. */
static inline bool walk_entry_covered(const struct slat_walk_ctx *ctx)
{
	return ctx->addr >= ctx->start &&
	       ctx->end - ctx->addr >= level_size(ctx->t, ctx->level);
}

/*
 * The table of the entry after ctx's, which a walk (or a visitor that reads
 * tables itself) reads after ctx's own, else NULL. It starts a page, where
 * hardware prefetchers, which stop at a page's end, do not follow: asked
 * for while ctx's table is read, it is there when its turn comes.
 */
static inline const slat_pte_t *walk_next_table(const struct slat_walk_ctx *ctx)
{
	const struct slat_table *t = ctx->t;
	if (ctx->nr_left < 2)
		return NULL;
	slat_pte_t next = pte_peek(&ctx->ptep[1]);
	return (next & t->table_mask) == t->table_match ? table_va(t, next)
						       : NULL;
}

/*
 * The run a visitor may deal with at once: the entries from ctx->ptep, in
 * this table, that the range reaches, at least the entry itself (which the
 * range may cover only in part).
 */
static inline uint32_t walk_run(const struct slat_walk_ctx *ctx)
{
	uint64_t fit = (ctx->end - ctx->addr) >> level_shift(ctx->t, ctx->level);
	uint32_t n = fit < ctx->nr_left ? (uint32_t)fit : ctx->nr_left;
	return n ? n : 1;
}

/*
 * A per-entry step of walk_leaf_run(): entry @ptep (read as @pte, a leaf or
 * invalid) maps [addr, addr + level size). Returns 1 when it changed the
 * entry, 0 when not, or a negative status that ends the run.
 */
typedef int (*leaf_step_fn)(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
			    slat_pte_t pte, uint64_t addr, void *arg);

/* walk_leaf_run()'s loop; @tables is a constant at each call, so that the
 * last level's copy tests no entry for a table. */
static SLAT_ALWAYS_INLINE int
leaf_run_loop(const struct slat_walk_ctx *c, bool tables, leaf_step_fn step,
	      void *arg, uint32_t *changed)
{
	uint32_t n, max = walk_run(c), done = 0;
	uint64_t size = level_size(c->t, c->level);

	for (n = 0; n < max; n++) {
		slat_pte_t pte = pte_peek(&c->ptep[n]);
		if (tables && pte_table(c->t, pte, c->level))
			break;
		int ret = step(c, &c->ptep[n], pte, c->addr + n * size, arg);
		if (ret < 0) {
			*changed = done;
			return ret;
		}
		done += (uint32_t)ret;
	}
	*changed = done;
	return (int)n;
}

/**
 * walk_leaf_run() - the run iteration leaf visitors share: @step on each
 * entry of walk_run() up to the first table.
 * @ctx: the visited entry.
 * @step: what to do with each leaf or invalid entry; inlined.
 * @arg: passed to @step.
 * @changed: receives how many entries @step changed.
 *
 * Return: what the visitor returns: the entries dealt with (0 when the
 * first is a table: the walker then descends into it), or @step's negative
 * status.
 */
static SLAT_ALWAYS_INLINE int
walk_leaf_run(const struct slat_walk_ctx *ctx, leaf_step_fn step, void *arg,
	      uint32_t *changed)
{
	/* A local copy: stores to entries may alias the caller's context,
	 * which the loop would otherwise read again at every entry. */
	const struct slat_walk_ctx c = *ctx;
	if (c.level == SLAT_LAST_LEVEL)
		return leaf_run_loop(&c, false, step, arg, changed);
	return leaf_run_loop(&c, true, step, arg, changed);
}

/*
 * walk_run()'s entries at the last level read and nothing else: a walk
 * that must see every entry but has nothing to do with these (split's,
 * below its target). In pairs where the core may (pte_peek_pair()). Returns
 * how many it read.
 */
static SLAT_ALWAYS_INLINE uint32_t walk_read_run(const struct slat_walk_ctx *ctx)
{
	uint32_t max = walk_run(ctx), n = 0;

#ifdef SLAT_PTE_PAIRS
	const slat_pte_t *p = ctx->ptep;
	if (pte_pair_aligned(p)) {
		const slat_pte_t *end = p + (max & ~1u);
#pragma GCC unroll 4
		for (; p != end; p += 2)
			(void)pte_peek_pair(p);
		n = max & ~1u;
	}
#endif
	for (; n < max; n++)
		(void)pte_peek(&ctx->ptep[n]);
	return max;
}

/* How core_descend() walks (constants at each call). */
#define DESCEND_CPU  (1u << 0) /* as the CPU: set table access flags (EPT A/D) */
#define DESCEND_FAST (1u << 1) /* stop at any table entry not written as
				  make_table() writes them: the caller falls
				  back to the walker then */

/* core_descend()'s loop; @linear is a constant at each call (two copies):
 * table addresses are then pte & oa_mask in one linear map. */
static SLAT_ALWAYS_INLINE slat_pte_t *
descend_loop(const struct slat_table *t, uint64_t ipa, int stop_level,
	     unsigned how, bool linear, int *level, slat_pte_t *value,
	     struct slat_stats *st)
{
	const int start = t->geo.start_level;
	const int depth = stop_level - start;
	unsigned shift = level_shift(t, start);
	/* The root's index needs no mask: @ipa is inside ia_bits. */
	slat_pte_t *ptep = &((slat_pte_t *)t->root)[ipa >> shift];
	/* Read once: the entries' acquire loads would reload them per level. */
	const uint64_t index_mask = t->geo.entries - 1;
	const slat_pte_t table_mask = t->table_mask, table_match = t->table_match;
	const slat_pte_t oa_mask = t->oa_mask;
	const intptr_t linear_offset = t->linear_offset;
	const unsigned bits = t->geo.bits_per_level;
	slat_pte_t pte = pte_read(ptep);
	int n;

	for (n = 0; n < depth; n++, pte = pte_read(ptep)) {
		/* The fast test first; the full one for tables libslat did not
		 * write this way, unless a miss only costs the general path. */
		if ((pte & table_mask) != table_match &&
		    ((how & DESCEND_FAST) || !pte_table(t, pte, start + n)))
			break;
		/* The CPU sets it with an atomic update of the entry it read;
		 * if the entry changed meanwhile, it is not set. */
		if ((how & DESCEND_CPU) && t->fmt->table_young_bit &&
		    hw_updates_ptes(t) && !(pte & t->fmt->table_young_bit))
			__atomic_compare_exchange_n(ptep, &(slat_pte_t){ pte },
						    pte | t->fmt->table_young_bit,
						    false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		slat_pte_t *table = linear
			? (slat_pte_t *)((intptr_t)(pte & oa_mask) + linear_offset)
			: table_va(t, pte);
		shift -= bits;
		ptep = &table[(ipa >> shift) & index_mask];
	}
	if (st)
		st->visited += (uint64_t)n + 1;
	*level = start + n;
	*value = pte;
	return ptep;
}

/**
 * core_descend() - the entry translating @ipa at @stop_level, or at the
 * first level above it whose entry is not a table.
 * @t: the table.
 * @ipa: inside ia_bits.
 * @stop_level: the deepest level to reach (SLAT_LAST_LEVEL: to the leaf).
 * @how: DESCEND_CPU, DESCEND_FAST or 0.
 * @level: receives the level of the entry returned.
 * @value: receives its value, read once: the one the descent decided on
 *	(read again, a table could have replaced the leaf meanwhile).
 * @st: counts the entries read (may be NULL).
 *
 * The one descent that bypasses the walker: lookup, mkyoung, the CPU's
 * walk and the fault path use it. Return: the entry.
 */
static SLAT_ALWAYS_INLINE slat_pte_t *
core_descend(const struct slat_table *t, uint64_t ipa, int stop_level,
	     unsigned how, int *level, slat_pte_t *value, struct slat_stats *st)
{
	if (t->linear && t->oa_mask)
		return descend_loop(t, ipa, stop_level, how, true, level, value, st);
	return descend_loop(t, ipa, stop_level, how, false, level, value, st);
}

/*
 * core_descend_fault() - core_descend(DESCEND_FAST) for a fault, from the
 * root, remembering in @m the table it ended in.
 * @t: the table.
 * @m: the memo (of @t; may be NULL), refilled when the descent reached
 *	@stop_level in a table below the root.
 * @ipa, @stop_level, @level, @value, @st: as core_descend().
 * @rc: receives the count word of the entry's table when @m was refilled
 *	(never the root's), else NULL.
 *
 * A vCPU faults pages next to each other; the table its last fault ended in
 * usually holds the next entry, and the descent is most of a fault's work:
 * map's fault path reads one entry of the memo's table instead
 * (map_fault_memo()). The memo holds while no table was unlinked since it
 * was taken: t->unlinks moves before any unlinked table can be freed or
 * reused (an exclusive call runs alone; a shared walker's unlink is
 * followed by a grace period, and a read-side section that began after it
 * sees the count move). A fault through a memo taken just before a
 * concurrent unlink writes into the unlinked table, as one whose descent
 * read the entry just before it would. Out of line: the fault path's
 * registers are for the memo's case.
 *
 * Return: the entry.
 */
slat_pte_t *core_descend_fault(const struct slat_table *t,
			       struct slat_leaf_memo *m, uint64_t ipa,
			       int stop_level, int *level, slat_pte_t *value,
			       uint32_t **rc, struct slat_stats *st) SLAT_INTERNAL;

#endif
