/* SPDX-License-Identifier: MIT */
/*
 * same_block_faults: many vCPUs fault on the same page or block at the same
 * moment. Exactly one installs it and cleans its memory (seed 000); the
 * others find it installed (SLAT_NOTHING_TO_DO), perhaps after losing the
 * race once or more (SLAT_E_AGAIN), having done no cache maintenance and no
 * invalidation, and no table page is lost: for 1 GiB blocks, 2 MiB blocks
 * and 4 KiB pages, each in fresh tables (the threads also race to create
 * them) and under tables that exist.
 *
 *   test_same_block [--threads N] [--rounds N]
 */
#include <pthread.h>
#include <sched.h>

#include "checker.h"
#include "stress.h"

#define PA_OFF 0x8000000000ull /* PA = IPA + 512 GiB: every block aligned */
#define ATTRS (SLAT_RW | SLAT_MT_NORMAL)
#define GIB (1ull << 30)
#define MIB (1ull << 20)

struct worker {
	pthread_t th;
	int id;
	struct slat_page_cache cache;
	/* this round */
	int ret;
	unsigned again;
	uint32_t pages_used;       /* popped from the cache and kept */
	struct st_counts lost;     /* hooks called by the attempts that lost */
	struct st_counts all;      /* hooks called by the whole fault */
};

static struct st_table S;
static pthread_barrier_t start, finish;
static struct worker *W;
static unsigned nthreads = 64, rounds = 12;
static volatile bool quit;
static uint64_t cur_ipa, cur_size;
static unsigned arrived;

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	slat_hosted_rcu_register_thread();
	for (;;) {
		pthread_barrier_wait(&start);
		if (quit)
			break;
		uint64_t ipa = cur_ipa, size = cur_size;
		/* A vCPU tops its cache up before it takes any lock. */
		st_topup(&S, &w->cache, st_fault_pages(&S.t, size));
		uint32_t nr0 = w->cache.nr;
		struct st_counts c0 = st_now();
		w->again = 0;
		memset(&w->lost, 0, sizeof(w->lost));
		pthread_barrier_wait(&start);
		/*
		 * A barrier wakes its waiters one by one, slower than a fault:
		 * spin until every thread is here, so that the threads on the
		 * CPUs start together.
		 */
		__atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
		for (unsigned spin = 1;
		     __atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < nthreads;
		     spin++)
			if (spin % 4096 == 0)
				sched_yield();
		for (;;) {
			struct st_counts a0 = st_now();
			slat_hosted_rcu_read_lock();
			w->ret = slat_map(&S.t, slat_ipa(ipa), size,
					  slat_pa(ipa + PA_OFF), ATTRS,
					  SLAT_SHARED, &w->cache, NULL);
			slat_hosted_rcu_read_unlock();
			if (w->ret != SLAT_E_AGAIN)
				break;
			w->again++;
			struct st_counts d = st_delta(a0, st_now());
			w->lost.dcache_calls += d.dcache_calls;
			w->lost.icache_calls += d.icache_calls;
			w->lost.tlbi += d.tlbi;
		}
		w->all = st_delta(c0, st_now());
		w->pages_used = nr0 - w->cache.nr;
		pthread_barrier_wait(&finish);
	}
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

/* Tables a fault at @ipa of @size creates in an empty 40-bit table. */
static unsigned new_tables(uint64_t size)
{
	return size == GIB ? 0 : size == 2 * MIB ? 1 : 2;
}

static void one_round(struct model *m, struct checker *ck, uint64_t ipa,
		      uint64_t size, bool fresh)
{
	struct slat_stats s0 = S.t.stats;

	cur_ipa = ipa;
	cur_size = size;
	arrived = 0;
	pthread_barrier_wait(&start); /* go: top up */
	pthread_barrier_wait(&start); /* go: fault */
	pthread_barrier_wait(&finish);

	unsigned ok = 0, nothing = 0, again = 0, pages = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker *w = &W[i];
		ST_CHECK(w->ret == SLAT_OK || w->ret == SLAT_NOTHING_TO_DO,
			 "size %#" PRIx64 " at %#" PRIx64 ": thread %u got %s",
			 size, ipa, i, slat_strerror(w->ret));
		ST_CHECK(w->lost.dcache_calls == 0 && w->lost.icache_calls == 0 &&
				 w->lost.tlbi == 0,
			 "size %#" PRIx64 " at %#" PRIx64 ": thread %u lost %u "
			 "races but did %" PRIu64 " D-cache cleans, %" PRIu64
			 " I-cache invalidations, %" PRIu64 " TLBIs in them",
			 size, ipa, i, w->again, w->lost.dcache_calls,
			 w->lost.icache_calls, w->lost.tlbi);
		ST_CHECK(w->all.tlbi == 0,
			 "thread %u invalidated %" PRIu64 " times (nothing was "
			 "replaced)", i, w->all.tlbi);
		if (w->ret == SLAT_OK) {
			ok++;
			ST_CHECK(w->all.dcache_calls == 1 &&
					 w->all.dcache_bytes == size,
				 "the winner cleaned %" PRIu64 " times, %" PRIu64
				 " bytes (want once, %#" PRIx64 ")",
				 w->all.dcache_calls, w->all.dcache_bytes, size);
		} else {
			nothing++;
			ST_CHECK(w->all.dcache_calls == 0,
				 "thread %u found it installed but cleaned %"
				 PRIu64 " times", i, w->all.dcache_calls);
		}
		again += w->again;
		pages += w->pages_used;
	}
	struct slat_stats d = S.t.stats;
	uint64_t leaves = d.written[SLAT_WRITE_LEAF] - s0.written[SLAT_WRITE_LEAF];
	uint64_t tables = d.written[SLAT_WRITE_TABLE] - s0.written[SLAT_WRITE_TABLE];
	uint64_t cleans = d.dcache_calls - s0.dcache_calls;
	uint64_t bytes = d.dcache_bytes - s0.dcache_bytes;
	uint64_t retries = d.retries - s0.retries;
	unsigned want_tables = fresh ? new_tables(size) : 0;

	ST_CHECK(ok == 1, "size %#" PRIx64 " at %#" PRIx64 ": %u threads "
		 "installed it (want exactly 1)", size, ipa, ok);
	ST_CHECK(leaves == 1, "%" PRIu64 " leaves written (want 1)", leaves);
	ST_CHECK(cleans == 1 && bytes == size,
		 "%" PRIu64 " D-cache cleans of %" PRIu64 " bytes (want 1 of %#"
		 PRIx64 ")", cleans, bytes, size);
	ST_CHECK(tables == want_tables, "%" PRIu64 " tables linked (want %u)",
		 tables, want_tables);
	ST_CHECK(pages == want_tables,
		 "the threads kept %u pages from their caches for %u new "
		 "tables: pages were lost", pages, want_tables);
	ST_CHECK(retries == again, "stats count %" PRIu64 " retries, the "
		 "threads saw SLAT_E_AGAIN %u times", retries, again);

	model_map(m, ipa, size, ipa + PA_OFF, ATTRS);
	slat_hosted_rcu_barrier();
	ST_CHECK(checker_full(ck, m) == 0, "checker: %s", ck->msg);
	printf("  %4s at %#012" PRIx64 " (%s tables): 1 install, 1 clean, "
	       "%u found it done, %u lost races\n",
	       size == GIB ? "1G" : size == 2 * MIB ? "2M" : "4K", ipa,
	       fresh ? "new" : "existing", nothing, again);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)strtoul(argv[++i], NULL, 0);
		else
			st_fail("usage: test_same_block [--threads N] [--rounds N]");
	}
	ST_CHECK(nthreads >= 1 && nthreads <= 1024 && rounds >= 1, "bad arguments");

	st_table_init(&S, 4096, 40, 0, 64 * MIB);
	struct checker ck;
	ST_CHECK(checker_init(&ck, &S.t, &S.h) == 0, "checker: %s", ck.msg);
	struct model *m = model_new(4096);

	W = calloc(nthreads, sizeof(*W));
	pthread_barrier_init(&start, NULL, nthreads + 1);
	pthread_barrier_init(&finish, NULL, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++) {
		W[i].id = (int)i;
		ST_CHECK(slat_hosted_cache_init(&W[i].cache, 8) == SLAT_OK, "cache");
		ST_CHECK(pthread_create(&W[i].th, NULL, worker_main, &W[i]) == 0,
			 "pthread_create");
	}
	printf("%u threads fault on the same address at once, %u rounds per "
	       "size\n", nthreads, rounds);

	/* 1 GiB blocks: each round in its own 1 GiB of IPA. */
	uint64_t base = 4 * GIB;
	for (unsigned r = 0; r < rounds; r++)
		one_round(m, &ck, base + r * GIB, GIB, true);
	/* 2 MiB blocks: a fresh 1 GiB (new L2 table), then its neighbours. */
	base = 64 * GIB;
	for (unsigned r = 0; r < rounds; r++)
		one_round(m, &ck, base + (r / 2) * GIB + (r % 2) * 2 * MIB,
			  2 * MIB, r % 2 == 0);
	/* 4 KiB pages: fresh tables, then a neighbour under them. */
	base = 128 * GIB;
	for (unsigned r = 0; r < rounds; r++)
		one_round(m, &ck, base + (r / 2) * GIB + (r % 2) * 4096, 4096,
			  r % 2 == 0);

	quit = true;
	pthread_barrier_wait(&start);
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(W[i].th, NULL);
		slat_hosted_cache_fini(&W[i].cache);
	}

	/* Everything goes, and every page comes back. */
	struct slat_page_cache c;
	ST_CHECK(slat_hosted_cache_init(&c, 8) == SLAT_OK, "cache");
	st_topup(&S, &c, 8);
	ST_CHECK(slat_unmap(&S.t, slat_ipa(0), 1ull << 40, SLAT_FLUSH_VMID, &c,
			    NULL) == SLAT_OK, "unmap");
	slat_hosted_cache_fini(&c);
	model_unmap(m, 0, 1ull << 40);
	slat_hosted_rcu_barrier();
	ST_CHECK(checker_full(&ck, m) == 0, "checker: %s", ck.msg);
	checker_fini(&ck);
	model_free(m);
	st_table_fini(&S);
	free(W);
	printf("same_block_faults: ok\n");
	return 0;
}
