/* SPDX-License-Identifier: MIT */
/* Private to libslat-sim: the VM, its slots, vCPUs and TLBs. */
#ifndef SLAT_SIM_INTERNAL_H
#define SLAT_SIM_INTERNAL_H

#define _GNU_SOURCE
#include <slat/hosted.h>
#include <slat/sim.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <urcu/urcu-memb.h>

#define SIM_MAX_VCPUS 512
#define SIM_INVAL_RING 64          /* invalidations a vCPU can catch up on */
#define SIM_HPA_ALIGN (1ull << 30) /* fake host PA ranges start 1 GiB apart */

enum backing_kind {
	BACK_ANON, BACK_THP, BACK_HUGETLB, BACK_SHMEM, BACK_SYNTH,
};

/* A memslot, or an MMIO region (device). */
struct sim_slot {
	uint32_t id;
	uint32_t flags;
	uint64_t gpa, size;
	uint64_t hpa;              /* fake host PA of gpa */
	uint8_t *hva;              /* host address of gpa; NULL: synthetic/device */
	uint64_t page_size;        /* backing page size */
	enum backing_kind kind;
	bool device;
	char backing[32];
	/* mmap'd region (with guard pages) */
	void *map_base;
	size_t map_len;
	int memfd;
	uint64_t *dirty;           /* bitmap, one bit per granule page (ring
				      with hardware dirty state: pages to
				      push at the next reap) */
	uint64_t *ring_pending;    /* ring with hardware dirty state: pages
				      in a ring and not reset yet */
	uint64_t npages;           /* size / granule */
	bool logging;
	/* The host's memory (host_mm.c), with host_zero_page: per backing
	 * page, and per granule page of a backing page split to them
	 * (enum host_page); NULL where not modeled. */
	uint8_t *host_huge, *host_small;
};

/* What the host maps at a page (host_mm.c). */
enum host_page {
	HOST_NONE,  /* untouched */
	HOST_ZERO,  /* the (huge) zero page, read-only */
	HOST_OWN,   /* a page of its own, writable */
	HOST_SPLIT, /* a backing page split to small ones (host_small) */
};

/* What get_user_pages() gave a fault: whether the host maps it writable
 * (the size it maps follows from the page's state: sim_max_level()), and
 * the range a copy on write invalidated through the MMU notifier (size 0:
 * none). */
struct sim_gup {
	bool writable;
	uint64_t inval_base, inval_size;
};

/* An RCU-published, immutable set of slots sorted by gpa. */
struct sim_slots {
	uint32_t nr;
	struct sim_slot *s[];
};

struct tlb_entry {
	uint64_t tag;              /* (ipa >> shift) + 1; 0: empty */
	int64_t hva_delta;         /* hva = hpa + delta (0 with no memory) */
	uint64_t hpa;              /* of the leaf's first byte */
	uint16_t vmid;
	uint8_t shift;
	uint8_t flags;             /* TLB_* */
};
#define TLB_R      1u
#define TLB_W      2u          /* writes allowed without a walk */
#define TLB_MEM    4u          /* hva valid (real memory) */
#define TLB_DEVICE 8u

struct sim_inval {
	uint64_t seq;              /* the generation this entry is for */
	uint64_t ipa, size;        /* size 0: everything */
};

struct vcpu_stats {
	uint64_t accesses, writes, tlb_hits, tlb_misses, tlb_flushes,
		 tlb_invalidated;
	uint64_t faults[SLAT_VM_FAULT_KINDS], fault_ns, fault_again;
	uint64_t maps, relaxes, mkyoungs, mapped[4];
	uint64_t cache_topups, cache_pages, dirty_marked, ring_pushes,
		 ring_full_waits, mmio_exits, mmio_accesses, local_invals,
		 cmo_calls, cmo_bytes, cmo_elided, cmo_ns;
	uint64_t pml_logged, pml_full_exits;
	uint64_t host_cow, host_thp_splits, host_invals;
};

/* A context switched away from (sched.c): Boost.Context's handle. */
struct sim_ctx {
	void *fc;
};

enum sim_co_state { CO_IDLE, CO_READY, CO_RUNNING, CO_LOCK_WAIT, CO_DONE };

/* A vCPU of the deterministic mode (sched.c): its context and clock. */
struct sim_co {
	struct sim_ctx ctx;
	void *stack;
	size_t stack_size;
	uint64_t vt;                /* virtual clock, ps */
	uint64_t key;               /* tie-break, drawn when it is queued */
	enum sim_co_state state;
	bool want_write;            /* queued for mmu_lock for write */
	bool spin;                  /* its next fault retries a lost race */
	bool lost;                  /* its last fault met a locked entry */
	bool host_wait;             /* it waits for a host thread */
	slat_vcpu_guest_fn fn;
	void *arg;
};

struct sim_ring {
	struct slat_vm_dirty_gfn *e;
	uint32_t size;             /* power of two */
	uint64_t head;             /* pushed (vCPU) */
	uint64_t harvested;        /* harvested (host) */
	uint64_t reset;            /* reset (host) */
};

struct slat_vcpu {
	struct slat_vm *vm;
	uint32_t id;
	struct tlb_entry *tlb;
	uint32_t tlb_mask;
	uint64_t seen_gen;          /* invalidations applied up to */
	uint64_t active;            /* 0 idle, ACTIVE_MARK starting, else gen */
	struct slat_page_cache cache;
	/* The core's counters of this vCPU's shared calls (cache.stats):
	 * no atomic adds on the table's in the fault path. */
	struct slat_stats core;
	struct vcpu_stats st;
	struct sim_ring ring;
	pthread_t thread;
	bool running;
	slat_vcpu_guest_fn fn;
	void *fn_arg;
	uint32_t rand;
	uint64_t passes_done;
	int error;
	int pcpu;                   /* pinned to; -1: not pinned */
	/* Set while this vCPU breaks a block to map a page in its place:
	 * KVM's map walker cleans nothing it removes, so neither do we. */
	bool no_unmap_clean;
	uint32_t ms_seed;           /* memstress: Park-Miller state */
	uint32_t pml_used;          /* entries in the PML buffer (pml) */
	struct sim_gup notify;      /* a copy on write for the MMU notifier */
	struct sim_co co;           /* deterministic mode */
};
#define ACTIVE_MARK UINT64_MAX

struct memstress {
	struct slat_vm_memstress a;
	uint64_t iteration;         /* host: current iteration */
	uint32_t write_percent;
	bool random_access;
	bool stop;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t go, done;
	uint32_t nr_done;
	int error;
};

/*
 * The deterministic mode's scheduler: the ready vCPUs by virtual clock, and
 * mmu_lock as the vCPUs see it in virtual time (a reader/writer lock with
 * one FIFO of waiters). Touched only by the thread running the vCPUs.
 */
struct sim_sched {
	bool on;
	uint64_t fault_exit, clean_line, dsb, tlbi[SLAT_TLBI_KINDS]; /* ps */
	uint64_t pml_full;           /* ps */
	uint64_t synthetic_line;    /* ps per line of synthetic memory */
	uint64_t seed, draws;
	struct slat_vcpu *heap[SIM_MAX_VCPUS];
	uint32_t n;
	uint32_t live;              /* started and not done */
	uint64_t now;               /* the clock of the latest step */
	struct sim_ctx host;        /* the loop's context */
	const void *host_stack;     /* its stack, for AddressSanitizer */
	size_t host_stack_size;
	struct slat_vcpu *writer;
	uint32_t readers;
	struct slat_vcpu *fifo[SIM_MAX_VCPUS];
	uint32_t qhead, qlen;
};

struct slat_vm {
	struct slat_vm_config cfg;
	struct slat_hosted hosted;
	struct slat_mm_ops ops;
	struct slat_table table;
	bool table_ready;
	pthread_rwlock_t mmu_lock;
	pthread_mutex_t slots_lock;     /* host-side changes */
	struct sim_slots *slots;        /* RCU */
	uint64_t next_hpa;
	uint64_t granule;
	uint8_t leaf_shifts[4];         /* leaf sizes, largest first */
	int nr_leaf_shifts;

	/* caps */
	uint32_t manual_protect;        /* SLAT_VM_MANUAL_PROTECT_ENABLE|... */
	uint64_t eager_chunk;
	uint32_t ring_size;

	/* invalidations */
	uint64_t gen;                   /* current TLB generation */
	pthread_mutex_t inval_lock;
	struct sim_inval inval[SIM_INVAL_RING];
	uint64_t shootdowns, shootdown_waits, shootdown_ns;
	uint64_t host_cmo_calls, host_cmo_bytes, host_cmo_ns;
	uint64_t wrprotected_pages;

	struct slat_vcpu *vcpus[SIM_MAX_VCPUS];
	uint32_t nr_vcpus;              /* highest id + 1 */

	struct slat_page_cache host_cache;
	struct memstress ms;
	pthread_mutex_t ring_lock;
	pthread_cond_t ring_cond;
	struct sim_sched sched;
	char err[256];
};

/* The vCPU of the calling thread, when it runs one of this VM's. */
extern __thread struct slat_vcpu *sim_current_vcpu;
/* Set while a faulting vCPU has cleaned before map (before-map mode). */

int sim_err(struct slat_vm *vm, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sim_rcu_register(void);

/* host_mm.c */
int sim_host_mm_init(struct slat_vm *vm, struct sim_slot *s);
void sim_host_mm_free(struct sim_slot *s);
struct sim_gup sim_host_gup(struct slat_vcpu *v, struct sim_slot *s,
			    uint64_t ipa, bool write);
bool sim_host_small(const struct slat_vm *vm, const struct sim_slot *s,
		    uint64_t ipa);
void sim_host_touch(struct slat_vm *vm, struct sim_slot *s, uint64_t gpa,
		    uint64_t len);

/* memslot.c */
struct sim_slot *sim_slot_by_gpa(struct sim_slots *ss, uint64_t gpa);
int sim_unmap(struct slat_vm *vm, uint64_t ipa, uint64_t size);
struct sim_slot *sim_slot_by_hpa(struct sim_slots *ss, uint64_t hpa);
struct sim_slot *sim_slot_by_id(struct sim_slots *ss, uint32_t id);
int sim_slots_insert(struct slat_vm *vm, struct sim_slot *s);
void sim_slots_remove(struct slat_vm *vm, struct sim_slot *s);
void sim_slot_free(struct sim_slot *s);
void sim_slots_destroy(struct slat_vm *vm);
uint64_t sim_alloc_hpa(struct slat_vm *vm, uint64_t size, uint64_t congruent);

/* vm.c */
void sim_tlbi(struct slat_vm *vm, uint64_t ipa, uint64_t size);
void sim_flush_range(struct slat_vm *vm, uint64_t ipa, uint64_t size);
void sim_clean(struct slat_vm *vm, struct slat_vcpu *v, uint8_t *hva,
	       uint64_t bytes, uint64_t hpa);
struct slat_page_cache *sim_host_cache(struct slat_vm *vm, int64_t pages);
/* largest leaf level a slot's backing allows at @ipa (for recovery too) */
int sim_max_level(struct slat_vm *vm, const struct sim_slot *s, uint64_t ipa);
int sim_level_of_shift(struct slat_vm *vm, unsigned shift);
enum slat_tlbi_policy sim_policy(enum slat_vm_flush f);

/* mmu.c */
void sim_tlb_apply(struct slat_vcpu *v);
void sim_tlb_drop_range(struct slat_vcpu *v, uint64_t ipa, uint64_t size);

/* fault.c */
int sim_handle_fault(struct slat_vcpu *v, uint64_t ipa, bool write,
		     const struct slat_hw_result *res);
/* The fault behaviour on write-protected blocks, AUTO resolved. */
enum slat_vm_block_fault sim_block_fault(const struct slat_vm *vm);

/* sched.c: the deterministic mode */
void sim_sched_init(struct slat_vm *vm);
/* The vCPU running on this thread in the deterministic mode, or NULL. */
struct slat_vcpu *sim_co_self(void);
int sim_co_start(struct slat_vcpu *v, slat_vcpu_guest_fn fn, void *arg);
/* Run the started vCPUs until @until returns (NULL: until all have). */
void sim_co_run(struct slat_vm *vm, struct slat_vcpu *until);
void sim_co_free(struct slat_vcpu *v);
/* The running vCPU's clock moves on by @ps: an earlier vCPU runs first. */
void sim_vt_advance(struct slat_vcpu *v, uint64_t ps);
/* Wait for a host thread (mmu_lock held by it, ring space). */
void sim_co_wait_host(struct slat_vcpu *v);
/* The calling vCPU's clock moves on by a TLBI of @kind with its DSB. */
void sim_vt_tlbi(struct slat_vm *vm, enum slat_tlbi_kind kind);
/* ... and by a clean of @bytes (@synthetic: no host memory). */
void sim_vt_clean(struct slat_vm *vm, uint64_t bytes, bool synthetic);
/* mmu_lock: host threads block; deterministic vCPUs wait in virtual time. */
void sim_mmu_read_lock(struct slat_vm *vm);
void sim_mmu_write_lock(struct slat_vm *vm);
void sim_mmu_unlock(struct slat_vm *vm);

/* A retry of a lost race, as it began (sim_retry_end counts the same
 * retries again without running them). */
struct sim_retry {
	uint64_t vt;
	struct vcpu_stats st;
	struct slat_stats core;
};
void sim_retry_begin(const struct slat_vcpu *v, struct sim_retry *r);
void sim_retry_end(struct slat_vcpu *v, const struct sim_retry *r);

/* dirty.c */
void sim_mark_dirty(struct slat_vm *vm, struct slat_vcpu *v,
		    struct sim_slot *s, uint64_t gpa);
int sim_logging_enable(struct slat_vm *vm, struct sim_slot *s);
int sim_logging_disable(struct slat_vm *vm, struct sim_slot *s);
/* slat_recover's max_level for a slot: @arg is { vm, slot }. */
int sim_recover_level(void *arg, slat_ipa_t ipa);
/* Before @s's translations go (move): keep their hardware dirty state in
 * the log. mmu_lock held for write. */
void sim_dirty_save(struct slat_vm *vm, struct sim_slot *s);

/* The published slot set: read under slat_hosted_rcu_read_lock(), or with
 * slots_lock held (host side). */
static inline struct sim_slots *sim_slots_get(struct slat_vm *vm)
{
	return __atomic_load_n(&vm->slots, __ATOMIC_ACQUIRE);
}

/*
 * Copy @len bytes between guest memory @mem and @buf (@to_mem: into guest
 * memory). Guest memory is shared with vCPUs running meanwhile, so it is
 * accessed with relaxed atomics: aligned 8-byte words single-copy atomic,
 * bytes at the edges. (The host view races with the guest by design: a
 * migration copies memory the guest may be writing, and the dirty log
 * tells it what to copy again.)
 */
static inline void sim_copy(uint8_t *mem, void *buf, uint64_t len, bool to_mem)
{
	uint8_t *b = buf;

	while (len && ((uintptr_t)mem & 7)) {
		if (to_mem)
			__atomic_store_n(mem, *b, __ATOMIC_RELAXED);
		else
			*b = __atomic_load_n(mem, __ATOMIC_RELAXED);
		mem++, b++, len--;
	}
	for (; len >= 8; mem += 8, b += 8, len -= 8) {
		uint64_t w;

		if (to_mem) {
			__builtin_memcpy(&w, b, 8);
			__atomic_store_n((uint64_t *)(void *)mem, w, __ATOMIC_RELAXED);
		} else {
			w = __atomic_load_n((uint64_t *)(void *)mem, __ATOMIC_RELAXED);
			__builtin_memcpy(b, &w, 8);
		}
	}
	for (; len; mem++, b++, len--) {
		if (to_mem)
			__atomic_store_n(mem, *b, __ATOMIC_RELAXED);
		else
			*b = __atomic_load_n(mem, __ATOMIC_RELAXED);
	}
}

static inline uint64_t sim_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void sim_add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

#endif
