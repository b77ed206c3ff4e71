/* SPDX-License-Identifier: MIT */
/*
 * Batched invalidation. Range operations change many entries and then
 * invalidate once; a table they unlink may be freed, and a block that
 * break-before-make held back may be published, only after that
 * invalidation. The batch keeps those until then, in a bounded array: when
 * it is full it invalidates early.
 */
#include "internal.h"

void slat_batch_init(struct slat_batch *b, enum slat_tlbi_policy policy,
		     uint64_t from)
{
	b->policy = policy;
	b->flushed_to = from;
	b->changed = false;
	b->nr = 0;
}

void slat_batch_flush(struct slat_table *t, struct slat_batch *b,
		      uint64_t upto, struct slat_stats *st)
{
	if (b->changed || b->nr) {
		if (b->policy == SLAT_FLUSH_VMID)
			slat_tlbi_vmid(t, st);
		/* Even under "none": nothing is freed while hardware may walk it. */
		else if (b->policy == SLAT_FLUSH_RANGE || b->nr)
			slat_tlbi_range(t, b->flushed_to, upto - b->flushed_to, st);
	}
	for (uint32_t i = 0; i < b->nr; i++) {
		if (b->e[i].ptep) {
			pte_write(b->e[i].ptep, b->e[i].make);
			st->written[SLAT_WRITE_LEAF]++;
		}
		if (b->e[i].table)
			slat_release_unlinked(t, b->e[i].table, b->e[i].level,
					      true, st);
	}
	b->nr = 0;
	b->changed = false;
	b->flushed_to = upto;
}

void slat_batch_add(struct slat_table *t, struct slat_batch *b, uint64_t at,
		    void *table, int level, slat_pte_t *ptep, slat_pte_t make,
		    struct slat_stats *st)
{
	if (b->nr == SLAT_BATCH_MAX)
		slat_batch_flush(t, b, at, st);
	b->e[b->nr].table = table;
	b->e[b->nr].level = level;
	b->e[b->nr].ptep = ptep;
	b->e[b->nr].make = make;
	b->nr++;
}
