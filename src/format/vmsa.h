/* SPDX-License-Identifier: MIT */
/*
 * What Armv8-A VMSAv8-64 descriptors share between stage 1 and stage 2:
 * granules, levels, the output-address field (with FEAT_LPA's PA[51:48] in
 * bits [15:12] for the 64K granule).
 */
#ifndef SLAT_FORMAT_VMSA_H
#define SLAT_FORMAT_VMSA_H

#include "core/internal.h"

#define VMSA_OA_LOW_MASK(g) (((1ull << 48) - 1) & ~((1ull << (g)) - 1))
#define VMSA_OA_HIGH_MASK   (0xfull << 12)

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
	if (!vmsa_granule_ok(cfg->granule, &g))
		return SLAT_E_CONFIG;

	unsigned max_bits = g == 16 ? 52 : 48;
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
	geo->leaf_levels = 1u << 3;
	if (g == 12)
		geo->leaf_levels |= (1u << 1) | (1u << 2);
	else
		geo->leaf_levels |= 1u << 2;
	if (g == 16 && pa == 52)
		geo->leaf_levels |= 1u << 1;
	/* Levels above the start level do not exist in this walk. */
	geo->leaf_levels &= (uint8_t)~((1u << start) - 1);
	if (geo->root_pages > 16)
		return SLAT_E_CONFIG;
	return SLAT_OK;
}

static inline slat_pte_t vmsa_encode_oa(const struct slat_table *t, uint64_t pa)
{
	unsigned g = t->geo.granule_shift;
	slat_pte_t v = pa & VMSA_OA_LOW_MASK(g);
	if (g == 16)
		v |= (pa >> 36) & VMSA_OA_HIGH_MASK;
	return v;
}

static inline slat_pa_t vmsa_pte_pa(const struct slat_table *t, slat_pte_t pte)
{
	unsigned g = t->geo.granule_shift;
	uint64_t pa = pte & VMSA_OA_LOW_MASK(g);
	if (g == 16)
		pa |= (pte & VMSA_OA_HIGH_MASK) << 36;
	return slat_pa(pa);
}

static inline uint64_t vmsa_oa_mask(const struct slat_table *t)
{
	/* 52-bit PAs with 64K pages keep PA[51:48] in bits [15:12]. */
	if (t->geo.granule_shift == 16 && t->geo.pa_bits > 48)
		return 0;
	return VMSA_OA_LOW_MASK(t->geo.granule_shift);
}

static inline slat_pte_t vmsa_pte_with_pa(const struct slat_table *t,
					  slat_pte_t pte, slat_pa_t pa)
{
	slat_pte_t oa_mask = VMSA_OA_LOW_MASK(t->geo.granule_shift);
	if (t->geo.granule_shift == 16)
		oa_mask |= VMSA_OA_HIGH_MASK;
	return (pte & ~oa_mask) | vmsa_encode_oa(t, pa.pa);
}

#endif
