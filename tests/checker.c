/* SPDX-License-Identifier: MIT */
/*
 * The format-neutral part of the invariant checker: the raw walk, the
 * structural invariants, and the comparison with the model and slat_lookup.
 */
#include "checker.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *check_status_name(int s)
{
	switch (s) {
	case SLAT_OK: return "SLAT_OK";
	case SLAT_NOTHING_TO_DO: return "SLAT_NOTHING_TO_DO";
	case SLAT_E_ALIGN: return "SLAT_E_ALIGN";
	case SLAT_E_RANGE: return "SLAT_E_RANGE";
	case SLAT_E_ATTR: return "SLAT_E_ATTR";
	case SLAT_E_CONFIG: return "SLAT_E_CONFIG";
	case SLAT_E_NOMEM: return "SLAT_E_NOMEM";
	case SLAT_E_EXISTS: return "SLAT_E_EXISTS";
	case SLAT_E_AGAIN: return "SLAT_E_AGAIN";
	case SLAT_E_NOENT: return "SLAT_E_NOENT";
	case SLAT_E_INVAL: return "SLAT_E_INVAL";
	default: return "(unknown status)";
	}
}

static int fail(struct checker *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct checker *c, const char *fmt, ...)
{
	if (c->msg[0] == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
		va_end(ap);
	}
	return -1;
}

bool check_no_dcache(const struct slat_config *cfg, uint32_t attrs)
{
	(void)cfg;
	(void)attrs;
	return false;
}

bool check_no_icache(const struct slat_config *cfg)
{
	(void)cfg;
	return false;
}

const struct check_format *check_format_for(enum slat_format_id id)
{
	switch (id) {
	case SLAT_FMT_ARM_S2:
		return &check_arm_s2;
	case SLAT_FMT_EPT:
		return &check_ept;
	case SLAT_FMT_ARM_S1:
		return &check_arm_s1;
	case SLAT_FMT_NPT:
		return &check_npt;
	default:
		return NULL;
	}
}

void *checker_phys_to_virt(const struct checker *c, uint64_t pa)
{
	const struct slat_hosted *h = c->h;
	if (pa < h->pa_base || pa - h->pa_base >= h->arena_bytes)
		return NULL;
	if ((pa - h->pa_base) % h->granule)
		return NULL;
	return h->arena + (pa - h->pa_base);
}

static uint64_t page_index(const struct checker *c, const void *va)
{
	return (uint64_t)((const uint8_t *)va - c->h->arena) / c->h->granule;
}

int checker_init(struct checker *c, struct slat_table *t,
		 struct slat_hosted *h)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->h = h;
	c->check_lookup = true;
	c->check_stats = true;
	c->fmt = check_format_for(t->cfg.format);
	if (!c->fmt)
		return fail(c, "checker: no format for id %d", t->cfg.format);
	if (c->fmt->geometry(&t->cfg, &c->geo))
		return fail(c, "checker: configuration refused by the checker");
	c->seen = calloc(h->nr_pages, sizeof(*c->seen));
	if (!c->seen)
		return fail(c, "checker: out of memory");

	const struct slat_geometry *g = &t->geo;
	const struct check_geo *e = &c->geo;
	/* only the leaf levels the walk has are compared */
	uint8_t walked = e->start_level <= 0
				 ? 0xff
				 : (uint8_t)~((1u << e->start_level) - 1);
	if (g->granule_shift != e->granule_shift ||
	    g->bits_per_level != e->bits_per_level ||
	    g->start_level != e->start_level ||
	    g->root_pages != e->root_pages ||
	    g->root_entries != e->root_entries || g->entries != e->entries ||
	    (g->leaf_levels & walked) != e->leaf_levels ||
	    g->ia_bits != e->ia_bits ||
	    g->pa_bits != e->pa_bits)
		return fail(c,
			    "geometry: core says start %d root_pages %u "
			    "root_entries %u entries %u leaf_levels %#x ia %u "
			    "pa %u; architecture says start %d root_pages %u "
			    "root_entries %u entries %u leaf_levels %#x ia %u "
			    "pa %u",
			    g->start_level, g->root_pages, g->root_entries,
			    g->entries, g->leaf_levels, g->ia_bits, g->pa_bits,
			    e->start_level, e->root_pages, e->root_entries,
			    e->entries, e->leaf_levels, e->ia_bits, e->pa_bits);
	return 0;
}

void checker_fini(struct checker *c)
{
	free(c->seen);
	c->seen = NULL;
}

/* ------------------------------------------------------------------ walk */

struct walk {
	struct checker *c;
	bool full;
	check_leaf_fn fn;
	void *arg;
	check_table_fn tfn; /* checker_tables: each table page, leaves not */
};

static int visit_table(struct walk *w, uint64_t *table, int level,
		       uint64_t base, unsigned nent, uint64_t s, uint64_t e);

static int visit_entry(struct walk *w, uint64_t *ptep, int level,
		       uint64_t eb, uint64_t s, uint64_t e)
{
	struct checker *c = w->c;
	const struct check_geo *g = &c->geo;
	uint64_t size = 1ull << check_level_shift(g, level);
	struct check_desc d;
	char why[256];
	uint64_t pte = __atomic_load_n(ptep, __ATOMIC_RELAXED);
	enum check_desc_kind k =
		c->fmt->decode(g, &c->t->cfg, pte, level, &d, why, sizeof(why));

	if (k == CHECK_DESC_BAD) {
		if (!c->tolerant)
			return fail(c, "bad descriptor for IPA %#" PRIx64 ": %s",
				    eb, why);
		k = CHECK_DESC_INVALID;
	}
	if (k == CHECK_DESC_INVALID) {
		if (w->tfn)
			return 0;
		struct check_leaf l = {
			.valid = false,
			.base = eb < s ? s : eb,
			.size = 0,
			.level = level,
			.pte = pte,
			.ptep = ptep,
		};
		uint64_t end = eb + size;
		if (end > e || end == 0)
			end = e;
		l.size = end - l.base;
		return w->fn ? w->fn(w->arg, &l) : 0;
	}
	if (k == CHECK_DESC_TABLE) {
		uint64_t *next = checker_phys_to_virt(c, d.oa);
		if (!next)
			return fail(c,
				    "table descriptor %#018" PRIx64
				    " at level %d (IPA %#" PRIx64
				    ") points outside the arena",
				    pte, level, eb);
		if (w->tfn) {
			struct check_table ct = {
				.base = eb, .size = size, .level = level + 1,
				.pa = d.oa, .va = next, .parent = ptep,
			};
			int ret = w->tfn(w->arg, &ct);
			if (ret)
				return ret;
		}
		if (w->full) {
			uint64_t idx = page_index(c, next);
			if (c->seen[idx] == c->epoch)
				return fail(c,
					    "table at PA %#" PRIx64
					    " reachable twice (again from "
					    "level %d, IPA %#" PRIx64 ")",
					    d.oa, level, eb);
			c->seen[idx] = c->epoch;
			c->tables_seen++;
			int st = c->h->state[idx];
			bool is_table = st == SLAT_HOSTED_PAGE_TABLE ||
					(st == SLAT_HOSTED_PAGE_CACHED &&
					 slat_hosted_is_table_page(c->h, next));
			if (!is_table)
				return fail(c,
					    "table at PA %#" PRIx64
					    " (level %d, IPA %#" PRIx64
					    ") is not a table page of the "
					    "arena (state %d)",
					    d.oa, level + 1, eb,
					    slat_hosted_page_state(c->h, next));
			uint32_t used = 0, blocks = 0;
			for (unsigned i = 0; i < g->entries; i++) {
				struct check_desc cd;
				char cwhy[8];
				if (next[i] == 0)
					continue; /* neither used nor a block */
				used++;
				blocks += level + 1 < SLAT_LAST_LEVEL &&
					  c->fmt->decode(g, &c->t->cfg, next[i],
							 level + 1, &cd, cwhy,
							 sizeof(cwhy)) ==
						  CHECK_DESC_LEAF;
			}
			uint32_t word = c->h->refcounts[idx];
			uint32_t rc = word == SLAT_REFCOUNT_UNKNOWN
				? word : word & ~SLAT_REFCOUNT_HAS_BLOCKS;
			/* Split skips a table whose word says it holds no
			 * block: that must be true. */
			if (blocks && !(word & SLAT_REFCOUNT_HAS_BLOCKS))
				return fail(c,
					    "table at PA %#" PRIx64
					    " (level %d, IPA %#" PRIx64 ") holds "
					    "%u blocks, its word %#x says none",
					    d.oa, level + 1, eb, blocks, word);
			if (used == 0)
				return fail(c,
					    "empty non-root table at PA %#" PRIx64
					    " (level %d, IPA %#" PRIx64 ")",
					    d.oa, level + 1, eb);
			/* Shared walkers leave counts unknown (they only
			 * add); the next exclusive user recounts. */
			if (rc != used && rc != SLAT_REFCOUNT_UNKNOWN)
				return fail(c,
					    "refcount %u != %u non-zero entries "
					    "of the table at PA %#" PRIx64
					    " (level %d, IPA %#" PRIx64 ")",
					    rc, used, d.oa, level + 1, eb);
		}
		return visit_table(w, next, level + 1, eb, g->entries, s, e);
	}
	/* a leaf */
	if (w->tfn)
		return 0;
	if (w->full)
		c->leaves_seen++;
	struct check_leaf l = {
		.valid = true,
		.base = eb,
		.size = size,
		.level = level,
		.pte = pte,
		.oa = d.oa,
		.attrs = d.attrs,
		.ptep = ptep,
	};
	return w->fn ? w->fn(w->arg, &l) : 0;
}

/*
 * Entries first..last of a table, all exactly 0, as one hole: what the
 * full walk without lookups reports, since a hole is then only compared
 * with the model (no run of it may meet the hole), whose answer for the
 * union is the answer for each entry.
 */
static int visit_zero_run(struct walk *w, uint64_t *ptep, int level,
			  uint64_t eb, uint64_t eend, uint64_t s, uint64_t e)
{
	struct check_leaf l = {
		.valid = false,
		.base = eb < s ? s : eb,
		.level = level,
		.pte = 0,
		.ptep = ptep,
	};
	if (eend > e || eend == 0)
		eend = e;
	l.size = eend - l.base;
	return w->fn ? w->fn(w->arg, &l) : 0;
}

static int visit_table(struct walk *w, uint64_t *table, int level,
		       uint64_t base, unsigned nent, uint64_t s, uint64_t e)
{
	const struct check_geo *g = &w->c->geo;
	unsigned shift = check_level_shift(g, level);
	uint64_t first = s > base ? (s - base) >> shift : 0;
	uint64_t last = (e - 1 - base) >> shift; /* e > base */
	bool merge = w->full && !w->c->check_lookup;
	if (last >= nent)
		last = nent - 1;
	for (uint64_t i = first; i <= last; i++) {
		int ret;
		if (merge && __atomic_load_n(&table[i], __ATOMIC_RELAXED) == 0) {
			uint64_t j = i;
			while (j < last &&
			       __atomic_load_n(&table[j + 1], __ATOMIC_RELAXED) == 0)
				j++;
			ret = visit_zero_run(w, &table[i], level,
					     base + (i << shift),
					     base + ((j + 1) << shift), s, e);
			i = j;
		} else {
			ret = visit_entry(w, &table[i], level,
					  base + (i << shift), s, e);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static uint64_t ia_end(const struct checker *c)
{
	return 1ull << c->geo.ia_bits;
}

static int walk_range(struct checker *c, uint64_t s, uint64_t e, bool full,
		      check_leaf_fn fn, void *arg)
{
	struct walk w = { c, full, fn, arg, NULL };
	if (e > ia_end(c))
		e = ia_end(c);
	if (s >= e)
		return 0;
	uint64_t *root = checker_phys_to_virt(c, slat_pa_v(c->t->root_pa));
	if (!root)
		return fail(c, "root PA %#" PRIx64 " outside the arena",
			    slat_pa_v(c->t->root_pa));
	return visit_table(&w, root, c->geo.start_level, 0,
			   c->geo.root_entries, s, e);
}

int checker_walk(struct checker *c, uint64_t s, uint64_t e, check_leaf_fn fn,
		 void *arg)
{
	return walk_range(c, s, e, false, fn, arg);
}

int checker_tables(struct checker *c, uint64_t s, uint64_t e,
		   check_table_fn fn, void *arg)
{
	struct walk w = { c, false, NULL, arg, fn };
	if (e > ia_end(c))
		e = ia_end(c);
	if (s >= e)
		return 0;
	c->msg[0] = 0;
	uint64_t *root = checker_phys_to_virt(c, slat_pa_v(c->t->root_pa));
	if (!root)
		return fail(c, "root PA %#" PRIx64 " outside the arena",
			    slat_pa_v(c->t->root_pa));
	return visit_table(&w, root, c->geo.start_level, 0,
			   c->geo.root_entries, s, e);
}

int checker_entry_at(struct checker *c, uint64_t ipa, int level,
		     uint64_t *pte, struct check_desc *d)
{
	const struct check_geo *g = &c->geo;
	uint64_t *table = checker_phys_to_virt(c, slat_pa_v(c->t->root_pa));
	if (!table || level < g->start_level || level > SLAT_LAST_LEVEL ||
	    ipa >= ia_end(c))
		return -1;
	for (int l = g->start_level;; l++) {
		unsigned shift = check_level_shift(g, l);
		uint64_t idx = l == g->start_level
			? ipa >> shift
			: (ipa >> shift) & (g->entries - 1);
		uint64_t v = __atomic_load_n(&table[idx], __ATOMIC_RELAXED);
		char why[8];
		enum check_desc_kind k = c->fmt->decode(g, &c->t->cfg, v, l, d,
							 why, sizeof(why));
		if (k == CHECK_DESC_BAD) /* a locked marker, say */
			k = d->kind = CHECK_DESC_INVALID;
		d->kind = k;
		if (l == level) {
			*pte = v;
			return 1;
		}
		if (k != CHECK_DESC_TABLE)
			return 0;
		table = checker_phys_to_virt(c, d->oa);
		if (!table)
			return -1;
	}
}

/* ------------------------------------------------------------ map bounds */

/* The first pre-op leaf whose end is beyond @a (leaves in address order). */
static size_t first_ending_after(const struct check_leaf *v, size_t n,
				 uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].base + v[mid].size <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The first IPA of [s, e), a part of the post-op leaf @l, that the pre-op
 * leaves do not translate exactly as @l does (output address, attributes
 * other than young and dirty); @e if none.
 */
static uint64_t first_new_translation(const struct check_leaf *pre, size_t npre,
				      const struct check_leaf *l, uint64_t s,
				      uint64_t e)
{
	const uint32_t hw = SLAT_YOUNG | SLAT_DIRTY;
	uint64_t a = s;
	for (size_t i = first_ending_after(pre, npre, s); i < npre && a < e;
	     i++) {
		const struct check_leaf *p = &pre[i];
		if (p->base > a)
			return a; /* a hole before */
		if (p->oa - p->base != l->oa - l->base ||
		    (p->attrs & ~hw) != (l->attrs & ~hw))
			return a;
		a = p->base + p->size;
	}
	return a < e ? a : e;
}

/* Is @l one of the pre-op leaves, unchanged (same entry, same value)? */
static bool unchanged_leaf(const struct check_leaf *pre, size_t npre,
			   const struct check_leaf *l)
{
	size_t i = first_ending_after(pre, npre, l->base);
	return i < npre && pre[i].base == l->base && pre[i].size == l->size &&
	       pre[i].ptep == l->ptep && pre[i].pte == l->pte;
}

int checker_map_bounds_leaves(struct checker *c, const struct check_leaf *pre,
			      size_t npre, const struct check_leaf *post,
			      size_t npost, uint64_t ipa, uint64_t size,
			      uint64_t pa)
{
	uint64_t e = ipa + size, pe = pa + size;
	c->msg[0] = 0;
	for (size_t i = 0; i < npost; i++) {
		const struct check_leaf *l = &post[i];
		uint64_t le = l->base + l->size;
		if (!l->valid || unchanged_leaf(pre, npre, l))
			continue;
		/* installed or changed by the map: the parts outside the
		 * range must be pieces of a split block, translating as
		 * before; the part inside maps into [pa, pa + size) */
		uint64_t b0 = l->base, b1 = le < ipa ? le : ipa;
		uint64_t bad = b0 < b1 ? first_new_translation(pre, npre, l,
							       b0, b1)
				       : b1;
		if (bad < b1)
			return fail(c,
				    "map [%#" PRIx64 ", %#" PRIx64 ") -> %#" PRIx64
				    ": the leaf %#" PRIx64 "+%#" PRIx64
				    " level %d (pte %#018" PRIx64 ", -> %#" PRIx64
				    ") it installed or changed covers IPA %#" PRIx64
				    ", below the range's start",
				    ipa, e, pa, l->base, l->size, l->level,
				    l->pte, l->oa, bad);
		b0 = l->base > e ? l->base : e;
		b1 = le;
		bad = b0 < b1 ? first_new_translation(pre, npre, l, b0, b1) : b1;
		if (bad < b1)
			return fail(c,
				    "map [%#" PRIx64 ", %#" PRIx64 ") -> %#" PRIx64
				    ": the leaf %#" PRIx64 "+%#" PRIx64
				    " level %d (pte %#018" PRIx64 ", -> %#" PRIx64
				    ") it installed or changed covers IPA %#" PRIx64
				    ", at or beyond the range's end",
				    ipa, e, pa, l->base, l->size, l->level,
				    l->pte, l->oa, bad);
		/* the part inside the range */
		uint64_t s1 = l->base > ipa ? l->base : ipa;
		uint64_t e1 = le < e ? le : e;
		if (s1 >= e1)
			continue;
		uint64_t p0 = l->oa + (s1 - l->base), p1 = l->oa + (e1 - l->base);
		if (p0 < pa || p1 > pe || p1 < p0)
			return fail(c,
				    "map [%#" PRIx64 ", %#" PRIx64 ") -> [%#" PRIx64
				    ", %#" PRIx64 "): the leaf %#" PRIx64 "+%#" PRIx64
				    " level %d (pte %#018" PRIx64 ") maps IPA %#" PRIx64
				    "..%#" PRIx64 " to PA %#" PRIx64 "..%#" PRIx64
				    ", %s the output range",
				    ipa, e, pa, pe, l->base, l->size, l->level,
				    l->pte, s1, e1, p0, p1,
				    p0 < pa ? "below" : "beyond");
	}
	return 0;
}

struct bounds_arg {
	struct check_leaf *v;
	size_t n, cap;
};

static int bounds_collect_cb(void *arg, const struct check_leaf *l)
{
	struct bounds_arg *a = arg;
	if (!l->valid)
		return 0;
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v)
			abort();
	}
	a->v[a->n++] = *l;
	return 0;
}

int checker_map_bounds(struct checker *c, const struct check_leaf *pre,
		       size_t npre, uint64_t ipa, uint64_t size, uint64_t pa)
{
	/* the range grown to the leaves that straddled it before; the walk
	 * reports leaves straddling it now whole */
	uint64_t s = ipa, e = ipa + size;
	if (npre && pre[0].base < s)
		s = pre[0].base;
	if (npre && pre[npre - 1].base + pre[npre - 1].size > e)
		e = pre[npre - 1].base + pre[npre - 1].size;
	if (s == e)
		e = s + (1ull << c->geo.granule_shift);
	struct bounds_arg a = { NULL, 0, 0 };
	int ret = walk_range(c, s, e, false, bounds_collect_cb, &a);
	if (!ret)
		ret = checker_map_bounds_leaves(c, pre, npre, a.v, a.n, ipa,
						size, pa);
	free(a.v);
	return ret;
}

struct at_arg {
	struct check_leaf *l;
	bool found;
};

static int at_cb(void *arg, const struct check_leaf *l)
{
	struct at_arg *a = arg;
	*a->l = *l;
	a->found = true;
	return 1;
}

int checker_leaf_at(struct checker *c, uint64_t ipa, struct check_leaf *l)
{
	struct at_arg a = { l, false };
	c->msg[0] = 0;
	uint64_t g = 1ull << c->geo.granule_shift;
	ipa &= ~(g - 1);
	int ret = walk_range(c, ipa, ipa + g, false, at_cb, &a);
	if (ret < 0 || !a.found)
		return -1;
	if (!l->valid) {
		/* report the whole invalid entry, not the clipped page */
		uint64_t size = 1ull << check_level_shift(&c->geo, l->level);
		l->base = ipa & ~(size - 1);
		l->size = size;
		return 0;
	}
	return 1;
}

/* ----------------------------------------------------- model and lookup */

struct cmp {
	struct checker *c;
	const struct model *m;
	uint64_t next; /* model comparison cursor inside a leaf */
	const struct check_leaf *l;
	/* the model's runs over the walked range, taken once: the walk
	 * visits leaves in address order, so a cursor finds each leaf's */
	struct model_run *runs;
	size_t nruns, cap, idx;
};

static int take_run_cb(void *arg, const struct model_run *r)
{
	struct cmp *p = arg;
	if (p->nruns == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->runs = realloc(p->runs, p->cap * sizeof(*p->runs));
		if (!p->runs)
			abort();
	}
	p->runs[p->nruns++] = *r;
	return 0;
}

/* Like model_for_each over [s, e), from the runs taken once. */
static int runs_for_each(struct cmp *p, uint64_t s, uint64_t e,
			 model_iter_fn fn)
{
	while (p->idx < p->nruns && p->runs[p->idx].end <= s)
		p->idx++;
	for (size_t i = p->idx; i < p->nruns && p->runs[i].start < e; i++) {
		struct model_run r = p->runs[i];
		if (r.start < s) {
			r.pa += s - r.start;
			r.start = s;
		}
		if (r.end > e)
			r.end = e;
		int ret = fn(p, &r);
		if (ret)
			return ret;
	}
	return 0;
}

static int leaf_run_cb(void *arg, const struct model_run *r)
{
	struct cmp *p = arg;
	const struct check_leaf *l = p->l;
	struct checker *c = p->c;
	if (r->start != p->next)
		return fail(c,
			    "IPA %#" PRIx64 ": table maps it (leaf %#" PRIx64
			    "+%#" PRIx64 " level %d -> %#" PRIx64
			    " pte %#018" PRIx64 ") but the model has a hole",
			    p->next, l->base, l->size, l->level, l->oa,
			    l->pte);
	uint64_t want_pa = l->oa + (r->start - l->base);
	uint32_t got = l->attrs & ~(SLAT_YOUNG | SLAT_DIRTY);
	if (r->pa != want_pa || r->attrs != got)
		return fail(c,
			    "IPA %#" PRIx64 ": table maps -> %#" PRIx64
			    " attrs %#x (leaf %#" PRIx64 "+%#" PRIx64
			    " level %d pte %#018" PRIx64 "), model says -> %#" PRIx64
			    " attrs %#x",
			    r->start, want_pa, got, l->base, l->size, l->level,
			    l->pte, r->pa, r->attrs);
	if (r->young != MODEL_YOUNG_UNKNOWN &&
	    (r->young == MODEL_YOUNG) != !!(l->attrs & SLAT_YOUNG))
		return fail(c,
			    "IPA %#" PRIx64 ": table says %s (leaf %#" PRIx64
			    "+%#" PRIx64 " pte %#018" PRIx64
			    "), model says %s",
			    r->start, (l->attrs & SLAT_YOUNG) ? "young" : "old",
			    l->base, l->size, l->pte,
			    r->young == MODEL_YOUNG ? "young" : "old");
	if (r->dirty != !!(l->attrs & SLAT_DIRTY))
		return fail(c,
			    "IPA %#" PRIx64 ": table says %s (leaf %#" PRIx64
			    "+%#" PRIx64 " pte %#018" PRIx64
			    "), model says %s",
			    r->start, (l->attrs & SLAT_DIRTY) ? "dirty" : "clean",
			    l->base, l->size, l->pte,
			    r->dirty ? "dirty" : "clean");
	p->next = r->end;
	return 0;
}

static int hole_run_cb(void *arg, const struct model_run *r)
{
	struct cmp *p = arg;
	return fail(p->c,
		    "IPA %#" PRIx64 ": model maps it (-> %#" PRIx64
		    " attrs %#x) but the table has no leaf there "
		    "(invalid entry at level %d)",
		    r->start, r->pa, r->attrs, p->l->level);
}

static int check_lookup_leaf(struct checker *c, const struct check_leaf *l,
			     uint64_t ipa)
{
	struct slat_leaf sl;
	int ret = slat_lookup(c->t, slat_ipa(ipa), &sl);
	if (ret != SLAT_OK)
		return fail(c,
			    "slat_lookup(%#" PRIx64 ") = %s but the raw table "
			    "has leaf %#" PRIx64 "+%#" PRIx64 " pte %#018" PRIx64,
			    ipa, check_status_name(ret), l->base, l->size,
			    l->pte);
	uint64_t want_pa = l->oa + (ipa - l->base);
	if (slat_ipa_v(sl.base) != l->base || sl.size != l->size ||
	    slat_pa_v(sl.pa) != want_pa || sl.attrs != l->attrs ||
	    sl.level != l->level || sl.pte != l->pte)
		return fail(c,
			    "slat_lookup(%#" PRIx64 ") = base %#" PRIx64
			    " size %#" PRIx64 " pa %#" PRIx64
			    " attrs %#x level %d pte %#018" PRIx64
			    "; raw walk: base %#" PRIx64 " size %#" PRIx64
			    " pa %#" PRIx64 " attrs %#x level %d pte %#018" PRIx64,
			    ipa, slat_ipa_v(sl.base), sl.size,
			    slat_pa_v(sl.pa), sl.attrs, sl.level, sl.pte,
			    l->base, l->size, want_pa, l->attrs, l->level,
			    l->pte);
	return 0;
}

static int check_lookup_hole(struct checker *c, uint64_t ipa)
{
	struct slat_leaf sl;
	int ret = slat_lookup(c->t, slat_ipa(ipa), &sl);
	if (ret != SLAT_E_NOENT)
		return fail(c,
			    "slat_lookup(%#" PRIx64 ") = %s (pte %#018" PRIx64
			    ") but the raw table has no leaf there",
			    ipa, check_status_name(ret),
			    ret == SLAT_OK ? sl.pte : 0);
	return 0;
}

static int cmp_cb(void *arg, const struct check_leaf *l)
{
	struct cmp *p = arg;
	struct checker *c = p->c;
	uint64_t g = 1ull << c->geo.granule_shift;
	p->l = l;
	if (l->valid) {
		if (p->m) {
			p->next = l->base;
			if (runs_for_each(p, l->base, l->base + l->size,
					  leaf_run_cb))
				return -1;
			if (p->next != l->base + l->size)
				return fail(c,
					    "IPA %#" PRIx64
					    ": table maps it (leaf %#" PRIx64
					    "+%#" PRIx64 " pte %#018" PRIx64
					    ") but the model has a hole",
					    p->next, l->base, l->size, l->pte);
		}
		if (c->check_lookup) {
			if (check_lookup_leaf(c, l, l->base))
				return -1;
			if (l->size > g &&
			    check_lookup_leaf(c, l, l->base + l->size - g))
				return -1;
		}
		return 0;
	}
	if (p->m &&
	    runs_for_each(p, l->base, l->base + l->size, hole_run_cb))
		return -1;
	if (c->check_lookup) {
		if (check_lookup_hole(c, l->base))
			return -1;
		if (l->size > g && check_lookup_hole(c, l->base + l->size - g))
			return -1;
	}
	return 0;
}

int checker_range(struct checker *c, const struct model *m, uint64_t s,
		  uint64_t e)
{
	struct cmp p = { .c = c, .m = m };
	c->msg[0] = 0;
	if (m)
		model_for_each(m, s, e, take_run_cb, &p);
	int ret = walk_range(c, s, e, false, cmp_cb, &p) ? -1 : 0;
	free(p.runs);
	return ret;
}

int checker_full(struct checker *c, const struct model *m)
{
	const struct check_geo *g = &c->geo;
	const struct slat_table *t = c->t;
	c->msg[0] = 0;
	c->epoch++;
	if (c->epoch == 0) {
		memset(c->seen, 0, c->h->nr_pages * sizeof(*c->seen));
		c->epoch = 1;
	}
	c->tables_seen = 0;
	c->leaves_seen = 0;

	/* the root: where the table says, aligned, table pages of the arena */
	uint64_t gsz = 1ull << g->granule_shift;
	uint64_t root_pa = slat_pa_v(t->root_pa);
	uint8_t *root = checker_phys_to_virt(c, root_pa);
	if (!root || (void *)root != t->root)
		return fail(c, "root PA %#" PRIx64 " does not match root VA",
			    root_pa);
	if (root_pa % (g->root_pages * gsz))
		return fail(c, "root PA %#" PRIx64 " not aligned to %u pages",
			    root_pa, g->root_pages);
	for (unsigned i = 0; i < g->root_pages; i++) {
		if (!slat_hosted_is_table_page(c->h, root + i * gsz))
			return fail(c, "root page %u is not a table page", i);
		c->seen[page_index(c, root + i * gsz)] = c->epoch;
	}
	const uint64_t *r = (const uint64_t *)root;
	uint64_t total = (uint64_t)g->root_pages * g->entries;
	for (uint64_t i = g->root_entries; i < total; i++)
		if (r[i])
			return fail(c,
				    "root entry %" PRIu64 " beyond root_entries "
				    "(%u) is %#018" PRIx64,
				    i, g->root_entries, r[i]);

	struct cmp p = { .c = c, .m = m };
	if (m)
		model_for_each(m, 0, ia_end(c), take_run_cb, &p);
	struct walk w = { c, true, cmp_cb, &p, NULL };
	int ret = visit_table(&w, (uint64_t *)root, g->start_level, 0,
			      g->root_entries, 0, ia_end(c));
	free(p.runs);
	if (ret)
		return -1;

	uint64_t in_use = slat_hosted_table_pages(c->h);
	if (c->tables_seen + g->root_pages != in_use)
		return fail(c,
			    "leak: %" PRIu64 " tables reachable + %u root pages"
			    ", but the arena has %" PRIu64 " table pages",
			    c->tables_seen, g->root_pages, in_use);
	if (c->h->double_frees)
		return fail(c, "%" PRIu64 " double frees", c->h->double_frees);
	if (c->check_stats &&
	    t->stats.pages_alloc - t->stats.pages_freed != c->tables_seen)
		return fail(c,
			    "stats: pages_alloc %" PRIu64 " - pages_freed %" PRIu64
			    " != %" PRIu64 " reachable tables",
			    t->stats.pages_alloc, t->stats.pages_freed,
			    c->tables_seen);
	return 0;
}
