/* SPDX-License-Identifier: MIT */
/*
 * map and unmap. One route for map: the one input check, then the fault
 * path (one leaf of exactly the request's size into an empty entry, the
 * descent starting where the page cache's memo says), whose every "not
 * here" takes the general walk; both decide leaf sizes with leaf_fits()
 * and write with the entry primitives.
 */
#include "internal.h"

/* ---- the leaf memo ---- */

/*
 * Remember in @cache how @attrs (checked) encode for @t: with the output
 * address in place in the descriptor (t->oa_mask), a leaf is that encoding
 * ORed with its address. Returns the memo, or NULL (and the memo empty)
 * when the format places the address otherwise.
 */
static __attribute__((noinline)) struct slat_leaf_memo *
memo_fill(const struct slat_table *t, struct slat_page_cache *cache,
	  uint32_t attrs)
{
	struct slat_leaf_memo *m = &cache->memo;

	m->table_id = 0;
	core_memo_forget(m, __atomic_load_n(&t->unlinks, __ATOMIC_ACQUIRE));
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

struct same_walk {
	const struct slat_table *t;
	const struct map_data *d;
};

/* A leaf that already translates as asked ends the walk. */
static SLAT_ALWAYS_INLINE int same_pre(void *arg, slat_pte_t *ptep,
				       uint32_t nr_left, int level,
				       uint64_t addr)
{
	(void)nr_left;
	struct same_walk *w = arg;
	slat_pte_t pte = pte_read(ptep);
	if (pte_table(w->t, pte, level))
		return 0;
	return pte_valid(w->t, pte) &&
	       same_translation(w->t, w->d, pte, addr, addr) ? SLAT_E_EXISTS : 1;
}

/* Some page under the table at ctx's entry already translates as asked. */
static bool subtree_has_same(const struct slat_walk_ctx *ctx,
			     const struct map_data *d)
{
	struct same_walk w = { ctx->t, d };
	return core_subtree_walk(ctx->t, table_va(ctx->t, ctx->old),
				 ctx->level + 1, ctx->addr, same_pre, NULL,
				 &w) == SLAT_E_EXISTS;
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
	uint64_t size = level_size(t, ctx->level);
	slat_pte_t leaf = t->fmt->make_leaf(t, pa, d->attrs, ctx->level);
	unsigned cmo = map_cmo(d->cmo, d->op.flags, ctx->stats);

	/* Shared walkers claim entries one at a time. */
	if (walk_shared(ctx)) {
		int ret = core_install_leaf(t, ctx->ptep, ctx->level, leaf, pa,
					    size, cmo, true, NULL, ctx->stats);
		if (ret)
			return op_fail(&d->op, ctx->addr, ret);
		d->wrote = true;
		return 1;
	}
	/* A table with no entries needs no scan. */
	uint32_t max = walk_run(ctx);
	bool empty = max == 1 || (!is_root_level(t, ctx->level) &&
		     core_refcount_get(t, table_page_of(t, ctx->ptep)) == 0);
	uint32_t n = empty ? max : empty_run(ctx, max);
	core_install_run(t, ctx->ptep, n, ctx->level, size, leaf, pa, cmo,
			 d->op.cache, ctx->stats);
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
		if (!fits || d->no_replace || subtree_has_same(ctx, d))
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

/* Any range, any layout, through the walker, its input checked
 * (check_map_input(), which the caller ran). Not inlined, so that the
 * fault path stays short. */
static __attribute__((noinline)) int
map_walk(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	 uint32_t attrs, uint32_t flags, struct slat_page_cache *cache,
	 uint64_t *done)
{
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
	struct slat_op args = { flags, SLAT_FLUSH_NONE, cache, 0 };
	int ret = SLAT_OK;
	core_op_start(&d.op, t, slat_ipa(ipa), size, &args);
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
	*done = args.done;
	return ret ? ret : d.wrote ? SLAT_OK : SLAT_NOTHING_TO_DO;
}

/* ---- the fault path ---- */

/* map_fault() did not map: take the general walk. */
#define MAP_WALK 1

/*
 * One leaf of exactly the request's size, at @level, into an empty entry
 * under existing tables: leaf_fits() decides, the descent starts from the
 * memo's path, core_install_leaf() installs. Anything else (a leaf that
 * does not fit, a missing table, an entry in use) returns MAP_WALK. @m:
 * the memo of @attrs for @t, or NULL.
 */
static SLAT_ALWAYS_INLINE int
map_leaf(struct slat_table *t, struct slat_leaf_memo *m, int level,
	 uint64_t ipa, uint64_t size, uint64_t pa, uint32_t attrs,
	 uint32_t flags, struct slat_stats *st)
{
	if (!leaf_fits(t, level, ipa, pa, size, map_cap_shift(flags)))
		return MAP_WALK;
	struct descent d;
	if (m) {
		if (!core_fault_entry_near(t, m, ipa, level, &d.ptep, st))
			return MAP_WALK;
		d.rc = m->path[level].refcount;
	} else {
		d = core_descend(t, descend_root(t), ipa, level, DESCEND_FAST,
				 st);
		if (d.level != level || d.pte != 0)
			return MAP_WALK;
	}
	/* An empty entry satisfies SLAT_MAP_NO_REPLACE by itself. */
	slat_pte_t leaf = m ? m->leaf[level] | pa
			    : t->fmt->make_leaf(t, slat_pa(pa), attrs, level);
	unsigned cmo = map_cmo(m ? m->cmo : cmo_for_attrs(t, attrs), flags, st);
	return core_install_leaf(t, d.ptep, level, leaf, slat_pa(pa), size, cmo,
				 (flags & SLAT_SHARED) != 0, d.rc, st);
}

/* map_leaf() at the level whose leaves are @size bytes, MAP_WALK when none
 * is. */
static SLAT_ALWAYS_INLINE int
map_fault(struct slat_table *t, struct slat_leaf_memo *m, uint64_t ipa,
	  uint64_t size, uint64_t pa, uint32_t attrs, uint32_t flags,
	  struct slat_stats *st)
{
	int level = leaf_level_of_size(t, size);
	if (level < 0)
		return MAP_WALK;
	return map_leaf(t, m, level, ipa, size, pa, attrs, flags, st);
}

/* After the input check: the fault path, else the general walk. *@done:
 * the bytes mapped from @ipa. */
static SLAT_ALWAYS_INLINE int
map_checked(struct slat_table *t, struct slat_leaf_memo *m, uint64_t ipa,
	    uint64_t size, uint64_t pa, uint32_t attrs, uint32_t flags,
	    struct slat_page_cache *cache, struct slat_stats *st,
	    uint64_t *done)
{
	int ret = map_fault(t, m, ipa, size, pa, attrs, flags, st);
	if (ret == MAP_WALK)
		return map_walk(t, ipa, size, pa, attrs, flags, cache, done);
	if (ret == SLAT_OK)
		*done = size;
	return ret;
}


/* The one place a map reports how far it got: @done bytes from its IPA. */
static SLAT_ALWAYS_INLINE int map_done(struct slat_op *op, uint64_t done,
				       int ret)
{
	if (op)
		op->done = done;
	return ret;
}

/*
 * Every request but a page's fault with attributes the cache's memo holds
 * and counters of its own: the table's liveness and the attributes checked
 * too, then remembered in the memo; no cache, or a shared caller counting
 * into the table atomically. Out of line: the common fault's registers are
 * its own.
 */
static __attribute__((noinline)) int
map_other(struct slat_table *t, uint64_t ipa, uint64_t size, uint64_t pa,
	  uint32_t attrs, struct slat_op *op)
{
	uint32_t flags = op ? op->flags : 0;
	struct slat_page_cache *cache = op ? op->cache : NULL;
	uint64_t done = 0;

	if (!table_live(t))
		return map_done(op, 0, SLAT_E_INVAL);
	struct slat_leaf_memo *m = memo_hit(t, cache, attrs);
	int ret = check_map_input(t, ipa, size, pa, flags);
	if (!ret && !m) {
		ret = t->fmt->check_attrs(t, attrs);
		if (!ret && cache)
			m = memo_fill(t, cache, attrs);
	}
	if (ret)
		return map_done(op, 0, ret);
	struct slat_stats local;
	struct slat_stats *st = stats_begin(t, &local, flags & SLAT_SHARED,
					    cache);
	ret = map_checked(t, m, ipa, size, pa, attrs, flags, cache, st, &done);
	stats_end(t, st, &local);
	return map_done(op, done, ret);
}

/*
 * The install of a page fault whose entry @ptep (empty, in the path's
 * table at the last level) the descent found: the claim, *done reported,
 * then the clean and the store. Reported before the clean, the one call:
 * nothing of the request is live across it.
 */
static SLAT_ALWAYS_INLINE int
map_page_install_as(struct slat_table *t, struct slat_op *op,
		    struct slat_leaf_memo *m, uint32_t flags, slat_pte_t *ptep,
		    uint64_t size, slat_pa_t pa, bool shared,
		    struct slat_stats *st)
{
	const int level = SLAT_LAST_LEVEL;
	slat_pte_t leaf = m->leaf[level] | pa.pa;
	unsigned cmo = map_cmo(m->cmo, flags, st);
	uint32_t *rc = m->path[level].refcount;

	/* The path's tables are below the root: each has its count word. */
	if (!rc)
		__builtin_unreachable();
	int ret = core_claim_leaf(t, ptep, level, leaf, cmo, shared, rc, st);

	map_done(op, ret ? 0 : size, ret);
	if (ret || !core_leaf_claimed(cmo, shared))
		return ret;
	return core_publish_leaf(t, ptep, level, leaf, pa, size, cmo, shared,
				 rc, st);
}

/* The compiler's copy for each kind of caller: what a shared caller needs
 * after the clean (the entry and the leaf) is all that lives across it. */
static SLAT_ALWAYS_INLINE int
map_page_install(struct slat_table *t, struct slat_op *op,
		 struct slat_leaf_memo *m, uint32_t flags, slat_pte_t *ptep,
		 uint64_t size, slat_pa_t pa, struct slat_stats *st)
{
	if (flags & SLAT_SHARED)
		return map_page_install_as(t, op, m, flags, ptep, size, pa,
					   true, st);
	return map_page_install_as(t, op, m, flags, ptep, size, pa, false,
				   st);
}

/*
 * A page fault, checked, whose entry's table neither the memo's path nor
 * the path's table above it holds: the descent from the deepest table of
 * the path that holds it, else from the root (core_fault_entry()). Out
 * of line, with what slat_map() found again from @op (the size is the
 * page's, the attributes the memo's): the commonest faults keep their
 * registers.
 */
static __attribute__((noinline)) int
map_page_far(struct slat_table *t, slat_ipa_t ipa, slat_pa_t pa,
	     struct slat_op *op)
{
	const int level = SLAT_LAST_LEVEL;
	struct slat_leaf_memo *m = &op->cache->memo;
	uint64_t size = level_size(t, level);
	struct slat_stats *st = stats_own(t, op->flags & SLAT_SHARED,
					  op->cache);
	uint64_t unlinks = __atomic_load_n(&t->unlinks, __ATOMIC_ACQUIRE);

	/* The fault path counts into counters of its own (slat_map()). */
	if (!st)
		__builtin_unreachable();
	slat_pte_t *ptep = core_fault_entry(t, m, unlinks, ipa.ipa, level, st);
	if (!ptep)
		return map_other(t, ipa.ipa, size, pa.pa, m->attrs, op);
	return map_page_install(t, op, m, op->flags, ptep, size, pa, st);
}

/*
 * The memo's path gains the last-level table of @ipa from its table above,
 * which holds @ipa: that table's entry read (the descent's one read) and
 * entered (its next level), the copy without platform calls
 * (t->fault_steps). False when the path does not hold the table above or
 * the entry is no table.
 */
static SLAT_ALWAYS_INLINE bool
map_path_step(const struct slat_table *t, struct slat_leaf_memo *m,
	      uint64_t ipa, struct slat_stats *st)
{
	const int above = SLAT_LAST_LEVEL - 1;

	if (!t->fault_steps || !memo_path_holds(t, m, above, ipa))
		return false;
	struct descent d = descend_path(t, m, above, ipa, above, st);
	const struct descend_consts c = descend_consts(t);
	slat_pte_t *table;
	return descend_enter(t, &c, d.ptep, d.pte, above, ipa,
			     DESCEND_FAST | DESCEND_LINEAR, true, m, &table);
}

/*
 * The commonest fault: a page, with attributes the cache's memo holds
 * (which it never holds for a destroyed table) and counters of its own;
 * the same check, rule, descent and install as any map (map_leaf()), the
 * compiler's copy for a leaf at the last level whose table the memo's
 * path holds (one read) or gains from the table above (two). Anything
 * else, bad input included, is map_other()'s, from the start; every way
 * there is a tail call.
 */
int slat_map(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
	     slat_pa_t pa, uint32_t attrs, struct slat_op *op)
{
	const int level = SLAT_LAST_LEVEL;
	struct slat_page_cache *cache = op ? op->cache : NULL;
	struct slat_stats *st;

	if (__builtin_expect(!t || !memo_hit(t, cache, attrs) ||
			     !(st = stats_own(t, op->flags & SLAT_SHARED,
					      cache)) ||
			     size != level_size(t, level), 0))
		return map_other(t, ipa.ipa, size, pa.pa, attrs, op);
	struct slat_leaf_memo *m = &cache->memo;
	uint32_t flags = op->flags;
	if (check_map_input(t, ipa.ipa, size, pa.pa, flags) ||
	    !leaf_fits(t, level, ipa.ipa, pa.pa, size, map_cap_shift(flags)))
		return map_other(t, ipa.ipa, size, pa.pa, attrs, op);
	/* Read before the descent: an unlink during it moves the count past
	 * what the path holds, and the next fault does not use it. */
	uint64_t unlinks = __atomic_load_n(&t->unlinks, __ATOMIC_ACQUIRE);
	if (__builtin_expect(m->unlinks != unlinks, 0) ||
	    (__builtin_expect(!memo_path_holds(t, m, level, ipa.ipa), 0) &&
	     !map_path_step(t, m, ipa.ipa, st)))
		return map_page_far(t, ipa, pa, op);
	struct descent d = descend_path(t, m, level, ipa.ipa, level, st);
	if (d.pte)
		return map_other(t, ipa.ipa, size, pa.pa, attrs, op);
	return map_page_install(t, op, m, flags, d.ptep, size, pa, st);
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
