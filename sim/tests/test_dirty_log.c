/* SPDX-License-Identifier: MIT */
/*
 * Dirty logging loses nothing. A live migration is played: vCPUs keep
 * writing while the host copies guest memory, then only the pages the dirty
 * log reports, round after round; after the vCPUs stop and a last round,
 * the copy must equal guest memory. Every mode: write protection, manual
 * protect (with and without initially-set), eager splitting, hardware dirty
 * state, the dirty ring. Also: every page written by a quiesced iteration is
 * in the next log, and CLEAR_DIRTY_LOG's alignment errors.
 */
#include "check.h"

#include <sched.h>
#include <time.h>

#define BASE (4 * GiB)
#define NR_VCPUS 3
#define PER_VCPU (2 * MiB)
#define SIZE (NR_VCPUS * PER_VCPU)

/* The table granule of the current format, and pages in the region. */
static uint64_t G = 4096;
static uint64_t PAGES = SIZE / 4096;
static uint64_t *bm_buf;            /* PAGES bits */

struct mode {
	const char *name;
	const char *backing;
	uint32_t manual;          /* cap MANUAL_DIRTY_LOG_PROTECT2 */
	uint64_t eager;           /* eager split chunk */
	bool hw_dirty;
	uint32_t ring;            /* ring entries */
	enum slat_vm_recovery recovery;
};

struct writer {
	bool stop;
	uint32_t stopped;
	uint64_t writes;
};

static void writer_guest(struct slat_vcpu *v, void *arg)
{
	struct writer *w = arg;
	uint32_t seed = slat_vcpu_id(v) * 7919 + 17;
	uint64_t base = BASE + slat_vcpu_id(v) * PER_VCPU, n = 0;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		seed = seed * 1103515245u + 12345u;
		uint64_t page = (seed >> 8) % (PER_VCPU / G);
		uint64_t off = ((seed >> 4) & 7) * (G / 8);

		if (slat_vcpu_write64(v, base + page * G + off,
				      ((uint64_t)slat_vcpu_id(v) << 56) | ++n)) {
			fprintf(stderr, "vCPU write failed\n");
			abort();
		}
	}
	__atomic_fetch_add(&w->writes, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&w->stopped, 1, __ATOMIC_RELEASE);
}

static void copy_page(struct slat_vm *vm, uint8_t *copy, uint64_t page)
{
	slat_vm_host_read(vm, BASE + page * G, copy + page * G, G);
}

/* One round of the migration: copy what the log reports. */
static uint64_t collect(struct slat_vm *vm, const struct mode *m, uint8_t *copy)
{
	uint64_t n = 0;

	uint64_t *bm = bm_buf;

	if (m->ring) {
		struct slat_vm_dirty_gfn g[256];

		memset(bm, 0, (PAGES + 63) / 64 * 8);
		for (uint32_t i = 0; i < NR_VCPUS; i++) {
			int k;

			while ((k = slat_vcpu_dirty_ring_harvest(slat_vm_vcpu(vm, i), g,
								  256)) > 0)
				for (int j = 0; j < k; j++)
					bm[g[j].offset / 64] |= 1ull << (g[j].offset % 64);
		}
		/* Copy after the reset: a page written since the harvest
		 * stays writable until then. */
		CHECK(slat_vm_reset_dirty_rings(vm) >= 0, "reset");
		for (uint64_t p = 0; p < PAGES; p++)
			if (bm[p / 64] >> (p % 64) & 1) {
				copy_page(vm, copy, p);
				n++;
			}
		return n;
	}
	int ret = slat_vm_get_dirty_log(vm, 0, bm);

	CHECK(ret == 0, "get: %s", slat_vm_error(vm));
	if (m->manual) {
		ret = slat_vm_clear_dirty_log(vm, 0, 0, PAGES, bm);
		CHECK(ret == 0, "clear: %s", slat_vm_error(vm));
	}
	for (uint64_t p = 0; p < PAGES; p++)
		if (bm[p / 64] >> (p % 64) & 1) {
			copy_page(vm, copy, p);
			n++;
		}
	return n;
}

static void nothing_lost(const struct mode *m)
{
	struct slat_vm_config cfg = fmt_config(m->hw_dirty ? SLAT_FEAT_HWDIRTY : 0);
	struct slat_vm *vm;
	struct writer w = { 0 };
	uint8_t *copy = malloc(SIZE), *now = malloc(SIZE);
	uint64_t reported = 0;
	/* The eager chunk is the table's smallest block (2M, 32M, 512M); a
	 * THP backing makes such blocks only with the 4K granule. */
	bool blocks;

	cfg.hw_dirty = m->hw_dirty;
	cfg.recovery = m->recovery;
	vm = new_vm(&cfg);
	blocks = smallest_block(vm) <= slat_vm_backing_page_size(m->backing);
	G = cur_fmt->granule;
	PAGES = SIZE / G;
	bm_buf = realloc(bm_buf, (PAGES + 63) / 64 * 8);
	REQUIRE(copy && now && bm_buf, "memory");
	if (m->manual)
		REQUIRE(slat_vm_enable_cap(vm, SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
					   m->manual) == 0, "cap");
	if (m->eager)
		REQUIRE(slat_vm_enable_cap(vm, SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE,
					   smallest_block(vm)) == 0, "%s",
			slat_vm_error(vm));
	if (m->ring)
		REQUIRE(slat_vm_enable_cap(vm, SLAT_VM_CAP_DIRTY_LOG_RING, m->ring) == 0,
			"%s", slat_vm_error(vm));
	REQUIRE(add_slot(vm, 0, BASE, SIZE, m->backing, 0) == 0, "%s",
		slat_vm_error(vm));
	for (uint32_t i = 0; i < NR_VCPUS; i++)
		REQUIRE(slat_vm_create_vcpu(vm, i, NULL), "vcpu");
	/* Populate without logging, so blocks exist where the backing allows. */
	for (uint64_t off = 0; off < SIZE; off += G)
		slat_vcpu_write64(slat_vm_vcpu(vm, (uint32_t)(off / PER_VCPU)),
				  BASE + off, off);
	for (uint32_t i = 0; i < NR_VCPUS; i++)
		slat_vcpu_run(slat_vm_vcpu(vm, i), writer_guest, &w);

	REQUIRE(add_slot(vm, 0, BASE, SIZE, m->backing,
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "enable: %s",
		slat_vm_error(vm));
	slat_vm_host_read(vm, BASE, copy, SIZE);
	for (int round = 0; round < 8; round++) {
		struct timespec ts = { 0, 3 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		reported += collect(vm, m, copy);
	}
	__atomic_store_n(&w.stop, true, __ATOMIC_RELEASE);
	/* A vCPU waiting for room in its ring needs resets to stop. */
	while (__atomic_load_n(&w.stopped, __ATOMIC_ACQUIRE) < NR_VCPUS)
		reported += collect(vm, m, copy);
	for (uint32_t i = 0; i < NR_VCPUS; i++)
		slat_vcpu_join(slat_vm_vcpu(vm, i));
	/* Until the log is empty: with hardware dirty state a ring holds
	 * fewer pages than may be dirty. */
	for (uint64_t k; (k = collect(vm, m, copy)) > 0;)
		reported += k;

	slat_vm_host_read(vm, BASE, now, SIZE);
	uint64_t lost = 0;
	for (uint64_t p = 0; p < PAGES; p++)
		lost += memcmp(copy + p * G, now + p * G, G) != 0;
	CHECK(lost == 0, "%s: %llu pages lost (%llu writes, %llu reported)",
	      m->name, (unsigned long long)lost, (unsigned long long)w.writes,
	      (unsigned long long)reported);
	CHECK(w.writes > 0 && reported > 0, "%s: the vCPUs wrote", m->name);

	struct slat_vm_stats s;
	slat_vm_stats_read(vm, &s);
	if (m->eager && blocks)
		CHECK(s.table.written[SLAT_WRITE_TABLE] > 0, "eager split tables");
	REQUIRE(add_slot(vm, 0, BASE, SIZE, m->backing, 0) == 0, "disable: %s",
		slat_vm_error(vm));
	if (m->recovery == SLAT_VM_RECOVER_PROMOTE && blocks) {
		struct slat_leaf leaf;

		CHECK(slat_lookup(slat_vm_table(vm), slat_ipa(BASE), &leaf) == 0 &&
			      leaf.size == smallest_block(vm), "promoted back to a block");
	}
	slat_vm_destroy(vm);
	free(copy);
	free(now);
}

static const struct mode modes[] = {
	{ "wrprotect", "anonymous", 0, 0, false, 0, SLAT_VM_RECOVER_NONE },
	{ "wrprotect-thp-eager", "anonymous_thp", 0, 2 * MiB, false, 0,
	  SLAT_VM_RECOVER_PROMOTE },
	{ "wrprotect-thp-no-eager", "anonymous_thp", 0, 0, false, 0,
	  SLAT_VM_RECOVER_ZAP_TABLE },
	{ "manual", "anonymous", SLAT_VM_MANUAL_PROTECT_ENABLE, 0, false, 0,
	  SLAT_VM_RECOVER_NONE },
	{ "manual-initially-set-eager", "anonymous_thp",
	  SLAT_VM_MANUAL_PROTECT_ENABLE | SLAT_VM_INITIALLY_SET, 2 * MiB, false, 0,
	  SLAT_VM_RECOVER_ZAP_LEAF },
	{ "manual-initially-set", "shmem",
	  SLAT_VM_MANUAL_PROTECT_ENABLE | SLAT_VM_INITIALLY_SET, 0, false, 0,
	  SLAT_VM_RECOVER_NONE },
	{ "hwdirty", "anonymous", 0, 0, true, 0, SLAT_VM_RECOVER_NONE },
	{ "hwdirty-thp-eager", "anonymous_thp", 0, 2 * MiB, true, 0,
	  SLAT_VM_RECOVER_PROMOTE },
	{ "hwdirty-manual", "anonymous", SLAT_VM_MANUAL_PROTECT_ENABLE, 0, true, 0,
	  SLAT_VM_RECOVER_NONE },
	{ "ring", "anonymous", 0, 0, false, 1024, SLAT_VM_RECOVER_NONE },
	{ "ring-thp-eager", "anonymous_thp", 0, 2 * MiB, false, 256,
	  SLAT_VM_RECOVER_NONE },
	{ "hwdirty-ring", "anonymous", 0, 0, true, 1024, SLAT_VM_RECOVER_NONE },
	{ "hwdirty-ring-thp-eager", "anonymous_thp", 0, 2 * MiB, true, 256,
	  SLAT_VM_RECOVER_PROMOTE },
};

/*
 * Every mode on Arm 4K and 4-level EPT and NPT (2M blocks from THP); on
 * the others (no blocks from real backings with 16K and 64K granules;
 * 5-level EPT and NPT only add a level) the modes without eager splitting.
 */
static void nothing_lost_in_every_mode(void)
{
	bool all = cur_fmt == &test_fmts[0] ||
		   (fmt_x86() && cur_fmt->ia_bits <= 48);

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int before = check_failures;

		if (!all && (modes[i].eager || strcmp(modes[i].backing, "anonymous")))
			continue;

		nothing_lost(&modes[i]);
		printf("  %s %s\n", check_failures == before ? "ok" : "FAIL",
		       modes[i].name);
	}
}

/*
 * Quiesced: every page a finished iteration wrote is in the next log
 * (bitmap, ring; ring with hardware dirty state, where every page is
 * written and must be reaped exactly once).
 */
static void every_write_of_an_iteration_is_logged(void)
{
	for (int mode = 0; mode < 3; mode++) {
		bool ring = mode >= 1, hw = mode == 2;
		struct slat_vm_config cfg = fmt_config(hw ? SLAT_FEAT_HWDIRTY : 0);
		struct slat_vm *vm;

		cfg.hw_dirty = hw;
		vm = new_vm(&cfg);
		/* Blocks of the format's smallest block size: 2M for 4K,
		 * 32M and 512M for 16K and 64K (1G synthetic pages). */
		bool big = smallest_block(vm) > 2 * MiB;
		uint64_t size = big ? GiB : 128 * MiB, g = cur_fmt->granule;
		const char *backing = big ? "synthetic_1gb" : "synthetic_2mb";
		struct slat_vm_memstress ms = {
			.gpa = BASE, .bytes_per_vcpu = size / 2, .nr_vcpus = 2,
			.write_percent = hw ? 100 : 30, .random_access = !hw,
		};
		uint64_t words = size / g / 64;
		uint64_t *bm = calloc(words, 8);

		if (ring)
			REQUIRE(slat_vm_enable_cap(vm, SLAT_VM_CAP_DIRTY_LOG_RING,
						   hw ? 1 << 17 : 1 << 16) == 0,
				"%s", slat_vm_error(vm));
		REQUIRE(add_slot(vm, 0, BASE, size, backing, 0) == 0,
			"%s", slat_vm_error(vm));
		slat_vm_memstress_start(vm, &ms);
		slat_vm_memstress_iterate(vm);
		add_slot(vm, 0, BASE, size, backing, SLAT_VM_MEM_LOG_DIRTY_PAGES);
		for (int it = 0; it < 3; it++) {
			struct slat_vm_stats a, b;
			uint64_t logged = 0, entries = 0;

			slat_vm_stats_read(vm, &a);
			slat_vm_memstress_iterate(vm);
			slat_vm_stats_read(vm, &b);
			if (ring) {
				struct slat_vm_dirty_gfn g[512];
				int k;

				for (uint32_t i = 0; i < 2; i++)
					while ((k = slat_vcpu_dirty_ring_harvest(
							slat_vm_vcpu(vm, i), g, 512)) > 0)
						for (int j = 0; j < k; j++, entries++)
							bm[g[j].offset / 64] |= 1ull << (g[j].offset % 64);
				slat_vm_reset_dirty_rings(vm);
			} else {
				CHECK(slat_vm_get_dirty_log(vm, 0, bm) == 0, "get");
			}
			for (uint64_t i = 0; i < words; i++)
				logged += (uint64_t)__builtin_popcountll(bm[i]);
			memset(bm, 0, words * 8);
			/* Each first write to a page after its re-protection
			 * faults once and is logged once. */
			uint64_t faults = (b.faults[SLAT_VM_FAULT_PERMISSION] -
					   a.faults[SLAT_VM_FAULT_PERMISSION]) +
					  (b.faults[SLAT_VM_FAULT_TRANSLATION] -
					   a.faults[SLAT_VM_FAULT_TRANSLATION]);
			if (hw) {
				CHECK(logged == size / g && entries == logged,
				      "hardware dirty ring, iteration %d: %llu of "
				      "%llu pages, %llu entries", it,
				      (unsigned long long)logged,
				      (unsigned long long)(size / g),
				      (unsigned long long)entries);
				continue;
			}
			CHECK(logged > 0 && logged >= (b.dirty_marked - a.dirty_marked) &&
				      (ring ? b.ring_pushes - a.ring_pushes : logged) == logged,
			      "ring %d iteration %d: %llu logged, %llu faults", ring,
			      it, (unsigned long long)logged,
			      (unsigned long long)faults);
		}
		slat_vm_memstress_stop(vm);
		free(bm);
		slat_vm_destroy(vm);
	}
}

static void clear_dirty_log_checks_alignment(void)
{
	struct slat_vm *vm = new_vm(NULL);
	uint64_t bm[4] = { ~0ull, ~0ull, ~0ull, ~0ull };

	slat_vm_enable_cap(vm, SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
			   SLAT_VM_MANUAL_PROTECT_ENABLE);
	/* 200 pages: the last word is partial. */
	REQUIRE(add_slot(vm, 0, BASE, 200 * 4096, "anonymous",
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
	CHECK(slat_vm_clear_dirty_log(vm, 0, 1, 64, bm) == -EINVAL, "first page");
	CHECK(slat_vm_clear_dirty_log(vm, 0, 0, 63, bm) == -EINVAL, "length");
	CHECK(slat_vm_clear_dirty_log(vm, 0, 64, 137, bm) == -EINVAL, "beyond");
	CHECK(slat_vm_clear_dirty_log(vm, 0, 128, 72, bm) == 0,
	      "up to the end: %s", slat_vm_error(vm));
	CHECK(slat_vm_clear_dirty_log(vm, 0, 0, 128, bm) == 0, "aligned");
	CHECK(slat_vm_clear_dirty_log(vm, 1, 0, 64, bm) == -ENOENT, "no slot");
	CHECK(slat_vm_get_dirty_log(vm, 0, bm) == 0, "get");
	slat_vm_destroy(vm);
}

/* The leaf at @gpa: its size (0: none) and whether it is writable. */
static uint64_t leaf_at(struct slat_vm *vm, uint64_t gpa, bool *w)
{
	struct slat_leaf l;

	if (slat_lookup(slat_vm_table(vm), slat_ipa(gpa), &l) != SLAT_OK)
		return 0;
	if (w)
		*w = (l.attrs & SLAT_W) != 0;
	return l.size;
}

static struct slat_vm_stats since(struct slat_vm *vm, struct slat_vm_stats *a)
{
	struct slat_vm_stats b, d;

	slat_vm_stats_read(vm, &b);
	slat_vm_stats_diff(a, &b, &d);
	*a = b;
	return d;
}

/* A slot of @bytes of THP at BASE, read by @v a block at a time (each
 * mapped as one), then logged: every block write-protected. */
static void blocks_then_logging(struct slat_vm *vm, struct slat_vcpu *v,
				uint64_t bytes)
{
	uint64_t x = 0;

	REQUIRE(add_slot(vm, 0, BASE, bytes, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	for (uint64_t off = 0; off < bytes; off += 2 * MiB)
		CHECK(slat_vcpu_read64(v, BASE + off, &x) == 0, "read");
	REQUIRE(leaf_at(vm, BASE, NULL) == 2 * MiB, "a block");
	REQUIRE(add_slot(vm, 0, BASE, bytes, "synthetic_2mb",
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
}

/*
 * A write to a 2M block write-protected for logging (no eager split; the
 * other block of the slot keeps their table from emptying). Arm
 * stage 2, as arm64 KVM: the block is broken (one store making it invalid,
 * one invalidation by IPA, nothing cleaned but the new page) and a new
 * table holds only the written page; another page of the block faults on
 * its own. EPT, as the TDP MMU: the block is split whole. Once logging is
 * off, a fault in the Arm block rebuilds it: the table is unlinked (one
 * invalidation by range) and the block mapped (one 2M clean).
 */
static void block_faults_under_logging(void)
{
	struct slat_vm *vm = new_fmt_vm();
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	bool arm = !fmt_x86(), w = true;
	struct slat_vm_stats a, d;
	uint64_t x = 0;

	G = cur_fmt->granule;
	if (G != 4096) { /* 2M is a block of 4K granules only */
		slat_vm_destroy(vm);
		return;
	}
	blocks_then_logging(vm, v, 4 * MiB);
	slat_vm_stats_read(vm, &a);
	CHECK(slat_vcpu_write64(v, BASE + 5 * G, 1) == 0, "write");
	d = since(vm, &a);
	CHECK(d.faults[SLAT_VM_FAULT_PERMISSION] == 1, "one permission fault");
	CHECK(leaf_at(vm, BASE + 5 * G, &w) == G && w, "the page, writable");
	if (arm) {
		CHECK(d.table.written[SLAT_WRITE_BREAK] == 1 &&
			      d.table.written[SLAT_WRITE_CLEAR] == 0 &&
			      d.table.tlbi[SLAT_TLBI_IPA] == 1 &&
			      d.table.tlbi[SLAT_TLBI_RANGE] == 0 &&
			      d.table.written[SLAT_WRITE_LEAF] == 1 &&
			      d.table.pages_alloc == 1 && d.cmo_bytes == G,
		      "break: break %llu, tlbi %llu, leaves %llu, clean %llu",
		      (unsigned long long)d.table.written[SLAT_WRITE_BREAK],
		      (unsigned long long)d.table.tlbi[SLAT_TLBI_IPA],
		      (unsigned long long)d.table.written[SLAT_WRITE_LEAF],
		      (unsigned long long)d.cmo_bytes);
		CHECK(leaf_at(vm, BASE, NULL) == 0 &&
			      leaf_at(vm, BASE + 6 * G, NULL) == 0,
		      "the rest is left to later faults");
		CHECK(slat_vcpu_read64(v, BASE + 6 * G, &x) == 0, "read");
		d = since(vm, &a);
		CHECK(d.faults[SLAT_VM_FAULT_TRANSLATION] == 1 &&
			      leaf_at(vm, BASE + 6 * G, &w) == G && !w,
		      "a read maps a read-only page");
	} else {
		CHECK(leaf_at(vm, BASE, &w) == G && !w &&
			      leaf_at(vm, BASE + 2 * MiB - G, NULL) == G,
		      "split whole, the rest read-only");
	}
	REQUIRE(add_slot(vm, 0, BASE, 4 * MiB, "synthetic_2mb", 0) == 0, "%s",
		slat_vm_error(vm));
	slat_vm_stats_read(vm, &a);
	CHECK(slat_vcpu_read64(v, BASE + 7 * G, &x) == 0, "read");
	d = since(vm, &a);
	if (arm) {
		CHECK(leaf_at(vm, BASE, NULL) == 2 * MiB &&
			      d.faults[SLAT_VM_FAULT_TRANSLATION] == 1 &&
			      d.table.tlbi[SLAT_TLBI_RANGE] == 1 &&
			      d.cmo_bytes == 2 * MiB,
		      "the block is rebuilt: leaf %llu, tlbi %llu, clean %llu",
		      (unsigned long long)leaf_at(vm, BASE, NULL),
		      (unsigned long long)d.table.tlbi[SLAT_TLBI_RANGE],
		      (unsigned long long)d.cmo_bytes);
	} else {
		CHECK(d.faults[SLAT_VM_FAULT_TRANSLATION] == 0 &&
			      leaf_at(vm, BASE, NULL) == G,
		      "every page mapped: no fault");
	}
	slat_vm_destroy(vm);
}

/* CLEAR_DIRTY_LOG (initially-set) of a block's first 64 pages protects the
 * whole block, as KVM; with wrprotect_split, libslat's split. */
/*
 * arm64: a block alone in its table is broken in place, as KVM's map
 * walker does: one invalidation by IPA and one table page, where unmapping
 * it first would free its table and take two.
 */
static void lone_block_breaks_in_place(void)
{
	struct slat_vm *vm = new_fmt_vm();
	struct slat_vcpu *v = slat_vm_create_vcpu(vm, 0, NULL);
	struct slat_vm_stats a, d;

	G = cur_fmt->granule;
	if (G != 4096 || fmt_x86()) {
		slat_vm_destroy(vm);
		return;
	}
	blocks_then_logging(vm, v, 2 * MiB);
	slat_vm_stats_read(vm, &a);
	CHECK(slat_vcpu_write64(v, BASE + 9 * G, 1) == 0, "write");
	d = since(vm, &a);
	CHECK(d.table.tlbi[SLAT_TLBI_IPA] + d.table.tlbi[SLAT_TLBI_RANGE] +
			      d.table.tlbi[SLAT_TLBI_VMID] == 1 &&
		      d.table.pages_alloc == 1 && d.table.pages_freed == 0,
	      "break in place: tlbi %llu + %llu, pages +%llu -%llu",
	      (unsigned long long)d.table.tlbi[SLAT_TLBI_IPA],
	      (unsigned long long)d.table.tlbi[SLAT_TLBI_RANGE],
	      (unsigned long long)d.table.pages_alloc,
	      (unsigned long long)d.table.pages_freed);
	CHECK(leaf_at(vm, BASE + 9 * G, NULL) == G &&
		      leaf_at(vm, BASE + 8 * G, NULL) == 0,
	      "the page alone");
	slat_vm_destroy(vm);
}

static void partial_wrprotect_of_a_block(void)
{
	G = cur_fmt->granule;
	for (int split = 0; split < 2 && G == 4096; split++) {
		struct slat_vm_config cfg = fmt_config(0);
		struct slat_vm *vm;
		struct slat_vcpu *v;
		uint64_t bm[1] = { ~0ull };
		bool w = true;

		cfg.wrprotect_split = split;
		vm = new_vm(&cfg);
		v = slat_vm_create_vcpu(vm, 0, NULL);
		slat_vm_enable_cap(vm, SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
				   SLAT_VM_MANUAL_PROTECT_ENABLE |
					   SLAT_VM_INITIALLY_SET);
		REQUIRE(add_slot(vm, 0, BASE, 2 * MiB, "synthetic_2mb", 0) == 0,
			"%s", slat_vm_error(vm));
		CHECK(slat_vcpu_write64(v, BASE, 1) == 0, "write");
		REQUIRE(add_slot(vm, 0, BASE, 2 * MiB, "synthetic_2mb",
				 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s",
			slat_vm_error(vm));
		CHECK(slat_vm_clear_dirty_log(vm, 0, 0, 64, bm) == 0, "clear");
		if (!split)
			CHECK(leaf_at(vm, BASE + 100 * G, &w) == 2 * MiB && !w,
			      "the whole block protected");
		else
			CHECK(leaf_at(vm, BASE + 100 * G, &w) == G && w &&
				      leaf_at(vm, BASE, &w) == G && !w,
			      "split: only the pages cleared protected");
		slat_vm_destroy(vm);
	}
}

/* @n writes by @v, one to each page from @first of the slot at BASE. */
static void write_pages(struct slat_vcpu *v, uint64_t first, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		CHECK(slat_vcpu_write64(v, BASE + (first + i) * G, i) == 0,
		      "write page %llu", (unsigned long long)(first + i));
}

/* The PML counts of @d: pages logged, PML-full exits, faults of @kind. */
static void check_pml(const struct slat_vm_stats *d, uint64_t logged,
		      uint64_t full, int kind, uint64_t faults, const char *what)
{
	CHECK(d->pml_logged == logged && d->pml_full_exits == full &&
		      d->faults[kind] == faults,
	      "%s: logged %llu (want %llu), full exits %llu (want %llu), "
	      "faults %llu (want %llu)", what,
	      (unsigned long long)d->pml_logged, (unsigned long long)logged,
	      (unsigned long long)d->pml_full_exits, (unsigned long long)full,
	      (unsigned long long)d->faults[kind], (unsigned long long)faults);
}

/*
 * PML on EPT (slat_vm_config.pml): a write that sets a clean page's dirty
 * bit is logged in the vCPU's 512 entries, no fault; the write that finds
 * them used exits first. 1025 pages: the 513th and the 1025th exit. A
 * dirty page is not logged again; any other exit (a fault) empties the
 * buffer; a write-protected block faults and logs nothing; PML refuses
 * a table without dirty state and Arm's tables.
 */
static void pml_logs_and_exits(void)
{
	struct slat_vm_config cfg = fmt_config(SLAT_FEAT_HWDIRTY);
	struct slat_vm_stats a, d;
	struct slat_vm *vm;
	struct slat_vcpu *v;
	uint64_t x = 0, *bm;
	int err = 0;

	cfg.hw_dirty = cfg.pml = true;
	if (cur_fmt->format != SLAT_FMT_EPT) {
		CHECK(!slat_vm_create(&cfg, &err) && err == -EINVAL,
		      "PML on Arm stage 2 refused");
		return;
	}
	cfg.hw_dirty = false;
	CHECK(!slat_vm_create(&cfg, &err) && err == -EINVAL,
	      "PML without hardware dirty state refused");
	cfg.hw_dirty = true;
	vm = new_vm(&cfg);
	v = slat_vm_create_vcpu(vm, 0, NULL);
	G = 4096;
	bm = calloc(8 * MiB / G / 64, sizeof(uint64_t));
	REQUIRE(bm && add_slot(vm, 0, BASE, 8 * MiB, "synthetic", 0) == 0, "%s",
		slat_vm_error(vm));
	write_pages(v, 0, 1025);
	slat_vm_stats_read(vm, &a);
	CHECK(a.pml_logged == 0, "logging off: nothing logged");
	REQUIRE(add_slot(vm, 0, BASE, 8 * MiB, "synthetic",
			 SLAT_VM_MEM_LOG_DIRTY_PAGES) == 0, "%s", slat_vm_error(vm));
	slat_vm_stats_read(vm, &a);
	write_pages(v, 0, 1025);
	write_pages(v, 0, 1025);
	d = since(vm, &a);
	check_pml(&d, 1025, 2, SLAT_VM_FAULT_PERMISSION, 0, "1025 pages");
	REQUIRE(slat_vm_get_dirty_log(vm, 0, bm) == 0, "%s", slat_vm_error(vm));
	for (uint64_t i = 0; i < 8 * MiB / G / 64; i++)
		x += (uint64_t)__builtin_popcountll(bm[i]);
	CHECK(x == 1025, "%llu pages in the log, want 1025",
	      (unsigned long long)x);
	/* 511 logged, a fault (the first touch of page 2000), 511 more: no
	 * PML-full exit, the fault emptied the buffer */
	slat_vm_stats_read(vm, &a);
	write_pages(v, 0, 511);
	CHECK(slat_vcpu_read64(v, BASE + 2000 * G, &x) == 0, "read");
	write_pages(v, 511, 511);
	d = since(vm, &a);
	check_pml(&d, 1022, 0, SLAT_VM_FAULT_TRANSLATION, 1,
		  "a fault empties the buffer");
	slat_vm_destroy(vm);
	free(bm);

	/* a block is write-protected, not made clean: a fault, no log */
	vm = new_vm(&cfg);
	v = slat_vm_create_vcpu(vm, 0, NULL);
	blocks_then_logging(vm, v, 4 * MiB);
	slat_vm_stats_read(vm, &a);
	CHECK(slat_vcpu_write64(v, BASE + 5 * G, 1) == 0, "write");
	d = since(vm, &a);
	CHECK(d.faults[SLAT_VM_FAULT_PERMISSION] == 1 && d.pml_logged == 0,
	      "a block under PML: %llu faults, %llu logged",
	      (unsigned long long)d.faults[SLAT_VM_FAULT_PERMISSION],
	      (unsigned long long)d.pml_logged);
	slat_vm_destroy(vm);
}

int main(void)
{
	RUN_FMTS(block_faults_under_logging);
	RUN_FMTS(lone_block_breaks_in_place);
	RUN_FMTS(partial_wrprotect_of_a_block);
	RUN(clear_dirty_log_checks_alignment);
	RUN_FMTS(every_write_of_an_iteration_is_logged);
	RUN_FMTS(nothing_lost_in_every_mode);
	RUN_FMTS(pml_logs_and_exits);
	free(bm_buf);
	return check_failures ? 1 : 0;
}
