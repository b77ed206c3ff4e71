/* SPDX-License-Identifier: MIT */
/*
 * The flat reference model: for every page of IPA, what must be mapped.
 *
 * Format-neutral. The model is an interval map of non-overlapping runs
 * [start, end) that translate linearly (pa + offset) with one set of
 * attributes and one young state; holes are simply absent. The operations
 * mirror the semantics in docs/design.md page by page; whole-leaf effects
 * (young state, a hardware write to a block) are applied by the caller,
 * which knows the leaf extents.
 *
 * Hardware dirty state (docs/design.md, "Hardware dirty state") is tracked
 * per page once model_dirty_rules() turns it on: a writable page is
 * installed dirty (map, and relax when it adds write), a hardware write
 * makes its whole leaf dirty, slat_dirty_read(clear) makes the pages it
 * reports clean. Without it every page stays clean, as lookup reports.
 */
#ifndef SLAT_TEST_MODEL_H
#define SLAT_TEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slat/types.h>

/* Young state of a page: exact, or unknown when the semantics allow both. */
enum model_young {
	MODEL_OLD = 0,
	MODEL_YOUNG = 1,
	MODEL_YOUNG_UNKNOWN = 2,
};

struct model_run {
	uint64_t start, end; /* [start, end), granule-aligned */
	uint64_t pa;         /* output address of start */
	uint32_t attrs;      /* SLAT_R/W/XK/XU | SLAT_MT_* | SLAT_SW(n) */
	uint8_t young;       /* enum model_young */
	uint8_t dirty;       /* written since the last clear (hardware dirty
				state); always 0 without it */
};

/* What decides a leaf's memory type: EPT's ignore-PAT with it. */
#define MODEL_MEMTYPE(attrs) ((attrs) & (SLAT_MT_MASK | SLAT_IPAT))

struct model;

struct model *model_new(uint64_t granule);
/*
 * Turn hardware dirty state on (SLAT_FEAT_HWDIRTY). @wrprotect_cleans: the
 * format has no read-only dirty leaf, so wrprotect makes pages clean too
 * (Arm: DBM goes with S2AP.W); otherwise it keeps them dirty (EPT: D stays).
 */
void model_dirty_rules(struct model *m, bool on, bool wrprotect_cleans);
bool model_has_dirty(const struct model *m);
void model_free(struct model *m);
struct model *model_clone(const struct model *m);

/* Number of runs and mapped bytes (for statistics and sanity). */
size_t model_nr_runs(const struct model *m);
uint64_t model_mapped_bytes(const struct model *m);

/* The run containing @ipa (clipped to nothing): true if mapped. */
bool model_find(const struct model *m, uint64_t ipa, struct model_run *out);

/*
 * Call @fn for every run overlapping [s, e), in address order, clipped to
 * [s, e) (pa adjusted). Stops at, and returns, the first non-zero value.
 */
typedef int (*model_iter_fn)(void *arg, const struct model_run *r);
int model_for_each(const struct model *m, uint64_t s, uint64_t e,
		   model_iter_fn fn, void *arg);

/* Primitives. model_set installs [s, e) as map would (dirty if writable,
 * under the dirty rules). */
void model_set(struct model *m, uint64_t s, uint64_t e, uint64_t pa,
	       uint32_t attrs, uint8_t young);
void model_remove(struct model *m, uint64_t s, uint64_t e);
void model_set_young(struct model *m, uint64_t s, uint64_t e, uint8_t young);
/* Mark [s, e) dirty or clean (no-op without hardware dirty state). */
void model_set_dirty(struct model *m, uint64_t s, uint64_t e, bool dirty);
/* Old pages in [s, e) become unknown; young and unknown stay. */
void model_old_to_unknown(struct model *m, uint64_t s, uint64_t e);

/* Queries for predicting results. */
/* True if every page of [s, e) is mapped. */
bool model_fully_mapped(const struct model *m, uint64_t s, uint64_t e);
/* True if any page of [s, e) is mapped. */
bool model_any_mapped(const struct model *m, uint64_t s, uint64_t e);
/*
 * True if some page of [s, e) is mapped to something else than
 * pa + offset with memory type MT(attrs): what SLAT_MAP_NO_REPLACE refuses.
 */
bool model_map_conflicts(const struct model *m, uint64_t s, uint64_t e,
			 uint64_t pa, uint32_t attrs);
/*
 * True if some page of [s, e) is left alone by a map of [ipa..) -> pa..:
 * mapped to the same pa + offset with the same memory type.
 */
bool model_map_any_kept(const struct model *m, uint64_t ipa, uint64_t s,
			uint64_t e, uint64_t pa, uint32_t attrs);
/* Young summary of [s, e): 1 some page young, 0 all old (or none mapped),
 * -1 unknown (no page known young, some unknown). */
int model_young_summary(const struct model *m, uint64_t s, uint64_t e);

/* Dirty pages in [s, e). */
uint64_t model_dirty_pages(const struct model *m, uint64_t s, uint64_t e);

/*
 * The operations, exactly as docs/design.md defines them per page.
 * model_map returns the number of pages written (0 means
 * SLAT_NOTHING_TO_DO): pages mapped to the same pa + offset with the same
 * memory type keep everything (permissions, software bits, young state).
 */
uint64_t model_map(struct model *m, uint64_t ipa, uint64_t size, uint64_t pa,
		   uint32_t attrs);
void model_unmap(struct model *m, uint64_t ipa, uint64_t size);
/* Clears SLAT_W (and the dirty state if the rules say so); returns the
 * bytes whose attributes changed. */
uint64_t model_wrprotect(struct model *m, uint64_t ipa, uint64_t size);
/* Clears @perms (wrprotect is the case SLAT_W); returns the bytes whose
 * attributes changed. Holes stay holes. */
uint64_t model_restrict(struct model *m, uint64_t ipa, uint64_t size,
			uint32_t perms);
/*
 * Adds @perms and makes the pages young; pages that gain SLAT_W become
 * dirty (the fault that asks for write writes). Holes stay holes (the
 * caller checks for them when it passed SLAT_NO_HOLES). Returns the bytes whose permissions changed; *old_young
 * (may be NULL) gets the bytes that were not known young before.
 */
uint64_t model_relax(struct model *m, uint64_t ipa, uint64_t size,
		     uint32_t perms, uint64_t *not_young);

/*
 * Huge-page recovery (docs/split-recover.md). A split keeps everything, so
 * it needs no operation of its own; the zap strategies remove [s, e)
 * (model_remove). Promotion:
 *
 * model_uniform: [s, e) could be one block: every page mapped, one
 * contiguous output range starting at a multiple of @align, the same
 * attributes throughout (the young and dirty state may differ).
 * model_promote: [s, e) becomes that block: young when any page is young
 * (unknown when none is but some are unknown), dirty when any is dirty.
 */
bool model_uniform(const struct model *m, uint64_t s, uint64_t e,
		   uint64_t align);
void model_promote(struct model *m, uint64_t s, uint64_t e);

/* Debug: print the runs overlapping [s, e) to stderr. */
void model_dump(const struct model *m, uint64_t s, uint64_t e);

#endif
