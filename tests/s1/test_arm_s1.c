/* SPDX-License-Identifier: MIT */
/*
 * Armv8-A stage-1 descriptors (VMSAv8-64, D8 of the Arm ARM), checked
 * against values worked out by hand, and the stage-1 semantics: AP[2] as
 * the write bit (set to protect), DBM dirty state, the access flag.
 *
 * The MAIR_EL1 layout assumed: index 0 Normal WB (0xff), 1 Device-nGnRE
 * (0x04), 2 Normal NC (0x44).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#define K4 0x1000ull
#define M2 0x200000ull
#define G1 0x40000000ull

struct env {
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache c;
};

static void env_init(struct env *e, uint32_t granule, uint8_t ia,
		     uint8_t pa, uint32_t features)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S1, .granule = granule, .ia_bits = ia,
		.pa_bits = pa, .features = features,
	};
	assert_int_equal(slat_hosted_init(&e->h, 2048ull * granule, granule,
					  0x80000000ull), SLAT_OK);
	assert_int_equal(slat_table_init(&e->t, &cfg, slat_hosted_ops(), &e->h),
			 SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&e->c, 64), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&e->h, &e->c, 64), SLAT_OK);
}

static void env_fini(struct env *e)
{
	slat_table_destroy(&e->t);
	slat_hosted_cache_fini(&e->c);
	assert_int_equal(e->h.double_frees, 0);
	slat_hosted_fini(&e->h);
}

static slat_pte_t leaf_of(struct env *e, uint64_t va)
{
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&e->t, slat_ipa(va), &l), SLAT_OK);
	return l.pte;
}

/*
 * Hand-worked stage-1 leaves, 4K granule, 48-bit VA:
 *   [1:0] 11 page / 01 block; [4:2] AttrIndx; [6] AP[1] EL0; [7] AP[2] RO;
 *   [9:8] SH = 11; [10] AF; [11] nG; [47:12] OA; [51] DBM; [53] PXN;
 *   [54] UXN; [58:55] software.
 */
static const struct {
	const char *what;
	uint64_t va, pa, size;
	uint32_t attrs, features;
	slat_pte_t pte;
} cases[] = {
	/* 0x703 = page | SH 0x300 | AF 0x400; RW at EL1: AP 00; no exec:
	 * PXN | UXN = 0x0060_0000_0000_0000 */
	{ "page RW EL1 only", 0x1000, 0x40000000, K4, SLAT_RW, 0,
	  0x0060000040000703ull },
	/* read-only: AP[2] 0x80 */
	{ "page RO", 0x2000, 0x40001000, K4, SLAT_R, 0, 0x0060000040001783ull },
	/* EL0 RW (AP[1] 0x40), EL0 execute only: PXN set, UXN clear */
	{ "page user RW, user exec", 0x3000, 0x40002000, K4,
	  SLAT_RW | SLAT_XU | SLAT_USER, 0, 0x0020000040002743ull },
	/* kernel text: RO, EL1 exec: UXN only */
	{ "page RO EL1 exec", 0x4000, 0x40003000, K4, SLAT_R | SLAT_XK, 0,
	  0x0040000040003783ull },
	/* device: AttrIndx 1 (0x4) */
	{ "page device", 0x5000, 0x9000000, K4, SLAT_RW | SLAT_MT_DEVICE, 0,
	  0x0060000009000707ull },
	/* normal NC: AttrIndx 2 (0x8); not global: nG 0x800 */
	{ "page NC nG", 0x6000, 0x40005000, K4,
	  SLAT_RW | SLAT_MT_NORMAL_NC | SLAT_NG, 0, 0x0060000040005f0bull },
	/* software bits 0b1010 at [58:55] */
	{ "page sw 0xa", 0x7000, 0x40006000, K4, SLAT_RW | SLAT_SW(0xa), 0,
	  0x0560000040006703ull },
	/* with FEAT_HAFDBS: writable = DBM (bit 51) and AP[2] clear */
	{ "page RW with DBM", 0x8000, 0x40007000, K4, SLAT_RW,
	  SLAT_FEAT_HWDIRTY, 0x0068000040007703ull },
	/* 2M block at L2: type 01 */
	{ "2M block", 0x200000, 0x40200000, M2, SLAT_RWX, 0,
	  0x0000000040200701ull },
	/* 1G block at L1 */
	{ "1G block", G1, 0x80000000, G1, SLAT_R | SLAT_X | SLAT_USER, 0,
	  0x00000000800007c1ull },
};

static void stage1_leaf_encodings_match_the_architecture(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env e;
		env_init(&e, 4096, 48, 48, cases[i].features);
		int ret = slat_map(&e.t, slat_ipa(cases[i].va), cases[i].size,
				   slat_pa(cases[i].pa), cases[i].attrs,
				   SLAT_OP(.cache = &e.c));
		if (ret != SLAT_OK || leaf_of(&e, cases[i].va) != cases[i].pte) {
			fprintf(stderr, "%s: ret %d pte %#llx, expected %#llx\n",
				cases[i].what, ret,
				(unsigned long long)leaf_of(&e, cases[i].va),
				(unsigned long long)cases[i].pte);
			fail();
		}
		env_fini(&e);
	}
}

static void stage1_geometry_has_no_concatenation(void **state)
{
	(void)state;
	static const struct {
		uint32_t granule;
		uint8_t ia;
		int start;
		uint32_t root_entries;
	} g[] = {
		{ 4096, 48, 0, 512 },   { 4096, 39, 1, 512 },
		{ 4096, 40, 0, 2 },     { 16384, 47, 1, 2048 },
		{ 16384, 48, 0, 2 },    { 65536, 48, 1, 64 },
		{ 65536, 42, 2, 8192 },
	};
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		struct slat_config cfg = {
			.format = SLAT_FMT_ARM_S1, .granule = g[i].granule,
			.ia_bits = g[i].ia,
		};
		struct slat_geometry geo;
		assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_OK);
		assert_int_equal(geo.start_level, g[i].start);
		assert_int_equal(geo.root_entries, g[i].root_entries);
		assert_int_equal(geo.root_pages, 1);
	}
	struct slat_config fwb = {
		.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		.features = SLAT_FEAT_FWB,
	};
	struct slat_geometry geo;
	assert_int_equal(slat_config_geometry(&fwb, &geo), SLAT_E_CONFIG);

	/* A 48-bit VA over a 40-bit output: a common guest; the VA size is
	 * not bounded by the output size at stage 1 (it is at stage 2). */
	struct slat_config va48 = {
		.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		.pa_bits = 40,
	};
	assert_int_equal(slat_config_geometry(&va48, &geo), SLAT_OK);
	assert_int_equal(geo.start_level, 0);
	assert_int_equal(geo.pa_bits, 40);
	struct slat_config ipa48 = va48;
	ipa48.format = SLAT_FMT_ARM_S2;
	assert_int_equal(slat_config_geometry(&ipa48, &geo), SLAT_E_CONFIG);
}

/*
 * FEAT_LPA2 (TCR_EL1.DS = 1), 4K granule, 52-bit VA: the walk starts at
 * level -1, whose 16 entries resolve VA[51:48]; every descriptor holds
 * OA[49:12] in place and OA[51:50] in bits [9:8], where SH was (the
 * shareability comes from TCR_EL1.SH0). With the tables at
 * 0xE_0000_0000_0000 (PA[51:50] = 0b11), a page at VA 0xF_0000_0000_1000
 * to PA 0x9_0000_4000_0000 (PA[51:50] = 0b10), RW at EL1, no exec:
 *   level -1 entry 15: table | [49:12] of the level-0 table | 0b11 << 8
 *   the page: 0x3 | AF 0x400 | 0b10 << 8 | 0x1_0000_4000_0000 | PXN | UXN
 *           = 0x0061000040000603
 */
static void stage1_lpa2_walk_starts_at_level_minus_1(void **state)
{
	(void)state;
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 52,
		.pa_bits = 52, .features = SLAT_FEAT_LPA2,
	};
	struct slat_geometry geo;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_OK);
	assert_int_equal(geo.start_level, -1);
	assert_int_equal(geo.root_entries, 16);
	assert_int_equal(geo.leaf_levels, 0xf); /* 512 GiB level-0 blocks */

	struct env e;
	assert_int_equal(slat_hosted_init(&e.h, 64 * K4, 4096,
					  0xe000000000000ull), SLAT_OK);
	assert_int_equal(slat_table_init(&e.t, &cfg, slat_hosted_ops(), &e.h),
			 SLAT_OK);
	assert_int_equal(slat_hosted_cache_init(&e.c, 8), SLAT_OK);
	assert_int_equal(slat_hosted_cache_topup(&e.h, &e.c, 8), SLAT_OK);
	assert_int_equal(slat_level_size(&e.t, -1), 1ull << 48);
	uint64_t va = 0xf000000001000ull;
	assert_int_equal(slat_map(&e.t, slat_ipa(va), K4,
				  slat_pa(0x9000040000000ull), SLAT_RW,
				  SLAT_OP(.cache = &e.c)), SLAT_OK);
	assert_int_equal(leaf_of(&e, va), 0x0061000040000603ull);

	slat_pte_t top = ((slat_pte_t *)e.t.root)[15];
	uint64_t l0 = (top & 0x0003fffffffff000ull) | (top & 0x300) << 42;
	assert_int_equal(top & ~(0x0003fffffffff000ull | 0x300), 3);
	assert_int_equal(l0 >> 50, 3);
	assert_true(slat_hosted_is_table_page(
		&e.h, slat_hosted_ops()->phys_to_virt(&e.h, slat_pa(l0))));
	for (int i = 0; i < 15; i++)
		assert_int_equal(((slat_pte_t *)e.t.root)[i], 0);

	/* a 512 GiB block at level 0 */
	assert_int_equal(slat_map(&e.t, slat_ipa(0x8000000000ull),
				  0x8000000000ull, slat_pa(0x8000000000ull),
				  SLAT_R, SLAT_OP(.cache = &e.c)), SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&e.t, slat_ipa(0x8000000000ull), &l),
			 SLAT_OK);
	assert_int_equal(l.level, 0);
	/* block 01 | AttrIndx 0 | AP[2] RO 0x80 | AF | PXN | UXN */
	assert_int_equal(l.pte, 0x0060008000000481ull);
	env_fini(&e);

	/* DS is RES0 with 64K; 52 bits with 4K need it */
	cfg.granule = 65536;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_E_CONFIG);
	cfg.granule = 4096;
	cfg.features = 0;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_E_CONFIG);
}

static void stage1_refuses_what_it_cannot_express(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 48, 48, 0);
	/* no read (stage 1 always lets EL1 read), exec on device, EPT bits,
	 * EL1 execute on EL0-writable memory (the architecture makes it PXN) */
	const uint32_t bad[] = { SLAT_W, SLAT_XK, SLAT_R | SLAT_X | SLAT_MT_DEVICE,
				 SLAT_R | SLAT_IPAT, SLAT_R | (3u << SLAT_MT_SHIFT),
				 SLAT_RW | SLAT_XK | SLAT_USER,
				 SLAT_RW | SLAT_X | SLAT_USER | SLAT_NG };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(slat_map(&e.t, slat_ipa(0), K4,
					  slat_pa(0x80000000), bad[i],
					  SLAT_OP(.cache = &e.c)),
				 SLAT_E_ATTR);
	env_fini(&e);
}

/* Write protection sets AP[2] and clears DBM, so no hardware write gets
 * through; hardware dirty state clears AP[2] on a write. */
static void stage1_wrprotect_sets_ap2_and_hardware_write_clears_it(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 48, 48, SLAT_FEAT_HWDIRTY);
	assert_int_equal(slat_map(&e.t, slat_ipa(0), M2, slat_pa(0x80000000),
				  SLAT_RW,
				  SLAT_OP(.flags = SLAT_MAP_PAGES,
					  .cache = &e.c)),
			 SLAT_OK);
	uint64_t bitmap[M2 / K4 / 64];
	/* installed dirty, then clean: DBM stays, AP[2] set */
	assert_int_equal(slat_dirty_read(&e.t, slat_ipa(0), M2, bitmap,
					 M2 / K4 / 64, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &e.c)),
			 512);
	assert_int_equal(leaf_of(&e, 0) & (1ull << 7 | 1ull << 51),
			 1ull << 7 | 1ull << 51);
	struct slat_hw_result r;
	assert_int_equal(slat_hw_access(&e.t, slat_ipa(0x3000), SLAT_ACCESS_WRITE,
					&r), SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_NONE);
	assert_int_equal(leaf_of(&e, 0x3000) & (1ull << 7), 0);
	assert_int_equal(slat_dirty_read(&e.t, slat_ipa(0), M2, bitmap,
					 M2 / K4 / 64, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &e.c)),
			 1);
	assert_int_equal(bitmap[0], 1ull << 3);

	assert_int_equal(slat_wrprotect(&e.t, slat_ipa(0), M2,
					SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(leaf_of(&e, 0x3000) & (1ull << 7 | 1ull << 51), 1ull << 7);
	assert_int_equal(slat_hw_access(&e.t, slat_ipa(0x3000), SLAT_ACCESS_WRITE,
					&r), SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_PERMISSION);
	env_fini(&e);
}

static void stage1_access_flag_fault_without_hardware_update(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 48, 48, 0);
	assert_int_equal(slat_map(&e.t, slat_ipa(0), K4, slat_pa(0x80000000),
				  SLAT_R | SLAT_XK, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(slat_test_clear_young(&e.t, slat_ipa(0), K4, true,
					       NULL),
			 SLAT_WAS_YOUNG);
	struct slat_hw_result r;
	assert_int_equal(slat_hw_access(&e.t, slat_ipa(0), SLAT_ACCESS_READ, &r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_ACCESS_FLAG);
	assert_int_equal(slat_mkyoung(&e.t, slat_ipa(0), 0), SLAT_OK);
	assert_int_equal(slat_hw_access(&e.t, slat_ipa(0), SLAT_ACCESS_EXEC_EL1, &r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_NONE);
	assert_int_equal(slat_hw_access(&e.t, slat_ipa(0), SLAT_ACCESS_EXEC_EL0, &r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_PERMISSION);
	env_fini(&e);
}

/* EL0's data accesses need AP[1] (SLAT_USER); EL1's do not; stage 2
 * ignores the level of a data access. */
static enum slat_fault access_fault(struct env *e, uint64_t va, unsigned a)
{
	struct slat_hw_result r;
	assert_int_equal(slat_hw_access(&e->t, slat_ipa(va), a, &r), SLAT_OK);
	return r.fault;
}

static void stage1_el0_data_access_needs_ap1(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 48, 48, 0);
	assert_int_equal(slat_map(&e.t, slat_ipa(0), K4, slat_pa(0x80000000),
				  SLAT_RW, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(slat_map(&e.t, slat_ipa(K4), K4, slat_pa(0x80001000),
				  SLAT_R | SLAT_USER, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	const unsigned ur = SLAT_ACCESS_READ | SLAT_ACCESS_USER;
	const unsigned uw = SLAT_ACCESS_WRITE | SLAT_ACCESS_USER;
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_READ), SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_WRITE), SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, 0, ur), SLAT_FAULT_PERMISSION);
	assert_int_equal(access_fault(&e, 0, uw), SLAT_FAULT_PERMISSION);
	assert_int_equal(access_fault(&e, K4, ur), SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, K4, uw), SLAT_FAULT_PERMISSION);
	/* EL0 with an instruction fetch is SLAT_ACCESS_EXEC_EL0's */
	struct slat_hw_result r;
	assert_int_equal(slat_hw_access(&e.t, slat_ipa(0),
					SLAT_ACCESS_EXEC_EL1 | SLAT_ACCESS_USER,
					&r),
			 SLAT_E_INVAL);
	env_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage1_leaf_encodings_match_the_architecture),
		cmocka_unit_test(stage1_geometry_has_no_concatenation),
		cmocka_unit_test(stage1_lpa2_walk_starts_at_level_minus_1),
		cmocka_unit_test(stage1_refuses_what_it_cannot_express),
		cmocka_unit_test(stage1_wrprotect_sets_ap2_and_hardware_write_clears_it),
		cmocka_unit_test(stage1_access_flag_fault_without_hardware_update),
		cmocka_unit_test(stage1_el0_data_access_needs_ap1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
