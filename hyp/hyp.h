/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp: a thin EL2 hypervisor for QEMU's virt machine that runs one
 * guest at EL1 on a libslat stage-2 table. The guest sees the machine's
 * devices and interrupts directly; slat-hyp handles stage-2 aborts and
 * PSCI calls, nothing else.
 */
#ifndef HYP_H
#define HYP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slat/slat.h>

#include "fdt.h"

/*
 * Physical memory. QEMU's virt has RAM from 1 GiB, as much as -m says
 * (its DTB's /memory); slat-hyp uses what lies below 4 GiB (its own map's
 * reach). slat-hyp's fixed part, [HYP_OWN, HYP_OWN_END), is where it is
 * linked and where the run script loads its parameters: its image, the
 * parameters, the table pages. The rest is the guest's, with that part a
 * hole in it, except, with the dirty-log check, the shadow copy at the
 * top (hyp_mem, worked out by main.c from the DTB).
 */
#define HYP_RAM_BASE		0x40000000ull
#define HYP_RAM_LIMIT		0x100000000ull	/* EL2's map: 4 GiB */
#define HYP_OWN			0x70000000ull
#define HYP_IMAGE		HYP_OWN		/* hyp.ld */
#define HYP_PARAMS		0x70200000ull
#define HYP_POOL		0x70400000ull
#define HYP_POOL_SIZE		0x07c00000ull	/* 124 MiB of table pages */
#define HYP_OWN_END		(HYP_POOL + HYP_POOL_SIZE)
/* The dirty-log check's bitmaps are sized for this much guest RAM. */
#define HYP_LOG_SPAN_MAX	0x80000000ull

struct hyp_layout {
	uint64_t ram_end;	/* the DTB's RAM, up to HYP_RAM_LIMIT */
	/* Guest RAM: [HYP_RAM_BASE, guest_end) but [HYP_OWN, HYP_OWN_END). */
	uint64_t guest_end;
	/* The shadow: guest_end - HYP_RAM_BASE bytes (0: no check). */
	uint64_t shadow;
};

extern struct hyp_layout hyp_mem;

/* Where the run script loads the guest's kernel and initramfs, and where
 * slat-hyp writes the guest's DTB. */
#define HYP_QEMU_DTB		HYP_RAM_BASE
#define HYP_KERNEL		0x40200000ull
#define HYP_GUEST_DTB		0x47f00000ull
#define HYP_INITRD		0x48000000ull
/* The PL011 slat-hyp prints to (uart.c): one page of EL2's map. */
#define HYP_UART		0x09000000ull
/* A page no region maps: /init reads it to start the dirty-log check. */
#define HYP_DOORBELL		0x0b000000ull

/* What the run script tells slat-hyp: QEMU's loader device writes each
 * word (-device loader,addr=...,data=...,data-len=8). */
struct hyp_params {
	uint64_t initrd_size;
	uint64_t log_mode;	/* enum hyp_log_mode */
	uint64_t demo;		/* nonzero: /init starts a shell */
	uint64_t hpfar_mode;	/* enum hyp_hpfar_mode */
	/* Nonzero: the guest's tree gets idle states, and CPU_SUSPEND the
	 * wake-up and power loss QEMU's PSCI lacks (psci.c). */
	uint64_t idle_states;
};

/*
 * The fault-address test (stage2.c): HPFAR_EL2 as the fault handler sees
 * it. Where the architecture leaves it UNKNOWN, a wrong but plausible IPA
 * replaces it, so that a handler that trusted it would fail the run.
 */
enum hyp_hpfar_mode {
	HYP_HPFAR_REAL = 0,
	HYP_HPFAR_POISON = 1,	/* poisoned where UNKNOWN */
	/* As on a core with erratum 834220: every abort outside a stage-1
	 * walk is resolved through AT, and its HPFAR_EL2 poisoned. */
	HYP_HPFAR_834220 = 2,
};

enum hyp_log_mode {
	HYP_LOG_OFF = 0,
	HYP_LOG_WRPROTECT = 1,	/* slat_wrprotect + eager split */
	HYP_LOG_HWDIRTY = 2,	/* FEAT_HAFDBS: DBM, slat_dirty_read */
};

#define HYP_MAX_CPUS	8
#define HYP_CACHE_PAGES	8	/* a fault needs at most one per level */
#define HYP_GRANULE	4096ull

/* The guest's registers as the EL2 vectors saved them (start.S). */
struct hyp_frame {
	uint64_t x[31];
	uint64_t pad;
};

enum hyp_fault_kind {
	HYP_F_TRANSLATION,
	HYP_F_PERMISSION,
	HYP_F_ACCESS_FLAG,
	HYP_F_DEVICE,		/* translation faults on device regions */
	HYP_F_RETRY,		/* handled with SLAT_E_AGAIN or _NOMEM */
	HYP_F_HPFAR_POISONED,	/* HPFAR_EL2 replaced (the fault-address test) */
	HYP_F_IPA_FROM_AT,	/* IPA from FAR_EL2 through AT S1E1R */
	HYP_F_KINDS
};

/* Invalidations as the hooks issued them, by scope. */
struct hyp_tlbi_count {
	uint64_t ipa_is, ipa_local, range_pages, range_all, vmid;
	uint64_t dcache_lines, icache;
};

struct hyp_cpu {
	uint64_t index;
	bool online;
	/* Quiescent-state count: odd while this CPU walks libslat tables in
	 * software (mm.c, the grace period of deferred frees). */
	uint64_t walk_seq;
	uint64_t faults[HYP_F_KINDS];
	/* Device leaves this CPU's faults wrote, by level (1G, 2M, 4K). */
	uint64_t device_leaves[SLAT_LAST_LEVEL + 1];
	uint64_t exits, psci_calls;
	/* CPU_SUSPEND to standby (forwarded) and to power-down states (woken
	 * at slat-hyp's entry: resumed), calls refused. */
	uint64_t psci_standby, psci_powerdown, resumed, psci_refused;
	bool suspended;		/* in a power-down CPU_SUSPEND */
	struct hyp_tlbi_count tlbi;
	struct slat_page_cache cache;
	void *cache_pages[HYP_CACHE_PAGES];
	struct slat_stats stats;	/* this vCPU's share of libslat's work */
	/* PSCI CPU_ON, CPU_SUSPEND: where the guest wants this CPU to start. */
	uint64_t guest_entry, guest_ctx;
	/* Its affinity, its redistributor (RD_base), and the stop's kicks
	 * (gic.c): sent, and acknowledged by the guest before the stop. */
	uint64_t mpidr, gicr;
	uint32_t kick_saved_priority;
	uint64_t kicks, kicks_seen;
	uint64_t gicr_emulated;	/* accesses to RD_base, VLPI_base (gic.c) */
	/* The stack invalidated before the MMU went on, at its last start
	 * at hyp_secondary_entry. */
	uint64_t stack_inval[2];
};

/* EL2's translation and controls, as every CPU turns its MMU on with
 * them (main.c, start.S). */
struct hyp_el2_regs {
	uint64_t mair, tcr, ttbr, sctlr;
};

extern struct hyp_el2_regs hyp_el2_regs;

extern struct hyp_cpu hyp_cpus[HYP_MAX_CPUS];
extern struct slat_table hyp_s2;

/* uart.c */
void hyp_puts(const char *s);
void hyp_putx(uint64_t v);
void hyp_putu(uint64_t v);
void hyp_put_kv(const char *k, uint64_t v);
void hyp_print_lock(void);
void hyp_print_unlock(void);
void hyp_panic(const char *why, uint64_t v) __attribute__((noreturn));
void hyp_exit_failure(void) __attribute__((noreturn));

/* mm.c: libslat's platform hooks and the table-page pool. */
extern const struct slat_mm_ops hyp_mm_ops;
void hyp_pool_init(void);
uint64_t hyp_pool_pages_used(void);
void hyp_cache_fill(struct slat_page_cache *cache, uint32_t need);
void hyp_cache_drain(struct slat_page_cache *cache);
void hyp_walk_begin(struct hyp_cpu *c);
void hyp_walk_end(struct hyp_cpu *c);
void hyp_reclaim(struct hyp_cpu *c);
void hyp_deferred_counts(uint64_t *deferred, uint64_t *reclaimed);
void hyp_dcache_clean_poc(uint64_t pa, uint64_t size);

/* stage2.c */
void hyp_s2_init(const void *fdt, uint64_t hpfar_mode);
void hyp_s2_fault(struct hyp_cpu *c, struct hyp_frame *f, uint64_t esr);
int hyp_s2_lookup(uint64_t ipa, struct slat_leaf *leaf);
void hyp_report(void);

/* gic.c: the SGI that stops a vCPU at once; no LPIs for the guest */
void hyp_gic_init(const void *fdt);
uint64_t hyp_gic_redist(uint64_t mpidr);
void hyp_gic_kick(struct hyp_cpu *c);
void hyp_gic_unkick(struct hyp_cpu *c);
void hyp_gic_redist_region(uint64_t *base, uint64_t *size);
uint64_t hyp_gic_sgi_frame(uint64_t pa);
void hyp_gic_redist_access(struct hyp_cpu *c, struct hyp_frame *f,
			   uint64_t esr, uint64_t pa);

/* trap.c: a Data Abort's access, from its syndrome (Arm ARM D24.2,
 * ESR_EL2: ISS encoding for an exception from a Data Abort). */
struct hyp_mmio {
	unsigned size;		/* bytes: 1 << SAS */
	unsigned reg;		/* SRT; 31 is XZR */
	bool write;		/* WnR */
	bool sign_extend;	/* SSE */
	bool reg64;		/* SF: a 64-bit register */
};

bool hyp_mmio_decode(uint64_t esr, struct hyp_mmio *m);
uint64_t hyp_mmio_value(const struct hyp_frame *f, const struct hyp_mmio *m);
void hyp_mmio_complete(struct hyp_frame *f, const struct hyp_mmio *m,
		       uint64_t v);

/* log.c: the dirty-log check, and the lock faults share with it */
void hyp_log_init(uint64_t mode);
bool hyp_log_hwdirty(void);
void hyp_log_report(void);
void hyp_log_boot_copy(void);
void hyp_log_doorbell(struct hyp_cpu *c, struct hyp_frame *f, uint64_t esr);
void hyp_log_park(struct hyp_cpu *c);
bool hyp_logging(void);
bool hyp_logging_wp(void);
void hyp_log_mark(uint64_t ipa);
void hyp_mmu_read_lock(void);
void hyp_mmu_read_unlock(void);
int hyp_max_level(void *arg, slat_ipa_t ipa);
void hyp_report_leaves(void);
void hyp_count_leaves(uint64_t *blocks_1g, uint64_t *blocks_2m,
		      uint64_t *pages);

/* psci.c */
void hyp_psci_init(uint64_t emulate_suspend);
uint32_t hyp_psci_powerdown_state(uint32_t state_id);
int hyp_psci_idle_states(void *dtb);
void hyp_psci(struct hyp_cpu *c, struct hyp_frame *f);

/* main.c */
int hyp_cpu_index(uint64_t mpidr);
void hyp_cpu_on_entry(uint64_t cpu, uint64_t stack, uint64_t stack_end);
struct hyp_cpu *hyp_this_cpu(void);
uint64_t hyp_counter_ms(void);
uint64_t hyp_vcount(void);
uint64_t hyp_ticks_us(uint64_t ticks);
extern uint64_t hyp_psci_smc;	/* the conduit: true SMC, false HVC */

/* start.S, hyp.ld */
extern char hyp_secondary_entry[];
extern char __bss_end[];
void hyp_dcache_inval_poc(uint64_t start, uint64_t end);
void hyp_el2_mmu_enable(void);
void hyp_eret_to_guest(uint64_t entry, uint64_t x0) __attribute__((noreturn));
void hyp_power_loss(uint64_t entry, uint64_t x0) __attribute__((noreturn));

#define read_sysreg(r)                                                   \
	({                                                               \
		uint64_t v_;                                             \
		__asm__ volatile("mrs %0, " #r : "=r"(v_));              \
		v_;                                                      \
	})
#define write_sysreg(r, v)                                               \
	__asm__ volatile("msr " #r ", %0" ::"r"((uint64_t)(v)) : "memory")
#define isb() __asm__ volatile("isb" ::: "memory")
#define dsb(opt) __asm__ volatile("dsb " #opt ::: "memory")

#endif
