/* SPDX-License-Identifier: MIT */
/*
 * The hosted platform (libslat-hosted): libslat's hooks on a POSIX host.
 *
 * Table pages come from one arena of host memory that stands for a window of
 * physical memory [pa_base, pa_base + arena_bytes), so tables hold realistic
 * PAs (a raw image can be loaded at those addresses by a real walker). Every
 * page's state is tracked, so leaks and double frees are caught. TLB and
 * cache hooks count, and can forward to an observer.
 */
#ifndef SLAT_HOSTED_H
#define SLAT_HOSTED_H

#include <slat/slat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An event the hooks saw, for tests that check what was invalidated. */
enum slat_hosted_event_kind {
	SLAT_EV_TLBI_IPA,
	SLAT_EV_TLBI_RANGE,
	SLAT_EV_TLBI_VMID,
	SLAT_EV_DCACHE_CLEAN,
	SLAT_EV_ICACHE_INVAL,
	SLAT_EV_PAGE_FREE,
};

struct slat_hosted_event {
	enum slat_hosted_event_kind kind;
	uint64_t addr;  /* IPA for TLBI, PA for cache maintenance, VA for free */
	uint64_t size;
	int level;
	enum slat_tlbi_scope scope;
};

typedef void (*slat_hosted_observer_fn)(void *arg,
					const struct slat_hosted_event *ev);

struct slat_hosted {
	uint8_t *arena;         /* host memory standing for the PA window */
	uint64_t arena_bytes;
	uint64_t pa_base;
	uint32_t granule;
	uint32_t nr_pages;      /* arena_bytes / granule */
	uint8_t *state;         /* per page: free, cached, table, root */
	uint32_t *refcounts;    /* per page: the core's table refcount */
	uint32_t *free_list;    /* stack of free page indexes */
	uint32_t nr_free;
	uint64_t pages_in_use;  /* cached + table + root pages */
	uint64_t double_frees;  /* frees of pages not in use: must stay 0 */
	slat_hosted_observer_fn observer;
	void *observer_arg;
	struct slat_table *table; /* for free_deferred; set by the user */
};

/*
 * Reserve an arena of @arena_bytes (a multiple of @granule; memory is
 * committed lazily) standing for PAs from @pa_base (aligned to 64 KiB).
 * Returns SLAT_OK, SLAT_E_INVAL or SLAT_E_NOMEM.
 */
int slat_hosted_init(struct slat_hosted *h, uint64_t arena_bytes,
		     uint32_t granule, uint64_t pa_base);
void slat_hosted_fini(struct slat_hosted *h);

/* The hooks; pass @h as mm_ctx. free_deferred is NULL (frees at once). */
const struct slat_mm_ops *slat_hosted_ops(void);

/*
 * Fill @c up to @n pages (at most c->capacity) with zeroed arena pages.
 * Returns SLAT_OK or SLAT_E_NOMEM (arena exhausted).
 */
int slat_hosted_cache_init(struct slat_page_cache *c, uint32_t capacity);
void slat_hosted_cache_fini(struct slat_page_cache *c);
int slat_hosted_cache_topup(struct slat_hosted *h, struct slat_page_cache *c,
			    uint32_t n);
/* Return every page left in @c to the arena. */
void slat_hosted_cache_drain(struct slat_hosted *h, struct slat_page_cache *c);

/* Pages handed out as tables or roots (not those sitting in caches). */
uint64_t slat_hosted_table_pages(const struct slat_hosted *h);
/* True if @va is an arena page currently used as a table or root page. */
bool slat_hosted_is_table_page(const struct slat_hosted *h, const void *va);

void slat_hosted_set_observer(struct slat_hosted *h,
			      slat_hosted_observer_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif
