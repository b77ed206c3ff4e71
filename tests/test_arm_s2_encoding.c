/* SPDX-License-Identifier: MIT */
/*
 * Armv8-A stage-2 descriptors, worked out by hand from the Arm ARM
 * (VMSAv8-64 stage 2 block and page descriptors, D8.3) and the encoding
 * table of docs/design.md, compared with what libslat writes. Also the
 * geometry of every configuration in docs/design.md, and the ones refused.
 *
 * Bits of a stage-2 leaf, for reading the constants below:
 *   [1:0]   0b11 page (level 3), 0b01 block
 *   [5:2]   MemAttr: 0xF Normal WB (FWB: 0x6), 0x5 Normal NC, 0x1 Device-nGnRE
 *   [7:6]   S2AP: bit 6 read, bit 7 write
 *   [9:8]   SH = 0b11; with FEAT_LPA2 (VTCR_EL2.DS = 1) PA[51:50] instead
 *   [10]    AF
 *   [47:g]  output address; 64K + 52-bit PA: PA[51:48] in [15:12];
 *           DS = 1 (4K, 16K): [49:g]
 *   [54:53] XN: 00 executable, 10 not; FEAT_XNX: 01 EL0 only, 11 EL1 only
 *   [58:55] software bits
 * So a Normal-WB RW leaf without FWB has low bits
 *   0x3 | 0xF << 2 | 0b11 << 6 | 0b11 << 8 | 1 << 10 = 0x7FF (page),
 *   0x1 | ...                                          = 0x7FD (block),
 * and XN = 0b10 (not executable) is bit 54: 0x0040000000000000.
 * With DS = 1 there is no SH field: 0x4FF (page), 0x4FD (block), plus
 * PA[51:50] << 8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture.h"
#include "table_chain.h"

#define K4 4096u
#define K16 16384u
#define K64 65536u
#define FWB SLAT_FEAT_FWB
#define XNX SLAT_FEAT_XNX
#define LPA2 SLAT_FEAT_LPA2

struct enc_case {
	const char *what;
	uint32_t granule;
	uint8_t ia, pa;
	uint32_t features;
	uint64_t ipa, size, out;
	uint32_t attrs;
	int level;
	uint64_t pte;
};

static const struct enc_case cases[] = {
	/* 4K page, RW, Normal WB, no FWB: MemAttr 0xF, S2AP 11, SH 11, AF,
	 * XN 10 (bit 54), OA 0x12345000 */
	{ "4K page RW Normal", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW, 3, 0x00400000123457ffull },
	/* the same with FWB: MemAttr 0x6 -> low bits 0x3|0x18|0xC0|0x300|0x400 */
	{ "4K page RW Normal FWB", K4, 40, 48, FWB,
	  0x1000, 0x1000, 0x12345000, SLAT_RW, 3, 0x00400000123457dbull },
	/* read-only: S2AP 01 (bit 7 clear): 0x7FF - 0x80 */
	{ "4K page RO", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_R, 3, 0x004000001234577full },
	/* write-only: S2AP 10 (bit 6 clear): 0x7FF - 0x40 */
	{ "4K page WO", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_W, 3, 0x00400000123457bfull },
	/* no access at all: S2AP 00, still valid with AF */
	{ "4K page no access", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, 0, 3, 0x004000001234573full },
	/* executable at EL1 and EL0: XN 00 */
	{ "4K page RWX", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX, 3, 0x00000000123457ffull },
	{ "4K page RX", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_R | SLAT_X, 3,
	  0x000000001234577full },
	/* FEAT_XNX, EL0 only (XU): XN 01 = bit 53 */
	{ "4K page RW XU (XNX)", K4, 40, 48, XNX,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_XU, 3,
	  0x00200000123457ffull },
	/* FEAT_XNX, EL1 only (XK): XN 11 = bits 54:53 */
	{ "4K page RW XK (XNX)", K4, 40, 48, XNX,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_XK, 3,
	  0x00600000123457ffull },
	/* FEAT_XNX, both: XN 00 */
	{ "4K page RWX (XNX)", K4, 40, 48, XNX,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX, 3, 0x00000000123457ffull },
	/* Device-nGnRE: MemAttr 0x1 -> 0x3|0x4|0xC0|0x300|0x400 = 0x7C7 */
	{ "4K page RW Device", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_DEVICE, 3,
	  0x00400000123457c7ull },
	{ "4K page RW Device FWB", K4, 40, 48, FWB,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_DEVICE, 3,
	  0x00400000123457c7ull },
	/* Normal NC: MemAttr 0x5 -> 0x3|0x14|0xC0|0x300|0x400 = 0x7D7 */
	{ "4K page RW NC", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_NORMAL_NC, 3,
	  0x00400000123457d7ull },
	{ "4K page RW NC FWB", K4, 40, 48, FWB,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_NORMAL_NC, 3,
	  0x00400000123457d7ull },
	/* software bits: SW(0xA) = bits 56 and 58; SW(0xF) = bits 58:55 */
	{ "4K page SW(0xA)", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_SW(0xa), 3,
	  0x05400000123457ffull },
	{ "4K page SW(0xF)", K4, 40, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_SW(0xf), 3,
	  0x07c00000123457ffull },
	/* 2 MiB block at level 2: type 01 */
	{ "4K 2M block", K4, 40, 48, 0,
	  0x40200000, 0x200000, 0x80200000, SLAT_RW, 2,
	  0x00400000802007fdull },
	/* 1 GiB block at level 1 */
	{ "4K 1G block", K4, 40, 48, 0,
	  0x40000000, 0x40000000, 0xc0000000, SLAT_RW, 1,
	  0x00400000c00007fdull },
	/* 1 GiB block at the start level (ia 36 starts at level 1) */
	{ "4K 1G block at the root", K4, 36, 40, 0,
	  0x40000000, 0x40000000, 0xc0000000, SLAT_R, 1,
	  0x00400000c000077dull },
	/* the highest page of a 44-bit PA space */
	{ "4K page at the top of pa_bits 44", K4, 40, 44, 0,
	  0x1000, 0x1000, 0xffffffff000ull, SLAT_RW, 3,
	  0x00400ffffffff7ffull },
	/* 16K page: OA [47:14] */
	{ "16K page", K16, 40, 48, 0,
	  0x4000, 0x4000, 0x12344000, SLAT_RW, 3, 0x00400000123447ffull },
	/* 16K 32 MiB block at level 2 */
	{ "16K 32M block", K16, 40, 48, 0,
	  0x2000000, 0x2000000, 0x82000000, SLAT_RW, 2,
	  0x00400000820007fdull },
	/* 64K page: OA [47:16] */
	{ "64K page", K64, 40, 48, 0,
	  0x10000, 0x10000, 0x12340000, SLAT_RW, 3, 0x00400000123407ffull },
	/* 64K 512 MiB block at level 2 */
	{ "64K 512M block", K64, 40, 48, 0,
	  0x20000000, 0x20000000, 0xa0000000, SLAT_RW, 2,
	  0x00400000a00007fdull },
	/* 64K page above 2^48 with 52-bit PA: PA 0xA_BCDE_F123_0000,
	 * PA[47:16] in place, PA[51:48] = 0xA in bits [15:12] */
	{ "64K page PA[51:48]", K64, 48, 52, 0,
	  0x10000, 0x10000, 0xabcdef1230000ull, SLAT_RW, 3,
	  0x0040bcdef123a7ffull },
	/* 64K 512M block at PA 0xF_0000_2000_0000: [47:29] = 0x2000_0000,
	 * PA[51:48] = 0xF in [15:12] */
	{ "64K 512M block PA[51:48]", K64, 48, 52, 0,
	  0x20000000, 0x20000000, 0xf000020000000ull, SLAT_RW, 2,
	  0x004000002000f7fdull },
	/* 64K 4 TiB block at level 1 (52-bit PA only): PA 2^51, so only
	 * PA[51] = bit 15 */
	{ "64K 4T block", K64, 52, 52, 0,
	  0x40000000000ull, 0x40000000000ull, 0x8000000000000ull, SLAT_RW, 1,
	  0x00400000000087fdull },
	/* FEAT_LPA2, PA below 2^48: the same page without SH (bits [9:8]
	 * hold PA[51:50] = 0): 0x7FF - 0x300 */
	{ "4K page LPA2", K4, 40, 48, LPA2,
	  0x1000, 0x1000, 0x12345000, SLAT_RW, 3, 0x00400000123454ffull },
	/* PA 0x9_2345_6789_A000: PA[49:12] in place (0x1_2345_6789_A000),
	 * PA[51:50] = 0b10 in bits [9:8]: 0x4FF | 0x200 */
	{ "4K page LPA2 PA[51:50]", K4, 52, 52, LPA2,
	  0x1000, 0x1000, 0x923456789a000ull, SLAT_RW, 3,
	  0x004123456789a6ffull },
	/* 512 GiB block at level 0 (DS only) at PA 0xE_0080_0000_0000:
	 * [49:39] = 0x2008000000000, PA[51:50] = 0b11: 0x4FD | 0x300 */
	{ "4K 512G block at level 0 LPA2", K4, 52, 52, LPA2,
	  0x8000000000ull, 0x8000000000ull, 0xe008000000000ull, SLAT_RW, 0,
	  0x00420080000007fdull },
	/* a read-only level-0 block with a 48-bit PA: S2AP 01 (0x4FD - 0x80),
	 * no SH */
	{ "4K 512G block LPA2 RO", K4, 48, 48, LPA2,
	  0x8000000000ull, 0x8000000000ull, 0x8000000000ull, SLAT_R, 0,
	  0x004000800000047dull },
	/* 16K page at the top of the 52-bit PA space, PA 0xF_FFFF_FFFF_C000:
	 * [49:14] = 0x3_FFFF_FFFF_C000, PA[51:50] = 0b11 */
	{ "16K page LPA2 top of 52 bits", K16, 52, 52, LPA2,
	  0x4000, 0x4000, 0xfffffffffc000ull, SLAT_RW, 3,
	  0x0043ffffffffc7ffull },
	/* 64 GiB block at level 1 (16K with DS only), PA 0x5_0010_0000_0000:
	 * [49:36] = 0x1001000000000, PA[51:50] = 0b01: 0x4FD | 0x100 */
	{ "16K 64G block at level 1 LPA2", K16, 52, 52, LPA2,
	  0x1000000000ull, 0x1000000000ull, 0x5001000000000ull, SLAT_RW, 1,
	  0x00410010000005fdull },
};

static void descriptor_encodings_match_the_architecture(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct enc_case *c = &cases[i];
		struct slat_config cfg = {
			.format = SLAT_FMT_ARM_S2, .granule = c->granule,
			.ia_bits = c->ia, .pa_bits = c->pa,
			.features = c->features,
		};
		CHECK_HAND_LEAF(&cfg, c, SLAT_YOUNG);
	}
}

/* test_clear_young clears exactly AF (bit 10). */
static void mkold_clears_only_the_access_flag(void **state)
{
	(void)state;
	struct slat_config cfg = { .format = SLAT_FMT_ARM_S2, .granule = K4,
				   .ia_bits = 40, .pa_bits = 48 };
	check_mkold(&cfg, 0x00400000123457ffull, 0x00400000123453ffull,
		    SLAT_RW);
}

/*
 * Table descriptors: 0b11 | next table's PA, nothing else. The page the
 * core takes is the top of the cache (pages[nr - 1]), so its PA is known
 * before the map. Example with the arena at 0x80000000: a table at PA
 * 0x80003000 is linked as 0x0000000080003003.
 */
static uint64_t table_desc(struct fx *f, uint64_t pa, uint64_t unused)
{
	(void)unused;
	if (f->cfg.features & LPA2) /* [49:12], PA[51:50] in [9:8] */
		return (pa & 0x0003fffffffff000ull) | ((pa >> 50) & 3) << 8 | 3;
	uint64_t d = (pa & 0x0000ffffffff0000ull) | 3;
	if (f->t.geo.granule_shift == 16 && f->t.geo.pa_bits == 52)
		d |= ((pa >> 48) & 0xf) << 12;
	else
		d |= pa & 0xf000;
	return d;
}

static void table_descriptors_hold_only_the_next_table_address(void **state)
{
	(void)state;
	static const struct {
		uint32_t granule;
		uint8_t ia, pa;
		uint64_t pa_base;
		uint64_t ipa;
		uint32_t features;
	} tc[] = {
		{ K4, 40, 48, 0x80000000ull, 0x1000, 0 },
		{ K4, 48, 48, 0x7f0000000000ull, 0x7fffffe000ull, 0 },
		{ K16, 48, 48, 0x80000000ull, 0x4000, 0 },
		{ K64, 48, 48, 0x80000000ull, 0x10000, 0 },
		/* tables above 2^48: PA[51:48] in bits [15:12] */
		{ K64, 52, 52, 0xa000000000000ull, 0x10000, 0 },
		/* DS: tables above 2^50, PA[51:50] in bits [9:8] */
		{ K4, 52, 52, 0xe000000000000ull, 0xfffffffff000ull, LPA2 },
		{ K16, 52, 52, 0x9000000000000ull, 0x4000, LPA2 },
		{ K4, 40, 48, 0x80000000ull, 0x1000, LPA2 },
	};
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct slat_config cfg = {
			.format = SLAT_FMT_ARM_S2, .granule = tc[i].granule,
			.ia_bits = tc[i].ia, .pa_bits = tc[i].pa,
			.features = tc[i].features,
		};
		char what[32];
		snprintf(what, sizeof(what), "config %zu", i);
		check_table_chain(&cfg, tc[i].pa_base, tc[i].ipa, tc[i].granule,
				  table_desc, 0, what);
	}
}

/* A hand-made example for the 52-bit case, to read without the helper. */
static void table_descriptor_above_2_48_example(void **state)
{
	(void)state;
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_pa(f, K64, 52, 52, 0, 0xa000000000000ull),
			 SLAT_OK);
	fx_topup(f, 2);
	/* the next table is the top page of the cache */
	uint64_t pa = fx_pa_of(f, f->cache.pages[1]);
	assert_int_equal(pa >> 48, 0xa);
	assert_int_equal(fx_map(f, 0x10000, 0x10000, 0x40000000, SLAT_RW, 0),
			 SLAT_OK);
	/* e.g. PA 0xA_0000_0001_0000 -> 0x000000000001A003 */
	uint64_t want = (pa & 0xffffffff0000ull) | 0xa000 | 3;
	assert_int_equal(((uint64_t *)f->t.root)[0], want);
	fx_fini(f);
	free(f);
}

/* ------------------------------------------------------------ geometry */

struct geo_case {
	uint32_t granule;
	uint8_t ia, pa;
	int start;
	unsigned root_pages;
	uint32_t root_entries;
	uint8_t leaves; /* at levels >= start */
	uint32_t features;
};

/* docs/design.md, "Levels and geometry" */
static const struct geo_case geos[] = {
	{ K4, 32, 48, 2, 4, 2048, 0xc, 0 },
	{ K4, 36, 48, 1, 1, 64, 0xe, 0 },
	{ K4, 40, 48, 1, 2, 1024, 0xe, 0 },
	{ K4, 42, 48, 1, 8, 4096, 0xe, 0 },
	{ K4, 44, 48, 0, 1, 32, 0xe, 0 },
	{ K4, 48, 48, 0, 1, 512, 0xe, 0 },
	{ K16, 36, 48, 2, 1, 2048, 0xc, 0 },
	{ K16, 40, 48, 2, 16, 32768, 0xc, 0 },
	{ K16, 42, 48, 1, 1, 64, 0xc, 0 },
	{ K16, 48, 48, 1, 2, 4096, 0xc, 0 },
	{ K64, 40, 48, 2, 1, 2048, 0xc, 0 },
	{ K64, 44, 48, 2, 4, 32768, 0xc, 0 },
	{ K64, 48, 48, 1, 1, 64, 0xc, 0 },
	{ K64, 48, 52, 1, 1, 64, 0xe, 0 },
	{ K64, 52, 52, 1, 1, 1024, 0xe, 0 },
	/* FEAT_LPA2: 4K level-0 blocks, 16K level-1 blocks; a 4K IPA above
	 * 48 bits in 2 to 16 concatenated level-0 tables (AArch64.S2
	 * InconsistentSL allows them at any start level), 16K with 52 bits
	 * from a 32-entry level 0 (SL0 = 3, DS only): concatenated level-1
	 * tables would need 32 pages */
	{ K4, 52, 52, 0, 16, 8192, 0xf, LPA2 },
	{ K4, 49, 52, 0, 2, 1024, 0xf, LPA2 },
	{ K4, 48, 48, 0, 1, 512, 0xf, LPA2 },
	{ K4, 40, 48, 1, 2, 1024, 0xe, LPA2 },
	{ K16, 52, 52, 0, 1, 32, 0xe, LPA2 },
	{ K16, 51, 52, 1, 16, 32768, 0xe, LPA2 },
	{ K16, 48, 48, 1, 2, 4096, 0xe, LPA2 },
};

static void geometry_matches_the_design_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(geos) / sizeof(geos[0]); i++) {
		const struct geo_case *c = &geos[i];
		struct slat_config cfg = {
			.format = SLAT_FMT_ARM_S2, .granule = c->granule,
			.ia_bits = c->ia, .pa_bits = c->pa,
			.features = c->features,
		};
		struct slat_geometry g;
		print_message("  %uK ia %u pa %u%s\n", c->granule / 1024, c->ia,
			      c->pa, c->features ? " lpa2" : "");
		assert_int_equal(slat_config_geometry(&cfg, &g), SLAT_OK);
		unsigned gs = c->granule == K4 ? 12 : c->granule == K16 ? 14 : 16;
		assert_int_equal(g.granule_shift, gs);
		assert_int_equal(g.bits_per_level, gs - 3);
		assert_int_equal(g.start_level, c->start);
		assert_int_equal(g.root_pages, c->root_pages);
		assert_int_equal(g.root_entries, c->root_entries);
		assert_int_equal(g.entries, c->granule / 8);
		assert_int_equal(g.ia_bits, c->ia);
		assert_int_equal(g.pa_bits, c->pa);
		/* a leaf level above the start level cannot be used; only
		 * the levels the walk has are compared */
		assert_int_equal(g.leaf_levels & ~((1u << c->start) - 1),
				 c->leaves);

		/* and the checker derives the same from the architecture */
		struct check_geo e;
		assert_int_equal(check_arm_s2.geometry(&cfg, &e), 0);
		assert_int_equal(e.start_level, c->start);
		assert_int_equal(e.root_pages, c->root_pages);
		assert_int_equal(e.root_entries, c->root_entries);
		assert_int_equal(e.leaf_levels, c->leaves);

		/* a table of that configuration: a zeroed, aligned root */
		struct fx *f = malloc(sizeof(*f));
		assert_int_equal(fx_init(f, c->granule, c->ia, c->pa,
					 c->features),
				 SLAT_OK);
		assert_int_equal(slat_hosted_table_pages(&f->h), c->root_pages);
		assert_int_equal(slat_pa_v(f->t.root_pa) %
					 ((uint64_t)c->root_pages * c->granule),
				 0);
		for (int l = c->start; l <= 3; l++)
			assert_int_equal(slat_level_size(&f->t, l),
					 1ull << check_level_shift(&e, l));
		assert_non_null(strstr(slat_table_name(&f->t), "arm-s2"));
		if (checker_full(&f->ck, NULL))
			fail_msg("%s", f->ck.msg);
		fx_fini(f);
		free(f);
	}
}

/* pa_bits 0 means 48. */
static void pa_bits_zero_means_48(void **state)
{
	(void)state;
	struct slat_config cfg = { .format = SLAT_FMT_ARM_S2, .granule = K4,
				   .ia_bits = 40, .pa_bits = 0 };
	struct slat_geometry g;
	assert_int_equal(slat_config_geometry(&cfg, &g), SLAT_OK);
	assert_int_equal(g.pa_bits, 48);
}

static void unsupported_configurations_are_refused(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint32_t granule;
		uint8_t ia, pa;
		uint32_t features;
	} bad[] = {
		{ "4K with 52-bit IPA (needs LPA2)", K4, 52, 48, 0 },
		{ "4K with 52-bit PA", K4, 48, 52, 0 },
		{ "16K with 52-bit IPA", K16, 52, 48, 0 },
		{ "16K with 52-bit PA", K16, 48, 52, 0 },
		{ "IPA of 31 bits", K4, 31, 48, 0 },
		{ "IPA of 0 bits", K4, 0, 48, 0 },
		{ "IPA of 49 bits", K4, 49, 48, 0 },
		{ "64K with 53-bit IPA", K64, 53, 52, 0 },
		{ "PA of 31 bits", K4, 40, 31, 0 },
		{ "PA of 53 bits", K64, 48, 53, 0 },
		{ "granule 8192", 8192, 40, 48, 0 },
		{ "granule 0", 0, 40, 48, 0 },
		{ "granule 32768", 32768, 40, 48, 0 },
		/* VTCR_EL2.DS is RES0 with the 64K granule */
		{ "64K with LPA2", K64, 48, 48, LPA2 },
		{ "64K with LPA2 and 52 bits", K64, 52, 52, LPA2 },
		{ "4K LPA2 with 53-bit IPA", K4, 53, 52, LPA2 },
		{ "16K LPA2 with 53-bit PA", K16, 48, 53, LPA2 },
		{ "4K LPA2 IPA wider than PA", K4, 52, 48, LPA2 },
		{ "4K with 49-bit PA (needs LPA2)", K4, 40, 49, 0 },
		{ "16K with 50-bit IPA (needs LPA2)", K16, 50, 50, 0 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_config cfg = {
			.format = SLAT_FMT_ARM_S2, .granule = bad[i].granule,
			.ia_bits = bad[i].ia, .pa_bits = bad[i].pa,
			.features = bad[i].features,
		};
		struct slat_geometry g;
		print_message("  %s\n", bad[i].what);
		assert_int_equal(slat_config_geometry(&cfg, &g), SLAT_E_CONFIG);
		struct check_geo e;
		assert_int_equal(check_arm_s2.geometry(&cfg, &e), SLAT_E_CONFIG);

		/* slat_table_init refuses it without allocating anything */
		struct slat_hosted h;
		struct slat_table t;
		assert_int_equal(slat_hosted_init(&h, 64 * 65536, K4, 0x80000000),
				 SLAT_OK);
		assert_int_equal(slat_table_init(&t, &cfg, slat_hosted_ops(), &h),
				 SLAT_E_CONFIG);
		assert_int_equal(h.pages_in_use, 0);
		slat_hosted_fini(&h);
	}
	/* an unknown format is not a supported configuration either */
	struct slat_config cfg = { .format = (enum slat_format_id)77,
				   .granule = K4, .ia_bits = 40 };
	struct slat_geometry g;
	assert_int_equal(slat_config_geometry(&cfg, &g), SLAT_E_CONFIG);
	/* FEAT_LPA2 is an Arm feature */
	cfg = (struct slat_config){ .format = SLAT_FMT_EPT, .granule = K4,
				    .ia_bits = 48, .features = LPA2 };
	assert_int_equal(slat_config_geometry(&cfg, &g), SLAT_E_CONFIG);
}

/* A hand-made example of DS table descriptors: a table at PA
 * 0xE_0000_0000_1000 is linked as [49:12] | PA[51:50] << 8 | 0b11. */
static void table_descriptor_above_2_50_example_lpa2(void **state)
{
	(void)state;
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_pa(f, K4, 52, 52, LPA2, 0xe000000000000ull),
			 SLAT_OK);
	fx_topup(f, 3);
	uint64_t pa = fx_pa_of(f, f->cache.pages[2]);
	assert_int_equal(pa >> 50, 3);
	assert_int_equal(fx_map(f, 0x1000, 0x1000, 0x40000000, SLAT_RW, 0),
			 SLAT_OK);
	/* e.g. 0xE_0000_0001_0000 -> 0x0002000000010303 */
	uint64_t want = (pa & 0x3fffffffff000ull) | 0x300 | 3;
	assert_int_equal(((uint64_t *)f->t.root)[0], want);
	if (pa == 0xe000000010000ull)
		assert_int_equal(want, 0x0002000000010303ull);
	fx_fini(f);
	free(f);
}

/*
 * Stage-2 aborts as ESR_EL2 reports them (Arm ARM D24.2 ESR_EL2, ISS for
 * Data and Instruction Aborts: EC, WnR bit 6, S1PTW bit 7, CM bit 8,
 * the fault status codes) and where the IPA is: HPFAR_EL2 only for
 * translation, access flag and address size faults and faults on a
 * stage-1 walk.
 */
#define ESR(ec, iss) (((uint64_t)(ec) << 26) | (1ull << 25) | (iss))
#define DABT 0x24u
#define IABT 0x20u
#define WNR (1u << 6)
#define S1PTW (1u << 7)
#define CM (1u << 8)

static void stage2_aborts_decode_as_the_architecture_reports_them(void **state)
{
	(void)state;
	static const struct {
		uint64_t esr;
		enum slat_fault fault;
		int level;
		unsigned access;
		bool ipa_valid, address_size;
	} cases[] = {
		{ ESR(DABT, 0x07 | WNR), SLAT_FAULT_TRANSLATION, 3, SLAT_ACCESS_WRITE, true, false },
		{ ESR(DABT, 0x05), SLAT_FAULT_TRANSLATION, 1, SLAT_ACCESS_READ, true, false },
		{ ESR(DABT, 0x0b), SLAT_FAULT_ACCESS_FLAG, 3, SLAT_ACCESS_READ, true, false },
		{ ESR(DABT, 0x0f | WNR), SLAT_FAULT_PERMISSION, 3, SLAT_ACCESS_WRITE, false, false },
		{ ESR(DABT, 0x0e | WNR), SLAT_FAULT_PERMISSION, 2, SLAT_ACCESS_WRITE, false, false },
		/* the guest's walk updating a descriptor, and reading one */
		{ ESR(DABT, 0x0f | S1PTW), SLAT_FAULT_PERMISSION, 3, SLAT_ACCESS_WRITE, true, false },
		{ ESR(DABT, 0x06 | S1PTW), SLAT_FAULT_TRANSLATION, 2, SLAT_ACCESS_READ, true, false },
		{ ESR(IABT, 0x0f | S1PTW), SLAT_FAULT_PERMISSION, 3, SLAT_ACCESS_WRITE, true, false },
		{ ESR(IABT, 0x0f), SLAT_FAULT_PERMISSION, 3, SLAT_ACCESS_EXEC_EL1, false, false },
		{ ESR(IABT, 0x07), SLAT_FAULT_TRANSLATION, 3, SLAT_ACCESS_EXEC_EL1, true, false },
		/* cache maintenance reports WnR 1 */
		{ ESR(DABT, 0x07 | WNR | CM), SLAT_FAULT_TRANSLATION, 3, SLAT_ACCESS_READ, true, false },
		{ ESR(DABT, 0x0f | WNR | CM), SLAT_FAULT_PERMISSION, 3, SLAT_ACCESS_WRITE, false, false },
		/* address size, and FEAT_LPA2's level -1 */
		{ ESR(DABT, 0x00), SLAT_FAULT_NONE, 0, SLAT_ACCESS_READ, true, true },
		{ ESR(DABT, 0x2b), SLAT_FAULT_TRANSLATION, -1, SLAT_ACCESS_READ, true, false },
		{ ESR(DABT, 0x29), SLAT_FAULT_NONE, -1, SLAT_ACCESS_READ, true, true },
		/* no table's fault: a synchronous external abort */
		{ ESR(DABT, 0x10), SLAT_FAULT_NONE, 0, SLAT_ACCESS_READ, false, false },
	};
	const uint64_t hpfar = (0x8abcdull << 4) | (1ull << 63); /* NS set */
	const uint64_t far = 0xffff800012345678ull;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct slat_arm_abort a;
		assert_int_equal(slat_arm_abort_decode(cases[i].esr, hpfar, far, &a),
				 SLAT_OK);
		assert_int_equal(a.fault, cases[i].fault);
		assert_int_equal(a.level, cases[i].level);
		assert_int_equal(a.access, cases[i].access);
		assert_int_equal(a.ipa_valid, cases[i].ipa_valid);
		assert_int_equal(a.address_size, cases[i].address_size);
		assert_int_equal(a.s1ptw, (cases[i].esr & S1PTW) != 0);
		assert_int_equal(a.fsc, cases[i].esr & 0x3f);
		if (a.ipa_valid)
			assert_int_equal(a.ipa, 0x8abcd678ull);
	}
	struct slat_arm_abort a;
	/* an HVC, and an abort taken from EL2 itself */
	assert_int_equal(slat_arm_abort_decode(ESR(0x16, 0), hpfar, far, &a),
			 SLAT_E_INVAL);
	assert_int_equal(slat_arm_abort_decode(ESR(0x25, 0x07), hpfar, far, &a),
			 SLAT_E_INVAL);
	assert_int_equal(slat_arm_abort_decode(ESR(DABT, 0x07), hpfar, far, NULL),
			 SLAT_E_INVAL);
	/* PAR_EL1 after AT S1E1R: F set, or the IPA in [51:12] beside the
	 * memory attributes in [63:56] */
	assert_true(slat_arm_par_ipa(0x809, far) == SLAT_ARM_NO_IPA);
	assert_int_equal(slat_arm_par_ipa(0xff00000080001f80ull, far),
			 0x80001678ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptor_encodings_match_the_architecture),
		cmocka_unit_test(mkold_clears_only_the_access_flag),
		cmocka_unit_test(table_descriptors_hold_only_the_next_table_address),
		cmocka_unit_test(table_descriptor_above_2_48_example),
		cmocka_unit_test(table_descriptor_above_2_50_example_lpa2),
		cmocka_unit_test(geometry_matches_the_design_table),
		cmocka_unit_test(pa_bits_zero_means_48),
		cmocka_unit_test(unsupported_configurations_are_refused),
		cmocka_unit_test(
			stage2_aborts_decode_as_the_architecture_reports_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
