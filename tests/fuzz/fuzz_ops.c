/* SPDX-License-Identifier: MIT */
/*
 * The libFuzzer harness: the input bytes choose a table format and
 * configuration, then a sequence of operations on it. After every operation
 * the status is checked against what the reference model predicts, the
 * model is updated with the reported progress, and the table over the
 * touched range is compared with the model and slat_lookup by the invariant
 * checker; the hosted platform's events (TLB invalidations, page frees,
 * cache maintenance) are checked while the operation runs; the whole table
 * at the end. Then the table is destroyed and the arena must be empty.
 *
 * One arena, table, checker, model and page cache per configuration live
 * from one input to the next: an input starts on the arena reset to its
 * state after slat_hosted_init() and a new table, and ends with the table
 * destroyed, so it runs exactly as on a fresh arena, without mapping one.
 *
 * Any disagreement prints what happened and calls abort(), which libFuzzer
 * (or the replay main, fuzz_replay.c) reports as a crash.
 *
 * Input layout (every read past the end yields 0 and ends the sequence):
 *   byte 0         configuration (index into configs[], modulo its size);
 *                  a configuration that slat_table_init refuses
 *                  (SLAT_E_CONFIG) or that the checker does not know yet
 *                  is skipped, so EPT configurations join in once the core
 *                  and the checker support them;
 *   byte 1         windows: bits select where in the IPA space the two
 *                  windows lie (bottom, top, middle);
 *   then, per operation, an opcode byte and its operands (see decode_*).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "checker.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Checking code gets no coverage instrumentation: its branches say nothing
 * about the library and only cost time.
 */
#if defined(__clang__)
#define NOCOV __attribute__((no_sanitize("coverage")))
#else
#define NOCOV
#endif

/*
 * The lookup the checks call. The fuzzing build links a copy of libslat
 * built without coverage instrumentation, every symbol it defines renamed
 * fuzzcheck_* (tests/fuzz/CMakeLists.txt), and the checker calls
 * fuzz_check_lookup() instead of slat_lookup: the copy's lookup, on a copy
 * of the table whose format is the copy's too, so that cross-checking every
 * leaf with slat_lookup costs what the lookup costs. op_lookup calls the
 * instrumented slat_lookup, as an operation under test.
 */
#ifdef FUZZ_PLAIN_COPY
int fuzzcheck_slat_lookup(const struct slat_table *t, slat_ipa_t ipa,
			  struct slat_leaf *leaf);
int fuzzcheck_slat_table_init(struct slat_table *t,
			      const struct slat_config *cfg,
			      const struct slat_mm_ops *mm, void *mm_ctx);
void fuzzcheck_slat_table_destroy(struct slat_table *t);
int fuzz_check_lookup(const struct slat_table *t, slat_ipa_t ipa,
		      struct slat_leaf *leaf);
#define plain_lookup fuzz_check_lookup
#else
#define plain_lookup slat_lookup
#endif

/* ------------------------------------------------------------ configs */

#define ARM(g, ia, pa, f)                                                  \
	{ .format = SLAT_FMT_ARM_S2, .granule = (g), .ia_bits = (ia),      \
	  .pa_bits = (pa), .features = (f) }
#define EPT(ia, pa, f)                                                     \
	{ .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = (ia),         \
	  .pa_bits = (pa), .features = (f) }

static const struct slat_config configs[] = {
	ARM(4096, 32, 40, 0),
	ARM(4096, 36, 48, SLAT_FEAT_FWB),
	ARM(4096, 40, 48, 0),
	ARM(4096, 42, 44, SLAT_FEAT_XNX | SLAT_FEAT_DIC),
	ARM(4096, 44, 48, SLAT_FEAT_XNX),
	ARM(4096, 48, 48, 0),
	ARM(16384, 36, 36, 0),
	ARM(16384, 40, 48, SLAT_FEAT_FWB),
	ARM(16384, 42, 48, SLAT_FEAT_XNX),
	ARM(16384, 47, 48, 0),
	ARM(16384, 48, 48, SLAT_FEAT_XNX | SLAT_FEAT_DIC),
	ARM(65536, 32, 40, 0),
	ARM(65536, 40, 48, SLAT_FEAT_XNX),
	ARM(65536, 44, 48, 0),
	ARM(65536, 48, 48, SLAT_FEAT_FWB),
	ARM(65536, 52, 52, 0),
	ARM(65536, 52, 52, SLAT_FEAT_XNX),
	/* Intel EPT (skipped while slat_table_init or the checker refuse) */
	EPT(39, 46, 0),
	EPT(48, 52, 0),
	EPT(48, 48, SLAT_FEAT_EPT_MBEC),
	EPT(48, 48, SLAT_FEAT_EPT_XONLY),
	EPT(57, 52, SLAT_FEAT_EPT_MBEC | SLAT_FEAT_EPT_XONLY),
	/* Arm FEAT_LPA2 (VTCR_EL2.DS), appended so that the indexes of the
	 * replay inputs in crashes/ keep their configurations */
	ARM(4096, 52, 52, SLAT_FEAT_LPA2),
	ARM(16384, 52, 52, SLAT_FEAT_LPA2 | SLAT_FEAT_XNX),
	ARM(4096, 48, 48, SLAT_FEAT_LPA2 | SLAT_FEAT_FWB),
	/*
	 * Hardware dirty state (SLAT_FEAT_HWDIRTY) is left out of the others
	 * (no operation here plays the CPU); AMD NPT always has it, and the
	 * model then expects writable leaves dirty.
	 */
	{ .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
	  .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY },
	{ .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 57,
	  .pa_bits = 52, .features = SLAT_FEAT_HWDIRTY },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* ------------------------------------------------------------ input */

struct in {
	const uint8_t *p;
	size_t n, pos;
	bool end;
};

static uint8_t g8(struct in *in)
{
	if (in->pos >= in->n) {
		in->end = true;
		return 0;
	}
	return in->p[in->pos++];
}

static uint16_t g16(struct in *in)
{
	uint16_t lo = g8(in);
	return (uint16_t)(lo | (uint16_t)g8(in) << 8);
}

static uint64_t g64(struct in *in)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)g8(in) << (8 * i);
	return v;
}

/* ------------------------------------------------------------ state */

#define ARENA_PAGES 2048u
#define CACHE_CAP 256u
#define MAX_OPS 48
#define MAX_LEAVES 512 /* bound on the leaves one operation may write or read */
#define DESC_LEN 256    /* one operation's description */

/* One configuration's platform, kept from one input to the next. */
struct slot {
	bool tried, usable;
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	bool live;              /* t is initialised */
	struct checker ck;
	const struct check_format *fmt;
	struct model *m;
	struct slat_page_cache cache;
	int32_t *node_of;       /* per arena page: its index in X.n, or -1 */
	struct slat_table shadow; /* t with the uninstrumented copy's format */
	const struct slat_format *plain_fmt;
	uint64_t G, ia_end, pa_end;
	uint64_t lsize_[5];     /* by level + 1: EPT's PML5 is level -1 */
	int start_level;
	uint8_t leaf_levels;
};

static struct slot slots[NR_CONFIGS];
static struct slot *S; /* the current input's */

#ifdef FUZZ_PLAIN_COPY
int fuzz_check_lookup(const struct slat_table *t, slat_ipa_t ipa,
		      struct slat_leaf *leaf)
{
	/* the shadow: the same fields (constant after slat_table_init) */
	if (S && t == &S->t && S->plain_fmt)
		t = &S->shadow;
	return fuzzcheck_slat_lookup(t, ipa, leaf);
}

/* The copy's format for the slot's configuration. */
static void plain_fmt_open(struct slot *s)
{
	struct slat_table tmp;
	if (fuzzcheck_slat_table_init(&tmp, &s->cfg, slat_hosted_ops(),
				      &s->h) != SLAT_OK)
		return;
	s->plain_fmt = tmp.fmt;
	fuzzcheck_slat_table_destroy(&tmp);
}
#else
static void plain_fmt_open(struct slot *s)
{
	(void)s;
}
#endif

/* After slat_table_init: the table the checks' lookups walk. */
static void shadow_sync(struct slot *s)
{
	s->shadow = s->t;
	if (s->plain_fmt)
		s->shadow.fmt = s->plain_fmt;
}

/* The current input. */
static struct {
	uint64_t wbase[2], wsize;
	unsigned opno;
	char desc[DESC_LEN];
	char note[DESC_LEN];           /* what it did (FUZZ_VERBOSE) */
	char trace[MAX_OPS][DESC_LEN]; /* every description, whole */
} F;

#define LSIZE(l) S->lsize_[(l) + 1]

static bool verbose;

/*
 * Known core bugs the harness steers around when FUZZ_KNOWN_BUGS names
 * them (tests/fuzz/run.sh does, docs/fuzzing.md describes them), so that a
 * long run looks for others; unset, every check applies.
 *   zap-table-empty-parent  slat_recover(SLAT_RECOVER_ZAP_TABLE) leaves a
 *                           table it emptied linked: such calls are skipped
 *   map-misaligned-block    slat_map() of one block's size with the PA
 *                           aligned to it and the IPA not installs a block
 *                           at the IPA rounded down: such calls are skipped
 */
static bool known_zap_table_empty_parent, known_map_misaligned_block;

static void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	if (S)
		fprintf(stderr, "\nfuzz_ops: config format %d granule %u ia %u "
				"pa %u features %#x\n",
			S->cfg.format, S->cfg.granule, S->cfg.ia_bits,
			S->cfg.pa_bits, S->cfg.features);
	for (unsigned i = 0; i < F.opno && i < MAX_OPS; i++)
		fprintf(stderr, "  op %u: %s\n", i, F.trace[i]);
	fprintf(stderr, "FAIL at op %u: %s\n  ", F.opno, F.desc);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond))                                                \
			fuzz_fail(__VA_ARGS__);                             \
	} while (0)

/*
 * What a call that did not refuse its input reports: out of pages only when
 * the cache was short, with *done at a page boundary before the end; else
 * success (SLAT_NOTHING_TO_DO where @nothing_ok) with all of it done.
 */
static void check_progress(int ret, uint64_t done, uint64_t size, bool shortc,
			   bool nothing_ok)
{
	if (ret == SLAT_E_NOMEM) {
		CHECK(shortc, "SLAT_E_NOMEM with slat_pages_needed() pages");
		CHECK(done < size && done % S->G == 0,
		      "SLAT_E_NOMEM with *done %#" PRIx64, done);
		return;
	}
	CHECK(ret == SLAT_OK || (nothing_ok && ret == SLAT_NOTHING_TO_DO),
	      "returned %s", check_status_name(ret));
	CHECK(done == size, "*done %#" PRIx64 " after success", done);
	/* The count is exact: a success takes every page of it. */
	CHECK(shortc || S->cache.nr == 0,
	      "%u of slat_pages_needed()'s pages left after success",
	      S->cache.nr);
}

static NOCOV void check_range(uint64_t s, uint64_t e)
{
	if (e > S->ia_end)
		e = S->ia_end;
	if (s >= e)
		return;
	if (checker_range(&S->ck, S->m, s, e)) {
		model_dump(S->m, s, e);
		fuzz_fail("table != model over [%#" PRIx64 ", %#" PRIx64 "): %s",
			  s, e, S->ck.msg);
	}
}

/*
 * The whole table: structure, refcounts, leaks and the model. slat_lookup
 * is cross-checked by the range checks after each operation; here it would
 * run for every invalid entry of every table, which costs most of the time.
 */
static NOCOV void check_full(void)
{
	S->ck.check_lookup = false;
	int ret = checker_full(&S->ck, S->m);
	S->ck.check_lookup = true;
	if (ret)
		fuzz_fail("full check: %s", S->ck.msg);
}

/* [s, e) grown to the leaves straddling its ends. */
static NOCOV void touched(uint64_t s, uint64_t e, uint64_t *ts, uint64_t *te)
{
	struct check_leaf l;
	*ts = s;
	*te = e;
	if (s >= S->ia_end || e <= s)
		return;
	if (checker_leaf_at(&S->ck, s, &l) == 1 && l.base < s)
		*ts = l.base;
	if (e <= S->ia_end && checker_leaf_at(&S->ck, e - S->G, &l) == 1 &&
	    l.base + l.size > e)
		*te = l.base + l.size;
}

struct leafvec {
	struct check_leaf *v;
	size_t n, cap;
};

static struct leafvec pre;

static NOCOV int collect_cb(void *arg, const struct check_leaf *l)
{
	struct leafvec *v = arg;
	if (!l->valid)
		return 0;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
		if (!v->v)
			abort();
	}
	v->v[v->n++] = *l;
	return 0;
}

/* The valid leaves meeting [s, e), in address order, into @v. */
static NOCOV void collect_into(struct leafvec *v, uint64_t s, uint64_t e)
{
	v->n = 0;
	if (s >= e || e > S->ia_end)
		return;
	if (checker_walk(&S->ck, s, e, collect_cb, v))
		fuzz_fail("raw walk: %s", S->ck.msg);
}

static void collect(uint64_t s, uint64_t e)
{
	collect_into(&pre, s, e);
}

/* ------------------------------------------------------------ events */

/*
 * A table page that met the operation's range before it ran, for the
 * checks of what the hosted platform saw: a table may be freed, and a
 * block that replaces it published (Arm: break-before-make), only after an
 * invalidation that covers the table's span was issued while the table was
 * no longer reachable.
 */
struct tnode {
	uint64_t base, size; /* the span of the entry that points to it */
	int level;           /* that entry's level */
	uint64_t *ptep;      /* that entry */
	uint64_t desc;       /* its value */
	uint64_t pa;         /* the table page */
	int parent;          /* the node of the table holding ptep, or -1 */
	bool strict;         /* unlinked with what it holds: its whole span */
	bool covered;        /* invalidated while unreachable */
	bool freed;
};

/*
 * What covers a table: a VMID invalidation; for a table unlinked with what
 * it holds (recover's zap-table and promote, and the tables below them), a
 * range invalidation of its whole span, as KVM issues; for a table an
 * operation emptied before unlinking it (unmap, zap-leaf, a parent they
 * empty), whose leaves had their own invalidations, any invalidation that
 * drops the cached entry pointing to the table: a range meeting its span,
 * or one IPA in it (level hint: any, or that entry's).
 */
static struct {
	bool active;    /* an operation runs: check the events */
	bool split;     /* a split: by-IPA invalidations are of broken blocks */
	struct tnode *n;
	size_t nn, cap;
	size_t ev[SLAT_EV_PAGE_FREE + 1]; /* events by kind */
} X;

static NOCOV void nodes_visit(uint64_t *table, int level, uint64_t base,
			      uint64_t nent, uint64_t s, uint64_t e, int parent)
{
	const struct check_geo *g = &S->ck.geo;
	unsigned shift = check_level_shift(g, level);
	uint64_t first = s > base ? (s - base) >> shift : 0;
	uint64_t last = (e - 1 - base) >> shift;
	if (level >= SLAT_LAST_LEVEL)
		return;
	if (last >= nent)
		last = nent - 1;
	for (uint64_t i = first; i <= last; i++) {
		uint64_t pte = table[i];
		struct check_desc d;
		char why[8];
		if (!pte || S->fmt->decode(g, &S->cfg, pte, level, &d, why,
					   sizeof(why)) != CHECK_DESC_TABLE)
			continue;
		uint64_t *next = checker_phys_to_virt(&S->ck, d.oa);
		if (!next)
			continue; /* the checker reports it */
		if (X.nn == X.cap) {
			X.cap = X.cap ? 2 * X.cap : 64;
			X.n = realloc(X.n, X.cap * sizeof(*X.n));
			if (!X.n)
				abort();
		}
		int k = (int)X.nn++;
		X.n[k] = (struct tnode){
			.base = base + (i << shift), .size = 1ull << shift,
			.level = level, .ptep = &table[i], .desc = pte,
			.pa = d.oa, .parent = parent,
		};
		S->node_of[(d.oa - S->h.pa_base) / S->G] = k;
		nodes_visit(next, level + 1, base + (i << shift), g->entries, s,
			    e, k);
	}
}

/* Before an operation on [s, e): the tables meeting it, parents first. */
static NOCOV void nodes_collect(uint64_t s, uint64_t e)
{
	X.nn = 0;
	if (e > S->ia_end)
		e = S->ia_end;
	if (s >= e)
		return;
	uint64_t *root = checker_phys_to_virt(&S->ck, slat_pa_v(S->t.root_pa));
	CHECK(root, "root outside the arena");
	nodes_visit(root, S->ck.geo.start_level, 0, S->ck.geo.root_entries, s,
		    e, -1);
}

static NOCOV void nodes_release(void)
{
	for (size_t i = 0; i < X.nn; i++)
		S->node_of[(X.n[i].pa - S->h.pa_base) / S->G] = -1;
	X.nn = 0;
}

/* Can the walker still reach node @i from the root? */
static NOCOV bool node_linked(int i)
{
	for (; i >= 0; i = X.n[i].parent)
		if (__atomic_load_n(X.n[i].ptep, __ATOMIC_RELAXED) != X.n[i].desc)
			return false;
	return true;
}

static NOCOV bool is_leaf(uint64_t pte, int level)
{
	struct check_desc d;
	char why[8];
	return pte && S->fmt->decode(&S->ck.geo, &S->cfg, pte, level, &d, why,
				     sizeof(why)) == CHECK_DESC_LEAF;
}

static NOCOV bool ev_covers(const struct slat_hosted_event *ev,
			    const struct tnode *n)
{
	bool strict = n->strict;
	switch (ev->kind) {
	case SLAT_EV_TLBI_VMID:
		return true;
	case SLAT_EV_TLBI_RANGE:
		if (strict)
			return ev->addr <= n->base &&
			       ev->addr + ev->size >= n->base + n->size;
		/* Any address of the span drops the cached entry that points
		 * to the table; an emptied table has no leaf left. */
		return ev->addr < n->base + n->size &&
		       ev->addr + ev->size > n->base;
	case SLAT_EV_TLBI_IPA:
		/* The same, by one IPA (the entry's level, or any). */
		return !strict && ev->addr - n->base < n->size &&
		       (ev->level == SLAT_LEVEL_ANY || ev->level == n->level);
	default:
		return false;
	}
}

static NOCOV void observe(void *arg, const struct slat_hosted_event *ev)
{
	(void)arg;
	if (!X.active)
		return;
	X.ev[ev->kind]++;
	bool tlbi = ev->kind == SLAT_EV_TLBI_IPA ||
		    ev->kind == SLAT_EV_TLBI_RANGE ||
		    ev->kind == SLAT_EV_TLBI_VMID;
	if (tlbi) {
		CHECK(S->fmt->tlbi_by_address || ev->kind == SLAT_EV_TLBI_VMID,
		      "invalidation by address on a format without it");
		if (X.split && ev->kind == SLAT_EV_TLBI_IPA) {
			struct slat_leaf l;
			CHECK(plain_lookup(&S->t, slat_ipa(ev->addr), &l) ==
				      SLAT_E_NOENT,
			      "split: TLB invalidation of %#" PRIx64
			      " while it is mapped (no break before make)",
			      ev->addr);
		}
		for (size_t i = 0; i < X.nn; i++) {
			struct tnode *n = &X.n[i];
			if (n->covered || n->freed || !ev_covers(ev, n) ||
			    node_linked((int)i))
				continue;
			/*
			 * Break-before-make: where the entry itself is still
			 * reachable, it must not hold the block that replaces
			 * the table yet.
			 */
			uint64_t now = __atomic_load_n(n->ptep, __ATOMIC_RELAXED);
			bool reachable = n->parent < 0 || node_linked(n->parent);
			CHECK(!S->fmt->split_bbm || !reachable ||
				      !is_leaf(now, n->level),
			      "block %#" PRIx64 "+%#" PRIx64 " published over "
			      "the table it replaces before the invalidation",
			      n->base, n->size);
			n->covered = true;
		}
		return;
	}
	if (ev->kind != SLAT_EV_PAGE_FREE)
		return;
	CHECK(ev->size == S->G, "a root freed by an operation");
	uint8_t *va = (uint8_t *)(uintptr_t)ev->addr;
	uint64_t idx = (uint64_t)(va - S->h.arena) / S->G;
	CHECK(idx < S->h.nr_pages, "freed page outside the arena");
	int k = S->node_of[idx];
	CHECK(k >= 0, "page %p freed: not a table meeting the range before "
		      "the operation", (void *)va);
	struct tnode *n = &X.n[k];
	CHECK(!n->freed, "table %#" PRIx64 "+%#" PRIx64 " freed twice",
	      n->base, n->size);
	CHECK(n->covered,
	      "table %#" PRIx64 "+%#" PRIx64 " (level %d) freed before an "
	      "invalidation covering it was issued after its unlink",
	      n->base, n->size, n->level + 1);
	n->freed = true;
}

/* Start observing an operation on [s, e). */
static NOCOV void observe_begin(uint64_t s, uint64_t e)
{
	memset(X.ev, 0, sizeof(X.ev));
	X.split = false;
	nodes_collect(s, e);
	X.active = true;
}

/*
 * After the operation: a table no longer reachable was freed, a table
 * freed is no longer reachable (a block over it on Arm was published after
 * the invalidation: the observer checked it).
 */
static NOCOV void observe_end(void)
{
	X.active = false;
	for (size_t i = 0; i < X.nn; i++) {
		const struct tnode *n = &X.n[i];
		bool linked = node_linked((int)i);
		CHECK(linked || n->freed,
		      "table %#" PRIx64 "+%#" PRIx64 " (level %d) unlinked "
		      "but not freed", n->base, n->size, n->level + 1);
		CHECK(!linked || !n->freed,
		      "table %#" PRIx64 "+%#" PRIx64 " (level %d) freed but "
		      "still linked", n->base, n->size, n->level + 1);
	}
	nodes_release();
}

static size_t tlbis(void)
{
	return X.ev[SLAT_EV_TLBI_IPA] + X.ev[SLAT_EV_TLBI_RANGE] +
	       X.ev[SLAT_EV_TLBI_VMID];
}

/* ------------------------------------------------------------ decoding */

/* A level whose entry size serves as an address unit. */
static int decode_level(struct in *in)
{
	int n = 4 - S->start_level;
	return S->start_level + (int)(g8(in) % (unsigned)n);
}

/*
 * An IPA: mostly window base + k units of some level + j pages (j may be
 * negative); sometimes any 64-bit value (error paths).
 */
static uint64_t decode_ipa(struct in *in)
{
	uint8_t sel = g8(in);
	if (sel >= 250)
		return g64(in);
	uint64_t base = F.wbase[sel & 1];
	int l = decode_level(in);
	uint64_t unit = LSIZE(l);
	uint64_t k = g8(in) % 8;
	int64_t j = (int8_t)g8(in) % 16;
	uint64_t v = base + k * unit;
	if (j < 0 && (uint64_t)(-j) * S->G > v - base)
		j = -j;
	v += (uint64_t)(j * (int64_t)S->G);
	if (v >= base + F.wsize)
		v = base + (v - base) % F.wsize;
	return v;
}

static uint64_t decode_size(struct in *in)
{
	uint8_t sel = g8(in);
	if (sel >= 250)
		return g64(in);
	int l = decode_level(in);
	uint64_t n = g8(in) % 4;
	int64_t j = (int8_t)g8(in) % 16;
	uint64_t v = n * LSIZE(l);
	if (j < 0 && (uint64_t)(-j) * S->G >= v)
		j = -j;
	v += (uint64_t)(j * (int64_t)S->G);
	return v ? v : S->G;
}

/* Output address for a map of [ipa..): same as now, aligned, or offset. */
static uint64_t decode_pa(struct in *in, uint64_t ipa)
{
	uint8_t sel = g8(in);
	if (sel >= 250)
		return g64(in);
	struct model_run r;
	if (sel % 4 == 0 && model_find(S->m, ipa, &r))
		return r.pa + (ipa - r.start);
	uint64_t top = LSIZE(S->start_level);
	uint64_t slots = S->pa_end / top;
	uint64_t base = (g8(in) % (slots ? slots : 1)) * top;
	uint64_t v = base + (ipa & (top - 1));
	if (sel % 4 == 2)
		v += (uint64_t)(g8(in) % 64) * S->G;
	if (sel % 4 == 3)
		v += (uint64_t)(g8(in) % 8) * LSIZE(2 > S->start_level ? 2 : 3);
	return v & (S->pa_end - 1);
}

static uint32_t decode_attrs(struct in *in)
{
	uint8_t a = g8(in), b = g8(in);
	if (a >= 252)
		return (uint32_t)g16(in) << (b % 8); /* anything */
	uint32_t v = 0;
	if (a & 1)
		v |= SLAT_R;
	if (a & 2)
		v |= SLAT_W;
	if (a & 4)
		v |= SLAT_XK;
	if (a & 8)
		v |= SLAT_XU;
	switch ((a >> 4) & 3) {
	case 0:
	case 3: v |= SLAT_MT_NORMAL; break;
	case 1: v |= SLAT_MT_NORMAL_NC; break;
	case 2: v |= SLAT_MT_DEVICE; break;
	}
	if (b & 0x80)
		v |= SLAT_SW(b);
	if ((a & 0xc0) == 0xc0 && S->cfg.format == SLAT_FMT_EPT)
		v |= (b & 1) ? SLAT_IPAT : SLAT_SVE;
	return v;
}

/* A flush policy: the four, or an invalid one. */
static enum slat_tlbi_policy decode_policy(struct in *in, bool *bad)
{
	uint8_t p = g8(in);
	*bad = p == 0xff;
	return *bad ? (enum slat_tlbi_policy)7 : (enum slat_tlbi_policy)(p % 4);
}

/* The cache holding exactly @n pages. */
static void set_cache(uint32_t n)
{
	if (S->cache.nr > n)
		slat_hosted_cache_shrink(&S->h, &S->cache, n);
	if (n > S->cache.nr &&
	    slat_hosted_cache_topup(&S->h, &S->cache, n) != SLAT_OK)
		fuzz_fail("arena exhausted (%u pages)", n);
	CHECK(S->cache.nr == n, "cache of %u pages, not %u", S->cache.nr, n);
}

/*
 * A cache: full (slat_pages_needed) or short; returns whether short. The
 * cache keeps its pages from one operation to the next and gives back
 * what it holds beyond the count, so pages are zeroed only once they were
 * used.
 */
static bool prepare_cache(struct in *in, const struct slat_need *req)
{
	uint8_t c = g8(in);
	int64_t counted = slat_pages_needed(&S->t, req);
	CHECK(counted >= 0, "slat_pages_needed() refused valid input: %s",
	      check_status_name((int)counted));
	uint64_t need = (uint64_t)counted;
	uint32_t n;
	bool shortc;
	if (c < 200) {
		n = need > CACHE_CAP ? CACHE_CAP : (uint32_t)need;
		shortc = need > CACHE_CAP;
	} else {
		n = need ? (uint32_t)(c % (need < CACHE_CAP ? need : CACHE_CAP))
			 : 0;
		shortc = true;
	}
	set_cache(n);
	return shortc;
}

/* ------------------------------------------------------------ predictions */

/* The input error the range deserves, or 0. */
static int range_error(uint64_t ipa, uint64_t size)
{
	if ((ipa | size) & (S->G - 1))
		return SLAT_E_ALIGN;
	if (size == 0 || ipa + size < ipa || ipa + size > S->ia_end)
		return SLAT_E_RANGE;
	return 0;
}

static bool is_input_error(int ret)
{
	return ret == SLAT_E_ALIGN || ret == SLAT_E_RANGE ||
	       ret == SLAT_E_ATTR || ret == SLAT_E_INVAL;
}

/* A block (not a page) may be a leaf at @level. */
static bool block_level(int level)
{
	return level >= 0 && level < SLAT_LAST_LEVEL &&
	       (S->leaf_levels & (1u << level));
}

/*
 * Bound the work of a map: the size cut where it would write more than
 * MAX_LEAVES leaves (the largest that fit, as the core picks them on an
 * empty range: pages up to the first block boundary, blocks, pages).
 */
static NOCOV uint64_t map_bound(uint64_t ipa, uint64_t pa, uint64_t size,
				uint32_t flags)
{
	unsigned cap = SLAT_MAP_CAP_SHIFT(flags);
	uint64_t a = ipa, end = ipa + size;
	for (unsigned n = 0; a < end; n++) {
		if (n == MAX_LEAVES)
			return a - ipa;
		uint64_t step = S->G;
		for (int l = S->start_level; l < SLAT_LAST_LEVEL; l++) {
			uint64_t ls = LSIZE(l);
			if (!block_level(l) || (cap && ls > (1ull << cap)))
				continue;
			if (((a | (pa + (a - ipa))) & (ls - 1)) == 0 &&
			    end - a >= ls) {
				step = ls;
				break;
			}
		}
		a += step;
	}
	return size;
}

struct budget {
	uint64_t n, max;
	uint64_t cut;
};

static NOCOV int budget_cb(void *arg, const struct check_leaf *l)
{
	struct budget *b = arg;
	if (!l->valid)
		return 0;
	if (b->n++ < b->max)
		return 0;
	b->cut = l->base;
	return 1;
}

/*
 * Bound the work of an operation over what the table holds: [ipa, ipa +
 * size) cut before its (MAX_LEAVES + 1)-th leaf, so that the operation and
 * the check after it read at most that many leaves (and the blocks it may
 * split at its two ends). Recover may read a whole table of leaves, so that
 * any table can be promoted.
 */
struct pages_arg {
	uint64_t pages, max;
};

static NOCOV int pages_cb(void *arg, const struct model_run *r)
{
	struct pages_arg *a = arg;
	a->pages += (r->end - r->start) / S->G;
	return a->pages > a->max;
}

static NOCOV uint64_t leaf_budget_of(uint64_t ipa, uint64_t size,
				     uint64_t max)
{
	/* at most one leaf per page: few pages mapped, nothing to cut */
	struct pages_arg pa = { 0, max };
	model_for_each(S->m, ipa, ipa + size, pages_cb, &pa);
	if (pa.pages <= max)
		return size;
	struct budget b = { 0, max, 0 };
	if (checker_walk(&S->ck, ipa, ipa + size, budget_cb, &b) < 0)
		fuzz_fail("raw walk: %s", S->ck.msg);
	return b.cut > ipa ? b.cut - ipa : size;
}

static uint64_t leaf_budget(uint64_t ipa, uint64_t size)
{
	return leaf_budget_of(ipa, size, MAX_LEAVES);
}

/*
 * Whether map accepts @attrs. SLAT_IPAT and SLAT_SVE are EPT bits that the
 * Arm format refuses; the checker's Arm rules predate them.
 */
static bool attrs_ok(uint32_t attrs)
{
	if (S->cfg.format == SLAT_FMT_ARM_S2 && (attrs & (SLAT_IPAT | SLAT_SVE)))
		return false;
	return S->fmt->attrs_ok(&S->cfg, attrs);
}

/* The level whose leaves are @size bytes, or -2 (none). */
static int level_of_size(uint64_t size)
{
	for (int l = S->start_level; l <= SLAT_LAST_LEVEL; l++)
		if (LSIZE(l) == size &&
		    (l == SLAT_LAST_LEVEL || block_level(l)))
			return l;
	return -2;
}

/* ------------------------------------------------------------ operations */

static void op_map(struct in *in)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint64_t pa = decode_pa(in, ipa);
	uint32_t attrs = decode_attrs(in);
	uint8_t f = g8(in);
	uint32_t flags = 0;
	if (f & 1)
		flags |= SLAT_MAP_NO_REPLACE;
	if (f & 2)
		flags |= SLAT_SHARED;
	if ((f >> 2) % 4 == 1)
		flags |= SLAT_MAP_PAGES;
	if ((f >> 2) % 4 == 2)
		flags |= SLAT_MAP_CAP(12 + (f >> 4) % 40);
	if (f == 0xff)
		flags |= 1u << 20; /* unknown flag */
	/* bound the work */
	if (!range_error(ipa, size)) {
		size = map_bound(ipa, pa, size, flags);
		size = leaf_budget(ipa, size);
	}

	snprintf(F.desc, sizeof(F.desc),
		 "map(ipa %#" PRIx64 ", size %#" PRIx64 ", pa %#" PRIx64
		 ", attrs %#x, flags %#x)", ipa, size, pa, attrs, flags);
	int err = range_error(ipa, size);
	if (!err && (pa & (S->G - 1)))
		err = SLAT_E_ALIGN;
	if (!err && (pa >= S->pa_end || size > S->pa_end - pa))
		err = SLAT_E_RANGE;
	if (!err && !attrs_ok(attrs))
		err = SLAT_E_ATTR;
	if (flags & (1u << 20))
		err = SLAT_E_INVAL;
	bool shortc = !err && prepare_cache(in, SLAT_NEED(
					      .kind = SLAT_OP_MAP,
					      .ipa = slat_ipa(ipa), .size = size,
					      .pa = slat_pa(pa), .attrs = attrs,
					      .flags = flags));
	if (!err && known_map_misaligned_block && size > S->G &&
	    !(size & (size - 1)) && level_of_size(size) >= 0 &&
	    !(pa & (size - 1)) && (ipa & (size - 1))) {
		/* a known core bug (FUZZ_KNOWN_BUGS): leave it alone */
		strncat(F.desc, " skipped: map-misaligned-block",
			sizeof(F.desc) - strlen(F.desc) - 1);
		return;
	}
	uint64_t ts = ipa, te = ipa + size;
	if (!err)
		touched(ipa, ipa + size, &ts, &te);
	bool conflict = !err && (flags & SLAT_MAP_NO_REPLACE) &&
			model_map_conflicts(S->m, ipa, ipa + size, pa, attrs);
	if (!err)
		collect(ipa, ipa + size);
	uint64_t done = 0xdead;
	observe_begin(ipa, err ? ipa : ipa + size);
	struct slat_op args = { .flags = flags, .cache = &S->cache };
	int ret =
		slat_map(&S->t, slat_ipa(ipa), size, slat_pa(pa), attrs, &args);
	done = args.done;
	observe_end();
	if (err) {
		CHECK(is_input_error(ret),
		      "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		CHECK(tlbis() == 0, "invalidation after refusing the input");
		return;
	}
	CHECK(!is_input_error(ret), "valid input refused with %s",
	      check_status_name(ret));
	if (conflict) {
		CHECK(ret == SLAT_E_EXISTS, "NO_REPLACE over a different "
					    "mapping returned %s",
		      check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after SLAT_E_EXISTS",
		      done);
		CHECK(!checker_map_bounds(&S->ck, pre.v, pre.n, ipa, 0, pa),
		      "SLAT_E_EXISTS, yet: %s", S->ck.msg);
		check_range(ts, te);
		return;
	}
	check_progress(ret, done, size, shortc, true);
	CHECK(!checker_map_bounds(&S->ck, pre.v, pre.n, ipa, done, pa),
	      "mapping outside what was asked: %s", S->ck.msg);
	uint64_t written = model_map(S->m, ipa, done, pa, attrs);
	if (ret >= 0)
		CHECK((ret == SLAT_NOTHING_TO_DO) == (written == 0),
		      "returned %s but the model wrote %" PRIu64 " pages",
		      check_status_name(ret), written / S->G);
	check_range(ts, te);
}

static void op_unmap_wrprotect(struct in *in, bool wrprotect)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	bool bad_policy;
	enum slat_tlbi_policy policy = decode_policy(in, &bad_policy);
	if (!range_error(ipa, size))
		size = leaf_budget(ipa, size);
	snprintf(F.desc, sizeof(F.desc),
		 "%s(ipa %#" PRIx64 ", size %#" PRIx64 ", policy %d)",
		 wrprotect ? "wrprotect" : "unmap", ipa, size, (int)policy);
	int err = range_error(ipa, size);
	if (bad_policy)
		err = SLAT_E_INVAL;
	enum slat_op_kind op = wrprotect ? SLAT_OP_WRPROTECT : SLAT_OP_UNMAP;
	bool shortc = !err && prepare_cache(in, SLAT_NEED(
					      .kind = op, .ipa = slat_ipa(ipa),
					      .size = size));
	uint64_t ts = ipa, te = ipa + size;
	if (!err)
		touched(ipa, ipa + size, &ts, &te);
	uint64_t done = 0xdead;
	observe_begin(ipa, err ? ipa : ipa + size);
	struct slat_op args = { .flush = policy, .cache = &S->cache };
	int ret = wrprotect ? slat_wrprotect(&S->t, slat_ipa(ipa), size, &args)
			    : slat_unmap(&S->t, slat_ipa(ipa), size, &args);
	done = args.done;
	observe_end();
	if (err) {
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		CHECK(tlbis() == 0, "invalidation after refusing the input");
		return;
	}
	check_progress(ret, done, size, shortc, wrprotect);
	if (wrprotect)
		model_wrprotect(S->m, ipa, done);
	else
		model_unmap(S->m, ipa, done);
	check_range(ts, te);
}

struct relax_arg {
	uint32_t perms;
	bool bad;
};

static int relax_attr_cb(void *arg, const struct model_run *r)
{
	struct relax_arg *a = arg;
	if (!attrs_ok(r->attrs | a->perms))
		a->bad = true;
	return 0;
}

static void op_relax(struct in *in)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint8_t pb = g8(in);
	uint32_t perms = pb & 0xf;
	if (pb >= 0xf0)
		perms = (uint32_t)pb << 4; /* not permissions */
	uint8_t f = g8(in);
	uint32_t flags = ((f & 1) ? SLAT_SHARED : 0) |
			 ((f & 2) ? SLAT_NO_HOLES : 0);
	if (!range_error(ipa, size))
		size = leaf_budget(ipa, size);
	snprintf(F.desc, sizeof(F.desc),
		 "relax(ipa %#" PRIx64 ", size %#" PRIx64 ", perms %#x, "
		 "flags %#x)", ipa, size, perms, flags);
	int err = range_error(ipa, size);
	bool hole = false, bad = false;
	if (!err) {
		hole = (flags & SLAT_NO_HOLES) &&
		       !model_fully_mapped(S->m, ipa, ipa + size);
		struct relax_arg ra = { perms, false };
		model_for_each(S->m, ipa, ipa + size, relax_attr_cb, &ra);
		/* Validity is the leaves' with the permissions added. */
		bad = ra.bad || (perms & ~SLAT_PERMS);
	}
	const struct slat_need *need = SLAT_NEED(
		.kind = SLAT_OP_RELAX, .ipa = slat_ipa(ipa), .size = size,
		.attrs = perms, .flags = flags);
	bool shortc = false;
	/* Counting refuses what relax refuses before it walks. */
	if (!err && (perms & ~SLAT_PERMS)) {
		g8(in);
		CHECK(slat_pages_needed(&S->t, need) == SLAT_E_ATTR,
		      "slat_pages_needed() took permissions that are not");
	} else if (!err) {
		shortc = prepare_cache(in, need);
	}
	uint64_t ts = ipa, te = ipa + size;
	if (!err) {
		touched(ipa, ipa + size, &ts, &te);
		collect(ipa, ipa + size);
	}
	uint64_t done = 0xdead;
	observe_begin(ipa, err ? ipa : ipa + size);
	struct slat_op args = { .flags = flags, .cache = &S->cache };
	int ret = slat_relax(&S->t, slat_ipa(ipa), size, perms, &args);
	done = args.done;
	observe_end();
	if (err) {
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		return;
	}
	if (hole || bad) {
		CHECK((hole && ret == SLAT_E_NOENT) ||
			      (bad && ret == SLAT_E_ATTR),
		      "returned %s, expected %s", check_status_name(ret),
		      hole ? "SLAT_E_NOENT" : "SLAT_E_ATTR");
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		check_range(ts, te);
		return;
	}
	check_progress(ret, done, size, shortc, true);
	uint64_t de = ipa + done;
	bool change = false;
	for (size_t i = 0; i < pre.n; i++) {
		const struct check_leaf *l = &pre.v[i];
		uint64_t s0 = l->base > ipa ? l->base : ipa;
		if (s0 >= de)
			continue;
		bool gains = (l->attrs | perms) & ~l->attrs & SLAT_PERMS;
		if (gains || !(l->attrs & SLAT_YOUNG))
			change = true;
		if (gains || (l->attrs & SLAT_YOUNG))
			continue;
		/* an old leaf only made young may be made young whole */
		if (l->base < ipa)
			model_old_to_unknown(S->m, l->base, ipa);
		if (l->base + l->size > de)
			model_old_to_unknown(S->m, de, l->base + l->size);
	}
	if (ret == SLAT_NOTHING_TO_DO)
		CHECK(!change, "SLAT_NOTHING_TO_DO but a leaf lacked a "
			       "permission or was old");
	if (ret == SLAT_OK)
		CHECK(change, "SLAT_OK but nothing needed changing");
	model_relax(S->m, ipa, done, perms, NULL);
	check_range(ts, te);
}

static void op_mkyoung(struct in *in)
{
	uint64_t ipa = decode_ipa(in) + g16(in) % S->G; /* any byte */
	uint32_t flags = (g8(in) & 1) ? SLAT_SHARED : 0;
	snprintf(F.desc, sizeof(F.desc), "mkyoung(ipa %#" PRIx64 ")", ipa);
	int ret = slat_mkyoung(&S->t, slat_ipa(ipa), flags);
	if (ipa >= S->ia_end) {
		CHECK(ret == SLAT_E_RANGE, "mkyoung beyond the IPA size "
					   "returned %s",
		      check_status_name(ret));
		return;
	}
	struct check_leaf l;
	int k = checker_leaf_at(&S->ck, ipa, &l);
	CHECK(k >= 0, "raw walk: %s", S->ck.msg);
	if (k == 0) {
		CHECK(ret == SLAT_E_NOENT, "returned %s on a hole",
		      check_status_name(ret));
		return;
	}
	/* now young: the leaf was old iff SLAT_OK */
	struct model_run r;
	CHECK(model_find(S->m, ipa, &r), "model has a hole where the table "
					 "has a leaf");
	if (r.young != MODEL_YOUNG_UNKNOWN)
		CHECK(ret == (r.young == MODEL_YOUNG ? SLAT_NOTHING_TO_DO
						     : SLAT_OK),
		      "returned %s on a leaf the model knows %s",
		      check_status_name(ret),
		      r.young == MODEL_YOUNG ? "young" : "old");
	else
		CHECK(ret == SLAT_OK || ret == SLAT_NOTHING_TO_DO,
		      "returned %s", check_status_name(ret));
	model_set_young(S->m, l.base, l.base + l.size, MODEL_YOUNG);
	check_range(l.base, l.base + l.size);
}

static void op_tcy(struct in *in)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint8_t f = g8(in);
	bool mkold = f & 1;
	uint32_t flags = (f & 2) ? SLAT_SHARED : 0;
	if (!range_error(ipa, size))
		size = leaf_budget(ipa, size);
	snprintf(F.desc, sizeof(F.desc),
		 "test_clear_young(ipa %#" PRIx64 ", size %#" PRIx64
		 ", mkold %d)", ipa, size, mkold);
	int err = range_error(ipa, size);
	uint64_t ts = ipa, te = ipa + size;
	if (!err) {
		touched(ipa, ipa + size, &ts, &te);
		collect(ipa, ipa + size);
	}
	int ret = slat_test_clear_young(&S->t, slat_ipa(ipa), size, mkold,
					SLAT_OP(.flags = flags));
	if (err) {
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		return;
	}
	int young = 0;
	for (size_t i = 0; i < pre.n; i++)
		if (pre.v[i].attrs & SLAT_YOUNG)
			young = 1;
	int want = young ? SLAT_WAS_YOUNG : SLAT_OK;
	int msum = model_young_summary(S->m, ipa, ipa + size);
	CHECK(ret == want, "returned %d, the table had %s leaves", ret,
	      young ? "young" : "no young");
	CHECK(msum < 0 || msum == young, "model and table disagree on young");
	if (mkold)
		for (size_t i = 0; i < pre.n; i++)
			model_set_young(S->m, pre.v[i].base,
					pre.v[i].base + pre.v[i].size,
					MODEL_OLD);
	check_range(ts, te);
}

static void op_lookup(struct in *in)
{
	uint64_t ipa = decode_ipa(in) + g16(in) % S->G;
	snprintf(F.desc, sizeof(F.desc), "lookup(ipa %#" PRIx64 ")", ipa);
	struct slat_leaf l;
	int ret = slat_lookup(&S->t, slat_ipa(ipa), &l);
	if (ipa >= S->ia_end) {
		CHECK(ret == SLAT_E_RANGE, "lookup beyond the IPA size "
					   "returned %s",
		      check_status_name(ret));
		return;
	}
	struct model_run r;
	if (!model_find(S->m, ipa, &r)) {
		CHECK(ret == SLAT_E_NOENT, "lookup of a hole returned %s",
		      check_status_name(ret));
		return;
	}
	CHECK(ret == SLAT_OK, "lookup of a mapped IPA returned %s",
	      check_status_name(ret));
	uint64_t want = r.pa + (ipa - r.start);
	CHECK(slat_pa_v(l.pa) == want, "lookup pa %#" PRIx64 ", model %#" PRIx64,
	      slat_pa_v(l.pa), want);
	/* dirty state is the leaf's: a page the model calls clean may share
	 * a dirty leaf, a dirty one may not be in a clean leaf */
	CHECK((l.attrs & ~(SLAT_YOUNG | SLAT_DIRTY)) == r.attrs &&
		      (!r.dirty || (l.attrs & SLAT_DIRTY)),
	      "lookup attrs %#x, model %#x%s", l.attrs, r.attrs,
	      r.dirty ? " dirty" : "");
	CHECK(r.young == MODEL_YOUNG_UNKNOWN ||
		      (r.young == MODEL_YOUNG) == !!(l.attrs & SLAT_YOUNG),
	      "lookup young state differs from the model");
	CHECK(slat_ipa_v(l.base) <= ipa && ipa - slat_ipa_v(l.base) < l.size,
	      "lookup leaf %#" PRIx64 "+%#" PRIx64 " does not hold the IPA",
	      slat_ipa_v(l.base), l.size);
}

/* ------------------------------------------------------------ split */

/* Table pages that splitting one block at @level down to @target takes. */
static uint64_t pages_for_block(int level, int target)
{
	uint64_t n = 0, per = 1;
	for (int l = level + 1; l <= target; l++) {
		n += per;
		per *= S->ck.geo.entries;
	}
	return n;
}

/*
 * split(ipa, size, leaf size, flags): every block meeting the range becomes
 * a table down to leaves of that size, each translation kept. Predicted
 * from the raw leaves before the call: which blocks are split in address
 * order, where a cache of so many pages runs out (before the first block
 * it cannot finish, *done there), how many pages it takes, one by-IPA
 * invalidation of each block while it is invalid on Arm and none on EPT,
 * no free, no cache maintenance.
 */
static void op_split(struct in *in)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint8_t lb = g8(in), fb = g8(in);
	uint64_t leaf_size;
	switch (lb % 8) {
	case 0: case 1:
		leaf_size = 0; /* the granule */
		break;
	case 2: case 3: case 4: case 5:
		leaf_size = LSIZE(S->start_level +
				  (int)((lb >> 3) % (unsigned)(4 - S->start_level)));
		break;
	case 6: { /* not a size of the format */
		static const uint64_t odd[] = { 1, 3, 2048, 3ull << 12,
						1ull << 63, 0x10000000000000ull };
		leaf_size = odd[(lb >> 3) % 6];
		break;
	}
	default:
		leaf_size = 2 * LSIZE(S->start_level +
				      (int)((lb >> 3) % (unsigned)(4 - S->start_level)));
		break;
	}
	uint32_t flags = (fb & 1) ? SLAT_SPLIT_NO_SKIP : 0;
	if (fb == 0xff)
		flags |= 1u << 20; /* unknown flag */
	if ((fb & 0xf0) == 0xe0)
		flags |= SLAT_SHARED; /* not a flag of split */
	int target = leaf_size ? level_of_size(leaf_size) : SLAT_LAST_LEVEL;
	int err = range_error(ipa, size);
	if (flags & ~SLAT_SPLIT_NO_SKIP)
		err = SLAT_E_INVAL;
	if (!err && target == -2)
		err = SLAT_E_INVAL;

	uint64_t ts = ipa, te = ipa + size;
	if (!err) {
		size = leaf_budget(ipa, size);
		touched(ipa, ipa + size, &ts, &te);
		collect(ts, te);
		/*
		 * Bound the work to two tables of leaves: no block split into
		 * more (a larger leaf size instead), and the range ends
		 * before the block that would exceed it.
		 */
		const uint64_t max_leaves = 2 * (uint64_t)S->ck.geo.entries;
		uint64_t total = 0;
		for (size_t i = 0; i < pre.n; i++) {
			const struct check_leaf *l = &pre.v[i];
			if (l->base >= ipa + size || l->level >= target)
				continue;
			while (target > l->level &&
			       l->size / LSIZE(target) > max_leaves) {
				target--;
				while (target > l->level &&
				       !block_level(target))
					target--;
				leaf_size = LSIZE(target);
			}
			if (l->level >= target)
				continue;
			total += l->size / LSIZE(target);
			if (total > max_leaves && l->base > ipa) {
				size = l->base - ipa;
				break;
			}
		}
		touched(ipa, ipa + size, &ts, &te);
	}
	snprintf(F.desc, sizeof(F.desc),
		 "split(ipa %#" PRIx64 ", size %#" PRIx64 ", leaf_size %#" PRIx64
		 ", flags %#x)", ipa, size, leaf_size, flags);
	if (!err) {
		/*
		 * slat_pages_needed(), which must count what the blocks there
		 * take, or short by any number of those pages.
		 */
		uint8_t c = g8(in);
		uint64_t want = 0;
		for (size_t i = 0; i < pre.n; i++) {
			const struct check_leaf *l = &pre.v[i];
			if (l->base < ipa + size && l->base + l->size > ipa &&
			    l->level < target)
				want += pages_for_block(l->level, target);
		}
		int64_t need = slat_pages_needed(
			&S->t, SLAT_NEED(.kind = SLAT_OP_SPLIT,
					 .ipa = slat_ipa(ipa), .size = size,
					 .leaf_size = leaf_size));
		CHECK(need >= 0 && (uint64_t)need == want,
		      "slat_pages_needed() %" PRId64 ", the blocks take %" PRIu64,
		      need, want);
		uint64_t n = c < 200 ? want : (uint64_t)(c - 200) % (want + 1);
		set_cache(n > CACHE_CAP ? CACHE_CAP : (uint32_t)n);
	}

	/* the prediction */
	uint64_t want_done = size, popped = 0, nsplit = 0;
	bool want_nomem = false;
	const struct check_leaf *stop = NULL;
	for (size_t i = 0; !err && i < pre.n; i++) {
		const struct check_leaf *l = &pre.v[i];
		if (l->base >= ipa + size || l->base + l->size <= ipa ||
		    l->level >= target)
			continue;
		uint64_t need = pages_for_block(l->level, target);
		if (S->cache.nr - popped < need) {
			want_nomem = true;
			want_done = (l->base > ipa ? l->base : ipa) - ipa;
			stop = l;
			break;
		}
		popped += need;
		nsplit++;
	}
	struct check_leaf stopped = stop ? *stop : (struct check_leaf){ 0 };

	uint32_t nr0 = S->cache.nr;
	uint64_t alloc0 = S->t.stats.pages_alloc;
	uint64_t done = 0xdead;
	observe_begin(ipa, ipa); /* nothing may be freed */
	X.split = true;
	struct slat_op args = { .flags = flags, .cache = &S->cache };
	int ret = slat_split(&S->t, slat_ipa(ipa), size, leaf_size, &args);
	done = args.done;
	observe_end();
	CHECK(X.ev[SLAT_EV_PAGE_FREE] == 0, "split freed a page");
	CHECK(X.ev[SLAT_EV_DCACHE_CLEAN_INVAL] + X.ev[SLAT_EV_ICACHE_INVAL] == 0,
	      "split did cache maintenance (the translations stay)");
	if (err) {
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		CHECK(tlbis() == 0 && S->cache.nr == nr0,
		      "refused input, but invalidated or took pages");
		return;
	}
	CHECK(ret == (want_nomem ? SLAT_E_NOMEM : SLAT_OK),
	      "returned %s with %u pages, expected %s", check_status_name(ret),
	      nr0, want_nomem ? "SLAT_E_NOMEM" : "SLAT_OK");
	CHECK(done == want_done, "*done %#" PRIx64 ", expected %#" PRIx64,
	      done, want_done);
	CHECK(nr0 - S->cache.nr == popped,
	      "took %u pages, the blocks split need %" PRIu64,
	      nr0 - S->cache.nr, popped);
	CHECK(S->t.stats.pages_alloc - alloc0 == popped,
	      "pages_alloc grew by %" PRIu64 " for %" PRIu64 " pages taken",
	      S->t.stats.pages_alloc - alloc0, popped);
	if (S->fmt->split_bbm && !S->fmt->tlbi_by_address)
		/* NPT: one ASID flush per block, while it is invalid */
		CHECK(X.ev[SLAT_EV_TLBI_VMID] == nsplit && tlbis() == nsplit,
		      "%zu invalidations for %" PRIu64 " blocks split",
		      tlbis(), nsplit);
	else if (S->fmt->split_bbm)
		CHECK(X.ev[SLAT_EV_TLBI_IPA] == nsplit && tlbis() == nsplit,
		      "%zu by-IPA and %zu other invalidations for %" PRIu64
		      " blocks split", X.ev[SLAT_EV_TLBI_IPA],
		      tlbis() - X.ev[SLAT_EV_TLBI_IPA], nsplit);
	else
		CHECK(tlbis() == 0, "%zu invalidations of a split in place",
		      tlbis());
	/* no leaf larger than the target meets what was done */
	struct leafvec post = { 0 };
	collect_into(&post, ts, te);
	for (size_t i = 0; i < post.n; i++) {
		const struct check_leaf *l = &post.v[i];
		if (done && l->base < ipa + done && l->base + l->size > ipa)
			CHECK(l->level >= target,
			      "leaf %#" PRIx64 "+%#" PRIx64 " (level %d) left "
			      "by a split to level %d", l->base, l->size,
			      l->level, target);
	}
	free(post.v);
	if (want_nomem) {
		struct check_leaf l;
		CHECK(checker_leaf_at(&S->ck, ipa + done, &l) == 1 &&
			      l.base == stopped.base && l.pte == stopped.pte,
		      "the block at *done was changed");
	}
	check_range(ts, te); /* every translation kept */
	snprintf(F.note, sizeof(F.note), "%s, *done %#" PRIx64 ", %" PRIu64
		 " blocks split to level %d, %" PRIu64 " pages",
		 check_status_name(ret), done, nsplit, target, popped);
}

/* ------------------------------------------------------------ recover */

struct ml_arg {
	int lv[2];
	unsigned shift;
};

/* max_level: one of two levels, alternating with the IPA. */
static NOCOV int max_level_cb(void *arg, slat_ipa_t ipa)
{
	const struct ml_arg *a = arg;
	return a->lv[(slat_ipa_v(ipa) >> a->shift) & 1];
}

/*
 * A promotion of @n: the pre-op leaves (in @v, address order) cover its
 * span, with one set of attributes and one aligned contiguous PA range.
 */
static NOCOV bool promotable(const struct leafvec *v, const struct tnode *n,
			     uint64_t *pa, uint32_t *attrs, bool *young)
{
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v->v[mid].base < n->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t at = n->base, end = n->base + n->size;
	const uint32_t mask = ~(uint32_t)(SLAT_YOUNG | SLAT_DIRTY);
	*young = false;
	for (size_t i = lo; i < v->n && v->v[i].base < end; i++) {
		const struct check_leaf *l = &v->v[i];
		if (l->base != at)
			return false; /* a hole */
		if (at == n->base) {
			*pa = l->oa;
			*attrs = l->attrs & mask;
			if (*pa & (n->size - 1))
				return false;
		}
		if (l->oa != *pa + (l->base - n->base) ||
		    (l->attrs & mask) != *attrs)
			return false;
		*young |= (l->attrs & SLAT_YOUNG) != 0;
		at = l->base + l->size;
	}
	return at == end;
}

/*
 * recover(ipa, size, strategy, policy, max_level): every table whose span
 * the range covers, at a level that allows blocks and max_level allows,
 * outermost first: zapped (its translations gone) or promoted (one block
 * with its translation, young if any leaf was; when its leaves do not add
 * up to one block, the tables below are tried). Predicted from the tables
 * and leaves before the call; the invalidations follow the policy (and
 * none when nothing changed), every table unlinked is freed only after an
 * invalidation covering its span while unreachable, and on Arm a block
 * replaces a table only after that invalidation.
 */
static void op_recover(struct in *in)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint8_t sb = g8(in);
	enum slat_recover_strategy strategy =
		sb == 0xff ? (enum slat_recover_strategy)7
			   : (enum slat_recover_strategy)(sb % 3);
	bool bad_policy;
	enum slat_tlbi_policy policy = decode_policy(in, &bad_policy);
	uint8_t mb = g8(in);
	struct ml_arg ml = { { 0, 0 }, 0 };
	slat_max_level_fn mlf = NULL;
	if (mb >= 128) {
		ml.lv[0] = S->start_level - 1 + (mb & 7) % 6;
		ml.lv[1] = S->start_level - 1 + ((mb >> 3) & 7) % 6;
		ml.shift = (unsigned)__builtin_ctzll(LSIZE(decode_level(in)));
		mlf = max_level_cb;
	}
	if (!range_error(ipa, size))
		size = leaf_budget_of(ipa, size,
				      S->ck.geo.entries > MAX_LEAVES
					      ? S->ck.geo.entries
					      : MAX_LEAVES);
	snprintf(F.desc, sizeof(F.desc),
		 "recover(ipa %#" PRIx64 ", size %#" PRIx64 ", strategy %d, "
		 "policy %d, max_level %s %d/%d by bit %u)", ipa, size,
		 (int)strategy, (int)policy, mlf ? "on" : "off", ml.lv[0],
		 ml.lv[1], ml.shift);
	int err = range_error(ipa, size);
	if ((unsigned)strategy > SLAT_RECOVER_PROMOTE || bad_policy)
		err = SLAT_E_INVAL;
	if (err) {
		observe_begin(ipa, ipa);
		int ret = slat_recover(&S->t, slat_ipa(ipa), size,
				       SLAT_RECOVERY(.strategy = strategy,
						     .max_level = mlf,
						     .arg = &ml),
				       SLAT_OP(.flush = policy));
		observe_end();
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(tlbis() + X.ev[SLAT_EV_PAGE_FREE] == 0,
		      "refused input, but invalidated or freed");
		return;
	}

	uint64_t ts, te;
	touched(ipa, ipa + size, &ts, &te);
	collect(ipa, ipa + size);
	observe_begin(ipa, ipa + size);
	X.active = false;
	/*
	 * The prediction: which tables go, outermost first; with the zap
	 * strategies, the tables their removal empties go too (as unmap
	 * frees what it empties: no empty non-root table stays linked).
	 */
	bool zap = strategy != SLAT_RECOVER_PROMOTE;
	bool *gone = calloc(X.nn ? X.nn : 1, sizeof(*gone));
	bool *emptied = calloc(X.nn ? X.nn : 1, sizeof(*emptied));
	uint32_t *unl_children = calloc(X.nn ? X.nn : 1, sizeof(*unl_children));
	struct act {
		uint64_t base, size, pa;
		uint32_t attrs;
		bool young;
	} *acts = calloc(X.nn ? X.nn : 1, sizeof(*acts));
	if (!gone || !emptied || !unl_children || !acts)
		abort();
	size_t nacts = 0, unlinked = 0, nemptied = 0, leaves = 0;
	for (size_t i = 0; i < X.nn; i++) {
		const struct tnode *n = &X.n[i];
		if (n->parent >= 0 && gone[n->parent]) {
			gone[i] = true;
			unlinked++;
			continue;
		}
		if (!block_level(n->level) || n->base < ipa ||
		    n->base + n->size > ipa + size ||
		    (mlf && mlf(&ml, slat_ipa(n->base)) > n->level))
			continue;
		struct act a = { n->base, n->size, 0, 0, false };
		if (strategy == SLAT_RECOVER_PROMOTE &&
		    !promotable(&pre, n, &a.pa, &a.attrs, &a.young))
			continue;
		acts[nacts++] = a;
		gone[i] = true;
		unlinked++;
	}
	/* what goes with what it holds needs its whole span invalidated */
	for (size_t i = 0; i < X.nn; i++)
		X.n[i].strict = gone[i] && strategy != SLAT_RECOVER_ZAP_LEAF;
	for (size_t i = X.nn; zap && i-- > 0;) {
		const struct tnode *n = &X.n[i];
		bool unl = gone[i];
		if (!unl && unl_children[i]) {
			const uint64_t *tp = checker_phys_to_virt(&S->ck, n->pa);
			uint32_t used = 0;
			for (uint32_t k = 0; k < S->ck.geo.entries; k++)
				used += tp[k] != 0;
			if (used == unl_children[i]) {
				emptied[i] = unl = true;
				unlinked++;
				nemptied++;
			}
		}
		if (unl && n->parent >= 0)
			unl_children[n->parent]++;
	}
	for (size_t k = 0; k < nacts; k++)
		for (size_t i = 0; i < pre.n; i++)
			leaves += pre.v[i].base >= acts[k].base &&
				  pre.v[i].base < acts[k].base + acts[k].size;
	free(gone);
	free(unl_children);
	if (nemptied && strategy == SLAT_RECOVER_ZAP_TABLE &&
	    known_zap_table_empty_parent) {
		/* a known core bug (FUZZ_KNOWN_BUGS): leave it alone */
		strncat(F.desc, " skipped: zap-table-empty-parent",
			sizeof(F.desc) - strlen(F.desc) - 1);
		nodes_release();
		free(emptied);
		free(acts);
		return;
	}
	X.active = true;

	uint32_t nr0 = S->cache.nr;
	int ret = slat_recover(&S->t, slat_ipa(ipa), size,
			       SLAT_RECOVERY(.strategy = strategy,
					     .max_level = mlf, .arg = &ml),
			       SLAT_OP(.flush = policy));
	for (size_t i = 0; i < X.nn; i++)
		CHECK(!emptied[i] || !node_linked((int)i),
		      "recover (strategy %d) left table %#" PRIx64 "+%#" PRIx64
		      " (level %d) linked with no entry left", (int)strategy,
		      X.n[i].base, X.n[i].size, X.n[i].level + 1);
	free(emptied);
	observe_end();
	CHECK(ret == SLAT_OK, "returned %s", check_status_name(ret));
	CHECK(S->cache.nr == nr0, "recover took pages from a cache");
	CHECK(X.ev[SLAT_EV_DCACHE_CLEAN_INVAL] + X.ev[SLAT_EV_ICACHE_INVAL] == 0,
	      "recover did cache maintenance");
	CHECK(X.ev[SLAT_EV_PAGE_FREE] == unlinked,
	      "%zu pages freed, %zu tables expected to go",
	      X.ev[SLAT_EV_PAGE_FREE], unlinked);
	if (!nacts)
		CHECK(tlbis() == 0, "recover changed nothing, but invalidated");
	if (S->fmt->tlbi_by_address) {
		size_t nipa = X.ev[SLAT_EV_TLBI_IPA];
		size_t nrange = X.ev[SLAT_EV_TLBI_RANGE];
		size_t nvmid = X.ev[SLAT_EV_TLBI_VMID];
		bool zap_leaf = strategy == SLAT_RECOVER_ZAP_LEAF;
		switch (policy) {
		case SLAT_FLUSH_ENTRY: {
			/* one for each leaf zapped (by IPA) and each table
			 * unlinked (the observer checks what covers it) */
			size_t nl = zap_leaf ? leaves : 0;
			size_t nt = zap_leaf ? unlinked : nacts + nemptied;
			CHECK(nvmid == 0 && nipa >= nl && nipa + nrange == nl + nt,
			      "per entry: %zu by-IPA, %zu range, %zu VMID "
			      "invalidations for %zu leaves and %zu tables",
			      nipa, nrange, nvmid, nl, nt);
			break;
		}
		case SLAT_FLUSH_RANGE:
		case SLAT_FLUSH_NONE:
			CHECK(nipa == 0 && nvmid == 0,
			      "policy %d: %zu by-IPA and %zu VMID invalidations",
			      (int)policy, nipa, nvmid);
			CHECK(!nacts || nrange > 0,
			      "tables unlinked without a range invalidation");
			break;
		case SLAT_FLUSH_VMID:
			CHECK(nipa == 0 && nrange == 0 && (!nacts || nvmid > 0),
			      "VMID policy: %zu by-IPA, %zu range, %zu VMID "
			      "invalidations", nipa, nrange, nvmid);
			break;
		}
	} else {
		CHECK(!nacts || tlbis() > 0,
		      "tables unlinked without a flush");
	}
	for (size_t k = 0; k < nacts; k++) {
		const struct act *a = &acts[k];
		if (strategy == SLAT_RECOVER_PROMOTE) {
			/* the block is dirty when a leaf was, whatever its
			 * permissions (a write-protected leaf keeps D) */
			bool dirty = model_dirty_pages(S->m, a->base,
						       a->base + a->size) > 0;
			model_set(S->m, a->base, a->base + a->size, a->pa,
				  a->attrs, a->young ? MODEL_YOUNG : MODEL_OLD);
			model_set_dirty(S->m, a->base, a->base + a->size,
					dirty);
		} else
			model_unmap(S->m, a->base, a->size);
	}
	check_range(ts, te);
	/* a promoted block is one leaf */
	for (size_t k = 0; strategy == SLAT_RECOVER_PROMOTE && k < nacts; k++) {
		struct check_leaf l;
		CHECK(checker_leaf_at(&S->ck, acts[k].base, &l) == 1 &&
			      l.base == acts[k].base && l.size == acts[k].size,
		      "promoted %#" PRIx64 "+%#" PRIx64 " is not one block",
		      acts[k].base, acts[k].size);
	}
	snprintf(F.note, sizeof(F.note), "%zu tables %s, %zu emptied, %zu "
		 "freed, %zu invalidations", nacts,
		 strategy == SLAT_RECOVER_PROMOTE ? "promoted" : "zapped",
		 nemptied, X.ev[SLAT_EV_PAGE_FREE], tlbis());
	free(acts);
}

/* ------------------------------------------------------------ entry */

/* An empty model with the configuration's dirty-state rules. */
static struct model *new_model(const struct slot *s)
{
	struct model *m = model_new(s->G);
	model_dirty_rules(m, s->cfg.features & SLAT_FEAT_HWDIRTY,
			  !s->fmt->wrprotect_keeps_dirty);
	return m;
}

/* The platform of configuration @i, set up by its first input. */
static bool slot_open(size_t i)
{
	struct slot *s = &slots[i];
	S = s;
	if (s->tried)
		return s->usable;
	s->tried = true;
	s->cfg = configs[i];
	struct slat_geometry geo;
	if (slat_config_geometry(&s->cfg, &geo) != SLAT_OK)
		return false;
	s->cfg.pa_bits = geo.pa_bits;
	s->G = s->cfg.granule;
	s->ia_end = 1ull << geo.ia_bits;
	s->pa_end = 1ull << geo.pa_bits;
	s->start_level = geo.start_level;
	s->leaf_levels = geo.leaf_levels;
	for (int l = -1; l < 4; l++)
		s->lsize_[l + 1] = l < geo.start_level
				   ? 0
				   : 1ull << (geo.bits_per_level * (3 - l) +
					      geo.granule_shift);
	/* table pages inside the PA space, 64 KiB aligned */
	uint64_t pa_base = s->pa_end / 2;
	if (slat_hosted_init(&s->h, (uint64_t)ARENA_PAGES * s->G,
			     (uint32_t)s->G, pa_base))
		fuzz_fail("slat_hosted_init");
	plain_fmt_open(s);
	int ret = slat_table_init(&s->t, &s->cfg, slat_hosted_ops_serial(),
				  &s->h);
	if (ret == SLAT_E_CONFIG) {
		slat_hosted_fini(&s->h);
		return false;
	}
	CHECK(ret == SLAT_OK, "slat_table_init: %s", check_status_name(ret));
	shadow_sync(s);
	s->live = true;
	s->h.table = &s->t;
	if (checker_init(&s->ck, &s->t, &s->h)) {
		/* a format the checker does not know yet */
		if (!check_format_for(s->cfg.format)) {
			slat_table_destroy(&s->t);
			checker_fini(&s->ck);
			slat_hosted_fini(&s->h);
			return false;
		}
		fuzz_fail("checker_init: %s", s->ck.msg);
	}
	s->fmt = s->ck.fmt;
	s->m = new_model(s);
	if (slat_hosted_cache_init(&s->cache, CACHE_CAP))
		fuzz_fail("cache init");
	s->node_of = malloc(s->h.nr_pages * sizeof(*s->node_of));
	if (!s->node_of)
		abort();
	memset(s->node_of, 0xff, s->h.nr_pages * sizeof(*s->node_of));
	slat_hosted_set_observer(&s->h, observe, NULL);
	s->usable = true;
	return true;
}

/* An empty table on the arena as slat_hosted_init() left it. */
static void input_begin(void)
{
	if (S->live)
		return; /* the slot's first input */
	CHECK(slat_hosted_reset(&S->h) == SLAT_OK,
	      "the arena is not empty at the start of an input");
	int ret = slat_table_init(&S->t, &S->cfg, slat_hosted_ops_serial(),
				  &S->h);
	CHECK(ret == SLAT_OK, "slat_table_init: %s", check_status_name(ret));
	shadow_sync(S);
	S->live = true;
	/* the cache as a new one: empty, and its memo too */
	slat_page_cache_init(&S->cache, S->cache.pages, S->cache.capacity);
	S->m = new_model(S);
}

/* Destroy the table: the arena must be empty, nothing freed twice. */
static void input_end(void)
{
	snprintf(F.desc, sizeof(F.desc), "destroy");
	/* the cache first: each page freed is then looked for in no cache */
	slat_hosted_cache_drain(&S->h, &S->cache);
	slat_table_destroy(&S->t);
	S->live = false;
	CHECK(S->h.pages_in_use == 0,
	      "%" PRIu64 " arena pages in use after destroy", S->h.pages_in_use);
	CHECK(S->h.double_frees == 0, "double free");
	/* freed here, not by the next input: an input that allocates more
	 * than it frees makes libFuzzer run it again, looking for leaks */
	model_free(S->m);
	S->m = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size, 0, false };
	static bool init;
	if (!init) {
		verbose = getenv("FUZZ_VERBOSE") != NULL;
		const char *known = getenv("FUZZ_KNOWN_BUGS");
		known_zap_table_empty_parent =
			known && strstr(known, "zap-table-empty-parent");
		known_map_misaligned_block =
			known && strstr(known, "map-misaligned-block");
		init = true;
	}
	F.opno = 0;
	F.desc[0] = 0;
	if (!slot_open(g8(&in) % NR_CONFIGS))
		return 0;
	input_begin();
	/* two windows of a few top-level entries each */
	uint8_t w = g8(&in);
	F.wsize = 4 * LSIZE(S->start_level);
	if (F.wsize > S->ia_end)
		F.wsize = S->ia_end;
	for (int i = 0; i < 2; i++) {
		unsigned where = (w >> (2 * i)) % 3;
		F.wbase[i] = where == 0 ? 0
			     : where == 1 ? S->ia_end - F.wsize
					  : (S->ia_end / 2) & ~(F.wsize - 1);
	}
	for (F.opno = 0; F.opno < MAX_OPS; F.opno++) {
		uint8_t op = g8(&in);
		if (in.end)
			break;
		F.desc[0] = 0;
		F.note[0] = 0;
		switch (op % 20) {
		case 0: case 1: case 2: case 3: case 4:
			op_map(&in);
			break;
		case 5: case 6:
			op_unmap_wrprotect(&in, false);
			break;
		case 7: case 8:
			op_unmap_wrprotect(&in, true);
			break;
		case 9: case 10:
			op_relax(&in);
			break;
		case 11:
			op_mkyoung(&in);
			break;
		case 12: case 13:
			op_tcy(&in);
			break;
		case 14: case 15:
			op_lookup(&in);
			break;
		case 16: case 17:
			op_split(&in);
			break;
		default:
			op_recover(&in);
			break;
		}
		snprintf(F.trace[F.opno], sizeof(F.trace[F.opno]), "%s", F.desc);
		if (verbose)
			fprintf(stderr, "op %u: %s%s%s\n", F.opno, F.desc,
				F.note[0] ? "\n    -> " : "", F.note);
	}
	check_full();
	input_end();
	return 0;
}
