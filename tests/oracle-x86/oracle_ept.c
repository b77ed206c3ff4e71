/* SPDX-License-Identifier: MIT */
/*
 * The Bochs EPT oracle's host driver. It builds EPT layouts with libslat on
 * the hosted platform (the arena stands for Bochs RAM at XTABLE_BASE, so
 * the table pages hold their real host-physical addresses): fixed ones,
 * then seeded random ones (4-level walks of 39, 40 and 48 bits; 4K, 2M
 * and 1G leaves; R, RW, RX, RWX and execute-only; write-back, write-
 * combining and uncacheable memory, ignore-PAT; A/D enabled or not;
 * after unmap, write-protect, relax, split, promote, access-flag and
 * dirty-log operations). It writes them with probe lists after the
 * bare-metal program (guest/) into a disk image, boots Bochs on it, and
 * compares every VM exit with what libslat says:
 *
 *  - slat_lookup: the leaf, its permissions and the host-physical address;
 *    a hole or a missing permission is an EPT violation (exit reason 48)
 *    whose qualification gives the access and the leaf's R/W/X, with the
 *    guest-physical address of the access; otherwise the access completes
 *    at that address: a load returns the tag written there, a store leaves
 *    its value there, a fetch runs the code written there (VMCALL);
 *  - slat_hw_access, libslat's model of the walker, must predict the
 *    same, and replays the accesses (the guest's own code fetch and page
 *    walk, then the probe) on the host copy: with A/D enabled every EPT
 *    entry on the probe's walk must then equal the one Bochs left;
 *  - the project's checker (tests/checker.c) validates every layout.
 *
 * Usage: oracle_ept --guest BIN [--layouts N] [--seed N] [--only ID]
 *                   [--bochs PATH] [--keep DIR] [--corrupt pa|mt]
 *                   [--verbose] [--help]
 * Exit: 0 all agree (with --corrupt: the corruption was reported), 1 a
 * disagreement, 77 skipped (no Bochs or no program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "blob.h"
#include "checker.h"
#include "driver.h"

#define SKIP 77
#define PAGE 4096ull
#define PROBES_PER_LAYOUT 32
#define FIXED_LAYOUTS 6
/* Bochs's CPU (corei7_haswell_4770) reports 40 physical address bits
 * (CPUID 80000008H): guest PTEs and EPT entries above are reserved. */
#define XMAXPHY 40

/* Exit reasons (SDM Vol. 3, Appendix C). */
#define EXIT_EXCEPTION 0
#define EXIT_VMCALL 18
#define EXIT_EPT_VIOLATION 48
#define EXIT_EPT_MISCONFIG 49

/* ------------------------------------------------------------ state */

struct expect {
	uint32_t reason;   /* EXIT_VMCALL or EXIT_EPT_VIOLATION */
	uint64_t qual;     /* violations: the exit qualification */
	uint64_t hpa;      /* no violation: where the access lands */
	uint64_t rax, rip; /* VMCALL: the guest's RAX, and RIP (fetches) */
	uint64_t word;     /* stores: the word at check_pa */
	uint64_t desc[XPROBE_DESCS]; /* the EPT entries after the probe */
	uint64_t snap[XPROBE_DESCS]; /* the same as the blob has them */
	int level;         /* the leaf's level, or -1 for a hole */
};

struct layout_rec {
	uint32_t id;
	uint64_t seed;
	char desc[200];
	uint32_t nr_probes;
	struct xblob_probe probes[PROBES_PER_LAYOUT];
	struct expect exp[PROBES_PER_LAYOUT];
};

static struct {
	const char *guest, *bochs, *keep, *corrupt;
	bool verbose;
	uint64_t seed, layouts;
	long only;
	uint8_t *blob;
	size_t blen, bcap;
	struct layout_rec *recs;
	size_t nrecs;
	uint64_t probes, mismatches, agreed, ad_layouts, xonly_layouts;
	uint64_t translated[4], violations, a_set[2], d_set, corrupted, fault_young;
	double bochs_seconds;
	unsigned boots;
	char banner[256];
} O = { .only = -1, .seed = 0xe970, .layouts = 60 };

static void blob_put(const void *p, size_t n)
{
	oracle_put(&O.blob, &O.blen, &O.bcap, p, n);
}

/* ------------------------------------------------------------ a layout */

struct gen {
	struct slat_config cfg;
	struct oracle_table o;
	uint64_t iwin, iwin_size; /* where leaves go (GPA) */
	uint64_t ia_end;          /* probes stay below (guest MAXPHYADDR) */
	struct oracle_leaves lv;  /* the window's leaves */
	char ops[96];             /* the operations applied, for reports */
};

static void note_op(struct gen *g, const char *op)
{
	size_t n = strlen(g->ops);
	snprintf(g->ops + n, sizeof(g->ops) - n, "%s%s", n ? "," : "", op);
}

static void topup(struct gen *g, const struct slat_need *need)
{
	int64_t n = slat_pages_needed(&g->o.t, need);
	if (n < 0)
		die("slat_pages_needed: %s", check_status_name((int)n));
	if (n > g->o.cache.nr && slat_hosted_cache_topup(&g->o.h, &g->o.cache, (uint32_t)n))
		die("arena exhausted");
}

static void gen_map(struct gen *g, uint64_t gpa, uint64_t size, uint64_t hpa,
		    uint32_t attrs, uint32_t flags)
{
	topup(g, SLAT_NEED(.kind = SLAT_OP_MAP, .ipa = slat_ipa(gpa),
			   .size = size, .pa = slat_pa(hpa), .attrs = attrs,
			   .flags = flags));
	int ret = slat_map(&g->o.t, slat_ipa(gpa), size, slat_pa(hpa), attrs,
			   SLAT_OP(.flags = flags, .cache = &g->o.cache));
	if (ret < 0)
		die("slat_map(%#" PRIx64 ", %#" PRIx64 ", attrs %#x): %s", gpa,
		    size, attrs, check_status_name(ret));
}

/* Permissions EPT can hold (write needs read), memory type, IPAT. */
static uint32_t gen_attrs(const struct gen *g)
{
	static const uint32_t perms[] = { SLAT_R, SLAT_RW, SLAT_R | SLAT_X,
					  SLAT_RWX, SLAT_X };
	unsigned np = (g->cfg.features & SLAT_FEAT_EPT_XONLY) ? 5 : 4;
	uint32_t p = perms[below(np)];
	unsigned c = (unsigned)below(100);
	uint32_t mt = c < 60 ? SLAT_MT_NORMAL
		      : c < 80 || (p & SLAT_X) ? SLAT_MT_NORMAL_NC : SLAT_MT_DEVICE;
	uint32_t a = p | mt;
	if (chance(30))
		a |= SLAT_IPAT;
	if (chance(20))
		a |= SLAT_SW(below(16));
	return a;
}

static int open_gen(struct gen *g, unsigned ia, uint32_t features)
{
	memset(g, 0, sizeof(*g));
	g->cfg = (struct slat_config){ .format = SLAT_FMT_EPT, .granule = 4096,
				       .ia_bits = (uint8_t)ia,
				       .pa_bits = XMAXPHY,
				       .features = features };
	g->ia_end = 1ull << (ia < XMAXPHY ? ia : XMAXPHY);
	oracle_table_open(&g->o, &g->cfg, XTABLE_MAX, XTABLE_BASE, 1024, false);
	/* the guest's code and page tables, GPA == HPA */
	gen_map(g, XGUEST_BASE, XGUEST_SIZE, XGUEST_BASE,
		SLAT_RWX | SLAT_MT_NORMAL, 0);
	/* a window of 4 GiB above 4 GiB, below the guest's MAXPHYADDR */
	g->iwin_size = 4ull << 30;
	g->iwin = g->iwin_size * (1 + below(g->ia_end / g->iwin_size - 1));
	return 0;
}

static void close_gen(struct gen *g)
{
	oracle_table_close(&g->o);
	free(g->lv.v);
}

/* A leaf of @size (1G, 2M or 4K runs) in the window, into test RAM. */
static void gen_leaf(struct gen *g, uint64_t L, uint64_t size, uint32_t attrs,
		     uint32_t flags)
{
	uint64_t gpa = g->iwin + align_down(below(g->iwin_size - size + 1), L);
	uint64_t hpa = XTEST_RAM + align_down(below(XTEST_SIZE - size + 1), L);
	gen_map(g, gpa, size, hpa, attrs, flags);
}

static void gen_items(struct gen *g)
{
	unsigned items = 3 + (unsigned)below(6);
	for (unsigned i = 0; i < items; i++) {
		unsigned c = (unsigned)below(100);
		uint64_t L = c < 15 ? 1ull << 30 : c < 50 ? 2ull << 20 : PAGE;
		uint64_t cnt = L == PAGE ? 1 + below(40) : L == 1ull << 30 ? 1 : 1 + below(3);
		/* one draw after the other: argument order is unspecified */
		uint32_t attrs = gen_attrs(g);
		uint32_t flags = L == PAGE && chance(50) ? SLAT_MAP_PAGES : 0;
		gen_leaf(g, L, L * cnt, attrs, flags);
	}
}

/* A random page-aligned range in the window of up to @pages pages. */
static void gen_range(struct gen *g, uint64_t pages, uint64_t *gpa,
		      uint64_t *size)
{
	*size = PAGE * (1 + below(pages));
	*gpa = g->iwin + align_down(below(g->iwin_size - *size), PAGE);
}

static void op_hole(struct gen *g, bool wrprotect)
{
	uint64_t gpa, size;
	gen_range(g, 20, &gpa, &size);
	topup(g, SLAT_NEED(.kind = wrprotect ? SLAT_OP_WRPROTECT : SLAT_OP_UNMAP,
			   .ipa = slat_ipa(gpa), .size = size));
	struct slat_op *op = SLAT_OP(.flush = SLAT_FLUSH_RANGE, .cache = &g->o.cache);
	int ret = wrprotect ? slat_wrprotect(&g->o.t, slat_ipa(gpa), size, op)
			    : slat_unmap(&g->o.t, slat_ipa(gpa), size, op);
	if (ret < 0)
		die("unmap/wrprotect: %s", check_status_name(ret));
	note_op(g, wrprotect ? "wrprotect" : "unmap");
}

/* Relax a leaf's permissions (a write on an execute-only leaf, which EPT
 * cannot hold without read, is refused and skipped). */
static void op_relax(struct gen *g, const struct check_leaf *l)
{
	uint32_t add = chance(50) ? SLAT_W : SLAT_X;
	if (add == SLAT_X && SLAT_MT(l->attrs) == SLAT_MT_DEVICE)
		add = SLAT_R;
	uint64_t size = PAGE * (1 + below(l->size / PAGE < 8 ? l->size / PAGE : 8));
	topup(g, SLAT_NEED(.kind = SLAT_OP_RELAX, .ipa = slat_ipa(l->base),
			   .size = size, .attrs = add));
	int ret = slat_relax(&g->o.t, slat_ipa(l->base), size, add,
			     SLAT_OP(.flush = SLAT_FLUSH_RANGE, .cache = &g->o.cache));
	if (ret < 0 && ret != SLAT_E_ATTR)
		die("slat_relax: %s", check_status_name(ret));
	note_op(g, "relax");
}

static void op_split(struct gen *g)
{
	uint64_t leaf = chance(50) ? 0 : 2ull << 20;
	/* pages of more than one 1 GiB block would fill the blob */
	if (!leaf && slat_pages_needed(&g->o.t, SLAT_NEED(.kind = SLAT_OP_SPLIT,
			.ipa = slat_ipa(g->iwin), .size = g->iwin_size)) > 600)
		leaf = 2ull << 20;
	topup(g, SLAT_NEED(.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(g->iwin),
			   .size = g->iwin_size, .leaf_size = leaf));
	int ret = slat_split(&g->o.t, slat_ipa(g->iwin), g->iwin_size, leaf,
			     SLAT_OP(.cache = &g->o.cache));
	if (ret < 0)
		die("slat_split: %s", check_status_name(ret));
	note_op(g, leaf ? "split-2m" : "split-4k");
}

static void op_promote(struct gen *g)
{
	int ret = slat_recover(&g->o.t, slat_ipa(g->iwin), g->iwin_size,
			       SLAT_RECOVERY(.strategy = SLAT_RECOVER_PROMOTE),
			       SLAT_OP(.flush = SLAT_FLUSH_RANGE));
	if (ret < 0)
		die("slat_recover: %s", check_status_name(ret));
	note_op(g, "promote");
}

static void op_dirty_log(struct gen *g)
{
	uint64_t words = g->iwin_size / PAGE / 64;
	uint64_t *bm = calloc(words, 8);
	if (!bm)
		die("out of memory");
	topup(g, SLAT_NEED(.kind = SLAT_OP_DIRTY_CLEAR, .ipa = slat_ipa(g->iwin),
			   .size = g->iwin_size));
	int64_t r = slat_dirty_read(&g->o.t, slat_ipa(g->iwin), g->iwin_size, bm,
				    words, true,
				    SLAT_OP(.flush = SLAT_FLUSH_RANGE, .cache = &g->o.cache));
	free(bm);
	if (r < 0)
		die("slat_dirty_read: %s", check_status_name((int)r));
	note_op(g, "dirty-log");
}

static void collect_leaves(struct gen *g)
{
	g->lv.n = 0;
	if (checker_walk(&g->o.ck, g->iwin, g->iwin + g->iwin_size, oracle_leaf_cb, &g->lv))
		die("raw walk: %s", g->o.ck.msg);
}

/* Operations after the map, in a random order, then the checker. */
static void gen_ops(struct gen *g)
{
	unsigned n = (unsigned)below(5);
	for (unsigned i = 0; i < n; i++) {
		collect_leaves(g);
		switch (below(6)) {
		case 0: op_hole(g, false); break;
		case 1: op_hole(g, true); break;
		case 2:
			if (g->lv.n)
				op_relax(g, &g->lv.v[below(g->lv.n)]);
			break;
		case 3: op_split(g); break;
		case 4: op_promote(g); break;
		default:
			if ((g->cfg.features & SLAT_FEAT_HWDIRTY) && chance(50)) {
				op_dirty_log(g);
			} else {
				uint64_t gpa, size;
				gen_range(g, 64, &gpa, &size);
				slat_test_clear_young(&g->o.t, slat_ipa(gpa), size,
						      true, NULL);
				note_op(g, "mkold");
			}
			break;
		}
	}
	if (checker_full(&g->o.ck, NULL))
		die("checker: %s", g->o.ck.msg);
	collect_leaves(g);
}

/* ------------------------------------------------------------ probes */

/* The host-physical addresses of the EPT entries a walk of @gpa reads,
 * root first, down to the leaf or the first non-present entry. */
static void walk_entries(struct gen *g, uint64_t gpa, uint64_t pa[XPROBE_DESCS])
{
	memset(pa, 0, XPROBE_DESCS * sizeof(*pa));
	uint64_t table = slat_pa_v(g->o.t.root_pa);
	for (int level = 0, i = 0; level <= 3; level++, i++) {
		int rc;
		uint64_t pte;
		struct check_desc d;
		rc = checker_entry_at(&g->o.ck, gpa, level, &pte, &d);
		if (rc != 1)
			break;
		unsigned shift = 12 + 9 * (unsigned)(3 - level);
		pa[i] = table + 8 * ((gpa >> shift) & 511);
		if (d.kind != CHECK_DESC_TABLE)
			break;
		table = d.oa;
	}
}

static uint64_t arena_word(struct gen *g, uint64_t pa)
{
	return *(uint64_t *)(g->o.h.arena + (pa - g->o.h.pa_base));
}

static unsigned access_of(uint32_t kind)
{
	return kind == XPROBE_LOAD ? SLAT_ACCESS_READ
	       : kind == XPROBE_STORE ? SLAT_ACCESS_WRITE : SLAT_ACCESS_EXEC_EL1;
}

/* What the guest's own accesses do to the EPT before the probe: its code
 * fetch and its page walk (treated as writes with A/D enabled). */
static void replay_guest(struct gen *g, uint32_t kind)
{
	static const uint64_t walk[] = { XGUEST_PML4, XGUEST_PDPT, XGUEST_PD0,
					 XGUEST_PD1, XGUEST_PT };
	struct slat_hw_result hw;
	uint64_t stub = kind == XPROBE_LOAD ? XGUEST_LOAD
			: kind == XPROBE_STORE ? XGUEST_STORE : XGUEST_FETCH;
	if (slat_hw_access(&g->o.t, slat_ipa(stub), SLAT_ACCESS_EXEC_EL1, &hw) ||
	    hw.fault != SLAT_FAULT_NONE)
		die("the guest's code does not translate");
	for (size_t i = 0; i < sizeof(walk) / sizeof(walk[0]); i++)
		if (slat_hw_access(&g->o.t, slat_ipa(walk[i]), SLAT_ACCESS_WRITE, &hw) ||
		    hw.fault != SLAT_FAULT_NONE)
			die("the guest's page tables do not translate");
}

/*
 * The exit libslat predicts from slat_lookup: no leaf, or one without the
 * permission, is an EPT violation (qualification: the access in bits
 * 2:0, the leaf's R/W/X in 5:3, the table entries being RWX; the guest
 * linear address valid, bit 7, and the access to it the translation,
 * bit 8); else a VMCALL after the access at the leaf's address.
 */
static void expect_from_lookup(struct gen *g, const struct xblob_probe *p,
			       struct expect *e)
{
	struct slat_leaf l;
	int ret = slat_lookup(&g->o.t, slat_ipa(p->gpa), &l);
	static const uint32_t need[] = { SLAT_R, SLAT_W, SLAT_XK };
	unsigned a = access_of(p->kind);
	memset(e, 0, sizeof(*e));
	e->level = -1;
	if (ret != SLAT_OK && ret != SLAT_E_NOENT)
		die("slat_lookup(%#" PRIx64 "): %s", p->gpa, check_status_name(ret));
	uint64_t rwx = 0;
	if (ret == SLAT_OK) {
		e->level = l.level;
		rwx = ((l.attrs & SLAT_R) ? 1 : 0) | ((l.attrs & SLAT_W) ? 2 : 0) |
		      ((l.attrs & SLAT_XK) ? 4 : 0);
		if (l.attrs & need[a]) {
			e->reason = EXIT_VMCALL;
			e->hpa = slat_pa_v(l.pa);
			return;
		}
	}
	e->reason = EXIT_EPT_VIOLATION;
	e->qual = (1ull << a) | rwx << 3 | 1ull << 7 | 1ull << 8;
}

static uint32_t probe_tag(const struct layout_rec *r, uint32_t i)
{
	uint64_t x = (uint64_t)r->id << 8 ^ i ^ 0x5a17c0de;
	return (uint32_t)splitmix(&x) | 1;
}

/* What the guest pokes and checks at the expected address. */
static void probe_io(const struct layout_rec *r, struct xblob_probe *p,
		     struct expect *e)
{
	uint32_t tag = probe_tag(r, r->nr_probes);
	p->value = 0xd1e7000000000000ull ^ p->gpa;
	if (e->reason != EXIT_VMCALL)
		return;
	uint64_t word = e->hpa & ~7ull;
	p->poke_pa = word;
	if (p->kind == XPROBE_LOAD) {
		p->poke_val = 0x5a17000000000000ull ^ word ^ tag;
		e->rax = p->poke_val;
	} else if (p->kind == XPROBE_STORE) {
		p->check_pa = word;
		e->word = p->value;
	} else {
		p->poke_val = XFETCH_CODE(tag);
		e->rax = tag;
		e->rip = XGUEST_WINDOW + (p->gpa & 0xfff) + 5;
	}
}

/*
 * slat_hw_access sets the accessed flag of the table entries a walk goes
 * through even when the walk ends in an EPT violation; Bochs sets the
 * flags of a walk only when the access goes ahead (docs/oracle.md). The
 * driver takes back the flags libslat set on a faulting walk, counting
 * them, so that every other bit stays compared.
 */
static void undo_fault_young(struct gen *g, const struct xblob_probe *p,
			     const uint64_t *pre)
{
	for (unsigned i = 0; i < XPROBE_DESCS; i++) {
		if (!p->desc_pa[i])
			continue;
		uint64_t *w = (uint64_t *)(g->o.h.arena + (p->desc_pa[i] - g->o.h.pa_base));
		if (*w == pre[i])
			continue;
		if ((*w ^ pre[i]) != 1ull << 8)
			die("slat_hw_access changed %#" PRIx64 " on a faulting walk",
			    p->desc_pa[i]);
		*w = pre[i];
		O.fault_young++;
	}
}

static void add_probe(struct gen *g, struct layout_rec *r, uint64_t gpa,
		      uint32_t kind)
{
	struct xblob_probe *p = &r->probes[r->nr_probes];
	struct expect *e = &r->exp[r->nr_probes];
	memset(p, 0, sizeof(*p));
	p->gpa = gpa;
	p->kind = kind;
	expect_from_lookup(g, p, e);
	probe_io(r, p, e);
	/* libslat's walker must agree, and plays the hardware's A/D */
	replay_guest(g, kind);
	walk_entries(g, gpa, p->desc_pa);
	uint64_t pre[XPROBE_DESCS];
	for (unsigned i = 0; i < XPROBE_DESCS; i++)
		pre[i] = p->desc_pa[i] ? arena_word(g, p->desc_pa[i]) : 0;
	struct slat_hw_result hw;
	if (slat_hw_access(&g->o.t, slat_ipa(gpa), access_of(kind), &hw))
		die("slat_hw_access(%#" PRIx64 ")", gpa);
	bool hw_ok = hw.fault == SLAT_FAULT_NONE;
	if (!hw_ok)
		undo_fault_young(g, p, pre);
	if (hw_ok != (e->reason == EXIT_VMCALL) ||
	    (hw_ok && slat_pa_v(hw.pa) != e->hpa)) {
		fprintf(stderr, "layout %u probe %u: slat_hw_access and slat_lookup disagree at %#"
			PRIx64 "\n", r->id, r->nr_probes, gpa);
		O.mismatches++;
	}
	for (unsigned i = 0; i < XPROBE_DESCS; i++)
		e->desc[i] = p->desc_pa[i] ? arena_word(g, p->desc_pa[i]) : 0;
	r->nr_probes++;
}

static bool in_guest_region(uint64_t gpa)
{
	return gpa >= XGUEST_BASE && gpa < XGUEST_BASE + XGUEST_SIZE;
}

/* First, last and random pages of leaves, the window, anywhere. */
static void gen_probes(struct gen *g, struct layout_rec *r)
{
	while (r->nr_probes < PROBES_PER_LAYOUT) {
		uint64_t gpa;
		unsigned c = (unsigned)below(100);
		if (c < 80 && g->lv.n) {
			const struct check_leaf *l = &g->lv.v[below(g->lv.n)];
			unsigned w = (unsigned)below(3);
			gpa = l->base + (w == 0 ? 0 : w == 1 ? l->size - PAGE
					 : align_down(below(l->size), PAGE));
		} else if (c < 95) {
			gpa = g->iwin + align_down(below(g->iwin_size), PAGE);
		} else {
			gpa = align_down(below(g->ia_end), PAGE);
			if (in_guest_region(gpa))
				continue;
		}
		uint32_t kind = XPROBE_LOAD + (uint32_t)below(3);
		/* a fetch runs 8 bytes of code: not across the page */
		gpa += align_down(below(kind == XPROBE_FETCH ? PAGE - 8 : PAGE), 8);
		add_probe(g, r, gpa, kind);
	}
}

/* ------------------------------------------------------------ layouts */

/* Fixed layouts: every leaf size and permission, each operation. */
static void fixed_layout(struct gen *g, unsigned n)
{
	const uint64_t G1 = 1ull << 30, M2 = 2ull << 20, w = g->iwin;
	uint32_t x = (g->cfg.features & SLAT_FEAT_EPT_XONLY) ? SLAT_X : SLAT_R;
	gen_map(g, w, G1, XTEST_RAM, SLAT_RWX | SLAT_MT_NORMAL, 0);
	gen_map(g, w + G1, M2, XTEST_RAM + 4 * M2, SLAT_R | SLAT_MT_NORMAL_NC, 0);
	gen_map(g, w + G1 + M2, M2, XTEST_RAM + 8 * M2, x | SLAT_MT_NORMAL, 0);
	gen_map(g, w + G1 + 2 * M2, 16 * PAGE, XTEST_RAM + 3 * PAGE,
		SLAT_RW | SLAT_MT_DEVICE | SLAT_IPAT, SLAT_MAP_PAGES);
	gen_map(g, w + G1 + 3 * M2, 8 * PAGE, XTEST_RAM + 100 * PAGE,
		SLAT_R | SLAT_X | SLAT_MT_NORMAL | SLAT_SW(5), 0);
	gen_map(g, w + G1 + 4 * M2, 4 * PAGE, XTEST_RAM + 200 * PAGE,
		x | SLAT_MT_NORMAL_NC, 0);
	switch (n) {
	case 2: /* a hole in the 1 GiB block: split to 2M and 4K */
		topup(g, SLAT_NEED(.kind = SLAT_OP_UNMAP,
				   .ipa = slat_ipa(w + 5 * M2), .size = 3 * PAGE));
		if (slat_unmap(&g->o.t, slat_ipa(w + 5 * M2), 3 * PAGE,
			       SLAT_OP(.flush = SLAT_FLUSH_RANGE, .cache = &g->o.cache)) < 0)
			die("fixed unmap");
		note_op(g, "unmap");
		op_hole(g, true);
		break;
	case 3: /* clean (dirty-logged) and old leaves */
		op_dirty_log(g);
		slat_test_clear_young(&g->o.t, slat_ipa(w), 2 * G1, true, NULL);
		note_op(g, "mkold");
		break;
	case 4: /* split everything to pages, then promote back */
		op_split(g);
		op_promote(g);
		break;
	case 5:
		op_relax(g, &(struct check_leaf){ .base = w + G1 + M2, .size = M2,
						  .attrs = x | SLAT_MT_NORMAL });
		op_split(g);
		break;
	}
	if (checker_full(&g->o.ck, NULL))
		die("checker: %s", g->o.ck.msg);
	collect_leaves(g);
}

static const unsigned ia_choices[] = { 39, 40, 48 };

/* The word at @pa in the table pages as the blob has them. */
static uint64_t *page_word(uint8_t *pages, uint32_t nr, uint64_t pa)
{
	for (uint32_t k = 0; k < nr; k++) {
		uint64_t page;
		memcpy(&page, pages + k * (8 + PAGE), 8);
		if (pa >= page && pa < page + PAGE)
			return (uint64_t *)(pages + k * (8 + PAGE) + 8 + (pa - page));
	}
	die("no table page holds %#" PRIx64, pa);
}

static void snapshot_descs(struct layout_rec *r, uint8_t *pages, uint32_t nr)
{
	for (uint32_t i = 0; i < r->nr_probes; i++)
		for (unsigned k = 0; k < XPROBE_DESCS; k++)
			if (r->probes[i].desc_pa[k])
				r->exp[i].snap[k] = *page_word(pages, nr,
							       r->probes[i].desc_pa[k]);
}

/* Flip a bit of the first translating probe's leaf (--corrupt): the PA
 * one page off, or a reserved memory type (a misconfiguration). */
static void corrupt(const struct layout_rec *r, uint8_t *pages, uint32_t nr)
{
	for (uint32_t i = 0; i < r->nr_probes && !O.corrupted; i++) {
		if (r->exp[i].reason != EXIT_VMCALL)
			continue;
		uint64_t pa = r->probes[i].desc_pa[r->exp[i].level];
		uint64_t *d = page_word(pages, nr, pa);
		*d = strcmp(O.corrupt, "mt") ? *d ^ PAGE
					     : (*d & ~(7ull << 3)) | 2ull << 3;
		O.corrupted++;
		printf("corrupted layout %u: the entry at %#" PRIx64 " is now %#" PRIx64 "\n",
		       r->id, pa, *d);
	}
}

static struct layout_rec *new_rec(void)
{
	O.recs = realloc(O.recs, (O.nrecs + 1) * sizeof(*O.recs));
	if (!O.recs)
		die("out of memory");
	struct layout_rec *r = &O.recs[O.nrecs++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* Layout @id (fixed below FIXED_LAYOUTS, else random from its seed). */
static void build_layout(uint32_t id)
{
	struct gen g;
	uint64_t seed = O.seed ^ (uint64_t)id * 0x9e3779b97f4a7c15ull;
	rng = seed;
	bool fixed = id < FIXED_LAYOUTS;
	unsigned ia = fixed ? ia_choices[(id / 2) % 3] : ia_choices[below(3)];
	uint32_t feat = 0;
	if (fixed ? id % 2 : chance(50))
		feat |= SLAT_FEAT_HWDIRTY;
	if (fixed ? id >= 2 : chance(40))
		feat |= SLAT_FEAT_EPT_XONLY;
	open_gen(&g, ia, feat);
	if (fixed) {
		g.iwin = 0x4000000000ull;
		fixed_layout(&g, id);
	} else {
		gen_items(&g);
		gen_ops(&g);
	}
	struct layout_rec *r = new_rec();
	r->id = id;
	r->seed = seed;
	snprintf(r->desc, sizeof(r->desc),
		 "%s ept-%u a/d=%d xonly=%d window %#" PRIx64 " ops %s seed %#" PRIx64,
		 fixed ? "fixed" : "random", ia, !!(feat & SLAT_FEAT_HWDIRTY),
		 !!(feat & SLAT_FEAT_EPT_XONLY), g.iwin, g.ops[0] ? g.ops : "none",
		 seed);
	O.ad_layouts += !!(feat & SLAT_FEAT_HWDIRTY);
	O.xonly_layouts += !!(feat & SLAT_FEAT_EPT_XONLY);
	uint32_t nr;
	uint8_t *pages = oracle_table_pages(&g.o.h, &nr);
	gen_probes(&g, r);
	snapshot_descs(r, pages, nr);
	if (O.corrupt)
		corrupt(r, pages, nr);
	struct xblob_layout hdr = {
		.magic = XBLOB_LAYOUT_MAGIC, .id = id, .nr_pages = nr,
		.nr_probes = r->nr_probes, .eptp = slat_ept_eptp(&g.o.t),
	};
	if (!hdr.eptp)
		die("no EPTP");
	blob_put(&hdr, sizeof(hdr));
	blob_put(pages, nr * (8 + PAGE));
	blob_put(r->probes, r->nr_probes * sizeof(*r->probes));
	free(pages);
	close_gen(&g);
}

/* ------------------------------------------------------------ Bochs */

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		die("write %s: %s", path, strerror(errno));
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("read %s: %s", path, strerror(errno));
	uint8_t *buf = NULL;
	size_t cap = 0;
	*n = 0;
	for (;;) {
		if (*n + 65536 + 1 > cap) {
			cap = (*n + 65536 + 1) * 2;
			buf = realloc(buf, cap);
			if (!buf)
				die("out of memory");
		}
		size_t got = fread(buf + *n, 1, 65536, f);
		*n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[*n] = 0;
	return buf;
}

/* The disk: the program, the blob at XBLOB_LBA, whole cylinders of 16
 * heads and 63 sectors (a flat image's geometry). */
static uint64_t write_disk(const char *path)
{
	size_t glen;
	uint8_t *prog = read_file(O.guest, &glen);
	if (glen > XBLOB_LBA * 512ull)
		die("%s is larger than %u sectors", O.guest, XBLOB_LBA);
	const uint64_t cyl = 16 * 63 * 512;
	uint64_t len = XBLOB_LBA * 512ull + O.blen;
	len = (len + cyl - 1) / cyl * cyl;
	uint8_t *img = calloc(1, len);
	if (!img)
		die("out of memory");
	memcpy(img, prog, glen);
	memcpy(img + XBLOB_LBA * 512ull, O.blob, O.blen);
	write_file(path, img, len);
	free(img);
	free(prog);
	return len / cyl;
}

/* Headless: SDL2 with its dummy video driver (Debian's Bochs has no
 * nogui library), no sound, the program's output on port 0xE9. */
static void write_bochsrc(const char *path, const char *disk, uint64_t cyls)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die("write %s: %s", path, strerror(errno));
	fprintf(f, "megs: 2048\n"
		"romimage: file=/usr/share/bochs/BIOS-bochs-latest\n"
		"vgaromimage: file=/usr/share/vgabios/vgabios.bin\n"
		"cpu: model=corei7_haswell_4770, ips=50000000, reset_on_triple_fault=0\n"
		"ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14\n"
		"ata0-master: type=disk, path=%s, mode=flat, cylinders=%" PRIu64
		", heads=16, spt=63\n"
		"boot: disk\n"
		"display_library: sdl2\n"
		"port_e9_hack: enabled=1\n"
		"log: bochs.log\n"
		"panic: action=fatal\n"
		"error: action=report\n"
		"clock: sync=none\n"
		"speaker: enabled=0\n"
		"sound: driver=dummy\n", disk, cyls);
	if (fclose(f))
		die("write %s", path);
}

/* Run Bochs in @dir (its built-in debugger reads "c" from a script);
 * returns its output (port 0xE9 and Bochs's own lines). */
static char *run_bochs(const char *dir, size_t *len)
{
	char rc[4096], cmds[4096], out[4096], disk[4096];
	snprintf(disk, sizeof(disk), "%s/disk.img", dir);
	snprintf(rc, sizeof(rc), "%s/bochsrc", dir);
	snprintf(cmds, sizeof(cmds), "%s/cmds", dir);
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	write_bochsrc(rc, disk, write_disk(disk));
	write_file(cmds, "c\n", 2);
	double t0 = oracle_now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (chdir(dir) || !freopen("/dev/null", "r", stdin) ||
		    !freopen(out, "w", stdout) || !freopen("err.txt", "w", stderr))
			_exit(127);
		setenv("SDL_VIDEODRIVER", "dummy", 1);
		setenv("SDL_AUDIODRIVER", "dummy", 1);
		execlp(O.bochs, O.bochs, "-q", "-f", rc, "-rc", cmds, (char *)NULL);
		_exit(127);
	}
	/* well past any CI run: Bochs is stuck */
	oracle_wait(pid, t0, 270, "Bochs", &O.bochs_seconds);
	/* its standard error after its output: why it stopped, if it did */
	size_t elen;
	char *text = (char *)read_file(out, len);
	snprintf(out, sizeof(out), "%s/err.txt", dir);
	uint8_t *err = read_file(out, &elen);
	text = oracle_realloc(text, *len + elen + 1);
	memcpy(text + *len, err, elen + 1);
	*len += elen;
	free(err);
	return text;
}

/* ------------------------------------------------------------ compare */

static const char *kind_name(uint32_t k)
{
	return k == XPROBE_LOAD ? "load" : k == XPROBE_STORE ? "store" : "fetch";
}

static void mismatch(const struct layout_rec *r, uint32_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void mismatch(const struct layout_rec *r, uint32_t i, const char *fmt, ...)
{
	const struct xblob_probe *p = &r->probes[i];
	va_list ap;
	O.mismatches++;
	if (O.mismatches > 20)
		return;
	fprintf(stderr, "DISAGREE layout %u (%s) probe %u: %s at GPA %#" PRIx64 ": ",
		r->id, r->desc, i, kind_name(p->kind), p->gpa);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  replay: oracle_ept --guest %s --seed %#" PRIx64
		" --only %u --verbose\n", O.guest, O.seed, r->id);
}

/* The fields of a "P" line (blob.h). */
struct answer {
	uint64_t reason, qual, gpa, rax, rip, info, linear, word;
	uint64_t desc[XPROBE_DESCS];
};

static void compare_descs(const struct layout_rec *r, uint32_t i,
			  const struct answer *a)
{
	const struct expect *e = &r->exp[i];
	for (unsigned k = 0; k < XPROBE_DESCS; k++) {
		if (a->desc[k] != e->desc[k])
			mismatch(r, i, "EPT entry %u at %#" PRIx64 ": Bochs %#" PRIx64
				 ", slat_hw_access %#" PRIx64, k,
				 r->probes[i].desc_pa[k], a->desc[k], e->desc[k]);
	}
}

static void compare_probe(const struct layout_rec *r, uint32_t i,
			  const struct answer *a)
{
	const struct xblob_probe *p = &r->probes[i];
	const struct expect *e = &r->exp[i];
	uint64_t before = O.mismatches;
	O.probes++;
	if (a->reason != e->reason) {
		mismatch(r, i, "exit reason %" PRIu64 " (qualification %#" PRIx64
			 ", GPA %#" PRIx64 ", interruption %#" PRIx64
			 "), expected %u (%s)", a->reason, a->qual, a->gpa,
			 a->info, e->reason,
			 e->reason == EXIT_VMCALL ? "the access completes" : "EPT violation");
		return;
	}
	if (e->reason == EXIT_EPT_VIOLATION) {
		O.violations++;
		uint64_t linear = XGUEST_WINDOW | (p->gpa & 0xfff);
		if (a->qual != e->qual || a->gpa != p->gpa || a->linear != linear)
			mismatch(r, i, "EPT violation qualification %#" PRIx64 " GPA %#"
				 PRIx64 " linear %#" PRIx64 ", expected %#" PRIx64 " %#"
				 PRIx64 " %#" PRIx64, a->qual, a->gpa, a->linear,
				 e->qual, p->gpa, linear);
	} else if (p->kind == XPROBE_STORE) {
		if (a->word != e->word)
			mismatch(r, i, "the word at HPA %#" PRIx64 " is %#" PRIx64
				 ", expected %#" PRIx64, p->check_pa, a->word, e->word);
	} else if (a->rax != e->rax || (p->kind == XPROBE_FETCH && a->rip != e->rip)) {
		mismatch(r, i, "RAX %#" PRIx64 " RIP %#" PRIx64 ", expected the tag %#"
			 PRIx64 " from HPA %#" PRIx64, a->rax, a->rip, e->rax, e->hpa);
	} else {
		O.translated[e->level]++;
	}
	compare_descs(r, i, a);
	if (O.mismatches == before)
		O.agreed++;
}

/* The accessed and dirty flags Bochs set, each entry's once per layout:
 * on leaves, and (accessed) on the table entries above them. */
static void count_ad(const struct layout_rec *r, uint32_t i,
		     const struct answer *a, uint64_t *seen, unsigned *nseen)
{
	const struct expect *e = &r->exp[i];
	for (unsigned k = 0; k < XPROBE_DESCS; k++) {
		uint64_t pa = r->probes[i].desc_pa[k];
		uint64_t set = a->desc[k] & ~e->snap[k] & (3ull << 8);
		for (unsigned s = 0; s < *nseen && set; s++)
			if ((seen[s] & ~0xfffull) == pa)
				set &= ~seen[s];
		if (!pa || !set)
			continue;
		seen[(*nseen)++] = pa | set;
		bool leaf = e->level == (int)k;
		O.a_set[leaf] += (set >> 8) & 1;
		O.d_set += (set >> 9) & 1;
	}
}

/*
 * What the layouts assume of Bochs's CPU: 40 physical address bits, and in
 * IA32_VMX_EPT_VPID_CAP execute-only translations (bit 0), 4-level walks
 * (6), write-back walks (14), 2 MiB and 1 GiB pages (16, 17), INVEPT (20)
 * and A/D (21). Another Bochs or CPU model is refused by name, not by a
 * flood of disagreements.
 */
static void check_banner(void)
{
	uint64_t basic, ept, proc2;
	unsigned maxphy;
	const uint64_t need = 1ull << 0 | 1ull << 6 | 1ull << 14 | 1ull << 16 |
			      1ull << 17 | 1ull << 20 | 1ull << 21;
	if (sscanf(O.banner, "XORACLE basic=%" SCNx64 " ept=%" SCNx64 " proc2=%"
		   SCNx64 " maxphy=%x", &basic, &ept, &proc2, &maxphy) != 4)
		die("no banner from the program");
	if (maxphy != XMAXPHY || (ept & need) != need || !(proc2 >> 33 & 1))
		die("Bochs's CPU lacks what the layouts use: %s", O.banner);
}

static void parse_and_compare(const char *out)
{
	size_t rec = O.nrecs, done = 0;
	uint32_t probe = 0;
	uint64_t seen[PROBES_PER_LAYOUT * XPROBE_DESCS];
	unsigned nseen = 0;
	bool ended = false;
	for (const char *line = out; line && *line;) {
		const char *nl = strchr(line, '\n');
		struct answer a;
		unsigned id;
		if (!strncmp(line, "XORACLE ", 8)) {
			snprintf(O.banner, sizeof(O.banner), "%.*s",
				 (int)(nl ? nl - line : (long)strlen(line)), line);
			check_banner();
		} else if (!strncmp(line, "FAIL ", 5)) {
			die("the program stopped: %.*s", (int)(nl ? nl - line : 80), line);
		} else if (sscanf(line, "L %x", &id) == 1) {
			for (rec = 0; rec < O.nrecs && O.recs[rec].id != id; rec++)
				;
			if (rec == O.nrecs)
				die("Bochs reports an unknown layout %u", id);
			probe = 0;
			nseen = 0;
			done++;
		} else if (line[0] == 'P' && line[1] == ' ' && rec < O.nrecs &&
			   sscanf(line, "P %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
				  " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %"
				  SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
				  &a.reason, &a.qual, &a.gpa, &a.rax, &a.rip, &a.info,
				  &a.linear, &a.word, &a.desc[0], &a.desc[1], &a.desc[2],
				  &a.desc[3], &a.desc[4]) == 13) {
			const struct layout_rec *r = &O.recs[rec];
			if (probe >= r->nr_probes)
				die("layout %u: more answers than probes", r->id);
			compare_probe(r, probe, &a);
			count_ad(r, probe, &a, seen, &nseen);
			if (O.verbose)
				printf("  %u.%u %s %#" PRIx64 ": exit %" PRIu64 " qual %#"
				       PRIx64 " rax %#" PRIx64 "\n", r->id, probe,
				       kind_name(r->probes[probe].kind), r->probes[probe].gpa,
				       a.reason, a.qual, a.rax);
			probe++;
		} else if (!strncmp(line, "END ", 4)) {
			ended = true;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!ended || done != O.nrecs) {
		/* Bochs's own last words (e.g. no sdl2 display: bochs-sdl) */
		size_t n = strlen(out);
		die("Bochs's run ended after %zu of %zu layouts; its output ends:\n%s",
		    done, O.nrecs, out + (n > 600 ? n - 600 : 0));
	}
}

/* ------------------------------------------------------------ driver */

static char tmpdir[] = "/tmp/slat-oracle-ept-XXXXXX";

/* Boot Bochs on the layouts built so far and compare its answers. */
static void flush_batch(void)
{
	if (!O.nrecs)
		return;
	struct xblob_hdr hdr = { .magic = XBLOB_MAGIC, .nr_layouts = (uint32_t)O.nrecs,
				 .bytes = O.blen };
	memcpy(O.blob, &hdr, sizeof(hdr));
	size_t len;
	char *out = run_bochs(O.keep ? O.keep : tmpdir, &len);
	O.boots++;
	parse_and_compare(out);
	free(out);
	O.nrecs = 0;
	O.blen = 0;
	blob_put(&hdr, sizeof(hdr)); /* the next batch's header, filled later */
}

static void remove_tmpdir(void)
{
	static const char *files[] = { "disk.img", "bochsrc", "cmds", "out.txt",
				       "err.txt", "bochs.log" };
	char path[4096];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oracle_ept --guest BIN [--layouts N] [--seed N] [--only ID]\n"
		"                  [--bochs PATH] [--keep DIR] [--corrupt pa|mt] [--verbose]\n"
		"Checks EPT tables libslat builds against Bochs's EPT walker:\n"
		"%u fixed layouts, then random ones (N in all, default 60), %u probes each.\n"
		"--corrupt flips one leaf (its address, or a reserved memory type) after\n"
		"libslat's expectations are made: the run passes only if it is reported.\n"
		"Exit: 0 agree, 1 disagreement, 77 skipped (no bochs or no program).\n",
		FIXED_LAYOUTS, PROBES_PER_LAYOUT);
}

static void parse_args(int argc, char **argv)
{
	O.bochs = "bochs";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--verbose")) {
			O.verbose = true;
			continue;
		}
		if (!v) {
			usage(stderr);
			exit(2);
		}
		i++;
		if (!strcmp(a, "--guest"))
			O.guest = v;
		else if (!strcmp(a, "--layouts"))
			O.layouts = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seed"))
			O.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--only"))
			O.only = strtol(v, NULL, 0);
		else if (!strcmp(a, "--bochs"))
			O.bochs = v;
		else if (!strcmp(a, "--keep"))
			O.keep = v;
		else if (!strcmp(a, "--corrupt") && (!strcmp(v, "pa") || !strcmp(v, "mt")))
			O.corrupt = v;
		else {
			usage(stderr);
			exit(2);
		}
	}
}

static void print_summary(void)
{
	printf("%s\n", O.banner);
	printf("bochs EPT oracle: %" PRIu64 " layouts (%u fixed; %" PRIu64
	       " with A/D, %" PRIu64 " execute-only), seed %#" PRIx64 ", %u boot%s, %.1f s"
	       " in Bochs\n", O.layouts, FIXED_LAYOUTS, O.ad_layouts, O.xonly_layouts,
	       O.seed, O.boots, O.boots == 1 ? "" : "s", O.bochs_seconds);
	printf("  translated through 1G/2M/4K leaves: %" PRIu64 "/%" PRIu64 "/%" PRIu64
	       ", EPT violations: %" PRIu64 "; Bochs set %" PRIu64
	       " accessed flags on leaves, %" PRIu64 " on tables, %" PRIu64
	       " dirty flags\n", O.translated[1], O.translated[2], O.translated[3],
	       O.violations, O.a_set[1], O.a_set[0], O.d_set);
	printf("  accessed flags slat_hw_access set on the tables of faulting walks"
	       " (Bochs does not): %" PRIu64 "\n", O.fault_young);
	printf("%" PRIu64 " of %" PRIu64 " probes agreed with Bochs, %" PRIu64
	       " disagreements\n", O.agreed, O.probes, O.mismatches);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	oracle_name = "oracle_ept";
	parse_args(argc, argv);
	if (!O.guest || access(O.guest, R_OK)) {
		printf("SKIP: the oracle's x86-64 program was not built\n");
		return SKIP;
	}
	if (!oracle_on_path(O.bochs)) {
		printf("SKIP: %s not found (apt-get install bochs bochs-sdl bochsbios vgabios)\n",
		       O.bochs);
		return SKIP;
	}
	if (!O.keep) {
		if (!mkdtemp(tmpdir))
			die("mkdtemp: %s", strerror(errno));
		atexit(remove_tmpdir); /* die() too: a disk image is large */
	}
	if (O.keep)
		mkdir(O.keep, 0755);
	struct xblob_hdr hdr = { 0 };
	blob_put(&hdr, sizeof(hdr));
	uint64_t first = O.only >= 0 ? (uint64_t)O.only : 0;
	uint64_t end = O.only >= 0 ? first + 1 : O.layouts;
	O.layouts = end - first;
	for (uint64_t id = first; id < end; id++) {
		build_layout((uint32_t)id);
		if (O.blen > XBLOB_MAX / 2)
			flush_batch();
	}
	flush_batch();
	print_summary();
	if (O.corrupt) {
		printf("corruption (%s) %s\n", O.corrupt,
		       O.corrupted && O.mismatches ? "reported: the oracle can fail"
						   : "NOT reported");
		return O.corrupted && O.mismatches ? 0 : 1;
	}
	return O.mismatches ? 1 : 0;
}
