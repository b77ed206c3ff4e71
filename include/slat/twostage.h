/* SPDX-License-Identifier: MIT */
/*
 * Two-stage translation and trapped guest TLB maintenance (libslat-sim).
 *
 * A model of an Armv8 VM's MMU: the guest builds its own stage-1 tables
 * with libslat (SLAT_FMT_ARM_S1, 4K granule, 48-bit VA), in frames of its
 * guest-physical memory; that memory is mapped by a stage-2 libslat table
 * (SLAT_FMT_ARM_S2, 48-bit IPA, four levels). Each vCPU has a TLB of
 * combined entries tagged (VMID, ASID or global, VA) that give the final PA
 * and the permissions of both stages, and optionally a small TLB of
 * stage-2-only entries (IPA -> PA) that walks use. A miss walks both
 * stages through the real descriptors in memory: every stage-1 descriptor
 * read is itself translated by stage 2, so a cold 4 + 4 level walk reads
 * (4 + 1) * (4 + 1) - 1 = 24 descriptors. No stage-1 walk cache is modeled.
 *
 * Guest TLB maintenance (TLBI VAE1IS, ASIDE1IS, VMALLE1IS, VMALLE1) goes
 * through a policy: untrapped (executed as issued), precise (each one traps
 * to the hypervisor, which executes the same operation) or flush-all (each
 * one traps and becomes VMALLE1IS). Hypervisor maintenance (IPAS2E1IS,
 * VMALLS12E1IS) is executed directly. Everything is counted; a cost table
 * turns the counts into modeled guest cycles.
 *
 * The model is single-threaded: one thread plays every vCPU, deterministic.
 * docs/twostage.md has the model, the workload and the cost table.
 */
#ifndef SLAT_TWOSTAGE_H
#define SLAT_TWOSTAGE_H

#include <slat/export.h>
#include <slat/slat.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLAT_TS_MAX_VCPUS 64

/* Kernel (TTBR1_EL1) addresses: VA bit 55 set. */
#define SLAT_TS_KERNEL_VA(off) (0xffff000000000000ull | (uint64_t)(off))

/* TLB maintenance operations, with the entries each one removes. */
enum slat_ts_tlbi_kind {
	/* Combined entries of the VMID translating @va that are global or
	 * tagged with @asid, on every vCPU. */
	SLAT_TS_VAE1IS,
	/* Combined non-global entries tagged with @asid, every vCPU. */
	SLAT_TS_ASIDE1IS,
	/* Every combined entry of the VMID (global or not), every vCPU;
	 * stage-2-only entries stay. */
	SLAT_TS_VMALLE1IS,
	/* The same on the issuing vCPU only. */
	SLAT_TS_VMALLE1,
	/* Stage-2-only entries translating @ipa, every vCPU. Combined
	 * entries are not removed: the hypervisor follows with VMALLE1IS. */
	SLAT_TS_IPAS2E1IS,
	/* Every entry of the VMID, combined and stage-2-only, every vCPU. */
	SLAT_TS_VMALLS12E1IS,
	SLAT_TS_TLBI_KINDS
};

struct slat_ts_tlbi {
	enum slat_ts_tlbi_kind kind;
	uint16_t asid;    /* VAE1IS, ASIDE1IS */
	uint64_t va;      /* VAE1IS */
	slat_ipa_t ipa;   /* IPAS2E1IS */
};

/* How guest (EL1) TLB maintenance reaches the hardware. */
enum slat_ts_policy {
	SLAT_TS_UNTRAPPED,  /* executed as issued; the guest's DSB completes it */
	SLAT_TS_PRECISE,    /* trapped (HCR_EL2.TTLB), executed with the same scope */
	SLAT_TS_FLUSH_ALL,  /* trapped, executed as VMALLE1IS */
	SLAT_TS_POLICIES
};

SLAT_API const char *slat_ts_policy_name(enum slat_ts_policy p);
SLAT_API const char *slat_ts_tlbi_name(enum slat_ts_tlbi_kind k);

struct slat_ts_config {
	uint16_t vmid;
	uint32_t nr_vcpus;        /* 1..SLAT_TS_MAX_VCPUS */
	uint32_t tlb_entries;     /* combined entries per vCPU (power of two) */
	uint32_t tlb_ways;        /* associativity (power of two, <= entries) */
	uint32_t s2_tlb_entries;  /* stage-2-only entries per vCPU, 0: none
				     (power of two, direct-mapped) */
	uint64_t ram_ipa;         /* guest RAM: IPA base (granule aligned) */
	uint64_t ram_bytes;       /* and size (granule multiple) */
	bool s2_blocks;           /* stage 2 maps RAM with blocks, not pages */
	enum slat_ts_policy policy;
};

/* Defaults: VMID 1, 1 vCPU, 1024 x 4-way combined, no stage-2-only TLB,
 * 256 MiB of RAM at IPA 1 GiB mapped by pages, untrapped. */
SLAT_API void slat_ts_config_default(struct slat_ts_config *cfg);

struct slat_ts_stats {
	uint64_t accesses;
	uint64_t tlb_hits, tlb_misses;
	uint64_t walks;               /* two-dimensional walks */
	uint64_t walk_refs;           /* descriptors read by walks */
	uint64_t s2_tlb_hits;         /* stage-2 translations a walk did not walk */
	uint64_t faults[4];           /* by enum slat_fault, stage 1 or 2 */
	uint64_t guest_tlbi[SLAT_TS_TLBI_KINDS]; /* issued by the guest */
	uint64_t hw_tlbi[SLAT_TS_TLBI_KINDS];    /* executed (emulation included) */
	uint64_t traps;               /* guest TLBIs trapped to the hypervisor */
	uint64_t dsb;                 /* barriers completing broadcast TLBIs */
	uint64_t flush_calls;         /* guest flush calls (one DSB each) */
	uint64_t invalidated;         /* combined entries removed */
	uint64_t s2_invalidated;      /* stage-2-only entries removed */
};

struct slat_ts;     /* the VM: memory, stage 2, vCPU TLBs */
struct slat_ts_as;  /* a guest address space: a stage-1 table */

/*
 * Create the VM: guest RAM (committed lazily), a stage-2 table mapping all
 * of it, the vCPU TLBs. Returns NULL with *err = SLAT_E_CONFIG (bad
 * configuration) or SLAT_E_NOMEM.
 */
SLAT_API struct slat_ts *slat_ts_create(const struct slat_ts_config *cfg,
					int *err);
SLAT_API void slat_ts_destroy(struct slat_ts *ts);
SLAT_API const struct slat_ts_config *slat_ts_config(const struct slat_ts *ts);
SLAT_API void slat_ts_set_policy(struct slat_ts *ts,
				 enum slat_ts_policy policy);

/* The stage-2 table (the hypervisor may change it; it then issues
 * IPAS2E1IS and VMALLE1IS, or VMALLS12E1IS, with slat_ts_hw_tlbi). */
SLAT_API struct slat_table *slat_ts_stage2(struct slat_ts *ts);
/* Host physical address the stage-2 table gives guest RAM at @ipa. */
SLAT_API slat_pa_t slat_ts_ram_pa(const struct slat_ts *ts, slat_ipa_t ipa);

/*
 * Guest frames: take one page of guest RAM (zeroed when @zero), give it
 * back. Returns SLAT_OK or SLAT_E_NOMEM.
 */
SLAT_API int slat_ts_frame_alloc(struct slat_ts *ts, bool zero,
				 slat_ipa_t *ipa);
SLAT_API void slat_ts_frame_free(struct slat_ts *ts, slat_ipa_t ipa);
SLAT_API uint64_t slat_ts_frames_free(const struct slat_ts *ts);

/*
 * A stage-1 table in guest memory. @kernel: a TTBR1_EL1 table (VAs from
 * SLAT_TS_KERNEL_VA(0); its leaves are normally global), else a TTBR0_EL1
 * table for ASID @asid. The table's own TLB maintenance (break-before-make,
 * unmap, destroy) is issued by the vCPU set with slat_ts_set_current(),
 * as Linux arm64 would issue it: a by-address invalidation is VAE1IS with
 * the table's ASID; a range of up to 512 pages is one VAE1IS per page,
 * larger ranges and whole-table invalidations are ASIDE1IS (TTBR1 tables:
 * VMALLE1IS); each call ends with one DSB.
 * Returns NULL with *err on failure.
 */
SLAT_API struct slat_ts_as *slat_ts_as_create(struct slat_ts *ts, bool kernel,
					      uint16_t asid, int *err);
/* Free the table (one whole-table invalidation, as above). */
SLAT_API void slat_ts_as_destroy(struct slat_ts_as *as);
SLAT_API struct slat_table *slat_ts_as_table(struct slat_ts_as *as);
SLAT_API uint16_t slat_ts_as_asid(const struct slat_ts_as *as);
/* A new ASID (after a rollover); the caller invalidates the old one. */
SLAT_API void slat_ts_as_set_asid(struct slat_ts_as *as, uint16_t asid);
/* Guest table pages in use by @as (root included). */
SLAT_API uint64_t slat_ts_as_pages(const struct slat_ts_as *as);

/*
 * Stage-1 operations with table pages taken from guest RAM. @va is a
 * TTBR0 address, or for a kernel table a SLAT_TS_KERNEL_VA() address.
 * The same returns as slat_map / slat_unmap / slat_wrprotect.
 */
SLAT_API int slat_ts_as_map(struct slat_ts_as *as, uint64_t va, uint64_t size,
			    slat_ipa_t ipa, uint32_t attrs);
SLAT_API int slat_ts_as_unmap(struct slat_ts_as *as, uint64_t va,
			      uint64_t size);
SLAT_API int slat_ts_as_wrprotect(struct slat_ts_as *as, uint64_t va,
				  uint64_t size);
/* Add @perms in place (a write fault on a page no longer shared); like
 * arm64's ptep_set_access_flags, a stale read-only entry is invalidated
 * with VAE1IS. */
SLAT_API int slat_ts_as_relax(struct slat_ts_as *as, uint64_t va, uint64_t size,
			      uint32_t perms);

/* Make @vcpu run with TTBR0 = @user (may be NULL) and TTBR1 = @kernel
 * (may be NULL); the ASID is @user's. */
SLAT_API void slat_ts_vcpu_switch(struct slat_ts *ts, uint32_t vcpu,
				  struct slat_ts_as *user,
				  struct slat_ts_as *kernel);
/* The vCPU whose code runs the guest's table operations. */
SLAT_API void slat_ts_set_current(struct slat_ts *ts, uint32_t vcpu);

/* Kinds of access (SLAT_ACCESS_* of slat.h) at EL0 or EL1. */
struct slat_ts_result {
	enum slat_fault fault;  /* SLAT_FAULT_NONE when translated */
	int stage;              /* stage of the fault: 1 or 2 */
	bool hit;               /* served by the TLB */
	uint32_t refs;          /* descriptors read for this access */
	slat_ipa_t ipa;         /* intermediate address (on a walk) */
	slat_pa_t pa;           /* final address */
	uint32_t s1_attrs;      /* stage-1 SLAT_R/W/X/USER/NG */
	uint32_t s2_perms;      /* stage-2 SLAT_R/W/X */
};

/*
 * One guest access by @vcpu to @va (@el0: from user mode): TLB lookup,
 * on a miss the two-dimensional walk and a refill. A fault is returned in
 * @res (no entry is cached for it).
 * Returns SLAT_OK or SLAT_E_INVAL (vCPU out of range).
 */
SLAT_API int slat_ts_access(struct slat_ts *ts, uint32_t vcpu, uint64_t va,
			    unsigned access, bool el0,
			    struct slat_ts_result *res);

/* Whether @vcpu's TLB holds a combined entry that a lookup of @va with
 * ASID @asid would hit (no side effects, no counting). */
SLAT_API bool slat_ts_tlb_holds(const struct slat_ts *ts, uint32_t vcpu,
				uint16_t asid, uint64_t va);
/* Valid combined entries in @vcpu's TLB. */
SLAT_API uint32_t slat_ts_tlb_count(const struct slat_ts *ts, uint32_t vcpu);

/*
 * Guest TLB maintenance: one flush call of @n operations by @vcpu, ended by
 * one DSB, through the VM's policy. Untrapped: executed, one DSB counted.
 * Precise: each traps and is executed with one DSB. Flush-all: each traps
 * and becomes VMALLE1IS with one DSB.
 */
SLAT_API void slat_ts_guest_flush(struct slat_ts *ts, uint32_t vcpu,
				  const struct slat_ts_tlbi *ops, uint32_t n);
/* Execute one operation on the hardware (the hypervisor's own
 * maintenance: IPAS2E1IS, VMALLS12E1IS), with its DSB. */
SLAT_API void slat_ts_hw_tlbi(struct slat_ts *ts, uint32_t vcpu,
			      const struct slat_ts_tlbi *op);

/* Counters, summed over the vCPUs, since creation or the last reset. */
SLAT_API void slat_ts_stats_read(const struct slat_ts *ts,
				 struct slat_ts_stats *s);
SLAT_API void slat_ts_stats_reset(struct slat_ts *ts);

/* ---- cost table and the kernel-build workload (twostage_workload.c) ---- */

/* Modeled cycles of each counted event (docs/twostage.md justifies them). */
struct slat_ts_cost {
	double work;        /* guest work one modeled access stands for */
	double tlb_hit;     /* a combined-TLB hit */
	double mem_ref;     /* one descriptor read by a walk */
	double trap;        /* trap to EL2, decode, return (emulation apart) */
	double tlbi_va, tlbi_asid, tlbi_all; /* issuing one TLBI */
	double dsb;         /* DSB ISH completing broadcast TLBIs */
	double fault;       /* a guest page fault handled by the guest kernel */
	double ctxsw;       /* a guest context switch */
	double spawn;       /* fork + exec + exit of one process, guest side */
	double hz;          /* guest clock, for rates per second */
};
SLAT_API void slat_ts_cost_default(struct slat_ts_cost *c);

/* Modeled cycles of a workload's counts (@events: workload counters). */
struct slat_ts_events {
	uint64_t ctxsw, spawns, forks, execs, exits, cows, munmaps;
	uint64_t munmap_pages, first_touch, asid_rollovers;
};
SLAT_API double slat_ts_cycles(const struct slat_ts_cost *c,
			       const struct slat_ts_stats *s,
			       const struct slat_ts_events *e);

struct slat_ts_workload {
	uint32_t nr_vcpus;        /* V */
	uint32_t nr_procs;        /* P live guest processes (>= V) */
	uint64_t accesses;        /* modeled accesses per vCPU (the work) */
	uint64_t seed;
	/* Rates per vCPU per second of untrapped guest time at cost.hz,
	 * converted to work with cost.work. */
	double ctxsw_rate;
	double spawn_rate;        /* fork + exec + exit per second */
	double touch_rate;        /* new pages touched (first-touch faults) */
	double munmap_rate;       /* munmap/mprotect calls */
	double munmap_pages;      /* mean pages per call (geometric) */
	double munmap_large;      /* fraction of calls of 1024 pages */
	uint32_t cow_pages;       /* pages the child writes before exec */
	double write_frac;        /* fraction of accesses that write */
	uint32_t ws_pages;        /* working set pages per process */
	uint32_t hot_pages;       /* of which hot */
	double hot_frac;          /* fraction of accesses to the hot pages */
	double kernel_frac;       /* fraction of accesses to kernel (global) pages */
	uint32_t kernel_pages;    /* kernel working set (global) */
	uint32_t asid_bits;       /* 8 or 16: rollover re-tags every process */
};
SLAT_API void slat_ts_workload_default(struct slat_ts_workload *w);

struct slat_ts_report {
	enum slat_ts_policy policy;
	struct slat_ts_stats st;
	struct slat_ts_events ev;
	double cycles;            /* sum over vCPUs */
	double guest_cycles;      /* cycles / V: the build's modeled time */
	uint64_t wall_ns;         /* host time of the run */
};

/*
 * Run the workload once on a VM configured by @cfg (its vCPU count is
 * replaced by @w->nr_vcpus). The same seed gives the same guest events
 * under every policy. Returns SLAT_OK, SLAT_E_CONFIG, SLAT_E_NOMEM.
 */
SLAT_API int slat_ts_workload_run(const struct slat_ts_workload *w,
				  const struct slat_ts_config *cfg,
				  const struct slat_ts_cost *cost,
				  struct slat_ts_report *out);

#ifdef __cplusplus
}
#endif
#endif
