/* SPDX-License-Identifier: MIT */
/*
 * Table pages, reference counts, and the counted hook calls: everything an
 * operation asks of the platform goes through here.
 */
#include "internal.h"

void slat_page_cache_init(struct slat_page_cache *c, void **pages,
			  uint32_t capacity)
{
	c->pages = pages;
	c->nr = 0;
	c->capacity = capacity;
	c->stats = NULL;
	c->memo.table_id = 0;
	c->memo.attrs = 0;
	c->memo.cmo = 0;
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++)
		c->memo.leaf[level] = 0;
	core_memo_forget(&c->memo, 0);
}

void core_memo_forget(struct slat_leaf_memo *m, uint64_t unlinks)
{
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++) {
		m->path[level].table = NULL;
		/* No IPA's top bits: memo_path_holds() fails. */
		m->path[level].ipa = ~0ull;
		m->path[level].refcount = NULL;
	}
	m->unlinks = unlinks;
}

int core_cache_check(const struct slat_table *t,
		     const struct slat_page_cache *cache, uint64_t n)
{
	if (!cache || cache->nr < n)
		return SLAT_E_NOMEM;
	for (uint32_t i = cache->nr - (uint32_t)n; i < cache->nr; i++) {
		slat_pa_t pa = t->mm->virt_to_phys(t->mm_ctx, cache->pages[i]);
		if (!table_pa_ok(t, pa, granule_mask(t) + 1))
			return SLAT_E_RANGE;
	}
	return SLAT_OK;
}

void *core_cache_pop(const struct slat_table *t, struct slat_page_cache *cache,
		     struct slat_stats *st)
{
	if (!cache || cache->nr == 0)
		return NULL;
	st->pages_alloc++;
	void *page = cache->pages[--cache->nr];
	/* The core owns the word from here until it frees the page: a stale
	 * count from the page's last use would keep its table (and what it
	 * will hold) from ever being freed. */
	*table_refcount(t, page) = 0;
	return page;
}

void core_cache_unpop(struct slat_page_cache *cache, void *page,
		      struct slat_stats *st)
{
	cache->pages[cache->nr++] = page;
	st->pages_alloc--;
}

uint32_t core_count_entries(const struct slat_table *t, const slat_pte_t *table)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->geo.entries; i++)
		n += pte_read(&table[i]) != 0;
	return n;
}

/* The word of @table, recounted if shared walkers marked it unknown (what
 * they added may include blocks). Exclusive use: no walker adds entries
 * meanwhile. */
static uint32_t *known_refcount(const struct slat_table *t, void *table)
{
	uint32_t *rc = table_refcount(t, table);
	if (*rc == SLAT_REFCOUNT_UNKNOWN)
		*rc = core_count_entries(t, table) | SLAT_REFCOUNT_HAS_BLOCKS;
	return rc;
}

void core_table_blocks_gone(struct slat_table *t, void *table)
{
	*known_refcount(t, table) &= ~SLAT_REFCOUNT_HAS_BLOCKS;
}

bool core_table_may_hold_blocks(const struct slat_table *t, void *table)
{
	return (*table_refcount(t, table) & SLAT_REFCOUNT_HAS_BLOCKS) != 0;
}

uint32_t core_refcount_get(const struct slat_table *t, void *table)
{
	return *known_refcount(t, table) & ~SLAT_REFCOUNT_HAS_BLOCKS;
}

struct free_walk {
	struct slat_table *t;
	struct slat_stats *st;
};

/* Only tables below: a last-level table, or an empty one, is not read. */
static SLAT_ALWAYS_INLINE int free_pre(void *arg, slat_pte_t *ptep,
				       uint32_t nr_left, int level,
				       uint64_t addr)
{
	(void)addr;
	struct free_walk *w = arg;
	const struct slat_table *t = w->t;
	if (level == SLAT_LAST_LEVEL ||
	    subtree_table_empty(t, ptep, nr_left, level))
		return (int)nr_left;
	/* The entries up to the next table, in one go. */
	uint32_t n = 0;
	while (n < nr_left && !pte_table(t, ptep[n], level))
		n++;
	return (int)n;
}

static SLAT_ALWAYS_INLINE void free_post(void *arg, slat_pte_t *table,
					 int level)
{
	(void)level;
	struct free_walk *w = arg;
	*table_refcount(w->t, table) = 0;
	w->t->mm->free_page(w->t->mm_ctx, table);
	stats_count_freed(w->st, 1, false);
}

void core_free_subtree(struct slat_table *t, void *table, int level,
		       struct slat_stats *st)
{
	struct free_walk w = { t, st };
	/* A last-level table holds no table: nothing to walk. */
	if (level == SLAT_LAST_LEVEL)
		free_post(&w, table, level);
	else
		core_subtree_walk(t, table, level, 0, free_pre, free_post, &w);
}

void core_release_unlinked(struct slat_table *t, void *table, int level,
			   struct cmo_run *cmo, struct slat_stats *st)
{
	if (cmo)
		core_cmo_subtree(t, table, level, cmo, st);
	/* Before the page can be freed: no fault may start from a memo's path
	 * through it (core_fault_entry()). */
	__atomic_add_fetch(&t->unlinks, 1, __ATOMIC_RELEASE);
	if (t->mm->free_deferred) {
		/* Counted when freed: walkers inside may still link tables. */
		t->mm->free_deferred(t->mm_ctx, table, level);
		return;
	}
	core_free_subtree(t, table, level, st);
}

void slat_free_unlinked(struct slat_table *t, void *va, int level)
{
	/* From the RCU callback: beside any operation. */
	struct slat_stats st;
	core_stats_clear(&st);
	core_free_subtree(t, va, level, &st);
	stats_count_freed(&t->stats, st.pages_freed, true);
}

void core_tlbi_ipa(struct slat_table *t, uint64_t ipa, int level,
		   enum slat_tlbi_scope scope, struct slat_stats *st)
{
	if (!t->fmt->tlbi_by_address) {
		core_tlbi_vmid(t, st);
		return;
	}
	st->tlbi[scope == SLAT_TLBI_LOCAL ? SLAT_TLBI_IPA_LOCAL : SLAT_TLBI_IPA]++;
	t->mm->tlbi_ipa(t->mm_ctx, slat_ipa(ipa), level, scope);
}

void core_tlbi_range(struct slat_table *t, uint64_t ipa, uint64_t size,
		     struct slat_stats *st)
{
	if (!t->fmt->tlbi_by_address) {
		core_tlbi_vmid(t, st);
		return;
	}
	st->tlbi[SLAT_TLBI_RANGE]++;
	t->mm->tlbi_range(t->mm_ctx, slat_ipa(ipa), size);
}

void core_tlbi_vmid(struct slat_table *t, struct slat_stats *st)
{
	st->tlbi[SLAT_TLBI_VMID]++;
	t->mm->tlbi_vmid(t->mm_ctx);
}
