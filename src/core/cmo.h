/* SPDX-License-Identifier: MIT */
/*
 * Cache maintenance of guest memory (cache.c): which new leaves need a
 * D-cache clean or an I-cache invalidation, and runs of contiguous memory
 * cleaned in one call. Writes no entry.
 */
#ifndef SLAT_CORE_CMO_H
#define SLAT_CORE_CMO_H

#include "tables.h"

/* Cache maintenance a new leaf needs before it is visible (seed 000). */
enum core_cmo {
	CORE_CMO_DCACHE = 1u << 0, /* clean and invalidate the D-cache to the PoC */
	CORE_CMO_ICACHE = 1u << 1, /* invalidate the I-cache to the PoU */
};

/* The CORE_CMO_* a new leaf with @attrs needs, before SLAT_SKIP_CMO. */
static inline unsigned cmo_for_attrs(const struct slat_table *t, uint32_t attrs)
{
	if (!t->fmt->cache_maintenance)
		return 0;
	unsigned k = 0;
	if (SLAT_MT(attrs) == SLAT_MT_NORMAL && !(t->cfg.features & SLAT_FEAT_FWB))
		k |= CORE_CMO_DCACHE;
	if ((attrs & SLAT_X) && !(t->cfg.features & SLAT_FEAT_DIC))
		k |= CORE_CMO_ICACHE;
	return k;
}

/* Cacheable guest memory needs D-cache maintenance: Arm stage 2 without
 * FEAT_S2FWB. Then an unmapped cacheable leaf is cleaned and invalidated too. */
static inline bool cmo_needed(const struct slat_table *t)
{
	return t->fmt->cache_maintenance && !(t->cfg.features & SLAT_FEAT_FWB);
}

/* Count the CORE_CMO_* @kinds of maintenance of @bytes in @st. */
static SLAT_ALWAYS_INLINE void cmo_count(struct slat_stats *st, uint64_t bytes,
					 unsigned kinds)
{
	if (kinds & CORE_CMO_DCACHE) {
		st->dcache_calls++;
		st->dcache_bytes += bytes;
	}
	if (kinds & CORE_CMO_ICACHE) {
		st->icache_calls++;
		st->icache_bytes += bytes;
	}
}

/* The hooks for @kinds over [pa, pa+bytes): the D-cache clean first, which
 * the I-cache invalidation needs done. Uncounted. */
static SLAT_ALWAYS_INLINE void cmo_call(struct slat_table *t, slat_pa_t pa,
					uint64_t bytes, unsigned kinds)
{
	if (kinds & CORE_CMO_DCACHE)
		t->mm->dcache_clean_inval_poc(t->mm_ctx, pa, bytes);
	if (kinds & CORE_CMO_ICACHE)
		t->mm->icache_inval_pou(t->mm_ctx, pa, bytes);
}

/* cmo_do() of more than a D-cache clean, out of line. */
void core_cmo_kinds(struct slat_table *t, slat_pa_t pa, uint64_t bytes,
		    unsigned kinds, struct slat_stats *st) SLAT_INTERNAL;

/* Counted maintenance: a D-cache clean alone, the common case, inline;
 * across its one call only the caller's live values remain. */
static SLAT_ALWAYS_INLINE void cmo_do(struct slat_table *t, slat_pa_t pa,
				      uint64_t bytes, unsigned kinds,
				      struct slat_stats *st)
{
	if (kinds == CORE_CMO_DCACHE) {
		cmo_count(st, bytes, CORE_CMO_DCACHE);
		cmo_call(t, pa, bytes, CORE_CMO_DCACHE);
	} else if (kinds) {
		core_cmo_kinds(t, pa, bytes, kinds, st);
	}
}

/*
 * Contiguous PA runs of leaves to clean and invalidate: one call per run.
 * A run is emitted when the next leaf does not continue it, or at the end.
 */
struct cmo_run {
	uint64_t pa, bytes;
};

static inline void cmo_run_emit(struct slat_table *t, struct cmo_run r,
				struct slat_stats *st)
{
	if (r.bytes)
		cmo_do(t, slat_pa(r.pa), r.bytes, CORE_CMO_DCACHE, st);
}

/* [pa, pa+bytes) continues the run @r: it grows (true). Else the caller
 * emits @r and starts the next run with it. */
static inline bool cmo_run_extend(struct cmo_run *r, uint64_t pa,
				  uint64_t bytes)
{
	if (!r->bytes || r->pa + r->bytes != pa)
		return false;
	r->bytes += bytes;
	return true;
}

/* Add [pa, pa+bytes) to @r, cleaning the run it does not continue. */
static inline void cmo_run_add(struct slat_table *t, struct cmo_run *r,
			       uint64_t pa, uint64_t bytes, struct slat_stats *st)
{
	if (cmo_run_extend(r, pa, bytes))
		return;
	cmo_run_emit(t, *r, st);
	r->pa = pa;
	r->bytes = bytes;
}

/* Clean and invalidate every cacheable leaf of a subtree (no walker can
 * reach its memory through it any more). */
void core_cmo_subtree(struct slat_table *t, const slat_pte_t *table, int level,
		      struct cmo_run *run, struct slat_stats *st) SLAT_INTERNAL;

#endif
