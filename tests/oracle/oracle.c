/* SPDX-License-Identifier: MIT */
/*
 * The QEMU oracle's host driver. It builds random stage-2 layouts with
 * libslat on the hosted platform (the arena stands for guest RAM at
 * ORACLE_TABLE_BASE, so the table pages hold their real PAs), writes them
 * with probe lists into one blob, boots the EL2 program (guest/) under
 * qemu-system-aarch64 with the blob, and compares every probe result with
 * what libslat says:
 *
 *  - AT S12E1R/W probes (random layouts anywhere in the IPA and PA space):
 *    the PA, or the fault (translation / access flag / permission) and its
 *    level, against slat_lookup (leaf, PA, permissions, young state), the
 *    checker's raw walk (the level of an invalid entry), and
 *    slat_hw_access;
 *  - real accesses at EL1/EL0 (layouts that also identity-map the EL2
 *    program so that EL1 can run its stubs): loads, stores, instruction
 *    fetches at EL1 and EL0 (execute permissions with FEAT_XNX), the
 *    stage-2 abort taken to EL2 (ESR_EL2 fault status and level, FAR_EL2,
 *    HPFAR_EL2), the value loaded or stored at the expected PA, the BRK
 *    reached by a fetch;
 *  - hardware access-flag and dirty-state updates (VTCR_EL2.HA/HD with
 *    SLAT_FEAT_HWDIRTY): the descriptor after each access against the one
 *    slat_hw_access leaves in the host copy;
 *  - EL2's own stage 1 (arm-s1 tables with SLAT_FEAT_S1_EL2, loaded in
 *    TCR_EL2/TTBR0_EL2/MAIR_EL2 as slat_arm_s1_tcr_el2() and
 *    slat_arm_s1_ttbr_el2() give them): AT S1E2R/W, and loads, stores and
 *    fetches by the EL2 program itself with its MMU on, whose aborts are
 *    taken at EL2 (ESR_EL2, FAR_EL2), with and without TCR_EL2.HA/HD.
 *
 * Usage: oracle --guest ELF [--layouts N] [--el2-layouts N] [--seed N]
 *               [--config NAME|all] [--only ID] [--qemu PATH] [--keep DIR]
 *               [--verbose] [--list] [--help]
 * Exit: 0 all agree, 1 a disagreement, 77 skipped (no QEMU or no guest).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "blob.h"
#include "checker.h"
#include "driver.h"

#define SKIP 77

/* ------------------------------------------------------------ configs */

struct ocfg {
	const char *name;
	uint32_t granule;
	uint8_t ia, pa;
	uint32_t features; /* SLAT_FEAT_LPA2, SLAT_FEAT_S1_EL2 or 0 */
	uint8_t levels;    /* slat_config.levels: 0 for the default */
};

#define LPA2 SLAT_FEAT_LPA2
#define EL2 SLAT_FEAT_S1_EL2

static const struct ocfg configs[] = {
	{ "4k-32", 4096, 32, 40, 0, 0 },   { "4k-36", 4096, 36, 36, 0, 0 },
	{ "4k-39", 4096, 39, 40, 0, 0 },   { "4k-40", 4096, 40, 40, 0, 0 },
	{ "4k-42", 4096, 42, 42, 0, 0 },   { "4k-44", 4096, 44, 44, 0, 0 },
	{ "4k-48", 4096, 48, 48, 0, 0 },   { "16k-36", 16384, 36, 36, 0, 0 },
	{ "16k-40", 16384, 40, 40, 0, 0 }, { "16k-42", 16384, 42, 42, 0, 0 },
	{ "16k-47", 16384, 47, 48, 0, 0 }, { "16k-48", 16384, 48, 48, 0, 0 },
	{ "64k-32", 65536, 32, 40, 0, 0 }, { "64k-40", 65536, 40, 40, 0, 0 },
	{ "64k-44", 65536, 44, 44, 0, 0 }, { "64k-48", 65536, 48, 48, 0, 0 },
	{ "64k-52", 65536, 52, 52, 0, 0 },
	/* FEAT_LPA2 (VTCR_EL2.DS = 1): PA[51:50] in bits [9:8], no SH field,
	 * 512 GiB level-0 blocks (4K), 64 GiB level-1 blocks (16K); 4K with
	 * 49 to 52 IPA bits in 2 to 16 concatenated level-0 tables. Not 16K
	 * with a 52-bit IPA: its level-0 start (SL0 = 3 with DS) is refused
	 * by QEMU 7.2 (docs/oracle.md) */
	{ "4k-52-lpa2", 4096, 52, 52, LPA2, 0 },
	{ "4k-50-lpa2", 4096, 50, 52, LPA2, 0 },
	{ "4k-48-lpa2", 4096, 48, 48, LPA2, 0 },
	{ "4k-40-lpa2", 4096, 40, 44, LPA2, 0 },
	{ "16k-51-lpa2", 16384, 51, 52, LPA2, 0 },
	{ "16k-50-lpa2", 16384, 50, 52, LPA2, 0 },
	{ "16k-48-lpa2", 16384, 48, 48, LPA2, 0 },
	/* start levels other than the default (slat_config.levels), with
	 * the SL0/SL2 slat_arm_s2_vtcr() gives them: 4K from level 0 with 2
	 * and 8 entries (not 2 or 8 level-1 pages), from level 1 with 4 and
	 * 16 entries (not 4 or 16 level-2 pages); 16K and 64K from level 1
	 * (not concatenated level-2 pages); 4K with DS from level -1 (SL2),
	 * 52 bits only: QEMU 7.2 refuses a level -1 walk of 49 to 51 bits,
	 * which the architecture allows (docs/oracle.md) */
	{ "4k-40-l0", 4096, 40, 44, 0, 4 }, { "4k-42-l0", 4096, 42, 48, 0, 4 },
	{ "4k-32-l1", 4096, 32, 40, 0, 3 }, { "4k-34-l1", 4096, 34, 40, 0, 3 },
	{ "16k-37-l1", 16384, 37, 42, 0, 3 },
	{ "16k-40-l1", 16384, 40, 48, 0, 3 },
	{ "64k-43-l1", 65536, 43, 48, 0, 3 },
	{ "64k-44-l1", 65536, 44, 44, 0, 3 },
	{ "4k-52-lpa2-l-1", 4096, 52, 52, LPA2, 5 },
	/* EL2's own stage 1, HCR_EL2.E2H = 0 (arm-s1, SLAT_FEAT_S1_EL2):
	 * slat-hyp's 32-bit VA from a 4-entry level-1 root, 3- and 4-level
	 * walks of every granule, 52-bit VAs (64K; 4K and 16K with DS) */
	{ "el2-4k-32", 4096, 32, 40, EL2, 0 },
	{ "el2-4k-39", 4096, 39, 40, EL2, 0 },
	{ "el2-4k-48", 4096, 48, 48, EL2, 0 },
	{ "el2-4k-52-lpa2", 4096, 52, 52, EL2 | LPA2, 0 },
	{ "el2-16k-36", 16384, 36, 40, EL2, 0 },
	{ "el2-16k-47", 16384, 47, 48, EL2, 0 },
	{ "el2-16k-52-lpa2", 16384, 52, 52, EL2 | LPA2, 0 },
	{ "el2-64k-42", 65536, 42, 48, EL2, 0 },
	{ "el2-64k-52", 65536, 52, 52, EL2, 0 },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

static bool el2_config(const struct ocfg *oc)
{
	return oc->features & SLAT_FEAT_S1_EL2;
}


/* ------------------------------------------------------------ state */

enum flavor {
	FL_AT,      /* random layout anywhere, AT probes */
	FL_EXEC,    /* EL1/EL0 (EL2) probes into guest RAM, no HA/HD */
	FL_HWDIRTY, /* the same with HA/HD and SLAT_FEAT_HWDIRTY */
};
static const char *flavor_names[2][3] = { { "at", "el1", "hafdbs" },
					  { "at-s1e2", "el2", "hafdbs-el2" } };

/* What a probe must produce (filled from libslat before QEMU runs). */
struct expect {
	enum slat_fault fault;
	int level;
	uint64_t pa;         /* output address when no fault */
	uint64_t desc_before, desc_after; /* HA/HD layouts: the descriptor */
	/* the same from slat_hw_access, for the cross-check */
	enum slat_fault hw_fault;
	int hw_level;
	uint64_t hw_pa;
};

struct layout_rec {
	uint32_t id;
	const struct ocfg *oc;
	enum oracle_regime regime;
	enum flavor fl;
	struct slat_config cfg;
	uint64_t seed;
	uint32_t nr_probes;
	struct oracle_probe *probes;
	struct expect *exp;
	char desc[160];
};

/* What one regime's layouts did (stage 2, EL2's stage 1). */
struct tally {
	uint64_t by_flavor[3], gran_layouts[3], probes;
	uint64_t af_set, dirty_set;
	uint64_t translated[5]; /* probes QEMU translated, by leaf level + 1 */
};

static struct {
	const char *guest, *qemu, *keep;
	bool verbose;
	uint64_t seed;
	/* blob under construction */
	uint8_t *blob;
	size_t blen, bcap;
	struct layout_rec *recs;
	size_t nrecs, reccap;
	/* totals */
	uint64_t mismatches, runs;
	uint64_t hw_disagree, lookup_disagree;
	struct tally tally[2]; /* by enum oracle_regime */
	double qemu_seconds;
	unsigned hafdbs;
	char banner[256];
} O;

/* What the command line asks. */
static struct {
	const char *config;
	uint64_t per_granule, el2_per_granule;
	long only;
} A;

static void blob_put(const void *p, size_t n)
{
	oracle_put(&O.blob, &O.blen, &O.bcap, p, n);
}

/* ------------------------------------------------------------ a layout */

struct gen {
	const struct ocfg *oc;
	enum flavor fl;
	bool el2; /* EL2's own stage 1, probed from EL2 */
	struct slat_config cfg;
	struct slat_geometry geo;
	struct oracle_table o;
	uint64_t G, lsize[4];
	uint64_t ia_end, pa_end;
	/* where leaves go */
	uint64_t iwin, iwin_size, pwin, pwin_size;
	/* leaves for probing */
	struct oracle_leaves lv;
};

static uint64_t lvl_size(const struct gen *g, int l)
{
	return 1ull << (g->geo.bits_per_level * (3 - l) + g->geo.granule_shift);
}

static int gen_map(struct gen *g, uint64_t ipa, uint64_t size, uint64_t pa,
		   uint32_t attrs, uint32_t flags)
{
	int64_t need = slat_pages_needed(
		&g->o.t, SLAT_NEED(.kind = SLAT_OP_MAP, .ipa = slat_ipa(ipa),
				 .size = size, .pa = slat_pa(pa),
				 .attrs = attrs, .flags = flags));
	if (need < 0)
		return (int)need;
	if (need > 64)
		need = 64;
	if (need > g->o.cache.nr &&
	    slat_hosted_cache_topup(&g->o.h, &g->o.cache, (uint32_t)need))
		return SLAT_E_NOMEM;
	return slat_map(&g->o.t, slat_ipa(ipa), size, slat_pa(pa), attrs,
			SLAT_OP(.flags = flags, .cache = &g->o.cache));
}

static uint32_t gen_attrs(const struct gen *g, bool exec_ok)
{
	unsigned c = (unsigned)below(100);
	uint32_t mt = c < 65 ? SLAT_MT_NORMAL
		      : c < 80 ? SLAT_MT_NORMAL_NC : SLAT_MT_DEVICE;
	uint32_t a = mt;
	bool hw = g->fl == FL_HWDIRTY; /* accesses that succeed, mostly */
	if (chance(hw ? 95 : 80))
		a |= SLAT_R;
	/* a valid stage-1 leaf always lets EL2 read */
	if (g->el2)
		a |= SLAT_R;
	if (chance(hw ? 85 : 55))
		a |= SLAT_W;
	if (exec_ok && mt != SLAT_MT_DEVICE && chance(50)) {
		if (g->cfg.features & SLAT_FEAT_XNX) {
			static const uint32_t xs[] = { SLAT_X, SLAT_XK, SLAT_XU };
			a |= xs[below(3)];
		} else {
			a |= SLAT_X;
		}
	}
	if (chance(20))
		a |= SLAT_SW(below(16));
	return a;
}

/*
 * Leaves and holes: blocks of every allowed level, runs of pages, holes
 * punched into blocks, read-only / no-exec / write-only leaves, Device
 * and Normal memory, old leaves.
 */
static void gen_items(struct gen *g)
{
	unsigned items = 3 + (unsigned)below(6);
	/* AT S12E1 layouts have no execute; EL2's keep it in the descriptors
	 * AT S1E2 reads */
	bool exec = g->fl != FL_AT || g->el2;
	for (unsigned i = 0; i < items; i++) {
		int lv[4], n = 0;
		/* no leaf at level -1 (LPA2's 4K start) */
		for (int l = g->geo.start_level < 0 ? 0 : g->geo.start_level;
		     l <= 3; l++)
			if ((g->geo.leaf_levels & (1u << l)) &&
			    lvl_size(g, l) <= g->iwin_size / 2 &&
			    lvl_size(g, l) <= g->pwin_size)
				lv[n++] = l;
		int l = n ? lv[below((uint64_t)n)] : 3;
		uint64_t L = lvl_size(g, l);
		uint64_t cnt = l == 3 ? 1 + below(40) : 1 + below(2);
		uint64_t size = L * cnt;
		if (size > g->iwin_size / 2 || size > g->pwin_size)
			size = L;
		uint64_t ipa = g->iwin + align_down(below(g->iwin_size - size + 1), L);
		uint64_t pa = g->pwin + align_down(below(g->pwin_size - size + 1), L);
		uint32_t flags = 0;
		if (l == 3 && chance(50)) {
			/* pages at an unaligned PA offset: no blocks */
			flags = SLAT_MAP_PAGES;
			ipa = g->iwin + align_down(below(g->iwin_size - size + 1), g->G);
			pa = g->pwin + align_down(below(g->pwin_size - size + 1), g->G);
		}
		int ret = gen_map(g, ipa, size, pa, gen_attrs(g, exec), flags);
		if (ret < 0)
			die("layout map: %s", check_status_name(ret));
	}
	/* holes inside blocks, and protection changes */
	unsigned holes = (unsigned)below(4);
	for (unsigned i = 0; i < holes; i++) {
		uint64_t ipa = g->iwin + align_down(below(g->iwin_size), g->G);
		uint64_t size = g->G * (1 + below(20));
		if (ipa + size > g->iwin + g->iwin_size)
			continue;
		int64_t need = slat_pages_needed(
			&g->o.t, SLAT_NEED(.kind = SLAT_OP_UNMAP,
					 .ipa = slat_ipa(ipa), .size = size));
		if (slat_hosted_cache_topup(&g->o.h, &g->o.cache, (uint32_t)need))
			die("arena exhausted");
		int ret =
			chance(70)
				? slat_unmap(&g->o.t, slat_ipa(ipa), size,
					     SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						     .cache = &g->o.cache))
				: slat_wrprotect(
					  &g->o.t, slat_ipa(ipa), size,
					  SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						  .cache = &g->o.cache));
		if (ret < 0)
			die("layout unmap/wrprotect: %s", check_status_name(ret));
	}
	/* old leaves (the access flag) */
	if (g->fl == FL_HWDIRTY && chance(70))
		slat_test_clear_young(&g->o.t, slat_ipa(g->iwin), g->iwin_size,
				      true, NULL);
	else if (chance(50)) {
		uint64_t ipa = g->iwin + align_down(below(g->iwin_size), g->G);
		uint64_t size = g->G * (1 + below(64));
		if (ipa + size <= g->iwin + g->iwin_size)
			slat_test_clear_young(&g->o.t, slat_ipa(ipa), size, true,
					      NULL);
	}
	/* clean (hardware-dirty) leaves */
	if (g->fl == FL_HWDIRTY && chance(80)) {
		uint64_t ipa = g->iwin + align_down(below(g->iwin_size / 2), g->G);
		uint64_t size = align_down(g->iwin_size / 2, g->G);
		uint64_t words = (size / g->G + 63) / 64;
		uint64_t *bm = calloc(words, 8);
		int64_t need = slat_pages_needed(
			&g->o.t, SLAT_NEED(.kind = SLAT_OP_DIRTY_CLEAR,
					 .ipa = slat_ipa(ipa), .size = size));
		if (slat_hosted_cache_topup(&g->o.h, &g->o.cache, (uint32_t)need))
			die("arena exhausted");
		int64_t r = slat_dirty_read(&g->o.t, slat_ipa(ipa), size, bm,
					    words, true,
					    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
						    .cache = &g->o.cache));
		free(bm);
		if (r < 0)
			die("slat_dirty_read: %s", check_status_name((int)r));
	}
}

static int open_gen(struct gen *g, const struct ocfg *oc, enum flavor fl)
{
	memset(g, 0, sizeof(*g));
	g->oc = oc;
	g->fl = fl;
	g->el2 = el2_config(oc);
	g->cfg = (struct slat_config){
		.format = g->el2 ? SLAT_FMT_ARM_S1 : SLAT_FMT_ARM_S2,
		.granule = oc->granule, .ia_bits = oc->ia, .pa_bits = oc->pa,
		.features = oc->features, .levels = oc->levels,
	};
	/* stage 2's own features */
	if (!g->el2 && chance(30))
		g->cfg.features |= SLAT_FEAT_FWB;
	if (!g->el2 && chance(50))
		g->cfg.features |= SLAT_FEAT_XNX;
	if (fl == FL_HWDIRTY)
		g->cfg.features |= SLAT_FEAT_HWDIRTY;
	if (slat_config_geometry(&g->cfg, &g->geo))
		die("config %s refused", oc->name);
	g->G = oc->granule;
	g->ia_end = 1ull << oc->ia;
	g->pa_end = 1ull << oc->pa;
	int ret = oracle_table_open(&g->o, &g->cfg, ORACLE_TABLE_MAX,
				    ORACLE_TABLE_BASE, 256,
				    g->cfg.features & SLAT_FEAT_HWDIRTY);
	if (ret)
		return ret;
	return 0;
}

static void close_gen(struct gen *g)
{
	oracle_table_close(&g->o);
	free(g->lv.v);
}

/* The PA of the descriptor (in the arena) translating @ipa, or 0. */
static uint64_t desc_pa_of(struct gen *g, uint64_t ipa)
{
	struct check_leaf l;
	g->o.ck.tolerant = true; /* DBM leaves: the checker predates them */
	int k = checker_leaf_at(&g->o.ck, ipa, &l);
	g->o.ck.tolerant = false;
	if (k < 0 || !l.ptep)
		return 0;
	return g->o.h.pa_base + (uint64_t)((uint8_t *)l.ptep - g->o.h.arena);
}

static uint64_t desc_value(struct gen *g, uint64_t desc_pa)
{
	return *(uint64_t *)(g->o.h.arena + (desc_pa - g->o.h.pa_base));
}

/* The level of the invalid entry met by a walk of @ipa (raw walk). */
static int hole_level(struct gen *g, uint64_t ipa)
{
	struct check_leaf l;
	g->o.ck.tolerant = true;
	int k = checker_leaf_at(&g->o.ck, ipa, &l);
	g->o.ck.tolerant = false;
	if (k != 0)
		die("raw walk of a hole at %#" PRIx64 " found %d", ipa, k);
	return l.level;
}

/* EL2's fetches are the regime's privileged ones: SLAT_ACCESS_EXEC_EL1
 * asks the leaf's XK, which XN gives at EL2. */
static unsigned access_of(uint32_t kind)
{
	switch (kind) {
	case ORACLE_AT_W:
	case ORACLE_AT_E2W:
	case ORACLE_STORE:
	case ORACLE_EL2_STORE: return SLAT_ACCESS_WRITE;
	case ORACLE_FETCH:
	case ORACLE_EL2_FETCH: return SLAT_ACCESS_EXEC_EL1;
	case ORACLE_FETCH_EL0: return SLAT_ACCESS_EXEC_EL0;
	default: return SLAT_ACCESS_READ;
	}
}

static bool kind_is_at(uint32_t kind)
{
	return kind == ORACLE_AT_R || kind == ORACLE_AT_W ||
	       kind == ORACLE_AT_E2R || kind == ORACLE_AT_E2W;
}

static bool kind_is_fetch(uint32_t kind)
{
	return kind == ORACLE_FETCH || kind == ORACLE_FETCH_EL0 ||
	       kind == ORACLE_EL2_FETCH;
}

/*
 * What the architecture says for @kind at @ipa, from slat_lookup (and the
 * raw walk for holes): fault priority translation > access flag >
 * permission.
 */
static void expect_from_lookup(struct gen *g, uint64_t ipa, uint32_t kind,
			       struct expect *e)
{
	struct slat_leaf l;
	int ret = slat_lookup(&g->o.t, slat_ipa(ipa), &l);
	e->pa = 0;
	if (ret == SLAT_E_NOENT) {
		e->fault = SLAT_FAULT_TRANSLATION;
		e->level = hole_level(g, ipa);
		return;
	}
	if (ret != SLAT_OK)
		die("slat_lookup(%#" PRIx64 "): %s", ipa, check_status_name(ret));
	e->level = l.level;
	bool ha = g->fl == FL_HWDIRTY;
	if (!(l.attrs & SLAT_YOUNG) && !ha) {
		e->fault = SLAT_FAULT_ACCESS_FLAG;
		return;
	}
	uint32_t need;
	switch (access_of(kind)) {
	case SLAT_ACCESS_WRITE: need = SLAT_W; break;
	case SLAT_ACCESS_EXEC_EL1: need = SLAT_XK; break;
	case SLAT_ACCESS_EXEC_EL0: need = SLAT_XU; break;
	default: need = SLAT_R; break;
	}
	if (!(l.attrs & need)) {
		e->fault = SLAT_FAULT_PERMISSION;
		return;
	}
	e->fault = SLAT_FAULT_NONE;
	e->pa = slat_pa_v(l.pa);
}

static void add_probe(struct gen *g, struct layout_rec *r, uint64_t ipa,
		      uint32_t kind)
{
	struct oracle_probe p = { .ipa = ipa, .kind = kind };
	struct expect e = { 0 };
	expect_from_lookup(g, ipa, kind, &e);
	if (!kind_is_at(kind)) {
		uint64_t word = e.pa & ~7ull;
		unsigned access = access_of(kind);
		if (e.fault == SLAT_FAULT_NONE) {
			if (access == SLAT_ACCESS_READ) {
				p.poke_pa = word;
				p.poke_val = 0x5a17000000000000ull ^ word;
			} else if (access == SLAT_ACCESS_WRITE) {
				p.poke_pa = word;
				p.poke_val = 0;
				p.check_pa = word;
			} else {
				p.poke_pa = word;
				p.poke_val = (uint64_t)ORACLE_BRK_INSN << 32 |
					     ORACLE_BRK_INSN;
			}
		}
		p.value = 0xd1e7000000000000ull ^ ipa;
		if (g->fl == FL_HWDIRTY)
			p.desc_pa = desc_pa_of(g, ipa);
	}
	if (p.desc_pa)
		e.desc_before = desc_value(g, p.desc_pa);
	/* libslat's own hardware walk, which also makes the AF/dirty
	 * updates the CPU would make */
	struct slat_hw_result hw;
	int ret = slat_hw_access(&g->o.t, slat_ipa(ipa), access_of(kind), &hw);
	if (ret)
		die("slat_hw_access: %s", check_status_name(ret));
	e.hw_fault = hw.fault;
	e.hw_level = hw.level;
	e.hw_pa = hw.fault == SLAT_FAULT_NONE ? slat_pa_v(hw.pa) : 0;
	if (p.desc_pa)
		e.desc_after = desc_value(g, p.desc_pa);
	r->probes[r->nr_probes] = p;
	r->exp[r->nr_probes] = e;
	r->nr_probes++;
}

/* Probe IPAs: first, last and a random page of leaves, holes, anywhere. */
static void gen_probes(struct gen *g, struct layout_rec *r, unsigned max)
{
	g->lv.n = 0;
	g->o.ck.tolerant = true;
	if (checker_walk(&g->o.ck, g->iwin, g->iwin + g->iwin_size, oracle_leaf_cb, &g->lv))
		die("raw walk: %s", g->o.ck.msg);
	g->o.ck.tolerant = false;
	r->probes = calloc(max, sizeof(*r->probes));
	r->exp = calloc(max, sizeof(*r->exp));
	if (!r->probes || !r->exp)
		die("out of memory");
	unsigned per = g->fl == FL_AT ? 2 : 1;
	while (r->nr_probes + per <= max) {
		uint64_t ipa;
		unsigned c = (unsigned)below(100);
		if (c < 80 && g->lv.n) {
			const struct check_leaf *l = &g->lv.v[below(g->lv.n)];
			unsigned w = (unsigned)below(3);
			uint64_t off = w == 0 ? 0
				       : w == 1 ? l->size - g->G
						: align_down(below(l->size), g->G);
			ipa = l->base + off;
		} else if (c < 95) {
			ipa = g->iwin + align_down(below(g->iwin_size), g->G);
		} else {
			/* anywhere but the program's own image, which a
			 * store would overwrite */
			ipa = align_down(below(g->ia_end), g->G);
			if (g->fl != FL_AT &&
			    ipa >= ORACLE_IMAGE_BASE &&
			    ipa < ORACLE_IMAGE_BASE + ORACLE_IMAGE_SIZE)
				continue;
		}
		ipa += align_down(below(g->G), 8);
		if (g->fl == FL_AT) {
			add_probe(g, r, ipa, g->el2 ? ORACLE_AT_E2R : ORACLE_AT_R);
			add_probe(g, r, ipa, g->el2 ? ORACLE_AT_E2W : ORACLE_AT_W);
			continue;
		}
		static const uint32_t kinds[2][4] = {
			{ ORACLE_LOAD, ORACLE_STORE, ORACLE_FETCH,
			  ORACLE_FETCH_EL0 },
			{ ORACLE_EL2_LOAD, ORACLE_EL2_STORE, ORACLE_EL2_FETCH },
		};
		unsigned n = g->fl == FL_HWDIRTY ? 2 : g->el2 ? 3 : 4;
		add_probe(g, r, ipa, kinds[g->el2][below(n)]);
	}
}

/* The size of the largest leaf the table can hold. */
static uint64_t top_leaf(const struct gen *g)
{
	uint64_t top = g->G;
	for (int l = 3; l >= g->geo.start_level && l >= 0; l--)
		if (g->geo.leaf_levels & (1u << l))
			top = lvl_size(g, l);
	return top;
}

static bool holds_image(uint64_t base, uint64_t size)
{
	return base < ORACLE_IMAGE_BASE + ORACLE_IMAGE_SIZE &&
	       ORACLE_IMAGE_BASE < base + size;
}

/* The program's image at VA == PA (IPA == PA), RWX: EL1 runs its stubs
 * there, and EL2 runs with its MMU on there. */
static void map_image(struct gen *g)
{
	int ret = gen_map(g, ORACLE_IMAGE_BASE, ORACLE_IMAGE_SIZE,
			  ORACLE_IMAGE_BASE, SLAT_RWX | SLAT_MT_NORMAL, 0);
	if (ret < 0)
		die("identity map: %s", check_status_name(ret));
}

/*
 * Where the leaves go. AT layouts: a window of a few of the largest
 * leaves, anywhere (for EL2, a window that leaves the image alone: at
 * most half the VA space, not the half with the image). The others: the
 * probe RAM, seen at 2 GiB.
 */
static void choose_windows(struct gen *g)
{
	if (g->fl != FL_AT || g->el2)
		map_image(g);
	if (g->fl != FL_AT) {
		g->iwin = 0x80000000ull;
		g->iwin_size = 0x40000000ull;
		g->pwin = ORACLE_TEST_RAM;
		g->pwin_size = ORACLE_TEST_SIZE;
		return;
	}
	g->iwin_size = 4 * top_leaf(g);
	if (g->iwin_size > g->ia_end)
		g->iwin_size = g->ia_end;
	if (g->el2 && g->iwin_size > g->ia_end / 2)
		g->iwin_size = g->ia_end / 2;
	do
		g->iwin = align_down(below(g->ia_end), g->iwin_size);
	while (g->el2 && holds_image(g->iwin, g->iwin_size));
	g->pwin_size = g->iwin_size * 4 > g->pa_end ? g->pa_end
						    : g->iwin_size * 4;
	g->pwin = align_down(below(g->pa_end), g->pwin_size);
}

static struct layout_rec *new_rec(const struct gen *g, uint32_t id,
				  uint64_t seed)
{
	if (O.nrecs == O.reccap) {
		O.reccap = O.reccap ? 2 * O.reccap : 256;
		O.recs = realloc(O.recs, O.reccap * sizeof(*O.recs));
		if (!O.recs)
			die("out of memory");
	}
	struct layout_rec *r = &O.recs[O.nrecs++];
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->oc = g->oc;
	r->regime = g->el2 ? ORACLE_EL2 : ORACLE_STAGE2;
	r->fl = g->fl;
	r->cfg = g->cfg;
	r->seed = seed;
	snprintf(r->desc, sizeof(r->desc),
		 "%s %s start level %d fwb=%d xnx=%d hwdirty=%d lpa2=%d seed %#"
		 PRIx64,
		 g->oc->name, flavor_names[r->regime][g->fl],
		 g->geo.start_level, !!(g->cfg.features & SLAT_FEAT_FWB),
		 !!(g->cfg.features & SLAT_FEAT_XNX),
		 !!(g->cfg.features & SLAT_FEAT_HWDIRTY),
		 !!(g->cfg.features & SLAT_FEAT_LPA2), seed);
	return r;
}

/* The registers, from libslat's helpers: stage 2 with VMID 1 (HCR_EL2.VM,
 * RW, FWB), or EL2's own regime (HCR_EL2.RW alone: E2H = 0). */
static struct oracle_layout layout_header(const struct gen *g,
					  const struct layout_rec *r,
					  uint32_t nr_pages)
{
	struct oracle_layout hdr = {
		.magic = ORACLE_LAYOUT_MAGIC, .id = r->id,
		.granule = (uint32_t)g->G, .nr_pages = nr_pages,
		.nr_probes = r->nr_probes, .regime = r->regime,
		.hcr = 1ull << 31,
	};
	if (g->el2) {
		hdr.tcr = slat_arm_s1_tcr_el2(&g->o.t);
		hdr.ttbr = slat_arm_s1_ttbr_el2(&g->o.t, false);
		hdr.mair = slat_arm_s1_mair();
		if (!hdr.tcr || !hdr.ttbr)
			die("no TCR_EL2/TTBR0_EL2 for %s", g->oc->name);
		return hdr;
	}
	hdr.vtcr = slat_arm_s2_vtcr(&g->o.t, false);
	hdr.vttbr = slat_arm_s2_vttbr(&g->o.t, 1, false);
	hdr.hcr |= 1ull | ((g->cfg.features & SLAT_FEAT_FWB) ? 1ull << 46 : 0);
	return hdr;
}

/* Build one layout and append it to the blob. Returns false if skipped. */
static bool build_layout(const struct ocfg *oc, enum flavor fl, uint64_t seed,
			 uint32_t id)
{
	struct gen g;
	rng = seed;
	if (open_gen(&g, oc, fl))
		return false;
	choose_windows(&g);
	gen_items(&g);
	struct layout_rec *r = new_rec(&g, id, seed);
	uint32_t nr_pages;
	uint8_t *pages = oracle_table_pages(&g.o.h, &nr_pages);
	gen_probes(&g, r, fl == FL_AT ? 48 : 32);
	struct oracle_layout hdr = layout_header(&g, r, nr_pages);
	blob_put(&hdr, sizeof(hdr));
	blob_put(pages, nr_pages * (8 + g.G));
	blob_put(r->probes, r->nr_probes * sizeof(*r->probes));
	free(pages);
	close_gen(&g);
	return true;
}

/* ------------------------------------------------------------ QEMU */

static char *run_qemu(const char *blob_path, size_t *outlen, int *status)
{
	char out_path[] = "/tmp/slat-oracle-out-XXXXXX";
	int fd = mkstemp(out_path);
	if (fd < 0)
		die("mkstemp: %s", strerror(errno));
	char loader[1024];
	snprintf(loader, sizeof(loader),
		 "loader,file=%s,addr=%#llx,force-raw=on", blob_path,
		 (unsigned long long)ORACLE_BLOB_ADDR);
	const char *argv[] = {
		O.qemu, "-M", "virt,virtualization=on", "-cpu", "max",
		"-nic", "none", "-m", "1G", "-nographic", "-semihosting",
		"-kernel", O.guest, "-device", loader, NULL,
	};
	double t0 = oracle_now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(fd, 1);
		setsid();
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	/* bounded: 120 s for one boot */
	int st = oracle_wait(pid, t0, 120, "QEMU", &O.qemu_seconds);
	O.runs++;
	*status = st;
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)len + 1);
	if (!buf)
		die("out of memory");
	if (pread(fd, buf, (size_t)len, 0) != len)
		die("reading QEMU's output");
	buf[len] = 0;
	close(fd);
	unlink(out_path);
	*outlen = (size_t)len;
	return buf;
}

/* ------------------------------------------------------------ compare */

static const char *fault_name(enum slat_fault f)
{
	switch (f) {
	case SLAT_FAULT_NONE: return "no fault";
	case SLAT_FAULT_TRANSLATION: return "translation fault";
	case SLAT_FAULT_PERMISSION: return "permission fault";
	case SLAT_FAULT_ACCESS_FLAG: return "access flag fault";
	}
	return "?";
}

static const char *kind_name(uint32_t k)
{
	switch (k) {
	case ORACLE_AT_R: return "AT S12E1R";
	case ORACLE_AT_W: return "AT S12E1W";
	case ORACLE_LOAD: return "EL1 load";
	case ORACLE_STORE: return "EL1 store";
	case ORACLE_FETCH: return "EL1 fetch";
	case ORACLE_FETCH_EL0: return "EL0 fetch";
	case ORACLE_AT_E2R: return "AT S1E2R";
	case ORACLE_AT_E2W: return "AT S1E2W";
	case ORACLE_EL2_LOAD: return "EL2 load";
	case ORACLE_EL2_STORE: return "EL2 store";
	case ORACLE_EL2_FETCH: return "EL2 fetch";
	}
	return "?";
}

/* A fault status code (PAR_EL1.FST, ESR DFSC/IFSC): kind and level. */
static bool decode_fsc(unsigned fsc, enum slat_fault *f, int *level)
{
	if (fsc == 0x2b) { /* translation fault, level -1 */
		*f = SLAT_FAULT_TRANSLATION;
		*level = -1;
		return true;
	}
	*level = (int)(fsc & 3);
	switch (fsc & 0x3c) {
	case 0x04: *f = SLAT_FAULT_TRANSLATION; return true;
	case 0x08: *f = SLAT_FAULT_ACCESS_FLAG; return true;
	case 0x0c: *f = SLAT_FAULT_PERMISSION; return true;
	default: return false;
	}
}

static unsigned layout_mismatches;

static void mismatch(const struct layout_rec *r, uint32_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void mismatch(const struct layout_rec *r, uint32_t i, const char *fmt, ...)
{
	O.mismatches++;
	if (layout_mismatches++ >= 5)
		return;
	const struct oracle_probe *p = &r->probes[i];
	const struct expect *e = &r->exp[i];
	va_list ap;
	fprintf(stderr, "MISMATCH layout %u (%s), probe %u: %s at %s %#" PRIx64
			": ",
		r->id, r->desc, i, kind_name(p->kind),
		r->regime == ORACLE_EL2 ? "VA" : "IPA", p->ipa);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  libslat expects %s level %d pa %#" PRIx64, fault_name(e->fault),
		e->level, e->pa);
	fprintf(stderr, " (slat_hw_access: %s level %d pa %#" PRIx64 ")\n",
		fault_name(e->hw_fault), e->hw_level, e->hw_pa);
	/* the ids depend on the counts per granule */
	fprintf(stderr, "  replay: tests/oracle/oracle --config %s --seed %#" PRIx64
			" --layouts %" PRIu64 " --el2-layouts %" PRIu64
			" --only %u --verbose\n",
		r->oc->name, O.seed, A.per_granule, A.el2_per_granule, r->id);
}

/* PAR_EL1 after AT: the PA, or the fault of the stage the layout has
 * (PAR_EL1.S: 1 stage 2 for S12E1, 0 stage 1 for S1E2). */
static void compare_at(const struct layout_rec *r, uint32_t i, uint64_t par)
{
	const struct expect *e = &r->exp[i];
	if (!(par & 1)) {
		uint64_t pa = par & 0x000ffffffffff000ull;
		if (e->fault != SLAT_FAULT_NONE)
			mismatch(r, i, "QEMU translates to %#" PRIx64
				       " (PAR %#" PRIx64 ")", pa, par);
		else if (pa != (e->pa & ~0xfffull))
			mismatch(r, i, "QEMU translates to %#" PRIx64
				       " (PAR %#" PRIx64 ")", pa, par);
		return;
	}
	unsigned fst = (unsigned)(par >> 1) & 0x3f;
	enum slat_fault f = SLAT_FAULT_NONE;
	int level = 0;
	bool s2 = par & (1u << 9);
	if (s2 != (r->regime == ORACLE_STAGE2))
		mismatch(r, i, "a fault of the other stage: PAR %#" PRIx64, par);
	else if (!decode_fsc(fst, &f, &level))
		mismatch(r, i, "QEMU reports fault status %#x (PAR %#" PRIx64
			       ")", fst, par);
	else if (f != e->fault || level != e->level)
		mismatch(r, i, "QEMU reports %s level %d (PAR %#" PRIx64 ")",
			 fault_name(f), level, par);
}

/* What the hardware did to the leaf (HA/HD layouts): the access flag
 * set; dirty state: stage 2 sets S2AP.W, stage 1 clears AP[2], both bit
 * 7 of a DBM leaf. */
static void compare_desc(const struct layout_rec *r, uint32_t i, uint64_t desc)
{
	const struct expect *e = &r->exp[i];
	struct tally *t = &O.tally[r->regime];
	bool s1 = r->regime == ORACLE_EL2;
	uint64_t was = e->desc_before;
	if (!(was & (1ull << 10)) && (desc & (1ull << 10)))
		t->af_set++;
	if ((was & (1ull << 51)) && !!(was & (1ull << 7)) == s1 &&
	    !!(desc & (1ull << 7)) != s1)
		t->dirty_set++;
	if (desc != e->desc_after)
		mismatch(r, i, "descriptor after the access %#018" PRIx64
			       ", slat_hw_access leaves %#018" PRIx64,
			 desc, e->desc_after);
}

/*
 * An abort libslat expects: the right exception (@code D or I), its fault
 * status and level in ESR_EL2, FAR_EL2 = the address, WnR for data.
 * False when the exception itself was not the expected one.
 */
static bool compare_abort(const struct layout_rec *r, uint32_t i, char code,
			  uint64_t esr, uint64_t far)
{
	const struct oracle_probe *p = &r->probes[i];
	const struct expect *e = &r->exp[i];
	bool fetch = kind_is_fetch(p->kind);
	if (code != (fetch ? 'I' : 'D')) {
		mismatch(r, i, "QEMU: no %s abort (%c, ESR_EL2 %#" PRIx64 ")",
			 r->regime == ORACLE_EL2 ? "EL2" : "stage-2", code, esr);
		return false;
	}
	enum slat_fault f = SLAT_FAULT_NONE;
	int level = 0;
	unsigned fsc = (unsigned)esr & 0x3f;
	if (!decode_fsc(fsc, &f, &level) || f != e->fault ||
	    level != e->level) {
		mismatch(r, i, "QEMU: ESR_EL2 %#" PRIx64 " (%s level %d)", esr,
			 fault_name(f), level);
		return false;
	}
	if (far != p->ipa)
		mismatch(r, i, "FAR_EL2 %#" PRIx64, far);
	if (!fetch && !!(esr & (1u << 6)) !=
			      (access_of(p->kind) == SLAT_ACCESS_WRITE))
		mismatch(r, i, "ESR_EL2.WnR wrong: %#" PRIx64, esr);
	return true;
}

/* A load or store that went ahead: the value at the expected PA. */
static void compare_data(const struct layout_rec *r, uint32_t i, uint64_t x0,
			 uint64_t check)
{
	const struct oracle_probe *p = &r->probes[i];
	if (access_of(p->kind) == SLAT_ACCESS_READ && x0 != p->poke_val)
		mismatch(r, i, "loaded %#" PRIx64 ", the expected PA "
			       "holds %#" PRIx64, x0, p->poke_val);
	else if (access_of(p->kind) == SLAT_ACCESS_WRITE && check != p->value)
		mismatch(r, i, "the store did not reach the expected PA "
			       "(it holds %#" PRIx64 ")", check);
}

static void unexpected_abort(const struct layout_rec *r, uint32_t i,
			     char code, uint64_t esr)
{
	enum slat_fault f = SLAT_FAULT_NONE;
	int level = 0;
	decode_fsc((unsigned)esr & 0x3f, &f, &level);
	mismatch(r, i, "QEMU: %s exception, ESR_EL2 %#" PRIx64 " (%s level %d)",
		 code == 'D' ? "data abort"
		 : code == 'I' ? "instruction abort" : "other",
		 esr, fault_name(f), level);
}

static void compare_el1(const struct layout_rec *r, uint32_t i, char code,
			const uint64_t *v)
{
	const struct oracle_probe *p = &r->probes[i];
	const struct expect *e = &r->exp[i];
	uint64_t esr = v[0], far = v[1], hpfar = v[2], x0 = v[3];
	uint64_t esr1 = v[4], elr1 = v[5], check = v[6], desc = v[7];
	if (e->fault == SLAT_FAULT_NONE) {
		if (code != 'H') {
			unexpected_abort(r, i, code, esr);
			return;
		}
		unsigned imm = (unsigned)esr & 0xffff;
		if (kind_is_fetch(p->kind)) {
			unsigned vec = p->kind == ORACLE_FETCH ? 0x104 : 0x108;
			if (imm != vec || (esr1 >> 26) != 0x3c ||
			    (esr1 & 0xffff) != 0x77 || elr1 != p->ipa)
				mismatch(r, i, "the fetch did not reach the BRK at "
					       "the expected PA: HVC #%#x, "
					       "ESR_EL1 %#" PRIx64 ", ELR_EL1 %#" PRIx64,
					 imm, esr1, elr1);
		} else if (imm != 0) {
			mismatch(r, i, "EL1 took an exception (HVC #%#x, ESR_EL1 "
				       "%#" PRIx64 ", ELR_EL1 %#" PRIx64 ")",
				 imm, esr1, elr1);
		} else {
			compare_data(r, i, x0, check);
		}
	} else if (compare_abort(r, i, code, esr, far)) {
		/* HPFAR_EL2 holds the IPA for translation and access-flag
		 * faults (for permission faults it may be UNKNOWN) */
		if (e->fault != SLAT_FAULT_PERMISSION &&
		    (hpfar >> 4) << 12 != (p->ipa & ~0xfffull))
			mismatch(r, i, "HPFAR_EL2 %#" PRIx64, hpfar);
	}
	if (p->desc_pa)
		compare_desc(r, i, desc);
}

/*
 * A probe EL2 made itself, through its own stage 1: an HVC #0 after a load
 * or store that went ahead, the BRK #0x77 at the VA (ELR_EL2) for a fetch
 * that did, else an abort taken at EL2 (no HPFAR_EL2: no stage 2).
 */
static void compare_el2(const struct layout_rec *r, uint32_t i, char code,
			const uint64_t *v)
{
	const struct oracle_probe *p = &r->probes[i];
	const struct expect *e = &r->exp[i];
	uint64_t esr = v[0], far = v[1], x0 = v[3], elr = v[5];
	uint64_t check = v[6], desc = v[7];
	unsigned imm = (unsigned)esr & 0xffff;
	if (e->fault != SLAT_FAULT_NONE)
		compare_abort(r, i, code, esr, far);
	else if (kind_is_fetch(p->kind) &&
		 (code != 'K' || imm != 0x77 || elr != p->ipa))
		mismatch(r, i, "the fetch did not reach the BRK at the "
			       "expected PA: %c, ESR_EL2 %#" PRIx64
			       ", ELR_EL2 %#" PRIx64, code, esr, elr);
	else if (!kind_is_fetch(p->kind) && (code != 'H' || imm != 0))
		unexpected_abort(r, i, code, esr);
	else if (!kind_is_fetch(p->kind))
		compare_data(r, i, x0, check);
	if (p->desc_pa)
		compare_desc(r, i, desc);
}

static void check_libslat_consistent(const struct layout_rec *r, uint32_t i)
{
	const struct expect *e = &r->exp[i];
	if (r->fl == FL_HWDIRTY)
		return; /* hw_access made the updates; lookup saw them before */
	if (e->fault != e->hw_fault || e->level != e->hw_level ||
	    e->pa != e->hw_pa) {
		O.hw_disagree++;
		mismatch(r, i, "slat_hw_access disagrees with slat_lookup");
	}
}

/* One probe's line ("A ..." or "E ..."), against what libslat says. */
static void probe_result(const struct layout_rec *r, uint32_t probe,
			 const char *line)
{
	struct tally *t = &O.tally[r->regime];
	if (line[0] == 'A') {
		compare_at(r, probe, strtoull(line + 2, NULL, 16));
	} else {
		char code = line[2];
		uint64_t v[8] = { 0 };
		char *q = (char *)line + 3;
		for (int k = 0; k < 8; k++)
			v[k] = strtoull(q, &q, 16);
		if (r->regime == ORACLE_EL2)
			compare_el2(r, probe, code, v);
		else
			compare_el1(r, probe, code, v);
	}
	check_libslat_consistent(r, probe);
	if (O.verbose)
		fprintf(stderr, "  layout %u probe %u %s %#" PRIx64 ": %s\n",
			r->id, probe, kind_name(r->probes[probe].kind),
			r->probes[probe].ipa, line);
	t->probes++;
	if (r->exp[probe].fault == SLAT_FAULT_NONE)
		t->translated[r->exp[probe].level + 1]++;
}

static void parse_and_compare(const char *out, size_t len, int status)
{
	const char *p = out, *end = out + len;
	size_t next = 0;
	struct layout_rec *r = NULL;
	uint32_t probe = 0;
	bool ended = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		char line[512];
		size_t n = (size_t)(nl - p);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		if (n && line[n - 1] == '\r')
			line[n - 1] = 0;
		p = nl + 1;
		if (!strncmp(line, "ORACLE ", 7)) {
			snprintf(O.banner, sizeof(O.banner), "%.200s", line);
			char *h = strstr(line, "hafdbs=");
			if (h)
				O.hafdbs = (unsigned)strtoul(h + 7, NULL, 16);
			continue;
		}
		if (!strncmp(line, "END ", 4)) {
			ended = true;
			continue;
		}
		if (line[0] == 'L' && line[1] == ' ') {
			if (r && probe != r->nr_probes)
				die("layout %u: %u of %u probe results", r->id,
				    probe, r->nr_probes);
			if (next >= O.nrecs)
				die("QEMU reported more layouts than sent");
			r = &O.recs[next++];
			layout_mismatches = 0;
			uint32_t id = (uint32_t)strtoul(line + 2, NULL, 16);
			if (id != r->id)
				die("layout %u reported as %u", r->id, id);
			probe = 0;
			continue;
		}
		if ((line[0] == 'A' || line[0] == 'E') && r) {
			if (probe >= r->nr_probes)
				die("layout %u: too many probe results", r->id);
			probe_result(r, probe++, line);
			continue;
		}
		if (line[0])
			fprintf(stderr, "qemu: %s\n", line);
	}
	if (!ended || next != O.nrecs || (r && probe != r->nr_probes)) {
		fprintf(stderr, "oracle: QEMU stopped early (status %#x) after %zu "
				"of %zu layouts",
			status, next, O.nrecs);
		if (r)
			fprintf(stderr, "; last: layout %u (%s), %u of %u probes",
				r->id, r->desc, probe, r->nr_probes);
		fprintf(stderr, "\n");
		O.mismatches++;
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "oracle: QEMU exit status %#x\n", status);
		O.mismatches++;
	}
}

static void flush_batch(void)
{
	if (!O.nrecs)
		return;
	struct oracle_hdr *h = (struct oracle_hdr *)O.blob;
	h->magic = ORACLE_MAGIC;
	h->nr_layouts = (uint32_t)O.nrecs;
	h->bytes = O.blen;
	char path[512];
	int fd;
	if (O.keep) {
		snprintf(path, sizeof(path), "%s/oracle-%" PRIu64 ".blob", O.keep,
			 O.runs);
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	} else {
		snprintf(path, sizeof(path), "/tmp/slat-oracle-XXXXXX");
		fd = mkstemp(path);
	}
	if (fd < 0 || write(fd, O.blob, O.blen) != (ssize_t)O.blen)
		die("writing %s: %s", path, strerror(errno));
	close(fd);
	size_t len;
	int status;
	char *out = run_qemu(path, &len, &status);
	if (!O.keep)
		unlink(path);
	parse_and_compare(out, len, status);
	free(out);
	for (size_t i = 0; i < O.nrecs; i++) {
		free(O.recs[i].probes);
		free(O.recs[i].exp);
	}
	O.nrecs = 0;
	O.blen = sizeof(struct oracle_hdr);
}

/* ------------------------------------------------------------ main */

static const char usage_text[] =
"Usage: oracle --guest ELF [--layouts N] [--el2-layouts N] [--seed N]\n"
"              [--config NAME|all] [--only ID] [--qemu PATH] [--keep DIR]\n"
"              [--verbose]\n"
"  or:  oracle --list\n"
"\n"
"Builds random stage-2 and EL2 stage-1 layouts with libslat, boots the EL2\n"
"program under QEMU with them and compares every probe with libslat\n"
"(docs/oracle.md).\n"
"\n"
"Options:\n"
"  --guest ELF        the EL2 program (oracle-guest.elf)\n"
"  --layouts N        stage-2 layouts per granule (default 120, or\n"
"                     $SLAT_ORACLE_LAYOUTS)\n"
"  --el2-layouts N    EL2 stage-1 layouts per granule (default a quarter\n"
"                     of --layouts)\n"
"  --seed N           the random seed (default 0x0facade)\n"
"  --config NAME|all  only the configuration NAME (default all)\n"
"  --only ID          only the layout ID (a replay line's)\n"
"  --qemu PATH        the QEMU to run (default qemu-system-aarch64)\n"
"  --keep DIR         keep each blob given to QEMU in DIR\n"
"  --verbose          print every probe's result\n"
"  --list             list the configurations and exit\n"
"  -h, --help         this text\n"
"\n"
"Exit status: 0 every probe agrees; 1 a disagreement; 2 an error on the\n"
"command line; 77 skipped (no QEMU or no EL2 program).\n";

static void usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "oracle: %s %s (see oracle --help)\n", what, arg);
	exit(2);
}

static bool takes_value(const char *arg)
{
	static const char *const opts[] = {
		"--guest",  "--layouts", "--el2-layouts", "--seed",
		"--config", "--only",    "--qemu",        "--keep",
	};
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
		if (!strcmp(arg, opts[k]))
			return true;
	return false;
}

/* Returns true when the command was --list (done). */
static bool parse_args(int argc, char **argv)
{
	bool el2_given = false;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (!strcmp(arg, "--verbose")) {
			O.verbose = true;
			continue;
		}
		if (!strcmp(arg, "--list")) {
			for (size_t c = 0; c < NR_CONFIGS; c++)
				printf("%s\n", configs[c].name);
			return true;
		}
		if (!takes_value(arg))
			usage_error(*arg == '-' ? "unknown option" :
				    "unexpected argument", arg);
		if (!val)
			usage_error("no value after", arg);
		i++;
		if (!strcmp(arg, "--guest"))
			O.guest = val;
		else if (!strcmp(arg, "--layouts"))
			A.per_granule = strtoull(val, NULL, 0);
		else if (!strcmp(arg, "--el2-layouts"))
			A.el2_per_granule = strtoull(val, NULL, 0), el2_given = true;
		else if (!strcmp(arg, "--seed"))
			O.seed = strtoull(val, NULL, 0);
		else if (!strcmp(arg, "--config"))
			A.config = val;
		else if (!strcmp(arg, "--only"))
			A.only = strtol(val, NULL, 0);
		else if (!strcmp(arg, "--qemu"))
			O.qemu = val;
		else if (!strcmp(arg, "--keep"))
			O.keep = val;
		else
			usage_error("unknown option", arg);
	}
	/* EL2's own regime: a quarter as many, unless told */
	if (!el2_given)
		A.el2_per_granule = A.per_granule / 4;
	return false;
}

/*
 * The layouts of one regime: @per_granule per granule, each with a
 * configuration of that granule and regime drawn from the seed. Layout
 * ids are fixed by regime, granule and rank, whatever --config keeps, so
 * that a replay line (--config, --only) finds the same layout. Returns
 * whether any configuration matched.
 */
static bool run_regime(enum oracle_regime regime, uint64_t per_granule)
{
	static const uint32_t grans[] = { 4096, 16384, 65536 };
	bool any = false;
	for (uint32_t gi = 0; gi < 3; gi++) {
		const struct ocfg *cands[NR_CONFIGS];
		size_t nc = 0;
		for (size_t c = 0; c < NR_CONFIGS; c++)
			if (configs[c].granule == grans[gi] &&
			    el2_config(&configs[c]) == (regime == ORACLE_EL2) &&
			    (!strcmp(A.config, "all") ||
			     !strcmp(A.config, configs[c].name)))
				cands[nc++] = &configs[c];
		if (!nc)
			continue;
		any = true;
		/* stage 2 keeps the seeds it always had */
		uint64_t x = O.seed ^ grans[gi] ^ (regime == ORACLE_EL2 ? 0xe12 : 0);
		uint32_t id = regime == ORACLE_EL2 ? 0x100000 : 0;
		id += gi * (uint32_t)per_granule;
		for (uint64_t k = 0; k < per_granule; k++, id++) {
			uint64_t s = splitmix(&x);
			uint64_t pick = s % 100;
			const struct ocfg *oc = cands[(s >> 8) % nc];
			/* EL2: more real accesses than AT */
			unsigned at = regime == ORACLE_EL2 ? 50 : 70;
			unsigned ex = regime == ORACLE_EL2 ? 80 : 88;
			enum flavor fl = pick < at ? FL_AT
					 : pick < ex ? FL_EXEC : FL_HWDIRTY;
			if (A.only >= 0 && id != (uint32_t)A.only)
				continue;
			if (!build_layout(oc, fl, s, id))
				continue;
			O.tally[regime].by_flavor[fl]++;
			O.tally[regime].gran_layouts[gi]++;
			if (O.blen > ORACLE_BLOB_MAX / 2)
				flush_batch();
		}
	}
	return any;
}

static void print_summary(void)
{
	const struct tally *s2 = &O.tally[ORACLE_STAGE2];
	const struct tally *e2 = &O.tally[ORACLE_EL2];
	printf("%s\n", O.banner);
	printf("oracle: %" PRIu64 " layouts (4K %" PRIu64 ", 16K %" PRIu64
	       ", 64K %" PRIu64 "; AT %" PRIu64 ", EL1/EL0 %" PRIu64
	       ", HA/HD %" PRIu64 "), %" PRIu64 " probes, %" PRIu64
	       " QEMU boots (%.2f s)\n",
	       s2->gran_layouts[0] + s2->gran_layouts[1] + s2->gran_layouts[2],
	       s2->gran_layouts[0], s2->gran_layouts[1], s2->gran_layouts[2],
	       s2->by_flavor[FL_AT], s2->by_flavor[FL_EXEC],
	       s2->by_flavor[FL_HWDIRTY], s2->probes, O.runs, O.qemu_seconds);
	printf("oracle: translations by leaf level: L0 %" PRIu64 ", L1 %" PRIu64
	       ", L2 %" PRIu64 ", L3 %" PRIu64 "\n", s2->translated[1],
	       s2->translated[2], s2->translated[3], s2->translated[4]);
	printf("oracle: hardware updates seen with VTCR_EL2.HA/HD: %" PRIu64
	       " access flags set, %" PRIu64 " leaves made dirty\n",
	       s2->af_set, s2->dirty_set);
	printf("oracle: EL2 stage 1 (TCR_EL2, TTBR0_EL2): %" PRIu64
	       " layouts (4K %" PRIu64 ", 16K %" PRIu64 ", 64K %" PRIu64
	       "; AT S1E2 %" PRIu64 ", EL2 accesses %" PRIu64 ", HA/HD %" PRIu64
	       "), %" PRIu64 " probes; translations by leaf level: L0 %" PRIu64
	       ", L1 %" PRIu64 ", L2 %" PRIu64 ", L3 %" PRIu64 "\n",
	       e2->gran_layouts[0] + e2->gran_layouts[1] + e2->gran_layouts[2],
	       e2->gran_layouts[0], e2->gran_layouts[1], e2->gran_layouts[2],
	       e2->by_flavor[FL_AT], e2->by_flavor[FL_EXEC],
	       e2->by_flavor[FL_HWDIRTY], e2->probes, e2->translated[1],
	       e2->translated[2], e2->translated[3], e2->translated[4]);
	printf("oracle: hardware updates seen with TCR_EL2.HA/HD: %" PRIu64
	       " access flags set, %" PRIu64 " leaves made dirty\n",
	       e2->af_set, e2->dirty_set);
}

int main(int argc, char **argv)
{
	A.config = "all";
	A.per_granule = 120;
	A.only = -1;
	O.qemu = "qemu-system-aarch64";
	O.seed = 0x0facade;
	const char *env = getenv("SLAT_ORACLE_LAYOUTS");
	if (env)
		A.per_granule = strtoull(env, NULL, 0);
	if (parse_args(argc, argv))
		return 0;
	if (!oracle_on_path(O.qemu)) {
		printf("SKIP: qemu-system-aarch64 not found (apt-get install "
		       "qemu-system-arm)\n");
		return SKIP;
	}
	if (!O.guest || !*O.guest || access(O.guest, R_OK)) {
		printf("SKIP: the EL2 program was not built (needs "
		       "aarch64-linux-gnu-gcc: apt-get install "
		       "gcc-aarch64-linux-gnu)\n");
		return SKIP;
	}

	O.blen = sizeof(struct oracle_hdr);
	O.blob = calloc(1, sizeof(struct oracle_hdr));
	O.bcap = sizeof(struct oracle_hdr);

	/* stage 2 first, with the ids and seeds it always had */
	bool any = run_regime(ORACLE_STAGE2, A.per_granule);
	any |= run_regime(ORACLE_EL2, A.el2_per_granule);
	if (!any) {
		fprintf(stderr, "unknown config %s (see --list)\n", A.config);
		return 2;
	}
	flush_batch();
	print_summary();
	if (O.mismatches) {
		printf("oracle: %" PRIu64 " disagreements with QEMU\n",
		       O.mismatches);
		return 1;
	}
	printf("oracle: every probe agrees with QEMU\n");
	return 0;
}
