/* SPDX-License-Identifier: MIT */
/*
 * What Intel EPT and AMD nested page tables share: 4 KiB tables of 512
 * entries walked with 4 levels (PML4, 48 bits) or 5 (PML5, 57 bits), pages
 * at the PT, PD (2 MiB) and PDPT (1 GiB), and the output address in bits
 * [51:12].
 */
#ifndef SLAT_FORMAT_X86_H
#define SLAT_FORMAT_X86_H

#include "core/internal.h"

#define X86_PA_MASK (((1ull << 52) - 1) & ~0xfffull)
/* PS: a page at the PD or PDPT; 0 in table entries and at the PT. */
#define X86_PS      (1ull << 7)

/*
 * The geometry of @cfg, whose features the format has checked: by default
 * the fewest levels; a 5-level walk of a smaller space is fine too (the
 * PML5 using its first entry).
 */
static inline int x86_geometry(const struct slat_config *cfg,
			       struct slat_geometry *geo)
{
	unsigned ia = cfg->ia_bits;
	unsigned pa = cfg->pa_bits ? cfg->pa_bits : (ia > 48 ? 52 : 48);
	if (cfg->granule != 4096 || ia < 32 || ia > 57 || pa < 32 || pa > 52)
		return SLAT_E_CONFIG;
	unsigned levels = cfg->levels ? cfg->levels : ia > 48 ? 5 : 4;
	if ((levels != 4 && levels != 5) || (levels == 4 && ia > 48))
		return SLAT_E_CONFIG;
	int start = 4 - (int)levels;
	unsigned start_shift = 9u * (unsigned)(3 - start) + 12;
	geo->granule_shift = 12;
	geo->bits_per_level = 9;
	geo->start_level = (int8_t)start;
	geo->entries = 512;
	geo->root_entries = ia > start_shift ? 1u << (ia - start_shift) : 1;
	geo->root_pages = 1;
	geo->ia_bits = (uint8_t)ia;
	geo->pa_bits = (uint8_t)pa;
	geo->leaf_levels = (1u << 1) | (1u << 2) | (1u << 3);
	return SLAT_OK;
}

static inline slat_pa_t x86_pte_pa(const struct slat_table *t, slat_pte_t pte)
{
	(void)t;
	return slat_pa(pte & X86_PA_MASK);
}

static inline uint64_t x86_oa_mask(const struct slat_table *t)
{
	(void)t;
	return X86_PA_MASK;
}

static inline slat_pte_t x86_pte_with_pa(const struct slat_table *t,
					 slat_pte_t pte, slat_pa_t pa)
{
	(void)t;
	return (pte & ~X86_PA_MASK) | (pa.pa & X86_PA_MASK);
}

/* A page re-encoded as a large page or back: only PS moves (NPT's PAT bit,
 * bit 7 of a PT entry and bit 12 of a large one, is never set). */
static inline slat_pte_t x86_leaf_for_level(const struct slat_table *t,
					    slat_pte_t pte, int level)
{
	(void)t;
	return level == SLAT_LAST_LEVEL ? pte & ~X86_PS : pte | X86_PS;
}

#endif
