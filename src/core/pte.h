/* SPDX-License-Identifier: MIT */
/*
 * Descriptors and the writer: what an entry's value means (valid, table,
 * leaf, locked, cacheable, its output address, its AF and dirty state),
 * and pte_write(), the one writer of an entry another agent may see, with
 * its modes. Knows nothing of tables, counts or hooks.
 */
#ifndef SLAT_CORE_PTE_H
#define SLAT_CORE_PTE_H

#include "geometry.h"

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
	return pte == t->locked;
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

#if defined(__SANITIZE_THREAD__)
#define SLAT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLAT_TSAN 1
#endif
#endif

/*
 * pte_write()'s store that orders nothing, of an entry nobody else
 * writes: a volatile store, as the kernel's WRITE_ONCE(): one single-copy
 * atomic store of the aligned 64-bit entry on every target, which GCC
 * addresses like any store (its atomic builtins want an address register
 * each, which spills in an unrolled loop). ThreadSanitizer builds use the
 * relaxed atomic store it stands for, so that the race checks see it as
 * one.
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
 * The unit of a bulk loop's access: PTE_LANES neighbouring entries, two in
 * one 16-byte access where the core may use vector registers (not at EL2
 * built with -mgeneral-regs-only, nor under ThreadSanitizer, whose race
 * checks want one access per entry), else one. The width is a property of
 * the build: every bulk loop is written once, over units, and a unit's
 * arithmetic (& | ^ + ~) is lane by lane either way. Each 64-bit lane is
 * single-copy atomic, as pte_peek() and pte_write()'s store are: an
 * aligned 128-bit SIMD access is a pair of single-copy atomic 64-bit
 * accesses on Arm, and every aligned quadword of an aligned 16-byte SSE
 * access is atomic on x86. Units start at entries aligned to their size
 * (a line's first entry always is): half the loads and stores, which is
 * what bounds such a loop.
 */
#if (defined(__SSE2__) || defined(__ARM_NEON)) && !defined(SLAT_TSAN)
#define PTE_LANES 2
typedef slat_pte_t pte_unit __attribute__((vector_size(16)));

static inline pte_unit pte_peek_unit(const slat_pte_t *ptep)
{
	return *(const volatile pte_unit *)(const void *)ptep;
}

/* pte_write()'s PTE_ALONE store for a unit of entries nobody else writes
 * (the bulk loops of exclusive calls). */
static inline void pte_write_unit(slat_pte_t *ptep, pte_unit v)
{
	*(volatile pte_unit *)(void *)ptep = v;
}

/* A unit whose lanes are @x, @x + @step, ... */
static inline pte_unit unit_ramp(slat_pte_t x, uint64_t step)
{
	return (pte_unit){ x, x + step };
}

/* Lane @k of @v. */
static inline slat_pte_t unit_lane(pte_unit v, unsigned k)
{
	return v[k];
}
#else
#define PTE_LANES 1
typedef slat_pte_t pte_unit;

static inline pte_unit pte_peek_unit(const slat_pte_t *ptep)
{
	return pte_peek(ptep);
}

static inline void pte_write_unit(slat_pte_t *ptep, pte_unit v)
{
	pte_store_once(ptep, v);
}

static inline pte_unit unit_ramp(slat_pte_t x, uint64_t step)
{
	(void)step;
	return x;
}

static inline slat_pte_t unit_lane(pte_unit v, unsigned k)
{
	(void)k;
	return v;
}
#endif

/* Every lane @x. */
static inline pte_unit unit_splat(slat_pte_t x)
{
	return unit_ramp(x, 0);
}

/* The OR and the AND of a unit's lanes. */
static inline slat_pte_t unit_or(pte_unit v)
{
	slat_pte_t r = 0;
	for (unsigned k = 0; k < PTE_LANES; k++)
		r |= unit_lane(v, k);
	return r;
}

static inline slat_pte_t unit_and(pte_unit v)
{
	slat_pte_t r = ~0ull;
	for (unsigned k = 0; k < PTE_LANES; k++)
		r &= unit_lane(v, k);
	return r;
}

static inline slat_pte_t pte_apply(slat_pte_t pte, slat_pte_t clear,
				   slat_pte_t set)
{
	return (pte & ~clear) | set;
}

/*
 * The writer. Every store of an entry another agent may see (another
 * walker, the CPU's walker, the software MMU playing it) goes through
 * pte_write(), whose mode is who else may write the entry meanwhile,
 * decided once per operation by pte_writers_of():
 *
 *  PTE_ALONE     nobody: the operation holds the table alone, or owns the
 *                entry (it holds the locked marker, or is empty in an
 *                exclusive call): a single-copy atomic store, a release
 *                one when it publishes (pte_write_owned());
 *  PTE_WITH_CPU  the CPU, which sets the access flag and dirty state of
 *                valid leaves (SLAT_FEAT_HWDIRTY): a CAS loop that applies
 *                the change again to whatever it replaces;
 *  PTE_SHARED    other walkers (SLAT_SHARED), or the CPU as the core plays
 *                it (pte_cpu_update()): one CAS from the value read, which
 *                fails if anything changed the entry.
 *
 * pte_write_unit() is PTE_ALONE for a unit of neighbouring entries (one or
 * two, see PTE_LANES), the exclusive bulk loops' store. The one exception is a table page not yet
 * published (a split's subtree being built, a page given back unused):
 * no walker can reach it before the release store that links it, and
 * pte_init() fills it with plain stores.
 */
enum pte_writers {
	PTE_ALONE,
	PTE_WITH_CPU,
	PTE_SHARED,
};

/*
 * The leaf @pte with permissions removed, one rule per permission: W by
 * the format's write-protection masks (@clear, @set: those, or 0 when W
 * stays), which bulk loops apply to whole lines; R and X (@by_leaf) by its
 * leaf_with_perms(), keeping @keep of the leaf's permissions. Callers hoist
 * the arguments out of their loops; leaf_restricted() derives them.
 */
static SLAT_ALWAYS_INLINE slat_pte_t
pte_restrict(const struct slat_table *t, slat_pte_t pte, bool by_leaf,
	     uint32_t keep, slat_pte_t clear, slat_pte_t set)
{
	if (by_leaf)
		pte = t->fmt->leaf_with_perms(t, pte,
					      t->fmt->leaf_attrs(t, pte) & keep);
	return pte_apply(pte, clear, set);
}

/* slat_restrict()'s change to the leaf @pte for @perms. */
static inline slat_pte_t leaf_restricted(const struct slat_table *t,
					 slat_pte_t pte, uint32_t perms)
{
	bool w = perms & SLAT_W;
	return pte_restrict(t, pte, perms & ~SLAT_W, SLAT_PERMS & ~perms,
			    w ? t->fmt->wp_clear : 0, w ? t->fmt->wp_set : 0);
}

/* Write protection leaves @pte as it is. */
static inline bool wp_done(const struct slat_table *t, slat_pte_t pte)
{
	return leaf_restricted(t, pte, SLAT_W) == pte;
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

/* pte_write() into an entry the caller owns (PTE_ALONE): locked by it, or
 * empty in an exclusive call; @new may publish what it points to. */
static SLAT_ALWAYS_INLINE void pte_write_owned(const struct slat_table *t,
					       slat_pte_t *ptep, slat_pte_t new)
{
	slat_pte_t was;
	pte_write(t, PTE_ALONE, ptep, 0, ~0ull, new, &was, true);
}

/*
 * The CPU's own update of an entry its walker read as @old (the access
 * flag and dirty state of a leaf, the access flag of a table): a
 * PTE_SHARED write, which fails, changing nothing, if the entry changed
 * meanwhile (the CPU then walks again, or leaves the flag for next time).
 */
static SLAT_ALWAYS_INLINE bool pte_cpu_update(const struct slat_table *t,
					      slat_pte_t *ptep, slat_pte_t old,
					      slat_pte_t new)
{
	slat_pte_t was;
	return pte_write(t, PTE_SHARED, ptep, old, ~0ull, new, &was, false);
}

/* An entry of a table page not yet published (the writer's one
 * exception): no walker reads it before the release store that links the
 * page. */
static SLAT_ALWAYS_INLINE void pte_init(slat_pte_t *ptep, slat_pte_t v)
{
	__atomic_store_n(ptep, v, __ATOMIC_RELAXED);
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

#endif
