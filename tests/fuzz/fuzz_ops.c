/* SPDX-License-Identifier: MIT */
/*
 * The libFuzzer harness: the input bytes choose a table format and
 * configuration, then a sequence of operations on it. After every operation
 * the status is checked against what the reference model predicts, the
 * model is updated with the reported progress, and the table over the
 * touched range is compared with the model and slat_lookup by the invariant
 * checker; the whole table at the end. Then the
 * table is destroyed and the arena must be empty.
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
	/*
	 * Hardware dirty state (SLAT_FEAT_HWDIRTY) is left out: the checker
	 * and the model do not know DBM and dirty leaves yet.
	 */
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
#define MAX_LEAVES 4096 /* bound on the leaves one map may write */

static struct {
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	struct checker ck;
	const struct check_format *fmt;
	struct model *m;
	struct slat_page_cache cache;
	uint64_t G, ia_end, pa_end;
	uint64_t lsize_[5]; /* by level + 1: EPT's PML5 is level -1 */
	int start_level;
	uint8_t leaf_levels;
	uint64_t wbase[2], wsize;
	unsigned opno;
	char desc[256];
	char trace[MAX_OPS][160];
} F;

#define LSIZE(l) F.lsize_[(l) + 1]

static bool verbose;

static void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\nfuzz_ops: config format %d granule %u ia %u pa %u "
			"features %#x\n",
		F.cfg.format, F.cfg.granule, F.cfg.ia_bits, F.cfg.pa_bits,
		F.cfg.features);
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
		CHECK(done < size && done % F.G == 0,
		      "SLAT_E_NOMEM with *done %#" PRIx64, done);
		return;
	}
	CHECK(ret == SLAT_OK || (nothing_ok && ret == SLAT_NOTHING_TO_DO),
	      "returned %s", check_status_name(ret));
	CHECK(done == size, "*done %#" PRIx64 " after success", done);
}

static void check_range(uint64_t s, uint64_t e)
{
	if (e > F.ia_end)
		e = F.ia_end;
	if (s >= e)
		return;
	if (checker_range(&F.ck, F.m, s, e)) {
		model_dump(F.m, s, e);
		fuzz_fail("table != model over [%#" PRIx64 ", %#" PRIx64 "): %s",
			  s, e, F.ck.msg);
	}
}

/*
 * The whole table: structure, refcounts, leaks and the model. slat_lookup
 * is cross-checked by the range checks after each operation; here it would
 * run for every invalid entry of every table, which costs most of the time.
 */
static void check_full(void)
{
	F.ck.check_lookup = false;
	int ret = checker_full(&F.ck, F.m);
	F.ck.check_lookup = true;
	if (ret)
		fuzz_fail("full check: %s", F.ck.msg);
}

/* [s, e) grown to the leaves straddling its ends. */
static void touched(uint64_t s, uint64_t e, uint64_t *ts, uint64_t *te)
{
	struct check_leaf l;
	*ts = s;
	*te = e;
	if (s >= F.ia_end || e <= s)
		return;
	if (checker_leaf_at(&F.ck, s, &l) == 1 && l.base < s)
		*ts = l.base;
	if (e <= F.ia_end && checker_leaf_at(&F.ck, e - F.G, &l) == 1 &&
	    l.base + l.size > e)
		*te = l.base + l.size;
}

struct leafvec {
	struct check_leaf *v;
	size_t n, cap;
};

static struct leafvec pre;

static int collect_cb(void *arg, const struct check_leaf *l)
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

static void collect(uint64_t s, uint64_t e)
{
	pre.n = 0;
	if (s >= e || e > F.ia_end)
		return;
	if (checker_walk(&F.ck, s, e, collect_cb, &pre))
		fuzz_fail("raw walk: %s", F.ck.msg);
}

/* ------------------------------------------------------------ decoding */

/* A level whose entry size serves as an address unit. */
static int decode_level(struct in *in)
{
	int n = 4 - F.start_level;
	return F.start_level + (int)(g8(in) % (unsigned)n);
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
	if (j < 0 && (uint64_t)(-j) * F.G > v - base)
		j = -j;
	v += (uint64_t)(j * (int64_t)F.G);
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
	if (j < 0 && (uint64_t)(-j) * F.G >= v)
		j = -j;
	v += (uint64_t)(j * (int64_t)F.G);
	return v ? v : F.G;
}

/* Output address for a map of [ipa..): same as now, aligned, or offset. */
static uint64_t decode_pa(struct in *in, uint64_t ipa)
{
	uint8_t sel = g8(in);
	if (sel >= 250)
		return g64(in);
	struct model_run r;
	if (sel % 4 == 0 && model_find(F.m, ipa, &r))
		return r.pa + (ipa - r.start);
	uint64_t top = LSIZE(F.start_level);
	uint64_t slots = F.pa_end / top;
	uint64_t base = (g8(in) % (slots ? slots : 1)) * top;
	uint64_t v = base + (ipa & (top - 1));
	if (sel % 4 == 2)
		v += (uint64_t)(g8(in) % 64) * F.G;
	if (sel % 4 == 3)
		v += (uint64_t)(g8(in) % 8) * LSIZE(2 > F.start_level ? 2 : 3);
	return v & (F.pa_end - 1);
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
	if ((a & 0xc0) == 0xc0 && F.cfg.format == SLAT_FMT_EPT)
		v |= (b & 1) ? SLAT_IPAT : SLAT_SVE;
	return v;
}

/* A cache: full (slat_pages_needed) or short; returns whether short. */
static bool prepare_cache(struct in *in, enum slat_op op, uint64_t ipa,
			  uint64_t size)
{
	uint8_t c = g8(in);
	uint64_t need = slat_pages_needed(&F.t, op, slat_ipa(ipa), size);
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
	if (F.cache.nr > n)
		slat_hosted_cache_drain(&F.h, &F.cache);
	if (n > F.cache.nr &&
	    slat_hosted_cache_topup(&F.h, &F.cache, n) != SLAT_OK)
		fuzz_fail("arena exhausted (%u pages)", n);
	return shortc;
}

/* ------------------------------------------------------------ predictions */

/* The input error the range deserves, or 0. */
static int range_error(uint64_t ipa, uint64_t size)
{
	if ((ipa | size) & (F.G - 1))
		return SLAT_E_ALIGN;
	if (size == 0 || ipa + size < ipa || ipa + size > F.ia_end)
		return SLAT_E_RANGE;
	return 0;
}

static bool is_input_error(int ret)
{
	return ret == SLAT_E_ALIGN || ret == SLAT_E_RANGE ||
	       ret == SLAT_E_ATTR || ret == SLAT_E_INVAL;
}

static uint64_t max_leaf(uint64_t ipa, uint64_t pa, uint32_t flags)
{
	unsigned cap = SLAT_MAP_CAP_SHIFT(flags);
	for (int l = F.start_level; l < 3; l++) {
		uint64_t s = LSIZE(l);
		if (l < 0 || !(F.leaf_levels & (1u << l)))
			continue;
		if (cap && s > (1ull << cap))
			continue;
		if (((ipa ^ pa) & (s - 1)) == 0)
			return s;
	}
	return F.G;
}

/*
 * Whether map accepts @attrs. SLAT_IPAT and SLAT_SVE are EPT bits that the
 * Arm format refuses; the checker's Arm rules predate them.
 */
static bool attrs_ok(uint32_t attrs)
{
	if (F.cfg.format == SLAT_FMT_ARM_S2 && (attrs & (SLAT_IPAT | SLAT_SVE)))
		return false;
	return F.fmt->attrs_ok(&F.cfg, attrs);
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
	uint64_t ml = max_leaf(ipa, pa, flags);
	if (!range_error(ipa, size) && size / ml > MAX_LEAVES)
		size = MAX_LEAVES * ml;

	snprintf(F.desc, sizeof(F.desc),
		 "map(ipa %#" PRIx64 ", size %#" PRIx64 ", pa %#" PRIx64
		 ", attrs %#x, flags %#x)", ipa, size, pa, attrs, flags);
	int err = range_error(ipa, size);
	if (!err && (pa & (F.G - 1)))
		err = SLAT_E_ALIGN;
	if (!err && (pa >= F.pa_end || size > F.pa_end - pa))
		err = SLAT_E_RANGE;
	if (!err && !attrs_ok(attrs))
		err = SLAT_E_ATTR;
	if (flags & (1u << 20))
		err = SLAT_E_INVAL;
	bool shortc = !err && prepare_cache(in, SLAT_OP_MAP, ipa, size);
	uint64_t ts = ipa, te = ipa + size;
	if (!err)
		touched(ipa, ipa + size, &ts, &te);
	bool conflict = !err && (flags & SLAT_MAP_NO_REPLACE) &&
			model_map_conflicts(F.m, ipa, ipa + size, pa, attrs);
	if (!err)
		collect(ipa, ipa + size);
	uint64_t done = 0xdead;
	int ret = slat_map(&F.t, slat_ipa(ipa), size, slat_pa(pa), attrs,
			   flags, &F.cache, &done);
	if (err) {
		CHECK(is_input_error(ret),
		      "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
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
		CHECK(!checker_map_bounds(&F.ck, pre.v, pre.n, ipa, 0, pa),
		      "SLAT_E_EXISTS, yet: %s", F.ck.msg);
		check_range(ts, te);
		return;
	}
	check_progress(ret, done, size, shortc, true);
	CHECK(!checker_map_bounds(&F.ck, pre.v, pre.n, ipa, done, pa),
	      "mapping outside what was asked: %s", F.ck.msg);
	uint64_t written = model_map(F.m, ipa, done, pa, attrs);
	if (ret >= 0)
		CHECK((ret == SLAT_NOTHING_TO_DO) == (written == 0),
		      "returned %s but the model wrote %" PRIu64 " pages",
		      check_status_name(ret), written / F.G);
	check_range(ts, te);
}

static void op_unmap_wrprotect(struct in *in, bool wrprotect)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint8_t p = g8(in);
	enum slat_tlbi_policy policy = (enum slat_tlbi_policy)(p % 4);
	if (p == 0xff)
		policy = (enum slat_tlbi_policy)7; /* invalid */
	snprintf(F.desc, sizeof(F.desc),
		 "%s(ipa %#" PRIx64 ", size %#" PRIx64 ", policy %d)",
		 wrprotect ? "wrprotect" : "unmap", ipa, size, (int)policy);
	int err = range_error(ipa, size);
	if (p == 0xff)
		err = SLAT_E_INVAL;
	enum slat_op op = wrprotect ? SLAT_OP_WRPROTECT : SLAT_OP_UNMAP;
	bool shortc = !err && prepare_cache(in, op, ipa, size);
	uint64_t ts = ipa, te = ipa + size;
	if (!err)
		touched(ipa, ipa + size, &ts, &te);
	uint64_t done = 0xdead;
	int ret = wrprotect ? slat_wrprotect(&F.t, slat_ipa(ipa), size, policy,
					     &F.cache, &done)
			    : slat_unmap(&F.t, slat_ipa(ipa), size, policy,
					 &F.cache, &done);
	if (err) {
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		CHECK(done == 0, "*done %#" PRIx64 " after %s", done,
		      check_status_name(ret));
		return;
	}
	check_progress(ret, done, size, shortc, wrprotect);
	if (wrprotect)
		model_wrprotect(F.m, ipa, done);
	else
		model_unmap(F.m, ipa, done);
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
	uint32_t flags = (f & 1) ? SLAT_SHARED : 0;
	snprintf(F.desc, sizeof(F.desc),
		 "relax(ipa %#" PRIx64 ", size %#" PRIx64 ", perms %#x, "
		 "flags %#x)", ipa, size, perms, flags);
	int err = range_error(ipa, size);
	bool hole = false, bad = false;
	if (!err) {
		hole = !model_fully_mapped(F.m, ipa, ipa + size);
		struct relax_arg ra = { perms, false };
		model_for_each(F.m, ipa, ipa + size, relax_attr_cb, &ra);
		/* Validity is the leaves' with the permissions added. */
		bad = ra.bad || (perms & ~SLAT_PERMS);
	}
	bool shortc = !err && prepare_cache(in, SLAT_OP_RELAX, ipa, size);
	uint64_t ts = ipa, te = ipa + size;
	if (!err) {
		touched(ipa, ipa + size, &ts, &te);
		collect(ipa, ipa + size);
	}
	uint64_t done = 0xdead;
	int ret = slat_relax(&F.t, slat_ipa(ipa), size, perms, flags,
			     &F.cache, &done);
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
			model_old_to_unknown(F.m, l->base, ipa);
		if (l->base + l->size > de)
			model_old_to_unknown(F.m, de, l->base + l->size);
	}
	if (ret == SLAT_NOTHING_TO_DO)
		CHECK(!change, "SLAT_NOTHING_TO_DO but a leaf lacked a "
			       "permission or was old");
	if (ret == SLAT_OK)
		CHECK(change, "SLAT_OK but nothing needed changing");
	model_relax(F.m, ipa, done, perms, NULL);
	check_range(ts, te);
}

static void op_mkyoung(struct in *in)
{
	uint64_t ipa = decode_ipa(in) + g16(in) % F.G; /* any byte */
	uint32_t flags = (g8(in) & 1) ? SLAT_SHARED : 0;
	snprintf(F.desc, sizeof(F.desc), "mkyoung(ipa %#" PRIx64 ")", ipa);
	int ret = slat_mkyoung(&F.t, slat_ipa(ipa), flags);
	if (ipa >= F.ia_end) {
		CHECK(ret == SLAT_E_RANGE, "mkyoung beyond the IPA size "
					   "returned %s",
		      check_status_name(ret));
		return;
	}
	struct check_leaf l;
	int k = checker_leaf_at(&F.ck, ipa, &l);
	CHECK(k >= 0, "raw walk: %s", F.ck.msg);
	if (k == 0) {
		CHECK(ret == SLAT_E_NOENT, "returned %s on a hole",
		      check_status_name(ret));
		return;
	}
	/* now young: the leaf was old iff SLAT_OK */
	struct model_run r;
	CHECK(model_find(F.m, ipa, &r), "model has a hole where the table "
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
	model_set_young(F.m, l.base, l.base + l.size, MODEL_YOUNG);
	check_range(l.base, l.base + l.size);
}

static void op_tcy(struct in *in)
{
	uint64_t ipa = decode_ipa(in), size = decode_size(in);
	uint8_t f = g8(in);
	bool mkold = f & 1;
	uint32_t flags = (f & 2) ? SLAT_SHARED : 0;
	snprintf(F.desc, sizeof(F.desc),
		 "test_clear_young(ipa %#" PRIx64 ", size %#" PRIx64
		 ", mkold %d)", ipa, size, mkold);
	int err = range_error(ipa, size);
	uint64_t ts = ipa, te = ipa + size;
	if (!err) {
		touched(ipa, ipa + size, &ts, &te);
		collect(ipa, ipa + size);
	}
	int ret = slat_test_clear_young(&F.t, slat_ipa(ipa), size, mkold,
					flags);
	if (err) {
		CHECK(is_input_error(ret), "bad input (expected %s) returned %s",
		      check_status_name(err), check_status_name(ret));
		return;
	}
	int young = 0;
	for (size_t i = 0; i < pre.n; i++)
		if (pre.v[i].attrs & SLAT_YOUNG)
			young = 1;
	int msum = model_young_summary(F.m, ipa, ipa + size);
	CHECK(ret == young, "returned %d, the table had %s leaves", ret,
	      young ? "young" : "no young");
	CHECK(msum < 0 || msum == young, "model and table disagree on young");
	if (mkold)
		for (size_t i = 0; i < pre.n; i++)
			model_set_young(F.m, pre.v[i].base,
					pre.v[i].base + pre.v[i].size,
					MODEL_OLD);
	check_range(ts, te);
}

static void op_lookup(struct in *in)
{
	uint64_t ipa = decode_ipa(in) + g16(in) % F.G;
	snprintf(F.desc, sizeof(F.desc), "lookup(ipa %#" PRIx64 ")", ipa);
	struct slat_leaf l;
	int ret = slat_lookup(&F.t, slat_ipa(ipa), &l);
	if (ipa >= F.ia_end) {
		CHECK(ret == SLAT_E_RANGE, "lookup beyond the IPA size "
					   "returned %s",
		      check_status_name(ret));
		return;
	}
	struct model_run r;
	if (!model_find(F.m, ipa, &r)) {
		CHECK(ret == SLAT_E_NOENT, "lookup of a hole returned %s",
		      check_status_name(ret));
		return;
	}
	CHECK(ret == SLAT_OK, "lookup of a mapped IPA returned %s",
	      check_status_name(ret));
	uint64_t want = r.pa + (ipa - r.start);
	CHECK(slat_pa_v(l.pa) == want, "lookup pa %#" PRIx64 ", model %#" PRIx64,
	      slat_pa_v(l.pa), want);
	CHECK((l.attrs & ~SLAT_YOUNG) == r.attrs,
	      "lookup attrs %#x, model %#x", l.attrs, r.attrs);
	CHECK(r.young == MODEL_YOUNG_UNKNOWN ||
		      (r.young == MODEL_YOUNG) == !!(l.attrs & SLAT_YOUNG),
	      "lookup young state differs from the model");
	CHECK(slat_ipa_v(l.base) <= ipa && ipa - slat_ipa_v(l.base) < l.size,
	      "lookup leaf %#" PRIx64 "+%#" PRIx64 " does not hold the IPA",
	      slat_ipa_v(l.base), l.size);
}

/* ------------------------------------------------------------ entry */

static bool setup(struct in *in)
{
	F.cfg = configs[g8(in) % NR_CONFIGS];
	uint8_t w = g8(in);
	struct slat_geometry geo;
	if (slat_config_geometry(&F.cfg, &geo) != SLAT_OK)
		return false;
	F.cfg.pa_bits = geo.pa_bits;
	F.G = F.cfg.granule;
	F.ia_end = 1ull << geo.ia_bits;
	F.pa_end = 1ull << geo.pa_bits;
	F.start_level = geo.start_level;
	F.leaf_levels = geo.leaf_levels;
	for (int l = -1; l < 4; l++)
		LSIZE(l) = l < geo.start_level
				     ? 0
				     : 1ull << (geo.bits_per_level * (3 - l) +
						geo.granule_shift);
	/* two windows of a few top-level entries each */
	F.wsize = 4 * LSIZE(F.start_level);
	if (F.wsize > F.ia_end)
		F.wsize = F.ia_end;
	for (int i = 0; i < 2; i++) {
		unsigned where = (w >> (2 * i)) % 3;
		F.wbase[i] = where == 0 ? 0
			     : where == 1 ? F.ia_end - F.wsize
					  : (F.ia_end / 2) & ~(F.wsize - 1);
	}
	/* table pages inside the PA space, 64 KiB aligned */
	uint64_t pa_base = F.pa_end / 2;
	if (slat_hosted_init(&F.h, (uint64_t)ARENA_PAGES * F.G,
			     (uint32_t)F.G, pa_base))
		fuzz_fail("slat_hosted_init");
	int ret = slat_table_init(&F.t, &F.cfg, slat_hosted_ops(), &F.h);
	if (ret == SLAT_E_CONFIG) {
		slat_hosted_fini(&F.h);
		return false;
	}
	CHECK(ret == SLAT_OK, "slat_table_init: %s", check_status_name(ret));
	F.h.table = &F.t;
	if (checker_init(&F.ck, &F.t, &F.h)) {
		/* a format the checker does not know yet */
		if (!check_format_for(F.cfg.format)) {
			slat_table_destroy(&F.t);
			checker_fini(&F.ck);
			slat_hosted_fini(&F.h);
			return false;
		}
		fuzz_fail("checker_init: %s", F.ck.msg);
	}
	F.fmt = F.ck.fmt;
	F.m = model_new(F.G);
	if (slat_hosted_cache_init(&F.cache, CACHE_CAP))
		fuzz_fail("cache init");
	return true;
}

static void teardown(void)
{
	snprintf(F.desc, sizeof(F.desc), "destroy");
	slat_table_destroy(&F.t);
	slat_hosted_cache_drain(&F.h, &F.cache);
	CHECK(F.h.pages_in_use == 0,
	      "%" PRIu64 " arena pages in use after destroy", F.h.pages_in_use);
	CHECK(F.h.double_frees == 0, "double free");
	slat_hosted_cache_fini(&F.cache);
	checker_fini(&F.ck);
	model_free(F.m);
	slat_hosted_fini(&F.h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size, 0, false };
	static bool init;
	if (!init) {
		verbose = getenv("FUZZ_VERBOSE") != NULL;
		init = true;
	}
	memset(F.trace, 0, sizeof(F.trace));
	F.opno = 0;
	if (!setup(&in))
		return 0;
	for (F.opno = 0; F.opno < MAX_OPS; F.opno++) {
		uint8_t op = g8(&in);
		if (in.end)
			break;
		F.desc[0] = 0;
		switch (op % 16) {
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
		default:
			op_lookup(&in);
			break;
		}
		snprintf(F.trace[F.opno], sizeof(F.trace[F.opno]), "%s", F.desc);
		if (verbose)
			fprintf(stderr, "op %u: %s\n", F.opno, F.desc);
	}
	check_full();
	teardown();
	return 0;
}
