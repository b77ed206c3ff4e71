/* SPDX-License-Identifier: MIT */
/*
 * The kernel environment that KVM's arm64 stage-2 code
 * (arch/arm64/kvm/hyp/pgtable.c) expects, in user space: the build of
 * kvm-peer force-includes this file before that code, which comes from
 * Debian's linux-source package at build time and is never part of slat.
 *
 * Everything is chosen the way slat-bench's hosted platform does its
 * work, so that the two are measured doing the same thing: a host with
 * 4K pages (16K or 64K with KVM_PEER_PAGE_SHIFT 14 or 16), no FWB, no
 * range TLBI, no LPA2; TLBIs are counted calls, not executed; barriers are compiler barriers; RCU's read side is free (as
 * in a kernel without preemption). Static keys (cpus_have_final_cap())
 * are constants, as the kernel's alternatives make them.
 */
#ifndef SLAT_KVM_SHIM_H
#define SLAT_KVM_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef u64 phys_addr_t;
typedef u64 kvm_pfn_t;

#define __rcu
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The configuration: arm64 with 4K pages, or the granule given; nothing
 * else is enabled. KVM's stage-2 granule is the host's page size. */
#ifndef KVM_PEER_PAGE_SHIFT
#define KVM_PEER_PAGE_SHIFT 12
#endif
#if KVM_PEER_PAGE_SHIFT == 12
#define CONFIG_ARM64_4K_PAGES 1
#endif
#define IS_ENABLED(option) 0

#define BIT(n) (1UL << (n))
#define GENMASK(h, l) ((~0UL << (l)) & (~0UL >> (63 - (h))))
#define FIELD_PREP(mask, val) \
	((((u64)(val)) << __builtin_ctzll(mask)) & (mask))
#define FIELD_GET(mask, reg) \
	((((u64)(reg)) & (mask)) >> __builtin_ctzll(mask))
#define IS_ALIGNED(x, a) (((x) & ((typeof(x))(a) - 1)) == 0)
#define ALIGN_DOWN(x, a) ((x) & ~((typeof(x))(a) - 1))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))

#define PAGE_SHIFT KVM_PEER_PAGE_SHIFT
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))
#define PTRS_PER_PTE (1 << (PAGE_SHIFT - 3))
#define __phys_to_pfn(pa) ((pa) >> PAGE_SHIFT)

/* A level resolves PAGE_SHIFT - 3 bits; level 3 maps a page. */
#define ARM64_HW_PGTABLE_LEVEL_SHIFT(n) ((PAGE_SHIFT - 3) * (4 - (n)) + 3)
#define ARM64_HW_PGTABLE_LEVELS(va_bits) \
	(((va_bits) - 4) / (PAGE_SHIFT - 3))

#define WARN_ON(c) ({ bool __c = !!(c); __c; })
#define WARN_ON_ONCE(c) WARN_ON(c)
#define WARN(c, ...) WARN_ON(c)

#define MAX_ERRNO 4095
#define ERR_PTR(e) ((void *)(long)(e))
#define PTR_ERR(p) ((long)(p))
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-MAX_ERRNO)

#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
/* The kernel's cmpxchg() is fully ordered, as the __sync builtins. */
#define cmpxchg(p, o, n) __sync_val_compare_and_swap((p), (o), (n))
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define dsb(opt) __asm__ __volatile__("" ::: "memory")
#define isb() __asm__ __volatile__("" ::: "memory")

#define rcu_read_lock() do { } while (0)
#define rcu_read_unlock() do { } while (0)
#define rcu_read_lock_held() 1
#define rcu_dereference_check(p, c) ((void)(c), (p))

/* CPU features, fixed: no FWB, no range TLBI, no LPA2, no BTI. */
#define cpus_have_final_cap(cap) 0
#define system_supports_tlb_range() 0
#define system_supports_lpa2() 0
#define system_supports_bti_kernel() 0

/* Stage-2 memory attributes, MemAttr[3:0] at descriptor bits 5:2. */
#define MT_S2_NORMAL 0xf
#define MT_S2_NORMAL_NC 0x5
#define MT_S2_DEVICE_nGnRE 0x1
#define MT_S2_FWB_NORMAL 0x6
#define MT_S2_FWB_NORMAL_NC 0x5
#define MT_S2_FWB_DEVICE_nGnRE 0x1
#define PAGE_S2_MEMATTR(attr, fwb) \
	((u64)((fwb) ? MT_S2_FWB_##attr : MT_S2_##attr) << 2)
/* Stage-1 (hyp) attribute indexes; the values do not matter here. */
#define MT_NORMAL 0
#define MT_DEVICE_nGnRE 1

#define ID_AA64MMFR0_EL1_PARANGE_SHIFT 0
#define ID_AA64MMFR0_EL1_PARANGE_48 0x5
#define ID_AA64MMFR0_EL1_PARANGE_52 0x6
#define cpuid_feature_extract_unsigned_field(reg, shift) \
	(((reg) >> (shift)) & 0xf)
#define get_vmid_bits(mmfr1) 16

/* VTCR_EL2: T0SZ in bits 5:0, SL0 in 7:6 (4K: level 2 - SL0; 16K and
 * 64K: level 3 - SL0). */
#define VTCR_EL2_T0SZ(ipa) ((u64)(64 - (ipa)))
#define VTCR_EL2_IPA(vtcr) (64 - ((vtcr) & 0x3f))
#define VTCR_EL2_SL0_MASK GENMASK(7, 6)
#define VTCR_EL2_TGRAN_SL0_BASE (PAGE_SHIFT == 12 ? 2 : 3)
#define VTCR_EL2_LVLS_TO_SL0(lvls) \
	FIELD_PREP(VTCR_EL2_SL0_MASK, VTCR_EL2_TGRAN_SL0_BASE - (4 - (lvls)))
#define VTCR_EL2_LVLS(vtcr) \
	(4 - (VTCR_EL2_TGRAN_SL0_BASE - FIELD_GET(VTCR_EL2_SL0_MASK, (vtcr))))
#define VTCR_EL2_PS_SHIFT 16
#define VTCR_EL2_FLAGS 0
#define VTCR_EL2_HA BIT(21)
#define VTCR_EL2_DS BIT(32)
#define VTCR_EL2_VS_8BIT 0
#define VTCR_EL2_VS_16BIT BIT(19)
#define MAX_TLBI_RANGE_PAGES (1UL << 21)

/* ID_AA64MMFR0_EL1.PARange: the encodings of 32 to 52 bits. */
static inline u8 id_aa64mmfr0_parange_to_phys_shift(int parange)
{
	static const u8 bits[] = { 32, 36, 40, 42, 44, 48, 52 };

	return parange >= 0 && parange < 7 ? bits[parange] : 52;
}

struct kvm_pgtable;

/* A vCPU's or the split's cache of zeroed pages (kvm-peer.c's). */
struct kvm_mmu_memory_cache {
	int nobjs;
	int capacity;
	void **objects;
};

/* What pgtable.c reads of the VM's stage-2 MMU. */
struct kvm_s2_mmu {
	u64 vtcr;
	struct kvm_pgtable *pgt;
	struct kvm_mmu_memory_cache split_page_cache;
};

/* TLB maintenance: counted by kvm-peer.c, as libslat's hosted hooks
 * count theirs. kvm_call_hyp() is a plain call, as under VHE. */
void __kvm_tlb_flush_vmid(struct kvm_s2_mmu *mmu);
void __kvm_tlb_flush_vmid_ipa(struct kvm_s2_mmu *mmu, phys_addr_t ipa,
			      int level);
void __kvm_tlb_flush_vmid_ipa_nsh(struct kvm_s2_mmu *mmu, phys_addr_t ipa,
				  int level);
void __kvm_tlb_flush_vmid_range(struct kvm_s2_mmu *mmu, phys_addr_t start,
				unsigned long pages);
#define kvm_call_hyp(f, ...) f(__VA_ARGS__)

/* The hyp's own stage-1 TLB maintenance, never reached by stage 2. */
void kvm_peer_hyp_tlbi(void);
#define TLBI_TTL_UNKNOWN 0
#define __TLBI_VADDR(addr, asid) (addr)
#define __tlbi_level(op, addr, level) kvm_peer_hyp_tlbi()
#define __tlbi_sync_s1ish_hyp() do { } while (0)

#endif
