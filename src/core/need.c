/* SPDX-License-Identifier: MIT */
/*
 * What an operation will take from its page cache, counted before it runs:
 * the generic walker reads the tables that exist, and arithmetic counts
 * what goes below an entry that gets a new table (an empty one map must
 * fill with smaller leaves, or a block that is split). Both follow the
 * operations' own rules: leaf_fits() for map, and for the others a block
 * is split when the range covers it only in part and the operation would
 * change it.
 */
#include "internal.h"

struct need_walk {
	const struct slat_need *req;
	const struct slat_table *t;
	uint64_t end;
	unsigned cap_shift;     /* map: the largest leaf, log2 bytes */
	int target;             /* split: the level of the leaves */
	uint64_t pages;
};

static uint64_t need_pa(const struct need_walk *n, uint64_t addr)
{
	return n->req->pa.pa + (addr - n->req->ipa.ipa);
}

/*
 * Nothing below the entry at @level where the range starts at @addr needs
 * a page: map can put one leaf there (replacing what is there), the others
 * cover it whole (a table is unlinked or walked, a block kept whole).
 */
static bool need_none_below(const struct need_walk *n, int level,
			    uint64_t addr)
{
	if (n->req->kind == SLAT_OP_MAP)
		return leaf_fits(n->t, level, addr, need_pa(n, addr),
				 n->end - addr, n->cap_shift);
	uint64_t size = level_size(n->t, level);
	return (addr & (size - 1)) == 0 && n->end - addr >= size;
}

static uint64_t entry_pages(const struct need_walk *n, int level, uint64_t a,
			    uint64_t b);

/*
 * Pages below a new table of @level that handles [a, b): every entry in it
 * is one the operation changes (empty for map, part of a split block for
 * the others). Whole entries all need the same (their IPA and PA are
 * aligned alike), so they are counted once and multiplied: a few steps per
 * level whatever the size.
 */
static uint64_t table_pages(const struct need_walk *n, int level, uint64_t a,
			    uint64_t b)
{
	uint64_t size = level_size(n->t, level), pages = 0;

	while (a < b) {
		uint64_t entry_end = (a | (size - 1)) + 1;
		if ((a & (size - 1)) == 0 && b - a >= size) {
			uint64_t whole = (b - a) / size;
			pages += whole * entry_pages(n, level, a, a + size);
			a += whole * size;
			continue;
		}
		if (entry_end > b || entry_end == 0)
			entry_end = b;
		pages += entry_pages(n, level, a, entry_end);
		a = entry_end;
	}
	return pages;
}

/* An entry of @level the operation changes, for [a, b) inside it: nothing,
 * or a new table and what goes below it. */
static uint64_t entry_pages(const struct need_walk *n, int level, uint64_t a,
			    uint64_t b)
{
	if (need_none_below(n, level, a))
		return 0;
	return 1 + table_pages(n, level + 1, a, b);
}

/* Whether an operation other than map splits the valid leaf @pte that the
 * range covers in part: only if it would change it. */
static bool splits_block(const struct need_walk *n, slat_pte_t pte)
{
	const struct slat_table *t = n->t;
	switch (n->req->kind) {
	case SLAT_OP_UNMAP:
		return true;
	case SLAT_OP_WRPROTECT:
		return !wp_done(t, pte);
	case SLAT_OP_RELAX:
		return !relax_done(t, pte, n->req->attrs);
	case SLAT_OP_RESTRICT:
		return leaf_restricted(t, pte, n->req->attrs) != pte;
	default: /* SLAT_OP_DIRTY_CLEAR */
		return leaf_dirty(t, pte);
	}
}

/* A leaf or invalid entry that the operation cannot handle whole: whether
 * it gets a new table. */
static bool gets_table(const struct need_walk *n, const struct slat_walk_ctx *ctx)
{
	const struct slat_table *t = n->t;
	bool valid = pte_valid(t, ctx->old) && !pte_locked(t, ctx->old);
	if (n->req->kind != SLAT_OP_MAP)
		return valid && splits_block(n, ctx->old);
	/* Map keeps a leaf that translates as asked, splits another; with
	 * SLAT_MAP_BREAK_BLOCK (and not NO_REPLACE) it breaks any. */
	uint64_t a = walk_first_addr(ctx);
	uint32_t f = n->req->flags;
	if ((f & SLAT_MAP_BREAK_BLOCK) && !(f & SLAT_MAP_NO_REPLACE))
		return true;
	return !valid || !leaf_translates(t, ctx->old, ctx->addr, a,
					  need_pa(n, a), n->req->attrs);
}

static int need_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct need_walk *n = ctx->arg;
	uint64_t a = walk_first_addr(ctx);

	/* The entries after a whole one that needs nothing need nothing
	 * either, up to the range's last (partial) entry. */
	if (need_none_below(n, ctx->level, a))
		return (int)walk_run(ctx);
	if (visit == SLAT_VISIT_TABLE_PRE)
		return 0;
	if (gets_table(n, ctx)) {
		uint64_t size = level_size(n->t, ctx->level);
		uint64_t b = ctx->end - ctx->addr < size ? ctx->end
							 : ctx->addr + size;
		n->pages += 1 + table_pages(n, ctx->level + 1, a, b);
	}
	return 1;
}

/* Split: each block above the target level that the range meets, whole. */
static int split_need_visitor(const struct slat_walk_ctx *ctx,
			      enum slat_visit visit)
{
	(void)visit;
	struct need_walk *n = ctx->arg;
	const struct slat_table *t = n->t;
	if (pte_valid(t, ctx->old) && !pte_locked(t, ctx->old) &&
	    ctx->level < n->target)
		n->pages += split_pages(t, ctx->level, n->target);
	return 1;
}

/* The request's own errors, as the operation would return them. */
static int need_check(const struct slat_table *t, const struct slat_need *req)
{
	if (!table_live(t) || !req || (unsigned)req->kind > SLAT_OP_RESTRICT)
		return SLAT_E_INVAL;
	int ret = check_ipa_range(t, req->ipa.ipa, req->size);
	if (ret)
		return ret;
	if (req->kind == SLAT_OP_DIRTY_CLEAR &&
	    !(t->cfg.features & SLAT_FEAT_HWDIRTY))
		return SLAT_E_CONFIG;
	if (req->kind == SLAT_OP_RELAX || req->kind == SLAT_OP_RESTRICT)
		return check_perms_arg(req->attrs,
				       req->kind == SLAT_OP_RESTRICT);
	if (req->kind != SLAT_OP_MAP)
		return SLAT_OK;
	ret = check_pa_range(t, req->pa.pa, req->size);
	return ret ? ret : t->fmt->check_attrs(t, req->attrs);
}

int64_t slat_pages_needed(const struct slat_table *t,
			  const struct slat_need *req)
{
	int ret = need_check(t, req);
	if (ret)
		return ret;
	struct need_walk n = {
		.req = req, .t = t, .end = req->ipa.ipa + req->size,
		.cap_shift = map_cap_shift(req->flags),
	};
	struct slat_walker w = {
		.cb = need_visitor, .arg = &n,
		.flags = SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_PRE |
			 (req->flags & SLAT_SHARED ? SLAT_WALK_SHARED : 0),
		.stop_level = SLAT_LAST_LEVEL,
	};
	if (req->kind == SLAT_OP_SPLIT) {
		n.target = leaf_level_of_size(t, req->leaf_size);
		if (n.target < 0)
			return n.target;
		/* Tables whose entries are at the target level or below hold
		 * nothing to split. */
		w.cb = split_need_visitor;
		w.flags = (w.flags & ~SLAT_VISIT_TABLE_PRE) | SLAT_WALK_STOP_LEVEL;
		w.stop_level = n.target - 1;
	}
	struct slat_stats st;
	core_stats_clear(&st);
	/* Read only: the walker writes nothing its visitor does not. */
	ret = core_walk((struct slat_table *)t, req->ipa.ipa, req->size, &w, &st);
	return ret ? ret : (int64_t)n.pages;
}
