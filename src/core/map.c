/* SPDX-License-Identifier: MIT */
/*
 * map and unmap. Runs of entries in one table are written with straight
 * stores; break-before-make only where a valid translation changes.
 */
#include "internal.h"

/* What decides the memory type: EPT's ignore-PAT too. */
#define MEMTYPE_ATTRS (SLAT_MT_MASK | SLAT_IPAT)

#define MAP_FLAGS (SLAT_SHARED | SLAT_MAP_NO_REPLACE | SLAT_MAP_CAP(0x3f))

struct map_data {
	uint64_t ipa, pa;       /* the request's first IPA and PA */
	uint32_t attrs;
	unsigned cap_shift;     /* largest leaf allowed, log2 bytes */
	struct slat_page_cache *cache;
	uint64_t fail_addr;     /* first IPA not done, on error */
	bool wrote;
};

static uint64_t map_pa(const struct map_data *d, uint64_t addr)
{
	return d->pa + (addr - d->ipa);
}

/* One leaf at @level can map the whole entry at @addr. */
static bool leaf_fits(const struct slat_table *t, const struct map_data *d,
		      int level, uint64_t addr, uint64_t end)
{
	uint64_t size = level_size(t, level);
	/* The cap never forbids the last level's pages. */
	bool capped = level < SLAT_LAST_LEVEL && level_shift(t, level) > d->cap_shift;
	return leaf_allowed(t, level) && !capped &&
	       (addr & (size - 1)) == 0 && end - addr >= size &&
	       (map_pa(d, addr) & (size - 1)) == 0;
}

/* The level of the first leaf that will map @addr, below @level. */
static int target_level(const struct slat_table *t, const struct map_data *d,
			int level, uint64_t addr, uint64_t end)
{
	for (int l = level + 1; l < SLAT_LAST_LEVEL; l++)
		if (leaf_fits(t, d, l, addr, end))
			return l;
	return SLAT_LAST_LEVEL;
}

/* @leaf (at ctx's level) already translates [addr, ...) as requested. */
static bool same_translation(const struct slat_table *t,
			     const struct map_data *d, slat_pte_t leaf,
			     uint64_t leaf_addr, uint64_t addr)
{
	uint64_t pa = t->fmt->pte_pa(t, leaf).pa + (addr - leaf_addr);
	return pa == map_pa(d, addr) &&
	       (t->fmt->leaf_attrs(t, leaf) & MEMTYPE_ATTRS) ==
		       (d->attrs & MEMTYPE_ATTRS);
}

static bool subtree_has_same(const struct slat_table *t,
			     const struct map_data *d, slat_pte_t *table,
			     int level, uint64_t base)
{
	uint64_t size = level_size(t, level);
	for (uint32_t i = 0; i < t->geo.entries; i++) {
		slat_pte_t pte = pte_read(&table[i]);
		uint64_t addr = base + i * size;
		if (pte_table(t, pte, level)) {
			if (subtree_has_same(t, d, table_va(t, pte), level + 1, addr))
				return true;
		} else if (pte_valid(t, pte) &&
			   same_translation(t, d, pte, addr, addr)) {
			return true;
		}
	}
	return false;
}

static int fail(struct map_data *d, const struct slat_walk_ctx *ctx, int ret)
{
	d->fail_addr = walk_first_addr(ctx);
	return ret;
}

/* Consecutive empty entries from ctx->ptep, within the first @max. */
static uint32_t empty_run(const struct slat_walk_ctx *ctx, uint32_t max)
{
	uint32_t n = 0;
	while (n < max && pte_read(&ctx->ptep[n]) == 0)
		n++;
	return n;
}

static void store_leaf_run(struct slat_table *t, slat_pte_t *ptep, uint32_t n,
			   slat_pte_t first, uint64_t step, slat_pa_t pa)
{
	/* Leaves lead to guest memory, not to tables: relaxed stores are
	 * enough; the cache maintenance hook completes with its own barrier. */
	if (pa_run_linear(pa, n * step)) {
		for (uint32_t i = 0; i < n; i++, first += step)
			__atomic_store_n(&ptep[i], first, __ATOMIC_RELAXED);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		__atomic_store_n(&ptep[i],
				 t->fmt->pte_with_pa(t, first, slat_pa(pa.pa + i * step)),
				 __ATOMIC_RELAXED);
}

/*
 * Publish the new @leaf (of @level, output address @pa) into the empty
 * entry @ptep. Shared: whoever wins the entry (a CAS to the locked marker)
 * does the cache maintenance @cmo and publishes, so a vCPU never sees the
 * leaf before its memory is clean (seed 000); with nothing to clean, the
 * CAS installs the leaf itself.
 */
static inline __attribute__((always_inline)) int
install_one_leaf(struct slat_table *t, slat_pte_t *ptep, int level,
		 slat_pte_t leaf, slat_pa_t pa, uint64_t size, unsigned cmo,
		 bool shared, struct slat_stats *st)
{
	if (!shared) {
		if (cmo)
			slat_cmo_do(t, pa, size, cmo, st);
		slat_note_block(t, ptep, level, false);
		pte_write(ptep, leaf);
	} else if (!cmo) {
		if (!pte_cas(ptep, 0, leaf))
			goto lost;
	} else {
		if (!pte_cas(ptep, 0, t->fmt->locked))
			goto lost;
		slat_cmo_do(t, pa, size, cmo, st);
		pte_write(ptep, leaf);
	}
	st->written[SLAT_WRITE_LEAF]++;
	slat_refcount_add(t, ptep, level, 1, shared);
	return SLAT_OK;
lost:
	st->retries++;
	return SLAT_E_AGAIN;
}

static int map_install_run(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	uint64_t size = level_size(t, ctx->level);
	slat_pa_t pa = slat_pa(map_pa(d, ctx->addr));

	/* Shared walkers claim entries one at a time. */
	slat_pte_t leaf = t->fmt->make_leaf(t, pa, d->attrs, ctx->level);
	if (walk_shared(ctx)) {
		int ret = install_one_leaf(t, ctx->ptep, ctx->level, leaf, pa,
					   size, slat_cmo_kinds(t, d->attrs),
					   true, ctx->stats);
		if (ret)
			return fail(d, ctx, ret);
		d->wrote = true;
		return 1;
	}

	uint32_t max = walk_covered_entries(ctx);
	/* One entry (the fault path) or a table with no entries: no scan. */
	bool empty = max == 1 || (!is_root_level(t, ctx->level) &&
		     slat_refcount_get(t, table_page_of(t, ctx->ptep)) == 0);
	uint32_t n = empty ? max : empty_run(ctx, max);
	slat_cmo_new_leaf(t, pa, n * size, d->attrs, ctx->stats);
	store_leaf_run(t, ctx->ptep, n, leaf, size, pa);
	ctx->stats->written[SLAT_WRITE_LEAF] += n;
	slat_refcount_add(t, ctx->ptep, ctx->level, (int32_t)n, false);
	slat_note_block(t, ctx->ptep, ctx->level, false);
	d->wrote = true;
	return (int)n;
}

static int map_replace_leaf(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	if (same_translation(t, d, ctx->old, ctx->addr, ctx->addr))
		return 1;

	slat_pa_t pa = slat_pa(map_pa(d, ctx->addr));
	int ret = slat_break_entry(ctx, false, NULL);
	if (ret)
		return fail(d, ctx, ret);
	slat_cmo_new_leaf(t, pa, level_size(t, ctx->level), d->attrs, ctx->stats);
	slat_make_entry(ctx, t->fmt->make_leaf(t, pa, d->attrs, ctx->level));
	d->wrote = true;
	return 1;
}

/* The range covers a table's whole span with one leaf: swap them. */
static int map_replace_table(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	void *old_table = table_va(t, ctx->old);
	/* Pages already translated as asked are left alone, so keep it. */
	if (subtree_has_same(t, d, old_table, ctx->level + 1, ctx->addr))
		return 0;

	slat_pa_t pa = slat_pa(map_pa(d, ctx->addr));
	int ret = slat_break_entry(ctx, true, NULL);
	if (ret)
		return fail(d, ctx, ret);
	slat_cmo_new_leaf(t, pa, level_size(t, ctx->level), d->attrs, ctx->stats);
	slat_make_entry(ctx, t->fmt->make_leaf(t, pa, d->attrs, ctx->level));
	slat_release_unlinked(t, old_table, ctx->level + 1, true, ctx->stats);
	d->wrote = true;
	return 1;
}

/* An empty entry that needs smaller leaves: link a new table. */
static int map_new_table(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	uint64_t addr = walk_first_addr(ctx);
	/* Never leave an empty table behind: take the whole chain or nothing. */
	int chain = target_level(t, d, ctx->level, addr, ctx->end) - ctx->level;
	if (!d->cache || d->cache->nr < (uint32_t)chain)
		return fail(d, ctx, SLAT_E_NOMEM);

	void *page = slat_cache_pop(t, d->cache, ctx->stats);
	slat_pte_t table = t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx, page));
	if (walk_shared(ctx)) {
		if (!pte_cas(ctx->ptep, 0, table)) {
			slat_cache_unpop(d->cache, page, ctx->stats);
			ctx->stats->retries++;
			return fail(d, ctx, SLAT_E_AGAIN);
		}
		ctx->stats->written[SLAT_WRITE_TABLE]++;
	} else {
		slat_make_entry(ctx, table);
	}
	slat_refcount_add(t, ctx->ptep, ctx->level, 1, walk_shared(ctx));
	return 0;
}

static int map_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct map_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	bool fits = leaf_fits(t, d, ctx->level, ctx->addr, ctx->end) &&
		    ctx->addr >= ctx->start;

	if (visit == SLAT_VISIT_TABLE_PRE)
		return fits ? map_replace_table(ctx, d) : 0;
	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return fail(d, ctx, SLAT_E_AGAIN);
	}
	if (fits)
		return pte_valid(t, ctx->old) ? map_replace_leaf(ctx, d)
					       : map_install_run(ctx, d);
	if (!pte_valid(t, ctx->old))
		return map_new_table(ctx, d);
	/* A larger block: keep it if it already translates the covered part. */
	if (same_translation(t, d, ctx->old, ctx->addr, walk_first_addr(ctx)))
		return 1;
	int ret = slat_split_block(ctx, d->cache);
	return ret ? fail(d, ctx, ret) : 0;
}

/* ---- the fault path ---- */

/*
 * Remember in @cache how @attrs encode for @t. With the output address in
 * place in the descriptor (t->oa_mask), a leaf is that encoding ORed with
 * its address. Returns the memo, or NULL (and the memo empty) when the
 * format places the address otherwise.
 */
static const struct slat_leaf_memo *
memo_fill(const struct slat_table *t, struct slat_page_cache *cache,
	  uint32_t attrs)
{
	struct slat_leaf_memo *m = &cache->memo;

	m->table_id = 0;
	if (!t->oa_mask)
		return NULL;
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++)
		m->leaf[level] = leaf_allowed(t, level)
			? t->fmt->make_leaf(t, slat_pa(0), attrs, level) : 0;
	m->attrs = attrs;
	m->cmo = slat_cmo_kinds(t, attrs);
	m->table_id = t->id;
	return m;
}

/* @cache's memo when it holds @attrs for @t (already checked), else NULL. */
static const struct slat_leaf_memo *
memo_hit(const struct slat_table *t, const struct slat_page_cache *cache,
	 uint32_t attrs)
{
	if (cache && cache->memo.table_id == t->id && cache->memo.attrs == attrs)
		return &cache->memo;
	return NULL;
}

/*
 * The entry at @level for @ipa, under tables as make_table() writes them;
 * NULL when one is missing. Counts the entries read. @in_place (a constant
 * at each call, so two copies): table addresses are pte & oa_mask in a
 * linear map, and each level is a load, a test and an add, with no call.
 */
static inline __attribute__((always_inline)) slat_pte_t *
descend(const struct slat_table *t, uint64_t ipa, int level, bool in_place,
	struct slat_stats *st)
{
	/* The IPA was checked against ia_bits: its root index is in range. */
	uint64_t index_mask = ~0ull;
	unsigned shift = level_shift(t, t->geo.start_level);
	slat_pte_t *table = t->root;
	int depth = level - t->geo.start_level;

	for (int n = 0; n < depth; n++, shift -= t->geo.bits_per_level) {
		slat_pte_t pte = pte_read(&table[(ipa >> shift) & index_mask]);
		if (!pte_links_table(t, pte)) {
			st->visited += (uint64_t)n + 1;
			return NULL;
		}
		table = in_place ? (slat_pte_t *)((intptr_t)(pte & t->oa_mask) +
						  t->linear_offset)
				 : table_va(t, pte);
		index_mask = t->geo.entries - 1;
	}
	st->visited += (uint64_t)depth + 1;
	return &table[(ipa >> shift) & index_mask];
}

/*
 * The fault path maps one leaf into an empty entry under existing tables:
 * descend directly instead of walking. Anything else (a missing table, an
 * entry in use, a leaf the cap or the alignment forbids) is left to the
 * walk. Returns 1 when it did nothing.
 */
static inline __attribute__((always_inline)) int
map_one_leaf(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	     uint32_t attrs, unsigned cap_shift, const struct slat_leaf_memo *m,
	     bool shared, struct slat_stats *st)
{
	unsigned leaf_shift = (unsigned)__builtin_ctzll(size);
	int level = t->leaf_level[leaf_shift];

	if (level < 0 || (pa & (size - 1)) ||
	    (leaf_shift > cap_shift && level < SLAT_LAST_LEVEL))
		return 1;
	slat_pte_t *ptep = t->linear && t->oa_mask
		? descend(t, ipa, level, true, st)
		: descend(t, ipa, level, false, st);
	if (!ptep || pte_read(ptep) != 0)
		return 1;
	slat_pte_t leaf = m ? m->leaf[level] | pa
			    : t->fmt->make_leaf(t, slat_pa(pa), attrs, level);
	unsigned cmo = m ? m->cmo : slat_cmo_kinds(t, attrs);
	return install_one_leaf(t, ptep, level, leaf, slat_pa(pa), size, cmo,
				shared, st);
}

/*
 * One leaf's worth of valid input, in few tests: with attributes from a
 * memo (checked before) this replaces check_map_input(). False is no
 * verdict: the full check then runs.
 */
static inline bool one_leaf_input_ok(const struct slat_table *t, uint64_t ipa,
				     uint64_t size, uint64_t pa, uint32_t flags)
{
	uint64_t last = size - 1;
	uint64_t in_granule = (1ull << t->geo.granule_shift) - 1;
	/* Known flags; a power of two of at least a granule (size 0 fails
	 * the address sizes); both addresses aligned to it and inside the
	 * address sizes. One branch. */
	return ((flags & ~MAP_FLAGS) | (size & last) |
		((last & in_granule) ^ in_granule) | ((ipa | pa) & last) |
		((ipa | last) >> t->geo.ia_bits) |
		((pa | last) >> t->geo.pa_bits)) == 0;
}

/* SLAT_MAP_NO_REPLACE: refuse before changing anything. */
static int no_replace_visitor(const struct slat_walk_ctx *ctx,
			      enum slat_visit visit)
{
	(void)visit;
	struct map_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	if (!pte_valid(ctx->t, ctx->old))
		return pte_locked(t, ctx->old) ? SLAT_E_AGAIN : 1;
	return same_translation(t, d, ctx->old, ctx->addr, walk_first_addr(ctx))
		       ? 1 : SLAT_E_EXISTS;
}

static int check_map_input(const struct slat_table *t, uint64_t ipa,
			   uint64_t size, uint64_t pa, uint32_t attrs,
			   uint32_t flags)
{
	if (flags & ~MAP_FLAGS)
		return SLAT_E_INVAL;
	int ret = slat_check_ipa_range(t, ipa, size);
	if (ret)
		return ret;
	if (pa & ((1ull << t->geo.granule_shift) - 1))
		return SLAT_E_ALIGN;
	uint64_t limit = 1ull << t->geo.pa_bits;
	if (pa >= limit || size > limit - pa)
		return SLAT_E_RANGE;
	return t->fmt->check_attrs(t, attrs);
}

/* The largest leaf @flags allow, log2 bytes (63: no cap). */
static inline unsigned map_cap_shift(uint32_t flags)
{
	unsigned cap = SLAT_MAP_CAP_SHIFT(flags);
	return cap ? cap : 63;
}

/* The general path: any range, any layout, through the walker. Not
 * inlined, so that the fault path stays short. */
static __attribute__((noinline)) int
map_walk(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	 uint32_t attrs, uint32_t flags, unsigned cap_shift,
	 struct slat_page_cache *cache, struct slat_stats *st, uint64_t *done)
{
	struct map_data d = {
		.ipa = ipa, .pa = pa, .attrs = attrs, .cap_shift = cap_shift,
		.cache = cache, .fail_addr = ipa + size,
	};
	uint32_t wflags = flags & SLAT_SHARED ? SLAT_WALK_SHARED : 0;
	int ret = SLAT_OK;

	if (flags & SLAT_MAP_NO_REPLACE) {
		struct slat_walker check = {
			.cb = no_replace_visitor, .arg = &d,
			.flags = SLAT_VISIT_LEAF | wflags,
			.stop_level = SLAT_LAST_LEVEL,
		};
		ret = slat_walk(t, ipa, size, &check, st);
		if (ret)
			d.fail_addr = ipa;
	}
	if (ret == SLAT_OK) {
		struct slat_walker w = {
			.cb = map_visitor, .arg = &d,
			.flags = SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_PRE | wflags,
			.stop_level = SLAT_LAST_LEVEL,
		};
		ret = slat_walk(t, ipa, size, &w, st);
	}
	if (done && ret != SLAT_E_EXISTS)
		*done = (ret ? d.fail_addr : ipa + size) - ipa;
	if (ret)
		return ret;
	return d.wrote ? SLAT_OK : SLAT_NOTHING_TO_DO;
}

/*
 * Where the fault path counts: the table's counters when exclusive, the
 * caller's own when shared; NULL for shared calls without counters of their
 * own (the general path adds theirs up atomically).
 */
static inline struct slat_stats *fault_stats(struct slat_table *t,
					     uint32_t flags,
					     const struct slat_page_cache *cache)
{
	return flags & SLAT_SHARED ? cache->stats : &t->stats;
}

/*
 * Any map. @m: the cache's memo for @attrs (so they were checked), or NULL.
 * @tried: map_one_leaf() already ran for this call and returned 1. Not
 * inlined, so that the fault path's frame stays small.
 */
static __attribute__((noinline)) int
map_general(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	    uint32_t attrs, uint32_t flags, struct slat_page_cache *cache,
	    const struct slat_leaf_memo *m, bool tried, uint64_t *done)
{
	int ret;

	if (!m || !one_leaf_input_ok(t, ipa, size, pa, flags)) {
		ret = check_map_input(t, ipa, size, pa, attrs, flags);
		if (ret)
			return ret;
		if (!m && cache)
			m = memo_fill(t, cache, attrs);
	}

	bool shared = flags & SLAT_SHARED;
	unsigned cap_shift = map_cap_shift(flags);
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, shared, cache);

	/* An empty entry satisfies SLAT_MAP_NO_REPLACE by itself. */
	ret = !tried && (size & (size - 1)) == 0
		? map_one_leaf(t, ipa, size, pa, attrs, cap_shift, m, shared, st)
		: 1;
	if (ret == 1)
		ret = map_walk(t, ipa, size, pa, attrs, flags, cap_shift, cache,
			       st, done);
	else if (done && ret == SLAT_OK)
		*done = size;
	slat_stats_end(t, st, &local);
	return ret;
}

int slat_map(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	     slat_pa_t pa, uint32_t attrs, uint32_t flags,
	     struct slat_page_cache *cache, uint64_t *done)
{
	if (done)
		*done = 0;
	if (!t)
		return SLAT_E_INVAL;
	/* The fault path: a vCPU's faults repeat the attributes, which the
	 * cache's memo holds checked and encoded. */
	const struct slat_leaf_memo *m = memo_hit(t, cache, attrs);
	struct slat_stats *st = m ? fault_stats(t, flags, cache) : NULL;
	if (st && one_leaf_input_ok(t, ipa.ipa, size, pa.pa, flags)) {
		int ret = map_one_leaf(t, ipa.ipa, size, pa.pa, attrs,
				       map_cap_shift(flags), m,
				       flags & SLAT_SHARED, st);
		if (ret != 1) {
			if (done && ret == SLAT_OK)
				*done = size;
			return ret;
		}
		return map_general(t, ipa.ipa, size, pa.pa, attrs, flags,
				   cache, m, true, done);
	}
	return map_general(t, ipa.ipa, size, pa.pa, attrs, flags, cache, m,
			   false, done);
}

/* ---- unmap ---- */

struct unmap_data {
	struct slat_batch batch;
	struct slat_page_cache *cache;
	uint64_t fail_addr;
};

static void unlink_table(const struct slat_walk_ctx *ctx, struct unmap_data *d)
{
	struct slat_table *t = ctx->t;
	void *table = table_va(t, ctx->old);

	pte_write(ctx->ptep, 0);
	ctx->stats->written[SLAT_WRITE_CLEAR]++;
	slat_refcount_add(t, ctx->ptep, ctx->level, -1, false);
	if (d->batch.policy == SLAT_FLUSH_ENTRY) {
		slat_tlbi_ipa(t, ctx->addr, SLAT_LEVEL_ANY,
			      SLAT_TLBI_INNER_SHAREABLE, ctx->stats);
		slat_release_unlinked(t, table, ctx->level + 1, true, ctx->stats);
		return;
	}
	slat_batch_add(t, &d->batch, ctx->addr, table, ctx->level + 1, NULL, 0,
		       ctx->stats);
}

static int unmap_leaf_run(const struct slat_walk_ctx *ctx, struct unmap_data *d)
{
	struct slat_table *t = ctx->t;
	uint32_t max = walk_covered_entries(ctx), n, cleared = 0;
	uint64_t size = level_size(t, ctx->level);

	for (n = 0; n < max; n++) {
		slat_pte_t pte = pte_read(&ctx->ptep[n]);
		if (pte == 0)
			continue;
		if (pte_table(t, pte, ctx->level))
			break;
		__atomic_store_n(&ctx->ptep[n], 0, __ATOMIC_RELAXED);
		cleared++;
		if (d->batch.policy == SLAT_FLUSH_ENTRY)
			slat_tlbi_ipa(t, ctx->addr + n * size, ctx->level,
				    SLAT_TLBI_INNER_SHAREABLE, ctx->stats);
	}
	ctx->stats->written[SLAT_WRITE_CLEAR] += cleared;
	slat_refcount_add(t, ctx->ptep, ctx->level, -(int32_t)cleared, false);
	d->batch.changed |= cleared != 0;
	return (int)n;
}

static int unmap_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct unmap_data *d = ctx->arg;
	struct slat_table *t = ctx->t;

	switch (visit) {
	case SLAT_VISIT_TABLE_PRE:
		if (!walk_entry_covered(ctx) || d->batch.policy == SLAT_FLUSH_ENTRY)
			return 0;
		unlink_table(ctx, d);
		d->batch.changed = true;
		return 1;
	case SLAT_VISIT_TABLE_POST:
		if (slat_refcount_get(t, table_va(t, ctx->old)) == 0)
			unlink_table(ctx, d);
		return 0;
	default:
		break;
	}
	if (!pte_valid(t, ctx->old) || walk_entry_covered(ctx))
		return unmap_leaf_run(ctx, d);
	int ret = slat_split_block(ctx, d->cache);
	if (ret)
		d->fail_addr = walk_first_addr(ctx);
	return ret;
}

int slat_unmap(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
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

	/* Field by field: the batch's array needs no zeroing. */
	struct unmap_data d;
	slat_batch_init(&d.batch, policy, ipa.ipa);
	d.cache = cache;
	d.fail_addr = ipa.ipa + size;
	struct slat_walker w = {
		.cb = unmap_visitor, .arg = &d,
		.flags = SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_PRE | SLAT_VISIT_TABLE_POST,
		.stop_level = SLAT_LAST_LEVEL,
	};
	struct slat_stats local;
	struct slat_stats *st = slat_stats_begin(t, &local, false, cache);
	ret = slat_walk(t, ipa.ipa, size, &w, st);
	slat_batch_flush(t, &d.batch, ipa.ipa + size, st);
	if (done)
		*done = d.fail_addr - ipa.ipa;
	slat_stats_end(t, st, &local);
	return ret;
}
