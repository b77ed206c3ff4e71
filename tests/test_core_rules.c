/* SPDX-License-Identifier: MIT */
/*
 * The rules each written once in the core (docs/design.md, "One rule, one
 * place" and "Cache maintenance without FWB"), one property per test, on
 * the configurations where they differ: relax's invalidation, the bits a
 * split keeps, the leaf-fit rule's wrong-translation shape, slat_flush,
 * SLAT_SKIP_CMO, a destroyed table, and recovery's zap-table leaving no
 * empty table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <slat/walk.h>

#include "fixture.h"

#define K4 0x1000ull
#define K16 0x4000u
#define K64 0x10000u
#define M2 0x200000ull
#define G1 0x40000000ull

static const struct slat_config arm40 = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40, .pa_bits = 48,
};
static const struct slat_config arm32 = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 32, .pa_bits = 40,
};
static const struct slat_config arm40_fwb = {
	.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40, .pa_bits = 48,
	.features = SLAT_FEAT_FWB,
};
static const struct slat_config ept48 = {
	.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46,
};
/* AMD NPT: the CPU always sets A and D, so the table must know. */
static const struct slat_config npt48 = {
	.format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46,
	.features = SLAT_FEAT_HWDIRTY,
};
static const struct slat_config ept48_mbec = {
	.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48, .pa_bits = 46,
	.features = SLAT_FEAT_EPT_MBEC,
};

static struct fx *fx_new(const struct slat_config *cfg)
{
	struct fx *f = malloc(sizeof(*f));
	assert_non_null(f);
	assert_int_equal(fx_init_cfg(f, cfg, 0x80000000ull), SLAT_OK);
	return f;
}

static void fx_done(struct fx *f)
{
	if (checker_full(&f->ck, NULL))
		fail_msg("checker: %s", f->ck.msg);
	fx_fini(f);
	free(f);
}

static void assert_leaf(struct fx *f, uint64_t ipa, int level, uint64_t pa)
{
	struct slat_leaf l;
	int ret = fx_lookup(f, ipa, &l);
	if (ret != SLAT_OK || l.level != level || slat_pa_v(l.pa) != pa)
		fail_msg("lookup %#llx: %s level %d pa %#llx; expected level %d "
			 "pa %#llx",
			 (unsigned long long)ipa, check_status_name(ret),
			 ret ? 0 : l.level,
			 (unsigned long long)(ret ? 0 : slat_pa_v(l.pa)), level,
			 (unsigned long long)pa);
}

static void assert_hole(struct fx *f, uint64_t ipa)
{
	struct slat_leaf l;
	int ret = fx_lookup(f, ipa, &l);
	if (ret != SLAT_E_NOENT)
		fail_msg("lookup %#llx: %s (leaf %#llx+%#llx -> %#llx), expected "
			 "a hole",
			 (unsigned long long)ipa, check_status_name(ret),
			 (unsigned long long)slat_ipa_v(l.base),
			 (unsigned long long)l.size,
			 (unsigned long long)slat_pa_v(l.pa));
}

/* ------------------------------------------------------------ relax */

/*
 * Three leaves that lack write, one that has it and is young: relaxing +W
 * over all of them changes three.
 */
static void relax_fixture(struct fx *f)
{
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R, 0), SLAT_OK);
	assert_int_equal(fx_map(f, G1 + M2, 2 * K4, 0x100200000ull, SLAT_R,
				SLAT_MAP_PAGES),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1 + M2 + 2 * K4, K4, 0x100202000ull,
				SLAT_RW, 0),
			 SLAT_OK);
	fx_topup(f, 8);
	fx_clear_events(f);
}

static void relax_arm_one_local_tlbi_by_ipa_per_changed_leaf(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	relax_fixture(f);
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), M2 + 3 * K4, SLAT_RW,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	/* the 2M block and two pages; the young RW page is left alone */
	static const struct { uint64_t ipa; int level; } want[] = {
		{ G1, 2 }, { G1 + M2, 3 }, { G1 + M2 + K4, 3 },
	};
	size_t n = 0;
	for (size_t i = 0; i < f->nev; i++) {
		const struct slat_hosted_event *e = &f->ev[i].ev;
		assert_int_not_equal(e->kind, SLAT_EV_TLBI_RANGE);
		assert_int_not_equal(e->kind, SLAT_EV_TLBI_VMID);
		if (e->kind != SLAT_EV_TLBI_IPA)
			continue;
		assert_true(n < 3);
		assert_int_equal(e->scope, SLAT_TLBI_LOCAL);
		assert_int_equal(e->addr, want[n].ipa);
		assert_int_equal(e->level, want[n].level);
		n++;
	}
	assert_int_equal(n, 3);
	assert_int_equal(f->t.stats.tlbi[SLAT_TLBI_IPA_LOCAL], 3);
	assert_int_equal(f->t.stats.tlbi[SLAT_TLBI_IPA], 0);
	assert_int_equal(f->t.stats.written[SLAT_WRITE_ATTR], 3);

	/* again: nothing changes, nothing is invalidated */
	fx_clear_events(f);
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), M2 + 3 * K4, SLAT_RW,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_NOTHING_TO_DO);
	assert_int_equal(f->nev, 0);
	fx_done(f);
}

/* x86 has no invalidation by address. An EPT violation drops the stale
 * entry itself, so a relax on EPT invalidates nothing; a nested page fault
 * drops nothing, so a relax on NPT flushes the ASID, per entry by default:
 * once per changed leaf (the block and two pages). */
static void relax_x86_invalidates_as_its_faults_require(void **state)
{
	(void)state;
	static const struct {
		const struct slat_config *cfg;
		unsigned vmid;
	} cases[] = { { &ept48, 0 }, { &npt48, 3 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new(cases[i].cfg);
		relax_fixture(f);
		assert_int_equal(slat_relax(&f->t, slat_ipa(G1), M2 + 3 * K4,
					    SLAT_RW, SLAT_OP(.cache = &f->cache)),
				 SLAT_OK);
		assert_int_equal(f->t.stats.written[SLAT_WRITE_ATTR], 3);
		if (fx_count(f, SLAT_EV_TLBI_IPA) ||
		    fx_count(f, SLAT_EV_TLBI_RANGE) ||
		    fx_count(f, SLAT_EV_TLBI_VMID) != cases[i].vmid)
			fail_msg("%s: %u by IPA, %u range, %u VMID (want %u)",
				 slat_table_name(&f->t),
				 (unsigned)fx_count(f, SLAT_EV_TLBI_IPA),
				 (unsigned)fx_count(f, SLAT_EV_TLBI_RANGE),
				 (unsigned)fx_count(f, SLAT_EV_TLBI_VMID),
				 cases[i].vmid);
		assert_leaf(f, G1, 2, 0x100000000ull);
		fx_done(f);
	}
}

/* A shared relax that finds the leaf already relaxed (another vCPU's fault
 * got there first) still invalidates this CPU's entry, by IPA and level:
 * on Arm a permission fault leaves the stale entry in the TLB. On EPT the
 * violation dropped it. NPT's nested page fault did not, and NPT has no
 * invalidation by address: the ASID's flush, one per call. An exclusive
 * relax invalidates nothing unchanged. */
static void shared_relax_of_a_relaxed_leaf_invalidates_locally(void **state)
{
	(void)state;
	static const struct {
		const struct slat_config *cfg;
		unsigned local, vmid;
	} cases[] = { { &arm40, 2, 0 }, { &ept48, 0, 0 }, { &npt48, 0, 2 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new(cases[i].cfg);
		assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0),
				 SLAT_OK);
		assert_int_equal(fx_map(f, G1 + M2, K4, 0x100200000ull, SLAT_RW,
					0),
				 SLAT_OK);
		fx_clear_events(f);
		struct slat_op op = { .flags = SLAT_SHARED, .cache = &f->cache };
		/* a page inside the block, and the page */
		assert_int_equal(slat_relax(&f->t, slat_ipa(G1 + K4), K4, SLAT_W,
					    &op),
				 SLAT_NOTHING_TO_DO);
		assert_int_equal(slat_relax(&f->t, slat_ipa(G1 + M2), K4, SLAT_W,
					    &op),
				 SLAT_NOTHING_TO_DO);
		if (f->t.stats.tlbi[SLAT_TLBI_IPA_LOCAL] != cases[i].local ||
		    fx_count(f, SLAT_EV_TLBI_VMID) != cases[i].vmid)
			fail_msg("%s: %llu local by IPA, %u VMID (want %u, %u)",
				 slat_table_name(&f->t),
				 (unsigned long long)
				 f->t.stats.tlbi[SLAT_TLBI_IPA_LOCAL],
				 (unsigned)fx_count(f, SLAT_EV_TLBI_VMID),
				 cases[i].local, cases[i].vmid);
		if (cases[i].local) {
			assert_int_equal(f->nev, 2);
			assert_int_equal(f->ev[0].ev.level, 2);
			assert_int_equal(f->ev[1].ev.level, 3);
			assert_int_equal(f->ev[1].ev.addr, G1 + M2);
			assert_int_equal(f->ev[1].ev.scope, SLAT_TLBI_LOCAL);
		}
		fx_clear_events(f);
		assert_int_equal(slat_relax(&f->t, slat_ipa(G1 + M2), K4, SLAT_W,
					    SLAT_OP(.cache = &f->cache)),
				 SLAT_NOTHING_TO_DO);
		assert_int_equal(f->nev, 0);
		fx_done(f);
	}
}

/* Under a batched policy, relax invalidates once after the walk, or not at
 * all under "none"; on EPT never, whatever the policy; on NPT as on Arm,
 * each invalidation the ASID's flush (per entry: one per changed leaf). */
static void relax_follows_the_flush_policy(void **state)
{
	(void)state;
	static const struct {
		const struct slat_config *cfg;
		enum slat_tlbi_policy flush;
		unsigned ipa, range, vmid;
	} cases[] = {
		{ &arm40, SLAT_FLUSH_RANGE, 0, 1, 0 },
		{ &arm40, SLAT_FLUSH_VMID, 0, 0, 1 },
		{ &arm40, SLAT_FLUSH_NONE, 0, 0, 0 },
		{ &ept48, SLAT_FLUSH_ENTRY, 0, 0, 0 },
		{ &ept48, SLAT_FLUSH_RANGE, 0, 0, 0 },
		{ &ept48, SLAT_FLUSH_VMID, 0, 0, 0 },
		{ &npt48, SLAT_FLUSH_ENTRY, 0, 0, 3 },
		{ &npt48, SLAT_FLUSH_RANGE, 0, 0, 1 },
		{ &npt48, SLAT_FLUSH_VMID, 0, 0, 1 },
		{ &npt48, SLAT_FLUSH_NONE, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new(cases[i].cfg);
		relax_fixture(f);
		struct slat_op op = { .flush = cases[i].flush,
				      .cache = &f->cache };
		assert_int_equal(slat_relax(&f->t, slat_ipa(G1), M2 + 3 * K4,
					    SLAT_RW, &op),
				 SLAT_OK);
		assert_int_equal(op.done, M2 + 3 * K4);
		assert_int_equal(f->t.stats.written[SLAT_WRITE_ATTR], 3);
		if (fx_count(f, SLAT_EV_TLBI_IPA) != cases[i].ipa ||
		    fx_count(f, SLAT_EV_TLBI_RANGE) != cases[i].range ||
		    fx_count(f, SLAT_EV_TLBI_VMID) != cases[i].vmid)
			fail_msg("%s, policy %d: %u by IPA, %u range, %u VMID",
				 slat_table_name(&f->t), (int)cases[i].flush,
				 (unsigned)fx_count(f, SLAT_EV_TLBI_IPA),
				 (unsigned)fx_count(f, SLAT_EV_TLBI_RANGE),
				 (unsigned)fx_count(f, SLAT_EV_TLBI_VMID));
		fx_done(f);
	}
}

/* ------------------------------------------------------------ the API */

/* A NULL struct slat_op is an exclusive call without a cache, invalidating
 * per entry; each operation refuses the flags it does not take, with
 * nothing done. */
static void op_defaults_and_refused_flags(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	assert_int_equal(fx_map(f, G1, 4 * K4, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	fx_clear_events(f);
	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1), K4, NULL), SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_IPA), 1);
	assert_int_equal(slat_relax(&f->t, slat_ipa(G1), K4, SLAT_W, NULL),
			 SLAT_OK);
	assert_int_equal(slat_unmap(&f->t, slat_ipa(G1), K4, NULL), SLAT_OK);
	assert_hole(f, G1);

	static const struct {
		const char *what;
		uint32_t flags;
	} refused[] = {
		{ "unmap SLAT_SHARED", SLAT_SHARED },
		{ "unmap SLAT_SKIP_CMO", SLAT_SKIP_CMO },
		{ "wrprotect SLAT_SKIP_CMO", SLAT_SKIP_CMO },
		{ "split SLAT_SHARED", SLAT_SHARED },
		{ "recover SLAT_SHARED", SLAT_SHARED },
		{ "relax SLAT_MAP_NO_REPLACE", SLAT_MAP_NO_REPLACE },
		{ "flush SLAT_SKIP_CMO", SLAT_SKIP_CMO },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct slat_op op = { .flags = refused[i].flags,
				      .cache = &f->cache, .done = 77 };
		slat_ipa_t a = slat_ipa(G1 + K4);
		int ret;
		fx_clear_events(f);
		switch (i) {
		case 0: case 1: ret = slat_unmap(&f->t, a, K4, &op); break;
		case 2: ret = slat_wrprotect(&f->t, a, K4, &op); break;
		case 3: ret = slat_split(&f->t, a, K4, 0, &op); break;
		case 4:
			ret = slat_recover(&f->t, slat_ipa(G1), M2,
					   SLAT_RECOVERY(.strategy =
							 SLAT_RECOVER_PROMOTE),
					   &op);
			break;
		case 5: ret = slat_relax(&f->t, a, K4, SLAT_X, &op); break;
		default: ret = slat_flush(&f->t, a, K4, &op); break;
		}
		if (ret != SLAT_E_INVAL || op.done != 0 || f->nev != 0)
			fail_msg("%s: %s, done %#llx, %zu events", refused[i].what,
				 check_status_name(ret),
				 (unsigned long long)op.done, f->nev);
	}
	assert_leaf(f, G1 + K4, 3, 0x100001000ull);
	fx_done(f);
}

/* Each positive result means one thing: test_clear_young's "was young" is
 * not map's "nothing to do", and each has its own text. */
static void results_are_distinct(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	assert_int_equal(fx_map(f, G1, K4, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1, K4, 0x100000000ull, SLAT_RW, 0),
			 SLAT_NOTHING_TO_DO);
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), K4, true,
					       NULL),
			 SLAT_WAS_YOUNG);
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(G1), K4, true,
					       NULL),
			 SLAT_OK);
	assert_int_not_equal(SLAT_WAS_YOUNG, SLAT_NOTHING_TO_DO);
	assert_string_not_equal(slat_strerror(SLAT_WAS_YOUNG),
				slat_strerror(SLAT_NOTHING_TO_DO));
	assert_string_not_equal(slat_strerror(SLAT_WAS_YOUNG),
				"unknown status");
	fx_done(f);
}

/* dirty_read writes no more words than it is given: a bitmap shorter than
 * the range is refused before anything is read or cleared. */
static void dirty_read_short_bitmap_on(const struct slat_config *cfg)
{
	struct fx *f = fx_new(cfg);
	assert_int_equal(fx_map(f, G1, 65 * K4, 0x100000000ull, SLAT_RW,
				SLAT_MAP_PAGES),
			 SLAT_OK);
	uint64_t bm[3] = { 0, 0, 0x5a5a };
	struct slat_op op = { .cache = &f->cache, .done = 77 };
	fx_clear_events(f);
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1), 65 * K4, bm, 1,
					 true, &op),
			 SLAT_E_INVAL);
	assert_int_equal(op.done, 0);
	assert_int_equal(bm[0], 0);
	assert_int_equal(f->nev, 0);
	/* two words are enough for 65 pages, and the third is not touched */
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(G1), 65 * K4, bm, 2,
					 true, &op),
			 65);
	assert_int_equal(op.done, 65 * K4);
	assert_true(bm[0] == ~0ull && bm[1] == 1 && bm[2] == 0x5a5a);
	fx_done(f);
}

/* The same on both x86 formats with hardware dirty state. */
static void dirty_read_refuses_a_short_bitmap(void **state)
{
	(void)state;
	static const struct slat_config ept_ad = {
		.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
		.pa_bits = 46, .features = SLAT_FEAT_HWDIRTY,
	};
	const struct slat_config *cfgs[] = { &ept_ad, &npt48 };
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		dirty_read_short_bitmap_on(cfgs[i]);
}

/* The hooks slat_table_init() needs depend on the format and features:
 * the first one missing is named, and the table is not made. */
static void init_names_the_missing_hook(void **state)
{
	(void)state;
	static const struct {
		const struct slat_config *cfg;
		int drop; /* 0 dcache, 1 icache, 2 tlbi_ipa, 3 tlbi_range */
		const char *missing;
	} cases[] = {
		{ &arm40, 0, "dcache_clean_inval_poc" },
		{ &arm40_fwb, 0, NULL },
		{ &arm40, 1, "icache_inval_pou" },
		{ &arm40, 2, "tlbi_ipa" },
		{ &arm40, 3, "tlbi_range" },
		{ &ept48, 0, NULL },
		{ &ept48, 1, NULL },
		{ &ept48, 2, NULL },
		{ &ept48, 3, NULL },
		{ &npt48, 0, NULL },
		{ &npt48, 1, NULL },
		{ &npt48, 2, NULL },
		{ &npt48, 3, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct slat_mm_ops ops = *slat_hosted_ops();
		switch (cases[i].drop) {
		case 0: ops.dcache_clean_inval_poc = NULL; break;
		case 1: ops.icache_inval_pou = NULL; break;
		case 2: ops.tlbi_ipa = NULL; break;
		default: ops.tlbi_range = NULL; break;
		}
		const char *m = slat_mm_ops_missing(&ops, cases[i].cfg);
		if (cases[i].missing ? !m || strcmp(m, cases[i].missing) : !!m)
			fail_msg("case %zu: missing %s, expected %s", i,
				 m ? m : "nothing",
				 cases[i].missing ? cases[i].missing : "nothing");
		struct slat_hosted h;
		struct slat_table t;
		assert_int_equal(slat_hosted_init(&h, 64 * K4, 4096, 0x80000000),
				 SLAT_OK);
		int ret = slat_table_init(&t, cases[i].cfg, &ops, &h);
		assert_int_equal(ret, m ? SLAT_E_INVAL : SLAT_OK);
		if (ret == SLAT_OK)
			slat_table_destroy(&t);
		slat_hosted_fini(&h);
	}
	assert_string_equal(slat_mm_ops_missing(NULL, &arm40), "slat_mm_ops");
}

/*
 * Hooks built against another version's header: slat_mm_ops of 0.1.0 began
 * with zalloc_root (no size), a newer one may be longer, and a caller may
 * forget the size. Each is refused before any hook is called, with a
 * status that says to rebuild, and the table stays unset.
 */
struct mm_ops_0_1 {                  /* began with zalloc_root */
	void *(*zalloc_root)(void *ctx, size_t bytes);
	void (*rest[17])(void);      /* its 13 other hooks, and room */
};

static int old_layout_root_calls;

static void *old_layout_zalloc_root(void *ctx, size_t bytes)
{
	(void)ctx;
	(void)bytes;
	old_layout_root_calls++;
	return NULL;
}

static void init_refuses_another_layout_of_the_hooks(void **state)
{
	(void)state;
	const struct slat_mm_ops *cur = slat_hosted_ops();
	struct mm_ops_0_1 old = { .zalloc_root = old_layout_zalloc_root };
	struct slat_mm_ops forgot = *cur, newer = *cur;
	forgot.size = 0;
	newer.size = sizeof(newer) + sizeof(void (*)(void));
	const struct slat_mm_ops *bad[] = {
		(const struct slat_mm_ops *)(const void *)&old, &forgot, &newer,
	};
	struct slat_hosted h;
	assert_int_equal(slat_hosted_init(&h, 64 * K4, 4096, 0x80000000),
			 SLAT_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_table t = { 0 };
		assert_int_equal(slat_table_init(&t, &arm40, bad[i], &h),
				 SLAT_E_VERSION);
		assert_null(t.root);
		assert_string_equal(slat_mm_ops_missing(bad[i], &arm40), "size");
	}
	assert_int_equal(old_layout_root_calls, 0);
	assert_non_null(strstr(slat_strerror(SLAT_E_VERSION), "rebuild"));
	slat_hosted_fini(&h);
}

/* Without free_deferred nothing could free a table another walker still
 * reads: every SLAT_SHARED call is refused, the fault path's too once the
 * cache's memo knows the attributes. */
static void shared_needs_free_deferred(void **state)
{
	(void)state;
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache c;
	assert_int_equal(slat_hosted_init(&h, 256 * K4, 4096, 0x80000000),
			 SLAT_OK);
	assert_int_equal(slat_table_init(&t, &arm40, slat_hosted_ops(), &h),
			 SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&c, 16), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 8), SLAT_OK);
	/* warm the memo with an exclusive map of the same attributes */
	assert_int_equal(slat_map(&t, slat_ipa(G1), K4, slat_pa(0x100000000ull),
				  SLAT_RW, SLAT_OP(.cache = &c)),
			 SLAT_OK);
	struct slat_op op = { .flags = SLAT_SHARED, .cache = &c, .done = 77 };
	slat_ipa_t a = slat_ipa(G1 + K4);
	assert_int_equal(slat_map(&t, a, K4, slat_pa(0x100001000ull), SLAT_RW,
				  &op),
			 SLAT_E_INVAL);
	assert_int_equal(op.done, 0);
	assert_int_equal(slat_relax(&t, slat_ipa(G1), K4, SLAT_X, &op),
			 SLAT_E_INVAL);
	assert_int_equal(slat_test_clear_young(&t, slat_ipa(G1), K4, true, &op),
			 SLAT_E_INVAL);
	assert_int_equal(slat_flush(&t, slat_ipa(G1), K4, &op), SLAT_E_INVAL);
	assert_int_equal(slat_mkyoung(&t, slat_ipa(G1), SLAT_SHARED),
			 SLAT_E_INVAL);
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&t, a, &l), SLAT_E_NOENT);
	slat_hosted_cache_fini(&c);
	slat_table_destroy(&t);
	slat_hosted_fini(&h);
}

/* A fault's memo of the last table it reached dies with the table: after
 * an unmap frees it (its page free for the next table linked), a fault
 * through the same cache in its span descends from the root again, as does
 * one after a shared map replaced the table by a block. */
static void fault_memo_does_not_outlive_its_table(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	for (uint64_t i = 0; i < 3; i++)
		assert_int_equal(fx_map(f, G1 + i * K4, K4,
					0x100000000ull + i * K4, SLAT_RW, 0),
				 SLAT_OK);
	/* next to the memo's table, past its span */
	assert_int_equal(fx_map(f, G1 + M2 + K4, K4, 0x100201000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, G1 + M2 + K4, SLAT_LAST_LEVEL, 0x100201000ull);
	assert_int_equal(fx_unmap(f, G1, M2, SLAT_FLUSH_VMID), SLAT_OK);
	assert_int_equal(fx_map(f, G1 + 4 * M2, K4, 0x200000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, G1 + 3 * K4, K4, 0x100003000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, G1 + 3 * K4, SLAT_LAST_LEVEL, 0x100003000ull);
	assert_leaf(f, G1 + 4 * M2, SLAT_LAST_LEVEL, 0x200000000ull);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, G1 + 4 * M2 + 3 * K4, &l), SLAT_E_NOENT);
	assert_int_equal(fx_lookup(f, G1, &l), SLAT_E_NOENT);

	/* a shared map of a block over the table the memo holds */
	assert_int_equal(fx_map(f, G1 + 4 * K4, K4, 0x100004000ull, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	assert_int_equal(fx_map(f, G1, M2, 0x180000000ull, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	assert_leaf(f, G1 + 5 * K4, 2, 0x180005000ull);
	assert_int_equal(fx_map(f, G1 + 5 * K4, K4, 0x100005000ull, SLAT_RW,
				SLAT_SHARED | SLAT_MAP_NO_REPLACE), SLAT_E_EXISTS);
	assert_leaf(f, G1 + 5 * K4, 2, 0x180005000ull);
	fx_done(f);
}

/* A fault the memo's table could serve is still checked as any request:
 * each bad one gets the general path's error and changes nothing, and a
 * leaf that does not fit (a PA or IPA not aligned to a block, a cap, another
 * size) is mapped by the general path with the leaves that do. */
static void fault_memo_checks_each_fault(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	const uint64_t pa = 0x100000000ull, pa_end = 1ull << 48;
	/* counters of the cache's own: shared faults take the memo's path */
	struct slat_stats cs;
	memset(&cs, 0, sizeof(cs));
	f->cache.stats = &cs;
	/* the first fault builds the tables, the second fills the memo */
	assert_int_equal(fx_map(f, G1, K4, pa, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(fx_map(f, G1 + 6 * K4, K4, pa + 6 * K4, SLAT_RW, 0),
			 SLAT_OK);
	/* the memo holds the table: the next fault reads one entry */
	uint64_t visited = f->t.stats.visited;
	assert_int_equal(fx_map(f, G1 + 7 * K4, K4, pa + 7 * K4, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(f->t.stats.visited - visited, 1);
	assert_int_equal(fx_map(f, G1 + 8 * K4, K4, pa + 8 * K4, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	assert_int_equal(cs.visited, 1);
	struct { uint64_t ipa, size, pa; uint32_t flags; int ret; } bad[] = {
		{ G1 + K4, K4, pa_end, SLAT_SHARED, SLAT_E_RANGE },
		{ G1 + K4, K4, pa_end, 0, SLAT_E_RANGE },
		{ G1 + K4, K4, pa_end - K4 + (1ull << 60), 0, SLAT_E_RANGE },
		{ G1 + K4, K4, pa + 0x800, SLAT_SHARED, SLAT_E_ALIGN },
		{ G1 + K4 + 0x800, K4, pa, 0, SLAT_E_ALIGN },
		{ G1 + K4, K4, pa, SLAT_SHARED | (1u << 20), SLAT_E_INVAL },
		{ G1 + K4, 0, pa, SLAT_SHARED, SLAT_E_RANGE },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_op op = { .flags = bad[i].flags, .cache = &f->cache,
				      .done = 77 };
		int ret = slat_map(&f->t, slat_ipa(bad[i].ipa), bad[i].size,
				   slat_pa(bad[i].pa), SLAT_RW, &op);
		if (ret != bad[i].ret || op.done != 0)
			fail_msg("case %zu: %s done %llu, expected %s", i,
				 check_status_name(ret),
				 (unsigned long long)op.done,
				 check_status_name(bad[i].ret));
		assert_hole(f, G1 + K4);
	}
	/* a cap the page is within, two pages at once: the general path */
	assert_int_equal(fx_map(f, G1 + K4, K4, pa + K4, SLAT_RW,
				SLAT_SHARED | SLAT_MAP_CAP(12)), SLAT_OK);
	assert_int_equal(fx_map(f, G1 + 2 * K4, 2 * K4, pa + 2 * K4, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	for (uint64_t i = 0; i < 4; i++)
		assert_leaf(f, G1 + i * K4, SLAT_LAST_LEVEL, pa + i * K4);

	/* the memo at a level-2 table: blocks only where both are aligned,
	 * and no larger than a cap */
	const uint64_t b = 4 * G1;
	assert_int_equal(fx_map(f, b, M2, pa, SLAT_RW, SLAT_SHARED), SLAT_OK);
	assert_int_equal(fx_map(f, b + 4 * M2, M2, pa + 4 * M2, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	visited = cs.visited;
	assert_int_equal(fx_map(f, b + 3 * M2, M2, pa + 3 * M2, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	assert_int_equal(cs.visited - visited, 1);
	assert_int_equal(fx_map(f, b + M2, M2, pa + M2 + K4, SLAT_RW,
				SLAT_SHARED), SLAT_OK);
	assert_int_equal(fx_map(f, b + 2 * M2, M2, pa + 2 * M2, SLAT_RW,
				SLAT_SHARED | SLAT_MAP_CAP(12)), SLAT_OK);
	assert_leaf(f, b, 2, pa);
	assert_leaf(f, b + M2, SLAT_LAST_LEVEL, pa + M2 + K4);
	assert_leaf(f, b + 2 * M2 - K4, SLAT_LAST_LEVEL, pa + 2 * M2);
	assert_leaf(f, b + 2 * M2 + K4, SLAT_LAST_LEVEL, pa + 2 * M2 + K4);
	assert_leaf(f, b + 3 * M2, 2, pa + 3 * M2);
	f->cache.stats = NULL;
	fx_done(f);
}

static int64_t need_map(struct fx *f, uint64_t ipa, uint64_t size,
			uint64_t pa, uint32_t flags)
{
	return slat_pages_needed(&f->t, SLAT_NEED(.kind = SLAT_OP_MAP,
		.ipa = slat_ipa(ipa), .size = size, .pa = slat_pa(pa),
		.attrs = SLAT_RW, .flags = flags));
}

/* SLAT_MAP_BREAK_BLOCK: a page mapped into a block breaks it into a table
 * that holds only that page (one invalidation by IPA, the pages counted
 * beforehand exactly), whether or not the block translated it the same;
 * the rest is unmapped. With NO_REPLACE a block that translates as asked
 * stays; a leaf the block's size can replace is replaced, not broken. */
static void map_break_block_keeps_only_the_new_leaves(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	const uint64_t pa = 0x100000000ull, brk = SLAT_MAP_BREAK_BLOCK;
	assert_int_equal(fx_map(f, G1, M2, pa, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(need_map(f, G1 + 5 * K4, K4, pa + 5 * K4, 0), 0);
	assert_int_equal(need_map(f, G1 + 5 * K4, K4, pa + 5 * K4, brk), 1);
	assert_int_equal(fx_map(f, G1 + 5 * K4, K4, pa + 5 * K4, SLAT_RW,
				brk | SLAT_MAP_NO_REPLACE), SLAT_NOTHING_TO_DO);
	assert_leaf(f, G1, 2, pa);
	uint64_t pages = slat_hosted_table_pages(&f->h);
	struct slat_stats s0 = f->t.stats;
	assert_int_equal(fx_map(f, G1 + 5 * K4, K4, pa + 5 * K4, SLAT_RW, brk),
			 SLAT_OK);
	assert_int_equal(f->t.stats.tlbi[SLAT_TLBI_IPA] - s0.tlbi[SLAT_TLBI_IPA],
			 1);
	assert_int_equal(f->t.stats.dcache_calls - s0.dcache_calls, 1);
	assert_int_equal(slat_hosted_table_pages(&f->h), pages + 1);
	assert_leaf(f, G1 + 5 * K4, SLAT_LAST_LEVEL, pa + 5 * K4);
	assert_hole(f, G1);
	assert_hole(f, G1 + 4 * K4);
	assert_hole(f, G1 + 6 * K4);
	assert_hole(f, G1 + M2 - K4);

	/* a 1 GiB block: the level-2 table and the page's table, shared */
	assert_int_equal(fx_map(f, 2 * G1, G1, 0x200000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_leaf(f, 2 * G1, 1, 0x200000000ull);
	assert_int_equal(need_map(f, 2 * G1 + M2 + K4, K4, 0x300000000ull,
				  brk | SLAT_SHARED), 2);
	pages = slat_hosted_table_pages(&f->h);
	assert_int_equal(fx_map(f, 2 * G1 + M2 + K4, K4, 0x300000000ull,
				SLAT_RW, brk | SLAT_SHARED), SLAT_OK);
	assert_int_equal(slat_hosted_table_pages(&f->h), pages + 2);
	assert_leaf(f, 2 * G1 + M2 + K4, SLAT_LAST_LEVEL, 0x300000000ull);
	assert_hole(f, 2 * G1);
	assert_hole(f, 2 * G1 + M2);
	assert_hole(f, 2 * G1 + G1 - K4);

	/* a block the request covers whole is replaced by one */
	assert_int_equal(fx_map(f, G1 + M2, M2, pa + M2, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(fx_map(f, G1 + M2, M2, 0x180000000ull, SLAT_RW, brk),
			 SLAT_OK);
	assert_leaf(f, G1 + M2 + K4, 2, 0x180001000ull);
	fx_done(f);
}

/* A page that enters a cache with a stale count word (left from its last
 * use by the platform) still makes a table that is freed when empty. */
static void stale_count_word_is_reset(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	slat_hosted_cache_drain(&f->h, &f->cache);
	fx_topup(f, 4);
	for (uint32_t i = 0; i < f->cache.nr; i++)
		*slat_hosted_ops()->refcount(&f->h, f->cache.pages[i]) = 7;
	uint64_t before = slat_hosted_table_pages(&f->h);
	assert_int_equal(fx_map(f, G1, K4, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_unmap(f, G1, K4, SLAT_FLUSH_VMID), SLAT_OK);
	assert_int_equal(slat_hosted_table_pages(&f->h), before);
	fx_done(f);
}

static int count_visit(const struct slat_walk_ctx *ctx, enum slat_visit v);

/* A walker must ask for something; a stop level is honoured only when
 * asked for, and must lie in the table; the counters are optional. */
static void walk_checks_its_walker(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40); /* start level 1 */
	assert_int_equal(fx_map(f, G1, K4, 0x100000000ull, SLAT_RW, 0),
			 SLAT_OK);
	struct slat_walker zero = { 0 };
	assert_int_equal(slat_walk(&f->t, slat_ipa(0), G1 * 2, &zero, NULL),
			 SLAT_E_INVAL);
	struct slat_walker w = { count_visit, NULL, SLAT_VISIT_LEAF, 0 };
	struct slat_stats st;
	memset(&st, 0, sizeof(st));
	/* no stop level asked: the walk reaches the page */
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1), K4, &w, &st), SLAT_OK);
	assert_int_equal(st.visited, 3);
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1), K4, &w, NULL), SLAT_OK);
	w.flags |= SLAT_WALK_STOP_LEVEL;
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1), K4, &w, NULL),
			 SLAT_E_INVAL); /* level 0 is above the start level */
	w.stop_level = 1;
	memset(&st, 0, sizeof(st));
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1), K4, &w, &st), SLAT_OK);
	assert_int_equal(st.visited, 1);
	w.stop_level = SLAT_LAST_LEVEL + 1;
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1), K4, &w, NULL),
			 SLAT_E_INVAL);
	w.flags = SLAT_VISIT_LEAF | (1u << 20);
	assert_int_equal(slat_walk(&f->t, slat_ipa(G1), K4, &w, NULL),
			 SLAT_E_INVAL);
	/* and the level sizes of the levels it has only */
	assert_int_equal(slat_level_size(&f->t, 0), 0);
	assert_int_equal(slat_level_size(&f->t, 1), G1);
	assert_int_equal(slat_level_size(&f->t, SLAT_LAST_LEVEL), K4);
	assert_int_equal(slat_level_size(&f->t, SLAT_LAST_LEVEL + 1), 0);
	fx_done(f);
}

/* ------------------------------------------------------------ registers */

/*
 * VTCR_EL2, VTTBR_EL2, the EPTP, TCR_EL1/TTBR0_EL1/MAIR_EL1, each field
 * from the manuals (the QEMU oracle also runs every stage-2 layout with
 * slat_arm_s2_vtcr() and slat_arm_s2_vttbr()):
 *   VTCR_EL2: T0SZ [5:0] = 64 - IPA bits, SL0 [7:6] (4K: 2 - start level;
 *   16K/64K: 3 - start level), IRGN0 [9:8] = 1, ORGN0 [11:10] = 1 (write-
 *   back write-allocate walks), SH0 [13:12] = 3 (inner shareable), TG0
 *   [15:14] (0 4K, 1 64K, 2 16K), PS [18:16] (5: 48 bits, 6: 52), VS [19],
 *   HA [21], HD [22], bit 31 RES1.
 */
static void registers_from_the_geometry(void **state)
{
	(void)state;
	static const struct slat_config a64k52 = {
		.format = SLAT_FMT_ARM_S2, .granule = 65536, .ia_bits = 52,
		.pa_bits = 52, .features = SLAT_FEAT_HWDIRTY,
	};
	static const struct slat_config ept5_ad = {
		.format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 57,
		.pa_bits = 52, .features = SLAT_FEAT_HWDIRTY,
	};
	static const struct slat_config s1_48 = {
		.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		.pa_bits = 48,
	};
	/* 4K, 40-bit IPA, start level 1 (two concatenated pages), 48-bit PA:
	 * 0x18 | 1 << 6 | 0x100 | 0x400 | 0x3000 | 5 << 16 | 1 << 31 */
	struct fx *f = fx_new(&arm40);
	assert_int_equal(slat_arm_s2_vtcr(&f->t, false), 0x80053558ull);
	assert_int_equal(slat_arm_s2_vtcr(&f->t, true), 0x800d3558ull);
	slat_pa_t root;
	slat_table_root(&f->t, &root, NULL);
	assert_int_equal(slat_arm_s2_vttbr(&f->t, 0x2a, false),
			 0x002a000000000000ull | slat_pa_v(root));
	assert_int_equal(slat_arm_s2_vttbr(&f->t, 0x2a, true) & 1, 1);
	assert_int_equal(slat_ept_eptp(&f->t), 0); /* another format */
	assert_int_equal(slat_arm_s1_tcr(&f->t, false), 0);
	fx_done(f);

	/* 64K, 52-bit IPA and PA, start level 1, HA/HD: 0xc | 2 << 6 |
	 * 0x3500 | 1 << 14 | 6 << 16 | 3 << 21 | 1 << 31; the root above
	 * 2^48, its PA[51:48] in VTTBR_EL2 bits [5:2] */
	f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &a64k52, 0xf000000000000ull), SLAT_OK);
	assert_int_equal(slat_arm_s2_vtcr(&f->t, false), 0x8066758cull);
	slat_table_root(&f->t, &root, NULL);
	uint64_t pa = slat_pa_v(root);
	assert_true(pa >> 48 == 0xf);
	assert_int_equal(slat_arm_s2_vttbr(&f->t, 1, false),
			 1ull << 48 | (pa & 0xffffffffffffull) | (pa >> 48) << 2);
	fx_done(f);

	/* EPT: 4-level, WB walks (6), length - 1 = 3 in [5:3]: 0x1e; 5-level
	 * with A/D (bit 6): 6 | 4 << 3 | 1 << 6 = 0x66 */
	f = fx_new(&ept48);
	slat_table_root(&f->t, &root, NULL);
	assert_int_equal(slat_ept_eptp(&f->t), slat_pa_v(root) | 0x1e);
	assert_int_equal(slat_arm_s2_vtcr(&f->t, false), 0);
	fx_done(f);
	f = fx_new(&ept5_ad);
	slat_table_root(&f->t, &root, NULL);
	assert_int_equal(slat_ept_eptp(&f->t), slat_pa_v(root) | 0x66);
	assert_int_equal(slat_npt_ncr3(&f->t), 0); /* another format */
	fx_done(f);
	/* nCR3: the root alone, PWT and PCD clear (write-back walks) */
	f = fx_new(&npt48);
	slat_table_root(&f->t, &root, NULL);
	assert_int_equal(slat_npt_ncr3(&f->t), slat_pa_v(root));
	assert_int_equal(slat_ept_eptp(&f->t), 0);
	assert_int_equal(slat_arm_s2_vtcr(&f->t, false), 0);
	fx_done(f);

	/* TCR_EL1, TTBR0 only, 4K, 48-bit VA and IPS: T0SZ 0x10 | 0x3500 |
	 * EPD1 1 << 23 | TG1 (4K) 2 << 30 | IPS 5 << 32 */
	f = fx_new(&s1_48);
	assert_int_equal(slat_arm_s1_tcr(&f->t, false), 0x580803510ull);
	assert_int_equal(slat_arm_s1_tcr(&f->t, true), 0x1580803510ull);
	slat_table_root(&f->t, &root, NULL);
	assert_int_equal(slat_arm_s1_ttbr(&f->t, 7, false),
			 7ull << 48 | slat_pa_v(root));
	fx_done(f);
	/* MAIR_EL1: attr0 0xff, attr1 0x04, attr2 0x44 */
	assert_int_equal(slat_arm_s1_mair(), 0x4404ffull);
}

/* ------------------------------------------------------------ levels */

#define S2 SLAT_FMT_ARM_S2
#define S1 SLAT_FMT_ARM_S1
#define EP SLAT_FMT_EPT
#define NP SLAT_FMT_NPT
#define DS SLAT_FEAT_LPA2
#define AD SLAT_FEAT_HWDIRTY
#define REFUSED SLAT_E_CONFIG, 0, 0, 0

/* A configuration with slat_config.levels, and the geometry it must give
 * (start level, root pages, root entries) or SLAT_E_CONFIG, worked out by
 * hand: at stage 2 the start level L resolves ia - shift(L) bits, 1 to
 * bits_per_level + 4 of them, in 2^bits entries. */
static const struct level_case {
	enum slat_format_id fmt;
	uint32_t granule;
	uint8_t ia, pa, levels;
	uint32_t features;
	int rc, start;
	unsigned pages;
	uint32_t entries;
} level_cases[] = {
	/* 4K: shifts L-1 48, L0 39, L1 30, L2 21; 9 bits a level */
	{ S2, K4, 40, 48, 0, 0, SLAT_OK, 1, 2, 1024 },  /* the default */
	{ S2, K4, 40, 48, 3, 0, SLAT_OK, 1, 2, 1024 },  /* the same, asked */
	{ S2, K4, 40, 48, 4, 0, SLAT_OK, 0, 1, 2 },
	{ S2, K4, 40, 44, 4, 0, SLAT_OK, 0, 1, 2 },
	{ S2, K4, 40, 42, 4, 0, REFUSED },        /* L0: PA < 44 */
	{ S2, K4, 40, 48, 2, 0, REFUSED },        /* 19 bits at L2 */
	{ S2, K4, 40, 48, 5, 0, REFUSED },        /* L-1 needs DS */
	{ S2, K4, 40, 48, 1, 0, REFUSED },
	{ S2, K4, 40, 48, 6, 0, REFUSED },
	{ S2, K4, 34, 40, 0, 0, SLAT_OK, 2, 16, 8192 },
	{ S2, K4, 34, 40, 3, 0, SLAT_OK, 1, 1, 16 },
	{ S2, K4, 35, 40, 2, 0, REFUSED },        /* 32 pages */
	{ S2, K4, 43, 48, 3, 0, SLAT_OK, 1, 16, 8192 },
	{ S2, K4, 43, 48, 4, 0, SLAT_OK, 0, 1, 16 },
	{ S2, K4, 44, 48, 3, 0, REFUSED },        /* 32 pages */
	{ S2, K4, 39, 48, 4, 0, REFUSED },        /* 0 bits at L0 */
	{ S2, K4, 48, 48, 4, 0, SLAT_OK, 0, 1, 512 },
	{ S2, K4, 50, 52, 0, DS, SLAT_OK, 0, 4, 2048 },
	{ S2, K4, 50, 52, 5, DS, SLAT_OK, -1, 1, 4 },
	{ S2, K4, 52, 52, 5, DS, SLAT_OK, -1, 1, 16 },
	{ S2, K4, 48, 52, 5, DS, REFUSED },       /* 0 bits at L-1 */
	{ S2, K4, 48, 48, 4, DS, SLAT_OK, 0, 1, 512 },
	/* 16K: shifts L0 47, L1 36, L2 25; 11 bits a level */
	{ S2, K16, 40, 48, 0, 0, SLAT_OK, 2, 16, 32768 },
	{ S2, K16, 40, 48, 3, 0, SLAT_OK, 1, 1, 16 },
	{ S2, K16, 40, 42, 3, 0, SLAT_OK, 1, 1, 16 },
	{ S2, K16, 40, 40, 3, 0, REFUSED },       /* L1: PA < 42 */
	{ S2, K16, 37, 42, 3, 0, SLAT_OK, 1, 1, 2 },
	{ S2, K16, 36, 42, 3, 0, REFUSED },       /* 0 bits at L1 */
	{ S2, K16, 48, 48, 2, 0, REFUSED },       /* 23 bits at L2 */
	{ S2, K16, 48, 48, 4, 0, REFUSED },       /* L0 needs DS */
	{ S2, K16, 48, 52, 4, DS, SLAT_OK, 0, 1, 2 },
	{ S2, K16, 48, 48, 4, DS, REFUSED },      /* L0: PA < 52 */
	{ S2, K16, 52, 52, 0, DS, SLAT_OK, 0, 1, 32 },
	{ S2, K16, 52, 52, 3, DS, REFUSED },      /* 16 bits at L1 */
	/* 64K: shifts L1 42, L2 29, L3 16; 13 bits a level */
	{ S2, K64, 44, 48, 0, 0, SLAT_OK, 2, 4, 32768 },
	{ S2, K64, 44, 44, 3, 0, SLAT_OK, 1, 1, 4 },
	{ S2, K64, 43, 44, 3, 0, SLAT_OK, 1, 1, 2 },
	{ S2, K64, 43, 43, 3, 0, REFUSED },       /* L1: PA < 44 */
	{ S2, K64, 42, 48, 3, 0, REFUSED },       /* 0 bits at L1 */
	{ S2, K64, 52, 52, 2, 0, REFUSED },       /* 23 bits at L2 */
	{ S2, K64, 48, 48, 4, 0, REFUSED },       /* no L0 with 64K */
	{ S2, K64, 32, 40, 0, 0, SLAT_OK, 2, 1, 8 },
	{ S2, K64, 32, 40, 1, 0, REFUSED },       /* not from L3 */
	/* stage 1: the one start level T0SZ gives */
	{ S1, K4, 48, 48, 4, 0, SLAT_OK, 0, 1, 512 },
	{ S1, K4, 48, 48, 3, 0, REFUSED },
	{ S1, K4, 48, 48, 5, 0, REFUSED },
	{ S1, K4, 39, 40, 3, 0, SLAT_OK, 1, 1, 512 },
	{ S1, K4, 39, 40, 4, 0, REFUSED },
	{ S1, K4, 52, 52, 5, DS, SLAT_OK, -1, 1, 16 },
	{ S1, K4, 52, 52, 4, DS, REFUSED },
	{ S1, K64, 42, 48, 2, 0, SLAT_OK, 2, 1, 8192 },
	{ S1, K64, 42, 48, 3, 0, REFUSED },
	/* EPT: 4 levels up to 48 bits, 5 for any size */
	{ EP, K4, 48, 48, 0, 0, SLAT_OK, 0, 1, 512 },
	{ EP, K4, 48, 48, 4, 0, SLAT_OK, 0, 1, 512 },
	{ EP, K4, 48, 48, 5, 0, SLAT_OK, -1, 1, 1 },
	{ EP, K4, 40, 48, 5, 0, SLAT_OK, -1, 1, 1 },
	{ EP, K4, 49, 52, 0, 0, SLAT_OK, -1, 1, 2 },
	{ EP, K4, 57, 52, 5, 0, SLAT_OK, -1, 1, 512 },
	{ EP, K4, 57, 52, 4, 0, REFUSED },
	{ EP, K4, 40, 48, 3, 0, REFUSED },
	{ EP, K4, 40, 48, 6, 0, REFUSED },
	/* NPT: the host's paging mode, 4 levels or 5 (LA57), as EPT; the
	 * table must know the CPU sets A and D */
	{ NP, K4, 48, 48, 0, AD, SLAT_OK, 0, 1, 512 },
	{ NP, K4, 48, 48, 5, AD, SLAT_OK, -1, 1, 1 },
	{ NP, K4, 49, 52, 0, AD, SLAT_OK, -1, 1, 2 },
	{ NP, K4, 57, 52, 5, AD, SLAT_OK, -1, 1, 512 },
	{ NP, K4, 57, 52, 4, AD, REFUSED },
	{ NP, K4, 48, 48, 0, 0, REFUSED },        /* no A/D: not NPT */
};

/*
 * Every case's geometry; each accepted one also as a table: the checker's
 * own derivation agrees (checker_init), a page at each end of the IPA space
 * needs a table at every level below the start (slat_pages_needed), maps
 * and translates.
 */
static void levels_choose_the_start_level(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(level_cases) / sizeof(level_cases[0]);
	     i++) {
		const struct level_case *c = &level_cases[i];
		struct slat_config cfg = {
			.format = c->fmt, .granule = c->granule,
			.ia_bits = c->ia, .pa_bits = c->pa,
			.features = c->features, .levels = c->levels,
		};
		struct slat_geometry geo;
		int rc = slat_config_geometry(&cfg, &geo);
		if (rc != c->rc)
			fail_msg("case %zu: geometry %d, expected %d", i, rc,
				 c->rc);
		if (rc)
			continue;
		if (geo.start_level != c->start || geo.root_pages != c->pages ||
		    geo.root_entries != c->entries)
			fail_msg("case %zu: start %d, %u pages, %u entries", i,
				 geo.start_level, geo.root_pages,
				 geo.root_entries);
		struct fx *f = fx_new(&cfg);
		uint64_t g = c->granule, top = (1ull << c->ia) - g;
		int levels = SLAT_LAST_LEVEL - c->start + 1;
		assert_int_equal(
			slat_pages_needed(&f->t, SLAT_NEED(.kind = SLAT_OP_MAP,
							   .ipa = slat_ipa(top),
							   .size = g,
							   .pa = slat_pa(0x1000000ull),
							   .attrs = SLAT_RW)),
			levels - 1);
		assert_int_equal(fx_map(f, top, g, 0x1000000ull, SLAT_RW, 0),
				 SLAT_OK);
		assert_int_equal(fx_map(f, 0, g, 0x2000000ull, SLAT_RW, 0),
				 SLAT_OK);
		struct slat_leaf l;
		assert_int_equal(fx_lookup(f, top, &l), SLAT_OK);
		assert_int_equal(slat_pa_v(l.pa), 0x1000000ull);
		assert_int_equal(l.level, SLAT_LAST_LEVEL);
		fx_done(f);
	}
}

/*
 * The register values for start levels other than the default, by hand
 * (fields as in registers_from_the_geometry): 4K, 40-bit IPA from level 0
 * SL0 = 2; 16K 40-bit from level 1, 42-bit PA: SL0 = 2, TG0 = 2, PS = 3;
 * 64K 44-bit from level 1: SL0 = 2, TG0 = 1, PS = 4; 4K 34-bit from level
 * 1: SL0 = 1, PS = 4; 4K 50-bit with DS from level -1: SL0 = 0, PS = 6,
 * DS [32], SL2 [33]; EPT 48-bit with a 5-level walk: length - 1 = 4.
 */
static void registers_for_other_start_levels(void **state)
{
	(void)state;
	static const struct {
		struct slat_config cfg;
		uint64_t vtcr;
	} cases[] = {
		{ { .format = S2, .granule = K4, .ia_bits = 40, .pa_bits = 48,
		    .levels = 4 }, 0x80053598ull },
		{ { .format = S2, .granule = K16, .ia_bits = 40, .pa_bits = 42,
		    .levels = 3 }, 0x8003b598ull },
		{ { .format = S2, .granule = K64, .ia_bits = 44, .pa_bits = 44,
		    .levels = 3 }, 0x80047594ull },
		{ { .format = S2, .granule = K4, .ia_bits = 34, .pa_bits = 44,
		    .levels = 3 }, 0x8004355eull },
		{ { .format = S2, .granule = K4, .ia_bits = 50, .pa_bits = 52,
		    .features = DS, .levels = 5 }, 0x38006350eull },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new(&cases[i].cfg);
		assert_int_equal(slat_arm_s2_vtcr(&f->t, false), cases[i].vtcr);
		fx_done(f);
	}
	static const struct slat_config ept5_48 = {
		.format = EP, .granule = K4, .ia_bits = 48, .pa_bits = 48,
		.levels = 5,
	};
	struct fx *f = fx_new(&ept5_48);
	slat_pa_t root;
	slat_table_root(&f->t, &root, NULL);
	assert_int_equal(slat_ept_eptp(&f->t), slat_pa_v(root) | 0x26);
	fx_done(f);
}

#undef S2
#undef S1
#undef EP
#undef NP
#undef DS
#undef AD
#undef REFUSED

/* ------------------------------------------------------------ EPT split */

#define EPT_XK (1ull << 2)
#define EPT_XU (1ull << 10)

/* Every leaf of [s, s+size) has exactly the execute bits @want. */
static void assert_ept_exec_bits(struct fx *f, uint64_t s, uint64_t size,
				 uint64_t leaf_size, uint64_t want)
{
	for (uint64_t a = s; a < s + size; a += leaf_size) {
		struct slat_leaf l;
		assert_int_equal(fx_lookup(f, a, &l), SLAT_OK);
		assert_int_equal(l.size, leaf_size);
		if ((l.pte & (EPT_XK | EPT_XU)) != want)
			fail_msg("leaf %#llx: pte %#llx, execute bits %#llx, "
				 "expected %#llx",
				 (unsigned long long)a,
				 (unsigned long long)l.pte,
				 (unsigned long long)(l.pte & (EPT_XK | EPT_XU)),
				 (unsigned long long)want);
	}
}

static void split_block(struct fx *f, uint64_t ipa, uint64_t size,
			uint64_t leaf_size)
{
	int64_t need = slat_pages_needed(
		&f->t, SLAT_NEED(.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(ipa),
				 .size = size, .leaf_size = leaf_size));
	assert_true(need >= 0);
	fx_topup(f, (uint32_t)need);
	assert_int_equal(slat_split(&f->t, slat_ipa(ipa), size, leaf_size,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
}

static void ept_split_keeps_user_execute_on_every_leaf(void **state)
{
	(void)state;
	struct fx *f = fx_new(&ept48_mbec);
	/* a 2M block with both executes, split to pages */
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R | SLAT_X, 0),
			 SLAT_OK);
	assert_ept_exec_bits(f, G1, M2, M2, EPT_XK | EPT_XU);
	split_block(f, G1, M2, 0);
	assert_ept_exec_bits(f, G1, M2, K4, EPT_XK | EPT_XU);
	/* a 1G block with user execute only, split two levels down */
	assert_int_equal(fx_map(f, 2 * G1, G1, 0x140000000ull, SLAT_R | SLAT_XU,
				0),
			 SLAT_OK);
	split_block(f, 2 * G1, G1, 0);
	assert_ept_exec_bits(f, 2 * G1, G1, K4, EPT_XU);
	/* and one level: 1G to 2M */
	assert_int_equal(fx_map(f, 4 * G1, G1, 0x180000000ull,
				SLAT_RW | SLAT_X, 0),
			 SLAT_OK);
	split_block(f, 4 * G1, G1, M2);
	assert_ept_exec_bits(f, 4 * G1, G1, M2, EPT_XK | EPT_XU);
	/* a split on the way (unmapping one page of a block) too */
	assert_int_equal(fx_map(f, 6 * G1, M2, 0x1c0000000ull, SLAT_R | SLAT_X,
				0),
			 SLAT_OK);
	assert_int_equal(fx_unmap(f, 6 * G1, K4, SLAT_FLUSH_VMID), SLAT_OK);
	assert_ept_exec_bits(f, 6 * G1 + K4, M2 - K4, K4, EPT_XK | EPT_XU);
	fx_done(f);
}

static void ept_split_of_supervisor_execute_block_adds_no_user_execute(
	void **state)
{
	(void)state;
	struct fx *f = fx_new(&ept48_mbec);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R | SLAT_XK, 0),
			 SLAT_OK);
	assert_ept_exec_bits(f, G1, M2, M2, EPT_XK);
	split_block(f, G1, M2, 0);
	assert_ept_exec_bits(f, G1, M2, K4, EPT_XK);
	assert_int_equal(fx_map(f, 2 * G1, G1, 0x140000000ull, SLAT_R | SLAT_XK,
				0),
			 SLAT_OK);
	split_block(f, 2 * G1, G1, 0);
	assert_ept_exec_bits(f, 2 * G1, G1, K4, EPT_XK);
	fx_done(f);
}

/* ------------------------------------------------------------ leaf fit */

struct leafvec {
	struct check_leaf *v;
	size_t n, cap;
};

static int collect_cb(void *arg, const struct check_leaf *l)
{
	struct leafvec *v = arg;
	if (!l->valid)
		return 0;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
		assert_non_null(v->v);
	}
	v->v[v->n++] = *l;
	return 0;
}

/*
 * The review's shape: 2M at IPA 0x3fe000 (two pages below a 2M boundary)
 * to a 2M-aligned PA, where the tables of that gigabyte already exist (a
 * page mapped in it first). The IPA is not aligned to 2M, so no 2M leaf
 * fits: pages, and nothing outside [0x3fe000, 0x5fe000).
 */
static void map_block_size_at_unaligned_ipa_maps_only_what_was_asked(
	const struct slat_config *cfg)
{
	struct fx *f = fx_new(cfg);
	const uint64_t ipa = 0x3fe000, size = M2, pa = 0x80000000ull;
	assert_int_equal(fx_map(f, 0x100000, K4, 0x90000000ull, SLAT_RW, 0),
			 SLAT_OK);
	struct leafvec pre = { 0 };
	assert_int_equal(checker_walk(&f->ck, ipa, ipa + size, collect_cb, &pre),
			 0);
	assert_int_equal(fx_map(f, ipa, size, pa, SLAT_RW, 0), SLAT_OK);
	if (checker_map_bounds(&f->ck, pre.v, pre.n, ipa, size, pa))
		fail_msg("%s", f->ck.msg);
	assert_leaf(f, ipa, 3, pa);
	assert_leaf(f, ipa + K4, 3, pa + K4);
	assert_leaf(f, ipa + 2 * K4, 3, pa + 2 * K4);
	assert_leaf(f, ipa + size - K4, 3, pa + size - K4);
	assert_hole(f, ipa - K4);
	assert_hole(f, 0x200000);
	assert_hole(f, ipa + size);
	assert_leaf(f, 0x100000, 3, 0x90000000ull);
	assert_int_equal(f->t.stats.written[SLAT_WRITE_LEAF], 1 + size / K4);
	free(pre.v);
	fx_done(f);
}

static void map_block_size_at_unaligned_ipa_arm_4k_40(void **state)
{
	(void)state;
	map_block_size_at_unaligned_ipa_maps_only_what_was_asked(&arm40);
}

static void map_block_size_at_unaligned_ipa_arm_4k_32(void **state)
{
	(void)state;
	map_block_size_at_unaligned_ipa_maps_only_what_was_asked(&arm32);
}

static void map_block_size_at_unaligned_ipa_ept(void **state)
{
	(void)state;
	map_block_size_at_unaligned_ipa_maps_only_what_was_asked(&ept48);
}

/* The same with the PA unaligned and the IPA aligned: pages too. */
static void map_block_size_to_unaligned_pa_maps_pages(void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &arm40, &arm32, &ept48 };
	for (size_t i = 0; i < 3; i++) {
		struct fx *f = fx_new(cfgs[i]);
		assert_int_equal(fx_map(f, 0x100000, K4, 0x90000000ull, SLAT_RW,
					0),
				 SLAT_OK);
		assert_int_equal(fx_map(f, 0x400000, M2, 0x80002000ull, SLAT_RW,
					0),
				 SLAT_OK);
		assert_leaf(f, 0x400000, 3, 0x80002000ull);
		assert_leaf(f, 0x5ff000, 3, 0x80201000ull);
		assert_hole(f, 0x600000);
		assert_hole(f, 0x3ff000);
		fx_done(f);
	}
}

/* ------------------------------------------------------------ slat_flush */

/*
 *   [1G, 1G+2M)          2M block -> 0x1_0000_0000, Normal
 *   [1G+2M, 1G+2M+16K)   pages -> 0x1_0020_0000.., Normal (contiguous with
 *                        the block's PA)
 *   [1G+2M+16K, +4K)     a Device page -> 0x9000_0000
 *   [1G+2M+20K, +4K)     an NC page -> 0x9000_1000
 *   [1G+2M+24K, +8K)     Normal pages -> 0x1_2000_0000 (a PA run of its own)
 *   [1G+2M+32K, ...)     hole
 */
#define FL_PAGES (G1 + M2)
#define FL_DEV (FL_PAGES + 4 * K4)
#define FL_NC (FL_DEV + K4)
#define FL_FAR (FL_NC + K4)

static struct fx *flush_fixture(const struct slat_config *cfg)
{
	struct fx *f = fx_new(cfg);
	assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0), SLAT_OK);
	assert_int_equal(fx_map(f, FL_PAGES, 4 * K4, 0x100200000ull, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, FL_DEV, K4, 0x90000000ull,
				SLAT_RW | SLAT_MT_DEVICE, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, FL_NC, K4, 0x90001000ull,
				SLAT_RW | SLAT_MT_NORMAL_NC, 0),
			 SLAT_OK);
	assert_int_equal(fx_map(f, FL_FAR, 2 * K4, 0x120000000ull, SLAT_R, 0),
			 SLAT_OK);
	fx_clear_events(f);
	return f;
}

/* The observed D-cache calls are exactly @n runs @want[]. */
static void assert_dcache_runs(struct fx *f, const uint64_t (*want)[2],
			       size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < f->nev; i++) {
		const struct slat_hosted_event *e = &f->ev[i].ev;
		assert_int_not_equal(e->kind, SLAT_EV_ICACHE_INVAL);
		assert_int_not_equal(e->kind, SLAT_EV_TLBI_IPA);
		assert_int_not_equal(e->kind, SLAT_EV_TLBI_RANGE);
		assert_int_not_equal(e->kind, SLAT_EV_TLBI_VMID);
		assert_int_not_equal(e->kind, SLAT_EV_PAGE_FREE);
		if (e->kind != SLAT_EV_DCACHE_CLEAN_INVAL)
			continue;
		if (k >= n || e->addr != want[k][0] || e->size != want[k][1])
			fail_msg("D-cache call %zu: PA %#llx+%#llx, expected "
				 "%#llx+%#llx",
				 k, (unsigned long long)e->addr,
				 (unsigned long long)e->size,
				 (unsigned long long)(k < n ? want[k][0] : 0),
				 (unsigned long long)(k < n ? want[k][1] : 0));
		k++;
	}
	assert_int_equal(k, n);
	assert_int_equal(f->t.stats.dcache_calls, n);
	for (int w = 0; w < SLAT_WRITE_KINDS; w++)
		assert_int_equal(f->t.stats.written[w], 0);
}

static void flush_cleans_exactly_the_cacheable_memory_in_the_range(
	void **state)
{
	(void)state;
	struct fx *f = flush_fixture(&arm40);
	/* part of the block */
	assert_int_equal(slat_flush(&f->t, slat_ipa(G1 + K4), 3 * K4, NULL),
			 SLAT_OK);
	static const uint64_t part[][2] = { { 0x100001000ull, 3 * K4 } };
	assert_dcache_runs(f, part, 1);

	/* the block's last page and the pages after it: one PA run across
	 * the leaves; Device and NC skipped; the far pages a run of their own;
	 * the hole nothing */
	fx_clear_events(f);
	assert_int_equal(slat_flush(&f->t, slat_ipa(G1 + M2 - K4),
				    K4 + 4 * K4 + 2 * K4 + 2 * K4 + 4 * K4,
				    NULL),
			 SLAT_OK);
	static const uint64_t runs[][2] = {
		{ 0x100200000ull - K4, 5 * K4 },
		{ 0x120000000ull, 2 * K4 },
	};
	assert_dcache_runs(f, runs, 2);

	/* the whole block and beyond, shared */
	fx_clear_events(f);
	assert_int_equal(slat_flush(&f->t, slat_ipa(G1), M2 + 4 * K4,
				    SLAT_OP(.flags = SLAT_SHARED)),
			 SLAT_OK);
	static const uint64_t all[][2] = { { 0x100000000ull, M2 + 4 * K4 } };
	assert_dcache_runs(f, all, 1);
	fx_done(f);
}

static void flush_nothing_to_do_for_device_and_nc_only(void **state)
{
	(void)state;
	struct fx *f = flush_fixture(&arm40);
	assert_int_equal(slat_flush(&f->t, slat_ipa(FL_DEV), 2 * K4, NULL),
			 SLAT_NOTHING_TO_DO);
	assert_int_equal(f->nev, 0);
	/* a hole alone too */
	assert_int_equal(slat_flush(&f->t, slat_ipa(4 * G1), M2, NULL),
			 SLAT_NOTHING_TO_DO);
	assert_int_equal(f->nev, 0);
	fx_done(f);
}

static void flush_nothing_to_do_with_fwb_and_on_ept(void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &arm40_fwb, &ept48 };
	for (size_t i = 0; i < 2; i++) {
		struct fx *f = flush_fixture(cfgs[i]);
		assert_int_equal(slat_flush(&f->t, slat_ipa(G1), 2 * M2, NULL),
				 SLAT_NOTHING_TO_DO);
		assert_int_equal(f->nev, 0);
		assert_int_equal(f->t.stats.dcache_calls, 0);
		fx_done(f);
	}
}

static void flush_refuses_bad_input(void **state)
{
	(void)state;
	struct fx *f = flush_fixture(&arm40);
	assert_int_equal(slat_flush(&f->t, slat_ipa(G1 + 8), K4, NULL),
			 SLAT_E_ALIGN);
	assert_int_equal(slat_flush(&f->t, slat_ipa(G1), 0, NULL),
			 SLAT_E_RANGE);
	assert_int_equal(slat_flush(&f->t, slat_ipa(1ull << 40), K4, NULL),
			 SLAT_E_RANGE);
	assert_int_equal(slat_flush(&f->t, slat_ipa(G1), K4,
				    SLAT_OP(.flags = 1u << 20)),
			 SLAT_E_INVAL);
	assert_int_equal(f->nev, 0);
	fx_done(f);
}

/* ------------------------------------------------------------ SKIP_CMO */

/*
 * SLAT_SKIP_CMO: the caller did the maintenance. The operation calls no
 * cache hook, and counts in stats.cmo_skipped the calls it left to the
 * caller: as many as the same operation makes without the flag.
 */
static void skip_cmo_map_and_relax(const char *what, uint32_t attrs,
				   uint64_t size, bool relax)
{
	uint64_t calls[2], skipped[2];
	for (int skip = 0; skip < 2; skip++) {
		struct fx *f = fx_new(&arm40);
		uint32_t flags = skip ? SLAT_SKIP_CMO : 0;
		if (relax) {
			assert_int_equal(fx_map(f, G1, size, 0x100000000ull,
						SLAT_R, 0),
					 SLAT_OK);
			fx_topup(f, 8);
			fx_clear_events(f);
			assert_int_equal(slat_relax(&f->t, slat_ipa(G1), size,
						    attrs,
						    SLAT_OP(.flags = flags,
							    .cache =
								    &f->cache)),
					 SLAT_OK);
		} else {
			fx_clear_events(f);
			assert_int_equal(fx_map(f, G1, size, 0x100000000ull,
						attrs, flags),
					 SLAT_OK);
		}
		calls[skip] = f->t.stats.dcache_calls + f->t.stats.icache_calls;
		skipped[skip] = f->t.stats.cmo_skipped;
		assert_int_equal(calls[skip],
				 fx_count(f, SLAT_EV_DCACHE_CLEAN_INVAL) +
					 fx_count(f, SLAT_EV_ICACHE_INVAL));
		fx_done(f);
	}
	print_message("  %s: %llu calls without the flag; with it %llu calls, "
		      "%llu counted skipped\n",
		      what, (unsigned long long)calls[0],
		      (unsigned long long)calls[1],
		      (unsigned long long)skipped[1]);
	assert_true(calls[0] > 0);
	assert_int_equal(skipped[0], 0);
	assert_int_equal(calls[1], 0);
	if (skipped[1] != calls[0])
		fail_msg("%s with SLAT_SKIP_CMO: stats.cmo_skipped is %llu, but "
			 "the same call without it makes %llu cache "
			 "maintenance calls",
			 what, (unsigned long long)skipped[1],
			 (unsigned long long)calls[0]);
}

static void skip_cmo_map_normal_calls_no_hook_and_counts_them(void **state)
{
	(void)state;
	skip_cmo_map_and_relax("map 2M RW", SLAT_RW, M2, false);
	skip_cmo_map_and_relax("map 16K RW", SLAT_RW, 4 * K4, false);
}

static void skip_cmo_map_executable_calls_no_hook_and_counts_them(
	void **state)
{
	(void)state;
	/* a D-cache clean and an I-cache invalidation left to the caller */
	skip_cmo_map_and_relax("map 2M RWX", SLAT_RWX, M2, false);
}

static void skip_cmo_relax_exec_calls_no_hook_and_counts_them(void **state)
{
	(void)state;
	skip_cmo_map_and_relax("relax 2M +X", SLAT_X, M2, true);
	skip_cmo_map_and_relax("relax 16K +X", SLAT_X, 4 * K4, true);
}

/* ------------------------------------------------------------ destroyed */

static int count_visit(const struct slat_walk_ctx *ctx, enum slat_visit v)
{
	(void)ctx;
	(void)v;
	return 0;
}

static void destroyed_table_refuses_every_operation(void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &arm40, &ept48 };
	for (size_t i = 0; i < 2; i++) {
		struct fx *f = fx_new(cfgs[i]);
		assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_RW, 0),
				 SLAT_OK);
		fx_topup(f, 16);
		slat_table_destroy(&f->t);
		fx_clear_events(f);
		struct slat_table *t = &f->t;
		struct slat_page_cache *c = &f->cache;
		slat_ipa_t a = slat_ipa(G1);
		struct slat_op op = { .flush = SLAT_FLUSH_VMID, .cache = c };
		uint64_t bm[8];
		struct slat_leaf l;
		struct slat_hw_result hr;
		struct slat_walker w = { count_visit, NULL, SLAT_VISIT_LEAF,
					 SLAT_LAST_LEVEL };
		struct slat_stats st;
		memset(&st, 0, sizeof(st));
		op.done = 77;
		assert_int_equal(slat_map(t, slat_ipa(2 * G1), K4,
					  slat_pa(0x1000), SLAT_RW, &op),
				 SLAT_E_INVAL);
		assert_int_equal(op.done, 0);
		op.done = 77;
		assert_int_equal(slat_unmap(t, a, K4, &op), SLAT_E_INVAL);
		assert_int_equal(op.done, 0);
		op.done = 77;
		assert_int_equal(slat_wrprotect(t, a, K4, &op), SLAT_E_INVAL);
		assert_int_equal(op.done, 0);
		op.done = 77;
		assert_int_equal(slat_relax(t, a, K4, SLAT_X, &op),
				 SLAT_E_INVAL);
		assert_int_equal(op.done, 0);
		assert_int_equal(slat_mkyoung(t, a, 0), SLAT_E_INVAL);
		assert_int_equal(slat_test_clear_young(t, a, K4, true, NULL),
				 SLAT_E_INVAL);
		assert_int_equal(slat_dirty_read(t, a, K4, bm, 8, true, &op),
				 SLAT_E_INVAL);
		op.done = 77;
		assert_int_equal(slat_split(t, a, M2, 0, &op), SLAT_E_INVAL);
		assert_int_equal(op.done, 0);
		assert_int_equal(
			slat_recover(
				t, a, M2,
				SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
				SLAT_OP(.flush = SLAT_FLUSH_VMID)),
			SLAT_E_INVAL);
		assert_int_equal(slat_flush(t, a, M2, NULL), SLAT_E_INVAL);
		assert_int_equal(slat_lookup(t, a, &l), SLAT_E_INVAL);
		assert_int_equal(slat_hw_access(t, a, SLAT_ACCESS_READ, &hr),
				 SLAT_E_INVAL);
		assert_int_equal(slat_walk(t, a, M2, &w, &st), SLAT_E_INVAL);
		for (int op = SLAT_OP_MAP; op <= SLAT_OP_SPLIT; op++)
			assert_int_equal(
				slat_pages_needed(
					t, SLAT_NEED(.kind = (enum slat_op_kind)op,
						     .ipa = a, .size = G1)),
				SLAT_E_INVAL);
		/* nothing was touched, nothing was called */
		assert_int_equal(f->nev, 0);
		assert_int_equal(f->cache.nr, 16);
		/* and destroying again is harmless */
		slat_table_destroy(&f->t);
		assert_int_equal(f->nev, 0);
		slat_hosted_cache_fini(&f->cache);
		checker_fini(&f->ck);
		assert_int_equal(f->h.double_frees, 0);
		slat_hosted_fini(&f->h);
		free(f);
	}
}

/* ------------------------------------------------------------ recover */

/*
 * Zap-table replaces a qualifying table by an invalid entry. When that
 * table was the only thing its parent held, the parent is empty, and a
 * non-root table is never left empty (docs/design.md): it must go too,
 * as unmap and zap-leaf do.
 */
static void recover_zap_table_leaves_no_empty_table(void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &arm40, &ept48 };
	for (size_t i = 0; i < 2; i++) {
		for (int pol = SLAT_FLUSH_ENTRY; pol <= SLAT_FLUSH_NONE; pol++) {
			struct fx *f = fx_new(cfgs[i]);
			/* one page: L1 (or PDPT) -> L2 -> L3 tables */
			assert_int_equal(fx_map(f, G1 + M2 + K4, K4,
						0x100000000ull, SLAT_RW, 0),
					 SLAT_OK);
			fx_clear_events(f);
			assert_int_equal(
				slat_recover(
					&f->t, slat_ipa(G1 + M2), M2,
					SLAT_RECOVERY(.strategy =
							      SLAT_RECOVER_ZAP_TABLE),
					SLAT_OP(.flush = (enum slat_tlbi_policy)
							pol)),
				SLAT_OK);
			assert_hole(f, G1 + M2 + K4);
			if (checker_full(&f->ck, NULL))
				fail_msg("%s, policy %d: %s",
					 slat_table_name(&f->t), pol,
					 f->ck.msg);
			fx_fini(f);
			free(f);
		}
	}
}

/*
 * A batch that fills up frees what it holds after one invalidation that
 * covers all of it, whatever the walk's order: an unmap that starts inside
 * a table unlinks it after its children (post-order), so when 64 children
 * wait in the batch the parent's turn comes at an address below them.
 */
static void unmap_batch_covers_tables_unlinked_after_their_children(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	/* 64 level-3 tables under the level-2 table of [1G, 2G) */
	for (uint64_t k = 0; k < 64; k++)
		assert_int_equal(fx_map(f, G1 + k * M2 + K4, K4,
					0x100000000ull + k * K4, SLAT_RW, 0),
				 SLAT_OK);
	fx_clear_events(f);
	assert_int_equal(fx_unmap(f, G1 + K4, G1 - K4, SLAT_FLUSH_RANGE),
			 SLAT_OK);
	assert_hole(f, G1 + 63 * M2 + K4);
	uint64_t lo = ~0ull, hi = 0, frees = 0;
	for (size_t i = 0; i < f->nev; i++) {
		const struct slat_hosted_event *e = &f->ev[i].ev;
		if (e->kind == SLAT_EV_TLBI_RANGE) {
			/* inside the range, never wrapped */
			assert_true(e->addr >= G1 + K4 && e->size <= G1 - K4 &&
				    e->addr + e->size <= 2 * G1);
			lo = e->addr < lo ? e->addr : lo;
			hi = e->addr + e->size > hi ? e->addr + e->size : hi;
		} else if (e->kind == SLAT_EV_PAGE_FREE) {
			/* every child's span, and the parent's, invalidated */
			assert_true(lo <= G1 + K4 && hi > G1 + 63 * M2);
			frees++;
		}
	}
	assert_int_equal(frees, 65);
	if (checker_full(&f->ck, NULL))
		fail_msg("%s", f->ck.msg);
	fx_fini(f);
	free(f);
}

/*
 * slat_pages_needed() counts what the operation will take, by its own
 * rules: a map of a block under tables that exist takes none, the same
 * range by pages takes the table below, a PA that only pages fit takes
 * it too; a split of a range that meets a 1G block counts the block
 * whole; a wrprotect of part of a block already protected splits nothing.
 */
static void pages_needed_counts_what_the_operation_takes(void **state)
{
	(void)state;
	struct fx *f = fx_new(&arm40);
	const uint64_t pa = 0x100000000ull;
	/* the level-2 table of [0, 1G) exists */
	assert_int_equal(fx_map(f, K4, K4, pa, SLAT_RW, 0), SLAT_OK);
#define NEED_MAP(i, s, p, fl)                                              \
	slat_pages_needed(&f->t, SLAT_NEED(.kind = SLAT_OP_MAP,             \
					   .ipa = slat_ipa(i), .size = (s),  \
					   .pa = slat_pa(p), .attrs = SLAT_RW, \
					   .flags = (fl)))
	assert_int_equal(NEED_MAP(M2, M2, pa, 0), 0);
	assert_int_equal(NEED_MAP(M2, M2, pa, SLAT_MAP_PAGES), 1);
	assert_int_equal(NEED_MAP(M2, M2, pa + K4, 0), 1);
	assert_int_equal(NEED_MAP(M2, 3 * M2, pa + K4, 0), 3);
	/* a fresh gigabyte: its level-2 table, then what goes below */
	assert_int_equal(NEED_MAP(G1, G1, pa, 0), 0);
	assert_int_equal(NEED_MAP(G1, M2, pa, 0), 1);
	assert_int_equal(NEED_MAP(G1, G1, pa, SLAT_MAP_PAGES), 1 + 512);
	/* what already translates as asked is kept: nothing */
	assert_int_equal(NEED_MAP(K4, K4, pa, SLAT_MAP_PAGES), 0);
	/* bad input: the operation's own error */
	assert_int_equal(NEED_MAP(M2, M2, pa + 1, 0), SLAT_E_ALIGN);
	assert_int_equal(NEED_MAP(M2, M2, 1ull << 48, 0), SLAT_E_RANGE);
#undef NEED_MAP
	assert_int_equal(slat_pages_needed(&f->t, NULL), SLAT_E_INVAL);

	/* a 1G block; a split meeting one page of it builds it all */
	assert_int_equal(fx_map(f, 2 * G1, G1, 0x200000000ull, SLAT_RW, 0),
			 SLAT_OK);
	struct slat_need split = { .kind = SLAT_OP_SPLIT,
				   .ipa = slat_ipa(2 * G1 + M2), .size = K4 };
	assert_int_equal(slat_pages_needed(&f->t, &split), 1 + 512);
	split.leaf_size = M2;
	assert_int_equal(slat_pages_needed(&f->t, &split), 1);
	split.leaf_size = 3 * K4;
	assert_int_equal(slat_pages_needed(&f->t, &split), SLAT_E_INVAL);
	/* unmap or wrprotect of one page of it: a table at each level */
	struct slat_need part = { .kind = SLAT_OP_WRPROTECT,
				  .ipa = slat_ipa(2 * G1 + M2), .size = K4 };
	assert_int_equal(slat_pages_needed(&f->t, &part), 2);
	fx_topup(f, 2);
	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(2 * G1), G1,
					SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	/* protected whole already: nothing to split; unmap still splits */
	assert_int_equal(slat_pages_needed(&f->t, &part), 0);
	part.kind = SLAT_OP_UNMAP;
	assert_int_equal(slat_pages_needed(&f->t, &part), 2);
	/* dirty clearing needs hardware dirty state */
	part.kind = SLAT_OP_DIRTY_CLEAR;
	assert_int_equal(slat_pages_needed(&f->t, &part), SLAT_E_CONFIG);
	fx_fini(f);
	free(f);
}

/* The hosted platform, but one page's PA moved above 40 bits. */
static struct slat_mm_ops pa40_ops;
static const void *pa40_poisoned;

static slat_pa_t pa40_virt_to_phys(void *ctx, void *va)
{
	slat_pa_t pa = slat_hosted_ops_serial()->virt_to_phys(ctx, va);
	if (va == pa40_poisoned)
		pa.pa += 1ull << 40;
	return pa;
}

/*
 * A table's pages must have PAs its descriptors can hold: a root beyond
 * the output size is refused at init (and freed), and an operation given
 * a page beyond it stops with SLAT_E_RANGE before linking anything.
 */
static void table_pages_beyond_the_output_size_are_refused(void **state)
{
	(void)state;
	const struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		.pa_bits = 40,
	};
	struct slat_hosted h;
	struct slat_table t;
	/* every PA of this arena is at or above 2^40 */
	assert_int_equal(slat_hosted_init(&h, 64 * K4, 4096, 1ull << 40), 0);
	assert_int_equal(slat_table_init(&t, &cfg, slat_hosted_ops_serial(), &h),
			 SLAT_E_RANGE);
	assert_int_equal(slat_hosted_table_pages(&h), 0);
	slat_hosted_fini(&h);

	pa40_ops = *slat_hosted_ops_serial();
	pa40_ops.virt_to_phys = pa40_virt_to_phys;
	pa40_ops.linear_offset = NULL;
	assert_int_equal(slat_hosted_init(&h, 64 * K4, 4096, 0x80000000ull), 0);
	assert_int_equal(slat_table_init(&t, &cfg, &pa40_ops, &h), SLAT_OK);
	h.table = &t;
	struct slat_page_cache c;
	assert_int_equal(slat_hosted_cache_init(&c, 8), 0);
	assert_int_equal(slat_hosted_cache_topup(&h, &c, 2), 0);
	/* map's chain of two tables, the second page unusable: nothing
	 * linked; then split of a block, its one page unusable */
	for (int k = 0; k < 2; k++) {
		pa40_poisoned = c.pages[k];
		struct slat_op op = { .cache = &c };
		assert_int_equal(slat_map(&t, slat_ipa(G1), K4,
					  slat_pa(0x100000000ull), SLAT_RW, &op),
				 SLAT_E_RANGE);
		assert_int_equal(c.nr, 2);
		assert_int_equal(t.stats.written[SLAT_WRITE_TABLE], 0);
	}
	pa40_poisoned = NULL;
	assert_int_equal(slat_map(&t, slat_ipa(0), G1, slat_pa(0x100000000ull),
				  SLAT_RW, SLAT_OP(.cache = &c)), SLAT_OK);
	pa40_poisoned = c.pages[c.nr - 1];
	assert_int_equal(slat_unmap(&t, slat_ipa(M2), K4, SLAT_OP(.cache = &c)),
			 SLAT_E_RANGE);
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&t, slat_ipa(M2), &l), SLAT_OK);
	assert_int_equal(l.size, G1);
	assert_int_equal(slat_split(&t, slat_ipa(0), G1, M2, SLAT_OP(.cache = &c)),
			 SLAT_E_RANGE);
	assert_int_equal(slat_lookup(&t, slat_ipa(M2), &l), SLAT_OK);
	assert_int_equal(l.size, G1);
	pa40_poisoned = NULL;
	slat_hosted_cache_drain(&h, &c);
	slat_hosted_cache_fini(&c);
	slat_table_destroy(&t);
	slat_hosted_fini(&h);
}

/*
 * Promote replaces a table by a block when its leaves are valid, map one
 * aligned contiguous PA range with the same attributes; the access flag
 * and the dirty state are merged (docs/split-recover.md). On EPT without
 * accessed/dirty flags a leaf mapped writable and then write-protected
 * keeps its D bit (bit 9): the same attributes as its neighbours mapped
 * read-only, so the table is uniform and must become one block.
 */
static void recover_promote_merges_the_dirty_bit_of_write_protected_leaves(
	void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &ept48, &arm40 };
	for (size_t i = 0; i < 2; i++) {
		struct fx *f = fx_new(cfgs[i]);
		assert_int_equal(fx_map(f, G1, M2, 0x100000000ull, SLAT_R,
					SLAT_MAP_PAGES),
				 SLAT_OK);
		assert_int_equal(fx_unmap(f, G1, K4, SLAT_FLUSH_VMID), SLAT_OK);
		assert_int_equal(fx_map(f, G1, K4, 0x100000000ull, SLAT_RW, 0),
				 SLAT_OK);
		fx_topup(f, 4);
		assert_int_equal(slat_wrprotect(&f->t, slat_ipa(G1), K4,
						SLAT_OP(.flush =
								SLAT_FLUSH_VMID,
							.cache = &f->cache)),
				 SLAT_OK);
		struct slat_leaf a, b;
		assert_int_equal(fx_lookup(f, G1, &a), SLAT_OK);
		assert_int_equal(fx_lookup(f, G1 + K4, &b), SLAT_OK);
		assert_int_equal(a.attrs, b.attrs);
		assert_int_equal(
			slat_recover(
				&f->t, slat_ipa(G1), M2,
				SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
				SLAT_OP(.flush = SLAT_FLUSH_VMID)),
			SLAT_OK);
		struct slat_leaf l;
		assert_int_equal(fx_lookup(f, G1 + K4, &l), SLAT_OK);
		if (l.level != 2)
			fail_msg("%s: leaves %#llx and %#llx (same attributes "
				 "%#x, ptes %#llx and %#llx) were not promoted: "
				 "a level-%d leaf after recover",
				 slat_table_name(&f->t),
				 (unsigned long long)G1,
				 (unsigned long long)(G1 + K4), a.attrs,
				 (unsigned long long)a.pte,
				 (unsigned long long)b.pte, l.level);
		assert_int_equal(slat_pa_v(l.pa), 0x100000000ull + K4);
		fx_done(f);
	}
}

/*
 * Promote with break-before-make (Arm) under a batched policy publishes
 * the blocks after the batch's invalidation. A table that shared walkers
 * added to has an unknown count, which the next exclusive user recounts:
 * the count must come out as the table's non-zero entries once every
 * block is in, whenever the recount happens. Then unmapping everything
 * but one block leaves that block mapped.
 */
static void recover_promote_keeps_the_count_of_a_table_shared_walkers_filled(
	void **state)
{
	(void)state;
	const struct slat_config *cfgs[] = { &arm40, &ept48 };
	for (size_t i = 0; i < 2; i++) {
		for (int pol = SLAT_FLUSH_ENTRY; pol <= SLAT_FLUSH_NONE; pol++) {
			struct fx *f = fx_new(cfgs[i]);
			/* four 2M regions of pages and one page in another
			 * 2M of the same gigabyte, all by shared walkers */
			for (uint64_t k = 0; k < 4; k++)
				assert_int_equal(fx_map(f, G1 + 2 * k * M2, M2,
							0x100000000ull + 2 * k * M2,
							SLAT_RW,
							SLAT_MAP_PAGES | SLAT_SHARED),
						 SLAT_OK);
			assert_int_equal(fx_map(f, G1 + 64 * M2, K4,
						0x200000000ull, SLAT_RW,
						SLAT_SHARED),
					 SLAT_OK);
			assert_int_equal(
				slat_recover(
					&f->t, slat_ipa(G1), G1,
					SLAT_RECOVERY(.strategy =
							      SLAT_RECOVER_PROMOTE),
					SLAT_OP(.flush = (enum slat_tlbi_policy)
							pol)),
				SLAT_OK);
			for (uint64_t k = 0; k < 4; k++)
				assert_leaf(f, G1 + 2 * k * M2, 2,
					    0x100000000ull + 2 * k * M2);
			if (checker_full(&f->ck, NULL))
				fail_msg("%s, policy %d, after promote: %s",
					 slat_table_name(&f->t), pol, f->ck.msg);
			/* everything but the last block goes */
			assert_int_equal(fx_unmap(f, G1 + 64 * M2, K4,
						  SLAT_FLUSH_VMID),
					 SLAT_OK);
			assert_int_equal(fx_unmap(f, G1, 6 * M2,
						  SLAT_FLUSH_VMID),
					 SLAT_OK);
			assert_leaf(f, G1 + 6 * M2, 2, 0x100000000ull + 6 * M2);
			fx_done(f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relax_arm_one_local_tlbi_by_ipa_per_changed_leaf),
		cmocka_unit_test(relax_x86_invalidates_as_its_faults_require),
		cmocka_unit_test(relax_follows_the_flush_policy),
		cmocka_unit_test(
			shared_relax_of_a_relaxed_leaf_invalidates_locally),
		cmocka_unit_test(op_defaults_and_refused_flags),
		cmocka_unit_test(fault_memo_does_not_outlive_its_table),
		cmocka_unit_test(fault_memo_checks_each_fault),
		cmocka_unit_test(map_break_block_keeps_only_the_new_leaves),
		cmocka_unit_test(results_are_distinct),
		cmocka_unit_test(dirty_read_refuses_a_short_bitmap),
		cmocka_unit_test(init_names_the_missing_hook),
		cmocka_unit_test(init_refuses_another_layout_of_the_hooks),
		cmocka_unit_test(shared_needs_free_deferred),
		cmocka_unit_test(stale_count_word_is_reset),
		cmocka_unit_test(walk_checks_its_walker),
		cmocka_unit_test(registers_from_the_geometry),
		cmocka_unit_test(levels_choose_the_start_level),
		cmocka_unit_test(registers_for_other_start_levels),
		cmocka_unit_test(ept_split_keeps_user_execute_on_every_leaf),
		cmocka_unit_test(
			ept_split_of_supervisor_execute_block_adds_no_user_execute),
		cmocka_unit_test(map_block_size_at_unaligned_ipa_arm_4k_40),
		cmocka_unit_test(map_block_size_at_unaligned_ipa_arm_4k_32),
		cmocka_unit_test(map_block_size_at_unaligned_ipa_ept),
		cmocka_unit_test(map_block_size_to_unaligned_pa_maps_pages),
		cmocka_unit_test(
			flush_cleans_exactly_the_cacheable_memory_in_the_range),
		cmocka_unit_test(flush_nothing_to_do_for_device_and_nc_only),
		cmocka_unit_test(flush_nothing_to_do_with_fwb_and_on_ept),
		cmocka_unit_test(flush_refuses_bad_input),
		cmocka_unit_test(skip_cmo_map_normal_calls_no_hook_and_counts_them),
		cmocka_unit_test(
			skip_cmo_map_executable_calls_no_hook_and_counts_them),
		cmocka_unit_test(skip_cmo_relax_exec_calls_no_hook_and_counts_them),
		cmocka_unit_test(destroyed_table_refuses_every_operation),
		cmocka_unit_test(recover_zap_table_leaves_no_empty_table),
		cmocka_unit_test(
			unmap_batch_covers_tables_unlinked_after_their_children),
		cmocka_unit_test(pages_needed_counts_what_the_operation_takes),
		cmocka_unit_test(table_pages_beyond_the_output_size_are_refused),
		cmocka_unit_test(
			recover_promote_merges_the_dirty_bit_of_write_protected_leaves),
		cmocka_unit_test(
			recover_promote_keeps_the_count_of_a_table_shared_walkers_filled),
	};
	return cmocka_run_group_tests_name("core rules", tests, NULL, NULL);
}
