/* SPDX-License-Identifier: MIT */
/*
 * Armv8-A VMSA stage-2 descriptors (VTTBR_EL2/VTCR_EL2), 4K/16K/64K granules,
 * up to 52-bit input and output with the 64K granule (FEAT_LPA) or with the
 * 4K and 16K granules and FEAT_LPA2 (VTCR_EL2.DS = 1). See docs/design.md
 * for the encoding table.
 */
#include "format/vmsa.h"

#define S2_VALID        (1ull << 0)
#define S2_TABLE_OR_PAGE (1ull << 1)
#define S2_MEMATTR_SHIFT 2
#define S2_MEMATTR_MASK (0xfull << S2_MEMATTR_SHIFT)
#define S2_AP_R         (1ull << 6)
#define S2_AP_W         (1ull << 7)
#define S2_SH_IS        (3ull << 8)
#define S2_AF           (1ull << 10)
#define S2_DBM          (1ull << 51)
#define S2_XN0          (1ull << 53)
#define S2_XN1          (1ull << 54)
#define S2_XN_MASK      (S2_XN0 | S2_XN1)
#define S2_SW_SHIFT     55
#define S2_SW_MASK      (0xfull << S2_SW_SHIFT)
#define S2_LOCKED       (1ull << 10)

/* MemAttr[3:0] without and with FEAT_S2FWB. */
#define MEMATTR_NORMAL_WB     0xfull
#define MEMATTR_NORMAL_NC     0x5ull
#define MEMATTR_DEVICE_nGnRE  0x1ull
#define MEMATTR_FWB_NORMAL_WB 0x6ull

static int arm_geometry(const struct slat_config *cfg, struct slat_geometry *geo)
{
	if (cfg->features & ~(SLAT_FEAT_FWB | SLAT_FEAT_XNX | SLAT_FEAT_DIC |
			      SLAT_FEAT_HWDIRTY | SLAT_FEAT_LPA2))
		return SLAT_E_CONFIG;
	/* Concatenate up to 16 root tables (4 bits) before adding a level. */
	return vmsa_geometry(cfg, geo, 4, false);
}

static bool xnx(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_XNX) != 0;
}

static bool hwdirty(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_HWDIRTY) != 0;
}

/* With DS = 1 bits [9:8] hold OA[51:50]; VTCR_EL2.SH0 gives the
 * shareability of every stage-2 mapping instead. */
static slat_pte_t sh_bits(const struct slat_table *t)
{
	return vmsa_lpa2(&t->cfg) ? 0 : S2_SH_IS;
}

static int arm_check_attrs(const struct slat_table *t, uint32_t attrs)
{
	/* SLAT_IPAT and SLAT_SVE are EPT's. */
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK))
		return SLAT_E_ATTR;
	uint32_t mt = SLAT_MT(attrs);
	if (mt != SLAT_MT_NORMAL && mt != SLAT_MT_NORMAL_NC && mt != SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	uint32_t x = attrs & SLAT_X;
	if (x && mt == SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	if (x && x != SLAT_X && !xnx(t))
		return SLAT_E_ATTR;
	return SLAT_OK;
}

static slat_pte_t memattr(const struct slat_table *t, uint32_t mt)
{
	bool fwb = t->cfg.features & SLAT_FEAT_FWB;
	switch (mt) {
	case SLAT_MT_NORMAL_NC: return MEMATTR_NORMAL_NC;
	case SLAT_MT_DEVICE: return MEMATTR_DEVICE_nGnRE;
	default: return fwb ? MEMATTR_FWB_NORMAL_WB : MEMATTR_NORMAL_WB;
	}
}

/* XN[1:0] for SLAT_XK | SLAT_XU (bits 2 and 3 of the attributes): execute
 * everywhere is 00, EL0 only 01, EL1 only 11, nowhere 10. */
static const slat_pte_t xn_bits[4] = {
	[0] = S2_XN1,
	[SLAT_XK >> 2] = S2_XN0 | S2_XN1,
	[SLAT_XU >> 2] = S2_XN0,
	[SLAT_X >> 2] = 0,
};

static slat_pte_t perm_bits(const struct slat_table *t, uint32_t perms)
{
	/* A table, not branches: this is on every fault. */
	slat_pte_t w = hwdirty(t) ? S2_AP_W | S2_DBM : S2_AP_W;
	return ((perms & SLAT_R) ? S2_AP_R : 0) | ((perms & SLAT_W) ? w : 0) |
	       xn_bits[(perms & SLAT_X) >> 2];
}

static slat_pte_t arm_make_leaf(const struct slat_table *t, slat_pa_t pa,
				uint32_t attrs, int level)
{
	slat_pte_t type = level == SLAT_LAST_LEVEL ? S2_VALID | S2_TABLE_OR_PAGE
						   : S2_VALID;
	return type | vmsa_encode_oa(t, pa.pa) |
	       memattr(t, SLAT_MT(attrs)) << S2_MEMATTR_SHIFT |
	       perm_bits(t, attrs) | sh_bits(t) | S2_AF |
	       (slat_pte_t)((attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT) << S2_SW_SHIFT;
}

static slat_pte_t arm_make_table(const struct slat_table *t, slat_pa_t pa)
{
	return S2_VALID | S2_TABLE_OR_PAGE | vmsa_encode_oa(t, pa.pa);
}

static uint32_t arm_leaf_attrs(const struct slat_table *t, slat_pte_t pte)
{
	(void)t;
	uint32_t a = 0;
	if (pte & S2_AP_R)
		a |= SLAT_R;
	if (pte & (S2_AP_W | S2_DBM))
		a |= SLAT_W;
	if ((pte & S2_AP_W) && (pte & S2_DBM))
		a |= SLAT_DIRTY;
	switch (pte & S2_XN_MASK) {
	case 0: a |= SLAT_X; break;
	case S2_XN0: a |= SLAT_XU; break;
	case S2_XN0 | S2_XN1: a |= SLAT_XK; break;
	default: break;
	}
	switch ((pte & S2_MEMATTR_MASK) >> S2_MEMATTR_SHIFT) {
	case MEMATTR_NORMAL_NC: a |= SLAT_MT_NORMAL_NC; break;
	case MEMATTR_DEVICE_nGnRE: a |= SLAT_MT_DEVICE; break;
	default: a |= SLAT_MT_NORMAL; break;
	}
	a |= (uint32_t)((pte & S2_SW_MASK) >> S2_SW_SHIFT) << SLAT_SW_SHIFT;
	if (pte & S2_AF)
		a |= SLAT_YOUNG;
	return a;
}

static slat_pte_t arm_leaf_with_perms(const struct slat_table *t,
				      slat_pte_t pte, uint32_t perms)
{
	/* Already writable (clean or dirty) stays as it is: no write happened. */
	slat_pte_t keep = (perms & SLAT_W) && (pte & (S2_AP_W | S2_DBM))
				  ? pte & (S2_AP_W | S2_DBM) : 0;
	pte &= ~(S2_AP_R | S2_AP_W | S2_DBM | S2_XN_MASK);
	if (keep)
		return pte | keep | perm_bits(t, perms & ~SLAT_W);
	return pte | perm_bits(t, perms);
}

static slat_pte_t arm_leaf_for_level(const struct slat_table *t,
				     slat_pte_t pte, int level)
{
	(void)t;
	if (level == SLAT_LAST_LEVEL)
		return pte | S2_TABLE_OR_PAGE;
	return pte & ~S2_TABLE_OR_PAGE;
}

static bool exec_allowed(const struct slat_table *t, slat_pte_t pte, bool el0)
{
	slat_pte_t xn = pte & S2_XN_MASK;
	if (!xnx(t))
		return !(pte & S2_XN1);
	if (el0)
		return xn == 0 || xn == S2_XN0;
	return xn == 0 || xn == (S2_XN0 | S2_XN1);
}

/* The stage-2 walker of a CPU with (or without) FEAT_HAFDBS HA/HD. */
static enum slat_fault arm_hw_update(const struct slat_table *t, slat_pte_t pte,
				     unsigned access, slat_pte_t *new)
{
	*new = pte;
	/* The access flag fault comes before the permission fault. */
	if (!(pte & S2_AF)) {
		if (!hwdirty(t))
			return SLAT_FAULT_ACCESS_FLAG;
		*new |= S2_AF;
	}
	/* Stage 2 does not see the exception level of a data access. */
	switch (access & ~SLAT_ACCESS_USER) {
	case SLAT_ACCESS_READ:
		return (pte & S2_AP_R) ? SLAT_FAULT_NONE : SLAT_FAULT_PERMISSION;
	case SLAT_ACCESS_WRITE:
		if (pte & S2_AP_W)
			return SLAT_FAULT_NONE;
		if (hwdirty(t) && (pte & S2_DBM)) {
			*new |= S2_AP_W;
			return SLAT_FAULT_NONE;
		}
		return SLAT_FAULT_PERMISSION;
	default:
		return exec_allowed(t, pte, access == SLAT_ACCESS_EXEC_EL0)
			       ? SLAT_FAULT_NONE : SLAT_FAULT_PERMISSION;
	}
}

const struct slat_format core_format_arm_s2 = {
	.name = "arm-s2",
	.id = SLAT_FMT_ARM_S2,
	.geometry = arm_geometry,
	.check_attrs = arm_check_attrs,
	.make_leaf = arm_make_leaf,
	.make_table = arm_make_table,
	.oa_mask = vmsa_oa_mask,
	.pte_pa = vmsa_pte_pa,
	.pte_with_pa = vmsa_pte_with_pa,
	.leaf_attrs = arm_leaf_attrs,
	.leaf_with_perms = arm_leaf_with_perms,
	.leaf_for_level = arm_leaf_for_level,
	.hw_update = arm_hw_update,
	.present_mask = S2_VALID,
	.table_bit = S2_TABLE_OR_PAGE,
	.table_bit_set = true,
	.wp_clear = S2_AP_W | S2_DBM,
	.young_bit = S2_AF,
	/* With DBM set; cleaning clears it and keeps DBM, so the CPU sets
	 * S2AP.W again on the next write. */
	.dirty_bit = S2_AP_W,
	/* DBM set and S2AP[1] set by the hardware's first write */
	.dirty_mask = S2_DBM | S2_AP_W,
	.dirty_match = S2_DBM | S2_AP_W,
	.memattr_mask = S2_MEMATTR_MASK,
	.locked = S2_LOCKED,
	.split_needs_bbm = true,
	.tlbi_by_address = true,
	.cache_maintenance = true,
};
