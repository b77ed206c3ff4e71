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

static inline uint64_t granule_mask(const struct slat_table *t)
{
	return t->page_mask;
}

/* The granule, bytes: the last level's leaves. */
static inline uint64_t granule_size(const struct slat_table *t)
{
	return granule_mask(t) + 1;
}

/* A caller naming the last level as a constant gets granule_size(), the
 * value the input check tests: the compiler then sees they are one. */
static inline uint64_t level_size(const struct slat_table *t, int level)
{
	if (__builtin_constant_p(level) && level == SLAT_LAST_LEVEL)
		return granule_size(t);
	return 1ull << level_shift(t, level);
}

/* Leaves are allowed at @level: always at the last (pages), above it as
 * the geometry says. */
static inline bool leaf_allowed(const struct slat_table *t, int level)
{
	return level == SLAT_LAST_LEVEL ||
	       (level >= 0 && (t->geo.leaf_levels >> level) & 1);
}

static inline bool is_root_level(const struct slat_table *t, int level)
{
	return level == t->geo.start_level;
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

/* leaf_fits() of a leaf of @size (1 << @shift) bytes. */
static inline bool leaf_fits_size(const struct slat_table *t, int level,
				  unsigned shift, uint64_t size, uint64_t ipa,
				  uint64_t pa, uint64_t remaining,
				  unsigned cap_shift)
{
	bool capped = level < SLAT_LAST_LEVEL && shift > cap_shift;
	return leaf_allowed(t, level) && !capped &&
	       !leaf_misaligned(ipa, pa, size) && remaining >= size;
}

static inline bool leaf_fits_shift(const struct slat_table *t, int level,
				   unsigned shift, uint64_t ipa, uint64_t pa,
				   uint64_t remaining, unsigned cap_shift)
{
	return leaf_fits_size(t, level, shift, 1ull << shift, ipa, pa,
			      remaining, cap_shift);
}

static inline bool leaf_fits(const struct slat_table *t, int level,
			     uint64_t ipa, uint64_t pa, uint64_t remaining,
			     unsigned cap_shift)
{
	return leaf_fits_size(t, level, level_shift(t, level),
			      level_size(t, level), ipa, pa, remaining,
			      cap_shift);
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

/*
 * The bits of @beyond (~0 << the address size, which is never below the
 * granule) in the first byte of the last granule of [addr, addr + size),
 * in @addr or in size - granule: non-zero when the range is empty, wraps,
 * or reaches past the address size. Exact for granule-aligned @addr and
 * @size, which the same checks test beside it. One test, and a mask rather
 * than a shift count, so that the fault path's check costs a few
 * instructions: for a page (@size the granule) it is @addr & @beyond.
 */
static inline uint64_t range_beyond(uint64_t addr, uint64_t size,
				    uint64_t granule, uint64_t beyond)
{
	uint64_t last = size - granule;
	return (addr | last | (addr + last)) & beyond;
}

/* Non-zero when [ipa, ipa + size) is not a range of whole granules inside
 * ia_bits: check_ipa_range() says which error. */
static inline uint64_t ipa_range_bad(const struct slat_table *t, uint64_t ipa,
				     uint64_t size)
{
	return range_beyond(ipa, size, granule_size(t), t->ia_beyond) |
	       ((ipa | size) & granule_mask(t));
}

/* Non-zero when [pa, pa + size), of a size ipa_range_bad() passed, is not
 * a range of whole granules inside pa_bits. */
static inline uint64_t pa_range_bad(const struct slat_table *t, uint64_t pa,
				    uint64_t size)
{
	return range_beyond(pa, size, granule_size(t), t->pa_beyond) |
	       (pa & granule_mask(t));
}

/*
 * The one IPA check: SLAT_E_RANGE for an empty or wrapping range, else
 * SLAT_E_ALIGN for one not aligned to the granule, else SLAT_E_RANGE for
 * one past ia_bits; SLAT_OK otherwise.
 */
static inline int check_ipa_range(const struct slat_table *t, uint64_t ipa,
				  uint64_t size)
{
	if (__builtin_expect(!ipa_range_bad(t, ipa, size), 1))
		return SLAT_OK;
	if (size == 0 || ipa + size < ipa)
		return SLAT_E_RANGE;
	return (ipa | size) & granule_mask(t) ? SLAT_E_ALIGN : SLAT_E_RANGE;
}

/* The output range of a request whose IPA range passed: SLAT_E_ALIGN,
 * else SLAT_E_RANGE past pa_bits, else SLAT_OK. */
static inline int check_pa_range(const struct slat_table *t, uint64_t pa,
				 uint64_t size)
{
	if (__builtin_expect(!pa_range_bad(t, pa, size), 1))
		return SLAT_OK;
	return pa & granule_mask(t) ? SLAT_E_ALIGN : SLAT_E_RANGE;
}

/*
 * The one input check of map, before its attributes (the format's): known
 * flags (t->map_flags_refused also holds SLAT_SHARED when the platform
 * cannot defer frees), then the IPA range, then the output range; one
 * test when all is well.
 */
static inline int check_map_input(const struct slat_table *t, uint64_t ipa,
				  uint64_t size, uint64_t pa, uint32_t flags)
{
	if (__builtin_expect(!((flags & t->map_flags_refused) |
			       ipa_range_bad(t, ipa, size) |
			       pa_range_bad(t, pa, size)), 1))
		return SLAT_OK;
	if (flags & t->map_flags_refused)
		return SLAT_E_INVAL;
	int ret = check_ipa_range(t, ipa, size);
	return ret ? ret : check_pa_range(t, pa, size);
}

/* The largest leaf map's @flags allow, log2 bytes (63: no cap). */
static inline unsigned map_cap_shift(uint32_t flags)
{
	unsigned cap = SLAT_MAP_CAP_SHIFT(flags);
	return cap ? cap : 63;
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
