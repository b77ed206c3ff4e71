/* SPDX-License-Identifier: MIT */
/*
 * kvm-peer: Linux KVM's arm64 stage-2 code (arch/arm64/kvm/hyp/pgtable.c,
 * unmodified, from Debian's linux-source package) run in slat-bench's
 * process, beside libslat, on the same scenarios (docs/bench.md, "KVM
 * measured here"). This interface is slat's own; the kernel's types stay
 * behind it, in kvm-peer.c.
 *
 * The table is KVM's configuration of slat-bench's: Armv8 stage 2, 4K
 * granule, 40-bit IPA, start level 1 with 2 concatenated root tables, no
 * FWB, no range TLBI. A build with KVM_PEER_PAGE_SHIFT 14 or 16 has the
 * 16K or 64K granule instead (start level 2), as a kernel with that page
 * size would. Table pages come from a pool of this file's own, with
 * plain reference counts; TLB and cache maintenance calls are counted.
 */
#ifndef SLAT_KVM_PEER_H
#define SLAT_KVM_PEER_H

#include <stdbool.h>
#include <stdint.h>

struct kvm_peer;

/* The leaves a map makes: pages (KVM's force_pte_cb says so), or the
 * largest blocks that the IPA, the PA and the size allow (no callback, as
 * for a VM's table). */
enum kvm_peer_leaf { KVM_PEER_PAGES, KVM_PEER_BLOCKS };

/* A map's permissions and memory type (KVM's enum kvm_pgtable_prot). */
#define KVM_PEER_R         (1u << 0)
#define KVM_PEER_W         (1u << 1)
#define KVM_PEER_X         (1u << 2)
#define KVM_PEER_DEVICE    (1u << 3)  /* Device-nGnRE */
#define KVM_PEER_NORMAL_NC (1u << 4)  /* Normal non-cacheable */
#define KVM_PEER_RW        (KVM_PEER_R | KVM_PEER_W)

/* What KVM's code asked of the platform, since the last reset. */
struct kvm_peer_counts {
	uint64_t tlbi_ipa;     /* __kvm_tlb_flush_vmid_ipa(_nsh) */
	uint64_t tlbi_vmid;    /* __kvm_tlb_flush_vmid */
	uint64_t dcache;       /* dcache_clean_inval_poc calls */
	uint64_t dcache_bytes;
	uint64_t icache;       /* icache_inval_pou calls */
	uint64_t pages_alloc;  /* table pages taken from a memcache */
	uint64_t pages_freed;  /* reference count dropped to zero */
};

/* One leaf as KVM's table holds it (kvm_pgtable_get_leaf()). */
struct kvm_peer_leaf_info {
	uint64_t pte;
	int level;
};

/**
 * kvm_peer_create() - KVM's stage-2 table, empty, with a page pool.
 * @pool_bytes: the most table memory the scenarios take at once.
 *
 * Return: the peer, or NULL (no memory, or KVM's init failed).
 */
struct kvm_peer *kvm_peer_create(uint64_t pool_bytes);

/** kvm_peer_free() - destroy the table and the pool. */
void kvm_peer_free(struct kvm_peer *p);

/**
 * kvm_peer_reset() - free every table (kvm_pgtable_stage2_destroy()) and
 * start again with an empty one; the counts restart from zero.
 *
 * Return: 0, or a negative errno from KVM's init.
 */
int kvm_peer_reset(struct kvm_peer *p);

/**
 * kvm_peer_topup() - fill the memcache with zeroed pages, as a vCPU's
 * kvm_mmu_topup_memory_cache() does before it takes the MMU lock: as many
 * as a map or a split of @bytes can take at any alignment (a last-level
 * table per level-2 block and one per level-1 block, and 4 for the ends).
 *
 * Return: 0, or -ENOMEM when the pool is exhausted.
 */
int kvm_peer_topup(struct kvm_peer *p, uint64_t bytes);

/** kvm_peer_map() - kvm_pgtable_stage2_map() of [@ipa, @ipa + @size) to
 * @pa with @prot (KVM_PEER_*; write-back memory unless a type is given),
 * in one call. Return: KVM's status. */
int kvm_peer_map(struct kvm_peer *p, uint64_t ipa, uint64_t size,
		 uint64_t pa, enum kvm_peer_leaf leaf, uint32_t prot);

/** kvm_peer_fault_each() - one kvm_pgtable_stage2_map() per 4K page, as
 * user_mem_abort() makes it: read and write, write-back memory, with
 * KVM_PGTABLE_WALK_HANDLE_FAULT, and KVM_PGTABLE_WALK_SHARED when @shared.
 * Return: the first bad status. */
int kvm_peer_fault_each(struct kvm_peer *p, uint64_t ipa, uint64_t size,
			uint64_t pa, bool shared);

/** kvm_peer_fault_pages() - kvm_peer_fault_each()'s call for the 4K pages
 * @pages[0 .. @n-1] of the range at @ipa (page indexes, in that order),
 * each mapped to the same offset from @pa. Return: the first bad status. */
int kvm_peer_fault_pages(struct kvm_peer *p, uint64_t ipa,
			 const uint32_t *pages, uint64_t n, uint64_t pa,
			 bool shared);

/** kvm_peer_unmap() - kvm_pgtable_stage2_unmap(). */
int kvm_peer_unmap(struct kvm_peer *p, uint64_t ipa, uint64_t size);

/** kvm_peer_split() - kvm_pgtable_stage2_split() to pages, with the
 * split page cache (which kvm_peer_topup() fills). */
int kvm_peer_split(struct kvm_peer *p, uint64_t ipa, uint64_t size);

/** kvm_peer_wrprotect() - kvm_pgtable_stage2_wrprotect(). */
int kvm_peer_wrprotect(struct kvm_peer *p, uint64_t ipa, uint64_t size);

/** kvm_peer_test_clear_young() - kvm_pgtable_stage2_test_clear_young()
 * with mkold. Return: whether a leaf was young. */
bool kvm_peer_test_clear_young(struct kvm_peer *p, uint64_t ipa,
			       uint64_t size);

/** kvm_peer_leaf() - the leaf KVM's table holds for @ipa (its pte is 0
 * and its level 3 for an address not mapped). Return: KVM's status. */
int kvm_peer_leaf(struct kvm_peer *p, uint64_t ipa,
		  struct kvm_peer_leaf_info *out);

/** kvm_peer_root() - KVM's root table (its concatenated pages). Table
 * descriptors hold host addresses: a table's PA is its pointer. */
const uint64_t *kvm_peer_root(const struct kvm_peer *p);

/** kvm_peer_read_counts() - what was counted since the last reset. */
void kvm_peer_read_counts(const struct kvm_peer *p,
			  struct kvm_peer_counts *out);

/** kvm_peer_table_pages() - table pages in use, the root's included. */
uint64_t kvm_peer_table_pages(const struct kvm_peer *p);

/** kvm_peer_source() - the kernel version the code came from. */
const char *kvm_peer_source(void);

#endif
