/* SPDX-License-Identifier: MIT */
/*
 * The generic walker. Every libslat operation is a visitor on it; tools may
 * write their own visitors.
 */
#ifndef SLAT_WALK_H
#define SLAT_WALK_H

#include <slat/export.h>
#include <slat/slat.h>

#ifdef __cplusplus
extern "C" {
#endif

enum slat_visit {
	SLAT_VISIT_LEAF = 1u << 0,       /* leaves and invalid entries */
	SLAT_VISIT_TABLE_PRE = 1u << 1,  /* a table entry, before its children */
	SLAT_VISIT_TABLE_POST = 1u << 2, /* a table entry, after its children */
};

/* Walker flags, beside the visits wanted. */
#define SLAT_WALK_SHARED   (1u << 8)  /* concurrent walkers: atomic updates */
#define SLAT_WALK_STOP_LEVEL (1u << 9) /* honour stop_level (else: to the
					   leaves) */

struct slat_walk_ctx {
	struct slat_table *t;
	slat_pte_t *ptep;    /* the entry */
	slat_pte_t old;      /* its value when read */
	uint64_t addr;       /* first IPA the entry maps (aligned to its size) */
	uint64_t start, end; /* the walked range; start may be inside the entry */
	uint32_t nr_left;    /* entries from ptep to the end of the table that
				lie in the range, ptep included */
	int level;
	uint32_t flags;
	void *arg;
	struct slat_stats *stats; /* counters of this walk */
};

/*
 * A visitor returns:
 *   0:          go on; for a table the walker then re-reads the entry and
 *               descends if it is (still, or newly) a table;
 *   n > 0:      it dealt with n entries from ptep (n <= nr_left); the walker
 *               neither descends into them nor visits them again;
 *   negative:   a status code that ends the walk.
 */
typedef int (*slat_visitor_fn)(const struct slat_walk_ctx *ctx,
			       enum slat_visit visit);

struct slat_walker {
	slat_visitor_fn cb;
	void *arg;
	uint32_t flags;    /* SLAT_VISIT_* | SLAT_WALK_* */
	int stop_level;    /* with SLAT_WALK_STOP_LEVEL: never descend into
			      tables below this level (their entries are not
			      visited), from the table's start level to
			      SLAT_LAST_LEVEL; without it the walk reaches
			      every leaf */
};

/*
 * Walk [ipa, ipa+size) of @t in address order. Counters go to @stats
 * (which the caller adds to the table's; NULL: not counted). @w needs a
 * callback and at least one SLAT_VISIT_*, and with SLAT_WALK_STOP_LEVEL a
 * stop level inside the table: a zeroed walker is refused.
 * Returns the first negative visitor status, SLAT_OK, or SLAT_E_INVAL,
 * SLAT_E_ALIGN, SLAT_E_RANGE for the arguments.
 */
SLAT_API int slat_walk(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		       const struct slat_walker *w, struct slat_stats *stats);

/* Format-neutral decoding, for visitors. */
SLAT_API bool slat_pte_is_valid(const struct slat_table *t, slat_pte_t pte);
SLAT_API bool slat_pte_is_table(const struct slat_table *t, slat_pte_t pte,
				int level);
SLAT_API bool slat_pte_is_leaf(const struct slat_table *t, slat_pte_t pte,
			       int level);
SLAT_API slat_pa_t slat_pte_pa(const struct slat_table *t, slat_pte_t pte,
			       int level);
SLAT_API uint32_t slat_pte_attrs(const struct slat_table *t, slat_pte_t pte,
				 int level);
/* The table page an entry points to, as the core reaches it. */
SLAT_API void *slat_pte_table(const struct slat_table *t, slat_pte_t pte);

#ifdef __cplusplus
}
#endif
#endif
