/* SPDX-License-Identifier: MIT */
/*
 * AMD nested page table entries, worked out by hand from the AMD64
 * Architecture Programmer's Manual vol. 2 ("Long-Mode Page Translation":
 * the 4-Kbyte, 2-Mbyte and 1-Gbyte PML5E/PML4E/PDPE/PDE/PTE figures;
 * "Page-Translation-Table Entry Fields"; "Page-Attribute Table Mechanism":
 * "PAT Indexing"; "Nested Paging": "Enabling Nested Paging", "Nested Table
 * Walk") and the encoding table of docs/design.md, compared with what
 * libslat writes. Also the 4- and 5-level geometry, nCR3, the
 * configurations and attributes that are refused, what the CPU's walk does
 * (U/S, NX, A and D), and the invalidations the format's rules call for.
 *
 * Bits of a nested leaf, for reading the constants below:
 *   bit 0   P (0x1)     bit 1  R/W (0x2)     bit 2  U/S (0x4)
 *   bit 3   PWT (0x8)   bit 4  PCD (0x10): with PAT the host PAT index:
 *           WB index 0 (0), WC index 1 (PWT), UC index 3 (PWT|PCD)
 *   bit 5   A (0x20): libslat installs every leaf accessed
 *   bit 6   D (0x40): libslat installs a writable leaf dirty
 *   bit 7   PS in a PDE/PDPE: a 2 MiB / 1 GiB page (0x80); PAT in a PTE
 *   bit 12  PAT of a 2 MiB / 1 GiB page (never set by libslat)
 *   51:12   the page's PA          55:52  software bits
 *   bit 63  NX: set unless the leaf is executable
 * So a 4 KiB read-write write-back leaf, not executable, is
 *   P|R/W|U/S 0x7 | A 0x20 | D 0x40 = 0x67, with bit 63: 0x8000...067,
 * and a table entry is P|R/W|U/S = 0x7 plus the PA.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixture.h"
#include "table_chain.h"

#define AD SLAT_FEAT_HWDIRTY
#define G1 0x40000000ull
#define M2 0x200000ull
#define NX 0x8000000000000000ull

static struct slat_config npt(uint8_t ia, uint8_t pa, uint8_t levels)
{
	return (struct slat_config){ .format = SLAT_FMT_NPT, .granule = 4096,
				     .ia_bits = ia, .pa_bits = pa,
				     .features = AD, .levels = levels };
}

struct enc_case {
	const char *what;
	uint8_t ia, pa;
	uint64_t ipa, size, out;
	uint32_t attrs;
	int level;
	uint64_t pte;
};

static const struct enc_case cases[] = {
	/* P|R/W|U/S (0x7), A (0x20), D (0x40): 0x67, NX */
	{ "4K RW WB", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RW, 3, NX | 0x12345067ull },
	/* executable: NX clear */
	{ "4K RWX WB", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX, 3, 0x12345067ull },
	/* read-only: P|U/S, A; not writable, so not dirty: 0x25 */
	{ "4K RO WB", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_R, 3, NX | 0x12345025ull },
	{ "4K RX WB", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_R | SLAT_X, 3, 0x12345025ull },
	/* Device is UC, host PAT index 3: PCD|PWT (0x18): 0x7f */
	{ "4K RW UC (device)", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_DEVICE, 3,
	  NX | 0x1234507full },
	/* Normal non-cacheable is WC, host PAT index 1: PWT (0x8): 0x6f */
	{ "4K RW WC (normal-nc)", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_MT_NORMAL_NC, 3,
	  NX | 0x1234506full },
	/* WC executable: 0x6f without NX */
	{ "4K RWX WC", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX | SLAT_MT_NORMAL_NC, 3,
	  0x1234506full },
	/* software bits 55:52: SW(0xA) = bits 53 and 55 */
	{ "4K SW(0xA)", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RW | SLAT_SW(0xa), 3,
	  NX | 0x00a0000012345067ull },
	{ "4K SW(0xF)", 48, 48,
	  0x1000, 0x1000, 0x12345000, SLAT_RWX | SLAT_SW(0xf), 3,
	  0x00f0000012345067ull },
	/* 2 MiB page in a PDE: PS (bit 7): 0x67 | 0x80 = 0xe7 */
	{ "2M RW WB", 48, 48,
	  0x40200000, M2, 0x80200000, SLAT_RW, 2, NX | 0x802000e7ull },
	/* 2 MiB UC: PCD|PWT, PAT (bit 12) clear: index 3 */
	{ "2M RW UC", 48, 48,
	  0x40200000, M2, 0x80200000, SLAT_RW | SLAT_MT_DEVICE, 2,
	  NX | 0x802000ffull },
	/* 1 GiB page in a PDPE */
	{ "1G RW WB", 48, 48,
	  G1, G1, 0xc0000000, SLAT_RW, 1, NX | 0xc00000e7ull },
	/* 1 GiB read-only executable: 0x25 | 0x80 = 0xa5 */
	{ "1G RX WB", 48, 48,
	  G1, G1, 0xc0000000, SLAT_R | SLAT_X, 1, 0xc00000a5ull },
	/* 5-level walk, 1 GiB page: the leaf is the same */
	{ "5-level 1G RW WB", 57, 52,
	  G1, G1, 0xc0000000, SLAT_RW, 1, NX | 0xc00000e7ull },
	/* the last page below 2^52 with pa_bits 52: PA bits 51:12 all set */
	{ "4K at PA 2^52 - 4K", 48, 52,
	  0x1000, 0x1000, 0xffffffffff000ull, SLAT_RW, 3,
	  NX | 0x000ffffffffff067ull },
	{ "1G at PA 2^52 - 1G", 57, 52,
	  G1, G1, 0xfffffc0000000ull, SLAT_RW, 1, NX | 0x000fffffc00000e7ull },
	{ "4K at PA 2^46 - 4K", 48, 46,
	  0x1000, 0x1000, 0x3ffffffff000ull, SLAT_R, 3,
	  NX | 0x00003ffffffff025ull },
};

static void npt_leaves_match_the_apm(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct enc_case *c = &cases[i];
		struct slat_config cfg = npt(c->ia, c->pa, 0);
		/* A and D are always the CPU's: a writable leaf is dirty */
		uint32_t dirty = (c->attrs & SLAT_W) ? SLAT_DIRTY : 0;
		CHECK_HAND_LEAF(&cfg, c, SLAT_YOUNG | dirty);
	}
}

/* test_clear_young clears exactly A (bit 5); mkyoung sets it again. */
static void mkold_clears_only_the_accessed_bit(void **state)
{
	(void)state;
	struct slat_config cfg = npt(48, 48, 0);
	/* 0x67 - A */
	check_mkold(&cfg, NX | 0x12345067ull, NX | 0x12345047ull,
		    SLAT_RW | SLAT_DIRTY);
}

/*
 * Table entries at every level: P|R/W|U/S (0x7) plus the next table's PA,
 * nothing else (no NX, PWT, PCD: the walk reads tables write-back). With
 * the arena at 0x80000000, a table at PA 0x80003000 is linked as
 * 0x0000000080003007.
 */
static void table_entries_hold_p_rw_us_and_the_next_table(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint8_t ia, pa, levels;
		uint64_t pa_base, ipa;
	} tc[] = {
		/* PML4 -> PDP -> PD -> PT */
		{ "4-level", 48, 48, 0, 0x80000000ull, 0x7fffffe000ull },
		/* PML5 -> PML4 -> PDP -> PD -> PT */
		{ "5-level", 57, 52, 0, 0x80000000ull, 0x1fffffffffff000ull },
		/* a 5-level walk of a 40-bit space */
		{ "5-level, 40 bits", 40, 48, 5, 0x80000000ull, 0xfffffff000ull },
		/* tables near the top of a 52-bit PA space */
		{ "5-level, tables above 2^51", 57, 52, 0, 0xffff000000000ull,
		  0x123456789a000ull },
	};
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct slat_config cfg = npt(tc[i].ia, tc[i].pa, tc[i].levels);
		check_table_chain(&cfg, tc[i].pa_base, tc[i].ipa, 0x1000,
				  table_link_x86, 0x7, tc[i].what);
	}
}

/*
 * The 5-level example written out: one page at IPA 0, and what the CPU
 * writes on a walk that reads it ("Nested Table Walk": A in every entry it
 * uses), then on one that writes it (D in the leaf).
 */
static void five_level_walk_and_the_cpu_updates(void **state)
{
	(void)state;
	struct slat_config cfg = npt(57, 52, 0);
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000), SLAT_OK);
	assert_int_equal(f->t.geo.start_level, -1);
	fx_topup(f, 4);
	/* popped in this order: PML4, PDP, PD, PT */
	uint64_t pml4 = fx_pa_of(f, f->cache.pages[3]);
	uint64_t pt = fx_pa_of(f, f->cache.pages[0]);
	assert_int_equal(fx_map(f, 0, 0x1000, 0x5000, SLAT_RW, 0), SLAT_OK);
	/* PML5[0] -> PML4 with P|R/W|U/S */
	assert_int_equal(((uint64_t *)f->t.root)[0], pml4 | 0x7);
	/* PT[0]: PA 0x5000, RW, A, D, NX */
	assert_int_equal(fx_table(f, pt)[0], NX | 0x5067ull);

	/* clean it, then let the CPU read and write it */
	uint64_t bm = 0;
	assert_int_equal(slat_dirty_read(&f->t, slat_ipa(0), 0x1000, &bm, 1,
					 true, NULL),
			 1);
	assert_int_equal(fx_table(f, pt)[0], NX | 0x5027ull);
	struct slat_hw_result r;
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(0), SLAT_ACCESS_READ,
					&r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_NONE);
	assert_int_equal(slat_pa_v(r.pa), 0x5000);
	/* the walk set A (0x20) in the table entries it went through */
	assert_int_equal(((uint64_t *)f->t.root)[0], pml4 | 0x27);
	assert_int_equal(fx_table(f, pt)[0], NX | 0x5027ull);
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(0), SLAT_ACCESS_WRITE,
					&r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_NONE);
	assert_int_equal(fx_table(f, pt)[0], NX | 0x5067ull);
	/* NX: an instruction fetch faults, user or supervisor alike */
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(0),
					SLAT_ACCESS_EXEC_EL1, &r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_PERMISSION);
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(0),
					SLAT_ACCESS_EXEC_EL0, &r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_PERMISSION);
	/* write-protected: a write faults, a read does not */
	assert_int_equal(slat_wrprotect(&f->t, slat_ipa(0), 0x1000, NULL),
			 SLAT_OK);
	assert_int_equal(fx_table(f, pt)[0], NX | 0x5065ull); /* D stays */
	assert_int_equal(slat_hw_access(&f->t, slat_ipa(0), SLAT_ACCESS_WRITE,
					&r),
			 SLAT_OK);
	assert_int_equal(r.fault, SLAT_FAULT_PERMISSION);
	if (checker_full(&f->ck, NULL))
		fail_msg("%s", f->ck.msg);
	fx_fini(f);
	free(f);
}

/* nCR3 is the root's PA, PWT and PCD clear; NP_ENABLE is VMCB bit 0. */
static void ncr3_is_the_root(void **state)
{
	(void)state;
	static const struct {
		uint8_t ia, pa, levels;
		uint64_t pa_base;
	} tc[] = {
		{ 48, 48, 0, 0x80000000ull },
		{ 57, 52, 0, 0xffff000000000ull },
		{ 40, 48, 5, 0x100000000ull },
	};
	assert_int_equal(SLAT_NPT_NP_ENABLE, 1);
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct slat_config cfg = npt(tc[i].ia, tc[i].pa, tc[i].levels);
		struct fx *f = malloc(sizeof(*f));
		assert_int_equal(fx_init_cfg(f, &cfg, tc[i].pa_base), SLAT_OK);
		uint64_t root = fx_pa_of(f, f->t.root);
		assert_int_equal(slat_npt_ncr3(&f->t), root);
		assert_int_equal(root & 0xfff, 0);
		/* the other formats' registers are 0 for it */
		assert_int_equal(slat_ept_eptp(&f->t), 0);
		assert_int_equal(slat_arm_s2_vttbr(&f->t, 1, false), 0);
		fx_fini(f);
		free(f);
	}
	/* and nCR3 is 0 for an EPT table */
	struct slat_config ept = { .format = SLAT_FMT_EPT, .granule = 4096,
				   .ia_bits = 48 };
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &ept, 0x80000000), SLAT_OK);
	assert_int_equal(slat_npt_ncr3(&f->t), 0);
	assert_int_not_equal(slat_ept_eptp(&f->t), 0);
	fx_fini(f);
	free(f);
	assert_int_equal(slat_npt_ncr3(NULL), 0);
}

/* ------------------------------------------------------------ geometry */

struct geo_case {
	uint8_t ia, pa, levels;
	int start;
	uint32_t root_entries;
	uint8_t want_pa; /* pa_bits after the default */
};

/* docs/design.md, "AMD NPT encoding used": 4-level up to 48 bits,
 * 5-level above (or asked for); one root page of 512 entries, of which
 * 2^(ia - shift(start)) are in use. */
static const struct geo_case geos[] = {
	{ 32, 0, 0, 0, 1, 48 },     /* 2^32 < 2^39: one PML4 entry */
	{ 40, 0, 0, 0, 2, 48 },
	{ 46, 46, 0, 0, 128, 46 },
	{ 48, 0, 0, 0, 512, 48 },
	{ 48, 52, 0, 0, 512, 52 },
	{ 49, 0, 0, -1, 2, 52 },    /* the PML5 resolves bit 48 */
	{ 57, 0, 0, -1, 512, 52 },
	{ 40, 48, 5, -1, 1, 48 },   /* LA57 host, a small guest */
	{ 48, 48, 4, 0, 512, 48 },
};

static void geometry_of_4_and_5_level_walks(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(geos) / sizeof(geos[0]); i++) {
		const struct geo_case *c = &geos[i];
		struct slat_config cfg = npt(c->ia, c->pa, c->levels);
		print_message("  ia %u pa %u levels %u\n", c->ia, c->pa,
			      c->levels);
		check_x86_walk_geometry(&cfg, c->start, c->root_entries,
					c->want_pa, "npt");
	}
}

static void unsupported_configurations_are_refused(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		uint32_t granule;
		uint8_t ia, pa, levels;
		uint32_t features;
	} bad[] = {
		{ "granule 16K", 16384, 48, 48, 0, AD },
		{ "granule 64K", 65536, 48, 48, 0, AD },
		{ "ia 58 (beyond a 5-level walk)", 4096, 58, 52, 0, AD },
		{ "ia 31", 4096, 31, 48, 0, AD },
		{ "pa 53", 4096, 48, 53, 0, AD },
		{ "4 levels for 49 bits", 4096, 49, 52, 4, AD },
		{ "3 levels", 4096, 39, 48, 3, AD },
		/* the CPU always sets A and D: a table must know it */
		{ "without SLAT_FEAT_HWDIRTY", 4096, 48, 48, 0, 0 },
		{ "EPT's MBEC", 4096, 48, 48, 0, AD | SLAT_FEAT_EPT_MBEC },
		{ "EPT's execute-only", 4096, 48, 48, 0,
		  AD | SLAT_FEAT_EPT_XONLY },
		{ "FWB is Arm's", 4096, 48, 48, 0, AD | SLAT_FEAT_FWB },
		{ "LPA2 is Arm's", 4096, 48, 48, 0, AD | SLAT_FEAT_LPA2 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slat_config cfg = npt(bad[i].ia, bad[i].pa,
					     bad[i].levels);
		cfg.granule = bad[i].granule;
		cfg.features = bad[i].features;
		print_message("  %s\n", bad[i].what);
		assert_true(fx_config_refused(&cfg, &check_npt));
	}
}

/*
 * Attributes a nested leaf cannot carry, refused with the table unchanged:
 * no read (P is read), execute for one privilege only (one NX bit, every
 * nested access a user access), execute on UC, EPT's ignore-PAT and #VE
 * bits, memory type 3.
 */
static void unexpressible_attributes_are_refused(void **state)
{
	(void)state;
	static const uint32_t bad[] = {
		SLAT_W,
		SLAT_X,
		SLAT_W | SLAT_X,
		SLAT_MT_NORMAL_NC,
		SLAT_R | SLAT_XU,
		SLAT_R | SLAT_XK,
		SLAT_R | SLAT_X | SLAT_MT_DEVICE,
		SLAT_R | SLAT_MT_MASK,
		SLAT_R | SLAT_IPAT,
		SLAT_R | SLAT_SVE,
		SLAT_R | SLAT_USER,
		SLAT_R | SLAT_NG,
		SLAT_RW | SLAT_DIRTY,
		SLAT_R | SLAT_YOUNG,
	};
	struct slat_config cfg = npt(48, 48, 0);
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000), SLAT_OK);
	assert_int_equal(fx_map(f, 0x200000, 0x1000, 0x5000, SLAT_R, 0),
			 SLAT_OK);
	uint64_t pages = slat_hosted_table_pages(&f->h);
	struct slat_leaf before, after;
	assert_int_equal(fx_lookup(f, 0x200000, &before), SLAT_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("  attrs %#x\n", bad[i]);
		assert_int_equal(fx_map(f, 0x1000, 0x1000, 0x5000, bad[i], 0),
				 SLAT_E_ATTR);
		/* over an existing leaf too: it stays as it was */
		assert_int_equal(fx_map(f, 0x200000, 0x1000, 0x6000, bad[i], 0),
				 SLAT_E_ATTR);
		assert_false(check_npt.attrs_ok(&cfg, bad[i]));
		assert_int_equal(slat_hosted_table_pages(&f->h), pages);
		assert_int_equal(fx_lookup(f, 0x200000, &after), SLAT_OK);
		assert_int_equal(after.pte, before.pte);
		assert_int_equal(fx_lookup(f, 0x1000, &after), SLAT_E_NOENT);
	}
	static const uint32_t good[] = {
		SLAT_R, SLAT_RW, SLAT_RWX, SLAT_R | SLAT_X,
		SLAT_RW | SLAT_MT_NORMAL_NC, SLAT_RW | SLAT_MT_DEVICE,
		SLAT_RWX | SLAT_SW(5),
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_true(check_npt.attrs_ok(&cfg, good[i]));
		/* a new PA each time: the same PA and memory type would
		 * keep the leaf (map's "only permissions differ" rule) */
		assert_int_equal(fx_map(f, 0x1000, 0x1000,
					0x10000 + 0x1000 * i, good[i], 0),
				 SLAT_OK);
		struct slat_leaf l;
		assert_int_equal(fx_lookup(f, 0x1000, &l), SLAT_OK);
		assert_int_equal(l.attrs & ~(SLAT_YOUNG | SLAT_DIRTY), good[i]);
	}
	if (checker_full(&f->ck, NULL))
		fail_msg("%s", f->ck.msg);
	fx_fini(f);
	free(f);
}

/* The checker refuses what the APM reserves and what libslat never
 * writes (hand-made entries). */
static void checker_refuses_malformed_entries(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		int level;
		uint64_t pte;
	} bad[] = {
		{ "leaf without U/S", 3, 0x12345063ull },
		{ "P clear, not 0", 3, 0x12345066ull },
		{ "PS in a PML4 entry", 0, 0x12345087ull },
		{ "table entry without U/S", 2, 0x12345003ull },
		{ "table entry without R/W", 1, 0x12345005ull },
		{ "table entry with NX", 2, NX | 0x12345007ull },
		{ "table entry with D", 2, 0x12345047ull },
		{ "table entry with PCD", 2, 0x12345017ull },
		{ "host PAT index 2 (UC-)", 3, 0x12345077ull },
		{ "PAT bit in a PTE (index 4)", 3, 0x123450e7ull },
		{ "PAT bit 12 in a 2M page (index 4)", 2, 0x802010e7ull },
		{ "2M page with PA bit 13 set", 2, 0x802020e7ull },
		{ "PA beyond pa_bits 48", 3, 0x0001000000000067ull },
		{ "executable UC", 3, 0x1234507full },
		{ "G (bit 8) in a leaf", 3, NX | 0x12345167ull },
		{ "AVL bit 11 in a leaf", 3, NX | 0x12345867ull },
		{ "protection key bits", 3, NX | 0x0800000012345067ull },
	};
	struct slat_config cfg = npt(48, 48, 0);
	struct check_geo g;
	struct check_desc d;
	char why[256];
	assert_int_equal(check_npt.geometry(&cfg, &g), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("  %s\n", bad[i].what);
		assert_int_equal(check_npt.decode(&g, &cfg, bad[i].pte,
						  bad[i].level, &d, why,
						  sizeof(why)),
				 CHECK_DESC_BAD);
	}
	/* the CPU sets A in the table entries it walks */
	assert_int_equal(check_npt.decode(&g, &cfg, 0x12345027ull, 2, &d, why,
					  sizeof(why)),
			 CHECK_DESC_TABLE);
	assert_int_equal(d.oa, 0x12345000ull);
}

/*
 * The format's rules on invalidation: a 2 MiB page becomes a table with
 * break-before-make (AMD erratum 383), the one ASID flush made while the
 * entry is invalid; relax flushes (a nested page fault invalidates
 * nothing), where EPT would not; nothing is ever invalidated by address.
 */
static void split_breaks_first_and_relax_flushes(void **state)
{
	(void)state;
	struct slat_config cfg = npt(48, 48, 0);
	struct fx *f = malloc(sizeof(*f));
	assert_int_equal(fx_init_cfg(f, &cfg, 0x80000000), SLAT_OK);
	assert_int_equal(fx_map(f, M2, M2, 0x40000000, SLAT_R, 0), SLAT_OK);
	fx_topup(f, 1);
	fx_clear_events(f);
	f->watching = true;
	f->watch = M2 + 0x5000;
	assert_int_equal(slat_split(&f->t, slat_ipa(M2), M2, 0,
				    SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	assert_int_equal(f->t.stats.written[SLAT_WRITE_BREAK], 1);
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_VMID), 1);
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_IPA) +
				 fx_count(f, SLAT_EV_TLBI_RANGE),
			 0);
	for (size_t i = 0; i < f->nev; i++)
		if (f->ev[i].ev.kind == SLAT_EV_TLBI_VMID)
			assert_false(f->ev[i].mapped);
	struct slat_leaf l;
	assert_int_equal(fx_lookup(f, M2 + 0x5000, &l), SLAT_OK);
	assert_int_equal(l.level, 3);
	assert_int_equal(slat_pa_v(l.pa), 0x40005000);

	fx_clear_events(f);
	assert_int_equal(slat_relax(&f->t, slat_ipa(M2 + 0x5000), 0x1000,
				    SLAT_RW, NULL),
			 SLAT_OK);
	assert_int_equal(fx_count(f, SLAT_EV_TLBI_VMID), 1);
	assert_int_equal(f->t.stats.tlbi[SLAT_TLBI_VMID], 1);
	if (checker_full(&f->ck, NULL))
		fail_msg("%s", f->ck.msg);
	fx_fini(f);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(npt_leaves_match_the_apm),
		cmocka_unit_test(mkold_clears_only_the_accessed_bit),
		cmocka_unit_test(table_entries_hold_p_rw_us_and_the_next_table),
		cmocka_unit_test(five_level_walk_and_the_cpu_updates),
		cmocka_unit_test(ncr3_is_the_root),
		cmocka_unit_test(geometry_of_4_and_5_level_walks),
		cmocka_unit_test(unsupported_configurations_are_refused),
		cmocka_unit_test(unexpressible_attributes_are_refused),
		cmocka_unit_test(checker_refuses_malformed_entries),
		cmocka_unit_test(split_breaks_first_and_relax_flushes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
