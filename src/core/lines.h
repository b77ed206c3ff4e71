/* SPDX-License-Identifier: MIT */
/*
 * Lines of entries: the bulk loops over a last-level run, a 64-byte line
 * (LEAF_GROUP entries) at a time, read and written in units (PTE_LANES
 * entries per access, a property of the build: each loop is written once).
 * One rule decides a line (line_decide()), one reduction gives its AND and
 * OR (line_and(), line_or()), one writer stores it (pte_write_line()).
 * Lines start at line-aligned entries; what comes before the first and
 * after the last whole line is the per-entry step's.
 */
#ifndef SLAT_CORE_LINES_H
#define SLAT_CORE_LINES_H

#include "walker.h"

/* Entries per line: one 64-byte cache line. */
#define LEAF_GROUP 8
#define LINE_UNITS (LEAF_GROUP / PTE_LANES)

/* A line's entries, as read once. */
struct line {
	pte_unit u[LINE_UNITS];
};

/* The line at @p (line aligned). */
static SLAT_ALWAYS_INLINE void line_peek(const slat_pte_t *p, struct line *l)
{
#pragma GCC unroll 8
	for (int j = 0; j < LINE_UNITS; j++)
		l->u[j] = pte_peek_unit(&p[j * PTE_LANES]);
}

/* The AND and the OR of a line's entries, lane by lane (a loop over lines
 * keeps them so and reduces the lanes once)... */
static SLAT_ALWAYS_INLINE pte_unit line_and_units(const struct line *l)
{
	pte_unit r = l->u[0];
#pragma GCC unroll 8
	for (int j = 1; j < LINE_UNITS; j++)
		r &= l->u[j];
	return r;
}

static SLAT_ALWAYS_INLINE pte_unit line_or_units(const struct line *l)
{
	pte_unit r = l->u[0];
#pragma GCC unroll 8
	for (int j = 1; j < LINE_UNITS; j++)
		r |= l->u[j];
	return r;
}

/* ...and of all of them. */
static SLAT_ALWAYS_INLINE slat_pte_t line_and(const struct line *l)
{
	return unit_and(line_and_units(l));
}

static SLAT_ALWAYS_INLINE slat_pte_t line_or(const struct line *l)
{
	return unit_or(line_or_units(l));
}

/* Entry @j of the line. */
static SLAT_ALWAYS_INLINE slat_pte_t line_entry(const struct line *l,
					       unsigned j)
{
	return unit_lane(l->u[j / PTE_LANES], j % PTE_LANES);
}

/*
 * The one rule for what a bulk loop does to a line: it acts on the valid
 * leaves with every bit of @want and none of @refuse (dirty_read: the dirty
 * ones; write protection and the access flag: every valid leaf), which
 * become pte_apply(leaf, @clear, @set). Unless @report, an entry it leaves
 * as it was is not acted on; with @report (dirty_read, which reports what
 * it selects) it is.
 */
struct line_rule {
	slat_pte_t present;
	slat_pte_t want, refuse;
	slat_pte_t clear, set;
	bool report;
};

enum line_kind { LINE_MIXED, LINE_NONE, LINE_ALL };

/*
 * Whether the rule acts on every entry of a line, from their AND alone:
 * when it refuses no bit and sets none (the common case of a bulk change),
 * the OR is only needed for lines it does not act on whole.
 */
static SLAT_ALWAYS_INLINE bool line_all_from_and(slat_pte_t all,
						 const struct line_rule *r)
{
	return (all & r->present) && (all & r->want) == r->want &&
	       (r->report || (all & r->clear));
}

/* line_all_from_and() may decide for the rule: it refuses no bit and sets
 * none. */
static SLAT_ALWAYS_INLINE bool line_rule_and_only(const struct line_rule *r)
{
	return !r->refuse && !r->set;
}

/*
 * What the rule @r does to a line whose entries' AND is @all and OR @any:
 * acts on every entry (LINE_ALL), on none (LINE_NONE), or it depends on the
 * entry (LINE_MIXED: the per-entry step's). Every entry: each valid, with
 * the wanted bits and none refused, and changed (a bit to clear they all
 * have, or a bit to set none has). None: every entry empty, or a wanted
 * bit none has, or a refused bit all have, or every one valid and already
 * as the change leaves it. Locked entries are non-zero and invalid: never
 * in a LINE_ALL, and in a LINE_NONE only where nothing wanted is in them.
 */
static SLAT_ALWAYS_INLINE enum line_kind
line_decide(slat_pte_t all, slat_pte_t any, const struct line_rule *r)
{
	if (!any || (~any & r->want) || (all & r->refuse))
		return LINE_NONE;
	if (!(all & r->present) || (all & r->want) != r->want ||
	    (any & r->refuse))
		return LINE_MIXED;
	if (r->report || (all & r->clear) || (~any & r->set))
		return LINE_ALL;
	if (!(any & r->clear) && (all & r->set) == r->set)
		return LINE_NONE;
	return LINE_MIXED;
}

/*
 * How pte_write_line() writes for a loop: who else may write the entries,
 * the change, and what tells that the CPU has nothing left to set in a
 * line of valid leaves (cpu_done_with() of each: young, and dirty by
 * leaf_dirty()'s test). Built once per loop (line_writer_of()), in locals:
 * the stores to entries may alias any 64-bit field in memory.
 */
struct line_writer {
	enum pte_writers who;
	slat_pte_t clear, set;
	pte_unit keep, add;      /* ~clear and set, every lane */
	slat_pte_t young, dirty_want, dirty_refuse;
};

static SLAT_ALWAYS_INLINE struct line_writer
line_writer_of(const struct slat_table *t, enum pte_writers who,
	       slat_pte_t clear, slat_pte_t set)
{
	/* Without hardware updates nothing is left to the CPU (PTE_ALONE);
	 * dirty_want ~0 then makes line_cpu_done() false. */
	bool hw = hw_updates_ptes(t);
	return (struct line_writer){
		.who = who, .clear = clear, .set = set,
		.keep = unit_splat(~clear), .add = unit_splat(set),
		.young = t->fmt->young_bit,
		.dirty_want = hw ? t->fmt->dirty_match : ~0ull,
		.dirty_refuse = t->fmt->dirty_mask & ~t->fmt->dirty_match,
	};
}

/* The CPU has nothing left to set in any entry of the line @l of valid
 * leaves, whose AND is @all (its OR only read where a refused bit can
 * tell). */
static SLAT_ALWAYS_INLINE bool line_cpu_done(const struct line_writer *w,
					     const struct line *l,
					     slat_pte_t all)
{
	return (all & w->young) && (all & w->dirty_want) == w->dirty_want &&
	       (!w->dirty_refuse || !(line_or(l) & w->dirty_refuse));
}

/**
 * pte_write_line() - the writer's line mode: every entry of the line @l
 * read at @p becomes pte_apply(entry, @w->clear, @w->set).
 * @t: the table.
 * @w: who else may write the entries (pte_writers_of()), the change.
 * @p: the line (line aligned).
 * @l: its entries as read; every one a valid leaf.
 * @all: their AND.
 *
 * As pte_write() would for each: nobody else, or only the CPU where it has
 * nothing left to set in any of them (line_cpu_done()): unit stores;
 * beside the CPU otherwise, a CAS loop per entry. Other walkers may change
 * any entry: false, nothing written (the per-entry step's).
 */
static SLAT_ALWAYS_INLINE bool
pte_write_line(const struct slat_table *t, const struct line_writer *w,
	       slat_pte_t *p, const struct line *l, slat_pte_t all)
{
	slat_pte_t was;

	if (w->who == PTE_SHARED)
		return false;
	if (w->who == PTE_ALONE || line_cpu_done(w, l, all)) {
#pragma GCC unroll 8
		for (int j = 0; j < LINE_UNITS; j++)
			pte_write_unit(&p[j * PTE_LANES],
				       (l->u[j] & w->keep) | w->add);
		return true;
	}
#pragma GCC unroll 8
	for (unsigned j = 0; j < LEAF_GROUP; j++)
		pte_write(t, PTE_WITH_CPU, &p[j], line_entry(l, j), w->clear,
			  w->set, &was, false);
	return true;
}

/*
 * What a line loop does with a line the rule decided at once (LINE_ALL or
 * LINE_NONE): false ends the loop there, for the per-entry step to take
 * the line. Inlined: @kind is a constant at each call.
 */
typedef bool (*line_act_fn)(const struct slat_walk_ctx *c, slat_pte_t *p,
			    const struct line *l, enum line_kind kind,
			    slat_pte_t all, void *arg);

/*
 * The one line loop: from the line-aligned c->ptep over the whole lines of
 * the @max entries, each decided by @r and handed to @act; the first
 * LINE_MIXED line, or the first @act refuses, ends it. Returns the entries
 * dealt with.
 */
static SLAT_ALWAYS_INLINE uint32_t
line_loop(const struct slat_walk_ctx *c, uint32_t max, const struct line_rule *r,
	  line_act_fn act, void *arg)
{
	/* Pointer-sized: no widening per line. In a local: the stores to
	 * entries may alias the caller's rule. */
	slat_pte_t *p = c->ptep, *end = p + (max & ~(LEAF_GROUP - 1u));
	const struct line_rule rule = *r;
	const bool and_only = line_rule_and_only(&rule);

	r = &rule;
	for (; p != end; p += LEAF_GROUP) {
		struct line l;
		line_peek(p, &l);
		slat_pte_t all = line_and(&l);
		if (and_only && line_all_from_and(all, r)) {
			if (!act(c, p, &l, LINE_ALL, all, arg))
				break;
			continue;
		}
		slat_pte_t any = line_or(&l);
		enum line_kind k = line_decide(all, any, r);
		if (k == LINE_MIXED)
			break;
		if (k == LINE_NONE ? !act(c, p, &l, LINE_NONE, all, arg)
				   : !act(c, p, &l, LINE_ALL, all, arg))
			break;
	}
	return (uint32_t)(p - c->ptep);
}

/*
 * What a bulk loop does to whole lines of the @max entries from the
 * line-aligned c->ptep, at the last level: it returns how many it dealt
 * with, up to the first line that needs the per-entry step, and adds the
 * entries it changed to *@changed. Inlined.
 */
typedef uint32_t (*leaf_group_fn)(const struct slat_walk_ctx *c, uint32_t max,
				  void *garg, uint32_t *changed);

/* Entries from @ptep to the next line boundary (0 on one). */
static SLAT_ALWAYS_INLINE uint32_t line_head(const slat_pte_t *ptep)
{
	return (uint32_t)((LEAF_GROUP - ((uintptr_t)ptep / sizeof(*ptep))) &
			  (LEAF_GROUP - 1));
}

/**
 * walk_leaf_groups() - walk_leaf_run() in lines: at the last level @group
 * deals with whole lines it can decide at once (nothing to do, or the same
 * change to each), @step with the others, the entries before the first
 * line boundary and the tail.
 * @ctx: the visited entry.
 * @group: the line loop; inlined.
 * @garg: passed to @group.
 * @step: for the other entries; inlined.
 * @arg: passed to @step.
 * @changed: receives how many entries were changed.
 *
 * Return: as walk_leaf_run().
 */
static SLAT_ALWAYS_INLINE int
walk_leaf_groups(const struct slat_walk_ctx *ctx, leaf_group_fn group,
		 void *garg, leaf_step_fn step, void *arg, uint32_t *changed)
{
	if (ctx->level != SLAT_LAST_LEVEL)
		return walk_leaf_run(ctx, step, arg, changed);
	struct slat_walk_ctx c = *ctx;
	uint64_t size = level_size(c.t, c.level);
	uint32_t max = walk_run(&c), n = 0, done = 0;
	uint32_t head = line_head(c.ptep);

	for (;;) {
		uint32_t k = head ? 0 : group(&c, max - n, garg, &done);
		n += k;
		if (n == max)
			break;
		/* Entries up to a line boundary, a line that needs the step,
		 * or the tail shorter than one. */
		c.ptep += k;
		c.addr += (uint64_t)k * size;
		c.nr_left = head ? head : LEAF_GROUP;
		if (c.nr_left > max - n)
			c.nr_left = max - n;
		head = 0;
		uint32_t stepped;
		int m = leaf_run_loop(&c, false, step, arg, &stepped);
		done += stepped;
		if (m < 0) {
			*changed = done;
			return m;
		}
		n += (uint32_t)m;
		c.ptep += m;
		c.addr += (uint64_t)m * size;
		if (n == max)
			break;
	}
	*changed = done;
	return (int)n;
}

/*
 * An in-place change of valid leaves (write protection, the access flag):
 * each becomes pte_apply(leaf, @clear, @set), in locals hoisted out of the
 * loop; @present is the format's. A leaf changes exactly when that differs
 * from it.
 */
struct leaf_update {
	slat_pte_t present, clear, set;
};

/* What a line update does: unchanged lines counted, changed ones written
 * as pte_write() would (w.who a constant at each call). */
struct update_lines {
	const struct slat_table *t;
	struct line_writer w;
	/* Counted in the lines left alone, the rarer kind where a bulk
	 * change runs: the changing loop keeps no counter. */
	uint32_t unchanged;
};

static SLAT_ALWAYS_INLINE bool
update_line_act(const struct slat_walk_ctx *c, slat_pte_t *p,
		const struct line *l, enum line_kind kind, slat_pte_t all,
		void *arg)
{
	(void)c;
	struct update_lines *a = arg;
	if (kind == LINE_NONE) {
		a->unchanged += LEAF_GROUP;
		return true;
	}
	return pte_write_line(a->t, &a->w, p, l, all);
}

/* leaf_update_group() for one @who, a constant. */
static SLAT_ALWAYS_INLINE uint32_t
leaf_update_lines(const struct slat_walk_ctx *c, enum pte_writers who,
		  const struct leaf_update *u, uint32_t max, uint32_t *changed)
{
	const struct line_rule r = { u->present, 0, 0, u->clear, u->set, false };
	struct update_lines a = { c->t, line_writer_of(c->t, who, u->clear,
							   u->set), 0 };
	uint32_t n = line_loop(c, max, &r, update_line_act, &a);
	*changed += n - a.unchanged;
	return n;
}

/* The line loop of the change @u given to walk_leaf_groups() (a
 * leaf_group_fn), a copy for each writer. */
static SLAT_ALWAYS_INLINE uint32_t
leaf_update_group(const struct slat_walk_ctx *c, uint32_t max, void *u,
		  uint32_t *changed)
{
	switch (walk_writers(c)) {
	case PTE_ALONE:
		return leaf_update_lines(c, PTE_ALONE, u, max, changed);
	case PTE_WITH_CPU:
		return leaf_update_lines(c, PTE_WITH_CPU, u, max, changed);
	default:
		return leaf_update_lines(c, PTE_SHARED, u, max, changed);
	}
}

/* walk_leaf_groups() for a change @u makes to every valid leaf (what @step
 * does to a valid leaf that it changes, after which it returns 1 and has
 * no other effect). */
static SLAT_ALWAYS_INLINE int
walk_leaf_update(const struct slat_walk_ctx *ctx, const struct leaf_update *u,
		 leaf_step_fn step, void *arg, uint32_t *changed)
{
	return walk_leaf_groups(ctx, leaf_update_group, (void *)u, step, arg,
				changed);
}

/*
 * The lines of a table from @p to @end (line aligned) that continue, each
 * entry of each, the linear run of leaves whose next one is @expect: in the
 * bits of @mask, entry j equals @expect + j * @size (a leaf's output
 * address is linear in its descriptor, see pa_run_linear()). Returns where
 * the first line that does not starts; the OR and AND of the lines before
 * it are merged into *@any and *@all. @ahead: the table read after this one
 * (walk_next_table()), or @p: its lines are asked for one per line read.
 * Scans that only read use it: cleaning what unmap took, promotion. The
 * run and the OR and AND are held in units across lines.
 */
static SLAT_ALWAYS_INLINE const slat_pte_t *
leaf_lines_continue(const slat_pte_t *p, const slat_pte_t *end,
		    const slat_pte_t *ahead, slat_pte_t expect, uint64_t size,
		    slat_pte_t mask, slat_pte_t *any, slat_pte_t *all)
{
	const pte_unit step = unit_splat(PTE_LANES * size), m = unit_splat(mask);
	const pte_unit line_step = unit_splat(LEAF_GROUP * size);
	pte_unit e[LINE_UNITS], or = unit_splat(0), and = unit_splat(~0ull);

	e[0] = unit_ramp(expect, size);
	for (int j = 1; j < LINE_UNITS; j++)
		e[j] = e[j - 1] + step;
	for (; p != end; p += LEAF_GROUP, ahead += LEAF_GROUP) {
		struct line l, diff;
		__builtin_prefetch(ahead);
		line_peek(p, &l);
#pragma GCC unroll 8
		for (int j = 0; j < LINE_UNITS; j++)
			diff.u[j] = l.u[j] ^ e[j];
		if (unit_or(line_or_units(&diff) & m))
			break;
		or |= line_or_units(&l);
		and &= line_and_units(&l);
#pragma GCC unroll 8
		for (int j = 0; j < LINE_UNITS; j++)
			e[j] += line_step;
	}
	*any |= unit_or(or);
	*all &= unit_and(and);
	return p;
}

/*
 * The @n entries from @ptep at the last level read and nothing else: a walk
 * that must see every entry but has nothing to do with these (split's,
 * below its target). Units from the first line boundary. Returns @n.
 */
static SLAT_ALWAYS_INLINE uint32_t lines_read(const slat_pte_t *ptep,
					      uint32_t n)
{
	uint32_t head = line_head(ptep);
	const slat_pte_t *p = ptep, *end = ptep + n, *units;

	if (head > n)
		head = n;
	for (; p != ptep + head; p++)
		(void)pte_peek(p);
	units = p + ((uint32_t)(end - p) & ~(PTE_LANES - 1u));
#pragma GCC unroll 4
	for (; p != units; p += PTE_LANES)
		(void)pte_peek_unit(p);
	for (; p != end; p++)
		(void)pte_peek(p);
	return n;
}

/*
 * A linear run of @n leaves from @ptep into entries nobody else writes
 * (pte_write_unit(), PTE_ALONE), or a page not yet published: leaf, leaf +
 * @size, ... Whole lines in units, the entries before the first line
 * boundary and after the last one by pte_write(). @ahead: where the same
 * entries lie in a page filled after this one (entries_ahead()), whose
 * lines are asked for one per line stored.
 */
static SLAT_ALWAYS_INLINE void
lines_install(const struct slat_table *t, slat_pte_t *ptep, uint32_t n,
	      slat_pte_t leaf, uint64_t size, const slat_pte_t *ahead)
{
	uint32_t head = line_head(ptep), i = 0, lines = 0;
	slat_pte_t was;

	if (head < n)
		lines = (n - head) / LEAF_GROUP;
	if (lines) {
		const pte_unit step = unit_splat(PTE_LANES * size);
		slat_pte_t *p = ptep + head;
		pte_unit v = unit_ramp(leaf + head * size, size);

		ahead += head;
		for (uint32_t k = 0; k < lines;
		     k++, p += LEAF_GROUP, ahead += LEAF_GROUP) {
			prefetch_fill_line(ahead);
#pragma GCC unroll 8
			for (int j = 0; j < LINE_UNITS; j++, v += step)
				pte_write_unit(&p[j * PTE_LANES], v);
		}
	}
	/* The entries before the first line and after the last. */
	for (; i < n; i++) {
		if (i == head && lines)
			i += lines * LEAF_GROUP;
		if (i < n)
			pte_write(t, PTE_ALONE, &ptep[i], 0, ~0ull,
				  leaf + i * size, &was, true);
	}
}

#endif
