/* SPDX-License-Identifier: MIT */
/*
 * AMD nested page tables (AMD-V nested paging), 4- and 5-level: AMD64
 * long-mode page-translation entries walked for guest-physical addresses
 * (AMD APM vol. 2, "Nested Paging" and "Long-Mode Page Translation"). See
 * docs/design.md for the encoding table and the memory types.
 */
#include "x86.h"

#define NPT_P        (1ull << 0)
#define NPT_RW       (1ull << 1)
#define NPT_US       (1ull << 2)
#define NPT_PWT      (1ull << 3)
#define NPT_PCD      (1ull << 4)
#define NPT_A        (1ull << 5)
#define NPT_D        (1ull << 6)
#define NPT_PS       X86_PS
/* AVL bit 11: ignored by the walker in every entry. */
#define NPT_LOCKED   (1ull << 11)
#define NPT_PA_MASK  X86_PA_MASK
/* Available to software in every entry (AVL [62:52]; 62:59 would be the
 * protection key of a present leaf, 55:52 never are). */
#define NPT_SW_SHIFT 52
#define NPT_SW_MASK  (0xfull << NPT_SW_SHIFT)
#define NPT_NX       (1ull << 63)
#define NPT_PRESENT  NPT_P
/* The bits that, with PAT, index the host's PAT MSR. */
#define NPT_MT_MASK  (NPT_PWT | NPT_PCD)

/*
 * Host PAT entries the leaves select (PAT index = PAT:PCD:PWT), as Linux
 * programs the PAT MSR: 0 WB, 1 WC, 3 UC. The PAT bit is never set, so a
 * leaf's type does not depend on its level.
 */
#define NPT_MT_WB    0ull
#define NPT_MT_WC    NPT_PWT
#define NPT_MT_UC    (NPT_PCD | NPT_PWT)

static int npt_geometry(const struct slat_config *cfg, struct slat_geometry *geo)
{
	/* The CPU always sets A and D in nested entries (there is no switch
	 * to turn them off): a table that did not know would store over its
	 * updates. Nothing else applies. */
	if (cfg->features != SLAT_FEAT_HWDIRTY)
		return SLAT_E_CONFIG;
	/* The nested walk has the host's paging mode: 4 levels, or 5 with
	 * CR4.LA57. */
	return x86_geometry(cfg, geo);
}

static int npt_check_attrs(const struct slat_table *t, uint32_t attrs)
{
	(void)t;
	if (attrs & ~(SLAT_PERMS | SLAT_MT_MASK | SLAT_SW_MASK))
		return SLAT_E_ATTR;
	uint32_t mt = SLAT_MT(attrs), x = attrs & SLAT_X;
	if (mt != SLAT_MT_NORMAL && mt != SLAT_MT_NORMAL_NC && mt != SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	if (x && mt == SLAT_MT_DEVICE)
		return SLAT_E_ATTR;
	/* P is read: a present entry can be read, and nothing else can be
	 * granted without it. */
	if (!(attrs & SLAT_R))
		return SLAT_E_ATTR;
	/* One NX bit: every nested access is a user access. */
	if (x && x != SLAT_X)
		return SLAT_E_ATTR;
	return SLAT_OK;
}

static slat_pte_t perm_bits(uint32_t perms)
{
	slat_pte_t v = NPT_P | NPT_US;
	if (perms & SLAT_W)
		v |= NPT_RW;
	if (!(perms & SLAT_X))
		v |= NPT_NX;
	return v;
}

static slat_pte_t memtype(uint32_t mt)
{
	switch (mt) {
	case SLAT_MT_NORMAL_NC: return NPT_MT_WC;
	case SLAT_MT_DEVICE: return NPT_MT_UC;
	default: return NPT_MT_WB;
	}
}

/* A and D are set from the start: the CPU would set them on the first
 * access anyway, and an access that finds them set writes nothing. */
static slat_pte_t npt_make_leaf(const struct slat_table *t, slat_pa_t pa,
				uint32_t attrs, int level)
{
	(void)t;
	slat_pte_t v = (pa.pa & NPT_PA_MASK) | perm_bits(attrs) |
		       memtype(SLAT_MT(attrs)) | NPT_A;
	if (level < SLAT_LAST_LEVEL)
		v |= NPT_PS;
	if (attrs & SLAT_W)
		v |= NPT_D;
	return v | (slat_pte_t)((attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT) << NPT_SW_SHIFT;
}

/* Tables grant everything: the leaf alone decides (RW, US and NX combine
 * across the levels of the walk). */
static slat_pte_t npt_make_table(const struct slat_table *t, slat_pa_t pa)
{
	(void)t;
	return NPT_P | NPT_RW | NPT_US | (pa.pa & NPT_PA_MASK);
}

static uint32_t npt_leaf_attrs(const struct slat_table *t, slat_pte_t pte)
{
	(void)t;
	uint32_t a = SLAT_R;
	if (pte & NPT_RW)
		a |= SLAT_W;
	if (!(pte & NPT_NX))
		a |= SLAT_X;
	switch (pte & NPT_MT_MASK) {
	case NPT_MT_WC: a |= SLAT_MT_NORMAL_NC; break;
	case NPT_MT_UC: a |= SLAT_MT_DEVICE; break;
	default: a |= SLAT_MT_NORMAL; break;
	}
	if (pte & NPT_A)
		a |= SLAT_YOUNG;
	if (pte & NPT_D)
		a |= SLAT_DIRTY;
	return a | (uint32_t)((pte & NPT_SW_MASK) >> NPT_SW_SHIFT) << SLAT_SW_SHIFT;
}

/* Adding write marks the leaf dirty: the fault that asks for it writes. */
static slat_pte_t npt_leaf_with_perms(const struct slat_table *t,
				      slat_pte_t pte, uint32_t perms)
{
	(void)t;
	slat_pte_t v = (pte & ~(NPT_RW | NPT_NX)) | perm_bits(perms);
	if ((perms & SLAT_W) && !(pte & NPT_RW))
		v |= NPT_D;
	return v;
}

/*
 * What the CPU does: every nested access is a user access (US must be
 * set), a write needs RW, a fetch needs NX clear; then A (and D on a
 * write) are set, always.
 */
static enum slat_fault npt_hw_update(const struct slat_table *t, slat_pte_t pte,
				     unsigned access, slat_pte_t *new)
{
	(void)t;
	*new = pte;
	access &= ~SLAT_ACCESS_USER;
	bool ok = (pte & NPT_US) != 0;
	if (access == SLAT_ACCESS_WRITE)
		ok = ok && (pte & NPT_RW);
	else if (access != SLAT_ACCESS_READ)
		ok = ok && !(pte & NPT_NX);
	if (!ok)
		return SLAT_FAULT_PERMISSION;
	*new |= NPT_A;
	if (access == SLAT_ACCESS_WRITE)
		*new |= NPT_D;
	return SLAT_FAULT_NONE;
}

const struct slat_format core_format_npt = {
	.name = "npt",
	.id = SLAT_FMT_NPT,
	.geometry = npt_geometry,
	.check_attrs = npt_check_attrs,
	.make_leaf = npt_make_leaf,
	.make_table = npt_make_table,
	.oa_mask = x86_oa_mask,
	.pte_pa = x86_pte_pa,
	.pte_with_pa = x86_pte_with_pa,
	.leaf_attrs = npt_leaf_attrs,
	.leaf_with_perms = npt_leaf_with_perms,
	.leaf_for_level = x86_leaf_for_level,
	.hw_update = npt_hw_update,
	.present_mask = NPT_PRESENT,
	.table_bit = NPT_PS,
	.table_bit_set = false,
	.wp_clear = NPT_RW,
	.young_bit = NPT_A,
	.table_young_bit = NPT_A,
	.dirty_bit = NPT_D,
	.dirty_bit_is_state = true,
	.dirty_mask = NPT_D,
	.dirty_match = NPT_D,
	.memattr_mask = NPT_MT_MASK,
	.locked = NPT_LOCKED,
	/* AMD erratum 383: a large page turned into a table in place, with
	 * the translation unchanged, may leave the CPU with both cached and
	 * a machine check; the invalid step comes first. */
	.split_needs_bbm = true,
	/* Nothing invalidates one guest-physical address: every flush is the
	 * ASID's (the VMCB's TLB_CONTROL at the next VMRUN). */
	.tlbi_by_address = false,
	/* A nested page fault invalidates nothing: a relaxed leaf must be
	 * flushed, or the stale entry faults again. */
	.fault_invalidates = false,
	/* x86 caches are coherent with DMA and instruction fetch. */
	.cache_maintenance = false,
};
