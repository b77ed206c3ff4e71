/* SPDX-License-Identifier: MIT */
/*
 * The hosted table the benchmark programs run libslat on (slat-bench,
 * slat-kvm-diff): an arena, a table of the configuration on it with the
 * serial hooks, and a page cache that can hold the whole arena.
 */
#ifndef SLAT_BENCH_HOSTED_ENV_H
#define SLAT_BENCH_HOSTED_ENV_H

#include <slat/hosted.h>
#include <slat/slat.h>

/* The PA the arena's first page stands for. */
#define BENCH_ARENA_PA 0xf000000000ull

/*
 * Set up @h (@arena bytes of @granule pages), @t (@cfg) and @cache.
 * Returns SLAT_OK, or the failing call's status with *@what naming it.
 */
static inline int bench_hosted_env(struct slat_hosted *h, struct slat_table *t,
				   struct slat_page_cache *cache,
				   const struct slat_config *cfg,
				   uint64_t arena, const char **what)
{
	int rc = slat_hosted_init(h, arena, cfg->granule, BENCH_ARENA_PA);

	*what = "slat_hosted_init";
	if (rc < 0)
		return rc;
	*what = "slat_table_init";
	rc = slat_table_init(t, cfg, slat_hosted_ops_serial(), h);
	if (rc < 0)
		return rc;
	/* The serial hooks free an unlinked table at once, through it. */
	h->table = t;
	*what = "slat_hosted_cache_init";
	return slat_hosted_cache_init(cache, h->nr_pages);
}

#endif
