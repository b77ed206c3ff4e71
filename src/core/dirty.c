/* SPDX-License-Identifier: MIT */
/*
 * Hardware dirty state (Arm DBM, EPT D bits) and the CPU's own walk: what
 * the hardware does to the table when it translates an access.
 */
#include "internal.h"

struct dirty_data {
	uint64_t *bitmap;
	uint64_t ipa;           /* bit 0 of the bitmap */
	bool clear;
	enum slat_tlbi_policy policy;
	struct slat_page_cache *cache;
	uint64_t dirty_pages;
	bool changed;
};

static void set_bits(uint64_t *bitmap, uint64_t first, uint64_t n)
{
	while (n && (first & 63)) {
		bitmap[first / 64] |= 1ull << (first & 63);
		first++, n--;
	}
	for (; n >= 64; n -= 64, first += 64)
		bitmap[first / 64] = ~0ull;
	for (; n; n--, first++)
		bitmap[first / 64] |= 1ull << (first & 63);
}

static void report_dirty(const struct slat_walk_ctx *ctx, struct dirty_data *d,
			 uint64_t addr)
{
	uint64_t lo = addr > ctx->start ? addr : ctx->start;
	uint64_t hi = addr + level_size(ctx->t, ctx->level);
	if (hi > ctx->end)
		hi = ctx->end;
	unsigned g = ctx->t->geo.granule_shift;
	set_bits(d->bitmap, (lo - d->ipa) >> g, (hi - lo) >> g);
	d->dirty_pages += (hi - lo) >> g;
}

/* Clean one dirty leaf, retrying against concurrent faults and hardware. */
static void clean_leaf(const struct slat_walk_ctx *ctx, struct dirty_data *d,
		       slat_pte_t *ptep, slat_pte_t pte, uint64_t addr)
{
	struct slat_table *t = ctx->t;
	/* Always atomic: the hardware sets AF and dirty state meanwhile. */
	while (!pte_cas(ptep, pte, t->fmt->leaf_cleaned(t, pte))) {
		ctx->stats->retries++;
		pte = pte_read(ptep);
		if (!pte_leaf(t, pte, ctx->level) || !t->fmt->leaf_dirty(t, pte))
			return;
	}
	ctx->stats->written[SLAT_WRITE_ATTR]++;
	d->changed = true;
	if (d->policy == SLAT_FLUSH_ENTRY)
		slat_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_INNER_SHAREABLE,
			      ctx->stats);
}

static int dirty_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct dirty_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	uint64_t size = level_size(t, ctx->level);
	bool covered = walk_entry_covered(ctx);

	/* Cleaning a whole block would lose the state of pages outside. */
	if (!covered && d->clear && pte_valid(t, ctx->old) &&
	    t->fmt->leaf_dirty(t, ctx->old)) {
		return slat_split_block(ctx, d->cache);
	}

	uint32_t max = walk_covered_entries(ctx), n;
	for (n = 0; n < (max ? max : 1); n++) {
		slat_pte_t pte = pte_read(&ctx->ptep[n]);
		if (pte_table(t, pte, ctx->level))
			break;
		if (!pte_valid(t, pte) || !t->fmt->leaf_dirty(t, pte))
			continue;
		uint64_t addr = ctx->addr + n * size;
		report_dirty(ctx, d, addr);
		if (d->clear)
			clean_leaf(ctx, d, &ctx->ptep[n], pte, addr);
	}
	/* n == 0: the entry became a table meanwhile; descend. */
	return n ? (int)n : 0;
}

int64_t slat_dirty_read(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			uint64_t *bitmap, bool clear,
			enum slat_tlbi_policy policy, uint32_t flags,
			struct slat_page_cache *cache)
{
	if (!t || !bitmap || (flags & ~SLAT_SHARED) ||
	    !tlbi_policy_ok(policy))
		return SLAT_E_INVAL;
	if (!(t->cfg.features & SLAT_FEAT_HWDIRTY))
		return SLAT_E_CONFIG;
	int ret = slat_check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;

	uint64_t pages = size >> t->geo.granule_shift;
	for (uint64_t i = 0; i < (pages + 63) / 64; i++)
		bitmap[i] = 0;

	bool shared = flags & SLAT_SHARED;
	struct dirty_data d = {
		.bitmap = bitmap, .ipa = ipa.ipa, .clear = clear,
		.policy = policy, .cache = cache,
	};
	struct slat_walker w = {
		.cb = dirty_visitor, .arg = &d,
		.flags = SLAT_VISIT_LEAF | (shared ? SLAT_WALK_SHARED : 0),
		.stop_level = SLAT_LAST_LEVEL,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, shared, cache);
	ret = slat_walk(t, ipa.ipa, size, &w, st);
	if (d.changed && policy == SLAT_FLUSH_RANGE)
		slat_tlbi_range(t, ipa.ipa, size, st);
	else if (d.changed && policy == SLAT_FLUSH_VMID)
		slat_tlbi_vmid(t, st);
	slat_stats_end(t, st, &local);
	return ret ? ret : (int64_t)d.dirty_pages;
}

int slat_hw_access(struct slat_table *t, slat_ipa_t ipa, unsigned access,
		   struct slat_hw_result *res)
{
	if (!t || !res || access > SLAT_ACCESS_EXEC_EL0)
		return SLAT_E_INVAL;
	if (ipa.ipa >> t->geo.ia_bits)
		return SLAT_E_RANGE;

	slat_pte_t *table = t->root;
	for (int level = t->geo.start_level;; level++) {
		slat_pte_t *ptep = &table[table_index(t, ipa.ipa, level)];
		slat_pte_t pte = __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
		res->level = level;
		if (pte_table(t, pte, level)) {
			/* EPT with A/D: the CPU marks the tables it walks. */
			slat_pte_t a = t->fmt->table_young_bit;
			if (a && hw_updates_ptes(t) && !(pte & a))
				pte_cas(ptep, pte, pte | a);
			table = table_va(t, pte);
			continue;
		}
		/* A locked entry is invalid to the hardware. */
		if (!pte_valid(t, pte)) {
			res->fault = SLAT_FAULT_TRANSLATION;
			return SLAT_OK;
		}
		slat_pte_t new;
		res->fault = t->fmt->hw_update(t, pte, access, &new);
		if (res->fault == SLAT_FAULT_NONE && new != pte &&
		    !pte_cas(ptep, pte, new)) {
			level--; /* changed under us: read it again */
			continue;
		}
		uint64_t base = ipa.ipa & ~(level_size(t, level) - 1);
		res->pa = slat_pa(t->fmt->pte_pa(t, pte).pa + (ipa.ipa - base));
		res->attrs = t->fmt->leaf_attrs(t, new);
		return SLAT_OK;
	}
}
