/* SPDX-License-Identifier: MIT */
/*
 * Replays of particular races between shared walkers, one CTest test each:
 *
 *   test_races unlink-stats      (deterministic)
 *   test_races again-after-clean (deterministic)
 *   test_races table-publish     (deterministic under ThreadSanitizer)
 *   test_races relax-hole [--seconds N]   (a hunt: statistical)
 *   test_races ept-split-refcount (deterministic)
 *   test_races map-table-replaced (deterministic)
 *
 * A deterministic replay makes two walkers interleave in one thread: a
 * hook of the first walker (the platform calls it in the middle of the
 * operation) runs the second walker's whole operation, which is exactly
 * what a second CPU could do at that moment. The hooks are the hosted ones
 * (RCU deferred free), wrapped.
 *
 * Each case asserts the contract of docs/concurrency.md; on the current
 * core each fails, replaying the gap of that document's last section:
 * table-publish (1), relax-hole (2), map-table-replaced (3),
 * again-after-clean (4), unlink-stats (5), ept-split-refcount (6).
 */
#include <pthread.h>
#include <sched.h>

#include "checker.h"
#include "stress.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define G4K 4096ull
#define PA_OFF ((uint64_t)0x8000000000)
#define ATTRS (SLAT_RW | SLAT_MT_NORMAL)

static struct st_table S;
static struct checker ck;
static struct model *M;

/* ------------------------------------------------- hooks with a trigger */

static struct slat_mm_ops wrapped;
static const struct slat_mm_ops *base;

/* Called once from the hook named by trigger_on, on its trigger_nth call. */
enum hook { HOOK_NONE, HOOK_VIRT_TO_PHYS, HOOK_DCACHE, HOOK_REFCOUNT };
static enum hook trigger_on;
static unsigned trigger_nth, trigger_calls;
static void (*trigger_fn)(void);

static void maybe_trigger(enum hook h)
{
	if (h != trigger_on || ++trigger_calls != trigger_nth)
		return;
	trigger_on = HOOK_NONE;
	trigger_fn();
}

static slat_pa_t w_virt_to_phys(void *ctx, void *va)
{
	maybe_trigger(HOOK_VIRT_TO_PHYS);
	return base->virt_to_phys(ctx, va);
}

static uint32_t *w_refcount(void *ctx, void *table)
{
	uint32_t *rc = base->refcount(ctx, table);
	maybe_trigger(HOOK_REFCOUNT);
	return rc;
}

static void w_dcache(void *ctx, slat_pa_t pa, uint64_t size)
{
	base->dcache_clean_inval_poc(ctx, pa, size);
	maybe_trigger(HOOK_DCACHE);
}

static void arm(enum hook h, unsigned nth, void (*fn)(void))
{
	trigger_on = h;
	trigger_nth = nth;
	trigger_calls = 0;
	trigger_fn = fn;
}

static bool ept, ia48;

static void setup(void)
{
	memset(&S, 0, sizeof(S));
	S.cfg = (struct slat_config){
		.format = ept ? SLAT_FMT_EPT : SLAT_FMT_ARM_S2, .granule = 4096,
		.ia_bits = ept || ia48 ? 48 : 40, .pa_bits = 48,
	};
	ST_CHECK(slat_hosted_init(&S.h, 64 * MIB, 4096, 0x40000000ull) ==
			 SLAT_OK, "slat_hosted_init");
	slat_hosted_set_observer(&S.h, st_observer, NULL);
	ST_CHECK(slat_hosted_enable_rcu(&S.h, &S.t) == SLAT_OK, "enable_rcu");
	base = slat_hosted_ops_rcu();
	wrapped = *base;
	wrapped.virt_to_phys = w_virt_to_phys;
	wrapped.dcache_clean_inval_poc = w_dcache;
	wrapped.refcount = w_refcount;
	wrapped.refcount_array = NULL; /* every count through the hook */
	ST_CHECK(slat_table_init(&S.t, &S.cfg, &wrapped, &S.h) == SLAT_OK,
		 "slat_table_init");
	/* (the EPT case checks what it needs itself) */
	if (!ept)
		ST_CHECK(checker_init(&ck, &S.t, &S.h) == 0, "checker: %s",
			 ck.msg);
	M = model_new(4096);
	slat_hosted_rcu_register_thread();
}

static void check(const char *when)
{
	slat_hosted_rcu_barrier();
	ST_CHECK(checker_full(&ck, M) == 0, "checker %s: %s", when, ck.msg);
}

static void teardown(void)
{
	slat_hosted_rcu_unregister_thread();
	if (!ept)
		checker_fini(&ck);
	model_free(M);
	st_table_fini(&S);
}

static int shared_map(uint64_t ipa, uint64_t size,
		      struct slat_page_cache *c)
{
	slat_hosted_rcu_read_lock();
	int ret = slat_map(&S.t, slat_ipa(ipa), size, slat_pa(ipa + PA_OFF),
			   ATTRS, SLAT_OP(.flags = SLAT_SHARED, .cache = c));
	slat_hosted_rcu_read_unlock();
	return ret;
}

/* ------------------------------------------------------- unlink-stats */

/*
 * Walker A faults one page in an empty 1 GiB region: it links a level-2
 * table T2, then, holding T2, takes a page for a level-3 table T3. Right
 * then walker C faults the whole 1 GiB as one block: T2 is empty, so C
 * replaces it by the block and hands T2 to free_deferred, counting the
 * subtree's pages (one) as freed. A then links T3 into T2 (its
 * compare-and-swap is on T2's entry, which nothing changed) and installs
 * its page there. After the grace period slat_free_unlinked() frees T2 and
 * T3: two pages, counted one. The table is right (the block translates
 * A's page the same); the counters are not: pages_alloc - pages_freed
 * says a table is reachable when none is.
 */
static void unlink_stats_c(void)
{
	struct slat_page_cache none = { 0 };
	/* A holds the read side; C is a walker beside it. */
	int ret = shared_map(16 * GIB, GIB, &none);
	ST_CHECK(ret == SLAT_OK, "walker C: map of the 1 GiB block = %s",
		 slat_strerror(ret));
}

static void case_unlink_stats(void)
{
	struct slat_page_cache c;
	ST_CHECK(slat_hosted_cache_init(&c, 4) == SLAT_OK, "cache");
	st_topup(&S, &c, 2);

	/*
	 * virt_to_phys: calls 1 and 2 check the chain's two pages, 3 is for
	 * T2's descriptor; 4 checks T3's page, 5 is for its descriptor
	 * (before its link, T2 linked).
	 */
	arm(HOOK_VIRT_TO_PHYS, 5, unlink_stats_c);
	int ret = shared_map(16 * GIB + G4K, G4K, &c);
	ST_CHECK(trigger_on == HOOK_NONE, "the interleaving did not happen");
	ST_CHECK(ret == SLAT_OK, "walker A: map of one page = %s",
		 slat_strerror(ret));
	model_map(M, 16 * GIB, GIB, 16 * GIB + PA_OFF, ATTRS);
	slat_hosted_cache_fini(&c);
	slat_hosted_rcu_barrier();
	printf("counters: %" PRIu64 " table pages allocated, %" PRIu64
	       " freed (%" PRIu64 " deferred); the arena holds %" PRIu64
	       " table pages beside the root\n",
	       S.t.stats.pages_alloc, S.t.stats.pages_freed,
	       S.t.stats.pages_deferred,
	       slat_hosted_table_pages(&S.h) - S.t.geo.root_pages);
	check("after the race");
}

/* -------------------------------------------------- again-after-clean */

/*
 * A 2 MiB span holds a table with its first two pages unmapped. Walker B
 * faults page 1: it locks the entry and cleans the page. Meanwhile walker
 * A faults the whole 2 MiB block: the table already holds the block's
 * translation for the other pages, so A keeps it and fills the holes. It
 * installs page 0 (and cleans it), then meets page 1 locked and returns
 * SLAT_E_AGAIN. The contract (docs/concurrency.md): a loser did nothing to
 * the entry it lost nor after it; what lies before it (*done) is complete,
 * cleaned exactly once. A one-leaf fault has nothing before, so there a
 * loser has done nothing at all.
 */
static int again_ret;
static uint64_t again_done;
static struct st_counts again_did;

static void again_a(void)
{
	struct st_counts c0 = st_now();
	struct slat_page_cache none = { 0 };
	slat_hosted_rcu_read_lock();
	struct slat_op args = { .flags = SLAT_SHARED, .cache = &none };
	again_ret = slat_map(&S.t, slat_ipa(32 * GIB), 2 * MIB,
			     slat_pa(32 * GIB + PA_OFF), ATTRS, &args);
	again_done = args.done;
	slat_hosted_rcu_read_unlock();
	again_did = st_delta(c0, st_now());
}

static void case_again_after_clean(void)
{
	struct slat_page_cache c;
	ST_CHECK(slat_hosted_cache_init(&c, 4) == SLAT_OK, "cache");
	st_topup(&S, &c, 2);
	uint64_t y = 32 * GIB;
	/* Exclusive set-up: pages 2..511 of the span. */
	ST_CHECK(slat_map(&S.t, slat_ipa(y + 2 * G4K), 2 * MIB - 2 * G4K,
			  slat_pa(y + 2 * G4K + PA_OFF), ATTRS,
			  SLAT_OP(.flags = SLAT_MAP_PAGES, .cache = &c)) ==
			 SLAT_OK,
		 "set-up map");
	model_map(M, y + 2 * G4K, 2 * MIB - 2 * G4K, y + 2 * G4K + PA_OFF,
		  ATTRS);

	/* B's clean of page 1 runs A. */
	arm(HOOK_DCACHE, 1, again_a);
	int ret = shared_map(y + G4K, G4K, &c);
	ST_CHECK(trigger_on == HOOK_NONE, "the interleaving did not happen");
	ST_CHECK(ret == SLAT_OK, "walker B: map of page 1 = %s",
		 slat_strerror(ret));
	printf("walker A: %s after %" PRIu64 " D-cache cleans (%" PRIu64
	       " bytes), %" PRIu64 " TLBIs\n", slat_strerror(again_ret),
	       again_did.dcache_calls, again_did.dcache_bytes, again_did.tlbi);
	/* What the table must hold, whatever A returned. */
	model_map(M, y, 2 * MIB, y + PA_OFF, ATTRS);
	if (again_ret == SLAT_E_AGAIN) {
		/* A retries, as a vCPU would: it finds the rest to do. */
		struct slat_page_cache none = { 0 };
		ret = shared_map(y, 2 * MIB, &none);
		ST_CHECK(ret == SLAT_OK || ret == SLAT_NOTHING_TO_DO,
			 "walker A's retry = %s", slat_strerror(ret));
	}
	slat_hosted_cache_fini(&c);
	check("after the race");
	ST_CHECK(again_ret != SLAT_E_AGAIN ||
			 (again_done == G4K && again_did.dcache_bytes == G4K &&
			  again_did.tlbi == 0),
		 "walker A returned SLAT_E_AGAIN with %#" PRIx64 " done after "
		 "cleaning %" PRIu64 " bytes and %" PRIu64 " TLBIs: a loser "
		 "may only have completed what lies before the entry it lost",
		 again_done, again_did.dcache_bytes, again_did.tlbi);
}

/* ------------------------------------------------------ table-publish */

/*
 * Walker X tops its cache up (the arena zeroes the pages) and faults a page
 * in an empty region: it links new tables. Walker Y, which shares no lock
 * with X, looks the page up until it is there, walking through X's new
 * tables. The only order between X zeroing a table page and Y reading it
 * is the core's publication of the table entry; ThreadSanitizer reports a
 * data race unless the walker's load of a table entry synchronises with
 * that publication. Without ThreadSanitizer this case only checks the
 * translation.
 */
static uint64_t publish_ipa = 48 * GIB + 5 * G4K;
static int publish_start;

static void *publish_y(void *arg)
{
	(void)arg;
	slat_hosted_rcu_register_thread();
	__atomic_store_n(&publish_start, 1, __ATOMIC_RELAXED);
	for (;;) {
		struct slat_leaf l;
		slat_hosted_rcu_read_lock();
		int ret = slat_lookup(&S.t, slat_ipa(publish_ipa), &l);
		slat_hosted_rcu_read_unlock();
		if (ret == SLAT_OK) {
			ST_CHECK(slat_pa_v(l.pa) == publish_ipa + PA_OFF,
				 "lookup: PA %#" PRIx64, slat_pa_v(l.pa));
			break;
		}
		sched_yield();
	}
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

static void case_table_publish(void)
{
	pthread_t y;
	struct slat_page_cache c;
	ST_CHECK(slat_hosted_cache_init(&c, 4) == SLAT_OK, "cache");
	ST_CHECK(pthread_create(&y, NULL, publish_y, NULL) == 0, "thread");
	/* Y runs first (no lock orders anything after this). */
	while (!__atomic_load_n(&publish_start, __ATOMIC_RELAXED))
		sched_yield();
	st_topup(&S, &c, 2);
	int ret = shared_map(publish_ipa, G4K, &c);
	ST_CHECK(ret == SLAT_OK, "walker X: map = %s", slat_strerror(ret));
	pthread_join(y, NULL);
	model_map(M, publish_ipa, G4K, publish_ipa + PA_OFF, ATTRS);
	slat_hosted_cache_fini(&c);
	check("after the race");
}

/* --------------------------------------------------------- relax-hole */

/*
 * Walker R relaxes one page of an empty 2 MiB span while walker W faults
 * another page of the span (W links a level-3 table where R read an empty
 * entry). R must then find the hole (SLAT_E_NOENT), or, had it looked
 * after W, the hole below W's table: it must never report that the page
 * already has the permissions (SLAT_NOTHING_TO_DO). A hunt: it repeats the
 * race with both threads released together until the time is up.
 */
static pthread_barrier_t hunt_bar;
static unsigned hunt_go;
static volatile bool hunt_stop;
static int hunt_relax_ret;

static void hunt_gate(unsigned round)
{
	pthread_barrier_wait(&hunt_bar);
	__atomic_fetch_add(&hunt_go, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&hunt_go, __ATOMIC_ACQUIRE) < 2 * round)
		;
}

static void *hunt_w(void *arg)
{
	struct slat_page_cache *c = arg;
	slat_hosted_rcu_register_thread();
	for (unsigned round = 1;; round++) {
		st_topup(&S, c, 2);
		hunt_gate(round);
		if (hunt_stop)
			break;
		ST_CHECK(shared_map(64 * GIB + 7 * G4K, G4K, c) == SLAT_OK,
			 "walker W: map");
		pthread_barrier_wait(&hunt_bar);
	}
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

static void case_relax_hole(double seconds)
{
	pthread_t w;
	struct slat_page_cache wc, xc;
	uint64_t span = 64 * GIB, p = span + 3 * G4K;
	ST_CHECK(slat_hosted_cache_init(&wc, 4) == SLAT_OK &&
			 slat_hosted_cache_init(&xc, 4) == SLAT_OK, "cache");
	pthread_barrier_init(&hunt_bar, NULL, 2);
	ST_CHECK(pthread_create(&w, NULL, hunt_w, &wc) == 0, "thread");
	uint64_t end = st_ns() + (uint64_t)(seconds * 1e9), rounds = 0;
	unsigned round;
	for (round = 1;; round++) {
		if (st_ns() > end)
			hunt_stop = true;
		hunt_gate(round);
		if (hunt_stop)
			break;
		slat_hosted_rcu_read_lock();
		hunt_relax_ret = slat_relax(&S.t, slat_ipa(p), G4K, SLAT_R,
					    SLAT_OP(.flags = SLAT_SHARED |
							     SLAT_NO_HOLES));
		slat_hosted_rcu_read_unlock();
		pthread_barrier_wait(&hunt_bar);
		rounds++;
		/* Both done: look, then empty the span again (exclusive). */
		struct slat_leaf l;
		ST_CHECK(slat_lookup(&S.t, slat_ipa(p), &l) == SLAT_E_NOENT,
			 "page %#" PRIx64 " is mapped", p);
		if (hunt_relax_ret != SLAT_E_NOENT &&
		    hunt_relax_ret != SLAT_E_AGAIN) {
			hunt_stop = true;
			hunt_gate(round + 1);
			pthread_join(w, NULL);
			st_fail("round %" PRIu64 ": relax of the unmapped page %#"
				PRIx64 " returned %s while another walker linked "
				"a table above it", rounds, p,
				slat_strerror(hunt_relax_ret));
		}
		st_topup(&S, &xc, 2);
		ST_CHECK(slat_unmap(&S.t, slat_ipa(span), 2 * MIB,
				    SLAT_OP(.flush = SLAT_FLUSH_RANGE,
					    .cache = &xc)) == SLAT_OK,
			 "unmap");
	}
	pthread_join(w, NULL);
	printf("relax-hole: %" PRIu64 " rounds, the race was not caught\n",
	       rounds);
	slat_hosted_cache_fini(&wc);
	slat_hosted_cache_fini(&xc);
	check("after the hunt");
}

/* ------------------------------------------------- ept-split-refcount */

/*
 * EPT splits a block in place: the core fills a page with the block's
 * translation (and sets its refcount to 512), then swaps it in with a
 * compare-and-swap. A shared walker that loses that race (here: another
 * walker clears the block's access flag meanwhile) zeroes the page and
 * puts it back in its cache, but leaves its refcount at 512. The next new
 * table made from that page counts 513 for one entry; it is never freed.
 */
static void ept_split_c(void)
{
	slat_hosted_rcu_read_lock();
	int ret = slat_test_clear_young(&S.t, slat_ipa(32 * GIB), 2 * MIB, true,
					SLAT_OP(.flags = SLAT_SHARED));
	slat_hosted_rcu_read_unlock();
	ST_CHECK(ret == SLAT_WAS_YOUNG, "walker C: test_clear_young = %d", ret);
}

static void case_ept_split_refcount(void)
{
	struct slat_page_cache c;
	uint64_t y = 32 * GIB, z = 33 * GIB;
	ST_CHECK(slat_hosted_cache_init(&c, 8) == SLAT_OK, "cache");
	st_topup(&S, &c, 8);
	ST_CHECK(slat_map(&S.t, slat_ipa(y), 2 * MIB, slat_pa(y + PA_OFF),
			  ATTRS, SLAT_OP(.cache = &c)) == SLAT_OK,
		 "set-up map");

	/* Walker R adds execute to one page: it splits the block. Its
	 * second virt_to_phys call (the first checks the page) is for the
	 * new table's descriptor, after the pop, before the swap. */
	arm(HOOK_VIRT_TO_PHYS, 2, ept_split_c);
	void *top = c.pages[c.nr - 1];
	slat_hosted_rcu_read_lock();
	int ret = slat_relax(&S.t, slat_ipa(y + G4K), G4K, SLAT_R | SLAT_X,
			     SLAT_OP(.flags = SLAT_SHARED, .cache = &c));
	slat_hosted_rcu_read_unlock();
	ST_CHECK(trigger_on == HOOK_NONE, "the interleaving did not happen");
	ST_CHECK(ret == SLAT_E_AGAIN, "walker R: relax = %s (want it to lose "
		 "the race)", slat_strerror(ret));
	ST_CHECK(c.pages[c.nr - 1] == top, "the page did not go back");
	uint32_t idx = (uint32_t)(((uint8_t *)top - S.h.arena) / 4096);
	printf("the page R gave back has refcount %u\n", S.h.refcounts[idx]);

	/* A fault elsewhere makes new tables from the cache, that page first. */
	ST_CHECK(slat_map(&S.t, slat_ipa(z), G4K, slat_pa(z + PA_OFF), ATTRS,
			  SLAT_OP(.cache = &c)) == SLAT_OK,
		 "map");
	uint32_t used = 0;
	for (unsigned i = 0; i < 512; i++)
		used += ((uint64_t *)top)[i] != 0;
	ST_CHECK(S.h.refcounts[idx] == used,
		 "the new table made from that page has %u entries but "
		 "refcount %u", used, S.h.refcounts[idx]);
	ST_CHECK(slat_unmap(&S.t, slat_ipa(0), 1ull << 48,
			    SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = &c)) ==
			 SLAT_OK,
		 "unmap");
	slat_hosted_cache_fini(&c);
	slat_hosted_rcu_barrier();
	ST_CHECK(slat_hosted_table_pages(&S.h) == S.t.geo.root_pages,
		 "after unmapping everything %" PRIu64 " table pages are left",
		 slat_hosted_table_pages(&S.h) - S.t.geo.root_pages);
}

/* ------------------------------------------------- map-table-replaced */

/*
 * 48-bit IPA (the walk starts at level 0). Walker A faults one page in an
 * empty 1 GiB region: it links a level-2 table below the level-1 table it
 * made and, counting the new entry, calls the refcount hook. Right then
 * walker C maps the whole 1 GiB to another PA as one block: the new
 * level-2 table is still empty, so C replaces it. A's walker re-reads the
 * entry to descend into the table A linked, finds a block, skips it and
 * returns SLAT_NOTHING_TO_DO: "every page already had this translation",
 * though A's page now translates to C's PA.
 */
static void replaced_c(void)
{
	struct slat_page_cache none = { 0 };
	slat_hosted_rcu_read_lock();
	int ret =
		slat_map(&S.t, slat_ipa(16 * GIB), GIB, slat_pa(64 * GIB),
			 ATTRS, SLAT_OP(.flags = SLAT_SHARED, .cache = &none));
	slat_hosted_rcu_read_unlock();
	ST_CHECK(ret == SLAT_OK, "walker C: map of the block = %s",
		 slat_strerror(ret));
}

static void case_map_table_replaced(void)
{
	struct slat_page_cache c;
	uint64_t x = 16 * GIB + 5 * G4K;
	ST_CHECK(slat_hosted_cache_init(&c, 4) == SLAT_OK, "cache");
	st_topup(&S, &c, 3);
	/* The first refcount call zeroes the word of the new level-2 table's
	 * page as it leaves the cache; the second counts the level-1 table's
	 * new entry. */
	arm(HOOK_REFCOUNT, 2, replaced_c);
	int ret = shared_map(x, G4K, &c);
	ST_CHECK(trigger_on == HOOK_NONE, "the interleaving did not happen");
	model_map(M, 16 * GIB, GIB, 64 * GIB, ATTRS);
	slat_hosted_cache_fini(&c);
	check("after the race");
	struct slat_leaf l;
	ST_CHECK(slat_lookup(&S.t, slat_ipa(x), &l) == SLAT_OK, "lookup");
	printf("walker A: %s; the page translates to %#" PRIx64 " (A asked "
	       "%#" PRIx64 ")\n", slat_strerror(ret), slat_pa_v(l.pa),
	       (uint64_t)(x + PA_OFF));
	/* A failure (retry, or top up and retry) is fine; success is not. */
	ST_CHECK(ret < 0 || slat_pa_v(l.pa) == x + PA_OFF,
		 "walker A's map returned %s but its page translates to "
		 "another PA", slat_strerror(ret));
}

int main(int argc, char **argv)
{
	if (argc < 2)
		st_fail("usage: test_races unlink-stats|again-after-clean|"
			"table-publish|relax-hole [--seconds N]|"
			"ept-split-refcount|map-table-replaced");
	double seconds = 5;
	for (int i = 2; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[i + 1], NULL);
	ept = !strcmp(argv[1], "ept-split-refcount");
	ia48 = !strcmp(argv[1], "map-table-replaced");
	setup();
	if (ept)
		case_ept_split_refcount();
	else if (ia48)
		case_map_table_replaced();
	else if (!strcmp(argv[1], "unlink-stats"))
		case_unlink_stats();
	else if (!strcmp(argv[1], "again-after-clean"))
		case_again_after_clean();
	else if (!strcmp(argv[1], "table-publish"))
		case_table_publish();
	else if (!strcmp(argv[1], "relax-hole"))
		case_relax_hole(seconds);
	else
		st_fail("unknown case %s", argv[1]);
	teardown();
	printf("%s: ok\n", argv[1]);
	return 0;
}
