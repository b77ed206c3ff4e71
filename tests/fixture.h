/* SPDX-License-Identifier: MIT */
/*
 * A table on the hosted platform for the cmocka tests: arena, table, page
 * cache, checker, and an observer that records every event (and, for TLB
 * invalidations, whether the IPA was mapped at that moment).
 */
#ifndef SLAT_TEST_FIXTURE_H
#define SLAT_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "checker.h"

#define FX_MAX_EVENTS 4096

struct fx_event {
	struct slat_hosted_event ev;
	/* TLBI: slat_lookup found the IPA mapped right then (for a VMID
	 * flush, which has no address: the IPA in fx.watch, if set) */
	bool mapped;
};

struct fx {
	struct slat_config cfg;
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	struct checker ck;
	struct fx_event ev[FX_MAX_EVENTS];
	size_t nev;
	bool watching;  /* record fx_event.mapped of VMID flushes for... */
	uint64_t watch; /* ...this IPA */
};

static inline void fx_observe(void *arg, const struct slat_hosted_event *ev)
{
	struct fx *f = arg;
	if (f->nev == FX_MAX_EVENTS)
		return;
	struct fx_event *e = &f->ev[f->nev++];
	e->ev = *ev;
	e->mapped = false;
	if (ev->kind == SLAT_EV_TLBI_IPA || ev->kind == SLAT_EV_TLBI_RANGE ||
	    (ev->kind == SLAT_EV_TLBI_VMID && f->watching)) {
		struct slat_leaf l;
		uint64_t ipa = ev->kind == SLAT_EV_TLBI_VMID ? f->watch
							     : ev->addr;
		e->mapped = slat_lookup(&f->t, slat_ipa(ipa), &l) == SLAT_OK;
	}
}

/* A table of any format; returns 0 or the slat_table_init status. */
static inline int fx_init_cfg(struct fx *f, const struct slat_config *cfg,
			      uint64_t pa_base)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	uint32_t granule = cfg->granule ? cfg->granule : 4096;
	if (slat_hosted_init(&f->h, 4096ull * granule, granule, pa_base)) {
		fprintf(stderr, "slat_hosted_init failed\n");
		abort();
	}
	slat_hosted_set_observer(&f->h, fx_observe, f);
	int ret = slat_table_init(&f->t, &f->cfg, slat_hosted_ops_serial(), &f->h);
	if (ret) {
		slat_hosted_fini(&f->h);
		return ret;
	}
	f->h.table = &f->t;
	if (slat_hosted_cache_init(&f->cache, 4096) ||
	    checker_init(&f->ck, &f->t, &f->h)) {
		fprintf(stderr, "fixture: %s\n", f->ck.msg);
		abort();
	}
	f->ck.check_stats = false; /* tests reset the counters */
	return 0;
}

/* An Armv8 stage-2 table. */
static inline int fx_init_pa(struct fx *f, uint32_t granule, uint8_t ia,
			     uint8_t pa, uint32_t features, uint64_t pa_base)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = granule,
		.ia_bits = ia, .pa_bits = pa, .features = features,
	};
	return fx_init_cfg(f, &cfg, pa_base);
}

static inline int fx_init(struct fx *f, uint32_t granule, uint8_t ia,
			  uint8_t pa, uint32_t features)
{
	return fx_init_pa(f, granule, ia, pa, features, 0x80000000ull);
}

static inline void fx_fini(struct fx *f)
{
	slat_table_destroy(&f->t);
	slat_hosted_cache_fini(&f->cache);
	checker_fini(&f->ck);
	slat_hosted_fini(&f->h);
}

/* Top the cache up to @n pages. */
static inline void fx_topup(struct fx *f, uint32_t n)
{
	if (slat_hosted_cache_topup(&f->h, &f->cache, n)) {
		fprintf(stderr, "fixture: arena exhausted\n");
		abort();
	}
}

static inline void fx_clear_events(struct fx *f)
{
	f->nev = 0;
	slat_stats_reset(&f->t);
}

static inline size_t fx_count(const struct fx *f,
			      enum slat_hosted_event_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < f->nev; i++)
		n += f->ev[i].ev.kind == k;
	return n;
}

/* Map with a topped-up cache. */
static inline int fx_map(struct fx *f, uint64_t ipa, uint64_t size,
			 uint64_t pa, uint32_t attrs, uint32_t flags)
{
	int64_t need = slat_pages_needed(
		&f->t, SLAT_NEED(.kind = SLAT_OP_MAP, .ipa = slat_ipa(ipa),
				 .size = size, .pa = slat_pa(pa),
				 .attrs = attrs, .flags = flags));
	/* An input error: the map reports it. */
	fx_topup(f, need < 0 ? 0 : need > 512 ? 512 : (uint32_t)need);
	return slat_map(&f->t, slat_ipa(ipa), size, slat_pa(pa), attrs,
			SLAT_OP(.flags = flags, .cache = &f->cache));
}

static inline int fx_unmap(struct fx *f, uint64_t ipa, uint64_t size,
			   enum slat_tlbi_policy policy)
{
	int64_t need = slat_pages_needed(
		&f->t, SLAT_NEED(.kind = SLAT_OP_UNMAP, .ipa = slat_ipa(ipa),
				 .size = size));
	fx_topup(f, need < 0 ? 0 : (uint32_t)need);
	return slat_unmap(&f->t, slat_ipa(ipa), size,
			  SLAT_OP(.flush = policy, .cache = &f->cache));
}

/*
 * Whether @cfg is refused everywhere: by libslat's geometry, by the
 * checker's format @ck, and by slat_table_init() without a page allocated.
 */
static inline bool fx_config_refused(const struct slat_config *cfg,
				     const struct check_format *ck)
{
	struct slat_geometry g;
	struct check_geo e;
	struct slat_hosted h;
	struct slat_table t;
	if (slat_config_geometry(cfg, &g) != SLAT_E_CONFIG ||
	    ck->geometry(cfg, &e) != SLAT_E_CONFIG ||
	    slat_hosted_init(&h, 64 * 4096, 4096, 0x80000000) != SLAT_OK)
		return false;
	bool refused = slat_table_init(&t, cfg, slat_hosted_ops(), &h) ==
			       SLAT_E_CONFIG &&
		       h.pages_in_use == 0;
	slat_hosted_fini(&h);
	return refused;
}

/* The leaf translating @ipa (asserting it exists is the caller's job). */
static inline int fx_lookup(struct fx *f, uint64_t ipa, struct slat_leaf *l)
{
	return slat_lookup(&f->t, slat_ipa(ipa), l);
}

/* The host address of the table page at @pa, by arena arithmetic. */
static inline uint64_t *fx_table(struct fx *f, uint64_t pa)
{
	return checker_phys_to_virt(&f->ck, pa);
}

static inline uint64_t fx_pa_of(struct fx *f, const void *va)
{
	return f->h.pa_base + (uint64_t)((const uint8_t *)va - f->h.arena);
}

#endif
