/* SPDX-License-Identifier: MIT */
/*
 * Armv8-A VMSA stage-1 descriptors (TTBR0/TTBR1_EL1): the tables a guest
 * builds for itself. The same output-address field as stage 2; permissions
 * through AP[2:1], PXN and UXN, memory type through AttrIndx into a fixed
 * MAIR_EL1 layout (docs/design.md), nG for ASID-tagged entries. With
 * FEAT_LPA2 (TCR_EL1.DS = 1) a 4K walk of more than 48 VA bits starts at
 * level -1.
 *
 * With SLAT_FEAT_S1_EL2 the same tables serve the EL2 translation regime
 * with HCR_EL2.E2H = 0 (TTBR0_EL2, a hypervisor's own map), a regime of
 * one privilege level: AP[1] is RES1 and only AP[2] means anything (Arm
 * ARM D8.4.1.2.1, Table D8-62), bit 54 is XN, the one execute-never
 * (D8.4.1.2.3), PXN (bit 53) and nG (bit 11) are RES0 (every translation
 * is global, D8.16.3.1). Access flag and dirty state work as at EL1, under
 * TCR_EL2.HA/HD.
 */
#include "format/vmsa.h"

#define S1_VALID         (1ull << 0)
#define S1_TABLE_OR_PAGE (1ull << 1)
#define S1_ATTRIDX_SHIFT 2
#define S1_ATTRIDX_MASK  (7ull << S1_ATTRIDX_SHIFT)
#define S1_AP_USER       (1ull << 6)  /* AP[1]: EL0 access; RES1 at EL2 */
#define S1_AP_RO         (1ull << 7)  /* AP[2]: read-only */
#define S1_SH_IS         (3ull << 8)
#define S1_AF            (1ull << 10)
#define S1_NG            (1ull << 11)
#define S1_DBM           (1ull << 51)
#define S1_PXN           (1ull << 53) /* RES0 at EL2 */
#define S1_UXN           (1ull << 54) /* XN at EL2 */
#define S1_SW_SHIFT      55
#define S1_SW_MASK       (0xfull << S1_SW_SHIFT)
#define S1_LOCKED        (1ull << 10)

/* The MAIR_EL1 (or MAIR_EL2) layout the table's owner programs: 0xff
 * (Normal WB), 0x04 (Device-nGnRE), 0x44 (Normal NC) at indexes 0, 1, 2
 * (slat_arm_s1_mair()). */
#define MAIR_IDX_NORMAL   0ull
#define MAIR_IDX_DEVICE   1ull
#define MAIR_IDX_NORMAL_NC 2ull

static int s1_geometry(const struct slat_config *cfg, struct slat_geometry *geo)
{
	if (cfg->features &
	    ~(SLAT_FEAT_HWDIRTY | SLAT_FEAT_LPA2 | SLAT_FEAT_S1_EL2))
		return SLAT_E_CONFIG;
	/* Stage 1 has no concatenated tables. */
	return vmsa_geometry(cfg, geo, 0, true);
}

static bool hwdirty(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_HWDIRTY) != 0;
}

/* The EL2 regime with HCR_EL2.E2H = 0: one privilege level. */
static bool el2(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_S1_EL2) != 0;
}

/* With TCR_EL1.DS = 1 bits [9:8] hold OA[51:50]; TCR_EL1.SH0/SH1 give
 * the shareability instead. */
static slat_pte_t sh_bits(const struct slat_table *t)
{
	return vmsa_lpa2(&t->cfg) ? 0 : S1_SH_IS;
}

/* EL2 has no EL0 and no ASID: nothing to say about either, and one XN
 * for its own execution (XK and XU together, or neither). */
static int el2_check_attrs(uint32_t attrs)
{
	uint32_t x = attrs & SLAT_X;
	if (attrs & (SLAT_USER | SLAT_NG))
		return SLAT_E_ATTR;
	return x && x != SLAT_X ? SLAT_E_ATTR : SLAT_OK;
}

static int s1_check_attrs(const struct slat_table *t, uint32_t attrs)
{
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK | SLAT_USER |
		      SLAT_NG))
		return SLAT_E_ATTR;
	if (el2(t) && el2_check_attrs(attrs))
		return SLAT_E_ATTR;
	uint32_t mt = SLAT_MT(attrs);
	if (mt != SLAT_MT_NORMAL && mt != SLAT_MT_NORMAL_NC && mt != SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	if ((attrs & SLAT_X) && mt == SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	/* A valid stage-1 entry always lets EL1 (EL2) read. */
	if (!(attrs & SLAT_R))
		return SLAT_E_ATTR;
	/* Memory EL0 may write is never executable at EL1 (the architecture
	 * treats AP[2:1] = 0b01 as PXN): the descriptor could not say it. */
	if ((attrs & SLAT_USER) && (attrs & SLAT_W) && (attrs & SLAT_XK))
		return SLAT_E_ATTR;
	return SLAT_OK;
}

/* With hardware dirty state a writable leaf also carries DBM. At EL2
 * bit 54 (XN) stops EL2's own execution, and PXN stays 0 (RES0). */
static slat_pte_t perm_bits(const struct slat_table *t, uint32_t perms)
{
	slat_pte_t v = 0;
	if (!(perms & SLAT_W))
		v |= S1_AP_RO;
	else if (hwdirty(t))
		v |= S1_DBM;
	if (el2(t))
		return v | ((perms & SLAT_XK) ? 0 : S1_UXN);
	if (!(perms & SLAT_XK))
		v |= S1_PXN;
	if (!(perms & SLAT_XU))
		v |= S1_UXN;
	return v;
}

static slat_pte_t attr_index(uint32_t mt)
{
	switch (mt) {
	case SLAT_MT_DEVICE: return MAIR_IDX_DEVICE;
	case SLAT_MT_NORMAL_NC: return MAIR_IDX_NORMAL_NC;
	default: return MAIR_IDX_NORMAL;
	}
}

static slat_pte_t s1_make_leaf(const struct slat_table *t, slat_pa_t pa,
			       uint32_t attrs, int level)
{
	slat_pte_t type = level == SLAT_LAST_LEVEL ? S1_VALID | S1_TABLE_OR_PAGE
						   : S1_VALID;
	slat_pte_t v = type | vmsa_encode_oa(t, pa.pa) | perm_bits(t, attrs) |
		       attr_index(SLAT_MT(attrs)) << S1_ATTRIDX_SHIFT |
		       sh_bits(t) | S1_AF;
	/* AP[1] is RES1 at EL2 (SLAT_USER and SLAT_NG were refused there) */
	if ((attrs & SLAT_USER) || el2(t))
		v |= S1_AP_USER;
	if (attrs & SLAT_NG)
		v |= S1_NG;
	return v | (slat_pte_t)((attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT) << S1_SW_SHIFT;
}

static slat_pte_t s1_make_table(const struct slat_table *t, slat_pa_t pa)
{
	return S1_VALID | S1_TABLE_OR_PAGE | vmsa_encode_oa(t, pa.pa);
}

/* The memory type, the access flag and the software bits. */
static uint32_t common_attrs(slat_pte_t pte)
{
	uint32_t a;
	switch ((pte & S1_ATTRIDX_MASK) >> S1_ATTRIDX_SHIFT) {
	case MAIR_IDX_DEVICE: a = SLAT_MT_DEVICE; break;
	case MAIR_IDX_NORMAL_NC: a = SLAT_MT_NORMAL_NC; break;
	default: a = SLAT_MT_NORMAL; break;
	}
	if (pte & S1_AF)
		a |= SLAT_YOUNG;
	return a | (uint32_t)((pte & S1_SW_MASK) >> S1_SW_SHIFT) << SLAT_SW_SHIFT;
}

/* At EL2, XN clear is SLAT_X as map took it; AP[1] (RES1) is no EL0
 * access, and nG is never set. */
static uint32_t el2_leaf_attrs(slat_pte_t pte)
{
	return common_attrs(pte) | ((pte & S1_UXN) ? 0 : SLAT_X);
}

static uint32_t s1_leaf_attrs(const struct slat_table *t, slat_pte_t pte)
{
	uint32_t a = SLAT_R;
	bool dbm = hwdirty(t) && (pte & S1_DBM);
	if (!(pte & S1_AP_RO) || dbm)
		a |= SLAT_W;
	if (dbm && !(pte & S1_AP_RO))
		a |= SLAT_DIRTY;
	if (el2(t))
		return a | el2_leaf_attrs(pte);
	if (!(pte & S1_PXN))
		a |= SLAT_XK;
	if (!(pte & S1_UXN))
		a |= SLAT_XU;
	if (pte & S1_AP_USER)
		a |= SLAT_USER;
	if (pte & S1_NG)
		a |= SLAT_NG;
	return a | common_attrs(pte);
}

static slat_pte_t s1_leaf_with_perms(const struct slat_table *t,
				     slat_pte_t pte, uint32_t perms)
{
	/* Writable-clean stays clean: no write happened. */
	if ((perms & SLAT_W) && hwdirty(t) && (pte & S1_DBM)) {
		slat_pte_t keep = pte & (S1_AP_RO | S1_DBM);
		pte &= ~(S1_AP_RO | S1_DBM | S1_PXN | S1_UXN);
		return pte | keep | (perm_bits(t, perms) & ~(S1_AP_RO | S1_DBM));
	}
	pte &= ~(S1_AP_RO | S1_DBM | S1_PXN | S1_UXN);
	return pte | perm_bits(t, perms);
}

static slat_pte_t s1_leaf_for_level(const struct slat_table *t, slat_pte_t pte,
				    int level)
{
	(void)t;
	if (level == SLAT_LAST_LEVEL)
		return pte | S1_TABLE_OR_PAGE;
	return pte & ~S1_TABLE_OR_PAGE;
}


/* A write: AP[2] clear, or cleared by the CPU on a writable-clean leaf. */
static enum slat_fault write_update(const struct slat_table *t,
				   slat_pte_t pte, slat_pte_t *new)
{
	if (!(pte & S1_AP_RO))
		return SLAT_FAULT_NONE;
	if (hwdirty(t) && (pte & S1_DBM)) {
		*new &= ~S1_AP_RO;
		return SLAT_FAULT_NONE;
	}
	return SLAT_FAULT_PERMISSION;
}

/* The stage-1 walker of a CPU with (or without) TCR_EL1.HA/HD (at EL2,
 * TCR_EL2.HA/HD). */
static enum slat_fault s1_hw_update(const struct slat_table *t, slat_pte_t pte,
				    unsigned access, slat_pte_t *new)
{
	bool el0 = (access & SLAT_ACCESS_USER) ||
		   access == SLAT_ACCESS_EXEC_EL0;
	*new = pte;
	if (!(pte & S1_AF)) {
		if (!hwdirty(t))
			return SLAT_FAULT_ACCESS_FLAG;
		*new |= S1_AF;
	}
	/* No access from EL0 is translated by EL2's regime: none is let
	 * through. At EL1&0, EL0 data accesses need AP[1]; EL0 execution is
	 * UXN's alone. */
	if (el2(t) && el0)
		return SLAT_FAULT_PERMISSION;
	if ((access & SLAT_ACCESS_USER) && !(pte & S1_AP_USER))
		return SLAT_FAULT_PERMISSION;
	switch (access & ~SLAT_ACCESS_USER) {
	case SLAT_ACCESS_READ:
		return SLAT_FAULT_NONE;
	case SLAT_ACCESS_WRITE:
		return write_update(t, pte, new);
	case SLAT_ACCESS_EXEC_EL0:
		return (pte & S1_UXN) ? SLAT_FAULT_PERMISSION : SLAT_FAULT_NONE;
	default:
		/* bit 54 is EL2's XN; PXN is EL1's */
		return (pte & (el2(t) ? S1_UXN : S1_PXN)) ? SLAT_FAULT_PERMISSION
							 : SLAT_FAULT_NONE;
	}
}

const struct slat_format core_format_arm_s1 = {
	.name = "arm-s1",
	.id = SLAT_FMT_ARM_S1,
	.geometry = s1_geometry,
	.check_attrs = s1_check_attrs,
	.make_leaf = s1_make_leaf,
	.make_table = s1_make_table,
	.oa_mask = vmsa_oa_mask,
	.pte_pa = vmsa_pte_pa,
	.pte_with_pa = vmsa_pte_with_pa,
	.leaf_attrs = s1_leaf_attrs,
	.leaf_with_perms = s1_leaf_with_perms,
	.leaf_for_level = s1_leaf_for_level,
	.hw_update = s1_hw_update,
	.present_mask = S1_VALID,
	.table_bit = S1_TABLE_OR_PAGE,
	.table_bit_set = true,
	.wp_clear = S1_DBM,
	.wp_set = S1_AP_RO,
	.young_bit = S1_AF,
	.dirty_bit = S1_AP_RO,
	.dirty_bit_clear = true,
	/* DBM set and AP[2] cleared by the hardware's first write */
	.dirty_mask = S1_DBM | S1_AP_RO,
	.dirty_match = S1_DBM,
	.memattr_mask = S1_ATTRIDX_MASK,
	.locked = S1_LOCKED,
	.split_needs_bbm = true,
	.tlbi_by_address = true,
	/* The guest maintains caches for its own tables' targets. */
	.cache_maintenance = false,
};
