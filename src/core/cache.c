/* SPDX-License-Identifier: MIT */
/*
 * D-cache maintenance of guest memory without FEAT_S2FWB: slat_flush(),
 * and the clean of what an unmap takes away.
 */
#include "internal.h"

void core_cmo_kinds(struct slat_table *t, slat_pa_t pa, uint64_t bytes,
		    unsigned kinds, struct slat_stats *st)
{
	cmo_count(st, bytes, kinds);
	cmo_call(t, pa, bytes, kinds);
}

/* What the clean needs of every entry, in locals: the loops read every
 * entry of a table being freed. */
struct cmo_masks {
	slat_pte_t present, memattr, wb, oa_mask;
	uint64_t size;
};

/* A cacheable leaf joins the run (pte_valid() and pte_cacheable(), the
 * masks hoisted). */
static SLAT_ALWAYS_INLINE void
cmo_leaf(struct slat_table *t, slat_pte_t pte, const struct cmo_masks *m,
	 struct cmo_run *r, struct slat_stats *st)
{
	if (!(pte & m->present) || (pte & m->memattr) != m->wb)
		return;
	uint64_t pa = m->oa_mask ? pte & m->oa_mask : t->fmt->pte_pa(t, pte).pa;
	cmo_run_add(t, r, pa, m->size, st);
}

/*
 * A last-level table whose output addresses are in place (oa_mask): the
 * lines of cacheable pages that continue one another from a line's first
 * join the run in one add (leaf_lines_continue(); their OR and AND are not
 * needed); a line that does not, leaf by leaf.
 */
static void cmo_lines(struct slat_table *t, const slat_pte_t *table,
		      const struct cmo_masks *m, struct cmo_run *run,
		      struct slat_stats *st)
{
	const slat_pte_t same = m->oa_mask | m->memattr | m->present;
	const slat_pte_t *end = table + t->geo.entries;
	struct cmo_run r = *run;
	slat_pte_t none = 0;

	for (const slat_pte_t *p = table; p != end;) {
		slat_pte_t first = pte_peek(p);
		if ((first & m->present) && (first & m->memattr) == m->wb) {
			const slat_pte_t *stop = leaf_lines_continue(
				p, end, p, first, m->size, same, &none, &none);
			if (stop != p) {
				cmo_run_add(t, &r, first & m->oa_mask,
					    (uint64_t)(stop - p) * m->size, st);
				p = stop;
				continue;
			}
		}
		for (int j = 0; j < LEAF_GROUP; j++)
			cmo_leaf(t, pte_peek(&p[j]), m, &r, st);
		p += LEAF_GROUP;
	}
	*run = r;
}

struct cmo_walk {
	struct slat_table *t;
	struct cmo_masks m;
	struct cmo_run *run;
	struct slat_stats *st;
};

/* A last-level table whose output addresses are in place whole, else
 * leaf by leaf; tables below are walked. */
static SLAT_ALWAYS_INLINE int cmo_pre(void *arg, slat_pte_t *ptep,
				      uint32_t nr_left, int level,
				      uint64_t addr)
{
	(void)addr;
	struct cmo_walk *w = arg;
	struct slat_table *t = w->t;
	struct cmo_masks m = w->m;

	m.size = level_size(t, level);
	if (level == SLAT_LAST_LEVEL && m.oa_mask &&
	    nr_left == t->geo.entries) {
		cmo_lines(t, ptep, &m, w->run, w->st);
		return (int)nr_left;
	}
	if (subtree_table_empty(t, ptep, nr_left, level))
		return (int)nr_left;
	/* The entries up to the next table, in one go. */
	uint32_t n;
	for (n = 0; n < nr_left; n++) {
		slat_pte_t pte = pte_peek(&ptep[n]);
		if (pte_table(t, pte, level))
			break;
		cmo_leaf(t, pte, &m, w->run, w->st);
	}
	return (int)n;
}

void core_cmo_subtree(struct slat_table *t, const slat_pte_t *table, int level,
		      struct cmo_run *run, struct slat_stats *st)
{
	struct cmo_walk w = {
		.t = t,
		.m = { .present = t->fmt->present_mask,
		       .memattr = t->fmt->memattr_mask,
		       .wb = t->normal_memattr, .oa_mask = t->oa_mask },
		.run = run, .st = st,
	};
	core_subtree_walk(t, (slat_pte_t *)table, level, 0, cmo_pre, NULL, &w);
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
