/* SPDX-License-Identifier: MIT */
/*
 * libslat-sim: a VM simulator on top of libslat. It behaves like a
 * hypervisor's MMU, with calls named and specified after KVM's ioctls:
 *
 *   KVM_CREATE_VM                     slat_vm_create
 *   KVM_ENABLE_CAP                    slat_vm_enable_cap
 *   KVM_SET_USER_MEMORY_REGION        slat_vm_set_user_memory_region
 *   KVM_GET_DIRTY_LOG                 slat_vm_get_dirty_log
 *   KVM_CLEAR_DIRTY_LOG               slat_vm_clear_dirty_log
 *   KVM_CREATE_VCPU                   slat_vm_create_vcpu
 *   KVM_RESET_DIRTY_RINGS             slat_vm_reset_dirty_rings
 *   (the dirty ring mmap)             slat_vcpu_dirty_ring_harvest
 *   KVM_RUN (guest code)              slat_vcpu_run / slat_vcpu_access
 *
 * Memory: memslots over a backing source (the KVM selftests' names, plus
 * "synthetic" sources that hold no data). Each slot also gets a range of a
 * fake host-physical address space: the stage-2 table maps IPA to those
 * "host PAs", and real backings keep the host virtual address of each, so
 * guest accesses really read and write memory.
 *
 * vCPUs: every guest access goes through a software MMU with a per-vCPU TLB.
 * A miss walks the real descriptors with slat_hw_access(); a fault goes to a
 * fault handler that follows KVM's user_mem_abort(). TLB invalidation hooks
 * shoot down every vCPU: when one returns, no vCPU can still use the old
 * translation.
 *
 * Errors are negative errno values, as the ioctls return; slat_vm_error()
 * gives the message of the VM's last error.
 *
 * Concurrency: guest accesses run on vCPU threads, or, in the deterministic
 * mode (slat_vm_config.vtime), one vCPU at a time in the order of their
 * virtual clocks. Memslot changes, dirty log calls, MMIO changes and caps
 * come from one host thread at a time.
 */
#ifndef SLAT_SIM_H
#define SLAT_SIM_H

#include <slat/export.h>
#include <slat/slat.h>

#ifdef __cplusplus
extern "C" {
#endif

struct slat_vm;
struct slat_vcpu;

/* ---- VM ---- */

/* Where the D-cache clean of newly mapped memory happens (seed 000). */
enum slat_vm_cmo_placement {
	/* The core cleans in its walker, only the vCPU that installs a leaf
	 * (after). */
	SLAT_VM_CMO_IN_WALKER = 0,
	/* Every faulting vCPU cleans the range before calling map (before);
	 * the core's own clean is then skipped. */
	SLAT_VM_CMO_BEFORE_MAP = 1,
};

/* What disabling dirty logging does to the split mappings (seed 001). */
enum slat_vm_recovery {
	SLAT_VM_RECOVER_NONE = 0,      /* nothing: pages stay small */
	SLAT_VM_RECOVER_ZAP_LEAF,      /* slat_recover(SLAT_RECOVER_ZAP_LEAF) */
	SLAT_VM_RECOVER_ZAP_TABLE,     /* slat_recover(SLAT_RECOVER_ZAP_TABLE) */
	SLAT_VM_RECOVER_PROMOTE,       /* slat_recover(SLAT_RECOVER_PROMOTE) */
};

/*
 * What a write fault does to a block write-protected for dirty logging
 * (blocks eager splitting has not split already).
 */
enum slat_vm_block_fault {
	/* The format's KVM: LAZY on Arm stage 2, SPLIT on EPT and NPT. */
	SLAT_VM_BLOCK_FAULT_AUTO = 0,
	/* arm64 KVM (Linux 5.12 to 6.x): the block is replaced by a new
	 * table holding only the faulting page; the other pages fault when
	 * first touched. */
	SLAT_VM_BLOCK_FAULT_LAZY,
	/* x86 TDP MMU (Linux 6.1, 6.6 and later) and libslat's slat_relax: the block is
	 * split into a full table of write-protected pages, then the faulting
	 * page made writable. */
	SLAT_VM_BLOCK_FAULT_SPLIT,
};

/* How a vCPU's stage-2 fault takes mmu_lock. */
enum slat_vm_fault_lock {
	/* For reading (arm64 since Linux 6.2, the x86 TDP MMU): faults run
	 * in parallel, a fault that finds an entry locked by another
	 * returns to the guest and faults again. */
	SLAT_VM_FAULT_LOCK_READ = 0,
	/* For writing (arm64 before 6.2: user_mem_abort() took it as a
	 * spinlock): faults run one after another, the cleans done in the
	 * walker inside the lock, the others spinning meanwhile. */
	SLAT_VM_FAULT_LOCK_WRITE,
};

/* TLB invalidation policy of the VM's range operations. The default (0)
 * is KVM's: one invalidation by range after the walk. */
enum slat_vm_flush {
	SLAT_VM_FLUSH_RANGE = 0, /* SLAT_FLUSH_RANGE */
	SLAT_VM_FLUSH_ENTRY,     /* SLAT_FLUSH_ENTRY: one per entry changed */
	SLAT_VM_FLUSH_VMID,      /* SLAT_FLUSH_VMID: the whole VM once */
};

/* Timing hook events (slat_vm_config.on_event). */
enum slat_vm_event {
	SLAT_VM_EV_FAULT,        /* one stage-2 fault handled: @ns its time */
	SLAT_VM_EV_SHOOTDOWN,    /* one TLB shootdown handshake */
	SLAT_VM_EV_CMO,          /* one D-cache clean of guest memory */
	SLAT_VM_EV_PASS,         /* a vCPU finished one memstress pass */
	SLAT_VM_EV_KINDS
};

/*
 * Called on vCPU or host threads as events complete; @vcpu is the vCPU id
 * or -1 for the host, @addr an IPA (fault, shootdown) or PA (CMO).
 */
typedef void (*slat_vm_event_fn)(void *arg, enum slat_vm_event ev, int vcpu,
				 uint64_t addr, uint64_t ns);

/*
 * The deterministic mode (slat_vm_config.vtime). With @on, vCPUs get no
 * host threads: each runs on a stack of its own, one at a time, on the
 * thread that waits for them (slat_vcpu_join, slat_vm_memstress_iterate),
 * and the one that runs is always the one whose virtual clock is earliest
 * (ties: a draw from @seed). A vCPU's clock moves on by the costs below as
 * it takes faults, cleans and invalidates; a vCPU waiting for mmu_lock
 * waits in virtual time. So which vCPU wins a race is decided by these
 * costs, not by the host's scheduler, and the same calls give the same
 * counts on any host. Times in ns.
 */
struct slat_vm_vtime {
	bool on;
	uint32_t seed;
	double fault_exit;        /* each stage-2 fault: exit and re-entry */
	double clean_line;        /* per 64-byte line cleaned of real memory
				     (synthetic: synthetic_clean_ns_per_line) */
	double dsb;               /* the barrier after a clean or a TLBI */
	double tlbi_ipa, tlbi_ipa_local, tlbi_range, tlbi_vmid;
	double pml_full;          /* a PML-full exit, its drain and re-entry */
};

struct slat_vm_config {
	/* The stage-2 table; format 0 means Arm stage 2, 4K granule, 40-bit
	 * IPA. Add SLAT_FEAT_HWDIRTY for hardware dirty logging. */
	struct slat_config table;
	uint16_t vmid;            /* tag of the TLB entries */
	uint32_t tlb_entries;     /* per vCPU, a power of two; 0: 1024 */
	uint64_t arena_bytes;     /* table-page arena (lazily committed);
				     0: 1 GiB */
	enum slat_vm_cmo_placement cmo;
	/* Dirty logging from hardware dirty state (needs SLAT_FEAT_HWDIRTY):
	 * write-clean leaves and slat_dirty_read() instead of write
	 * protection. */
	bool hw_dirty;
	/*
	 * Intel's Page-Modification Logging beside hw_dirty on EPT (KVM's
	 * enable_pml): each write that sets a leaf's dirty bit logs the page
	 * in its vCPU's 512-entry buffer, a write finding the buffer full
	 * exits first (a "PML full" exit, which empties it), and every other
	 * exit empties it too. Blocks are write-protected for logging rather
	 * than made clean, as KVM does: the log is kept at 4K.
	 */
	bool pml;
	enum slat_vm_recovery recovery;     /* on disabling dirty logging */
	enum slat_vm_flush recovery_flush;
	/* Invalidation of range operations: write protection when logging
	 * starts, slot deletion. */
	enum slat_vm_flush range_flush;
	slat_vm_event_fn on_event;          /* timing hooks, may be NULL */
	void *event_arg;
	/* The eager split (cap EAGER_SPLIT_CHUNK_SIZE) walks every level
	 * (slat_split with SLAT_SPLIT_NO_SKIP) instead of skipping the levels
	 * that cannot hold a block to split (seed 002). */
	bool eager_split_no_skip;
	/*
	 * Cleans of synthetic memory (no host memory to clean) take this long
	 * per 64-byte line, waited out by the cleaning vCPU thread (0: they
	 * are only counted). Other vCPUs run meanwhile, as they would beside
	 * a real clean, so faults on the same page or block overlap it.
	 */
	double synthetic_clean_ns_per_line;
	enum slat_vm_block_fault block_fault;
	/* Re-protecting dirty pages (GET_DIRTY_LOG, CLEAR_DIRTY_LOG, ring
	 * reset) over a block covered in part: false, as KVM, write-protects
	 * the whole block; true, as libslat's slat_wrprotect, splits the
	 * block and protects only the pages asked for. */
	bool wrprotect_split;
	/*
	 * The host's anonymous memory as Linux gives it (anonymous,
	 * anonymous_thp, and synthetic and synthetic_2mb standing for them):
	 * untouched until written. A guest read of untouched memory maps the
	 * zero page read-only (the huge zero page, as a block, over a whole
	 * untouched THP-sized page); a write where it is mapped copies it,
	 * the MMU notifier unmapping it at stage 2 and the fault retried, and
	 * a huge zero page split by the copy stays small pages, where no
	 * block is mapped again. false: memory is there from the start.
	 */
	bool host_zero_page;
	enum slat_vm_fault_lock fault_lock;
	struct slat_vm_vtime vtime;       /* deterministic mode, if on */
};

/*
 * KVM_CREATE_VM. @cfg may be NULL (all defaults). Returns the VM, or NULL
 * with *err (may be NULL) set to a negative errno.
 */
SLAT_API struct slat_vm *slat_vm_create(const struct slat_vm_config *cfg,
					int *err);

/* Stop every vCPU thread, free slots, vCPUs, tables and the arena. */
SLAT_API void slat_vm_destroy(struct slat_vm *vm);

/* The message of the last error a call on @vm returned ("" if none). */
SLAT_API const char *slat_vm_error(const struct slat_vm *vm);

/* The stage-2 table, for inspection (slat_lookup, walkers). Changing it
 * needs slat_vm_mmu_lock(). */
SLAT_API struct slat_table *slat_vm_table(struct slat_vm *vm);
/* KVM's mmu_lock taken for write (vCPU faults wait; vCPUs keep running on
 * their TLBs and walking the table). */
SLAT_API void slat_vm_mmu_lock(struct slat_vm *vm);
SLAT_API void slat_vm_mmu_unlock(struct slat_vm *vm);
/* A page cache of the VM's arena holding at least @pages pages, for
 * operations done under slat_vm_mmu_lock(); NULL when out of memory. */
SLAT_API struct slat_page_cache *slat_vm_host_cache(struct slat_vm *vm,
						    uint64_t pages);

/* Capabilities (KVM_ENABLE_CAP). */
enum slat_vm_cap {
	/* KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2: @arg is
	 * SLAT_VM_MANUAL_PROTECT_ENABLE [| SLAT_VM_INITIALLY_SET], or 0. */
	SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2 = 1,
	/* KVM_CAP_ARM_EAGER_SPLIT_CHUNK_SIZE: bytes (0: no eager split; else
	 * a leaf size of the table). Only before the first memslot. */
	SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE = 2,
	/* KVM_CAP_DIRTY_LOG_RING: entries per vCPU (a power of two, 0: off).
	 * Only before the first vCPU. With hw_dirty, entries come from the
	 * hardware dirty state when the host harvests (see
	 * slat_vcpu_dirty_ring_harvest). */
	SLAT_VM_CAP_DIRTY_LOG_RING = 3,
};
#define SLAT_VM_MANUAL_PROTECT_ENABLE (1u << 0)
#define SLAT_VM_INITIALLY_SET         (1u << 1)

/* Returns 0, -EINVAL (bad argument) or -EBUSY (too late). */
SLAT_API int slat_vm_enable_cap(struct slat_vm *vm, enum slat_vm_cap cap,
				uint64_t arg);

/* ---- Memslots ---- */

#define SLAT_VM_MEM_LOG_DIRTY_PAGES (1u << 0) /* KVM_MEM_LOG_DIRTY_PAGES */
#define SLAT_VM_MEM_READONLY        (1u << 1) /* KVM_MEM_READONLY */

struct slat_vm_memslot {
	uint32_t slot;             /* id */
	uint32_t flags;            /* SLAT_VM_MEM_* */
	uint64_t guest_phys_addr;
	uint64_t memory_size;      /* 0 deletes the slot */
	/*
	 * Backing source: "anonymous" (default when NULL), "anonymous_thp",
	 * "anonymous_hugetlb", "anonymous_hugetlb_2mb", "anonymous_hugetlb_1gb",
	 * "shmem", "synthetic", "synthetic_2mb", "synthetic_1gb".
	 */
	const char *backing;
};

/*
 * KVM_SET_USER_MEMORY_REGION: create a slot, change the flags of an existing
 * one (same base and size; toggling SLAT_VM_MEM_LOG_DIRTY_PAGES enables or
 * disables dirty logging), move it (same size, another guest_phys_addr:
 * its translations are removed and invalidated, then it answers at the new
 * base with the same memory and dirty log; the logging flag may change at
 * the same time), or delete it (memory_size 0: its translations are
 * removed first). Moves and deletes may run while vCPUs do: once the call
 * returns, no vCPU reaches the slot's memory through the old base (its
 * accesses there exit as MMIO).
 * Returns 0, -EINVAL (misaligned, unknown backing or flags, a change of
 * size, READONLY changed), -EEXIST (overlaps another slot or MMIO region),
 * -ENOMEM (no host memory, or no huge pages reserved: the message says how
 * to reserve them), -ENOENT (deleting a slot that does not exist).
 */
SLAT_API int slat_vm_set_user_memory_region(struct slat_vm *vm,
					    const struct slat_vm_memslot *m);

/* The host page size a backing name stands for (0: unknown name). Hugetlb
 * sources answer even when none are reserved. */
SLAT_API uint64_t slat_vm_backing_page_size(const char *backing);
/* 1 when @backing can be allocated on this host now for @bytes, 0 when not
 * (no huge pages reserved...), with the reason in @why (may be NULL). */
SLAT_API int slat_vm_backing_available(const char *backing, uint64_t bytes,
				       char *why, size_t why_len);

/* Host view of guest memory (userspace's mapping of the slot): copy
 * to/from guest memory at @gpa. -EFAULT outside slots, -ENXIO synthetic. */
SLAT_API int slat_vm_host_read(struct slat_vm *vm, uint64_t gpa, void *buf,
			       size_t len);
SLAT_API int slat_vm_host_write(struct slat_vm *vm, uint64_t gpa,
				const void *buf, size_t len);
/* The fake host PA backing @gpa. -EFAULT outside slots. */
SLAT_API int slat_vm_gpa_to_hpa(struct slat_vm *vm, uint64_t gpa,
				slat_pa_t *hpa);

/* ---- Dirty logging ---- */

/*
 * KVM_GET_DIRTY_LOG: copy the slot's dirty bitmap (one bit per table
 * granule page, uint64_t words) to @bitmap. Without manual protect, each
 * word is taken and cleared atomically and the pages in it are write
 * protected again (or made hardware-clean) before returning.
 * Returns 0, -ENOENT (no slot), -EINVAL (logging off), -ENXIO (ring mode).
 */
SLAT_API int slat_vm_get_dirty_log(struct slat_vm *vm, uint32_t slot,
				   uint64_t *bitmap);

/*
 * KVM_CLEAR_DIRTY_LOG (manual protect only): clear the bits set in @bitmap
 * (bit 0 = page @first_page) and write-protect those pages again; with eager
 * splitting under INITIALLY_SET, split their blocks in chunks.
 * @first_page must be a multiple of 64; @num_pages a multiple of 64 unless
 * the range reaches the end of the slot.
 * Returns 0, -ENOENT, -EINVAL.
 */
SLAT_API int slat_vm_clear_dirty_log(struct slat_vm *vm, uint32_t slot,
				     uint64_t first_page, uint64_t num_pages,
				     const uint64_t *bitmap);

/* A dirty ring entry (struct kvm_dirty_gfn). */
struct slat_vm_dirty_gfn {
	uint32_t slot;
	uint64_t offset;           /* page index in the slot */
};

/*
 * Harvest up to @max new entries of @vcpu's dirty ring into @out (marks them
 * harvested). Returns the number harvested, or -ENXIO (no ring).
 *
 * With hardware dirty state (hw_dirty) writes do not fault, so vCPUs push
 * nothing: when everything pushed to @vcpu's ring is harvested, this first
 * reaps, pushing to @vcpu's ring every page of a logging slot whose dirty
 * state is set (or that a fault marked) and that is in no ring yet, while
 * the ring has room (the rest waits for the next reap). Reaping reads the
 * dirty state without clearing it; slat_vm_reset_dirty_rings() makes the
 * reset pages clean, so copy a page after the reset that follows its
 * harvest, as with write protection.
 */
SLAT_API int slat_vcpu_dirty_ring_harvest(struct slat_vcpu *vcpu,
					  struct slat_vm_dirty_gfn *out,
					  uint32_t max);

/*
 * KVM_RESET_DIRTY_RINGS: write-protect again (hw_dirty: make clean) the
 * pages of every harvested entry (in 64-page masks), free their ring space,
 * wake vCPUs that waited for it. Returns the number of entries reset, or
 * -ENXIO.
 */
SLAT_API int64_t slat_vm_reset_dirty_rings(struct slat_vm *vm);

/* ---- MMIO ---- */

enum slat_vm_mmio_map {
	SLAT_VM_MMIO_PAGES = 0,    /* one map call per page (the old way) */
	SLAT_VM_MMIO_BLOCKS = 1,   /* one map call, largest blocks (seed 004) */
};

/*
 * Map a device region of @size bytes at @gpa (device memory, read/write,
 * its own fake host PAs aligned like @gpa up to 1 GiB). Guest accesses to
 * it succeed and are counted; they store no data.
 * Returns 0, -EINVAL, -EEXIST (overlap).
 */
SLAT_API int slat_vm_mmio_map(struct slat_vm *vm, uint64_t gpa, uint64_t size,
			      enum slat_vm_mmio_map how);

/*
 * Remove the device region at @gpa: SLAT_FLUSH_ENTRY invalidates per entry,
 * SLAT_FLUSH_VMID once for the whole VM (SLAT_FLUSH_RANGE: once by range).
 * Returns 0, -ENOENT.
 */
SLAT_API int slat_vm_mmio_unmap(struct slat_vm *vm, uint64_t gpa,
				enum slat_tlbi_policy policy);

/* ---- vCPUs ---- */

/* KVM_CREATE_VCPU. Returns the vCPU or NULL (-EEXIST, -ENOMEM in *err). */
SLAT_API struct slat_vcpu *slat_vm_create_vcpu(struct slat_vm *vm, uint32_t id,
					       int *err);
SLAT_API struct slat_vcpu *slat_vm_vcpu(struct slat_vm *vm, uint32_t id);
SLAT_API uint32_t slat_vcpu_id(const struct slat_vcpu *vcpu);

/* Returns of slat_vcpu_access. */
#define SLAT_VM_EXIT_MMIO 1  /* no memory there (or a write to a read-only
				slot): the access went to userspace */

/*
 * One guest access of @len bytes (within one page) at @gpa, through the
 * vCPU's software MMU; faults are handled. May be called on any thread, but
 * for one vCPU on one thread at a time. An aligned 8-byte access is single-
 * copy atomic. Synthetic memory reads as zeros.
 * Returns 0, SLAT_VM_EXIT_MMIO, or -EINVAL / -EFAULT (fault handler error).
 */
SLAT_API int slat_vcpu_access(struct slat_vcpu *vcpu, uint64_t gpa, void *buf,
			      uint32_t len, bool write);
static inline int slat_vcpu_read64(struct slat_vcpu *v, uint64_t gpa,
				   uint64_t *val)
{
	return slat_vcpu_access(v, gpa, val, 8, false);
}
static inline int slat_vcpu_write64(struct slat_vcpu *v, uint64_t gpa,
				    uint64_t val)
{
	return slat_vcpu_access(v, gpa, &val, 8, true);
}

/* Drop every entry of the vCPU's TLB (as on a VMID switch). */
SLAT_API void slat_vcpu_tlb_flush(struct slat_vcpu *vcpu);

/* Guest code: runs on the vCPU's own host thread (deterministic mode: on
 * its own stack, on the thread that joins it). */
typedef void (*slat_vcpu_guest_fn)(struct slat_vcpu *vcpu, void *arg);
/* Start a host thread for @vcpu running @fn. -EBUSY if one runs,
 * -EAGAIN (deterministic mode: -ENOMEM) if it cannot start. In the
 * deterministic mode the vCPU only starts running when a join waits. */
SLAT_API int slat_vcpu_run(struct slat_vcpu *vcpu, slat_vcpu_guest_fn fn,
			   void *arg);
/* Wait for the vCPU's thread to return (deterministic mode: run the
 * started vCPUs, in virtual time, until this one returns). */
SLAT_API void slat_vcpu_join(struct slat_vcpu *vcpu);
/*
 * Pin @vcpu's host thread to pCPU @cpu (pthread_setaffinity_np), now if it
 * runs and whenever slat_vcpu_run starts it; -1 unpins (every CPU the
 * process may use). Returns 0, -EINVAL (no such CPU, or not allowed). In
 * the deterministic mode there is no thread to pin: only checked.
 */
SLAT_API int slat_vcpu_pin(struct slat_vcpu *vcpu, int cpu);

/* ---- memstress (the selftests' guest workload) ---- */

struct slat_vm_memstress {
	uint64_t gpa;              /* start of the test memory */
	uint64_t bytes_per_vcpu;
	uint32_t nr_vcpus;         /* vCPUs 0..nr-1 (created if missing) */
	uint32_t write_percent;    /* 0..100 */
	bool random_access;        /* -a */
	bool overlap;              /* -o: every vCPU on the whole region */
	uint32_t seed;             /* Park-Miller seed; 0: 1 */
	uint32_t page_size;        /* guest page; 0: the table granule */
	uint64_t value;            /* written to the page's first 8 bytes;
				      0: 0x0123456789ABCDEF */
};

/* Start the vCPU threads; they wait for the first iteration. (The
 * deterministic mode starts none: each iteration runs the vCPUs in virtual
 * time on the thread that calls slat_vm_memstress_iterate.) */
SLAT_API int slat_vm_memstress_start(struct slat_vm *vm,
				     const struct slat_vm_memstress *args);
/* Run one iteration on every vCPU and wait for all of them to finish it.
 * Returns the wall time in ns, or a negative errno (a vCPU error). */
SLAT_API int64_t slat_vm_memstress_iterate(struct slat_vm *vm);
/* Change the write percentage for the next iterations. */
SLAT_API void slat_vm_memstress_set_write_percent(struct slat_vm *vm,
						  uint32_t pct);
/* Random (Park-Miller) or sequential pages for the next iterations. */
SLAT_API void slat_vm_memstress_set_random_access(struct slat_vm *vm,
						  bool random);
/* Stop and join the vCPU threads. */
SLAT_API void slat_vm_memstress_stop(struct slat_vm *vm);

/* ---- Counters ---- */

enum slat_vm_fault_kind {
	SLAT_VM_FAULT_TRANSLATION,
	SLAT_VM_FAULT_PERMISSION,
	SLAT_VM_FAULT_ACCESS_FLAG,
	SLAT_VM_FAULT_KINDS
};

struct slat_vm_stats {
	struct slat_stats table;   /* the core's counters */
	uint64_t accesses, writes;
	uint64_t tlb_hits, tlb_misses;
	uint64_t tlb_flushes;      /* whole-TLB flushes (VMID, or lapped) */
	uint64_t tlb_invalidated;  /* entries dropped by invalidations */
	uint64_t faults[SLAT_VM_FAULT_KINDS];
	uint64_t fault_ns;         /* time in the fault handler */
	uint64_t fault_again;      /* retries after a lost race */
	uint64_t maps, relaxes, mkyoungs;
	uint64_t mapped[4];        /* leaves installed by faults, by level */
	uint64_t shootdowns;       /* invalidation handshakes */
	uint64_t shootdown_waits;  /* vCPUs a handshake had to wait for */
	uint64_t shootdown_ns;
	uint64_t local_invals;     /* local invalidations (no handshake) */
	uint64_t cmo_calls, cmo_bytes;       /* D-cache cleans of guest memory */
	uint64_t cmo_elided;       /* core cleans skipped (before-map mode) */
	uint64_t cmo_ns;           /* time in real cleans */
	uint64_t cache_topups, cache_pages;  /* per-vCPU page cache refills */
	uint64_t dirty_marked;     /* pages marked dirty by faults */
	uint64_t ring_pushes, ring_full_waits;
	uint64_t mmio_exits;       /* SLAT_VM_EXIT_MMIO returns */
	uint64_t mmio_accesses;    /* accesses to mapped device memory */
	uint64_t deferred_frees;   /* subtrees freed after a grace period */
	uint64_t wrprotected_pages; /* pages re-protected by the dirty log */
	uint64_t pml_logged;       /* pages logged by PML (pml) */
	uint64_t pml_full_exits;   /* exits on a full PML buffer */
	/* host_zero_page: zero pages copied on a guest write, huge zero
	 * pages split by one, and the stage-2 unmaps of the MMU notifier
	 * they caused */
	uint64_t host_cow, host_thp_splits, host_invals;
};

/* Current counters (vCPU counters summed: exact when vCPUs are idle). */
SLAT_API void slat_vm_stats_read(struct slat_vm *vm, struct slat_vm_stats *s);
/* *d = *b - *a, field by field (the counts of one phase). */
SLAT_API void slat_vm_stats_diff(const struct slat_vm_stats *a,
				 const struct slat_vm_stats *b,
				 struct slat_vm_stats *d);
/* Print the non-zero fields of @s, one "name value" per line. */
SLAT_API void slat_vm_stats_print(const struct slat_vm_stats *s, void *file);

/* Monotonic nanoseconds (the clock every time above uses). */
SLAT_API uint64_t slat_vm_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
