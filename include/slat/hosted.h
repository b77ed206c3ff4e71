/* SPDX-License-Identifier: MIT */
/*
 * The hosted platform (libslat-hosted): libslat's hooks on a POSIX host.
 *
 * Table pages come from one arena of host memory that stands for a window of
 * physical memory [pa_base, pa_base + arena_bytes), so tables hold realistic
 * PAs (a raw image can be loaded at those addresses by a real walker). Every
 * page's state is tracked, so leaks and double frees are caught. TLB and
 * cache hooks do nothing on the host but forward to an observer, if set.
 *
 * Page i of the arena has PA pa_base + i * granule and host address
 * arena + i * granule; virt_to_phys and phys_to_virt are offset arithmetic
 * and abort() on an address outside the arena (that is a bug in the caller).
 * The arena's host address is congruent to pa_base modulo 1 MiB, so a page
 * run aligned in PA (up to 1 MiB) is aligned the same way in host memory.
 *
 * Page states (enum slat_hosted_page_state):
 *   free    on the free list;
 *   cached  put into a page cache by slat_hosted_cache_topup(). The core pops
 *           pages from a cache by itself (c->pages[--c->nr]) without telling
 *           the platform, so a cached page is either still in its cache or
 *           popped by the core and used as a table page;
 *   table   a cached page known to have been popped: whenever the arena
 *           changes (topup, drain, free_page, zalloc_root, free_root), the
 *           slots c->pages[c->nr ..] vacated since the previous look are
 *           marked table (with RCU enabled, only a cache's own topup and
 *           drain look at it, see below);
 *   root    part of a root allocated by zalloc_root.
 * The core may free a page in state cached or table (free_page); a page
 * freed while already free counts in double_frees and is not freed again.
 * Freeing a root page with free_page, a table page with free_root, or an
 * address that is not a page of the arena is a bug: abort() with a message.
 *
 * Caches are registered with their arena by slat_hosted_cache_topup() and
 * unregistered by slat_hosted_cache_drain() or slat_hosted_cache_fini(), so
 * the library can tell the pages sitting in caches from the pages the core
 * took: slat_hosted_table_pages() = pages_in_use - the sum of c->nr over the
 * registered caches of the arena. Only pop pages from a cache (as the core
 * does); return them with drain, not by lowering c->nr.
 *
 * Thread safety: every function that changes an arena or the cache registry
 * takes one process-wide lock; the refcount, virt_to_phys and phys_to_virt
 * hooks take none (page states are read and written atomically). Queries
 * (table_pages, is_table_page, page_state) give a meaningful answer only
 * while no operation runs on a table of that arena. The observer is called
 * from whichever thread runs the hook (with concurrent walkers: several at
 * once, and the RCU callback thread for page frees): it must be
 * thread-safe, and set before the arena is used concurrently.
 *
 * Concurrent walkers (docs/concurrency.md): operations with SLAT_SHARED
 * need a free_deferred hook, so that a table one walker unlinks is freed
 * only once no other walker can be reading it. slat_hosted_enable_rcu()
 * turns that on for an arena, with liburcu's urcu-memb flavour:
 *
 *   slat_hosted_init(&h, ...);
 *   slat_hosted_enable_rcu(&h, &t);      before any concurrent use
 *   slat_table_init(&t, &cfg, slat_hosted_ops_rcu(), &h);
 *
 *   every walker thread:
 *     slat_hosted_rcu_register_thread();           once
 *     slat_hosted_cache_topup(&h, &my_cache, n);   outside the read side
 *     slat_hosted_rcu_read_lock();
 *     slat_map(&t, ..., SLAT_OP(.flags = SLAT_SHARED, .cache = &my_cache));
 *                                                  and other shared ops
 *     slat_hosted_rcu_read_unlock();
 *     slat_hosted_rcu_unregister_thread();         before the thread exits
 *
 *   before checking for leaks, slat_table_destroy() or slat_hosted_fini():
 *     slat_hosted_rcu_barrier();
 *
 * A thread that walks a table with SLAT_SHARED (or reads it with
 * slat_lookup while shared walkers run) must be registered and inside a
 * read-side critical section for the whole call. The wrappers are
 * urcu_memb_register_thread(), urcu_memb_read_lock() and so on from
 * <urcu/urcu-memb.h>; a program may call those directly (same flavour),
 * but the wrappers also tell ThreadSanitizer about the grace period, which
 * it cannot see inside the uninstrumented liburcu. Exclusive operations
 * need no read-side section. In this mode the arena never reads another
 * thread's page cache: each cache is looked at only by its own topup and
 * drain, so a cache must be used by one thread at a time.
 *
 * Linking: these RCU functions live in their own object of libslat-hosted
 * and need liburcu (pkg-config --libs liburcu-memb); a program that calls
 * none of them links without it.
 */
#ifndef SLAT_HOSTED_H
#define SLAT_HOSTED_H

#include <slat/export.h>
#include <slat/slat.h>

#ifdef __cplusplus
extern "C" {
#endif

struct slat_hosted_rcu;

/* An event the hooks saw, for tests that check what was invalidated. */
enum slat_hosted_event_kind {
	SLAT_EV_TLBI_IPA,
	SLAT_EV_TLBI_RANGE,
	SLAT_EV_TLBI_VMID,
	SLAT_EV_DCACHE_CLEAN_INVAL,
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
	uint32_t *free_pos;     /* per free page: its slot in free_list */
	struct slat_page_cache **owner; /* per cached page: its cache */
	struct slat_hosted_rcu *rcu;    /* per page RCU heads; NULL: RCU off */
	uint64_t deferred;        /* subtrees queued by free_deferred */
	uint64_t deferred_freed;  /* of those, freed after a grace period */
	bool *zeroed;           /* per free page: known to read as zero (never
				   handed out, or given back unused by
				   slat_hosted_cache_shrink): topup skips
				   zeroing it */
};

/* The state of an arena page (h->state[i]). */
enum slat_hosted_page_state {
	SLAT_HOSTED_PAGE_FREE = 0,
	SLAT_HOSTED_PAGE_CACHED = 1,
	SLAT_HOSTED_PAGE_TABLE = 2,
	SLAT_HOSTED_PAGE_ROOT = 3,
};

/*
 * Reserve an arena of @arena_bytes (a multiple of @granule; memory is
 * committed lazily) standing for PAs from @pa_base (aligned to 64 KiB).
 * Returns SLAT_OK, SLAT_E_INVAL or SLAT_E_NOMEM.
 */
SLAT_API int slat_hosted_init(struct slat_hosted *h, uint64_t arena_bytes,
			      uint32_t granule, uint64_t pa_base);
SLAT_API void slat_hosted_fini(struct slat_hosted *h);
/*
 * Take an arena that holds nothing (no page in use, no cache registered
 * with it, no double free, RCU off) back to its state right after
 * slat_hosted_init(): the same free-list order, so the same pages are
 * handed out in the same order again, without unmapping and mapping it
 * anew (pages are zeroed whenever they are handed out). For harnesses that
 * run many short cases on one arena and want each to behave as on a fresh
 * one. Returns SLAT_OK or SLAT_E_INVAL (the arena is not empty).
 */
SLAT_API int slat_hosted_reset(struct slat_hosted *h);

/* The hooks; pass @h as mm_ctx. free_deferred is NULL: the core frees at
 * once, and refuses SLAT_SHARED. */
SLAT_API const struct slat_mm_ops *slat_hosted_ops(void);

/*
 * The same hooks with a free_deferred that frees at once, for SLAT_SHARED
 * calls made from one thread at a time (tests of the shared paths, a
 * single-threaded benchmark of the fault path): no other walker can be
 * reading what one unlinked. Needs h->table set to the arena's table.
 * Never for concurrent walkers: use slat_hosted_ops_rcu().
 */
SLAT_API const struct slat_mm_ops *slat_hosted_ops_serial(void);

/*
 * The same hooks with free_deferred set: an unlinked subtree is handed to
 * call_rcu() and freed with slat_free_unlinked() after a grace period. For
 * tables walked with SLAT_SHARED; the arena needs slat_hosted_enable_rcu().
 */
SLAT_API const struct slat_mm_ops *slat_hosted_ops_rcu(void);

/*
 * Opt @h in to concurrent use: free_deferred (of slat_hosted_ops_rcu())
 * queues the subtrees of @t for after an RCU grace period, and each page
 * cache is looked at only by its own topup and drain. Call it before any
 * concurrent use, before or after slat_table_init(); calling it again
 * changes the table. Returns SLAT_OK, SLAT_E_INVAL or SLAT_E_NOMEM.
 */
SLAT_API int slat_hosted_enable_rcu(struct slat_hosted *h,
				    struct slat_table *t);

/* Reader side (urcu-memb, with ThreadSanitizer annotations). */
SLAT_API void slat_hosted_rcu_register_thread(void);
SLAT_API void slat_hosted_rcu_unregister_thread(void);
SLAT_API void slat_hosted_rcu_read_lock(void);
SLAT_API void slat_hosted_rcu_read_unlock(void);

/*
 * Wait until every subtree queued so far, by any thread, has been freed.
 * Not from inside a read-side critical section (it would never return) nor
 * from an RCU callback. slat_hosted_fini() calls it when work is pending.
 */
SLAT_API void slat_hosted_rcu_barrier(void);

/*
 * Wait for a grace period: every read-side critical section begun before
 * the call has ended (synchronize_rcu). Not from inside one.
 */
SLAT_API void slat_hosted_rcu_synchronize(void);
/*
 * Run @fn(@arg) on liburcu's callback thread after a grace period
 * (call_rcu with a node from the heap); slat_hosted_rcu_barrier() waits
 * for it too. Returns SLAT_OK or SLAT_E_NOMEM (nothing queued).
 */
SLAT_API int slat_hosted_rcu_defer(void (*fn)(void *), void *arg);

/* Subtrees queued by free_deferred and not freed yet. */
SLAT_API uint64_t slat_hosted_deferred_pending(const struct slat_hosted *h);

/*
 * Give @c an empty array of @capacity page slots (from the heap).
 * Returns SLAT_OK or SLAT_E_NOMEM.
 */
SLAT_API int slat_hosted_cache_init(struct slat_page_cache *c,
				    uint32_t capacity);
/*
 * Free @c's array. Pages still in a registered cache go back to their arena
 * first (as with drain) and the cache is unregistered.
 */
SLAT_API void slat_hosted_cache_fini(struct slat_page_cache *c);
/*
 * Fill @c up to @n pages (at most c->capacity) with zeroed arena pages, and
 * register @c with @h. A cache belongs to one arena at a time: using it with
 * another arena while it holds pages aborts.
 * Returns SLAT_OK or SLAT_E_NOMEM (arena exhausted; @c keeps what it got).
 */
SLAT_API int slat_hosted_cache_topup(struct slat_hosted *h,
				     struct slat_page_cache *c, uint32_t n);
/* Return every page left in @c to the arena and unregister @c. */
SLAT_API void slat_hosted_cache_drain(struct slat_hosted *h,
				      struct slat_page_cache *c);
/*
 * Return pages from the top of @c to the arena until it holds at most @n
 * (the cache stays registered): a cache of exactly @n pages without
 * draining it and zeroing @n pages again. Those pages were never popped
 * (the core writes only the pages it pops; one it puts back must be as it
 * was given), so the arena keeps them as zeroed pages and the next topup
 * hands them out without zeroing them. Aborts if @c holds pages of another
 * arena.
 */
SLAT_API void slat_hosted_cache_shrink(struct slat_hosted *h,
				       struct slat_page_cache *c, uint32_t n);

/*
 * Pages handed out as tables or roots (not those sitting in caches):
 * pages_in_use minus the pages in @h's registered caches.
 */
SLAT_API uint64_t slat_hosted_table_pages(const struct slat_hosted *h);
/*
 * True if @va is the start of an arena page used as a table or root page:
 * not free and not sitting in a registered cache (a linear scan of the
 * caches; meant for checkers).
 */
SLAT_API bool slat_hosted_is_table_page(const struct slat_hosted *h,
					const void *va);
/*
 * The state of the arena page holding @va (enum slat_hosted_page_state), or
 * -1 if @va is outside the arena. SLAT_HOSTED_PAGE_CACHED means the page
 * sits in a registered cache; a page the core popped reads as
 * SLAT_HOSTED_PAGE_TABLE (a linear scan of the caches, for checkers).
 */
SLAT_API int slat_hosted_page_state(const struct slat_hosted *h,
				    const void *va);

SLAT_API void slat_hosted_set_observer(struct slat_hosted *h,
				       slat_hosted_observer_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif
