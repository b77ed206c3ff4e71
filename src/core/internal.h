/* SPDX-License-Identifier: MIT */
/*
 * Private to libslat: the format interface and the primitives every
 * operation is built from. Freestanding.
 *
 * One rule, one place:
 *  - pte_write() is the only writer of a live entry (pte_try_set() for
 *    what publishes, pte_try_update() for a leaf changed in place), but
 *    for the exclusive bulk loops' pairs of entries (pte_store_pair_once(),
 *    the same plain store, two lanes at once);
 *  - leaf_fits() is the only rule for whether a leaf may map an entry;
 *  - core_descend() is the only descent that bypasses the walker; a fault
 *    whose memo proves where its entry is reads that entry instead
 *    (core_descend_fault(), map_fault_memo());
 *  - core_install_leaves(), core_break()/core_make(), core_clear_leaves()
 *    and core_unlink_table() own the counters, the reference counts, the
 *    HAS_BLOCKS note and the cache maintenance of what they write.
 */
#ifndef SLAT_CORE_INTERNAL_H
#define SLAT_CORE_INTERNAL_H

#include <slat/slat.h>
#include <slat/walk.h>

/* Functions shared between the core's files, never exported. */
#define SLAT_INTERNAL __attribute__((visibility("hidden")))
#define SLAT_ALWAYS_INLINE inline __attribute__((always_inline))

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

/* Every flag an operation may take; each refuses those it does not use. */
#define CORE_FLAGS_MAP (SLAT_SHARED | SLAT_MAP_NO_REPLACE | SLAT_SKIP_CMO | \
			SLAT_MAP_BREAK_BLOCK | SLAT_MAP_CAP(0x3f))

/* ---- Geometry ---- */

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

/* ---- Descriptors ---- */

static inline bool pte_valid(const struct slat_table *t, slat_pte_t pte)
{
	return (pte & t->fmt->present_mask) != 0;
}

static inline bool pte_table(const struct slat_table *t, slat_pte_t pte,
			     int level)
{
	return level < SLAT_LAST_LEVEL && pte_valid(t, pte) &&
	       ((pte & t->fmt->table_bit) != 0) == t->fmt->table_bit_set;
}

/*
 * A table descriptor as make_table() writes them, in one test: implies
 * pte_table() below the last level (the converse may fail, e.g. an EPT
 * table without every permission).
 */
static inline bool pte_links_table(const struct slat_table *t, slat_pte_t pte)
{
	return (pte & t->table_mask) == t->table_match;
}

static inline bool pte_leaf(const struct slat_table *t, slat_pte_t pte,
			    int level)
{
	return pte_valid(t, pte) && !pte_table(t, pte, level);
}

static inline bool pte_locked(const struct slat_table *t, slat_pte_t pte)
{
	return pte == t->fmt->locked;
}

/* A valid leaf mapping write-back memory that the D-cache may hold (only
 * meaningful where the format needs cache maintenance). */
static inline bool pte_cacheable(const struct slat_table *t, slat_pte_t pte)
{
	return (pte & t->fmt->memattr_mask) == t->normal_memattr;
}

static inline slat_pa_t pte_oa(const struct slat_table *t, slat_pte_t pte)
{
	return t->oa_mask ? slat_pa(pte & t->oa_mask) : t->fmt->pte_pa(t, pte);
}

static inline bool pa_run_linear(slat_pa_t first, uint64_t bytes)
{
	/* Within one 2^48 window every format's OA field is linear in PA. */
	return ((first.pa ^ (first.pa + bytes - 1)) >> 48) == 0;
}

/* ---- The writer ---- */

/* The hardware updates descriptors itself (AF, dirty state): even an
 * exclusive operation must read-modify-write valid leaves atomically. */
static inline bool hw_updates_ptes(const struct slat_table *t)
{
	return (t->cfg.features & SLAT_FEAT_HWDIRTY) != 0;
}

/* Hardware dirty state says the leaf @pte was written since it was last
 * cleaned. */
static inline bool leaf_dirty(const struct slat_table *t, slat_pte_t pte)
{
	return hw_updates_ptes(t) &&
	       (pte & t->fmt->dirty_mask) == t->fmt->dirty_match;
}

/* The CPU has nothing left to set in the valid leaf @pte (its access flag
 * and dirty state are set): it does not write the entry until changed. */
static inline bool cpu_done_with(const struct slat_table *t, slat_pte_t pte)
{
	return (pte & t->fmt->young_bit) && leaf_dirty(t, pte);
}

static inline slat_pte_t pte_read(const slat_pte_t *ptep)
{
	/* Acquire: a walker follows what it reads to a table page that
	 * another walker filled and published with a release. */
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}

/* An entry read only for its value (a leaf scan): the walker reads it
 * again with pte_read() before following it to a table. */
static inline slat_pte_t pte_peek(const slat_pte_t *ptep)
{
	return __atomic_load_n(ptep, __ATOMIC_RELAXED);
}

/*
 * A store to an entry nobody else may change: the caller owns it (locked
 * or invalid, so neither the CPU nor another walker writes it), or it is
 * in a table page not yet published.
 */
static inline void pte_store(slat_pte_t *ptep, slat_pte_t v)
{
	__atomic_store_n(ptep, v, __ATOMIC_RELEASE);
}

#if defined(__SANITIZE_THREAD__)
#define SLAT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLAT_TSAN 1
#endif
#endif

/*
 * A store that orders nothing, of an entry other walkers do not write. A
 * volatile store, as the kernel's WRITE_ONCE(): one single-copy atomic
 * store of the aligned 64-bit entry on every target, which GCC addresses
 * like any store (its atomic builtins want an address register each, which
 * spills in an unrolled loop). ThreadSanitizer builds use the relaxed
 * atomic store it stands for, so that the race checks see it as one.
 */
static inline void pte_store_once(slat_pte_t *ptep, slat_pte_t v)
{
#ifdef SLAT_TSAN
	__atomic_store_n(ptep, v, __ATOMIC_RELAXED);
#else
	*(volatile slat_pte_t *)ptep = v;
#endif
}

/*
 * Two neighbouring entries in one 16-byte access, where the core may use
 * vector registers (not at EL2 built with -mgeneral-regs-only, nor under
 * ThreadSanitizer, whose race checks want one access per entry). Each
 * 64-bit lane is single-copy atomic, as pte_peek() and pte_store_once()
 * are: an aligned 128-bit SIMD access is a pair of single-copy atomic
 * 64-bit accesses on Arm, and every aligned quadword of an aligned 16-byte
 * SSE access is atomic on x86. Bulk loops use them on 16-byte aligned
 * entries nobody else writes: half the loads and stores, which is what
 * bounds such a loop.
 */
#if (defined(__SSE2__) || defined(__ARM_NEON)) && !defined(SLAT_TSAN)
#define SLAT_PTE_PAIRS 1
typedef slat_pte_t pte_pair __attribute__((vector_size(16)));

static inline pte_pair pte_peek_pair(const slat_pte_t *ptep)
{
	return *(const volatile pte_pair *)(const void *)ptep;
}

static inline void pte_store_pair_once(slat_pte_t *ptep, pte_pair v)
{
	*(volatile pte_pair *)(void *)ptep = v;
}

/* Pairs start at 16-byte aligned entries. */
static inline bool pte_pair_aligned(const slat_pte_t *ptep)
{
	return !((uintptr_t)ptep & 15);
}
#endif

static inline slat_pte_t pte_apply(slat_pte_t pte, slat_pte_t clear,
				   slat_pte_t set)
{
	return (pte & ~clear) | set;
}

/* Who else may write an entry while an operation runs. */
enum pte_writers {
	PTE_ALONE,     /* nobody: a plain store */
	PTE_WITH_CPU,  /* the CPU, which sets AF and dirty state in valid
			  leaves (SLAT_FEAT_HWDIRTY): a CAS loop */
	PTE_SHARED,    /* other walkers (SLAT_SHARED): one CAS */
};

/* Write protection leaves @pte as it is. */
static inline bool wp_done(const struct slat_table *t, slat_pte_t pte)
{
	return pte_apply(pte, t->fmt->wp_clear, t->fmt->wp_set) == pte;
}

/* A relax to @perms leaves the leaf @pte as it is: it has them, and the
 * access flag. */
static inline bool relax_done(const struct slat_table *t, slat_pte_t pte,
			      uint32_t perms)
{
	uint32_t have = t->fmt->leaf_attrs(t, pte);
	return (have & perms) == perms && (have & SLAT_YOUNG);
}

/* What decides the memory type: EPT's ignore-PAT too. */
#define MEMTYPE_ATTRS (SLAT_MT_MASK | SLAT_IPAT)

/* Map's rule for keeping a leaf: @leaf (mapping from @leaf_addr) already
 * translates @addr to @pa with the memory type of @attrs. */
static inline bool leaf_translates(const struct slat_table *t, slat_pte_t leaf,
				   uint64_t leaf_addr, uint64_t addr,
				   uint64_t pa, uint32_t attrs)
{
	return t->fmt->pte_pa(t, leaf).pa + (addr - leaf_addr) == pa &&
	       (t->fmt->leaf_attrs(t, leaf) & MEMTYPE_ATTRS) ==
		       (attrs & MEMTYPE_ATTRS);
}

/* The writers of @t's entries for an operation, decided once per call. */
static inline enum pte_writers pte_writers_of(const struct slat_table *t,
					      bool shared)
{
	return shared ? PTE_SHARED : hw_updates_ptes(t) ? PTE_WITH_CPU : PTE_ALONE;
}

/**
 * pte_write() - the one writer of a live entry: *@ptep becomes
 * (value & ~@clear) | @set.
 * @t: the table.
 * @who: who else may write it (pte_writers_of()).
 * @ptep: the entry.
 * @old: the value the caller read and built its change from.
 * @clear: bits the change clears (~0 to replace the entry whole)...
 * @set: ...and bits it sets.
 * @was: receives the value replaced.
 * @publish: the new value may publish what it points to (a table filled,
 *	memory prepared), so that a reader must see those writes first.
 *
 * Shared walkers compare-and-swap once from @old. Beside the CPU, a valid
 * entry is compared and swapped in a loop that applies the change again to
 * the value it replaces, so that the CPU's access flag and dirty state
 * updates made meanwhile are kept (or, for a change that clears them,
 * consumed: *@was tells); an invalid one, or a valid one whose access flag
 * and dirty state are already set (cpu_done_with()), the CPU never writes
 * until it is changed. Otherwise
 * there is no other writer: a plain store, a release one when it
 * may @publish. Bulk loops pass @who and masks they hoisted into locals:
 * the store may alias any 64-bit field in memory.
 *
 * Return: false only for a shared walker that lost the race; the entry is
 * then unchanged by this call.
 */
static SLAT_ALWAYS_INLINE bool
pte_write(const struct slat_table *t, enum pte_writers who, slat_pte_t *ptep,
	  slat_pte_t old, slat_pte_t clear, slat_pte_t set, slat_pte_t *was,
	  bool publish)
{
	if (who == PTE_SHARED) {
		*was = old;
		return __atomic_compare_exchange_n(ptep, &old,
						   pte_apply(old, clear, set),
						   false, __ATOMIC_ACQ_REL,
						   __ATOMIC_RELAXED);
	}
	/* Beside the CPU, a valid leaf it has nothing left to set in is as
	 * good as alone: it cannot change under the store. */
	if (who == PTE_WITH_CPU && pte_valid(t, old) && !cpu_done_with(t, old)) {
		while (!__atomic_compare_exchange_n(ptep, &old,
						    pte_apply(old, clear, set),
						    false, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED))
			;
	} else {
		/* No other writer, but the CPU's walker (or the software MMU
		 * playing it) may read the entry meanwhile: a release store, so
		 * that a table or page it publishes is seen as it was filled. */
		if (publish)
			__atomic_store_n(ptep, pte_apply(old, clear, set),
					 __ATOMIC_RELEASE);
		else
			pte_store_once(ptep, pte_apply(old, clear, set));
	}
	*was = old;
	return true;
}

/* pte_write() of a descriptor that may publish what it points to: a new
 * table, or a leaf to memory the caller prepared. */
static SLAT_ALWAYS_INLINE bool
pte_try_set(const struct slat_table *t, enum pte_writers who, slat_pte_t *ptep,
	    slat_pte_t old, slat_pte_t clear, slat_pte_t set, slat_pte_t *was)
{
	return pte_write(t, who, ptep, old, clear, set, was, true);
}

/* pte_write() of a valid leaf changed in place (permissions, access flag,
 * dirty state): the translation stays, nothing is published. */
static SLAT_ALWAYS_INLINE bool
pte_try_update(const struct slat_table *t, enum pte_writers who,
	       slat_pte_t *ptep, slat_pte_t old, slat_pte_t clear,
	       slat_pte_t set, slat_pte_t *was)
{
	return pte_write(t, who, ptep, old, clear, set, was, false);
}

/* The change that takes a leaf from @old to @new, as pte_try_set() wants
 * it: the bits neither touches (the CPU's, among them) keep their latest
 * value. */
static inline void pte_change(slat_pte_t old, slat_pte_t new,
			      slat_pte_t *clear, slat_pte_t *set)
{
	*clear = old & ~new;
	*set = new & ~old;
}

/* ---- Reference counts ---- */

static inline void *table_va(const struct slat_table *t, slat_pte_t pte)
{
	slat_pa_t pa = pte_oa(t, pte);
	if (t->linear)
		return (void *)(uintptr_t)((intptr_t)pa.pa + t->linear_offset);
	return t->mm->phys_to_virt(t->mm_ctx, pa);
}

static inline void *table_page_of(const struct slat_table *t,
				  const slat_pte_t *ptep)
{
	return (void *)((uintptr_t)ptep & ~(uintptr_t)granule_mask(t));
}

/* The count word of a non-root table page. */
static inline uint32_t *table_refcount(const struct slat_table *t, void *table)
{
	if (t->refcounts)
		return &t->refcounts[((uintptr_t)table - t->refcounts_first_page) >>
				     t->geo.granule_shift];
	return t->mm->refcount(t->mm_ctx, table);
}

uint32_t core_count_entries(const struct slat_table *t,
			    const slat_pte_t *table) SLAT_INTERNAL;

/* Shared walkers: a store only when the word is not unknown already, so
 * that the line stays shared between vCPUs faulting into one table. */
static SLAT_ALWAYS_INLINE void refcount_mark_unknown(uint32_t *rc)
{
	if (__atomic_load_n(rc, __ATOMIC_RELAXED) != SLAT_REFCOUNT_UNKNOWN)
		__atomic_store_n(rc, SLAT_REFCOUNT_UNKNOWN, __ATOMIC_RELAXED);
}

/*
 * refcount_note_rc() - entries of the (non-root) table page @table, whose
 * count word is @rc, became non-zero (@delta > 0) or zero (@delta < 0);
 * @block: leaves above the last level among them. Called after they were
 * written (a recount must see them). Keeps the count, and HAS_BLOCKS once a
 * block was written. Shared walkers only add entries and mark the count
 * unknown instead, which implies HAS_BLOCKS; an unknown count recounted
 * here includes @delta.
 */
static SLAT_ALWAYS_INLINE void
refcount_note_rc(struct slat_table *t, uint32_t *rc, void *table,
		 int32_t delta, bool block, bool shared)
{
	if (shared) {
		refcount_mark_unknown(rc);
		return;
	}
	if (*rc == SLAT_REFCOUNT_UNKNOWN)
		*rc = core_count_entries(t, table) | SLAT_REFCOUNT_HAS_BLOCKS;
	else
		*rc += (uint32_t)delta;
	if (block)
		*rc |= SLAT_REFCOUNT_HAS_BLOCKS;
}

/* refcount_note_rc() for @n entries at @ptep, @level: nothing for the root,
 * which has no count word, or when nothing changed. */
static SLAT_ALWAYS_INLINE void
refcount_note(struct slat_table *t, const slat_pte_t *ptep, int level,
	      int32_t delta, bool block, bool shared)
{
	if (is_root_level(t, level) || (delta == 0 && !block))
		return;
	void *table = table_page_of(t, ptep);
	refcount_note_rc(t, table_refcount(t, table), table, delta, block,
			 shared);
}

/* refcount_note() through @rc when the caller knows the count word of
 * @ptep's table (a fault's memo), else through the lookup. */
static SLAT_ALWAYS_INLINE void
refcount_note_known(struct slat_table *t, uint32_t *rc, const slat_pte_t *ptep,
		    int level, int32_t delta, bool block, bool shared)
{
	if (rc)
		refcount_note_rc(t, rc, table_page_of(t, ptep), delta, block,
				 shared);
	else
		refcount_note(t, ptep, level, delta, block, shared);
}

/* The number of non-zero entries of the (non-root) table page @table.
 * Exclusive use. */
uint32_t core_refcount_get(const struct slat_table *t, void *table) SLAT_INTERNAL;
/* May @table hold a block? Exclusive use. */
bool core_table_may_hold_blocks(const struct slat_table *t,
				void *table) SLAT_INTERNAL;
/* Every block of @table was split. Exclusive use. */
void core_table_blocks_gone(struct slat_table *t, void *table) SLAT_INTERNAL;

/* ---- Table pages ---- */

/* A table of @bytes at @pa fits @t's descriptors: aligned to its size and
 * below the output size. */
static inline bool table_pa_ok(const struct slat_table *t, slat_pa_t pa,
			       uint64_t bytes)
{
	uint64_t limit = 1ull << t->geo.pa_bits;
	return (pa.pa & (bytes - 1)) == 0 && pa.pa < limit &&
	       bytes <= limit - pa.pa;
}

/* The next @n pages of @cache can become tables of @t: SLAT_OK,
 * SLAT_E_NOMEM (fewer), or SLAT_E_RANGE (the platform gave a page whose PA
 * a descriptor cannot hold), checked before anything is linked. */
int core_cache_check(const struct slat_table *t,
		     const struct slat_page_cache *cache,
		     uint64_t n) SLAT_INTERNAL;
/* Pop a zeroed page for @t, its count word zeroed; NULL when the cache is
 * empty. Callers check the pages first (core_cache_check()). */
void *core_cache_pop(const struct slat_table *t, struct slat_page_cache *cache,
		     struct slat_stats *st) SLAT_INTERNAL;
/*
 * The page core_cache_pop() returns after the next one, else @page. A page
 * from the cache lies wherever the platform's allocator put it, and
 * hardware prefetchers stop at a page's end: a loop that fills a page asks
 * for that page's lines as it goes (prefetch_fill_line()), so that they are
 * there when its turn comes (the next page is too close to hide the wait).
 */
static inline const void *core_cache_next(const struct slat_page_cache *cache,
					  const void *page)
{
	return cache && cache->nr > 1 ? cache->pages[cache->nr - 2] : page;
}

/* Where the entries from @ptep, of a table at @level, lie in that page;
 * @ptep itself for the root, whose runs may span its concatenated pages
 * and which the cache's pages never follow. */
static inline const slat_pte_t *entries_ahead(const struct slat_table *t,
					      const struct slat_page_cache *cache,
					      const slat_pte_t *ptep, int level)
{
	const char *next = core_cache_next(cache, ptep);
	uintptr_t off = (uintptr_t)ptep & ((1u << t->geo.granule_shift) - 1);
	return next == (const void *)ptep || is_root_level(t, level)
		       ? ptep : (const slat_pte_t *)(next + off);
}

/* While a line of a run is stored, its line in the page filled after it
 * (@ahead) is asked for, for writing. */
static SLAT_ALWAYS_INLINE void prefetch_fill_line(const slat_pte_t *ahead)
{
	__builtin_prefetch(ahead, 1, 3);
}

/* Give back a page popped but never published (a lost race), zeroed. */
void core_cache_unpop(struct slat_page_cache *cache, void *page,
		      struct slat_stats *st) SLAT_INTERNAL;
/* Free a subtree now (no walker can see it any more). */
void core_free_subtree(struct slat_table *t, void *table, int level,
		       struct slat_stats *st) SLAT_INTERNAL;
/*
 * A subtree unlinked and covered by a completed invalidation: with @cmo,
 * its cacheable leaves join that run of memory to clean (the caller emits
 * the last run), then it is freed, through the deferred-free hook when the
 * platform has one (walkers may still read it).
 */
struct cmo_run;
void core_release_unlinked(struct slat_table *t, void *table, int level,
			   struct cmo_run *cmo, struct slat_stats *st) SLAT_INTERNAL;

/* ---- Hooks, counted ---- */

void core_tlbi_ipa(struct slat_table *t, uint64_t ipa, int level,
		   enum slat_tlbi_scope scope, struct slat_stats *st) SLAT_INTERNAL;
void core_tlbi_range(struct slat_table *t, uint64_t ipa, uint64_t size,
		     struct slat_stats *st) SLAT_INTERNAL;
void core_tlbi_vmid(struct slat_table *t, struct slat_stats *st) SLAT_INTERNAL;

/* Cache maintenance a new leaf needs before it is visible (seed 000). */
enum core_cmo {
	CORE_CMO_DCACHE = 1u << 0, /* clean and invalidate the D-cache to the PoC */
	CORE_CMO_ICACHE = 1u << 1, /* invalidate the I-cache to the PoU */
};

/* The CORE_CMO_* a new leaf with @attrs needs, before SLAT_SKIP_CMO. */
static inline unsigned cmo_for_attrs(const struct slat_table *t, uint32_t attrs)
{
	if (!t->fmt->cache_maintenance)
		return 0;
	unsigned k = 0;
	if (SLAT_MT(attrs) == SLAT_MT_NORMAL && !(t->cfg.features & SLAT_FEAT_FWB))
		k |= CORE_CMO_DCACHE;
	if ((attrs & SLAT_X) && !(t->cfg.features & SLAT_FEAT_DIC))
		k |= CORE_CMO_ICACHE;
	return k;
}

/* Cacheable guest memory needs D-cache maintenance: Arm stage 2 without
 * FEAT_S2FWB. Then an unmapped cacheable leaf is cleaned and invalidated too. */
static inline bool cmo_needed(const struct slat_table *t)
{
	return t->fmt->cache_maintenance && !(t->cfg.features & SLAT_FEAT_FWB);
}

/* Count the CORE_CMO_* @kinds of maintenance of @bytes in @st. */
static SLAT_ALWAYS_INLINE void cmo_count(struct slat_stats *st, uint64_t bytes,
					 unsigned kinds)
{
	if (kinds & CORE_CMO_DCACHE) {
		st->dcache_calls++;
		st->dcache_bytes += bytes;
	}
	if (kinds & CORE_CMO_ICACHE) {
		st->icache_calls++;
		st->icache_bytes += bytes;
	}
}

/* The hooks for @kinds over [pa, pa+bytes): the D-cache clean first, which
 * the I-cache invalidation needs done. Uncounted. */
static SLAT_ALWAYS_INLINE void cmo_call(struct slat_table *t, slat_pa_t pa,
					uint64_t bytes, unsigned kinds)
{
	if (kinds & CORE_CMO_DCACHE)
		t->mm->dcache_clean_inval_poc(t->mm_ctx, pa, bytes);
	if (kinds & CORE_CMO_ICACHE)
		t->mm->icache_inval_pou(t->mm_ctx, pa, bytes);
}

/* cmo_do() of more than a D-cache clean, out of line. */
void core_cmo_kinds(struct slat_table *t, slat_pa_t pa, uint64_t bytes,
		    unsigned kinds, struct slat_stats *st) SLAT_INTERNAL;

/* Counted maintenance: a D-cache clean alone, the common case, inline;
 * across its one call only the caller's live values remain. */
static SLAT_ALWAYS_INLINE void cmo_do(struct slat_table *t, slat_pa_t pa,
				      uint64_t bytes, unsigned kinds,
				      struct slat_stats *st)
{
	if (kinds == CORE_CMO_DCACHE) {
		cmo_count(st, bytes, CORE_CMO_DCACHE);
		cmo_call(t, pa, bytes, CORE_CMO_DCACHE);
	} else if (kinds) {
		core_cmo_kinds(t, pa, bytes, kinds, st);
	}
}

/*
 * Contiguous PA runs of leaves to clean and invalidate: one call per run.
 * A run is emitted when the next leaf does not continue it, or at the end.
 */
struct cmo_run {
	uint64_t pa, bytes;
};

static inline void cmo_run_emit(struct slat_table *t, struct cmo_run r,
				struct slat_stats *st)
{
	if (r.bytes)
		cmo_do(t, slat_pa(r.pa), r.bytes, CORE_CMO_DCACHE, st);
}

/* [pa, pa+bytes) continues the run @r: it grows (true). Else the caller
 * emits @r and starts the next run with it. */
static inline bool cmo_run_extend(struct cmo_run *r, uint64_t pa,
				  uint64_t bytes)
{
	if (!r->bytes || r->pa + r->bytes != pa)
		return false;
	r->bytes += bytes;
	return true;
}

/* Add [pa, pa+bytes) to @r, cleaning the run it does not continue. */
static inline void cmo_run_add(struct slat_table *t, struct cmo_run *r,
			       uint64_t pa, uint64_t bytes, struct slat_stats *st)
{
	if (cmo_run_extend(r, pa, bytes))
		return;
	cmo_run_emit(t, *r, st);
	r->pa = pa;
	r->bytes = bytes;
}

/* Clean and invalidate every cacheable leaf of a subtree (no walker can
 * reach its memory through it any more). */
void core_cmo_subtree(struct slat_table *t, const slat_pte_t *table, int level,
		      struct cmo_run *run, struct slat_stats *st) SLAT_INTERNAL;

/* ---- Counters ---- */

void core_stats_clear(struct slat_stats *s) SLAT_INTERNAL;
/* Add @st to the table's counters atomically (shared calls beside each
 * other). */
void core_stats_commit(struct slat_table *t,
		       const struct slat_stats *st) SLAT_INTERNAL;

/*
 * Where an operation counts: straight into the table when it holds it
 * exclusively; in shared mode into the caller's own counters (the page
 * cache's), else into @local, added atomically by stats_end().
 */
static inline struct slat_stats *
stats_begin(struct slat_table *t, struct slat_stats *local, bool shared,
	    const struct slat_page_cache *cache)
{
	if (!shared)
		return &t->stats;
	if (cache && cache->stats)
		return cache->stats;
	core_stats_clear(local);
	return local;
}

static inline void stats_end(struct slat_table *t, struct slat_stats *st,
			     struct slat_stats *local)
{
	if (st == local)
		core_stats_commit(t, st);
}

/* Deferred frees count from another thread at any time: the two counters
 * they share with the operations are always added atomically. */
static inline void stats_count_freed(struct slat_stats *st, uint64_t n,
				     bool deferred)
{
	__atomic_fetch_add(&st->pages_freed, n, __ATOMIC_RELAXED);
	if (deferred)
		__atomic_fetch_add(&st->pages_deferred, n, __ATOMIC_RELAXED);
}

/* ---- Input checks ---- */

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

/* ---- Batched invalidation (batch.c) ---- */

#define CORE_BATCH_MAX 64
#define CORE_BATCH_CMO_MAX 64

/*
 * Work that may only happen after an invalidation covers it: freeing an
 * unlinked table, publishing a block that break-before-make held back,
 * cleaning an unmapped leaf's memory.
 */
struct core_batch {
	enum slat_tlbi_policy policy;
	uint64_t from, to;     /* the operation's range */
	/* [lo, hi): every IPA whose translation changed, or whose queued
	 * work waits, since the last flush (empty when hi <= lo). A hull,
	 * not the walk's position: a table unlinked after its children (in
	 * post-order) lies below them, and each queued entry stands for its
	 * whole span. */
	uint64_t lo, hi;
	bool cmo;              /* unlinked tables' cacheable leaves are cleaned */
	uint32_t nr, nr_cmo;
	struct {
		void *table;       /* unlinked subtree to free, or NULL */
		int level;         /* its level */
		slat_pte_t *ptep;  /* entry to publish after the flush, or NULL */
		slat_pte_t make;   /* ... with this value, the AF and dirty
				      state of @table's leaves merged in;
				      0: the entry already holds the block,
				      which gets their state merged in */
	} e[CORE_BATCH_MAX];
	struct cmo_run run[CORE_BATCH_CMO_MAX];
};

void core_batch_init(struct core_batch *b, enum slat_tlbi_policy policy,
		     uint64_t from, uint64_t to, bool cmo) SLAT_INTERNAL;

/* The translations of [addr, addr + size) changed: the next flush covers
 * the part inside the operation's range. */
static inline void core_batch_changed(struct core_batch *b, uint64_t addr,
				      uint64_t size)
{
	uint64_t lo = addr > b->from ? addr : b->from;
	uint64_t hi = addr + size < b->to ? addr + size : b->to;
	if (lo < b->lo)
		b->lo = lo;
	if (hi > b->hi)
		b->hi = hi;
}

/* Queue work for after the next invalidation: the unlinked @table of
 * @level (or NULL) whose parent entry at @at, one level up, spans
 * level_size(@level - 1); the flush covers that whole span. */
void core_batch_add(struct slat_table *t, struct core_batch *b, uint64_t at,
		    void *table, int level, slat_pte_t *ptep, slat_pte_t make,
		    struct slat_stats *st) SLAT_INTERNAL;
/* Queue a D-cache clean+invalidate of an unmapped run for after it; the
 * caller noted its IPAs (core_batch_changed()) first. */
void core_batch_add_cmo(struct slat_table *t, struct core_batch *b,
			struct cmo_run r, struct slat_stats *st) SLAT_INTERNAL;
/*
 * Finish a promotion once an invalidation covers the unlinked @table (of
 * @level) that @ptep pointed to: publish @make, the AF and dirty state of
 * the table's leaves merged in; or, with @make 0, merge them into the
 * block @ptep already holds.
 */
void core_promote_publish(struct slat_table *t, slat_pte_t *ptep,
			  const slat_pte_t *table, int level, slat_pte_t make,
			  struct slat_stats *st) SLAT_INTERNAL;
/* Invalidate per policy what changed since the last flush, then do the
 * queued work. */
void core_batch_flush(struct slat_table *t, struct core_batch *b,
		      struct slat_stats *st) SLAT_INTERNAL;

/* ---- The frame of a range operation (op.c) ---- */

/*
 * What every public range operation shares: the checked arguments, where it
 * counts, where it stopped, and whether it restricted translations (then it
 * invalidates per @policy at the end, unless it batched).
 */
struct core_op {
	struct slat_table *t;
	uint64_t ipa, end;
	uint32_t flags;
	enum slat_tlbi_policy policy;
	struct slat_page_cache *cache;
	uint64_t *done;        /* the caller's struct slat_op, or NULL */
	struct slat_stats *st;
	struct slat_stats local;
	uint64_t fail_addr;    /* the first IPA not done, when the walk fails */
	bool changed;          /* restricted translations: invalidate after */
};

/*
 * Check the arguments (a live table, @args' flags within @allowed, its
 * policy, the range) and set up @op from them (@args NULL: the defaults);
 * @args->done is zeroed. SLAT_OK or the error, with nothing done.
 */
int core_op_begin(struct core_op *op, struct slat_table *t, slat_ipa_t ipa,
		  uint64_t size, struct slat_op *args,
		  uint32_t allowed) SLAT_INTERNAL;
/* slat_walk() without its argument checks, for the core's own walkers
 * (whose stop level may be above the start level: only the root's entries
 * are visited then). */
int core_walk(struct slat_table *t, uint64_t ipa, uint64_t size,
	      const struct slat_walker *w, struct slat_stats *stats) SLAT_INTERNAL;
/* Walk the operation's range with @cb (SLAT_VISIT_* in @visits). */
int core_op_walk(struct core_op *op, slat_visitor_fn cb, void *arg,
		 uint32_t visits, int stop_level) SLAT_INTERNAL;
/* Invalidate what it restricted per policy, report how far it got, commit
 * the counters; returns @ret. */
int core_op_end(struct core_op *op, int ret) SLAT_INTERNAL;
/* Refuse the operation after core_op_begin(), before it changed anything:
 * commit the counters, nothing done; returns @ret. */
int core_op_refuse(struct core_op *op, int ret) SLAT_INTERNAL;

/* The visitor failed with @ret at @addr (clamped to the range's start). */
static inline int op_fail(struct core_op *op, uint64_t addr, int ret)
{
	uint64_t ipa = op->ipa > addr ? op->ipa : addr;
	if (ipa < op->fail_addr)
		op->fail_addr = ipa;
	return ret;
}

static inline bool op_shared(const struct core_op *op)
{
	return (op->flags & SLAT_SHARED) != 0;
}

/* ---- Where a visited entry stands against the walked range ---- */

static inline bool walk_shared(const struct slat_walk_ctx *ctx)
{
	return (ctx->flags & SLAT_WALK_SHARED) != 0;
}

static inline enum pte_writers walk_writers(const struct slat_walk_ctx *ctx)
{
	return pte_writers_of(ctx->t, walk_shared(ctx));
}

/* The first IPA of the range inside ctx's entry. */
static inline uint64_t walk_first_addr(const struct slat_walk_ctx *ctx)
{
	return ctx->addr > ctx->start ? ctx->addr : ctx->start;
}

/* The range covers ctx's entry whole. */
static inline bool walk_entry_covered(const struct slat_walk_ctx *ctx)
{
	return ctx->addr >= ctx->start &&
	       ctx->end - ctx->addr >= level_size(ctx->t, ctx->level);
}

/*
 * The table of the entry after ctx's, which a walk (or a visitor that reads
 * tables itself) reads after ctx's own, else NULL. It starts a page, where
 * hardware prefetchers, which stop at a page's end, do not follow: asked
 * for while ctx's table is read, it is there when its turn comes.
 */
static inline const slat_pte_t *walk_next_table(const struct slat_walk_ctx *ctx)
{
	const struct slat_table *t = ctx->t;
	if (ctx->nr_left < 2)
		return NULL;
	slat_pte_t next = pte_peek(&ctx->ptep[1]);
	return (next & t->table_mask) == t->table_match ? table_va(t, next)
						       : NULL;
}

/*
 * The run a visitor may deal with at once: the entries from ctx->ptep, in
 * this table, that the range reaches, at least the entry itself (which the
 * range may cover only in part).
 */
static inline uint32_t walk_run(const struct slat_walk_ctx *ctx)
{
	uint64_t fit = (ctx->end - ctx->addr) >> level_shift(ctx->t, ctx->level);
	uint32_t n = fit < ctx->nr_left ? (uint32_t)fit : ctx->nr_left;
	return n ? n : 1;
}

/*
 * A per-entry step of walk_leaf_run(): entry @ptep (read as @pte, a leaf or
 * invalid) maps [addr, addr + level size). Returns 1 when it changed the
 * entry, 0 when not, or a negative status that ends the run.
 */
typedef int (*leaf_step_fn)(const struct slat_walk_ctx *ctx, slat_pte_t *ptep,
			    slat_pte_t pte, uint64_t addr, void *arg);

/* walk_leaf_run()'s loop; @tables is a constant at each call, so that the
 * last level's copy tests no entry for a table. */
static SLAT_ALWAYS_INLINE int
leaf_run_loop(const struct slat_walk_ctx *c, bool tables, leaf_step_fn step,
	      void *arg, uint32_t *changed)
{
	uint32_t n, max = walk_run(c), done = 0;
	uint64_t size = level_size(c->t, c->level);

	for (n = 0; n < max; n++) {
		slat_pte_t pte = pte_peek(&c->ptep[n]);
		if (tables && pte_table(c->t, pte, c->level))
			break;
		int ret = step(c, &c->ptep[n], pte, c->addr + n * size, arg);
		if (ret < 0) {
			*changed = done;
			return ret;
		}
		done += (uint32_t)ret;
	}
	*changed = done;
	return (int)n;
}

/**
 * walk_leaf_run() - the run iteration leaf visitors share: @step on each
 * entry of walk_run() up to the first table.
 * @ctx: the visited entry.
 * @step: what to do with each leaf or invalid entry; inlined.
 * @arg: passed to @step.
 * @changed: receives how many entries @step changed.
 *
 * Return: what the visitor returns: the entries dealt with (0 when the
 * first is a table: the walker then descends into it), or @step's negative
 * status.
 */
static SLAT_ALWAYS_INLINE int
walk_leaf_run(const struct slat_walk_ctx *ctx, leaf_step_fn step, void *arg,
	      uint32_t *changed)
{
	/* A local copy: stores to entries may alias the caller's context,
	 * which the loop would otherwise read again at every entry. */
	const struct slat_walk_ctx c = *ctx;
	if (c.level == SLAT_LAST_LEVEL)
		return leaf_run_loop(&c, false, step, arg, changed);
	return leaf_run_loop(&c, true, step, arg, changed);
}

/*
 * walk_run()'s entries at the last level read and nothing else: a walk
 * that must see every entry but has nothing to do with these (split's,
 * below its target). In pairs where the core may (pte_peek_pair()). Returns
 * how many it read.
 */
static SLAT_ALWAYS_INLINE uint32_t walk_read_run(const struct slat_walk_ctx *ctx)
{
	uint32_t max = walk_run(ctx), n = 0;

#ifdef SLAT_PTE_PAIRS
	const slat_pte_t *p = ctx->ptep;
	if (pte_pair_aligned(p)) {
		const slat_pte_t *end = p + (max & ~1u);
#pragma GCC unroll 4
		for (; p != end; p += 2)
			(void)pte_peek_pair(p);
		n = max & ~1u;
	}
#endif
	for (; n < max; n++)
		(void)pte_peek(&ctx->ptep[n]);
	return max;
}

/*
 * An in-place change of valid leaves (write protection, the access flag):
 * each becomes pte_apply(leaf, @clear, @set), in locals hoisted out of the
 * loop. A leaf changes exactly when that differs from it.
 */
struct leaf_update {
	slat_pte_t present, clear, set;
};

/* Entries per group of a last-level run: one 64-byte line. */
#define LEAF_GROUP 8

enum leaf_group { GROUP_MIXED, GROUP_NONE, GROUP_ALL };

#ifdef SLAT_PTE_PAIRS
/* The line of LEAF_GROUP entries at @p (pair aligned) in four pairs. */
static SLAT_ALWAYS_INLINE void line_peek_pairs(const slat_pte_t *p,
					       pte_pair v[LEAF_GROUP / 2])
{
#pragma GCC unroll 4
	for (int j = 0; j < LEAF_GROUP / 2; j++)
		v[j] = pte_peek_pair(&p[2 * j]);
}

/* The AND and the OR of a pair's two entries. */
static SLAT_ALWAYS_INLINE slat_pte_t pair_and(pte_pair p)
{
	return p[0] & p[1];
}

static SLAT_ALWAYS_INLINE slat_pte_t pair_or(pte_pair p)
{
	return p[0] | p[1];
}

/* The AND and the OR of a line held in pairs, lane by lane: a loop over
 * lines keeps them so and reduces the lanes once. */
static SLAT_ALWAYS_INLINE pte_pair line_and_lanes(const pte_pair v[LEAF_GROUP / 2])
{
	return (v[0] & v[1]) & (v[2] & v[3]);
}

static SLAT_ALWAYS_INLINE pte_pair line_or_lanes(const pte_pair v[LEAF_GROUP / 2])
{
	return (v[0] | v[1]) | (v[2] | v[3]);
}

/* The AND and the OR of the entries of a line held in pairs. */
static SLAT_ALWAYS_INLINE slat_pte_t line_and(const pte_pair v[LEAF_GROUP / 2])
{
	return pair_and(line_and_lanes(v));
}

static SLAT_ALWAYS_INLINE slat_pte_t line_or(const pte_pair v[LEAF_GROUP / 2])
{
	return pair_or(line_or_lanes(v));
}
#endif

/*
 * The group of LEAF_GROUP entries at @p continues a linear run of leaves
 * whose next one is @expect: in the bits of @mask, entry j equals @expect
 * + j * @size (a leaf's output address is linear in its descriptor, see
 * pa_run_linear()). Their OR and AND are merged into *@any and *@all.
 */
static SLAT_ALWAYS_INLINE bool
leaf_group_continues(const slat_pte_t *p, slat_pte_t expect, uint64_t size,
		     slat_pte_t mask, slat_pte_t *any, slat_pte_t *all)
{
	slat_pte_t diff = 0, or = 0, and = ~0ull;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++, expect += size) {
		slat_pte_t v = pte_peek(&p[j]);
		diff |= v ^ expect;
		or |= v;
		and &= v;
	}
	*any |= or;
	*all &= and;
	return !(diff & mask);
}

/*
 * The lines of a table from @p to @end that continue, each
 * (leaf_group_continues()), the run whose next leaf is @expect; returns
 * where the first that does not starts. Their OR and AND are merged into
 * *@any and *@all. @ahead: the table read after this one
 * (walk_next_table()), or @p: its lines are asked for one per line read.
 * Scans that only read use it: cleaning what unmap took, promotion. In
 * pairs where the core may: the run and the OR and AND held in vector
 * registers across lines.
 */
static SLAT_ALWAYS_INLINE const slat_pte_t *
leaf_lines_continue(const slat_pte_t *p, const slat_pte_t *end,
		    const slat_pte_t *ahead,
		    slat_pte_t expect, uint64_t size, slat_pte_t mask,
		    slat_pte_t *any, slat_pte_t *all)
{
#ifdef SLAT_PTE_PAIRS
	/* Lines of a table are pair aligned. */
	const pte_pair step = { 2 * size, 2 * size }, m = { mask, mask };
	const pte_pair line = step * (LEAF_GROUP / 2);
	pte_pair e[LEAF_GROUP / 2], or = { 0, 0 }, and = { ~0ull, ~0ull };
	e[0] = (pte_pair){ expect, expect + size };
	for (int j = 1; j < LEAF_GROUP / 2; j++)
		e[j] = e[j - 1] + step;
	for (; p != end; p += LEAF_GROUP, ahead += LEAF_GROUP) {
		pte_pair v[LEAF_GROUP / 2];
		__builtin_prefetch(ahead);
		line_peek_pairs(p, v);
		pte_pair diff[LEAF_GROUP / 2];
#pragma GCC unroll 4
		for (int j = 0; j < LEAF_GROUP / 2; j++)
			diff[j] = v[j] ^ e[j];
		if (pair_or(line_or_lanes(diff) & m))
			break;
		or |= line_or_lanes(v);
		and &= line_and_lanes(v);
#pragma GCC unroll 4
		for (int j = 0; j < LEAF_GROUP / 2; j++)
			e[j] += line;
	}
	*any |= pair_or(or);
	*all &= pair_and(and);
#else
	for (; p != end; p += LEAF_GROUP, ahead += LEAF_GROUP,
			 expect += LEAF_GROUP * size) {
		__builtin_prefetch(ahead);
		if (!leaf_group_continues(p, expect, size, mask, any, all))
			break;
	}
#endif
	return p;
}

/*
 * What @u does to a group whose entries' AND is @all and OR @any: every
 * entry (all valid, from their AND: a bit to clear they share, or a bit to
 * set their OR lacks), nothing (every entry empty, or every one valid and
 * already as @u leaves it), or it depends on the entry. The OR is only
 * needed when not every entry changes: the common case reads each entry
 * once. Locked entries are non-zero and invalid: never NONE or ALL.
 */
static SLAT_ALWAYS_INLINE enum leaf_group
leaf_group_decide(slat_pte_t all, slat_pte_t any, const struct leaf_update *u)
{
	if (!any)
		return GROUP_NONE;
	if (!(all & u->present))
		return GROUP_MIXED;
	if ((all & u->clear) || (~any & u->set))
		return GROUP_ALL;
	if (!(any & u->clear) && (all & u->set) == u->set)
		return GROUP_NONE;
	return GROUP_MIXED;
}

/* The common case first, from the AND alone: every entry changes. */
static SLAT_ALWAYS_INLINE bool leaf_group_all_change(slat_pte_t all,
						     const struct leaf_update *u)
{
	return (all & u->present) && (all & u->clear) && !u->set;
}

static SLAT_ALWAYS_INLINE enum leaf_group
leaf_group_of(const slat_pte_t v[LEAF_GROUP], const struct leaf_update *u)
{
	slat_pte_t all = ~0ull, any = 0;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++)
		all &= v[j];
	if (leaf_group_all_change(all, u))
		return GROUP_ALL;
#pragma GCC unroll 8
	for (int j = 0; j < LEAF_GROUP; j++)
		any |= v[j];
	return leaf_group_decide(all, any, u);
}

#ifdef SLAT_PTE_PAIRS
/* pte_apply() of each entry of the line @v read from @p, stored back in
 * pairs, for entries nobody else writes: @keep is ~clear in both lanes,
 * @add the bits to set (built once, outside the caller's loop). */
static SLAT_ALWAYS_INLINE void line_store_pairs(slat_pte_t *p,
						const pte_pair v[LEAF_GROUP / 2],
						pte_pair keep, pte_pair add)
{
#pragma GCC unroll 4
	for (int j = 0; j < LEAF_GROUP / 2; j++)
		pte_store_pair_once(&p[2 * j], (v[j] & keep) | add);
}

/* leaf_group_of() of the group held in four pairs. */
static SLAT_ALWAYS_INLINE enum leaf_group
leaf_group_of_pairs(const pte_pair v[LEAF_GROUP / 2],
		    const struct leaf_update *u)
{
	slat_pte_t all = line_and(v);
	if (leaf_group_all_change(all, u))
		return GROUP_ALL;
	return leaf_group_decide(all, line_or(v), u);
}

/*
 * leaf_update_groups() for an exclusive caller on 16-byte aligned entries
 * from @first to @end, a pair of entries per access. Returns where it
 * stopped; *@unchanged counts the entries of groups left as they were.
 */
static SLAT_ALWAYS_INLINE slat_pte_t *
leaf_update_pairs(const struct leaf_update *u, slat_pte_t *first,
		  slat_pte_t *end, uint32_t *unchanged)
{
	const pte_pair keep = { ~u->clear, ~u->clear }, add = { u->set, u->set };
	slat_pte_t *p;

	for (p = first; p != end; p += LEAF_GROUP) {
		pte_pair v[LEAF_GROUP / 2];
		line_peek_pairs(p, v);
		enum leaf_group g = leaf_group_of_pairs(v, u);
		if (g == GROUP_NONE) {
			*unchanged += LEAF_GROUP;
			continue;
		}
		if (g != GROUP_ALL)
			break;
		line_store_pairs(p, v, keep, add);
	}
	return p;
}
#endif

/*
 * walk_leaf_update()'s loop over whole groups of the @max entries from
 * c->ptep, up to the first group that needs the step; @who is a constant at
 * each call. Returns the entries dealt with; *@changed counts those written.
 */
static SLAT_ALWAYS_INLINE uint32_t
leaf_update_groups(const struct slat_walk_ctx *c, enum pte_writers who,
		   const struct leaf_update *u, uint32_t max, uint32_t *changed)
{
	slat_pte_t *first = c->ptep, *end = first + (max & ~(LEAF_GROUP - 1u));
	slat_pte_t *p, was;
	/* Counted in the groups left alone, the rarer kind where a bulk
	 * change runs: the changing loop keeps no counter. */
	uint32_t unchanged = 0;

#ifdef SLAT_PTE_PAIRS
	if (who == PTE_ALONE && pte_pair_aligned(first)) {
		p = leaf_update_pairs(u, first, end, &unchanged);
		*changed += (uint32_t)(p - first) - unchanged;
		return (uint32_t)(p - first);
	}
#endif
	for (p = first; p != end; p += LEAF_GROUP) {
		slat_pte_t v[LEAF_GROUP];
#pragma GCC unroll 8
		for (int j = 0; j < LEAF_GROUP; j++)
			v[j] = pte_peek(&p[j]);
		enum leaf_group g = leaf_group_of(v, u);
		if (g == GROUP_NONE) {
			unchanged += LEAF_GROUP;
			continue;
		}
		/* A shared walker may lose any entry: each takes the step. */
		if (g != GROUP_ALL || who == PTE_SHARED)
			break;
#pragma GCC unroll 8
		for (int j = 0; j < LEAF_GROUP; j++)
			pte_try_update(c->t, who, &p[j], v[j], u->clear, u->set,
				       &was);
	}
	*changed += (uint32_t)(p - first) - unchanged;
	return (uint32_t)(p - first);
}

/* leaf_update_groups() with @who read from @c: the change @u given to
 * walk_leaf_groups() (a leaf_group_fn). */
static SLAT_ALWAYS_INLINE uint32_t
leaf_update_group(const struct slat_walk_ctx *c, uint32_t max, void *u,
		  uint32_t *changed)
{
	switch (walk_writers(c)) {
	case PTE_ALONE:
		return leaf_update_groups(c, PTE_ALONE, u, max, changed);
	case PTE_WITH_CPU:
		return leaf_update_groups(c, PTE_WITH_CPU, u, max, changed);
	default:
		return leaf_update_groups(c, PTE_SHARED, u, max, changed);
	}
}

/*
 * What a bulk loop does to whole groups of the @max entries (a multiple of
 * LEAF_GROUP or not) from c->ptep, at the last level: it returns how many
 * it dealt with, up to the first group that needs the per-entry step, and
 * adds the entries it changed to *@changed. Inlined.
 */
typedef uint32_t (*leaf_group_fn)(const struct slat_walk_ctx *c, uint32_t max,
				  void *garg, uint32_t *changed);

/**
 * walk_leaf_groups() - walk_leaf_run() in groups of LEAF_GROUP entries: at
 * the last level @group deals with whole groups it can decide at once
 * (nothing to do, or the same change to each), @step with the others and
 * the tail.
 * @ctx: the visited entry.
 * @group: the group loop; inlined.
 * @garg: passed to @group.
 * @step: for the other entries; inlined.
 * @arg: passed to @step.
 * @changed: receives how many entries were changed.
 *
 * Return: as walk_leaf_run().
 */
static SLAT_ALWAYS_INLINE int
walk_leaf_groups(const struct slat_walk_ctx *ctx, leaf_group_fn group,
		 void *garg, leaf_step_fn step, void *arg, uint32_t *changed)
{
	if (ctx->level != SLAT_LAST_LEVEL)
		return walk_leaf_run(ctx, step, arg, changed);
	struct slat_walk_ctx c = *ctx;
	uint64_t size = level_size(c.t, c.level);
	uint32_t max = walk_run(&c), n = 0, done = 0;

	for (;;) {
		uint32_t k = group(&c, max - n, garg, &done);
		n += k;
		if (n == max)
			break;
		/* A group that needs the step, or the tail shorter than one. */
		c.ptep += k;
		c.addr += (uint64_t)k * size;
		c.nr_left = max - n < LEAF_GROUP ? max - n : LEAF_GROUP;
		uint32_t stepped;
		int m = leaf_run_loop(&c, false, step, arg, &stepped);
		done += stepped;
		if (m < 0) {
			*changed = done;
			return m;
		}
		n += (uint32_t)m;
		c.ptep += m;
		c.addr += (uint64_t)m * size;
		if (n == max)
			break;
	}
	*changed = done;
	return (int)n;
}

/* walk_leaf_groups() for a change @u makes to every valid leaf (what @step
 * does to a valid leaf that it changes, after which it returns 1 and has
 * no other effect). */
static SLAT_ALWAYS_INLINE int
walk_leaf_update(const struct slat_walk_ctx *ctx, const struct leaf_update *u,
		 leaf_step_fn step, void *arg, uint32_t *changed)
{
	return walk_leaf_groups(ctx, leaf_update_group, (void *)u, step, arg,
				changed);
}

/* ---- The descent (walk.c) ---- */

/* How core_descend() walks (constants at each call). */
#define DESCEND_CPU  (1u << 0) /* as the CPU: set table access flags (EPT A/D) */
#define DESCEND_FAST (1u << 1) /* stop at any table entry not written as
				  make_table() writes them: the caller falls
				  back to the walker then */

/* core_descend()'s loop; @linear is a constant at each call (two copies):
 * table addresses are then pte & oa_mask in one linear map. */
static SLAT_ALWAYS_INLINE slat_pte_t *
descend_loop(const struct slat_table *t, uint64_t ipa, int stop_level,
	     unsigned how, bool linear, int *level, slat_pte_t *value,
	     struct slat_stats *st)
{
	const int start = t->geo.start_level;
	const int depth = stop_level - start;
	unsigned shift = level_shift(t, start);
	/* The root's index needs no mask: @ipa is inside ia_bits. */
	slat_pte_t *ptep = &((slat_pte_t *)t->root)[ipa >> shift];
	/* Read once: the entries' acquire loads would reload them per level. */
	const uint64_t index_mask = t->geo.entries - 1;
	const slat_pte_t table_mask = t->table_mask, table_match = t->table_match;
	const slat_pte_t oa_mask = t->oa_mask;
	const intptr_t linear_offset = t->linear_offset;
	const unsigned bits = t->geo.bits_per_level;
	slat_pte_t pte = pte_read(ptep);
	int n;

	for (n = 0; n < depth; n++, pte = pte_read(ptep)) {
		/* The fast test first; the full one for tables libslat did not
		 * write this way, unless a miss only costs the general path. */
		if ((pte & table_mask) != table_match &&
		    ((how & DESCEND_FAST) || !pte_table(t, pte, start + n)))
			break;
		/* The CPU sets it with an atomic update of the entry it read;
		 * if the entry changed meanwhile, it is not set. */
		if ((how & DESCEND_CPU) && t->fmt->table_young_bit &&
		    hw_updates_ptes(t) && !(pte & t->fmt->table_young_bit))
			__atomic_compare_exchange_n(ptep, &(slat_pte_t){ pte },
						    pte | t->fmt->table_young_bit,
						    false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		slat_pte_t *table = linear
			? (slat_pte_t *)((intptr_t)(pte & oa_mask) + linear_offset)
			: table_va(t, pte);
		shift -= bits;
		ptep = &table[(ipa >> shift) & index_mask];
	}
	if (st)
		st->visited += (uint64_t)n + 1;
	*level = start + n;
	*value = pte;
	return ptep;
}

/**
 * core_descend() - the entry translating @ipa at @stop_level, or at the
 * first level above it whose entry is not a table.
 * @t: the table.
 * @ipa: inside ia_bits.
 * @stop_level: the deepest level to reach (SLAT_LAST_LEVEL: to the leaf).
 * @how: DESCEND_CPU, DESCEND_FAST or 0.
 * @level: receives the level of the entry returned.
 * @value: receives its value, read once: the one the descent decided on
 *	(read again, a table could have replaced the leaf meanwhile).
 * @st: counts the entries read (may be NULL).
 *
 * The one descent that bypasses the walker: lookup, mkyoung, the CPU's
 * walk and the fault path use it. Return: the entry.
 */
static SLAT_ALWAYS_INLINE slat_pte_t *
core_descend(const struct slat_table *t, uint64_t ipa, int stop_level,
	     unsigned how, int *level, slat_pte_t *value, struct slat_stats *st)
{
	if (t->linear && t->oa_mask)
		return descend_loop(t, ipa, stop_level, how, true, level, value, st);
	return descend_loop(t, ipa, stop_level, how, false, level, value, st);
}

/*
 * core_descend_fault() - core_descend(DESCEND_FAST) for a fault, from the
 * root, remembering in @m the table it ended in.
 * @t: the table.
 * @m: the memo (of @t; may be NULL), refilled when the descent reached
 *	@stop_level in a table below the root.
 * @ipa, @stop_level, @level, @value, @st: as core_descend().
 * @rc: receives the count word of the entry's table when @m was refilled
 *	(never the root's), else NULL.
 *
 * A vCPU faults pages next to each other; the table its last fault ended in
 * usually holds the next entry, and the descent is most of a fault's work:
 * map's fault path reads one entry of the memo's table instead
 * (map_fault_memo()). The memo holds while no table was unlinked since it
 * was taken: t->unlinks moves before any unlinked table can be freed or
 * reused (an exclusive call runs alone; a shared walker's unlink is
 * followed by a grace period, and a read-side section that began after it
 * sees the count move). A fault through a memo taken just before a
 * concurrent unlink writes into the unlinked table, as one whose descent
 * read the entry just before it would. Out of line: the fault path's
 * registers are for the memo's case.
 *
 * Return: the entry.
 */
slat_pte_t *core_descend_fault(const struct slat_table *t,
			       struct slat_leaf_memo *m, uint64_t ipa,
			       int stop_level, int *level, slat_pte_t *value,
			       uint32_t **rc, struct slat_stats *st) SLAT_INTERNAL;

/* ---- Entry primitives (entry.c and below) ---- */

#ifdef SLAT_PTE_PAIRS
/*
 * A linear run of leaves from a 16-byte aligned entry, two per store, into
 * entries nobody else writes; returns how many it stored (all but an odd
 * last). @ahead: where the same entries lie in a page filled after this
 * one (entries_ahead()), whose lines are asked for one per line stored.
 */
static SLAT_ALWAYS_INLINE uint32_t install_pairs(slat_pte_t *ptep, uint32_t n,
						 slat_pte_t leaf, uint64_t size,
						 const slat_pte_t *ahead)
{
	pte_pair v = { leaf, leaf + size };
	const pte_pair step = { 2 * size, 2 * size };
	slat_pte_t *p = ptep, *lines = ptep + (n & ~7u), *end = ptep + (n & ~1u);

	for (; p != lines; p += 8, ahead += 8) {
		prefetch_fill_line(ahead);
		for (int k = 0; k < 8; k += 2, v += step)
			pte_store_pair_once(p + k, v);
	}
	for (; p != end; p += 2, v += step)
		pte_store_pair_once(p, v);
	return n & ~1u;
}
#endif

/**
 * core_install_leaves() - install @n leaves into empty entries from @ptep.
 * @t: the table.
 * @ptep: the first entry; all @n are empty (0).
 * @n: how many; 1 for a shared walker, which claims entries one at a time.
 * @level: their level.
 * @size: the bytes one of them maps (level_size() of @level).
 * @leaf: the first leaf; the next ones map the next PAs.
 * @pa: its output address.
 * @cmo: the CORE_CMO_* the leaves need (0 under SLAT_SKIP_CMO).
 * @shared: other walkers may run.
 * @rc: the count word of @ptep's table when the caller knows it (a fault's
 *	memo, never the root's), else NULL.
 * @ahead: for a run (@n > 1), where its entries lie in a page the
 *	operation fills after this one (entries_ahead()); else NULL.
 * @st: the operation's counters.
 *
 * The memory is cleaned (and the I-cache invalidated) before any leaf is
 * visible: a shared walker claims the entry with the locked marker first,
 * so another vCPU never uses the leaf before its memory is clean (seed 000);
 * with nothing to clean, its one CAS installs the leaf. Keeps the count
 * word and the counters.
 *
 * Return: SLAT_OK, or SLAT_E_AGAIN when a shared walker lost the entry.
 */
static SLAT_ALWAYS_INLINE int
core_install_leaves(struct slat_table *t, slat_pte_t *ptep, uint32_t n,
		    int level, uint64_t size, slat_pte_t leaf, slat_pa_t pa,
		    unsigned cmo, bool shared, uint32_t *rc,
		    const slat_pte_t *ahead, struct slat_stats *st)
{
	slat_pte_t was;
	const bool block = level < SLAT_LAST_LEVEL;

	if (shared) {
		slat_pte_t claim = cmo ? t->fmt->locked : leaf;
		if (!pte_try_set(t, PTE_SHARED, ptep, 0, ~0ull, claim, &was)) {
			st->retries++;
			return SLAT_E_AGAIN;
		}
		/* The entry is ours: count it before the clean, which then
		 * keeps only the entry and the leaf live across its call. A
		 * shared note only marks the count unknown, and no exclusive
		 * recount can run meanwhile. */
		st->written[SLAT_WRITE_LEAF]++;
		refcount_note_known(t, rc, ptep, level, 1, block, true);
		if (cmo) {
			cmo_do(t, pa, size, cmo, st);
			pte_store(ptep, leaf);
		}
		return SLAT_OK;
	}
	if (cmo)
		cmo_do(t, pa, n * size, cmo, st);
	if (n == 1 || pa_run_linear(pa, n * size)) {
		uint32_t i = 0;
#ifdef SLAT_PTE_PAIRS
		if (n > 1 && pte_pair_aligned(ptep)) {
			i = install_pairs(ptep, n, leaf, size, ahead);
			leaf += i * size;
		}
#else
		(void)ahead;
#endif
#pragma GCC unroll 8
		for (; i < n; i++, leaf += size)
			pte_try_set(t, PTE_ALONE, &ptep[i], 0, ~0ull, leaf, &was);
	} else {
		for (uint32_t i = 0; i < n; i++)
			pte_try_set(t, PTE_ALONE, &ptep[i], 0, ~0ull,
				    t->fmt->pte_with_pa(t, leaf,
					slat_pa(pa.pa + i * size)), &was);
	}
	st->written[SLAT_WRITE_LEAF] += n;
	refcount_note_known(t, rc, ptep, level, (int32_t)n, block, false);
	return SLAT_OK;
}

/*
 * Break-before-make, in two steps. core_break() makes ctx's entry invalid
 * (locked, for a shared walker) and invalidates the old translation: by IPA
 * for a leaf, over its span for a table (the walk caches below it too);
 * *@was gets the value it replaced, with the CPU's latest AF and dirty
 * state. With a batch @b (exclusive), the invalidation is left to its next
 * flush. SLAT_E_AGAIN: a shared walker lost the race and changed nothing.
 * core_make() then publishes the new descriptor into the entry it owns.
 */
int core_break(const struct slat_walk_ctx *ctx, slat_pte_t *was,
	       struct core_batch *b) SLAT_INTERNAL;
void core_make(const struct slat_walk_ctx *ctx, slat_pte_t new) SLAT_INTERNAL;

/*
 * Take the block at ctx's entry, to be replaced by a table that translates
 * the same: break-before-make where the format needs it, else out of the
 * CPU's reach when the CPU may update it meanwhile. *@block gets its latest
 * value, which the table must be built from.
 */
int core_take_block(const struct slat_walk_ctx *ctx,
		    slat_pte_t *block) SLAT_INTERNAL;

/*
 * Replace ctx's block by an empty table with break-before-make (its
 * translation goes: invalidated by IPA, not cleaned), from @cache, which
 * must hold @pages (the table and those that go below it) so that no empty
 * table is left behind. SLAT_E_NOMEM, or SLAT_E_AGAIN when a shared walker
 * lost the entry: nothing changed.
 */
int core_break_block(const struct slat_walk_ctx *ctx,
		     struct slat_page_cache *cache, uint64_t pages) SLAT_INTERNAL;

/* Replace ctx's valid entry by @new in place (exclusive, no break-before-
 * make: the same translation); returns the value replaced. */
slat_pte_t core_swap(const struct slat_walk_ctx *ctx,
		     slat_pte_t new) SLAT_INTERNAL;

/*
 * Clear the leaves of ctx's run up to the first table or @end (exclusive):
 * each invalidated per @b's policy; with @cmo, the cacheable ones cleaned
 * and invalidated after their invalidation, in contiguous PA runs. Returns
 * the entries dealt with (0: the first is a table).
 */
int core_clear_leaves(const struct slat_walk_ctx *ctx, struct core_batch *b,
		      uint64_t end, bool cmo) SLAT_INTERNAL;

/*
 * Unlink the table at ctx's entry (exclusive): the entry becomes 0, and the
 * table is freed once an invalidation covers it (at once under
 * SLAT_FLUSH_ENTRY, else with @b's next flush), its cacheable leaves
 * cleaned first when the batch says so.
 */
void core_unlink_table(const struct slat_walk_ctx *ctx,
		       struct core_batch *b) SLAT_INTERNAL;

/* Fill @page (unpublished) with the next-level leaves that translate like
 * @block at @level; @next: a page filled after it (core_cache_next()). */
void core_fill_split(struct slat_table *t, slat_pte_t *page, slat_pte_t block,
		     int level, const slat_pte_t *next,
		     struct slat_stats *st) SLAT_INTERNAL;

/*
 * Turn the block at ctx's entry into a table of next-level leaves with the
 * same translation (one page from @cache). The walker then descends into it.
 */
int core_split_block(const struct slat_walk_ctx *ctx,
		     struct slat_page_cache *cache) SLAT_INTERNAL;

/* The bits hw_state_apply() decides: leaves may differ in them. */
static inline slat_pte_t hw_state_bits(const struct slat_table *t)
{
	bool state = hw_updates_ptes(t) || t->fmt->dirty_bit_is_state;
	return t->fmt->young_bit | (state ? t->fmt->dirty_bit : 0);
}

/*
 * The one rule for the access flag and dirty state of a block that replaces
 * leaves: young if any leaf was (@any: the OR of the leaves, @all: their
 * AND), dirty if any was, whichever way the format encodes it. Dirty state
 * is the CPU's only with SLAT_FEAT_HWDIRTY (else the bit is a permission,
 * or, where it is state anyway, kept as the leaves had it).
 */
static inline slat_pte_t hw_state_apply(const struct slat_table *t,
					slat_pte_t block, slat_pte_t any,
					slat_pte_t all)
{
	slat_pte_t young = t->fmt->young_bit;
	slat_pte_t dirty = hw_state_bits(t) & ~young;
	slat_pte_t dirty_now = t->fmt->dirty_bit_clear ? all : any;
	return (block & ~(young | dirty)) | (any & young) | (dirty_now & dirty);
}


/*
 * The AF and dirty state of every leaf under the unlinked @table (@level),
 * merged into @block by hw_state_apply(): read after an invalidation covers
 * the table, so that no update the CPU made through it is lost.
 */
slat_pte_t core_merge_hw_state(const struct slat_table *t, slat_pte_t block,
			       const slat_pte_t *table, int level) SLAT_INTERNAL;

#endif
