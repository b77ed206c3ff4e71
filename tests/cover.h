/* SPDX-License-Identifier: MIT */
/*
 * What the TLB invalidations seen so far cover, in the order the observer
 * saw them: a table page may be freed, and unmapped memory cleaned, only
 * once an invalidation covers every IPA it translated (the guest may still
 * reach it through a TLB or walk-cache entry until then). A broadcast
 * invalidation covers: a VMID flush everything; a range its range; one by
 * IPA the leaf of its level hint around its address (with no hint, the
 * granule at its address). A local invalidation covers nothing another
 * CPU holds.
 */
#ifndef SLAT_TEST_COVER_H
#define SLAT_TEST_COVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <slat/hosted.h>
#include <slat/slat.h>

struct cover {
	bool vmid;
	size_t n, cap;
	struct { uint64_t s, e; } *iv; /* sorted, disjoint, not adjacent */
};

static inline void cover_reset(struct cover *c)
{
	c->vmid = false;
	c->n = 0;
}

static inline void cover_fini(struct cover *c)
{
	free(c->iv);
	c->iv = NULL;
	c->n = c->cap = 0;
}

/* Add [s, e) to the union. */
static inline void cover_add(struct cover *c, uint64_t s, uint64_t e)
{
	if (s >= e)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->iv = realloc(c->iv, c->cap * sizeof(*c->iv));
		if (!c->iv)
			abort();
	}
	size_t i = 0;
	while (i < c->n && c->iv[i].e < s)
		i++;
	/* Merge every interval [s, e) meets or touches into slot i. */
	size_t j = i;
	while (j < c->n && c->iv[j].s <= e) {
		if (c->iv[j].s < s)
			s = c->iv[j].s;
		if (c->iv[j].e > e)
			e = c->iv[j].e;
		j++;
	}
	if (j == i) {
		for (size_t k = c->n; k > i; k--)
			c->iv[k] = c->iv[k - 1];
		c->n++;
	} else {
		for (size_t k = j; k < c->n; k++)
			c->iv[i + 1 + k - j] = c->iv[k];
		c->n -= j - i - 1;
	}
	c->iv[i].s = s;
	c->iv[i].e = e;
}

/* Note @ev if it is an invalidation; @t gives the level sizes. */
static inline void cover_event(struct cover *c, const struct slat_table *t,
			       const struct slat_hosted_event *ev)
{
	uint64_t size;
	switch (ev->kind) {
	case SLAT_EV_TLBI_VMID:
		c->vmid = true;
		break;
	case SLAT_EV_TLBI_RANGE:
		cover_add(c, ev->addr, ev->addr + ev->size);
		break;
	case SLAT_EV_TLBI_IPA:
		if (ev->scope == SLAT_TLBI_LOCAL)
			break;
		size = ev->level == SLAT_LEVEL_ANY
			? slat_level_size(t, SLAT_LAST_LEVEL)
			: slat_level_size(t, ev->level);
		cover_add(c, ev->addr & ~(size - 1),
			  (ev->addr & ~(size - 1)) + size);
		break;
	default:
		break;
	}
}

/* Is all of [s, e) covered? */
static inline bool cover_has(const struct cover *c, uint64_t s, uint64_t e)
{
	if (c->vmid || s >= e)
		return true;
	for (size_t i = 0; i < c->n; i++)
		if (c->iv[i].s <= s && c->iv[i].e >= e)
			return true;
	return false;
}

/* Does any invalidation meet [s, e)? (Enough for the walk caches of a
 * table with nothing left in it.) */
static inline bool cover_meets(const struct cover *c, uint64_t s, uint64_t e)
{
	if (c->vmid)
		return true;
	for (size_t i = 0; i < c->n; i++)
		if (c->iv[i].s < e && c->iv[i].e > s)
			return true;
	return false;
}

#endif
