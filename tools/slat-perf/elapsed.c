/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: a phase's modeled elapsed time. The phase's exact counts
 * become programs for the virtual-time scheduler (vtime.h): in a phase
 * where the guest faults, the vCPUs share the faults and the work done in
 * them evenly (each fault: an exit, mmu_lock as --fault-lock takes it,
 * its walk and stores, its TLB invalidations, its cleans); otherwise one
 * host actor does the work under mmu_lock as the modeled KVM takes it. The
 * counts come from the simulator's run in virtual time, the same on any
 * host; the even share is this model's simplification (a phase keeps no
 * count per vCPU).
 */
#include "perf.h"
#include "vtime.h"

#include <stdlib.h>
#include <string.h>

enum {
	F_BEGIN, F_EXIT, F_LOCK, F_CLEAN_BEFORE, F_WORK, F_SHOOT, F_CLEAN,
	F_UNLOCK, F_END,
};

struct gen_actor {
	uint64_t faults, tlbis, lines, done, shot;
	double solo;             /* a vCPU's work outside its faults: PML-full
				    exits (no lock, nothing shared) */
	uint64_t fault_lines, fault_tlbis; /* fault @done's share */
	int step;
};

struct gen {
	const struct perf_cost *c;
	bool before_map;         /* cleans before the map, under mmu_lock as
				    user_mem_abort() did (--cmo=before-map) */
	enum vt_kind fault_lock; /* how a fault takes mmu_lock (--fault-lock) */
	enum vt_kind host_lock;
	double work;             /* per fault, or the host's whole work */
	double shoot_ns;         /* the issuer's part of one invalidation: a
				    broadcast TLBI and its DSB (arm64), the
				    request bits of every vCPU (x86) */
	struct gen_actor *a;
	int nv;
	bool host;               /* the host actor has the work (no faults) */
};

/* The @i-th of @n even shares of @total (they add up to @total). */
static uint64_t share(uint64_t total, uint64_t n, uint64_t i)
{
	unsigned __int128 t = total;

	return (uint64_t)(t * (i + 1) / n - t * i / n);
}

/* The part of @total that faults @a to @b of @n carry. */
static uint64_t part(uint64_t total, uint64_t n, uint64_t a, uint64_t b)
{
	unsigned __int128 t = total;

	return (uint64_t)(t * b / n - t * a / n);
}

static void host_next(struct gen *g, struct gen_actor *x, struct vt_step *s)
{
	s->ns = 0;
	switch (x->step) {
	case 0: s->kind = g->host_lock; x->step++; return;
	case 1: s->kind = VT_WORK; s->ns = g->work; x->step++; return;
	case 2:
		if (x->shot < x->tlbis) {
			x->shot++;
			s->kind = VT_SHOOT;
			s->ns = g->shoot_ns;
			return;
		}
		s->kind = VT_CLEAN;
		s->ns = (double)x->lines * g->c->clean_line;
		x->step++;
		return;
	case 3: s->kind = VT_UNLOCK; x->step++; return;
	default: s->kind = VT_END; return;
	}
}

/* One step of fault x->done of a vCPU's share. Its shares of cleans and
 * invalidations are worked out once, at its first step: a phase may
 * replay millions of faults. */
static void fault_next(struct gen *g, struct gen_actor *x, struct vt_step *s)
{
	double clean = (double)x->fault_lines * g->c->clean_line;

	s->ns = 0;
	s->kind = VT_WORK;
	switch (x->step++) {
	case F_BEGIN:
		x->fault_lines = share(x->lines, x->faults, x->done);
		x->fault_tlbis = share(x->tlbis, x->faults, x->done);
		s->kind = VT_FAULT_BEGIN;
		return;
	case F_EXIT: s->ns = g->c->fault_exit; return;
	case F_LOCK: s->kind = g->fault_lock; return;
	case F_CLEAN_BEFORE:
		s->kind = VT_CLEAN;
		s->ns = g->before_map ? clean : 0;
		return;
	case F_WORK: s->ns = g->work; return;
	case F_SHOOT:
		if (x->shot < x->fault_tlbis) {
			x->shot++;
			x->step = F_SHOOT;
			s->kind = VT_SHOOT;
			s->ns = g->shoot_ns;
		}
		return;
	case F_CLEAN:
		s->kind = VT_CLEAN;
		s->ns = g->before_map ? 0 : clean;
		return;
	case F_UNLOCK: s->kind = VT_UNLOCK; return;
	default:
		s->kind = VT_FAULT_END;
		x->step = F_BEGIN;
		x->shot = 0;
		x->done++;
		return;
	}
}

static void gen_next(void *arg, int i, struct vt_step *s)
{
	struct gen *g = arg;
	struct gen_actor *x = &g->a[i];

	if (i == g->nv && g->host)
		host_next(g, x, s);
	else if (x->done < x->faults)
		fault_next(g, x, s);
	else if (x->solo > 0) {
		*s = (struct vt_step){ VT_WORK, x->solo };
		x->solo = 0;
	} else
		*s = (struct vt_step){ VT_END, 0 };
}

/* Which way the host's operation @name takes mmu_lock: the x86 TDP MMU
 * write-protects for logging and zaps collapsible pages under read;
 * everything else, and everything on arm64, under write. */
static enum vt_kind host_lock(const struct perf_opts *o, const char *name)
{
	static const char *const shared[] = { "enable", "disable", "log-on",
					       "log-off", NULL };

	if (o->arch != PERF_ARCH_X86)
		return VT_LOCK_WRITE;
	for (int i = 0; shared[i]; i++)
		if (!strcmp(name, shared[i]))
			return VT_LOCK_READ;
	return VT_LOCK_WRITE;
}

/* The work the counts of @st do that no other actor waits for, in ns:
 * walks, stores, local invalidations (x86: the vCPU's own INVEPT or ASID
 * flush), the barriers after cleans. */
static double plain_work(const struct perf_opts *o, const struct slat_vm_stats *st)
{
	const struct perf_cost *c = &o->cost;
	const struct slat_stats *t = &st->table;
	double local = o->arch == PERF_ARCH_X86 ?
		       perf_x86_vcpu_flush_ns(c, o->x86_fmt, true) :
		       c->tlbi_ipa_local + c->dsb;

	return perf_entry_ns(c, t) +
	       local * (double)t->tlbi[SLAT_TLBI_IPA_LOCAL] +
	       c->dsb * (double)st->cmo_calls;
}

/*
 * The invalidations of @st that reach every vCPU, and the issuer's mean
 * cost of one: a broadcast TLBI and its DSB on arm64; on x86, a
 * kvm_flush_remote_tlbs() setting the request bit of each of @nv vCPUs
 * (the IPIs to those in the guest and their flushes are the scheduler's,
 * vt_config.ipi).
 */
static uint64_t broadcasts(const struct perf_opts *o,
			   const struct slat_vm_stats *st, uint32_t nv,
			   double *each)
{
	const struct perf_cost *c = &o->cost;
	const struct slat_stats *t = &st->table;
	uint64_t range = t->tlbi[SLAT_TLBI_RANGE] + perf_vm_tlbi(st);
	uint64_t n = t->tlbi[SLAT_TLBI_IPA] + range + t->tlbi[SLAT_TLBI_VMID];
	double sum = c->tlbi_ipa * (double)t->tlbi[SLAT_TLBI_IPA] +
		     c->tlbi_range * (double)range +
		     c->tlbi_vmid * (double)t->tlbi[SLAT_TLBI_VMID];

	if (o->arch == PERF_ARCH_X86)
		*each = n ? c->tlb_request * (double)nv : 0;
	else
		*each = n ? sum / (double)n + c->dsb : 0;
	return n;
}

static void summarize(const struct vt_result *r, int nv, struct perf_elapsed *e)
{
	e->elapsed_ns = r->elapsed_ns;
	e->max_write_hold_ns = r->max_write_hold_ns;
	for (int i = 0; i < nv; i++) {
		const struct vt_actor_result *a = &r->a[i];
		double p50 = vt_hist_pct(&a->lat, 0.5), p99 = vt_hist_pct(&a->lat, 0.99);

		e->faults += a->lat.n;
		if (p50 > e->lat_p50_ns)
			e->lat_p50_ns = p50;
		if (p99 > e->lat_p99_ns)
			e->lat_p99_ns = p99;
		if (a->lat.max > e->lat_max_ns)
			e->lat_max_ns = a->lat.max;
		if (a->stall_host_ns > e->stall_host_ns)
			e->stall_host_ns = a->stall_host_ns;
		if (a->lock_wait_ns > e->lock_wait_ns)
			e->lock_wait_ns = a->lock_wait_ns;
	}
}

int perf_phase_elapsed(const struct perf_opts *o, const struct perf_switches *sw,
		       const struct perf_phase *p, struct perf_elapsed *e)
{
	const struct perf_cost *c = &o->cost;
	const struct slat_vm_stats *st = &p->st;
	int nv = p->vcpus ? (int)p->vcpus : 1;
	uint64_t faults = 0, tlbis, lines = (uint64_t)((double)st->cmo_bytes /
						       c->cache_line);
	bool x86 = o->arch == PERF_ARCH_X86;
	struct gen g = { .c = c, .before_map = sw->cmo == SLAT_VM_CMO_BEFORE_MAP,
			 .fault_lock = sw->fault_lock == SLAT_VM_FAULT_LOCK_WRITE
				       ? VT_LOCK_WRITE : VT_LOCK_READ,
			 .host_lock = host_lock(o, p->name), .nv = nv };
	struct vt_config vc = { .nactors = nv + 1, .nvcpus = nv,
				.ipi = x86,
				.ipi_send_ns = c->ipi_send,
				/* x86: the kicked vCPU's exit, and the
				 * INVEPT or ASID flush of its next entry */
				.ipi_exit_ns = c->ipi_exit + (x86 ?
					perf_x86_vcpu_flush_ns(c, o->x86_fmt,
							       false) : 0),
				.clean_share = c->mem_bw * c->clean_line /
					       c->cache_line,
				.next = gen_next, .arg = &g };
	struct vt_result r;

	memset(e, 0, sizeof(*e));
	e->work_ns = perf_phase_model(o, p);
	if (p->model_ns >= 0) {
		e->elapsed_ns = p->model_ns;   /* the command's own model */
		return 0;
	}
	for (int i = 0; i < SLAT_VM_FAULT_KINDS; i++)
		faults += st->faults[i];
	tlbis = broadcasts(o, st, p->vcpus, &g.shoot_ns);
	g.a = calloc((size_t)nv + 1, sizeof(*g.a));
	if (!g.a)
		return -1;
	if (faults) {
		g.work = plain_work(o, st) / (double)faults;
	} else {
		g.work = plain_work(o, st);
		g.host = true;
		g.a[nv] = (struct gen_actor){ .tlbis = tlbis, .lines = lines };
	}
	for (uint64_t i = 0, first = 0; i < (uint64_t)nv; i++) {
		uint64_t f = share(faults, (uint64_t)nv, i);

		/* invalidations and cleans go with the faults; PML-full
		 * exits are each vCPU's own */
		g.a[i] = (struct gen_actor){ .faults = f,
			.tlbis = faults ? part(tlbis, faults, first, first + f) : 0,
			.lines = faults ? part(lines, faults, first, first + f) : 0,
			.solo = c->pml_full * (double)share(st->pml_full_exits,
							    (uint64_t)nv, i) };
		first += f;
	}
	if (vt_run(&vc, &r)) {
		free(g.a);
		return -1;
	}
	summarize(&r, nv, e);
	vt_result_free(&r);
	free(g.a);
	return 0;
}

int perf_run_elapsed(const struct perf_opts *o, struct perf_run *r)
{
	for (int i = 0; i < r->nph; i++)
		if (perf_phase_elapsed(o, &r->sw, &r->ph[i], &r->ph[i].el))
			return -1;
	return 0;
}
