/* SPDX-License-Identifier: MIT */
/*
 * libslat-hosted: the platform hooks on a POSIX host. See <slat/hosted.h>
 * for the model (arena, page states, cache registry).
 */
#define _GNU_SOURCE
#include <slat/hosted.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Largest root: 16 concatenated 64 KiB pages. Also the arena's congruence. */
#define ROOT_ALIGN_MAX (1ull << 20)
#define ROOT_PAGES_MAX 16u

/*
 * The cache registry: which caches hold pages of which arena, and how many
 * pages each held when last looked at (to spot the pages the core popped).
 */
struct cache_reg {
	struct slat_page_cache *c;
	struct slat_hosted *h;
	uint32_t seen; /* c->nr when last looked at */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cache_reg *regs;
static size_t nr_regs, cap_regs;

void (*slat_hosted__rcu_drain)(struct slat_hosted *h);

void slat_hosted__lock(void)
{
	pthread_mutex_lock(&lock);
}

void slat_hosted__unlock(void)
{
	pthread_mutex_unlock(&lock);
}

#define die slat_hosted__die

void slat_hosted__die(const char *fmt, ...)
{
	va_list ap;

	fputs("slat-hosted: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	fflush(stderr);
	abort();
}

static bool in_arena(const struct slat_hosted *h, const void *va)
{
	const uint8_t *p = va;

	return h->arena && p >= h->arena && p < h->arena + h->arena_bytes;
}

void *slat_hosted__page_va(const struct slat_hosted *h, uint32_t idx)
{
	return h->arena + (uint64_t)idx * h->granule;
}

/* The index of the page starting at @va; abort() if there is none. */
uint32_t slat_hosted__page_index(const struct slat_hosted *h, const void *va,
				 const char *what)
{
	uint64_t off;

	if (!in_arena(h, va))
		die("%s(%p): not in the arena [%p, %p)", what, va,
		    (void *)h->arena, (void *)(h->arena + h->arena_bytes));
	off = (uint64_t)((const uint8_t *)va - h->arena);
	/* The granule is a power of two: mask and shift, no division. */
	if (off & (h->granule - 1))
		die("%s(%p): not the start of a page (granule %u)", what, va,
		    h->granule);
	return (uint32_t)(off >> __builtin_ctz(h->granule));
}

/*
 * Page states are read without the lock by the refcount hook, which
 * concurrent walkers call: every access is atomic (relaxed; the lock orders
 * everything else).
 */
uint8_t slat_hosted__st_get(const struct slat_hosted *h, uint32_t idx)
{
	return __atomic_load_n(&h->state[idx], __ATOMIC_RELAXED);
}

static void st_set(struct slat_hosted *h, uint32_t idx, uint8_t s)
{
	__atomic_store_n(&h->state[idx], s, __ATOMIC_RELAXED);
}

static const char *state_name(uint8_t s)
{
	switch (s) {
	case SLAT_HOSTED_PAGE_FREE: return "free";
	case SLAT_HOSTED_PAGE_CACHED: return "cached";
	case SLAT_HOSTED_PAGE_TABLE: return "table";
	case SLAT_HOSTED_PAGE_ROOT: return "root";
	}
	return "?";
}

/* Free list: a stack with each free page's slot, so any page can leave it. */
static void free_push(struct slat_hosted *h, uint32_t idx)
{
	h->free_pos[idx] = h->nr_free;
	h->free_list[h->nr_free++] = idx;
}

static uint32_t free_pop(struct slat_hosted *h)
{
	return h->free_list[--h->nr_free];
}

static void free_remove(struct slat_hosted *h, uint32_t idx)
{
	uint32_t slot = h->free_pos[idx];
	uint32_t last = h->free_list[--h->nr_free];

	h->free_list[slot] = last;
	h->free_pos[last] = slot;
}

static struct cache_reg *reg_find(const struct slat_page_cache *c)
{
	for (size_t i = 0; i < nr_regs; i++)
		if (regs[i].c == c)
			return &regs[i];
	return NULL;
}

static void reg_remove(struct cache_reg *r)
{
	*r = regs[--nr_regs];
	if (!nr_regs) {
		free(regs);
		regs = NULL;
		cap_regs = 0;
	}
}

/*
 * Pages at c->pages[c->nr .. seen) were popped by the core since the last
 * look: they are table pages now, unless they left the cache meanwhile
 * (freed, perhaps handed to another cache: then they have another owner).
 */
static void sync_reg(struct slat_hosted *h, struct cache_reg *r)
{
	struct slat_page_cache *c = r->c;

	for (uint32_t j = c->nr; j < r->seen && j < c->capacity; j++) {
		void *va = c->pages[j];
		uint64_t off;
		uint32_t idx;

		if (!in_arena(h, va))
			continue;
		off = (uint64_t)((uint8_t *)va - h->arena);
		if (off % h->granule)
			continue;
		idx = (uint32_t)(off / h->granule);
		if (slat_hosted__st_get(h, idx) == SLAT_HOSTED_PAGE_CACHED &&
		    h->owner[idx] == c) {
			st_set(h, idx, SLAT_HOSTED_PAGE_TABLE);
			h->owner[idx] = NULL;
		}
	}
	r->seen = c->nr;
}

/* Look at every cache of @h (the lock held). */
void slat_hosted__sync_all_locked(struct slat_hosted *h)
{
	for (size_t i = 0; i < nr_regs; i++)
		if (regs[i].h == h)
			sync_reg(h, &regs[i]);
}

/*
 * Exclusive use: look at every cache of @h whenever the arena changes.
 * Concurrent use (RCU enabled): other threads' caches are being popped by
 * the core right now and cannot be read; each cache is looked at only by
 * its own topup and drain (sync_reg).
 */
static void sync_caches(struct slat_hosted *h)
{
	if (!h->rcu)
		slat_hosted__sync_all_locked(h);
}

/*
 * Concurrent use: the pages still in @c must be cached pages of @c. A page
 * freed while it sat in its cache is caught here, at the owner's next topup
 * or drain, rather than by free_page, which cannot read other caches.
 */
static void check_own_cache(const struct slat_hosted *h,
			    const struct slat_page_cache *c)
{
	for (uint32_t j = 0; j < c->nr && j < c->capacity; j++) {
		uint32_t idx = slat_hosted__page_index(h, c->pages[j], "cache_topup");

		if (slat_hosted__st_get(h, idx) != SLAT_HOSTED_PAGE_CACHED ||
		    h->owner[idx] != c)
			die("cache %p: page %p sits in it but is %s%s (it was "
			    "freed while still in the cache)",
			    (const void *)c, c->pages[j],
			    state_name(slat_hosted__st_get(h, idx)),
			    slat_hosted__st_get(h, idx) == SLAT_HOSTED_PAGE_CACHED
				    ? " in another cache" : "");
	}
}

/* Is @va in one of @h's registered caches, at c->pages[0 .. nr)? */
static bool in_some_cache(const struct slat_hosted *h, const void *va)
{
	for (size_t i = 0; i < nr_regs; i++) {
		const struct slat_page_cache *c = regs[i].c;

		if (regs[i].h != h)
			continue;
		for (uint32_t j = 0; j < c->nr && j < c->capacity; j++)
			if (c->pages[j] == va)
				return true;
	}
	return false;
}

static __attribute__((noinline)) void
notify_observer(const struct slat_hosted *h, enum slat_hosted_event_kind kind,
		uint64_t addr, uint64_t size, int level,
		enum slat_tlbi_scope scope)
{
	struct slat_hosted_event ev = {
		.kind = kind, .addr = addr, .size = size, .level = level,
		.scope = scope,
	};
	h->observer(h->observer_arg, &ev);
}

/* The hooks without an observer return at once: a fault's clean is one of
 * them (the event is built out of line). */
static inline void notify(const struct slat_hosted *h,
			  enum slat_hosted_event_kind kind, uint64_t addr,
			  uint64_t size, int level, enum slat_tlbi_scope scope)
{
	if (h->observer)
		notify_observer(h, kind, addr, size, level, scope);
}

/* ------------------------------------------------------------------ */
/* Arena */

int slat_hosted_init(struct slat_hosted *h, uint64_t arena_bytes,
		     uint32_t granule, uint64_t pa_base)
{
	uint64_t nr_pages, map_len, off;
	uint8_t *raw;

	if (!h)
		return SLAT_E_INVAL;
	memset(h, 0, sizeof(*h));
	if (granule != 4096 && granule != 16384 && granule != 65536)
		return SLAT_E_INVAL;
	if (!arena_bytes || arena_bytes % granule || pa_base % 65536 ||
	    pa_base + arena_bytes < pa_base)
		return SLAT_E_INVAL;
	nr_pages = arena_bytes / granule;
	if (nr_pages >= UINT32_MAX)
		return SLAT_E_INVAL;

	/*
	 * Map ROOT_ALIGN_MAX more than needed, then keep the part whose start
	 * is congruent to pa_base modulo ROOT_ALIGN_MAX: host alignment then
	 * follows PA alignment for every root.
	 */
	map_len = arena_bytes + ROOT_ALIGN_MAX;
	raw = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return SLAT_E_NOMEM;
	off = (pa_base - (uint64_t)(uintptr_t)raw) & (ROOT_ALIGN_MAX - 1);
	if (off)
		munmap(raw, off);
	if (ROOT_ALIGN_MAX - off)
		munmap(raw + off + arena_bytes, ROOT_ALIGN_MAX - off);

	h->arena = raw + off;
	h->arena_bytes = arena_bytes;
	h->pa_base = pa_base;
	h->granule = granule;
	h->nr_pages = (uint32_t)nr_pages;
	h->state = calloc(nr_pages, sizeof(*h->state));
	h->refcounts = calloc(nr_pages, sizeof(*h->refcounts));
	h->free_list = malloc(nr_pages * sizeof(*h->free_list));
	h->free_pos = malloc(nr_pages * sizeof(*h->free_pos));
	h->owner = calloc(nr_pages, sizeof(*h->owner));
	h->zeroed = malloc(nr_pages * sizeof(*h->zeroed));
	if (!h->state || !h->refcounts || !h->free_list || !h->free_pos ||
	    !h->owner || !h->zeroed) {
		slat_hosted_fini(h);
		return SLAT_E_NOMEM;
	}
	/* Fresh anonymous memory reads as zero. */
	memset(h->zeroed, 1, nr_pages * sizeof(*h->zeroed));
	/* Page 0 on top: tables come from the bottom, roots from the top. */
	for (uint32_t i = h->nr_pages; i-- > 0;)
		free_push(h, i);
	return SLAT_OK;
}

int slat_hosted_reset(struct slat_hosted *h)
{
	bool registered = false;

	if (!h || !h->arena || h->rcu)
		return SLAT_E_INVAL;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nr_regs; i++)
		registered |= regs[i].h == h;
	if (registered || h->pages_in_use || h->double_frees ||
	    h->nr_free != h->nr_pages) {
		pthread_mutex_unlock(&lock);
		return SLAT_E_INVAL;
	}
	/* The free list in the order slat_hosted_init() left it. */
	h->nr_free = 0;
	for (uint32_t i = h->nr_pages; i-- > 0;) {
		h->owner[i] = NULL;
		h->refcounts[i] = 0;
		free_push(h, i);
	}
	pthread_mutex_unlock(&lock);
	return SLAT_OK;
}

void slat_hosted_fini(struct slat_hosted *h)
{
	if (!h)
		return;
	/* Callbacks still queued would free pages of this arena. */
	if (h->rcu && slat_hosted__rcu_drain)
		slat_hosted__rcu_drain(h);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nr_regs;) {
		if (regs[i].h == h)
			reg_remove(&regs[i]);
		else
			i++;
	}
	pthread_mutex_unlock(&lock);
	if (h->arena)
		munmap(h->arena, h->arena_bytes);
	free(h->state);
	free(h->refcounts);
	free(h->free_list);
	free(h->free_pos);
	free(h->owner);
	free(h->zeroed);
	free(h->rcu);
	memset(h, 0, sizeof(*h));
}

void slat_hosted_set_observer(struct slat_hosted *h,
			      slat_hosted_observer_fn fn, void *arg)
{
	h->observer = fn;
	h->observer_arg = arg;
}

/* ------------------------------------------------------------------ */
/* Page caches */

int slat_hosted_cache_init(struct slat_page_cache *c, uint32_t capacity)
{
	if (!c)
		return SLAT_E_INVAL;
	void **pages = calloc(capacity ? capacity : 1, sizeof(*pages));
	slat_page_cache_init(c, pages, pages ? capacity : 0);
	return pages ? SLAT_OK : SLAT_E_NOMEM;
}

/*
 * Give c->pages[keep .. nr) back to @h. Called with the lock held. @zeroed:
 * the pages are known to be still zero (shrink: taken back from a cache the
 * core only pops from); drain makes no such promise for what its caller
 * did with the pages.
 */
static void drain_locked(struct slat_hosted *h, struct slat_page_cache *c,
			 uint32_t keep, bool zeroed)
{
	struct cache_reg *r = reg_find(c);

	sync_caches(h);
	if (r)
		sync_reg(h, r);
	while (c->nr > keep) {
		void *va = c->pages[--c->nr];
		uint32_t idx = slat_hosted__page_index(h, va, "slat_hosted_cache_drain");

		if (slat_hosted__st_get(h, idx) != SLAT_HOSTED_PAGE_CACHED ||
		    h->owner[idx] != c)
			die("cache_drain: page %p in a cache is %s%s, not cached "
			    "there (pages may only be popped from a cache)",
			    va, state_name(slat_hosted__st_get(h, idx)),
			    slat_hosted__st_get(h, idx) == SLAT_HOSTED_PAGE_CACHED
				    ? " in another cache" : "");
		st_set(h, idx, SLAT_HOSTED_PAGE_FREE);
		h->owner[idx] = NULL;
		h->zeroed[idx] = zeroed;
		h->pages_in_use--;
		free_push(h, idx);
	}
	if (r)
		r->seen = c->nr;
}

void slat_hosted_cache_fini(struct slat_page_cache *c)
{
	struct cache_reg *r;

	if (!c)
		return;
	pthread_mutex_lock(&lock);
	r = reg_find(c);
	if (r) {
		drain_locked(r->h, c, 0, false);
		reg_remove(r);
	}
	pthread_mutex_unlock(&lock);
	free(c->pages);
	c->pages = NULL;
	c->nr = 0;
	c->capacity = 0;
}

int slat_hosted_cache_topup(struct slat_hosted *h, struct slat_page_cache *c,
			    uint32_t n)
{
	struct cache_reg *r;
	int ret = SLAT_OK;

	if (!h || !c || (!c->pages && c->capacity))
		return SLAT_E_INVAL;
	if (n > c->capacity)
		n = c->capacity;

	pthread_mutex_lock(&lock);
	r = reg_find(c);
	if (r && r->h != h) {
		if (c->nr)
			die("cache_topup: cache %p holds pages of another arena",
			    (void *)c);
		reg_remove(r);
		r = NULL;
	}
	if (!r) {
		if (nr_regs == cap_regs) {
			size_t cap = cap_regs ? 2 * cap_regs : 16;
			struct cache_reg *nr = realloc(regs, cap * sizeof(*nr));

			if (!nr) {
				pthread_mutex_unlock(&lock);
				return SLAT_E_NOMEM;
			}
			regs = nr;
			cap_regs = cap;
		}
		r = &regs[nr_regs++];
		*r = (struct cache_reg){ .c = c, .h = h, .seen = c->nr };
	}
	sync_caches(h);
	if (h->rcu) {
		sync_reg(h, r);
		check_own_cache(h, c);
	}

	while (c->nr < n) {
		uint32_t idx;
		void *va;

		if (!h->nr_free) {
			ret = SLAT_E_NOMEM;
			break;
		}
		idx = free_pop(h);
		va = slat_hosted__page_va(h, idx);
		if (!h->zeroed[idx])
			memset(va, 0, h->granule); /* freed pages may be dirty */
		h->zeroed[idx] = false;
		st_set(h, idx, SLAT_HOSTED_PAGE_CACHED);
		h->owner[idx] = c;
		h->refcounts[idx] = 0;
		h->pages_in_use++;
		c->pages[c->nr++] = va;
	}
	r->seen = c->nr;
	pthread_mutex_unlock(&lock);
	return ret;
}

void slat_hosted_cache_drain(struct slat_hosted *h, struct slat_page_cache *c)
{
	struct cache_reg *r;

	if (!h || !c)
		return;
	pthread_mutex_lock(&lock);
	r = reg_find(c);
	if (r && r->h != h)
		die("cache_drain: cache %p belongs to another arena",
		    (void *)c);
	drain_locked(h, c, 0, false);
	if (r)
		reg_remove(r);
	pthread_mutex_unlock(&lock);
}

void slat_hosted_cache_shrink(struct slat_hosted *h, struct slat_page_cache *c,
			      uint32_t n)
{
	struct cache_reg *r;

	if (!h || !c || c->nr <= n)
		return;
	pthread_mutex_lock(&lock);
	r = reg_find(c);
	if (!r || r->h != h)
		die("cache_shrink: cache %p holds no pages of arena %p",
		    (void *)c, (void *)h);
	drain_locked(h, c, n, true);
	pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ */
/* Queries */

uint64_t slat_hosted_table_pages(const struct slat_hosted *h)
{
	uint64_t n;

	pthread_mutex_lock(&lock);
	n = h->pages_in_use;
	for (size_t i = 0; i < nr_regs; i++)
		if (regs[i].h == h)
			n -= regs[i].c->nr;
	pthread_mutex_unlock(&lock);
	return n;
}

static int state_of(const struct slat_hosted *h, uint32_t idx)
{
	int s = slat_hosted__st_get(h, idx);

	if (s == SLAT_HOSTED_PAGE_CACHED && !in_some_cache(h, slat_hosted__page_va(h, idx)))
		s = SLAT_HOSTED_PAGE_TABLE;
	return s;
}

int slat_hosted_page_state(const struct slat_hosted *h, const void *va)
{
	int s;

	if (!h || !in_arena(h, va))
		return -1;
	pthread_mutex_lock(&lock);
	s = state_of(h, (uint32_t)(((const uint8_t *)va - h->arena) /
				   h->granule));
	pthread_mutex_unlock(&lock);
	return s;
}

bool slat_hosted_is_table_page(const struct slat_hosted *h, const void *va)
{
	int s;

	if (!h || !in_arena(h, va) ||
	    ((const uint8_t *)va - h->arena) % h->granule)
		return false;
	s = slat_hosted_page_state(h, va);
	return s == SLAT_HOSTED_PAGE_TABLE || s == SLAT_HOSTED_PAGE_ROOT;
}

/* ------------------------------------------------------------------ */
/* The hooks */

static void *h_zalloc_root(void *ctx, size_t bytes)
{
	struct slat_hosted *h = ctx;
	uint64_t align, rem, first, n, a;
	void *va = NULL;

	if (!bytes || bytes % h->granule ||
	    bytes / h->granule > ROOT_PAGES_MAX)
		die("zalloc_root(%zu): not 1 to %u pages of %u bytes", bytes,
		    ROOT_PAGES_MAX, h->granule);
	n = bytes / h->granule;
	for (align = h->granule; align < bytes; align <<= 1)
		;
	a = align / h->granule;
	/* The first page whose PA is aligned to @align. */
	rem = h->pa_base & (align - 1);
	first = rem ? (align - rem) / h->granule : 0;

	pthread_mutex_lock(&lock);
	sync_caches(h);
	if (first + n <= h->nr_pages) {
		/* From the top of the arena down: tables grow from the bottom. */
		uint64_t i = first + (h->nr_pages - n - first) / a * a;

		for (;; i -= a) {
			uint64_t k = 0;

			while (k < n && slat_hosted__st_get(h, (uint32_t)(i + k)) ==
						SLAT_HOSTED_PAGE_FREE)
				k++;
			if (k == n) {
				for (k = 0; k < n; k++) {
					st_set(h, (uint32_t)(i + k),
					       SLAT_HOSTED_PAGE_ROOT);
					h->refcounts[i + k] = 0;
					h->zeroed[i + k] = false;
					free_remove(h, (uint32_t)(i + k));
				}
				h->pages_in_use += n;
				va = slat_hosted__page_va(h, (uint32_t)i);
				break;
			}
			if (i < first + a)
				break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (va)
		memset(va, 0, bytes);
	return va;
}

static void h_free_root(void *ctx, void *va, size_t bytes)
{
	struct slat_hosted *h = ctx;
	uint32_t idx = slat_hosted__page_index(h, va, "free_root");
	uint64_t n;

	if (!bytes || bytes % h->granule ||
	    bytes / h->granule > h->nr_pages - idx)
		die("free_root(%p, %zu): not a run of arena pages", va, bytes);
	n = bytes / h->granule;

	pthread_mutex_lock(&lock);
	sync_caches(h);
	for (uint64_t k = 0; k < n; k++) {
		uint32_t i = idx + (uint32_t)k;

		switch (slat_hosted__st_get(h, i)) {
		case SLAT_HOSTED_PAGE_FREE:
			h->double_frees++;
			break;
		case SLAT_HOSTED_PAGE_ROOT:
			st_set(h, i, SLAT_HOSTED_PAGE_FREE);
			h->pages_in_use--;
			free_push(h, i);
			break;
		default:
			die("free_root(%p, %zu): page %p is %s, not root", va,
			    bytes, slat_hosted__page_va(h, i), state_name(slat_hosted__st_get(h, i)));
		}
	}
	pthread_mutex_unlock(&lock);
	notify(h, SLAT_EV_PAGE_FREE, (uint64_t)(uintptr_t)va, bytes,
	       SLAT_LEVEL_ANY, SLAT_TLBI_INNER_SHAREABLE);
}

static void h_free_page(void *ctx, void *va)
{
	struct slat_hosted *h = ctx;
	uint32_t idx = slat_hosted__page_index(h, va, "free_page");

	pthread_mutex_lock(&lock);
	sync_caches(h);
	switch (slat_hosted__st_get(h, idx)) {
	case SLAT_HOSTED_PAGE_FREE:
		h->double_frees++;
		pthread_mutex_unlock(&lock);
		return;
	case SLAT_HOSTED_PAGE_ROOT:
		die("free_page(%p): the page is part of a root", va);
	case SLAT_HOSTED_PAGE_CACHED:
		/*
		 * Popped by the core and not looked at since. Exclusive use:
		 * every cache was just looked at, so it can only be still in
		 * a cache by mistake. Concurrent use: the owner's next topup
		 * or drain checks (check_own_cache).
		 */
		if (!h->rcu && in_some_cache(h, va))
			die("free_page(%p): the page is still in a page cache",
			    va);
		break;
	default:
		break;
	}
	st_set(h, idx, SLAT_HOSTED_PAGE_FREE);
	h->owner[idx] = NULL;
	h->refcounts[idx] = 0;
	h->pages_in_use--;
	free_push(h, idx);
	pthread_mutex_unlock(&lock);
	notify(h, SLAT_EV_PAGE_FREE, (uint64_t)(uintptr_t)va, h->granule,
	       SLAT_LEVEL_ANY, SLAT_TLBI_INNER_SHAREABLE);
}

static uint32_t *h_refcount(void *ctx, void *table_va)
{
	struct slat_hosted *h = ctx;
	uint32_t idx = slat_hosted__page_index(h, table_va, "refcount");
	uint8_t s = slat_hosted__st_get(h, idx);

	if (s != SLAT_HOSTED_PAGE_CACHED && s != SLAT_HOSTED_PAGE_TABLE)
		die("refcount(%p): the page is %s, not a table page", table_va,
		    state_name(s));
	return &h->refcounts[idx];
}

/* One count per arena page, so the core can index them itself; the state
 * check of h_refcount() is then the checker's (counts against entries). */
static uint32_t *h_refcount_array(void *ctx, uintptr_t *first_page)
{
	struct slat_hosted *h = ctx;

	*first_page = (uintptr_t)h->arena;
	return h->refcounts;
}

static slat_pa_t h_virt_to_phys(void *ctx, void *va)
{
	struct slat_hosted *h = ctx;

	if (!in_arena(h, va))
		die("virt_to_phys(%p): not in the arena [%p, %p)", va,
		    (void *)h->arena, (void *)(h->arena + h->arena_bytes));
	return slat_pa(h->pa_base + (uint64_t)((uint8_t *)va - h->arena));
}

/* The arena is one linear map: the core converts inline. */
static intptr_t h_linear_offset(void *ctx)
{
	struct slat_hosted *h = ctx;
	return (intptr_t)h->arena - (intptr_t)h->pa_base;
}

static void *h_phys_to_virt(void *ctx, slat_pa_t pa)
{
	struct slat_hosted *h = ctx;
	uint64_t p = slat_pa_v(pa);

	if (p < h->pa_base || p - h->pa_base >= h->arena_bytes)
		die("phys_to_virt(0x%llx): not in the arena's PA window "
		    "[0x%llx, 0x%llx)", (unsigned long long)p,
		    (unsigned long long)h->pa_base,
		    (unsigned long long)(h->pa_base + h->arena_bytes));
	return h->arena + (p - h->pa_base);
}

static void h_dcache_clean_inval_poc(void *ctx, slat_pa_t pa, uint64_t size)
{
	notify(ctx, SLAT_EV_DCACHE_CLEAN_INVAL, slat_pa_v(pa), size, SLAT_LEVEL_ANY,
	       SLAT_TLBI_INNER_SHAREABLE);
}

static void h_icache_inval_pou(void *ctx, slat_pa_t pa, uint64_t size)
{
	notify(ctx, SLAT_EV_ICACHE_INVAL, slat_pa_v(pa), size, SLAT_LEVEL_ANY,
	       SLAT_TLBI_INNER_SHAREABLE);
}

static void h_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
		       enum slat_tlbi_scope scope)
{
	notify(ctx, SLAT_EV_TLBI_IPA, slat_ipa_v(ipa), 0, level, scope);
}

static void h_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	notify(ctx, SLAT_EV_TLBI_RANGE, slat_ipa_v(ipa), size, SLAT_LEVEL_ANY,
	       SLAT_TLBI_INNER_SHAREABLE);
}

static void h_tlbi_vmid(void *ctx)
{
	notify(ctx, SLAT_EV_TLBI_VMID, 0, 0, SLAT_LEVEL_ANY,
	       SLAT_TLBI_INNER_SHAREABLE);
}

static const struct slat_mm_ops hosted_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = h_zalloc_root,
	.free_root = h_free_root,
	.free_page = h_free_page,
	.free_deferred = NULL, /* exclusive use: the core frees at once */
	.refcount = h_refcount,
	.refcount_array = h_refcount_array,
	.virt_to_phys = h_virt_to_phys,
	.phys_to_virt = h_phys_to_virt,
	.linear_offset = h_linear_offset,
	.dcache_clean_inval_poc = h_dcache_clean_inval_poc,
	.icache_inval_pou = h_icache_inval_pou,
	.tlbi_ipa = h_tlbi_ipa,
	.tlbi_range = h_tlbi_range,
	.tlbi_vmid = h_tlbi_vmid,
};

const struct slat_mm_ops *slat_hosted_ops(void)
{
	return &hosted_ops;
}

/* Shared calls from one thread at a time: no other walker can still be
 * reading an unlinked table, so its grace period is over at once. */
static void h_free_now(void *ctx, void *va, int level)
{
	struct slat_hosted *h = ctx;
	if (!h->table)
		slat_hosted__die("free_deferred(%p): slat_hosted_ops_serial() "
				 "needs the arena's table in h->table", va);
	slat_free_unlinked(h->table, va, level);
}

static struct slat_mm_ops hosted_ops_serial;
static pthread_once_t serial_once = PTHREAD_ONCE_INIT;

static void serial_init(void)
{
	hosted_ops_serial = hosted_ops;
	hosted_ops_serial.free_deferred = h_free_now;
}

const struct slat_mm_ops *slat_hosted_ops_serial(void)
{
	pthread_once(&serial_once, serial_init);
	return &hosted_ops_serial;
}

