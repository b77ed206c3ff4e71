/* SPDX-License-Identifier: MIT */
/*
 * libslat: build and edit second-level address translation tables (Armv8
 * stage 2, Intel EPT, AMD NPT) in their exact hardware formats.
 *
 * Concurrency: unless an operation is called with SLAT_SHARED, the caller
 * holds the table exclusively for the duration of the call.
 */
#ifndef SLAT_SLAT_H
#define SLAT_SLAT_H

#include <slat/export.h>
#include <slat/platform.h>
#include <slat/types.h>
#include <slat/version.h>

#ifdef __cplusplus
extern "C" {
#endif

enum slat_format_id {
	SLAT_FMT_ARM_S2 = 1, /* Armv8-A VMSA stage 2 (VTTBR_EL2/VTCR_EL2) */
	SLAT_FMT_EPT = 2,    /* Intel EPT (EPTP) */
	/* Armv8-A VMSA stage 1 (TTBR0/TTBR1_EL1), for a guest's own tables. */
	SLAT_FMT_ARM_S1 = 3,
	/* AMD-V nested page tables (nCR3): AMD64 long-mode entries. The CPU
	 * always maintains their A and D bits, so a configuration must have
	 * SLAT_FEAT_HWDIRTY and nothing else. */
	SLAT_FMT_NPT = 4,
};

/* Features of the CPU the table is built for. */
#define SLAT_FEAT_FWB  (1u << 0) /* Arm FEAT_S2FWB: no D-cache clean needed */
#define SLAT_FEAT_XNX  (1u << 1) /* Arm FEAT_XNX: separate EL0/EL1 execute */
#define SLAT_FEAT_DIC  (1u << 2) /* CTR_EL0.DIC: no I-cache invalidation */
/* Hardware dirty state: Arm FEAT_HAFDBS with VTCR_EL2.HA/HD (DBM bit);
 * EPT accessed/dirty flags (EPTP bit 6); NPT always (required). */
#define SLAT_FEAT_HWDIRTY (1u << 3)
#define SLAT_FEAT_EPT_MBEC  (1u << 4) /* EPT mode-based execute control */
#define SLAT_FEAT_EPT_XONLY (1u << 5) /* EPT execute-only translations */
/* Arm FEAT_LPA2 with VTCR_EL2.DS / TCR_EL1.DS = 1 (4K and 16K granules):
 * 52-bit input and output addresses, OA[51:50] in descriptor bits [9:8]
 * (shareability then comes from VTCR_EL2.SH0 / TCR_EL1.SHn), a level-0
 * block (4K) or level-1 block (16K), and a level -1 walk (4K stage 1). */
#define SLAT_FEAT_LPA2 (1u << 6)
/* Arm stage 1 only: the EL2 translation regime with HCR_EL2.E2H = 0
 * (TTBR0_EL2 alone, one privilege level, no ASID) instead of EL1&0: AP[1]
 * is RES1, bit 54 is XN, PXN and nG are RES0; SLAT_USER, SLAT_NG and
 * SLAT_XK without SLAT_XU (or the reverse) are refused (SLAT_E_ATTR). */
#define SLAT_FEAT_S1_EL2 (1u << 7)

struct slat_config {
	enum slat_format_id format;
	uint32_t granule;  /* bytes: 4096, 16384 or 65536 (EPT, NPT: 4096) */
	uint8_t ia_bits;   /* input size: Arm 32..48, 52 with 64K or with
			      SLAT_FEAT_LPA2; EPT and NPT 32..57 (5-level
			      above 48) */
	uint8_t pa_bits;   /* output size: 32..48 (52 with 64K, with
			      SLAT_FEAT_LPA2, EPT or NPT);
			      0: 48, or 52 when ia_bits is above 48 */
	uint32_t features; /* SLAT_FEAT_* */
	/*
	 * Lookup levels of the walk, i.e. the start level 4 - levels (a count,
	 * so that 0 can mean the default; levels 5 starts at level -1).
	 * 0: the fewest, with up to 16 concatenated root tables at Arm stage
	 * 2 (KVM's choice), the one TnSZ allows at stage 1, 4 (ia_bits up to
	 * 48) or 5 for EPT. Otherwise as the architecture allows, else
	 * slat_table_init() returns SLAT_E_CONFIG:
	 *  - Arm stage 2: the start level resolves 1 to bits_per_level + 4 IPA
	 *    bits (1 to 16 concatenated root tables; AArch64.S2InconsistentSL),
	 *    and as AArch64.S2InvalidSL asks of the PA size: 4K at level 0
	 *    needs pa_bits >= 44, 16K at level 1 42, 64K at level 1 44;
	 *    level -1 (4K) and 16K at level 0 need SLAT_FEAT_LPA2 and
	 *    pa_bits 52. So 4K with 40 IPA bits: 3 levels (the default, 2
	 *    root pages) or, with pa_bits >= 44, 4 (one root page, 2 entries
	 *    used); 4K with 49..52 bits and LPA2: 4 or 5. Not 1 (64K with 32
	 *    or 33 bits): libslat walks have 2 levels or more.
	 *  - Arm stage 1: the default only (no concatenation).
	 *  - EPT: 4 (ia_bits up to 48) or 5 (any ia_bits; EPTP walk length 5).
	 *  - NPT: the same; the host's paging mode must match (CR4.LA57 for
	 *    5: a nested walk has the host's number of levels).
	 */
	uint8_t levels;
};

/* What the configuration implies for the walk; derived by slat_table_init. */
struct slat_geometry {
	uint8_t granule_shift;  /* 12, 14 or 16 */
	uint8_t bits_per_level; /* granule_shift - 3 */
	int8_t start_level;     /* first level of the walk (SL0; -1..3) */
	uint8_t root_pages;     /* concatenated pages at the start level (1..16) */
	uint32_t root_entries;  /* entries in use at the start level */
	uint32_t entries;       /* entries per table page */
	uint8_t leaf_levels;    /* bit L set: a leaf is allowed at level L */
	uint8_t ia_bits;
	uint8_t pa_bits;
};

/* Kinds of descriptor writes, for the counters. */
enum slat_write_kind {
	SLAT_WRITE_LEAF,   /* a leaf (page or block) installed */
	SLAT_WRITE_TABLE,  /* a table descriptor installed */
	SLAT_WRITE_CLEAR,  /* an entry made invalid (unmap, unlink) */
	SLAT_WRITE_BREAK,  /* the invalid step of break-before-make */
	SLAT_WRITE_ATTR,   /* an attribute updated in place */
	SLAT_WRITE_KINDS
};

enum slat_tlbi_kind {
	SLAT_TLBI_IPA,       /* by IPA, inner shareable */
	SLAT_TLBI_IPA_LOCAL, /* by IPA, this CPU only */
	SLAT_TLBI_RANGE,     /* by range */
	SLAT_TLBI_VMID,      /* the whole VMID */
	SLAT_TLBI_KINDS
};

/* Exact counts of the work done on a table, cumulative. */
struct slat_stats {
	uint64_t visited;                     /* entries visited by walks */
	uint64_t written[SLAT_WRITE_KINDS];   /* descriptor stores by kind */
	uint64_t tlbi[SLAT_TLBI_KINDS];       /* invalidation hook calls */
	uint64_t dcache_calls, dcache_bytes;  /* D-cache clean+invalidate to PoC */
	uint64_t icache_calls, icache_bytes;  /* I-cache invalidate to PoU */
	uint64_t pages_alloc, pages_freed;    /* table pages (root excluded) */
	uint64_t pages_deferred;              /* of pages_freed: via free_deferred */
	uint64_t retries;                     /* lost races (SLAT_E_AGAIN) */
	uint64_t cmo_skipped;                 /* per leaf, each D- or I-cache
						 maintenance left to the
						 caller (SLAT_SKIP_CMO) */
};

struct slat_format;

/*
 * A table. Allocate it wherever you like (it needs no heap) and set it up
 * with slat_table_init(); the fields are private to libslat: read them
 * through slat_table_geometry(), slat_table_config(), slat_table_root(),
 * slat_stats_read().
 */
struct slat_table {
	const struct slat_format *fmt;
	const struct slat_mm_ops *mm;
	void *mm_ctx;
	struct slat_config cfg;
	struct slat_geometry geo;
	uint64_t page_mask;     /* granule size - 1 */
	uint64_t ia_beyond;     /* the bits no IPA has: ~0 << ia_bits */
	uint64_t pa_beyond;     /* the bits no PA has: ~0 << pa_bits */
	void *root;
	slat_pa_t root_pa;
	struct slat_stats stats;
	/* Fast paths of table_va(): a plain OA mask, a linear map. */
	uint64_t oa_mask;       /* 0: decode through the format */
	bool linear;
	intptr_t linear_offset;
	/* Fast path of the refcount hook: the platform's array, if any. */
	uint32_t *refcounts;
	uintptr_t refcounts_first_page;
	/* Both fast paths, and a table above the last level below the root:
	 * a fault steps from it to its last-level table without a call. */
	bool fault_steps;
	/* The memory-type field of a write-back leaf: cacheable memory. */
	slat_pte_t normal_memattr;
	/* The format's locked marker (break-before-make, a claimed entry):
	 * one load where it is written or compared. */
	slat_pte_t locked;
	/* Entries with (pte & table_mask) == table_match are tables (below the
	 * last level): one test per level on the fault path's descent. */
	slat_pte_t table_mask, table_match;
	/* By log2 of a size: the level whose leaves map that much, or -1. */
	int8_t leaf_level[64];
	/* By level + 1 (levels -1..3): log2 of the bytes an entry maps. */
	uint8_t level_shift[SLAT_LAST_LEVEL + 2];
	/* By the level of its entries (0..3): the IPA bits outside a table's
	 * span, ~0 << level_shift(level - 1) (0 when that is 64 or more): one
	 * test of a path's table. */
	uint64_t table_beyond[SLAT_LAST_LEVEL + 1];
	/* Unique per slat_table_init(): keys the page caches' leaf memos. */
	uint64_t id;
	/* The flags map refuses: the unknown ones, and SLAT_SHARED when the
	 * platform cannot defer frees (one test on the fault path). */
	uint32_t map_flags_refused;
	/* Tables unlinked so far: the path of tables a page cache's memo
	 * holds is good while this has not moved. */
	uint64_t unlinks;
};

/*
 * Check @cfg, derive the geometry (start level, root concatenation) and
 * allocate a zeroed root through @mm->zalloc_root.
 * Returns SLAT_OK, SLAT_E_CONFIG (unsupported configuration),
 * SLAT_E_VERSION (@mm->size is not sizeof(struct slat_mm_ops): hooks built
 * against another version's header), SLAT_E_INVAL (NULL, or a hook
 * missing: slat_mm_ops_missing() names it), SLAT_E_NOMEM,
 * or SLAT_E_RANGE (the root's PA, from virt_to_phys, is not aligned to its
 * size or lies beyond the output size: no register could hold it; the root
 * is freed).
 */
SLAT_API int slat_table_init(struct slat_table *t,
			     const struct slat_config *cfg,
			     const struct slat_mm_ops *mm, void *mm_ctx);

/*
 * The first hook of @mm that slat_table_init() needs for @cfg and @mm lacks
 * ("tlbi_range", ...), or NULL when it has all of them; "slat_mm_ops" for a
 * NULL @mm or an unknown format, "size" for another layout's hooks
 * (@mm->size). Always needed: zalloc_root, free_root,
 * free_page, refcount, virt_to_phys, phys_to_virt, tlbi_vmid; tlbi_ipa and
 * tlbi_range where the architecture invalidates by address (not EPT);
 * dcache_clean_inval_poc on Arm stage 2 without FEAT_S2FWB,
 * icache_inval_pou on Arm stage 2 without CTR_EL0.DIC. Optional:
 * refcount_array, linear_offset, and free_deferred, without which every
 * call with SLAT_SHARED is refused (SLAT_E_INVAL): nothing could free a
 * table another walker may still read.
 */
SLAT_API const char *slat_mm_ops_missing(const struct slat_mm_ops *mm,
					 const struct slat_config *cfg);

/*
 * Derive the geometry for @cfg without allocating anything.
 * Returns SLAT_OK or SLAT_E_CONFIG.
 */
SLAT_API int slat_config_geometry(const struct slat_config *cfg,
				  struct slat_geometry *geo);

/*
 * Free every table page and the root, then invalidate the whole VMID once.
 * The table must not be in use by any walker or CPU.
 */
SLAT_API void slat_table_destroy(struct slat_table *t);

/* Bytes mapped by one entry at @level; 0 for a level outside the table
 * (below its start level or past SLAT_LAST_LEVEL). */
SLAT_API uint64_t slat_level_size(const struct slat_table *t, int level);

/* The root: host address, PA, and size in bytes (root_pages x granule). */
SLAT_API void *slat_table_root(const struct slat_table *t, slat_pa_t *pa,
			       size_t *bytes);

/* The format's name ("arm-s2", ...). */
SLAT_API const char *slat_table_name(const struct slat_table *t);

/* The table's geometry (start level, root pages, leaf levels, address
 * sizes) and configuration (pa_bits as derived); NULL for a table not set
 * up or destroyed. Read these instead of struct slat_table's fields. */
SLAT_API const struct slat_geometry *
slat_table_geometry(const struct slat_table *t);
SLAT_API const struct slat_config *slat_table_config(const struct slat_table *t);

/* A copy of @t's counters, each read atomically: safe beside the deferred
 * frees, which add to pages_freed and pages_deferred from another thread. */
SLAT_API void slat_stats_read(const struct slat_table *t,
			      struct slat_stats *out);

/*
 * Operation flags (struct slat_op.flags), in KVM's walk-flag vocabulary
 * where it has one. KVM's KVM_PGTABLE_WALK_SKIP_BBM_TLBI has no flag here:
 * the flush policy (SLAT_FLUSH_RANGE, _VMID, _NONE) is what defers the
 * invalidations of an operation's removed entries to one after the walk.
 */
#define SLAT_SHARED         (1u << 0)  /* other walkers may run at the same
					  time (KVM_PGTABLE_WALK_SHARED) */
#define SLAT_MAP_NO_REPLACE (1u << 1)  /* map: fail rather than replace */
/* map, relax: no cache maintenance: the caller cleaned (and invalidated)
 * the memory itself, as KVM's KVM_PGTABLE_WALK_SKIP_CMO. */
#define SLAT_SKIP_CMO       (1u << 3)
/* map: a block the range covers only in part, or that a leaf of its size
 * cannot replace, is broken (break-before-make, one invalidation) into a
 * table that holds only the new leaves: the rest of it is unmapped, not
 * cleaned, and faults again when touched (arm64 KVM's map over a block:
 * "mapped lazily"). Without it the block is split and the rest kept. */
#define SLAT_MAP_BREAK_BLOCK (1u << 4)
/* wrprotect, restrict, relax: a hole in the range (an IPA nothing
 * translates) refuses the call with SLAT_E_NOENT before any change, as a
 * fault handler wants to know (KVM's KVM_PGTABLE_WALK_HANDLE_FAULT); without
 * it the three skip holes alike. */
#define SLAT_NO_HOLES       (1u << 5)
/* map: no leaf larger than 1 << shift bytes (shift 0: no cap). */
#define SLAT_MAP_CAP(shift) (((uint32_t)(shift) & 0x3fu) << 8)
#define SLAT_MAP_CAP_SHIFT(flags) (((flags) >> 8) & 0x3fu)
#define SLAT_MAP_PAGES      SLAT_MAP_CAP(1) /* force last-level pages */

/* When an operation that removes or restricts translations invalidates. */
enum slat_tlbi_policy {
	SLAT_FLUSH_ENTRY = 0, /* one by-IPA invalidation per entry changed */
	SLAT_FLUSH_RANGE = 1, /* one range invalidation after the walk */
	SLAT_FLUSH_VMID = 2,  /* one whole-VMID invalidation after the walk */
	SLAT_FLUSH_NONE = 3,  /* none: the caller flushes before relying on it */
};

/**
 * struct slat_op - what every range operation takes after its own
 * arguments. A zeroed one (or a NULL pointer) asks for the defaults: an
 * exclusive call, no page cache, an invalidation per entry changed.
 * @flags: SLAT_SHARED, SLAT_SKIP_CMO, and the operation's own flags
 *	(SLAT_MAP_*, SLAT_SPLIT_NO_SKIP); each operation says which it takes
 *	and refuses the others with SLAT_E_INVAL.
 * @flush: when the translations the operation removes or restricts are
 *	invalidated (operations that neither remove nor restrict ignore it).
 * @cache: table pages for an operation that may need some (map, and those
 *	that split a block the range covers only in part); NULL: none.
 * @done: set by the call: the bytes from the range's start that were
 *	completed, also on error (0 when the input was refused).
 */
struct slat_op {
	uint32_t flags;
	enum slat_tlbi_policy flush;
	struct slat_page_cache *cache;
	uint64_t done;
};

/* A struct slat_op built in place, for a call whose op->done is not read
 * afterwards: slat_unmap(t, ipa, size, SLAT_OP(.flush = SLAT_FLUSH_RANGE)).
 * C only (a compound literal). */
#define SLAT_OP(...) (&(struct slat_op){ __VA_ARGS__ })

/*
 * Map [ipa, ipa+size) to [pa, pa+size) with @attrs (SLAT_R/W/X..., SLAT_MT_*,
 * SLAT_SW(n)). Uses the largest leaf that the level, the alignment of IPA
 * and PA, the remaining size and SLAT_MAP_CAP allow. A different existing
 * translation is replaced with break-before-make; a block only partly
 * covered is first split so that the rest of it keeps its translation
 * (with SLAT_MAP_BREAK_BLOCK it is broken, and the rest unmapped).
 * Leaves that already translate to the same PA with the same memory type
 * are left alone, even when their permissions differ.
 *
 * @op: flags SLAT_SHARED, SLAT_MAP_NO_REPLACE, SLAT_MAP_CAP(), SLAT_SKIP_CMO,
 * SLAT_MAP_BREAK_BLOCK (with SLAT_MAP_NO_REPLACE, a block that translates
 * as asked is kept, as without it);
 * the cache supplies table pages; the flush policy is unused (a replaced
 * translation is invalidated before its replacement is made).
 *
 * Returns SLAT_OK, SLAT_NOTHING_TO_DO (nothing needed writing), or
 * SLAT_E_ALIGN, SLAT_E_RANGE, SLAT_E_ATTR, SLAT_E_INVAL, SLAT_E_EXISTS
 * (with SLAT_MAP_NO_REPLACE: the table unchanged; under SLAT_SHARED,
 * where another walker mapped part of the range meanwhile, op->done tells
 * how far this call got), SLAT_E_NOMEM (table valid, op->done tells how
 * far), SLAT_E_AGAIN (shared mode only).
 */
SLAT_API int slat_map(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
		      slat_pa_t pa, uint32_t attrs, struct slat_op *op);

/*
 * Remove every translation in [ipa, ipa+size). Tables that become empty are
 * freed. A block only partly covered is split first (pages from @cache).
 * Without FEAT_S2FWB (Arm stage 2), the memory of every Normal write-back
 * leaf removed is cleaned and invalidated to the PoC once an invalidation
 * covers the leaf (under SLAT_FLUSH_NONE right away: the caller then owns
 * the order), in one call per contiguous PA run.
 * @op: no flags (exclusive); invalidation per the flush policy.
 *
 * Returns SLAT_OK, SLAT_E_ALIGN, SLAT_E_RANGE, SLAT_E_INVAL or SLAT_E_NOMEM
 * (with op->done).
 */
SLAT_API int slat_unmap(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			struct slat_op *op);

/*
 * Clean and invalidate to the PoC the memory of every Normal write-back leaf
 * in [ipa, ipa+size), the part inside the range, one call per contiguous PA
 * run: for a guest that turns its caches on or off, or set/way maintenance
 * (KVM's kvm_pgtable_stage2_flush). Nothing to do with FEAT_S2FWB or on
 * formats without cache maintenance. @op: flag SLAT_SHARED.
 * Returns SLAT_OK, SLAT_NOTHING_TO_DO (no such leaf), SLAT_E_ALIGN,
 * SLAT_E_RANGE or SLAT_E_INVAL.
 */
SLAT_API int slat_flush(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			struct slat_op *op);

/* What lookup finds. */
struct slat_leaf {
	slat_ipa_t base;  /* first IPA of the leaf */
	uint64_t size;    /* bytes it maps */
	slat_pa_t pa;     /* output address of the looked-up IPA */
	uint32_t attrs;   /* SLAT_R/W/X, SLAT_MT_*, SLAT_SW(n), SLAT_YOUNG */
	int level;
	slat_pte_t pte;   /* the raw descriptor */
};

/*
 * Find the leaf that translates @ipa.
 * Returns SLAT_OK, SLAT_E_NOENT (not mapped), SLAT_E_RANGE.
 */
SLAT_API int slat_lookup(const struct slat_table *t, slat_ipa_t ipa,
			 struct slat_leaf *leaf);

/*
 * Remove write permission from [ipa, ipa+size), in place: slat_restrict()
 * with SLAT_W. A partly covered block is split first (pages from
 * op->cache). @op: flags SLAT_SHARED (as the x86 TDP MMU write-protects
 * under the MMU lock held for read: a leaf another walker changed
 * meanwhile is protected as it is now; one it is replacing or has split
 * makes the call stop with SLAT_E_AGAIN, op->done telling how far it got,
 * for the caller to retry the rest; without it, exclusive, as arm64 KVM
 * under the lock held for write), SLAT_NO_HOLES; invalidation per the flush
 * policy.
 * Returns SLAT_OK (also when every leaf was protected already), SLAT_E_NOENT
 * (a hole, with SLAT_NO_HOLES; nothing changed), SLAT_E_ALIGN, SLAT_E_RANGE,
 * SLAT_E_INVAL, SLAT_E_NOMEM or SLAT_E_AGAIN (shared only; with op->done).
 */
SLAT_API int slat_wrprotect(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			    struct slat_op *op);

/*
 * Remove permissions @perms (SLAT_R, SLAT_W, SLAT_X, or SLAT_XU / SLAT_XK
 * alone where execute is split) from every leaf in [ipa, ipa+size), in
 * place; everything else about each leaf is kept. A partly covered block
 * is split first (pages from op->cache). Another CPU may hold the more
 * permissive entry, so the invalidations are broadcast, per the flush
 * policy, as for write protection (KVM's stage2_update_leaf_attrs() with
 * bits to clear). @op: flags SLAT_SHARED (as slat_wrprotect()),
 * SLAT_NO_HOLES.
 * Returns SLAT_OK (also when no leaf had them), SLAT_E_ATTR (@perms empty or
 * not permissions, or a leaf the removal would leave one the format cannot
 * express: EPT write without read, Arm stage 1 without read; nothing
 * changed), SLAT_E_NOENT (a hole, with SLAT_NO_HOLES; nothing changed),
 * SLAT_E_ALIGN, SLAT_E_RANGE, SLAT_E_INVAL, SLAT_E_NOMEM or SLAT_E_AGAIN
 * (shared only; with op->done).
 */
SLAT_API int slat_restrict(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			   uint32_t perms, struct slat_op *op);

/*
 * Add permissions @perms (SLAT_R/W/X) to every leaf in [ipa, ipa+size), in
 * place, and mark them young. A partly covered block is split first (pages
 * from op->cache). Adding execute invalidates the I-cache for those pages.
 * @op: flags SLAT_SHARED, SLAT_SKIP_CMO, SLAT_NO_HOLES (a fault handler's
 * relax: the leaf may have gone meanwhile). A stale entry with fewer
 * permissions would only fault again, so invalidations are this CPU's
 * only: per entry changed under SLAT_FLUSH_ENTRY, else one range or VMID
 * invalidation after the walk, or none; none at all where a fault itself
 * drops the stale entry (EPT).
 * Holes are skipped, as by slat_wrprotect().
 * Returns SLAT_OK, SLAT_NOTHING_TO_DO, SLAT_E_NOENT (a hole in the range,
 * with SLAT_NO_HOLES; nothing changed), SLAT_E_ATTR, SLAT_E_ALIGN,
 * SLAT_E_RANGE, SLAT_E_NOMEM.
 */
SLAT_API int slat_relax(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			uint32_t perms, struct slat_op *op);

/*
 * Set the access flag of the leaf translating @ipa (the whole leaf).
 * Returns SLAT_OK, SLAT_NOTHING_TO_DO (already young), SLAT_E_NOENT.
 */
SLAT_API int slat_mkyoung(struct slat_table *t, slat_ipa_t ipa, uint32_t flags);

/*
 * Report whether any leaf overlapping [ipa, ipa+size) is young; with @mkold
 * clear their access flags (whole leaves, no invalidation: a stale young
 * entry only delays the next report). @op: flag SLAT_SHARED.
 * Returns SLAT_WAS_YOUNG, SLAT_OK (none was young) or a negative error.
 */
SLAT_API int slat_test_clear_young(struct slat_table *t, slat_ipa_t ipa,
				   uint64_t size, bool mkold,
				   struct slat_op *op);

/*
 * Hardware dirty state (SLAT_FEAT_HWDIRTY): report which pages of
 * [ipa, ipa+size) were written since the last clear. Bit i of @bitmap
 * (@words uint64_t words, at least size / granule bits; those bits are all
 * written) is set when page ipa + i * granule is dirty; a dirty block
 * reports all its pages in the range. With @clear, dirty leaves become
 * writable-clean (Arm: S2AP.W cleared, DBM kept; EPT: D cleared) and are
 * invalidated per the flush policy, so the next write is seen again.
 * @op: flag SLAT_SHARED; the cache supplies pages to split a dirty block
 * the range covers only partly (SLAT_OP_DIRTY_CLEAR pages suffice).
 * Returns the number of dirty pages (a count, never a status), or
 * SLAT_E_NOMEM, SLAT_E_CONFIG (no hardware dirty state), SLAT_E_ALIGN,
 * SLAT_E_RANGE, SLAT_E_INVAL (also: a bitmap shorter than the range).
 */
SLAT_API int64_t slat_dirty_read(struct slat_table *t, slat_ipa_t ipa,
				 uint64_t size, uint64_t *bitmap, size_t words,
				 bool clear, struct slat_op *op);

/* Kinds of access, for slat_hw_access(). */
#define SLAT_ACCESS_READ  0u
#define SLAT_ACCESS_WRITE 1u
#define SLAT_ACCESS_EXEC_EL1 2u /* supervisor */
#define SLAT_ACCESS_EXEC_EL0 3u /* user */
/* With READ or WRITE: made at EL0 (user mode). A stage-1 table then also
 * requires AP[1] (SLAT_USER); stage 2 and EPT do not see the level of a
 * data access. */
#define SLAT_ACCESS_USER  (1u << 2)

enum slat_fault {
	SLAT_FAULT_NONE = 0,
	SLAT_FAULT_TRANSLATION, /* no valid leaf (Arm translation fault,
				   EPT violation on a non-present entry) */
	SLAT_FAULT_PERMISSION,  /* the leaf forbids the access */
	SLAT_FAULT_ACCESS_FLAG, /* Arm: AF clear and no hardware AF update */
};

struct slat_hw_result {
	enum slat_fault fault;
	int level;     /* level of the leaf, or where the walk stopped */
	slat_pa_t pa;  /* output address when no fault */
	uint32_t attrs;
};

/*
 * Translate @ipa for one access as the CPU's table walker would, including
 * its atomic updates of the access flag and dirty state (SLAT_FEAT_HWDIRTY:
 * Arm HA/HD, EPT A/D). Safe against concurrent updates by libslat. Used by
 * software MMUs and by tests that play the hardware.
 * Returns SLAT_OK (see res->fault) or SLAT_E_RANGE / SLAT_E_INVAL.
 */
SLAT_API int slat_hw_access(struct slat_table *t, slat_ipa_t ipa,
			    unsigned access, struct slat_hw_result *res);

/**
 * struct slat_arm_abort - a stage-2 abort taken to EL2 (a Data or
 * Instruction Abort from a lower Exception level), decoded.
 * @fault: SLAT_FAULT_TRANSLATION, _ACCESS_FLAG or _PERMISSION; NONE for an
 *	abort no table entry caused (@address_size, external aborts,
 *	alignment, TLB conflict: see @fsc).
 * @level: the level of the stage-2 walk that faulted (-1 with FEAT_LPA2).
 * @access: what stage 2 must allow for the access to go ahead:
 *	SLAT_ACCESS_READ, _WRITE, or _EXEC_EL1 for an instruction fetch (ESR
 *	does not say which EL fetched: with SLAT_FEAT_XNX look at SPSR_EL2.M).
 *	A fault on the guest's stage-1 walk (@s1ptw) is a read, or a write
 *	when it is a permission fault: the walker updating a descriptor's
 *	access flag or dirty state.
 * @s1ptw: the fault was on the stage-2 translation of the guest's own
 *	stage-1 table walk, whatever the instruction was.
 * @cm: a cache maintenance or address translation instruction faulted
 *	(reported as a write; a read here unless a permission fault).
 * @address_size: an address size fault: the IPA is beyond the table.
 * @fsc: ESR_EL2.ISS.{D,I}FSC.
 * @ipa_valid: HPFAR_EL2 held the faulting IPA, now in @ipa. Not for a
 *	permission fault outside a stage-1 walk, where the architecture leaves
 *	HPFAR_EL2 UNKNOWN: translate FAR_EL2 with AT S1E1R (S1E1W for a write)
 *	and slat_arm_par_ipa(), and let the guest retry when that fails (its
 *	stage 1 changed meanwhile).
 * @ipa: the faulting IPA (HPFAR_EL2.FIPA and FAR_EL2's page offset).
 */
struct slat_arm_abort {
	enum slat_fault fault;
	int level;
	unsigned access;
	bool s1ptw, cm, address_size;
	uint32_t fsc;
	bool ipa_valid;
	uint64_t ipa;
};

/**
 * slat_arm_abort_decode() - decode a stage-2 abort for the fault path.
 * @esr: ESR_EL2.
 * @hpfar: HPFAR_EL2 (read whatever it holds; only used when valid).
 * @far: FAR_EL2.
 * @out: the decoded abort.
 *
 * Return: SLAT_OK, or SLAT_E_INVAL when @esr is no Data or Instruction
 * Abort from a lower Exception level (or @out is NULL).
 */
SLAT_API int slat_arm_abort_decode(uint64_t esr, uint64_t hpfar, uint64_t far,
				   struct slat_arm_abort *out);

/* slat_arm_par_ipa()'s answer when PAR_EL1 reports a failed translation. */
#define SLAT_ARM_NO_IPA (~0ull)

/**
 * slat_arm_par_ipa() - the IPA an AT S1E1R/S1E1W instruction found.
 * @par: PAR_EL1 after the instruction.
 * @far: FAR_EL2, for the offset in the page.
 *
 * Return: the IPA, or SLAT_ARM_NO_IPA when PAR_EL1.F reports a fault.
 */
SLAT_API uint64_t slat_arm_par_ipa(uint64_t par, uint64_t far);

#define SLAT_SPLIT_NO_SKIP (1u << 2) /* split: walk every level (no skipping) */

/*
 * Eager page splitting: turn every block that meets [ipa, ipa+size) into
 * tables down to leaves of @leaf_size bytes (0: the granule), keeping every
 * translation. Each block's subtree is built off-line from @cache, then
 * installed: with break-before-make on Arm, in place on EPT. The walk reads
 * only the levels that can hold a block larger than @leaf_size and never
 * walks a subtree it has just built (seed 002), unless SLAT_SPLIT_NO_SKIP.
 * With the pages slat_pages_needed() counts in op->cache it cannot run
 * out; without them it stops at a block boundary with SLAT_E_NOMEM,
 * op->done telling how far it got. @op: flag SLAT_SPLIT_NO_SKIP
 * (exclusive); the flush policy is unused (break-before-make invalidates
 * each block before its table is installed).
 * Returns SLAT_OK, SLAT_E_NOMEM, SLAT_E_ALIGN, SLAT_E_RANGE or
 * SLAT_E_INVAL (@leaf_size not a leaf size of the format).
 */
SLAT_API int slat_split(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			uint64_t leaf_size, struct slat_op *op);

enum slat_recover_strategy {
	/* Unmap every last-level entry, each with its own invalidation under
	 * SLAT_FLUSH_ENTRY; the guest refaults with blocks. */
	SLAT_RECOVER_ZAP_LEAF,
	/* Replace each table that could be one block by an invalid entry. */
	SLAT_RECOVER_ZAP_TABLE,
	/* Replace such a table by the block its leaves add up to, when they
	 * are all valid, map one aligned contiguous PA range and have the same
	 * attributes (the access flag and dirty state are merged). */
	SLAT_RECOVER_PROMOTE,
};

/* The lowest-numbered (largest) leaf level the backing allows at @ipa. */
typedef int (*slat_max_level_fn)(void *arg, slat_ipa_t ipa);

/**
 * struct slat_recovery - how slat_recover() rebuilds blocks.
 * @strategy: what becomes of a table whose span may be one block.
 * @max_level: the largest leaf the backing allows at an IPA (NULL: no
 *	limit beyond the format's).
 * @arg: for @max_level.
 */
struct slat_recovery {
	enum slat_recover_strategy strategy;
	slat_max_level_fn max_level;
	void *arg;
};

/* A struct slat_recovery built in place (C only, as SLAT_OP()). */
#define SLAT_RECOVERY(...) (&(struct slat_recovery){ __VA_ARGS__ })

/*
 * Huge-page recovery when dirty logging ends (seed 001): for every table in
 * [ipa, ipa+size) whose whole span may be one block (a level that allows
 * blocks and @how->max_level), apply @how->strategy. @op: no flags
 * (exclusive); invalidation per the flush policy; a table is freed only
 * after an invalidation covers it, through the deferred-free hook when the
 * platform has one. Allocates nothing.
 * Returns SLAT_OK, SLAT_E_ALIGN, SLAT_E_RANGE or SLAT_E_INVAL.
 */
SLAT_API int slat_recover(struct slat_table *t, slat_ipa_t ipa, uint64_t size,
			  const struct slat_recovery *how, struct slat_op *op);

/* Operations, for slat_pages_needed(). */
enum slat_op_kind {
	SLAT_OP_MAP,
	SLAT_OP_UNMAP,
	SLAT_OP_WRPROTECT,
	SLAT_OP_RELAX,
	SLAT_OP_DIRTY_CLEAR,
	SLAT_OP_SPLIT,
	SLAT_OP_RESTRICT,
};

/**
 * struct slat_need - an operation as slat_pages_needed() counts it: the
 * arguments the call will be given.
 * @kind: the operation.
 * @ipa: the start of its range.
 * @size: the range's length in bytes.
 * @pa: SLAT_OP_MAP: the PA @ipa maps to.
 * @attrs: SLAT_OP_MAP: its attributes (a leaf that already translates as
 *	asked is kept); SLAT_OP_RELAX, SLAT_OP_RESTRICT: the permissions.
 * @leaf_size: SLAT_OP_SPLIT: slat_split()'s @leaf_size (0: the granule).
 * @flags: the flags its struct slat_op will carry (SLAT_MAP_CAP() limits
 *	the leaves of a map; SLAT_SHARED reads entries as shared walkers do).
 */
struct slat_need {
	enum slat_op_kind kind;
	slat_ipa_t ipa;
	uint64_t size;
	slat_pa_t pa;
	uint32_t attrs;
	uint32_t flags;
	uint64_t leaf_size;
};

/* A struct slat_need built in place (C only, as SLAT_OP()). */
#define SLAT_NEED(...) (&(const struct slat_need){ __VA_ARGS__ })

/**
 * slat_pages_needed() - the table pages an operation will take from its
 * page cache.
 * @t: the table.
 * @req: the operation and its arguments.
 *
 * Counted on the table as it is now, by the operations' own rules: the
 * tables a map links (its leaves as large as the IPA, the PA, the range
 * and the cap allow; what already translates as asked is kept), the blocks
 * unmap, wrprotect, relax and dirty clearing split because the range
 * covers them only in part and they would change them, the subtrees a
 * split builds. An operation that succeeds takes exactly this many; with
 * fewer in its cache it stops with SLAT_E_NOMEM. Shared walkers running
 * meanwhile link tables, fill entries and split blocks, which never raises
 * the count; one that replaces tables by a block the operation must split
 * again does, and the operation then stops with SLAT_E_NOMEM, the table
 * valid, for the caller to top up and retry.
 *
 * Return: the count (0: nothing to allocate), or a negative error:
 * SLAT_E_INVAL (@t not set up, @req NULL, an unknown kind, a @leaf_size no
 * leaf has), SLAT_E_ALIGN or SLAT_E_RANGE (the range; for map, the PA
 * too), SLAT_E_ATTR (map's @attrs), SLAT_E_CONFIG (dirty clearing without
 * hardware dirty state).
 */
SLAT_API int64_t slat_pages_needed(const struct slat_table *t,
				   const struct slat_need *req);

/*
 * Free an unlinked subtree (a table page at @level and everything below).
 * Called by the platform's free_deferred hook once no walker can see it.
 */
SLAT_API void slat_free_unlinked(struct slat_table *t, void *va, int level);

/*
 * The registers that point the CPU at @t, from its geometry and
 * configuration (0 for a table of another format, or not set up):
 *
 * slat_arm_s2_vtcr() - VTCR_EL2: T0SZ, SL0 (and SL2), TG0, PS, walks inner
 * write-back cacheable and inner shareable, HA and HD with
 * SLAT_FEAT_HWDIRTY, DS with SLAT_FEAT_LPA2, VS with @vmid16, RES1 bit 31.
 * slat_arm_s2_vttbr() - VTTBR_EL2: the root (PA[51:48] in bits [5:2] with
 * 52-bit addresses), @vmid in bits [63:48], CnP with @cnp.
 * slat_ept_eptp() - the EPTP: write-back walks, the walk length (4 or 5
 * levels), A/D enabled with SLAT_FEAT_HWDIRTY, the root.
 * slat_arm_s1_tcr() - TCR_EL1 for a TTBR0-only table: T0SZ, TG0, IPS,
 * cacheable inner-shareable walks, EPD1 (no TTBR1 walks), HA/HD with
 * SLAT_FEAT_HWDIRTY, DS with SLAT_FEAT_LPA2, AS with @asid16.
 * slat_arm_s1_ttbr() - TTBR0_EL1: the root, @asid in bits [63:48], CnP.
 * slat_arm_s1_mair() - MAIR_EL1 for the AttrIndx values stage-1 leaves use
 * (0 Normal write-back, 1 Device-nGnRE, 2 Normal non-cacheable); MAIR_EL2
 * for a table of the EL2 regime (SLAT_FEAT_S1_EL2), whose leaves use the
 * same AttrIndx values.
 * slat_arm_s1_tcr() and slat_arm_s1_ttbr() return 0 for a table of the EL2
 * regime: TCR_EL2 and TTBR0_EL2 come from the two helpers below.
 */
SLAT_API uint64_t slat_arm_s2_vtcr(const struct slat_table *t, bool vmid16);
SLAT_API uint64_t slat_arm_s2_vttbr(const struct slat_table *t, uint16_t vmid,
				    bool cnp);
SLAT_API uint64_t slat_ept_eptp(const struct slat_table *t);

/* VMCB control area, offset 090h: nested paging enable (APM vol. 2,
 * "Enabling Nested Paging"). */
#define SLAT_NPT_NP_ENABLE (1ull << 0)

/**
 * slat_npt_ncr3() - nCR3 (VMCB offset 0B0h) for an NPT table.
 * @t: the table.
 *
 * The root's physical address, with PWT and PCD (bits 3, 4) clear: the
 * nested walk reads the tables through host PAT entry 0, write-back. The
 * VMCB also needs SLAT_NPT_NP_ENABLE at offset 090h, and the host must run
 * VMRUN in the paging mode of the table's levels (CR4.LA57 set iff
 * slat_table_geometry()->start_level is -1): the nested walk has the
 * host's number of levels. It takes the host's EFER.NXE too: without it
 * bit 63, which libslat sets in every leaf that is not executable, is
 * reserved, and every access through such a leaf exits as a reserved-bit
 * nested page fault.
 *
 * Return: nCR3, or 0 when @t is not set up or is of another format.
 */
SLAT_API uint64_t slat_npt_ncr3(const struct slat_table *t);
SLAT_API uint64_t slat_arm_s1_tcr(const struct slat_table *t, bool asid16);
SLAT_API uint64_t slat_arm_s1_ttbr(const struct slat_table *t, uint16_t asid,
				   bool cnp);
SLAT_API uint64_t slat_arm_s1_mair(void);

/**
 * slat_arm_s1_tcr_el2() - TCR_EL2 for a stage-1 table of the EL2
 * translation regime with HCR_EL2.E2H = 0 (SLAT_FEAT_S1_EL2).
 * @t: the table.
 *
 * T0SZ (64 - ia_bits), IRGN0 and ORGN0 write-back write-allocate, SH0
 * inner shareable, TG0 for the granule, PS (bits [18:16]) from pa_bits,
 * the RES1 bits 23 and 31; HA and HD with SLAT_FEAT_HWDIRTY (the CPU then
 * sets the access flag and clears AP[2] of writable-clean leaves), DS with
 * SLAT_FEAT_LPA2. TBI, HPD and the hardware-use bits are 0: hierarchical
 * permissions stay on, and libslat's table descriptors carry none.
 *
 * Return: the register value, or 0 when @t is not set up, is of another
 * format, or is a stage-1 table of the EL1&0 regime.
 */
SLAT_API uint64_t slat_arm_s1_tcr_el2(const struct slat_table *t);

/**
 * slat_arm_s1_ttbr_el2() - TTBR0_EL2 for a stage-1 table of the EL2
 * translation regime with HCR_EL2.E2H = 0 (SLAT_FEAT_S1_EL2).
 * @t: the table.
 * @cnp: set CnP (the table is shared by every PE of the Inner Shareable
 *	domain, as a hypervisor's one map is).
 *
 * The root's address (PA[51:48] in bits [5:2] with 52-bit addresses); no
 * ASID, which the regime does not have.
 *
 * Return: the register value, or 0 when @t is not set up, is of another
 * format, or is a stage-1 table of the EL1&0 regime.
 */
SLAT_API uint64_t slat_arm_s1_ttbr_el2(const struct slat_table *t, bool cnp);

/* Add @t's counters to @sum; reset them. */
SLAT_API void slat_stats_add(struct slat_stats *sum,
			     const struct slat_stats *add);
SLAT_API void slat_stats_reset(struct slat_table *t);

#ifdef __cplusplus
}
#endif
#endif
