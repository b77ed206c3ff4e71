/* SPDX-License-Identifier: MIT */
/*
 * The checker's own knowledge of the Armv8-A VMSA stage-2 descriptor format,
 * written from the architecture (Arm ARM D8, "VMSAv8-64 translation table
 * format descriptors" and "Stage 2 memory region attributes") and the
 * choices docs/design.md fixes. Independent of src/format/arm_s2.c.
 *
 *   bits[1:0]  0b00/0b10 invalid (libslat leaves only all-zero entries),
 *              0b01 block (reserved at level 3, and only at levels where
 *              the granule allows blocks), 0b11 table (levels 0-2) or
 *              page (level 3)
 *   [5:2]      MemAttr   no FWB: 0xF Normal WB, 0x5 Normal NC, 0x1 Device
 *                        nGnRE; FWB: 0x6 Normal WB, 0x5 NC, 0x1 Device
 *   [7:6]      S2AP      bit 6 read, bit 7 write
 *   [9:8]      SH        always 0b11; with FEAT_LPA2 (VTCR_EL2.DS = 1)
 *                        OA[51:50] instead (VTCR_EL2.SH0 is the
 *                        shareability)
 *   [10]       AF
 *   [11]       RES0 here (FnXS is not used)
 *   [47:g]     OA; with the 64K granule and 52-bit PA, PA[51:48] in [15:12]
 *              (RES0 otherwise); with DS = 1 (4K, 16K) OA[49:g] in [49:g];
 *              OA bits below the block size are RES0
 *   [51]       DBM: only with hardware dirty state (VTCR_EL2.HD), and then
 *              on every writable leaf: S2AP.W = 1 dirty, S2AP.W = 0
 *              writable-clean (the hardware sets S2AP.W on a write)
 *   [52], [50:48] not used by libslat (Contiguous, ...): 0 ([50] with DS)
 * Blocks: 4K at levels 1 and 2 (and 0 with DS), 16K at level 2 (and 1 with
 * DS), 64K at level 2 (and 1 with 52-bit PA). With DS a 4K walk of more
 * than 48 IPA bits starts at level 0 with up to 16 concatenated tables,
 * or at level -1 (VTCR_EL2.SL2 = 1) when slat_config.levels asks for 5.
 *   [54:53]    XN        00 X at EL1 and EL0, 10 none; FEAT_XNX: 01 EL0
 *                        only, 11 EL1 only
 *   [58:55]    software
 *   [63:59]    0
 * Table descriptors: 0b11 | next table PA in the OA field, nothing else.
 */
#include <inttypes.h>
#include <stdio.h>

#include "checker.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))

/*
 * Whether VTCR_EL2 can describe a walk from @start: its SL2:SL0 encoding
 * must be valid for the granule and the PA size (AArch64.S2InvalidSL,
 * with the PA size standing for PARange), and T0SZ consistent with it
 * (AArch64.S2InconsistentSL: the start level resolves at least one bit,
 * at most a level's worth plus 4 bits of concatenation). libslat does not
 * start at level 3 (64K, IPA of 32 or 33 bits), so neither does this.
 */
static bool s2_start_valid(unsigned gs, int start, unsigned ia, unsigned pa,
			   bool ds)
{
	int sl; /* SL2:SL0 as VTCR_EL2 would hold it, -1 for no encoding */
	if (gs == 12)
		sl = start == -1 ? 4 : start >= 0 && start <= 2 ? 2 - start : -1;
	else
		sl = start >= 0 && start <= 2 ? 3 - start : -1;
	if (sl < 0)
		return false;
	if (gs == 12 && ((sl == 4 && (!ds || pa < 52)) || (sl == 2 && pa < 44)))
		return false;
	if (gs == 14 && ((sl == 3 && (!ds || pa < 52)) || (sl == 2 && pa < 42)))
		return false;
	if (gs == 16 && (sl == 3 || (sl == 2 && pa < 44)))
		return false;
	unsigned stride = gs - 3;
	unsigned min_ia = (unsigned)(3 - start) * stride + gs + 1;
	unsigned max_ia = min_ia + (stride - 1) + 4;
	return ia >= min_ia && ia <= max_ia;
}

static int arm_geometry(const struct slat_config *cfg, struct check_geo *g)
{
	unsigned gs;
	switch (cfg->granule) {
	case 4096: gs = 12; break;
	case 16384: gs = 14; break;
	case 65536: gs = 16; break;
	default: return SLAT_E_CONFIG;
	}
	unsigned ia = cfg->ia_bits;
	/* pa_bits 0: 48, or the IPA size above 48 (slat.h) */
	unsigned pa = cfg->pa_bits ? cfg->pa_bits : (ia > 48 ? ia : 48);
	bool ds = cfg->features & SLAT_FEAT_LPA2;
	if (ds && gs == 16)
		return SLAT_E_CONFIG; /* VTCR_EL2.DS is RES0 with 64K */
	/* 52-bit: 64K (FEAT_LPA), or 4K and 16K with DS (FEAT_LPA2) */
	bool big_ok = gs == 16 || ds;
	if (pa < 32 || (pa > 48 && !(pa == 52 && big_ok)))
		return SLAT_E_CONFIG;
	if (ia < 32 || ia > (big_ok ? 52u : 48u))
		return SLAT_E_CONFIG;
	/* an IPA wider than VTCR_EL2.PS is CONSTRAINED UNPREDICTABLE */
	if (ia > pa)
		return SLAT_E_CONFIG;

	unsigned bpl = gs - 3;
	/* levels 0: the fewest with at most 16 root tables (slat.h) */
	int levels = cfg->levels ? cfg->levels : (int)((ia - 8) / bpl);
	if (!cfg->levels && levels < 2)
		levels = 2;
	if (!s2_start_valid(gs, 4 - levels, ia, pa, ds))
		return SLAT_E_CONFIG;
	g->granule_shift = gs;
	g->bits_per_level = bpl;
	g->entries = 1u << bpl;
	g->start_level = 4 - levels;
	g->ia_bits = ia;
	g->pa_bits = pa;
	unsigned top = check_level_shift(g, g->start_level);
	g->root_entries = ia >= top ? 1u << (ia - top) : 1;
	g->root_pages = (g->root_entries + g->entries - 1) / g->entries;

	uint8_t leaves = BIT(3);
	if (gs == 12)
		leaves |= BIT(1) | BIT(2) | (ds ? BIT(0) : 0);
	else if (gs == 14)
		leaves |= BIT(2) | (ds ? BIT(1) : 0);
	else
		leaves |= BIT(2) | (pa == 52 ? BIT(1) : 0);
	for (int l = 0; l < g->start_level; l++)
		leaves &= (uint8_t)~BIT(l);
	g->leaf_levels = leaves;
	g->ds = ds;
	return 0;
}

static uint64_t oa_mask(const struct check_geo *g)
{
	if (g->ds)
		return GENMASK(49, g->granule_shift) | GENMASK(9, 8);
	uint64_t m = GENMASK(47, g->granule_shift);
	if (g->granule_shift == 16 && g->pa_bits == 52)
		m |= GENMASK(15, 12);
	return m;
}

static uint64_t decode_oa(const struct check_geo *g, uint64_t pte)
{
	if (g->ds)
		return (pte & GENMASK(49, g->granule_shift)) |
		       ((pte >> 8) & 3) << 50;
	uint64_t oa = pte & GENMASK(47, g->granule_shift);
	if (g->granule_shift == 16 && g->pa_bits == 52)
		oa |= ((pte >> 12) & 0xf) << 48;
	return oa;
}

#define LEAF_ATTR_BITS (GENMASK(10, 2) | GENMASK(54, 53) | GENMASK(58, 55))
#define DBM BIT(51)

static enum check_desc_kind bad(char *why, size_t n, const char *fmt,
				uint64_t pte, int level)
{
	snprintf(why, n, "%s (pte %#018" PRIx64 " at level %d)", fmt, pte,
		 level);
	return CHECK_DESC_BAD;
}

static enum check_desc_kind arm_decode(const struct check_geo *g,
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
	if (!(pte & 1))
		return bad(why, n, "invalid entry is not 0", pte, level);
	if (level < g->start_level || level > 3)
		return bad(why, n, "entry at a level outside the walk", pte,
			   level);

	uint64_t oa = decode_oa(g, pte);
	bool is_table = (pte & 3) == 3 && level < 3;
	if (oa >> g->pa_bits)
		return bad(why, n, "output address beyond pa_bits", pte,
			   level);

	if (is_table) {
		if (pte & ~(oa_mask(g) | 3))
			return bad(why, n,
				   "table descriptor with bits other than "
				   "type and address",
				   pte, level);
		d->kind = CHECK_DESC_TABLE;
		d->oa = oa;
		return CHECK_DESC_TABLE;
	}

	if ((pte & 3) == 1 && level == 3)
		return bad(why, n, "0b01 (block) at level 3 is reserved", pte,
			   level);
	if (!(g->leaf_levels & BIT(level)))
		return bad(why, n, "block at a level that allows no block",
			   pte, level);
	bool hd = cfg->features & SLAT_FEAT_HWDIRTY;
	if (pte & ~(oa_mask(g) | 3 | LEAF_ATTR_BITS | (hd ? DBM : 0)))
		return bad(why, n,
			   hd ? "leaf with RES0/unused bits set"
			      : "leaf with RES0/unused bits set (DBM without "
				"hardware dirty state?)",
			   pte, level);
	uint64_t size = 1ull << check_level_shift(g, level);
	if (oa & (size - 1))
		return bad(why, n, "OA bits below the block size set", pte,
			   level);

	uint32_t attrs = 0;
	unsigned memattr = (pte >> 2) & 0xf;
	bool fwb = cfg->features & SLAT_FEAT_FWB;
	if (memattr == (fwb ? 0x6u : 0xfu))
		attrs |= SLAT_MT_NORMAL;
	else if (memattr == 0x5)
		attrs |= SLAT_MT_NORMAL_NC;
	else if (memattr == 0x1)
		attrs |= SLAT_MT_DEVICE;
	else
		return bad(why, n,
			   fwb ? "MemAttr not one of 0x6/0x5/0x1 (FWB)"
			       : "MemAttr not one of 0xF/0x5/0x1",
			   pte, level);
	if (pte & BIT(6))
		attrs |= SLAT_R;
	if (hd && (pte & BIT(7)) && !(pte & DBM))
		return bad(why, n,
			   "writable leaf without DBM under hardware dirty "
			   "state (its writes would not be tracked)",
			   pte, level);
	if (pte & (BIT(7) | DBM))
		attrs |= SLAT_W;
	if ((pte & BIT(7)) && (pte & DBM))
		attrs |= SLAT_DIRTY;
	if (!g->ds && ((pte >> 8) & 3) != 3)
		return bad(why, n, "SH is not 0b11", pte, level);
	if (pte & BIT(10))
		attrs |= SLAT_YOUNG;
	switch ((pte >> 53) & 3) {
	case 0: attrs |= SLAT_XK | SLAT_XU; break;
	case 2: break;
	case 1:
		if (!(cfg->features & SLAT_FEAT_XNX))
			return bad(why, n, "XN 0b01 without FEAT_XNX", pte,
				   level);
		attrs |= SLAT_XU;
		break;
	case 3:
		if (!(cfg->features & SLAT_FEAT_XNX))
			return bad(why, n, "XN 0b11 without FEAT_XNX", pte,
				   level);
		attrs |= SLAT_XK;
		break;
	}
	if (SLAT_MT(attrs) == SLAT_MT_DEVICE && (attrs & SLAT_X))
		return bad(why, n, "executable Device memory", pte, level);
	attrs |= SLAT_SW((pte >> 55) & 0xf);

	d->kind = CHECK_DESC_LEAF;
	d->oa = oa;
	d->attrs = attrs;
	return CHECK_DESC_LEAF;
}

static bool arm_attrs_ok(const struct slat_config *cfg, uint32_t attrs)
{
	/* SLAT_IPAT and SLAT_SVE are EPT's */
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK))
		return false;
	if (SLAT_MT(attrs) == SLAT_MT_MASK)
		return false;
	if (SLAT_MT(attrs) == SLAT_MT_DEVICE && (attrs & SLAT_X))
		return false;
	if (!(cfg->features & SLAT_FEAT_XNX)) {
		uint32_t x = attrs & SLAT_X;
		if (x && x != SLAT_X)
			return false;
	}
	return true;
}

static bool arm_dcache_on_install(const struct slat_config *cfg,
				  uint32_t attrs)
{
	return !(cfg->features & SLAT_FEAT_FWB) &&
	       SLAT_MT(attrs) == SLAT_MT_NORMAL;
}

static bool arm_icache_on_exec(const struct slat_config *cfg)
{
	return !(cfg->features & SLAT_FEAT_DIC);
}

static bool arm_separate_exec(const struct slat_config *cfg)
{
	return cfg->features & SLAT_FEAT_XNX;
}

static enum check_af arm_hw_af(const struct slat_config *cfg)
{
	return (cfg->features & SLAT_FEAT_HWDIRTY) ? CHECK_AF_HW_SETS
						   : CHECK_AF_FAULT;
}

const struct check_format check_arm_s2 = {
	.name = "arm-s2",
	.id = SLAT_FMT_ARM_S2,
	.geometry = arm_geometry,
	.decode = arm_decode,
	.attrs_ok = arm_attrs_ok,
	.dcache_on_install = arm_dcache_on_install,
	.icache_on_exec = arm_icache_on_exec,
	.separate_exec = arm_separate_exec,
	.extra_attrs = 0,
	.tlbi_by_address = true,
	.split_bbm = true,
	.wrprotect_keeps_dirty = false,
	.hw_af = arm_hw_af,
};
