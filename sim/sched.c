/* SPDX-License-Identifier: MIT */
/*
 * The deterministic mode (slat_vm_config.vtime): vCPUs without threads.
 * Each runs its guest code on a stack of its own, and one loop, on the
 * thread that waits for them, always resumes the vCPU whose virtual clock
 * is earliest. A vCPU hands control back only where its clock moves on (a
 * fault's exit, a clean, an invalidation) or where it must wait (mmu_lock),
 * so every race between vCPUs is decided by their clocks, which only the
 * modeled costs move: the host, its load and its core count change nothing.
 *
 * Switching costs at every fault, so it is a few instructions (ctx_switch());
 * the switches tell AddressSanitizer about the stacks.
 */
#include "internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#ifdef SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* Guest code runs the fault path and the walker on it; AddressSanitizer's
 * frames are larger. Committed only as used. */
#define SIM_CO_STACK (4u << 20)
/* A vCPU that waits for a host thread looks again this much later. */
#define SIM_HOST_POLL_PS 100000u

static __thread struct slat_vcpu *co_self;

struct slat_vcpu *sim_co_self(void)
{
	return co_self;
}

/* Leaving a stack for the one at @bottom (NULL @fake: for good). */
static void fiber_leave(void **fake, const void *bottom, size_t size)
{
#ifdef SIM_ASAN
	__sanitizer_start_switch_fiber(fake, bottom, size);
#else
	(void)fake;
	(void)bottom;
	(void)size;
#endif
}

/* Arrived on a stack; *@bottom and *@size get the one left (may be NULL). */
static void fiber_enter(void *fake, const void **bottom, size_t *size)
{
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(fake, bottom, size);
#else
	(void)fake;
	(void)bottom;
	(void)size;
#endif
}

/*
 * The switch is Boost.Context's fcontext (libboost-context): a few
 * instructions per switch, for every architecture Debian builds, where
 * getcontext()/setcontext() would also save and restore the signal mask,
 * two system calls each. Its C entry points, declared here (Boost's header
 * is C++): jump_fcontext() runs @to, handing it @data, and returns when
 * some context jumps back, with that context and what it handed over.
 */
struct fc_transfer {
	void *from;
	void *data;
};
struct fc_transfer jump_fcontext(void *to, void *data);
void *make_fcontext(void *stack_top, size_t size,
		    void (*fn)(struct fc_transfer));

/* The context that jumped here is resumed through the ctx it handed over. */
static void ctx_arrived(struct fc_transfer t)
{
	((struct sim_ctx *)t.data)->fc = t.from;
}

static void ctx_switch(struct sim_ctx *from, struct sim_ctx *to)
{
	ctx_arrived(jump_fcontext(to->fc, from));
}

/* A context whose first switch runs @fn on @stack. */
static void ctx_make(struct sim_ctx *c, void *stack, size_t size,
		     void (*fn)(struct fc_transfer))
{
	c->fc = make_fcontext((char *)stack + size, size, fn);
}

static uint64_t to_ps(double ns)
{
	return ns > 0 ? (uint64_t)(ns * 1000.0 + 0.5) : 0;
}

void sim_sched_init(struct slat_vm *vm)
{
	const struct slat_vm_vtime *c = &vm->cfg.vtime;
	struct sim_sched *s = &vm->sched;

	s->on = c->on;
	/* A retry must move the clock: a vCPU spinning on a lost race at one
	 * instant would keep the winner from ever running. */
	s->fault_exit = to_ps(c->fault_exit) ? to_ps(c->fault_exit) : 1;
	s->clean_line = to_ps(c->clean_line);
	s->synthetic_line = to_ps(vm->cfg.synthetic_clean_ns_per_line);
	s->dsb = to_ps(c->dsb);
	s->tlbi[SLAT_TLBI_IPA] = to_ps(c->tlbi_ipa);
	s->tlbi[SLAT_TLBI_IPA_LOCAL] = to_ps(c->tlbi_ipa_local);
	s->tlbi[SLAT_TLBI_RANGE] = to_ps(c->tlbi_range);
	s->tlbi[SLAT_TLBI_VMID] = to_ps(c->tlbi_vmid);
	s->pml_full = to_ps(c->pml_full);
	s->seed = c->seed;
	s->writer = NULL;
}

/* ---- the ready vCPUs, by (clock, draw) ---- */

/* splitmix64 of the seed and a counter: each queueing draws the next, so
 * equal clocks are ordered by the seed, differently each time. */
static uint64_t draw(struct sim_sched *s)
{
	uint64_t z = s->seed + ++s->draws * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool co_before(const struct slat_vcpu *a, const struct slat_vcpu *b)
{
	return a->co.vt < b->co.vt ||
	       (a->co.vt == b->co.vt && a->co.key < b->co.key);
}

static void heap_push(struct sim_sched *s, struct slat_vcpu *v)
{
	uint32_t i = s->n++;

	v->co.key = draw(s);
	v->co.state = CO_READY;
	while (i && co_before(v, s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = v;
}

static struct slat_vcpu *heap_pop(struct sim_sched *s)
{
	struct slat_vcpu *top = s->heap[0], *last = s->heap[--s->n];
	uint32_t i = 0;

	if (!s->n)
		return top;
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= s->n)
			break;
		if (c + 1 < s->n && co_before(s->heap[c + 1], s->heap[c]))
			c++;
		if (!co_before(s->heap[c], last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	s->heap[i] = last;
	return top;
}

/* ---- switching ---- */

/* From vCPU @v to the loop; returns when the loop resumes @v. */
static void co_yield(struct sim_sched *s, struct slat_vcpu *v)
{
	void *fake = NULL;

	fiber_leave(&fake, s->host_stack, s->host_stack_size);
	ctx_switch(&v->co.ctx, &s->host);
	fiber_enter(fake, &s->host_stack, &s->host_stack_size);
}

/* From the loop to @v, until @v yields or returns. */
static void co_resume(struct sim_sched *s, struct slat_vcpu *v)
{
	struct slat_vcpu *cur = sim_current_vcpu;
	void *fake = NULL;

	co_self = v;
	sim_current_vcpu = v;
	v->co.state = CO_RUNNING;
	fiber_leave(&fake, v->co.stack, v->co.stack_size);
	ctx_switch(&s->host, &v->co.ctx);
	fiber_enter(fake, NULL, NULL);
	co_self = NULL;
	sim_current_vcpu = cur;
}

/* Where every vCPU starts: its guest code, then back to the loop for
 * good. */
static void co_main(struct fc_transfer from)
{
	struct slat_vcpu *v = co_self;
	struct sim_sched *s = &v->vm->sched;

	ctx_arrived(from);
	fiber_enter(NULL, &s->host_stack, &s->host_stack_size);
	v->co.fn(v, v->co.arg);
	v->co.state = CO_DONE;
	s->live--;
	fiber_leave(NULL, s->host_stack, s->host_stack_size);
	ctx_switch(&v->co.ctx, &s->host);
}

static int co_stack(struct slat_vcpu *v)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, SIM_CO_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
		       -1, 0);

	if (p == MAP_FAILED)
		return -ENOMEM;
	/* An overflow faults on the guard page instead of writing over
	 * another mapping. */
	if (page > 0)
		mprotect(p, (size_t)page, PROT_NONE);
	v->co.stack = p;
	v->co.stack_size = SIM_CO_STACK;
	return 0;
}

int sim_co_start(struct slat_vcpu *v, slat_vcpu_guest_fn fn, void *arg)
{
	struct sim_sched *s = &v->vm->sched;

	if (v->co.state != CO_IDLE && v->co.state != CO_DONE)
		return -EBUSY;
	if (!v->co.stack && co_stack(v))
		return -ENOMEM;
	ctx_make(&v->co.ctx, v->co.stack, v->co.stack_size, co_main);
	v->co.fn = fn;
	v->co.arg = arg;
	v->co.spin = v->co.lost = v->co.host_wait = false;
	/* A batch starts at 0; a vCPU started during one, at its present. */
	if (!s->live)
		s->now = 0;
	v->co.vt = s->now;
	s->live++;
	heap_push(s, v);
	return 0;
}

void sim_co_run(struct slat_vm *vm, struct slat_vcpu *until)
{
	struct sim_sched *s = &vm->sched;

	while (until ? until->co.state != CO_DONE && until->co.state != CO_IDLE
		     : s->live) {
		struct slat_vcpu *v;

		if (!s->n) {
			/* The lock's holder left without unlocking: a bug. */
			fprintf(stderr, "slat-sim: every vCPU waits for "
				"mmu_lock and none holds it\n");
			abort();
		}
		v = heap_pop(s);
		s->now = v->co.vt;
		co_resume(s, v);
		/* Let the host thread it waits for have this CPU. */
		if (v->co.host_wait)
			sched_yield();
	}
	/* Tables the vCPUs unlinked are freed now, in the phase that
	 * unlinked them, not whenever a grace period happens to end. */
	if (!s->live)
		slat_hosted_rcu_barrier();
}

void sim_co_free(struct slat_vcpu *v)
{
	if (!v->co.stack)
		return;
#ifdef SIM_ASAN
	/* A finished vCPU's frames never returned: their redzones would
	 * outlive the stack in AddressSanitizer's shadow and poison
	 * whatever is mapped there next. */
	__asan_unpoison_memory_region(v->co.stack, v->co.stack_size);
#endif
	munmap(v->co.stack, v->co.stack_size);
	v->co.stack = NULL;
}

/* ---- virtual time ---- */

void sim_vt_advance(struct slat_vcpu *v, uint64_t ps)
{
	struct sim_sched *s = &v->vm->sched;

	if (co_self != v || !ps)
		return;
	v->co.vt += ps;
	if (!s->n || !co_before(s->heap[0], v))
		return;
	heap_push(s, v);
	co_yield(s, v);
}

void sim_co_wait_host(struct slat_vcpu *v)
{
	struct sim_sched *s = &v->vm->sched;

	v->co.vt += SIM_HOST_POLL_PS;
	v->co.host_wait = true;
	heap_push(s, v);
	co_yield(s, v);
	v->co.host_wait = false;
}

void sim_vt_tlbi(struct slat_vm *vm, enum slat_tlbi_kind kind)
{
	struct slat_vcpu *v = co_self;

	if (v && v->vm == vm)
		sim_vt_advance(v, vm->sched.tlbi[kind] + vm->sched.dsb);
}

void sim_vt_clean(struct slat_vm *vm, uint64_t bytes, bool synthetic)
{
	struct slat_vcpu *v = co_self;
	struct sim_sched *s = &vm->sched;

	/* What the clean takes on a host thread: a synthetic one its
	 * configured time, a real one the model's with its barrier. */
	if (v && v->vm == vm)
		sim_vt_advance(v, synthetic ? bytes / 64 * s->synthetic_line
					    : bytes / 64 * s->clean_line + s->dsb);
}

/* ---- mmu_lock ---- */

/* Wait in virtual time until vlock_grant() lets @v in. */
static void vlock_wait(struct sim_sched *s, struct slat_vcpu *v, bool write)
{
	s->fifo[(s->qhead + s->qlen++) % SIM_MAX_VCPUS] = v;
	v->co.want_write = write;
	v->co.state = CO_LOCK_WAIT;
	co_yield(s, v);
}

/* The waiters at the head of the FIFO that the lock admits, ready at
 * @now, the clock of the vCPU that let them in. */
static void vlock_grant(struct sim_sched *s, uint64_t now)
{
	while (s->qlen && !s->writer) {
		struct slat_vcpu *w = s->fifo[s->qhead];

		if (w->co.want_write && s->readers)
			break;
		s->qhead = (s->qhead + 1) % SIM_MAX_VCPUS;
		s->qlen--;
		if (w->co.want_write)
			s->writer = w;
		else
			s->readers++;
		if (w->co.vt < now)
			w->co.vt = now;
		heap_push(s, w);
		if (w->co.want_write)
			break;
	}
}

/* The real lock, against host threads: vCPUs never block on it, they
 * look again later. */
static void real_lock(struct slat_vm *vm, struct slat_vcpu *v, bool write)
{
	while (write ? pthread_rwlock_trywrlock(&vm->mmu_lock)
		     : pthread_rwlock_tryrdlock(&vm->mmu_lock))
		sim_co_wait_host(v);
}

void sim_mmu_read_lock(struct slat_vm *vm)
{
	struct slat_vcpu *v = co_self;
	struct sim_sched *s = &vm->sched;

	if (!v || v->vm != vm) {
		pthread_rwlock_rdlock(&vm->mmu_lock);
		return;
	}
	/* Queued behind a waiting writer, as KVM's queued rwlock. */
	if (s->writer || s->qlen)
		vlock_wait(s, v, false);
	else
		s->readers++;
	real_lock(vm, v, false);
}

void sim_mmu_write_lock(struct slat_vm *vm)
{
	struct slat_vcpu *v = co_self;
	struct sim_sched *s = &vm->sched;

	if (!v || v->vm != vm) {
		pthread_rwlock_wrlock(&vm->mmu_lock);
		return;
	}
	if (s->writer || s->readers || s->qlen)
		vlock_wait(s, v, true);
	else
		s->writer = v;
	real_lock(vm, v, true);
}

void sim_mmu_unlock(struct slat_vm *vm)
{
	struct slat_vcpu *v = co_self;
	struct sim_sched *s = &vm->sched;

	pthread_rwlock_unlock(&vm->mmu_lock);
	if (!v || v->vm != vm)
		return;
	if (s->writer == v)
		s->writer = NULL;
	else
		s->readers--;
	vlock_grant(s, v->co.vt);
}

/* ---- retries of a lost race ---- */

void sim_retry_begin(const struct slat_vcpu *v, struct sim_retry *r)
{
	r->vt = v->co.vt;
	r->st = v->st;
	r->core = v->core;
}

/* The clock of the earliest ready vCPU that is not retrying a lost race:
 * until it runs, nothing changes what a retry finds. */
static uint64_t quiet_until(const struct sim_sched *s)
{
	uint64_t t = UINT64_MAX;

	for (uint32_t i = 0; i < s->n; i++)
		if (!s->heap[i]->co.spin && s->heap[i]->co.vt < t)
			t = s->heap[i]->co.vt;
	return t;
}

/* Whether the retry since @r moved only what a fault lost to a locked
 * entry moves: an invalidation applied or a cache top-up on the way would
 * not be repeated by the next retries. */
static bool pure_retry(const struct slat_vcpu *v, const struct sim_retry *r)
{
	struct vcpu_stats st = v->st;
	struct slat_stats core = v->core;

	st.tlb_misses = r->st.tlb_misses;
	memcpy(st.faults, r->st.faults, sizeof(st.faults));
	st.fault_again = r->st.fault_again;
	st.fault_ns = r->st.fault_ns;
	st.maps = r->st.maps;
	st.relaxes = r->st.relaxes;
	st.mkyoungs = r->st.mkyoungs;
	core.visited = r->core.visited;
	core.retries = r->core.retries;
	return !memcmp(&st, &r->st, sizeof(st)) &&
	       !memcmp(&core, &r->core, sizeof(core));
}

/* *now += @k x (*now - *was), counter by counter. */
static void add_times(uint64_t *now, const uint64_t *was, size_t n,
		      uint64_t k)
{
	for (size_t i = 0; i < n; i++)
		now[i] += k * (now[i] - was[i]);
}

/*
 * A vCPU that met an entry another vCPU holds locked re-enters the guest
 * and faults again, one fault exit later, as KVM's -EAGAIN does. Until a
 * vCPU that is not retrying runs, every such retry finds the same table
 * and fails the same way; so the retries due before then are counted as
 * copies of the one just run (@r: its start) instead of being run.
 */
void sim_retry_end(struct slat_vcpu *v, const struct sim_retry *r)
{
	struct sim_sched *s = &v->vm->sched;
	uint64_t exit = s->fault_exit, t, k;

	if (!v->co.lost) {
		v->co.spin = false;
		return;
	}
	v->co.lost = false;
	v->co.spin = true;
	/* Only a retry that did nothing but fault (no wait for the lock). */
	if (!r || v->co.vt - r->vt != exit || !pure_retry(v, r))
		return;
	t = quiet_until(s);
	if (t == UINT64_MAX || t <= v->co.vt + exit)
		return;
	/* Retry j (from 1) would meet the table at vt + (j - 1) x exit +
	 * exit: those before @t are the same as this one. */
	k = (t - v->co.vt - exit + exit - 1) / exit;
	_Static_assert(sizeof(v->st) % sizeof(uint64_t) == 0, "counters only");
	_Static_assert(sizeof(v->core) % sizeof(uint64_t) == 0, "counters only");
	add_times((uint64_t *)&v->st, (const uint64_t *)&r->st,
		  sizeof(v->st) / sizeof(uint64_t), k);
	add_times((uint64_t *)&v->core, (const uint64_t *)&r->core,
		  sizeof(v->core) / sizeof(uint64_t), k);
	v->co.vt += k * exit;
}
