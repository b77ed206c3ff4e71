/* SPDX-License-Identifier: MIT */
/*
 * docs/platform.md, "Device memory", "Cache maintenance without FWB" and
 * "Teardown": a device block mapped whole (no cache maintenance), an
 * emulated device left unmapped (its accesses exit to the VMM), the
 * guest's set/way maintenance turned into slat_flush() of its memory, the
 * same on a CPU with FEAT_S2FWB and on EPT (nothing to do), and teardown
 * that leaves no page behind.
 */
#include "vm.h"

#define GPA 0x40000000ull
#define SLOT (8ull << 20)
#define HPA 0x880000000ull
#define BLOCK (2ull << 20)
#define DEV_GPA 0x10000000ull
#define DEV_HPA 0x3f000000ull
#define UART_GPA 0x09000000ull

/* [snippet:mmio] */
/* A device the guest owns (a passed-through BAR, say): mapped whole when
 * the VM is built, with the largest blocks its alignment allows, never
 * executable. Device memory is not cached: no maintenance at all. */
static int map_device(struct ex_vm *vm, struct ex_vcpu *v, uint64_t gpa,
		      uint64_t size, uint64_t hpa)
{
	int64_t need = slat_pages_needed(
		&vm->t, SLAT_NEED(.kind = SLAT_OP_MAP, .ipa = slat_ipa(gpa),
				  .size = size, .pa = slat_pa(hpa),
				  .attrs = SLAT_RW | SLAT_MT_DEVICE));
	int ret;

	if (need < 0)
		return (int)need;
	if (slat_hosted_cache_topup(&vm->h, &v->cache, (uint32_t)need))
		return SLAT_E_NOMEM;
	pthread_rwlock_wrlock(&vm->mmu_lock);
	ret = slat_map(&vm->t, slat_ipa(gpa), size, slat_pa(hpa),
		       SLAT_RW | SLAT_MT_DEVICE, SLAT_OP(.cache = &v->cache));
	pthread_rwlock_unlock(&vm->mmu_lock);
	return ret;
}
/* [end] */

/* [snippet:flush] */
/* The guest cleaned its caches by set/way, or turned them on or off
 * (trapped with HCR_EL2.TSW and TVM): clean and invalidate its memory to
 * the PoC. SLAT_NOTHING_TO_DO with FEAT_S2FWB, on EPT, or when none of
 * it is mapped yet. */
static int guest_cache_maintenance(struct ex_vm *vm)
{
	int ret;

	pthread_rwlock_rdlock(&vm->mmu_lock);
	slat_hosted_rcu_read_lock();
	ret = slat_flush(&vm->t, slat_ipa(vm->slot.gpa), vm->slot.size,
			 SLAT_OP(.flags = SLAT_SHARED));
	slat_hosted_rcu_read_unlock();
	pthread_rwlock_unlock(&vm->mmu_lock);
	return ret;
}
/* [end] */

static void run(const struct slat_config *cfg, bool cleans)
{
	static const struct ex_slot slot = {
		.gpa = GPA, .size = SLOT, .hpa = HPA, .backing = BLOCK,
	};
	static struct ex_vm vm;
	struct ex_vcpu v;
	struct slat_leaf leaf;
	uint64_t vmid;

	ex_vm_init(&vm, cfg, &slot);
	ex_vcpu_init(&v, &vm);
	CHECK(map_device(&vm, &v, DEV_GPA, BLOCK, DEV_HPA) == SLAT_OK);
	CHECK(slat_lookup(&vm.t, slat_ipa(DEV_GPA + 0x40), &leaf) == SLAT_OK);
	CHECK(leaf.size == BLOCK && SLAT_MT(leaf.attrs) == SLAT_MT_DEVICE);
	CHECK(vm.ev.dcache_calls == 0);
	CHECK(slat_map(&vm.t, slat_ipa(DEV_GPA), BLOCK, slat_pa(DEV_HPA),
		       SLAT_RWX | SLAT_MT_DEVICE, NULL) == SLAT_E_ATTR);
	/* An emulated device: no mapping, every access exits. */
	CHECK(ex_guest_access(&v, UART_GPA, SLAT_ACCESS_WRITE) == EX_EXIT_MMIO);

	/* Guest memory, half of it touched: each block cleaned as mapped. */
	CHECK(guest_cache_maintenance(&vm) == SLAT_NOTHING_TO_DO);
	CHECK(ex_guest_access(&v, GPA, SLAT_ACCESS_WRITE) == SLAT_OK);
	CHECK(ex_guest_access(&v, GPA + BLOCK, SLAT_ACCESS_READ) == SLAT_OK);
	CHECK(vm.ev.dcache_bytes == (cleans ? 2 * BLOCK : 0));
	/* Set/way: only the mapped Normal memory, not the device. */
	CHECK(guest_cache_maintenance(&vm) ==
	      (cleans ? SLAT_OK : SLAT_NOTHING_TO_DO));
	CHECK(vm.ev.dcache_bytes == (cleans ? 4 * BLOCK : 0));

	/* Teardown: vCPUs first (their caches), then the VM. */
	vmid = vm.ev.tlbi_vmid;
	ex_vcpu_fini(&v);
	ex_vm_fini(&vm);
	CHECK(vm.ev.tlbi_vmid == vmid + 1);
}

int main(void)
{
	static const struct slat_config arm = {
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
	};
	static const struct slat_config fwb = {
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		.features = SLAT_FEAT_FWB | SLAT_FEAT_DIC,
	};
	static const struct slat_config ept = {
		.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
	};
	static const struct slat_config npt = {
		.format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		.features = SLAT_FEAT_HWDIRTY,
	};

	slat_hosted_rcu_register_thread();
	run(&arm, true);
	run(&fwb, false);
	run(&ept, false);
	run(&npt, false);
	slat_hosted_rcu_unregister_thread();
	printf("mmio: ok\n");
	return 0;
}
