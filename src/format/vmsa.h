/* SPDX-License-Identifier: MIT */
/*
 * What Armv8-A VMSAv8-64 descriptors share between stage 1 and stage 2:
 * granules, levels, the output-address field: bits [47:g], with FEAT_LPA's
 * PA[51:48] in bits [15:12] for the 64K granule, or with FEAT_LPA2 (DS = 1,
 * 4K and 16K granules) bits [49:g] and PA[51:50] in bits [9:8], where the
 * shareability field was.
 */
#ifndef SLAT_FORMAT_VMSA_H
#define SLAT_FORMAT_VMSA_H

#include "core/internal.h"

#define VMSA_OA_LOW_MASK(g) (((1ull << 48) - 1) & ~((1ull << (g)) - 1))
#define VMSA_OA_HIGH_MASK   (0xfull << 12)
#define VMSA_DS_OA_LOW_MASK(g) (((1ull << 50) - 1) & ~((1ull << (g)) - 1))
#define VMSA_DS_OA_HIGH_MASK   (3ull << 8)

/* How a table's descriptors hold the output address. */
enum vmsa_oa_layout {
	VMSA_OA_48,   /* bits [47:g] */
	VMSA_OA_LPA,  /* 64K: bits [47:16], PA[51:48] in [15:12] */
	VMSA_OA_LPA2, /* DS = 1: bits [49:g], PA[51:50] in [9:8] */
};

static inline bool vmsa_lpa2(const struct slat_config *cfg)
{
	return (cfg->features & SLAT_FEAT_LPA2) != 0;
}

static inline enum vmsa_oa_layout vmsa_layout(const struct slat_table *t)
{
	if (t->geo.granule_shift == 16)
		return VMSA_OA_LPA;
	return vmsa_lpa2(&t->cfg) ? VMSA_OA_LPA2 : VMSA_OA_48;
}

static inline bool vmsa_granule_ok(uint32_t granule, uint8_t *shift)
{
	switch (granule) {
	case 4096: *shift = 12; return true;
	case 16384: *shift = 14; return true;
	case 65536: *shift = 16; return true;
	default: return false;
	}
}

/*
 * The largest input and output sizes: 52 bits with the 64K granule
 * (FEAT_LPA) or with FEAT_LPA2 (4K and 16K only: DS is RES0 with 64K).
 */
static inline int vmsa_max_bits(const struct slat_config *cfg, unsigned g,
				unsigned *max_bits)
{
	if (vmsa_lpa2(cfg) && g == 16)
		return SLAT_E_CONFIG;
	*max_bits = g == 16 || vmsa_lpa2(cfg) ? 52 : 48;
	return SLAT_OK;
}

/*
 * Levels that may hold a leaf (AArch64.BlockDescSupported): the last
 * level's pages; 4K blocks at levels 1 and 2, and 0 with DS; 16K at level
 * 2, and 1 with DS; 64K at level 2, and 1 with 52-bit output addresses.
 * None above @start, which the walk does not have.
 */
static inline uint8_t vmsa_leaf_levels(unsigned g, bool lpa2, unsigned pa,
				       int start)
{
	unsigned levels = 1u << 3 | 1u << 2;
	if (g == 12)
		levels |= 1u << 1 | (lpa2 ? 1u << 0 : 0);
	else if (g == 14 ? lpa2 : pa == 52)
		levels |= 1u << 1;
	if (start > 0)
		levels &= ~((1u << start) - 1);
	return (uint8_t)levels;
}

/*
 * The output size a start level needs at stage 2 (AArch64.S2InvalidSL):
 * the architecture asks it of the CPU's PARange; pa_bits, which is at
 * most that (it becomes VTCR_EL2.PS), must meet it too, so a table never
 * relies on more than it was built for. 16K at level 0 needs DS as well.
 */
static inline bool vmsa_s2_start_pa_ok(unsigned g, int start, unsigned pa,
				       bool lpa2)
{
	switch (start) {
	case -1: return pa == 52;
	case 0: return g == 12 ? pa >= 44 : g == 14 && lpa2 && pa == 52;
	case 1: return g == 12 || pa >= (g == 14 ? 42u : 44u);
	default: return true;
	}
}

/*
 * Whether a walk of @cfg may start at @start, resolving ia - shift(start)
 * bits there: 1 to bits_per_level + @concat_bits of them (up to 2^4
 * concatenated tables at stage 2, AArch64.S2InconsistentSL; exactly one
 * start level per TnSZ at stage 1). Level -1 is 4K with DS only. Level 3
 * (64K, a 32- or 33-bit IPA in 8 or 16 pages) is architecturally fine,
 * but libslat's walks have at least two levels.
 */
static inline bool vmsa_start_ok(const struct slat_config *cfg, unsigned g,
				 int start, unsigned pa, unsigned concat_bits)
{
	unsigned bpl = g - 3, ia = cfg->ia_bits;
	bool sl2 = g == 12 && vmsa_lpa2(cfg);
	if (start < (sl2 ? -1 : 0) || start > 2)
		return false;
	unsigned start_shift = bpl * (unsigned)(3 - start) + g;
	if (ia <= start_shift || ia - start_shift > bpl + concat_bits)
		return false;
	return !concat_bits || vmsa_s2_start_pa_ok(g, start, pa, vmsa_lpa2(cfg));
}

/*
 * The start level of @cfg: from cfg->levels when given, else the fewest
 * levels with at most 2^@concat_bits root tables (KVM's choice; the only
 * one at stage 1), as Linux's ARM64_HW_PGTABLE_LEVELS(ia - concat), but
 * never one level (a level-3 start).
 */
static inline int vmsa_start_level(const struct slat_config *cfg, unsigned g,
				   unsigned concat_bits)
{
	if (cfg->levels)
		return 4 - (int)cfg->levels;
	unsigned levels = (cfg->ia_bits - concat_bits - 4) / (g - 3);
	return 4 - (int)(levels < 2 ? 2 : levels);
}

/*
 * Levels and root for @cfg. @concat_bits: how many input bits concatenated
 * root tables may resolve instead of a level (4 at stage 2, 0 at stage 1).
 * @ia_above_pa: the input may be wider than the output (a stage-1 VA; an
 * IPA wider than the PA range is not a stage-2 configuration).
 */
static inline int vmsa_geometry(const struct slat_config *cfg,
				struct slat_geometry *geo, unsigned concat_bits,
				bool ia_above_pa)
{
	uint8_t g;
	unsigned max_bits;
	if (!vmsa_granule_ok(cfg->granule, &g) ||
	    vmsa_max_bits(cfg, g, &max_bits))
		return SLAT_E_CONFIG;

	unsigned ia = cfg->ia_bits;
	unsigned pa = cfg->pa_bits ? cfg->pa_bits : (ia > 48 ? ia : 48);
	if (ia < 32 || ia > max_bits || pa < 32 || pa > max_bits ||
	    (ia > pa && !ia_above_pa))
		return SLAT_E_CONFIG;

	int start = vmsa_start_level(cfg, g, concat_bits);
	if (!vmsa_start_ok(cfg, g, start, pa, concat_bits))
		return SLAT_E_CONFIG;
	unsigned bpl = g - 3;
	unsigned start_shift = bpl * (unsigned)(3 - start) + g;
	uint32_t entries = 1u << bpl;
	uint32_t root_entries = 1u << (ia - start_shift);

	geo->granule_shift = g;
	geo->bits_per_level = (uint8_t)bpl;
	geo->start_level = (int8_t)start;
	geo->entries = entries;
	geo->root_entries = root_entries;
	geo->root_pages = (uint8_t)((root_entries + entries - 1) / entries);
	geo->ia_bits = (uint8_t)ia;
	geo->pa_bits = (uint8_t)pa;
	geo->leaf_levels = vmsa_leaf_levels(g, vmsa_lpa2(cfg), pa, start);
	return SLAT_OK;
}

static inline slat_pte_t vmsa_encode_oa(const struct slat_table *t, uint64_t pa)
{
	unsigned g = t->geo.granule_shift;
	switch (vmsa_layout(t)) {
	case VMSA_OA_LPA:
		return (pa & VMSA_OA_LOW_MASK(g)) | ((pa >> 36) & VMSA_OA_HIGH_MASK);
	case VMSA_OA_LPA2:
		return (pa & VMSA_DS_OA_LOW_MASK(g)) |
		       ((pa >> 42) & VMSA_DS_OA_HIGH_MASK);
	default:
		return pa & VMSA_OA_LOW_MASK(g);
	}
}

static inline slat_pa_t vmsa_pte_pa(const struct slat_table *t, slat_pte_t pte)
{
	unsigned g = t->geo.granule_shift;
	switch (vmsa_layout(t)) {
	case VMSA_OA_LPA:
		return slat_pa((pte & VMSA_OA_LOW_MASK(g)) |
			       (pte & VMSA_OA_HIGH_MASK) << 36);
	case VMSA_OA_LPA2:
		return slat_pa((pte & VMSA_DS_OA_LOW_MASK(g)) |
			       (pte & VMSA_DS_OA_HIGH_MASK) << 42);
	default:
		return slat_pa(pte & VMSA_OA_LOW_MASK(g));
	}
}

static inline uint64_t vmsa_oa_mask(const struct slat_table *t)
{
	unsigned g = t->geo.granule_shift;
	/* The bits above 48 (64K) or 50 (DS) sit below the address field:
	 * not one mask any more once the PA range reaches them. */
	switch (vmsa_layout(t)) {
	case VMSA_OA_LPA:
		return t->geo.pa_bits > 48 ? 0 : VMSA_OA_LOW_MASK(g);
	case VMSA_OA_LPA2:
		return t->geo.pa_bits > 50 ? 0 : VMSA_DS_OA_LOW_MASK(g);
	default:
		return VMSA_OA_LOW_MASK(g);
	}
}

/* Every descriptor bit that holds part of the output address. */
static inline slat_pte_t vmsa_oa_field(const struct slat_table *t)
{
	unsigned g = t->geo.granule_shift;
	switch (vmsa_layout(t)) {
	case VMSA_OA_LPA: return VMSA_OA_LOW_MASK(g) | VMSA_OA_HIGH_MASK;
	case VMSA_OA_LPA2: return VMSA_DS_OA_LOW_MASK(g) | VMSA_DS_OA_HIGH_MASK;
	default: return VMSA_OA_LOW_MASK(g);
	}
}

static inline slat_pte_t vmsa_pte_with_pa(const struct slat_table *t,
					  slat_pte_t pte, slat_pa_t pa)
{
	return (pte & ~vmsa_oa_field(t)) | vmsa_encode_oa(t, pa.pa);
}

#endif
