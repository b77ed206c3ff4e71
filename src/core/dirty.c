/* SPDX-License-Identifier: MIT */
/*
 * Hardware dirty state (Arm DBM, EPT D bits) and the CPU's own walk: what
 * the hardware does to the table when it translates an access.
 */
#include "internal.h"

struct dirty_data {
	struct core_op op;
	uint64_t *bitmap;       /* bit 0: op.ipa */
	bool clear;
	uint64_t dirty_pages;
};

/* Bits [first, first + n) of @bitmap set, a word (or part of one) at a
 * time. */
static void set_bits(uint64_t *bitmap, uint64_t first, uint64_t n)
{
	while (n) {
		unsigned off = (unsigned)(first & 63);
		uint64_t k = 64 - off < n ? 64 - off : n;
		uint64_t ones = k == 64 ? ~0ull : (1ull << k) - 1;
		bitmap[first / 64] |= ones << off;
		first += k;
		n -= k;
	}
}

/* The @n leaves from @addr at ctx's level are dirty: their pages inside
 * the range are reported. */
static void report_dirty(const struct slat_walk_ctx *ctx, struct dirty_data *d,
			 uint64_t addr, uint32_t n)
{
	uint64_t lo = addr > ctx->start ? addr : ctx->start;
	uint64_t hi = addr + n * level_size(ctx->t, ctx->level);
	if (hi > ctx->end)
		hi = ctx->end;
	unsigned g = ctx->t->geo.granule_shift;
	set_bits(d->bitmap, (lo - d->op.ipa) >> g, (hi - lo) >> g);
	d->dirty_pages += (hi - lo) >> g;
}

/* Cleaning is the opposite of the CPU's dirty update. */
static void clean_change(const struct slat_table *t, slat_pte_t *clear,
			 slat_pte_t *set)
{
	*clear = t->fmt->dirty_bit_clear ? 0 : t->fmt->dirty_bit;
	*set = t->fmt->dirty_bit_clear ? t->fmt->dirty_bit : 0;
}

/* Report a dirty leaf, and clean it, retrying against concurrent faults. */
static int dirty_step(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
		      slat_pte_t pte, uint64_t addr, void *arg)
{
	struct dirty_data *d = arg;
	struct slat_table *t = ctx->t;
	slat_pte_t clear, set, was;

	if (!pte_valid(t, pte) || !leaf_dirty(t, pte))
		return 0;
	report_dirty(ctx, d, addr, 1);
	if (!d->clear)
		return 0;
	clean_change(t, &clear, &set);
	while (!pte_try_update(t, walk_writers(ctx), ptep, pte, clear, set,
				 &was)) {
		ctx->stats->retries++;
		pte = pte_read(ptep);
		if (!pte_leaf(t, pte, ctx->level) || !leaf_dirty(t, pte))
			return 0;
	}
	if (d->op.policy == SLAT_FLUSH_ENTRY)
		core_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,
			      ctx->stats);
	return 1;
}

/*
 * What the line loop does for dirty_read: lines of dirty leaves in a row
 * are reported as one run when it ends, and cleaned as they come when
 * asked (pte_write_line(): beside other walkers, each entry takes the
 * step); a line with none ends the run.
 */
struct dirty_lines {
	struct dirty_data *d;
	bool clear;             /* d->clear, a constant at each call */
	struct line_writer w;
	slat_pte_t *run;        /* the first line of the run, or NULL */
	uint32_t reported;      /* leaves in the runs reported */
};

/* The dirty leaves [l->run, end) of c's run, if any, are reported. */
static SLAT_ALWAYS_INLINE void dirty_run_end(const struct slat_walk_ctx *c,
					     struct dirty_lines *l,
					     const slat_pte_t *end)
{
	if (!l->run)
		return;
	uint32_t n = (uint32_t)(end - l->run);
	report_dirty(c, l->d, c->addr + ((uint64_t)(l->run - c->ptep) <<
					 c->t->geo.granule_shift), n);
	l->reported += n;
	l->run = NULL;
}

static SLAT_ALWAYS_INLINE bool
dirty_line_act(const struct slat_walk_ctx *c, slat_pte_t *p,
	       const struct line *line, enum line_kind kind, slat_pte_t all,
	       void *arg)
{
	struct dirty_lines *l = arg;
	if (kind == LINE_NONE) {
		dirty_run_end(c, l, p);
		return true;
	}
	if (l->clear && !pte_write_line(c->t, &l->w, p, line, all))
		return false;
	if (!l->run)
		l->run = p;
	return true;
}

/*
 * The line loop for dirty_read, @who a constant: whole lines with no dirty
 * leaf skipped, whole lines of dirty ones reported (and cleaned); the
 * first that is neither is the step's.
 */
static SLAT_ALWAYS_INLINE uint32_t
dirty_lines_as(const struct slat_walk_ctx *c, uint32_t max,
	       struct dirty_data *d, uint32_t *changed, enum pte_writers who,
	       const bool clean)
{
	const struct slat_table *t = c->t;
	struct line_rule r = {
		.present = t->fmt->present_mask,
		.want = t->fmt->dirty_match,
		.refuse = t->fmt->dirty_mask & ~t->fmt->dirty_match,
		.report = true,
	};
	slat_pte_t clear, set;
	clean_change(t, &clear, &set);
	struct dirty_lines l = { .d = d, .clear = clean,
				 .w = line_writer_of(t, who, clear, set) };
	if (clean) {
		r.clear = clear;
		r.set = set;
	}
	uint32_t n = line_loop(c, max, &r, dirty_line_act, &l);
	dirty_run_end(c, &l, &c->ptep[n]);
	if (clean)
		*changed += l.reported;
	return n;
}

/* dirty_lines_as() for walk_leaf_groups() (a leaf_group_fn), a copy for
 * reading alone and for cleaning with each writer. */
static SLAT_ALWAYS_INLINE uint32_t
dirty_groups(const struct slat_walk_ctx *c, uint32_t max, void *arg,
	     uint32_t *changed)
{
	struct dirty_data *d = arg;
	if (!d->clear)
		return dirty_lines_as(c, max, d, changed, PTE_ALONE, false);
	switch (walk_writers(c)) {
	case PTE_ALONE:
		return dirty_lines_as(c, max, d, changed, PTE_ALONE, true);
	case PTE_WITH_CPU:
		return dirty_lines_as(c, max, d, changed, PTE_WITH_CPU, true);
	default:
		return dirty_lines_as(c, max, d, changed, PTE_SHARED, true);
	}
}

static int dirty_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct dirty_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	uint32_t changed;

	/* Cleaning a whole block would lose the state of pages outside. */
	if (d->clear && pte_valid(t, ctx->old) && !walk_entry_covered(ctx) &&
	    leaf_dirty(t, ctx->old)) {
		int ret = core_split_block(ctx, d->op.cache);
		return ret ? op_fail(&d->op, ctx->addr, ret) : 0;
	}
	/* A per-entry invalidation needs the step at every leaf. */
	int n = d->op.policy == SLAT_FLUSH_ENTRY
		? walk_leaf_run(ctx, dirty_step, d, &changed)
		: walk_leaf_groups(ctx, dirty_groups, d, dirty_step, d, &changed);
	ctx->stats->written[SLAT_WRITE_ATTR] += changed;
	d->op.changed |= changed != 0;
	return n;
}

int64_t slat_dirty_read(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			uint64_t *bitmap, size_t words, bool clear,
			struct slat_op *args)
{
	/* Set field by field: an initializer would zero the op's counters
	 * with a memset, which the freestanding core does not have. */
	struct dirty_data d;
	d.bitmap = bitmap;
	d.clear = clear;
	d.dirty_pages = 0;
	int ret = core_op_begin(&d.op, t, ipa, size, args, SLAT_SHARED);
	if (ret)
		return ret;
	uint64_t pages = size >> t->geo.granule_shift;
	if (!bitmap || words < (pages + 63) / 64)
		return core_op_refuse(&d.op, SLAT_E_INVAL);
	if (!(t->cfg.features & SLAT_FEAT_HWDIRTY))
		return core_op_refuse(&d.op, SLAT_E_CONFIG);

	for (uint64_t i = 0; i < (pages + 63) / 64; i++)
		bitmap[i] = 0;
	ret = core_op_walk(&d.op, dirty_visitor, &d, SLAT_VISIT_LEAF,
			   SLAT_LAST_LEVEL);
	ret = core_op_end(&d.op, ret);
	return ret ? ret : (int64_t)d.dirty_pages;
}

int slat_hw_access(struct slat_table *t, slat_ipa_t ipa, unsigned access,
		   struct slat_hw_result *res)
{
	unsigned kind = access & ~SLAT_ACCESS_USER;
	if (!table_live(t) || !res || kind > SLAT_ACCESS_EXEC_EL0 ||
	    ((access & SLAT_ACCESS_USER) && kind > SLAT_ACCESS_WRITE))
		return SLAT_E_INVAL;
	if (ipa.ipa >> t->geo.ia_bits)
		return SLAT_E_RANGE;

	for (;;) {
		slat_pte_t new;
		struct descent d = core_descend(t, descend_root(t), ipa.ipa,
						SLAT_LAST_LEVEL, DESCEND_CPU,
						NULL);
		slat_pte_t pte = d.pte, *ptep = d.ptep;
		int level = d.level;
		res->level = level;
		/* A locked entry is invalid to the hardware. */
		if (!pte_valid(t, pte)) {
			res->fault = SLAT_FAULT_TRANSLATION;
			return SLAT_OK;
		}
		res->fault = t->fmt->hw_update(t, pte, access, &new);
		/* The CPU's own atomic update; changed under it: walk again. */
		if (res->fault == SLAT_FAULT_NONE && new != pte &&
		    !pte_cpu_update(t, ptep, pte, new))
			continue;
		uint64_t base = ipa.ipa & ~(level_size(t, level) - 1);
		res->pa = slat_pa(t->fmt->pte_pa(t, pte).pa + (ipa.ipa - base));
		res->attrs = t->fmt->leaf_attrs(t, new);
		return SLAT_OK;
	}
}
