/* SPDX-License-Identifier: MIT */
/*
 * Shared by the concurrency tests: a table of any configuration on the
 * hosted platform (with RCU deferred free for shared walkers), per-thread
 * counts of the hooks each thread called, failure reporting, spinning
 * hand-offs between threads and counts taken from the environment.
 *
 * Every hook the core calls runs in the thread that called the core (the
 * RCU callback thread excepted, which only frees pages), so a thread's own
 * counters tell exactly what its calls did: that is how the tests check
 * that a walker that lost a race did no cache maintenance and no
 * invalidation.
 */
#ifndef SLAT_STRESS_H
#define SLAT_STRESS_H

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slat/hosted.h>
#include <slat/slat.h>

/* What the hooks did in this thread. */
struct st_counts {
	uint64_t dcache_calls, dcache_bytes;
	uint64_t icache_calls;
	uint64_t tlbi;        /* every kind */
	uint64_t page_frees;
};

static _Thread_local struct st_counts st_mine;

/*
 * A real clean to the point of coherency takes microseconds for a page
 * (and the entry stays locked meanwhile): the observer spends this long per
 * 4 KiB cleaned, at most 20 us per call, so that other walkers meet the
 * locked entry as they would on hardware.
 */
static uint64_t st_clean_ns_per_page = 200;

static inline uint64_t st_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void st_spin_ns(uint64_t ns)
{
	uint64_t end = st_ns() + ns;
	while (st_ns() < end)
		;
}

static inline void st_observer(void *arg, const struct slat_hosted_event *ev)
{
	(void)arg;
	switch (ev->kind) {
	case SLAT_EV_DCACHE_CLEAN_INVAL: {
		uint64_t ns = ev->size / 4096 * st_clean_ns_per_page;
		st_mine.dcache_calls++;
		st_mine.dcache_bytes += ev->size;
		st_spin_ns(ns < 20000 ? ns : 20000);
		break;
	}
	case SLAT_EV_ICACHE_INVAL:
		st_mine.icache_calls++;
		break;
	case SLAT_EV_PAGE_FREE:
		st_mine.page_frees++;
		break;
	default:
		st_mine.tlbi++;
		break;
	}
}

static inline struct st_counts st_now(void)
{
	return st_mine;
}

static inline struct st_counts st_delta(struct st_counts a, struct st_counts b)
{
	struct st_counts d = {
		.dcache_calls = b.dcache_calls - a.dcache_calls,
		.dcache_bytes = b.dcache_bytes - a.dcache_bytes,
		.icache_calls = b.icache_calls - a.icache_calls,
		.tlbi = b.tlbi - a.tlbi,
		.page_frees = b.page_frees - a.page_frees,
	};
	return d;
}

static void st_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void st_fail(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("FAIL: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	exit(1);
}

#define ST_CHECK(cond, ...)                                                   \
	do {                                                                  \
		if (!(cond))                                                  \
			st_fail(__VA_ARGS__);                                 \
	} while (0)

/* A table for concurrent use on the hosted platform. */
struct st_table {
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
};

/*
 * A table of any configuration. @rcu: tables a shared walker unlinks are
 * freed after an RCU grace period (slat_hosted_ops_rcu); without it they
 * are freed at once, through the deferred-free hook too
 * (slat_hosted_ops_serial, so that shared calls are accepted), for tests
 * whose only concurrency is the hardware's walker beside one caller.
 */
static inline void st_table_init_cfg(struct st_table *s,
				     const struct slat_config *cfg,
				     uint64_t arena_bytes, bool rcu)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	uint32_t granule = cfg->granule ? cfg->granule : 4096;
	ST_CHECK(slat_hosted_init(&s->h, arena_bytes, granule,
				  0x40000000ull) == SLAT_OK,
		 "slat_hosted_init");
	slat_hosted_set_observer(&s->h, st_observer, NULL);
	if (rcu)
		ST_CHECK(slat_hosted_enable_rcu(&s->h, &s->t) == SLAT_OK,
			 "slat_hosted_enable_rcu");
	else
		s->h.table = &s->t;
	int ret = slat_table_init(&s->t, &s->cfg,
				  rcu ? slat_hosted_ops_rcu()
				      : slat_hosted_ops_serial(),
				  &s->h);
	ST_CHECK(ret == SLAT_OK, "slat_table_init(%s): %s",
		 cfg->format == SLAT_FMT_EPT ? "ept" :
		 cfg->format == SLAT_FMT_NPT ? "npt" :
		 cfg->format == SLAT_FMT_ARM_S1 ? "arm-s1" : "arm-s2",
		 slat_strerror(ret));
}

/* An Arm stage-2 table with RCU deferred free. */
static inline void st_table_init(struct st_table *s, uint32_t granule,
				 uint8_t ia_bits, uint32_t features,
				 uint64_t arena_bytes)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = granule,
		.ia_bits = ia_bits, .pa_bits = 48, .features = features,
	};
	st_table_init_cfg(s, &cfg, arena_bytes, true);
}

static inline void st_table_fini(struct st_table *s)
{
	if (s->h.rcu)
		slat_hosted_rcu_barrier();
	slat_table_destroy(&s->t);
	ST_CHECK(slat_hosted_table_pages(&s->h) == 0,
		 "%" PRIu64 " pages still in use after destroy",
		 slat_hosted_table_pages(&s->h));
	ST_CHECK(s->h.double_frees == 0, "%" PRIu64 " double frees",
		 s->h.double_frees);
	slat_hosted_fini(&s->h);
}

/* Top @c up to @n pages; @may_wait: outside any lock and read-side
 * critical section, as a vCPU is before it takes the MMU lock. */
static inline void st_topup_from(struct st_table *s, struct slat_page_cache *c,
				 int64_t n, bool may_wait)
{
	if (n < 0)
		st_fail("slat_pages_needed() refused valid input: %" PRId64, n);
	if (n > c->capacity)
		st_fail("a cache of %u pages cannot hold %" PRIu64,
			c->capacity, n);
	if (c->nr >= n)
		return;
	int ret = slat_hosted_cache_topup(&s->h, c, (uint32_t)n);
	/* Unlinked tables come back only after a grace period, which a loaded
	 * machine may not have given the RCU thread time to end: wait for
	 * them, as a kernel short of memory does, rather than fail. */
	if (ret == SLAT_E_NOMEM && may_wait && s->h.rcu &&
	    slat_hosted_deferred_pending(&s->h)) {
		slat_hosted_rcu_barrier();
		ret = slat_hosted_cache_topup(&s->h, c, (uint32_t)n);
	}
	ST_CHECK(ret == SLAT_OK, "arena exhausted (%" PRIu64 " tables still "
		 "wait for a grace period)", slat_hosted_deferred_pending(&s->h));
}

static inline void st_topup(struct st_table *s, struct slat_page_cache *c,
			    int64_t n)
{
	st_topup_from(s, c, n, true);
}

/*
 * Pages a fault that installs one leaf of @size can need: a table for
 * every level between the root and the leaf (or a split of a larger block
 * per level): the bound a vCPU's cache is kept at, whatever the fault;
 * slat_pages_needed() gives the exact count of one fault on the table as
 * it is.
 */
static inline uint32_t st_fault_pages(const struct slat_table *t, uint64_t size)
{
	int level = SLAT_LAST_LEVEL;
	while (level > t->geo.start_level && slat_level_size(t, level) < size)
		level--;
	return (uint32_t)(level - t->geo.start_level);
}

/*
 * Wait until *@word reaches @want (set by another thread with a release
 * store), spinning: a barrier's wake-up is slower than the races the tests
 * want to provoke. Yields now and then, since the CPUs may be shared.
 */
static inline void st_wait_for(const unsigned *word, unsigned want)
{
	for (unsigned spin = 1; __atomic_load_n(word, __ATOMIC_ACQUIRE) != want;
	     spin++)
		if (spin % 1024 == 0)
			sched_yield();
}

/*
 * Run the calling thread on the @index-th CPU the process may use (modulo
 * their number), so that two racing threads run at the same time rather
 * than taking turns on one CPU. The CPUs are those the first call saw:
 * make it before creating the threads (which inherit the caller's
 * affinity). Does nothing with a single CPU.
 */
static cpu_set_t st_cpus;
static int st_nr_cpus = -1;

static inline void st_pin_to_cpu(unsigned index)
{
	if (st_nr_cpus < 0)
		st_nr_cpus = sched_getaffinity(0, sizeof(st_cpus), &st_cpus)
				     ? 0 : CPU_COUNT(&st_cpus);
	if (st_nr_cpus < 2)
		return;
	index %= (unsigned)st_nr_cpus;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &st_cpus) || index--)
			continue;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
		return;
	}
}

/* A count from the environment variable @name if set (for sanitizer
 * builds, which run slower), else @dflt. */
static inline uint64_t st_env_count(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* xorshift64*: reproducible per-thread randomness. */
static inline uint64_t st_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static inline uint64_t st_below(uint64_t *s, uint64_t n)
{
	return n ? st_rand(s) % n : 0;
}

#endif
