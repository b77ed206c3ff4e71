/* SPDX-License-Identifier: MIT */
/*
 * docs/platform.md, "Dirty logging by write protection": 8 MiB of guest
 * memory on 2 MiB blocks; logging splits and write-protects it, each first
 * write faults and is logged, a harvest finds exactly the pages written
 * and protects them again, and when logging stops the blocks come back:
 * promoted in place when every page is mapped, zapped and faulted back in
 * when some are not.
 */
#include "vm.h"

#define GPA 0x40000000ull
#define SLOT (8ull << 20)
#define HPA 0x880000000ull
#define BLOCK (2ull << 20)
#define WORDS (SLOT / 4096 / 64)

static const struct slat_config cfg = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
};
static const struct ex_slot slot = {
	.gpa = GPA, .size = SLOT, .hpa = HPA, .backing = BLOCK,
};
static const uint64_t written[] = {
	GPA + 0x1000, GPA + 0x201000, GPA + 0x203000, GPA + SLOT - 0x1000,
};
#define NR_WRITTEN (sizeof(written) / sizeof(written[0]))

static uint64_t leaf_size(struct ex_vm *vm, uint64_t ipa, uint32_t *attrs)
{
	struct slat_leaf leaf;

	if (slat_lookup(&vm->t, slat_ipa(ipa), &leaf) != SLAT_OK)
		return 0;
	if (attrs)
		*attrs = leaf.attrs;
	return leaf.size;
}

static uint64_t faults(const struct ex_vcpu *v)
{
	return v->faults[SLAT_FAULT_TRANSLATION] +
	       v->faults[SLAT_FAULT_PERMISSION] +
	       v->faults[SLAT_FAULT_ACCESS_FLAG];
}

static void write_pages(struct ex_vcpu *v)
{
	for (size_t i = 0; i < NR_WRITTEN; i++) {
		uint64_t before = faults(v);

		/* Twice: only the first write faults (permission, or
		 * translation where nothing was mapped). */
		CHECK(ex_guest_access(v, written[i], SLAT_ACCESS_WRITE) == SLAT_OK);
		CHECK(ex_guest_access(v, written[i] + 8, SLAT_ACCESS_WRITE) ==
		      SLAT_OK);
		CHECK(faults(v) == before + 1);
	}
}

static void check_harvest(struct ex_vm *vm, struct ex_vcpu *v)
{
	uint64_t bitmap[WORDS];
	uint32_t attrs;

	CHECK(ex_log_harvest(vm, bitmap, WORDS) == NR_WRITTEN);
	for (size_t i = 0; i < NR_WRITTEN; i++) {
		uint64_t page = (written[i] - GPA) / 4096;

		CHECK(bitmap[page / 64] & (1ull << (page % 64)));
		CHECK(leaf_size(vm, written[i], &attrs) == 4096);
		CHECK(!(attrs & SLAT_W)); /* protected again */
	}
	/* Nothing written since: an empty harvest. Then one write. */
	CHECK(ex_log_harvest(vm, bitmap, WORDS) == 0);
	CHECK(ex_guest_access(v, written[1], SLAT_ACCESS_WRITE) == SLAT_OK);
	CHECK(ex_log_harvest(vm, bitmap, WORDS) == 1);
}

/* The guest touched all its memory before logging: promote at the end. */
static void full_slot(void)
{
	static struct ex_vm vm;
	struct ex_vcpu v;
	uint64_t tables;
	uint32_t attrs;

	ex_vm_init(&vm, &cfg, &slot);
	ex_vcpu_init(&v, &vm);
	for (uint64_t off = 0; off < SLOT; off += BLOCK)
		CHECK(ex_guest_access(&v, GPA + off, SLAT_ACCESS_READ) == SLAT_OK);
	tables = slat_hosted_table_pages(&vm.h);

	ex_log_start(&vm);
	CHECK(leaf_size(&vm, GPA + 0x7000, &attrs) == 4096);
	CHECK((attrs & (SLAT_R | SLAT_W)) == SLAT_R);
	write_pages(&v);
	check_harvest(&vm, &v);

	ex_log_stop(&vm);
	for (uint64_t off = 0; off < SLOT; off += BLOCK) {
		CHECK(leaf_size(&vm, GPA + off + 0x3000, &attrs) == BLOCK);
		CHECK(attrs & SLAT_W);
	}
	/* The page tables of the split are gone, after one invalidation and,
	 * with a free_deferred hook, a grace period. */
	slat_hosted_rcu_barrier();
	CHECK(slat_hosted_table_pages(&vm.h) == tables);
	CHECK(ex_guest_access(&v, GPA + 0x1000, SLAT_ACCESS_WRITE) == SLAT_OK);
	ex_vcpu_fini(&v);
	ex_vm_fini(&vm);
}

/* Only the first block was touched before logging, a few pages of the
 * second during it: the recovery zaps, the guest faults blocks back. */
static void slot_with_holes(void)
{
	static struct ex_vm vm;
	struct ex_vcpu v;

	ex_vm_init(&vm, &cfg, &slot);
	ex_vcpu_init(&v, &vm);
	CHECK(ex_guest_access(&v, GPA, SLAT_ACCESS_WRITE) == SLAT_OK);
	ex_log_start(&vm);
	write_pages(&v);
	CHECK(leaf_size(&vm, GPA + 0x202000, NULL) == 0); /* a hole */

	ex_log_stop(&vm);
	CHECK(leaf_size(&vm, GPA + 0x1000, NULL) == 0); /* zapped */
	for (uint64_t off = 0; off < SLOT; off += BLOCK) {
		CHECK(ex_guest_access(&v, GPA + off + 0x5000, SLAT_ACCESS_WRITE) ==
		      SLAT_OK);
		CHECK(leaf_size(&vm, GPA + off, NULL) == BLOCK);
	}
	ex_vcpu_fini(&v);
	ex_vm_fini(&vm);
}

int main(void)
{
	slat_hosted_rcu_register_thread();
	full_slot();
	slot_with_holes();
	slat_hosted_rcu_unregister_thread();
	printf("dirty_wp: ok\n");
	return 0;
}
