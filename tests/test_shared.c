/* SPDX-License-Identifier: MIT */
/*
 * The fault path's shared-mode bookkeeping, on Arm stage 2 and EPT:
 * - a page cache with its own counters takes every count of the shared
 *   calls made with it, exactly, and the table's counters none;
 * - shared installs leave a table's count SLAT_REFCOUNT_UNKNOWN, and the
 *   next exclusive user recounts it: partial unmaps keep exact counts, the
 *   last unmap frees the table, nothing leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture.h"

#define PAGE  4096ull
#define BASE  0x40000000ull /* 1 GiB: a fresh last-level table */
#define PA(x) ((x) + 0x100000000ull)

static const struct slat_config configs[] = {
	{ .format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40, .pa_bits = 48 },
	{ .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46 },
	{ .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46,
	  .features = SLAT_FEAT_HWDIRTY },
};

static const char *name_of(const struct slat_config *c)
{
	return c->format == SLAT_FMT_EPT ? "ept4"
	       : c->format == SLAT_FMT_NPT ? "npt4" : "arm-s2";
}

/* Levels a one-page fault visits: the table's whole depth. */
static uint64_t depth(const struct fx *f)
{
	return (uint64_t)(SLAT_LAST_LEVEL - f->t.geo.start_level + 1);
}

/* The refcount word of the last-level table translating @ipa. */
static uint32_t *leaf_table_count(struct fx *f, uint64_t ipa)
{
	struct check_leaf l;
	assert_true(checker_leaf_at(&f->ck, ipa, &l) >= 0 && l.level == SLAT_LAST_LEVEL);
	uintptr_t table = (uintptr_t)l.ptep & ~(uintptr_t)(f->h.granule - 1);
	uint64_t idx = ((uint8_t *)table - f->h.arena) / f->h.granule;
	return &f->h.refcounts[idx];
}

/* Non-zero entries of the last-level table translating @ipa. */
static uint32_t leaf_table_used(struct fx *f, uint64_t ipa)
{
	struct check_leaf l;
	assert_true(checker_leaf_at(&f->ck, ipa, &l) >= 0 && l.level == SLAT_LAST_LEVEL);
	const uint64_t *e = (const uint64_t *)((uintptr_t)l.ptep &
					       ~(uintptr_t)(f->h.granule - 1));
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->t.geo.entries; i++)
		n += e[i] != 0;
	return n;
}

static void shared_faults(struct fx *f, uint64_t first, uint64_t n)
{
	for (uint64_t a = first; a < first + n * PAGE; a += PAGE)
		assert_int_equal(slat_map(&f->t, slat_ipa(a), PAGE,
					  slat_pa(PA(a)),
					  SLAT_RW | SLAT_MT_NORMAL,
					  SLAT_OP(.flags = SLAT_SHARED,
						  .cache = &f->cache)),
				 SLAT_OK);
}

static void own_counters(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		struct fx f;
		struct slat_stats mine;

		print_message("%s\n", name_of(&configs[c]));
		assert_int_equal(fx_init_cfg(&f, &configs[c], 0x100000000ull), 0);
		/* The first page builds the tables, exclusively. */
		assert_int_equal(fx_map(&f, BASE, PAGE, PA(BASE),
					SLAT_RW | SLAT_MT_NORMAL, 0), SLAT_OK);
		fx_clear_events(&f);
		memset(&mine, 0, sizeof(mine));
		f.cache.stats = &mine;
		shared_faults(&f, BASE + PAGE, 511);

		for (size_t w = 0; w < sizeof(f.t.stats) / 8; w++)
			assert_int_equal(((uint64_t *)&f.t.stats)[w], 0);
		/* The first descends from the root and takes the cache's memo
		 * of the table; the others read their entry only. */
		assert_int_equal(mine.visited, depth(&f) + 510);
		assert_int_equal(mine.written[SLAT_WRITE_LEAF], 511);
		assert_int_equal(mine.written[SLAT_WRITE_TABLE], 0);
		assert_int_equal(mine.retries, 0);
		assert_int_equal(mine.pages_alloc, 0);
		/* x86 needs no cache maintenance; Arm cleans each new page. */
		uint64_t cleans = configs[c].format == SLAT_FMT_ARM_S2 ? 511 : 0;
		assert_int_equal(mine.dcache_calls, cleans);
		assert_int_equal(mine.dcache_bytes, cleans * PAGE);
		assert_int_equal(fx_count(&f, SLAT_EV_DCACHE_CLEAN_INVAL), cleans);

		/* A second fault on a mapped page is not counted as a write. */
		assert_int_equal(slat_map(&f.t, slat_ipa(BASE), PAGE,
					  slat_pa(PA(BASE)),
					  SLAT_RW | SLAT_MT_NORMAL,
					  SLAT_OP(.flags = SLAT_SHARED |
							   SLAT_MAP_NO_REPLACE,
						  .cache = &f.cache)),
				 SLAT_NOTHING_TO_DO);
		assert_int_equal(mine.written[SLAT_WRITE_LEAF], 511);
		f.cache.stats = NULL;
		fx_fini(&f);
	}
}

static void unknown_count_recounted(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		struct fx f;

		print_message("%s\n", name_of(&configs[c]));
		assert_int_equal(fx_init_cfg(&f, &configs[c], 0x100000000ull), 0);
		uint64_t before = slat_hosted_table_pages(&f.h);
		assert_int_equal(fx_map(&f, BASE, PAGE, PA(BASE),
					SLAT_RW | SLAT_MT_NORMAL, 0), SLAT_OK);
		assert_int_equal(*leaf_table_count(&f, BASE), 1);

		shared_faults(&f, BASE + PAGE, 299);
		assert_int_equal(*leaf_table_count(&f, BASE), SLAT_REFCOUNT_UNKNOWN);
		assert_int_equal(leaf_table_used(&f, BASE), 300);

		/* An exclusive unmap recounts, then counts exactly again. */
		assert_int_equal(slat_unmap(&f.t, slat_ipa(BASE), 100 * PAGE,
					    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						    .cache = &f.cache)),
				 SLAT_OK);
		/* (A recount cannot tell blocks from pages: it says the
		 * table may hold blocks.) */
		assert_int_equal(*leaf_table_count(&f, BASE + 100 * PAGE),
				 200 | SLAT_REFCOUNT_HAS_BLOCKS);
		assert_int_equal(fx_map(&f, BASE, PAGE, PA(BASE),
					SLAT_RW | SLAT_MT_NORMAL, 0), SLAT_OK);
		assert_int_equal(*leaf_table_count(&f, BASE),
				 201 | SLAT_REFCOUNT_HAS_BLOCKS);

		/* Unknown again; unmapping every entry frees the tables. */
		shared_faults(&f, BASE + 300 * PAGE, 10);
		assert_int_equal(*leaf_table_count(&f, BASE), SLAT_REFCOUNT_UNKNOWN);
		assert_int_equal(slat_unmap(&f.t, slat_ipa(BASE), 512 * PAGE,
					    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						    .cache = &f.cache)),
				 SLAT_OK);
		assert_int_equal(slat_hosted_table_pages(&f.h), before);
		fx_fini(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_counters),
		cmocka_unit_test(unknown_count_recounted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
