/* SPDX-License-Identifier: MIT */
/*
 * same_block_faults: many vCPUs fault on the same page or block at the same
 * moment, on one configuration of the table and memory type (--config).
 * For 1 GiB blocks, 2 MiB blocks and 4 KiB pages, each in fresh tables (the
 * threads also race to create them) and under tables that exist, two races:
 *
 *  - the same translation (every vCPU faults the same PA, SLAT_SHARED):
 *    exactly one installs it and cleans its memory if the configuration
 *    needs a clean (seed 000); the others find it installed
 *    (SLAT_NOTHING_TO_DO), perhaps after losing the race once or more
 *    (SLAT_E_AGAIN);
 *  - different translations into the same empty entry (each vCPU its own
 *    PA, SLAT_SHARED | SLAT_MAP_NO_REPLACE): exactly one installs its own,
 *    the others find a different mapping (SLAT_E_EXISTS), perhaps after
 *    SLAT_E_AGAIN, and the table translates with the winner's PA.
 *
 * In both, the losers did no cache maintenance and no invalidation, one
 * leaf was written, and no table page is lost. An install that stored its
 * leaf without a compare-and-swap would let two vCPUs both "win": two
 * SLAT_OK, and, for different translations, a table that may show the
 * other's PA. The configurations cover both install paths of the core:
 * with a D-cache clean (Arm stage 2, Normal memory, no FWB: the entry is
 * locked while the memory is cleaned) and without (FWB, Device memory, EPT,
 * stage 1: one compare-and-swap of the leaf).
 *
 * The threads are spread over the CPUs and start at one moment (a time
 * the last to arrive sets a little ahead), so that those running really
 * fault at once. Between pairs of rounds the range is unmapped, so every
 * pair starts again in new tables.
 *
 *   test_same_block [--config NAME] [--race same|own|both] [--threads N]
 *                   [--rounds N] [--verbose] [--help]
 *
 * --race: the same translation, the threads' own ones, or both (default).
 * Configurations: arm-s2 (4K, 40-bit, Normal), arm-s2-fwb, arm-s2-device,
 * ept (4-level), npt (4-level), arm-s1 (4K, 48-bit).
 */
#include <pthread.h>
#include <sched.h>

#include "checker.h"
#include "stress.h"

#define PA_OFF 0x8000000000ull /* PA = IPA + 512 GiB: every block aligned */
#define GIB (1ull << 30)
#define MIB (1ull << 20)

struct same_config {
	const char *name;
	struct slat_config cfg;
	uint32_t attrs;
};

static const struct same_config configs[] = {
	{ "arm-s2", { .format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		      .pa_bits = 48 }, SLAT_RW | SLAT_MT_NORMAL },
	{ "arm-s2-fwb", { .format = SLAT_FMT_ARM_S2, .granule = 4096,
			  .ia_bits = 40, .pa_bits = 48,
			  .features = SLAT_FEAT_FWB }, SLAT_RW | SLAT_MT_NORMAL },
	{ "arm-s2-device", { .format = SLAT_FMT_ARM_S2, .granule = 4096,
			     .ia_bits = 40, .pa_bits = 48 },
	  SLAT_RW | SLAT_MT_DEVICE },
	{ "ept", { .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
		   .pa_bits = 48 }, SLAT_RW | SLAT_MT_NORMAL },
	{ "npt", { .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		   .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY },
	  SLAT_RW | SLAT_MT_NORMAL },
	{ "arm-s1", { .format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		      .pa_bits = 48 }, SLAT_RW | SLAT_MT_NORMAL },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

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
static const struct same_config *C;
static pthread_barrier_t start, finish;
static struct worker *W;
static unsigned nthreads = 64, rounds = 12;
static volatile bool quit;
static uint64_t cur_ipa, cur_size;
static bool cur_distinct;       /* each thread its own translation */
static bool race_same = true, race_own = true; /* --race */
static bool verbose;
static unsigned arrived;
static uint64_t start_at;       /* when the threads fault; 0: not yet */

/* The PA thread @id faults at @ipa this round. */
static uint64_t fault_pa(int id, uint64_t ipa, uint64_t size, bool distinct)
{
	return ipa + PA_OFF + (distinct ? (uint64_t)id * size : 0);
}

/*
 * Start together: once every thread is here, the last to arrive sets a
 * start time a little ahead, and each thread spins until then, so that
 * those on the CPUs begin within a clock read of each other (a barrier
 * wakes its waiters one by one, far slower than a fault; a flag reaches
 * the other CPUs a cache-line transfer after its store).
 */
static void start_together(void)
{
	uint64_t at;
	if (__atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL) + 1 == nthreads)
		__atomic_store_n(&start_at, st_ns() + 2000, __ATOMIC_RELEASE);
	for (unsigned spin = 1;
	     !(at = __atomic_load_n(&start_at, __ATOMIC_ACQUIRE)); spin++)
		if (spin % 4096 == 0)
			sched_yield();
	while (st_ns() < at)
		;
}

/* Fault until the answer is not SLAT_E_AGAIN, counting what lost attempts
 * did. */
static void fault(struct worker *w, uint64_t ipa, uint64_t size, bool distinct)
{
	uint32_t flags = SLAT_SHARED | (distinct ? SLAT_MAP_NO_REPLACE : 0);
	uint64_t pa = fault_pa(w->id, ipa, size, distinct);
	for (;;) {
		struct st_counts a0 = st_now();
		slat_hosted_rcu_read_lock();
		w->ret = slat_map(&S.t, slat_ipa(ipa), size, slat_pa(pa),
				  C->attrs,
				  SLAT_OP(.flags = flags, .cache = &w->cache));
		slat_hosted_rcu_read_unlock();
		if (w->ret != SLAT_E_AGAIN)
			break;
		w->again++;
		struct st_counts d = st_delta(a0, st_now());
		w->lost.dcache_calls += d.dcache_calls;
		w->lost.icache_calls += d.icache_calls;
		w->lost.tlbi += d.tlbi;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	st_pin_to_cpu((unsigned)w->id);
	slat_hosted_rcu_register_thread();
	for (;;) {
		pthread_barrier_wait(&start);
		if (quit)
			break;
		uint64_t ipa = cur_ipa, size = cur_size;
		bool distinct = cur_distinct;
		/* A vCPU tops its cache up before it takes any lock. */
		st_topup(&S, &w->cache, st_fault_pages(&S.t, size));
		uint32_t nr0 = w->cache.nr;
		struct st_counts c0 = st_now();
		w->again = 0;
		memset(&w->lost, 0, sizeof(w->lost));
		pthread_barrier_wait(&start);
		start_together();
		fault(w, ipa, size, distinct);
		w->all = st_delta(c0, st_now());
		w->pages_used = nr0 - w->cache.nr;
		pthread_barrier_wait(&finish);
	}
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

/* A new leaf of this configuration and memory type is cleaned first. */
static bool needs_clean(void)
{
	return check_format_for(C->cfg.format)->dcache_on_install(&C->cfg,
								  C->attrs);
}

/* The level of a leaf of @size. */
static int leaf_level(uint64_t size)
{
	int level = SLAT_LAST_LEVEL;
	while (slat_level_size(&S.t, level) < size)
		level--;
	return level;
}

/* Tables a fault of @size at @ipa must link: one per level between the
 * empty entry the walk reaches now and the leaf. */
static unsigned tables_to_link(struct checker *ck, uint64_t ipa, uint64_t size)
{
	struct check_leaf l;
	int ret = checker_leaf_at(ck, ipa, &l);
	ST_CHECK(ret == 0, "%s: %#" PRIx64 " is not a hole before the round "
		 "(%d): %s", C->name, ipa, ret, ck->msg);
	return (unsigned)(leaf_level(size) - l.level);
}

/* A clean during which the entry already translated (counted by
 * clean_observer). */
static unsigned visible_cleans;

/*
 * Seed 000: while the winner cleans the memory, no vCPU may use the new
 * leaf: the entry must still be locked (lookup finds nothing), not
 * already hold the leaf.
 */
static void clean_observer(void *arg, const struct slat_hosted_event *ev)
{
	st_observer(arg, ev);
	struct slat_leaf l;
	if (ev->kind == SLAT_EV_DCACHE_CLEAN_INVAL &&
	    slat_lookup(&S.t, slat_ipa(__atomic_load_n(&cur_ipa, __ATOMIC_RELAXED)),
			&l) == SLAT_OK)
		__atomic_fetch_add(&visible_cleans, 1, __ATOMIC_RELAXED);
}

/* The threads' answers: one winner (returned), the others as the race's
 * kind wants; nobody cleaned or invalidated in a lost attempt. */
static unsigned check_answers(uint64_t ipa, uint64_t size, bool distinct,
			      unsigned *again, unsigned *pages)
{
	int loser_ret = distinct ? SLAT_E_EXISTS : SLAT_NOTHING_TO_DO;
	bool want_clean = needs_clean();
	unsigned ok = 0, winner = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker *w = &W[i];
		ST_CHECK(w->ret == SLAT_OK || w->ret == loser_ret,
			 "%s: size %#" PRIx64 " at %#" PRIx64 ": thread %u got "
			 "%s (want SLAT_OK or %s)", C->name, size, ipa, i,
			 slat_strerror(w->ret), slat_strerror(loser_ret));
		ST_CHECK(w->lost.dcache_calls == 0 && w->lost.icache_calls == 0 &&
				 w->lost.tlbi == 0,
			 "%s: size %#" PRIx64 " at %#" PRIx64 ": thread %u lost "
			 "%u races but did %" PRIu64 " D-cache cleans, %" PRIu64
			 " I-cache invalidations, %" PRIu64 " TLBIs in them",
			 C->name, size, ipa, i, w->again, w->lost.dcache_calls,
			 w->lost.icache_calls, w->lost.tlbi);
		ST_CHECK(w->all.tlbi == 0, "%s: size %#" PRIx64 " at %#" PRIx64
			 ": thread %u (%s) invalidated %" PRIu64 " times: it "
			 "replaced %s", C->name, size, ipa, i,
			 slat_strerror(w->ret), w->all.tlbi,
			 distinct ? "another thread's translation, which "
				    "SLAT_MAP_NO_REPLACE forbids"
				  : "a translation (nothing was to be replaced)");
		uint64_t cleans = w->ret == SLAT_OK && want_clean ? 1 : 0;
		ST_CHECK(w->all.dcache_calls == cleans &&
				 w->all.dcache_bytes == cleans * size,
			 "%s: thread %u (%s) cleaned %" PRIu64 " times, %" PRIu64
			 " bytes (want %" PRIu64 " of %#" PRIx64 ")", C->name, i,
			 slat_strerror(w->ret), w->all.dcache_calls,
			 w->all.dcache_bytes, cleans, size);
		if (w->ret == SLAT_OK)
			ok++, winner = i;
		*again += w->again;
		*pages += w->pages_used;
	}
	ST_CHECK(ok == 1, "%s: size %#" PRIx64 " at %#" PRIx64 ": %u threads "
		 "installed %s (want exactly 1)", C->name, size, ipa, ok,
		 distinct ? "their own translation" : "it");
	ST_CHECK(__atomic_exchange_n(&visible_cleans, 0, __ATOMIC_RELAXED) == 0,
		 "%s: size %#" PRIx64 " at %#" PRIx64 ": the leaf translated "
		 "while its memory was being cleaned (published before the "
		 "clean)", C->name, size, ipa);
	return winner;
}

/* The table translates @ipa with the winner's PA. */
static void check_translation(uint64_t ipa, uint64_t size, uint64_t pa)
{
	struct slat_leaf l = { .size = 0 };
	int ret = slat_lookup(&S.t, slat_ipa(ipa), &l);
	ST_CHECK(ret == SLAT_OK && l.size == size && slat_pa_v(l.pa) == pa,
		 "%s: after the race %#" PRIx64 " translates to %#" PRIx64
		 " (%#" PRIx64 " bytes, %s), not the winner's %#" PRIx64,
		 C->name, ipa, slat_pa_v(l.pa), l.size, slat_strerror(ret), pa);
}

/* The table's counters over the round: one leaf, the cleans it needs, the
 * tables it needed, every lost race counted once. Returns the cleans. */
static uint64_t check_counters(const struct slat_stats *s0, uint64_t size,
			       unsigned want_tables, unsigned again,
			       unsigned pages)
{
	const struct slat_stats d = S.t.stats;
	uint64_t leaves = d.written[SLAT_WRITE_LEAF] -
			  s0->written[SLAT_WRITE_LEAF];
	uint64_t tables = d.written[SLAT_WRITE_TABLE] -
			  s0->written[SLAT_WRITE_TABLE];
	uint64_t cleans = d.dcache_calls - s0->dcache_calls;
	uint64_t bytes = d.dcache_bytes - s0->dcache_bytes;
	uint64_t retries = d.retries - s0->retries;
	uint64_t want_cleans = needs_clean() ? 1 : 0;

	ST_CHECK(leaves == 1, "%s: %" PRIu64 " leaves written (want 1)",
		 C->name, leaves);
	ST_CHECK(cleans == want_cleans && bytes == want_cleans * size,
		 "%s: %" PRIu64 " D-cache cleans of %" PRIu64 " bytes (want %"
		 PRIu64 " of %#" PRIx64 ")", C->name, cleans, bytes,
		 want_cleans, size);
	ST_CHECK(tables == want_tables, "%s: %" PRIu64 " tables linked (want "
		 "%u)", C->name, tables, want_tables);
	ST_CHECK(pages == want_tables,
		 "%s: the threads kept %u pages from their caches for %u new "
		 "tables: pages were lost", C->name, pages, want_tables);
	ST_CHECK(retries == again, "%s: stats count %" PRIu64 " retries, the "
		 "threads saw SLAT_E_AGAIN %u times", C->name, retries, again);

	return cleans;
}

/* What a series of rounds saw, for its summary line. */
struct tally {
	unsigned rounds, new_tables, again, cleans;
};

static void one_round(struct model *m, struct checker *ck, uint64_t ipa,
		      uint64_t size, bool distinct, struct tally *tl)
{
	struct slat_stats s0 = S.t.stats;
	unsigned want_tables = tables_to_link(ck, ipa, size);

	cur_ipa = ipa;
	cur_size = size;
	cur_distinct = distinct;
	arrived = 0;
	start_at = 0;
	pthread_barrier_wait(&start); /* go: top up */
	pthread_barrier_wait(&start); /* go: fault */
	pthread_barrier_wait(&finish);

	unsigned again = 0, pages = 0;
	unsigned winner = check_answers(ipa, size, distinct, &again, &pages);
	uint64_t pa = fault_pa((int)winner, ipa, size, distinct);
	check_translation(ipa, size, pa);

	uint64_t cleans = check_counters(&s0, size, want_tables, again, pages);
	model_map(m, ipa, size, pa, C->attrs);
	ST_CHECK(checker_range(ck, m, ipa, ipa + size) == 0, "%s: checker: %s",
		 C->name, ck->msg);
	/* Everything, now and then: the unmaps between rounds free their
	 * tables after an RCU grace period, which the leak count waits for. */
	if (tl->rounds % 32 == 0) {
		slat_hosted_rcu_barrier();
		ST_CHECK(checker_full(ck, m) == 0, "%s: checker: %s", C->name,
			 ck->msg);
	}
	tl->rounds++;
	tl->new_tables += want_tables != 0;
	tl->again += again;
	tl->cleans += (unsigned)cleans;
	if (verbose)
		printf("  %#014" PRIx64 " (%s tables): thread %u installed it, "
		       "%u lost races\n", ipa, want_tables ? "new" : "existing",
		       winner, again);
}

/* Unmap [ipa, ipa + size) between rounds (the workers wait). */
static void unmap_range(struct model *m, uint64_t ipa, uint64_t size)
{
	struct slat_page_cache c;
	ST_CHECK(slat_hosted_cache_init(&c, 8) == SLAT_OK, "cache");
	st_topup(&S, &c, 8);
	ST_CHECK(slat_unmap(&S.t, slat_ipa(ipa), size,
			    SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &c)) ==
			 SLAT_OK,
		 "unmap");
	slat_hosted_cache_fini(&c);
	model_unmap(m, ipa, size);
}

/*
 * 2 x rounds rounds of one size in [base, base + 2 GiB): in fours, the same
 * PA in new tables and then beside them (the next GiB for 1 GiB blocks, the
 * neighbour block or page otherwise), then the threads' own PAs the same
 * way; --race selects the kinds. The range is unmapped after each pair, so
 * that the next pair starts with new tables again.
 */
static void series(struct model *m, struct checker *ck, uint64_t base,
		   uint64_t size)
{
	struct tally tl[2] = { { 0 } };
	for (unsigned k = 0; k < 2 * rounds; k++) {
		bool distinct = (k / 2) % 2;
		if (distinct ? !race_own : !race_same)
			continue;
		uint64_t ipa = base + (k % 2) * (size == GIB ? GIB : size);
		one_round(m, ck, ipa, size, distinct, &tl[distinct]);
		if (k % 2)
			unmap_range(m, base, 2 * GIB);
	}
	for (int distinct = 0; distinct < 2; distinct++)
		if (tl[distinct].rounds)
			printf("  %s, %s: %u rounds (%u in new tables), one install "
			       "each, %u cleans, %u lost races\n",
			       size == GIB ? "1G" : size == 2 * MIB ? "2M" : "4K",
			       distinct ? "each its own PA, no replace" : "same PA",
			       tl[distinct].rounds, tl[distinct].new_tables,
			       tl[distinct].cleans, tl[distinct].again);
}

static void start_workers(void)
{
	st_pin_to_cpu(0); /* (the first call: the CPUs the process has) */
	W = calloc(nthreads, sizeof(*W));
	pthread_barrier_init(&start, NULL, nthreads + 1);
	pthread_barrier_init(&finish, NULL, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++) {
		W[i].id = (int)i;
		ST_CHECK(slat_hosted_cache_init(&W[i].cache, 8) == SLAT_OK, "cache");
		ST_CHECK(pthread_create(&W[i].th, NULL, worker_main, &W[i]) == 0,
			 "pthread_create");
	}
}

static void stop_workers(void)
{
	quit = true;
	pthread_barrier_wait(&start);
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(W[i].th, NULL);
		slat_hosted_cache_fini(&W[i].cache);
	}
	free(W);
}

/* Everything goes, and every page comes back. */
static void unmap_all(struct model *m, struct checker *ck)
{
	struct slat_page_cache c;
	uint64_t all = 1ull << C->cfg.ia_bits;
	ST_CHECK(slat_hosted_cache_init(&c, 8) == SLAT_OK, "cache");
	st_topup(&S, &c, 8);
	ST_CHECK(slat_unmap(&S.t, slat_ipa(0), all,
			    SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &c)) ==
			 SLAT_OK,
		 "unmap");
	slat_hosted_cache_fini(&c);
	model_unmap(m, 0, all);
	slat_hosted_rcu_barrier();
	ST_CHECK(checker_full(ck, m) == 0, "%s: checker: %s", C->name, ck->msg);
}

#define USAGE                                                             \
	"usage: test_same_block [--config NAME] [--race same|own|both] "  \
	"[--threads N] [--rounds N] [--verbose] [--help]\n"              \
	"configurations: arm-s2 arm-s2-fwb arm-s2-device ept npt arm-s1"

static const struct same_config *config_named(const char *name)
{
	for (unsigned i = 0; i < NR_CONFIGS; i++)
		if (!strcmp(name, configs[i].name))
			return &configs[i];
	st_fail("unknown configuration %s\n%s", name, USAGE);
}

static void set_race(const char *kind)
{
	race_same = !strcmp(kind, "same") || !strcmp(kind, "both");
	race_own = !strcmp(kind, "own") || !strcmp(kind, "both");
	if (!race_same && !race_own)
		st_fail("unknown race %s\n%s", kind, USAGE);
}

int main(int argc, char **argv)
{
	C = &configs[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--config") && i + 1 < argc)
			C = config_named(argv[++i]);
		else if (!strcmp(argv[i], "--race") && i + 1 < argc)
			set_race(argv[++i]);
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (!strcmp(argv[i], "--help"))
			printf("%s\n", USAGE), exit(0);
		else
			st_fail("%s", USAGE);
	}
	ST_CHECK(nthreads >= 1 && nthreads <= 1024 && rounds >= 1,
		 "bad arguments");

	st_table_init_cfg(&S, &C->cfg, 64 * MIB, true);
	slat_hosted_set_observer(&S.h, clean_observer, NULL);
	struct checker ck;
	ST_CHECK(checker_init(&ck, &S.t, &S.h) == 0, "checker: %s", ck.msg);
	struct model *m = model_new(4096);
	/* NPT: writable leaves are installed dirty, and stay so */
	model_dirty_rules(m, C->cfg.features & SLAT_FEAT_HWDIRTY,
			  !ck.fmt->wrprotect_keeps_dirty);
	start_workers();
	printf("%s: %u threads fault on the same address at once (%s), %u "
	       "rounds per size and kind\n", C->name, nthreads,
	       race_same && race_own ? "the same PA, then each its own PA"
	       : race_same ? "the same PA" : "each its own PA, no replace",
	       rounds);

	series(m, &ck, 4 * GIB, GIB);
	series(m, &ck, 8 * GIB, 2 * MIB);
	series(m, &ck, 12 * GIB, 4096);

	stop_workers();
	unmap_all(m, &ck);
	checker_fini(&ck);
	model_free(m);
	st_table_fini(&S);
	printf("same_block_faults %s: ok\n", C->name);
	return 0;
}
