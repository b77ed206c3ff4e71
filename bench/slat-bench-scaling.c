/* SPDX-License-Identifier: MIT */
/*
 * slat-bench-scaling: concurrent page faults as shared walkers
 * (docs/bench.md, "Scaling").
 *
 * 1, 2, 4, ... threads, each a vCPU that maps pages one 4 KiB fault at a
 * time with SLAT_SHARED inside an RCU read-side critical section, its page
 * cache topped up before each fault. Two curves:
 *   own:  each thread faults every page of its own 1 GiB region;
 *   same: every thread faults every page of one shared 1 GiB region (in
 *         its own order), so most faults find the page installed and
 *         threads race for the same entries.
 * Reported per point: faults per second (calls that completed, over the
 * wall time), retries (SLAT_E_AGAIN), and D-cache cleans per installed
 * granule, where libslat cleans (seed 000: only the walker that installs
 * a leaf cleans; target 1.00), and with the caller cleaning before each
 * map as seed 000's old placement did (the table has FWB so the core does
 * not clean; the bench calls the hosted clean hook before every fault: one
 * clean per faulting thread).
 *
 * The hooks do no real cache maintenance: cleans are counted, and cost
 * nothing unless --clean-ns charges a busy wait per 4 KiB cleaned.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#ifndef SLAT_BUILD_TYPE
#define SLAT_BUILD_TYPE "unknown"
#endif

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define G4K 4096ull
#define REGION_BASE (16 * GIB)
#define PA_OFF 0x8000000000ull
#define ATTRS (SLAT_RW | SLAT_MT_NORMAL)

enum placement { CLEAN_IN_MAP, CLEAN_BEFORE_MAP };
enum curve { OWN, SAME };

static unsigned max_threads = 64;
static uint64_t faults_per_thread = 65536; /* a quarter of the 1 GiB */
static unsigned reps = 3;
static uint64_t clean_ns;
static bool json;

struct point {
	unsigned threads;
	double secs;
	uint64_t calls;       /* completed faults (retries not counted) */
	uint64_t retries;     /* SLAT_E_AGAIN seen by the threads */
	uint64_t installed;   /* leaves written */
	uint64_t cleans;      /* D-cache cleans, by whoever made them */
	uint64_t nothing;     /* faults that found the page installed */
	uint64_t cpu_ns;      /* CPU time of the faulting threads, summed */
};

struct run {
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	enum placement place;
	enum curve curve;
	unsigned threads;
	pthread_barrier_t bar;
	uint64_t cleans_by_caller;
};

struct vcpu {
	pthread_t th;
	struct run *run;
	unsigned id;
	struct slat_page_cache cache;
	uint64_t retries, nothing, calls, cpu_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

static void observer(void *arg, const struct slat_hosted_event *ev)
{
	(void)arg;
	if (ev->kind == SLAT_EV_DCACHE_CLEAN_INVAL && clean_ns)
		spin_ns(clean_ns * (ev->size / G4K));
}

static void die(const char *what)
{
	fprintf(stderr, "slat-bench-scaling: %s\n", what);
	exit(1);
}

/*
 * The pages faulted: the first faults_per_thread pages of a permutation
 * of the region's pages (an odd multiplier modulo a power of two), spread
 * over the whole 1 GiB. On the same region each thread visits that set in
 * its own order (another odd stride from another start).
 */
static uint64_t page_of(const struct vcpu *v, uint64_t i)
{
	uint64_t n = faults_per_thread, pages = GIB / G4K;
	if (v->run->curve == SAME)
		i = ((uint64_t)v->id * 7919u + i * (2 * (v->id * 40503u) + 1)) &
		    (n - 1);
	return (i * 2654435761u) & (pages - 1);
}

static void *vcpu_main(void *arg)
{
	struct vcpu *v = arg;
	struct run *r = v->run;
	const struct slat_mm_ops *ops = slat_hosted_ops_rcu();
	uint64_t region = REGION_BASE + (r->curve == OWN ? v->id * GIB : 0);
	uint64_t n = faults_per_thread;
	uint64_t my_cleans = 0;

	slat_hosted_rcu_register_thread();
	pthread_barrier_wait(&r->bar);
	uint64_t c0 = thread_cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t ipa = region + page_of(v, i) * G4K;
		int ret;
		/* A vCPU tops up before it takes the read side. */
		if (v->cache.nr < 2 &&
		    slat_hosted_cache_topup(&r->h, &v->cache, 2) != SLAT_OK)
			die("arena exhausted");
		if (r->place == CLEAN_BEFORE_MAP) {
			ops->dcache_clean_inval_poc(&r->h, slat_pa(ipa + PA_OFF), G4K);
			my_cleans++;
		}
		for (;;) {
			slat_hosted_rcu_read_lock();
			ret = slat_map(&r->t, slat_ipa(ipa), G4K,
				       slat_pa(ipa + PA_OFF), ATTRS,
				       SLAT_OP(.flags = SLAT_SHARED,
					       .cache = &v->cache));
			slat_hosted_rcu_read_unlock();
			if (ret != SLAT_E_AGAIN)
				break;
			v->retries++;
		}
		if (ret == SLAT_NOTHING_TO_DO)
			v->nothing++;
		else if (ret != SLAT_OK)
			die("slat_map failed");
		v->calls++;
	}
	v->cpu_ns = thread_cpu_ns() - c0;
	pthread_barrier_wait(&r->bar);
	__atomic_fetch_add(&r->cleans_by_caller, my_cleans, __ATOMIC_RELAXED);
	slat_hosted_rcu_unregister_thread();
	return NULL;
}

static struct point run_point(enum curve curve, enum placement place,
			      unsigned threads)
{
	struct run *r = calloc(1, sizeof(*r));
	struct vcpu *v = calloc(threads, sizeof(*v));
	unsigned regions = curve == OWN ? threads : 1;
	/* 513 table pages map 1 GiB of pages; and the caches. */
	uint64_t arena = ((uint64_t)regions * 520 + threads * 4 + 64) * G4K;
	struct point p = { .threads = threads };

	if (!r || !v)
		die("out of memory");
	r->cfg = (struct slat_config){
		.format = SLAT_FMT_ARM_S2, .granule = 4096, .ia_bits = 40,
		.pa_bits = 48,
		.features = place == CLEAN_BEFORE_MAP ? SLAT_FEAT_FWB : 0,
	};
	r->place = place;
	r->curve = curve;
	r->threads = threads;
	if (slat_hosted_init(&r->h, arena, 4096, 0x40000000ull) ||
	    slat_hosted_enable_rcu(&r->h, &r->t) ||
	    slat_table_init(&r->t, &r->cfg, slat_hosted_ops_rcu(), &r->h))
		die("set-up");
	slat_hosted_set_observer(&r->h, observer, NULL);
	pthread_barrier_init(&r->bar, NULL, threads + 1);
	for (unsigned i = 0; i < threads; i++) {
		v[i].run = r;
		v[i].id = i;
		if (slat_hosted_cache_init(&v[i].cache, 4) ||
		    slat_hosted_cache_topup(&r->h, &v[i].cache, 2) ||
		    pthread_create(&v[i].th, NULL, vcpu_main, &v[i]))
			die("set-up");
	}
	pthread_barrier_wait(&r->bar);
	uint64_t t0 = now_ns();
	pthread_barrier_wait(&r->bar);
	uint64_t t1 = now_ns();
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(v[i].th, NULL);
		p.retries += v[i].retries;
		p.nothing += v[i].nothing;
		p.calls += v[i].calls;
		p.cpu_ns += v[i].cpu_ns;
		slat_hosted_cache_fini(&v[i].cache);
	}
	p.secs = (double)(t1 - t0) / 1e9;
	struct slat_stats st;
	slat_stats_read(&r->t, &st);
	p.installed = st.written[SLAT_WRITE_LEAF];
	p.cleans = place == CLEAN_BEFORE_MAP ? r->cleans_by_caller
					     : st.dcache_calls;

	/* What must be there: every page faulted, installed once. */
	uint64_t want = curve == OWN ? (uint64_t)threads * faults_per_thread
				     : faults_per_thread;
	if (p.installed != want)
		die("installed leaves != pages faulted");
	for (unsigned i = 0; i < regions; i++) {
		struct slat_leaf l;
		uint64_t ipa = REGION_BASE + i * GIB + G4K * page_of(&v[0], 1);
		if (slat_lookup(&r->t, slat_ipa(ipa), &l) != SLAT_OK ||
		    slat_pa_v(l.pa) != ipa + PA_OFF)
			die("a faulted page is not mapped");
	}
	pthread_barrier_destroy(&r->bar);
	slat_hosted_rcu_barrier();
	slat_table_destroy(&r->t);
	slat_hosted_fini(&r->h);
	free(v);
	free(r);
	return p;
}

static int cmp_rate(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	double rx = (double)x->calls / x->secs, ry = (double)y->calls / y->secs;
	return rx < ry ? -1 : rx > ry;
}

/* The median of @reps runs, by faults per second. */
static struct point measure(enum curve curve, enum placement place,
			    unsigned threads)
{
	struct point p[16];
	for (unsigned i = 0; i < reps; i++)
		p[i] = run_point(curve, place, threads);
	qsort(p, reps, sizeof(p[0]), cmp_rate);
	return p[reps / 2];
}

/* The options on @f, then exit with @status (0: --help, 2: a usage error). */
static void usage_to(FILE *f, int status)
{
	fprintf(f,
		"usage: slat-bench-scaling [--max-threads N] [--faults N] "
		"[--reps N] [--clean-ns N] [--json]\n"
		"  --max-threads N  1, 2, 4, ... up to N threads (default 64)\n"
		"  --faults N       faults per thread, a power of two (default "
		"65536, spread over\n"
		"                   the 1 GiB region; 262144: all of it)\n"
		"  --reps N         runs per point, the median is shown (default "
		"3, at most 15)\n"
		"  --clean-ns N     busy-wait N ns per 4 KiB cleaned (default 0: "
		"cleans are only counted)\n"
		"  --json           one JSON document\n"
		"  -h, --help       this text\n"
		"  --version        print slat-bench-scaling's version and exit\n");
	exit(status);
}

static void usage(void)
{
	usage_to(stderr, 2);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--json")) {
			json = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			usage_to(stdout, 0);
		if (!strcmp(a, "--version")) {
			printf("slat-bench-scaling (slat) %s\n", slat_version());
			return 0;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--max-threads"))
			max_threads = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--faults"))
			faults_per_thread = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--reps"))
			reps = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--clean-ns"))
			clean_ns = strtoull(v, NULL, 0);
		else
			usage();
		i++;
	}
	if (!max_threads || max_threads > 1024 || !faults_per_thread ||
	    faults_per_thread > GIB / G4K ||
	    (faults_per_thread & (faults_per_thread - 1)) || !reps ||
	    reps > 15)
		usage();

	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double load = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1;
		fclose(f);
	}
	if (json)
		printf("{\"bench\": \"slat-bench-scaling\", \"format\": "
		       "\"arm-s2\", \"granule\": 4096, \"ia_bits\": 40, "
		       "\"libslat_build_type\": \"%s\", \"online_cpus\": %ld, "
		       "\"load_average\": %.2f, \"faults_per_thread\": %" PRIu64
		       ", \"reps\": %u, \"clean_ns\": %" PRIu64
		       ", \"curves\": [",
		       SLAT_BUILD_TYPE, cpus, load, faults_per_thread, reps,
		       clean_ns);
	else
		printf("slat-bench-scaling: Arm stage 2, 4K pages, 40-bit IPA, "
		       "libslat %s; %" PRIu64 " faults per thread, median of %u "
		       "runs\n"
		       "This machine has %ld online CPU%s (load average %.2f): "
		       "beyond %ld thread%s the curves show\ncontention "
		       "(cache-line traffic, lost races, the scheduler), not "
		       "parallel speed-up.\nCleans are counted, and cost %" PRIu64
		       " ns per 4 KiB.\n",
		       SLAT_BUILD_TYPE, faults_per_thread, reps, cpus,
		       cpus == 1 ? "" : "s", load, cpus, cpus == 1 ? "" : "s",
		       clean_ns);

	static const char *const curve_name[] = {
		"own region (each thread faults its own 1 GiB)",
		"same region (every thread faults all of one 1 GiB)",
	};
	for (int c = OWN; c <= SAME; c++) {
		if (json)
			printf("%s{\"curve\": \"%s\", \"points\": [",
			       c ? ", " : "", c == OWN ? "own" : "same");
		else
			printf("\n%s\n%7s | %-40s | %-30s\n%7s | %10s %7s %8s %10s | "
			       "%10s %7s %10s\n", curve_name[c], "",
			       "clean in map (libslat, seed 000)",
			       "clean before map (old)", "threads", "faults/s",
			       "CPU ns", "retries", "cleans/new", "faults/s",
			       "CPU ns", "cleans/new");
		for (unsigned n = 1; n <= max_threads; n *= 2) {
			struct point a = measure((enum curve)c, CLEAN_IN_MAP, n);
			struct point b = measure((enum curve)c, CLEAN_BEFORE_MAP, n);
			double ra = (double)a.cleans / (double)a.installed;
			double rb = (double)b.cleans / (double)b.installed;
			if (json)
				printf("%s{\"threads\": %u, \"clean_in_map\": "
				       "{\"faults_per_s\": %.0f, \"cpu_ns_per_fault\": "
				       "%.1f, \"retries\": %"
				       PRIu64 ", \"installed\": %" PRIu64
				       ", \"nothing_to_do\": %" PRIu64
				       ", \"cleans\": %" PRIu64
				       ", \"cleans_per_installed\": %.4f}, "
				       "\"clean_before_map\": {\"faults_per_s\": "
				       "%.0f, \"cpu_ns_per_fault\": %.1f, \"retries\": %"
				       PRIu64 ", \"installed\": %" PRIu64 ", \"cleans\": %"
				       PRIu64 ", \"cleans_per_installed\": %.4f}}",
				       n == 1 ? "" : ", ", n,
				       (double)a.calls / a.secs,
				       (double)a.cpu_ns / a.calls, a.retries,
				       a.installed, a.nothing, a.cleans, ra,
				       (double)b.calls / b.secs,
				       (double)b.cpu_ns / b.calls, b.retries,
				       b.installed, b.cleans, rb);
			else
				printf("%7u | %10.0f %7.0f %8" PRIu64 " %10.2f | "
				       "%10.0f %7.0f %10.2f\n", n,
				       (double)a.calls / a.secs,
				       (double)a.cpu_ns / a.calls, a.retries, ra,
				       (double)b.calls / b.secs,
				       (double)b.cpu_ns / b.calls, rb);
			fflush(stdout);
		}
		if (json)
			printf("]}");
	}
	if (json)
		printf("]}\n");
	return 0;
}
