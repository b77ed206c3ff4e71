/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: the virtual-time scheduler (vtime.h). Actors ready to run sit
 * in a heap by virtual clock; mmu_lock is a reader/writer lock with one
 * FIFO of waiters (a queued lock: a reader behind a waiting writer waits);
 * cleaning actors share the memory bandwidth as processor sharing, each at
 * rate min(1, share / cleaners), tracked by one virtual progress clock so
 * that a change in the number of cleaners costs O(log n).
 */
#include "vtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ST_READY, ST_BLOCKED, ST_CLEANING, ST_DONE };

struct actor {
	double t;            /* clock: when its next step runs */
	double key_clean;    /* progress value at which its clean ends */
	double fstart, wait_start;
	int state, hpos;
	bool in_fault, wait_write, wait_host;
};

/* A binary min-heap of actor indices by (key, index). */
struct heap {
	int *h, n;
	struct actor *a;
	bool clean;          /* keyed by key_clean, else by t */
};

static double hkey(const struct heap *q, int i)
{
	return q->clean ? q->a[i].key_clean : q->a[i].t;
}

static bool hless(const struct heap *q, int x, int y)
{
	double kx = hkey(q, x), ky = hkey(q, y);

	return kx < ky || (kx == ky && x < y);
}

static void hset(struct heap *q, int pos, int i)
{
	q->h[pos] = i;
	if (!q->clean)
		q->a[i].hpos = pos;
}

static void hup(struct heap *q, int pos)
{
	int i = q->h[pos];

	while (pos > 0 && hless(q, i, q->h[(pos - 1) / 2])) {
		hset(q, pos, q->h[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	hset(q, pos, i);
}

static void hdown(struct heap *q, int pos)
{
	int i = q->h[pos];

	for (;;) {
		int c = 2 * pos + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && hless(q, q->h[c + 1], q->h[c]))
			c++;
		if (!hless(q, q->h[c], i))
			break;
		hset(q, pos, q->h[c]);
		pos = c;
	}
	hset(q, pos, i);
}

static void hpush(struct heap *q, int i)
{
	q->h[q->n++] = i;
	hup(q, q->n - 1);
}

static int hpop(struct heap *q)
{
	int top = q->h[0];

	if (--q->n > 0) {
		hset(q, 0, q->h[q->n]);
		hdown(q, 0);
	}
	return top;
}

struct sched {
	const struct vt_config *c;
	struct vt_result *r;
	struct actor *a;
	struct heap ready, cleaning;
	double now;
	/* mmu_lock */
	int writer, readers;
	double hold_start;
	int *fifo, qhead, qlen;
	/* clean bandwidth: progress clock and when it was last advanced */
	double progress, progress_t;
};

static double clean_rate(const struct sched *s)
{
	double share = s->c->clean_share;
	int k = s->cleaning.n;

	if (share <= 0 || k <= share)
		return 1;
	return share / k;
}

/* Bring the clean progress clock up to time @t. */
static void clean_advance(struct sched *s, double t)
{
	if (s->cleaning.n)
		s->progress += (t - s->progress_t) * clean_rate(s);
	s->progress_t = t;
}

static void make_ready(struct sched *s, int i, double t)
{
	s->a[i].t = t;
	s->a[i].state = ST_READY;
	hpush(&s->ready, i);
}

static void grant_one(struct sched *s, int i)
{
	struct actor *x = &s->a[i];
	double w = s->now - x->wait_start;

	s->r->a[i].lock_wait_ns += w;
	if (x->wait_host)
		s->r->a[i].stall_host_ns += w;
	if (x->wait_write) {
		s->writer = i;
		s->hold_start = s->now;
	} else {
		s->readers++;
	}
	make_ready(s, i, s->now);
}

/* Hand the lock to the waiters at the head of the FIFO that it admits. */
static void grant(struct sched *s)
{
	int n = s->c->nactors;

	while (s->qlen && s->writer < 0) {
		int i = s->fifo[s->qhead];

		if (s->a[i].wait_write && s->readers)
			break;
		s->qhead = (s->qhead + 1) % n;
		s->qlen--;
		grant_one(s, i);
		if (s->a[i].wait_write)
			break;
	}
}

static void enqueue(struct sched *s, int i, bool write)
{
	struct actor *x = &s->a[i];
	int n = s->c->nactors;

	x->state = ST_BLOCKED;
	x->wait_write = write;
	x->wait_start = s->now;
	x->wait_host = s->writer >= s->c->nvcpus;
	s->fifo[(s->qhead + s->qlen) % n] = i;
	s->qlen++;
}

static void release_write(struct sched *s)
{
	double hold = s->now - s->hold_start;

	if (hold > s->r->max_write_hold_ns)
		s->r->max_write_hold_ns = hold;
	s->writer = -1;
}

/* The lock steps; returns false when actor @i now waits for the lock. */
static bool lock_step(struct sched *s, int i, enum vt_kind k)
{
	switch (k) {
	case VT_LOCK_READ:
		if (s->writer >= 0 || s->qlen) {
			enqueue(s, i, false);
			return false;
		}
		s->readers++;
		return true;
	case VT_LOCK_WRITE:
		if (s->writer >= 0 || s->readers || s->qlen) {
			enqueue(s, i, true);
			return false;
		}
		s->writer = i;
		s->hold_start = s->now;
		return true;
	case VT_UNLOCK:
		if (s->writer == i)
			release_write(s);
		else if (s->readers > 0)
			s->readers--;
		grant(s);
		return true;
	default: /* VT_YIELD: only when someone waits, as cond_resched does */
		if (s->writer != i || !s->qlen)
			return true;
		release_write(s);
		grant(s);
		enqueue(s, i, true);
		return false;
	}
}

/* A shootdown by IPI: every vCPU in the guest takes an exit to ack it. */
static double shoot_ipi(struct sched *s, int i)
{
	const struct vt_config *c = s->c;
	int n = 0;

	for (int j = 0; j < c->nvcpus; j++) {
		struct actor *x = &s->a[j];

		if (j == i || x->state != ST_READY || x->in_fault)
			continue;
		x->t += c->ipi_exit_ns;
		hdown(&s->ready, x->hpos);
		s->r->a[j].ipi_ns += c->ipi_exit_ns;
		if (i >= c->nvcpus)
			s->r->a[j].stall_host_ns += c->ipi_exit_ns;
		n++;
	}
	return n * c->ipi_send_ns + (n ? c->ipi_exit_ns : 0);
}

/* When the earliest clean ends (INFINITY: none) and whose it is, in *@ic. */
static double clean_next(const struct sched *s, int *ic)
{
	double tc;

	*ic = -1;
	if (!s->cleaning.n)
		return INFINITY;
	*ic = s->cleaning.h[0];
	tc = s->progress_t + (s->a[*ic].key_clean - s->progress) / clean_rate(s);
	return tc < s->progress_t ? s->progress_t : tc;
}

/* Whether actor @i, ready at @t, would be the next event anyway: then it
 * runs on without a trip through the heap, in the same order (a phase
 * may replay millions of faults). */
static bool runs_next(const struct sched *s, int i, double t)
{
	int ic, j;
	double tc = clean_next(s, &ic);

	if (tc < t || (tc == t && ic < i))
		return false;
	if (!s->ready.n)
		return true;
	j = s->ready.h[0];
	return t < s->a[j].t || (t == s->a[j].t && i < j);
}

/* Run actor @i's steps at s->now until its clock moves on past another's,
 * it blocks, cleans or ends. */
static void run_actor(struct sched *s, int i)
{
	struct actor *x = &s->a[i];
	struct vt_step st;

	for (;;) {
		s->c->next(s->c->arg, i, &st);
		switch (st.kind) {
		case VT_WORK:
		case VT_SHOOT:
			if (st.kind == VT_SHOOT && s->c->ipi)
				st.ns += shoot_ipi(s, i);
			if (st.ns > 0) {
				double t = s->now + st.ns;

				if (!runs_next(s, i, t)) {
					make_ready(s, i, t);
					return;
				}
				x->t = t;
				s->now = t;
			}
			break;
		case VT_CLEAN:
			if (st.ns <= 0)
				break;
			clean_advance(s, s->now);
			x->key_clean = s->progress + st.ns;
			x->state = ST_CLEANING;
			hpush(&s->cleaning, i);
			return;
		case VT_FAULT_BEGIN:
			x->in_fault = true;
			x->fstart = s->now;
			break;
		case VT_FAULT_END:
			x->in_fault = false;
			vt_hist_add(&s->r->a[i].lat, s->now - x->fstart);
			break;
		case VT_END:
			x->state = ST_DONE;
			s->r->a[i].end_ns = s->now;
			if (s->now > s->r->elapsed_ns)
				s->r->elapsed_ns = s->now;
			return;
		default:
			if (!lock_step(s, i, st.kind))
				return;
		}
	}
}

/* The next event: an actor's step or the end of a clean. */
static bool sched_step(struct sched *s)
{
	double ta = s->ready.n ? s->a[s->ready.h[0]].t : INFINITY;
	int ic;
	double tc = clean_next(s, &ic);

	if (isinf(ta) && isinf(tc))
		return false;
	if (tc < ta || (tc == ta && ic < s->ready.h[0])) {
		clean_advance(s, tc);
		hpop(&s->cleaning);
		s->now = tc;
		make_ready(s, ic, tc);
		return true;
	}
	ic = hpop(&s->ready);
	s->now = ta;
	run_actor(s, ic);
	return true;
}

int vt_run(const struct vt_config *c, struct vt_result *r)
{
	struct sched s = { .c = c, .r = r, .writer = -1 };
	int n = c->nactors;

	memset(r, 0, sizeof(*r));
	r->a = calloc((size_t)n + 1, sizeof(*r->a));
	s.a = calloc((size_t)n + 1, sizeof(*s.a));
	s.fifo = calloc((size_t)n + 1, sizeof(int));
	s.ready.h = calloc((size_t)n + 1, sizeof(int));
	s.cleaning.h = calloc((size_t)n + 1, sizeof(int));
	if (!r->a || !s.a || !s.fifo || !s.ready.h || !s.cleaning.h) {
		free(s.a);
		free(s.fifo);
		free(s.ready.h);
		free(s.cleaning.h);
		vt_result_free(r);
		return -1;
	}
	s.ready.a = s.cleaning.a = s.a;
	s.cleaning.clean = true;
	for (int i = 0; i < n; i++)
		make_ready(&s, i, 0);
	while (sched_step(&s))
		;
	free(s.a);
	free(s.fifo);
	free(s.ready.h);
	free(s.cleaning.h);
	return 0;
}

void vt_result_free(struct vt_result *r)
{
	free(r->a);
	r->a = NULL;
}

/* Bucket b holds latencies up to 2^(b / 8) ns. */
static int hist_bucket(double ns)
{
	int b;

	if (ns <= 1)
		return 0;
	b = (int)ceil(log2(ns) * 8);
	return b < VT_HIST_BUCKETS ? b : VT_HIST_BUCKETS - 1;
}

void vt_hist_add(struct vt_hist *h, double ns)
{
	h->b[hist_bucket(ns)]++;
	h->n++;
	if (ns > h->max)
		h->max = ns;
}

double vt_hist_pct(const struct vt_hist *h, double p)
{
	uint64_t want, seen = 0;

	if (!h->n)
		return 0;
	if (p >= 1)
		return h->max;
	want = (uint64_t)ceil(p * (double)h->n);
	if (!want)
		want = 1;
	for (int b = 0; b < VT_HIST_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= want) {
			double edge = exp2((double)b / 8);

			return edge < h->max ? edge : h->max;
		}
	}
	return h->max;
}
