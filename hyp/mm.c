/* SPDX-License-Identifier: MIT */
/*
 * libslat's platform hooks on the real CPU: table pages from a pool the
 * guest's DTB does not show it, cache maintenance by line with DC CIVAC,
 * TLB maintenance with TLBI IPAS2E1IS/VMALLE1IS/VMALLS12E1IS, and a
 * grace period before a table unlinked under shared walkers is freed.
 */
#include "hyp.h"

void *memset(void *dst, int c, size_t n);

#define POOL_PAGES (HYP_POOL_SIZE / HYP_GRANULE)
/* The root(s) sit in the pool's last 64 KiB, pages below. */
#define POOL_ROOTS (HYP_POOL + HYP_POOL_SIZE - 0x10000)

/* The pool: a bump pointer, then a free list threaded through the pages. */
static uint32_t pool_lock;
static uint64_t pool_next = HYP_POOL, pool_used;
static void *pool_free_list;
static uint32_t pool_refcounts[POOL_PAGES];

static void lock(uint32_t *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		__asm__ volatile("yield");
}

static void unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

void hyp_pool_init(void)
{
	pool_next = HYP_POOL;
	pool_free_list = NULL;
	pool_used = 0;
}

uint64_t hyp_pool_pages_used(void)
{
	return __atomic_load_n(&pool_used, __ATOMIC_RELAXED);
}

static void *pool_alloc(void)
{
	void *p = NULL;

	lock(&pool_lock);
	if (pool_free_list) {
		p = pool_free_list;
		pool_free_list = *(void **)p;
	} else if (pool_next < POOL_ROOTS) {
		p = (void *)pool_next;
		pool_next += HYP_GRANULE;
	}
	if (p)
		pool_used++;
	unlock(&pool_lock);
	if (p)
		memset(p, 0, HYP_GRANULE);
	return p;
}

static void pool_free(void *p)
{
	lock(&pool_lock);
	*(void **)p = pool_free_list;
	pool_free_list = p;
	pool_used--;
	unlock(&pool_lock);
}

/* Fill a cache outside any walk; a short fill is not fatal (the
 * operation stops with SLAT_E_NOMEM and the guest faults again). */
void hyp_cache_fill(struct slat_page_cache *cache, uint32_t need)
{
	if (need > cache->capacity)
		need = cache->capacity;
	while (cache->nr < need) {
		void *p = pool_alloc();

		if (!p)
			return;
		cache->pages[cache->nr++] = p;
	}
}

/* What an operation left in a cache goes back to the pool. */
void hyp_cache_drain(struct slat_page_cache *cache)
{
	while (cache->nr)
		pool_free(cache->pages[--cache->nr]);
}

static void *mm_zalloc_root(void *ctx, size_t bytes)
{
	static uint64_t root_next = POOL_ROOTS;
	uint64_t va = (root_next + bytes - 1) & ~(uint64_t)(bytes - 1);

	(void)ctx;
	/* One table for the whole run: a bump allocator suffices. */
	if (va + bytes > HYP_POOL + HYP_POOL_SIZE)
		return NULL;
	root_next = va + bytes;
	memset((void *)va, 0, bytes);
	return (void *)va;
}

static void mm_free_root(void *ctx, void *va, size_t bytes)
{
	(void)ctx, (void)va, (void)bytes;
}

static void mm_free_page(void *ctx, void *va)
{
	(void)ctx;
	pool_free(va);
}

static uint32_t *mm_refcount(void *ctx, void *va)
{
	(void)ctx;
	return &pool_refcounts[((uint64_t)va - HYP_POOL) / HYP_GRANULE];
}

static uint32_t *mm_refcount_array(void *ctx, uintptr_t *first_page)
{
	(void)ctx;
	*first_page = HYP_POOL;
	return pool_refcounts;
}

/* EL2 maps all RAM at VA == PA (main.c). */
static slat_pa_t mm_virt_to_phys(void *ctx, void *va)
{
	(void)ctx;
	return slat_pa((uint64_t)va);
}

static void *mm_phys_to_virt(void *ctx, slat_pa_t pa)
{
	(void)ctx;
	return (void *)slat_pa_v(pa);
}

static intptr_t mm_linear_offset(void *ctx)
{
	(void)ctx;
	return 0;
}

/* ---------------------------------------------------------- caches */

static uint64_t dcache_line(void)
{
	/* CTR_EL0.DminLine: log2 of words in the smallest D-cache line. */
	return 4ull << ((read_sysreg(ctr_el0) >> 16) & 0xf);
}

/* [snippet:dcache] */
static void mm_dcache_clean_inval_poc(void *ctx, slat_pa_t pa, uint64_t size)
{
	uint64_t line = dcache_line(), va = slat_pa_v(pa) & ~(line - 1);
	uint64_t end = slat_pa_v(pa) + size;
	struct hyp_cpu *c = hyp_this_cpu();

	(void)ctx;
	for (; va < end; va += line) {
		__asm__ volatile("dc civac, %0" ::"r"(va) : "memory");
		c->tlbi.dcache_lines++;
	}
	dsb(ish);
}
/* [end] */

/* Clean (no invalidate) what EL2 wrote for a guest that starts with its
 * MMU off: its first reads do not look in the caches. */
void hyp_dcache_clean_poc(uint64_t pa, uint64_t size)
{
	uint64_t line = dcache_line();

	for (uint64_t va = pa & ~(line - 1); va < pa + size; va += line)
		__asm__ volatile("dc cvac, %0" ::"r"(va) : "memory");
	dsb(ish);
}

static void mm_icache_inval_pou(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx, (void)pa, (void)size;
	/* Guest code is reached by IPA through the guest's own VAs: by-VA
	 * maintenance from EL2 cannot name its aliases, so all of it. */
	hyp_this_cpu()->tlbi.icache++;
	__asm__ volatile("ic ialluis" ::: "memory");
	dsb(ish);
	isb();
}

/* ------------------------------------------------------------ TLBs */

/*
 * By IPA: the stage-2 entry, then every stage-1 entry of the VMID, since
 * a combined stage-1+2 entry may hold the old output address and cannot
 * be found by IPA (the architecture's sequence for a stage-2 change).
 */
/* [snippet:tlbi-ipa] */
static void mm_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
			enum slat_tlbi_scope scope)
{
	uint64_t arg = slat_ipa_v(ipa) >> 12;
	struct hyp_cpu *c = hyp_this_cpu();

	(void)ctx, (void)level;
	if (scope == SLAT_TLBI_LOCAL) {
		c->tlbi.ipa_local++;
		dsb(nshst);
		__asm__ volatile("tlbi ipas2e1, %0" ::"r"(arg) : "memory");
		dsb(nsh);
		__asm__ volatile("tlbi vmalle1" ::: "memory");
		dsb(nsh);
		isb();
		return;
	}
	c->tlbi.ipa_is++;
	dsb(ishst);
	__asm__ volatile("tlbi ipas2e1is, %0" ::"r"(arg) : "memory");
	dsb(ish);
	__asm__ volatile("tlbi vmalle1is" ::: "memory");
	dsb(ish);
	isb();
}
/* [end] */

static void mm_tlbi_vmid(void *ctx)
{
	(void)ctx;
	hyp_this_cpu()->tlbi.vmid++;
	dsb(ishst);
	__asm__ volatile("tlbi vmalls12e1is" ::: "memory");
	dsb(ish);
	isb();
}

/* A range: page by page up to a bound, past it the whole VMID. */
static void mm_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	uint64_t pages = size / HYP_GRANULE, first = slat_ipa_v(ipa) >> 12;
	struct hyp_cpu *c = hyp_this_cpu();

	if (pages > 512) {
		c->tlbi.range_all++;
		mm_tlbi_vmid(ctx);
		return;
	}
	c->tlbi.range_pages++;
	dsb(ishst);
	for (uint64_t i = 0; i < pages; i++)
		__asm__ volatile("tlbi ipas2e1is, %0"
				 ::"r"(first + i) : "memory");
	dsb(ish);
	__asm__ volatile("tlbi vmalle1is" ::: "memory");
	dsb(ish);
	isb();
}

/* ---------------------------------------------------- grace periods */

/*
 * A table unlinked while the other CPU may be walking it in software (a
 * shared fault) waits until every other CPU has been seen outside a walk:
 * its walk_seq was even (not walking) when the table was unlinked, or
 * has moved on since. The hardware walkers were dealt with by the
 * invalidation that precedes the unlink's free.
 */
#define DEFER_MAX 256

struct deferred {
	void *va;
	int level;
	uint64_t seq[HYP_MAX_CPUS];
};

static struct deferred defer_q[HYP_MAX_CPUS][DEFER_MAX];
static uint32_t defer_n[HYP_MAX_CPUS];
static uint64_t deferred_total, reclaimed_total;

void hyp_walk_begin(struct hyp_cpu *c)
{
	__atomic_store_n(&c->walk_seq, c->walk_seq + 1, __ATOMIC_RELAXED);
	/* The count is odd before any table read of the walk. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void hyp_walk_end(struct hyp_cpu *c)
{
	__atomic_store_n(&c->walk_seq, c->walk_seq + 1, __ATOMIC_RELEASE);
}

/* [snippet:grace] */
static bool grace_elapsed(const struct deferred *d, const struct hyp_cpu *self)
{
	for (int i = 0; i < HYP_MAX_CPUS; i++) {
		uint64_t now = __atomic_load_n(&hyp_cpus[i].walk_seq,
					       __ATOMIC_ACQUIRE);

		if (&hyp_cpus[i] != self && (d->seq[i] & 1) && now == d->seq[i])
			return false;
	}
	return true;
}
/* [end] */

/* Free what this CPU deferred and every other CPU has since let go. */
void hyp_reclaim(struct hyp_cpu *c)
{
	uint32_t kept = 0, n = defer_n[c->index];
	struct deferred *q = defer_q[c->index];

	for (uint32_t i = 0; i < n; i++) {
		if (grace_elapsed(&q[i], c)) {
			slat_free_unlinked(&hyp_s2, q[i].va, q[i].level);
			__atomic_fetch_add(&reclaimed_total, 1, __ATOMIC_RELAXED);
		} else {
			q[kept++] = q[i];
		}
	}
	defer_n[c->index] = kept;
}

static void mm_free_deferred(void *ctx, void *va, int level)
{
	struct hyp_cpu *c = hyp_this_cpu();
	struct deferred *d;

	(void)ctx;
	/* Full: wait for the other CPUs to leave their walks (they do not
	 * wait for this one). */
	while (defer_n[c->index] == DEFER_MAX)
		hyp_reclaim(c);
	d = &defer_q[c->index][defer_n[c->index]++];
	d->va = va;
	d->level = level;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; i < HYP_MAX_CPUS; i++)
		d->seq[i] = __atomic_load_n(&hyp_cpus[i].walk_seq,
					    __ATOMIC_ACQUIRE);
	__atomic_fetch_add(&deferred_total, 1, __ATOMIC_RELAXED);
}

void hyp_deferred_counts(uint64_t *deferred, uint64_t *reclaimed)
{
	*deferred = __atomic_load_n(&deferred_total, __ATOMIC_RELAXED);
	*reclaimed = __atomic_load_n(&reclaimed_total, __ATOMIC_RELAXED);
}

const struct slat_mm_ops hyp_mm_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = mm_zalloc_root,
	.free_root = mm_free_root,
	.free_page = mm_free_page,
	.free_deferred = mm_free_deferred,
	.refcount = mm_refcount,
	.refcount_array = mm_refcount_array,
	.virt_to_phys = mm_virt_to_phys,
	.phys_to_virt = mm_phys_to_virt,
	.linear_offset = mm_linear_offset,
	.dcache_clean_inval_poc = mm_dcache_clean_inval_poc,
	.icache_inval_pou = mm_icache_inval_pou,
	.tlbi_ipa = mm_tlbi_ipa,
	.tlbi_range = mm_tlbi_range,
	.tlbi_vmid = mm_tlbi_vmid,
};
