/* SPDX-License-Identifier: MIT */
/*
 * D-cache maintenance of guest memory without FEAT_S2FWB: slat_flush(),
 * and the clean of what an unmap takes away.
 */
#include "internal.h"

/* core_cmo_subtree()'s loop over one table; @tables is a constant at each
 * call, so that the last level's copy tests no entry for a table. */
static SLAT_ALWAYS_INLINE void
cmo_table(struct slat_table *t, const slat_pte_t *table, int level, bool tables,
	  struct cmo_run *run, struct slat_stats *st)
{
	/* Locals: the loop reads every entry of a table being freed. */
	const slat_pte_t present = t->fmt->present_mask;
	const slat_pte_t memattr = t->fmt->memattr_mask, wb = t->normal_memattr;
	const uint64_t size = level_size(t, level), oa_mask = t->oa_mask;
	const uint32_t entries = t->geo.entries;
	struct cmo_run r = *run;

	for (uint32_t i = 0; i < entries; i++) {
		/* A line of cacheable pages that continues one another: one
		 * test. The OR and AND are not needed. */
		slat_pte_t first = pte_peek(&table[i]), none;
		if (!tables && oa_mask && !(i & (LEAF_GROUP - 1)) &&
		    (first & present) && (first & memattr) == wb &&
		    leaf_group_continues(&table[i], first, size,
					 oa_mask | memattr | present, &none,
					 &none)) {
			cmo_run_add(t, &r, first & oa_mask, LEAF_GROUP * size, st);
			i += LEAF_GROUP - 1;
			continue;
		}
		slat_pte_t pte = first;
		if (tables && pte_table(t, pte, level)) {
			*run = r;
			core_cmo_subtree(t, table_va(t, pte), level + 1, run, st);
			r = *run;
			continue;
		}
		/* pte_valid() and pte_cacheable(), the masks hoisted */
		if (!(pte & present) || (pte & memattr) != wb)
			continue;
		uint64_t pa = oa_mask ? pte & oa_mask : t->fmt->pte_pa(t, pte).pa;
		if (!cmo_run_extend(&r, pa, size)) {
			cmo_run_emit(t, r, st);
			r.pa = pa;
			r.bytes = size;
		}
	}
	*run = r;
}

void core_cmo_subtree(struct slat_table *t, const slat_pte_t *table, int level,
		      struct cmo_run *run, struct slat_stats *st)
{
	if (level == SLAT_LAST_LEVEL)
		cmo_table(t, table, level, false, run, st);
	else
		cmo_table(t, table, level, true, run, st);
}

struct flush_data {
	struct core_op op;
	struct cmo_run run;
	bool any;
};

/* The part of a cacheable leaf inside the range joins the current run. */
static int flush_step(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
		      slat_pte_t pte, uint64_t addr, void *arg)
{
	(void)ptep;
	struct flush_data *d = arg;
	struct slat_table *t = ctx->t;
	if (!pte_valid(t, pte) || !pte_cacheable(t, pte))
		return 0;
	uint64_t lo = addr > ctx->start ? addr : ctx->start;
	uint64_t hi = addr + level_size(t, ctx->level);
	if (hi > ctx->end)
		hi = ctx->end;
	d->any = true;
	cmo_run_add(t, &d->run, pte_oa(t, pte).pa + (lo - addr), hi - lo,
		    ctx->stats);
	return 0;
}

static int flush_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	uint32_t changed;
	return walk_leaf_run(ctx, flush_step, ctx->arg, &changed);
}

int slat_flush(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	       struct slat_op *args)
{
	/* Set field by field: an initializer would zero the op's counters
	 * with a memset, which the freestanding core does not have. */
	struct flush_data d;
	d.run = (struct cmo_run){ 0, 0 };
	d.any = false;
	int ret = core_op_begin(&d.op, t, ipa, size, args, SLAT_SHARED);
	if (ret)
		return ret;
	if (cmo_needed(t)) {
		ret = core_op_walk(&d.op, flush_visitor, &d, SLAT_VISIT_LEAF,
				   SLAT_LAST_LEVEL);
		cmo_run_emit(t, d.run, d.op.st);
	}
	d.op.policy = SLAT_FLUSH_NONE; /* restricts nothing */
	ret = core_op_end(&d.op, ret);
	return ret ? ret : d.any ? SLAT_OK : SLAT_NOTHING_TO_DO;
}
