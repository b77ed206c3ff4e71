/* SPDX-License-Identifier: MIT */
/*
 * libslat-hosted, concurrent walkers: free_deferred through liburcu's
 * urcu-memb flavour (see <slat/hosted.h> and docs/concurrency.md). In its
 * own object file: a program that never calls these functions does not
 * link liburcu.
 */
#define _GNU_SOURCE
#include <slat/hosted.h>

#include <pthread.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>

#include "internal.h"

/*
 * ThreadSanitizer cannot see the synchronisation liburcu provides: the
 * library is not instrumented, and a grace period is built from membarrier
 * and per-thread counters. These annotations state the two edges RCU
 * guarantees, so that TSan checks everything else: every read-side critical
 * section that ends happens before a callback queued earlier runs, and
 * queuing a callback happens before it runs. They compile to nothing
 * without TSan.
 */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define ANNOTATE_RELEASE(p) __tsan_release((void *)(p))
#define ANNOTATE_ACQUIRE(p) __tsan_acquire((void *)(p))
#else
#define ANNOTATE_RELEASE(p) ((void)(p))
#define ANNOTATE_ACQUIRE(p) ((void)(p))
#endif

/*
 * One RCU head per arena page, as a kernel keeps one in struct page, so
 * free_deferred never allocates.
 */
struct slat_hosted_rcu {
	struct rcu_head head;
	struct slat_hosted *h;
	int level;   /* of the unlinked table */
	int pending; /* queued and not yet freed (atomic) */
};

/* Addresses for the ThreadSanitizer annotations only. */
static char grace_token;   /* readers release it as they leave */
static char barrier_token; /* callbacks release it when done */

/* After a grace period: no walker can see the subtree any more. */
static void rcu_free_subtree(struct rcu_head *head)
{
	struct slat_hosted_rcu *n =
		caa_container_of(head, struct slat_hosted_rcu, head);
	struct slat_hosted *h;
	uint32_t idx;
	int level;

	/* Before reading the node: queuing it happened before. */
	ANNOTATE_ACQUIRE(n);
	ANNOTATE_ACQUIRE(&grace_token);
	h = n->h;
	idx = (uint32_t)(n - h->rcu);
	level = n->level;
	/* Before the pages go back: the page may be deferred again at once. */
	__atomic_store_n(&n->pending, 0, __ATOMIC_RELEASE);
	slat_free_unlinked(h->table, slat_hosted__page_va(h, idx), level);
	__atomic_fetch_add(&h->deferred_freed, 1, __ATOMIC_RELEASE);
	ANNOTATE_RELEASE(&barrier_token);
}

static void h_free_deferred(void *ctx, void *va, int level)
{
	struct slat_hosted *h = ctx;
	uint32_t idx = slat_hosted__page_index(h, va, "free_deferred");
	struct slat_hosted_rcu *n;
	uint8_t s;

	if (!h->rcu || !h->table)
		slat_hosted__die("free_deferred(%p): RCU is not enabled on this arena "
		    "(slat_hosted_enable_rcu)", va);
	s = slat_hosted__st_get(h, idx);
	if (s == SLAT_HOSTED_PAGE_ROOT)
		slat_hosted__die("free_deferred(%p): the page is part of a root", va);
	n = &h->rcu[idx];
	if (s == SLAT_HOSTED_PAGE_FREE ||
	    __atomic_exchange_n(&n->pending, 1, __ATOMIC_ACQ_REL)) {
		/* Already free, or already waiting for a grace period. */
		slat_hosted__lock();
		h->double_frees++;
		slat_hosted__unlock();
		return;
	}
	n->level = level;
	__atomic_fetch_add(&h->deferred, 1, __ATOMIC_RELAXED);
	ANNOTATE_RELEASE(n);
	urcu_memb_call_rcu(&n->head, rcu_free_subtree);
}

/* The hosted hooks, with free_deferred. */
static struct slat_mm_ops hosted_ops_rcu;
static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static void ops_rcu_init(void)
{
	hosted_ops_rcu = *slat_hosted_ops();
	hosted_ops_rcu.free_deferred = h_free_deferred;
}

const struct slat_mm_ops *slat_hosted_ops_rcu(void)
{
	pthread_once(&ops_once, ops_rcu_init);
	return &hosted_ops_rcu;
}

/* slat_hosted_fini(): callbacks still queued would free pages of @h. */
static void rcu_drain(struct slat_hosted *h)
{
	if (slat_hosted_deferred_pending(h))
		slat_hosted_rcu_barrier();
}

int slat_hosted_enable_rcu(struct slat_hosted *h, struct slat_table *t)
{
	struct slat_hosted_rcu *nodes;

	if (!h || !h->arena || !t)
		return SLAT_E_INVAL;
	if (h->rcu) {
		h->table = t;
		return SLAT_OK;
	}
	nodes = calloc(h->nr_pages, sizeof(*nodes));
	if (!nodes)
		return SLAT_E_NOMEM;
	for (uint32_t i = 0; i < h->nr_pages; i++)
		nodes[i].h = h;
	slat_hosted__lock();
	/* Last look at every cache: from now on each looks at its own. */
	slat_hosted__sync_all_locked(h);
	slat_hosted__rcu_drain = rcu_drain;
	h->rcu = nodes;
	h->table = t;
	slat_hosted__unlock();
	return SLAT_OK;
}

uint64_t slat_hosted_deferred_pending(const struct slat_hosted *h)
{
	return __atomic_load_n(&h->deferred, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&h->deferred_freed, __ATOMIC_ACQUIRE);
}

void slat_hosted_rcu_register_thread(void)
{
	urcu_memb_register_thread();
}

void slat_hosted_rcu_unregister_thread(void)
{
	urcu_memb_unregister_thread();
}

void slat_hosted_rcu_read_lock(void)
{
	urcu_memb_read_lock();
}

void slat_hosted_rcu_read_unlock(void)
{
	ANNOTATE_RELEASE(&grace_token);
	urcu_memb_read_unlock();
}

void slat_hosted_rcu_barrier(void)
{
	urcu_memb_barrier();
	ANNOTATE_ACQUIRE(&barrier_token);
	/* Orders the callbacks' arena updates before the caller's reads. */
	slat_hosted__lock();
	slat_hosted__unlock();
}

void slat_hosted_rcu_synchronize(void)
{
	urcu_memb_synchronize_rcu();
	ANNOTATE_ACQUIRE(&grace_token);
}

struct rcu_defer {
	struct rcu_head head;
	void (*fn)(void *);
	void *arg;
};

static void rcu_defer_cb(struct rcu_head *head)
{
	struct rcu_defer *d = caa_container_of(head, struct rcu_defer, head);

	ANNOTATE_ACQUIRE(d);
	ANNOTATE_ACQUIRE(&grace_token);
	d->fn(d->arg);
	free(d);
	ANNOTATE_RELEASE(&barrier_token);
}

int slat_hosted_rcu_defer(void (*fn)(void *), void *arg)
{
	struct rcu_defer *d = malloc(sizeof(*d));

	if (!d)
		return SLAT_E_NOMEM;
	d->fn = fn;
	d->arg = arg;
	ANNOTATE_RELEASE(d);
	urcu_memb_call_rcu(&d->head, rcu_defer_cb);
	return SLAT_OK;
}
