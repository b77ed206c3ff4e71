/* SPDX-License-Identifier: MIT */
/*
 * docs/platform.md, "Dirty logging with hardware dirty state": the same
 * 8 MiB on 2 MiB blocks, on Armv8 stage 2 with FEAT_HAFDBS (DBM) and on
 * EPT with accessed/dirty flags. The guest's writes never fault; each
 * harvest reads and cleans the dirty state with slat_dirty_read(), and
 * when logging stops the pages are promoted back to blocks, a block dirty
 * if any of its pages was.
 */
#include "vm.h"

#include <string.h>

#define GPA 0x40000000ull
#define SLOT (8ull << 20)
#define HPA 0x880000000ull
#define BLOCK (2ull << 20)
#define WORDS (SLOT / 4096 / 64)

static const uint64_t written[] = {
	GPA + 0x1000, GPA + 0x201000, GPA + 0x203000, GPA + SLOT - 0x1000,
};
#define NR_WRITTEN (sizeof(written) / sizeof(written[0]))

/* [snippet:hw-start] */
static void hw_log_start(struct ex_vm *vm)
{
	const struct ex_slot *s = &vm->slot;
	int64_t need = slat_pages_needed(
		&vm->t, SLAT_NEED(.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(s->gpa),
				  .size = s->size));
	uint64_t scratch[WORDS];
	struct slat_page_cache cache;

	CHECK(slat_hosted_cache_init(&cache, (uint32_t)need) == SLAT_OK);
	CHECK(slat_hosted_cache_topup(&vm->h, &cache, (uint32_t)need) ==
	      SLAT_OK);
	pthread_rwlock_wrlock(&vm->mmu_lock);
	/* Optional: a dirty block reports all its pages; split, each page
	 * reports itself. */
	CHECK(slat_split(&vm->t, slat_ipa(s->gpa), s->size, 0,
			 SLAT_OP(.cache = &cache)) == SLAT_OK);
	/* Writable leaves are installed dirty: start from clean. */
	CHECK(slat_dirty_read(&vm->t, slat_ipa(s->gpa), s->size, scratch, WORDS,
			      true, SLAT_OP(.flush = SLAT_FLUSH_VMID)) >= 0);
	pthread_rwlock_unlock(&vm->mmu_lock);
	slat_hosted_cache_fini(&cache);
}
/* [end] */

/* [snippet:hw-harvest] */
static int64_t hw_log_harvest(struct ex_vm *vm, uint64_t *bitmap,
			      size_t words)
{
	const struct ex_slot *s = &vm->slot;
	int64_t n;

	/* Beside running vCPUs, as a shared walker. The whole slot is read,
	 * so no block is covered only in part: no page to split, no cache. */
	pthread_rwlock_rdlock(&vm->mmu_lock);
	slat_hosted_rcu_read_lock();
	n = slat_dirty_read(&vm->t, slat_ipa(s->gpa), s->size, bitmap, words,
			    true, /* clean what was dirty */
			    SLAT_OP(.flags = SLAT_SHARED,
				    .flush = SLAT_FLUSH_RANGE));
	slat_hosted_rcu_read_unlock();
	pthread_rwlock_unlock(&vm->mmu_lock);
	/* Copy the pages now: a write after the invalidation is seen by the
	 * next harvest. */
	return n;
}
/* [end] */

/* [snippet:hw-stop] */
static void hw_log_stop(struct ex_vm *vm)
{
	const struct ex_slot *s = &vm->slot;

	/* Nothing to make writable again: promote every table whose pages
	 * add up to a block. Dirty and young states are merged into it. */
	pthread_rwlock_wrlock(&vm->mmu_lock);
	CHECK(slat_recover(&vm->t, slat_ipa(s->gpa), s->size,
			   SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE,
					 .max_level = ex_max_level, .arg = vm),
			   SLAT_OP(.flush = SLAT_FLUSH_VMID)) == SLAT_OK);
	pthread_rwlock_unlock(&vm->mmu_lock);
}
/* [end] */

static uint32_t attrs_at(struct ex_vm *vm, uint64_t ipa, uint64_t *size)
{
	struct slat_leaf leaf;

	CHECK(slat_lookup(&vm->t, slat_ipa(ipa), &leaf) == SLAT_OK);
	*size = leaf.size;
	return leaf.attrs;
}

static void harvests(struct ex_vm *vm, struct ex_vcpu *v)
{
	uint64_t bitmap[WORDS], faults = v->faults[SLAT_FAULT_PERMISSION], size;

	for (size_t i = 0; i < NR_WRITTEN; i++)
		CHECK(ex_guest_access(v, written[i], SLAT_ACCESS_WRITE) == SLAT_OK);
	CHECK(v->faults[SLAT_FAULT_PERMISSION] == faults); /* no fault */
	CHECK(attrs_at(vm, written[0], &size) & SLAT_DIRTY);
	CHECK(size == 4096);

	CHECK(hw_log_harvest(vm, bitmap, WORDS) == NR_WRITTEN);
	for (size_t i = 0; i < NR_WRITTEN; i++) {
		uint64_t page = (written[i] - GPA) / 4096;
		uint32_t a = attrs_at(vm, written[i], &size);

		CHECK(bitmap[page / 64] & (1ull << (page % 64)));
		CHECK((a & SLAT_W) && !(a & SLAT_DIRTY)); /* writable-clean */
	}
	CHECK(hw_log_harvest(vm, bitmap, WORDS) == 0);
	CHECK(ex_guest_access(v, written[2], SLAT_ACCESS_WRITE) == SLAT_OK);
	CHECK(hw_log_harvest(vm, bitmap, WORDS) == 1);
	/* Dirty again when logging stops: the promoted block says so. */
	CHECK(ex_guest_access(v, written[3], SLAT_ACCESS_WRITE) == SLAT_OK);
}

static void run(const struct slat_config *cfg)
{
	static const struct ex_slot slot = {
		.gpa = GPA, .size = SLOT, .hpa = HPA, .backing = BLOCK,
	};
	static struct ex_vm vm;
	struct ex_vcpu v;
	uint64_t size;

	ex_vm_init(&vm, cfg, &slot);
	ex_vcpu_init(&v, &vm);
	for (uint64_t off = 0; off < SLOT; off += BLOCK)
		CHECK(ex_guest_access(&v, GPA + off, SLAT_ACCESS_WRITE) == SLAT_OK);
	hw_log_start(&vm);
	CHECK(!(attrs_at(&vm, GPA, &size) & SLAT_DIRTY) && size == 4096);
	harvests(&vm, &v);
	hw_log_stop(&vm);
	for (uint64_t off = 0; off < SLOT; off += BLOCK) {
		uint32_t a = attrs_at(&vm, GPA + off, &size);

		CHECK(size == BLOCK && (a & SLAT_W));
		CHECK(!(a & SLAT_DIRTY) == (off + BLOCK != SLOT));
	}
	ex_vcpu_fini(&v);
	ex_vm_fini(&vm);
}

int main(void)
{
	static const struct slat_config arm = {
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		.features = SLAT_FEAT_HWDIRTY,
	};
	static const struct slat_config ept = {
		.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
		.features = SLAT_FEAT_HWDIRTY,
	};
	/* AMD NPT: the CPU always keeps A and D */
	static const struct slat_config npt = {
		.format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		.features = SLAT_FEAT_HWDIRTY,
	};

	slat_hosted_rcu_register_thread();
	run(&arm);
	run(&ept);
	run(&npt);
	slat_hosted_rcu_unregister_thread();
	printf("dirty_hw: ok\n");
	return 0;
}
