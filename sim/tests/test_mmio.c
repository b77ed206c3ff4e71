/* SPDX-License-Identifier: MIT */
/*
 * MMIO regions: mapped page by page or with blocks, accesses counted and
 * never reaching memory; teardown per entry or once for the VM; a VM torn
 * down with everything in use frees every table page.
 */
#include "check.h"

static void mmio_maps_pages_or_blocks(void)
{
	for (int how = 0; how < 2; how++) {
		struct slat_vm *vm = new_fmt_vm();
		struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
		bool ept = fmt_x86(); /* or NPT: no invalidation by address */
		uint64_t g = cur_fmt->granule, block = smallest_block(vm);
		/* Two of the table's smallest blocks (2M, 32M, 512M). */
		uint64_t size = 2 * block;
		struct slat_vm_stats a, b;
		struct slat_leaf leaf;
		uint64_t x = 5;

		REQUIRE(slat_vm_mmio_map(vm, 8 * GiB, size, (enum slat_vm_mmio_map)how) == 0,
			"%s", slat_vm_error(vm));
		CHECK(slat_vm_mmio_map(vm, 8 * GiB + block, g, SLAT_VM_MMIO_PAGES) ==
			      -EEXIST, "overlap");
		CHECK(add_slot(vm, 0, 8 * GiB, block, "synthetic", 0) == -EEXIST,
		      "a memslot over MMIO");
		CHECK(slat_lookup(slat_vm_table(vm), slat_ipa(8 * GiB), &leaf) == 0,
		      "mapped");
		CHECK(leaf.size == (how ? block : g), "leaf size %llu",
		      (unsigned long long)leaf.size);
		CHECK(SLAT_MT(leaf.attrs) == SLAT_MT_DEVICE, "device memory");
		CHECK(slat_vcpu_write64(v, 8 * GiB + 64, 1) == 0, "device write");
		CHECK(slat_vcpu_read64(v, 8 * GiB + 64, &x) == 0 && x == 0,
		      "device reads store nothing");
		slat_vm_stats_read(vm, &a);
		CHECK(a.mmio_accesses == 2, "counted");
		CHECK(a.faults[SLAT_VM_FAULT_TRANSLATION] == 0, "no faults");
		enum slat_tlbi_policy pol = how ? SLAT_FLUSH_VMID : SLAT_FLUSH_ENTRY;
		CHECK(slat_vm_mmio_unmap(vm, 8 * GiB, pol) == 0, "unmap");
		slat_vm_stats_read(vm, &b);
		if (how)
			CHECK(b.table.tlbi[SLAT_TLBI_VMID] - a.table.tlbi[SLAT_TLBI_VMID] == 1,
			      "one VMID invalidation");
		else
			/* One per page, and one per table unlinked (EPT: each
			 * a whole-VMID invalidation, it has none by address). */
			CHECK(b.table.tlbi[ept ? SLAT_TLBI_VMID : SLAT_TLBI_IPA] -
				      a.table.tlbi[ept ? SLAT_TLBI_VMID : SLAT_TLBI_IPA] >=
				      size / g, "one per page: %llu",
			      (unsigned long long)(b.table.tlbi[SLAT_TLBI_IPA] -
						   a.table.tlbi[SLAT_TLBI_IPA]));
		CHECK(!ept || b.table.tlbi[SLAT_TLBI_IPA] == 0, "EPT: none by IPA");
		CHECK(slat_vcpu_read64(v, 8 * GiB + 64, &x) == SLAT_VM_EXIT_MMIO,
		      "gone: an exit");
		CHECK(slat_vm_mmio_unmap(vm, 8 * GiB, pol) == -ENOENT, "twice");
		slat_vm_destroy(vm);
	}
}

static void teardown_with_everything_live(void)
{
	struct slat_vm *vm = new_fmt_vm();
	struct slat_vm_memstress ms = {
		.gpa = 4 * GiB, .bytes_per_vcpu = 4 * MiB, .nr_vcpus = 2,
		.write_percent = 50, .random_access = true,
	};

	REQUIRE(slat_vm_enable_cap(vm, SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE,
				   smallest_block(vm)) == 0, "%s", slat_vm_error(vm));
	REQUIRE(add_slot(vm, 0, 4 * GiB, 8 * MiB, "anonymous_thp", 0) == 0, "%s",
		slat_vm_error(vm));
	REQUIRE(add_slot(vm, 1, 6 * GiB, 64 * MiB, "synthetic_2mb",
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
	REQUIRE(slat_vm_mmio_map(vm, 8 * GiB, 8 * MiB, SLAT_VM_MMIO_BLOCKS) == 0, "mmio");
	slat_vm_memstress_start(vm, &ms);
	CHECK(slat_vm_memstress_iterate(vm) > 0, "run");
	add_slot(vm, 0, 4 * GiB, 8 * MiB, "anonymous_thp", SLAT_VM_MEM_LOG_DIRTY_PAGES);
	CHECK(slat_vm_memstress_iterate(vm) > 0, "run");
	/* Destroy with vCPUs still started: it stops them. LSan checks the
	 * rest (tables, arena, slots, rings, caches). */
	slat_vm_destroy(vm);
}

int main(void)
{
	RUN_FMTS(mmio_maps_pages_or_blocks);
	RUN_FMTS(teardown_with_everything_live);
	return check_failures ? 1 : 0;
}
