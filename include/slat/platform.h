/* SPDX-License-Identifier: MIT */
/*
 * The platform seam: everything libslat needs from the hypervisor that links
 * it. The core calls nothing else: no libc, no allocator, no OS.
 */
#ifndef SLAT_PLATFORM_H
#define SLAT_PLATFORM_H

#include <slat/export.h>
#include <slat/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A caller-provided stack of zeroed, granule-sized, granule-aligned table
 * pages. The caller fills it before an operation (outside any lock); the core
 * pops pages as it needs tables and never pushes. With the pages
 * slat_pages_needed() counts in it, an operation cannot fail for memory.
 * Each page's PA must lie below the table's output size (pa_bits): before
 * linking pages an operation checks the ones it will take and, given one a
 * descriptor cannot hold, stops with SLAT_E_RANGE, the table unchanged
 * there.
 * Set one up with slat_page_cache_init() (or zero it whole first): the
 * memo below must start empty. One walker uses a cache at a time.
 */
struct slat_page_cache {
	void **pages;  /* pages[0 .. nr-1] are available, popped from the top */
	uint32_t nr;
	uint32_t capacity;
	/*
	 * Optional: where shared-mode calls made with this cache count
	 * (struct slat_stats, owned by the cache's thread). NULL: into the
	 * table's counters, with atomic adds. A per-vCPU cache with its own
	 * counters keeps the fault path free of shared cache lines; the
	 * table's totals then exclude them (add them with slat_stats_add).
	 */
	struct slat_stats *stats;
	/*
	 * Private to libslat: the leaf encoding of the attributes last mapped
	 * with this cache, for one table, so that the next fault neither checks
	 * nor encodes them again; and the tables the last fault's descent went
	 * through, where the next one starts. All-zero (a new cache) is empty.
	 */
	struct slat_leaf_memo {
		uint64_t table_id;   /* the slat_table's id; 0: empty */
		uint32_t attrs;
		uint32_t cmo;        /* the cache maintenance such leaves need */
		slat_pte_t leaf[SLAT_LAST_LEVEL + 1]; /* per level, output address 0 */
		/* The table's unlink count when the path was taken: the path
		 * holds while it has not moved. */
		uint64_t unlinks;
		/* By the level of their entries: a table below the root the
		 * last descent went through (NULL, IPA ~0: none), the first
		 * IPA it translates, and its count word. */
		struct {
			void *table;
			uint64_t ipa;
			uint32_t *refcount;
		} path[SLAT_LAST_LEVEL + 1];
	} memo;
};

/*
 * An empty cache over the array @pages of @capacity slots: no pages yet, no
 * counters of its own, an empty memo.
 */
SLAT_API void slat_page_cache_init(struct slat_page_cache *c, void **pages,
				   uint32_t capacity);

/*
 * A table page's count after shared walkers added entries to it: they only
 * ever add, and an atomic add per fault on a word every vCPU writes costs
 * more than the rest of the fault, so they mark the count unknown instead.
 * The next exclusive user recounts the page's entries.
 */
#define SLAT_REFCOUNT_UNKNOWN 0xffffffffu

/*
 * Bit 31 of a known count: the page may hold a block (a leaf above the last
 * level). Whatever installs a block sets it; a split that has split every
 * block of the page clears it, and the next split does not read the page
 * at all. An unknown count has it too. The count is the other bits.
 */
#define SLAT_REFCOUNT_HAS_BLOCKS (1u << 31)

/* How much the TLB invalidation reaches. */
enum slat_tlbi_scope {
	SLAT_TLBI_INNER_SHAREABLE = 0, /* every CPU that may hold the VMID */
	SLAT_TLBI_LOCAL = 1,           /* this CPU only (relaxed permissions) */
};

struct slat_mm_ops {
	/*
	 * sizeof(struct slat_mm_ops) as the caller was built: the layout of
	 * the hooks it passes. slat_table_init() refuses any other size
	 * (SLAT_E_VERSION), so that hooks built against another version's
	 * header are never called at the wrong offsets. Set it to
	 * sizeof(struct slat_mm_ops).
	 */
	size_t size;

	/*
	 * Allocate the root: @bytes (granule x concatenated pages), zeroed and
	 * aligned to @bytes. NULL when out of memory.
	 */
	void *(*zalloc_root)(void *ctx, size_t bytes);
	void (*free_root)(void *ctx, void *va, size_t bytes);

	/* Give back a table page that came from a page cache. */
	void (*free_page)(void *ctx, void *va);

	/*
	 * A table subtree at @level was unlinked while other walkers may still
	 * read it. Once they are done (an RCU grace period), the platform calls
	 * slat_free_unlinked(). NULL means "no concurrent walkers": the core
	 * frees at once.
	 */
	void (*free_deferred)(void *ctx, void *va, int level);

	/*
	 * The reference count of a non-root table page: the number of non-zero
	 * entries in it (with SLAT_REFCOUNT_HAS_BLOCKS), or
	 * SLAT_REFCOUNT_UNKNOWN. The platform keeps one 32-bit word per table
	 * page (like struct page); the core owns it from the moment it takes
	 * the page from a cache (it zeroes it then) until it frees the page.
	 */
	uint32_t *(*refcount)(void *ctx, void *table_va);
	/*
	 * Optional: the counts are one array, indexed by table page from
	 * *@first_page (like a vmemmap): the count of the page at va is
	 * array[(va - *first_page) >> granule_shift]. The core then indexes it
	 * itself instead of calling refcount() on every new leaf.
	 */
	uint32_t *(*refcount_array)(void *ctx, uintptr_t *first_page);

	slat_pa_t (*virt_to_phys)(void *ctx, void *va);
	void *(*phys_to_virt)(void *ctx, slat_pa_t pa);
	/*
	 * Optional (may be NULL): when every table page sits in one linear
	 * map, return virt - phys. The core then converts inline on every
	 * descent instead of calling phys_to_virt.
	 */
	intptr_t (*linear_offset)(void *ctx);

	/*
	 * Clean and invalidate the data cache for guest memory [pa, pa+size)
	 * to the point of coherency (DC CIVAC by line, then DSB). Called
	 * without FEAT_S2FWB for Normal write-back memory only: before a new
	 * leaf maps it, after an unmapped leaf's invalidation, and by
	 * slat_flush(). Never with SLAT_SKIP_CMO.
	 */
	void (*dcache_clean_inval_poc)(void *ctx, slat_pa_t pa, uint64_t size);
	/* Invalidate the instruction cache for [pa, pa+size) to PoU. */
	void (*icache_inval_pou)(void *ctx, slat_pa_t pa, uint64_t size);

	/*
	 * TLB invalidation for this table's VMID; each hook includes the
	 * barriers it needs and returns when the invalidation is complete.
	 * @level is the level of the entry (a TTL hint) or SLAT_LEVEL_ANY.
	 */
	void (*tlbi_ipa)(void *ctx, slat_ipa_t ipa, int level,
			 enum slat_tlbi_scope scope);
	void (*tlbi_range)(void *ctx, slat_ipa_t ipa, uint64_t size);
	void (*tlbi_vmid)(void *ctx);
};

#ifdef __cplusplus
}
#endif
#endif
