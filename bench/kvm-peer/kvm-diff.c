// SPDX-License-Identifier: MIT
/*
 * slat-kvm-diff: random operations applied to a libslat table and to KVM's
 * own (kvm-peer.h), then the two trees compared entry by entry, after
 * every operation. KVM's arm64 stage-2 code is the reference here: a
 * table libslat builds must be the one KVM builds for the same calls,
 * bit for bit, with as many table pages.
 *
 * Where the two define an operation differently, the generator asks only
 * what both define alike, and says so below:
 *  - KVM unmaps, write-protects, ages and splits every leaf the range
 *    touches, whole; libslat never changes what lies outside the range.
 *    Ranges are therefore widened to the leaves at their two ends.
 *  - KVM's map keeps a leaf that differs only in permissions (the fault
 *    path relaxes them); libslat's replaces it. A map is therefore made
 *    into a range first unmapped on both.
 *  - KVM's split makes every new page young, even from an old block;
 *    libslat's keeps the block's access flag. After a split, the pages of
 *    the blocks that were old are made old again in KVM's table.
 *  - KVM's split rebuilds the pages' attributes with
 *    kvm_pgtable_stage2_pte_prot(), which keeps the permissions alone: a
 *    Device or Normal non-cacheable block would split into write-back
 *    pages. KVM maps those types as pages only (user_mem_abort() forces
 *    pages for them), and so does this generator; libslat's split keeps
 *    the type (docs/bench.md).
 *
 *   slat-kvm-diff [--seed N] [--ops N]
 *
 * Maps of up to a level-2 block are made half the time as a vCPU's
 * faults, a call per page as shared walkers. Beside the trees, the bytes
 * of data cache each cleaned (no FWB: every new or removed write-back
 * leaf) must be the same.
 *
 * The exit status is 1 at the first difference, with the operation that
 * made it and the two entries.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "../hosted-env.h"
#include "kvm-peer.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)
/* The granule: 4K, or 16K or 64K in the builds for them (the kernel's
 * page size, KVM_PEER_PAGE_SHIFT). */
#ifndef KVM_PEER_PAGE_SHIFT
#define KVM_PEER_PAGE_SHIFT 12
#endif
#define SHIFT KVM_PEER_PAGE_SHIFT
#define PAGE (1ull << SHIFT)
#define ENTRIES (PAGE / 8)
#define BLOCK (PAGE << (SHIFT - 3))       /* a level-2 block */
#define WINDOW (4 * GIB)                  /* the IPAs the operations draw */
#define PA_OFF 0x8000000000ull            /* PA = IPA + this */
/* The output address, bits 47 to the granule's (PAs here are below 2^48) */
#define ADDR_MASK (0x0000ffffffffffffull & ~(PAGE - 1))
#define AF (1ull << 10)
#define ATTRS (SLAT_RW | SLAT_MT_NORMAL)

/* What a map asks for, on both sides. KVM refuses execute with a device
 * or non-cacheable type (so does libslat): those are not drawn. */
static const struct { uint32_t slat, kvm; } prots[] = {
	{ SLAT_RW | SLAT_MT_NORMAL, KVM_PEER_RW },
	{ SLAT_RWX | SLAT_MT_NORMAL, KVM_PEER_RW | KVM_PEER_X },
	{ SLAT_R | SLAT_MT_NORMAL, KVM_PEER_R },
	{ SLAT_R | SLAT_X | SLAT_MT_NORMAL, KVM_PEER_R | KVM_PEER_X },
	{ SLAT_RW | SLAT_MT_DEVICE, KVM_PEER_RW | KVM_PEER_DEVICE },
	{ SLAT_RW | SLAT_MT_NORMAL_NC, KVM_PEER_RW | KVM_PEER_NORMAL_NC },
};

struct env {
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	struct kvm_peer *k;
	uint64_t rng;
	const char *op;      /* the operation that ran last, for messages */
	uint64_t ipa, size;
	uint64_t ops[5], old_blocks, faults;
	uint64_t last_fault;   /* IPA of the last faults, to come back to */
	uint64_t dcache_vcpu;  /* cleaned by the faults, in their counters */
	struct { uint64_t ipa, size; } *old;  /* blocks a split found old */
};

static void die(const char *what, int rc)
{
	fprintf(stderr, "slat-kvm-diff: %s failed: %d (%s)\n", what, rc,
		slat_strerror(rc));
	exit(2);
}

/* KVM's own status is a negative errno. */
static void kvm_failed(const char *what, int rc)
{
	fprintf(stderr, "slat-kvm-diff: KVM's %s failed: %d\n", what, rc);
	exit(2);
}

/* Both sides' status: any error ends the run (the generator asks only
 * what both accept). */
static void both_ok(const char *what, int ours, int kvm)
{
	if (ours < 0)
		die(what, ours);
	if (kvm)
		kvm_failed(what, kvm);
}

static uint64_t rnd(struct env *e)
{
	e->rng ^= e->rng >> 12;
	e->rng ^= e->rng << 25;
	e->rng ^= e->rng >> 27;
	return e->rng * 0x2545f4914f6cdd1dull;
}

/* ---- the comparison ---- */

static const uint64_t *ours_va(const struct env *e, uint64_t pte)
{
	return (const uint64_t *)(e->h.arena +
				  ((pte & ADDR_MASK) - e->h.pa_base));
}

static void differ(const struct env *e, uint64_t ipa, int level,
		   uint64_t ours, uint64_t kvm)
{
	fprintf(stderr, "slat-kvm-diff: after %s [0x%" PRIx64 ", +0x%" PRIx64
		"): IPA 0x%" PRIx64 " at level %d: ours 0x%016" PRIx64
		", KVM's 0x%016" PRIx64 "\n", e->op, e->ipa, e->size, ipa,
		level, ours, kvm);
	exit(1);
}

static uint64_t entry_size(int level)
{
	return 1ull << (SHIFT + (SHIFT - 3) * (3 - level));
}

static void compare(struct env *e, const uint64_t *ours, const uint64_t *kvm,
		    uint64_t n, int level, uint64_t ipa)
{
	for (uint64_t i = 0; i < n; i++, ipa += entry_size(level)) {
		uint64_t o = ours[i], k = kvm[i];
		bool ot = level < 3 && (o & 3) == 3;
		bool kt = level < 3 && (k & 3) == 3;

		if (ot && kt && !((o ^ k) & ~ADDR_MASK)) {
			compare(e, ours_va(e, o),
				(const uint64_t *)(uintptr_t)(k & ADDR_MASK),
				ENTRIES, level + 1, ipa);
			continue;
		}
		if (ot || kt || o != k)
			differ(e, ipa, level, o, k);
	}
}

static void compare_all(struct env *e)
{
	size_t bytes;
	const uint64_t *root = slat_table_root(&e->t, NULL, &bytes);

	compare(e, root, kvm_peer_root(e->k), bytes / 8,
		slat_table_geometry(&e->t)->start_level, 0);
	if (slat_hosted_table_pages(&e->h) != kvm_peer_table_pages(e->k)) {
		fprintf(stderr, "slat-kvm-diff: after %s [0x%" PRIx64 ", +0x%"
			PRIx64 "): %" PRIu64 " table pages, KVM's %" PRIu64 "\n",
			e->op, e->ipa, e->size, slat_hosted_table_pages(&e->h),
			kvm_peer_table_pages(e->k));
		exit(1);
	}
}

/* ---- the operations ---- */

/* Both caches, for the operation @kind (a map's @flags and @attrs). */
static void topup(struct env *e, enum slat_op_kind kind, uint64_t ipa,
		  uint64_t size, uint32_t flags, uint32_t attrs)
{
	int64_t need = slat_pages_needed(
		&e->t, SLAT_NEED(.kind = kind, .ipa = slat_ipa(ipa),
				 .size = size, .pa = slat_pa(PA_OFF + ipa),
				 .attrs = attrs, .flags = flags));
	int rc;

	if (need < 0)
		die("slat_pages_needed", (int)need);
	rc = slat_hosted_cache_topup(&e->h, &e->cache, (uint32_t)need);
	if (rc < 0)
		die("page cache top-up", rc);
	rc = kvm_peer_topup(e->k, size);
	if (rc)
		kvm_failed("memcache top-up", rc);
}

/* A range of the window in steps of pages, level-2 blocks or (4K) level-1
 * blocks, its start often off the step's alignment (inside a block). */
static void draw(struct env *e, uint64_t *ipa, uint64_t *size)
{
	static const uint64_t steps[] = { PAGE, BLOCK,
					  SHIFT == 12 ? BLOCK << (SHIFT - 3) : BLOCK };
	uint64_t r = rnd(e), step = steps[r % 8 < 4 ? 0 : r % 8 < 7 ? 1 : 2];
	uint64_t a = rnd(e) % WINDOW & ~(step - 1);

	if (rnd(e) % 3 == 0)
		a += rnd(e) % (step / PAGE) * PAGE;
	*ipa = a;
	*size = (1 + rnd(e) % 4) * step;
	if (*ipa + *size > WINDOW)
		*size = WINDOW - *ipa;
}

/* Out to the leaves at the range's two ends (KVM changes them whole). */
static void widen(struct env *e, uint64_t *ipa, uint64_t *size)
{
	uint64_t end = *ipa + *size;
	struct slat_leaf lf;

	if (slat_lookup(&e->t, slat_ipa(*ipa), &lf) == SLAT_OK)
		*ipa = lf.base.ipa;
	if (slat_lookup(&e->t, slat_ipa(end - 1), &lf) == SLAT_OK)
		end = lf.base.ipa + lf.size;
	*size = end - *ipa;
}

static void unmap(struct env *e, uint64_t ipa, uint64_t size)
{
	topup(e, SLAT_OP_UNMAP, ipa, size, 0, ATTRS);
	both_ok("unmap",
		slat_unmap(&e->t, slat_ipa(ipa), size,
			   SLAT_OP(.flush = SLAT_FLUSH_RANGE, .cache = &e->cache)),
		kvm_peer_unmap(e->k, ipa, size));
}

/* A vCPU's faults, page by page, as shared walkers: one slat_map() per
 * page with SLAT_SHARED (the fault path and its memo), and KVM's
 * kvm_pgtable_stage2_map() with KVM_PGTABLE_WALK_SHARED. */
static void faults(struct env *e, uint64_t ipa, uint64_t size)
{
	struct slat_op vop = { .flags = SLAT_SHARED, .cache = &e->cache };
	struct slat_stats vcpu = { 0 };
	int rc = SLAT_OK;

	e->op = "faults";
	e->faults += size / PAGE;
	topup(e, SLAT_OP_MAP, ipa, size, SLAT_MAP_PAGES, ATTRS);
	/* A vCPU counts in its own counters (as KVM's vcpu->stat), which
	 * lets its page cache keep the memo of its last table. */
	e->cache.stats = &vcpu;
	for (uint64_t a = ipa; a < ipa + size && rc == SLAT_OK; a += PAGE)
		rc = slat_map(&e->t, slat_ipa(a), PAGE, slat_pa(PA_OFF + a),
			      ATTRS, &vop);
	e->cache.stats = NULL;
	e->dcache_vcpu += vcpu.dcache_bytes;
	both_ok("faults", rc,
		kvm_peer_fault_each(e->k, ipa, size, PA_OFF + ipa, true));
}

/* Often into the last table of the last faults again: that table may
 * have been freed and made again since, under the page cache's memo. */
static void fault_range(struct env *e, uint64_t *ipa, uint64_t *size)
{
	uint64_t base;

	if (rnd(e) % 3)
		return;
	base = e->last_fault & ~(BLOCK - 1);
	*ipa = base + rnd(e) % ENTRIES * PAGE;
	*size = (1 + rnd(e) % ((base + BLOCK - *ipa) / PAGE)) * PAGE;
}

static void map(struct env *e, uint64_t ipa, uint64_t size)
{
	bool fault = size <= BLOCK && rnd(e) % 2;
	unsigned pr = (unsigned)(rnd(e) % 6);
	bool pages = rnd(e) % 2 ||
		     (prots[pr].slat & SLAT_MT_MASK) != SLAT_MT_NORMAL;
	uint32_t flags = pages ? SLAT_MAP_PAGES : 0;
	uint64_t wide_ipa, wide;

	if (fault)
		fault_range(e, &ipa, &size);
	wide_ipa = ipa, wide = size;

	widen(e, &wide_ipa, &wide);
	unmap(e, wide_ipa, wide);
	if (fault) {
		e->last_fault = ipa;
		faults(e, ipa, size);
		return;
	}
	e->op = pages ? "map (pages)" : "map (blocks)";
	topup(e, SLAT_OP_MAP, ipa, size, flags, prots[pr].slat);
	both_ok("map",
		slat_map(&e->t, slat_ipa(ipa), size, slat_pa(PA_OFF + ipa),
			 prots[pr].slat,
			 SLAT_OP(.flags = flags, .cache = &e->cache)),
		kvm_peer_map(e->k, ipa, size, PA_OFF + ipa,
			     pages ? KVM_PEER_PAGES : KVM_PEER_BLOCKS,
			     prots[pr].kvm));
}

static void wrprotect(struct env *e, uint64_t ipa, uint64_t size)
{
	both_ok("wrprotect",
		slat_wrprotect(&e->t, slat_ipa(ipa), size,
			       SLAT_OP(.flush = SLAT_FLUSH_RANGE,
				       .cache = &e->cache)),
		kvm_peer_wrprotect(e->k, ipa, size));
}

static void age(struct env *e, uint64_t ipa, uint64_t size)
{
	int rc = slat_test_clear_young(&e->t, slat_ipa(ipa), size, true, NULL);
	bool kvm_young = kvm_peer_test_clear_young(e->k, ipa, size);

	if (rc < 0)
		die("slat_test_clear_young", rc);
	/* Both report the same: whether a leaf of the range was young. */
	if ((rc == SLAT_WAS_YOUNG) != kvm_young) {
		fprintf(stderr, "slat-kvm-diff: test_clear_young [0x%" PRIx64
			", +0x%" PRIx64 "): ours %s young, KVM's %s\n", ipa,
			size, rc == SLAT_WAS_YOUNG ? "was" : "was not",
			kvm_young ? "was" : "was not");
		exit(1);
	}
}

/* The blocks of the range that are old: KVM's split makes their pages
 * young (see the top). Returns how many are in e->old. */
static uint64_t old_blocks(struct env *e, uint64_t ipa, uint64_t size)
{
	uint64_t n = 0;

	for (uint64_t a = ipa; a < ipa + size;) {
		struct slat_leaf lf;

		if (slat_lookup(&e->t, slat_ipa(a), &lf) != SLAT_OK) {
			a += PAGE;
			continue;
		}
		if (lf.size > PAGE && !(lf.pte & AF)) {
			e->old[n].ipa = lf.base.ipa;
			e->old[n++].size = lf.size;
		}
		a = lf.base.ipa + lf.size;
	}
	return n;
}

static void split(struct env *e, uint64_t ipa, uint64_t size)
{
	uint64_t n = old_blocks(e, ipa, size);

	topup(e, SLAT_OP_SPLIT, ipa, size, 0, ATTRS);
	both_ok("split",
		slat_split(&e->t, slat_ipa(ipa), size, PAGE,
			   SLAT_OP(.cache = &e->cache)),
		kvm_peer_split(e->k, ipa, size));
	for (uint64_t i = 0; i < n; i++)
		kvm_peer_test_clear_young(e->k, e->old[i].ipa, e->old[i].size);
	e->old_blocks += n;
}

/* The D-cache bytes both cleaned since the last call. */
static void compare_cleans(struct env *e)
{
	static uint64_t ours0, kvm0;
	struct slat_stats st;
	struct kvm_peer_counts c;

	slat_stats_read(&e->t, &st);
	kvm_peer_read_counts(e->k, &c);
	st.dcache_bytes += e->dcache_vcpu;
	if (st.dcache_bytes - ours0 != c.dcache_bytes - kvm0) {
		fprintf(stderr, "slat-kvm-diff: %s [0x%" PRIx64 ", +0x%" PRIx64
			"): ours cleaned %" PRIu64 " bytes, KVM %" PRIu64 "\n",
			e->op, e->ipa, e->size, st.dcache_bytes - ours0,
			c.dcache_bytes - kvm0);
		exit(1);
	}
	ours0 = st.dcache_bytes, kvm0 = c.dcache_bytes;
}

static void step(struct env *e)
{
	static const char *const names[] = { "map", "unmap", "wrprotect",
					     "test_clear_young", "split" };
	/* map 4 in 10, unmap and wrprotect 2 each, young and split 1 */
	static const unsigned char pick[10] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 4 };
	unsigned kind = pick[rnd(e) % 10];
	uint64_t ipa, size;

	draw(e, &ipa, &size);
	if (kind)
		widen(e, &ipa, &size);
	e->op = names[kind], e->ipa = ipa, e->size = size;
	e->ops[kind]++;
	switch (kind) {
	case 0: map(e, ipa, size); break;
	case 1: unmap(e, ipa, size); break;
	case 2: wrprotect(e, ipa, size); break;
	case 3: age(e, ipa, size); break;
	default: split(e, ipa, size); break;
	}
	slat_hosted_cache_drain(&e->h, &e->cache);
	compare_all(e);
	compare_cleans(e);
}

static void env_init(struct env *e, uint64_t seed)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = PAGE, .ia_bits = 40,
		.pa_bits = 48,
	};
	const char *what;
	int rc;

	memset(e, 0, sizeof(*e));
	e->rng = seed * 2 + 1;
	rc = bench_hosted_env(&e->h, &e->t, &e->cache, &cfg, 64 * MIB, &what);
	if (rc < 0)
		die(what, rc);
	e->k = kvm_peer_create(64 * MIB);
	/* A block per level-2 block of the window, at most. */
	e->old = calloc(WINDOW / BLOCK, sizeof(*e->old));
	if (!e->k || !e->old)
		die("KVM's table", SLAT_E_NOMEM);
}

static const char usage[] =
"usage: slat-kvm-diff [--seed N] [--ops N]\n"
"Random map, unmap, write-protect, test-and-clear-young and split\n"
"operations over 4 GiB of IPA, each applied to a libslat table and to\n"
"KVM's own (arch/arm64/kvm/hyp/pgtable.c), the two trees compared entry\n"
"by entry after each. Exit status 1 at the first difference.\n"
"  --seed N   the random sequence (default 1)\n"
"  --ops N    operations (default 2000)\n";

int main(int argc, char **argv)
{
	uint64_t seed = 1, ops = 2000;
	static struct env e;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			ops = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else {
			fprintf(stderr, "slat-kvm-diff: unknown argument %s, or "
				"a value missing after it (see --help)\n",
				argv[i]);
			return 2;
		}
	}
	env_init(&e, seed);
	for (uint64_t i = 0; i < ops; i++)
		step(&e);
	printf("slat-kvm-diff: %" PRIu64 "K granule, seed %" PRIu64 ", %"
	       PRIu64 " operations (map %" PRIu64 ", unmap %" PRIu64
	       ", wrprotect %" PRIu64 ", young %" PRIu64 ", split %" PRIu64
	       " with %" PRIu64 " old blocks; %" PRIu64 " pages mapped by "
	       "faults), the trees equal after each; KVM: %s\n",
	       (uint64_t)(PAGE >> 10), seed, ops, e.ops[0], e.ops[1],
	       e.ops[2], e.ops[3], e.ops[4], e.old_blocks, e.faults,
	       kvm_peer_source());
	return 0;
}
