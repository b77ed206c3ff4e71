// SPDX-License-Identifier: MIT
/*
 * arm64 KVM's stage-2 page-table functions (asm/kvm_pgtable.h), served by
 * libslat. KVM's callers (mmu.c) are unchanged: they pass a struct
 * kvm_pgtable, KVM walk flags, KVM memcaches and enum kvm_pgtable_prot,
 * and get KVM's return conventions back. The table is libslat's, in the
 * hardware format, so KVM's own readers (kvm_pgtable_get_leaf(), the
 * stage-2 ptdump) still work on it.
 */
#include <linux/bitfield.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <asm/cpufeature.h>
#include <asm/kvm_arm.h>
#include <asm/kvm_asm.h>
#include <asm/kvm_host.h>

#include "kvm_slat.h"

#define KVM_SLAT_SW_MASK GENMASK_ULL(58, 55) /* KVM_PGTABLE_PROT_SW0..3 */

static struct kvm_slat *ks_of(struct kvm_pgtable *pgt)
{
	return pgt->slat;
}

/* KVM's errno for a libslat status; successes are 0. */
static int kvm_slat_errno(int status)
{
	switch (status) {
	case SLAT_OK:
	case SLAT_NOTHING_TO_DO:
	case SLAT_WAS_YOUNG:
		return 0;
	case SLAT_E_NOMEM:
		return -ENOMEM;
	case SLAT_E_AGAIN:
	case SLAT_E_EXISTS:
		return -EAGAIN;
	case SLAT_E_RANGE:
		return -ERANGE;
	case SLAT_E_NOENT:
		return -ENOENT;
	default:
		return -EINVAL;
	}
}

/* The permissions of @prot; the memory type and software bits apart. */
static u32 kvm_slat_perms(enum kvm_pgtable_prot prot)
{
	u32 perms = 0;

	if (prot & KVM_PGTABLE_PROT_R)
		perms |= SLAT_R;
	if (prot & KVM_PGTABLE_PROT_W)
		perms |= SLAT_W;
	if (prot & KVM_PGTABLE_PROT_X)
		perms |= SLAT_X;
	return perms;
}

/*
 * libslat's attributes for @prot, or -EINVAL for what KVM refuses too:
 * Device and Normal-NC at once, or either executable.
 */
static int kvm_slat_attrs(enum kvm_pgtable_prot prot, u32 *attrs)
{
	u32 mt = SLAT_MT_NORMAL;

	switch (prot & (KVM_PGTABLE_PROT_DEVICE | KVM_PGTABLE_PROT_NORMAL_NC)) {
	case KVM_PGTABLE_PROT_DEVICE:
		mt = SLAT_MT_DEVICE;
		break;
	case KVM_PGTABLE_PROT_NORMAL_NC:
		mt = SLAT_MT_NORMAL_NC;
		break;
	case 0:
		break;
	default:
		return -EINVAL;
	}
	if (mt != SLAT_MT_NORMAL && (prot & KVM_PGTABLE_PROT_X))
		return -EINVAL;
	*attrs = kvm_slat_perms(prot) | mt |
		 SLAT_SW(FIELD_GET(KVM_SLAT_SW_MASK, (u64)prot));
	return 0;
}

/*
 * libslat's configuration for the VTCR_EL2 KVM computed (kvm_get_vtcr()):
 * the IPA size from T0SZ, the start level from SL0 (KVM never starts at
 * level -1, which would need SL2), the output size from PS, FEAT_LPA2
 * descriptors from DS (KVM sets it whenever the CPU has LPA2); FWB and DIC
 * as KVM's own stage 2 decides them.
 */
static void kvm_slat_config(u64 vtcr, enum kvm_pgtable_stage2_flags flags,
			    struct slat_config *cfg)
{
	s8 start = VTCR_EL2_TGRAN_SL0_BASE - FIELD_GET(VTCR_EL2_SL0_MASK, vtcr);

	memset(cfg, 0, sizeof(*cfg));
	cfg->format = SLAT_FMT_ARM_S2;
	cfg->granule = PAGE_SIZE;
	cfg->ia_bits = VTCR_EL2_IPA(vtcr);
	cfg->pa_bits = id_aa64mmfr0_parange_to_phys_shift(
		FIELD_GET(VTCR_EL2_PS_MASK, vtcr));
	cfg->levels = KVM_PGTABLE_LAST_LEVEL + 1 - start;
	if (cpus_have_final_cap(ARM64_HAS_STAGE2_FWB) &&
	    !(flags & KVM_PGTABLE_S2_NOFWB))
		cfg->features |= SLAT_FEAT_FWB;
	if (cpus_have_final_cap(ARM64_HAS_CACHE_DIC))
		cfg->features |= SLAT_FEAT_DIC;
	if (vtcr & VTCR_EL2_DS)
		cfg->features |= SLAT_FEAT_LPA2;
}

/**
 * __kvm_pgtable_stage2_init() - a guest stage-2 table, held by libslat.
 * @pgt: KVM's handle to fill in.
 * @mmu: the MMU whose VTCR gives the geometry and whose VMID is invalidated.
 * @mm_ops: KVM's memory callbacks (the hooks call them).
 * @flags: KVM_PGTABLE_S2_NOFWB is honoured; KVM_PGTABLE_S2_IDMAP (pKVM's
 *	host stage 2) is not needed in VHE mode.
 * @force_pte_cb: kept: a map it answers true for gets pages only.
 *
 * Return: 0, -ENOMEM, or -EINVAL for a VTCR libslat does not take.
 */
int __kvm_pgtable_stage2_init(struct kvm_pgtable *pgt, struct kvm_s2_mmu *mmu,
			      struct kvm_pgtable_mm_ops *mm_ops,
			      enum kvm_pgtable_stage2_flags flags,
			      kvm_pgtable_force_pte_cb_t force_pte_cb)
{
	const struct slat_geometry *geo;
	struct slat_config cfg;
	struct kvm_slat *ks;
	size_t bytes;
	int ret;

	kvm_slat_config(mmu->vtcr, flags, &cfg);
	ks = kzalloc(sizeof(*ks), GFP_KERNEL_ACCOUNT);
	if (!ks)
		return -ENOMEM;
	ks->pgt = pgt;
	pgt->mm_ops = mm_ops;
	pgt->mmu = mmu;
	pgt->flags = flags;
	pgt->force_pte_cb = force_pte_cb;
	ret = slat_table_init(&ks->table, &cfg, &kvm_slat_mm_ops, ks);
	if (ret) {
		kfree(ks);
		return ret == SLAT_E_NOMEM ? -ENOMEM : -EINVAL;
	}
	geo = slat_table_geometry(&ks->table);
	pgt->pgd = slat_table_root(&ks->table, NULL, &bytes);
	pgt->ia_bits = geo->ia_bits;
	pgt->start_level = geo->start_level;
	pgt->slat = ks;
	pr_info_once("kvm-on-slat: stage 2 by libslat %s (%s, %u-bit IPA, start level %d)\n",
		     slat_version(), slat_table_name(&ks->table),
		     geo->ia_bits, geo->start_level);
	/* The same root as KVM's own stage 2 would have made. */
	WARN_ON(bytes != kvm_pgtable_stage2_pgd_size(mmu->vtcr));
	/* The zeroed root is visible to the walker before VTTBR points at it. */
	dsb(ishst);
	return 0;
}

/**
 * kvm_pgtable_stage2_destroy() - free a table nothing walks any more.
 * @pgt: the table.
 *
 * Waits for the subtrees still queued for RCU, which point at the table,
 * then frees every page. No invalidation, as in KVM's own.
 */
void kvm_pgtable_stage2_destroy(struct kvm_pgtable *pgt)
{
	struct kvm_slat *ks = ks_of(pgt);

	ks->dying = true;
	if (atomic_read_acquire(&ks->deferred))
		rcu_barrier();
	kvm_slat_count_table(&ks->table);
	slat_table_destroy(&ks->table);
	pgt->pgd = NULL;
	pgt->slat = NULL;
	kfree(ks);
}

/**
 * kvm_pgtable_stage2_free_unlinked() - KVM's RCU callback for a subtree the
 * shim handed to mm_ops->free_unlinked_table().
 * @mm_ops: unused: the subtree's table knows its hooks.
 * @pgtable: the subtree's table page.
 * @level: its level.
 */
void kvm_pgtable_stage2_free_unlinked(struct kvm_pgtable_mm_ops *mm_ops,
				      void *pgtable, s8 level)
{
	kvm_slat_free_unlinked(pgtable, level);
}

/*
 * A shared walker reads tables that another may unlink meanwhile: it runs
 * inside an RCU read-side section, as KVM's own shared walks do, so that
 * the deferred frees (call_rcu) wait for it.
 */
static void kvm_slat_walk_begin(u32 flags)
{
	if (flags & SLAT_SHARED)
		rcu_read_lock();
}

static void kvm_slat_walk_end(u32 flags)
{
	if (flags & SLAT_SHARED)
		rcu_read_unlock();
}

/* KVM's range: the page offset of @addr ignored, the end rounded up. */
static void kvm_slat_range(u64 addr, u64 size, u64 *start, u64 *end)
{
	*start = ALIGN_DOWN(addr, PAGE_SIZE);
	*end = PAGE_ALIGN(addr + size);
}

/*
 * KVM's walkers change whole leaves: a block the range meets only in part
 * is unmapped or write-protected whole. libslat would split it instead,
 * so the range is widened to the leaves at its two ends.
 */
static void kvm_slat_whole_leaves(struct slat_table *t, u64 *start, u64 *end)
{
	struct slat_leaf leaf;

	if (slat_lookup(t, slat_ipa(*start), &leaf) == SLAT_OK)
		*start = slat_ipa_v(leaf.base);
	if (slat_lookup(t, slat_ipa(*end - 1), &leaf) == SLAT_OK)
		*end = slat_ipa_v(leaf.base) + leaf.size;
}

/* The map flags for KVM's walk flags and force_pte_cb. */
static u32 kvm_slat_map_flags(struct kvm_pgtable *pgt, u64 start, u64 end,
			      enum kvm_pgtable_prot prot,
			      enum kvm_pgtable_walk_flags flags)
{
	/* KVM breaks a block it maps into, and faults the rest back later. */
	u32 f = SLAT_MAP_BREAK_BLOCK;

	if (flags & KVM_PGTABLE_WALK_SHARED)
		f |= SLAT_SHARED;
	if (flags & KVM_PGTABLE_WALK_SKIP_CMO)
		f |= SLAT_SKIP_CMO;
	if (pgt->force_pte_cb && pgt->force_pte_cb(start, end, prot))
		f |= SLAT_MAP_PAGES;
	return f;
}

/**
 * kvm_pgtable_stage2_map() - map [@addr, @addr + @size) to @phys.
 * @pgt: the table.
 * @addr: the IPA.
 * @size: bytes.
 * @phys: the PA.
 * @prot: permissions, memory type, software bits.
 * @mc: a struct kvm_mmu_memory_cache with the table pages it may need.
 * @flags: KVM_PGTABLE_WALK_SHARED (the fault path, under the read lock),
 *	_HANDLE_FAULT, _SKIP_CMO; _SKIP_BBM_TLBI is for tables built off-line,
 *	which this map never is.
 *
 * A mapping that already translates as asked, or differs only in its
 * permissions, is left alone: -EAGAIN for a fault handler (the vCPU
 * refaults and relaxes), as KVM's own map answers.
 *
 * Return: 0 or a negative errno.
 */
int kvm_pgtable_stage2_map(struct kvm_pgtable *pgt, u64 addr, u64 size,
			   u64 phys, enum kvm_pgtable_prot prot,
			   void *mc, enum kvm_pgtable_walk_flags flags)
{
	struct slat_page_cache cache;
	struct slat_op op = {};
	u64 start, end;
	u32 attrs;
	int ret;

	ret = kvm_slat_attrs(prot, &attrs);
	if (ret)
		return ret;
	kvm_slat_range(addr, size, &start, &end);
	op.flags = kvm_slat_map_flags(pgt, start, end, prot, flags);
	op.cache = kvm_slat_cache_get(&cache, mc);
	kvm_slat_walk_begin(op.flags);
	ret = slat_map(&ks_of(pgt)->table, slat_ipa(start), end - start,
		       slat_pa(ALIGN_DOWN(phys, PAGE_SIZE)), attrs, &op);
	kvm_slat_walk_end(op.flags);
	kvm_slat_cache_put(&cache, mc);
	if (flags & KVM_PGTABLE_WALK_HANDLE_FAULT)
		kvm_slat_count(KVM_SLAT_FAULT_MAP, 1);
	if (ret == SLAT_NOTHING_TO_DO && (flags & KVM_PGTABLE_WALK_HANDLE_FAULT)) {
		kvm_slat_count(KVM_SLAT_FAULT_AGAIN, 1);
		return -EAGAIN;
	}
	return kvm_slat_errno(ret);
}

/* How an unmap invalidates: one range after the walk where KVM's own
 * does (FEAT_TLBIRANGE and FWB, so no cache maintenance waits on it). */
static enum slat_tlbi_policy kvm_slat_unmap_flush(struct slat_table *t)
{
	const struct slat_config *cfg = slat_table_config(t);

	if (system_supports_tlb_range() && (cfg->features & SLAT_FEAT_FWB))
		return SLAT_FLUSH_RANGE;
	return SLAT_FLUSH_ENTRY;
}

/**
 * kvm_pgtable_stage2_unmap() - remove every translation of a range.
 * @pgt: the table (held exclusively: the MMU lock for write).
 * @addr: the IPA.
 * @size: bytes.
 *
 * Blocks the range meets are removed whole. Tables left empty are freed
 * after an RCU grace period; without FWB the memory is cleaned to the PoC
 * once its translation is invalidated.
 *
 * Return: 0 or a negative errno.
 */
int kvm_pgtable_stage2_unmap(struct kvm_pgtable *pgt, u64 addr, u64 size)
{
	struct slat_table *t = &ks_of(pgt)->table;
	struct slat_op op = {};
	u64 start, end;

	kvm_slat_range(addr, size, &start, &end);
	kvm_slat_whole_leaves(t, &start, &end);
	op.flush = kvm_slat_unmap_flush(t);
	return kvm_slat_errno(slat_unmap(t, slat_ipa(start), end - start, &op));
}

/**
 * kvm_pgtable_stage2_wrprotect() - remove write permission from a range.
 * @pgt: the table (held exclusively).
 * @addr: the IPA.
 * @size: bytes.
 *
 * Blocks are protected whole. No invalidation: the caller flushes.
 *
 * Return: 0 or a negative errno.
 */
int kvm_pgtable_stage2_wrprotect(struct kvm_pgtable *pgt, u64 addr, u64 size)
{
	struct slat_table *t = &ks_of(pgt)->table;
	struct slat_op op = { .flush = SLAT_FLUSH_NONE };
	u64 start, end;

	kvm_slat_range(addr, size, &start, &end);
	kvm_slat_whole_leaves(t, &start, &end);
	return kvm_slat_errno(slat_wrprotect(t, slat_ipa(start), end - start,
					     &op));
}

/**
 * kvm_pgtable_stage2_mkyoung() - set the access flag of the leaf at @addr.
 * @pgt: the table (the MMU lock held for read).
 * @addr: the IPA.
 *
 * Return: the leaf as it was, or 0 when nothing is mapped there.
 */
kvm_pte_t kvm_pgtable_stage2_mkyoung(struct kvm_pgtable *pgt, u64 addr)
{
	struct slat_table *t = &ks_of(pgt)->table;
	slat_ipa_t ipa = slat_ipa(ALIGN_DOWN(addr, PAGE_SIZE));
	struct slat_leaf leaf;
	int ret;

	kvm_slat_count(KVM_SLAT_MKYOUNG, 1);
	kvm_slat_walk_begin(SLAT_SHARED);
	ret = slat_lookup(t, ipa, &leaf);
	if (ret == SLAT_OK)
		ret = slat_mkyoung(t, ipa, SLAT_SHARED);
	kvm_slat_walk_end(SLAT_SHARED);
	if (ret < 0)
		return 0;
	dsb(ishst);
	return leaf.pte;
}

/**
 * kvm_pgtable_stage2_test_clear_young() - were the leaves of a range
 * accessed; with @mkold, clear their access flags (no invalidation).
 * @pgt: the table.
 * @addr: the IPA.
 * @size: bytes.
 * @mkold: clear the flags.
 *
 * Return: true when a leaf of the range had its access flag set.
 */
bool kvm_pgtable_stage2_test_clear_young(struct kvm_pgtable *pgt, u64 addr,
					 u64 size, bool mkold)
{
	struct slat_op op = { .flags = SLAT_SHARED };
	u64 start, end;
	int ret;

	kvm_slat_range(addr, size, &start, &end);
	kvm_slat_walk_begin(op.flags);
	ret = slat_test_clear_young(&ks_of(pgt)->table, slat_ipa(start),
				    end - start, mkold, &op);
	kvm_slat_walk_end(op.flags);
	return ret == SLAT_WAS_YOUNG;
}

/**
 * kvm_pgtable_stage2_relax_perms() - add permissions to the leaf at @addr.
 * @pgt: the table (the MMU lock held for read).
 * @addr: the IPA of a permission fault.
 * @prot: the permissions to add; the rest of @prot is ignored.
 *
 * The whole leaf is relaxed, and this CPU's TLB entry for it invalidated,
 * also when another vCPU relaxed it first: the stale entry would fault
 * again.
 *
 * Return: 0, or -EAGAIN when the leaf went or changed meanwhile (the vCPU
 * refaults), or another negative errno.
 */
int kvm_pgtable_stage2_relax_perms(struct kvm_pgtable *pgt, u64 addr,
				   enum kvm_pgtable_prot prot)
{
	struct slat_table *t = &ks_of(pgt)->table;
	struct slat_op op = { .flags = SLAT_SHARED | SLAT_NO_HOLES };
	struct slat_leaf leaf;
	int ret;

	addr = ALIGN_DOWN(addr, PAGE_SIZE);
	kvm_slat_count(KVM_SLAT_RELAX, 1);
	kvm_slat_walk_begin(op.flags);
	ret = slat_lookup(t, slat_ipa(addr), &leaf);
	if (ret == SLAT_OK)
		ret = slat_relax(t, leaf.base, leaf.size, kvm_slat_perms(prot),
				 &op);
	kvm_slat_walk_end(op.flags);
	if (ret == SLAT_NOTHING_TO_DO) {
		kvm_slat_count(KVM_SLAT_TLBI_SHIM, 1);
		kvm_call_hyp(__kvm_tlb_flush_vmid_ipa_nsh, pgt->mmu, addr,
			     leaf.level);
		return -EAGAIN;
	}
	if (ret == SLAT_E_NOENT || ret == SLAT_E_NOMEM)
		return -EAGAIN;
	return kvm_slat_errno(ret);
}

/**
 * kvm_pgtable_stage2_flush() - clean and invalidate to the PoC the memory
 * a range maps (nothing to do with FWB).
 * @pgt: the table.
 * @addr: the IPA.
 * @size: bytes.
 *
 * Return: 0 or a negative errno.
 */
int kvm_pgtable_stage2_flush(struct kvm_pgtable *pgt, u64 addr, u64 size)
{
	u64 start, end;

	kvm_slat_range(addr, size, &start, &end);
	return kvm_slat_errno(slat_flush(&ks_of(pgt)->table, slat_ipa(start),
					 end - start, NULL));
}

/**
 * kvm_pgtable_stage2_split() - split the blocks of a range into pages
 * (eager page splitting), each block with break-before-make.
 * @pgt: the table (held exclusively).
 * @addr: the IPA.
 * @size: bytes.
 * @mc: the memcache the new tables come from.
 *
 * Return: 0, or -ENOMEM when @mc ran out (the blocks split so far stay
 * split), or another negative errno.
 */
int kvm_pgtable_stage2_split(struct kvm_pgtable *pgt, u64 addr, u64 size,
			     struct kvm_mmu_memory_cache *mc)
{
	struct slat_page_cache cache;
	struct slat_op op = {};
	u64 start, end;
	int ret;

	kvm_slat_range(addr, size, &start, &end);
	op.cache = kvm_slat_cache_get(&cache, mc);
	ret = slat_split(&ks_of(pgt)->table, slat_ipa(start), end - start, 0,
			 &op);
	kvm_slat_cache_put(&cache, mc);
	return kvm_slat_errno(ret);
}
