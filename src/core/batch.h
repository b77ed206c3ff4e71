/* SPDX-License-Identifier: MIT */
/*
 * The batch of a range operation (batch.c): the work that may only
 * happen after an invalidation covers it (freeing unlinked tables,
 * publishing blocks break-before-make held back, cleaning unmapped
 * memory), kept in bounded arrays with the IPAs that invalidation must
 * cover.
 */
#ifndef SLAT_CORE_BATCH_H
#define SLAT_CORE_BATCH_H

#include "cmo.h"

#define CORE_BATCH_MAX 64
#define CORE_BATCH_CMO_MAX 64

/*
 * Work that may only happen after an invalidation covers it: freeing an
 * unlinked table, publishing a block that break-before-make held back,
 * cleaning an unmapped leaf's memory.
 */
struct core_batch {
	enum slat_tlbi_policy policy;
	uint64_t from, to;     /* the operation's range */
	/* [lo, hi): every IPA whose translation changed, or whose queued
	 * work waits, since the last flush (empty when hi <= lo). A hull,
	 * not the walk's position: a table unlinked after its children (in
	 * post-order) lies below them, and each queued entry stands for its
	 * whole span. */
	uint64_t lo, hi;
	bool cmo;              /* unlinked tables' cacheable leaves are cleaned */
	uint32_t nr, nr_cmo;
	struct {
		void *table;       /* unlinked subtree to free, or NULL */
		int level;         /* its level */
		slat_pte_t *ptep;  /* entry to publish after the flush, or NULL */
		slat_pte_t make;   /* ... with this value, the AF and dirty
				      state of @table's leaves merged in;
				      0: the entry already holds the block,
				      which gets their state merged in */
	} e[CORE_BATCH_MAX];
	struct cmo_run run[CORE_BATCH_CMO_MAX];
};

void core_batch_init(struct core_batch *b, enum slat_tlbi_policy policy,
		     uint64_t from, uint64_t to, bool cmo) SLAT_INTERNAL;

/* The translations of [addr, addr + size) changed: the next flush covers
 * the part inside the operation's range. */
static inline void core_batch_changed(struct core_batch *b, uint64_t addr,
				      uint64_t size)
{
	uint64_t lo = addr > b->from ? addr : b->from;
	uint64_t hi = addr + size < b->to ? addr + size : b->to;
	if (lo < b->lo)
		b->lo = lo;
	if (hi > b->hi)
		b->hi = hi;
}

/* Queue work for after the next invalidation: the unlinked @table of
 * @level (or NULL) whose parent entry at @at, one level up, spans
 * level_size(@level - 1); the flush covers that whole span. */
void core_batch_add(struct slat_table *t, struct core_batch *b, uint64_t at,
		    void *table, int level, slat_pte_t *ptep, slat_pte_t make,
		    struct slat_stats *st) SLAT_INTERNAL;
/* Queue a D-cache clean+invalidate of an unmapped run for after it; the
 * caller noted its IPAs (core_batch_changed()) first. */
void core_batch_add_cmo(struct slat_table *t, struct core_batch *b,
			struct cmo_run r, struct slat_stats *st) SLAT_INTERNAL;
/*
 * Finish a promotion once an invalidation covers the unlinked @table (of
 * @level) that @ptep pointed to: publish @make, the AF and dirty state of
 * the table's leaves merged in; or, with @make 0, merge them into the
 * block @ptep already holds.
 */
void core_promote_publish(struct slat_table *t, slat_pte_t *ptep,
			  const slat_pte_t *table, int level, slat_pte_t make,
			  struct slat_stats *st) SLAT_INTERNAL;
/* Invalidate per policy what changed since the last flush, then do the
 * queued work. */
void core_batch_flush(struct slat_table *t, struct core_batch *b,
		      struct slat_stats *st) SLAT_INTERNAL;

#endif
