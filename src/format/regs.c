/* SPDX-License-Identifier: MIT */
/*
 * The registers that point the CPU at a table, from its geometry and
 * configuration: VTCR_EL2/VTTBR_EL2 (Arm stage 2), the EPTP (Intel), nCR3
 * (AMD; APM vol. 2, "Nested Paging"), and
 * TCR_EL1/TTBR0_EL1/MAIR_EL1 (Arm stage 1), TCR_EL2/TTBR0_EL2 (Arm
 * stage 1 of the EL2 regime with HCR_EL2.E2H = 0, SLAT_FEAT_S1_EL2; its
 * MAIR_EL2 is slat_arm_s1_mair()). Field positions are the Arm ARM's (D19
 * VTCR_EL2, VTTBR_EL2, TCR_EL1; D24.2.195 TCR_EL2 when E2H is 0) and the
 * Intel SDM's (EPTP, 25.6.11); the tables are walked with cacheable,
 * inner-shareable accesses as KVM sets them up.
 */
#include "core/internal.h"

/* PS / IPS: the output size. */
static uint64_t pa_size_code(unsigned bits)
{
	switch (bits) {
	case 32: return 0;
	case 36: return 1;
	case 40: return 2;
	case 42: return 3;
	case 44: return 4;
	case 48: return 5;
	default: return 6; /* 52 */
	}
}

/* The root's PA in a translation table base register: BADDR[47:1], and
 * with 52-bit output addresses PA[51:48] in bits [5:2]. */
static uint64_t ttbr_baddr(const struct slat_table *t)
{
	uint64_t pa = t->root_pa.pa;
	return (pa & 0x0000fffffffffffeull) | ((pa >> 46) & 0x3cull);
}

/* Inner and outer write-back write-allocate walks, inner shareable. */
#define WALK_ATTRS_SHIFTED(irgn, orgn, sh) \
	((1ull << (irgn)) | (1ull << (orgn)) | (3ull << (sh)))

uint64_t slat_arm_s2_vtcr(const struct slat_table *t, bool vmid16)
{
	if (!table_live(t) || t->cfg.format != SLAT_FMT_ARM_S2)
		return 0;
	unsigned g = t->geo.granule_shift;
	int start = t->geo.start_level;
	/* SL0 counts from level 2 (4K) or level 3 (16K, 64K) upwards; level
	 * -1 (4K with DS) is SL2:SL0 = 1:00. */
	uint64_t sl2 = start < 0;
	uint64_t sl0 = sl2 ? 0
		       : g == 12 ? (uint64_t)(2 - start) : (uint64_t)(3 - start);
	uint64_t tg0 = g == 12 ? 0 : g == 16 ? 1 : 2;
	uint64_t v = (uint64_t)(64 - t->geo.ia_bits) | sl0 << 6 |
		     WALK_ATTRS_SHIFTED(8, 10, 12) | tg0 << 14 |
		     pa_size_code(t->geo.pa_bits) << 16 | 1ull << 31 /* RES1 */;
	if (vmid16)
		v |= 1ull << 19; /* VS */
	if (t->cfg.features & SLAT_FEAT_HWDIRTY)
		v |= 1ull << 21 | 1ull << 22; /* HA, HD */
	/* FEAT_LPA2: SH0 is then every mapping's shareability too */
	if (t->cfg.features & SLAT_FEAT_LPA2)
		v |= 1ull << 32 | sl2 << 33; /* DS, SL2 */
	return v;
}

uint64_t slat_arm_s2_vttbr(const struct slat_table *t, uint16_t vmid, bool cnp)
{
	if (!table_live(t) || t->cfg.format != SLAT_FMT_ARM_S2)
		return 0;
	return ttbr_baddr(t) | (uint64_t)vmid << 48 | (cnp ? 1 : 0);
}

uint64_t slat_ept_eptp(const struct slat_table *t)
{
	if (!table_live(t) || t->cfg.format != SLAT_FMT_EPT)
		return 0;
	/* 2:0 memory type of the walks (6: WB), 5:3 walk length - 1, 6 A/D */
	uint64_t levels = (uint64_t)(SLAT_LAST_LEVEL - t->geo.start_level + 1);
	uint64_t v = t->root_pa.pa | 6 | (levels - 1) << 3;
	if (t->cfg.features & SLAT_FEAT_HWDIRTY)
		v |= 1ull << 6;
	return v;
}

uint64_t slat_npt_ncr3(const struct slat_table *t)
{
	if (!table_live(t) || t->cfg.format != SLAT_FMT_NPT)
		return 0;
	/* [51:12] the PML4 or PML5, 4 PCD and 3 PWT 0: write-back walks */
	return t->root_pa.pa;
}

/* A stage-1 table of the EL1&0 regime (@el2 false) or of EL2's. */
static bool s1_table(const struct slat_table *t, bool el2)
{
	return table_live(t) && t->cfg.format == SLAT_FMT_ARM_S1 &&
	       ((t->cfg.features & SLAT_FEAT_S1_EL2) != 0) == el2;
}

/* TG0 of TCR_EL1 and TCR_EL2: 4K 0b00, 64K 0b01, 16K 0b10. */
static uint64_t tg0_code(const struct slat_table *t)
{
	unsigned g = t->geo.granule_shift;
	return g == 12 ? 0 : g == 16 ? 1 : 2;
}

uint64_t slat_arm_s1_tcr(const struct slat_table *t, bool asid16)
{
	if (!s1_table(t, false))
		return 0;
	uint64_t tg0 = tg0_code(t);
	/* TTBR0 only: EPD1 stops walks from TTBR1, whose TG1 (4K) is still a
	 * valid encoding. */
	uint64_t v = (uint64_t)(64 - t->geo.ia_bits) |
		     WALK_ATTRS_SHIFTED(8, 10, 12) | tg0 << 14 | 1ull << 23 |
		     2ull << 30 | pa_size_code(t->geo.pa_bits) << 32;
	if (asid16)
		v |= 1ull << 36; /* AS */
	if (t->cfg.features & SLAT_FEAT_HWDIRTY)
		v |= 1ull << 39 | 1ull << 40; /* HA, HD */
	if (t->cfg.features & SLAT_FEAT_LPA2)
		v |= 1ull << 59; /* DS */
	return v;
}

uint64_t slat_arm_s1_ttbr(const struct slat_table *t, uint16_t asid, bool cnp)
{
	if (!s1_table(t, false))
		return 0;
	return ttbr_baddr(t) | (uint64_t)asid << 48 | (cnp ? 1 : 0);
}

/*
 * TCR_EL2 with E2H = 0 has one VA range and the output size in PS, bits
 * [18:16] (TCR_EL1's IPS is at [34:32]); bits 23 and 31 are RES1, HA and
 * HD are bits 21 and 22, DS bit 32 (Arm ARM D24.2.195).
 */
uint64_t slat_arm_s1_tcr_el2(const struct slat_table *t)
{
	if (!s1_table(t, true))
		return 0;
	uint64_t v = (uint64_t)(64 - t->geo.ia_bits) |
		     WALK_ATTRS_SHIFTED(8, 10, 12) | tg0_code(t) << 14 |
		     pa_size_code(t->geo.pa_bits) << 16 | 1ull << 23 |
		     1ull << 31;
	if (t->cfg.features & SLAT_FEAT_HWDIRTY)
		v |= 1ull << 21 | 1ull << 22; /* HA, HD */
	if (t->cfg.features & SLAT_FEAT_LPA2)
		v |= 1ull << 32; /* DS */
	return v;
}

/* TTBR0_EL2 with E2H = 0 holds no ASID: bits [63:48] are RES0. */
uint64_t slat_arm_s1_ttbr_el2(const struct slat_table *t, bool cnp)
{
	if (!s1_table(t, true))
		return 0;
	return ttbr_baddr(t) | (cnp ? 1 : 0);
}

uint64_t slat_arm_s1_mair(void)
{
	/* AttrIndx 0 Normal WB RA/WA, 1 Device-nGnRE, 2 Normal NC */
	return 0xffull | 0x04ull << 8 | 0x44ull << 16;
}
