/* SPDX-License-Identifier: MIT */
/*
 * The small hypervisor the examples of docs/platform.md share: one VM on
 * the hosted platform (libslat-hosted with RCU), one memory slot, vCPUs
 * with their own page caches and counters, the fault handler, dirty
 * logging, and a loop that plays the CPU (slat_hw_access) and calls the
 * fault handler whenever the access faults.
 */
#ifndef SLAT_EXAMPLE_VM_H
#define SLAT_EXAMPLE_VM_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <slat/hosted.h>
#include <slat/slat.h>

/* Stop the program with the failed condition: these are the tests. */
#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n",        \
				__FILE__, __LINE__, #cond);                \
			exit(1);                                           \
		}                                                          \
	} while (0)

/* Page slots of a vCPU's cache: a fault needs at most one per level. */
#define EX_CACHE_PAGES 8u

/* Guest memory: [gpa, gpa + size) backed by host memory at hpa. */
struct ex_slot {
	uint64_t gpa, size, hpa;
	uint64_t backing;     /* the backing's page size (4K, 2M, 1G) */
	bool device;          /* MMIO: mapped whole, never faulted in */
	bool logging;         /* dirty logging by write protection */
	uint64_t *dirty;      /* logging: one bit per granule, atomic */
};

/* What the hosted observer saw, counted from any thread. */
struct ex_events {
	uint64_t tlbi_ipa, tlbi_ipa_local, tlbi_range, tlbi_vmid;
	uint64_t dcache_calls, dcache_bytes, icache_calls;
	uint64_t page_frees;
};

struct ex_vm {
	struct slat_hosted h;
	struct slat_table t;
	struct slat_config cfg;
	struct slat_geometry geo;     /* of cfg: which levels take leaves */
	pthread_rwlock_t mmu_lock;    /* read: faults; write: the rest */
	struct ex_slot slot;
	struct ex_events ev;
};

struct ex_vcpu {
	struct ex_vm *vm;
	struct slat_page_cache cache;
	void *pages[EX_CACHE_PAGES];
	struct slat_stats stats;      /* this vCPU's share of the work */
	uint64_t faults[4];           /* by enum slat_fault */
	uint64_t retries;             /* faults handled with SLAT_E_AGAIN/NOMEM */
};

/* ex_handle_fault(): the address is in no slot, the VMM emulates it. */
#define EX_EXIT_MMIO 1000

/* A VM for @cfg with one slot; every hook from slat_hosted_ops_rcu(). */
void ex_vm_init(struct ex_vm *vm, const struct slat_config *cfg,
		const struct ex_slot *slot);
/* Destroy the table and the arena; checks that no page leaked. */
void ex_vm_fini(struct ex_vm *vm);

void ex_vcpu_init(struct ex_vcpu *v, struct ex_vm *vm);
void ex_vcpu_fini(struct ex_vcpu *v);

/* The largest leaf level the backing allows at @ipa (slat_max_level_fn). */
int ex_max_level(void *vm, slat_ipa_t ipa);

/* Handle a stage-2 fault: a status, SLAT_E_AGAIN or SLAT_E_NOMEM to refault. */
int ex_handle_fault(struct ex_vcpu *v, uint64_t ipa, unsigned access,
		    const struct slat_hw_result *res);

/* One guest access, as the CPU makes it: fault, handle, retry until it
 * goes through. Returns SLAT_OK or the fault handler's error. */
int ex_guest_access(struct ex_vcpu *v, uint64_t ipa, unsigned access);

/* Dirty logging by write protection. */
void ex_log_start(struct ex_vm *vm);
uint64_t ex_log_harvest(struct ex_vm *vm, uint64_t *bitmap, size_t words);
void ex_log_stop(struct ex_vm *vm);

#endif
