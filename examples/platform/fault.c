/* SPDX-License-Identifier: MIT */
/*
 * docs/platform.md, "Handling stage-2 faults": two vCPU threads fault the
 * same 16 MiB of guest memory (2 MiB backing pages) through the shared
 * fault path at once; then an execute fault (permission: relax +X) and an
 * access-flag fault (mkyoung). Checks that every block is mapped once,
 * cleaned once, and that the per-vCPU counters add up.
 */
#include "vm.h"

#include <string.h>

#define GPA 0x40000000ull
#define SLOT (16ull << 20)
#define HPA 0x880000000ull
#define BLOCK (2ull << 20)

struct run {
	struct ex_vcpu v;
	int reverse;
};

static pthread_barrier_t start;

/* A vCPU: reads every page of the slot, in its own order. */
static void *vcpu_thread(void *arg)
{
	struct run *r = arg;
	uint64_t pages = SLOT / 4096;

	slat_hosted_rcu_register_thread();
	pthread_barrier_wait(&start);
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t page = r->reverse ? pages - 1 - i : i;

		CHECK(ex_guest_access(&r->v, GPA + page * 4096,
				      SLAT_ACCESS_READ) == SLAT_OK);
	}
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

static void check_blocks(struct ex_vm *vm, uint32_t want)
{
	for (uint64_t off = 0; off < SLOT; off += BLOCK) {
		struct slat_leaf leaf;

		CHECK(slat_lookup(&vm->t, slat_ipa(GPA + off + 0x1234 * 4),
				  &leaf) == SLAT_OK);
		CHECK(leaf.size == BLOCK && leaf.base.ipa == GPA + off);
		CHECK(slat_pa_v(leaf.pa) == HPA + off + 0x1234 * 4);
		CHECK((leaf.attrs & want) == want);
	}
}

/* [snippet:stats] */
/* The work of the whole VM: the table's own counters (exclusive calls,
 * and shared calls made without a cache of their own) plus each vCPU's. */
static struct slat_stats vm_stats(const struct ex_vm *vm,
				  const struct ex_vcpu *const *vcpus, int n)
{
	struct slat_stats sum;

	memset(&sum, 0, sizeof(sum));
	slat_stats_add(&sum, &vm->t.stats);
	for (int i = 0; i < n; i++)
		slat_stats_add(&sum, &vcpus[i]->stats);
	return sum;
}
/* [end] */

static void racing_faults(struct ex_vm *vm, struct run *runs)
{
	pthread_t th[2];
	const struct ex_vcpu *vcpus[2] = { &runs[0].v, &runs[1].v };
	struct slat_stats sum;

	CHECK(pthread_barrier_init(&start, NULL, 2) == 0);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, vcpu_thread, &runs[i]) == 0);
	for (int i = 0; i < 2; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	pthread_barrier_destroy(&start);
	check_blocks(vm, SLAT_R | SLAT_W | SLAT_YOUNG);
	sum = vm_stats(vm, vcpus, 2);
	/* Eight blocks, each installed once and cleaned once, whoever won;
	 * one level-2 table linked. Nothing was invalidated. */
	CHECK(sum.written[SLAT_WRITE_LEAF] == SLOT / BLOCK);
	CHECK(sum.written[SLAT_WRITE_TABLE] == 1);
	CHECK(vm->ev.dcache_bytes == SLOT && sum.dcache_bytes == SLOT);
	CHECK(vm->ev.tlbi_ipa + vm->ev.tlbi_range + vm->ev.tlbi_vmid == 0);
	/* The table's own counters saw none of it: the vCPUs counted. */
	CHECK(vm->t.stats.written[SLAT_WRITE_LEAF] == 0);
	CHECK(runs[0].v.faults[SLAT_FAULT_TRANSLATION] +
		      runs[1].v.faults[SLAT_FAULT_TRANSLATION] >= SLOT / BLOCK);
	printf("racing faults: %llu + %llu translation faults, %llu lost "
	       "races\n",
	       (unsigned long long)runs[0].v.faults[SLAT_FAULT_TRANSLATION],
	       (unsigned long long)runs[1].v.faults[SLAT_FAULT_TRANSLATION],
	       (unsigned long long)sum.retries);
}

static void permission_and_access_flag(struct ex_vm *vm, struct ex_vcpu *v,
				       struct ex_vcpu *v2)
{
	const struct slat_hw_result stale = {
		.fault = SLAT_FAULT_PERMISSION, .level = 2,
	};
	uint64_t ic = vm->ev.icache_calls, local;

	/* Execute: mapped without X, so a permission fault adds it to the
	 * whole block, with one I-cache invalidation. */
	CHECK(ex_guest_access(v, GPA + 0x5000, SLAT_ACCESS_EXEC_EL1) == SLAT_OK);
	CHECK(v->faults[SLAT_FAULT_PERMISSION] == 1);
	CHECK(vm->ev.icache_calls == ic + 1);
	check_blocks(vm, 0);
	/* A second vCPU took the same fault from a stale entry: nothing to
	 * relax, but its own CPU's entry is invalidated. */
	local = vm->ev.tlbi_ipa_local;
	CHECK(ex_handle_fault(v2, GPA + 0x5000, SLAT_ACCESS_EXEC_EL1, &stale) ==
	      SLAT_NOTHING_TO_DO);
	CHECK(vm->ev.tlbi_ipa_local == local + 1 && vm->ev.icache_calls == ic + 1);
	/* Aging: the host clears the access flags (exclusive), the next
	 * access takes an access-flag fault and mkyoung sets it again. */
	pthread_rwlock_wrlock(&vm->mmu_lock);
	CHECK(slat_test_clear_young(&vm->t, slat_ipa(GPA), SLOT, true, NULL) ==
	      SLAT_WAS_YOUNG);
	pthread_rwlock_unlock(&vm->mmu_lock);
	CHECK(ex_guest_access(v, GPA + 0x3000, SLAT_ACCESS_READ) == SLAT_OK);
	CHECK(v->faults[SLAT_FAULT_ACCESS_FLAG] == 1);
	CHECK(slat_test_clear_young(&vm->t, slat_ipa(GPA), BLOCK, false, NULL) ==
	      SLAT_WAS_YOUNG);
	CHECK(slat_test_clear_young(&vm->t, slat_ipa(GPA + BLOCK), BLOCK, false,
				    NULL) == SLAT_OK);
	/* An address outside guest memory goes to the VMM. */
	CHECK(ex_guest_access(v, 0x09000000, SLAT_ACCESS_WRITE) == EX_EXIT_MMIO);
}

int main(void)
{
	static const struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
	};
	static const struct ex_slot slot = {
		.gpa = GPA, .size = SLOT, .hpa = HPA, .backing = BLOCK,
	};
	static struct ex_vm vm;
	static struct run runs[2] = { { .reverse = 0 }, { .reverse = 1 } };

	slat_hosted_rcu_register_thread();
	ex_vm_init(&vm, &cfg, &slot);
	for (int i = 0; i < 2; i++)
		ex_vcpu_init(&runs[i].v, &vm);
	racing_faults(&vm, runs);
	permission_and_access_flag(&vm, &runs[0].v, &runs[1].v);
	for (int i = 0; i < 2; i++)
		ex_vcpu_fini(&runs[i].v);
	ex_vm_fini(&vm);
	slat_hosted_rcu_unregister_thread();
	printf("fault: ok\n");
	return 0;
}
