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
 * What a subtree walk does at the entry @ptep (of @level, mapping from
 * @addr; @nr_left entries of its table from it): returns how many entries
 * from @ptep it dealt with (at least one), 0 to go down into the table
 * @ptep holds, or a negative value that ends the walk with it.
 */
typedef int (*subtree_pre_fn)(void *arg, slat_pte_t *ptep, uint32_t nr_left,
			      int level, uint64_t addr);
/* After the entries of @table (of @level), before its parent goes on. */
typedef void (*subtree_post_fn)(void *arg, slat_pte_t *table, int level);

/**
 * core_subtree_walk() - every entry of the subtree of @table, in address
 * order, tables before and after their entries.
 * @t: the table.
 * @table: a table page below the root (entries of @level).
 * @level: the level of its entries.
 * @base: the first IPA it translates.
 * @pre: at each entry or run of entries; inlined.
 * @post: after each table's entries, @table's last (NULL: none); inlined.
 * @arg: passed to both.
 *
 * The one walk of a subtree nobody else reaches through the root: one
 * unlinked (cleaned, merged, freed), one being built before it is
 * published, or one read whole (map's check for a translation to keep,
 * promotion's scan). The walker proper (walk.c) takes every range from the
 * root. Iterative, so that @pre and @post inline.
 *
 * Return: SLAT_OK, or the negative value @pre ended it with.
 */
static SLAT_ALWAYS_INLINE int
core_subtree_walk(const struct slat_table *t, slat_pte_t *table, int level,
		  uint64_t base, subtree_pre_fn pre, subtree_post_fn post,
		  void *arg)
{
	struct {
		slat_pte_t *table;
		uint32_t i;
		uint64_t base;
	} f[SLAT_LAST_LEVEL + 2];
	const uint32_t entries = t->geo.entries;
	int top = 0;

	f[0].table = table;
	f[0].i = 0;
	f[0].base = base;
	for (;;) {
		if (f[top].i == entries) {
			if (post)
				post(arg, f[top].table, level);
			if (top == 0)
				return SLAT_OK;
			top--;
			level--;
			f[top].i++;
			continue;
		}
		slat_pte_t *ptep = &f[top].table[f[top].i];
		uint64_t addr = f[top].base +
				((uint64_t)f[top].i << level_shift(t, level));
		int ret = pre(arg, ptep, entries - f[top].i, level, addr);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			f[top].i += (uint32_t)ret;
			continue;
		}
		top++;
		level++;
		f[top].table = table_va(t, pte_read(ptep));
		f[top].i = 0;
		f[top].base = addr;
	}
}

/* For a subtree walk's callback: @ptep is the first entry of a table
 * below the last level with nothing in it (its count word is 0), which
 * the walk need not read (a parent its children's removal emptied). */
static SLAT_ALWAYS_INLINE bool subtree_table_empty(const struct slat_table *t,
						   const slat_pte_t *ptep,
						   uint32_t nr_left, int level)
{
	return level < SLAT_LAST_LEVEL && nr_left == t->geo.entries &&
	       !core_refcount_get(t, table_page_of(t, ptep));
}

/* How core_descend() walks (constants at each call). */
#define DESCEND_CPU  (1u << 0) /* as the CPU: set table access flags (EPT A/D) */
#define DESCEND_FAST (1u << 1) /* stop at any table entry not written as
				  make_table() writes them: the caller falls
				  back to the walker then */
#define DESCEND_LINEAR (1u << 2) /* the caller found tables_linear()
				    (t->fault_steps): the copy without
				    platform calls */

/* Where a descent starts: a table, the level of its entries, and how an
 * IPA indexes it: ((ipa ^ base) >> shift) & index_mask. The root's mask
 * may span concatenated pages; a fault's path table, whose span is known
 * to hold the IPA, takes its first IPA as base and needs no mask (the XOR
 * is the one its span test computed). */
struct descend_from {
	slat_pte_t *table;
	int level;
	uint64_t base;          /* the first IPA it translates, or 0 */
	uint64_t index_mask;    /* ~0: the IPA is inside the table's span */
};

/* The root, where every descent starts that knows no better. */
static inline struct descend_from descend_root(const struct slat_table *t)
{
	return (struct descend_from){ t->root, t->geo.start_level, 0,
				      t->geo.root_entries - 1 };
}

/* The table at @ptep's entry (of @level, a table), seen from @ipa. */
static inline struct descend_from descend_below(const struct slat_table *t,
						slat_pte_t pte, int level)
{
	return (struct descend_from){ table_va(t, pte), level + 1, 0,
				      t->geo.entries - 1 };
}

/*
 * Where a descent ended: the entry, its value (read once: the one the
 * descent decided on; read again, a table could have replaced the leaf),
 * its level, and for a fault's descent the count word of its table (NULL:
 * the root's).
 */
struct descent {
	slat_pte_t *ptep;
	slat_pte_t pte;
	int level;
	uint32_t *rc;
};

/* What a descent reads of the table once: the entries' acquire loads
 * would reload it per level. */
struct descend_consts {
	slat_pte_t table_mask, table_match, oa_mask;
	intptr_t linear_offset;
};

static SLAT_ALWAYS_INLINE struct descend_consts
descend_consts(const struct slat_table *t)
{
	return (struct descend_consts){ t->table_mask, t->table_match,
					t->oa_mask, t->linear_offset };
}

/*
 * One level of a descent: *@table, the table below the entry @pte (at
 * @ptep, of @level) on the way to @ipa; false when @pte is not a table the
 * way @how accepts. @linear is a constant at each call: table addresses
 * are then pte & oa_mask in one linear map. @path (a fault's memo, or
 * NULL) records the table by the level of its entries, with the first IPA
 * it translates and its count word.
 */
static SLAT_ALWAYS_INLINE bool
descend_enter(const struct slat_table *t, const struct descend_consts *c,
	      slat_pte_t *ptep, slat_pte_t pte, int level, uint64_t ipa,
	      unsigned how, bool linear, struct slat_leaf_memo *path,
	      slat_pte_t **table)
{
	/* The fast test first; the full one for tables libslat did not
	 * write this way, unless a miss only costs the general path. */
	if ((pte & c->table_mask) != c->table_match &&
	    ((how & DESCEND_FAST) || !pte_table(t, pte, level)))
		return false;
	/* The CPU sets it with an atomic update of the entry it read;
	 * if the entry changed meanwhile, it is not set. */
	if ((how & DESCEND_CPU) && t->fmt->table_young_bit &&
	    hw_updates_ptes(t) && !(pte & t->fmt->table_young_bit))
		pte_cpu_update(t, ptep, pte, pte | t->fmt->table_young_bit);
	*table = linear
		? (slat_pte_t *)((intptr_t)(pte & c->oa_mask) + c->linear_offset)
		: table_va(t, pte);
	if (path) {
		uint32_t *rc = (how & DESCEND_LINEAR)
			? table_refcount_array(t, *table)
			: table_refcount(t, *table);
		path->path[level + 1].table = *table;
		path->path[level + 1].ipa = ipa & t->table_beyond[level + 1];
		path->path[level + 1].refcount = rc;
	}
	return true;
}

/*
 * The levels of descent @d below its first entry, up to @depth of them,
 * each entered by descend_enter() (@how, @linear and @path as there).
 */
static SLAT_ALWAYS_INLINE struct descent
descend_levels(const struct slat_table *t, struct descent d, int depth,
	       uint64_t ipa, unsigned how, bool linear,
	       struct slat_leaf_memo *path)
{
	const struct descend_consts c = descend_consts(t);
	const uint64_t index_mask = t->geo.entries - 1;
	const unsigned bits = t->geo.bits_per_level;
	unsigned shift = level_shift(t, d.level);

	for (int n = 0; n < depth; n++, d.level++, d.pte = pte_read(d.ptep)) {
		slat_pte_t *table;
		if (!descend_enter(t, &c, d.ptep, d.pte, d.level, ipa, how,
				   linear, path, &table))
			break;
		shift -= bits;
		d.ptep = &table[(ipa >> shift) & index_mask];
	}
	return d;
}

/*
 * core_descend()'s loop from @from; @path as descend_levels(). A descent
 * that starts at @stop_level reads one entry and nothing else. The levels
 * below the first entry have two copies, one for linear table addresses.
 */
static SLAT_ALWAYS_INLINE struct descent
descend(const struct slat_table *t, struct descend_from from, uint64_t ipa,
	int stop_level, unsigned how, struct slat_leaf_memo *path,
	struct slat_stats *st)
{
	const int depth = stop_level - from.level;
	struct descent d;

	d.ptep = &from.table[((ipa ^ from.base) >> level_shift(t, from.level)) &
			     from.index_mask];
	d.pte = pte_read(d.ptep);
	d.level = from.level;
	d.rc = NULL;
	if (depth > 0 && t->linear && t->oa_mask)
		d = descend_levels(t, d, depth, ipa, how, true, path);
	else if (depth > 0)
		d = descend_levels(t, d, depth, ipa, how, false, path);
	if (st)
		st->visited += (uint64_t)(d.level - from.level) + 1;
	return d;
}

/**
 * core_descend() - the entry translating @ipa at @stop_level, or at the
 * first level above it whose entry is not a table.
 * @t: the table.
 * @from: where to start: descend_root(), or a table below it whose span
 *	holds @ipa (descend_below()).
 * @ipa: inside ia_bits.
 * @stop_level: the deepest level to reach (SLAT_LAST_LEVEL: to the leaf).
 * @how: DESCEND_CPU, DESCEND_FAST or 0.
 * @st: counts the entries read (may be NULL).
 *
 * The one descent that bypasses the walker: lookup, mkyoung, the CPU's
 * walk, the fault path (core_fault_entry()) and the first leaf under a
 * table use it. Return: where it ended (struct descent; no count word).
 */
static SLAT_ALWAYS_INLINE struct descent
core_descend(const struct slat_table *t, struct descend_from from,
	     uint64_t ipa, int stop_level, unsigned how, struct slat_stats *st)
{
	return descend(t, from, ipa, stop_level, how, NULL, st);
}

/* The memo's path holds a table of @level whose span holds @ipa: an empty
 * slot's IPA is ~0, whose top bits no IPA has. */
static SLAT_ALWAYS_INLINE bool memo_path_holds(const struct slat_table *t,
					       const struct slat_leaf_memo *m,
					       int level, uint64_t ipa)
{
	return !((ipa ^ m->path[level].ipa) & t->table_beyond[level]);
}

/* The descent of a fault from the path's table of @level, the path
 * recording what it goes through, with the count word of the entry's
 * table. */
static SLAT_ALWAYS_INLINE struct descent
descend_path(const struct slat_table *t, struct slat_leaf_memo *m, int from,
	     uint64_t ipa, int stop_level, struct slat_stats *st)
{
	struct descend_from f = { m->path[from].table, from,
				  m->path[from].ipa, ~0ull };
	struct descent d = descend(t, f, ipa, stop_level, DESCEND_FAST, m, st);
	d.rc = m->path[d.level].refcount;
	return d;
}

/*
 * The empty entry at @stop_level translating @ipa, for a fault: the
 * descent from the deepest table of the memo's path whose span holds
 * @ipa (else from the root), recording the tables it goes through, so
 * that the path's table at @stop_level is then the entry's. NULL when the
 * descent ends elsewhere or on an entry in use. The path emptied first if
 * @unlinks (t->unlinks, read before) moved since it was taken.
 *
 * A guest's faults fall next to each other, or at least under the same
 * tables near the leaves, and the descent from the root is most of a
 * fault's work: a fault next to the last one reads one entry of the
 * last-level table the last one ended in (core_fault_entry_near()), a
 * fault elsewhere in the same gigabyte two. The path holds while no table
 * was unlinked since it was taken: t->unlinks moves before any unlinked
 * table can be freed or reused (an exclusive call runs alone; a shared
 * walker's unlink is followed by a grace period, and a read-side section
 * that began after it sees the count move). A fault through a path taken
 * just before a concurrent unlink writes into the unlinked table, as one
 * whose descent read the entry just before it would.
 */
slat_pte_t *core_fault_entry(const struct slat_table *t,
			     struct slat_leaf_memo *m, uint64_t unlinks,
			     uint64_t ipa, int stop_level,
			     struct slat_stats *st) SLAT_INTERNAL;

/* core_fault_entry(), inline where the path's table at @stop_level, or the
 * one above it, holds @ipa. True with *@ptep the empty entry. */
static SLAT_ALWAYS_INLINE bool
core_fault_entry_near(const struct slat_table *t, struct slat_leaf_memo *m,
		      uint64_t ipa, int stop_level, slat_pte_t **ptep,
		      struct slat_stats *st)
{
	/* Read before the descent: an unlink during it moves the count past
	 * what the path holds, and the next fault does not use it. */
	uint64_t unlinks = __atomic_load_n(&t->unlinks, __ATOMIC_ACQUIRE);

	/* The two commonest starts, the compiler's copy for each: the
	 * entry's own table (one read), the one above it (two). */
	if (__builtin_expect(m->unlinks == unlinks, 1)) {
		struct descent d;
		if (memo_path_holds(t, m, stop_level, ipa)) {
			d = descend_path(t, m, stop_level, ipa, stop_level, st);
			*ptep = d.ptep;
			return !d.pte;
		}
		if (stop_level - 1 > t->geo.start_level &&
		    memo_path_holds(t, m, stop_level - 1, ipa)) {
			d = descend_path(t, m, stop_level - 1, ipa, stop_level,
					 st);
			*ptep = d.ptep;
			return d.level == stop_level && !d.pte;
		}
	}
	*ptep = core_fault_entry(t, m, unlinks, ipa, stop_level, st);
	return *ptep != NULL;
}

#endif
