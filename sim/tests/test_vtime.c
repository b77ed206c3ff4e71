/* SPDX-License-Identifier: MIT */
/*
 * The deterministic mode: vCPUs that race on one block give the same
 * counts every run, and the race is decided in virtual time (the winner's
 * clean is overlapped by the others' faults, a writer waits for readers),
 * whatever the host does.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

#define NR 4
#define BLOCK (2 * MiB)
#define BASE (4 * GiB)

static struct slat_vm_config vt_config(enum slat_vm_cmo_placement cmo,
				       uint32_t seed)
{
	struct slat_vm_config cfg = {
		.cmo = cmo,
		/* 5 ns per line: a 2M clean takes 163.84 us of virtual time. */
		.synthetic_clean_ns_per_line = 5,
		.vtime = { .on = true, .seed = seed, .fault_exit = 1500,
			   .dsb = 1000, .tlbi_ipa = 100, .tlbi_ipa_local = 20,
			   .tlbi_range = 150, .tlbi_vmid = 200 },
	};
	return cfg;
}

struct writer {
	uint64_t gpa;
	int err;
};

static void write_one(struct slat_vcpu *v, void *arg)
{
	struct writer *w = arg;

	w->err = slat_vcpu_write64(v, w->gpa, slat_vcpu_id(v));
}

/* NR vCPUs each write one page of one 2M block (of a 2M backing), all
 * started at virtual time 0; the stats after. */
static void race_on_block(const struct slat_vm_config *cfg, bool logging,
			  struct slat_vm_stats *st)
{
	struct slat_vm *vm = new_vm(cfg);
	struct writer w[NR];

	REQUIRE(add_slot(vm, 1, BASE, BLOCK, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	if (logging) {
		/* The block mapped, then write-protected by logging. */
		struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
		struct writer first = { BASE, 0 };

		REQUIRE(slat_vcpu_run(v, write_one, &first) == 0, "run");
		slat_vcpu_join(v);
		REQUIRE(first.err == 0, "first write: %d", first.err);
		REQUIRE(add_slot(vm, 1, BASE, BLOCK, "synthetic_2mb",
				 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "logging");
	}
	slat_vm_stats_read(vm, st);
	for (uint32_t i = 0; i < NR; i++) {
		struct slat_vcpu *v = slat_vm_vcpu(vm, i);

		if (!v)
			v = slat_vm_create_vcpu(vm, i, NULL);
		w[i] = (struct writer){ BASE + (i + 1) * 4096, 0 };
		REQUIRE(slat_vcpu_run(v, write_one, &w[i]) == 0, "run %u", i);
	}
	for (uint32_t i = 0; i < NR; i++) {
		slat_vcpu_join(slat_vm_vcpu(vm, i));
		CHECK(w[i].err == 0, "vCPU %u: %d", i, w[i].err);
	}
	struct slat_vm_stats before = *st, after;

	slat_vm_stats_read(vm, &after);
	slat_vm_stats_diff(&before, &after, st);
	slat_vm_destroy(vm);
}

/* The counters, the host's times (fault_ns, shootdown_ns, cmo_ns) zeroed. */
static void counts_only(struct slat_vm_stats *s)
{
	s->fault_ns = s->shootdown_ns = s->cmo_ns = 0;
}

static void racing_faults_give_the_same_counts_every_run(void)
{
	for (int cmo = 0; cmo < 2; cmo++) {
		struct slat_vm_config cfg = vt_config(cmo, 7);
		struct slat_vm_stats first, st;

		race_on_block(&cfg, false, &first);
		counts_only(&first);
		for (int run = 0; run < 5; run++) {
			race_on_block(&cfg, false, &st);
			counts_only(&st);
			CHECK(!memcmp(&st, &first, sizeof(st)),
			      "cmo %d, run %d: faults %llu, first %llu", cmo, run,
			      (unsigned long long)st.faults[SLAT_VM_FAULT_TRANSLATION],
			      (unsigned long long)first.faults[SLAT_VM_FAULT_TRANSLATION]);
		}
	}
}

/*
 * In the walker, one vCPU maps and cleans the block; the others meet its
 * locked entry and fault again every exit (1.5 us) until the clean
 * (163.84 us) is over: about 109 faults each, not a count that depends on
 * how long the host took to clean.
 */
static void the_winners_clean_is_overlapped_by_retries(void)
{
	struct slat_vm_config cfg = vt_config(SLAT_VM_CMO_IN_WALKER, 1);
	uint64_t per, faults;
	struct slat_vm_stats st;

	race_on_block(&cfg, false, &st);
	faults = st.faults[SLAT_VM_FAULT_TRANSLATION];
	per = (faults - 1) / (NR - 1);
	CHECK(st.cmo_calls == 1 && st.cmo_bytes == BLOCK, "one clean: %llu",
	      (unsigned long long)st.cmo_calls);
	CHECK(st.mapped[2] == 1, "one block mapped");
	CHECK(per >= 105 && per <= 115, "faults per loser %llu",
	      (unsigned long long)per);
	CHECK(st.fault_again >= (NR - 1) * 100, "retries %llu",
	      (unsigned long long)st.fault_again);
	/* Before map: every vCPU cleans the block before it maps, so all
	 * of them, not one, pay for it. */
	cfg = vt_config(SLAT_VM_CMO_BEFORE_MAP, 1);
	race_on_block(&cfg, false, &st);
	CHECK(st.cmo_calls == NR, "every faulting vCPU cleans: %llu",
	      (unsigned long long)st.cmo_calls);
	CHECK(st.faults[SLAT_VM_FAULT_TRANSLATION] == NR, "one fault each: %llu",
	      (unsigned long long)st.faults[SLAT_VM_FAULT_TRANSLATION]);
}

/*
 * Faults that take mmu_lock for writing (arm64 before Linux 6.2) never
 * meet a locked entry: the first maps and cleans the block while the
 * others wait for the lock, then find it mapped (one fault each, no
 * retry); before the map every one of them cleans it, inside the lock.
 */
static void faults_under_the_write_lock_wait_instead_of_retrying(void)
{
	struct slat_vm_config cfg = vt_config(SLAT_VM_CMO_IN_WALKER, 1);
	struct slat_vm_stats st;
	int err = 0;

	cfg.fault_lock = SLAT_VM_FAULT_LOCK_WRITE;
	race_on_block(&cfg, false, &st);
	CHECK(st.faults[SLAT_VM_FAULT_TRANSLATION] == NR, "one fault each: %llu",
	      (unsigned long long)st.faults[SLAT_VM_FAULT_TRANSLATION]);
	CHECK(st.cmo_calls == 1 && st.mapped[2] == 1, "one clean: %llu",
	      (unsigned long long)st.cmo_calls);
	/* The others' maps find the block there and keep it. */
	CHECK(st.maps == NR && st.fault_again == 0 && st.table.retries == 0,
	      "no retry: %llu maps, %llu again, %llu retries",
	      (unsigned long long)st.maps, (unsigned long long)st.fault_again,
	      (unsigned long long)st.table.retries);
	cfg.cmo = SLAT_VM_CMO_BEFORE_MAP;
	race_on_block(&cfg, false, &st);
	CHECK(st.faults[SLAT_VM_FAULT_TRANSLATION] == NR && st.cmo_calls == NR,
	      "every fault cleans: %llu faults, %llu cleans",
	      (unsigned long long)st.faults[SLAT_VM_FAULT_TRANSLATION],
	      (unsigned long long)st.cmo_calls);
	cfg.fault_lock = SLAT_VM_FAULT_LOCK_WRITE + 1;
	CHECK(!slat_vm_create(&cfg, &err) && err == -EINVAL,
	      "an unknown fault lock refused");
}

/*
 * NR writes at virtual time 0 to a block logging write-protected: each
 * takes a permission fault; the first to get mmu_lock for write breaks
 * the block and maps its page, the others wait for the lock, then find a
 * table without their page and map it.
 */
static void concurrent_writes_break_a_protected_block_once(void)
{
	struct slat_vm_config cfg = vt_config(SLAT_VM_CMO_IN_WALKER, 3);
	struct slat_vm_stats st;

	race_on_block(&cfg, true, &st);
	CHECK(st.faults[SLAT_VM_FAULT_PERMISSION] == NR, "permission faults %llu",
	      (unsigned long long)st.faults[SLAT_VM_FAULT_PERMISSION]);
	CHECK(st.table.written[SLAT_WRITE_BREAK] == 1, "one break: %llu",
	      (unsigned long long)st.table.written[SLAT_WRITE_BREAK]);
	CHECK(st.table.tlbi[SLAT_TLBI_IPA] == 1, "one TLBI by IPA");
	CHECK(st.faults[SLAT_VM_FAULT_TRANSLATION] == NR - 1,
	      "the others map their pages: %llu",
	      (unsigned long long)st.faults[SLAT_VM_FAULT_TRANSLATION]);
	CHECK(st.table.written[SLAT_WRITE_LEAF] == NR, "a leaf each");
}

/* A host thread burning the CPUs changes nothing: no host time enters. */
static atomic_bool stop_burning;

static void *burn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_burning))
		;
	return NULL;
}

static void a_busy_host_changes_nothing(void)
{
	struct slat_vm_config cfg = vt_config(SLAT_VM_CMO_IN_WALKER, 11);
	struct slat_vm_stats quiet, busy;
	pthread_t th[2];

	race_on_block(&cfg, false, &quiet);
	atomic_store(&stop_burning, false);
	for (int i = 0; i < 2; i++)
		REQUIRE(!pthread_create(&th[i], NULL, burn, NULL), "thread");
	race_on_block(&cfg, false, &busy);
	atomic_store(&stop_burning, true);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	counts_only(&quiet);
	counts_only(&busy);
	CHECK(!memcmp(&quiet, &busy, sizeof(busy)), "faults %llu against %llu",
	      (unsigned long long)busy.faults[SLAT_VM_FAULT_TRANSLATION],
	      (unsigned long long)quiet.faults[SLAT_VM_FAULT_TRANSLATION]);
}

/* memstress in the deterministic mode: each iteration's passes run on the
 * calling thread, every page written once per pass. */
static void memstress_runs_passes_in_virtual_time(void)
{
	struct slat_vm_config cfg = vt_config(SLAT_VM_CMO_IN_WALKER, 5);
	struct slat_vm *vm = new_vm(&cfg);
	struct slat_vm_memstress ms = { .gpa = BASE, .bytes_per_vcpu = MiB,
					.nr_vcpus = NR, .write_percent = 100 };
	struct slat_vm_stats st;

	REQUIRE(add_slot(vm, 1, BASE, NR * MiB, "synthetic", 0) == 0, "slot");
	REQUIRE(slat_vm_memstress_start(vm, &ms) == 0, "%s", slat_vm_error(vm));
	for (int i = 0; i < 2; i++)
		CHECK(slat_vm_memstress_iterate(vm) >= 0, "%s", slat_vm_error(vm));
	slat_vm_memstress_stop(vm);
	slat_vm_stats_read(vm, &st);
	CHECK(st.accesses == 2 * NR * MiB / 4096, "accesses %llu",
	      (unsigned long long)st.accesses);
	CHECK(st.faults[SLAT_VM_FAULT_TRANSLATION] == NR * MiB / 4096,
	      "a fault per page: %llu",
	      (unsigned long long)st.faults[SLAT_VM_FAULT_TRANSLATION]);
	slat_vm_destroy(vm);
}

int main(void)
{
	RUN(racing_faults_give_the_same_counts_every_run);
	RUN(the_winners_clean_is_overlapped_by_retries);
	RUN(faults_under_the_write_lock_wait_instead_of_retrying);
	RUN(concurrent_writes_break_a_protected_block_once);
	RUN(a_busy_host_changes_nothing);
	RUN(memstress_runs_passes_in_virtual_time);
	return check_failures ? 1 : 0;
}
