// SPDX-License-Identifier: MIT
/*
 * libslat's platform hooks (struct slat_mm_ops) on arm64 KVM: table pages
 * from KVM's mm_ops and memcaches, TLB invalidation through KVM's hyp
 * calls, cache maintenance through mm_ops, deferred frees through KVM's
 * RCU callback.
 */
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <asm/kvm_asm.h>
#include <asm/kvm_host.h>
#include <asm/tlbflush.h>

#include "kvm_slat.h"

static struct kvm_pgtable_mm_ops *mm_of(void *ctx)
{
	return ((struct kvm_slat *)ctx)->pgt->mm_ops;
}

static void *kvm_slat_zalloc_root(void *ctx, size_t bytes)
{
	return mm_of(ctx)->zalloc_pages_exact(bytes);
}

static void kvm_slat_free_root(void *ctx, void *va, size_t bytes)
{
	mm_of(ctx)->free_pages_exact(va, bytes);
}

/* Pages came from a memcache (kvm_slat_cache_put() accounted them). */
static void kvm_slat_free_page(void *ctx, void *va)
{
	mm_of(ctx)->put_page(va);
}

/*
 * A table page's count is the low half of page->private (arm64 is little
 * endian): KVM's own stage 2 keeps nothing there until the page is
 * unlinked, and kvm_slat_free_unlinked() takes it back then.
 */
static uint32_t *kvm_slat_refcount(void *ctx, void *va)
{
	return (uint32_t *)&virt_to_page(va)->private;
}

/*
 * KVM's free_unlinked_table() stores the level in page->private and frees
 * the subtree after a grace period, through
 * kvm_pgtable_stage2_free_unlinked(), which has no table argument: the
 * table goes in page->index, which a table page does not use.
 */
static void kvm_slat_free_deferred(void *ctx, void *va, int level)
{
	struct kvm_slat *ks = ctx;

	atomic_inc(&ks->deferred);
	virt_to_page(va)->index = (unsigned long)ks;
	mm_of(ctx)->free_unlinked_table(va, level);
}

/**
 * kvm_slat_free_unlinked() - free a subtree once its grace period is over.
 * @pgtable: the table page libslat unlinked.
 * @level: its level.
 */
void kvm_slat_free_unlinked(void *pgtable, s8 level)
{
	struct page *page = virt_to_page(pgtable);
	struct kvm_slat *ks = (struct kvm_slat *)page->index;

	page->index = 0;
	/* KVM's callback kept the level in the count word: recount. */
	set_page_private(page, SLAT_REFCOUNT_UNKNOWN);
	slat_free_unlinked(&ks->table, pgtable, level);
	/* The last access to ks: destroy may free it from here on. */
	smp_mb__before_atomic();
	atomic_dec(&ks->deferred);
}

static slat_pa_t kvm_slat_virt_to_phys(void *ctx, void *va)
{
	return slat_pa(mm_of(ctx)->virt_to_phys(va));
}

static void *kvm_slat_phys_to_virt(void *ctx, slat_pa_t pa)
{
	return mm_of(ctx)->phys_to_virt(slat_pa_v(pa));
}

static void kvm_slat_dcache(void *ctx, slat_pa_t pa, uint64_t size)
{
	struct kvm_pgtable_mm_ops *mm = mm_of(ctx);

	mm->dcache_clean_inval_poc(mm->phys_to_virt(slat_pa_v(pa)), size);
}

static void kvm_slat_icache(void *ctx, slat_pa_t pa, uint64_t size)
{
	struct kvm_pgtable_mm_ops *mm = mm_of(ctx);

	mm->icache_inval_pou(mm->phys_to_virt(slat_pa_v(pa)), size);
}

static struct kvm_s2_mmu *mmu_of(void *ctx)
{
	struct kvm_slat *ks = ctx;

	return ks->dying ? NULL : ks->pgt->mmu;
}

static void kvm_slat_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
			      enum slat_tlbi_scope scope)
{
	struct kvm_s2_mmu *mmu = mmu_of(ctx);
	int ttl = level == SLAT_LEVEL_ANY ? TLBI_TTL_UNKNOWN : level;

	if (!mmu)
		return;
	if (scope == SLAT_TLBI_LOCAL)
		kvm_call_hyp(__kvm_tlb_flush_vmid_ipa_nsh, mmu,
			     slat_ipa_v(ipa), ttl);
	else
		kvm_call_hyp(__kvm_tlb_flush_vmid_ipa, mmu, slat_ipa_v(ipa),
			     ttl);
}

static void kvm_slat_tlbi_vmid(void *ctx)
{
	struct kvm_s2_mmu *mmu = mmu_of(ctx);

	if (mmu)
		kvm_call_hyp(__kvm_tlb_flush_vmid, mmu);
}

/* By range where the CPU has FEAT_TLBIRANGE, in the most pages one
 * instruction sequence covers; else the whole VMID. */
static void kvm_slat_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	struct kvm_s2_mmu *mmu = mmu_of(ctx);
	u64 addr = slat_ipa_v(ipa), pages = size >> PAGE_SHIFT;

	if (!mmu)
		return;
	if (!system_supports_tlb_range()) {
		kvm_call_hyp(__kvm_tlb_flush_vmid, mmu);
		return;
	}
	while (pages) {
		u64 n = min_t(u64, pages, MAX_TLBI_RANGE_PAGES);

		kvm_call_hyp(__kvm_tlb_flush_vmid_range, mmu, addr, n);
		addr += n << PAGE_SHIFT;
		pages -= n;
	}
}

const struct slat_mm_ops kvm_slat_mm_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = kvm_slat_zalloc_root,
	.free_root = kvm_slat_free_root,
	.free_page = kvm_slat_free_page,
	.free_deferred = kvm_slat_free_deferred,
	.refcount = kvm_slat_refcount,
	.virt_to_phys = kvm_slat_virt_to_phys,
	.phys_to_virt = kvm_slat_phys_to_virt,
	.dcache_clean_inval_poc = kvm_slat_dcache,
	.icache_inval_pou = kvm_slat_icache,
	.tlbi_ipa = kvm_slat_tlbi_ipa,
	.tlbi_range = kvm_slat_tlbi_range,
	.tlbi_vmid = kvm_slat_tlbi_vmid,
};

/**
 * kvm_slat_cache_get() - a libslat page cache over a KVM memcache.
 * @c: the cache to set up.
 * @mc: a struct kvm_mmu_memory_cache of zeroed pages, or NULL.
 *
 * The two share the array of pages: libslat pops from the top as
 * kvm_mmu_memory_cache_alloc() does.
 *
 * Return: @c, or NULL when @mc is NULL.
 */
struct slat_page_cache *kvm_slat_cache_get(struct slat_page_cache *c,
					   void *mc)
{
	struct kvm_mmu_memory_cache *kmc = mc;

	if (!kmc)
		return NULL;
	slat_page_cache_init(c, kmc->objects, kmc->capacity);
	c->nr = kmc->nobjs;
	return c;
}

/**
 * kvm_slat_cache_put() - hand the pages left back to the memcache.
 * @c: the cache kvm_slat_cache_get() set up.
 * @mc: the same memcache.
 *
 * The pages libslat took are accounted as KVM's own zalloc_page() would.
 */
void kvm_slat_cache_put(struct slat_page_cache *c, void *mc)
{
	struct kvm_mmu_memory_cache *kmc = mc;
	int i;

	if (!kmc)
		return;
	for (i = c->nr; i < kmc->nobjs; i++)
		kvm_account_pgtable_pages(kmc->objects[i], 1);
	kmc->nobjs = c->nr;
}
