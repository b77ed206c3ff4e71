/* SPDX-License-Identifier: MIT */
/*
 * slat-bench: time libslat's bulk operations against the floor (plain 8-byte
 * stores of the same number of entries, measured in the same process) and
 * against the KVM arm64 peer figures (docs/bench.md).
 *
 * Hosted platform: table pages come from an arena, TLB and cache hooks only
 * count. The page cache is topped up with slat_pages_needed() pages before
 * the clock starts, so no timed region allocates.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#ifdef __clang__
#define COMPILER "clang " __clang_version__
#else
#define COMPILER "gcc " __VERSION__
#endif

#ifndef SLAT_BUILD_TYPE
#define SLAT_BUILD_TYPE "unknown"
#endif

#define GIB (1ull << 30)

enum scenario_id {
	SC_MAP, SC_UNMAP, SC_MAP_BLOCKS, SC_FAULT, SC_UNMAP_LEAVES, SC_COUNT
};

struct scenario {
	const char *id;        /* "a" .. "d" */
	const char *key;       /* JSON key */
	const char *title;
	double kvm_ns;         /* KVM arm64 peer, ns per leaf (4K only); 0: none */
	double kvm_ratio;      /* the peer's time over its own floor */
	bool target;           /* the <= 3x floor target applies */
	bool floor_zero;       /* the floor stores zeros (unmap) */
};

static const struct scenario scenarios[SC_COUNT] = {
	[SC_MAP] = { "a", "map_pages_one_call",
		     "map 1 GiB as %s pages in one call (SLAT_MAP_PAGES)",
		     13.5, 48, true, false },
	[SC_UNMAP] = { "b", "unmap_pages",
		       "unmap that 1 GiB of %s pages (SLAT_FLUSH_RANGE)",
		       6.95, 25, false, true },
	[SC_MAP_BLOCKS] = { "c", "map_blocks_one_call",
			    "map 64 GiB with %s blocks in one call",
			    0, 0, false, false },
	[SC_FAULT] = { "d", "map_pages_per_page",
		       "map 1 GiB as %s pages, one call per page (fault path)",
		       39.4, 139, false, false },
	[SC_UNMAP_LEAVES] = { "e", "unmap_pages_leaf_by_leaf",
			      "unmap 1 GiB of %s pages but the first of each "
			      "table (one call per table, SLAT_FLUSH_RANGE)",
			      0, 0, false, true },
};

#define TARGET_RATIO 3.0

struct result {
	uint64_t leaves;
	double median_ns, min_ns;     /* per leaf */
	double floor_ns;              /* per entry, median */
	struct slat_stats stats;      /* of the last timed run */
};

struct env {
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	uint64_t granule;
	uint64_t block;               /* largest block for scenario c */
	uint64_t root_pages;
};

static int reps = 7;
static bool json;

/* ---- helpers ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "slat-bench: %s: %s (%d)\n", what, slat_strerror(rc),
		rc);
	exit(1);
}

static const char *size_name(uint64_t b, char buf[16])
{
	if (b >= GIB)
		snprintf(buf, 16, "%" PRIu64 "G", b >> 30);
	else if (b >= (1u << 20))
		snprintf(buf, 16, "%" PRIu64 "M", b >> 20);
	else
		snprintf(buf, 16, "%" PRIu64 "K", b >> 10);
	return buf;
}

static void topup(struct env *e, enum slat_op op, uint64_t ipa, uint64_t size)
{
	uint64_t need = slat_pages_needed(&e->t, op, slat_ipa(ipa), size);
	int rc;

	if (need > e->cache.capacity) {
		fprintf(stderr, "slat-bench: needs %" PRIu64 " pages, the "
			"cache holds %" PRIu32 "\n", need, e->cache.capacity);
		exit(1);
	}
	rc = slat_hosted_cache_topup(&e->h, &e->cache, (uint32_t)need);
	if (rc < 0)
		die("page cache top-up", rc);
}

static void env_init(struct env *e, uint32_t granule)
{
	/* Room for 1 GiB of last-level tables, several times over. */
	uint64_t arena = 256ull << 20;
	int rc;

	memset(e, 0, sizeof(*e));
	e->cfg = (struct slat_config){
		.format = SLAT_FMT_ARM_S2, .granule = granule, .ia_bits = 40,
		.pa_bits = 48, .features = 0,
	};
	e->granule = granule;
	e->block = granule == 4096 ? GIB : granule == 16384 ? 32ull << 20 :
							     512ull << 20;
	rc = slat_hosted_init(&e->h, arena, granule, 0xf000000000ull);
	if (rc < 0)
		die("slat_hosted_init", rc);
	struct slat_geometry geo;

	rc = slat_config_geometry(&e->cfg, &geo);
	if (rc < 0)
		die("slat_config_geometry", rc);
	e->root_pages = geo.root_pages;
	rc = slat_table_init(&e->t, &e->cfg, slat_hosted_ops(), &e->h);
	if (rc < 0)
		die("slat_table_init", rc);
	e->h.table = &e->t;
	rc = slat_hosted_cache_init(&e->cache, e->h.nr_pages);
	if (rc < 0)
		die("slat_hosted_cache_init", rc);
}

static void env_fini(struct env *e)
{
	slat_hosted_cache_drain(&e->h, &e->cache);
	slat_hosted_cache_fini(&e->cache);
	slat_table_destroy(&e->t);
	if (slat_hosted_table_pages(&e->h) || e->h.double_frees) {
		fprintf(stderr, "slat-bench: %" PRIu64 " table pages leaked, "
			"%" PRIu64 " double frees\n",
			slat_hosted_table_pages(&e->h), e->h.double_frees);
		exit(1);
	}
	slat_hosted_fini(&e->h);
}

/* The mapping every scenario makes: IPA 1G.., PA 0x80_0000_0000 + IPA. */
#define MAP_IPA   GIB
#define MAP_PA    (0x8000000000ull)
#define MAP_ATTRS (SLAT_RW | SLAT_MT_NORMAL)

static void check_mapped(struct env *e, uint64_t ipa, uint64_t size,
			 uint64_t leaf_size)
{
	uint64_t probes[3] = { ipa, ipa + size / 2 + leaf_size,
			       ipa + size - leaf_size };

	for (int i = 0; i < 3; i++) {
		struct slat_leaf leaf;
		int rc = slat_lookup(&e->t, slat_ipa(probes[i]), &leaf);

		if (rc < 0)
			die("lookup after map", rc);
		if (slat_pa_v(leaf.pa) != MAP_PA + probes[i] ||
		    leaf.size != leaf_size) {
			fprintf(stderr, "slat-bench: IPA 0x%" PRIx64 " maps to "
				"0x%" PRIx64 " with a %" PRIu64 "-byte leaf\n",
				probes[i], slat_pa_v(leaf.pa), leaf.size);
			exit(1);
		}
	}
}

static void unmap_all(struct env *e, uint64_t ipa, uint64_t size)
{
	int rc;

	topup(e, SLAT_OP_UNMAP, ipa, size);
	rc = slat_unmap(&e->t, slat_ipa(ipa), size, SLAT_FLUSH_VMID,
			&e->cache, NULL);
	if (rc < 0)
		die("unmap", rc);
}

static void map_one_call(struct env *e, uint64_t ipa, uint64_t size,
			 uint32_t flags)
{
	int rc;

	topup(e, SLAT_OP_MAP, ipa, size);
	rc = slat_map(&e->t, slat_ipa(ipa), size, slat_pa(MAP_PA + ipa),
		      MAP_ATTRS, flags, &e->cache, NULL);
	if (rc != SLAT_OK)
		die("map", rc);
}

/* ---- the floor ---- */

/*
 * Plain 8-byte stores of @n entries into a buffer of n * 8 bytes: entry-like
 * values (or zeros), repeated until the sample is long enough to time. The
 * empty asm with a memory clobber makes every pass's stores observable.
 */
static double floor_ns_per_entry(uint64_t n, bool zero)
{
	uint64_t *buf, samples[64];
	uint64_t passes = n >= (1u << 18) ? 1 : (1u << 18) / n;
	int runs = reps < 64 ? reps : 64;

	if (posix_memalign((void **)&buf, 4096, n * sizeof(*buf)))
		die("floor buffer", SLAT_E_NOMEM);
	memset(buf, 0xff, n * sizeof(*buf));
	for (int r = -1; r < runs; r++) {
		uint64_t t0 = now_ns();

		for (uint64_t p = 0; p < passes; p++) {
			if (zero) {
				for (uint64_t i = 0; i < n; i++)
					buf[i] = 0;
			} else {
				uint64_t pte = MAP_PA | 0x7ff;

				for (uint64_t i = 0; i < n; i++) {
					buf[i] = pte;
					pte += 4096;
				}
			}
			__asm__ volatile("" : : "r"(buf) : "memory");
		}
		if (r >= 0)
			samples[r] = now_ns() - t0;
	}
	free(buf);
	return (double)median(samples, runs) / (double)(passes * n);
}

/* ---- scenarios ---- */

static void run(enum scenario_id id, uint32_t granule, struct result *res)
{
	struct env e;
	uint64_t *t = calloc((size_t)reps, sizeof(*t));
	uint64_t g = granule, size = GIB, ipa = MAP_IPA, leaves;
	uint64_t blocks_size = 64 * GIB, blocks_ipa = 64 * GIB;

	if (!t)
		die("samples", SLAT_E_NOMEM);
	env_init(&e, granule);
	leaves = id == SC_MAP_BLOCKS ? blocks_size / e.block : size / g;
	if (id == SC_UNMAP_LEAVES) /* all but one per table */
		leaves -= size / (g * (g / 8));

	for (int r = -1; r < reps; r++) {
		uint64_t t0, t1;
		int rc = SLAT_OK;

		switch (id) {
		case SC_MAP:
			topup(&e, SLAT_OP_MAP, ipa, size);
			slat_stats_reset(&e.t);
			t0 = now_ns();
			rc = slat_map(&e.t, slat_ipa(ipa), size,
				      slat_pa(MAP_PA + ipa), MAP_ATTRS,
				      SLAT_MAP_PAGES, &e.cache, NULL);
			t1 = now_ns();
			if (rc != SLAT_OK)
				die("map", rc);
			res->stats = e.t.stats;
			check_mapped(&e, ipa, size, g);
			unmap_all(&e, ipa, size);
			break;
		case SC_UNMAP:
			map_one_call(&e, ipa, size, SLAT_MAP_PAGES);
			topup(&e, SLAT_OP_UNMAP, ipa, size);
			slat_stats_reset(&e.t);
			t0 = now_ns();
			rc = slat_unmap(&e.t, slat_ipa(ipa), size,
					SLAT_FLUSH_RANGE, &e.cache, NULL);
			t1 = now_ns();
			if (rc != SLAT_OK)
				die("unmap", rc);
			res->stats = e.t.stats;
			if (slat_hosted_table_pages(&e.h) != e.root_pages) {
				fprintf(stderr, "slat-bench: unmap left %" PRIu64
					" table pages\n",
					slat_hosted_table_pages(&e.h) -
						e.root_pages);
				exit(1);
			}
			break;
		case SC_MAP_BLOCKS:
			topup(&e, SLAT_OP_MAP, blocks_ipa, blocks_size);
			slat_stats_reset(&e.t);
			t0 = now_ns();
			rc = slat_map(&e.t, slat_ipa(blocks_ipa), blocks_size,
				      slat_pa(MAP_PA + blocks_ipa), MAP_ATTRS,
				      0, &e.cache, NULL);
			t1 = now_ns();
			if (rc != SLAT_OK)
				die("map blocks", rc);
			res->stats = e.t.stats;
			check_mapped(&e, blocks_ipa, blocks_size, e.block);
			unmap_all(&e, blocks_ipa, blocks_size);
			break;
		case SC_UNMAP_LEAVES: {
			/* Each call leaves one page, so no table can go as a
			 * whole: every other leaf is cleared one by one. */
			uint64_t span = g * (g / 8), need = 0;

			map_one_call(&e, ipa, size, SLAT_MAP_PAGES);
			for (uint64_t a = ipa; a < ipa + size; a += span)
				need += slat_pages_needed(&e.t, SLAT_OP_UNMAP,
							  slat_ipa(a + g),
							  span - g);
			if (need && slat_hosted_cache_topup(&e.h, &e.cache,
							    (uint32_t)need))
				die("page cache top-up", SLAT_E_NOMEM);
			slat_stats_reset(&e.t);
			t0 = now_ns();
			for (uint64_t a = ipa; a < ipa + size; a += span) {
				rc = slat_unmap(&e.t, slat_ipa(a + g), span - g,
						SLAT_FLUSH_RANGE, &e.cache,
						NULL);
				if (rc != SLAT_OK)
					break;
			}
			t1 = now_ns();
			if (rc != SLAT_OK)
				die("unmap", rc);
			res->stats = e.t.stats;
			unmap_all(&e, ipa, size);
			break;
		}
		case SC_FAULT:
		default:
			topup(&e, SLAT_OP_MAP, ipa, size);
			slat_stats_reset(&e.t);
			t0 = now_ns();
			for (uint64_t a = ipa; a < ipa + size; a += g) {
				rc = slat_map(&e.t, slat_ipa(a), g,
					      slat_pa(MAP_PA + a), MAP_ATTRS, 0,
					      &e.cache, NULL);
				if (rc != SLAT_OK)
					break;
			}
			t1 = now_ns();
			if (rc != SLAT_OK)
				die("map one page", rc);
			res->stats = e.t.stats;
			check_mapped(&e, ipa, size, g);
			unmap_all(&e, ipa, size);
			break;
		}
		if (r >= 0)
			t[r] = t1 - t0;
	}
	res->leaves = leaves;
	res->median_ns = (double)median(t, reps) / (double)leaves;
	res->min_ns = (double)t[0] / (double)leaves; /* sorted by median() */
	res->floor_ns = floor_ns_per_entry(leaves, scenarios[id].floor_zero);
	env_fini(&e);
	free(t);
}

/* ---- output ---- */

static void print_counts_text(const struct slat_stats *s)
{
	printf("   counts: entries visited %" PRIu64 "; written: leaf %" PRIu64
	       ", table %" PRIu64 ", clear %" PRIu64 ", break %" PRIu64
	       ", attr %" PRIu64 "\n",
	       s->visited, s->written[SLAT_WRITE_LEAF],
	       s->written[SLAT_WRITE_TABLE], s->written[SLAT_WRITE_CLEAR],
	       s->written[SLAT_WRITE_BREAK], s->written[SLAT_WRITE_ATTR]);
	printf("           tlbi: ipa %" PRIu64 ", ipa-local %" PRIu64
	       ", range %" PRIu64 ", vmid %" PRIu64 "; cmo: d-cache %" PRIu64
	       " call%s (%" PRIu64 " bytes), i-cache %" PRIu64
	       " call%s; table pages: +%" PRIu64 " -%" PRIu64 "\n",
	       s->tlbi[SLAT_TLBI_IPA], s->tlbi[SLAT_TLBI_IPA_LOCAL],
	       s->tlbi[SLAT_TLBI_RANGE], s->tlbi[SLAT_TLBI_VMID],
	       s->dcache_calls, s->dcache_calls == 1 ? "" : "s",
	       s->dcache_bytes, s->icache_calls,
	       s->icache_calls == 1 ? "" : "s", s->pages_alloc,
	       s->pages_freed);
}

static void print_text(enum scenario_id id, uint32_t granule,
		       const struct result *r)
{
	const struct scenario *sc = &scenarios[id];
	char title[128], gs[16], bs[16];
	double ratio = r->median_ns / r->floor_ns;
	uint64_t block = granule == 4096 ? GIB : granule == 16384 ?
				32ull << 20 : 512ull << 20;

	snprintf(title, sizeof(title), sc->title,
		 id == SC_MAP_BLOCKS ? size_name(block, bs) :
				       size_name(granule, gs));
	printf("\n%s. %s\n", sc->id, title);
	double run_us = r->median_ns * (double)r->leaves / 1e3;

	printf("   %" PRIu64 " leaves: median %.2f ns/leaf, min %.2f ns/leaf "
	       "(median %.1f %s per run)\n",
	       r->leaves, r->median_ns, r->min_ns,
	       run_us >= 1000 ? run_us / 1000 : run_us,
	       run_us >= 1000 ? "ms" : "us");
	printf("   floor: %.3f ns/entry (%" PRIu64 " plain 8-byte stores%s) "
	       "-> %.1fx floor", r->floor_ns, r->leaves,
	       sc->floor_zero ? " of zero" : "", ratio);
	if (sc->target)
		printf("  [target <= %.0fx: %s]", TARGET_RATIO,
		       ratio <= TARGET_RATIO ? "met" : "MISSED");
	putchar('\n');
	if (sc->kvm_ns > 0 && granule == 4096)
		printf("   KVM arm64 peer: %.2f ns/leaf (%.0fx its floor); "
		       "libslat is %.1fx %s\n",
		       sc->kvm_ns, sc->kvm_ratio,
		       r->median_ns <= sc->kvm_ns ? sc->kvm_ns / r->median_ns :
						    r->median_ns / sc->kvm_ns,
		       r->median_ns <= sc->kvm_ns ? "faster" : "SLOWER");
	print_counts_text(&r->stats);
}

static void print_json(uint32_t granule, const struct result *res,
		       const bool *ran)
{
	bool first = true;

	printf("{\n  \"bench\": \"slat-bench\",\n  \"format\": \"arm-s2\",\n"
	       "  \"granule\": %" PRIu32 ",\n  \"ia_bits\": 40,\n"
	       "  \"fwb\": false,\n  \"reps\": %d,\n"
	       "  \"libslat_build_type\": \"%s\",\n"
	       "  \"compiler\": \"%s\",\n  \"target_ratio\": %.1f,\n"
	       "  \"scenarios\": [",
	       granule, reps, SLAT_BUILD_TYPE, COMPILER, TARGET_RATIO);
	for (int id = 0; id < SC_COUNT; id++) {
		const struct scenario *sc = &scenarios[id];
		const struct result *r = &res[id];
		const struct slat_stats *s = &r->stats;
		double ratio = r->median_ns / r->floor_ns;

		if (!ran[id])
			continue;
		printf("%s\n    {\"id\": \"%s\", \"name\": \"%s\", "
		       "\"leaves\": %" PRIu64 ",\n"
		       "     \"median_ns_per_leaf\": %.4f, "
		       "\"min_ns_per_leaf\": %.4f, "
		       "\"floor_ns_per_entry\": %.4f, "
		       "\"ratio_to_floor\": %.3f,\n",
		       first ? "" : ",", sc->id, sc->key, r->leaves,
		       r->median_ns, r->min_ns, r->floor_ns, ratio);
		first = false;
		if (sc->target)
			printf("     \"target_met\": %s, ",
			       ratio <= TARGET_RATIO ? "true" : "false");
		else
			printf("     \"target_met\": null, ");
		if (sc->kvm_ns > 0 && granule == 4096)
			printf("\"kvm_ns_per_leaf\": %.2f, "
			       "\"kvm_ratio_to_floor\": %.0f,\n",
			       sc->kvm_ns, sc->kvm_ratio);
		else
			printf("\"kvm_ns_per_leaf\": null, "
			       "\"kvm_ratio_to_floor\": null,\n");
		printf("     \"counts\": {\"visited\": %" PRIu64
		       ", \"written_leaf\": %" PRIu64
		       ", \"written_table\": %" PRIu64
		       ", \"written_clear\": %" PRIu64
		       ", \"written_break\": %" PRIu64
		       ", \"written_attr\": %" PRIu64
		       ", \"tlbi_ipa\": %" PRIu64 ", \"tlbi_ipa_local\": %" PRIu64
		       ", \"tlbi_range\": %" PRIu64 ", \"tlbi_vmid\": %" PRIu64
		       ", \"dcache_calls\": %" PRIu64
		       ", \"dcache_bytes\": %" PRIu64
		       ", \"icache_calls\": %" PRIu64
		       ", \"icache_bytes\": %" PRIu64
		       ", \"pages_alloc\": %" PRIu64
		       ", \"pages_freed\": %" PRIu64 "}}",
		       s->visited, s->written[SLAT_WRITE_LEAF],
		       s->written[SLAT_WRITE_TABLE],
		       s->written[SLAT_WRITE_CLEAR],
		       s->written[SLAT_WRITE_BREAK],
		       s->written[SLAT_WRITE_ATTR], s->tlbi[SLAT_TLBI_IPA],
		       s->tlbi[SLAT_TLBI_IPA_LOCAL], s->tlbi[SLAT_TLBI_RANGE],
		       s->tlbi[SLAT_TLBI_VMID], s->dcache_calls,
		       s->dcache_bytes, s->icache_calls, s->icache_bytes,
		       s->pages_alloc, s->pages_freed);
	}
	printf("\n  ]\n}\n");
}

static const char usage[] =
"usage: slat-bench [--json] [--reps N] [--granule 4k|16k|64k] [--only a,b,...]\n"
"\n"
"Times libslat's core on the hosted platform (Armv8 stage 2, 40-bit IPA, no\n"
"FWB; TLB and cache hooks only count; the page cache is filled before the\n"
"clock starts):\n"
"  a. map 1 GiB as pages in one call (SLAT_MAP_PAGES)\n"
"  b. unmap that 1 GiB (SLAT_FLUSH_RANGE)\n"
"  c. map 64 GiB with the largest blocks (1G at 4K) in one call\n"
"  d. map 1 GiB one call per page (the fault path)\n"
"  e. unmap 1 GiB of pages but the first of each table, one call per table:\n"
"     no table goes as a whole, every leaf is cleared (compare with b)\n"
"Each: one warm-up run, then N timed runs (default 7): median and min ns per\n"
"leaf entry, the floor (the same number of plain 8-byte stores, measured\n"
"here), the ratio to it, the KVM arm64 peer figure (4K only) and the exact\n"
"counts from struct slat_stats. The target for a is <= 3x the floor.\n"
"\n"
"  --json          machine-readable output only\n"
"  --reps N        timed runs per scenario (1..64, default 7)\n"
"  --granule G     4k (default), 16k or 64k\n"
"  --only LIST     run only these scenarios, e.g. --only a,b\n"
"  -h, --help      this text\n"
"See docs/bench.md.\n";

int main(int argc, char **argv)
{
	uint32_t granule = 4096;
	struct result res[SC_COUNT];
	bool ran[SC_COUNT] = { 0 }, want[SC_COUNT];

	for (int id = 0; id < SC_COUNT; id++)
		want[id] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > 64) {
				fprintf(stderr, "slat-bench: --reps takes 1..64\n");
				return 2;
			}
		} else if (!strcmp(a, "--granule") && i + 1 < argc) {
			a = argv[++i];
			if (!strcasecmp(a, "4k"))
				granule = 4096;
			else if (!strcasecmp(a, "16k"))
				granule = 16384;
			else if (!strcasecmp(a, "64k"))
				granule = 65536;
			else {
				fprintf(stderr, "slat-bench: --granule takes 4k, "
					"16k or 64k\n");
				return 2;
			}
		} else if (!strcmp(a, "--only") && i + 1 < argc) {
			a = argv[++i];
			memset(want, 0, sizeof(want));
			for (; *a; a++) {
				if (*a >= 'a' && *a < 'a' + SC_COUNT)
					want[*a - 'a'] = true;
				else if (*a != ',') {
					fprintf(stderr, "slat-bench: --only "
						"takes letters a to e\n");
					return 2;
				}
			}
		} else {
			fprintf(stderr, "slat-bench: unknown argument %s (see "
				"--help)\n", a);
			return 2;
		}
	}

	if (!json) {
		printf("slat-bench: libslat core, arm-s2 %uK granule, 40-bit "
		       "IPA, no FWB, hosted platform (hooks only count)\n",
		       granule / 1024);
		printf("libslat build: %s; bench: %s -O2; %d timed runs after "
		       "1 warm-up\n", SLAT_BUILD_TYPE, COMPILER, reps);
		fflush(stdout);
	}
	for (int id = 0; id < SC_COUNT; id++) {
		if (!want[id])
			continue;
		run((enum scenario_id)id, granule, &res[id]);
		ran[id] = true;
		if (!json) {
			print_text((enum scenario_id)id, granule, &res[id]);
			fflush(stdout);
		}
	}
	if (json)
		print_json(granule, res, ran);
	return 0;
}
