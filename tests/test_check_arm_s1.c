/* SPDX-License-Identifier: MIT */
/*
 * The checker's stage-1 decoder (check_arm_s1.c) on descriptors encoded by
 * hand from the Arm ARM (D8): what it accepts decodes to the right output
 * address and attributes, and every descriptor libslat must never leave
 * behind is refused. The decoder is what the random suite trusts, so it is
 * tested on its own, without the core.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "checker.h"

#define BIT(n) (1ull << (n))

static struct check_geo geo_of(const struct slat_config *cfg)
{
	struct check_geo g;
	assert_int_equal(check_arm_s1.geometry(cfg, &g), 0);
	return g;
}

static enum check_desc_kind decode(const struct slat_config *cfg,
				   uint64_t pte, int level,
				   struct check_desc *d)
{
	struct check_geo g = geo_of(cfg);
	char why[256] = "";
	enum check_desc_kind k =
		check_arm_s1.decode(&g, cfg, pte, level, d, why, sizeof(why));
	if (k == CHECK_DESC_BAD)
		assert_true(why[0] != 0);
	return k;
}

static const struct slat_config c4k = {
	.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
	.pa_bits = 48,
};
static const struct slat_config c4k_hd = {
	.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
	.pa_bits = 48, .features = SLAT_FEAT_HWDIRTY,
};
static const struct slat_config c4k_39 = {
	.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 39,
	.pa_bits = 40,
};
static const struct slat_config c64k_48 = {
	.format = SLAT_FMT_ARM_S1, .granule = 65536, .ia_bits = 48,
	.pa_bits = 48,
};
static const struct slat_config c64k_52 = {
	.format = SLAT_FMT_ARM_S1, .granule = 65536, .ia_bits = 52,
	.pa_bits = 52,
};

/* The EL2 regime with HCR_EL2.E2H = 0 (slat-hyp's: 32-bit VA). */
static const struct slat_config c4k_el2 = {
	.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 32,
	.pa_bits = 40, .features = SLAT_FEAT_S1_EL2,
};
static const struct slat_config c4k_el2_hd = {
	.format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 32,
	.pa_bits = 40, .features = SLAT_FEAT_S1_EL2 | SLAT_FEAT_HWDIRTY,
};

static void geometry_from_the_architecture(void **state)
{
	(void)state;
	static const struct {
		uint32_t granule;
		uint8_t ia, pa;
		int start;
		uint32_t root_entries;
		uint8_t leaves;
	} t[] = {
		/* 4K: 9 bits per level above the 12-bit page offset */
		{ 4096, 48, 48, 0, 512, 0xe },
		{ 4096, 39, 40, 1, 512, 0xe },
		{ 4096, 32, 48, 1, 4, 0xe },
		{ 16384, 47, 48, 1, 2048, 0xc },
		{ 16384, 48, 48, 0, 2, 0xc },
		{ 65536, 42, 48, 2, 8192, 0xc },
		{ 65536, 48, 48, 1, 64, 0xc },
		/* 52-bit OA: 4 TiB blocks at L1 */
		{ 65536, 52, 52, 1, 1024, 0xe },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct slat_config cfg = {
			.format = SLAT_FMT_ARM_S1, .granule = t[i].granule,
			.ia_bits = t[i].ia, .pa_bits = t[i].pa,
		};
		struct check_geo g = geo_of(&cfg);
		assert_int_equal(g.start_level, t[i].start);
		assert_int_equal(g.root_entries, t[i].root_entries);
		assert_int_equal(g.root_pages, 1);
		assert_int_equal(g.leaf_levels, t[i].leaves);
	}
	/* stage-2 features, 52 bits without the 64K granule */
	struct slat_config bad[] = {
		{ .format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		  .features = SLAT_FEAT_FWB },
		{ .format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		  .features = SLAT_FEAT_XNX },
		{ .format = SLAT_FMT_ARM_S1, .granule = 16384, .ia_bits = 52,
		  .pa_bits = 52 },
		{ .format = SLAT_FMT_ARM_S1, .granule = 8192, .ia_bits = 48 },
		{ .format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		  .features = SLAT_FEAT_S1_EL2 | SLAT_FEAT_FWB },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct check_geo g;
		assert_int_equal(check_arm_s1.geometry(&bad[i], &g),
				 SLAT_E_CONFIG);
	}
}

/* Leaves libslat writes, decoded. */
static void leaves_decode(void **state)
{
	(void)state;
	static const struct {
		const struct slat_config *cfg;
		uint64_t pte;
		int level;
		uint64_t oa;
		uint32_t attrs;
	} t[] = {
		/* page, AttrIndx 0, SH 11, AF, AP 00, PXN|UXN: EL1 RW */
		{ &c4k, 0x0060000040000703ull, 3, 0x40000000,
		  SLAT_RW | SLAT_YOUNG },
		/* AP[2]: read-only; UXN only: EL1 execute */
		{ &c4k, 0x0040000040003783ull, 3, 0x40003000,
		  SLAT_R | SLAT_XK | SLAT_YOUNG },
		/* AP[1]: EL0 too; PXN only: EL0 execute; old (AF 0) */
		{ &c4k, 0x0020000040002343ull, 3, 0x40002000,
		  SLAT_RW | SLAT_XU | SLAT_USER },
		/* AttrIndx 1 Device, AttrIndx 2 NC with nG, software 0xa */
		{ &c4k, 0x0060000009000707ull, 3, 0x9000000,
		  SLAT_RW | SLAT_MT_DEVICE | SLAT_YOUNG },
		{ &c4k, 0x0560000040005f0bull, 3, 0x40005000,
		  SLAT_RW | SLAT_MT_NORMAL_NC | SLAT_NG | SLAT_SW(0xa) |
			  SLAT_YOUNG },
		/* 2 MiB and 1 GiB blocks (type 01) */
		{ &c4k, 0x0000000040200701ull, 2, 0x40200000,
		  SLAT_RWX | SLAT_YOUNG },
		{ &c4k, 0x00000000800007c1ull, 1, 0x80000000,
		  SLAT_R | SLAT_X | SLAT_USER | SLAT_YOUNG },
		/* HD: DBM with AP[2] clear is dirty, with AP[2] set
		 * writable-clean; AP[2] without DBM read-only */
		{ &c4k_hd, 0x0068000040007703ull, 3, 0x40007000,
		  SLAT_RW | SLAT_DIRTY | SLAT_YOUNG },
		{ &c4k_hd, 0x0068000040007783ull, 3, 0x40007000,
		  SLAT_RW | SLAT_YOUNG },
		{ &c4k_hd, 0x0060000040007783ull, 3, 0x40007000,
		  SLAT_R | SLAT_YOUNG },
		/* 64K, 52-bit OA: PA[51:48] = 0xf in bits [15:12]; a 4 TiB
		 * block at L1 */
		{ &c64k_52, 0x006000000001f703ull, 3, 0xf000000010000ull,
		  SLAT_RW | SLAT_YOUNG },
		{ &c64k_52, 0x0060040000000701ull, 1, 0x40000000000ull,
		  SLAT_RW | SLAT_YOUNG },
		/* EL2: AP[1] RES1 (no EL0), XN (bit 54) clear is SLAT_X as a
		 * whole, AP[2] alone for writes */
		{ &c4k_el2, 0x0040000040001743ull, 3, 0x40001000,
		  SLAT_RW | SLAT_YOUNG },
		{ &c4k_el2, 0x00000000400027c3ull, 3, 0x40002000,
		  SLAT_R | SLAT_X | SLAT_YOUNG },
		{ &c4k_el2, 0x0000000040003343ull, 3, 0x40003000, SLAT_RWX },
		{ &c4k_el2, 0x0040000000000745ull, 1, 0,
		  SLAT_RW | SLAT_MT_DEVICE | SLAT_YOUNG },
		{ &c4k_el2, 0x054000004000574bull, 3, 0x40005000,
		  SLAT_RW | SLAT_MT_NORMAL_NC | SLAT_SW(0xa) | SLAT_YOUNG },
		/* EL2 with HD: dirty, writable-clean */
		{ &c4k_el2_hd, 0x0048000040007743ull, 3, 0x40007000,
		  SLAT_RW | SLAT_DIRTY | SLAT_YOUNG },
		{ &c4k_el2_hd, 0x00080000400077c3ull, 3, 0x40007000,
		  SLAT_RWX | SLAT_YOUNG },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct check_desc d;
		if (decode(t[i].cfg, t[i].pte, t[i].level, &d) !=
			    CHECK_DESC_LEAF ||
		    d.oa != t[i].oa || d.attrs != t[i].attrs) {
			fprintf(stderr,
				"case %zu: pte %#llx -> kind %d oa %#llx attrs "
				"%#x, expected oa %#llx attrs %#x\n",
				i, (unsigned long long)t[i].pte, d.kind,
				(unsigned long long)d.oa, d.attrs,
				(unsigned long long)t[i].oa, t[i].attrs);
			fail();
		}
	}
	struct check_desc d;
	/* the same geometry at EL2: a 4-entry level-1 root for 32 bits */
	struct check_geo g = geo_of(&c4k_el2);
	assert_int_equal(g.start_level, 1);
	assert_int_equal(g.root_entries, 4);
	assert_int_equal(decode(&c4k, 0x0000000040001003ull, 0, &d),
			 CHECK_DESC_TABLE);
	assert_int_equal(d.oa, 0x40001000);
	assert_int_equal(decode(&c64k_52, 0x000000001001f003ull, 2, &d),
			 CHECK_DESC_TABLE);
	assert_int_equal(d.oa, 0xf000010010000ull);
	assert_int_equal(decode(&c4k, 0, 2, &d), CHECK_DESC_INVALID);
}

/* Descriptors libslat must never leave behind. */
static void bad_descriptors_are_refused(void **state)
{
	(void)state;
	const uint64_t page = 0x0060000040000703ull;
	static const struct {
		const char *what;
		const struct slat_config *cfg;
		uint64_t pte;
		int level;
	} t[] = {
		{ "invalid but not 0 (locked marker)", &c4k, 0x400, 3 },
		{ "type 01 at level 3", &c4k, page & ~2ull, 3 },
		{ "block at L0 (4K, no LPA2)", &c4k, 0x0060000000000701ull, 0 },
		{ "OA below the block size", &c4k, 0x0060000040201701ull, 2 },
		{ "AttrIndx 3", &c4k, page | (3ull << 2), 3 },
		{ "AttrIndx 7", &c4k, page | (7ull << 2), 3 },
		{ "NS", &c4k, page | BIT(5), 3 },
		{ "SH 10", &c4k, page & ~BIT(8), 3 },
		{ "OA bits [49:48]", &c4k, page | BIT(48), 3 },
		{ "GP", &c4k, page | BIT(50), 3 },
		{ "DBM without HD", &c4k, page | BIT(51), 3 },
		{ "contiguous", &c4k, page | BIT(52), 3 },
		{ "PBHA / ignored [63:59]", &c4k, page | BIT(60), 3 },
		{ "executable Device (UXN clear)", &c4k,
		  0x0020000009000707ull, 3 },
		{ "executable Device (PXN clear)", &c4k,
		  0x0040000009000707ull, 3 },
		{ "writable without DBM under HD", &c4k_hd, page, 3 },
		{ "table with APTable", &c4k, 0x2000000040001003ull, 1 },
		{ "table with PXNTable", &c4k, 0x0800000040001003ull, 1 },
		{ "table with AttrIndx bits", &c4k, 0x0000000040001007ull, 1 },
		{ "OA beyond pa_bits (40)", &c4k_39, 0x0060010000000703ull, 3 },
		{ "bits [15:12] without a 52-bit OA (64K)", &c64k_48,
		  0x0060000000011703ull, 3 },
		/* EL2: AP[1] is RES1, PXN and nG RES0 */
		{ "EL2: AP[1] clear", &c4k_el2, 0x0040000040001703ull, 3 },
		{ "EL2: PXN set", &c4k_el2, 0x0060000040001743ull, 3 },
		{ "EL2: nG set", &c4k_el2, 0x0040000040001f43ull, 3 },
		{ "EL2: executable Device (XN clear)", &c4k_el2,
		  0x0000000009000747ull, 3 },
		{ "EL2: DBM without HD", &c4k_el2, 0x0048000040001743ull, 3 },
		{ "EL2: writable without DBM under HD", &c4k_el2_hd,
		  0x0040000040001743ull, 3 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct check_desc d;
		if (decode(t[i].cfg, t[i].pte, t[i].level, &d) !=
		    CHECK_DESC_BAD) {
			fprintf(stderr, "%s: pte %#llx accepted (kind %d)\n",
				t[i].what, (unsigned long long)t[i].pte,
				d.kind);
			fail();
		}
	}
}

/* What map accepts, and what the CPU enforces. */
static void attributes_and_enforced_permissions(void **state)
{
	(void)state;
	const struct check_format *f = &check_arm_s1;
	assert_ptr_equal(check_format_for(SLAT_FMT_ARM_S1), f);
	assert_true(f->attrs_ok(&c4k, SLAT_R));
	assert_true(f->attrs_ok(&c4k, SLAT_RW | SLAT_XU | SLAT_USER | SLAT_NG));
	assert_false(f->attrs_ok(&c4k, SLAT_W));
	assert_false(f->attrs_ok(&c4k, SLAT_XK));
	assert_false(f->attrs_ok(&c4k, SLAT_R | SLAT_XK | SLAT_MT_DEVICE));
	assert_false(f->attrs_ok(&c4k, SLAT_R | SLAT_MT_MASK));
	assert_false(f->attrs_ok(&c4k, SLAT_R | SLAT_IPAT));
	/* AP[2:1] = 01 (EL0 writable): privileged execute-never */
	assert_int_equal(f->hw_perms(&c4k, SLAT_RWX | SLAT_USER),
			 SLAT_RW | SLAT_XU);
	assert_int_equal(f->hw_perms(&c4k, SLAT_RWX), SLAT_RWX);
	assert_int_equal(f->hw_perms(&c4k, SLAT_R | SLAT_X | SLAT_USER),
			 SLAT_R | SLAT_X);
	/* with HD, writable-clean is AP[2] = 1 until the first write */
	assert_int_equal(f->hw_perms(&c4k_hd, SLAT_RWX | SLAT_USER), SLAT_RWX);
	assert_int_equal(f->hw_perms(&c4k_hd,
				     SLAT_RWX | SLAT_USER | SLAT_DIRTY),
			 SLAT_RW | SLAT_XU);
	/* EL2: execute whole, no EL0, no nG; nothing for EL0 to use */
	assert_true(f->attrs_ok(&c4k_el2, SLAT_RWX));
	assert_true(f->attrs_ok(&c4k_el2, SLAT_R | SLAT_MT_DEVICE));
	assert_false(f->attrs_ok(&c4k_el2, SLAT_R | SLAT_XK));
	assert_false(f->attrs_ok(&c4k_el2, SLAT_R | SLAT_XU));
	assert_false(f->attrs_ok(&c4k_el2, SLAT_R | SLAT_USER));
	assert_false(f->attrs_ok(&c4k_el2, SLAT_R | SLAT_NG));
	assert_false(f->separate_exec(&c4k_el2));
	assert_true(f->separate_exec(&c4k));
	assert_int_equal(f->hw_perms(&c4k_el2, SLAT_RWX), SLAT_RW | SLAT_XK);
	assert_int_equal(f->hw_perms(&c4k_el2_hd, SLAT_RWX | SLAT_DIRTY),
			 SLAT_RW | SLAT_XK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(geometry_from_the_architecture),
		cmocka_unit_test(leaves_decode),
		cmocka_unit_test(bad_descriptors_are_refused),
		cmocka_unit_test(attributes_and_enforced_permissions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
