/* SPDX-License-Identifier: MIT */
/*
 * Eager page splitting (seed 002) and huge-page recovery (seed 001): split
 * then recover leaves the same translations, the split walk skips what
 * cannot hold a block, promote refuses every table that is not one block in
 * disguise, and running out of pages leaves a valid table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture.h"
#include "model.h"

#define K4 0x1000ull
#define M2 0x200000ull
#define G1 0x40000000ull
#define PA_BASE 0x100000000ull

static uint64_t rng_state = 0x5eed;

static uint64_t rnd(uint64_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rng_state >> 33) % n;
}

static void check_against(struct fx *f, const struct model *m)
{
	if (checker_full(&f->ck, m)) {
		fprintf(stderr, "checker: %s\n", f->ck.msg);
		fail();
	}
}

static void topup(struct fx *f, const struct slat_need *req)
{
	int64_t need = slat_pages_needed(&f->t, req);
	assert_true(need >= 0 && need <= f->cache.capacity);
	fx_topup(f, (uint32_t)need);
}

static void topup_for(struct fx *f, enum slat_op_kind op, uint64_t ipa,
		      uint64_t size)
{
	topup(f, SLAT_NEED(.kind = op, .ipa = slat_ipa(ipa), .size = size));
}

/* For slat_map(f, ipa, size, pa, attrs, flags). */
static void topup_map(struct fx *f, uint64_t ipa, uint64_t size, uint64_t pa,
		      uint32_t attrs, uint32_t flags)
{
	topup(f, SLAT_NEED(.kind = SLAT_OP_MAP, .ipa = slat_ipa(ipa),
			   .size = size, .pa = slat_pa(pa), .attrs = attrs,
			   .flags = flags));
}

/* A random layout of 1G blocks, 2M blocks and pages in [0, 4G). */
static void random_layout(struct fx *f, struct model *m)
{
	for (int i = 0; i < 12; i++) {
		uint64_t unit = (uint64_t[]){ G1, M2, K4 }[rnd(3)];
		uint64_t ipa = rnd(4 * G1 / unit) * unit;
		uint64_t size = unit * (1 + rnd(unit == K4 ? 600 : 3));
		if (ipa + size > 4 * G1)
			size = 4 * G1 - ipa;
		uint32_t attrs = (uint32_t[]){ SLAT_RW, SLAT_R, SLAT_RWX,
					       SLAT_RW | SLAT_MT_DEVICE }[rnd(4)];
		topup_map(f, ipa, size, PA_BASE + ipa, attrs, 0);
		int ret = slat_map(&f->t, slat_ipa(ipa), size,
				   slat_pa(PA_BASE + ipa), attrs,
				   SLAT_OP(.cache = &f->cache));
		assert_true(ret >= 0);
		model_map(m, ipa, size, PA_BASE + ipa, attrs);
	}
}

static void split_then_recover_keeps_translations(void **state)
{
	(void)state;
	static const struct slat_config cfgs[] = {
		{ .format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40 },
		{ .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48 },
		{ .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		  .features = SLAT_FEAT_HWDIRTY },
	};
	for (int round = 0; round < 12; round++) {
		struct fx f;
		assert_int_equal(fx_init_cfg(&f, &cfgs[round % 3], 0x80000000ull), 0);
		struct model *m = model_new(4096);
		/* NPT: the CPU's dirty state, which wrprotect keeps */
		model_dirty_rules(m, f.cfg.features & SLAT_FEAT_HWDIRTY, false);
		random_layout(&f, m);
		check_against(&f, m);

		topup_for(&f, SLAT_OP_SPLIT, 0, 4 * G1);
		assert_int_equal(slat_split(&f.t, slat_ipa(0), 4 * G1, 0,
					    SLAT_OP(.cache = &f.cache)),
				 SLAT_OK);
		check_against(&f, m);

		assert_int_equal(
			slat_recover(
				&f.t, slat_ipa(0), 4 * G1,
				SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
				SLAT_OP(.flush = SLAT_FLUSH_VMID)),
			SLAT_OK);
		/* Promotion merges access flags: old pages may become young. */
		model_old_to_unknown(m, 0, 4 * G1);
		check_against(&f, m);
		model_free(m);
		fx_fini(&f);
	}
}

static void split_leaves_only_target_size_leaves(void **state)
{
	(void)state;
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	struct model *m = model_new(4096);
	random_layout(&f, m);
	topup(&f, SLAT_NEED(.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(0),
			    .size = 4 * G1, .leaf_size = M2));
	assert_int_equal(slat_split(&f.t, slat_ipa(0), 4 * G1, M2,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	check_against(&f, m);
	for (uint64_t ipa = 0; ipa < 4 * G1; ipa += M2) {
		struct slat_leaf l;
		if (fx_lookup(&f, ipa, &l) == SLAT_OK)
			assert_true(l.size <= M2);
	}
	model_free(m);
	fx_fini(&f);
}

/*
 * Seed 002, and one level further: a split reads only the levels that can
 * hold blocks larger than the target, and not even the entries of a table
 * whose count word says it holds no block. Nothing is written when there
 * is nothing to split.
 */
static void split_skips_levels_that_cannot_hold_blocks(void **state)
{
	(void)state;
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	/* [0, 1G) as 2M blocks, [1G, 2G) as pages */
	topup_map(&f, 0, G1, PA_BASE, SLAT_RW, SLAT_MAP_CAP(21));
	assert_int_equal(slat_map(&f.t, slat_ipa(0), G1, slat_pa(PA_BASE),
				  SLAT_RW,
				  SLAT_OP(.flags = SLAT_MAP_CAP(21),
					  .cache = &f.cache)),
			 SLAT_OK);
	topup_map(&f, G1, G1, PA_BASE + G1, SLAT_RW, SLAT_MAP_PAGES);
	assert_int_equal(slat_map(&f.t, slat_ipa(G1), G1, slat_pa(PA_BASE + G1),
				  SLAT_RW,
				  SLAT_OP(.flags = SLAT_MAP_PAGES,
					  .cache = &f.cache)),
			 SLAT_OK);

	/* 2 entries at L1, the 512 at L2 of the blocks' table only. */
	fx_clear_events(&f);
	topup_for(&f, SLAT_OP_SPLIT, 0, 2 * G1);
	assert_int_equal(slat_split(&f.t, slat_ipa(0), 2 * G1, 0,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(f.t.stats.visited, 2 + 512);
	assert_int_equal(f.t.stats.written[SLAT_WRITE_LEAF], 512 * 512);

	/* Split again: both L2 tables are known to hold no block. */
	fx_clear_events(&f);
	assert_int_equal(slat_split(&f.t, slat_ipa(0), 2 * G1, 0,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(f.t.stats.visited, 2);
	assert_int_equal(f.t.stats.written[SLAT_WRITE_LEAF], 0);

	/* A block mapped again makes its table worth reading; a split that
	 * covers only part of a table leaves it marked. */
	assert_int_equal(slat_unmap(&f.t, slat_ipa(G1 + M2), M2,
				    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
					    .cache = &f.cache)),
			 SLAT_OK);
	topup_map(&f, G1 + M2, M2, PA_BASE + G1 + M2, SLAT_RW, 0);
	assert_int_equal(slat_map(&f.t, slat_ipa(G1 + M2), M2,
				  slat_pa(PA_BASE + G1 + M2), SLAT_RW,
				  SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	fx_clear_events(&f);
	topup_for(&f, SLAT_OP_SPLIT, G1, M2);
	assert_int_equal(slat_split(&f.t, slat_ipa(G1), M2, 0,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(f.t.stats.visited, 1 + 1);
	fx_clear_events(&f);
	topup_for(&f, SLAT_OP_SPLIT, 0, 2 * G1);
	assert_int_equal(slat_split(&f.t, slat_ipa(0), 2 * G1, 0,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(f.t.stats.visited, 2 + 512);
	assert_int_equal(f.t.stats.written[SLAT_WRITE_LEAF], 512);

	/* Without skipping, every entry of every level. */
	fx_clear_events(&f);
	assert_int_equal(slat_split(&f.t, slat_ipa(0), 2 * G1, 0,
				    SLAT_OP(.flags = SLAT_SPLIT_NO_SKIP,
					    .cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(f.t.stats.visited, 2 + 1024 + 1024 * 512);
	fx_fini(&f);
}

static void split_block_breaks_before_make_on_arm(void **state)
{
	(void)state;
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	topup_map(&f, 0, G1, PA_BASE, SLAT_RW, 0);
	assert_int_equal(slat_map(&f.t, slat_ipa(0), G1, slat_pa(PA_BASE),
				  SLAT_RW, SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	fx_clear_events(&f);
	topup_for(&f, SLAT_OP_SPLIT, 0, G1);
	assert_int_equal(slat_split(&f.t, slat_ipa(0), G1, 0,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	/* One block, one subtree of 1 + 512 tables, built off-line. */
	assert_int_equal(f.t.stats.pages_alloc, 513);
	assert_int_equal(f.t.stats.written[SLAT_WRITE_BREAK], 1);
	assert_int_equal(f.t.stats.tlbi[SLAT_TLBI_IPA], 1);
	assert_int_equal(fx_count(&f, SLAT_EV_TLBI_IPA), 1);
	assert_false(f.ev[0].mapped); /* invalid while invalidated */
	assert_int_equal(f.t.stats.dcache_calls, 0);
	fx_fini(&f);
}

static void split_without_pages_stops_at_a_block_and_stays_valid(void **state)
{
	(void)state;
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	struct model *m = model_new(4096);
	topup_map(&f, 0, 4 * G1, PA_BASE, SLAT_RW, 0);
	assert_int_equal(slat_map(&f.t, slat_ipa(0), 4 * G1, slat_pa(PA_BASE),
				  SLAT_RW, SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	model_map(m, 0, 4 * G1, PA_BASE, SLAT_RW);
	slat_hosted_cache_drain(&f.h, &f.cache);
	fx_topup(&f, 513 * 2 + 100); /* two blocks and a bit */
	struct slat_op args = { .cache = &f.cache };
	assert_int_equal(slat_split(&f.t, slat_ipa(0), 4 * G1, 0, &args),
			 SLAT_E_NOMEM);
	assert_int_equal(args.done, 2 * G1);
	assert_int_equal(f.cache.nr, 100);
	check_against(&f, m);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(&f, G1, &l), SLAT_OK);
	assert_int_equal(l.size, K4);
	assert_int_equal(fx_lookup(&f, 3 * G1, &l), SLAT_OK);
	assert_int_equal(l.size, G1);
	model_free(m);
	fx_fini(&f);
}

/* A leaf size no level has is refused before anything changes; 0 means
 * the last level's pages. */
static void split_refuses_a_leaf_size_no_level_has(void **state)
{
	(void)state;
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	topup_map(&f, 0, G1, PA_BASE, SLAT_RW, 0);
	assert_int_equal(slat_map(&f.t, slat_ipa(0), G1, slat_pa(PA_BASE),
				  SLAT_RW, SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	fx_clear_events(&f);
	static const uint64_t bad[] = { 1, 2 * K4, 3 * K4, 4 * M2, 2 * G1,
					512 * G1, 1ull << 63 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(slat_split(&f.t, slat_ipa(0), G1, bad[i],
					    SLAT_OP(.cache = &f.cache)),
				 SLAT_E_INVAL);
	assert_int_equal(f.nev, 0);
	assert_int_equal(f.t.stats.visited, 0);
	/* 1G is already the leaf: nothing to do at that size */
	assert_int_equal(slat_split(&f.t, slat_ipa(0), G1, G1,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(f.t.stats.written[SLAT_WRITE_LEAF], 0);
	topup(&f, SLAT_NEED(.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(0),
			    .size = G1, .leaf_size = M2));
	assert_int_equal(slat_split(&f.t, slat_ipa(0), G1, M2,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(&f, 0, &l), SLAT_OK);
	assert_int_equal(l.size, M2);
	topup_for(&f, SLAT_OP_SPLIT, 0, G1);
	assert_int_equal(slat_split(&f.t, slat_ipa(0), G1, 0,
				    SLAT_OP(.cache = &f.cache)),
			 SLAT_OK);
	assert_int_equal(fx_lookup(&f, 0, &l), SLAT_OK);
	assert_int_equal(l.size, K4);
	fx_fini(&f);
}

/* Build a 2M range of pages at [0, 2M), then spoil it with @spoil. */
static void promote_refuses(int spoil)
{
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	uint64_t pa = PA_BASE + (spoil == 3 ? K4 : 0);
	topup_map(&f, 0, M2, pa, SLAT_RW, SLAT_MAP_PAGES);
	assert_int_equal(slat_map(&f.t, slat_ipa(0), M2, slat_pa(pa), SLAT_RW,
				  SLAT_OP(.flags = SLAT_MAP_PAGES,
					  .cache = &f.cache)),
			 SLAT_OK);
	uint64_t page = 17 * K4;
	switch (spoil) {
	case 0: /* a hole */
		assert_int_equal(fx_unmap(&f, page, K4, SLAT_FLUSH_RANGE), SLAT_OK);
		break;
	case 1: /* a different attribute */
		topup_for(&f, SLAT_OP_WRPROTECT, page, K4);
		assert_int_equal(
			slat_wrprotect(&f.t, slat_ipa(page), K4,
				       SLAT_OP(.flush = SLAT_FLUSH_RANGE,
					       .cache = &f.cache)),
			SLAT_OK);
		break;
	case 2: /* a discontiguous PA */
		assert_int_equal(fx_map(&f, page, K4, PA_BASE + 0x10000000,
					SLAT_RW, 0), SLAT_OK);
		break;
	default: /* contiguous, but not aligned to 2M */
		break;
	}
	struct slat_leaf before;
	assert_int_equal(fx_lookup(&f, 0, &before), SLAT_OK);
	fx_clear_events(&f);
	assert_int_equal(
		slat_recover(&f.t, slat_ipa(0), G1,
			     SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
			     SLAT_OP(.flush = SLAT_FLUSH_VMID)),
		SLAT_OK);
	struct slat_leaf after;
	assert_int_equal(fx_lookup(&f, 0, &after), SLAT_OK);
	assert_int_equal(after.size, K4);
	assert_int_equal(after.pte, before.pte);
	assert_int_equal(f.t.stats.pages_freed, 0);
	assert_int_equal(f.t.stats.tlbi[SLAT_TLBI_VMID], 0);
	fx_fini(&f);
}

static void promote_refuses_a_hole(void **s) { (void)s; promote_refuses(0); }
static void promote_refuses_a_different_attribute(void **s) { (void)s; promote_refuses(1); }
static void promote_refuses_a_discontiguous_pa(void **s) { (void)s; promote_refuses(2); }
static void promote_refuses_a_misaligned_pa(void **s) { (void)s; promote_refuses(3); }

static int max_2m(void *arg, slat_ipa_t ipa)
{
	(void)arg, (void)ipa;
	return 2;
}

static void promote_respects_the_backing_limit_and_batches_flushes(void **state)
{
	(void)state;
	struct fx f;
	assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
	topup_map(&f, 0, G1, PA_BASE, SLAT_RW, SLAT_MAP_PAGES);
	assert_int_equal(slat_map(&f.t, slat_ipa(0), G1, slat_pa(PA_BASE),
				  SLAT_RW,
				  SLAT_OP(.flags = SLAT_MAP_PAGES,
					  .cache = &f.cache)),
			 SLAT_OK);
	fx_clear_events(&f);
	assert_int_equal(
		slat_recover(&f.t, slat_ipa(0), G1,
			     SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE,
					   .max_level = max_2m, .arg = NULL),
			     SLAT_OP(.flush = SLAT_FLUSH_VMID)),
		SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(&f, G1 - K4, &l), SLAT_OK);
	assert_int_equal(l.size, M2);
	assert_int_equal(l.pa.pa, PA_BASE + G1 - K4);
	/* 512 promotions, batched 64 to a flush; 512 page tables freed. */
	assert_int_equal(f.t.stats.written[SLAT_WRITE_LEAF], 512);
	assert_int_equal(f.t.stats.tlbi[SLAT_TLBI_VMID], 512 / 64);
	assert_int_equal(f.t.stats.pages_freed, 512);
	assert_int_equal(slat_hosted_table_pages(&f.h), 1 + f.t.geo.root_pages);
	fx_fini(&f);
}

static void zap_strategies_remove_what_could_be_blocks(void **state)
{
	(void)state;
	for (int s = SLAT_RECOVER_ZAP_LEAF; s <= SLAT_RECOVER_ZAP_TABLE; s++) {
		struct fx f;
		assert_int_equal(fx_init(&f, 4096, 40, 48, 0), 0);
		topup_map(&f, 0, G1, PA_BASE, SLAT_RW, SLAT_MAP_PAGES);
		assert_int_equal(slat_map(&f.t, slat_ipa(0), G1,
					  slat_pa(PA_BASE), SLAT_RW,
					  SLAT_OP(.flags = SLAT_MAP_PAGES,
						  .cache = &f.cache)),
				 SLAT_OK);
		fx_clear_events(&f);
		assert_int_equal(slat_recover(&f.t, slat_ipa(0), G1,
					      SLAT_RECOVERY(.strategy = s),
					      NULL),
				 SLAT_OK);
		struct slat_leaf l;
		assert_int_equal(fx_lookup(&f, 0, &l), SLAT_E_NOENT);
		assert_int_equal(slat_hosted_table_pages(&f.h), f.t.geo.root_pages);
		if (s == SLAT_RECOVER_ZAP_LEAF)
			/* the slow way: one invalidation per leaf, then one
			 * per table it emptied (by IPA: no leaf below) */
			assert_int_equal(f.t.stats.tlbi[SLAT_TLBI_IPA],
					 512 * 512 + 512 + 1);
		else
			assert_int_equal(f.t.stats.written[SLAT_WRITE_CLEAR], 1);
		fx_fini(&f);
	}
}

/* A zap that empties a table's parent frees the parent too: no empty
 * non-root table is left (4K, 48-bit: the 1 GiB span's level-2 table was
 * the only entry of its level-1 table). */
static void zap_table_frees_the_parent_it_empties(void **state)
{
	(void)state;
	for (int s = SLAT_RECOVER_ZAP_LEAF; s <= SLAT_RECOVER_ZAP_TABLE; s++) {
		for (int policy = SLAT_FLUSH_ENTRY; policy <= SLAT_FLUSH_NONE;
		     policy++) {
			struct fx f;
			assert_int_equal(fx_init(&f, 4096, 48, 48, 0), 0);
			topup_map(&f, 0x1000, K4, PA_BASE, SLAT_RW, 0);
			assert_int_equal(slat_map(&f.t, slat_ipa(0x1000), K4,
						  slat_pa(PA_BASE), SLAT_RW,
						  SLAT_OP(.cache = &f.cache)),
					 SLAT_OK);
			assert_int_equal(slat_recover(&f.t, slat_ipa(0), G1,
						      SLAT_RECOVERY(.strategy =
									    s),
						      SLAT_OP(.flush = policy)),
					 SLAT_OK);
			assert_int_equal(slat_hosted_table_pages(&f.h),
					 f.t.geo.root_pages);
			fx_fini(&f);
		}
	}
}

/*
 * x86: two 1 GiB pages split to 4K and promoted back. EPT swaps each entry
 * in place, with no flush; NPT breaks it first (AMD erratum 383), a split's
 * break followed by an ASID flush, the only invalidation it has.
 */
static void x86_split_and_promote_back(enum slat_format_id format)
{
	bool bbm = format == SLAT_FMT_NPT;
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache c;
	struct slat_config cfg = {
		.format = format, .granule = 4096, .ia_bits = 48,
		.features = SLAT_FEAT_HWDIRTY,
	};
	assert_int_equal(slat_hosted_init(&h, 4096ull * 4096, 4096, 0x80000000ull),
			 SLAT_OK);
	assert_int_equal(slat_table_init(&t, &cfg, slat_hosted_ops(), &h), SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 2048), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 2048), SLAT_OK);
	assert_int_equal(slat_map(&t, slat_ipa(G1), 2 * G1, slat_pa(PA_BASE),
				  SLAT_RW, SLAT_OP(.cache = &c)),
			 SLAT_OK);
	slat_stats_reset(&t);
	assert_int_equal(slat_split(&t, slat_ipa(G1), 2 * G1, 0,
				    SLAT_OP(.cache = &c)),
			 SLAT_OK);
	/* With A/D on, each block is locked (not present) while its table is
	 * built, so no update by the CPU is lost; EPT needs no flush. */
	assert_int_equal(t.stats.written[SLAT_WRITE_BREAK], 2);
	for (int i = 0; i < SLAT_TLBI_KINDS; i++)
		assert_int_equal(t.stats.tlbi[i],
				 bbm && i == SLAT_TLBI_VMID ? 2 : 0);
	assert_int_equal(t.stats.pages_alloc, 2 * 513);
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&t, slat_ipa(G1 + G1 + 5 * K4), &l), SLAT_OK);
	assert_int_equal(l.size, K4);
	assert_int_equal(l.pa.pa, PA_BASE + G1 + 5 * K4);
	assert_int_equal(l.attrs & SLAT_DIRTY, SLAT_DIRTY);

	slat_stats_reset(&t);
	assert_int_equal(
		slat_recover(&t, slat_ipa(G1), 2 * G1,
			     SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
			     SLAT_OP(.flush = SLAT_FLUSH_VMID)),
		SLAT_OK);
	/* The one flush before the tables are freed: EPT swaps in place, NPT
	 * breaks both entries first and makes the blocks after it. */
	assert_int_equal(t.stats.written[SLAT_WRITE_BREAK], bbm ? 2 : 0);
	assert_int_equal(t.stats.tlbi[SLAT_TLBI_VMID], 1);
	assert_int_equal(t.stats.pages_freed, 2 * 513);
	assert_int_equal(slat_lookup(&t, slat_ipa(G1 + G1 + 5 * K4), &l), SLAT_OK);
	assert_int_equal(l.size, G1);
	assert_int_equal(l.pa.pa, PA_BASE + G1 + 5 * K4);
	assert_int_equal(l.attrs & (SLAT_RW | SLAT_DIRTY), SLAT_RW | SLAT_DIRTY);
	slat_table_destroy(&t);
	slat_hosted_cache_fini(&c);
	assert_int_equal(h.double_frees, 0);
	slat_hosted_fini(&h);
}

static void ept_split_in_place_and_promote_back(void **state)
{
	(void)state;
	x86_split_and_promote_back(SLAT_FMT_EPT);
}

static void npt_split_breaks_first_and_promotes_back(void **state)
{
	(void)state;
	x86_split_and_promote_back(SLAT_FMT_NPT);
}

/*
 * FEAT_LPA2: a 512 GiB level-0 block (4K, DS) at a PA above 2^50 splits
 * into 512 level-1 blocks of 1 GiB (one table page, break-before-make on
 * the block), each with its part of the PA and PA[51:50] still in bits
 * [9:8]; promote makes the same level-0 block again.
 */
static void lpa2_level0_block_splits_to_1g_and_promotes_back(void **state)
{
	(void)state;
	struct fx f;
	const uint64_t G512 = 512 * G1, pa = 0xe008000000000ull;
	assert_int_equal(fx_init_pa(&f, 4096, 52, 52, SLAT_FEAT_LPA2,
				    0xf000000000000ull), 0);
	/* a block in the root: no table page taken */
	slat_stats_reset(&f.t);
	assert_int_equal(fx_map(&f, G512, G512, pa, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(f.t.stats.pages_alloc, 0);
	struct slat_leaf block;
	assert_int_equal(fx_lookup(&f, G512, &block), SLAT_OK);
	assert_int_equal(block.level, 0);
	assert_int_equal(block.pte, 0x00420080000007fdull);

	/* slat_pages_needed counts a split down to pages; to 1G takes one */
	fx_topup(&f, 2);
	slat_stats_reset(&f.t);
	assert_int_equal(slat_split(&f.t, slat_ipa(G512), G512, G1,
				    SLAT_OP(.cache = &f.cache)), SLAT_OK);
	assert_int_equal(f.t.stats.pages_alloc, 1);
	assert_int_equal(f.t.stats.written[SLAT_WRITE_BREAK], 1);
	for (uint64_t i = 0; i < 512; i += 73) {
		struct slat_leaf l;
		assert_int_equal(fx_lookup(&f, G512 + i * G1, &l), SLAT_OK);
		assert_int_equal(l.level, 1);
		assert_int_equal(slat_pa_v(l.pa), pa + i * G1);
		assert_int_equal(l.pte & 0x300, 0x300);
	}
	if (checker_full(&f.ck, NULL))
		fail_msg("%s", f.ck.msg);

	assert_int_equal(slat_recover(&f.t, slat_ipa(G512), G512,
				      SLAT_RECOVERY(.strategy =
						    SLAT_RECOVER_PROMOTE),
				      SLAT_OP(.flush = SLAT_FLUSH_VMID)),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(&f, G512 + 5 * G1, &l), SLAT_OK);
	assert_int_equal(l.level, 0);
	assert_int_equal(l.pte, block.pte);
	if (checker_full(&f.ck, NULL))
		fail_msg("%s", f.ck.msg);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_then_recover_keeps_translations),
		cmocka_unit_test(split_leaves_only_target_size_leaves),
		cmocka_unit_test(split_skips_levels_that_cannot_hold_blocks),
		cmocka_unit_test(split_block_breaks_before_make_on_arm),
		cmocka_unit_test(split_without_pages_stops_at_a_block_and_stays_valid),
		cmocka_unit_test(split_refuses_a_leaf_size_no_level_has),
		cmocka_unit_test(promote_refuses_a_hole),
		cmocka_unit_test(promote_refuses_a_different_attribute),
		cmocka_unit_test(promote_refuses_a_discontiguous_pa),
		cmocka_unit_test(promote_refuses_a_misaligned_pa),
		cmocka_unit_test(promote_respects_the_backing_limit_and_batches_flushes),
		cmocka_unit_test(zap_strategies_remove_what_could_be_blocks),
		cmocka_unit_test(zap_table_frees_the_parent_it_empties),
		cmocka_unit_test(ept_split_in_place_and_promote_back),
		cmocka_unit_test(npt_split_breaks_first_and_promotes_back),
		cmocka_unit_test(lpa2_level0_block_splits_to_1g_and_promotes_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
