/* SPDX-License-Identifier: MIT */
/*
 * Lines of entries: the bulk loops over a last-level run, a 64-byte line
 * (LEAF_GROUP entries) at a time, each line decided at once from its
 * entries' AND and OR.
 */
#ifndef SLAT_CORE_LINES_H
#define SLAT_CORE_LINES_H

#include "walker.h"

/*
 * An in-place change of valid leaves (write protection, the access flag):
 * each becomes pte_apply(leaf, @clear, @set), in locals hoisted out of the
 * loop. A leaf changes exactly when that differs from it.
 */
struct leaf_update {
	slat_pte_t present, clear, set;
};

/* Entries per group of a last-level run: one 64-byte line. */
#define LEAF_GROUP 8

enum leaf_group { GROUP_MIXED, GROUP_NONE, GROUP_ALL };

#ifdef SLAT_PTE_PAIRS
/* The line of LEAF_GROUP entries at @p (pair aligned) in four pairs. */
static SLAT_ALWAYS_INLINE void line_peek_pairs(const slat_pte_t *p,
					       pte_pair v[LEAF_GROUP / 2])
{
#pragma GCC unroll 4
	for (int j = 0; j < LEAF_GROUP / 2; j++)
		v[j] = pte_peek_pair(&p[2 * j]);
}

/* The AND and the OR of a pair's two entries. */
static SLAT_ALWAYS_INLINE slat_pte_t pair_and(pte_pair p)
{
	return p[0] & p[1];
}

static SLAT_ALWAYS_INLINE slat_pte_t pair_or(pte_pair p)
{
	return p[0] | p[1];
}

/* The AND and the OR of a line held in pairs, lane by lane: a loop over
 * lines keeps them so and reduces the lanes once. */
static SLAT_ALWAYS_INLINE pte_pair line_and_lanes(const pte_pair v[LEAF_GROUP / 2])
{
	return (v[0] & v[1]) & (v[2] & v[3]);
}

static SLAT_ALWAYS_INLINE pte_pair line_or_lanes(const pte_pair v[LEAF_GROUP / 2])
{
	return (v[0] | v[1]) | (v[2] | v[3]);
}

/* The AND and the OR of the entries of a line held in pairs. */
static SLAT_ALWAYS_INLINE slat_pte_t line_and(const pte_pair v[LEAF_GROUP / 2])
{
	return pair_and(line_and_lanes(v));
}

static SLAT_ALWAYS_INLINE slat_pte_t line_or(const pte_pair v[LEAF_GROUP / 2])
{
	return pair_or(line_or_lanes(v));
}
#endif

/*
 * The group of LEAF_GROUP entries at @p continues a linear run of leaves
 * whose next one is @expect: in the bits of @mask, entry j equals @expect
 * + j * @size (a leaf's output address is linear in its descriptor, see
 * pa_run_linear()). Their OR and AND are merged into *@any and *@all.
 */
static SLAT_ALWAYS_INLINE bool
leaf_group_continues(const slat_pte_t *p, slat_pte_t expect, uint64_t size,
		     slat_pte_t mask, slat_pte_t *any, slat_pte_t *all)
{
	slat_pte_t diff = 0, or = 0, and = ~0ull;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++, expect += size) {
		slat_pte_t v = pte_peek(&p[j]);
		diff |= v ^ expect;
		or |= v;
		and &= v;
	}
	*any |= or;
	*all &= and;
	return !(diff & mask);
}

/*
 * The lines of a table from @p to @end that continue, each
 * (leaf_group_continues()), the run whose next leaf is @expect; returns
 * where the first that does not starts. Their OR and AND are merged into
 * *@any and *@all. @ahead: the table read after this one
 * (walk_next_table()), or @p: its lines are asked for one per line read.
 * Scans that only read use it: cleaning what unmap took, promotion. In
 * pairs where the core may: the run and the OR and AND held in vector
 * registers across lines.
 */
static SLAT_ALWAYS_INLINE const slat_pte_t *
leaf_lines_continue(const slat_pte_t *p, const slat_pte_t *end,
		    const slat_pte_t *ahead,
		    slat_pte_t expect, uint64_t size, slat_pte_t mask,
		    slat_pte_t *any, slat_pte_t *all)
{
#ifdef SLAT_PTE_PAIRS
	/* Lines of a table are pair aligned. */
	const pte_pair step = { 2 * size, 2 * size }, m = { mask, mask };
	const pte_pair line = step * (LEAF_GROUP / 2);
	pte_pair e[LEAF_GROUP / 2], or = { 0, 0 }, and = { ~0ull, ~0ull };
	e[0] = (pte_pair){ expect, expect + size };
	for (int j = 1; j < LEAF_GROUP / 2; j++)
		e[j] = e[j - 1] + step;
	for (; p != end; p += LEAF_GROUP, ahead += LEAF_GROUP) {
		pte_pair v[LEAF_GROUP / 2];
		__builtin_prefetch(ahead);
		line_peek_pairs(p, v);
		pte_pair diff[LEAF_GROUP / 2];
#pragma GCC unroll 4
		for (int j = 0; j < LEAF_GROUP / 2; j++)
			diff[j] = v[j] ^ e[j];
		if (pair_or(line_or_lanes(diff) & m))
			break;
		or |= line_or_lanes(v);
		and &= line_and_lanes(v);
#pragma GCC unroll 4
		for (int j = 0; j < LEAF_GROUP / 2; j++)
			e[j] += line;
	}
	*any |= pair_or(or);
	*all &= pair_and(and);
#else
	for (; p != end; p += LEAF_GROUP, ahead += LEAF_GROUP,
			 expect += LEAF_GROUP * size) {
		__builtin_prefetch(ahead);
		if (!leaf_group_continues(p, expect, size, mask, any, all))
			break;
	}
#endif
	return p;
}

/*
 * What @u does to a group whose entries' AND is @all and OR @any: every
 * entry (all valid, from their AND: a bit to clear they share, or a bit to
 * set their OR lacks), nothing (every entry empty, or every one valid and
 * already as @u leaves it), or it depends on the entry. The OR is only
 * needed when not every entry changes: the common case reads each entry
 * once. Locked entries are non-zero and invalid: never NONE or ALL.
 */
static SLAT_ALWAYS_INLINE enum leaf_group
leaf_group_decide(slat_pte_t all, slat_pte_t any, const struct leaf_update *u)
{
	if (!any)
		return GROUP_NONE;
	if (!(all & u->present))
		return GROUP_MIXED;
	if ((all & u->clear) || (~any & u->set))
		return GROUP_ALL;
	if (!(any & u->clear) && (all & u->set) == u->set)
		return GROUP_NONE;
	return GROUP_MIXED;
}

/* The common case first, from the AND alone: every entry changes. */
static SLAT_ALWAYS_INLINE bool leaf_group_all_change(slat_pte_t all,
						     const struct leaf_update *u)
{
	return (all & u->present) && (all & u->clear) && !u->set;
}

static SLAT_ALWAYS_INLINE enum leaf_group
leaf_group_of(const slat_pte_t v[LEAF_GROUP], const struct leaf_update *u)
{
	slat_pte_t all = ~0ull, any = 0;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++)
		all &= v[j];
	if (leaf_group_all_change(all, u))
		return GROUP_ALL;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++)
		any |= v[j];
	return leaf_group_decide(all, any, u);
}

#ifdef SLAT_PTE_PAIRS
/* pte_apply() of each entry of the line @v read from @p, stored back in
 * pairs, for entries nobody else writes: @keep is ~clear in both lanes,
 * @add the bits to set (built once, outside the caller's loop). */
static SLAT_ALWAYS_INLINE void line_store_pairs(slat_pte_t *p,
						const pte_pair v[LEAF_GROUP / 2],
						pte_pair keep, pte_pair add)
{
#pragma GCC unroll 4
	for (int j = 0; j < LEAF_GROUP / 2; j++)
		pte_write_pair(&p[2 * j], (v[j] & keep) | add);
}

/* leaf_group_of() of the group held in four pairs. */
static SLAT_ALWAYS_INLINE enum leaf_group
leaf_group_of_pairs(const pte_pair v[LEAF_GROUP / 2],
		    const struct leaf_update *u)
{
	slat_pte_t all = line_and(v);
	if (leaf_group_all_change(all, u))
		return GROUP_ALL;
	return leaf_group_decide(all, line_or(v), u);
}

/*
 * leaf_update_groups() for an exclusive caller on 16-byte aligned entries
 * from @first to @end, a pair of entries per access. Returns where it
 * stopped; *@unchanged counts the entries of groups left as they were.
 */
static SLAT_ALWAYS_INLINE slat_pte_t *
leaf_update_pairs(const struct leaf_update *u, slat_pte_t *first,
		  slat_pte_t *end, uint32_t *unchanged)
{
	const pte_pair keep = { ~u->clear, ~u->clear }, add = { u->set, u->set };
	slat_pte_t *p;

	for (p = first; p != end; p += LEAF_GROUP) {
		pte_pair v[LEAF_GROUP / 2];
		line_peek_pairs(p, v);
		enum leaf_group g = leaf_group_of_pairs(v, u);
		if (g == GROUP_NONE) {
			*unchanged += LEAF_GROUP;
			continue;
		}
		if (g != GROUP_ALL)
			break;
		line_store_pairs(p, v, keep, add);
	}
	return p;
}
#endif

/*
 * walk_leaf_update()'s loop over whole groups of the @max entries from
 * c->ptep, up to the first group that needs the step; @who is a constant at
 * each call. Returns the entries dealt with; *@changed counts those written.
 */
static SLAT_ALWAYS_INLINE uint32_t
leaf_update_groups(const struct slat_walk_ctx *c, enum pte_writers who,
		   const struct leaf_update *u, uint32_t max, uint32_t *changed)
{
	slat_pte_t *first = c->ptep, *end = first + (max & ~(LEAF_GROUP - 1u));
	slat_pte_t *p, was;
	/* Counted in the groups left alone, the rarer kind where a bulk
	 * change runs: the changing loop keeps no counter. */
	uint32_t unchanged = 0;

#ifdef SLAT_PTE_PAIRS
	if (who == PTE_ALONE && pte_pair_aligned(first)) {
		p = leaf_update_pairs(u, first, end, &unchanged);
		*changed += (uint32_t)(p - first) - unchanged;
		return (uint32_t)(p - first);
	}
#endif
	for (p = first; p != end; p += LEAF_GROUP) {
		slat_pte_t v[LEAF_GROUP];
#pragma GCC unroll 8
		for (int j = 0; j < LEAF_GROUP; j++)
			v[j] = pte_peek(&p[j]);
		enum leaf_group g = leaf_group_of(v, u);
		if (g == GROUP_NONE) {
			unchanged += LEAF_GROUP;
			continue;
		}
		/* A shared walker may lose any entry: each takes the step. */
		if (g != GROUP_ALL || who == PTE_SHARED)
			break;
#pragma GCC unroll 8
		for (int j = 0; j < LEAF_GROUP; j++)
			pte_try_update(c->t, who, &p[j], v[j], u->clear, u->set,
				       &was);
	}
	*changed += (uint32_t)(p - first) - unchanged;
	return (uint32_t)(p - first);
}

/* leaf_update_groups() with @who read from @c: the change @u given to
 * walk_leaf_groups() (a leaf_group_fn). */
static SLAT_ALWAYS_INLINE uint32_t
leaf_update_group(const struct slat_walk_ctx *c, uint32_t max, void *u,
		  uint32_t *changed)
{
	switch (walk_writers(c)) {
	case PTE_ALONE:
		return leaf_update_groups(c, PTE_ALONE, u, max, changed);
	case PTE_WITH_CPU:
		return leaf_update_groups(c, PTE_WITH_CPU, u, max, changed);
	default:
		return leaf_update_groups(c, PTE_SHARED, u, max, changed);
	}
}

/*
 * What a bulk loop does to whole groups of the @max entries (a multiple of
 * LEAF_GROUP or not) from c->ptep, at the last level: it returns how many
 * it dealt with, up to the first group that needs the per-entry step, and
 * adds the entries it changed to *@changed. Inlined.
 */
typedef uint32_t (*leaf_group_fn)(const struct slat_walk_ctx *c, uint32_t max,
				  void *garg, uint32_t *changed);

/**
 * walk_leaf_groups() - walk_leaf_run() in groups of LEAF_GROUP entries: at
 * the last level @group deals with whole groups it can decide at once
 * (nothing to do, or the same change to each), @step with the others and
 * the tail.
 * @ctx: the visited entry.
 * @group: the group loop; inlined.
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

	for (;;) {
		uint32_t k = group(&c, max - n, garg, &done);
		n += k;
		if (n == max)
			break;
		/* A group that needs the step, or the tail shorter than one. */
		c.ptep += k;
		c.addr += (uint64_t)k * size;
		c.nr_left = max - n < LEAF_GROUP ? max - n : LEAF_GROUP;
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

#ifdef SLAT_PTE_PAIRS
/*
 * A linear run of leaves from a 16-byte aligned entry, two per store, into
 * entries nobody else writes; returns how many it stored (all but an odd
 * last). @ahead: where the same entries lie in a page filled after this
 * one (entries_ahead()), whose lines are asked for one per line stored.
 */
static SLAT_ALWAYS_INLINE uint32_t install_pairs(slat_pte_t *ptep, uint32_t n,
						 slat_pte_t leaf, uint64_t size,
						 const slat_pte_t *ahead)
{
	pte_pair v = { leaf, leaf + size };
	const pte_pair step = { 2 * size, 2 * size };
	slat_pte_t *p = ptep, *lines = ptep + (n & ~7u), *end = ptep + (n & ~1u);

	for (; p != lines; p += 8, ahead += 8) {
		prefetch_fill_line(ahead);
		for (int k = 0; k < 8; k += 2, v += step)
			pte_write_pair(p + k, v);
	}
	for (; p != end; p += 2, v += step)
		pte_write_pair(p, v);
	return n & ~1u;
}
#endif

#endif
