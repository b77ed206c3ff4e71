/* SPDX-License-Identifier: MIT */
/*
 * The frame every public range operation shares (op.c): the argument
 * checks, the walk, where it counts, the invalidation per policy at the
 * end, and *done.
 */
#ifndef SLAT_CORE_OP_H
#define SLAT_CORE_OP_H

#include "tables.h"

/*
 * What every public range operation shares: the checked arguments, where it
 * counts, where it stopped, and whether it restricted translations (then it
 * invalidates per @policy at the end, unless it batched).
 */
struct core_op {
	struct slat_table *t;
	uint64_t ipa, end;
	uint32_t flags;
	enum slat_tlbi_policy policy;
	struct slat_page_cache *cache;
	uint64_t *done;        /* the caller's struct slat_op, or NULL */
	struct slat_stats *st;
	struct slat_stats local;
	uint64_t fail_addr;    /* the first IPA not done, when the walk fails */
	bool changed;          /* restricted translations: invalidate after */
};

/*
 * Check the arguments (a live table, @args' flags within @allowed, its
 * policy, the range) and set up @op from them (@args NULL: the defaults);
 * @args->done is zeroed. SLAT_OK or the error, with nothing done.
 */
int core_op_begin(struct core_op *op, struct slat_table *t, slat_ipa_t ipa,
		  uint64_t size, struct slat_op *args,
		  uint32_t allowed) SLAT_INTERNAL;
/* core_op_begin() for arguments the caller checked as it would (map's
 * input check): only the set-up; @args->done is left as it is. */
void core_op_start(struct core_op *op, struct slat_table *t, slat_ipa_t ipa,
		   uint64_t size, struct slat_op *args) SLAT_INTERNAL;
/* slat_walk() without its argument checks, for the core's own walkers
 * (whose stop level may be above the start level: only the root's entries
 * are visited then). */
int core_walk(struct slat_table *t, uint64_t ipa, uint64_t size,
	      const struct slat_walker *w, struct slat_stats *stats) SLAT_INTERNAL;
/* Walk the operation's range with @cb (SLAT_VISIT_* in @visits). */
int core_op_walk(struct core_op *op, slat_visitor_fn cb, void *arg,
		 uint32_t visits, int stop_level) SLAT_INTERNAL;
/* Invalidate what it restricted per policy, report how far it got, commit
 * the counters; returns @ret. */
int core_op_end(struct core_op *op, int ret) SLAT_INTERNAL;
/* Refuse the operation after core_op_begin(), before it changed anything:
 * commit the counters, nothing done; returns @ret. */
int core_op_refuse(struct core_op *op, int ret) SLAT_INTERNAL;

/* The visitor failed with @ret at @addr (clamped to the range's start). */
/* The permissions argument of relax (@removing false: SLAT_R/W/X, none
 * allowed) and restrict (at least one): SLAT_E_ATTR or SLAT_OK. Whether
 * each leaf's result is valid is decided at the leaf. */
static inline int check_perms_arg(uint32_t perms, bool removing)
{
	return (perms & ~SLAT_PERMS) || (removing && !perms) ? SLAT_E_ATTR
							     : SLAT_OK;
}

static inline int op_fail(struct core_op *op, uint64_t addr, int ret)
{
	uint64_t ipa = op->ipa > addr ? op->ipa : addr;
	if (ipa < op->fail_addr)
		op->fail_addr = ipa;
	return ret;
}

static inline bool op_shared(const struct core_op *op)
{
	return (op->flags & SLAT_SHARED) != 0;
}

#endif
