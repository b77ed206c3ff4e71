/* SPDX-License-Identifier: MIT */
/*
 * A kernel build as the two-stage MMU sees it: P guest processes with their
 * own ASIDs time-shared on V vCPUs; accesses with a hot set; first-touch
 * page faults; munmap; fork (write-protect, copy-on-write), exec and exit;
 * ASID rollover. Every change to a stage-1 table goes through libslat and
 * issues the TLB maintenance a Linux arm64 guest would (twostage_as.c).
 *
 * One thread plays every vCPU, a quantum of accesses each in turn. Events
 * come from per-vCPU seeded generators only, never from TLB state, so the
 * same seed gives the same guest events under every policy.
 */
#include "twostage_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define USER_BASE   0x0000aaaa00000000ull  /* every process's region */
#define KERNEL_BASE SLAT_TS_KERNEL_VA(0x0000800000000000ull)
#define QUANTUM     256                   /* accesses per vCPU turn */
#define NO_FRAME    UINT32_MAX
#define LARGE_MUNMAP 1024                 /* pages: above MAX_TLBI_OPS */
#define MAKE_PAGES  256                   /* make's resident pages */

void slat_ts_cost_default(struct slat_ts_cost *c)
{
	*c = (struct slat_ts_cost){
		.work = 100, .tlb_hit = 2, .mem_ref = 20, .trap = 3000,
		.tlbi_va = 200, .tlbi_asid = 300, .tlbi_all = 400, .dsb = 2000,
		.fault = 3000, .ctxsw = 4000, .spawn = 400000, .hz = 2e9,
	};
}

void slat_ts_workload_default(struct slat_ts_workload *w)
{
	*w = (struct slat_ts_workload){
		.nr_vcpus = 4, .nr_procs = 8, .accesses = 2000000, .seed = 1,
		.ctxsw_rate = 1000, .spawn_rate = 25, .touch_rate = 10000,
		.munmap_rate = 500, .munmap_pages = 4, .munmap_large = 0.01,
		.cow_pages = 16, .write_frac = 0.3, .ws_pages = 1024,
		.hot_pages = 64, .hot_frac = 0.9, .kernel_frac = 0.2,
		.kernel_pages = 2048, .asid_bits = 16,
	};
}

double slat_ts_cycles(const struct slat_ts_cost *c, const struct slat_ts_stats *s,
		      const struct slat_ts_events *e)
{
	double tlbi = (double)s->hw_tlbi[SLAT_TS_VAE1IS] * c->tlbi_va +
		      (double)s->hw_tlbi[SLAT_TS_IPAS2E1IS] * c->tlbi_va +
		      (double)s->hw_tlbi[SLAT_TS_ASIDE1IS] * c->tlbi_asid +
		      (double)(s->hw_tlbi[SLAT_TS_VMALLE1IS] + s->hw_tlbi[SLAT_TS_VMALLE1] +
			       s->hw_tlbi[SLAT_TS_VMALLS12E1IS]) * c->tlbi_all;

	return (double)s->accesses * c->work + (double)s->tlb_hits * c->tlb_hit +
	       (double)s->walk_refs * c->mem_ref + tlbi + (double)s->dsb * c->dsb +
	       (double)s->traps * c->trap +
	       (double)(e->first_touch + e->cows) * c->fault +
	       (double)e->ctxsw * c->ctxsw + (double)e->spawns * c->spawn;
}

/* ---- the guest ---- */

struct proc {
	struct slat_ts_as *as;
	uint32_t *frame;     /* per page of the region: its frame, or NO_FRAME */
	bool *cow;           /* mapped read-only, shared with another process */
	uint32_t *ws;        /* working set: page indexes, hot ones first */
	int on_vcpu;         /* -1: not running */
};

struct vstate {
	uint64_t rng;
	uint64_t done;       /* accesses performed */
	int proc;
	double next_ctxsw, next_spawn, next_touch, next_munmap; /* in accesses */
};

struct guest {
	const struct slat_ts_workload *w;
	struct slat_ts *ts;
	struct slat_ts_as *kernel;
	struct proc *procs;
	struct proc make;    /* the parent of every command: small, forks */
	struct vstate v[SLAT_TS_MAX_VCPUS];
	uint32_t span;       /* pages in each process's region */
	uint16_t *users;     /* per frame: mappings sharing it */
	uint32_t next_asid, asid_limit;
	double per_access;   /* seconds of nominal guest time per access */
	struct slat_ts_events ev;
	int err;
};

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64: small state, good enough for a workload model */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rng_unit(s) * n);
}

/* Accesses until the next event of a process of @rate per second: gaps
 * uniform in [0, 2 x mean], so the rate is exact on average. */
static double next_gap(struct guest *g, uint64_t *s, double rate)
{
	if (rate <= 0)
		return 1e300;
	return 2.0 * rng_unit(s) / (rate * g->per_access);
}

static uint64_t page_va(uint32_t page)
{
	return USER_BASE + (uint64_t)page * TS_PAGE;
}

/* ---- frames shared by mappings ---- */

static uint32_t frame_index(struct guest *g, slat_ipa_t ipa)
{
	return (uint32_t)((ipa.ipa - g->ts->cfg.ram_ipa) / TS_PAGE);
}

static slat_ipa_t frame_ipa(struct guest *g, uint32_t f)
{
	return slat_ipa(g->ts->cfg.ram_ipa + (uint64_t)f * TS_PAGE);
}

static int frame_new(struct guest *g, uint32_t *f)
{
	slat_ipa_t ipa;

	if (slat_ts_frame_alloc(g->ts, false, &ipa))
		return SLAT_E_NOMEM;
	*f = frame_index(g, ipa);
	g->users[*f] = 1;
	return SLAT_OK;
}

static void frame_put(struct guest *g, uint32_t f)
{
	if (--g->users[f] == 0)
		slat_ts_frame_free(g->ts, frame_ipa(g, f));
}

/* ---- processes ---- */

static uint16_t asid_alloc(struct guest *g, uint32_t vcpu);

static int proc_init(struct guest *g, struct proc *p, uint32_t vcpu)
{
	int err;

	p->as = slat_ts_as_create(g->ts, false, asid_alloc(g, vcpu), &err);
	if (!p->as)
		return err;
	for (uint32_t i = 0; i < g->span; i++) {
		p->frame[i] = NO_FRAME;
		p->cow[i] = false;
	}
	return SLAT_OK;
}

/* A fresh working set: distinct random pages of the region. */
static void proc_fresh_ws(struct guest *g, struct proc *p, uint64_t *rng)
{
	for (uint32_t i = 0; i < g->w->ws_pages; i++)
		p->ws[i] = (uint32_t)((i * 8ull + rng_below(rng, 8)) % g->span);
}

/* exit_mmap: drop every mapping, free the table (one ASIDE1IS). */
static void proc_teardown(struct guest *g, struct proc *p)
{
	for (uint32_t i = 0; i < g->span; i++)
		if (p->frame[i] != NO_FRAME) {
			frame_put(g, p->frame[i]);
			p->frame[i] = NO_FRAME;
		}
	slat_ts_as_destroy(p->as);
	p->as = NULL;
}

/* ASIDs: a counter; when it wraps, every live process gets a new one and
 * each vCPU invalidates its own TLB (Linux's flush_context: local
 * TLBI VMALLE1 on each CPU). */
static void asid_rollover(struct guest *g)
{
	static const struct slat_ts_tlbi local_all = { .kind = SLAT_TS_VMALLE1 };

	g->ev.asid_rollovers++;
	g->next_asid = 1;
	for (uint32_t i = 0; i < g->w->nr_procs; i++)
		if (g->procs[i].as)
			slat_ts_as_set_asid(g->procs[i].as, (uint16_t)g->next_asid++);
	if (g->make.as)
		slat_ts_as_set_asid(g->make.as, (uint16_t)g->next_asid++);
	for (uint32_t c = 0; c < g->w->nr_vcpus; c++)
		slat_ts_guest_flush(g->ts, c, &local_all, 1);
}

static uint16_t asid_alloc(struct guest *g, uint32_t vcpu)
{
	(void)vcpu;
	if (g->next_asid >= g->asid_limit)
		asid_rollover(g);
	return (uint16_t)g->next_asid++;
}

/* ---- faults ---- */

static const uint32_t user_rw = SLAT_RW | SLAT_USER | SLAT_NG;
static const uint32_t user_ro = SLAT_R | SLAT_USER | SLAT_NG;

static int first_touch(struct guest *g, struct proc *p, uint32_t page)
{
	uint32_t f;
	int ret = frame_new(g, &f);

	if (ret)
		return ret;
	p->frame[page] = f;
	p->cow[page] = false;
	g->ev.first_touch++;
	ret = slat_ts_as_map(p->as, page_va(page), TS_PAGE, frame_ipa(g, f), user_rw);
	return ret < 0 ? ret : SLAT_OK;
}

/* do_wp_page: copy a shared page (break-before-make: VAE1IS), or reuse
 * one no longer shared (permission upgrade: VAE1IS of the stale entry). */
static int cow_fault(struct guest *g, struct proc *p, uint32_t page)
{
	uint32_t old = p->frame[page], f;
	int ret;

	g->ev.cows++;
	p->cow[page] = false;
	if (g->users[old] == 1)
		return slat_ts_as_relax(p->as, page_va(page), TS_PAGE, SLAT_RW) < 0
			       ? SLAT_E_NOMEM : SLAT_OK;
	ret = frame_new(g, &f);
	if (ret)
		return ret;
	p->frame[page] = f;
	frame_put(g, old);
	ret = slat_ts_as_map(p->as, page_va(page), TS_PAGE, frame_ipa(g, f), user_rw);
	return ret < 0 ? ret : SLAT_OK;
}

static int user_access(struct guest *g, uint32_t c, struct proc *p,
		       uint32_t page, bool write)
{
	struct slat_ts_result r;
	unsigned access = write ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ;

	for (int tries = 0; tries < 3; tries++) {
		slat_ts_access(g->ts, c, page_va(page), access, true, &r);
		if (r.fault == SLAT_FAULT_NONE)
			return SLAT_OK;
		int ret = SLAT_E_INVAL;
		if (r.fault == SLAT_FAULT_TRANSLATION && p->frame[page] == NO_FRAME)
			ret = first_touch(g, p, page);
		else if (r.fault == SLAT_FAULT_PERMISSION && write && p->cow[page])
			ret = cow_fault(g, p, page);
		if (ret)
			return ret;
	}
	return SLAT_E_INVAL;
}

/* ---- events ---- */

static uint32_t pick_idle_proc(struct guest *g, uint64_t *rng, int except)
{
	uint32_t n = g->w->nr_procs, start = rng_below(rng, n);

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (start + k) % n;
		if (g->procs[i].on_vcpu < 0 && (int)i != except)
			return i;
	}
	return (uint32_t)except;
}

static void run_proc(struct guest *g, uint32_t c, uint32_t i)
{
	struct vstate *v = &g->v[c];

	if (v->proc >= 0)
		g->procs[v->proc].on_vcpu = -1;
	v->proc = (int)i;
	g->procs[i].on_vcpu = (int)c;
	slat_ts_vcpu_switch(g->ts, c, g->procs[i].as, g->kernel);
}

static void context_switch(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	uint32_t next = pick_idle_proc(g, &v->rng, v->proc);

	g->ev.ctxsw++;
	if ((int)next != v->proc)
		run_proc(g, c, next);
}

/* A new page in a cold slot of the working set (heap growth, a new file
 * page): its first access faults. */
static void touch_new(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	struct proc *p = &g->procs[v->proc];
	uint32_t cold = g->w->ws_pages - g->w->hot_pages;
	uint32_t slot = g->w->hot_pages + rng_below(&v->rng, cold ? cold : 1);
	uint32_t page = rng_below(&v->rng, g->span);

	for (uint32_t k = 0; k < 64 && p->frame[page] != NO_FRAME; k++)
		page = (page + 1) % g->span;
	if (slot < g->w->ws_pages)
		p->ws[slot] = page;
}

static int munmap_event(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	struct proc *p = &g->procs[v->proc];
	uint32_t pages = 1;

	if (rng_unit(&v->rng) < g->w->munmap_large) {
		pages = LARGE_MUNMAP;
	} else {
		double q = 1.0 / g->w->munmap_pages;
		while (pages < 512 && rng_unit(&v->rng) >= q)
			pages++;
	}
	if (pages > g->span)
		pages = g->span;
	uint32_t start = rng_below(&v->rng, g->span - pages + 1);
	g->ev.munmaps++;
	g->ev.munmap_pages += pages;
	for (uint32_t i = start; i < start + pages; i++)
		if (p->frame[i] != NO_FRAME) {
			frame_put(g, p->frame[i]);
			p->frame[i] = NO_FRAME;
			p->cow[i] = false;
		}
	int ret = slat_ts_as_unmap(p->as, page_va(start), (uint64_t)pages * TS_PAGE);
	return ret < 0 ? ret : SLAT_OK;
}

/* fork: the child shares every page read-only; the parent's pages become
 * read-only too, and the parent's ASID is flushed (flush_tlb_mm). */
static int fork_into(struct guest *g, struct proc *parent, struct proc *child)
{
	int ret;

	g->ev.forks++;
	for (uint32_t i = 0; i < g->span; i++) {
		if (parent->frame[i] == NO_FRAME)
			continue;
		child->frame[i] = parent->frame[i];
		g->users[parent->frame[i]]++;
		child->cow[i] = parent->cow[i] = true;
		ret = slat_ts_as_map(child->as, page_va(i), TS_PAGE,
				     frame_ipa(g, parent->frame[i]), user_ro);
		if (ret < 0)
			return ret;
	}
	ret = slat_ts_as_wrprotect(parent->as, page_va(0),
				   (uint64_t)g->span * TS_PAGE);
	return ret < 0 ? ret : SLAT_OK;
}

/* The child, then make, write a few pages each: copy-on-write. */
static int cow_writes(struct guest *g, uint32_t c, struct proc *p)
{
	int ret = SLAT_OK;

	slat_ts_vcpu_switch(g->ts, c, p->as, g->kernel);
	for (uint32_t k = 0; !ret && k < g->w->cow_pages && k < MAKE_PAGES; k++)
		ret = user_access(g, c, p, g->make.ws[k], true);
	return ret;
}

/* The exiting process's slot gets the new program, which starts with an
 * empty address space and faults its pages in. */
static int replace_proc(struct guest *g, uint32_t c, uint32_t victim)
{
	struct vstate *v = &g->v[c];
	int ret;

	g->ev.exits++;
	if ((int)victim == v->proc)
		v->proc = -1;
	g->procs[victim].on_vcpu = -1;
	proc_teardown(g, &g->procs[victim]);
	ret = proc_init(g, &g->procs[victim], c);
	proc_fresh_ws(g, &g->procs[victim], &v->rng);
	return ret;
}

/*
 * make runs a command: make (switched in) forks, the child writes a few
 * pages and execs (its copy of make's address space is torn down), make
 * writes a few pages, and the new program replaces a process that exits.
 */
static int spawn(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	uint32_t victim = pick_idle_proc(g, &v->rng, v->proc);
	struct proc child = {
		.frame = malloc(g->span * sizeof(uint32_t)),
		.cow = malloc(g->span * sizeof(bool)),
		.on_vcpu = (int)c,
	};
	int ret = SLAT_E_NOMEM;

	g->ev.spawns++;
	g->ev.ctxsw += 2;
	if (!child.frame || !child.cow)
		goto out;
	ret = proc_init(g, &child, c);
	if (!ret) {
		slat_ts_vcpu_switch(g->ts, c, g->make.as, g->kernel);
		ret = fork_into(g, &g->make, &child);
	}
	if (!ret)
		ret = cow_writes(g, c, &child);
	if (!ret) {
		g->ev.execs++;
		proc_teardown(g, &child);
		ret = cow_writes(g, c, &g->make);
	}
	if (!ret)
		ret = replace_proc(g, c, victim);
	if (!ret)
		run_proc(g, c, v->proc >= 0 ? (uint32_t)v->proc : victim);
out:
	if (child.as)
		proc_teardown(g, &child);
	free(child.frame);
	free(child.cow);
	return ret;
}

/* ---- the accesses ---- */

static uint32_t pick_slot(struct guest *g, uint64_t *rng, uint32_t hot,
			  uint32_t all)
{
	if (rng_unit(rng) < g->w->hot_frac)
		return rng_below(rng, hot);
	return rng_below(rng, all);
}

static int one_access(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	struct proc *p = &g->procs[v->proc];
	bool write = rng_unit(&v->rng) < g->w->write_frac;

	if (rng_unit(&v->rng) < g->w->kernel_frac) {
		uint32_t k = pick_slot(g, &v->rng, g->w->hot_pages, g->w->kernel_pages);
		struct slat_ts_result r;

		slat_ts_access(g->ts, c, KERNEL_BASE + (uint64_t)k * TS_PAGE,
			       write ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ, false, &r);
		return r.fault ? SLAT_E_INVAL : SLAT_OK;
	}
	return user_access(g, c, p, p->ws[pick_slot(g, &v->rng, g->w->hot_pages,
						    g->w->ws_pages)], write);
}

/* Events due by now, in a fixed order. */
static int due_events(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	double now = (double)v->done;
	int ret = SLAT_OK;

	slat_ts_set_current(g->ts, c);
	while (!ret && v->next_ctxsw <= now) {
		context_switch(g, c);
		v->next_ctxsw += next_gap(g, &v->rng, g->w->ctxsw_rate);
	}
	while (!ret && v->next_touch <= now) {
		touch_new(g, c);
		v->next_touch += next_gap(g, &v->rng, g->w->touch_rate);
	}
	while (!ret && v->next_munmap <= now) {
		ret = munmap_event(g, c);
		v->next_munmap += next_gap(g, &v->rng, g->w->munmap_rate);
	}
	while (!ret && v->next_spawn <= now) {
		ret = spawn(g, c);
		v->next_spawn += next_gap(g, &v->rng, g->w->spawn_rate);
	}
	return ret;
}

static int run_quantum(struct guest *g, uint32_t c)
{
	struct vstate *v = &g->v[c];
	int ret = SLAT_OK;

	for (uint32_t i = 0; i < QUANTUM && v->done < g->w->accesses && !ret; i++) {
		ret = due_events(g, c);
		if (!ret)
			ret = one_access(g, c);
		v->done++;
	}
	return ret;
}

/* ---- set-up ---- */

static bool workload_valid(const struct slat_ts_workload *w)
{
	return w->nr_vcpus >= 1 && w->nr_vcpus <= SLAT_TS_MAX_VCPUS &&
	       w->nr_procs >= w->nr_vcpus && w->nr_procs <= 4096 &&
	       w->ws_pages >= 1 && w->hot_pages >= 1 &&
	       w->hot_pages <= w->ws_pages && w->kernel_pages >= w->hot_pages &&
	       w->munmap_pages >= 1 && (w->asid_bits == 8 || w->asid_bits == 16) &&
	       (1u << w->asid_bits) > w->nr_procs + 3 &&
	       w->hot_frac >= 0 && w->hot_frac <= 1 && w->kernel_frac >= 0 &&
	       w->kernel_frac <= 1 && w->write_frac >= 0 && w->write_frac <= 1 &&
	       w->munmap_large >= 0 && w->munmap_large <= 1;
}

static int kernel_init(struct guest *g)
{
	slat_ipa_t first, ipa;
	int err;

	g->kernel = slat_ts_as_create(g->ts, true, 0, &err);
	if (!g->kernel)
		return err;
	/* Contiguous frames from the bottom of RAM: blocks where aligned, as
	 * the kernel's linear map. */
	for (uint32_t i = 0; i < g->w->kernel_pages; i++) {
		if (slat_ts_frame_alloc(g->ts, false, &ipa))
			return SLAT_E_NOMEM;
		if (i == 0)
			first = ipa;
	}
	err = slat_ts_as_map(g->kernel, KERNEL_BASE,
			     (uint64_t)g->w->kernel_pages * TS_PAGE, first,
			     SLAT_RW | SLAT_XK);
	return err < 0 ? err : SLAT_OK;
}

static int proc_alloc(struct guest *g, struct proc *p, uint32_t ws_pages)
{
	p->frame = malloc(g->span * sizeof(*p->frame));
	p->cow = malloc(g->span * sizeof(*p->cow));
	p->ws = malloc(ws_pages * sizeof(*p->ws));
	p->on_vcpu = -1;
	return p->frame && p->cow && p->ws ? SLAT_OK : SLAT_E_NOMEM;
}

static void proc_free(struct guest *g, struct proc *p)
{
	if (p->as)
		proc_teardown(g, p);
	free(p->frame);
	free(p->cow);
	free(p->ws);
}

/* make: MAKE_PAGES resident pages at the start of its region. */
static int make_init(struct guest *g)
{
	int ret = proc_alloc(g, &g->make, MAKE_PAGES);

	if (!ret)
		ret = proc_init(g, &g->make, 0);
	for (uint32_t k = 0; !ret && k < MAKE_PAGES; k++) {
		g->make.ws[k] = k;
		ret = first_touch(g, &g->make, k);
	}
	return ret;
}

static int guest_init(struct guest *g, const struct slat_ts_cost *cost)
{
	const struct slat_ts_workload *w = g->w;
	uint64_t frames = g->ts->cfg.ram_bytes / TS_PAGE;
	int ret;

	g->span = w->ws_pages * 8 > LARGE_MUNMAP * 2 ? w->ws_pages * 8
						      : LARGE_MUNMAP * 2;
	g->per_access = (cost->work + cost->tlb_hit) / cost->hz;
	g->asid_limit = 1u << w->asid_bits;
	g->next_asid = 1;
	g->users = calloc(frames, sizeof(*g->users));
	g->procs = calloc(w->nr_procs, sizeof(*g->procs));
	if (!g->users || !g->procs)
		return SLAT_E_NOMEM;
	ret = kernel_init(g);
	for (uint32_t i = 0; !ret && i < w->nr_procs; i++) {
		struct proc *p = &g->procs[i];
		uint64_t rng = w->seed * 0x100000001b3ull + i;

		ret = proc_alloc(g, p, w->ws_pages);
		if (!ret)
			ret = proc_init(g, p, 0);
		proc_fresh_ws(g, p, &rng);
		/* A build in full swing: the working sets are resident. */
		for (uint32_t k = 0; !ret && k < w->ws_pages; k++)
			if (p->frame[p->ws[k]] == NO_FRAME)
				ret = first_touch(g, p, p->ws[k]);
	}
	if (!ret)
		ret = make_init(g);
	for (uint32_t c = 0; !ret && c < w->nr_vcpus; c++) {
		struct vstate *v = &g->v[c];

		v->rng = w->seed ^ (0xd1b54a32d192ed03ull * (c + 1));
		v->proc = -1;
		run_proc(g, c, c);
		v->next_ctxsw = next_gap(g, &v->rng, w->ctxsw_rate);
		v->next_touch = next_gap(g, &v->rng, w->touch_rate);
		v->next_munmap = next_gap(g, &v->rng, w->munmap_rate);
		v->next_spawn = next_gap(g, &v->rng, w->spawn_rate);
	}
	return ret;
}

static void guest_fini(struct guest *g)
{
	for (uint32_t i = 0; g->procs && i < g->w->nr_procs; i++)
		proc_free(g, &g->procs[i]);
	proc_free(g, &g->make);
	slat_ts_as_destroy(g->kernel);
	free(g->procs);
	free(g->users);
}

static uint64_t ram_needed(const struct slat_ts_workload *w)
{
	uint64_t span = w->ws_pages * 8ull > LARGE_MUNMAP * 2 ? w->ws_pages * 8ull
							      : LARGE_MUNMAP * 2;
	/* Each process may map its whole region; a forked child doubles one;
	 * tables and the kernel on top. */
	uint64_t pages = (w->nr_procs + 2) * span * 5 / 4 + w->kernel_pages + 4096;

	return (pages * TS_PAGE + (1ull << 30) - 1) & ~((1ull << 30) - 1);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int slat_ts_workload_run(const struct slat_ts_workload *w,
			 const struct slat_ts_config *cfg,
			 const struct slat_ts_cost *cost,
			 struct slat_ts_report *out)
{
	struct slat_ts_config c = *cfg;
	struct guest g = { .w = w };
	uint64_t t0 = now_ns();
	int ret;

	if (!workload_valid(w))
		return SLAT_E_CONFIG;
	c.nr_vcpus = w->nr_vcpus;
	if (c.ram_bytes < ram_needed(w))
		c.ram_bytes = ram_needed(w);
	g.ts = slat_ts_create(&c, &ret);
	if (!g.ts)
		return ret;
	ret = guest_init(&g, cost);
	/* Count the build, not the boot. */
	slat_ts_stats_reset(g.ts);
	memset(&g.ev, 0, sizeof(g.ev));
	for (bool busy = true; !ret && busy;) {
		busy = false;
		for (uint32_t v = 0; v < w->nr_vcpus && !ret; v++) {
			ret = run_quantum(&g, v);
			busy |= g.v[v].done < w->accesses;
		}
	}
	memset(out, 0, sizeof(*out));
	out->policy = c.policy;
	slat_ts_stats_read(g.ts, &out->st);
	out->ev = g.ev;
	out->cycles = slat_ts_cycles(cost, &out->st, &out->ev);
	out->guest_cycles = out->cycles / w->nr_vcpus;
	guest_fini(&g);
	slat_ts_destroy(g.ts);
	out->wall_ns = now_ns() - t0;
	return ret;
}
