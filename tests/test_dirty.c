/* SPDX-License-Identifier: MIT */
/*
 * Hardware dirty state and the CPU's walk, one property per test, on every
 * format (docs/design.md, "Hardware dirty state"). slat_hw_access() plays
 * the CPU: it translates an access and makes the updates the hardware
 * would (the access flag; on a write the dirty state: Arm sets S2AP.W of a
 * DBM leaf, EPT sets D).
 *
 * The descriptor bits the tests look at, from the architectures:
 *   Arm stage 2 (FEAT_HAFDBS): S2AP.W = bit 7, DBM = bit 51, AF = bit 10.
 *     writable and dirty: S2AP.W = 1, DBM = 1; writable and clean:
 *     S2AP.W = 0, DBM = 1; read-only: both 0.
 *   EPT with A/D: W = bit 1, A = bit 8, D = bit 9.
 *     dirty: D = 1; clean: D = 0; read-only: W = 0 (D may stay).
 *   Arm stage 1 (FEAT_HAFDBS, TCR_EL1.HD): AP[2] = bit 7 (1: read-only),
 *     DBM = bit 51. dirty: AP[2] = 0, DBM = 1; clean: AP[2] = 1, DBM = 1;
 *     read-only: AP[2] = 1, DBM = 0.
 *
 * Every test runs on each configuration of params[] below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <slat/walk.h>

#include "fixture.h"

#define HWD SLAT_FEAT_HWDIRTY
#define G1 0x40000000ull

struct param {
	const char *name;
	struct slat_config cfg;
};

static const struct param params[] = {
	{ "arm-s2 4K ia40 hwdirty",
	  { SLAT_FMT_ARM_S2, 4096, 40, 48, HWD, 0 } },
	{ "arm-s2 16K ia48 hwdirty xnx",
	  { SLAT_FMT_ARM_S2, 16384, 48, 48, HWD | SLAT_FEAT_XNX, 0 } },
	{ "ept 4-level a/d", { SLAT_FMT_EPT, 4096, 48, 48, HWD, 0 } },
	{ "ept 5-level a/d mbec",
	  { SLAT_FMT_EPT, 4096, 57, 52, HWD | SLAT_FEAT_EPT_MBEC, 0 } },
	{ "arm-s1 4K va48 dbm", { SLAT_FMT_ARM_S1, 4096, 48, 48, HWD, 0 } },
	{ "npt 4-level", { SLAT_FMT_NPT, 4096, 48, 48, HWD, 0 } },
	{ "npt 5-level", { SLAT_FMT_NPT, 4096, 57, 52, HWD, 0 } },
};

/* The configuration the tests run on. */
static const struct param *P;

static struct fx *new_fx_features(uint32_t features)
{
	struct fx *f = malloc(sizeof(*f));
	struct slat_config cfg = P->cfg;
	cfg.features = features;
	assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000ull), SLAT_OK);
	return f;
}

static struct fx *new_fx(void)
{
	return new_fx_features(P->cfg.features);
}

static void done_fx(struct fx *f)
{
	if (checker_full(&f->ck, NULL))
		fail_msg("checker: %s", f->ck.msg);
	fx_fini(f);
	free(f);
}

static uint64_t page(struct fx *f)
{
	return f->cfg.granule;
}

/* A block: the level-2 leaf size (2M with 4K, 32M with 16K pages). */
static uint64_t block(struct fx *f)
{
	return slat_level_size(&f->t, 2);
}

/* EPT and NPT: W is bit 1, and the dirty state a bit of its own. */
static bool is_ept(struct fx *f)
{
	return f->cfg.format == SLAT_FMT_EPT || f->cfg.format == SLAT_FMT_NPT;
}

/* D: bit 9 of an EPT leaf, bit 6 of a nested (NPT) one. */
static uint64_t x86_d(struct fx *f)
{
	return f->cfg.format == SLAT_FMT_NPT ? 1ull << 6 : 1ull << 9;
}

/* ------------------------------------------------------------ raw bits */

#define BIT(n) (1ull << (n))

/*
 * Bit 7 is S2AP[1] (write allowed) at stage 2 and AP[2] (read-only) at
 * stage 1; DBM is bit 51 in both; EPT has W (bit 1) and D (bit 9), NPT
 * R/W (bit 1) and D (bit 6).
 */
static bool is_s1(struct fx *f)
{
	return f->cfg.format == SLAT_FMT_ARM_S1;
}

static bool raw_write_bit(struct fx *f, uint64_t pte)
{
	return is_s1(f) ? !(pte & BIT(7)) : (pte & BIT(7)) != 0;
}

static bool raw_dirty(struct fx *f, uint64_t pte)
{
	if (is_ept(f))
		return pte & x86_d(f);
	return raw_write_bit(f, pte) && (pte & BIT(51));
}

static bool raw_writable_clean(struct fx *f, uint64_t pte)
{
	if (is_ept(f))
		return (pte & BIT(1)) && !(pte & x86_d(f));
	return !raw_write_bit(f, pte) && (pte & BIT(51));
}

/* Neither software nor hardware can write through it. */
static bool raw_read_only(struct fx *f, uint64_t pte)
{
	if (is_ept(f))
		return !(pte & BIT(1));
	return !raw_write_bit(f, pte) && !(pte & BIT(51));
}

static uint64_t pte_at(struct fx *f, uint64_t ipa)
{
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, ipa, &l), SLAT_OK);
	return l.pte;
}

/* ------------------------------------------------------------ helpers */

/* dirty_read of [ipa, ipa+size) with a topped-up cache. */
static int64_t dread(struct fx *f, uint64_t ipa, uint64_t size, bool clear,
		     enum slat_tlbi_policy policy, uint64_t *bitmap)
{
	int64_t need = slat_pages_needed(
		&f->t, SLAT_NEED(.kind = SLAT_OP_DIRTY_CLEAR,
				 .ipa = slat_ipa(ipa), .size = size));
	fx_topup(f, need < 0 ? 0 : (uint32_t)need);
	return slat_dirty_read(&f->t, slat_ipa(ipa), size, bitmap,
			       (size / slat_level_size(&f->t, SLAT_LAST_LEVEL) +
				63) / 64,
			       clear,
			       SLAT_OP(.flush = policy, .cache = &f->cache));
}

static int64_t dcount(struct fx *f, uint64_t ipa, uint64_t size, bool clear)
{
	uint64_t pages = size / page(f);
	uint64_t *bm = calloc((pages + 63) / 64, sizeof(*bm));
	int64_t n = dread(f, ipa, size, clear, SLAT_FLUSH_VMID, bm);
	free(bm);
	return n;
}

static enum slat_fault hw(struct fx *f, uint64_t ipa, unsigned access,
			  struct slat_hw_result *res)
{
	struct slat_hw_result r;
	if (!res)
		res = &r;
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(ipa), access, res),
			 SLAT_OK);
	return res->fault;
}

static bool bit(const uint64_t *bm, uint64_t i)
{
	return bm[i / 64] >> (i % 64) & 1;
}

/* ------------------------------------------------------------ tests */

static void map_installs_writable_leaves_dirty(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t B = block(f), g = page(f);
	assert_int_equal(fx_map(f, G1, B, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(fx_map(f, G1 + B, 4 * g, 0x200000000ull, SLAT_R, 0),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & (SLAT_W | SLAT_DIRTY), SLAT_W | SLAT_DIRTY);
	assert_true(raw_dirty(f, l.pte));
	assert_int_equal(fx_lookup(f, G1 + B, &l), SLAT_OK);
	assert_int_equal(l.attrs & (SLAT_W | SLAT_DIRTY), 0);
	/* every page of the block, none of the read-only pages */
	assert_int_equal(dcount(f, G1, B + 4 * g, false), (int64_t)(B / g));
	done_fx(f);
}

static void dirty_read_reports_each_hardware_write_once(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f), n = 16;
	uint64_t bm[1];
	assert_int_equal(fx_map(f, G1, n * g, 0x100000000ull, SLAT_RW,
				SLAT_MAP_PAGES),
			 SLAT_OK);
	/* installed dirty: reported once, then clean */
	assert_int_equal(dcount(f, G1, n * g, true), (int64_t)n);
	assert_int_equal(dcount(f, G1, n * g, true), 0);
	/* the CPU writes pages 3 and 7 (twice), reads page 9 */
	assert_int_equal(hw(f, G1 + 3 * g + 8, SLAT_ACCESS_WRITE, NULL),
			 SLAT_FAULT_NONE);
	assert_int_equal(hw(f, G1 + 7 * g, SLAT_ACCESS_WRITE, NULL),
			 SLAT_FAULT_NONE);
	assert_int_equal(hw(f, G1 + 7 * g + g - 1, SLAT_ACCESS_WRITE, NULL),
			 SLAT_FAULT_NONE);
	assert_int_equal(hw(f, G1 + 9 * g, SLAT_ACCESS_READ, NULL),
			 SLAT_FAULT_NONE);
	/* without clear: reported, and reported again */
	for (int i = 0; i < 2; i++) {
		bm[0] = ~0ull;
		assert_int_equal(dread(f, G1, n * g, false, SLAT_FLUSH_VMID, bm),
				 2);
		assert_int_equal(bm[0], (1ull << 3) | (1ull << 7));
	}
	/* with clear: once */
	assert_int_equal(dread(f, G1, n * g, true, SLAT_FLUSH_VMID, bm), 2);
	assert_int_equal(bm[0], (1ull << 3) | (1ull << 7));
	assert_int_equal(dread(f, G1, n * g, true, SLAT_FLUSH_VMID, bm), 0);
	assert_int_equal(bm[0], 0);
	/* and a new write is seen again */
	assert_int_equal(hw(f, G1 + 3 * g, SLAT_ACCESS_WRITE, NULL),
			 SLAT_FAULT_NONE);
	assert_int_equal(dread(f, G1, n * g, true, SLAT_FLUSH_VMID, bm), 1);
	assert_int_equal(bm[0], 1ull << 3);
	done_fx(f);
}

static void hardware_write_to_a_block_dirties_the_whole_block(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t B = block(f), g = page(f);
	assert_int_equal(fx_map(f, G1, B, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(dcount(f, G1, B, true), (int64_t)(B / g));
	assert_int_equal(dcount(f, G1, B, false), 0);
	struct slat_hw_result r;
	assert_int_equal(hw(f, G1 + 5 * g + 3, SLAT_ACCESS_WRITE, &r),
			 SLAT_FAULT_NONE);
	assert_int_equal(r.level, 2);
	assert_int_equal(slat_pa_v(r.pa), 0x100000000ull + 5 * g + 3);
	assert_int_equal(r.attrs & SLAT_DIRTY, SLAT_DIRTY);
	/* the dirty state is the leaf's: every page of the block */
	assert_int_equal(dcount(f, G1, B, false), (int64_t)(B / g));
	/* and a range of one page elsewhere in the block sees it too */
	assert_int_equal(dcount(f, G1 + B - g, g, false), 1);
	done_fx(f);
}

/* The CPU that writes page 5 through a stale TLB entry while promote's
 * invalidation is on its way: the dirty update lands in the old table. */
struct stale_write {
	struct fx *f;
	slat_pte_t *ptep;
	bool done;
};

static void stale_write_observe(void *arg, const struct slat_hosted_event *ev)
{
	struct stale_write *w = arg;
	fx_observe(w->f, ev);
	if (w->done || (ev->kind != SLAT_EV_TLBI_IPA &&
			ev->kind != SLAT_EV_TLBI_RANGE &&
			ev->kind != SLAT_EV_TLBI_VMID))
		return;
	w->done = true;
	if (is_ept(w->f))
		__atomic_or_fetch(w->ptep, x86_d(w->f), __ATOMIC_RELAXED);
	else if (is_s1(w->f))
		__atomic_and_fetch(w->ptep, ~BIT(7), __ATOMIC_RELAXED);
	else
		__atomic_or_fetch(w->ptep, BIT(7), __ATOMIC_RELAXED);
}

static int find_ptep(const struct slat_walk_ctx *ctx, enum slat_visit v)
{
	(void)v;
	*(slat_pte_t **)ctx->arg = ctx->ptep;
	return 1;
}

/* Promote merges the CPU's updates made after its scan, up to the
 * invalidation: a write through a stale TLB entry then leaves the block
 * dirty. */
static void promote_keeps_a_write_during_its_invalidation(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t B = block(f), g = page(f);
	assert_int_equal(fx_map(f, G1, B, 0x100000000ull, SLAT_RW,
				SLAT_MAP_PAGES), SLAT_OK);
	assert_int_equal(dcount(f, G1, B, true), (int64_t)(B / g));
	struct stale_write w = { f, NULL, false };
	struct slat_walker wk = { find_ptep, &w.ptep, SLAT_VISIT_LEAF, 0 };
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1 + 5 * g), g, &wk, NULL),
			 SLAT_OK);
	assert_true(raw_writable_clean(f, *w.ptep));
	slat_hosted_set_observer(&f->h, stale_write_observe, &w);
	assert_int_equal(slat_recover(&f->t, slat_ipa(G1), B,
				      SLAT_RECOVERY(.strategy =
							    SLAT_RECOVER_PROMOTE),
				      SLAT_OP(.flush = SLAT_FLUSH_VMID)),
			 SLAT_OK);
	slat_hosted_set_observer(&f->h, fx_observe, f);
	assert_true(w.done);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.size, B);
	assert_int_equal(dcount(f, G1, B, false), (int64_t)(B / g));
	done_fx(f);
}

static void clear_splits_partly_covered_dirty_block(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t B = block(f), g = page(f);
	assert_int_equal(fx_map(f, G1, B, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	uint64_t mid = G1 + 7 * g;
	uint64_t bm[1] = { ~0ull };
	assert_int_equal(dread(f, mid, g, true, SLAT_FLUSH_ENTRY, bm), 1);
	assert_int_equal(bm[0], 1);
	/* the page is a leaf of its own now, clean; the rest keeps its state
	 * and its translation */
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, mid, &l), SLAT_OK);
	assert_int_equal(l.level, 3);
	assert_int_equal(l.attrs & SLAT_DIRTY, 0);
	assert_true(raw_writable_clean(f, l.pte));
	assert_int_equal(slat_pa_v(l.pa), 0x100000000ull + 7 * g);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_DIRTY, SLAT_DIRTY);
	assert_int_equal(dcount(f, G1, B, false), (int64_t)(B / g - 1));
	struct model *m = model_new(g);
	model_dirty_rules(m, true, !f->ck.fmt->wrprotect_keeps_dirty);
	model_map(m, G1, B, 0x100000000ull, SLAT_RW);
	model_set_dirty(m, mid, mid + g, false);
	if (checker_full(&f->ck, m))
		fail_msg("%s", f->ck.msg);
	model_free(m);
	done_fx(f);
}

static void read_without_clear_changes_nothing(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t B = block(f), g = page(f);
	assert_int_equal(fx_map(f, G1, B, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	fx_clear_events(f);
	uint64_t pages_before = slat_hosted_table_pages(&f->h);
	assert_int_equal(dcount(f, G1 + g, 2 * g, false), 2);
	assert_int_equal(f->nev, 0);
	for (int k = 0; k < SLAT_WRITE_KINDS; k++)
		assert_int_equal(f->t.stats.written[k], 0);
	assert_int_equal(slat_hosted_table_pages(&f->h), pages_before);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1 + g, &l), SLAT_OK);
	assert_int_equal(l.level, 2); /* not split */
	done_fx(f);
}

static void clean_writable_leaf_becomes_dirty_on_hardware_write(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f);
	assert_int_equal(fx_map(f, G1, g, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(dcount(f, G1, g, true), 1);
	/* writable-clean: still writable to lookup, not dirty */
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & (SLAT_W | SLAT_DIRTY), SLAT_W);
	assert_true(raw_writable_clean(f, l.pte));
	/* a read leaves it clean; a write goes through, no fault */
	assert_int_equal(hw(f, G1, SLAT_ACCESS_READ, NULL), SLAT_FAULT_NONE);
	assert_true(raw_writable_clean(f, pte_at(f, G1)));
	assert_int_equal(hw(f, G1 + 16, SLAT_ACCESS_WRITE, NULL),
			 SLAT_FAULT_NONE);
	assert_true(raw_dirty(f, pte_at(f, G1)));
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & (SLAT_W | SLAT_DIRTY), SLAT_W | SLAT_DIRTY);
	done_fx(f);
}

static void wrprotect_removes_dbm_so_hardware_cannot_write(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f);
	assert_int_equal(fx_map(f, G1, 2 * g, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	/* page 0 dirty, page 1 writable-clean */
	uint64_t bm[1];
	assert_int_equal(dread(f, G1 + g, g, true, SLAT_FLUSH_VMID, bm), 1);
	fx_topup(f, 4);
	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1), 2 * g,
					SLAT_OP(.flush = SLAT_FLUSH_VMID,
						.cache = &f->cache)),
			 SLAT_OK);
	for (int i = 0; i < 2; i++) {
		uint64_t ipa = G1 + (uint64_t)i * g;
		struct slat_hw_result r;
		assert_true(raw_read_only(f, pte_at(f, ipa)));
		assert_int_equal(hw(f, ipa, SLAT_ACCESS_WRITE, &r),
				 SLAT_FAULT_PERMISSION);
		assert_int_equal(r.level, 3);
		assert_true(raw_read_only(f, pte_at(f, ipa)));
	}
	/* page 0 was written before: EPT keeps D on a read-only leaf (it
	 * stays to be reported); Arm has no read-only dirty leaf (DBM and
	 * S2AP.W go together) */
	int64_t want = f->ck.fmt->wrprotect_keeps_dirty ? 1 : 0;
	assert_int_equal(dread(f, G1, 2 * g, false, SLAT_FLUSH_VMID, bm), want);
	done_fx(f);
}

static void relax_adding_write_makes_the_leaf_dirty(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f);
	assert_int_equal(fx_map(f, G1, g, 0x100000000ull, SLAT_R, 0), SLAT_OK);
	assert_int_equal(dcount(f, G1, g, false), 0);
	fx_topup(f, 4);
	/* the fault that asks for write writes */
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), g, SLAT_R | SLAT_W,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	assert_true(raw_dirty(f, pte_at(f, G1)));
	assert_int_equal(dcount(f, G1, g, true), 1);
	done_fx(f);
}

static void relax_of_a_writable_clean_leaf_keeps_it_clean(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f);
	assert_int_equal(fx_map(f, G1, g, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(dcount(f, G1, g, true), 1);
	fx_topup(f, 4);
	/* adding execute changes nothing about writes */
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), g, SLAT_R | SLAT_X,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	assert_true(raw_writable_clean(f, pte_at(f, G1)));
	/* nor does asking for write again: the leaf is writable already */
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), g, SLAT_R | SLAT_W,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_NOTHING_TO_DO);
	assert_true(raw_writable_clean(f, pte_at(f, G1)));
	assert_int_equal(dcount(f, G1, g, false), 0);
	done_fx(f);
}

/* The cleaned leaves are invalidated per policy, like wrprotect's. */
static void clear_invalidates_per_policy(void **state)
{
	(void)state;
	static const struct {
		enum slat_tlbi_policy p;
		size_t ipa, range, vmid; /* with invalidation by address */
	} pol[] = {
		{ SLAT_FLUSH_ENTRY, 5, 0, 0 },
		{ SLAT_FLUSH_RANGE, 0, 1, 0 },
		{ SLAT_FLUSH_VMID, 0, 0, 1 },
		{ SLAT_FLUSH_NONE, 0, 0, 0 },
	};
	for (size_t i = 0; i < 4; i++) {
		struct fx *f = new_fx();
		uint64_t B = block(f), g = page(f);
		/* four dirty pages and a dirty block; one read-only page */
		assert_int_equal(fx_map(f, G1, 4 * g, 0x100000000ull, SLAT_RW,
					0),
				 SLAT_OK);
		assert_int_equal(fx_map(f, G1 + 4 * g, g, 0x100004000ull,
					SLAT_R, 0),
				 SLAT_OK);
		assert_int_equal(fx_map(f, G1 + B, B, 0x200000000ull, SLAT_RW,
					0),
				 SLAT_OK);
		fx_clear_events(f);
		uint64_t pages = 2 * B / g;
		uint64_t *bm = calloc((pages + 63) / 64, sizeof(*bm));
		assert_int_equal(dread(f, G1, 2 * B, true, pol[i].p, bm),
				 (int64_t)(4 + B / g));
		/* without invalidation by address (EPT) each is a VMID flush */
		bool by_addr = f->ck.fmt->tlbi_by_address;
		size_t vmid = by_addr ? pol[i].vmid
				      : pol[i].ipa + pol[i].range + pol[i].vmid;
		assert_int_equal(fx_count(f, SLAT_EV_TLBI_IPA),
				 by_addr ? pol[i].ipa : 0);
		assert_int_equal(fx_count(f, SLAT_EV_TLBI_RANGE),
				 by_addr ? pol[i].range : 0);
		assert_int_equal(fx_count(f, SLAT_EV_TLBI_VMID), vmid);
		assert_int_equal(f->t.stats.tlbi[SLAT_TLBI_VMID], vmid);
		assert_int_equal(f->t.stats.written[SLAT_WRITE_ATTR], 5);
		assert_int_equal(fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL) +
					 fx_count(f, SLAT_EV_ICACHE_INVAL),
				 0);
		/* nothing dirty any more: nothing written, nothing invalidated */
		fx_clear_events(f);
		assert_int_equal(dread(f, G1, 2 * B, true, pol[i].p, bm), 0);
		assert_int_equal(f->nev, 0);
		free(bm);
		done_fx(f);
	}
}

static void bitmap_has_a_bit_per_page_and_every_word_is_written(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f);
	uint64_t bm[3] = { ~0ull, ~0ull, ~0ull };
	/* 70 pages: pages 0, 63, 64 and 69 dirty */
	assert_int_equal(fx_map(f, G1, 70 * g, 0x100000000ull, SLAT_R,
				SLAT_MAP_PAGES),
			 SLAT_OK);
	/* new writable leaves (another PA) are installed dirty */
	static const unsigned dirty[] = { 0, 63, 64, 69 };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(fx_map(f, G1 + dirty[i] * g, g,
					0x200000000ull + dirty[i] * g, SLAT_RW,
					0),
				 SLAT_OK);
	assert_int_equal(dread(f, G1, 70 * g, false, SLAT_FLUSH_VMID, bm), 4);
	assert_int_equal(bm[0], 1ull | (1ull << 63));
	assert_int_equal(bm[1], 1ull | (1ull << 5)); /* pages 64 and 69 */
	assert_int_equal(bm[2], ~0ull);              /* not part of it */
	for (uint64_t i = 0; i < 70; i++)
		assert_int_equal(bit(bm, i),
				 i == 0 || i == 63 || i == 64 || i == 69);
	done_fx(f);
}

static void dirty_read_is_refused_without_hardware_dirty_state(void **state)
{
	(void)state;
	if (P->cfg.format == SLAT_FMT_NPT)
		skip(); /* the CPU always keeps NPT's A and D */
	struct fx *f = new_fx_features(P->cfg.features & ~HWD);
	uint64_t g = page(f);
	uint64_t bm[1] = { 0x1234 };
	assert_int_equal(fx_map(f, G1, g, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	fx_clear_events(f);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1), g, bm, 1, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &f->cache)),
			 SLAT_E_CONFIG);
	assert_int_equal(f->nev, 0);
	/* and lookup never says dirty */
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
	assert_int_equal(l.attrs & SLAT_DIRTY, 0);
	done_fx(f);
}

static void bad_arguments_are_refused(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t g = page(f), ia_end = 1ull << f->t.geo.ia_bits;
	uint64_t bm[1];
	struct slat_hw_result r;
	assert_int_equal(fx_map(f, G1, g, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	fx_clear_events(f);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1 + 1), g, bm, 1,
					 true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &f->cache)),
			 SLAT_E_ALIGN);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1), 0, bm, 1, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &f->cache)),
			 SLAT_E_RANGE);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(ia_end - g), 2 * g, bm,
					 1, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &f->cache)),
			 SLAT_E_RANGE);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1), g, NULL, 1, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &f->cache)),
			 SLAT_E_INVAL);
	assert_int_equal(
		slat_dirty_read(&f->t, slat_ipa(G1), g, bm, 1, true,
				SLAT_OP(.flush = (enum slat_tlbi_policy)4,
					.cache = &f->cache)),
		SLAT_E_INVAL);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1), g, bm, 1, true,
					 SLAT_OP(.flags = 1u << 4,
						 .flush = SLAT_FLUSH_VMID,
						 .cache = &f->cache)),
			 SLAT_E_INVAL);
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(ia_end),
					SLAT_ACCESS_READ, &r),
			 SLAT_E_RANGE);
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(G1), 8, &r),
			 SLAT_E_INVAL);
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(G1), SLAT_ACCESS_WRITE,
					NULL),
			 SLAT_E_INVAL);
	assert_int_equal(f->nev, 0);
	for (int k = 0; k < SLAT_WRITE_KINDS; k++)
		assert_int_equal(f->t.stats.written[k], 0);
	/* still dirty: nothing was cleared */
	assert_int_equal(dcount(f, G1, g, false), 1);
	done_fx(f);
}

/* Faults: kind, level where the walk stopped, and the PA of the byte. */
static void hw_access_faults_like_the_cpu(void **state)
{
	(void)state;
	struct fx *f = new_fx();
	uint64_t B = block(f), g = page(f);
	struct slat_hw_result r;
	int start = f->t.geo.start_level;
	/* an empty table: the walk stops at the root */
	assert_int_equal(hw(f, G1, SLAT_ACCESS_READ, &r),
			 SLAT_FAULT_TRANSLATION);
	assert_int_equal(r.level, start);
	/* a read-only, non-executable page */
	assert_int_equal(fx_map(f, G1 + B, g, 0x100000000ull, SLAT_R, 0),
			 SLAT_OK);
	assert_int_equal(hw(f, G1 + B + 0x123, SLAT_ACCESS_READ, &r),
			 SLAT_FAULT_NONE);
	assert_int_equal(slat_pa_v(r.pa), 0x100000123ull);
	assert_int_equal(r.level, 3);
	assert_int_equal(hw(f, G1 + B, SLAT_ACCESS_WRITE, &r),
			 SLAT_FAULT_PERMISSION);
	assert_int_equal(r.level, 3);
	assert_int_equal(hw(f, G1 + B, SLAT_ACCESS_EXEC_EL1, NULL),
			 SLAT_FAULT_PERMISSION);
	assert_int_equal(hw(f, G1 + B, SLAT_ACCESS_EXEC_EL0, NULL),
			 SLAT_FAULT_PERMISSION);
	/* the next page: a hole in the last-level table */
	assert_int_equal(hw(f, G1 + B + g, SLAT_ACCESS_READ, &r),
			 SLAT_FAULT_TRANSLATION);
	assert_int_equal(r.level, 3);
	/* the block below it: a hole at level 2 */
	assert_int_equal(hw(f, G1, SLAT_ACCESS_READ, &r),
			 SLAT_FAULT_TRANSLATION);
	assert_int_equal(r.level, 2);
	/* executable at both levels */
	assert_int_equal(fx_map(f, G1, g, 0x300000000ull, SLAT_R | SLAT_X, 0),
			 SLAT_OK);
	assert_int_equal(hw(f, G1, SLAT_ACCESS_EXEC_EL1, NULL), SLAT_FAULT_NONE);
	assert_int_equal(hw(f, G1, SLAT_ACCESS_EXEC_EL0, NULL), SLAT_FAULT_NONE);
	/* one level only, where the configuration can say so (XNX, MBEC) */
	if (f->ck.fmt->separate_exec(&f->cfg)) {
		assert_int_equal(fx_map(f, G1 + g, g, 0x300000000ull + g,
					SLAT_R | SLAT_XU, 0),
				 SLAT_OK);
		assert_int_equal(hw(f, G1 + g, SLAT_ACCESS_EXEC_EL0, NULL),
				 SLAT_FAULT_NONE);
		assert_int_equal(hw(f, G1 + g, SLAT_ACCESS_EXEC_EL1, NULL),
				 SLAT_FAULT_PERMISSION);
		assert_int_equal(fx_map(f, G1 + 2 * g, g, 0x300000000ull + 2 * g,
					SLAT_R | SLAT_XK, 0),
				 SLAT_OK);
		assert_int_equal(hw(f, G1 + 2 * g, SLAT_ACCESS_EXEC_EL1, NULL),
				 SLAT_FAULT_NONE);
		assert_int_equal(hw(f, G1 + 2 * g, SLAT_ACCESS_EXEC_EL0, NULL),
				 SLAT_FAULT_PERMISSION);
	}
	done_fx(f);
}

/*
 * The access flag of an old leaf: the hardware sets it (Arm HA, EPT A/D);
 * without that, Arm raises an access flag fault and changes nothing, and
 * EPT ignores the flag (it is software's then).
 */
static void hardware_sets_the_access_flag_or_faults(void **state)
{
	(void)state;
	/* NPT: always with (the CPU always keeps its A and D) */
	for (int with = P->cfg.format == SLAT_FMT_NPT; with < 2; with++) {
		uint32_t features = with ? P->cfg.features
					 : P->cfg.features & ~HWD;
		struct fx *f = new_fx_features(features);
		uint64_t B = block(f);
		assert_int_equal(fx_map(f, G1, B, 0x100000000ull, SLAT_RW, 0),
				 SLAT_OK);
		assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), B,
						       true, NULL),
				 SLAT_WAS_YOUNG);
		uint64_t old = pte_at(f, G1);
		struct slat_hw_result r;
		enum slat_fault want = SLAT_FAULT_NONE;
		enum check_af af = f->ck.fmt->hw_af(&f->cfg);
		if (af == CHECK_AF_FAULT)
			want = SLAT_FAULT_ACCESS_FLAG;
		assert_int_equal(hw(f, G1 + B - 1, SLAT_ACCESS_READ, &r), want);
		assert_int_equal(r.level, 2);
		struct slat_leaf l;
		assert_int_equal(fx_lookup(f, G1, &l), SLAT_OK);
		if (af == CHECK_AF_HW_SETS)
			/* the whole block is young again */
			assert_int_equal(l.attrs & SLAT_YOUNG, SLAT_YOUNG);
		else
			assert_int_equal(l.pte, old);
		done_fx(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(map_installs_writable_leaves_dirty),
		cmocka_unit_test(dirty_read_reports_each_hardware_write_once),
		cmocka_unit_test(hardware_write_to_a_block_dirties_the_whole_block),
		cmocka_unit_test(clear_splits_partly_covered_dirty_block),
		cmocka_unit_test(read_without_clear_changes_nothing),
		cmocka_unit_test(clean_writable_leaf_becomes_dirty_on_hardware_write),
		cmocka_unit_test(wrprotect_removes_dbm_so_hardware_cannot_write),
		cmocka_unit_test(relax_adding_write_makes_the_leaf_dirty),
		cmocka_unit_test(relax_of_a_writable_clean_leaf_keeps_it_clean),
		cmocka_unit_test(clear_invalidates_per_policy),
		cmocka_unit_test(bitmap_has_a_bit_per_page_and_every_word_is_written),
		cmocka_unit_test(dirty_read_is_refused_without_hardware_dirty_state),
		cmocka_unit_test(bad_arguments_are_refused),
		cmocka_unit_test(hw_access_faults_like_the_cpu),
		cmocka_unit_test(hardware_sets_the_access_flag_or_faults),
		cmocka_unit_test(promote_keeps_a_write_during_its_invalidation),
	};
	int failed = 0;
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		P = &params[i];
		failed += cmocka_run_group_tests_name(P->name, tests, NULL, NULL);
	}
	return failed ? 1 : 0;
}
