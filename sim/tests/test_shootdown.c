/* SPDX-License-Identifier: MIT */
/*
 * TLB invalidation reaches every vCPU: once an unmap, a remap or a slot
 * deletion has returned, no vCPU observes memory through the old
 * translation, while vCPUs keep hitting in their TLBs.
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>

#define G0 (1ull << 32)      /* the guest page the vCPUs read */
/* Written to the page a translation left, once the change returned: only
 * an access through the old translation can read it. */
#define POISON 0xdeaddeaddeaddeadull

/*
 * A seqcount: odd while the host changes the translation, even while it is
 * stable. A read that begins and ends at the same even count happened after
 * the change of that period returned, so it must see the period's value.
 */
struct reader {
	uint64_t seq;
	uint64_t old[128];       /* per stable period: the value it replaced */
	bool stop;
	uint64_t reads, stale, exits;
};

static void reader_guest(struct slat_vcpu *v, void *arg)
{
	struct reader *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t s1 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE), val = 0;
		int ret = slat_vcpu_read64(v, G0, &val);
		uint64_t s2 = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);

		if (ret) {
			__atomic_fetch_add(&r->exits, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_fetch_add(&r->reads, 1, __ATOMIC_RELAXED);
		if ((s1 == s2 && !(s1 & 1) && s1 && val == r->old[s1 / 2]) ||
		    val == POISON)
			__atomic_fetch_add(&r->stale, 1, __ATOMIC_RELAXED);
	}
}

static void change_begin(struct reader *r, unsigned p, uint64_t old)
{
	r->old[p] = old;
	__atomic_store_n(&r->seq, 2 * p - 1, __ATOMIC_SEQ_CST);
}

static void change_end(struct reader *r, unsigned p)
{
	__atomic_store_n(&r->seq, 2 * p, __ATOMIC_SEQ_CST);
}

static void wait_reads(struct reader *r, uint64_t n)
{
	uint64_t start = __atomic_load_n(&r->reads, __ATOMIC_RELAXED);

	while (__atomic_load_n(&r->reads, __ATOMIC_RELAXED) < start + n)
		sched_yield();
}

static void start_readers(struct slat_vm *vm, struct reader *r, int n)
{
	for (int i = 0; i < n; i++) {
		struct slat_vcpu *v = slat_vm_create_vcpu(vm, (uint32_t)i, NULL);

		REQUIRE(v && slat_vcpu_run(v, reader_guest, r) == 0, "vCPU");
	}
}

static void stop_readers(struct slat_vm *vm, struct reader *r, int n)
{
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++)
		slat_vcpu_join(slat_vm_vcpu(vm, (uint32_t)i));
}

/* Remap G0 between two host pages with each invalidation policy. */
static void remap_is_never_seen_stale(enum slat_tlbi_policy policy, bool via_map)
{
	struct slat_vm *vm = new_fmt_vm();
	struct slat_table *t = slat_vm_table(vm);
	uint64_t g = cur_fmt->granule;
	struct reader r = { 0 };
	slat_pa_t pa[2];
	uint64_t vals[2] = { 0xAAAAAAAAAAAAAAAAull, 0xBBBBBBBBBBBBBBBBull };

	REQUIRE(add_slot(vm, 0, G0, 2 * MiB, "anonymous", 0) == 0, "%s",
		slat_vm_error(vm));
	/* The second page of the slot holds the other value. */
	slat_vm_host_write(vm, G0, &vals[0], 8);
	slat_vm_host_write(vm, G0 + g, &vals[1], 8);
	slat_vm_gpa_to_hpa(vm, G0, &pa[0]);
	slat_vm_gpa_to_hpa(vm, G0 + g, &pa[1]);
	/* The other formats run fewer changes. */
	unsigned periods = cur_fmt == &test_fmts[0] ? 80 : 30;

	start_readers(vm, &r, 3);
	for (unsigned p = 1; p < periods; p++) {
		unsigned to = p & 1;

		wait_reads(&r, 50);
		change_begin(&r, p, vals[!to]);
		slat_vm_host_write(vm, G0 + to * g, &vals[to], 8);
		slat_vm_mmu_lock(vm);
		if (!via_map)
			CHECK(slat_unmap(t, slat_ipa(G0), g,
					 SLAT_OP(.flush = policy)) == 0,
			      "unmap");
		int ret = slat_map(t, slat_ipa(G0), g, pa[to], SLAT_RW,
				   SLAT_OP(.cache = slat_vm_host_cache(vm, 8)));
		CHECK(ret == 0, "map: %s", slat_strerror(ret));
		slat_vm_mmu_unlock(vm);
		change_end(&r, p);
		uint64_t poison = POISON;
		slat_vm_host_write(vm, G0 + !to * g, &poison, 8);
	}
	wait_reads(&r, 50);
	stop_readers(vm, &r, 3);
	CHECK(r.stale == 0, "policy %d%s: %llu stale reads of %llu", policy,
	      via_map ? " (map over map)" : "", (unsigned long long)r.stale,
	      (unsigned long long)r.reads);
	struct slat_vm_stats s;
	slat_vm_stats_read(vm, &s);
	CHECK(s.tlb_hits > s.tlb_misses, "the readers hit in their TLBs");
	CHECK(s.shootdowns >= periods - 1, "a shootdown per change");
	slat_vm_destroy(vm);
}

static void unmap_per_entry_invalidation_reaches_every_vcpu(void)
{
	remap_is_never_seen_stale(SLAT_FLUSH_ENTRY, false);
}

static void unmap_range_invalidation_reaches_every_vcpu(void)
{
	remap_is_never_seen_stale(SLAT_FLUSH_RANGE, false);
}

static void unmap_vmid_invalidation_reaches_every_vcpu(void)
{
	remap_is_never_seen_stale(SLAT_FLUSH_VMID, false);
}

static void break_before_make_reaches_every_vcpu(void)
{
	remap_is_never_seen_stale(SLAT_FLUSH_RANGE, true);
}

/* Delete the slot (its memory is unmapped from the host: a stale access
 * would crash) and create another one at the same guest address. */
static void deleted_slot_is_never_reached(void)
{
	struct slat_vm *vm = new_fmt_vm();
	struct reader r = { 0 };
	const char *backs[2] = { "anonymous", "shmem" };

	REQUIRE(add_slot(vm, 0, G0, 2 * MiB, backs[0], 0) == 0, "%s",
		slat_vm_error(vm));
	uint64_t v0 = 100;
	slat_vm_host_write(vm, G0, &v0, 8);
	start_readers(vm, &r, 2);
	for (unsigned p = 1; p < 20; p++) {
		uint64_t val = 100 + p;

		wait_reads(&r, 100);
		change_begin(&r, p, val - 1);
		CHECK(add_slot(vm, p - 1, 0, 0, NULL, 0) == 0, "delete: %s",
		      slat_vm_error(vm));
		change_end(&r, p);
		/* The new slot reads zeros, then the new value: never the
		 * deleted slot's. */
		CHECK(add_slot(vm, p, G0, 2 * MiB, backs[p & 1], 0) == 0, "%s",
		      slat_vm_error(vm));
		slat_vm_host_write(vm, G0, &val, 8);
	}
	wait_reads(&r, 100);
	stop_readers(vm, &r, 2);
	CHECK(r.stale == 0, "%llu stale reads", (unsigned long long)r.stale);
	slat_vm_destroy(vm);
}

int main(void)
{
	RUN_FMTS(unmap_per_entry_invalidation_reaches_every_vcpu);
	RUN_FMTS(unmap_range_invalidation_reaches_every_vcpu);
	RUN_FMTS(unmap_vmid_invalidation_reaches_every_vcpu);
	RUN_FMTS(break_before_make_reaches_every_vcpu);
	RUN_FMTS(deleted_slot_is_never_reached);
	return check_failures ? 1 : 0;
}
