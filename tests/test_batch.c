/* SPDX-License-Identifier: MIT */
/*
 * The batch of a range operation (unmap, recover): a table it unlinks is
 * freed, and the memory of what it unmapped cleaned, only after an
 * invalidation covers every IPA that table or memory translated, whatever
 * the order the walk queued them in. The shapes are the ones where the
 * batch fills exactly when a parent table, emptied by its children's
 * removal, is queued after them (in post-order): 64 and 128 children, at
 * level 3 (2 MiB tables of pages under a level-2 table) and at level 2
 * (1 GiB tables of blocks under a level-1 table), with 63 and 65 beside
 * them; for unmap and the two zap strategies of recovery, every policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cover.h"
#include "fixture.h"

#define K4 0x1000ull
#define M2 0x200000ull
#define G1 0x40000000ull

static const struct slat_config arm40 = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40, .pa_bits = 48,
};
static const struct slat_config arm48 = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 48, .pa_bits = 48,
};
static const struct slat_config arm48_fwb = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 48, .pa_bits = 48,
	.features = SLAT_FEAT_FWB,
};
static const struct slat_config ept48 = {
	.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46,
};
static const struct slat_config npt48 = {
	.format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46,
	.features = SLAT_FEAT_HWDIRTY,
};

/* A table page of the range before the operation, and its IPA span. */
struct span {
	uint64_t va, base, size;
};

struct probe {
	struct span *v;
	size_t n, cap;
};

static int note_table(void *arg, const struct check_table *t)
{
	struct probe *p = arg;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->v = realloc(p->v, p->cap * sizeof(*p->v));
		assert_non_null(p->v);
	}
	p->v[p->n++] = (struct span){ (uint64_t)(uintptr_t)t->va, t->base,
				      t->size };
	return 0;
}

enum batch_op { OP_UNMAP, OP_ZAP_TABLE, OP_ZAP_LEAF };

static const char *const op_names[] = { "unmap", "zap-table", "zap-leaf" };

static int run_op(struct fx *f, enum batch_op op, uint64_t ipa, uint64_t size,
		  enum slat_tlbi_policy policy)
{
	if (op == OP_UNMAP)
		return fx_unmap(f, ipa, size, policy);
	enum slat_recover_strategy s = op == OP_ZAP_TABLE ? SLAT_RECOVER_ZAP_TABLE
							  : SLAT_RECOVER_ZAP_LEAF;
	return slat_recover(&f->t, slat_ipa(ipa), size,
			    SLAT_RECOVERY(.strategy = s),
			    SLAT_OP(.flush = policy, .cache = &f->cache));
}

/* What the observer checks as the events come (an operation under
 * SLAT_FLUSH_ENTRY sees one per page, more than the fixture keeps). */
struct watch {
	struct fx *f;
	const struct probe *p;
	struct cover c;
	uint64_t base, end, pa;
	size_t nev, frees;
	char fail[256]; /* the first event that came too early */
};

static void watch_event(void *arg, const struct slat_hosted_event *e)
{
	struct watch *w = arg;
	size_t i = w->nev++;
	uint64_t s, x;

	cover_event(&w->c, &w->f->t, e);
	if (e->kind == SLAT_EV_PAGE_FREE) {
		size_t k = 0;
		while (k < w->p->n && w->p->v[k].va != e->addr)
			k++;
		if (k == w->p->n) {
			if (!w->fail[0])
				snprintf(w->fail, sizeof(w->fail),
					 "event %zu frees %#llx, no table of "
					 "the range", i,
					 (unsigned long long)e->addr);
			return;
		}
		const struct span *t = &w->p->v[k];
		s = t->base < w->base ? w->base : t->base;
		x = t->base + t->size > w->end ? w->end : t->base + t->size;
		w->frees++;
	} else if (e->kind == SLAT_EV_DCACHE_CLEAN_INVAL) {
		s = w->base + (e->addr - w->pa);
		x = s + e->size;
	} else {
		return;
	}
	if (!cover_has(&w->c, s, x) && !w->fail[0])
		snprintf(w->fail, sizeof(w->fail),
			 "event %zu (%s of %#llx+%#llx) comes before an "
			 "invalidation covers IPA [%#llx, %#llx)", i,
			 e->kind == SLAT_EV_PAGE_FREE ? "free" : "clean",
			 (unsigned long long)e->addr,
			 (unsigned long long)e->size, (unsigned long long)s,
			 (unsigned long long)x);
}

/*
 * @nr tables of @child bytes each (pages or blocks) under one parent, the
 * operation over exactly them: every free and every clean, in the order
 * the observer saw them, comes after invalidations that cover its IPAs.
 */
static void check_shape(const struct slat_config *cfg, uint64_t base,
			uint64_t child, uint64_t pa, uint32_t nr,
			enum batch_op op, enum slat_tlbi_policy policy)
{
	struct fx *f = malloc(sizeof(*f));
	assert_non_null(f);
	assert_int_equal(fx_init_cfg(f, cfg, 0x80000000ull), SLAT_OK);
	uint64_t size = (uint64_t)nr * child, end = base + size;
	assert_int_equal(fx_map(f, base, size, pa, SLAT_RW, 0), SLAT_OK);

	struct probe p = { 0 };
	assert_int_equal(checker_tables(&f->ck, base, end, note_table, &p), 0);
	/* the @nr children and the tables above them */
	assert_true(p.n > nr);
	struct watch w = { .f = f, .p = &p, .base = base, .end = end,
			   .pa = pa };
	slat_hosted_set_observer(&f->h, watch_event, &w);
	assert_int_equal(run_op(f, op, base, size, policy), SLAT_OK);
	slat_hosted_set_observer(&f->h, fx_observe, f);

	if (w.fail[0])
		fail_msg("%s, %s of %u tables, policy %d: %s",
			 slat_table_name(&f->t), op_names[op], nr, policy,
			 w.fail);
	/* every table of the range went, none twice */
	assert_int_equal(w.frees, p.n);
	/* Nothing stale left behind but what the caller flushes itself. */
	if (policy != SLAT_FLUSH_NONE && !cover_has(&w.c, base, end))
		fail_msg("%s, %s of %u tables, policy %d: [%#llx, %#llx) not "
			 "all invalidated when the call returns",
			 slat_table_name(&f->t), op_names[op], nr, policy,
			 (unsigned long long)base, (unsigned long long)end);
	if (checker_full(&f->ck, NULL))
		fail_msg("checker: %s", f->ck.msg);
	cover_fini(&w.c);
	free(p.v);
	fx_fini(f);
	free(f);
}

static const uint32_t counts[] = { 63, 64, 65, 128 };

static void every_count_op_policy(const struct slat_config *cfg,
				  uint64_t base, uint64_t child, uint64_t pa)
{
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		for (int op = OP_UNMAP; op <= OP_ZAP_LEAF; op++)
			for (int pol = SLAT_FLUSH_ENTRY; pol <= SLAT_FLUSH_NONE;
			     pol++)
				check_shape(cfg, base, child, pa, counts[i],
					    (enum batch_op)op,
					    (enum slat_tlbi_policy)pol);
}

/* Level-3 tables of pages (a PA not aligned to 2 MiB) under one level-2
 * table: the unmapped pages' memory is cleaned (no FWB). */
static void tables_of_pages_emptying_their_parent(void **state)
{
	(void)state;
	every_count_op_policy(&arm40, G1, M2, 0x100000000ull + K4);
}

/* Level-2 tables of 2 MiB blocks (a PA not aligned to 1 GiB) under one
 * level-1 table, with and without FWB. */
static void tables_of_blocks_emptying_their_parent(void **state)
{
	(void)state;
	every_count_op_policy(&arm48, 512 * G1, G1, 0x1000000000ull + M2);
	every_count_op_policy(&arm48_fwb, 512 * G1, G1, 0x1000000000ull + M2);
}

/* x86: every invalidation is a whole-VM flush (EPT's single-context
 * INVEPT, NPT's ASID flush), which covers everything. */
static void x86_tables_emptying_their_parent(void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &ept48, &npt48 };
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		every_count_op_policy(cfgs[i], G1, M2, 0x100000000ull + K4);
	printf("  ept, npt: %zu shapes each (counts x operations x policies)\n",
	       sizeof(counts) / sizeof(counts[0]) *
	       (size_t)(OP_ZAP_LEAF - OP_UNMAP + 1) *
	       (size_t)(SLAT_FLUSH_NONE - SLAT_FLUSH_ENTRY + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_of_pages_emptying_their_parent),
		cmocka_unit_test(tables_of_blocks_emptying_their_parent),
		cmocka_unit_test(x86_tables_emptying_their_parent),
	};
	return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
