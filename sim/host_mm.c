/* SPDX-License-Identifier: MIT */
/*
 * The host's anonymous memory under a slot, as Linux gives it to KVM
 * (slat_vm_config.host_zero_page): untouched until first written. What
 * get_user_pages() returns for a fault decides what KVM may map at stage 2:
 *
 * - A read of untouched memory maps the shared zero page, read-only: the
 *   huge zero page over a whole THP-sized page of a THP backing, else the
 *   4K one. KVM maps what the host maps (a block over the huge one), not
 *   writable.
 * - A write of untouched memory allocates: a huge page over a whole
 *   untouched THP-sized page, else a small one.
 * - A write where the host maps a zero page copies it. The huge one is
 *   split first: its range falls back to small zero pages, of which the
 *   written one is copied (Linux 6.1's do_huge_pmd_wp_page()). Each change
 *   of the host's mapping goes through the MMU notifier, which unmaps the
 *   range at stage 2 while the fault is in flight: the fault is retried.
 *   A split range stays small pages (khugepaged is not modeled), so KVM
 *   maps no block there again.
 *
 * Every page reads zeros until written either way, so a zero page's leaf
 * keeps the slot's own host address: only what is mapped, at which size
 * and with which permissions, changes. The states are bytes updated with
 * compare-and-swap, as vCPU threads fault at once.
 */
#include "internal.h"

#include <stdlib.h>

/* Whether Linux has zero pages under this backing: anonymous memory (and
 * the synthetic sources of its page sizes); hugetlb and shmem allocate on
 * the first touch, read or write. */
static bool has_zero_page(const struct slat_vm *vm, const struct sim_slot *s)
{
	switch (s->kind) {
	case BACK_ANON:
	case BACK_THP:
		return true;
	case BACK_SYNTH:
		return s->page_size < (1ull << 30) && !s->device &&
		       s->page_size >= vm->granule;
	default:
		return false;
	}
}

/*
 * The host's pages follow the slot's host addresses, which are aligned to
 * the backing page at the slot's start: backing page k covers the slot's
 * bytes [k, k + 1) x page_size, whatever the IPA's alignment (which only
 * decides whether stage 2 may map it as a block: sim_max_level()). A last
 * backing page the slot only partly covers has small pages, as Linux uses
 * no huge page across the end of a mapping.
 */
static uint64_t huge_index(const struct sim_slot *s, uint64_t ipa)
{
	return (ipa - s->gpa) / s->page_size;
}

static uint64_t small_index(const struct slat_vm *vm, const struct sim_slot *s,
			    uint64_t ipa)
{
	return (ipa - s->gpa) / vm->granule;
}

int sim_host_mm_init(struct slat_vm *vm, struct sim_slot *s)
{
	uint64_t n = (s->size + s->page_size - 1) / s->page_size;

	if (!vm->cfg.host_zero_page || !has_zero_page(vm, s))
		return 0;
	s->host_huge = calloc(n, 1);
	if (s->page_size > vm->granule)
		s->host_small = calloc(s->npages, 1);
	if (!s->host_huge || (s->page_size > vm->granule && !s->host_small))
		return -1;
	if (s->host_small && s->size % s->page_size)
		s->host_huge[n - 1] = HOST_SPLIT;
	return 0;
}

void sim_host_mm_free(struct sim_slot *s)
{
	free(s->host_huge);
	free(s->host_small);
}

static uint8_t load(const uint8_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static bool cas(uint8_t *p, uint8_t old, uint8_t new)
{
	return __atomic_compare_exchange_n(p, &old, new, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

bool sim_host_small(const struct slat_vm *vm, const struct sim_slot *s,
		    uint64_t ipa)
{
	(void)vm;
	return s->host_small && load(&s->host_huge[huge_index(s, ipa)]) ==
					HOST_SPLIT;
}

/*
 * A small page's fault: the zero page on a read of an untouched page, a
 * page of its own on a write, the zero page copied (its entry invalidated)
 * on a write where the zero page is mapped.
 */
static struct sim_gup gup_small(struct slat_vcpu *v, uint8_t *p, uint64_t base,
				uint64_t size, bool write)
{
	struct sim_gup g = { .writable = false };

	for (;;) {
		uint8_t st = load(p);

		if (st == HOST_OWN) {
			g.writable = true;
			return g;
		}
		if (!write) {
			if (st == HOST_ZERO || cas(p, HOST_NONE, HOST_ZERO))
				return g;
			continue;
		}
		if (!cas(p, st, HOST_OWN))
			continue;
		g.writable = true;
		if (st == HOST_ZERO) {
			v->st.host_cow++;
			g.inval_base = base;
			g.inval_size = size;
		}
		return g;
	}
}

/* The huge zero page at backing page @k split: its small pages become zero
 * pages (before the split is seen), its range invalidated. */
static void split_huge_zero(struct slat_vcpu *v, struct sim_slot *s,
			    uint64_t k, struct sim_gup *g)
{
	uint64_t n = s->page_size / v->vm->granule;

	for (uint64_t i = 0; i < n; i++)
		__atomic_store_n(&s->host_small[k * n + i], HOST_ZERO,
				 __ATOMIC_RELAXED);
	if (!cas(&s->host_huge[k], HOST_ZERO, HOST_SPLIT))
		return; /* another vCPU split it (or wrote it) first */
	v->st.host_thp_splits++;
	g->inval_base = s->gpa + k * s->page_size;
	g->inval_size = s->page_size;
}

struct sim_gup sim_host_gup(struct slat_vcpu *v, struct sim_slot *s,
			    uint64_t ipa, bool write)
{
	uint64_t g = v->vm->granule, page = ipa & ~(g - 1);
	uint64_t k = huge_index(s, ipa);
	uint8_t *hp = &s->host_huge[k];
	struct sim_gup r = { .writable = false };

	if (!s->host_small)
		return gup_small(v, hp, page, g, write);
	for (;;) {
		uint8_t st = load(hp);

		if (st == HOST_SPLIT) {
			struct sim_gup small = gup_small(
				v, &s->host_small[small_index(v->vm, s, ipa)],
				page, g, write);
			/* the split's invalidation covers the copy's */
			if (r.inval_size) {
				small.inval_base = r.inval_base;
				small.inval_size = r.inval_size;
			}
			return small;
		}
		if (st == HOST_OWN) {
			r.writable = true;
			return r;
		}
		if (st == HOST_NONE) {
			if (cas(hp, HOST_NONE, write ? HOST_OWN : HOST_ZERO)) {
				r.writable = write;
				return r;
			}
			continue;
		}
		if (!write)
			return r; /* the huge zero page, mapped already */
		split_huge_zero(v, s, k, &r);
	}
}

/* The host's own write (slat_vm_host_write()) allocates what is untouched;
 * a zero page it would copy is left to the guest's next write, whose copy
 * then invalidates it. */
void sim_host_touch(struct slat_vm *vm, struct sim_slot *s, uint64_t gpa,
		    uint64_t len)
{
	uint64_t g = vm->granule;

	if (!s->host_huge || !len)
		return;
	for (uint64_t a = gpa & ~(g - 1); a < gpa + len; a += g) {
		uint8_t *hp = &s->host_huge[huge_index(s, a)];

		if (s->host_small && load(hp) == HOST_SPLIT)
			cas(&s->host_small[small_index(vm, s, a)], HOST_NONE,
			    HOST_OWN);
		else
			cas(hp, HOST_NONE, HOST_OWN);
	}
}
