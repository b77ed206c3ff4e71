/* SPDX-License-Identifier: MIT */
/*
 * Intel EPT entries, worked out by hand from the Intel SDM (Vol. 3C, "EPT
 * Translation Mechanism": the formats of EPT PML5/PML4/PDPT/PD/PT entries;
 * "EPT Misconfigurations"; "Accessed and Dirty Flags for EPT") and the
 * encoding table of docs/design.md, compared with what libslat writes. Also
 * the 4- and 5-level geometry, and the configurations and attributes that
 * are refused.
 *
 * Bits of an EPT leaf, for reading the constants below:
 *   bit 0   R        bit 1  W        bit 2  X (supervisor X with MBEC)
 *   5:3     memory type: 6 WB (0x30), 1 WC (0x08), 0 UC
 *   bit 6   ignore PAT (0x40)
 *   bit 7   PS: a 2 MiB (PD) or 1 GiB (PDPT) page (0x80)
 *   bit 8   A (0x100): libslat installs every leaf young
 *   bit 9   D (0x200): libslat installs a writable leaf dirty
 *   bit 10  XU, user execute with MBEC (0x400)
 *   51:12   the page's PA
 *   55:52   software bits
 *   bit 63  suppress #VE
 * So a 4 KiB read-write write-back leaf has low bits
 *   R|W 0x3 | WB 0x30 | A 0x100 | D 0x200 = 0x333,
 * and a table entry is R|W|X = 0x7 (| XU 0x400 with MBEC) plus the PA.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture.h"
#include "table_chain.h"

#define MBEC SLAT_FEAT_EPT_MBEC
#define XONLY SLAT_FEAT_EPT_XONLY
#define AD SLAT_FEAT_HWDIRTY
#define G1 0x40000000ull
#define M2 0x200000ull

static struct slat_config ept(uint8_t ia, uint8_t pa, uint32_t features)
{
	return (struct slat_config){ .format = SLAT_FMT_EPT, .granule = 4096,
				     .ia_bits = ia, .pa_bits = pa,
				     .features = features };
}

struct enc_case {
	const char *what;
	uint8_t ia, pa;
	uint32_t features;
	uint64_t ipa, size, out;
	uint32_t attrs;
	int level;
	uint64_t pte;
};

static const struct enc_case cases[] = {
	/* R|W (0x3), WB (6 << 3 = 0x30), A (0x100), D (0x200): 0x333 */
	{ "4K RW WB", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW, 3, 0x0000000012345333ull },
	/* with X (bit 2): 0x337 */
	{ "4K RWX WB", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX, 3, 0x0000000012345337ull },
	/* read-only: R, WB, A; not writable, so not dirty: 0x131 */
	{ "4K RO WB", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_R, 3, 0x0000000012345131ull },
	/* R|X: 0x1 | 0x4 | 0x30 | 0x100 = 0x135 */
	{ "4K RX WB", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_R | SLAT_X, 3,
	  0x0000000012345135ull },
	/* execute-only (the CPU supports it): X alone, 0x4|0x30|0x100 = 0x134 */
	{ "4K X-only with XONLY", 48, 48, XONLY,
	  0x1000, 0x1000, 0x12345000, SLAT_X, 3, 0x0000000012345134ull },
	/* MBEC, user execute only: R, XU (bit 10), no bit 2:
	 * 0x1 | 0x30 | 0x100 | 0x400 = 0x531 */
	{ "4K R XU with MBEC", 48, 48, MBEC,
	  0x1000, 0x1000, 0x12345000, SLAT_R | SLAT_XU, 3,
	  0x0000000012345531ull },
	/* MBEC, supervisor execute only: bit 2 alone: 0x135 */
	{ "4K R XK with MBEC", 48, 48, MBEC,
	  0x1000, 0x1000, 0x12345000, SLAT_R | SLAT_XK, 3,
	  0x0000000012345135ull },
	/* MBEC, both: bit 2 and bit 10, writable: 0x7|0x30|0x300|0x400 */
	{ "4K RWX with MBEC", 48, 48, MBEC,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX, 3, 0x0000000012345737ull },
	/* MBEC and XONLY: supervisor execute only, no read: 0x134 */
	{ "4K XK-only with MBEC and XONLY", 48, 48, MBEC | XONLY,
	  0x1000, 0x1000, 0x12345000, SLAT_XK, 3, 0x0000000012345134ull },
	/* Device is UC, memory type 0: 0x3 | 0x100 | 0x200 = 0x303 */
	{ "4K RW UC (device)", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_DEVICE, 3,
	  0x0000000012345303ull },
	/* Normal non-cacheable is WC, memory type 1 (0x08): 0x30b */
	{ "4K RW WC (normal-nc)", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_NORMAL_NC, 3,
	  0x000000001234530bull },
	/* ignore PAT, bit 6: 0x333 | 0x40 = 0x373 */
	{ "4K RW WB IPAT", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_IPAT, 3,
	  0x0000000012345373ull },
	/* UC with ignore PAT: 0x303 | 0x40 = 0x343 */
	{ "4K RW UC IPAT", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_DEVICE | SLAT_IPAT, 3,
	  0x0000000012345343ull },
	/* suppress #VE, bit 63 */
	{ "4K RW WB SVE", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_SVE, 3,
	  0x8000000012345333ull },
	/* software bits 55:52: SW(0xA) = bits 53 and 55 */
	{ "4K SW(0xA)", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_SW(0xa), 3,
	  0x00a0000012345333ull },
	{ "4K SW(0xF)", 48, 48, 0,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_SW(0xf), 3,
	  0x00f0000012345333ull },
	/* with A/D enabled the bits are the same; lookup reports D */
	{ "4K RW WB with A/D", 48, 48, AD,
	  0x1000, 0x1000, 0x12345000, SLAT_RW, 3, 0x0000000012345333ull },
	/* 2 MiB page in a PD entry: PS (bit 7): 0x333 | 0x80 = 0x3b3 */
	{ "2M RW WB", 48, 48, 0,
	  0x40200000, M2, 0x80200000, SLAT_RW, 2, 0x00000000802003b3ull },
	/* 1 GiB page in a PDPT entry */
	{ "1G RW WB", 48, 48, 0,
	  G1, G1, 0xc0000000, SLAT_RW, 1, 0x00000000c00003b3ull },
	/* 1 GiB read-only executable: 0x135 | 0x80 = 0x1b5 */
	{ "1G RX WB", 48, 48, 0,
	  G1, G1, 0xc0000000, SLAT_R | SLAT_X, 1, 0x00000000c00001b5ull },
	/* 5-level walk, 1 GiB page: the leaf is the same */
	{ "5-level 1G RW WB", 57, 52, 0,
	  G1, G1, 0xc0000000, SLAT_RW, 1, 0x00000000c00003b3ull },
	/* the last page below 2^52 with pa_bits 52: PA bits 51:12 all set */
	{ "4K at PA 2^52 - 4K", 48, 52, 0,
	  0x1000, 0x1000, 0xffffffffff000ull, SLAT_RW, 3,
	  0x000ffffffffff333ull },
	/* the last 1 GiB below 2^52, 5-level */
	{ "1G at PA 2^52 - 1G", 57, 52, 0,
	  G1, G1, 0xfffffc0000000ull, SLAT_RW, 1, 0x000fffffc00003b3ull },
	/* the last page below a 46-bit MAXPHYADDR */
	{ "4K at PA 2^46 - 4K", 48, 46, 0,
	  0x1000, 0x1000, 0x3ffffffff000ull, SLAT_R, 3,
	  0x00003ffffffff131ull },
};

static void ept_leaves_match_the_sdm(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct enc_case *c = &cases[i];
		struct slat_config cfg = ept(c->ia, c->pa, c->features);
		/* dirty is reported only with A/D, for writable leaves */
		uint32_t dirty = (c->features & AD) && (c->attrs & SLAT_W)
					 ? SLAT_DIRTY : 0;
		CHECK_HAND_LEAF(&cfg, c, SLAT_YOUNG | dirty);
	}
}

/* test_clear_young clears exactly A (bit 8); mkyoung sets it again. */
static void mkold_clears_only_the_accessed_bit(void **state)
{
	(void)state;
	struct slat_config cfg = ept(48, 48, AD);
	/* 0x333 - A */
	check_mkold(&cfg, 0x0000000012345333ull, 0x0000000012345233ull,
		    SLAT_RW | SLAT_DIRTY);
}

/*
 * Table entries at every level: R|W|X (0x7), with MBEC also XU (0x407),
 * plus the next table's PA, nothing else. The page the core takes is the
 * top of the cache (pages[nr - 1]), so the PAs are known before the map.
 * Example with the arena at 0x80000000: a table at PA 0x80003000 is linked
 * as 0x0000000080003007.
 */
static void table_entries_hold_rwx_and_the_next_table(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint8_t ia, pa;
		uint32_t features;
		uint64_t pa_base, ipa, bits;
	} tc[] = {
		/* PML4 -> PDPT -> PD -> PT */
		{ "4-level", 48, 48, 0, 0x80000000ull, 0x7fffffe000ull, 0x7 },
		{ "4-level MBEC", 48, 48, MBEC, 0x80000000ull, 0x1000, 0x407 },
		/* PML5 -> PML4 -> PDPT -> PD -> PT */
		{ "5-level", 57, 52, 0, 0x80000000ull, 0x1fffffffffff000ull,
		  0x7 },
		/* tables near the top of a 52-bit PA space */
		{ "5-level, tables above 2^51", 57, 52, MBEC | AD,
		  0xffff000000000ull, 0x123456789a000ull, 0x407 },
	};
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct slat_config cfg = ept(tc[i].ia, tc[i].pa, tc[i].features);
		check_table_chain(&cfg, tc[i].pa_base, tc[i].ipa, 0x1000,
				  table_link_x86, tc[i].bits, tc[i].what);
	}
}

/* The 5-level example written out: one page at IPA 0. */
static void five_level_walk_example(void **state)
{
	(void)state;
	struct slat_config cfg = ept(57, 52, 0);
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000), SLAT_OK);
	assert_int_equal(f->t.geo.start_level, -1);
	fx_topup(f, 4);
	/* popped in this order: PML4, PDPT, PD, PT */
	uint64_t pml4 = fx_pa_of(f, f->cache.pages[3]);
	uint64_t pt = fx_pa_of(f, f->cache.pages[0]);
	assert_int_equal(fx_map(f, 0, 0x1000, 0x5000, SLAT_R, 0), SLAT_OK);
	/* PML5[0] -> PML4 with RWX */
	assert_int_equal(((uint64_t *)f->t.root)[0], pml4 | 0x7);
	/* PT[0]: PA 0x5000, R | WB | A = 0x131 */
	assert_int_equal(fx_table(f, pt)[0], 0x5131ull);
	fx_fini(f);
	free(f);
}

/* ------------------------------------------------------------ geometry */

struct geo_case {
	uint8_t ia, pa;
	int start;
	uint32_t root_entries;
	uint8_t want_pa; /* pa_bits after the default */
};

/* docs/design.md, "Intel EPT encoding used": 4-level up to 48 bits,
 * 5-level above; one root page of 512 entries, of which
 * 2^(ia - shift(start)) are in use. */
static const struct geo_case geos[] = {
	{ 32, 0, 0, 1, 48 },     /* 2^32 < 2^39: one PML4 entry */
	{ 39, 0, 0, 1, 48 },
	{ 40, 0, 0, 2, 48 },
	{ 46, 46, 0, 128, 46 },
	{ 48, 0, 0, 512, 48 },
	{ 48, 52, 0, 512, 52 },
	{ 49, 0, -1, 2, 52 },    /* the PML5 resolves bit 48 */
	{ 52, 0, -1, 16, 52 },
	{ 57, 0, -1, 512, 52 },
	{ 57, 46, -1, 512, 46 },
};

static void geometry_of_4_and_5_level_walks(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(geos) / sizeof(geos[0]); i++) {
		const struct geo_case *c = &geos[i];
		struct slat_config cfg = ept(c->ia, c->pa, 0);
		print_message("  ia %u pa %u\n", c->ia, c->pa);
		check_x86_walk_geometry(&cfg, c->start, c->root_entries,
					c->want_pa, "ept");
	}
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
		{ "granule 16K", 16384, 48, 48, 0 },
		{ "granule 64K", 65536, 48, 48, 0 },
		{ "granule 0", 0, 48, 48, 0 },
		{ "ia 58 (beyond a 5-level walk)", 4096, 58, 52, 0 },
		{ "ia 64", 4096, 64, 52, 0 },
		{ "ia 31", 4096, 31, 48, 0 },
		{ "pa 53", 4096, 48, 53, 0 },
		{ "pa 31", 4096, 48, 31, 0 },
		{ "FWB is Arm's", 4096, 48, 48, SLAT_FEAT_FWB },
		{ "XNX is Arm's", 4096, 48, 48, SLAT_FEAT_XNX },
		{ "DIC is Arm's", 4096, 48, 48, SLAT_FEAT_DIC },
		{ "an unknown feature bit", 4096, 48, 48, 1u << 20 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_config cfg = ept(bad[i].ia, bad[i].pa,
					     bad[i].features);
		cfg.granule = bad[i].granule;
		print_message("  %s\n", bad[i].what);
		/* slat_table_init refuses it without allocating anything */
		assert_true(fx_config_refused(&cfg, &check_ept));
	}
}

/*
 * Attributes an EPT leaf cannot carry: write without read and
 * execute-only without the capability are misconfigurations; bits 2:0 all
 * clear is not a present entry; execute at one privilege only needs MBEC.
 */
static void unexpressible_attributes_are_refused(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint32_t features;
		uint32_t attrs;
	} bad[] = {
		{ "W without R", 0, SLAT_W },
		{ "W without R, with X", XONLY, SLAT_W | SLAT_X },
		{ "W without R, even with every feature", MBEC | XONLY | AD,
		  SLAT_W | SLAT_XK },
		{ "X-only without XONLY", 0, SLAT_X },
		{ "X-only without XONLY, with MBEC", MBEC, SLAT_XK },
		{ "XU-only without MBEC", 0, SLAT_R | SLAT_XU },
		{ "XK-only without MBEC", 0, SLAT_R | SLAT_XK },
		{ "XU alone: bits 2:0 clear (not present)", MBEC | XONLY,
		  SLAT_XU },
		{ "no R and no X (normal memory)", XONLY, SLAT_MT_NORMAL },
		{ "no R and no X (WC)", 0, SLAT_MT_NORMAL_NC },
		{ "execute on UC (device)", 0,
		  SLAT_R | SLAT_X | SLAT_MT_DEVICE },
		{ "memory type 3", 0, SLAT_R | SLAT_MT_MASK },
		{ "SLAT_DIRTY is not an input", AD, SLAT_RW | SLAT_DIRTY },
		{ "SLAT_YOUNG is not an input", 0, SLAT_R | SLAT_YOUNG },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_config cfg = ept(48, 48, bad[i].features);
		struct fx *f = malloc(sizeof(*f));
		print_message("  %s\n", bad[i].what);
		assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000), SLAT_OK);
		assert_int_equal(fx_map(f, 0x1000, 0x1000, 0x5000, bad[i].attrs,
					0),
				 SLAT_E_ATTR);
		/* the checker's rules say the same */
		assert_false(check_ept.attrs_ok(&cfg, bad[i].attrs));
		assert_int_equal(slat_hosted_table_pages(&f->h), 1);
		fx_fini(f);
		free(f);
	}
	/* and the ones that are fine with the capability */
	static const struct {
		uint32_t features, attrs;
	} good[] = {
		{ XONLY, SLAT_X },
		{ MBEC, SLAT_R | SLAT_XU },
		{ MBEC | XONLY, SLAT_XK },
		{ MBEC | XONLY, SLAT_XK | SLAT_XU },
		{ 0, SLAT_R | SLAT_MT_DEVICE | SLAT_IPAT | SLAT_SVE },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct slat_config cfg = ept(48, 48, good[i].features);
		struct fx *f = malloc(sizeof(*f));
		assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000), SLAT_OK);
		assert_int_equal(fx_map(f, 0x1000, 0x1000, 0x5000,
					good[i].attrs, 0),
				 SLAT_OK);
		assert_true(check_ept.attrs_ok(&cfg, good[i].attrs));
		if (checker_full(&f->ck, NULL))
			fail_msg("%s", f->ck.msg);
		fx_fini(f);
		free(f);
	}
}

/*
 * The checker's decoder refuses what the SDM calls a misconfiguration or
 * reserved, and what libslat never writes (hand-made entries).
 */
static void checker_refuses_misconfigured_entries(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint32_t features;
		int level;
		uint64_t pte;
	} bad[] = {
		{ "W without R", 0, 3, 0x12345332ull },
		{ "X-only without XONLY", 0, 3, 0x12345134ull },
		{ "memory type 2", 0, 3, 0x12345313ull },
		{ "memory type 7", 0, 3, 0x1234533bull },
		{ "PS in a PML4 entry", 0, 0, 0x12345087ull },
		{ "memory type in a table entry", 0, 2, 0x12345037ull },
		{ "ignore-PAT in a table entry", 0, 1, 0x12345047ull },
		{ "table entry without X", 0, 2, 0x12345003ull },
		{ "table entry with D", 0, 2, 0x12345207ull },
		{ "table entry with A, no A/D", 0, 2, 0x12345107ull },
		{ "2M page with PA bit 12 set", 0, 2, 0x802013b3ull },
		{ "PA beyond pa_bits 48", 0, 3, 0x0001000000000333ull },
		{ "XU without MBEC", 0, 3, 0x12345731ull },
		{ "present bits clear, not 0", 0, 3, 0x12345330ull },
		{ "executable UC", 0, 3, 0x12345305ull },
		{ "bit 7 in a PT entry", 0, 3, 0x123453b3ull },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_config cfg = ept(48, 48, bad[i].features);
		struct check_geo g;
		struct check_desc d;
		char why[256];
		print_message("  %s\n", bad[i].what);
		assert_int_equal(check_ept.geometry(&cfg, &g), 0);
		assert_int_equal(check_ept.decode(&g, &cfg, bad[i].pte,
						  bad[i].level, &d, why,
						  sizeof(why)),
				 CHECK_DESC_BAD);
	}
	/* the CPU may set A in a table entry when A/D is on */
	struct slat_config cfg = ept(48, 48, AD);
	struct check_geo g;
	struct check_desc d;
	char why[256];
	assert_int_equal(check_ept.geometry(&cfg, &g), 0);
	assert_int_equal(check_ept.decode(&g, &cfg, 0x12345107ull, 2, &d, why,
					  sizeof(why)),
			 CHECK_DESC_TABLE);
	assert_int_equal(d.oa, 0x12345000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ept_leaves_match_the_sdm),
		cmocka_unit_test(mkold_clears_only_the_accessed_bit),
		cmocka_unit_test(table_entries_hold_rwx_and_the_next_table),
		cmocka_unit_test(five_level_walk_example),
		cmocka_unit_test(geometry_of_4_and_5_level_walks),
		cmocka_unit_test(unsupported_configurations_are_refused),
		cmocka_unit_test(unexpressible_attributes_are_refused),
		cmocka_unit_test(checker_refuses_misconfigured_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
