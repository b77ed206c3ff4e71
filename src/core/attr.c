/* SPDX-License-Identifier: MIT */
/*
 * Attribute updates in place: write-protect, relax permissions, access flag.
 * None of these needs break-before-make: only permissions or AF change.
 */
#include "internal.h"

struct attr_data {
	enum slat_tlbi_policy policy;
	uint32_t perms;          /* relax: permissions to add */
	struct slat_page_cache *cache;
	uint64_t fail_addr;
	bool changed;
	bool young;              /* test_clear_young: something was young */
	bool mkold;
};

static int split_or_fail(const struct slat_walk_ctx *ctx, struct attr_data *d)
{
	int ret = slat_split_block(ctx, d->cache);
	if (ret)
		d->fail_addr = walk_first_addr(ctx);
	return ret;
}

/*
 * Update one leaf. Shared walkers compare-and-swap and report a lost race;
 * an exclusive one races only the hardware's own AF/dirty updates, which
 * it keeps.
 */
static int update_leaf(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
		       slat_pte_t old, slat_pte_t new)
{
	if (walk_shared(ctx)) {
		if (!pte_cas(ptep, old, new)) {
			ctx->stats->retries++;
			return SLAT_E_AGAIN;
		}
	} else if (hw_updates_ptes(ctx->t)) {
		/* Hardware bits this update does not change take their
		 * latest value. */
		slat_pte_t keep = (ctx->t->fmt->young_bit | ctx->t->fmt->dirty_bit) &
				  ~(old ^ new);
		while (!pte_cas(ptep, old, new)) {
			old = pte_read(ptep);
			new = (new & ~keep) | (old & keep);
		}
	} else {
		__atomic_store_n(ptep, new, __ATOMIC_RELAXED);
	}
	ctx->stats->written[SLAT_WRITE_ATTR]++;
	return SLAT_OK;
}

/*
 * The bulk case: a run of last-level entries (no tables there), one flush
 * afterwards. A tight loop with no call per entry.
 */
static int wrprotect_pages(const struct slat_walk_ctx *ctx,
			   struct attr_data *d, uint32_t max)
{
	struct slat_table *t = ctx->t;
	slat_pte_t clear = t->fmt->wp_clear, set = t->fmt->wp_set;
	slat_pte_t present = t->fmt->present_mask;
	uint32_t n = max ? max : 1;
	uint64_t changed = 0;
	slat_pte_t *p = ctx->ptep;

	if (walk_shared(ctx) || hw_updates_ptes(t)) {
		for (uint32_t i = 0; i < n; i++) {
			slat_pte_t pte = pte_read(&p[i]);
			while ((pte & present) && ((pte & ~clear) | set) != pte &&
			       !__atomic_compare_exchange_n(&p[i], &pte,
							    (pte & ~clear) | set,
							    false, __ATOMIC_ACQ_REL,
							    __ATOMIC_RELAXED))
				ctx->stats->retries++;
			changed += (pte & present) && ((pte & ~clear) | set) != pte;
		}
	} else {
		for (uint32_t i = 0; i < n; i++) {
			slat_pte_t pte = pte_read(&p[i]);
			slat_pte_t ro = (pte & ~clear) | set;
			if ((pte & present) && ro != pte) {
				__atomic_store_n(&p[i], ro, __ATOMIC_RELAXED);
				changed++;
			}
		}
	}
	ctx->stats->written[SLAT_WRITE_ATTR] += changed;
	d->changed |= changed != 0;
	return (int)n;
}

static int wrprotect_visitor(const struct slat_walk_ctx *ctx,
			     enum slat_visit visit)
{
	(void)visit;
	struct attr_data *d = ctx->arg;
	struct slat_table *t = ctx->t;

	if (pte_valid(t, ctx->old) && !walk_entry_covered(ctx)) {
		if (pte_wrprotected(t, ctx->old) == ctx->old)
			return 1;
		return split_or_fail(ctx, d);
	}

	uint32_t max = walk_covered_entries(ctx), n;
	if (ctx->level == SLAT_LAST_LEVEL && d->policy != SLAT_FLUSH_ENTRY)
		return wrprotect_pages(ctx, d, max);
	uint64_t size = level_size(t, ctx->level);
	for (n = 0; n < (max ? max : 1); n++) {
		slat_pte_t pte = pte_read(&ctx->ptep[n]);
		if (pte_table(t, pte, ctx->level))
			break;
		if (!pte_valid(t, pte) || pte_wrprotected(t, pte) == pte)
			continue;
		update_leaf(ctx, &ctx->ptep[n], pte, pte_wrprotected(t, pte));
		d->changed = true;
		if (d->policy == SLAT_FLUSH_ENTRY)
			slat_tlbi_ipa(t, ctx->addr + n * size, ctx->level,
				    SLAT_TLBI_INNER_SHAREABLE, ctx->stats);
	}
	/* n == 0: the entry became a table meanwhile; descend. */
	return n ? (int)n : 0;
}

static void flush_after(struct slat_table *t, const struct attr_data *d,
			uint64_t ipa, uint64_t size, struct slat_stats *st)
{
	if (!d->changed)
		return;
	if (d->policy == SLAT_FLUSH_RANGE)
		slat_tlbi_range(t, ipa, size, st);
	else if (d->policy == SLAT_FLUSH_VMID)
		slat_tlbi_vmid(t, st);
}

int slat_wrprotect(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		   enum slat_tlbi_policy policy, struct slat_page_cache *cache,
		   uint64_t *done)
{
	if (done)
		*done = 0;
	if (!t || !tlbi_policy_ok(policy))
		return SLAT_E_INVAL;
	int ret = slat_check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;

	struct attr_data d = {
		.policy = policy, .cache = cache, .fail_addr = ipa.ipa + size,
	};
	struct slat_walker w = {
		.cb = wrprotect_visitor, .arg = &d, .flags = SLAT_VISIT_LEAF,
		.stop_level = SLAT_LAST_LEVEL,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, false, cache);
	ret = slat_walk(t, ipa.ipa, size, &w, st);
	flush_after(t, &d, ipa.ipa, size, st);
	if (done)
		*done = d.fail_addr - ipa.ipa;
	slat_stats_end(t, st, &local);
	return ret;
}

/* ---- relax ---- */

/* The leaf with @perms added is one the format can express. */
static bool relaxed_attrs_ok(const struct slat_table *t, slat_pte_t leaf,
			     uint32_t perms)
{
	uint32_t attrs = t->fmt->leaf_attrs(t, leaf) & ~(SLAT_YOUNG | SLAT_DIRTY);
	return t->fmt->check_attrs(t, attrs | perms) == SLAT_OK;
}

static int relax_leaf(const struct slat_walk_ctx *ctx, struct attr_data *d,
		      slat_pte_t *ptep, slat_pte_t old, uint64_t addr)
{
	struct slat_table *t = ctx->t;
	if (!relaxed_attrs_ok(t, old, d->perms))
		return SLAT_E_ATTR;
	uint32_t attrs = t->fmt->leaf_attrs(t, old);
	slat_pte_t new = t->fmt->leaf_with_perms(t, old, (attrs | d->perms) & SLAT_PERMS);
	new |= t->fmt->young_bit;
	if (new == old)
		return SLAT_OK;

	bool adds_exec = (d->perms & ~attrs & SLAT_X) && t->fmt->cache_maintenance &&
			 !(t->cfg.features & SLAT_FEAT_DIC);
	uint64_t size = level_size(t, ctx->level);
	if (adds_exec) {
		/* Lock first, so only the winner invalidates the I-cache. */
		int ret = update_leaf(ctx, ptep, old, t->fmt->locked);
		if (ret)
			return ret;
		ctx->stats->written[SLAT_WRITE_ATTR]--;
		ctx->stats->icache_calls++;
		ctx->stats->icache_bytes += size;
		t->mm->icache_inval_pou(t->mm_ctx, t->fmt->pte_pa(t, old), size);
		pte_write(ptep, new);
		ctx->stats->written[SLAT_WRITE_ATTR]++;
	} else {
		int ret = update_leaf(ctx, ptep, old, new);
		if (ret)
			return ret;
	}
	d->changed = true;
	/* A stale entry with fewer permissions would only fault again: on
	 * Arm, where it may stay cached, invalidate this CPU only; on EPT the
	 * violation itself removes it. */
	if (!t->fmt->fault_invalidates)
		slat_tlbi_ipa(t, addr, ctx->level, SLAT_TLBI_LOCAL, ctx->stats);
	return SLAT_OK;
}

static int relax_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct attr_data *d = ctx->arg;
	struct slat_table *t = ctx->t;

	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return SLAT_E_AGAIN;
	}
	if (pte_valid(t, ctx->old) && !walk_entry_covered(ctx)) {
		uint32_t have = t->fmt->leaf_attrs(t, ctx->old);
		if ((have & d->perms) == d->perms && (have & SLAT_YOUNG))
			return 1;
		if (!relaxed_attrs_ok(t, ctx->old, d->perms)) {
			/* Before the split changes anything. */
			d->fail_addr = walk_first_addr(ctx);
			return SLAT_E_ATTR;
		}
		return split_or_fail(ctx, d);
	}

	uint32_t max = walk_covered_entries(ctx), n;
	uint64_t size = level_size(t, ctx->level);
	for (n = 0; n < (max ? max : 1); n++) {
		slat_pte_t pte = pte_read(&ctx->ptep[n]);
		if (pte_table(t, pte, ctx->level))
			break;
		int ret = !pte_valid(t, pte) ? (pte_locked(t, pte) ? SLAT_E_AGAIN
								   : SLAT_E_NOENT)
					     : relax_leaf(ctx, d, &ctx->ptep[n], pte,
							  ctx->addr + n * size);
		if (ret) {
			d->fail_addr = ctx->addr + n * size > ctx->start
					       ? ctx->addr + n * size : ctx->start;
			return ret;
		}
	}
	/* n == 0: the entry became a table meanwhile; descend. */
	return n ? (int)n : 0;
}

/*
 * Refuse before any change: a hole in the range (SLAT_E_NOENT), or a leaf
 * the added permissions would make invalid (SLAT_E_ATTR: execute on device
 * memory, EPT write or execute without read, ...).
 */
static int relax_check_visitor(const struct slat_walk_ctx *ctx,
			       enum slat_visit visit)
{
	(void)visit;
	const struct attr_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return SLAT_E_AGAIN;
	}
	if (!pte_valid(t, ctx->old))
		return SLAT_E_NOENT;
	return relaxed_attrs_ok(t, ctx->old, d->perms) ? 1 : SLAT_E_ATTR;
}

int slat_relax(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	       uint32_t perms, uint32_t flags, struct slat_page_cache *cache,
	       uint64_t *done)
{
	if (done)
		*done = 0;
	if (!t || (flags & ~SLAT_SHARED))
		return SLAT_E_INVAL;
	int ret = slat_check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;
	/* Whether the result is valid depends on each leaf: checked there. */
	if (perms & ~SLAT_PERMS)
		return SLAT_E_ATTR;

	bool shared = flags & SLAT_SHARED;
	uint32_t wflags = SLAT_VISIT_LEAF | (shared ? SLAT_WALK_SHARED : 0);
	struct attr_data d = {
		.perms = perms, .cache = cache, .fail_addr = ipa.ipa + size,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, shared, cache);
	/* One page cannot be half changed; a larger range is checked first. */
	if (size > (1ull << t->geo.granule_shift)) {
		struct slat_walker check = {
			.cb = relax_check_visitor, .arg = &d, .flags = wflags,
			.stop_level = SLAT_LAST_LEVEL,
		};
		ret = slat_walk(t, ipa.ipa, size, &check, st);
	}
	if (!ret) {
		struct slat_walker w = {
			.cb = relax_visitor, .arg = &d, .flags = wflags,
			.stop_level = SLAT_LAST_LEVEL,
		};
		ret = slat_walk(t, ipa.ipa, size, &w, st);
		if (done)
			*done = (ret ? d.fail_addr : ipa.ipa + size) - ipa.ipa;
	}
	slat_stats_end(t, st, &local);
	if (ret)
		return ret;
	return d.changed ? SLAT_OK : SLAT_NOTHING_TO_DO;
}

/* ---- access flag ---- */

/* The bulk case: last-level entries, exclusive; no call per entry. */
static int young_pages(const struct slat_walk_ctx *ctx, struct attr_data *d,
		       uint32_t n)
{
	struct slat_table *t = ctx->t;
	slat_pte_t af = t->fmt->young_bit, present = t->fmt->present_mask;
	slat_pte_t *p = ctx->ptep, seen = 0;
	uint64_t cleared = 0;

	for (uint32_t i = 0; i < n; i++) {
		slat_pte_t pte = pte_read(&p[i]);
		if (!(pte & present))
			continue;
		seen |= pte;
		if (d->mkold && (pte & af)) {
			__atomic_store_n(&p[i], pte & ~af, __ATOMIC_RELAXED);
			cleared++;
		}
	}
	d->young |= (seen & af) != 0;
	ctx->stats->written[SLAT_WRITE_ATTR] += cleared;
	return (int)n;
}

static int young_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	(void)visit;
	struct attr_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	slat_pte_t af = t->fmt->young_bit;
	uint32_t n, max = walk_covered_entries(ctx);
	if (ctx->level == SLAT_LAST_LEVEL && !walk_shared(ctx) &&
	    !hw_updates_ptes(t))
		return young_pages(ctx, d, max ? max : 1);

	for (n = 0; n < (max ? max : 1); n++) {
		slat_pte_t *ptep = &ctx->ptep[n];
		slat_pte_t pte = pte_read(ptep);
		if (pte_table(t, pte, ctx->level))
			break;
		if (!pte_valid(t, pte) || !(pte & af))
			continue;
		d->young = true;
		if (!d->mkold)
			continue;
		/* The access flag is a hint: retry rather than fail. */
		while (update_leaf(ctx, ptep, pte, pte & ~af) == SLAT_E_AGAIN) {
			pte = pte_read(ptep);
			if (!pte_valid(t, pte) || !(pte & af))
				break;
		}
	}
	/* n == 0: the entry became a table meanwhile; descend. */
	return n ? (int)n : 0;
}

int slat_test_clear_young(struct slat_table *t, slat_ipa_t ipa,
			  uint64_t size, bool mkold, uint32_t flags)
{
	if (!t || (flags & ~SLAT_SHARED))
		return SLAT_E_INVAL;
	int ret = slat_check_ipa_range(t, ipa.ipa, size);
	if (ret)
		return ret;
	bool shared = flags & SLAT_SHARED;
	struct attr_data d = { .mkold = mkold };
	struct slat_walker w = {
		.cb = young_visitor, .arg = &d,
		.flags = SLAT_VISIT_LEAF | (shared ? SLAT_WALK_SHARED : 0),
		.stop_level = SLAT_LAST_LEVEL,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, shared, NULL);
	ret = slat_walk(t, ipa.ipa, size, &w, st);
	slat_stats_end(t, st, &local);
	if (ret)
		return ret;
	return d.young ? 1 : 0;
}

int slat_mkyoung(struct slat_table *t, slat_ipa_t ipa, uint32_t flags)
{
	if (!t || (flags & ~SLAT_SHARED))
		return SLAT_E_INVAL;
	uint64_t g = 1ull << t->geo.granule_shift;
	int ret = slat_check_ipa_range(t, ipa.ipa & ~(g - 1), g);
	if (ret)
		return ret;

	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, flags & SLAT_SHARED, NULL);
	slat_pte_t *table = t->root;
	int level = t->geo.start_level;
	for (;;) {
		slat_pte_t *ptep = &table[table_index(t, ipa.ipa, level)];
		slat_pte_t pte = pte_read(ptep);
		st->visited++;
		if (pte_table(t, pte, level)) {
			table = table_va(t, pte);
			level++;
			continue;
		}
		if (pte_locked(t, pte)) {
			st->retries++;
			ret = SLAT_E_AGAIN;
		} else if (!pte_valid(t, pte)) {
			ret = SLAT_E_NOENT;
		} else if (pte & t->fmt->young_bit) {
			ret = SLAT_NOTHING_TO_DO;
		} else {
			ret = SLAT_OK;
			if (flags & SLAT_SHARED) {
				if (!pte_cas(ptep, pte, pte | t->fmt->young_bit)) {
					st->retries++;
					ret = SLAT_E_AGAIN;
				}
			} else {
				pte_write(ptep, pte | t->fmt->young_bit);
			}
			if (!ret)
				st->written[SLAT_WRITE_ATTR]++;
		}
		break;
	}
	slat_stats_end(t, st, &local);
	return ret;
}
