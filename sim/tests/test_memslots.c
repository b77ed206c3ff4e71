/* SPDX-License-Identifier: MIT */
/*
 * Memslots and backing sources: clear errors, guest reads return the last
 * value written on every backing the host supports, mapping sizes follow
 * the backing and the alignment rules, and no guest access reaches memory
 * outside its slots.
 */
#define _GNU_SOURCE
#include "check.h"

#include <pthread.h>
#include <sched.h>

static void memslot_errors_are_clear(void)
{
	struct slat_vm *vm = new_vm(NULL);

	CHECK(add_slot(vm, 0, 1 * GiB, 16 * MiB, "anonymous", 0) == 0, "%s",
	      slat_vm_error(vm));
	CHECK(add_slot(vm, 1, 1 * GiB + 8 * MiB, 16 * MiB, "anonymous", 0) == -EEXIST,
	      "overlap");
	CHECK(strstr(slat_vm_error(vm), "overlaps memslot 0"), "%s",
	      slat_vm_error(vm));
	CHECK(add_slot(vm, 1, 2 * GiB + 512, 16 * MiB, "anonymous", 0) == -EINVAL,
	      "misaligned base");
	CHECK(add_slot(vm, 1, 2 * GiB, 16 * MiB + 100, "anonymous", 0) == -EINVAL,
	      "misaligned size");
	CHECK(add_slot(vm, 1, 2 * GiB, 16 * MiB, "anonymous_hugepages", 0) == -EINVAL,
	      "unknown backing");
	CHECK(strstr(slat_vm_error(vm), "unknown backing source 'anonymous_hugepages'"),
	      "%s", slat_vm_error(vm));
	CHECK(add_slot(vm, 1, 2 * GiB, 3 * MiB, "synthetic_2mb", 0) == -EINVAL,
	      "synthetic_2mb size not a multiple of 2 MiB");
	CHECK(add_slot(vm, 1, 2 * GiB, 16 * MiB, "anonymous", 0x80) == -EINVAL,
	      "unknown flags");
	CHECK(add_slot(vm, 1, 1ull << 40, 16 * MiB, "anonymous", 0) == -EINVAL,
	      "beyond the IPA space");
	CHECK(add_slot(vm, 0, 1 * GiB, 32 * MiB, "anonymous", 0) == -EINVAL,
	      "resizing");
	CHECK(add_slot(vm, 7, 0, 0, NULL, 0) == -ENOENT, "deleting nothing");
	if (!slat_vm_backing_available("anonymous_hugetlb_2mb", 4 * MiB, NULL, 0)) {
		CHECK(add_slot(vm, 2, 4 * GiB, 4 * MiB, "anonymous_hugetlb_2mb", 0) ==
			      -ENOMEM, "no huge pages");
		CHECK(strstr(slat_vm_error(vm), "nr_hugepages"), "%s",
		      slat_vm_error(vm));
	}
	if (!slat_vm_backing_available("anonymous_hugetlb_1gb", GiB, NULL, 0)) {
		CHECK(add_slot(vm, 2, 4 * GiB, GiB, "anonymous_hugetlb_1gb", 0) ==
			      -ENOMEM, "no 1G huge pages");
		CHECK(strstr(slat_vm_error(vm), "hugepages-1048576kB/nr_hugepages"),
		      "%s", slat_vm_error(vm));
	}
	CHECK(add_slot(vm, 0, 0, 0, NULL, 0) == 0, "delete");
	CHECK(add_slot(vm, 1, 1 * GiB + 8 * MiB, 16 * MiB, "anonymous", 0) == 0,
	      "the space is free again: %s", slat_vm_error(vm));
	slat_vm_destroy(vm);
}

static uint64_t pattern(uint64_t gpa, unsigned round)
{
	return (gpa * 0x9e3779b97f4a7c15ull) ^ round;
}

/* Write every page, read it back through the MMU and the host view. */
static void run_backing(const char *backing, uint64_t size)
{
	char why[256];
	uint64_t base = 4 * GiB;

	if (!slat_vm_backing_available(backing, size, why, sizeof(why))) {
		printf("skip %s: %s\n", backing, why);
		return;
	}
	struct slat_vm *vm = new_fmt_vm();
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	bool synthetic = !strncmp(backing, "synthetic", 9);
	uint64_t g = cur_fmt->granule;
	/* 1 GiB slots: every 16th page is enough. */
	uint64_t step = size >= GiB ? 16 * g : g;

	REQUIRE(add_slot(vm, 0, base, size, backing, 0) == 0, "%s: %s", backing,
		slat_vm_error(vm));
	for (unsigned round = 0; round < 2; round++)
		for (uint64_t off = 0; off < size; off += step)
			CHECK(slat_vcpu_write64(v, base + off + 8 * round,
						pattern(base + off, round)) == 0,
			      "%s write", backing);
	for (uint64_t off = 0; off < size; off += step) {
		uint64_t got = 1, host = 0;

		CHECK(slat_vcpu_read64(v, base + off + 8, &got) == 0, "read");
		if (synthetic) {
			CHECK(got == 0, "synthetic memory reads as zero");
			continue;
		}
		CHECK(got == pattern(base + off, 1), "%s: 0x%llx read 0x%llx",
		      backing, (unsigned long long)(base + off),
		      (unsigned long long)got);
		slat_vm_host_read(vm, base + off, &host, 8);
		CHECK(host == pattern(base + off, 0), "host view");
	}
	if (!synthetic) {
		uint64_t val = 0xfeedface, got = 0;

		slat_vm_host_write(vm, base + size - 8, &val, 8);
		CHECK(slat_vcpu_read64(v, base + size - 8, &got) == 0 && got == val,
		      "a host write is seen by the guest");
	}
	struct slat_leaf leaf;
	CHECK(slat_lookup(slat_vm_table(vm), slat_ipa(base), &leaf) == 0, "mapped");
	uint64_t psize = slat_vm_backing_page_size(backing);
	/* The largest leaf of the table within the backing page and the
	 * slot (the base is 4 GiB, aligned for every leaf size). */
	uint64_t want = leaf_at_most(vm, psize < size ? psize : size);
	if (want < g)
		want = g;
	CHECK(leaf.size == want, "%s: leaf of %llu bytes, want %llu", backing,
	      (unsigned long long)leaf.size, (unsigned long long)want);
	slat_vm_destroy(vm);
}

static void every_backing_reads_last_written(void)
{
	run_backing("anonymous", 8 * MiB);
	run_backing("anonymous_thp", 8 * MiB);
	run_backing("shmem", 8 * MiB);
	run_backing("anonymous_hugetlb", 8 * MiB);
	run_backing("anonymous_hugetlb_2mb", 8 * MiB);
	run_backing("anonymous_hugetlb_1gb", GiB);
	run_backing("synthetic", 8 * MiB);
	run_backing("synthetic_2mb", 8 * MiB);
	run_backing("synthetic_1gb", GiB);
}

static uint64_t leaf_size_at(struct slat_vm *vm, uint64_t gpa)
{
	struct slat_leaf leaf;

	if (slat_lookup(slat_vm_table(vm), slat_ipa(gpa), &leaf))
		return 0;
	return leaf.size;
}

static void mapping_size_follows_alignment_and_slot(void)
{
	struct slat_vm *vm = new_vm(NULL);
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	uint64_t x;

	/* A THP slot whose base is 4K off a 2M boundary: the IPA and the
	 * host address never share their offset in a block. */
	REQUIRE(add_slot(vm, 0, GiB + 4096, 8 * MiB, "anonymous_thp", 0) == 0,
		"%s", slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, GiB + 4 * MiB, &x) == 0, "read");
	CHECK(leaf_size_at(vm, GiB + 4 * MiB) == 4096, "misaligned: pages, got %llu",
	      (unsigned long long)leaf_size_at(vm, GiB + 4 * MiB));
	/* A synthetic 2M slot of 3 blocks and a tail: blocks inside, pages
	 * where a block would leave the slot. */
	REQUIRE(add_slot(vm, 1, 2 * GiB, 6 * MiB, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	REQUIRE(add_slot(vm, 2, 2 * GiB + 6 * MiB, 1 * MiB, "synthetic", 0) == 0,
		"%s", slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, 2 * GiB + 2 * MiB + 64, &x) == 0, "read");
	CHECK(leaf_size_at(vm, 2 * GiB + 2 * MiB) == 2 * MiB, "block");
	CHECK(slat_vcpu_read64(v, 2 * GiB + 6 * MiB, &x) == 0, "read");
	CHECK(leaf_size_at(vm, 2 * GiB + 6 * MiB) == 4096, "synthetic: pages");
	/* A 1G synthetic slot at a 1G boundary maps one block. */
	REQUIRE(add_slot(vm, 3, 8 * GiB, GiB, "synthetic_1gb", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_write64(v, 8 * GiB + 12345 * 8, 1) == 0, "write");
	CHECK(leaf_size_at(vm, 8 * GiB) == GiB, "1G block");
	/* Logging forces pages. */
	REQUIRE(add_slot(vm, 4, 16 * GiB, 4 * MiB, "synthetic_2mb",
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
	CHECK(slat_vcpu_write64(v, 16 * GiB, 1) == 0, "write");
	CHECK(leaf_size_at(vm, 16 * GiB) == 4096, "logging: pages");
	slat_vm_destroy(vm);
}

/* Blocks are the format's: 1G and 2M (4K granule, EPT), 32M (16K), 512M
 * (64K). A write to a block write-protected by dirty logging maps the
 * page: on Arm stage 2 in a new table that holds only it (the rest faults
 * later, as arm64 KVM), on EPT in the block split whole (the TDP MMU). */
static void block_sizes_follow_the_granule(void)
{
	struct slat_vm *vm = new_fmt_vm();
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	uint64_t g = cur_fmt->granule, want = leaf_at_most(vm, GiB), x = 0;
	uint64_t block = smallest_block(vm);
	/* A block inside the 1G slot, not its first. */
	uint64_t at = 8 * GiB + (GiB / block > 3 ? 3 : 1) * block;

	REQUIRE(add_slot(vm, 0, 8 * GiB, GiB, "synthetic_1gb", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, at + 64, &x) == 0, "read");
	CHECK(leaf_size_at(vm, at) == want, "block of %llu, want %llu",
	      (unsigned long long)leaf_size_at(vm, at),
	      (unsigned long long)want);
	/* A 2M slot (4K: a block; 16K, 64K: pages). */
	REQUIRE(add_slot(vm, 1, 12 * GiB, 2 * MiB, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_write64(v, 12 * GiB + g, 1) == 0, "write");
	CHECK(leaf_size_at(vm, 12 * GiB + g) == leaf_at_most(vm, 2 * MiB),
	      "2M slot: leaf of %llu", (unsigned long long)leaf_size_at(vm, 12 * GiB + g));
	/* Logging on: the 1G slot's block is write-protected; a write maps
	 * the granule there. */
	REQUIRE(add_slot(vm, 0, 8 * GiB, GiB, "synthetic_1gb",
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
	CHECK(slat_vcpu_write64(v, at + 64, 2) == 0, "write");
	CHECK(leaf_size_at(vm, at) == g, "split to the granule: %llu",
	      (unsigned long long)leaf_size_at(vm, at));
	if (fmt_x86()) {
		CHECK(leaf_size_at(vm, at + g) == g &&
			      leaf_size_at(vm, at + block - g) == g,
		      "the rest stays mapped, split");
	} else {
		CHECK(leaf_size_at(vm, at + g) == 0 &&
			      leaf_size_at(vm, at + block - g) == 0,
		      "the rest of the block is left to later faults");
		CHECK(slat_vcpu_read64(v, at + g, &x) == 0, "read");
		CHECK(leaf_size_at(vm, at + g) == g, "a later fault maps a page");
	}
	uint64_t bm[GiB / 4096 / 64];
	CHECK(slat_vm_get_dirty_log(vm, 0, bm) == 0, "get");
	uint64_t page = (at - 8 * GiB) / g;
	CHECK(bm[page / 64] == 1ull << (page % 64), "the written page is dirty");
	slat_vm_destroy(vm);
}

/*
 * KVM_SET_USER_MEMORY_REGION with another base moves the slot while vCPUs
 * run: once the move returns, an access at the old base exits (and a write
 * there changes nothing), one at the new base sees the slot's data.
 * A seqcount marks the moves, as in test_shootdown.
 */
#define MOVE_A (4 * GiB)
#define MOVE_B (6 * GiB)
#define MOVE_SIZE (2 * MiB)
#define MOVE_PERIODS 24

struct mover {
	uint64_t seq;                  /* odd while moving */
	uint64_t base[MOVE_PERIODS + 1]; /* per stable period */
	uint64_t g;
	bool stop;
	uint64_t ok, exits, wrong, stale, missing;
};

static uint64_t move_val(uint64_t page)
{
	return 0x5107000000000000ull | page;
}

static void mover_guest(struct slat_vcpu *v, void *arg)
{
	struct mover *mv = arg;
	uint32_t seed = slat_vcpu_id(v) * 7919u + 1;
	bool writer = slat_vcpu_id(v) == 0;

	while (!__atomic_load_n(&mv->stop, __ATOMIC_ACQUIRE)) {
		seed = seed * 1103515245u + 12345u;
		uint64_t page = (seed >> 8) % (MOVE_SIZE / mv->g);
		uint64_t base = (seed >> 4) & 1 ? MOVE_B : MOVE_A;
		uint64_t gpa = base + page * mv->g + 8, val = move_val(page);
		uint64_t s1 = __atomic_load_n(&mv->seq, __ATOMIC_ACQUIRE);
		int ret = writer ? slat_vcpu_write64(v, gpa, val)
				 : slat_vcpu_read64(v, gpa, &val);
		uint64_t s2 = __atomic_load_n(&mv->seq, __ATOMIC_ACQUIRE);
		bool stable = s1 == s2 && !(s1 & 1);

		if (ret == 0) {
			__atomic_fetch_add(&mv->ok, 1, __ATOMIC_RELAXED);
			if (val != move_val(page))
				__atomic_fetch_add(&mv->wrong, 1, __ATOMIC_RELAXED);
			if (stable && base != mv->base[s1 / 2])
				__atomic_fetch_add(&mv->stale, 1, __ATOMIC_RELAXED);
		} else if (ret == SLAT_VM_EXIT_MMIO) {
			__atomic_fetch_add(&mv->exits, 1, __ATOMIC_RELAXED);
			if (stable && base == mv->base[s1 / 2])
				__atomic_fetch_add(&mv->missing, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add(&mv->wrong, 1, __ATOMIC_RELAXED);
		}
	}
}

static void move_backing(const char *backing)
{
	struct slat_vm *vm = new_fmt_vm();
	struct mover mv = { .g = cur_fmt->granule };
	uint64_t g = mv.g, x;

	mv.base[0] = MOVE_A;
	REQUIRE(add_slot(vm, 0, MOVE_A, MOVE_SIZE, backing, 0) == 0, "%s",
		slat_vm_error(vm));
	REQUIRE(add_slot(vm, 1, 8 * GiB, MOVE_SIZE, "anonymous", 0) == 0, "%s",
		slat_vm_error(vm));
	for (uint64_t p = 0; p < MOVE_SIZE / g; p++) {
		x = move_val(p);
		slat_vm_host_write(vm, MOVE_A + p * g + 8, &x, 8);
	}
	/* Errors: a size change, an overlap. */
	CHECK(add_slot(vm, 0, MOVE_B, 2 * MOVE_SIZE, backing, 0) == -EINVAL,
	      "resizing");
	CHECK(add_slot(vm, 0, 8 * GiB + g, MOVE_SIZE, backing, 0) == -EEXIST,
	      "moving over slot 1");
	CHECK(add_slot(vm, 0, MOVE_A, MOVE_SIZE, backing,
		       SLAT_VM_MEM_READONLY) == -EINVAL, "READONLY");
	for (uint32_t i = 0; i < 3; i++) {
		struct slat_vcpu *v = slat_vm_create_vcpu(vm, i, NULL);

		REQUIRE(v && slat_vcpu_run(v, mover_guest, &mv) == 0, "vCPU");
	}
	for (unsigned p = 1; p <= MOVE_PERIODS; p++) {
		uint64_t to = p & 1 ? MOVE_B : MOVE_A;
		uint64_t start = __atomic_load_n(&mv.ok, __ATOMIC_RELAXED);

		while (__atomic_load_n(&mv.ok, __ATOMIC_RELAXED) < start + 200)
			sched_yield();
		mv.base[p] = to;
		__atomic_store_n(&mv.seq, 2 * p - 1, __ATOMIC_SEQ_CST);
		CHECK(add_slot(vm, 0, to, MOVE_SIZE, backing,
			       p == MOVE_PERIODS / 2 ? SLAT_VM_MEM_LOG_DIRTY_PAGES : 0) == 0,
		      "move: %s", slat_vm_error(vm));
		__atomic_store_n(&mv.seq, 2 * p, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&mv.stop, true, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < 3; i++)
		slat_vcpu_join(slat_vm_vcpu(vm, i));
	CHECK(mv.wrong == 0 && mv.stale == 0 && mv.missing == 0,
	      "%s: %llu wrong, %llu through the old base, %llu exits at the "
	      "new base (%llu ok, %llu exits)", backing,
	      (unsigned long long)mv.wrong, (unsigned long long)mv.stale,
	      (unsigned long long)mv.missing, (unsigned long long)mv.ok,
	      (unsigned long long)mv.exits);
	CHECK(mv.exits > 0, "accesses at the old base exit");
	/* The data moved with the slot; nothing was written elsewhere. */
	uint64_t base = mv.base[MOVE_PERIODS], bad = 0;
	for (uint64_t p = 0; p < MOVE_SIZE / g; p++) {
		x = 0;
		slat_vm_host_read(vm, base + p * g + 8, &x, 8);
		bad += x != move_val(p);
		slat_vm_host_read(vm, 8 * GiB + p * g + 8, &x, 8);
		bad += x != 0;
	}
	CHECK(bad == 0, "%llu words changed", (unsigned long long)bad);
	CHECK(slat_vm_host_read(vm, base == MOVE_A ? MOVE_B : MOVE_A, &x, 8) ==
		      -EFAULT, "the old base is no slot");
	slat_vm_destroy(vm);
}

static void slot_moves_while_vcpus_run(void)
{
	move_backing("anonymous");
	move_backing("shmem");
}

static void no_access_outside_slots(void)
{
	struct slat_vm *vm = new_vm(NULL);
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	uint64_t x = 7, y = 0;

	REQUIRE(add_slot(vm, 0, GiB, 2 * MiB, "anonymous", 0) == 0, "%s",
		slat_vm_error(vm));
	REQUIRE(add_slot(vm, 1, GiB + 4 * MiB, 2 * MiB, "anonymous",
			 SLAT_VM_MEM_READONLY) == 0, "%s", slat_vm_error(vm));
	/* Edges of the slot work; the gap and beyond are MMIO exits. */
	CHECK(slat_vcpu_write64(v, GiB, 1) == 0, "first byte");
	CHECK(slat_vcpu_write64(v, GiB + 2 * MiB - 8, 2) == 0, "last byte");
	CHECK(slat_vcpu_write64(v, GiB + 2 * MiB, 3) == SLAT_VM_EXIT_MMIO, "gap");
	CHECK(slat_vcpu_read64(v, GiB - 8, &x) == SLAT_VM_EXIT_MMIO, "below");
	CHECK(slat_vcpu_read64(v, 0, &x) == SLAT_VM_EXIT_MMIO, "zero");
	/* A read-only slot reads, and a write exits without changing it. */
	x = 0x1234;
	slat_vm_host_write(vm, GiB + 4 * MiB, &x, 8);
	CHECK(slat_vcpu_read64(v, GiB + 4 * MiB, &y) == 0 && y == 0x1234, "ro read");
	CHECK(slat_vcpu_write64(v, GiB + 4 * MiB, 99) == SLAT_VM_EXIT_MMIO,
	      "ro write exits");
	slat_vm_host_read(vm, GiB + 4 * MiB, &y, 8);
	CHECK(y == 0x1234, "ro memory unchanged");
	/* Every translation in the table lands inside its slot. */
	struct slat_leaf leaf;
	slat_pa_t hpa;
	for (uint64_t off = 0; off < 2 * MiB; off += 4096)
		if (!slat_lookup(slat_vm_table(vm), slat_ipa(GiB + off), &leaf)) {
			slat_vm_gpa_to_hpa(vm, GiB + off, &hpa);
			CHECK(slat_pa_v(leaf.pa) == slat_pa_v(hpa),
			      "translation of 0x%llx", (unsigned long long)off);
		}
	struct slat_vm_stats s;
	slat_vm_stats_read(vm, &s);
	CHECK(s.mmio_exits == 4, "4 exits, got %llu", (unsigned long long)s.mmio_exits);
	slat_vm_destroy(vm);
}

static void memstress_iterations_fault_once(void)
{
	struct slat_vm *vm = new_vm(NULL);
	struct slat_vm_memstress ms = {
		.gpa = 4 * GiB, .bytes_per_vcpu = 8 * MiB, .nr_vcpus = 4,
		.write_percent = 100,
	};
	struct slat_vm_stats a, b, d;

	REQUIRE(add_slot(vm, 0, 4 * GiB, 32 * MiB, "anonymous", 0) == 0, "%s",
		slat_vm_error(vm));
	REQUIRE(slat_vm_memstress_start(vm, &ms) == 0, "%s", slat_vm_error(vm));
	slat_vm_stats_read(vm, &a);
	CHECK(slat_vm_memstress_iterate(vm) > 0, "populate: %s", slat_vm_error(vm));
	slat_vm_stats_read(vm, &b);
	slat_vm_stats_diff(&a, &b, &d);
	/* One fault per page, but for faults that lost a race with another
	 * vCPU linking the same table and so faulted again. */
	CHECK(d.faults[SLAT_VM_FAULT_TRANSLATION] - d.fault_again ==
		      32 * MiB / 4096,
	      "one fault per page: %llu, %llu of them after a lost race",
	      (unsigned long long)d.faults[SLAT_VM_FAULT_TRANSLATION],
	      (unsigned long long)d.fault_again);
	CHECK(d.accesses == 32 * MiB / 4096, "accesses");
	slat_vm_memstress_set_write_percent(vm, 50);
	slat_vm_memstress_set_random_access(vm, true);
	CHECK(slat_vm_memstress_iterate(vm) > 0, "second pass");
	slat_vm_stats_read(vm, &a);
	slat_vm_stats_diff(&b, &a, &d);
	CHECK(d.faults[SLAT_VM_FAULT_TRANSLATION] == 0, "no new faults");
	slat_vm_memstress_stop(vm);
	uint64_t x = 0;
	slat_vm_host_read(vm, 4 * GiB + 12 * MiB, &x, 8);
	CHECK(x == 0x0123456789ABCDEFull, "the memstress value");
	slat_vm_destroy(vm);
}

struct pin_probe {
	int cpus, cpu;
};

static void pin_guest(struct slat_vcpu *v, void *arg)
{
	struct pin_probe *p = arg;
	cpu_set_t set;

	(void)v;
	pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
	p->cpus = CPU_COUNT(&set);
	p->cpu = CPU_ISSET(0, &set) ? 0 : -1;
}

/* slat_vcpu_pin: before the thread starts, and refused for CPUs the
 * process may not use. */
static void vcpus_pin_to_pcpus(void)
{
	struct slat_vm *vm = new_vm(NULL);
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	struct pin_probe p = { 0, -2 };

	CHECK(slat_vcpu_pin(v, CPU_SETSIZE + 1) == -EINVAL, "no such CPU");
	CHECK(slat_vcpu_pin(v, 0) == 0, "%s", slat_vm_error(vm));
	REQUIRE(slat_vcpu_run(v, pin_guest, &p) == 0, "run");
	slat_vcpu_join(v);
	CHECK(p.cpus == 1 && p.cpu == 0, "pinned to CPU 0: %d CPUs", p.cpus);
	CHECK(slat_vcpu_pin(v, -1) == 0, "unpin");
	REQUIRE(slat_vcpu_run(v, pin_guest, &p) == 0, "run");
	slat_vcpu_join(v);
	cpu_set_t all;
	sched_getaffinity(0, sizeof(all), &all);
	CHECK(p.cpus == CPU_COUNT(&all), "unpinned: %d CPUs", p.cpus);
	slat_vm_destroy(vm);
}

static void synthetic_many_vcpus(void)
{
	struct slat_vm *vm = new_vm(NULL);
	struct slat_vm_memstress ms = {
		.gpa = 4 * GiB, .bytes_per_vcpu = 256 * MiB, .nr_vcpus = 16,
		.write_percent = 100, .random_access = true,
	};
	struct slat_vm_stats s;

	REQUIRE(add_slot(vm, 0, 4 * GiB, 4 * GiB, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	REQUIRE(slat_vm_memstress_start(vm, &ms) == 0, "%s", slat_vm_error(vm));
	CHECK(slat_vm_memstress_iterate(vm) > 0, "%s", slat_vm_error(vm));
	slat_vm_memstress_stop(vm);
	slat_vm_stats_read(vm, &s);
	CHECK(s.mapped[2] == 4 * GiB / (2 * MiB), "2M blocks: %llu",
	      (unsigned long long)s.mapped[2]);
	slat_vm_destroy(vm);
}

/* The leaf at @gpa: its size and whether it is writable (0: none). */
static uint64_t leaf_at(struct slat_vm *vm, uint64_t gpa, bool *writable)
{
	struct slat_leaf leaf;

	if (slat_lookup(slat_vm_table(vm), slat_ipa(gpa), &leaf))
		return 0;
	*writable = (leaf.attrs & SLAT_W) != 0;
	return leaf.size;
}

/*
 * host_zero_page: a read of untouched THP-backed memory maps the huge zero
 * page (a read-only block), the write that follows splits it (one notifier
 * unmap of the block, one copy) and maps a writable page; a second page of
 * the block reads a small zero page and copies it on write; no block is
 * mapped there again, not even by recovery. An untouched block written
 * first gets a writable block at once. 4K anonymous memory copies the
 * zero page page by page; synthetic_1gb (hugetlb) has no zero page.
 */
static void host_zero_page_follows_linux(void)
{
	struct slat_vm_config cfg = { .host_zero_page = true };
	struct slat_vm *vm = new_vm(&cfg);
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	struct slat_vm_stats st;
	uint64_t b = 1 * GiB, val = 0;
	bool w = false;

	REQUIRE(add_slot(vm, 0, b, 8 * MiB, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, b + 0x1000, &val) == 0, "read");
	CHECK(leaf_at(vm, b, &w) == 2 * MiB && !w, "huge zero page: a read-only block");
	CHECK(slat_vcpu_write64(v, b + 0x1000, 1) == 0, "write");
	CHECK(leaf_at(vm, b + 0x1000, &w) == 4096 && w, "the copy: a writable page");
	CHECK(leaf_at(vm, b + 0x2000, &w) == 0, "the rest of the block unmapped");
	CHECK(slat_vcpu_read64(v, b + 0x2000, &val) == 0 && val == 0, "read");
	CHECK(leaf_at(vm, b + 0x2000, &w) == 4096 && !w, "a small zero page");
	CHECK(slat_vcpu_write64(v, b + 0x2000, 2) == 0, "write");
	CHECK(leaf_at(vm, b + 0x2000, &w) == 4096 && w, "copied");
	CHECK(slat_vcpu_write64(v, b + 2 * MiB, 3) == 0, "write");
	CHECK(leaf_at(vm, b + 2 * MiB, &w) == 2 * MiB && w, "a huge page at once");
	slat_vm_stats_read(vm, &st);
	CHECK(st.host_thp_splits == 1 && st.host_cow == 2 && st.host_invals == 2,
	      "splits %llu copies %llu unmaps %llu",
	      (unsigned long long)st.host_thp_splits,
	      (unsigned long long)st.host_cow, (unsigned long long)st.host_invals);
	CHECK(st.fault_again == 2, "each copy retried its fault: %llu",
	      (unsigned long long)st.fault_again);
	/* logging on and off, recovery promoting: the split block stays */
	CHECK(add_slot(vm, 0, b, 8 * MiB, "synthetic_2mb",
		       SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
	CHECK(add_slot(vm, 0, b, 8 * MiB, "synthetic_2mb", 0) == 0, "%s",
	      slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, b + 0x3000, &val) == 0, "read");
	CHECK(leaf_at(vm, b + 0x3000, &w) == 4096, "no block over split memory");

	REQUIRE(add_slot(vm, 1, 2 * GiB, 2 * MiB, "anonymous", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, 2 * GiB, &val) == 0 && val == 0, "read");
	CHECK(leaf_at(vm, 2 * GiB, &w) == 4096 && !w, "4K zero page");
	CHECK(slat_vcpu_write64(v, 2 * GiB, 5) == 0 &&
		      slat_vcpu_read64(v, 2 * GiB, &val) == 0 && val == 5,
	      "copy holds the write");
	CHECK(leaf_at(vm, 2 * GiB, &w) == 4096 && w, "copied");

	/* host pages follow the slot, not the IPA: at a base 4K past a 2M
	 * boundary the huge zero page is mapped as pages, and its split
	 * unmaps the slot's first 2M; a last 2M the slot only partly
	 * covers has small pages */
	uint64_t u = 3 * GiB + 4096;
	REQUIRE(add_slot(vm, 3, u, 4 * MiB, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, u, &val) == 0 &&
		      slat_vcpu_read64(v, u + 0x1000, &val) == 0, "reads");
	CHECK(leaf_at(vm, u + 0x1000, &w) == 4096 && !w, "zero page, as pages");
	CHECK(slat_vcpu_write64(v, u, 7) == 0, "write");
	CHECK(leaf_at(vm, u, &w) == 4096 && w && leaf_at(vm, u + 0x1000, &w) == 0,
	      "the split unmapped the backing page's other pages");
	if (slat_vm_backing_available("anonymous_thp", 3 * MiB, NULL, 0)) {
		uint64_t a = 5 * GiB;
		REQUIRE(add_slot(vm, 4, a, 3 * MiB, "anonymous_thp", 0) == 0,
			"%s", slat_vm_error(vm));
		CHECK(slat_vcpu_read64(v, a + 2 * MiB, &val) == 0 && val == 0,
		      "read");
		CHECK(leaf_at(vm, a + 2 * MiB, &w) == 4096 && !w,
		      "a partial backing page: the small zero page");
		CHECK(slat_vcpu_write64(v, a + 2 * MiB, 8) == 0 &&
			      slat_vcpu_read64(v, a + 2 * MiB, &val) == 0 &&
			      val == 8, "copy holds the write");
	}
	slat_vm_stats_read(vm, &st);
	CHECK(st.host_thp_splits == 2, "splits %llu",
	      (unsigned long long)st.host_thp_splits);

	REQUIRE(add_slot(vm, 2, 4 * GiB, 1 * GiB, "synthetic_1gb", 0) == 0, "%s",
		slat_vm_error(vm));
	CHECK(slat_vcpu_read64(v, 4 * GiB, &val) == 0, "read");
	CHECK(leaf_at(vm, 4 * GiB, &w) == GiB && w, "hugetlb: no zero page");
	slat_vm_destroy(vm);
}

int main(void)
{
	RUN(memslot_errors_are_clear);
	RUN_FMTS(every_backing_reads_last_written);
	RUN(mapping_size_follows_alignment_and_slot);
	RUN_FMTS(block_sizes_follow_the_granule);
	RUN_FMTS(slot_moves_while_vcpus_run);
	RUN(no_access_outside_slots);
	RUN(memstress_iterations_fault_once);
	RUN(vcpus_pin_to_pcpus);
	RUN(synthetic_many_vcpus);
	RUN(host_zero_page_follows_linux);
	return check_failures ? 1 : 0;
}
