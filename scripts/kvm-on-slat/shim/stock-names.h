/* SPDX-License-Identifier: MIT */
/*
 * Forced into the kernel's arch/arm64/kvm/hyp/pgtable.c (-include): the
 * stage-2 functions that kvm_slat.c serves from libslat get other names
 * there, so that KVM's callers link to the shim. The stock code stays in
 * the image under these names, unused; the rest of pgtable.c (stage 1 of
 * the EL2 tables, kvm_pgtable_walk(), kvm_pgtable_get_leaf(),
 * kvm_get_vtcr(), kvm_tlb_flush_vmid_range()) is KVM's own, as it was.
 */
#ifndef KVM_SLAT_STOCK_NAMES_H
#define KVM_SLAT_STOCK_NAMES_H

#define __kvm_pgtable_stage2_init	stock___kvm_pgtable_stage2_init
#define kvm_pgtable_stage2_destroy	stock_kvm_pgtable_stage2_destroy
#define kvm_pgtable_stage2_free_unlinked stock_kvm_pgtable_stage2_free_unlinked
#define kvm_pgtable_stage2_map		stock_kvm_pgtable_stage2_map
#define kvm_pgtable_stage2_unmap	stock_kvm_pgtable_stage2_unmap
#define kvm_pgtable_stage2_wrprotect	stock_kvm_pgtable_stage2_wrprotect
#define kvm_pgtable_stage2_mkyoung	stock_kvm_pgtable_stage2_mkyoung
#define kvm_pgtable_stage2_test_clear_young \
	stock_kvm_pgtable_stage2_test_clear_young
#define kvm_pgtable_stage2_relax_perms	stock_kvm_pgtable_stage2_relax_perms
#define kvm_pgtable_stage2_flush	stock_kvm_pgtable_stage2_flush
#define kvm_pgtable_stage2_split	stock_kvm_pgtable_stage2_split

#endif
