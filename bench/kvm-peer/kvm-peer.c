// SPDX-License-Identifier: MIT
/*
 * kvm-peer's platform for KVM's stage-2 code: the mm_ops callbacks that
 * arch/arm64/kvm/mmu.c gives pgtable.c in the kernel, done the way
 * libslat's hosted platform does its own (kvm-peer.h). Compiled with
 * shim/kvm-shim.h and the kernel's asm/kvm_pgtable.h.
 */
#include <asm/kvm_pgtable.h>

#include <string.h>
#include <sys/mman.h>

#include "kvm-peer.h"

#ifndef KVM_PEER_VERSION
#define KVM_PEER_VERSION "unknown"
#endif

/* The root: up to 16 concatenated pages. A 40-bit IPA starts at level 1
 * with 4K pages (2 root pages), at level 2 with 16K (16) or 64K (1). */
#define PGD_PAGES 16
#define IPA_BITS 40
#define START_LEVEL (PAGE_SHIFT == 12 ? 1 : 2)

struct kvm_peer {
	char *pool;            /* PGD_PAGES root pages, then table pages */
	uint64_t nr_pages;     /* the pool's, root pages included */
	uint64_t bump;         /* pages never handed out start here */
	int *refcount;         /* per pool page: struct page's count */
	void **free;           /* pages whose count dropped to zero */
	uint64_t nr_free;
	uint64_t in_use;       /* table pages, the root's included */
	struct kvm_pgtable pgt;
	struct kvm_s2_mmu mmu;
	struct kvm_pgtable_mm_ops mm_ops;
	struct kvm_peer_counts counts;
};

/* mm_ops callbacks get no context: one peer at a time. */
static struct kvm_peer *peer;

static uint64_t page_index(const void *addr)
{
	return (uint64_t)((const char *)addr - peer->pool) >> PAGE_SHIFT;
}

/* A vCPU's memcache gives out pages it zeroed before the MMU lock. */
static void *memcache_zalloc_page(void *arg)
{
	struct kvm_mmu_memory_cache *mc = arg;
	void *page;

	if (!mc || !mc->nobjs)
		return NULL;
	page = mc->objects[--mc->nobjs];
	peer->refcount[page_index(page)] = 1;
	peer->counts.pages_alloc++;
	peer->in_use++;
	return page;
}

static void *root_zalloc(size_t size)
{
	uint64_t n = PAGE_ALIGN(size) >> PAGE_SHIFT;

	if (n > PGD_PAGES)
		return NULL;
	memset(peer->pool, 0, n << PAGE_SHIFT);
	for (uint64_t i = 0; i < n; i++)
		peer->refcount[i] = 1;
	peer->in_use += n;
	return peer->pool;
}

static void root_free(void *addr, size_t size)
{
	(void)addr;
	peer->in_use -= PAGE_ALIGN(size) >> PAGE_SHIFT;
}

static void get_page(void *addr)
{
	peer->refcount[page_index(addr)]++;
}

/* The kernel frees a page whose count reaches zero; so does this, to the
 * pool's free stack. The root is freed by free_pages_exact alone. */
static void put_page(void *addr)
{
	uint64_t i = page_index(addr);

	if (--peer->refcount[i] || i < PGD_PAGES)
		return;
	peer->free[peer->nr_free++] = peer->pool + (i << PAGE_SHIFT);
	peer->counts.pages_freed++;
	peer->in_use--;
}

static int page_count(void *addr)
{
	return peer->refcount[page_index(addr)];
}

/* Tables are at their own addresses; a leaf's PA is never dereferenced
 * (the cache maintenance below only counts). */
static void *phys_to_virt(phys_addr_t pa)
{
	return (void *)(uintptr_t)pa;
}

static phys_addr_t virt_to_phys(void *addr)
{
	return (phys_addr_t)(uintptr_t)addr;
}

/* Called directly, where the kernel defers it past an RCU grace period:
 * here no other walker runs. */
static void free_unlinked_table(void *addr, s8 level)
{
	kvm_pgtable_stage2_free_unlinked(&peer->mm_ops, addr, level);
}

static void dcache_clean_inval_poc(void *addr, size_t size)
{
	(void)addr;
	peer->counts.dcache++;
	peer->counts.dcache_bytes += size;
}

static void icache_inval_pou(void *addr, size_t size)
{
	(void)addr, (void)size;
	peer->counts.icache++;
}

void __kvm_tlb_flush_vmid(struct kvm_s2_mmu *mmu)
{
	(void)mmu;
	peer->counts.tlbi_vmid++;
}

void __kvm_tlb_flush_vmid_ipa(struct kvm_s2_mmu *mmu, phys_addr_t ipa,
			      int level)
{
	(void)mmu, (void)ipa, (void)level;
	peer->counts.tlbi_ipa++;
}

void __kvm_tlb_flush_vmid_ipa_nsh(struct kvm_s2_mmu *mmu, phys_addr_t ipa,
				  int level)
{
	__kvm_tlb_flush_vmid_ipa(mmu, ipa, level);
}

void __kvm_tlb_flush_vmid_range(struct kvm_s2_mmu *mmu, phys_addr_t start,
				unsigned long pages)
{
	(void)start, (void)pages;
	__kvm_tlb_flush_vmid(mmu);
}

/* Only kvm_pgtable_hyp_*() reach it, which kvm-peer never calls. */
void kvm_peer_hyp_tlbi(void)
{
	__builtin_trap();
}

static bool force_pages(u64 addr, u64 end, enum kvm_pgtable_prot prot)
{
	(void)addr, (void)end, (void)prot;
	return true;
}

static const struct kvm_pgtable_mm_ops mm_ops = {
	.zalloc_page = memcache_zalloc_page,
	.zalloc_pages_exact = root_zalloc,
	.free_pages_exact = root_free,
	.free_unlinked_table = free_unlinked_table,
	.get_page = get_page,
	.put_page = put_page,
	.page_count = page_count,
	.phys_to_virt = phys_to_virt,
	.virt_to_phys = virt_to_phys,
	.dcache_clean_inval_poc = dcache_clean_inval_poc,
	.icache_inval_pou = icache_inval_pou,
};

static int stage2_init(struct kvm_peer *p)
{
	p->mmu.vtcr = VTCR_EL2_T0SZ(IPA_BITS) |
		      VTCR_EL2_LVLS_TO_SL0(4 - START_LEVEL);
	p->mmu.pgt = &p->pgt;
	return __kvm_pgtable_stage2_init(&p->pgt, &p->mmu, &p->mm_ops, 0,
					 NULL);
}

struct kvm_peer *kvm_peer_create(uint64_t pool_bytes)
{
	static struct kvm_peer one;
	struct kvm_peer *p = &one;
	uint64_t n = PGD_PAGES + (pool_bytes >> PAGE_SHIFT);

	if (peer)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->pool = mmap(NULL, n << PAGE_SHIFT, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->pool == MAP_FAILED)
		return NULL;
	p->refcount = mmap(NULL, n * sizeof(int) + n * 2 * sizeof(void *),
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->refcount == MAP_FAILED) {
		munmap(p->pool, n << PAGE_SHIFT);
		return NULL;
	}
	p->free = (void **)(p->refcount + n + (n & 1));
	p->mmu.split_page_cache.objects = p->free + n;
	p->nr_pages = n;
	p->bump = PGD_PAGES;
	p->mm_ops = mm_ops;
	peer = p;
	if (stage2_init(p)) {
		kvm_peer_free(p);
		return NULL;
	}
	return p;
}

void kvm_peer_free(struct kvm_peer *p)
{
	uint64_t n = p->nr_pages;

	munmap(p->pool, n << PAGE_SHIFT);
	munmap(p->refcount, n * sizeof(int) + n * 2 * sizeof(void *));
	peer = NULL;
}

static void memcache_drain(struct kvm_peer *p)
{
	struct kvm_mmu_memory_cache *mc = &p->mmu.split_page_cache;

	while (mc->nobjs)
		p->free[p->nr_free++] = mc->objects[--mc->nobjs];
}

int kvm_peer_reset(struct kvm_peer *p)
{
	kvm_pgtable_stage2_destroy(&p->pgt);
	memcache_drain(p);
	memset(&p->counts, 0, sizeof(p->counts));
	return stage2_init(p);
}

int kvm_peer_topup(struct kvm_peer *p, uint64_t bytes)
{
	struct kvm_mmu_memory_cache *mc = &p->mmu.split_page_cache;
	uint64_t pages = bytes / kvm_granule_size(2) +
			 bytes / kvm_granule_size(1) + 4;

	while ((uint64_t)mc->nobjs < pages) {
		void *page;

		if (p->nr_free) {
			page = p->free[--p->nr_free];
		} else if (p->bump < p->nr_pages) {
			page = p->pool + (p->bump++ << PAGE_SHIFT);
		} else {
			return -ENOMEM;
		}
		memset(page, 0, PAGE_SIZE);
		mc->objects[mc->nobjs++] = page;
	}
	return 0;
}

static enum kvm_pgtable_prot kvm_prot(uint32_t prot)
{
	return (prot & KVM_PEER_R ? KVM_PGTABLE_PROT_R : 0) |
	       (prot & KVM_PEER_W ? KVM_PGTABLE_PROT_W : 0) |
	       (prot & KVM_PEER_X ? KVM_PGTABLE_PROT_X : 0) |
	       (prot & KVM_PEER_DEVICE ? KVM_PGTABLE_PROT_DEVICE : 0) |
	       (prot & KVM_PEER_NORMAL_NC ? KVM_PGTABLE_PROT_NORMAL_NC : 0);
}

int kvm_peer_map(struct kvm_peer *p, uint64_t ipa, uint64_t size,
		 uint64_t pa, enum kvm_peer_leaf leaf, uint32_t prot)
{
	int rc;

	p->pgt.force_pte_cb = leaf == KVM_PEER_PAGES ? force_pages : NULL;
	rc = kvm_pgtable_stage2_map(&p->pgt, ipa, size, pa, kvm_prot(prot),
				    &p->mmu.split_page_cache, 0);
	p->pgt.force_pte_cb = NULL;
	return rc;
}

/* One fault's map, as user_mem_abort() makes it. */
static int fault_page(struct kvm_peer *p, uint64_t ipa, uint64_t pa,
		      bool shared)
{
	enum kvm_pgtable_walk_flags flags = KVM_PGTABLE_WALK_HANDLE_FAULT |
		(shared ? KVM_PGTABLE_WALK_SHARED : 0);

	return kvm_pgtable_stage2_map(&p->pgt, ipa, PAGE_SIZE, pa,
				      kvm_prot(KVM_PEER_RW),
				      &p->mmu.split_page_cache, flags);
}

int kvm_peer_fault_each(struct kvm_peer *p, uint64_t ipa, uint64_t size,
			uint64_t pa, bool shared)
{
	for (uint64_t off = 0; off < size; off += PAGE_SIZE) {
		int rc = fault_page(p, ipa + off, pa + off, shared);

		if (rc)
			return rc;
	}
	return 0;
}

int kvm_peer_fault_pages(struct kvm_peer *p, uint64_t ipa,
			 const uint32_t *pages, uint64_t n, uint64_t pa,
			 bool shared)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = (uint64_t)pages[i] * PAGE_SIZE;
		int rc = fault_page(p, ipa + off, pa + off, shared);

		if (rc)
			return rc;
	}
	return 0;
}

int kvm_peer_unmap(struct kvm_peer *p, uint64_t ipa, uint64_t size)
{
	return kvm_pgtable_stage2_unmap(&p->pgt, ipa, size);
}

int kvm_peer_split(struct kvm_peer *p, uint64_t ipa, uint64_t size)
{
	return kvm_pgtable_stage2_split(&p->pgt, ipa, size,
					&p->mmu.split_page_cache);
}

int kvm_peer_wrprotect(struct kvm_peer *p, uint64_t ipa, uint64_t size)
{
	return kvm_pgtable_stage2_wrprotect(&p->pgt, ipa, size);
}

bool kvm_peer_test_clear_young(struct kvm_peer *p, uint64_t ipa,
			       uint64_t size)
{
	return kvm_pgtable_stage2_test_clear_young(&p->pgt, ipa, size, true);
}

int kvm_peer_leaf(struct kvm_peer *p, uint64_t ipa,
		  struct kvm_peer_leaf_info *out)
{
	kvm_pte_t pte = 0;
	s8 level = KVM_PGTABLE_LAST_LEVEL;
	int rc = kvm_pgtable_get_leaf(&p->pgt, ipa, &pte, &level);

	out->pte = pte;
	out->level = level;
	return rc;
}

const uint64_t *kvm_peer_root(const struct kvm_peer *p)
{
	return (const uint64_t *)p->pgt.pgd;
}

void kvm_peer_read_counts(const struct kvm_peer *p,
			  struct kvm_peer_counts *out)
{
	*out = p->counts;
}

uint64_t kvm_peer_table_pages(const struct kvm_peer *p)
{
	return p->in_use;
}

const char *kvm_peer_source(void)
{
	return KVM_PEER_VERSION;
}
