/* SPDX-License-Identifier: MIT */
/*
 * The invariant checker. It reads the raw table memory itself, from
 * t->root_pa through the hosted arena, and decodes descriptors with its own
 * per-format code (struct check_format, like io-pgtable's ops): it never
 * calls the core's slat_pte_* helpers. What it checks:
 *
 *  - every descriptor is architecturally valid for its level, granule, IPA
 *    and PA size, and is one libslat may write (docs/design.md);
 *  - invalid entries are exactly 0; root entries beyond root_entries are 0;
 *  - every non-root table's refcount equals its number of non-zero entries,
 *    and no non-root table is empty;
 *  - no table is reachable twice; every table is a table page of the arena;
 *  - reachable table pages + root pages == slat_hosted_table_pages();
 *  - the translation equals the model, both ways (output address,
 *    attributes, young and dirty state), and slat_lookup agrees with the
 *    raw walk for every leaf and hole it visits.
 */
#ifndef SLAT_TEST_CHECKER_H
#define SLAT_TEST_CHECKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "model.h"

/* The geometry as the checker derives it from the architecture. */
struct check_geo {
	unsigned granule_shift;
	unsigned bits_per_level;
	unsigned entries;       /* per table page */
	int start_level;
	unsigned root_pages;
	uint32_t root_entries;
	uint8_t leaf_levels;    /* bit L: a leaf is allowed at level L */
	unsigned ia_bits, pa_bits;
	bool ds;                /* Arm FEAT_LPA2 descriptors (DS = 1) */
};

static inline unsigned check_level_shift(const struct check_geo *g, int level)
{
	return g->bits_per_level * (unsigned)(4 - level) + 3;
}

enum check_desc_kind {
	CHECK_DESC_INVALID = 0, /* exactly 0 */
	CHECK_DESC_TABLE,
	CHECK_DESC_LEAF,
	CHECK_DESC_BAD,         /* not a descriptor libslat may leave behind */
};

struct check_desc {
	enum check_desc_kind kind;
	uint64_t oa;    /* the next table's PA, or the leaf's output address */
	uint32_t attrs; /* leaves: SLAT_R/W/XK/XU, SLAT_MT_*, SLAT_SW, YOUNG,
			   DIRTY (with hardware dirty state), EPT's IPAT/SVE */
};

/* One descriptor format, seen by the checker. */
struct check_format {
	const char *name;
	enum slat_format_id id;
	/* The geometry for @cfg from the architecture; 0 or SLAT_E_CONFIG. */
	int (*geometry)(const struct slat_config *cfg, struct check_geo *g);
	/* Decode and validate @pte at @level; CHECK_DESC_BAD sets @why. */
	enum check_desc_kind (*decode)(const struct check_geo *g,
				       const struct slat_config *cfg,
				       uint64_t pte, int level,
				       struct check_desc *d, char *why,
				       size_t whylen);
	/* Whether map accepts @attrs (else SLAT_E_ATTR). */
	bool (*attrs_ok)(const struct slat_config *cfg, uint32_t attrs);
	/* Whether installing a new leaf with @attrs cleans the D-cache. */
	bool (*dcache_on_install)(const struct slat_config *cfg,
				  uint32_t attrs);
	/* Whether installing/relaxing to an executable leaf invalidates the
	 * I-cache. */
	bool (*icache_on_exec)(const struct slat_config *cfg);
	/* The execute permissions this configuration can express
	 * (SLAT_X alone, or SLAT_XK and SLAT_XU separately). */
	bool (*separate_exec)(const struct slat_config *cfg);
	/* Extra attribute bits map accepts beside permissions, memory type
	 * and software bits (EPT: SLAT_IPAT, SLAT_SVE). */
	uint32_t extra_attrs;
	/* TLB invalidation by address exists (Arm). Without it (EPT) every
	 * by-IPA or range invalidation is one whole-VMID (single-context)
	 * flush, issued through tlbi_vmid. */
	bool tlbi_by_address;
	/* Splitting a block into a table needs break-before-make (Arm, NPT);
	 * EPT changes it in place. */
	bool split_bbm;
	/* A fault drops the cached translations it used (EPT violations), so
	 * relax invalidates nothing; else (Arm, NPT) relax invalidates. */
	bool fault_invalidates;
	/* A read-only leaf can stay dirty: wrprotect keeps the hardware dirty
	 * state (EPT's D bit); without it the dirty state goes with write
	 * permission (Arm: DBM and S2AP.W are cleared together). */
	bool wrprotect_keeps_dirty;
	/* What the CPU's walker does with the access flag on an access to a
	 * leaf that is old: sets it (Arm HA, EPT A/D), raises an access flag
	 * fault (Arm without HA), or neither (EPT without A/D: the flag is
	 * software's). */
	enum check_af { CHECK_AF_HW_SETS, CHECK_AF_FAULT, CHECK_AF_IGNORED }
		(*hw_af)(const struct slat_config *cfg);
	/* The permissions (SLAT_R/W/XK/XU) the CPU enforces for a leaf with
	 * @attrs (SLAT_DIRTY as the leaf has it), when they differ from the
	 * ones it carries (Arm stage 1: a location writable at EL0 is never
	 * executable at EL1). NULL: attrs & SLAT_PERMS. */
	uint32_t (*hw_perms)(const struct slat_config *cfg, uint32_t attrs);
};

extern const struct check_format check_arm_s2;
extern const struct check_format check_ept;
extern const struct check_format check_arm_s1;
extern const struct check_format check_npt;
/* For formats that never need cache maintenance (dcache_on_install,
 * icache_on_exec). */
bool check_no_dcache(const struct slat_config *cfg, uint32_t attrs);
bool check_no_icache(const struct slat_config *cfg);

const struct check_format *check_format_for(enum slat_format_id id);

/* EPT's and NPT's geometry (check_ept.c), once the format has checked the
 * features: 4 KiB tables, 4 or 5 levels. */
int check_x86_geometry(const struct slat_config *cfg, struct check_geo *g);

/* A leaf or a hole of the raw table. */
struct check_leaf {
	bool valid;
	uint64_t base, size; /* the leaf's (or the invalid entry's) span,
				clipped to the walked range for holes */
	int level;
	uint64_t pte;
	uint64_t oa;         /* output address of base */
	uint32_t attrs;
	uint64_t *ptep;
};

struct checker {
	struct slat_table *t;
	struct slat_hosted *h;
	const struct check_format *fmt;
	struct check_geo geo;
	uint32_t *seen;       /* per arena page: epoch of the last full walk */
	uint32_t epoch;
	uint64_t tables_seen; /* non-root tables reached by the last full walk */
	uint64_t leaves_seen;
	bool check_lookup;    /* cross-check slat_lookup for leaves/holes */
	bool tolerant;        /* raw walk inside a hook: BAD reads as hole */
	bool check_stats;     /* pages_alloc - pages_freed == tables reached */
	char msg[1024];       /* the first problem found */
};

/* Returns 0, or -1 with c->msg when the geometry disagrees. */
int checker_init(struct checker *c, struct slat_table *t,
		 struct slat_hosted *h);
void checker_fini(struct checker *c);

/* Every invariant over the whole table, and the model if not NULL. */
int checker_full(struct checker *c, const struct model *m);

/* The translation of [s, e) against the model and slat_lookup. */
int checker_range(struct checker *c, const struct model *m, uint64_t s,
		  uint64_t e);

/* Call @fn for each leaf and hole of [s, e) of the raw table in order. */
typedef int (*check_leaf_fn)(void *arg, const struct check_leaf *l);
int checker_walk(struct checker *c, uint64_t s, uint64_t e, check_leaf_fn fn,
		 void *arg);

/* A table page below the root, as checker_tables() reports it. */
struct check_table {
	uint64_t base, size; /* the IPA span of the entry pointing to it */
	int level;           /* the level of its entries */
	uint64_t pa;
	uint64_t *va;
	uint64_t *parent;    /* the entry pointing to it */
};

/* Call @fn for each table page below the root whose span meets [s, e),
 * parents before children, in address order. */
typedef int (*check_table_fn)(void *arg, const struct check_table *t);
int checker_tables(struct checker *c, uint64_t s, uint64_t e,
		   check_table_fn fn, void *arg);

/*
 * The raw entry at @level for @ipa right now: 1 and *@pte, @d (an entry
 * the checker refuses, such as a locked marker, reads as invalid) when the
 * walk reaches @level; 0 when it stops above (a leaf or an invalid entry
 * there, described in @d); -1 for an address or level outside the table.
 */
int checker_entry_at(struct checker *c, uint64_t ipa, int level,
		     uint64_t *pte, struct check_desc *d);

/*
 * No mapping outside what was asked: after slat_map(ipa, size, pa), every
 * leaf the map installed or changed (any leaf now over the range grown to
 * the leaves that straddle it, before or after, that is not one of @pre
 * unchanged: the same entry holding the same value) maps only IPAs inside
 * [ipa, ipa+size), to PAs inside [pa, pa+size), except the parts that
 * translate exactly as before (output address and attributes but young
 * and dirty): the pieces of a block split so that its rest stays mapped.
 * @pre: the valid leaves that overlapped [ipa, ipa+size) before the map,
 * in address order (as checker_walk() reports them). With SLAT_E_NOMEM,
 * pass size = *done. Returns 0, or -1 with c->msg naming the leaf and the
 * bound it crosses.
 */
int checker_map_bounds(struct checker *c, const struct check_leaf *pre,
		       size_t npre, uint64_t ipa, uint64_t size, uint64_t pa);
/* The same over @post, the valid leaves over the grown range after the
 * map, already collected (in address order). */
int checker_map_bounds_leaves(struct checker *c, const struct check_leaf *pre,
			      size_t npre, const struct check_leaf *post,
			      size_t npost, uint64_t ipa, uint64_t size,
			      uint64_t pa);

/* The raw leaf translating @ipa: 1 (found), 0 (hole), -1 (bad table). */
int checker_leaf_at(struct checker *c, uint64_t ipa, struct check_leaf *l);

/* The host address of table memory at @pa, or NULL outside the arena. */
void *checker_phys_to_virt(const struct checker *c, uint64_t pa);

/* Decimal-free description of a status code, for messages. */
const char *check_status_name(int status);

#endif
