/* SPDX-License-Identifier: MIT */
/*
 * The checker's own knowledge of the Armv8-A VMSAv8-64 stage-1 descriptor
 * format (the EL1&0 regime, TTBR0_EL1/TTBR1_EL1), written from the
 * architecture (Arm ARM D8, "Translation table descriptor formats",
 * "Memory access control", "Memory region attributes", "Hardware management
 * of the Access flag and dirty state") and the choices docs/design.md fixes.
 * Independent of src/format/arm_s1.c and src/format/vmsa.h.
 *
 * Geometry: a walk resolves ia_bits with 4K, 16K or 64K granules, 8-byte
 * descriptors, (g - 3) bits per level and no concatenated start tables
 * (those are stage 2 only): levels = ceil((ia_bits - g) / (g - 3)), the
 * start table holding 2^(ia_bits - shift(start)) entries in one page.
 * Blocks: 4K at L1 (1 GiB) and L2 (2 MiB); 16K at L2 (32 MiB); 64K at L2
 * (512 MiB) and, with a 52-bit OA (FEAT_LPA), at L1 (4 TiB). L0 blocks
 * (4K, 512 GiB) and L1 blocks (16K, 64 GiB) need FEAT_LPA2 with
 * TCR_EL1.DS = 1, which also allows 52-bit VAs and OAs with 4K and 16K: a
 * 4K walk of 49 to 52 VA bits starts at level -1 (2 to 16 entries).
 *
 * Block and page descriptors:
 *   bits[1:0]  0b01 block (not at level 3, where it is reserved), 0b11 page
 *              at level 3; 0bX0 invalid (libslat leaves only all-zero ones)
 *   [4:2]      AttrIndx into MAIR_EL1, whose layout docs/design.md fixes:
 *              0 Normal WB (0xff), 1 Device-nGnRE (0x04), 2 Normal NC
 *              (0x44); other indexes are not programmed
 *   [5]        NS: 0 (Non-secure EL1&0: ignored; libslat writes 0)
 *   [7:6]      AP[2:1]: AP[1] EL0 access (SLAT_USER), AP[2] read-only.
 *              00 EL1 RW; 01 EL1 and EL0 RW; 10 EL1 RO; 11 EL1 and EL0 RO
 *   [9:8]      SH: 0b11; with DS = 1, OA[51:50] (TCR_EL1.SHn then gives
 *              the shareability)
 *   [10]       AF
 *   [11]       nG (SLAT_NG: the entry is tagged with the ASID)
 *   [47:g]     OA; with the 64K granule and a 52-bit OA, OA[51:48] in
 *              bits [15:12] (RES0 otherwise); OA bits below the block size
 *              are RES0
 *   [49:48]    RES0; with DS = 1 OA[49:48] (the OA field is [49:g])
 *   [50]       GP (FEAT_BTI): not used, 0
 *   [51]       DBM: only with hardware dirty state (TCR_EL1.HD), and then
 *              on every writable leaf: AP[2] = 1 writable-clean (the PE
 *              clears AP[2] on the first write), AP[2] = 0 dirty. Without
 *              HD libslat writes 0
 *   [52]       Contiguous: 0
 *   [53]       PXN, [54] UXN: executable at EL1 / EL0 when clear
 *   [58:55]    software
 *   [63:59]    PBHA and IGNORED bits: 0
 * Table descriptors: 0b11 | next table PA in the OA field; the
 * hierarchical controls (PXNTable, UXNTable, APTable, NSTable in [63:59])
 * and the ignored bits are 0.
 *
 * Permissions: a valid descriptor always lets EL1 read. EL0 instruction
 * fetch depends only on UXN (AP[1] = 0 with UXN = 0 is EL0 execute-only).
 * A location writable at EL0 (AP[2:1] = 0b01) is never executable at EL1:
 * the PE treats PXN as 1 there (check_arm_s1.hw_perms).
 * Device memory is mapped execute-never at both levels (an executable
 * Device region allows speculative instruction fetches from it).
 *
 * The EL2 translation regime with HCR_EL2.E2H = 0 (SLAT_FEAT_S1_EL2,
 * TTBR0_EL2) supports one Exception level (Arm ARM D8.4.1.2): AP[1] is
 * RES1 and only AP[2] gives permissions (Table D8-62), bit 54 is XN, the
 * one execute-never for EL2's own fetches (D8.4.1.2.3), PXN is RES0, and
 * with no ASID every translation is global (D8.16.3.1), nG RES0. So a
 * leaf always has AP[1] = 1, PXN = 0 and nG = 0; it decodes to SLAT_X
 * (XK and XU) when XN is clear, and never to SLAT_USER or SLAT_NG. No
 * EL0 access is translated by the regime (check_arm_s1.hw_perms).
 */
#include <inttypes.h>
#include <stdio.h>

#include "checker.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))

#define D_VALID BIT(0)
#define D_TYPE BIT(1)        /* table (L0-2) or page (L3) */
#define D_ATTRIDX GENMASK(4, 2)
#define D_NS BIT(5)
#define D_AP1 BIT(6)         /* EL0 access */
#define D_AP2 BIT(7)         /* read-only */
#define D_SH GENMASK(9, 8)
#define D_AF BIT(10)
#define D_NG BIT(11)
#define D_DBM BIT(51)
#define D_CONT BIT(52)
#define D_PXN BIT(53)
#define D_UXN BIT(54)
#define D_SW GENMASK(58, 55)

static int s1_geometry(const struct slat_config *cfg, struct check_geo *g)
{
	unsigned gs;
	switch (cfg->granule) {
	case 4096: gs = 12; break;
	case 16384: gs = 14; break;
	case 65536: gs = 16; break;
	default: return SLAT_E_CONFIG;
	}
	/* HA/HD, DS and the regime are the stage-1 choices (FWB, XNX and
	 * DIC are stage-2 or cache properties) */
	if (cfg->features &
	    ~(SLAT_FEAT_HWDIRTY | SLAT_FEAT_LPA2 | SLAT_FEAT_S1_EL2))
		return SLAT_E_CONFIG;
	bool ds = cfg->features & SLAT_FEAT_LPA2;
	if (ds && gs == 16)
		return SLAT_E_CONFIG; /* TCR_EL1.DS is RES0 with 64K */
	unsigned ia = cfg->ia_bits;
	unsigned pa = cfg->pa_bits ? cfg->pa_bits : (ia > 48 ? ia : 48);
	/* 52-bit VA (FEAT_LVA) and OA (FEAT_LPA) without LPA2: 64K only */
	unsigned max = gs == 16 || ds ? 52 : 48;
	if (ia < 32 || ia > max || pa < 32 || pa > max)
		return SLAT_E_CONFIG;

	unsigned bpl = gs - 3;
	unsigned levels = (ia - gs + bpl - 1) / bpl;
	if (levels < 2)
		levels = 2; /* no walk starts at level 3 here */
	/* TnSZ alone fixes the start level: no other count is a walk */
	if (cfg->levels && cfg->levels != levels)
		return SLAT_E_CONFIG;
	g->granule_shift = gs;
	g->bits_per_level = bpl;
	g->entries = 1u << bpl;
	g->start_level = 4 - (int)levels;
	g->ia_bits = ia;
	g->pa_bits = pa;
	unsigned top = check_level_shift(g, g->start_level);
	g->root_entries = 1u << (ia - top);
	g->root_pages = 1;
	if (g->root_entries > g->entries)
		return SLAT_E_CONFIG; /* cannot happen: no concatenation */

	uint8_t leaves = BIT(3) | BIT(2);
	if (gs == 12 || (gs == 16 && pa == 52) || (gs == 14 && ds))
		leaves |= BIT(1);
	if (gs == 12 && ds)
		leaves |= BIT(0);
	for (int l = 0; l < g->start_level; l++)
		leaves &= (uint8_t)~BIT(l);
	g->leaf_levels = leaves;
	g->ds = ds;
	return 0;
}

static bool big_oa(const struct check_geo *g)
{
	return g->granule_shift == 16 && g->pa_bits == 52;
}

static uint64_t oa_field(const struct check_geo *g)
{
	if (g->ds)
		return GENMASK(49, g->granule_shift) | GENMASK(9, 8);
	return GENMASK(47, g->granule_shift) | (big_oa(g) ? GENMASK(15, 12) : 0);
}

static uint64_t oa_of(const struct check_geo *g, uint64_t pte)
{
	if (g->ds)
		return (pte & GENMASK(49, g->granule_shift)) |
		       (pte & GENMASK(9, 8)) << 42;
	uint64_t oa = pte & GENMASK(47, g->granule_shift);
	if (big_oa(g))
		oa |= (pte & GENMASK(15, 12)) << 36;
	return oa;
}

static enum check_desc_kind bad(char *why, size_t n, const char *what,
				uint64_t pte, int level)
{
	snprintf(why, n, "%s (stage-1 descriptor %#018" PRIx64 " at level %d)",
		 what, pte, level);
	return CHECK_DESC_BAD;
}

static bool el2(const struct slat_config *cfg)
{
	return cfg->features & SLAT_FEAT_S1_EL2;
}

/* The permissions a leaf's AP[1], PXN, UXN/XN and nG give, or why the
 * leaf is not one libslat may write. */
static const char *s1_access(const struct slat_config *cfg, uint64_t pte,
			     uint32_t *attrs)
{
	if (el2(cfg)) {
		if (!(pte & D_AP1))
			return "AP[1] clear: RES1 at EL2";
		if (pte & (D_PXN | D_NG))
			return "PXN or nG set: RES0 at EL2";
		*attrs |= (pte & D_UXN) ? 0 : SLAT_X;
		return NULL;
	}
	if (pte & D_AP1)
		*attrs |= SLAT_USER;
	if (!(pte & D_PXN))
		*attrs |= SLAT_XK;
	if (!(pte & D_UXN))
		*attrs |= SLAT_XU;
	if (pte & D_NG)
		*attrs |= SLAT_NG;
	return NULL;
}

static enum check_desc_kind s1_decode(const struct check_geo *g,
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
	if (!(pte & D_VALID))
		return bad(why, n, "invalid descriptor that is not 0", pte,
			   level);
	if (level < g->start_level || level > 3)
		return bad(why, n, "descriptor at a level outside the walk",
			   pte, level);
	uint64_t oa = oa_of(g, pte);
	if (oa >> g->pa_bits)
		return bad(why, n, "output address beyond pa_bits", pte,
			   level);

	if (level < 3 && (pte & D_TYPE)) {
		if (pte & ~(oa_field(g) | D_VALID | D_TYPE))
			return bad(why, n,
				   "table descriptor with bits other than "
				   "type and address (hierarchical controls, "
				   "ignored bits)",
				   pte, level);
		d->kind = CHECK_DESC_TABLE;
		d->oa = oa;
		return CHECK_DESC_TABLE;
	}
	if (level == 3 && !(pte & D_TYPE))
		return bad(why, n, "0b01 at level 3 is reserved", pte, level);
	if (!(g->leaf_levels & BIT(level)))
		return bad(why, n, "block at a level without blocks", pte,
			   level);

	bool hd = cfg->features & SLAT_FEAT_HWDIRTY;
	uint64_t allowed = oa_field(g) | D_VALID | D_TYPE | D_ATTRIDX |
			   D_AP1 | D_AP2 | D_SH | D_AF | D_NG | D_PXN | D_UXN |
			   D_SW | (hd ? D_DBM : 0);
	if (pte & D_CONT)
		return bad(why, n, "contiguous bit set", pte, level);
	if (pte & D_NS)
		return bad(why, n, "NS set", pte, level);
	if (pte & ~allowed)
		return bad(why, n,
			   hd ? "leaf with RES0/unused bits set"
			      : "leaf with RES0/unused bits set (DBM without "
				"hardware dirty state?)",
			   pte, level);
	uint64_t size = 1ull << check_level_shift(g, level);
	if (oa & (size - 1))
		return bad(why, n, "OA bits below the block size set", pte,
			   level);

	uint32_t attrs = SLAT_R; /* EL1 can read every valid entry */
	switch ((pte & D_ATTRIDX) >> 2) {
	case 0: attrs |= SLAT_MT_NORMAL; break;
	case 1: attrs |= SLAT_MT_DEVICE; break;
	case 2: attrs |= SLAT_MT_NORMAL_NC; break;
	default:
		return bad(why, n,
			   "AttrIndx 3-7: MAIR_EL1 slots libslat's layout "
			   "does not program",
			   pte, level);
	}
	if (!g->ds && (pte & D_SH) != D_SH)
		return bad(why, n, "SH is not 0b11", pte, level);
	if (hd) {
		/* a write to AP[2] = 0 without DBM would not be tracked */
		if (!(pte & D_AP2) && !(pte & D_DBM))
			return bad(why, n,
				   "writable leaf without DBM under hardware "
				   "dirty state",
				   pte, level);
		if (pte & D_DBM)
			attrs |= SLAT_W;
		if ((pte & D_DBM) && !(pte & D_AP2))
			attrs |= SLAT_DIRTY;
	} else if (!(pte & D_AP2)) {
		attrs |= SLAT_W;
	}
	const char *no = s1_access(cfg, pte, &attrs);
	if (no)
		return bad(why, n, no, pte, level);
	if (SLAT_MT(attrs) == SLAT_MT_DEVICE && (attrs & SLAT_X))
		return bad(why, n, "executable Device memory", pte, level);
	if (pte & D_AF)
		attrs |= SLAT_YOUNG;
	attrs |= SLAT_SW((pte & D_SW) >> 55);

	d->kind = CHECK_DESC_LEAF;
	d->oa = oa;
	d->attrs = attrs;
	return CHECK_DESC_LEAF;
}

/*
 * What map accepts: read is implied (a leaf without SLAT_R cannot be
 * expressed), W, XK and XU independently, EL0 access and nG (at EL2: XK
 * and XU together, no EL0 access, no nG); three memory types; no execute
 * on Device; no EPT bits.
 */
static bool s1_attrs_ok(const struct slat_config *cfg, uint32_t attrs)
{
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK | SLAT_USER |
		      SLAT_NG))
		return false;
	/* EL2: no EL0 to give access to, no ASID, one XN */
	uint32_t x = attrs & SLAT_X;
	if (el2(cfg) && ((attrs & (SLAT_USER | SLAT_NG)) || (x && x != SLAT_X)))
		return false;
	if (!(attrs & SLAT_R))
		return false;
	uint32_t mt = SLAT_MT(attrs);
	if (mt == SLAT_MT_MASK)
		return false;
	if (mt == SLAT_MT_DEVICE && (attrs & SLAT_X))
		return false;
	/* EL0-writable is privileged execute-never whatever PXN says, so
	 * asking for EL1 execute there is asking for what cannot be. */
	if ((attrs & SLAT_USER) && (attrs & SLAT_W) && (attrs & SLAT_XK))
		return false;
	return true;
}

static bool s1_separate_exec(const struct slat_config *cfg)
{
	return !el2(cfg); /* PXN and UXN; EL2's XN alone */
}

static enum check_af s1_hw_af(const struct slat_config *cfg)
{
	return (cfg->features & SLAT_FEAT_HWDIRTY) ? CHECK_AF_HW_SETS
						   : CHECK_AF_FAULT;
}

/*
 * The permissions the PE enforces for a leaf with @attrs (SLAT_DIRTY as
 * the leaf has it). At EL1&0, AP[2:1] = 0b01, writable at EL0, makes the
 * location privileged execute-never whatever PXN says. Under hardware
 * dirty state AP[2] is clear only once the leaf is dirty (writable-clean
 * is AP[2] = 1: read-only until the PE's first write).
 */
static uint32_t s1_hw_perms(const struct slat_config *cfg, uint32_t attrs)
{
	/* EL2's regime translates nothing for EL0: SLAT_XU, which a leaf
	 * carries as half of SLAT_X, lets no EL0 fetch through */
	if (el2(cfg))
		return attrs & SLAT_PERMS & ~SLAT_XU;
	bool hd = cfg->features & SLAT_FEAT_HWDIRTY;
	bool ap2_clear = (attrs & SLAT_W) && (!hd || (attrs & SLAT_DIRTY));
	uint32_t p = attrs & SLAT_PERMS;
	if ((attrs & SLAT_USER) && ap2_clear)
		p &= ~SLAT_XK;
	return p;
}

const struct check_format check_arm_s1 = {
	.name = "arm-s1",
	.id = SLAT_FMT_ARM_S1,
	.geometry = s1_geometry,
	.decode = s1_decode,
	.attrs_ok = s1_attrs_ok,
	/* The guest's own tables: libslat does no cache maintenance. */
	.dcache_on_install = check_no_dcache,
	.icache_on_exec = check_no_icache,
	.separate_exec = s1_separate_exec,
	.extra_attrs = SLAT_USER | SLAT_NG,
	.tlbi_by_address = true,
	.split_bbm = true,
	.wrprotect_keeps_dirty = false,
	.hw_af = s1_hw_af,
	.hw_perms = s1_hw_perms,
};
