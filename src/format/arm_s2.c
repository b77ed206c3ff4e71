/* SPDX-License-Identifier: MIT */
/*
 * Armv8-A VMSA stage-2 descriptors (VTTBR_EL2/VTCR_EL2), 4K/16K/64K granules,
 * up to 52-bit output with the 64K granule (FEAT_LPA). See docs/design.md
 * for the encoding table.
 */
#include "core/internal.h"

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

#define OA_LOW_MASK(g)  (((1ull << 48) - 1) & ~((1ull << (g)) - 1))
#define OA_HIGH_MASK    (0xfull << 12) /* 64K granule: PA[51:48] */

static bool granule_ok(uint32_t granule, uint8_t *shift)
{
	switch (granule) {
	case 4096: *shift = 12; return true;
	case 16384: *shift = 14; return true;
	case 65536: *shift = 16; return true;
	default: return false;
	}
}

static int arm_geometry(const struct slat_config *cfg, struct slat_geometry *geo)
{
	uint8_t g;
	if (!granule_ok(cfg->granule, &g))
		return SLAT_E_CONFIG;
	if (cfg->features & ~(SLAT_FEAT_FWB | SLAT_FEAT_XNX | SLAT_FEAT_DIC |
			      SLAT_FEAT_HWDIRTY))
		return SLAT_E_CONFIG;

	unsigned max_bits = g == 16 ? 52 : 48;
	unsigned ia = cfg->ia_bits;
	unsigned pa = cfg->pa_bits ? cfg->pa_bits : (ia > 48 ? ia : 48);
	if (ia < 32 || ia > max_bits || pa < 32 || pa > max_bits || ia > pa)
		return SLAT_E_CONFIG;

	unsigned bpl = g - 3;
	/* Concatenate up to 16 root tables (4 bits) before adding a level. */
	unsigned levels = (ia - 8) / bpl;
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

static bool xnx(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_XNX) != 0;
}

static bool hwdirty(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_HWDIRTY) != 0;
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

static slat_pte_t encode_oa(const struct slat_table *t, uint64_t pa)
{
	unsigned g = t->geo.granule_shift;
	slat_pte_t v = pa & OA_LOW_MASK(g);
	if (g == 16)
		v |= (pa >> 36) & OA_HIGH_MASK;
	return v;
}

static slat_pa_t arm_pte_pa(const struct slat_table *t, slat_pte_t pte)
{
	unsigned g = t->geo.granule_shift;
	uint64_t pa = pte & OA_LOW_MASK(g);
	if (g == 16)
		pa |= (pte & OA_HIGH_MASK) << 36;
	return slat_pa(pa);
}

static uint64_t arm_oa_mask(const struct slat_table *t)
{
	/* 52-bit PAs with 64K pages keep PA[51:48] in bits [15:12]. */
	if (t->geo.granule_shift == 16 && t->geo.pa_bits > 48)
		return 0;
	return OA_LOW_MASK(t->geo.granule_shift);
}

static slat_pte_t arm_pte_with_pa(const struct slat_table *t, slat_pte_t pte,
				  slat_pa_t pa)
{
	slat_pte_t oa_mask = OA_LOW_MASK(t->geo.granule_shift);
	if (t->geo.granule_shift == 16)
		oa_mask |= OA_HIGH_MASK;
	return (pte & ~oa_mask) | encode_oa(t, pa.pa);
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

/* With hardware dirty state a writable leaf also carries DBM. */
static slat_pte_t perm_bits(const struct slat_table *t, uint32_t perms)
{
	slat_pte_t v = 0;
	if (perms & SLAT_R)
		v |= S2_AP_R;
	if (perms & SLAT_W)
		v |= hwdirty(t) ? S2_AP_W | S2_DBM : S2_AP_W;
	switch (perms & SLAT_X) {
	case SLAT_X: break;                       /* XN 00 */
	case SLAT_XU: v |= S2_XN0; break;         /* XN 01: EL0 only */
	case SLAT_XK: v |= S2_XN0 | S2_XN1; break; /* XN 11: EL1 only */
	default: v |= S2_XN1; break;              /* XN 10: none */
	}
	return v;
}

static slat_pte_t arm_make_leaf(const struct slat_table *t, slat_pa_t pa,
				uint32_t attrs, int level)
{
	slat_pte_t type = level == SLAT_LAST_LEVEL ? S2_VALID | S2_TABLE_OR_PAGE
						   : S2_VALID;
	return type | encode_oa(t, pa.pa) |
	       memattr(t, SLAT_MT(attrs)) << S2_MEMATTR_SHIFT |
	       perm_bits(t, attrs) | S2_SH_IS | S2_AF |
	       (slat_pte_t)((attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT) << S2_SW_SHIFT;
}

static slat_pte_t arm_make_table(const struct slat_table *t, slat_pa_t pa)
{
	return S2_VALID | S2_TABLE_OR_PAGE | encode_oa(t, pa.pa);
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
	pte &= ~(S2_AP_R | S2_AP_W | S2_DBM | S2_XN_MASK);
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

static bool arm_leaf_dirty(const struct slat_table *t, slat_pte_t pte)
{
	return hwdirty(t) && (pte & S2_DBM) && (pte & S2_AP_W);
}

/* Writable-clean: DBM stays, so the hardware sets S2AP.W on a write. */
static slat_pte_t arm_leaf_cleaned(const struct slat_table *t, slat_pte_t pte)
{
	(void)t;
	return pte & ~S2_AP_W;
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
	switch (access) {
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

const struct slat_format slat_format_arm_s2 = {
	.name = "arm-s2",
	.id = SLAT_FMT_ARM_S2,
	.geometry = arm_geometry,
	.check_attrs = arm_check_attrs,
	.make_leaf = arm_make_leaf,
	.make_table = arm_make_table,
	.oa_mask = arm_oa_mask,
	.pte_pa = arm_pte_pa,
	.pte_with_pa = arm_pte_with_pa,
	.leaf_attrs = arm_leaf_attrs,
	.leaf_with_perms = arm_leaf_with_perms,
	.leaf_for_level = arm_leaf_for_level,
	.leaf_dirty = arm_leaf_dirty,
	.leaf_cleaned = arm_leaf_cleaned,
	.hw_update = arm_hw_update,
	.present_mask = S2_VALID,
	.table_bit = S2_TABLE_OR_PAGE,
	.table_bit_set = true,
	.write_bit = S2_AP_W | S2_DBM,
	.young_bit = S2_AF,
	.dirty_bit = S2_AP_W, /* with DBM set */
	.locked = S2_LOCKED,
	.split_needs_bbm = true,
	.tlbi_by_address = true,
	.cache_maintenance = true,
};
