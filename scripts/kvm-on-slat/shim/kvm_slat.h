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

struct slat_page_cache *kvm_slat_cache_get(struct slat_page_cache *c,
					   void *mc);
void kvm_slat_cache_put(struct slat_page_cache *c, void *mc);
void kvm_slat_free_unlinked(void *pgtable, s8 level);

#endif
