/* SPDX-License-Identifier: MIT */
/*
 * Geometry, the leaf-fit rule and the input checks: what size an entry
 * maps at each level, whether a leaf may map it (leaf_fits(), the one
 * rule), and whether a request is one the table can take at all
 * (check_ipa_range()). Reads the table's geometry; never reads or writes
 * an entry.
 */
#ifndef SLAT_CORE_GEOMETRY_H
#define SLAT_CORE_GEOMETRY_H

#include "format.h"

/* Every flag an operation may take; each refuses those it does not use. */
#define CORE_FLAGS_MAP (SLAT_SHARED | SLAT_MAP_NO_REPLACE | SLAT_SKIP_CMO | \
			SLAT_MAP_BREAK_BLOCK | SLAT_MAP_CAP(0x3f))

static inline unsigned level_shift(const struct slat_table *t, int level)
{
	return t->level_shift[level + 1];
}

static inline uint64_t level_size(const struct slat_table *t, int level)
{
	return 1ull << level_shift(t, level);
}

static inline bool leaf_allowed(const struct slat_table *t, int level)
{
	return level >= 0 && (t->geo.leaf_levels >> level) & 1;
}

static inline bool is_root_level(const struct slat_table *t, int level)
{
	return level == t->geo.start_level;
}

static inline uint64_t granule_mask(const struct slat_table *t)
{
	return t->page_mask;
}

/**
 * leaf_fits() - the one rule for whether a leaf at @level may map the entry
 * at @ipa (to @pa) of a map request with @remaining bytes left from @ipa.
 *
 * The level must allow leaves, the cap (log2 bytes, SLAT_MAP_CAP) must not
 * forbid its size (it never forbids the last level's pages), both addresses
 * must be aligned to its size, and the request must cover it whole: so a
 * leaf never maps an IPA or a PA outside what was asked. leaf_fits_shift()
 * is the same rule for a caller that knows the level's shift.
 */
/* Non-zero when a leaf of @size bytes (a power of two) at @ipa would map
 * another IPA or PA than @ipa and @pa: its bits below the leaf's size. */
static inline uint64_t leaf_misaligned(uint64_t ipa, uint64_t pa,
				       uint64_t size)
{
	return (ipa | pa) & (size - 1);
}

static inline bool leaf_fits_shift(const struct slat_table *t, int level,
				   unsigned shift, uint64_t ipa, uint64_t pa,
				   uint64_t remaining, unsigned cap_shift)
{
	uint64_t size = 1ull << shift;
	bool capped = level < SLAT_LAST_LEVEL && shift > cap_shift;
	return leaf_allowed(t, level) && !capped &&
	       !leaf_misaligned(ipa, pa, size) && remaining >= size;
}

static inline bool leaf_fits(const struct slat_table *t, int level,
			     uint64_t ipa, uint64_t pa, uint64_t remaining,
			     unsigned cap_shift)
{
	return leaf_fits_shift(t, level, level_shift(t, level), ipa, pa,
			       remaining, cap_shift);
}

/* The level whose leaves are @leaf_size bytes (0: the last level), or
 * SLAT_E_INVAL when no leaf has that size. */
static inline int leaf_level_of_size(const struct slat_table *t,
				     uint64_t leaf_size)
{
	if (leaf_size == 0)
		return SLAT_LAST_LEVEL;
	if (leaf_size & (leaf_size - 1))
		return SLAT_E_INVAL;
	int level = t->leaf_level[__builtin_ctzll(leaf_size)];
	return level < 0 ? SLAT_E_INVAL : level;
}

/* Table pages that split one block at @level down to leaves at @target:
 * every level of its subtree, whole. */
static inline uint64_t split_pages(const struct slat_table *t, int level,
				   int target)
{
	uint64_t n = 0, per_level = 1;
	for (int l = level + 1; l <= target; l++) {
		n += per_level;
		per_level *= t->geo.entries;
	}
	return n;
}

/* A table set up by slat_table_init() and not destroyed. */
static inline bool table_live(const struct slat_table *t)
{
	return t && t->root;
}

/* SLAT_E_ALIGN / SLAT_E_RANGE for an IPA range, SLAT_OK otherwise. */
static inline int check_ipa_range(const struct slat_table *t, uint64_t ipa,
				  uint64_t size)
{
	if (size == 0 || ipa + size < ipa)
		return SLAT_E_RANGE;
	if ((ipa | size) & granule_mask(t))
		return SLAT_E_ALIGN;
	uint64_t limit = 1ull << t->geo.ia_bits;
	if (ipa >= limit || size > limit - ipa)
		return SLAT_E_RANGE;
	return SLAT_OK;
}

/* SLAT_SHARED without free_deferred: nothing could free a table another
 * walker may still read, so such calls are refused. */
static inline bool shared_refused(const struct slat_table *t, uint32_t flags)
{
	return (flags & SLAT_SHARED) && !t->mm->free_deferred;
}

static inline bool tlbi_policy_ok(enum slat_tlbi_policy p)
{
	return (unsigned)p <= SLAT_FLUSH_NONE;
}

#endif
