/* SPDX-License-Identifier: MIT */
/*
 * Private to libslat: the format interface and the helpers every operation
 * file shares. Freestanding.
 */
#ifndef SLAT_CORE_INTERNAL_H
#define SLAT_CORE_INTERNAL_H

#include <slat/slat.h>
#include <slat/walk.h>

/*
 * One descriptor format. Generic code never touches a descriptor bit except
 * through these functions and masks; the masks let hot loops run without an
 * indirect call per entry.
 */
struct slat_format {
	const char *name;
	enum slat_format_id id;

	/* Check @cfg and derive the walk geometry. */
	int (*geometry)(const struct slat_config *cfg, struct slat_geometry *geo);
	/* Refuse attributes this format cannot express (SLAT_E_ATTR). */
	int (*check_attrs)(const struct slat_table *t, uint32_t attrs);

	slat_pte_t (*make_leaf)(const struct slat_table *t, slat_pa_t pa,
				uint32_t attrs, int level);
	slat_pte_t (*make_table)(const struct slat_table *t, slat_pa_t pa);
	/* The output address is pte & mask for this table (0: it is not). */
	uint64_t (*oa_mask)(const struct slat_table *t);
	/* Output address of a leaf or table descriptor. */
	slat_pa_t (*pte_pa)(const struct slat_table *t, slat_pte_t pte);
	/* The same descriptor with another output address. */
	slat_pte_t (*pte_with_pa)(const struct slat_table *t, slat_pte_t pte,
				  slat_pa_t pa);
	/* Leaf attributes as SLAT_* bits (with SLAT_YOUNG). */
	uint32_t (*leaf_attrs)(const struct slat_table *t, slat_pte_t pte);
	/* A leaf with permissions @perms (SLAT_R/W/X), all else kept. */
	slat_pte_t (*leaf_with_perms)(const struct slat_table *t,
				      slat_pte_t pte, uint32_t perms);
	/* The same leaf re-encoded for another level (block <-> page). */
	slat_pte_t (*leaf_for_level)(const struct slat_table *t, slat_pte_t pte,
				     int level);

	/* Hardware dirty state: written since the last clean? */
	bool (*leaf_dirty)(const struct slat_table *t, slat_pte_t pte);
	/* The leaf made writable-clean. */
	slat_pte_t (*leaf_cleaned)(const struct slat_table *t, slat_pte_t pte);
	/* The CPU's walker on a leaf: may @access go ahead, and what does it
	 * write back (access flag, dirty state)? */
	enum slat_fault (*hw_update)(const struct slat_table *t, slat_pte_t pte,
				     unsigned access, slat_pte_t *new);

	slat_pte_t present_mask; /* valid iff (pte & present_mask) != 0 */
	slat_pte_t table_bit;    /* below the last level, this bit ... */
	bool table_bit_set;      /* ... set (Arm) or clear (EPT) means table */
	slat_pte_t wp_clear;     /* wrprotect clears these bits ... */
	slat_pte_t wp_set;       /* ... and sets these (Arm stage 1: AP[2]) */
	slat_pte_t young_bit;    /* access flag */
	slat_pte_t table_young_bit; /* set by the CPU in tables it walks, or 0 */
	slat_pte_t dirty_bit;    /* with hardware dirty state: changes when written */
	bool dirty_bit_clear;    /* ... by being cleared (Arm stage 1 AP[2]) */
	slat_pte_t locked;       /* invalid marker held during shared BBM */
	/* Block <-> table changes need break-before-make (Arm without BBM). */
	bool split_needs_bbm;
	/* TLB invalidation by address exists (Arm); else a full flush (EPT). */
	bool tlbi_by_address;
	/* A fault drops the cached translations it used (EPT violations do):
	 * relaxed permissions need no invalidation at all. */
	bool fault_invalidates;
	/* New leaves may need D-cache clean / I-cache invalidate (Arm). */
	bool cache_maintenance;
};

extern const struct slat_format slat_format_arm_s2;
extern const struct slat_format slat_format_ept;
extern const struct slat_format slat_format_arm_s1;

/* ---- Geometry ---- */

static inline unsigned level_shift(const struct slat_table *t, int level)
{
	return (unsigned)t->geo.bits_per_level * (unsigned)(3 - level) +
	       t->geo.granule_shift;
}

static inline uint64_t level_size(const struct slat_table *t, int level)
{
	return 1ull << level_shift(t, level);
}

static inline bool leaf_allowed(const struct slat_table *t, int level)
{
	return level >= 0 && (t->geo.leaf_levels >> level) & 1;
}

static inline bool is_root_level(const struct slat_table *t, int level)
{
	return level == t->geo.start_level;
}

/* ---- Descriptors ---- */

static inline bool pte_valid(const struct slat_table *t, slat_pte_t pte)
{
	return (pte & t->fmt->present_mask) != 0;
}

static inline bool pte_table(const struct slat_table *t, slat_pte_t pte,
			     int level)
{
	return level < SLAT_LAST_LEVEL && pte_valid(t, pte) &&
	       ((pte & t->fmt->table_bit) != 0) == t->fmt->table_bit_set;
}

/*
 * A table descriptor as make_table() writes them, in one test: implies
 * pte_table() below the last level (the converse may fail, e.g. an EPT
 * table without every permission), so a miss only costs the general path.
 */
static inline bool pte_links_table(const struct slat_table *t, slat_pte_t pte)
{
	return (pte & t->table_mask) == t->table_match;
}

static inline bool pte_leaf(const struct slat_table *t, slat_pte_t pte,
			    int level)
{
	return pte_valid(t, pte) && !pte_table(t, pte, level);
}

/* The leaf without write permission. */
static inline slat_pte_t pte_wrprotected(const struct slat_table *t,
					 slat_pte_t pte)
{
	return (pte & ~t->fmt->wp_clear) | t->fmt->wp_set;
}

/*
 * The hardware updates descriptors itself (AF, dirty state): even an
 * exclusive operation must read-modify-write them atomically.
 */
static inline bool hw_updates_ptes(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_HWDIRTY) != 0;
}

static inline bool pte_locked(const struct slat_table *t, slat_pte_t pte)
{
	return pte == t->fmt->locked;
}

static inline slat_pte_t pte_read(const slat_pte_t *ptep)
{
	/* Acquire: a walker follows what it reads to a table page that
	 * another walker filled and published with a release. */
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}

static inline void pte_write(slat_pte_t *ptep, slat_pte_t v)
{
	__atomic_store_n(ptep, v, __ATOMIC_RELEASE);
}

static inline bool pte_cas(slat_pte_t *ptep, slat_pte_t old, slat_pte_t new)
{
	return __atomic_compare_exchange_n(ptep, &old, new, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static inline bool pa_run_linear(slat_pa_t first, uint64_t bytes)
{
	/* Within one 2^48 window every format's OA field is linear in PA. */
	return ((first.pa ^ (first.pa + bytes - 1)) >> 48) == 0;
}

/* ---- Memory ---- */

static inline void *table_va(const struct slat_table *t, slat_pte_t pte)
{
	slat_pa_t pa = t->oa_mask ? slat_pa(pte & t->oa_mask)
				  : t->fmt->pte_pa(t, pte);
	if (t->linear)
		return (void *)(uintptr_t)((intptr_t)pa.pa + t->linear_offset);
	return t->mm->phys_to_virt(t->mm_ctx, pa);
}

static inline void *table_page_of(const struct slat_table *t,
				  const slat_pte_t *ptep)
{
	return (void *)((uintptr_t)ptep & ~((uintptr_t)(1u << t->geo.granule_shift) - 1));
}

/* The count word of a non-root table page. */
static inline uint32_t *table_refcount(const struct slat_table *t, void *table)
{
	if (t->refcounts)
		return &t->refcounts[((uintptr_t)table - t->refcounts_first_page) >>
				     t->geo.granule_shift];
	return t->mm->refcount(t->mm_ctx, table);
}

uint32_t slat_count_entries(const struct slat_table *t, const slat_pte_t *table);

/* Shared walkers: a store only when the word is not unknown already, so
 * that the line stays shared between vCPUs faulting into one table. */
static inline void refcount_mark_unknown(uint32_t *rc)
{
	if (__atomic_load_n(rc, __ATOMIC_RELAXED) != SLAT_REFCOUNT_UNKNOWN)
		__atomic_store_n(rc, SLAT_REFCOUNT_UNKNOWN, __ATOMIC_RELAXED);
}

/*
 * A leaf was (or is about to be) written at @ptep, @level: if that is a
 * block in a non-root table, the table's word says it may hold blocks.
 * Shared walkers mark the count unknown instead, which says so too.
 */
static inline void slat_note_block(struct slat_table *t, const slat_pte_t *ptep,
				   int level, bool shared)
{
	if (level >= SLAT_LAST_LEVEL || is_root_level(t, level))
		return;
	uint32_t *rc = table_refcount(t, table_page_of(t, ptep));
	if (shared)
		refcount_mark_unknown(rc);
	else
		*rc |= SLAT_REFCOUNT_HAS_BLOCKS;
}

/* May the (non-root) table page @table hold a block? Exclusive use. */
static inline bool slat_table_may_hold_blocks(const struct slat_table *t,
					      void *table)
{
	return (*table_refcount(t, table) & SLAT_REFCOUNT_HAS_BLOCKS) != 0;
}

/* Every block of @table was split: exclusive use, its count known or not. */
void slat_table_blocks_gone(struct slat_table *t, void *table);

/*
 * Add @delta to the refcount of the (non-root) table holding @ptep, after
 * the entries changed: an unknown count recounted here includes @delta.
 */
static inline void slat_refcount_add(struct slat_table *t,
				     const slat_pte_t *ptep, int level,
				     int32_t delta, bool shared)
{
	if (is_root_level(t, level) || delta == 0)
		return;
	void *table = table_page_of(t, ptep);
	uint32_t *rc = table_refcount(t, table);
	if (shared) {
		/* Shared walkers only add entries (SLAT_REFCOUNT_UNKNOWN). */
		refcount_mark_unknown(rc);
	} else if (*rc == SLAT_REFCOUNT_UNKNOWN) {
		/* What a shared walker added may include blocks. */
		*rc = slat_count_entries(t, table) | SLAT_REFCOUNT_HAS_BLOCKS;
	} else {
		*rc += (uint32_t)delta;
	}
}
uint32_t slat_refcount_get(const struct slat_table *t, void *table);

/* Pop a zeroed page; NULL when the cache is empty. */
void *slat_cache_pop(struct slat_table *t, struct slat_page_cache *cache,
		struct slat_stats *st);
/* Give back a page popped but never published (a lost race). */
void slat_cache_unpop(struct slat_page_cache *cache, void *page,
		 struct slat_stats *st);

/* Free a subtree now (no walker can see it any more). */
void slat_free_subtree(struct slat_table *t, void *table, int level,
		  struct slat_stats *st);
/* Free an unlinked subtree: through the deferred-free hook when the
 * platform has one (walkers may still read it), else at once. */
void slat_release_unlinked(struct slat_table *t, void *table, int level,
		   bool shared, struct slat_stats *st);

/* ---- Hooks, counted ---- */

void slat_tlbi_ipa(struct slat_table *t, uint64_t ipa, int level,
		 enum slat_tlbi_scope scope, struct slat_stats *st);
void slat_tlbi_range(struct slat_table *t, uint64_t ipa, uint64_t size,
		   struct slat_stats *st);
void slat_tlbi_vmid(struct slat_table *t, struct slat_stats *st);
/* Cache maintenance a new leaf may need before it is visible (seed 000). */
enum slat_cmo_kind {
	SLAT_CMO_DCLEAN = 1u << 0, /* clean the D-cache to the PoC */
	SLAT_CMO_IINVAL = 1u << 1, /* invalidate the I-cache to the PoU */
};

/* The SLAT_CMO_* a new leaf with @attrs needs (0: none). */
static inline unsigned slat_cmo_kinds(const struct slat_table *t,
				      uint32_t attrs)
{
	if (!t->fmt->cache_maintenance)
		return 0;
	unsigned k = 0;
	if (SLAT_MT(attrs) == SLAT_MT_NORMAL && !(t->cfg.features & SLAT_FEAT_FWB))
		k |= SLAT_CMO_DCLEAN;
	if ((attrs & SLAT_X) && !(t->cfg.features & SLAT_FEAT_DIC))
		k |= SLAT_CMO_IINVAL;
	return k;
}
static inline void slat_cmo_do(struct slat_table *t, slat_pa_t pa,
			       uint64_t bytes, unsigned kinds,
			       struct slat_stats *st)
{
	if (kinds & SLAT_CMO_DCLEAN) {
		st->dcache_calls++;
		st->dcache_bytes += bytes;
		t->mm->dcache_clean_inval_poc(t->mm_ctx, pa, bytes);
	}
	if (kinds & SLAT_CMO_IINVAL) {
		st->icache_calls++;
		st->icache_bytes += bytes;
		t->mm->icache_inval_pou(t->mm_ctx, pa, bytes);
	}
}
static inline void slat_cmo_new_leaf(struct slat_table *t, slat_pa_t pa,
				     uint64_t bytes, uint32_t attrs,
				     struct slat_stats *st)
{
	unsigned kinds = slat_cmo_kinds(t, attrs);
	if (kinds)
		slat_cmo_do(t, pa, bytes, kinds, st);
}

void slat_stats_clear(struct slat_stats *s);

/*
 * Where an operation counts: straight into the table when it holds it
 * exclusively; in shared mode into the caller's own counters (the page
 * cache's), else into @local, added atomically by slat_stats_end().
 */
static inline struct slat_stats *
slat_stats_begin(struct slat_table *t, struct slat_stats *local, bool shared,
		 const struct slat_page_cache *cache)
{
	if (!shared)
		return &t->stats;
	if (cache && cache->stats)
		return cache->stats;
	slat_stats_clear(local);
	return local;
}

/* Add @st to the table's counters atomically (shared calls beside each
 * other). */
void slat_stats_commit(struct slat_table *t, const struct slat_stats *st);

static inline void slat_stats_end(struct slat_table *t, struct slat_stats *st,
				  struct slat_stats *local)
{
	if (st == local)
		slat_stats_commit(t, st);
}

/* Deferred frees count from another thread at any time: the two counters
 * they share with the operations are always added atomically. */
static inline void slat_stats_count_freed(struct slat_stats *st, uint64_t n,
					  bool deferred)
{
	__atomic_fetch_add(&st->pages_freed, n, __ATOMIC_RELAXED);
	if (deferred)
		__atomic_fetch_add(&st->pages_deferred, n, __ATOMIC_RELAXED);
}

/* ---- Input checks shared by the operations ---- */

/* SLAT_E_ALIGN / SLAT_E_RANGE for an IPA range, SLAT_OK otherwise. */
static inline int slat_check_ipa_range(const struct slat_table *t, uint64_t ipa,
				       uint64_t size)
{
	uint64_t gmask = (1ull << t->geo.granule_shift) - 1;
	if (size == 0 || ipa + size < ipa)
		return SLAT_E_RANGE;
	if ((ipa | size) & gmask)
		return SLAT_E_ALIGN;
	uint64_t limit = 1ull << t->geo.ia_bits;
	if (ipa >= limit || size > limit - ipa)
		return SLAT_E_RANGE;
	return SLAT_OK;
}

/* ---- Entry updates shared by the operations (update.c) ---- */

/*
 * Break-before-make, in two steps. slat_break_entry() makes the entry invalid (or
 * locked, when shared) and invalidates the old translation: by IPA for a leaf,
 * over its span for a table. SLAT_E_AGAIN: a shared walker lost the race and
 * did nothing. slat_make_entry() then publishes the new descriptor.
 */
int slat_break_entry(const struct slat_walk_ctx *ctx, bool old_is_table,
		     slat_pte_t *was);
slat_pte_t slat_lock_entry(const struct slat_walk_ctx *ctx);
void slat_make_entry(const struct slat_walk_ctx *ctx, slat_pte_t new);

void slat_fill_split(struct slat_table *t, slat_pte_t *page, slat_pte_t block,
		     int level, struct slat_stats *st);

/*
 * Turn the block at ctx->ptep into a table of next-level leaves with the
 * same translation (one page from @cache). The walker then descends into it.
 */
int slat_split_block(const struct slat_walk_ctx *ctx,
		struct slat_page_cache *cache);

/* ---- Batched invalidation (batch.c) ---- */

#define SLAT_BATCH_MAX 64

struct slat_batch {
	enum slat_tlbi_policy policy;
	uint64_t flushed_to;   /* invalidated below this IPA */
	bool changed;          /* translations changed since flushed_to */
	uint32_t nr;
	struct {
		void *table;       /* unlinked subtree to free, or NULL */
		int level;         /* its level */
		slat_pte_t *ptep;  /* entry to publish after the flush, or NULL */
		slat_pte_t make;   /* ... with this value */
	} e[SLAT_BATCH_MAX];
};

void slat_batch_init(struct slat_batch *b, enum slat_tlbi_policy policy,
		     uint64_t from);
/* Queue work for after the next invalidation; @at is where the walk is
 * (everything changed so far lies below it). */
void slat_batch_add(struct slat_table *t, struct slat_batch *b, uint64_t at,
		    void *table, int level, slat_pte_t *ptep, slat_pte_t make,
		    struct slat_stats *st);
/* Invalidate per policy what changed below @upto, then do the queued work. */
void slat_batch_flush(struct slat_table *t, struct slat_batch *b,
		      uint64_t upto, struct slat_stats *st);

/* ---- Where a visited entry stands against the walked range ---- */

/* The first IPA of the range inside ctx's entry. */
static inline uint64_t walk_first_addr(const struct slat_walk_ctx *ctx)
{
	return ctx->addr > ctx->start ? ctx->addr : ctx->start;
}

/* The range covers ctx's entry whole. */
static inline bool walk_entry_covered(const struct slat_walk_ctx *ctx)
{
	return ctx->addr >= ctx->start &&
	       ctx->end - ctx->addr >= level_size(ctx->t, ctx->level);
}

/* Entries from ctx->ptep that end inside the range, within this table. */
static inline uint32_t walk_covered_entries(const struct slat_walk_ctx *ctx)
{
	uint64_t fit = (ctx->end - ctx->addr) >> level_shift(ctx->t, ctx->level);
	return fit < ctx->nr_left ? (uint32_t)fit : ctx->nr_left;
}

/* The entry translating @ipa in the table at @level. */
static inline uint32_t table_index(const struct slat_table *t, uint64_t ipa,
				   int level)
{
	uint32_t mask = level == t->geo.start_level ? t->geo.root_entries - 1
						    : t->geo.entries - 1;
	return (uint32_t)(ipa >> level_shift(t, level)) & mask;
}

static inline bool tlbi_policy_ok(enum slat_tlbi_policy p)
{
	return (unsigned)p <= SLAT_FLUSH_NONE;
}

static inline bool walk_shared(const struct slat_walk_ctx *ctx)
{
	return (ctx->flags & SLAT_WALK_SHARED) != 0;
}

#endif
