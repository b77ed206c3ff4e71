/* SPDX-License-Identifier: MIT */
/*
 * The format interface: struct slat_format, through which the generic
 * code touches every descriptor bit, and the three formats. Owns no rule
 * of its own: the formats' files implement it (src/format/).
 */
#ifndef SLAT_CORE_FORMAT_H
#define SLAT_CORE_FORMAT_H

#include "defs.h"

/**
 * struct slat_format - one descriptor format.
 *
 * Generic code touches descriptor bits only through these functions and
 * masks. The masks let bulk loops run without an indirect call per entry:
 * where a mask is given, the core applies it directly and never calls a
 * function for the same purpose, so the two must agree (slat_table_init()
 * checks that they do on sample descriptors).
 *
 * @name: the format's name, as slat_table_name() returns it.
 * @id: its SLAT_FMT_* value.
 * @geometry: check @cfg and derive the walk geometry; SLAT_E_CONFIG for a
 *	configuration the architecture does not define.
 * @check_attrs: SLAT_E_ATTR for attributes this format cannot express
 *	exactly (the caller has refused bits outside SLAT_ATTR_INPUT).
 * @make_leaf: the leaf (page or block) at @level mapping @pa with @attrs,
 *	young and, with hardware dirty state, dirty if writable. @attrs were
 *	accepted by @check_attrs. The result ORed with another aligned PA must
 *	equal make_leaf() of that PA whenever @oa_mask is not 0 (the fault
 *	path's memo relies on it).
 * @make_table: a table descriptor pointing to the table page at @pa.
 * @oa_mask: the output address of any descriptor is pte & mask; 0 when it
 *	is not (e.g. Arm 52-bit PAs with 64K granules): @pte_pa is called.
 * @pte_pa: the output address of a leaf or table descriptor.
 * @pte_with_pa: the same descriptor with another output address.
 * @leaf_attrs: a leaf's attributes as SLAT_* bits, with SLAT_YOUNG and
 *	SLAT_DIRTY.
 * @leaf_with_perms: the leaf with exactly the permissions @perms
 *	(SLAT_R/W/X); everything else kept, and a leaf already writable stays
 *	as clean or dirty as it is.
 * @leaf_for_level: the same leaf re-encoded for @level (block <-> page). It
 *	may only set or clear the type bits, whatever the rest holds: promote
 *	derives those bits once per table from leaf_for_level(0) and (~0).
 * @hw_update: the CPU's walker on a valid leaf: whether @access may go
 *	ahead, and in *@new what the CPU writes back (access flag, dirty state)
 *	when it does.
 * @present_mask: an entry is valid iff (pte & present_mask) != 0.
 * @table_bit: below the last level, this bit...
 * @table_bit_set: ...set (Arm) or clear (EPT) makes a valid entry a table.
 * @wp_clear: write protection clears these bits of a leaf...
 * @wp_set: ...and sets these (Arm stage 1: AP[2]).
 * @young_bit: the access flag.
 * @table_young_bit: set by the CPU in table entries it walks (EPT A with
 *	A/D enabled), or 0.
 * @dirty_bit: with hardware dirty state, the bit the CPU changes on a write
 *	to a writable-clean leaf...
 * @dirty_bit_clear: ...by clearing it (Arm stage 1 AP[2]) rather than
 *	setting it. Cleaning a leaf is the opposite change.
 * @dirty_bit_is_state: the dirty bit is never a permission (EPT's D, which
 *	the CPU ignores without A/D), so leaves may differ in it even without
 *	hardware dirty state; else, without it, the bit is a write permission.
 * @dirty_mask: with hardware dirty state, a leaf was written since it was
 *	last cleaned iff (leaf & dirty_mask) == @dirty_match (leaf_dirty()):
 *	one test, which bulk loops apply to a group of leaves at once.
 * @memattr_mask: the memory-type field; a leaf whose field equals that of
 *	make_leaf(SLAT_MT_NORMAL) is cacheable (write-back).
 * @locked: an invalid, non-zero value that marks an entry a walker owns
 *	during break-before-make; never a valid descriptor.
 * @split_needs_bbm: block <-> table changes need break-before-make (Arm
 *	without FEAT_BBM level 2); else the entry is swapped in place.
 * @tlbi_by_address: TLB invalidation by address exists (Arm); else every
 *	invalidation is a whole-VMID flush (EPT's single-context INVEPT).
 * @fault_invalidates: a fault drops the cached translations it used (EPT
 *	violations do), so relaxed permissions need no invalidation at all.
 * @cache_maintenance: leaves may need D-cache and I-cache maintenance (Arm
 *	stage 2); never for the others.
 */
struct slat_format {
	const char *name;
	enum slat_format_id id;

	int (*geometry)(const struct slat_config *cfg, struct slat_geometry *geo);
	int (*check_attrs)(const struct slat_table *t, uint32_t attrs);
	slat_pte_t (*make_leaf)(const struct slat_table *t, slat_pa_t pa,
				uint32_t attrs, int level);
	slat_pte_t (*make_table)(const struct slat_table *t, slat_pa_t pa);
	uint64_t (*oa_mask)(const struct slat_table *t);
	slat_pa_t (*pte_pa)(const struct slat_table *t, slat_pte_t pte);
	slat_pte_t (*pte_with_pa)(const struct slat_table *t, slat_pte_t pte,
				  slat_pa_t pa);
	uint32_t (*leaf_attrs)(const struct slat_table *t, slat_pte_t pte);
	slat_pte_t (*leaf_with_perms)(const struct slat_table *t,
				      slat_pte_t pte, uint32_t perms);
	slat_pte_t (*leaf_for_level)(const struct slat_table *t, slat_pte_t pte,
				     int level);
	enum slat_fault (*hw_update)(const struct slat_table *t, slat_pte_t pte,
				     unsigned access, slat_pte_t *new);

	slat_pte_t present_mask;
	slat_pte_t table_bit;
	bool table_bit_set;
	slat_pte_t wp_clear;
	slat_pte_t wp_set;
	slat_pte_t young_bit;
	slat_pte_t table_young_bit;
	slat_pte_t dirty_bit;
	bool dirty_bit_clear;
	bool dirty_bit_is_state;
	slat_pte_t dirty_mask, dirty_match;
	slat_pte_t memattr_mask;
	slat_pte_t locked;
	bool split_needs_bbm;
	bool tlbi_by_address;
	bool fault_invalidates;
	bool cache_maintenance;
};

extern const struct slat_format core_format_arm_s2 SLAT_INTERNAL;
extern const struct slat_format core_format_ept SLAT_INTERNAL;
extern const struct slat_format core_format_arm_s1 SLAT_INTERNAL;
extern const struct slat_format core_format_npt SLAT_INTERNAL;

#endif
