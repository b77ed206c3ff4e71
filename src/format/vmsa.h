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
 * Levels and root for @cfg. @concat_bits: how many input bits concatenated
 * root tables may resolve instead of a level (4 at stage 2, 0 at stage 1).
 * @ia_above_pa: the input may be wider than the output (a stage-1 VA; an
 * IPA wider than the PA range is not a stage-2 configuration). The start
 * level may be -1 (4K with DS, more than 48 input bits, no concatenation).
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

	unsigned bpl = g - 3;
	/* ceil((ia - concat - g) / bpl), as Linux's ARM64_HW_PGTABLE_LEVELS */
	unsigned levels = (ia - concat_bits - 4) / bpl;
	if (levels < 2)
		levels = 2;
	int start = 4 - (int)levels;
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
	if (geo->root_pages > 16)
		return SLAT_E_CONFIG;
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
