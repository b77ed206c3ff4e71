/* SPDX-License-Identifier: MIT */
/*
 * The checker's own knowledge of Intel EPT paging-structure entries,
 * written from the Intel SDM (Vol. 3C, "EPT Translation Mechanism", the
 * formats of EPT paging-structure entries, "EPT Misconfigurations",
 * "Accessed and Dirty Flags for EPT", "EPT and Memory Typing") and the
 * choices docs/design.md fixes. Independent of src/format/ept.c.
 *
 * Levels: PML5 -1 (5-level only), PML4 0, PDPT 1, PD 2, PT 3; 512 entries
 * of 8 bytes per 4 KiB table; one root page. An entry is present when any
 * of bits 2:0 is set; libslat leaves every other entry exactly 0.
 *
 *   bit 0      R     read
 *   bit 1      W     write; W without R is a misconfiguration
 *   bit 2      X     execute (supervisor execute with MBEC); X without R
 *                    is a misconfiguration unless the CPU supports
 *                    execute-only translations
 *   bits 5:3   leaves: memory type, 0 UC, 1 WC, 4 WT, 5 WP, 6 WB (2, 3, 7
 *              are misconfigurations); libslat writes WB for Normal, WC
 *              for Normal non-cacheable, UC for Device.
 *              non-leaf entries: reserved, must be 0
 *   bit 6      leaves: ignore PAT; non-leaf: reserved
 *   bit 7      PD/PDPT: 1 maps a 2 MiB / 1 GiB page; PML4/PML5: reserved;
 *              PT: ignored (libslat writes 0)
 *   bit 8      A (with A/D in the EPTP; otherwise ignored: libslat keeps
 *              its software access flag there). The CPU sets it in
 *              non-leaf entries too, so a table entry may carry it then.
 *   bit 9      leaves: D (with A/D; otherwise ignored); non-leaf: ignored
 *              (libslat writes 0)
 *   bit 10     XU, user execute, with MBEC; ignored without (libslat: 0)
 *   bit 11     ignored (libslat: 0)
 *   bits 51:12 PA of the next table or of the page; bits 51:pa_bits are
 *              reserved; below the page size (2 MiB: 20:12, 1 GiB: 29:12)
 *              reserved
 *   bits 55:52 ignored by the CPU: libslat's four software bits (leaves)
 *   bits 62:56 not used by libslat: 0
 *   bit 63     leaves: suppress #VE; non-leaf: ignored (libslat: 0)
 * Table entries: R|W|X (and XU with MBEC) and the next table's PA.
 */
#include <inttypes.h>
#include <stdio.h>

#include "checker.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))

#define E_R BIT(0)
#define E_W BIT(1)
#define E_X BIT(2)
#define E_MT GENMASK(5, 3)
#define E_IPAT BIT(6)
#define E_PS BIT(7)
#define E_A BIT(8)
#define E_D BIT(9)
#define E_XU BIT(10)
#define E_PA GENMASK(51, 12)
#define E_SW GENMASK(55, 52)
#define E_SVE BIT(63)

static bool feat(const struct slat_config *cfg, uint32_t f)
{
	return (cfg->features & f) != 0;
}

int check_x86_geometry(const struct slat_config *cfg, struct check_geo *g)
{
	/* 4 KiB tables only; 4-level walks resolve 48 bits, 5-level 57 */
	if (cfg->granule != 4096)
		return SLAT_E_CONFIG;
	unsigned ia = cfg->ia_bits;
	unsigned pa = cfg->pa_bits ? cfg->pa_bits : (ia > 48 ? 52 : 48);
	if (ia < 32 || ia > 57 || pa < 32 || pa > 52)
		return SLAT_E_CONFIG;
	g->granule_shift = 12;
	g->bits_per_level = 9;
	g->entries = 512;
	/* EPTP[5:3] = walk length - 1, or the host's CR4.LA57 for NPT: 4
	 * resolves 48 bits, 5 resolves 57 (a smaller space uses the PML5's
	 * first entries) */
	unsigned walk = cfg->levels ? cfg->levels : ia > 48 ? 5 : 4;
	if (walk < 4 || walk > 5 || (walk == 4 && ia > 48))
		return SLAT_E_CONFIG;
	g->start_level = 4 - (int)walk;
	g->ia_bits = ia;
	g->pa_bits = pa;
	unsigned top = check_level_shift(g, g->start_level);
	g->root_entries = ia > top ? 1u << (ia - top) : 1;
	g->root_pages = 1;
	/* 4 KiB pages, 2 MiB pages (PD), 1 GiB pages (PDPT) */
	g->leaf_levels = BIT(1) | BIT(2) | BIT(3);
	return 0;
}

static int ept_geometry(const struct slat_config *cfg, struct check_geo *g)
{
	if (cfg->features & ~(SLAT_FEAT_HWDIRTY | SLAT_FEAT_EPT_MBEC |
			      SLAT_FEAT_EPT_XONLY))
		return SLAT_E_CONFIG;
	return check_x86_geometry(cfg, g);
}

static enum check_desc_kind bad(char *why, size_t n, const char *what,
				uint64_t pte, int level)
{
	snprintf(why, n, "%s (EPT entry %#018" PRIx64 " at level %d)", what,
		 pte, level);
	return CHECK_DESC_BAD;
}

/* Bits 2:0 (and XU with MBEC): the access rights of an entry. */
static enum check_desc_kind check_rights(const struct slat_config *cfg,
					 uint64_t pte, int level, char *why,
					 size_t n)
{
	if ((pte & E_W) && !(pte & E_R))
		return bad(why, n,
			   "write without read (EPT misconfiguration)", pte,
			   level);
	if ((pte & E_X) && !(pte & E_R) && !feat(cfg, SLAT_FEAT_EPT_XONLY))
		return bad(why, n,
			   "execute-only without execute-only support (EPT "
			   "misconfiguration)",
			   pte, level);
	if ((pte & E_XU) && !feat(cfg, SLAT_FEAT_EPT_MBEC))
		return bad(why, n, "XU (bit 10) set without MBEC", pte, level);
	return CHECK_DESC_LEAF;
}

static enum check_desc_kind ept_decode(const struct check_geo *g,
				       const struct slat_config *cfg,
				       uint64_t pte, int level,
				       struct check_desc *d, char *why,
				       size_t n)
{
	d->kind = CHECK_DESC_INVALID;
	d->oa = 0;
	d->attrs = 0;
	if (pte == 0)
		return CHECK_DESC_INVALID;
	if (!(pte & (E_R | E_W | E_X)))
		return bad(why, n, "not present (bits 2:0 clear) but not 0",
			   pte, level);
	if (level < g->start_level || level > 3)
		return bad(why, n, "entry at a level outside the walk", pte,
			   level);
	uint64_t oa = pte & E_PA;
	if (oa >> g->pa_bits)
		return bad(why, n,
			   "address bits at or above pa_bits set (reserved)",
			   pte, level);
	if (check_rights(cfg, pte, level, why, n) == CHECK_DESC_BAD)
		return CHECK_DESC_BAD;

	/* PS makes a page only where one is allowed (PD, PDPT) */
	bool page_level = level >= 0 && (g->leaf_levels & BIT(level));
	bool leaf = level == 3 || ((pte & E_PS) && page_level);
	if (!leaf) {
		const char *what =
			level <= 0 ? "bit 7 set in a PML4/PML5 entry (reserved)"
				   : "PS set where no page is allowed";
		if (pte & E_PS)
			return bad(why, n, what, pte, level);
		if (pte & GENMASK(6, 3))
			return bad(why, n,
				   "bits 6:3 set in a non-leaf entry (reserved:"
				   " memory type and ignore-PAT are for "
				   "leaves)",
				   pte, level);
		bool mbec = feat(cfg, SLAT_FEAT_EPT_MBEC);
		uint64_t want = E_R | E_W | E_X | (mbec ? E_XU : 0);
		uint64_t allowed = want | E_PA |
				   (feat(cfg, SLAT_FEAT_HWDIRTY) ? E_A : 0);
		if ((pte & (E_R | E_W | E_X | E_XU)) != want)
			return bad(why, n,
				   "table entry without full rights (RWX, and "
				   "XU with MBEC)",
				   pte, level);
		if (pte & ~allowed)
			return bad(why, n,
				   "table entry with bits other than the "
				   "rights and the address",
				   pte, level);
		d->kind = CHECK_DESC_TABLE;
		d->oa = oa;
		return CHECK_DESC_TABLE;
	}

	uint64_t size = 1ull << check_level_shift(g, level);
	if (oa & (size - 1))
		return bad(why, n,
			   "address bits below the page size set (reserved)",
			   pte, level);
	if (level == 3 && (pte & E_PS))
		return bad(why, n, "bit 7 set in a PT entry (libslat writes 0)",
			   pte, level);
	uint64_t allowed = E_R | E_W | E_X | E_MT | E_IPAT | E_PS | E_A | E_D |
			   E_PA | E_SW | E_SVE |
			   (feat(cfg, SLAT_FEAT_EPT_MBEC) ? E_XU : 0);
	if (pte & ~allowed)
		return bad(why, n, "leaf with bits libslat does not use set",
			   pte, level);

	uint32_t attrs = 0;
	switch ((pte & E_MT) >> 3) {
	case 6: attrs |= SLAT_MT_NORMAL; break;
	case 1: attrs |= SLAT_MT_NORMAL_NC; break;
	case 0: attrs |= SLAT_MT_DEVICE; break;
	case 4:
	case 5:
		return bad(why, n,
			   "memory type WT/WP: valid, but not one libslat "
			   "writes",
			   pte, level);
	default:
		return bad(why, n,
			   "memory type 2, 3 or 7 (EPT misconfiguration)", pte,
			   level);
	}
	if (pte & E_R)
		attrs |= SLAT_R;
	if (pte & E_W)
		attrs |= SLAT_W;
	if (feat(cfg, SLAT_FEAT_EPT_MBEC)) {
		if (pte & E_X)
			attrs |= SLAT_XK;
		if (pte & E_XU)
			attrs |= SLAT_XU;
	} else if (pte & E_X) {
		attrs |= SLAT_X;
	}
	if (SLAT_MT(attrs) == SLAT_MT_DEVICE && (attrs & SLAT_X))
		return bad(why, n, "executable Device (UC) memory", pte, level);
	if (pte & E_IPAT)
		attrs |= SLAT_IPAT;
	if (pte & E_SVE)
		attrs |= SLAT_SVE;
	if (pte & E_A)
		attrs |= SLAT_YOUNG;
	if ((pte & E_D) && feat(cfg, SLAT_FEAT_HWDIRTY))
		attrs |= SLAT_DIRTY;
	attrs |= SLAT_SW((pte & E_SW) >> 52);

	d->kind = CHECK_DESC_LEAF;
	d->oa = oa;
	d->attrs = attrs;
	return CHECK_DESC_LEAF;
}

/*
 * What map accepts: the attributes a present, well-formed leaf can carry.
 * W needs R; a leaf needs R or supervisor execute (bits 2:0 not all clear);
 * X without R needs execute-only support; execute at one privilege only
 * needs MBEC; Device (UC) memory is never executable.
 */
static bool ept_attrs_ok(const struct slat_config *cfg, uint32_t attrs)
{
	if (attrs & ~SLAT_ATTR_INPUT)
		return false;
	uint32_t mt = SLAT_MT(attrs), x = attrs & SLAT_X;
	if (mt == SLAT_MT_MASK)
		return false;
	if (x && mt == SLAT_MT_DEVICE)
		return false;
	if ((attrs & SLAT_W) && !(attrs & SLAT_R))
		return false;
	if (x && x != SLAT_X && !feat(cfg, SLAT_FEAT_EPT_MBEC))
		return false;
	if (!(attrs & (SLAT_R | SLAT_XK)))
		return false;
	if (!(attrs & SLAT_R) && !feat(cfg, SLAT_FEAT_EPT_XONLY))
		return false;
	return true;
}

static bool ept_separate_exec(const struct slat_config *cfg)
{
	return feat(cfg, SLAT_FEAT_EPT_MBEC);
}

static enum check_af ept_hw_af(const struct slat_config *cfg)
{
	return feat(cfg, SLAT_FEAT_HWDIRTY) ? CHECK_AF_HW_SETS
					    : CHECK_AF_IGNORED;
}

const struct check_format check_ept = {
	.name = "ept",
	.id = SLAT_FMT_EPT,
	.geometry = ept_geometry,
	.decode = ept_decode,
	.attrs_ok = ept_attrs_ok,
	/* x86 caches are coherent with DMA and instruction fetch. */
	.dcache_on_install = check_no_dcache,
	.icache_on_exec = check_no_icache,
	.separate_exec = ept_separate_exec,
	.extra_attrs = SLAT_IPAT | SLAT_SVE,
	.tlbi_by_address = false,
	.split_bbm = false,
	/* SDM: an EPT violation invalidates what translated its address */
	.fault_invalidates = true,
	.wrprotect_keeps_dirty = true,
	.hw_af = ept_hw_af,
};
