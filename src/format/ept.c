/* SPDX-License-Identifier: MIT */
/*
 * Intel EPT paging-structure entries, 4- and 5-level. See docs/design.md for
 * the encoding table.
 */
#include "x86.h"

#define EPT_R        (1ull << 0)
#define EPT_W        (1ull << 1)
#define EPT_X        (1ull << 2)
#define EPT_RWX      (EPT_R | EPT_W | EPT_X)
#define EPT_MT_SHIFT 3
#define EPT_MT_MASK  (7ull << EPT_MT_SHIFT)
#define EPT_IPAT     (1ull << 6)
#define EPT_PS       X86_PS
#define EPT_A        (1ull << 8)
#define EPT_D        (1ull << 9)
#define EPT_XU       (1ull << 10)
#define EPT_PA_MASK  X86_PA_MASK
#define EPT_SW_SHIFT 52
#define EPT_SW_MASK  (0xfull << EPT_SW_SHIFT)
#define EPT_LOCKED   (1ull << 62)
#define EPT_SVE      (1ull << 63)

#define EPT_MT_UC 0ull
#define EPT_MT_WC 1ull
#define EPT_MT_WB 6ull

static int ept_geometry(const struct slat_config *cfg, struct slat_geometry *geo)
{
	if (cfg->features & ~(SLAT_FEAT_HWDIRTY | SLAT_FEAT_EPT_MBEC |
			      SLAT_FEAT_EPT_XONLY))
		return SLAT_E_CONFIG;
	/* 4 levels (PML4) resolve 48 bits, 5 (PML5) 57; the EPTP's walk
	 * length says which. */
	return x86_geometry(cfg, geo);
}

static bool has(const struct slat_table *t, uint32_t feat)
{
	return (t->cfg.features & feat) != 0;
}

static int ept_check_attrs(const struct slat_table *t, uint32_t attrs)
{
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK | SLAT_IPAT |
		      SLAT_SVE))
		return SLAT_E_ATTR;
	uint32_t mt = SLAT_MT(attrs), x = attrs & SLAT_X;
	if (mt != SLAT_MT_NORMAL && mt != SLAT_MT_NORMAL_NC && mt != SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	if (x && mt == SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	/* Write without read is an EPT misconfiguration. */
	if ((attrs & SLAT_W) && !(attrs & SLAT_R))
		return SLAT_E_ATTR;
	if (x && x != SLAT_X && !has(t, SLAT_FEAT_EPT_MBEC))
		return SLAT_E_ATTR;
	/* Bits 2:0 all clear would not be present at all. */
	if (!(attrs & (SLAT_R | SLAT_XK)))
		return SLAT_E_ATTR;
	if (!(attrs & SLAT_R) && !has(t, SLAT_FEAT_EPT_XONLY))
		return SLAT_E_ATTR;
	return SLAT_OK;
}

static slat_pte_t perm_bits(const struct slat_table *t, uint32_t perms)
{
	slat_pte_t v = 0;
	if (perms & SLAT_R)
		v |= EPT_R;
	if (perms & SLAT_W)
		v |= EPT_W;
	if (has(t, SLAT_FEAT_EPT_MBEC)) {
		v |= (perms & SLAT_XK) ? EPT_X : 0;
		v |= (perms & SLAT_XU) ? EPT_XU : 0;
	} else if (perms & SLAT_X) {
		v |= EPT_X;
	}
	return v;
}

static slat_pte_t memtype(uint32_t mt)
{
	switch (mt) {
	case SLAT_MT_NORMAL_NC: return EPT_MT_WC;
	case SLAT_MT_DEVICE: return EPT_MT_UC;
	default: return EPT_MT_WB;
	}
}

static slat_pte_t ept_make_leaf(const struct slat_table *t, slat_pa_t pa,
				uint32_t attrs, int level)
{
	slat_pte_t v = (pa.pa & EPT_PA_MASK) | perm_bits(t, attrs) |
		       memtype(SLAT_MT(attrs)) << EPT_MT_SHIFT | EPT_A;
	if (level < SLAT_LAST_LEVEL)
		v |= EPT_PS;
	if (attrs & SLAT_W)
		v |= EPT_D;
	if (attrs & SLAT_IPAT)
		v |= EPT_IPAT;
	if (attrs & SLAT_SVE)
		v |= EPT_SVE;
	return v | (slat_pte_t)((attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT) << EPT_SW_SHIFT;
}

static slat_pte_t ept_make_table(const struct slat_table *t, slat_pa_t pa)
{
	slat_pte_t v = EPT_RWX | (pa.pa & EPT_PA_MASK);
	if (has(t, SLAT_FEAT_EPT_MBEC))
		v |= EPT_XU;
	return v;
}

static uint32_t ept_leaf_attrs(const struct slat_table *t, slat_pte_t pte)
{
	uint32_t a = 0;
	if (pte & EPT_R)
		a |= SLAT_R;
	if (pte & EPT_W)
		a |= SLAT_W;
	if (has(t, SLAT_FEAT_EPT_MBEC)) {
		a |= (pte & EPT_X) ? SLAT_XK : 0;
		a |= (pte & EPT_XU) ? SLAT_XU : 0;
	} else if (pte & EPT_X) {
		a |= SLAT_X;
	}
	switch ((pte & EPT_MT_MASK) >> EPT_MT_SHIFT) {
	case EPT_MT_WC: a |= SLAT_MT_NORMAL_NC; break;
	case EPT_MT_UC: a |= SLAT_MT_DEVICE; break;
	default: a |= SLAT_MT_NORMAL; break;
	}
	if (pte & EPT_IPAT)
		a |= SLAT_IPAT;
	if (pte & EPT_SVE)
		a |= SLAT_SVE;
	if (pte & EPT_A)
		a |= SLAT_YOUNG;
	if ((pte & EPT_D) && has(t, SLAT_FEAT_HWDIRTY))
		a |= SLAT_DIRTY;
	return a | (uint32_t)((pte & EPT_SW_MASK) >> EPT_SW_SHIFT) << SLAT_SW_SHIFT;
}

/* Adding write marks the leaf dirty: the fault that asks for it writes. */
static slat_pte_t ept_leaf_with_perms(const struct slat_table *t,
				      slat_pte_t pte, uint32_t perms)
{
	slat_pte_t v = (pte & ~(EPT_RWX | EPT_XU)) | perm_bits(t, perms);
	if ((perms & SLAT_W) && !(pte & EPT_W))
		v |= EPT_D;
	return v;
}


static bool access_allowed(const struct slat_table *t, slat_pte_t pte,
			   unsigned access)
{
	switch (access) {
	case SLAT_ACCESS_READ: return pte & EPT_R;
	case SLAT_ACCESS_WRITE: return pte & EPT_W;
	case SLAT_ACCESS_EXEC_EL0:
		return has(t, SLAT_FEAT_EPT_MBEC) ? (pte & EPT_XU) : (pte & EPT_X);
	default: return pte & EPT_X;
	}
}

/* What the CPU does: check permissions, then set A (and D on a write). */
static enum slat_fault ept_hw_update(const struct slat_table *t, slat_pte_t pte,
				     unsigned access, slat_pte_t *new)
{
	*new = pte;
	/* Nor does EPT see whether a data access was made in user mode. */
	access &= ~SLAT_ACCESS_USER;
	if (!access_allowed(t, pte, access))
		return SLAT_FAULT_PERMISSION;
	if (has(t, SLAT_FEAT_HWDIRTY)) {
		*new |= EPT_A;
		if (access == SLAT_ACCESS_WRITE)
			*new |= EPT_D;
	}
	return SLAT_FAULT_NONE;
}

const struct slat_format core_format_ept = {
	.name = "ept",
	.id = SLAT_FMT_EPT,
	.geometry = ept_geometry,
	.check_attrs = ept_check_attrs,
	.make_leaf = ept_make_leaf,
	.make_table = ept_make_table,
	.oa_mask = x86_oa_mask,
	.pte_pa = x86_pte_pa,
	.pte_with_pa = x86_pte_with_pa,
	.leaf_attrs = ept_leaf_attrs,
	.leaf_with_perms = ept_leaf_with_perms,
	.leaf_for_level = x86_leaf_for_level,
	.hw_update = ept_hw_update,
	.present_mask = EPT_RWX,
	.table_bit = EPT_PS,
	.table_bit_set = false,
	.wp_clear = EPT_W,
	.young_bit = EPT_A,
	.table_young_bit = EPT_A,
	.dirty_bit = EPT_D,
	.dirty_bit_is_state = true,
	.dirty_mask = EPT_D,
	.dirty_match = EPT_D,
	.memattr_mask = EPT_MT_MASK,
	.locked = EPT_LOCKED,
	.split_needs_bbm = false,
	.tlbi_by_address = false,
	/* SDM: an EPT violation invalidates the guest-physical and combined
	 * mappings used to translate the address that caused it. */
	.fault_invalidates = true,
	/* x86 caches are coherent with DMA and instruction fetch. */
	.cache_maintenance = false,
};
