/* SPDX-License-Identifier: MIT */
/*
 * What the oracles' host drivers share (oracle.c, QEMU's Armv8 walker;
 * ../oracle-x86/oracle_ept.c, Bochs's EPT walker): the seeded generator
 * that makes a layout again from its seed, growable buffers, the leaves
 * of a raw walk, the table pages of a hosted arena as a blob carries them
 * ({ u64 pa; u8 page[granule]; } each), and the search of PATH for the
 * emulator. Each driver is one translation unit: the helpers are static.
 */
#ifndef SLAT_ORACLE_DRIVER_H
#define SLAT_ORACLE_DRIVER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slat/hosted.h>

#include "checker.h"

/* The current layout's generator: seeded per layout, so that a replay
 * (--only) builds the same layout. */
static uint64_t rng;

static inline uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t below(uint64_t n)
{
	return n ? splitmix(&rng) % n : 0;
}

static inline bool chance(unsigned pct)
{
	return below(100) < pct;
}

static inline uint64_t align_down(uint64_t x, uint64_t a)
{
	return x & ~(a - 1);
}

/* The driver's name, for its messages. */
static const char *oracle_name = "oracle";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", oracle_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static inline void *oracle_realloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

/* Append @n bytes to the buffer *@buf of *@len bytes (*@cap allocated). */
static inline void oracle_put(uint8_t **buf, size_t *len, size_t *cap,
			      const void *p, size_t n)
{
	if (*len + n > *cap) {
		*cap = (*len + n) * 2;
		*buf = oracle_realloc(*buf, *cap);
	}
	memcpy(*buf + *len, p, n);
	*len += n;
}

/* The valid leaves of a raw walk (checker_walk() with oracle_leaf_cb). */
struct oracle_leaves {
	struct check_leaf *v;
	size_t n, cap;
};

static inline int oracle_leaf_cb(void *arg, const struct check_leaf *l)
{
	struct oracle_leaves *lv = arg;
	if (!l->valid)
		return 0;
	if (lv->n == lv->cap) {
		lv->cap = lv->cap ? 2 * lv->cap : 64;
		lv->v = oracle_realloc(lv->v, lv->cap * sizeof(*lv->v));
	}
	lv->v[lv->n++] = *l;
	return 0;
}

/* Every table page of @h, { pa, page }, as the hardware finds it before
 * any probe updates it; *@nr of them. */
static inline uint8_t *oracle_table_pages(struct slat_hosted *h, uint32_t *nr)
{
	uint8_t *pages = NULL;
	size_t psz = 8 + h->granule;
	*nr = 0;
	for (uint32_t i = 0; i < h->nr_pages; i++) {
		void *va = h->arena + (uint64_t)i * h->granule;
		if (!slat_hosted_is_table_page(h, va))
			continue;
		pages = oracle_realloc(pages, (*nr + 1) * psz);
		uint64_t pa = h->pa_base + (uint64_t)i * h->granule;
		memcpy(pages + *nr * psz, &pa, 8);
		memcpy(pages + *nr * psz + 8, va, h->granule);
		(*nr)++;
	}
	return pages;
}

/* A table on the hosted platform, its page cache and its checker. */
struct oracle_table {
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	struct checker ck;
};

/* Open @o for @cfg over an arena of @bytes at @pa_base (the table pages
 * hold the PAs the emulator will find them at), with a page cache of
 * @cache_pages. Returns 0, or slat_table_init()'s SLAT_E_CONFIG when
 * @ok_refused allows it (nothing is left open); anything else dies. */
static inline int oracle_table_open(struct oracle_table *o,
				    const struct slat_config *cfg, uint64_t bytes,
				    uint64_t pa_base, uint32_t cache_pages,
				    bool ok_refused)
{
	if (slat_hosted_init(&o->h, bytes, cfg->granule, pa_base))
		die("slat_hosted_init");
	int ret = slat_table_init(&o->t, cfg, slat_hosted_ops(), &o->h);
	if (ret == SLAT_E_CONFIG && ok_refused) {
		slat_hosted_fini(&o->h);
		return ret;
	}
	if (ret)
		die("slat_table_init: %s", check_status_name(ret));
	o->h.table = &o->t;
	if (slat_hosted_cache_init(&o->cache, cache_pages))
		die("cache");
	if (checker_init(&o->ck, &o->t, &o->h))
		die("checker_init: %s", o->ck.msg);
	return 0;
}

static inline void oracle_table_close(struct oracle_table *o)
{
	slat_table_destroy(&o->t);
	slat_hosted_cache_fini(&o->cache);
	checker_fini(&o->ck);
	slat_hosted_fini(&o->h);
}

static inline double oracle_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait for the emulator @pid started at @t0 (oracle_now()), at most
 * @limit seconds (then it is killed: it is stuck); add the time it took to
 * *@seconds. Returns its wait status. */
static inline int oracle_wait(pid_t pid, double t0, unsigned limit,
			      const char *what, double *seconds)
{
	int st = 0;
	for (unsigned ms = 0;; ms += 10) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (ms > limit * 1000u) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, "%s: %s timed out (%u s)\n", oracle_name,
				what, limit);
			break;
		}
		usleep(10000);
	}
	*seconds += oracle_now() - t0;
	return st;
}

static inline bool oracle_on_path(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[4096];
	while (path && *path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return true;
		path = c ? c + 1 : NULL;
	}
	return false;
}

#endif
