/* SPDX-License-Identifier: MIT */
/*
 * The shim between arm64 KVM's stage-2 interface (asm/kvm_pgtable.h) and
 * libslat: what kvm_slat.c (the kvm_pgtable_stage2_*() functions) and
 * kvm_slat_mm.c (libslat's platform hooks on KVM's mm_ops) share.
 */
#ifndef KVM_SLAT_H
#define KVM_SLAT_H

#include <linux/atomic.h>
#include <linux/kvm_host.h>
#include <asm/kvm_pgtable.h>

#include <slat/slat.h>

/**
 * struct kvm_slat - one stage-2 table of KVM, held by libslat.
 * @table: libslat's table; its root is what pgt->pgd points to.
 * @pgt: KVM's handle, whose mm_ops and mmu the hooks call.
 * @deferred: unlinked subtrees waiting for an RCU grace period; each holds
 *	a pointer to this structure until it is freed.
 * @dying: set by destroy: the VMID may be gone, so no invalidation is made
 *	(KVM frees a table nothing can walk any more).
 */
struct kvm_slat {
	struct slat_table table;
	struct kvm_pgtable *pgt;
	atomic_t deferred;
	bool dying;
};

extern const struct slat_mm_ops kvm_slat_mm_ops;

/* The counters of kvm_slat_counts.c: the shim's calls, then each
 * destroyed table's struct slat_stats. */
enum kvm_slat_count {
	KVM_SLAT_FAULT_MAP,      /* map calls from the fault handler */
	KVM_SLAT_FAULT_AGAIN,    /* of those, already mapped: -EAGAIN */
	KVM_SLAT_RELAX,          /* relax_perms calls (permission faults) */
	KVM_SLAT_MKYOUNG,        /* mkyoung calls (access-flag faults) */
	KVM_SLAT_TLBI_SHIM,      /* the shim's own local TLBI (relax) */
	KVM_SLAT_TABLES,         /* stage-2 tables destroyed */
	KVM_SLAT_LEAVES,
	KVM_SLAT_TLBI_IPA,
	KVM_SLAT_TLBI_IPA_LOCAL,
	KVM_SLAT_TLBI_RANGE,
	KVM_SLAT_TLBI_VMID,
	KVM_SLAT_DCACHE_CALLS,
	KVM_SLAT_DCACHE_BYTES,
	KVM_SLAT_ICACHE_CALLS,
	KVM_SLAT_PAGES_ALLOC,
	KVM_SLAT_RETRIES,
	KVM_SLAT_COUNTS
};

void kvm_slat_count(enum kvm_slat_count c, u64 n);
void kvm_slat_count_table(const struct slat_table *t);

struct slat_page_cache *kvm_slat_cache_get(struct slat_page_cache *c,
					   void *mc);
void kvm_slat_cache_put(struct slat_page_cache *c, void *mc);
void kvm_slat_free_unlinked(void *pgtable, s8 level);

#endif
