/* SPDX-License-Identifier: MIT */
/*
 * The flat reference model as an interval map: a treap of non-overlapping
 * runs keyed by their first IPA. A range operation cuts the runs at both
 * ends, takes the runs inside out as a sorted array, rewrites the array and
 * puts it back, merging neighbours that continue each other.
 */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slat/types.h>

struct node {
	struct model_run r;
	uint32_t prio;
	struct node *l, *rt;
};

struct model {
	struct node *root;
	uint64_t granule;
	bool dirty_on, wp_cleans;
	size_t nr;
	uint64_t rng;
	struct node *free_nodes;
	/* scratch arrays for range operations */
	struct model_run *in, *out;
	size_t in_cap, out_cap;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fprintf(stderr, "model: out of memory\n");
		abort();
	}
	return p;
}

static uint32_t next_prio(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (uint32_t)(m->rng >> 11);
}

static struct node *node_new(struct model *m, const struct model_run *r)
{
	struct node *n = m->free_nodes;
	if (n)
		m->free_nodes = n->l;
	else
		n = xmalloc(sizeof(*n));
	n->r = *r;
	n->prio = next_prio(m);
	n->l = n->rt = NULL;
	m->nr++;
	return n;
}

static void node_put(struct model *m, struct node *n)
{
	n->l = m->free_nodes;
	m->free_nodes = n;
	m->nr--;
}

/* a: start < key; b: start >= key */
static void split(struct node *t, uint64_t key, struct node **a,
		  struct node **b)
{
	if (!t) {
		*a = *b = NULL;
		return;
	}
	if (t->r.start < key) {
		split(t->rt, key, &t->rt, b);
		*a = t;
	} else {
		split(t->l, key, a, &t->l);
		*b = t;
	}
}

static struct node *merge(struct node *a, struct node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->rt = merge(a->rt, b);
		return a;
	}
	b->l = merge(a, b->l);
	return b;
}

/* The node with the largest start < key. */
static struct node *find_lt(struct node *t, uint64_t key)
{
	struct node *best = NULL;
	while (t) {
		if (t->r.start < key) {
			best = t;
			t = t->rt;
		} else {
			t = t->l;
		}
	}
	return best;
}

/* The node with start == key. */
static struct node *find_eq(struct node *t, uint64_t key)
{
	while (t) {
		if (t->r.start == key)
			return t;
		t = key < t->r.start ? t->l : t->rt;
	}
	return NULL;
}

static void insert(struct model *m, struct node *n)
{
	struct node *a, *b;
	split(m->root, n->r.start, &a, &b);
	m->root = merge(merge(a, n), b);
}

static void erase(struct model *m, uint64_t key)
{
	struct node *a, *b, *c;
	split(m->root, key, &a, &b);
	split(b, key + 1, &b, &c);
	if (b)
		node_put(m, b); /* a single node: keys are unique */
	m->root = merge(a, c);
}

/* Make sure no run straddles @key. */
static void cut(struct model *m, uint64_t key)
{
	struct node *n = find_lt(m->root, key);
	if (!n || n->r.end <= key)
		return;
	struct model_run r = n->r;
	r.pa += key - r.start;
	r.start = key;
	n->r.end = key;
	insert(m, node_new(m, &r));
}

static bool continues(const struct model_run *a, const struct model_run *b)
{
	return a->end == b->start && a->attrs == b->attrs &&
	       a->young == b->young && a->dirty == b->dirty &&
	       a->pa + (a->end - a->start) == b->pa;
}

/* Merge the run ending at @key with the one starting there, if possible. */
static void coalesce(struct model *m, uint64_t key)
{
	struct node *a = find_lt(m->root, key);
	struct node *b = find_eq(m->root, key);
	if (!a || !b || !continues(&a->r, &b->r))
		return;
	uint64_t end = b->r.end;
	erase(m, key);
	a = find_lt(m->root, key);
	a->r.end = end;
}

static void collect(struct model *m, struct node *t, size_t *n)
{
	if (!t)
		return;
	collect(m, t->l, n);
	if (*n == m->in_cap) {
		m->in_cap = m->in_cap ? 2 * m->in_cap : 64;
		m->in = realloc(m->in, m->in_cap * sizeof(*m->in));
		if (!m->in)
			abort();
	}
	m->in[(*n)++] = t->r;
	struct node *rt = t->rt;
	node_put(m, t);
	collect(m, rt, n);
}

/* Take the runs of [s, e) out into m->in; returns their number. */
static size_t extract(struct model *m, uint64_t s, uint64_t e,
		      struct node **A, struct node **C)
{
	struct node *B, *M;
	cut(m, s);
	cut(m, e);
	split(m->root, s, A, &B);
	split(B, e, &M, C);
	m->root = NULL;
	size_t n = 0;
	collect(m, M, &n);
	return n;
}

static void out_push(struct model *m, size_t *n, const struct model_run *r)
{
	if (r->start >= r->end)
		return;
	if (*n && continues(&m->out[*n - 1], r)) {
		m->out[*n - 1].end = r->end;
		return;
	}
	if (*n == m->out_cap) {
		m->out_cap = m->out_cap ? 2 * m->out_cap : 64;
		m->out = realloc(m->out, m->out_cap * sizeof(*m->out));
		if (!m->out)
			abort();
	}
	m->out[(*n)++] = *r;
}

/* Put m->out[0..n) (inside [s, e)) back between A and C. */
static void reinsert(struct model *m, struct node *A, size_t n,
		     struct node *C, uint64_t s, uint64_t e)
{
	struct node *M = NULL;
	for (size_t i = 0; i < n; i++)
		M = merge(M, node_new(m, &m->out[i]));
	m->root = merge(merge(A, M), C);
	coalesce(m, s);
	coalesce(m, e);
}

struct model *model_new(uint64_t granule)
{
	struct model *m = xmalloc(sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->granule = granule;
	m->rng = 0x9e3779b97f4a7c15ull;
	return m;
}

static void free_tree(struct node *t)
{
	if (!t)
		return;
	free_tree(t->l);
	free_tree(t->rt);
	free(t);
}

void model_free(struct model *m)
{
	if (!m)
		return;
	free_tree(m->root);
	while (m->free_nodes) {
		struct node *n = m->free_nodes;
		m->free_nodes = n->l;
		free(n);
	}
	free(m->in);
	free(m->out);
	free(m);
}

void model_dirty_rules(struct model *m, bool on, bool wrprotect_cleans)
{
	m->dirty_on = on;
	m->wp_cleans = wrprotect_cleans;
}

bool model_has_dirty(const struct model *m)
{
	return m->dirty_on;
}

/* The dirty state a page installed with @attrs gets. */
static uint8_t installed_dirty(const struct model *m, uint32_t attrs)
{
	return m->dirty_on && (attrs & SLAT_W);
}

static int clone_cb(void *arg, const struct model_run *r)
{
	struct model *c = arg;
	c->root = merge(c->root, node_new(c, r));
	return 0;
}

struct model *model_clone(const struct model *m)
{
	struct model *c = model_new(m->granule);
	model_dirty_rules(c, m->dirty_on, m->wp_cleans);
	model_for_each(m, 0, UINT64_MAX, clone_cb, c);
	return c;
}

size_t model_nr_runs(const struct model *m)
{
	return m->nr;
}

static int bytes_cb(void *arg, const struct model_run *r)
{
	*(uint64_t *)arg += r->end - r->start;
	return 0;
}

uint64_t model_mapped_bytes(const struct model *m)
{
	uint64_t b = 0;
	model_for_each(m, 0, UINT64_MAX, bytes_cb, &b);
	return b;
}

bool model_find(const struct model *m, uint64_t ipa, struct model_run *out)
{
	struct node *n = find_lt(m->root, ipa + 1);
	if (ipa == UINT64_MAX)
		n = find_lt(m->root, ipa); /* no run ends beyond 2^64 - 1 */
	if (!n || n->r.end <= ipa)
		return false;
	if (out)
		*out = n->r;
	return true;
}

static int iter(const struct node *t, uint64_t s, uint64_t e,
		model_iter_fn fn, void *arg)
{
	int ret;
	if (!t)
		return 0;
	if (s < t->r.start) {
		ret = iter(t->l, s, e, fn, arg);
		if (ret)
			return ret;
	}
	if (t->r.start < e && t->r.end > s) {
		struct model_run r = t->r;
		if (r.start < s) {
			r.pa += s - r.start;
			r.start = s;
		}
		if (r.end > e)
			r.end = e;
		ret = fn(arg, &r);
		if (ret)
			return ret;
	}
	if (e > t->r.end)
		return iter(t->rt, s, e, fn, arg);
	return 0;
}

int model_for_each(const struct model *m, uint64_t s, uint64_t e,
		   model_iter_fn fn, void *arg)
{
	if (s >= e)
		return 0;
	return iter(m->root, s, e, fn, arg);
}

void model_set(struct model *m, uint64_t s, uint64_t e, uint64_t pa,
	       uint32_t attrs, uint8_t young)
{
	struct node *A, *C;
	if (s >= e)
		return;
	extract(m, s, e, &A, &C);
	size_t n = 0;
	struct model_run r = { s, e, pa, attrs, young,
			       installed_dirty(m, attrs) };
	out_push(m, &n, &r);
	reinsert(m, A, n, C, s, e);
}

void model_remove(struct model *m, uint64_t s, uint64_t e)
{
	struct node *A, *C;
	if (s >= e)
		return;
	extract(m, s, e, &A, &C);
	reinsert(m, A, 0, C, s, e);
}

void model_set_young(struct model *m, uint64_t s, uint64_t e, uint8_t young)
{
	struct node *A, *C;
	if (s >= e)
		return;
	size_t k = extract(m, s, e, &A, &C), n = 0;
	for (size_t i = 0; i < k; i++) {
		struct model_run r = m->in[i];
		r.young = young;
		out_push(m, &n, &r);
	}
	reinsert(m, A, n, C, s, e);
}

void model_set_dirty(struct model *m, uint64_t s, uint64_t e, bool dirty)
{
	struct node *A, *C;
	if (s >= e || !m->dirty_on)
		return;
	size_t k = extract(m, s, e, &A, &C), n = 0;
	for (size_t i = 0; i < k; i++) {
		struct model_run r = m->in[i];
		r.dirty = dirty;
		out_push(m, &n, &r);
	}
	reinsert(m, A, n, C, s, e);
}

static int dirty_cb(void *arg, const struct model_run *r)
{
	if (r->dirty)
		*(uint64_t *)arg += r->end - r->start;
	return 0;
}

uint64_t model_dirty_pages(const struct model *m, uint64_t s, uint64_t e)
{
	uint64_t b = 0;
	model_for_each(m, s, e, dirty_cb, &b);
	return b / m->granule;
}

void model_old_to_unknown(struct model *m, uint64_t s, uint64_t e)
{
	struct node *A, *C;
	if (s >= e)
		return;
	size_t k = extract(m, s, e, &A, &C), n = 0;
	for (size_t i = 0; i < k; i++) {
		struct model_run r = m->in[i];
		if (r.young == MODEL_OLD)
			r.young = MODEL_YOUNG_UNKNOWN;
		out_push(m, &n, &r);
	}
	reinsert(m, A, n, C, s, e);
}

struct span_acc {
	uint64_t next; /* first byte not yet seen */
	bool hole;
};

static int span_cb(void *arg, const struct model_run *r)
{
	struct span_acc *a = arg;
	if (r->start != a->next) {
		a->hole = true;
		return 1;
	}
	a->next = r->end;
	return 0;
}

bool model_fully_mapped(const struct model *m, uint64_t s, uint64_t e)
{
	struct span_acc a = { s, false };
	model_for_each(m, s, e, span_cb, &a);
	return !a.hole && a.next == e;
}

static int any_cb(void *arg, const struct model_run *r)
{
	(void)arg;
	(void)r;
	return 1;
}

bool model_any_mapped(const struct model *m, uint64_t s, uint64_t e)
{
	return model_for_each(m, s, e, any_cb, NULL) != 0;
}

struct same_arg {
	uint64_t delta; /* pa - ipa, modulo 2^64 */
	uint32_t mt;
	bool want_same; /* true: find a kept page; false: find a conflict */
};

static int same_cb(void *arg, const struct model_run *r)
{
	struct same_arg *a = arg;
	bool same = r->pa - r->start == a->delta && MODEL_MEMTYPE(r->attrs) == a->mt;
	return same == a->want_same;
}

bool model_map_conflicts(const struct model *m, uint64_t s, uint64_t e,
			 uint64_t pa, uint32_t attrs)
{
	struct same_arg a = { pa - s, MODEL_MEMTYPE(attrs), false };
	return model_for_each(m, s, e, same_cb, &a) != 0;
}

bool model_map_any_kept(const struct model *m, uint64_t ipa, uint64_t s,
			uint64_t e, uint64_t pa, uint32_t attrs)
{
	struct same_arg a = { pa - ipa, MODEL_MEMTYPE(attrs), true };
	return model_for_each(m, s, e, same_cb, &a) != 0;
}

struct young_acc {
	bool young, unknown;
};

static int young_cb(void *arg, const struct model_run *r)
{
	struct young_acc *a = arg;
	if (r->young == MODEL_YOUNG) {
		a->young = true;
		return 1;
	}
	if (r->young == MODEL_YOUNG_UNKNOWN)
		a->unknown = true;
	return 0;
}

int model_young_summary(const struct model *m, uint64_t s, uint64_t e)
{
	struct young_acc a = { false, false };
	model_for_each(m, s, e, young_cb, &a);
	if (a.young)
		return 1;
	return a.unknown ? -1 : 0;
}

uint64_t model_map(struct model *m, uint64_t ipa, uint64_t size, uint64_t pa,
		   uint32_t attrs)
{
	struct node *A, *C;
	uint64_t s = ipa, e = ipa + size, written = 0, pos = s;
	uint64_t delta = pa - ipa;
	if (!size)
		return 0;
	size_t k = extract(m, s, e, &A, &C), n = 0;
	for (size_t i = 0; i <= k; i++) {
		uint64_t gap_end = i < k ? m->in[i].start : e;
		if (pos < gap_end) {
			struct model_run r = { pos, gap_end, pos + delta,
					       attrs, MODEL_YOUNG,
					       installed_dirty(m, attrs) };
			out_push(m, &n, &r);
			written += gap_end - pos;
		}
		if (i == k)
			break;
		struct model_run r = m->in[i];
		if (r.pa - r.start == delta &&
		    MODEL_MEMTYPE(r.attrs) == MODEL_MEMTYPE(attrs)) {
			out_push(m, &n, &r); /* left alone */
		} else {
			struct model_run w = { r.start, r.end, r.start + delta,
					       attrs, MODEL_YOUNG,
					       installed_dirty(m, attrs) };
			out_push(m, &n, &w);
			written += r.end - r.start;
		}
		pos = r.end;
	}
	reinsert(m, A, n, C, s, e);
	return written;
}

void model_unmap(struct model *m, uint64_t ipa, uint64_t size)
{
	model_remove(m, ipa, ipa + size);
}

uint64_t model_wrprotect(struct model *m, uint64_t ipa, uint64_t size)
{
	return model_restrict(m, ipa, size, SLAT_W);
}

uint64_t model_restrict(struct model *m, uint64_t ipa, uint64_t size,
			uint32_t perms)
{
	struct node *A, *C;
	uint64_t s = ipa, e = ipa + size, changed = 0;
	if (!size)
		return 0;
	size_t k = extract(m, s, e, &A, &C), n = 0;
	for (size_t i = 0; i < k; i++) {
		struct model_run r = m->in[i];
		if (r.attrs & perms)
			changed += r.end - r.start;
		r.attrs &= ~perms;
		if (m->wp_cleans && (perms & SLAT_W))
			r.dirty = 0;
		out_push(m, &n, &r);
	}
	reinsert(m, A, n, C, s, e);
	return changed;
}

uint64_t model_relax(struct model *m, uint64_t ipa, uint64_t size,
		     uint32_t perms, uint64_t *not_young)
{
	struct node *A, *C;
	uint64_t s = ipa, e = ipa + size, changed = 0, ny = 0;
	if (!size)
		return 0;
	size_t k = extract(m, s, e, &A, &C), n = 0;
	for (size_t i = 0; i < k; i++) {
		struct model_run r = m->in[i];
		if ((r.attrs | perms) != r.attrs)
			changed += r.end - r.start;
		if (r.young != MODEL_YOUNG)
			ny += r.end - r.start;
		if (perms & ~r.attrs & SLAT_W)
			r.dirty = installed_dirty(m, SLAT_W);
		r.attrs |= perms;
		r.young = MODEL_YOUNG;
		out_push(m, &n, &r);
	}
	reinsert(m, A, n, C, s, e);
	if (not_young)
		*not_young = ny;
	return changed;
}

struct uniform_acc {
	uint64_t next, pa; /* the next page and the PA it must map */
	uint32_t attrs;
	bool first, ok;
};

static int uniform_cb(void *arg, const struct model_run *r)
{
	struct uniform_acc *a = arg;
	if (a->first) {
		a->pa = r->pa;
		a->attrs = r->attrs;
		a->first = false;
	}
	if (r->start != a->next || r->pa != a->pa || r->attrs != a->attrs) {
		a->ok = false;
		return 1;
	}
	a->next = r->end;
	a->pa += r->end - r->start;
	return 0;
}

bool model_uniform(const struct model *m, uint64_t s, uint64_t e,
		   uint64_t align)
{
	struct uniform_acc a = { s, 0, 0, true, true };
	if (s >= e)
		return false;
	model_for_each(m, s, e, uniform_cb, &a);
	return a.ok && !a.first && a.next == e && (a.pa - (e - s)) % align == 0;
}

struct merge_acc {
	struct model_run r;
	bool young, unknown, dirty;
};

static int merge_cb(void *arg, const struct model_run *r)
{
	struct merge_acc *a = arg;
	if (a->r.end == 0)
		a->r = *r;
	a->young |= r->young == MODEL_YOUNG;
	a->unknown |= r->young == MODEL_YOUNG_UNKNOWN;
	a->dirty |= r->dirty;
	return 0;
}

void model_promote(struct model *m, uint64_t s, uint64_t e)
{
	struct merge_acc a;
	struct node *A, *C;
	memset(&a, 0, sizeof(a));
	model_for_each(m, s, e, merge_cb, &a);
	if (a.r.end == 0)
		return;
	extract(m, s, e, &A, &C);
	struct model_run r = { s, e, a.r.pa, a.r.attrs,
			       a.young ? MODEL_YOUNG
				       : a.unknown ? MODEL_YOUNG_UNKNOWN
						   : MODEL_OLD,
			       a.dirty };
	size_t n = 0;
	out_push(m, &n, &r);
	reinsert(m, A, n, C, s, e);
}

static int dump_cb(void *arg, const struct model_run *r)
{
	(void)arg;
	static const char *ys[] = { "old", "young", "?" };
	fprintf(stderr,
		"  model [%#" PRIx64 ", %#" PRIx64 ") -> %#" PRIx64
		" attrs %#x %s%s\n",
		r->start, r->end, r->pa, r->attrs, ys[r->young % 3],
		r->dirty ? " dirty" : "");
	return 0;
}

void model_dump(const struct model *m, uint64_t s, uint64_t e)
{
	model_for_each(m, s, e, dump_cb, NULL);
}
