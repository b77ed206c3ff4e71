/* SPDX-License-Identifier: MIT */
/*
 * Armv8-A stage-1 descriptors (VMSAv8-64, D8 of the Arm ARM), checked
 * against values worked out by hand, and the stage-1 semantics: AP[2] as
 * the write bit (set to protect), DBM dirty state, the access flag. Both
 * regimes: EL1&0 (TTBR0_EL1) and EL2 with HCR_EL2.E2H = 0
 * (SLAT_FEAT_S1_EL2, TTBR0_EL2), and the registers that point the CPU at
 * them.
 *
 * The MAIR_EL1 (MAIR_EL2) layout assumed: index 0 Normal WB (0xff), 1
 * Device-nGnRE (0x04), 2 Normal NC (0x44).
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

/* ------------------------------------------------ the EL2 regime */

#define EL2 SLAT_FEAT_S1_EL2
#define HWD SLAT_FEAT_HWDIRTY

/*
 * Every permission and memory type an EL2 leaf can have, with and without
 * hardware dirty state (TCR_EL2.HD), worked out by hand from the Arm ARM
 * (D8.3 descriptor fields; D8.4.1.2.1 "For a stage 1 translation that
 * supports one Exception level, AP[1] is RES1"; D8.4.1.2.3: bit 54 is XN,
 * PXN is RES0 there). A 4K granule, a 32-bit VA (start level 1), pages at
 * 0x4000_0000 + 4K * i:
 *   0x743 = page 0b11 | AP[1] 0x40 (RES1) | SH 0x300 | AF 0x400
 *   AP[2] 0x80 read-only; XN bit 54 = 0x0040_0000_0000_0000 without
 *   SLAT_X; DBM bit 51 = 0x0008_0000_0000_0000 on writable leaves with HD;
 *   AttrIndx 0 Normal, 1 Device (0x4), 2 Normal NC (0x8). PXN (bit 53)
 *   and nG (bit 11) are never set.
 */
static const struct {
	uint32_t attrs, features;
	slat_pte_t pte;
} el2_cases[] = {
	{ SLAT_R, 0, 0x00400000400007c3ull },
	{ SLAT_RW, 0, 0x0040000040001743ull },
	{ SLAT_R | SLAT_X, 0, 0x00000000400027c3ull },
	{ SLAT_RWX, 0, 0x0000000040003743ull },
	{ SLAT_R | SLAT_MT_NORMAL_NC, 0, 0x00400000400047cbull },
	{ SLAT_RW | SLAT_MT_NORMAL_NC, 0, 0x004000004000574bull },
	{ SLAT_R | SLAT_X | SLAT_MT_NORMAL_NC, 0, 0x00000000400067cbull },
	{ SLAT_RWX | SLAT_MT_NORMAL_NC, 0, 0x000000004000774bull },
	{ SLAT_R | SLAT_MT_DEVICE, 0, 0x00400000400087c7ull },
	{ SLAT_RW | SLAT_MT_DEVICE, 0, 0x0040000040009747ull },
	{ SLAT_R, HWD, 0x004000004000a7c3ull },
	{ SLAT_RW, HWD, 0x004800004000b743ull },
	{ SLAT_R | SLAT_X, HWD, 0x000000004000c7c3ull },
	{ SLAT_RWX, HWD, 0x000800004000d743ull },
	{ SLAT_R | SLAT_MT_NORMAL_NC, HWD, 0x004000004000e7cbull },
	{ SLAT_RW | SLAT_MT_NORMAL_NC, HWD, 0x004800004000f74bull },
	{ SLAT_R | SLAT_X | SLAT_MT_NORMAL_NC, HWD, 0x00000000400107cbull },
	{ SLAT_RWX | SLAT_MT_NORMAL_NC, HWD, 0x000800004001174bull },
	{ SLAT_R | SLAT_MT_DEVICE, HWD, 0x00400000400127c7ull },
	{ SLAT_RW | SLAT_MT_DEVICE, HWD, 0x0048000040013747ull },
	/* software bits 0b1010 at [58:55] */
	{ SLAT_RW | SLAT_SW(0xa), 0, 0x0540000040014743ull },
};

static void el2_leaf_encodings_match_the_architecture(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(el2_cases) / sizeof(el2_cases[0]); i++) {
		struct env e;
		uint64_t va = 0x80000000ull + i * K4, pa = 0x40000000ull + i * K4;
		env_init(&e, 4096, 32, 40, EL2 | el2_cases[i].features);
		int ret = slat_map(&e.t, slat_ipa(va), K4, slat_pa(pa),
				   el2_cases[i].attrs, SLAT_OP(.cache = &e.c));
		struct slat_leaf l;
		if (ret != SLAT_OK ||
		    slat_lookup(&e.t, slat_ipa(va), &l) != SLAT_OK ||
		    l.pte != el2_cases[i].pte) {
			fprintf(stderr, "case %zu: ret %d pte %#llx, expected "
					"%#llx\n", i, ret,
				(unsigned long long)l.pte,
				(unsigned long long)el2_cases[i].pte);
			fail();
		}
		/* what map took comes back: SLAT_X whole, no EL0, no nG;
		 * writable leaves are installed dirty under HD */
		uint32_t want = el2_cases[i].attrs | SLAT_YOUNG;
		if ((el2_cases[i].features & HWD) && (want & SLAT_W))
			want |= SLAT_DIRTY;
		assert_int_equal(l.attrs, want);
		env_fini(&e);
	}
}

/* Blocks: type 0b01 at levels 1 and 2, the same attribute bits; what
 * slat-hyp maps: Device below 1 GiB, Normal write-back above. */
static void el2_blocks_are_slat_hyps_map(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 32, 32, EL2);
	assert_int_equal(slat_map(&e.t, slat_ipa(0), G1, slat_pa(0),
				  SLAT_RW | SLAT_MT_DEVICE,
				  SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(slat_map(&e.t, slat_ipa(G1), 3 * G1, slat_pa(G1),
				  SLAT_RWX, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	const slat_pte_t *root = e.t.root;
	assert_int_equal(root[0], 0x0040000000000745ull);
	assert_int_equal(root[1], 0x0000000040000741ull);
	assert_int_equal(root[2], 0x0000000080000741ull);
	assert_int_equal(root[3], 0x00000000c0000741ull);
	/* no table page was needed: four 1 GiB blocks in the root */
	struct slat_stats st;
	slat_stats_read(&e.t, &st);
	assert_int_equal(st.pages_alloc, 0);
	/* a read-only 2 MiB block elsewhere, inside the Normal block */
	assert_int_equal(slat_map(&e.t, slat_ipa(0x80200000ull), M2,
				  slat_pa(0x40200000ull), SLAT_R,
				  SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&e.t, slat_ipa(0x80200000ull), &l),
			 SLAT_OK);
	assert_int_equal(l.level, 2);
	assert_int_equal(l.pte, 0x00400000402007c1ull);
	assert_int_equal(slat_lookup(&e.t, slat_ipa(0x80400000ull), &l),
			 SLAT_OK);
	assert_int_equal(l.pte, 0x0000000080400741ull);
	env_fini(&e);
}

static void el2_refuses_el0_ng_and_split_execute(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 32, 40, EL2);
	/* no EL0 (AP[1] is RES1), no ASID (nG RES0), one XN for EL2's own
	 * execution; and what stage 1 refuses anyway */
	const uint32_t bad[] = {
		SLAT_R | SLAT_USER, SLAT_RW | SLAT_USER, SLAT_R | SLAT_NG,
		SLAT_R | SLAT_XK, SLAT_R | SLAT_XU, SLAT_RW | SLAT_XK,
		SLAT_R | SLAT_X | SLAT_MT_DEVICE, SLAT_W, SLAT_X,
		SLAT_R | SLAT_IPAT, SLAT_R | (3u << SLAT_MT_SHIFT),
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(slat_map(&e.t, slat_ipa(0), K4,
					  slat_pa(0x80000000), bad[i],
					  SLAT_OP(.cache = &e.c)),
				 SLAT_E_ATTR);
	/* relax cannot split execute either; it adds SLAT_X whole */
	assert_int_equal(slat_map(&e.t, slat_ipa(0), K4, slat_pa(0x80000000),
				  SLAT_R, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(slat_relax(&e.t, slat_ipa(0), K4, SLAT_XK, NULL),
			 SLAT_E_ATTR);
	assert_int_equal(slat_relax(&e.t, slat_ipa(0), K4, SLAT_X, NULL),
			 SLAT_OK);
	struct slat_leaf l;
	assert_int_equal(slat_lookup(&e.t, slat_ipa(0), &l), SLAT_OK);
	assert_int_equal(l.pte, 0x00000000800007c3ull);
	/* the EL1&0 regime refuses none of the first three */
	env_fini(&e);
	env_init(&e, 4096, 32, 40, 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(slat_map(&e.t, slat_ipa(i * K4), K4,
					  slat_pa(0x80000000 + i * K4), bad[i],
					  SLAT_OP(.cache = &e.c)),
				 SLAT_OK);
	env_fini(&e);
}

/*
 * The CPU's walk at EL2: AP[2] alone for data, XN for EL2's own fetches,
 * the access flag before permissions; nothing at EL0 (the regime has
 * none), whatever AP[1] says.
 */
static void el2_walk_has_no_el0(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 32, 40, EL2);
	assert_int_equal(slat_map(&e.t, slat_ipa(0), K4, slat_pa(0x80000000),
				  SLAT_RWX, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(slat_map(&e.t, slat_ipa(K4), K4, slat_pa(0x80001000),
				  SLAT_R, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	const unsigned ur = SLAT_ACCESS_READ | SLAT_ACCESS_USER;
	const unsigned uw = SLAT_ACCESS_WRITE | SLAT_ACCESS_USER;
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_READ), SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_WRITE), SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_EXEC_EL1),
			 SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, 0, ur), SLAT_FAULT_PERMISSION);
	assert_int_equal(access_fault(&e, 0, uw), SLAT_FAULT_PERMISSION);
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_EXEC_EL0),
			 SLAT_FAULT_PERMISSION);
	assert_int_equal(access_fault(&e, K4, SLAT_ACCESS_READ), SLAT_FAULT_NONE);
	assert_int_equal(access_fault(&e, K4, SLAT_ACCESS_WRITE),
			 SLAT_FAULT_PERMISSION);
	assert_int_equal(access_fault(&e, K4, SLAT_ACCESS_EXEC_EL1),
			 SLAT_FAULT_PERMISSION);
	/* an old leaf: the access flag fault comes first (no TCR_EL2.HA) */
	assert_int_equal(slat_test_clear_young(&e.t, slat_ipa(K4), K4, true,
					       NULL),
			 SLAT_WAS_YOUNG);
	assert_int_equal(access_fault(&e, K4, SLAT_ACCESS_WRITE),
			 SLAT_FAULT_ACCESS_FLAG);
	env_fini(&e);
}

/* TCR_EL2.HA/HD: the CPU sets AF and clears AP[2] of a writable-clean
 * leaf; write protection sets AP[2] and clears DBM; AP[1] stays set. */
static void el2_hardware_dirty_state_clears_ap2(void **state)
{
	(void)state;
	struct env e;
	env_init(&e, 4096, 32, 40, EL2 | HWD);
	assert_int_equal(slat_map(&e.t, slat_ipa(0), K4, slat_pa(0x80000000),
				  SLAT_RW, SLAT_OP(.cache = &e.c)),
			 SLAT_OK);
	uint64_t bitmap[1];
	assert_int_equal(slat_dirty_read(&e.t, slat_ipa(0), K4, bitmap, 1, true,
					 SLAT_OP(.flush = SLAT_FLUSH_VMID,
						 .cache = &e.c)),
			 1);
	assert_int_equal(slat_test_clear_young(&e.t, slat_ipa(0), K4, true,
					       NULL),
			 SLAT_WAS_YOUNG);
	/* clean and old: AP[2] | DBM, AF clear */
	assert_int_equal(leaf_of(&e, 0), 0x00480000800003c3ull);
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_WRITE), SLAT_FAULT_NONE);
	assert_int_equal(leaf_of(&e, 0), 0x0048000080000743ull);
	assert_int_equal(slat_wrprotect(&e.t, slat_ipa(0), K4,
					SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						.cache = &e.c)),
			 SLAT_OK);
	assert_int_equal(leaf_of(&e, 0), 0x00400000800007c3ull);
	assert_int_equal(access_fault(&e, 0, SLAT_ACCESS_WRITE),
			 SLAT_FAULT_PERMISSION);
	env_fini(&e);
}

/*
 * TCR_EL2 with E2H = 0 (Arm ARM D24.2.195): T0SZ [5:0], IRGN0 [9:8] and
 * ORGN0 [11:10] 0b01 (write-back write-allocate), SH0 [13:12] 0b11, TG0
 * [15:14] (4K 0b00, 64K 0b01, 16K 0b10), PS [18:16], HA 21, HD 22, RES1
 * bits 23 and 31, DS 32. TTBR0_EL2: the root, CnP in bit 0, no ASID.
 */
static void el2_registers_from_the_table(void **state)
{
	(void)state;
	static const struct {
		uint32_t granule;
		uint8_t ia, pa;
		uint32_t features;
		uint64_t tcr;
	} r[] = {
		/* slat-hyp's: 0x20 | 0x3500 | PS 0 (32 bits) | RES1 */
		{ 4096, 32, 32, 0, 0x80803520ull },
		{ 4096, 32, 40, HWD, 0x80e23520ull },
		{ 16384, 47, 48, 0, 0x8085b511ull },
		{ 65536, 52, 52, 0, 0x8086750cull },
		{ 4096, 52, 52, SLAT_FEAT_LPA2, 0x18086350cull },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		struct env e;
		env_init(&e, r[i].granule, r[i].ia, r[i].pa,
			 EL2 | r[i].features);
		slat_pa_t root_pa;
		slat_table_root(&e.t, &root_pa, NULL);
		uint64_t root = slat_pa_v(root_pa);
		assert_int_equal(slat_arm_s1_tcr_el2(&e.t), r[i].tcr);
		assert_int_equal(slat_arm_s1_ttbr_el2(&e.t, false), root);
		assert_int_equal(slat_arm_s1_ttbr_el2(&e.t, true), root | 1);
		/* the EL1&0 registers do not describe this table */
		assert_int_equal(slat_arm_s1_tcr(&e.t, false), 0);
		assert_int_equal(slat_arm_s1_ttbr(&e.t, 1, false), 0);
		env_fini(&e);
	}
	/* nor do the EL2 ones an EL1&0 table */
	struct env e;
	env_init(&e, 4096, 48, 48, 0);
	assert_int_not_equal(slat_arm_s1_tcr(&e.t, false), 0);
	assert_int_equal(slat_arm_s1_tcr_el2(&e.t), 0);
	assert_int_equal(slat_arm_s1_ttbr_el2(&e.t, false), 0);
	env_fini(&e);
	assert_int_equal(slat_arm_s1_tcr_el2(NULL), 0);
	/* MAIR_EL2: the same AttrIndx layout as MAIR_EL1 */
	assert_int_equal(slat_arm_s1_mair(), 0x4404ffull);
}

static void el2_configurations(void **state)
{
	(void)state;
	struct slat_geometry geo;
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 32,
		.pa_bits = 32, .features = EL2,
	};
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_OK);
	assert_int_equal(geo.start_level, 1);
	assert_int_equal(geo.root_entries, 4);
	cfg.features = EL2 | HWD | SLAT_FEAT_LPA2;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_OK);
	/* stage-2 features stay refused; EL2 is a stage-1 regime only */
	cfg.features = EL2 | SLAT_FEAT_XNX;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_E_CONFIG);
	cfg.features = EL2;
	cfg.format = SLAT_FMT_ARM_S2;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_E_CONFIG);
	cfg.format = SLAT_FMT_EPT;
	cfg.ia_bits = 48;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_E_CONFIG);
	cfg.format = SLAT_FMT_NPT;
	cfg.features = EL2 | HWD;
	assert_int_equal(slat_config_geometry(&cfg, &geo), SLAT_E_CONFIG);
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
		cmocka_unit_test(el2_leaf_encodings_match_the_architecture),
		cmocka_unit_test(el2_blocks_are_slat_hyps_map),
		cmocka_unit_test(el2_refuses_el0_ng_and_split_execute),
		cmocka_unit_test(el2_walk_has_no_el0),
		cmocka_unit_test(el2_hardware_dirty_state_clears_ap2),
		cmocka_unit_test(el2_registers_from_the_table),
		cmocka_unit_test(el2_configurations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
