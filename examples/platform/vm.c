/* SPDX-License-Identifier: MIT */
/*
 * The examples' hypervisor (vm.h): the fault handler, dirty logging by
 * write protection, teardown. The regions between the snippet markers are
 * quoted in docs/platform.md, byte for byte (tests/check-snippets.py).
 */
#include "vm.h"

#include <string.h>

#define EX_ARENA_BYTES (64ull << 20)
#define EX_TABLES_PA 0x100000000ull /* where the table pages sit */

static void ex_observe(void *arg, const struct slat_hosted_event *e)
{
	struct ex_events *ev = arg;
	uint64_t *n = NULL;

	switch (e->kind) {
	case SLAT_EV_TLBI_IPA:
		n = e->scope == SLAT_TLBI_LOCAL ? &ev->tlbi_ipa_local
						: &ev->tlbi_ipa;
		break;
	case SLAT_EV_TLBI_RANGE: n = &ev->tlbi_range; break;
	case SLAT_EV_TLBI_VMID: n = &ev->tlbi_vmid; break;
	case SLAT_EV_DCACHE_CLEAN_INVAL:
		__atomic_fetch_add(&ev->dcache_bytes, e->size, __ATOMIC_RELAXED);
		n = &ev->dcache_calls;
		break;
	case SLAT_EV_ICACHE_INVAL: n = &ev->icache_calls; break;
	case SLAT_EV_PAGE_FREE: n = &ev->page_frees; break;
	}
	if (n)
		__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
}

void ex_vm_init(struct ex_vm *vm, const struct slat_config *cfg,
		const struct ex_slot *slot)
{
	uint64_t pages = slot->size / cfg->granule;

	memset(vm, 0, sizeof(*vm));
	vm->cfg = *cfg;
	vm->slot = *slot;
	vm->slot.dirty = calloc(pages / 64 + 1, sizeof(uint64_t));
	CHECK(vm->slot.dirty);
	CHECK(slat_config_geometry(cfg, &vm->geo) == SLAT_OK);
	CHECK(slat_hosted_init(&vm->h, EX_ARENA_BYTES, cfg->granule,
			       EX_TABLES_PA) == SLAT_OK);
	slat_hosted_set_observer(&vm->h, ex_observe, &vm->ev);
	CHECK(slat_hosted_enable_rcu(&vm->h, &vm->t) == SLAT_OK);
	CHECK(slat_table_init(&vm->t, cfg, slat_hosted_ops_rcu(), &vm->h) ==
	      SLAT_OK);
	CHECK(pthread_rwlock_init(&vm->mmu_lock, NULL) == 0);
}

/* [snippet:teardown] */
void ex_vm_fini(struct ex_vm *vm)
{
	/*
	 * No vCPU runs with this VMID any more and every vCPU's cache is
	 * drained. Subtrees unlinked by shared walkers may still wait for
	 * their grace period: their callbacks call slat_free_unlinked() on
	 * this table, so they must all have run before it goes.
	 */
	slat_hosted_rcu_barrier();
	slat_table_destroy(&vm->t); /* every table page, the root, one
				       VMID invalidation */
	CHECK(vm->h.pages_in_use == 0 && vm->h.double_frees == 0);
	slat_hosted_fini(&vm->h);
	pthread_rwlock_destroy(&vm->mmu_lock);
	free(vm->slot.dirty);
}
/* [end] */

/* [snippet:vcpu-cache] */
void ex_vcpu_init(struct ex_vcpu *v, struct ex_vm *vm)
{
	memset(v, 0, sizeof(*v));
	v->vm = vm;
	/* An empty cache over the vCPU's own slots, with an empty memo. */
	slat_page_cache_init(&v->cache, v->pages, EX_CACHE_PAGES);
	/* Shared calls made with this cache count here, with plain adds. */
	v->cache.stats = &v->stats;
}

void ex_vcpu_fini(struct ex_vcpu *v)
{
	/* Pages left in the cache are the platform's: give them back. */
	slat_hosted_cache_drain(&v->vm->h, &v->cache);
}
/* [end] */

/* [snippet:max-level] */
int ex_max_level(void *arg, slat_ipa_t ipa)
{
	struct ex_vm *vm = arg;
	const struct ex_slot *s = &vm->slot;
	uint64_t a = slat_ipa_v(ipa), hpa = s->hpa + (a - s->gpa);

	for (int level = vm->geo.start_level; level < SLAT_LAST_LEVEL; level++) {
		uint64_t size = slat_level_size(&vm->t, level);
		uint64_t base = a & ~(size - 1);

		/* A level that takes leaves, a block no larger than the
		 * backing's page, IPA and host address at the same offset in
		 * it, and the whole block inside the slot. */
		if (level < 0 || !(vm->geo.leaf_levels & (1u << level)) ||
		    size > s->backing || ((a ^ hpa) & (size - 1)) ||
		    base < s->gpa || base + size > s->gpa + s->size)
			continue;
		return level;
	}
	return SLAT_LAST_LEVEL;
}
/* [end] */

/* [snippet:topup] */
static void ex_vcpu_topup(struct ex_vcpu *v, const struct slat_need *req)
{
	int64_t need = slat_pages_needed(&v->vm->t, req);

	/* Bad input: the operation itself will say so. */
	if (need < 0)
		return;
	if (need > v->cache.capacity)
		need = v->cache.capacity;
	/* Outside the MMU lock: the allocator may sleep or take a lock of
	 * its own. Other vCPUs faulting meanwhile only lower the count. A
	 * failure is not fatal: the operation then stops with SLAT_E_NOMEM,
	 * the table valid, and the guest faults again. */
	if (v->cache.nr < need)
		slat_hosted_cache_topup(&v->vm->h, &v->cache, (uint32_t)need);
}
/* [end] */

static void ex_mark_dirty(struct ex_vm *vm, uint64_t ipa)
{
	struct ex_slot *s = &vm->slot;
	uint64_t page = (ipa - s->gpa) / vm->cfg.granule;

	__atomic_fetch_or(&s->dirty[page / 64], 1ull << (page % 64),
			  __ATOMIC_RELAXED);
}

/* [snippet:fault-map] */
/* The map a translation fault makes: counted, then made, from one
 * description. */
static struct slat_need ex_fault_map_req(struct ex_vcpu *v, uint64_t base,
					 uint64_t size, bool write)
{
	struct ex_vm *vm = v->vm;
	const struct ex_slot *s = &vm->slot;
	/* Logging maps a page writable only on a write, so that the first
	 * write to every page faults. No execute until the guest executes
	 * (a permission fault then adds it, with the I-cache maintenance). */
	uint32_t attrs = SLAT_R | (write || !s->logging ? SLAT_W : 0) |
			 SLAT_MT_NORMAL;
	/* Never a leaf larger than the backing's page. */
	uint64_t largest = s->logging ? vm->cfg.granule : s->backing;
	struct slat_need req = {
		.kind = SLAT_OP_MAP, .ipa = slat_ipa(base), .size = size,
		.pa = slat_pa(s->hpa + (base - s->gpa)), .attrs = attrs,
		.flags = SLAT_SHARED | SLAT_MAP_CAP(__builtin_ctzll(largest)),
	};
	return req;
}

static int ex_fault_map(struct ex_vcpu *v, const struct slat_need *req)
{
	return slat_map(&v->vm->t, req->ipa, req->size, req->pa, req->attrs,
			SLAT_OP(.flags = req->flags, .cache = &v->cache));
}
/* [end] */

/* [snippet:fault] */
int ex_handle_fault(struct ex_vcpu *v, uint64_t ipa, unsigned access,
		    const struct slat_hw_result *res)
{
	struct ex_vm *vm = v->vm;
	const struct ex_slot *s = &vm->slot;
	bool write = access == SLAT_ACCESS_WRITE;
	int ret;

	if (ipa < s->gpa || ipa - s->gpa >= s->size || s->device)
		return EX_EXIT_MMIO; /* to the VMM, which emulates it */
	/* While logging, pages; else the largest block the backing allows. */
	int level = s->logging ? SLAT_LAST_LEVEL : ex_max_level(vm, slat_ipa(ipa));
	uint64_t size = slat_level_size(&vm->t, level);
	uint64_t base = ipa & ~(size - 1);

	if (res->fault == SLAT_FAULT_PERMISSION && !(write && s->logging)) {
		/* Add the permission to the whole leaf: no split, no page. */
		size = slat_level_size(&vm->t, res->level);
		base = ipa & ~(size - 1);
	}
	struct slat_need map = ex_fault_map_req(v, base, size, write);
	struct slat_need relax = {
		.kind = SLAT_OP_RELAX, .ipa = slat_ipa(base), .size = size,
		.attrs = write ? SLAT_W : SLAT_X,
		.flags = SLAT_SHARED | SLAT_NO_HOLES,
	};
	if (res->fault != SLAT_FAULT_ACCESS_FLAG)
		ex_vcpu_topup(v, res->fault == SLAT_FAULT_PERMISSION ? &relax
								     : &map);

	pthread_rwlock_rdlock(&vm->mmu_lock);
	slat_hosted_rcu_read_lock();
	if (res->fault == SLAT_FAULT_TRANSLATION)
		ret = ex_fault_map(v, &map);
	else if (res->fault == SLAT_FAULT_PERMISSION)
		ret = slat_relax(&vm->t, relax.ipa, relax.size, relax.attrs,
				 SLAT_OP(.flags = relax.flags, .cache = &v->cache));
	else
		ret = slat_mkyoung(&vm->t, slat_ipa(ipa), SLAT_SHARED);
	/* Done, or done already by another vCPU (SLAT_NOTHING_TO_DO): a
	 * write while logging marks its page before the guest goes on. */
	if (ret >= 0 && write && s->logging)
		ex_mark_dirty(vm, ipa);
	/* Relaxed by another vCPU first (SLAT_NOTHING_TO_DO): the shared
	 * relax still invalidated this CPU's entry, which on Arm may be the
	 * stale one that faulted. */
	slat_hosted_rcu_read_unlock();
	pthread_rwlock_unlock(&vm->mmu_lock);
	/* SLAT_E_AGAIN (lost a race) and SLAT_E_NOMEM (the cache ran dry):
	 * back to the guest, which faults again; the next fault tops up. */
	return ret;
}
/* [end] */

/* [snippet:access] */
int ex_guest_access(struct ex_vcpu *v, uint64_t ipa, unsigned access)
{
	for (int tries = 0; tries < 1000; tries++) {
		struct slat_hw_result res;
		int ret;

		/* The CPU's walk (here in software: a reader of the table). */
		pthread_rwlock_rdlock(&v->vm->mmu_lock);
		slat_hosted_rcu_read_lock();
		ret = slat_hw_access(&v->vm->t, slat_ipa(ipa), access, &res);
		slat_hosted_rcu_read_unlock();
		pthread_rwlock_unlock(&v->vm->mmu_lock);
		if (ret < 0)
			return ret;
		if (res.fault == SLAT_FAULT_NONE)
			return SLAT_OK;
		v->faults[res.fault]++;
		ret = ex_handle_fault(v, ipa, access, &res);
		if (ret == SLAT_E_AGAIN || ret == SLAT_E_NOMEM)
			v->retries++;
		else if (ret < 0 || ret == EX_EXIT_MMIO)
			return ret;
	}
	return SLAT_E_AGAIN;
}
/* [end] */

/* [snippet:log-start] */
void ex_log_start(struct ex_vm *vm)
{
	struct ex_slot *s = &vm->slot;
	int64_t need = slat_pages_needed(
		&vm->t, SLAT_NEED(.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(s->gpa),
				  .size = s->size));
	struct slat_page_cache cache;

	/* Every page the split can need, before the lock is taken. */
	CHECK(slat_hosted_cache_init(&cache, (uint32_t)need) == SLAT_OK);
	CHECK(slat_hosted_cache_topup(&vm->h, &cache, (uint32_t)need) ==
	      SLAT_OK);

	pthread_rwlock_wrlock(&vm->mmu_lock);
	s->logging = true; /* faults from now on map pages */
	/* Eager splitting: every block becomes pages, translations kept. */
	CHECK(slat_split(&vm->t, slat_ipa(s->gpa), s->size, 0,
			 SLAT_OP(.cache = &cache)) == SLAT_OK);
	/* Read-only, so that the first write to each page faults. */
	CHECK(slat_wrprotect(&vm->t, slat_ipa(s->gpa), s->size,
			     SLAT_OP(.flush = SLAT_FLUSH_RANGE)) == SLAT_OK);
	pthread_rwlock_unlock(&vm->mmu_lock);
	slat_hosted_cache_fini(&cache); /* what the split left goes back */
}
/* [end] */

/* [snippet:harvest] */
uint64_t ex_log_harvest(struct ex_vm *vm, uint64_t *bitmap, size_t words)
{
	struct ex_slot *s = &vm->slot;
	uint64_t granule = vm->cfg.granule, found = 0;

	pthread_rwlock_wrlock(&vm->mmu_lock);
	for (size_t w = 0; w < words; w++) {
		uint64_t bits = __atomic_exchange_n(&s->dirty[w], 0,
						    __ATOMIC_RELAXED);

		bitmap[w] = bits;
		for (; bits; bits &= bits - 1, found++) {
			uint64_t page = w * 64 + (uint64_t)__builtin_ctzll(bits);
			uint64_t ipa = s->gpa + page * granule;

			/* Read-only again: the next write faults and marks
			 * the page for the next harvest. */
			CHECK(slat_wrprotect(&vm->t, slat_ipa(ipa), granule,
					     SLAT_OP(.flush = SLAT_FLUSH_ENTRY)) ==
			      SLAT_OK);
		}
	}
	pthread_rwlock_unlock(&vm->mmu_lock);
	/* Only now copy the pages: a write after the invalidation faults. */
	return found;
}
/* [end] */

/* [snippet:log-stop] */
void ex_log_stop(struct ex_vm *vm)
{
	struct ex_slot *s = &vm->slot;
	int ret;

	pthread_rwlock_wrlock(&vm->mmu_lock);
	s->logging = false;
	/* Writable again, so that the pages of each table agree and add up
	 * to a block. A stale read-only entry would only fault again, and
	 * the recovery's invalidation below covers the whole VMID anyway. */
	ret = slat_relax(&vm->t, slat_ipa(s->gpa), s->size, SLAT_W,
			 SLAT_OP(.flags = SLAT_NO_HOLES,
				 .flush = SLAT_FLUSH_NONE));
	CHECK(ret >= 0 || ret == SLAT_E_NOENT);
	/* Every page mapped: promote each table to its block in place.
	 * Holes (SLAT_E_NOENT: relax changed nothing): zap the tables and
	 * let the guest fault the blocks back in. */
	CHECK(slat_recover(&vm->t, slat_ipa(s->gpa), s->size,
			   SLAT_RECOVERY(.strategy = ret == SLAT_E_NOENT
							  ? SLAT_RECOVER_ZAP_TABLE
							  : SLAT_RECOVER_PROMOTE,
					 .max_level = ex_max_level, .arg = vm),
			   SLAT_OP(.flush = SLAT_FLUSH_VMID)) == SLAT_OK);
	pthread_rwlock_unlock(&vm->mmu_lock);
}
/* [end] */
