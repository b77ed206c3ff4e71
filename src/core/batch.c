/* SPDX-License-Identifier: MIT */
/*
 * Batched invalidation. Range operations change many entries and then
 * invalidate once; a table they unlink may be freed, a block that
 * break-before-make held back may be published, and unmapped memory may be
 * cleaned, only after that invalidation. The batch keeps that work until
 * then, in bounded arrays: when one is full it invalidates early.
 */
#include "internal.h"

void core_batch_init(struct core_batch *b, enum slat_tlbi_policy policy,
		     uint64_t from, uint64_t to, bool cmo)
{
	b->policy = policy;
	b->from = from;
	b->to = to;
	b->lo = ~0ull;
	b->hi = 0;
	b->cmo = cmo;
	b->nr = 0;
	b->nr_cmo = 0;
}

void core_promote_publish(struct slat_table *t, slat_pte_t *ptep,
			  const slat_pte_t *table, int level, slat_pte_t make,
			  struct slat_stats *st)
{
	if (make) {
		if (hw_updates_ptes(t))
			make = core_merge_hw_state(t, make, table, level);
		pte_write_owned(t, ptep, make);
		refcount_note(t, ptep, level - 1, 0, true, false);
		st->written[SLAT_WRITE_LEAF]++;
		return;
	}
	if (!hw_updates_ptes(t))
		return;
	slat_pte_t old = pte_read(ptep), clear, set, was;
	pte_change(old, core_merge_hw_state(t, old, table, level), &clear, &set);
	if (clear | set) {
		pte_try_set(t, pte_writers_of(t, false), ptep, old, clear, set, &was);
		st->written[SLAT_WRITE_ATTR]++;
	}
}

void core_batch_flush(struct slat_table *t, struct core_batch *b,
		      struct slat_stats *st)
{
	if (b->hi > b->lo) {
		if (b->policy == SLAT_FLUSH_VMID)
			core_tlbi_vmid(t, st);
		/* Even under "none": nothing is freed while the CPU may walk
		 * it, and no block is published over stale entries. */
		else if (b->policy == SLAT_FLUSH_RANGE || b->nr || b->nr_cmo)
			core_tlbi_range(t, b->lo, b->hi - b->lo, st);
	}
	/* One clean per contiguous run, across the queued runs and tables. */
	struct cmo_run run = { 0, 0 };
	for (uint32_t i = 0; i < b->nr_cmo; i++)
		cmo_run_add(t, &run, b->run[i].pa, b->run[i].bytes, st);
	for (uint32_t i = 0; i < b->nr; i++) {
		if (b->e[i].ptep)
			core_promote_publish(t, b->e[i].ptep, b->e[i].table,
					     b->e[i].level, b->e[i].make, st);
		if (b->e[i].table)
			core_release_unlinked(t, b->e[i].table, b->e[i].level,
					      b->cmo ? &run : NULL, st);
	}
	cmo_run_emit(t, run, st);
	b->nr = 0;
	b->nr_cmo = 0;
	b->lo = ~0ull;
	b->hi = 0;
}

void core_batch_add(struct slat_table *t, struct core_batch *b, uint64_t at,
		    void *table, int level, slat_pte_t *ptep, slat_pte_t make,
		    struct slat_stats *st)
{
	if (b->nr == CORE_BATCH_MAX)
		core_batch_flush(t, b, st);
	core_batch_changed(b, at, level_size(t, level - 1));
	b->e[b->nr].table = table;
	b->e[b->nr].level = level;
	b->e[b->nr].ptep = ptep;
	b->e[b->nr].make = make;
	b->nr++;
}

void core_batch_add_cmo(struct slat_table *t, struct core_batch *b,
			struct cmo_run r, struct slat_stats *st)
{
	if (b->nr_cmo && cmo_run_extend(&b->run[b->nr_cmo - 1], r.pa, r.bytes))
		return;
	if (b->nr_cmo == CORE_BATCH_CMO_MAX)
		core_batch_flush(t, b, st);
	b->run[b->nr_cmo++] = r;
}
