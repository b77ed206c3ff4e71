/* SPDX-License-Identifier: MIT */
/*
 * Table pages, their count words, the page cache, the counters, and the
 * platform's hooks as the core calls them (counted): what an operation
 * asks of the platform goes through here (memory.c). Writes no entry.
 */
#ifndef SLAT_CORE_TABLES_H
#define SLAT_CORE_TABLES_H

#include "pte.h"

static inline void *table_va(const struct slat_table *t, slat_pte_t pte)
{
	slat_pa_t pa = pte_oa(t, pte);
	if (t->linear)
		return (void *)(uintptr_t)((intptr_t)pa.pa + t->linear_offset);
	return t->mm->phys_to_virt(t->mm_ctx, pa);
}

static inline void *table_page_of(const struct slat_table *t,
				  const slat_pte_t *ptep)
{
	return (void *)((uintptr_t)ptep & ~(uintptr_t)granule_mask(t));
}

/* The count word of a non-root table page in the table's own array of
 * them (t->refcounts set). */
static inline uint32_t *table_refcount_array(const struct slat_table *t,
					     void *table)
{
	return &t->refcounts[((uintptr_t)table - t->refcounts_first_page) >>
			     t->geo.granule_shift];
}

/* The count word of a non-root table page. */
static inline uint32_t *table_refcount(const struct slat_table *t, void *table)
{
	if (t->refcounts)
		return table_refcount_array(t, table);
	return t->mm->refcount(t->mm_ctx, table);
}

/* Table addresses are pte & oa_mask in one linear map and their count
 * words in the table's array: a descent needs no platform call. */
static inline bool tables_linear(const struct slat_table *t)
{
	return t->linear && t->oa_mask && t->refcounts;
}

uint32_t core_count_entries(const struct slat_table *t,
			    const slat_pte_t *table) SLAT_INTERNAL;

/* Shared walkers: a store only when the word is not unknown already, so
 * that the line stays shared between vCPUs faulting into one table. */
static SLAT_ALWAYS_INLINE void refcount_mark_unknown(uint32_t *rc)
{
	if (__atomic_load_n(rc, __ATOMIC_RELAXED) != SLAT_REFCOUNT_UNKNOWN)
		__atomic_store_n(rc, SLAT_REFCOUNT_UNKNOWN, __ATOMIC_RELAXED);
}

/*
 * refcount_note_rc() - entries of the (non-root) table page @table, whose
 * count word is @rc, became non-zero (@delta > 0) or zero (@delta < 0);
 * @block: leaves above the last level among them. Called after they were
 * written (a recount must see them). Keeps the count, and HAS_BLOCKS once a
 * block was written. Shared walkers only add entries and mark the count
 * unknown instead, which implies HAS_BLOCKS; an unknown count recounted
 * here includes @delta.
 */
static SLAT_ALWAYS_INLINE void
refcount_note_rc(struct slat_table *t, uint32_t *rc, void *table,
		 int32_t delta, bool block, bool shared)
{
	if (shared) {
		refcount_mark_unknown(rc);
		return;
	}
	if (*rc == SLAT_REFCOUNT_UNKNOWN)
		*rc = core_count_entries(t, table) | SLAT_REFCOUNT_HAS_BLOCKS;
	else
		*rc += (uint32_t)delta;
	if (block)
		*rc |= SLAT_REFCOUNT_HAS_BLOCKS;
}

/* refcount_note_rc() for @n entries at @ptep, @level: nothing for the root,
 * which has no count word, or when nothing changed. */
static SLAT_ALWAYS_INLINE void
refcount_note(struct slat_table *t, const slat_pte_t *ptep, int level,
	      int32_t delta, bool block, bool shared)
{
	if (is_root_level(t, level) || (delta == 0 && !block))
		return;
	void *table = table_page_of(t, ptep);
	refcount_note_rc(t, table_refcount(t, table), table, delta, block,
			 shared);
}

/* refcount_note() through @rc when the caller knows the count word of
 * @ptep's table (a fault's memo), else through the lookup. */
static SLAT_ALWAYS_INLINE void
refcount_note_known(struct slat_table *t, uint32_t *rc, const slat_pte_t *ptep,
		    int level, int32_t delta, bool block, bool shared)
{
	if (rc)
		refcount_note_rc(t, rc, table_page_of(t, ptep), delta, block,
				 shared);
	else
		refcount_note(t, ptep, level, delta, block, shared);
}

/* The number of non-zero entries of the (non-root) table page @table.
 * Exclusive use. */
uint32_t core_refcount_get(const struct slat_table *t, void *table) SLAT_INTERNAL;
/* May @table hold a block? Exclusive use. */
bool core_table_may_hold_blocks(const struct slat_table *t,
				void *table) SLAT_INTERNAL;
/* Every block of @table was split. Exclusive use. */
void core_table_blocks_gone(struct slat_table *t, void *table) SLAT_INTERNAL;

/* A table of @bytes at @pa fits @t's descriptors: aligned to its size and
 * below the output size. */
static inline bool table_pa_ok(const struct slat_table *t, slat_pa_t pa,
			       uint64_t bytes)
{
	uint64_t limit = 1ull << t->geo.pa_bits;
	return (pa.pa & (bytes - 1)) == 0 && pa.pa < limit &&
	       bytes <= limit - pa.pa;
}

/* The next @n pages of @cache can become tables of @t: SLAT_OK,
 * SLAT_E_NOMEM (fewer), or SLAT_E_RANGE (the platform gave a page whose PA
 * a descriptor cannot hold), checked before anything is linked. */
int core_cache_check(const struct slat_table *t,
		     const struct slat_page_cache *cache,
		     uint64_t n) SLAT_INTERNAL;
/* Pop a zeroed page for @t, its count word zeroed; NULL when the cache is
 * empty. Callers check the pages first (core_cache_check()). */
void *core_cache_pop(const struct slat_table *t, struct slat_page_cache *cache,
		     struct slat_stats *st) SLAT_INTERNAL;
/*
 * The page core_cache_pop() returns after the next one, else @page. A page
 * from the cache lies wherever the platform's allocator put it, and
 * hardware prefetchers stop at a page's end: a loop that fills a page asks
 * for that page's lines as it goes (prefetch_fill_line()), so that they are
 * there when its turn comes (the next page is too close to hide the wait).
 */
static inline const void *core_cache_next(const struct slat_page_cache *cache,
					  const void *page)
{
	return cache && cache->nr > 1 ? cache->pages[cache->nr - 2] : page;
}

/* Where the entries from @ptep, of a table at @level, lie in that page;
 * @ptep itself for the root, whose runs may span its concatenated pages
 * and which the cache's pages never follow. */
static inline const slat_pte_t *entries_ahead(const struct slat_table *t,
					      const struct slat_page_cache *cache,
					      const slat_pte_t *ptep, int level)
{
	const char *next = core_cache_next(cache, ptep);
	uintptr_t off = (uintptr_t)ptep & ((1u << t->geo.granule_shift) - 1);
	return next == (const void *)ptep || is_root_level(t, level)
		       ? ptep : (const slat_pte_t *)(next + off);
}

/* While a line of a run is stored, its line in the page filled after it
 * (@ahead) is asked for, for writing. */
static SLAT_ALWAYS_INLINE void prefetch_fill_line(const slat_pte_t *ahead)
{
	__builtin_prefetch(ahead, 1, 3);
}

/* Empty the path of a fault's memo (its tables may be gone): the table's
 * unlink count is @unlinks now. */
void core_memo_forget(struct slat_leaf_memo *m, uint64_t unlinks) SLAT_INTERNAL;

/* Give back a page popped but never published (a lost race), zeroed. */
void core_cache_unpop(struct slat_page_cache *cache, void *page,
		      struct slat_stats *st) SLAT_INTERNAL;
/* Free a subtree now (no walker can see it any more). */
void core_free_subtree(struct slat_table *t, void *table, int level,
		       struct slat_stats *st) SLAT_INTERNAL;
/*
 * A subtree unlinked and covered by a completed invalidation: with @cmo,
 * its cacheable leaves join that run of memory to clean (the caller emits
 * the last run), then it is freed, through the deferred-free hook when the
 * platform has one (walkers may still read it).
 */
struct cmo_run;
void core_release_unlinked(struct slat_table *t, void *table, int level,
			   struct cmo_run *cmo, struct slat_stats *st) SLAT_INTERNAL;

void core_tlbi_ipa(struct slat_table *t, uint64_t ipa, int level,
		   enum slat_tlbi_scope scope, struct slat_stats *st) SLAT_INTERNAL;
void core_tlbi_range(struct slat_table *t, uint64_t ipa, uint64_t size,
		     struct slat_stats *st) SLAT_INTERNAL;
void core_tlbi_vmid(struct slat_table *t, struct slat_stats *st) SLAT_INTERNAL;

void core_stats_clear(struct slat_stats *s) SLAT_INTERNAL;
/* Add @st to the table's counters atomically (shared calls beside each
 * other). */
void core_stats_commit(struct slat_table *t,
		       const struct slat_stats *st) SLAT_INTERNAL;

/*
 * Where an operation counts without a struct of its own: straight into the
 * table when it holds it exclusively; in shared mode into the caller's own
 * counters (the page cache's); NULL when neither (shared, no counters).
 */
static inline struct slat_stats *
stats_own(struct slat_table *t, bool shared, const struct slat_page_cache *cache)
{
	if (!shared)
		return &t->stats;
	return cache ? cache->stats : NULL;
}

/* Where an operation counts: stats_own(), else into @local, added
 * atomically by stats_end(). */
static inline struct slat_stats *
stats_begin(struct slat_table *t, struct slat_stats *local, bool shared,
	    const struct slat_page_cache *cache)
{
	struct slat_stats *st = stats_own(t, shared, cache);
	if (st)
		return st;
	core_stats_clear(local);
	return local;
}

static inline void stats_end(struct slat_table *t, struct slat_stats *st,
			     struct slat_stats *local)
{
	if (st == local)
		core_stats_commit(t, st);
}

/* Deferred frees count from another thread at any time: the two counters
 * they share with the operations are always added atomically. */
static inline void stats_count_freed(struct slat_stats *st, uint64_t n,
				     bool deferred)
{
	__atomic_fetch_add(&st->pages_freed, n, __ATOMIC_RELAXED);
	if (deferred)
		__atomic_fetch_add(&st->pages_deferred, n, __ATOMIC_RELAXED);
}

#endif
