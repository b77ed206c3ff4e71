/* SPDX-License-Identifier: MIT */
/*
 * The reference model is itself checked against the simplest possible
 * model: one array entry per page of a small IPA window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <slat/types.h>

#include "model.h"

#define G 4096ull
#define NPAGES 512

struct page {
	bool valid;
	uint64_t pa;
	uint32_t attrs;
	uint8_t young;
	bool dirty;
};

static struct page naive[NPAGES];

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_cb(void *arg, const struct model_run *r)
{
	uint64_t *next = arg;
	for (uint64_t a = *next; a < r->start; a += G)
		assert_false(naive[a / G].valid);
	for (uint64_t a = r->start; a < r->end; a += G) {
		const struct page *p = &naive[a / G];
		assert_true(p->valid);
		assert_int_equal(p->pa, r->pa + (a - r->start));
		assert_int_equal(p->attrs, r->attrs);
		assert_int_equal(p->young, r->young);
		assert_int_equal(p->dirty, r->dirty);
	}
	*next = r->end;
	return 0;
}

static void compare(const struct model *m)
{
	uint64_t next = 0;
	model_for_each(m, 0, NPAGES * G, cmp_cb, &next);
	for (uint64_t a = next; a < NPAGES * G; a += G)
		assert_false(naive[a / G].valid);
}

/* Runs that continue each other are merged: the model stays small. */
static void model_merges_adjacent_runs(void **state)
{
	(void)state;
	struct model *m = model_new(G);
	model_map(m, 0, 4 * G, 0x100000, SLAT_RW);
	model_map(m, 4 * G, 4 * G, 0x104000, SLAT_RW);
	assert_int_equal(model_nr_runs(m), 1);
	model_map(m, 2 * G, G, 0x900000, SLAT_RW);
	assert_int_equal(model_nr_runs(m), 3);
	model_map(m, 2 * G, G, 0x102000, SLAT_RW);
	assert_int_equal(model_nr_runs(m), 1);
	assert_int_equal(model_mapped_bytes(m), 8 * G);
	model_free(m);
}

/* map leaves pages with the same PA and memory type entirely alone. */
static void model_map_keeps_same_pa_and_memtype(void **state)
{
	(void)state;
	struct model *m = model_new(G);
	struct model_run r;
	model_map(m, 0, 4 * G, 0x100000, SLAT_R | SLAT_SW(3));
	model_set_young(m, 0, 4 * G, MODEL_OLD);
	/* same PA and memory type, other permissions: nothing written */
	assert_int_equal(model_map(m, 0, 4 * G, 0x100000, SLAT_RWX), 0);
	assert_true(model_find(m, G, &r));
	assert_int_equal(r.attrs, SLAT_R | SLAT_SW(3));
	assert_int_equal(r.young, MODEL_OLD);
	/* another memory type: rewritten, young */
	assert_int_equal(model_map(m, 0, 2 * G, 0x100000,
				   SLAT_R | SLAT_MT_DEVICE),
			 2 * G);
	assert_true(model_find(m, 0, &r));
	assert_int_equal(r.young, MODEL_YOUNG);
	assert_true(model_map_conflicts(m, 0, 4 * G, 0x100000, SLAT_R));
	assert_false(model_map_conflicts(m, 2 * G, 2 * G, 0x102000, SLAT_RW));
	model_free(m);
}

/* Hardware dirty state: writable pages are installed dirty. */
static void model_installs_writable_pages_dirty(void **state)
{
	(void)state;
	struct model *m = model_new(G);
	struct model_run r;
	model_dirty_rules(m, true, true);
	model_map(m, 0, 4 * G, 0x100000, SLAT_RW);
	model_map(m, 4 * G, 4 * G, 0x200000, SLAT_R);
	assert_int_equal(model_dirty_pages(m, 0, 8 * G), 4);
	/* a clear of one page: the run splits */
	model_set_dirty(m, G, 2 * G, false);
	assert_int_equal(model_dirty_pages(m, 0, 8 * G), 3);
	assert_true(model_find(m, G, &r));
	assert_false(r.dirty);
	/* relax adding write dirties; on an already writable page it does
	 * not */
	model_relax(m, 0, 8 * G, SLAT_W, NULL);
	assert_int_equal(model_dirty_pages(m, 0, 8 * G), 7);
	/* wrprotect cleans under these rules (Arm: DBM goes with S2AP.W) */
	model_wrprotect(m, 0, 8 * G);
	assert_int_equal(model_dirty_pages(m, 0, 8 * G), 0);
	model_free(m);

	/* without the rules nothing is ever dirty */
	m = model_new(G);
	model_map(m, 0, 4 * G, 0x100000, SLAT_RW);
	model_set_dirty(m, 0, 4 * G, true);
	assert_int_equal(model_dirty_pages(m, 0, 4 * G), 0);
	model_free(m);
}

/*
 * Random operations on the model and on a page array, compared; with
 * hardware dirty state off, on (wrprotect cleaning), on (wrprotect keeping
 * the dirty state).
 */
static void agree(bool dirty_on, bool wp_cleans)
{
	struct model *m = model_new(G);
	model_dirty_rules(m, dirty_on, wp_cleans);
	memset(naive, 0, sizeof(naive));
	for (int i = 0; i < 20000; i++) {
		uint64_t s = rnd() % NPAGES, n = 1 + rnd() % 40;
		if (s + n > NPAGES)
			n = NPAGES - s;
		uint64_t ipa = s * G, size = n * G;
		uint64_t pa = (rnd() % 4) * 0x100000 + (rnd() % 2) * ipa;
		uint32_t attrs = (uint32_t)(rnd() % 16) |
				 (uint32_t)(rnd() % 3) << SLAT_MT_SHIFT |
				 SLAT_SW(rnd() % 2);
		uint32_t perms = (uint32_t)(1 + rnd() % 15);
		switch (rnd() % 7) {
		case 0: {
			uint64_t w = 0;
			for (uint64_t p = s; p < s + n; p++) {
				struct page *q = &naive[p];
				uint64_t want = pa + (p - s) * G;
				if (q->valid && q->pa == want &&
				    SLAT_MT(q->attrs) == SLAT_MT(attrs))
					continue;
				*q = (struct page){ true, want, attrs,
						    MODEL_YOUNG,
						    dirty_on && (attrs & SLAT_W) };
				w += G;
			}
			assert_int_equal(model_map(m, ipa, size, pa, attrs), w);
			break;
		}
		case 1:
			for (uint64_t p = s; p < s + n; p++)
				naive[p].valid = false;
			model_unmap(m, ipa, size);
			break;
		case 2:
			for (uint64_t p = s; p < s + n; p++) {
				naive[p].attrs &= ~SLAT_W;
				if (wp_cleans)
					naive[p].dirty = false;
			}
			model_wrprotect(m, ipa, size);
			break;
		case 3: {
			bool full = true;
			for (uint64_t p = s; p < s + n; p++)
				full = full && naive[p].valid;
			assert_int_equal(model_fully_mapped(m, ipa, ipa + size),
					 full);
			if (!full)
				break;
			for (uint64_t p = s; p < s + n; p++) {
				if (perms & ~naive[p].attrs & SLAT_W)
					naive[p].dirty = dirty_on;
				naive[p].attrs |= perms;
				naive[p].young = MODEL_YOUNG;
			}
			model_relax(m, ipa, size, perms, NULL);
			break;
		}
		case 4: {
			uint8_t y = (uint8_t)(rnd() % 3);
			for (uint64_t p = s; p < s + n; p++)
				naive[p].young = y;
			model_set_young(m, ipa, ipa + size, y);
			break;
		}
		case 5: {
			bool d = rnd() % 2;
			uint64_t want = 0;
			for (uint64_t p = s; p < s + n; p++) {
				if (naive[p].valid)
					naive[p].dirty = dirty_on && d;
				want += naive[p].dirty;
			}
			model_set_dirty(m, ipa, ipa + size, d);
			assert_int_equal(model_dirty_pages(m, ipa, ipa + size),
					 want);
			break;
		}
		default:
			for (uint64_t p = s; p < s + n; p++)
				if (naive[p].young == MODEL_OLD)
					naive[p].young = MODEL_YOUNG_UNKNOWN;
			model_old_to_unknown(m, ipa, ipa + size);
			break;
		}
		/* young of unmapped pages is meaningless: normalise */
		for (uint64_t p = 0; p < NPAGES; p++)
			if (!naive[p].valid)
				naive[p] = (struct page){ 0 };
		if (i % 97 == 0 || n > 30)
			compare(m);
	}
	compare(m);
	struct model *c = model_clone(m);
	compare(c);
	model_free(c);
	model_free(m);
}

/* Huge-page recovery: what may become a block, and the block it becomes. */
static void model_uniform_and_promote(void **state)
{
	(void)state;
	struct model *m = model_new(G);
	model_dirty_rules(m, true, true);
	/* 8 pages to one aligned PA run, the same attributes, mixed young
	 * and dirty state */
	model_map(m, 8 * G, 8 * G, 0x108000, SLAT_RW);
	model_set_young(m, 8 * G, 12 * G, MODEL_OLD);
	model_set_young(m, 12 * G, 13 * G, MODEL_YOUNG_UNKNOWN);
	model_set_dirty(m, 8 * G, 16 * G, false);
	model_set_dirty(m, 9 * G, 10 * G, true);
	assert_true(model_uniform(m, 8 * G, 16 * G, 8 * G));
	assert_false(model_uniform(m, 8 * G, 16 * G, 16 * G)); /* PA 8-page aligned only */
	assert_false(model_uniform(m, 4 * G, 12 * G, 8 * G));  /* a hole */
	assert_false(model_uniform(m, 8 * G, 8 * G, 8 * G));   /* nothing */
	model_promote(m, 8 * G, 16 * G);
	struct model_run r;
	assert_true(model_find(m, 8 * G, &r));
	assert_int_equal(r.start, 8 * G);
	assert_int_equal(r.end, 16 * G);
	assert_int_equal(r.pa, 0x108000);
	assert_int_equal(r.attrs, SLAT_RW);
	assert_int_equal(r.young, MODEL_YOUNG); /* pages 13-15 were young */
	assert_int_equal(r.dirty, 1);
	/* old and unknown: unknown; all old: old */
	model_set_young(m, 8 * G, 16 * G, MODEL_OLD);
	model_set_young(m, 9 * G, 10 * G, MODEL_YOUNG_UNKNOWN);
	model_promote(m, 8 * G, 16 * G);
	assert_true(model_find(m, 15 * G, &r));
	assert_int_equal(r.young, MODEL_YOUNG_UNKNOWN);
	model_set_young(m, 8 * G, 16 * G, MODEL_OLD);
	model_promote(m, 8 * G, 16 * G);
	assert_true(model_find(m, 8 * G, &r));
	assert_int_equal(r.young, MODEL_OLD);
	/* different attributes, a discontiguous PA: not uniform */
	model_map(m, 16 * G, 8 * G, 0x110000, SLAT_RW);
	model_unmap(m, 17 * G, G);
	model_map(m, 17 * G, G, 0x111000, SLAT_RW | SLAT_SW(1));
	assert_false(model_uniform(m, 16 * G, 24 * G, 8 * G));
	model_map(m, 24 * G, 8 * G, 0x118000, SLAT_R);
	model_map(m, 25 * G, G, 0x900000, SLAT_R);
	assert_false(model_uniform(m, 24 * G, 32 * G, 8 * G));
	model_free(m);
}

static void model_agrees_with_a_page_array(void **state)
{
	(void)state;
	agree(false, false);
	agree(true, true);
	agree(true, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_merges_adjacent_runs),
		cmocka_unit_test(model_map_keeps_same_pa_and_memtype),
		cmocka_unit_test(model_installs_writable_pages_dirty),
		cmocka_unit_test(model_uniform_and_promote),
		cmocka_unit_test(model_agrees_with_a_page_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
