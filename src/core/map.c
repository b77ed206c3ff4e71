/* SPDX-License-Identifier: MIT */
/*
 * map and unmap. One route for map: the input check, then the one-leaf
 * install (the fault path), whose every "not here" falls back to the
 * general walk; both decide leaf sizes with leaf_fits() and write with the
 * entry primitives.
 */
#include "internal.h"

/* map_one_leaf() did not map: take the general walk. */
#define MAP_WALK 1

/* ---- input and the leaf memo ---- */

/* The largest leaf @flags allow, log2 bytes (63: no cap). */
static inline unsigned map_cap_shift(uint32_t flags)
{
	unsigned cap = SLAT_MAP_CAP_SHIFT(flags);
	return cap ? cap : 63;
}

/* Which input error, once the quick test found one. */
static __attribute__((noinline, cold)) int map_input_error(const struct slat_table *t, uint64_t ipa,
			   uint64_t size, uint64_t pa, uint32_t flags)
{
	if (flags & t->map_flags_refused)
		return SLAT_E_INVAL;
	int ret = check_ipa_range(t, ipa, size);
	if (ret)
		return ret;
	if (pa & granule_mask(t))
		return SLAT_E_ALIGN;
	uint64_t limit = 1ull << t->geo.pa_bits;
	if (pa >= limit || size > limit - pa)
		return SLAT_E_RANGE;
	return SLAT_OK;
}

/*
 * The one input check of map: known flags, a non-empty granule-aligned
 * range inside both address sizes, and (unless @attrs_checked: the cache's
 * memo holds them for this table) attributes the format can express. The
 * common case is one branch.
 */
static inline int check_map_input(const struct slat_table *t, uint64_t ipa,
				  uint64_t size, uint64_t pa, uint32_t attrs,
				  uint32_t flags, bool attrs_checked)
{
	uint64_t last = size - 1; /* size 0 fails the address sizes */
	uint64_t bad = (flags & t->map_flags_refused) |
		       ((ipa | size | pa) & granule_mask(t)) |
		       ((ipa | last | (ipa + last)) >> t->geo.ia_bits) |
		       ((pa | last | (pa + last)) >> t->geo.pa_bits);
	if (__builtin_expect(bad != 0, 0))
		return map_input_error(t, ipa, size, pa, flags);
	return attrs_checked ? SLAT_OK : t->fmt->check_attrs(t, attrs);
}

/*
 * Remember in @cache how @attrs encode for @t: with the output address in
 * place in the descriptor (t->oa_mask), a leaf is that encoding ORed with
 * its address. Returns the memo, or NULL (and the memo empty) when the
 * format places the address otherwise.
 */
static __attribute__((noinline)) struct slat_leaf_memo *
memo_fill(const struct slat_table *t, struct slat_page_cache *cache,
	  uint32_t attrs)
{
	struct slat_leaf_memo *m = &cache->memo;

	m->table_id = 0;
	m->table = NULL;
	m->refcount = NULL;
	if (!t->oa_mask)
		return NULL;
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++)
		m->leaf[level] = leaf_allowed(t, level)
			? t->fmt->make_leaf(t, slat_pa(0), attrs, level) : 0;
	m->attrs = attrs;
	m->cmo = cmo_for_attrs(t, attrs);
	m->table_id = t->id;
	return m;
}

/* @cache's memo when it holds @attrs for @t (already checked), else NULL. */
static inline struct slat_leaf_memo *
memo_hit(const struct slat_table *t, struct slat_page_cache *cache,
	 uint32_t attrs)
{
	if (cache && cache->memo.table_id == t->id && cache->memo.attrs == attrs)
		return &cache->memo;
	return NULL;
}

/* The cache maintenance a new leaf gets: none under SLAT_SKIP_CMO, which
 * counts each kind (D-cache, I-cache) it left to the caller. */
static inline unsigned map_cmo(unsigned need, uint32_t flags,
			       struct slat_stats *st)
{
	if (__builtin_expect((flags & SLAT_SKIP_CMO) != 0, 0)) {
		st->cmo_skipped += !!(need & CORE_CMO_DCACHE) +
				    !!(need & CORE_CMO_ICACHE);
		return 0;
	}
	return need;
}

/* ---- the general walk ---- */

struct map_data {
	struct core_op op;
	uint64_t pa;            /* the PA of op.ipa */
	uint32_t attrs;
	unsigned cap_shift;     /* largest leaf allowed, log2 bytes */
	unsigned cmo;           /* what new leaves need, before SKIP_CMO */
	bool no_replace;        /* SLAT_MAP_NO_REPLACE */
	bool break_block;       /* SLAT_MAP_BREAK_BLOCK, without NO_REPLACE */
	bool wrote;
};

static uint64_t map_pa(const struct map_data *d, uint64_t addr)
{
	return d->pa + (addr - d->op.ipa);
}

/* A leaf at ctx's level can map ctx's whole entry. */
static bool entry_fits(const struct slat_walk_ctx *ctx, const struct map_data *d)
{
	uint64_t first = walk_first_addr(ctx);
	return leaf_fits(ctx->t, ctx->level, first, map_pa(d, first),
			 ctx->end - first, d->cap_shift);
}

/* The level of the first leaf that will map @addr, below @level. */
static int target_level(const struct slat_table *t, const struct map_data *d,
			int level, uint64_t addr, uint64_t end)
{
	for (int l = level + 1; l < SLAT_LAST_LEVEL; l++)
		if (leaf_fits(t, l, addr, map_pa(d, addr), end - addr, d->cap_shift))
			return l;
	return SLAT_LAST_LEVEL;
}

static bool same_translation(const struct slat_table *t,
			     const struct map_data *d, slat_pte_t leaf,
			     uint64_t leaf_addr, uint64_t addr)
{
	return leaf_translates(t, leaf, leaf_addr, addr, map_pa(d, addr),
			       d->attrs);
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

/* Consecutive empty entries from ctx->ptep, within the first @max. */
static uint32_t empty_run(const struct slat_walk_ctx *ctx, uint32_t max)
{
	uint32_t n = 0;
	while (n < max && pte_read(&ctx->ptep[n]) == 0)
		n++;
	return n;
}

static int map_install_run(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	slat_pa_t pa = slat_pa(map_pa(d, ctx->addr));
	bool shared = walk_shared(ctx);
	uint32_t n = 1;

	/* Shared walkers claim entries one at a time; a table with no entries
	 * needs no scan. */
	if (!shared) {
		uint32_t max = walk_run(ctx);
		bool empty = max == 1 || (!is_root_level(t, ctx->level) &&
			     core_refcount_get(t, table_page_of(t, ctx->ptep)) == 0);
		n = empty ? max : empty_run(ctx, max);
	}
	int ret = core_install_leaves(t, ctx->ptep, n, ctx->level,
				      level_size(t, ctx->level),
				      t->fmt->make_leaf(t, pa, d->attrs, ctx->level),
				      pa, map_cmo(d->cmo, d->op.flags, ctx->stats),
				      shared, NULL,
				      entries_ahead(t, d->op.cache, ctx->ptep,
						    ctx->level),
				      ctx->stats);
	if (ret)
		return op_fail(&d->op, ctx->addr, ret);
	d->wrote = true;
	return (int)n;
}

/* Replace ctx's valid entry (a leaf, or a table the range covers whole)
 * by one leaf, with break-before-make. */
static int map_replace(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	slat_pa_t pa = slat_pa(map_pa(d, ctx->addr));
	bool table = pte_table(t, ctx->old, ctx->level);
	int ret = core_break(ctx, NULL, NULL);
	if (ret)
		return op_fail(&d->op, ctx->addr, ret);
	cmo_do(t, pa, level_size(t, ctx->level),
	       map_cmo(d->cmo, d->op.flags, ctx->stats), ctx->stats);
	core_make(ctx, t->fmt->make_leaf(t, pa, d->attrs, ctx->level));
	if (table)
		core_release_unlinked(t, table_va(t, ctx->old), ctx->level + 1,
				      NULL, ctx->stats);
	d->wrote = true;
	return 1;
}

/* An empty entry that needs smaller leaves: link a new table. */
static int map_new_table(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	struct slat_page_cache *cache = d->op.cache;
	uint64_t addr = walk_first_addr(ctx);
	slat_pte_t was;
	/* Never leave an empty table behind: take the whole chain or nothing. */
	int chain = target_level(t, d, ctx->level, addr, ctx->end) - ctx->level;
	int ret = core_cache_check(t, cache, (uint64_t)chain);
	if (ret)
		return op_fail(&d->op, addr, ret);

	void *page = core_cache_pop(ctx->t, cache, ctx->stats);
	slat_pte_t table = t->fmt->make_table(t, t->mm->virt_to_phys(t->mm_ctx, page));
	if (!pte_try_set(t, walk_writers(ctx), ctx->ptep, ctx->old, ~0ull, table,
			 &was)) {
		core_cache_unpop(cache, page, ctx->stats);
		ctx->stats->retries++;
		return op_fail(&d->op, addr, SLAT_E_AGAIN);
	}
	ctx->stats->written[SLAT_WRITE_TABLE]++;
	refcount_note(t, ctx->ptep, ctx->level, 1, false, walk_shared(ctx));
	return 0;
}

/* SLAT_MAP_BREAK_BLOCK: ctx's block, which no leaf of its size can
 * replace, gives way to an empty table; the walk goes on into it. */
static int map_break_block(const struct slat_walk_ctx *ctx, struct map_data *d)
{
	struct slat_table *t = ctx->t;
	uint64_t addr = walk_first_addr(ctx);
	int chain = target_level(t, d, ctx->level, addr, ctx->end) - ctx->level;
	int ret = core_break_block(ctx, d->op.cache, (uint64_t)chain);
	if (ret)
		return op_fail(&d->op, addr, ret);
	d->wrote = true;
	return 0;
}

static int map_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct map_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	bool fits = entry_fits(ctx, d);

	if (visit == SLAT_VISIT_TABLE_PRE) {
		/* Pages already translated as asked are left alone. */
		if (!fits || d->no_replace ||
		    subtree_has_same(t, d, table_va(t, ctx->old), ctx->level + 1,
				     ctx->addr))
			return 0;
		return map_replace(ctx, d);
	}
	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return op_fail(&d->op, ctx->addr, SLAT_E_AGAIN);
	}
	if (fits && !pte_valid(t, ctx->old))
		return map_install_run(ctx, d);
	if (!fits && !pte_valid(t, ctx->old))
		return map_new_table(ctx, d);
	/* A block to break goes whatever it translates. */
	if (!fits && d->break_block)
		return map_break_block(ctx, d);
	/* A valid leaf: keep it if it already translates the covered part. */
	if (same_translation(t, d, ctx->old, ctx->addr, walk_first_addr(ctx)))
		return 1;
	/* Another walker mapped it since the check. */
	if (d->no_replace)
		return op_fail(&d->op, ctx->addr, SLAT_E_EXISTS);
	if (fits)
		return map_replace(ctx, d);
	/* A larger block, only partly covered: split, the rest kept. */
	int ret = core_split_block(ctx, d->op.cache);
	return ret ? op_fail(&d->op, ctx->addr, ret) : 0;
}

/* SLAT_MAP_NO_REPLACE: refuse before changing anything. */
static int no_replace_visitor(const struct slat_walk_ctx *ctx,
			      enum slat_visit visit)
{
	(void)visit;
	struct map_data *d = ctx->arg;
	struct slat_table *t = ctx->t;
	if (pte_locked(t, ctx->old)) {
		ctx->stats->retries++;
		return SLAT_E_AGAIN;
	}
	if (!pte_valid(t, ctx->old))
		return 1;
	return same_translation(t, d, ctx->old, ctx->addr, walk_first_addr(ctx))
		       ? 1 : SLAT_E_EXISTS;
}

/* Any range, any layout, through the walker. Not inlined, so that the
 * fault path stays short. */
static __attribute__((noinline)) int
map_walk(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	 uint32_t attrs, struct slat_op *op)
{
	uint32_t flags = op ? op->flags : 0;
	/* Set field by field: an initializer would zero the op's counters
	 * with a memset, which the freestanding core does not have. */
	struct map_data d;
	d.pa = pa;
	d.attrs = attrs;
	d.cap_shift = map_cap_shift(flags);
	d.cmo = cmo_for_attrs(t, attrs);
	d.no_replace = (flags & SLAT_MAP_NO_REPLACE) != 0;
	d.break_block = (flags & SLAT_MAP_BREAK_BLOCK) && !d.no_replace;
	d.wrote = false;
	/* A replaced translation is invalidated before its replacement is
	 * made: map has no use for a flush policy. */
	struct slat_op args = { flags, SLAT_FLUSH_NONE, op ? op->cache : NULL, 0 };
	int ret = core_op_begin(&d.op, t, slat_ipa(ipa), size, &args,
				CORE_FLAGS_MAP);
	if (ret)
		return ret;
	if (d.no_replace) {
		ret = core_op_walk(&d.op, no_replace_visitor, &d,
				   SLAT_VISIT_LEAF, SLAT_LAST_LEVEL);
		if (ret)
			op_fail(&d.op, ipa, ret);
	}
	if (ret == SLAT_OK)
		ret = core_op_walk(&d.op, map_visitor, &d,
				   SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_PRE,
				   SLAT_LAST_LEVEL);
	ret = core_op_end(&d.op, ret);
	if (op)
		op->done = args.done;
	return ret ? ret : d.wrote ? SLAT_OK : SLAT_NOTHING_TO_DO;
}

/* ---- the fault path ---- */

/*
 * One leaf of exactly the request's size into an empty entry under existing
 * tables, through the one descent, leaf_fits() and core_install_leaves():
 * a fault that map_fault_memo() could not serve. Anything else (a size no
 * leaf has, a leaf that does not fit, a missing table, an entry in use)
 * returns MAP_WALK.
 */
static SLAT_ALWAYS_INLINE int
map_one_leaf(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	     uint32_t attrs, uint32_t flags, struct slat_leaf_memo *m,
	     struct slat_stats *st)
{
	if (size & (size - 1))
		return MAP_WALK;
	unsigned shift = (unsigned)__builtin_ctzll(size);
	int level = t->leaf_level[shift], at;
	if (level < 0 || !leaf_fits_shift(t, level, shift, ipa, pa, size,
					  map_cap_shift(flags)))
		return MAP_WALK;
	slat_pte_t old;
	uint32_t *rc;
	slat_pte_t *ptep = core_descend_fault(t, m, ipa, level, &at, &old, &rc,
					      st);
	if (at != level || old != 0)
		return MAP_WALK;
	/* An empty entry satisfies SLAT_MAP_NO_REPLACE by itself. */
	slat_pte_t leaf = m ? m->leaf[level] | pa
			    : t->fmt->make_leaf(t, slat_pa(pa), attrs, level);
	unsigned cmo = map_cmo(m ? m->cmo : cmo_for_attrs(t, attrs), flags, st);
	return core_install_leaves(t, ptep, 1, level, size, leaf, slat_pa(pa),
				   cmo, (flags & SLAT_SHARED) != 0, rc, NULL, st);
}

/*
 * After the input check: the one-leaf install, else the general walk.
 * Shared callers without counters of their own count atomically, on the
 * general path.
 */
static SLAT_ALWAYS_INLINE int
map_checked(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	    uint32_t attrs, struct slat_op *op, struct slat_leaf_memo *m)
{
	uint32_t flags = op ? op->flags : 0;
	struct slat_stats *st = !(flags & SLAT_SHARED) ? &t->stats
				: op->cache ? op->cache->stats : NULL;
	if (st) {
		int ret = map_one_leaf(t, ipa, size, pa, attrs, flags, m, st);
		if (ret != MAP_WALK) {
			if (op && ret == SLAT_OK)
				op->done = size;
			return ret;
		}
	}
	return map_walk(t, ipa, size, pa, attrs, op);
}

/* Attributes the cache's memo does not hold: checked, then remembered. */
static __attribute__((noinline)) int
map_new_attrs(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	      uint32_t attrs, struct slat_op *op)
{
	if (op)
		op->done = 0;
	if (!table_live(t))
		return SLAT_E_INVAL;
	uint32_t flags = op ? op->flags : 0;
	int ret = check_map_input(t, ipa, size, pa, attrs, flags, false);
	if (ret)
		return ret;
	struct slat_page_cache *cache = op ? op->cache : NULL;
	struct slat_leaf_memo *m = cache ? memo_fill(t, cache, attrs) : NULL;
	return map_checked(t, ipa, size, pa, attrs, op, m);
}

/* Attributes the cache's memo holds, for a request its last table does not
 * serve. Out of line: the fault path's registers are for the memo's case. */
static __attribute__((noinline)) int
map_memo_attrs(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	       uint32_t attrs, struct slat_op *op)
{
	struct slat_leaf_memo *m = &op->cache->memo;
	op->done = 0;
	int ret = check_map_input(t, ipa, size, pa, attrs, op->flags, true);
	if (ret)
		return ret;
	return map_checked(t, ipa, size, pa, attrs, op, m);
}

/* map_fault_memo()'s install for an exclusive caller, out of line: the
 * shared fault then keeps no value live across its clean's call but the
 * entry and the leaf. */
static __attribute__((noinline)) int
map_memo_alone(struct slat_table *t, const struct slat_leaf_memo *m,
	       slat_pte_t *ptep, uint64_t size, uint64_t pa, struct slat_op *op)
{
	int level = m->table_level;
	op->done = size;
	return core_install_leaves(t, ptep, 1, level, size,
				   m->leaf[level] | pa, slat_pa(pa),
				   map_cmo(m->cmo, op->flags, &t->stats),
				   false, m->refcount, NULL, &t->stats);
}

/*
 * The fault path: a leaf of the memo table's leaf size into an empty entry
 * of the table the cache's last fault ended in. The memo proves what the
 * input check and leaf_fits() establish for other requests: the table is
 * still linked (no unlink since), so all it translates is inside the input
 * address size; a leaf of its entries' size is allowed there (a descent for
 * one ended there); the attributes were checked when the memo was filled.
 * Left to test is what each fault brings: its flags (a cap, or a flag the
 * table refuses, takes the general path), the IPA inside the table, the
 * alignment and the PA's size. Anything else goes to map_memo_attrs().
 * Every way out is a return or a tail call: the shared install's clean is
 * the one call that returns here.
 */
static SLAT_ALWAYS_INLINE int
map_fault_memo(struct slat_table *t, struct slat_leaf_memo *m, uint64_t ipa,
	       uint64_t size, uint64_t pa, uint32_t attrs, struct slat_op *op)
{
	uint32_t flags = op->flags;
	uint64_t unlinks = __atomic_load_n(&t->unlinks, __ATOMIC_ACQUIRE);
	uint64_t off = ipa - m->table_ipa;
	/* In locals: the counters' stores may alias the memo. @refcount is set
	 * and cleared with @table. */
	uint32_t *rc = m->refcount;

	if (!rc || m->unlinks != unlinks || size != m->leaf_size)
		return map_memo_attrs(t, ipa, size, pa, attrs, op);
	/* Aligned to its size, the leaf's last byte is pa | (size - 1). */
	uint64_t bad = (flags & t->fault_flags_refused) |
		       (off >> m->table_shift) | leaf_misaligned(ipa, pa, size) |
		       ((pa | (size - 1)) >> t->geo.pa_bits);
	struct slat_stats *st = (flags & SLAT_SHARED) ? op->cache->stats
						      : &t->stats;
	if (bad || !st)
		return map_memo_attrs(t, ipa, size, pa, attrs, op);
	slat_pte_t *ptep = &((slat_pte_t *)m->table)[off >> m->leaf_shift];
	if (pte_read(ptep) != 0)
		return map_memo_attrs(t, ipa, size, pa, attrs, op);
	st->visited++;
	if (!(flags & SLAT_SHARED))
		return map_memo_alone(t, m, ptep, size, pa, op);
	int level = m->table_level;
	/* Set first: then nothing of @op is live across the clean's call. */
	op->done = size;
	int ret = core_install_leaves(t, ptep, 1, level, size,
				      m->leaf[level] | pa, slat_pa(pa),
				      map_cmo(m->cmo, flags, st), true, rc,
				      NULL, st);
	if (ret != SLAT_OK)
		op->done = 0;
	return ret;
}

int slat_map(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	     slat_pa_t pa, uint32_t attrs, struct slat_op *op)
{
	/* Every way on sets op->done: the fault path once. */
	if (!t) {
		if (op)
			op->done = 0;
		return SLAT_E_INVAL;
	}
	/* A vCPU's faults repeat the attributes, which the cache's memo holds
	 * checked and encoded; it never holds them for a destroyed table. */
	struct slat_leaf_memo *m = memo_hit(t, op ? op->cache : NULL, attrs);
	if (!m)
		return map_new_attrs(t, ipa.ipa, size, pa.pa, attrs, op);
	return map_fault_memo(t, m, ipa.ipa, size, pa.pa, attrs, op);
}

/* ---- unmap ---- */

struct unmap_data {
	struct core_op op;
	struct core_batch batch;
};

static int unmap_visitor(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct unmap_data *d = ctx->arg;
	struct slat_table *t = ctx->t;

	switch (visit) {
	case SLAT_VISIT_TABLE_PRE:
		/* A covered table goes whole; one by one under FLUSH_ENTRY. */
		if (!walk_entry_covered(ctx) || d->batch.policy == SLAT_FLUSH_ENTRY)
			return 0;
		core_unlink_table(ctx, &d->batch);
		return 1;
	case SLAT_VISIT_TABLE_POST:
		if (core_refcount_get(t, table_va(t, ctx->old)) == 0)
			core_unlink_table(ctx, &d->batch);
		return 0;
	default:
		break;
	}
	if (!pte_valid(t, ctx->old) || walk_entry_covered(ctx))
		return core_clear_leaves(ctx, &d->batch, ctx->end, d->batch.cmo);
	int ret = core_split_block(ctx, d->op.cache);
	return ret ? op_fail(&d->op, ctx->addr, ret) : 0;
}

int slat_unmap(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	       struct slat_op *args)
{
	/* Field by field: the batch's arrays need no zeroing. */
	struct unmap_data d;
	int ret = core_op_begin(&d.op, t, ipa, size, args, 0);
	if (ret)
		return ret;
	core_batch_init(&d.batch, d.op.policy, d.op.ipa, d.op.end, cmo_needed(t));
	ret = core_op_walk(&d.op, unmap_visitor, &d,
			   SLAT_VISIT_LEAF | SLAT_VISIT_TABLE_PRE |
			   SLAT_VISIT_TABLE_POST, SLAT_LAST_LEVEL);
	core_batch_flush(t, &d.batch, d.op.st);
	return core_op_end(&d.op, ret);
}
