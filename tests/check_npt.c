/* SPDX-License-Identifier: MIT */
/*
 * The checker's own knowledge of AMD nested page tables, written from the
 * AMD64 Architecture Programmer's Manual vol. 2 ("Nested Paging": "Nested
 * Table Walk", "Combining Memory Types, MTRRs"; "Long-Mode Page
 * Translation", its 4-Kbyte, 2-Mbyte and 1-Gbyte entry figures;
 * "Page-Translation-Table Entry Fields"; "Page-Attribute Table Mechanism")
 * and the choices docs/design.md fixes. Independent of src/format/npt.c.
 *
 * Levels: PML5 -1 (with the host's CR4.LA57), PML4 0, PDP 1, PD 2, PT 3;
 * 512 entries of 8 bytes per 4 KiB table; one root page. An entry is
 * present when P (bit 0) is set; libslat leaves every other entry exactly
 * 0, or (shared mode, during break-before-make) the locked marker.
 *
 *   bit 0      P     present (and readable: a present page can be read)
 *   bit 1      R/W   write
 *   bit 2      U/S   user; every nested access is a user access, so an
 *                    entry without it faults on every access
 *   bit 3      PWT   } with PAT, the host PAT entry of the page; in table
 *   bit 4      PCD   } entries the type of the next table's reads
 *   bit 5      A     accessed: the CPU sets it in every entry it walks
 *   bit 6      D     leaves: dirty, set by the CPU on a write; table
 *                    entries: ignored (libslat writes 0)
 *   bit 7      PS in PDP/PD entries: 1 maps a 1 GiB / 2 MiB page; PML4
 *              and PML5: reserved (must be 0); PT: the PAT bit
 *   bit 8      G     leaves: global (ignored by nested walks; libslat 0)
 *   bits 11:9  AVL   available to software (libslat: 0 in valid entries)
 *   bit 12     PAT of a 1 GiB or 2 MiB page (otherwise an address bit)
 *   bits 51:12 PA of the next table or of the page; bits 51:pa_bits
 *              reserved; below the page size reserved (2 MiB: 20:13,
 *              1 GiB: 29:13, bit 12 being PAT)
 *   bits 62:52 AVL (62:59 the protection key of a present leaf where
 *              keys apply): libslat's four software bits in 55:52
 *   bit 63     NX: no instruction fetch (EFER.NXE on), at every level
 *
 * libslat writes PAT:PCD:PWT = 000 (host PAT 0, WB) for Normal, 001 (1,
 * WC) for Normal non-cacheable, 011 (3, UC) for Device; the host PAT is
 * Linux's (WB, WC, UC-, UC, WB, WP, UC-, WT). Table entries: P|R/W|U/S
 * and the next table's PA, and A once the CPU walked them.
 */
#include <inttypes.h>
#include <stdio.h>

#include "checker.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))

#define N_P BIT(0)
#define N_RW BIT(1)
#define N_US BIT(2)
#define N_PWT BIT(3)
#define N_PCD BIT(4)
#define N_A BIT(5)
#define N_D BIT(6)
#define N_PS BIT(7)
#define N_PAT_PT BIT(7)
#define N_G BIT(8)
#define N_AVL GENMASK(11, 9)
#define N_PAT_BIG BIT(12)
#define N_PA GENMASK(51, 12)
#define N_SW GENMASK(55, 52)
#define N_NX BIT(63)

static int npt_geometry(const struct slat_config *cfg, struct check_geo *g)
{
	/* A and D are always the CPU's: the table must say so, and nothing
	 * else (no MBEC, no execute-only, no Arm feature) exists here */
	if (cfg->features != SLAT_FEAT_HWDIRTY)
		return SLAT_E_CONFIG;
	return check_x86_geometry(cfg, g);
}

static enum check_desc_kind bad(char *why, size_t n, const char *what,
				uint64_t pte, int level)
{
	snprintf(why, n, "%s (NPT entry %#018" PRIx64 " at level %d)", what,
		 pte, level);
	return CHECK_DESC_BAD;
}

/* A table entry: P, R/W and U/S (the leaf alone restricts), A if walked. */
static enum check_desc_kind table_entry(uint64_t pte, int level, char *why,
					size_t n)
{
	if ((pte & (N_P | N_RW | N_US)) != (N_P | N_RW | N_US))
		return bad(why, n,
			   "table entry without P, R/W and U/S (it would "
			   "restrict every leaf below)", pte, level);
	if (pte & ~(N_P | N_RW | N_US | N_A | N_PA))
		return bad(why, n,
			   "table entry with bits other than P, R/W, U/S, A "
			   "and the address", pte, level);
	return CHECK_DESC_TABLE;
}

/* The host PAT index a leaf selects, and what libslat means by it. */
static int leaf_memtype(uint64_t pte, int level, uint32_t *attrs)
{
	uint64_t pat = level == 3 ? (pte & N_PAT_PT) != 0 : (pte & N_PAT_BIG) != 0;
	unsigned index = (unsigned)(pat << 2 | ((pte & N_PCD) ? 2 : 0) |
				    ((pte & N_PWT) ? 1 : 0));
	switch (index) {
	case 0: *attrs |= SLAT_MT_NORMAL; return 0;
	case 1: *attrs |= SLAT_MT_NORMAL_NC; return 0;
	case 3: *attrs |= SLAT_MT_DEVICE; return 0;
	default: return -1;
	}
}

static enum check_desc_kind leaf_entry(const struct check_geo *g,
				       uint64_t pte, int level,
				       struct check_desc *d, char *why,
				       size_t n)
{
	uint64_t size = 1ull << check_level_shift(g, level);
	/* bit 12 is PAT in a large leaf, never part of its address */
	uint64_t oa = pte & N_PA & ~(size - 1);
	if (pte & N_PA & (size - 1) & ~N_PAT_BIG)
		return bad(why, n,
			   "address bits below the page size set (reserved)",
			   pte, level);
	if (!(pte & N_US))
		return bad(why, n,
			   "leaf without U/S (every nested access is a user "
			   "access: it would always fault)", pte, level);
	if (pte & (N_G | N_AVL))
		return bad(why, n, "leaf with G or AVL 11:9 set (libslat: 0)",
			   pte, level);
	if (pte & GENMASK(62, 56))
		return bad(why, n, "leaf with bits 62:56 set (libslat: 0)",
			   pte, level);
	uint32_t attrs = SLAT_R;
	if (leaf_memtype(pte, level, &attrs))
		return bad(why, n,
			   "host PAT index other than 0 (WB), 1 (WC) or 3 "
			   "(UC)", pte, level);
	if (pte & N_RW)
		attrs |= SLAT_W;
	if (!(pte & N_NX))
		attrs |= SLAT_X;
	if (SLAT_MT(attrs) == SLAT_MT_DEVICE && (attrs & SLAT_X))
		return bad(why, n, "executable Device (UC) memory", pte, level);
	if (pte & N_A)
		attrs |= SLAT_YOUNG;
	if (pte & N_D)
		attrs |= SLAT_DIRTY;
	attrs |= SLAT_SW((pte & N_SW) >> 52);
	d->kind = CHECK_DESC_LEAF;
	d->oa = oa;
	d->attrs = attrs;
	return CHECK_DESC_LEAF;
}

static enum check_desc_kind npt_decode(const struct check_geo *g,
				       const struct slat_config *cfg,
				       uint64_t pte, int level,
				       struct check_desc *d, char *why,
				       size_t n)
{
	(void)cfg;
	d->kind = CHECK_DESC_INVALID;
	d->oa = 0;
	d->attrs = 0;
	if (pte == 0)
		return CHECK_DESC_INVALID;
	if (!(pte & N_P))
		return bad(why, n, "not present (P clear) but not 0", pte,
			   level);
	if (level < g->start_level || level > 3)
		return bad(why, n, "entry at a level outside the walk", pte,
			   level);
	if ((pte & N_PA) >> g->pa_bits)
		return bad(why, n,
			   "address bits at or above pa_bits set (reserved)",
			   pte, level);
	bool page_level = level >= 1 && (g->leaf_levels & BIT(level));
	if (level == 3 || ((pte & N_PS) && page_level))
		return leaf_entry(g, pte, level, d, why, n);
	if (pte & N_PS)
		return bad(why, n,
			   level <= 0 ? "PS set in a PML4/PML5 entry (reserved)"
				      : "PS set where no page is allowed",
			   pte, level);
	if (table_entry(pte, level, why, n) == CHECK_DESC_BAD)
		return CHECK_DESC_BAD;
	d->kind = CHECK_DESC_TABLE;
	d->oa = pte & N_PA;
	return CHECK_DESC_TABLE;
}

/*
 * What map accepts: P is read, so every leaf reads; one NX bit for every
 * nested access (user), so execute is all or nothing; Device (UC) memory
 * is never executable; none of EPT's or Arm's extra bits.
 */
static bool npt_attrs_ok(const struct slat_config *cfg, uint32_t attrs)
{
	(void)cfg;
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK))
		return false;
	uint32_t mt = SLAT_MT(attrs), x = attrs & SLAT_X;
	if (mt == SLAT_MT_MASK)
		return false;
	if (x && mt == SLAT_MT_DEVICE)
		return false;
	if (x && x != SLAT_X)
		return false;
	return (attrs & SLAT_R) != 0;
}

static bool npt_separate_exec(const struct slat_config *cfg)
{
	(void)cfg;
	return false;
}

static enum check_af npt_hw_af(const struct slat_config *cfg)
{
	(void)cfg;
	return CHECK_AF_HW_SETS;
}

const struct check_format check_npt = {
	.name = "npt",
	.id = SLAT_FMT_NPT,
	.geometry = npt_geometry,
	.decode = npt_decode,
	.attrs_ok = npt_attrs_ok,
	/* x86 caches are coherent with DMA and instruction fetch. */
	.dcache_on_install = check_no_dcache,
	.icache_on_exec = check_no_icache,
	.separate_exec = npt_separate_exec,
	.extra_attrs = 0,
	.tlbi_by_address = false,
	/* AMD erratum 383: never a large page to a table in place */
	.split_bbm = true,
	.wrprotect_keeps_dirty = true,
	.hw_af = npt_hw_af,
	/* a nested page fault drops nothing the TLB holds */
	.fault_invalidates = false,
};
