/* SPDX-License-Identifier: MIT */
/*
 * The generic walker: pre-order over [start, end), visiting tables before
 * and after their children and every leaf or invalid entry. Visitors may
 * consume runs of entries (walk_leaf_run()), which is how bulk operations
 * avoid a call per entry. The one descent that bypasses it,
 * core_descend(), is in walker.h.
 */
#include "internal.h"

struct walk {
	struct slat_table *t;
	const struct slat_walker *w;
	struct slat_stats *stats;
	uint64_t start, end;
	int stop_level;         /* SLAT_LAST_LEVEL without SLAT_WALK_STOP_LEVEL */
};

static int walk_table(struct walk *wk, slat_pte_t *table, uint32_t nr_entries,
		      int level, uint64_t base, uint64_t addr, uint64_t end);

static int visit(struct walk *wk, struct slat_walk_ctx *ctx,
		 enum slat_visit v)
{
	int ret = wk->w->cb(ctx, v);
	if (ret > 1)
		wk->stats->visited += (uint64_t)ret - 1;
	return ret;
}

/* The first lines of the table read next (walk_next_table()) start the
 * hardware prefetchers on it (the rest of the page was no faster
 * requested too). */
static inline void prefetch_next_table(const struct slat_walk_ctx *ctx)
{
	const char *p = (const char *)walk_next_table(ctx);
	if (!p)
		return;
#pragma GCC unroll 8
	for (int line = 0; line < 8; line++)
		__builtin_prefetch(p + line * 64);
}

static int walk_below(struct walk *wk, struct slat_walk_ctx *ctx, uint64_t addr,
		   uint64_t end)
{
	struct slat_table *t = wk->t;
	uint64_t size = level_size(t, ctx->level);
	uint64_t lo = addr > ctx->addr ? addr : ctx->addr;
	uint64_t hi = end - ctx->addr < size ? end : ctx->addr + size;
	return walk_table(wk, table_va(t, ctx->old), t->geo.entries,
			  ctx->level + 1, ctx->addr, lo, hi);
}

static bool may_descend(const struct walk *wk, int level)
{
	return level + 1 <= wk->stop_level;
}

static int walk_entry(struct walk *wk, struct slat_walk_ctx *ctx,
		      uint64_t addr, uint64_t end)
{
	uint32_t want = wk->w->flags;
	/* Tested once per value of the entry: a bulk walk passes most
	 * tables by without a visit. */
	bool table = pte_table(wk->t, ctx->old, ctx->level);
	int ret;

	if (table)
		prefetch_next_table(ctx);
	for (;;) {
		if (table) {
			if (!(want & SLAT_VISIT_TABLE_PRE))
				break;
			ret = visit(wk, ctx, SLAT_VISIT_TABLE_PRE);
		} else {
			if (!(want & SLAT_VISIT_LEAF))
				return 1;
			/* A visitor that installs a table goes on below it. */
			ret = visit(wk, ctx, SLAT_VISIT_LEAF);
		}
		if (ret)
			return ret;
		ctx->old = pte_read(ctx->ptep);
		table = pte_table(wk->t, ctx->old, ctx->level);
		/* Shared: another walker changed it into no table; visit that. */
		if (table || !(ctx->flags & SLAT_WALK_SHARED))
			break;
	}

	if (!table || !may_descend(wk, ctx->level))
		return 1;
	ret = walk_below(wk, ctx, addr, end);
	if (ret < 0)
		return ret;
	if (want & SLAT_VISIT_TABLE_POST) {
		ctx->old = pte_read(ctx->ptep);
		ret = visit(wk, ctx, SLAT_VISIT_TABLE_POST);
		if (ret < 0)
			return ret;
	}
	return 1;
}

static int walk_table(struct walk *wk, slat_pte_t *table, uint32_t nr_entries,
		      int level, uint64_t base, uint64_t addr, uint64_t end)
{
	unsigned shift = level_shift(wk->t, level);
	uint32_t i = (uint32_t)((addr - base) >> shift);
	uint32_t last = (uint32_t)(((end - 1 - base) >> shift) + 1);
	if (last > nr_entries)
		last = nr_entries;

	/* Field by field: every one is set below before a visitor sees it. */
	struct slat_walk_ctx ctx;
	ctx.t = wk->t;
	ctx.start = wk->start;
	ctx.end = wk->end;
	ctx.level = level;
	ctx.flags = wk->w->flags;
	ctx.arg = wk->w->arg;
	ctx.stats = wk->stats;
	while (i < last) {
		ctx.ptep = &table[i];
		ctx.old = pte_read(ctx.ptep);
		ctx.addr = base + ((uint64_t)i << shift);
		ctx.nr_left = last - i;
		wk->stats->visited++;
		int ret = walk_entry(wk, &ctx, addr, end);
		if (ret < 0)
			return ret;
		i += (uint32_t)ret;
	}
	return SLAT_OK;
}

int core_walk(struct slat_table *t, uint64_t ipa, uint64_t size,
	      const struct slat_walker *w, struct slat_stats *stats)
{
	struct walk wk = {
		.t = t, .w = w, .stats = stats, .start = ipa, .end = ipa + size,
		.stop_level = (w->flags & SLAT_WALK_STOP_LEVEL) ? w->stop_level
								: SLAT_LAST_LEVEL,
	};
	return walk_table(&wk, t->root, t->geo.root_entries, t->geo.start_level,
			  0, ipa, ipa + size);
}

/* A walker that visits something, with a callback, and a stop level in the
 * table if it asks for one: a zeroed one is refused. */
static bool walker_ok(const struct slat_table *t, const struct slat_walker *w)
{
	const uint32_t visits = SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_PRE |
				SLAT_VISIT_TABLE_POST;
	if (!w || !w->cb || !(w->flags & visits) ||
	    (w->flags & ~(visits | SLAT_WALK_SHARED | SLAT_WALK_STOP_LEVEL)))
		return false;
	return !(w->flags & SLAT_WALK_STOP_LEVEL) ||
	       (w->stop_level >= t->geo.start_level &&
		w->stop_level <= SLAT_LAST_LEVEL);
}

int slat_walk(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	      const struct slat_walker *w, struct slat_stats *stats)
{
	struct slat_stats none;

	if (!table_live(t) || !walker_ok(t, w))
		return SLAT_E_INVAL;
	int ret = check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;
	if (!stats) {
		core_stats_clear(&none);
		stats = &none;
	}
	return core_walk(t, ipa.ipa, size, w, stats);
}

bool slat_pte_is_valid(const struct slat_table *t, slat_pte_t pte)
{
	return pte_valid(t, pte);
}

bool slat_pte_is_table(const struct slat_table *t, slat_pte_t pte, int level)
{
	return pte_table(t, pte, level);
}

bool slat_pte_is_leaf(const struct slat_table *t, slat_pte_t pte, int level)
{
	return pte_leaf(t, pte, level);
}

slat_pa_t slat_pte_pa(const struct slat_table *t, slat_pte_t pte, int level)
{
	(void)level;
	return t->fmt->pte_pa(t, pte);
}

uint32_t slat_pte_attrs(const struct slat_table *t, slat_pte_t pte, int level)
{
	(void)level;
	return t->fmt->leaf_attrs(t, pte);
}

void *slat_pte_table(const struct slat_table *t, slat_pte_t pte)
{
	return table_va(t, pte);
}

slat_pte_t *core_fault_entry(const struct slat_table *t,
			     struct slat_leaf_memo *m, uint64_t unlinks,
			     uint64_t ipa, int stop_level,
			     struct slat_stats *st)
{
	const int start = t->geo.start_level;
	int l = stop_level;
	struct descent d;

	if (m->unlinks != unlinks)
		core_memo_forget(m, unlinks);
	while (l > start && !memo_path_holds(t, m, l, ipa))
		l--;
	if (l > start)
		d = descend_path(t, m, l, ipa, stop_level, st);
	else
		d = descend(t, descend_root(t), ipa, stop_level, DESCEND_FAST,
			    m, st);
	/* At @stop_level below the root, the path's table there is the
	 * entry's; a leaf at the start level has none. */
	return d.level == stop_level && d.level > start && !d.pte ? d.ptep
								  : NULL;
}
