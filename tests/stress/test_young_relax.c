/* SPDX-License-Identifier: MIT */
/*
 * young_relax: two shared walkers change one leaf at once. One ages it
 * (slat_mkyoung and slat_test_clear_young with mkold, both SLAT_SHARED, in
 * a loop: what a vCPU's access-flag fault and the host's page aging do);
 * the other relaxes its permissions (slat_relax with SLAT_SHARED: a
 * permission fault), adding execute to a read-write leaf or write to a
 * read-only one, on a 4 KiB page or a 2 MiB block.
 *
 * Each round maps the leaf afresh (old, without the permission), starts
 * both threads at one moment, and when relax has returned SLAT_OK (after
 * any SLAT_E_AGAIN), checks that the leaf has the permission it added: the
 * aging thread only ever changes the access flag, and must do it with a
 * compare-and-swap against the value it read. One that stores the leaf it
 * read with the flag changed (an atomic store, which ThreadSanitizer
 * cannot tell from a compare-and-swap) puts back the old permissions when
 * relax lands between its read and its store; this test sees it as a
 * permission lost after relax reported success.
 *
 *   test_young_relax [--config NAME|all] [--rounds N] [--seed N] [--help]
 *
 * --rounds: per configuration and case (default 4000); SLAT_YOUNG_ROUNDS
 * in the environment overrides the default (the ThreadSanitizer run).
 */
#include <pthread.h>

#include "checker.h"
#include "stress.h"

#define MIB (1ull << 20)
#define G4K 4096ull
#define PA_OFF (1ull << 39)         /* PA = IPA + 512 GiB: blocks aligned */
#define PAGE_AT (1ull << 30)
#define BLOCK_AT (PAGE_AT + 2 * MIB)
#define REGION_END (BLOCK_AT + 2 * MIB)
#define MAX_RELAX_TRIES 1000000u

struct yr_config {
	const char *name;
	struct slat_config cfg;
};

static const struct yr_config configs[] = {
	{ "arm-s2", { .format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		      .pa_bits = 48 } },
	{ "ept", { .format = SLAT_FMT_EPT, .granule = 4096, .ia_bits = 48,
		   .pa_bits = 48 } },
	{ "npt", { .format = SLAT_FMT_NPT, .granule = 4096, .ia_bits = 48,
		   .pa_bits = 48, .features = SLAT_FEAT_HWDIRTY } },
	{ "arm-s1", { .format = SLAT_FMT_ARM_S1, .granule = 4096, .ia_bits = 48,
		      .pa_bits = 48 } },
};
#define NR_CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* What relax adds, to a leaf mapped with what. */
struct yr_case {
	const char *name;
	uint32_t start, add;
};

static const struct yr_case cases[] = {
	{ "relax+X", SLAT_RW, SLAT_X },
	{ "relax+W", SLAT_R, SLAT_W },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

static struct st_table S;
static const struct yr_config *cur;
static uint64_t rng;

/* This round, set by the main thread before it publishes `go`. */
static struct {
	const struct yr_case *c;
	uint64_t ipa, size;
	uint64_t start_at;     /* when both threads begin */
	uint64_t delay_ns;     /* how long the relaxing thread waits then */
	/* set by the relaxing thread before it publishes `relaxed` */
	int ret;
	unsigned again;
} R;

static unsigned go, relaxed;
static bool quit;

/* ----------------------------------------------------- the two walkers */

/* The relaxing thread: one permission fault, retried while it loses. */
static void relax_once(void)
{
	R.again = 0;
	for (;;) {
		slat_hosted_rcu_read_lock();
		R.ret = slat_relax(&S.t, slat_ipa(R.ipa), R.size, R.c->add,
				   SLAT_OP(.flags = SLAT_SHARED));
		slat_hosted_rcu_read_unlock();
		if (R.ret != SLAT_E_AGAIN || ++R.again == MAX_RELAX_TRIES)
			return;
	}
}

static void *relax_main(void *arg)
{
	(void)arg;
	st_pin_to_cpu(1);
	slat_hosted_rcu_register_thread();
	for (unsigned n = 1;; n++) {
		st_wait_for(&go, n);
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			break;
		while (st_ns() < R.start_at + R.delay_ns)
			;
		relax_once();
		__atomic_store_n(&relaxed, n, __ATOMIC_RELEASE);
	}
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

/* The aging thread: young, old, young, ... until relax has returned.
 * Returns the number of calls. */
static unsigned age_until_relaxed(unsigned n)
{
	unsigned calls = 0;
	while (st_ns() < R.start_at)
		;
	while (__atomic_load_n(&relaxed, __ATOMIC_ACQUIRE) != n) {
		slat_hosted_rcu_read_lock();
		int y = slat_mkyoung(&S.t, slat_ipa(R.ipa), SLAT_SHARED);
		int o = slat_test_clear_young(&S.t, slat_ipa(R.ipa), R.size,
					      true,
					      SLAT_OP(.flags = SLAT_SHARED));
		slat_hosted_rcu_read_unlock();
		ST_CHECK((y == SLAT_OK || y == SLAT_NOTHING_TO_DO ||
			  y == SLAT_E_AGAIN) &&
				 (o == SLAT_OK || o == SLAT_WAS_YOUNG),
			 "%s: slat_mkyoung = %s, slat_test_clear_young = %s",
			 cur->name, check_status_name(y), check_status_name(o));
		calls += 2;
	}
	return calls;
}

/* ------------------------------------------------------------- rounds */

struct yr_stats {
	uint64_t rounds, lost, again, age_calls;
	char first[300];
};

/* The leaf mapped afresh with the case's permissions, old. */
static void reset_leaf(struct slat_page_cache *cache)
{
	st_topup(&S, cache, 8);
	int ret = slat_unmap(&S.t, slat_ipa(PAGE_AT), REGION_END - PAGE_AT,
			     SLAT_OP(.flush = SLAT_FLUSH_VMID, .cache = cache));
	ST_CHECK(ret == SLAT_OK, "%s: unmap = %s", cur->name,
		 check_status_name(ret));
	ret = slat_map(&S.t, slat_ipa(R.ipa), R.size, slat_pa(R.ipa + PA_OFF),
		       R.c->start | SLAT_MT_NORMAL,
		       SLAT_OP(.flags = R.size == G4K ? SLAT_MAP_PAGES : 0,
			       .cache = cache));
	ST_CHECK(ret == SLAT_OK, "%s: map = %s", cur->name,
		 check_status_name(ret));
	ret = slat_test_clear_young(&S.t, slat_ipa(R.ipa), R.size, true, NULL);
	ST_CHECK(ret == SLAT_WAS_YOUNG, "%s: a new leaf is not young (%d)",
		 cur->name, ret);
}

static void check_round(struct yr_stats *st, unsigned round)
{
	ST_CHECK(R.ret == SLAT_OK, "%s %s round %u: slat_relax = %s after %u "
		 "lost races (want SLAT_OK: the leaf lacked the permission)",
		 cur->name, R.c->name, round, check_status_name(R.ret), R.again);
	struct slat_leaf l;
	int ret = slat_lookup(&S.t, slat_ipa(R.ipa), &l);
	ST_CHECK(ret == SLAT_OK && slat_pa_v(l.pa) == R.ipa + PA_OFF &&
			 l.size == R.size,
		 "%s %s round %u: the leaf at %#" PRIx64 " is gone (%s)",
		 cur->name, R.c->name, round, R.ipa, check_status_name(ret));
	if ((l.attrs & R.c->add) != R.c->add) {
		st->lost++;
		if (!st->first[0])
			snprintf(st->first, sizeof(st->first),
				 "round %u: relax of the %s at %#" PRIx64
				 " returned SLAT_OK, but the leaf is now %#x "
				 "(pte %#" PRIx64 ") without what it added", round,
				 R.size == G4K ? "page" : "block", R.ipa, l.attrs,
				 l.pte);
	}
	st->again += R.again;
	st->rounds++;
}

static void one_round(const struct yr_case *c, unsigned n, unsigned round,
		      struct slat_page_cache *cache, struct yr_stats *st)
{
	R.c = c;
	bool block = st_below(&rng, 2);
	R.ipa = block ? BLOCK_AT : PAGE_AT;
	R.size = block ? 2 * MIB : G4K;
	reset_leaf(cache);
	R.delay_ns = st_below(&rng, 400);
	R.start_at = st_ns() + 2000;
	__atomic_store_n(&go, n, __ATOMIC_RELEASE);
	st->age_calls += age_until_relaxed(n);
	check_round(st, round);
}

static void print_stats(const struct yr_case *c, const struct yr_stats *st)
{
	printf("  %-8s %7" PRIu64 " %12" PRIu64 " %11" PRIu64 " %11" PRIu64 "\n",
	       c->name, st->rounds, st->age_calls, st->again, st->lost);
}

/* Every case on @c; returns the number of lost permissions. */
static uint64_t run_config(const struct yr_config *c, unsigned rounds)
{
	cur = c;
	st_table_init_cfg(&S, &c->cfg, 16 * MIB, true);
	struct slat_page_cache cache;
	ST_CHECK(slat_hosted_cache_init(&cache, 16) == SLAT_OK, "cache");
	pthread_t th;
	ST_CHECK(pthread_create(&th, NULL, relax_main, NULL) == 0,
		 "pthread_create");
	printf("%s: %u rounds per case\n  %-8s %7s %12s %11s %11s\n", c->name,
	       rounds, "case", "rounds", "aging calls", "relax again",
	       "perms lost");

	uint64_t lost = 0;
	unsigned n = 0;
	struct yr_stats st[NR_CASES];
	memset(st, 0, sizeof(st));
	for (unsigned k = 0; k < NR_CASES; k++) {
		for (unsigned i = 0; i < rounds; i++)
			one_round(&cases[k], ++n, i, &cache, &st[k]);
		print_stats(&cases[k], &st[k]);
		lost += st[k].lost;
	}
	for (unsigned k = 0; k < NR_CASES; k++)
		if (st[k].first[0])
			printf("  %s %s, first: %s\n", c->name, cases[k].name,
			       st[k].first);

	__atomic_store_n(&quit, true, __ATOMIC_RELEASE);
	__atomic_store_n(&go, n + 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	quit = false;
	go = relaxed = 0;
	slat_hosted_cache_fini(&cache);
	st_table_fini(&S);
	return lost;
}

#define USAGE "usage: test_young_relax [--config arm-s2|ept|npt|arm-s1|all] " \
	      "[--rounds N] [--seed N] [--help]"

int main(int argc, char **argv)
{
	const char *config = "all";
	uint64_t rounds = st_env_count("SLAT_YOUNG_ROUNDS", 4000), seed = 0x5eed;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			config = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--help"))
			printf("%s\n", USAGE), exit(0);
		else
			st_fail("%s", USAGE);
	}
	ST_CHECK(rounds >= 1 && rounds <= 100000000 && seed, "bad arguments");
	rng = seed;
	st_pin_to_cpu(0);
	slat_hosted_rcu_register_thread();

	uint64_t lost = 0;
	bool any = false;
	for (unsigned i = 0; i < NR_CONFIGS; i++) {
		if (strcmp(config, "all") && strcmp(config, configs[i].name))
			continue;
		any = true;
		lost += run_config(&configs[i], (unsigned)rounds);
	}
	slat_hosted_rcu_unregister_thread();
	if (!any)
		st_fail("%s", USAGE);
	if (lost)
		st_fail("young_relax: %" PRIu64 " relaxed permissions lost "
			"(table above)", lost);
	printf("young_relax: ok\n");
	return 0;
}
