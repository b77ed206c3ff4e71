/* SPDX-License-Identifier: MIT */
/*
 * What the x86 oracles' host drivers share (oracle_ept.c, Bochs's EPT
 * walker; oracle_npt.c, QEMU's NPT walker): the layouts they build with
 * libslat (the leaves, the operations after them, the fixed layouts), the
 * NPT or EPT entries on a probe's walk, the guest's own accesses replayed
 * with slat_hw_access, and file helpers. The memory map is ../blob.h's.
 * Each driver is one translation unit: the helpers are static.
 */
#ifndef SLAT_XORACLE_XGEN_H
#define SLAT_XORACLE_XGEN_H

#include <errno.h>
#include <inttypes.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "blob.h"
#include "checker.h"
#include "driver.h"

#define PAGE 4096ull
/* The emulated CPUs (Bochs's corei7_haswell_4770, QEMU's max under TCG)
 * report 40 physical address bits (CPUID 80000008H): guest PTEs and
 * EPT/NPT entries above are reserved. */
#define XMAXPHY 40

/* What libslat predicts for a probe. */
struct expect {
	uint32_t reason;   /* EPT: exit reason (VMCALL, EPT violation);
			      NPT: EXITCODE (VMMCALL, #NPF) */
	uint64_t qual;     /* faults: the exit qualification (EPT), EXITINFO1 (NPT) */
	uint64_t linear;   /* faults: the guest linear address (EPT; NPT: 0) */
	uint64_t hpa;      /* no fault: where the access lands */
	uint64_t rax, rip; /* the hypercall: the guest's RAX, and RIP (fetches) */
	uint64_t word;     /* stores: the word at check_pa */
	uint64_t desc[XPROBE_DESCS]; /* the table entries after the probe */
	uint64_t snap[XPROBE_DESCS]; /* the same as the blob has them */
	int level;         /* the leaf's level, or -1 for a hole */
};

#define PROBES_PER_LAYOUT 32

struct layout_rec {
	uint32_t id;
	int start_level;   /* the walk's first level: desc[0]'s */
	uint64_t seed;
	char desc[200];
	uint32_t nr_probes;
	struct xblob_probe probes[PROBES_PER_LAYOUT];
	struct expect exp[PROBES_PER_LAYOUT];
};

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

/* Permissions the format can hold (EPT: write needs read, execute-only
 * with SLAT_FEAT_EPT_XONLY; NPT: read always), memory type, IPAT (EPT). */
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
	if (chance(30) && g->cfg.format == SLAT_FMT_EPT)
		a |= SLAT_IPAT;
	if (chance(20))
		a |= SLAT_SW(below(16));
	return a;
}

/* A table of @format (EPT or NPT) for @ia guest-physical bits walked with
 * @levels (0: the format's default), with the guest's region mapped and a
 * window chosen. */
static int open_gen(struct gen *g, enum slat_format_id format, unsigned ia,
		    unsigned levels, uint32_t features)
{
	memset(g, 0, sizeof(*g));
	g->cfg = (struct slat_config){ .format = format, .granule = 4096,
				       .ia_bits = (uint8_t)ia,
				       .levels = (uint8_t)levels,
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

/* The host-physical addresses of the EPT or NPT entries a walk of @gpa reads,
 * root first, down to the leaf or the first non-present entry. */
static void walk_entries(struct gen *g, uint64_t gpa, uint64_t pa[XPROBE_DESCS])
{
	memset(pa, 0, XPROBE_DESCS * sizeof(*pa));
	uint64_t table = slat_pa_v(g->o.t.root_pa);
	int start = slat_table_geometry(&g->o.t)->start_level;
	for (int level = start, i = 0; level <= 3; level++, i++) {
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

/* What the guest's own accesses do to the tables before the probe: its code
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

static bool in_guest_region(uint64_t gpa)
{
	return gpa >= XGUEST_BASE && gpa < XGUEST_BASE + XGUEST_SIZE;
}

/* A probe: the first, last or a random page of a leaf (80%), anywhere in
 * the window (15%), anywhere below ia_end but the guest's region (5%); a
 * random 8-byte-aligned offset; load, store or fetch. False when the draw
 * fell in the guest's region: draw again. */
static bool pick_probe(struct gen *g, uint64_t *gpa, uint32_t *kind)
{
	unsigned c = (unsigned)below(100);
	if (c < 80 && g->lv.n) {
		const struct check_leaf *l = &g->lv.v[below(g->lv.n)];
		unsigned w = (unsigned)below(3);
		*gpa = l->base + (w == 0 ? 0 : w == 1 ? l->size - PAGE
				  : align_down(below(l->size), PAGE));
	} else if (c < 95) {
		*gpa = g->iwin + align_down(below(g->iwin_size), PAGE);
	} else {
		*gpa = align_down(below(g->ia_end), PAGE);
		if (in_guest_region(*gpa))
			return false;
	}
	*kind = XPROBE_LOAD + (uint32_t)below(3);
	/* a fetch runs 8 bytes of code: not across the page */
	*gpa += align_down(below(*kind == XPROBE_FETCH ? PAGE - 8 : PAGE), 8);
	return true;
}

/* Fixed layouts: every leaf size and permission, each operation. */
#define FIXED_LAYOUTS 6

static void fixed_layout(struct gen *g, unsigned n)
{
	const uint64_t G1 = 1ull << 30, M2 = 2ull << 20, w = g->iwin;
	uint32_t x = (g->cfg.features & SLAT_FEAT_EPT_XONLY) ? SLAT_X : SLAT_R;
	uint32_t ipat = g->cfg.format == SLAT_FMT_EPT ? SLAT_IPAT : 0;
	gen_map(g, w, G1, XTEST_RAM, SLAT_RWX | SLAT_MT_NORMAL, 0);
	gen_map(g, w + G1, M2, XTEST_RAM + 4 * M2, SLAT_R | SLAT_MT_NORMAL_NC, 0);
	gen_map(g, w + G1 + M2, M2, XTEST_RAM + 8 * M2, x | SLAT_MT_NORMAL, 0);
	gen_map(g, w + G1 + 2 * M2, 16 * PAGE, XTEST_RAM + 3 * PAGE,
		SLAT_RW | SLAT_MT_DEVICE | ipat, SLAT_MAP_PAGES);
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


/* ------------------------------------------------------------ records */


static uint32_t probe_tag(const struct layout_rec *r, uint32_t i)
{
	uint64_t x = (uint64_t)r->id << 8 ^ i ^ 0x5a17c0de;
	return (uint32_t)splitmix(&x) | 1;
}

/* What the guest pokes and checks at the expected address, when the access
 * @reaches it; a fetch runs the code @npt's hypercall ends (VMMCALL, or
 * EPT's VMCALL). */
static void probe_io(const struct layout_rec *r, struct xblob_probe *p,
		     struct expect *e, bool reaches, bool npt)
{
	uint32_t tag = probe_tag(r, r->nr_probes);
	p->value = 0xd1e7000000000000ull ^ p->gpa;
	if (!reaches)
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
		p->poke_val = npt ? XFETCH_CODE_NPT(tag) : XFETCH_CODE(tag);
		e->rax = tag;
		e->rip = XGUEST_WINDOW + (p->gpa & 0xfff) + 5;
	}
}

/* The table entries on each probe's walk as the blob has them. */
static void snapshot_descs(struct layout_rec *r, uint8_t *pages, uint32_t nr)
{
	for (uint32_t i = 0; i < r->nr_probes; i++)
		for (unsigned k = 0; k < XPROBE_DESCS; k++)
			if (r->probes[i].desc_pa[k])
				r->exp[i].snap[k] = *page_word(pages, nr,
							       r->probes[i].desc_pa[k]);
}

/* Accessed and dirty flags an emulator set (bits @a_bit, @a_bit + 1 of
 * @desc, the entries it reported after probe @i), each entry's once per
 * layout (@seen, *@nseen): on leaves (@a_set[1], @d_set), and accessed on
 * the table entries above them (@a_set[0]). */
struct ad_count {
	uint64_t a_set[2], d_set;
};

static void count_ad(const struct layout_rec *r, uint32_t i, const uint64_t *desc,
		     unsigned a_bit, uint64_t *seen, unsigned *nseen,
		     struct ad_count *c)
{
	const struct expect *e = &r->exp[i];
	for (unsigned k = 0; k < XPROBE_DESCS; k++) {
		uint64_t pa = r->probes[i].desc_pa[k];
		uint64_t set = desc[k] & ~e->snap[k] & (3ull << a_bit);
		for (unsigned s = 0; s < *nseen && set; s++)
			if ((seen[s] & ~0xfffull) == pa)
				set &= ~seen[s];
		if (!pa || !set)
			continue;
		seen[(*nseen)++] = pa | set;
		bool leaf = e->level - r->start_level == (int)k;
		c->a_set[leaf] += (set >> a_bit) & 1;
		c->d_set += (set >> (a_bit + 1)) & 1;
	}
}

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

#endif
