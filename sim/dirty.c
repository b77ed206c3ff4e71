/* SPDX-License-Identifier: MIT */
/*
 * Dirty logging with KVM's semantics: per-slot bitmaps (GET_DIRTY_LOG,
 * CLEAR_DIRTY_LOG, manual protect, initially-set), per-vCPU dirty rings,
 * eager splitting, recovery of blocks when logging ends, and hardware dirty
 * state instead of write protection.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void sim_mark_dirty(struct slat_vm *vm, struct slat_vcpu *v,
		    struct sim_slot *s, uint64_t gpa)
{
	uint64_t page = (gpa - s->gpa) / vm->granule;

	if (vm->ring_size && v && !vm->cfg.hw_dirty) {
		struct sim_ring *r = &v->ring;
		uint64_t head = r->head;

		if (head - __atomic_load_n(&r->reset, __ATOMIC_ACQUIRE) >= r->size) {
			/* The vCPU waits for a reset well before this. */
			fprintf(stderr, "slat-sim: dirty ring of vCPU %u overflowed\n",
				v->id);
			abort();
		}
		r->e[head & (r->size - 1)] =
			(struct slat_vm_dirty_gfn){ .slot = s->id, .offset = page };
		__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
		v->st.ring_pushes++;
		return;
	}
	/* The bitmap; with a ring and hardware dirty state, the pages the
	 * next reap pushes (the leaf was installed dirty anyway). */
	__atomic_fetch_or(&s->dirty[page / 64], 1ull << (page % 64),
			  __ATOMIC_RELAXED);
	if (v)
		v->st.dirty_marked++;
}

/* ---- re-protection, in 64-page masks ---- */

/*
 * KVM write-protects a block the range covers in part as a whole (its
 * stage-2 walker changes the leaf it meets, and the x86 TDP MMU protects
 * the huge pages around the range first); slat_wrprotect would split it.
 * So the range grows to the blocks at its ends, unless the VM asks for
 * libslat's split.
 */
static void widen_to_blocks(struct slat_vm *vm, uint64_t *ipa, uint64_t *size)
{
	struct slat_leaf leaf;
	uint64_t end = *ipa + *size;

	if (vm->cfg.wrprotect_split)
		return;
	if (slat_lookup(&vm->table, slat_ipa(*ipa), &leaf) == SLAT_OK &&
	    leaf.size > vm->granule)
		*ipa = leaf.base.ipa;
	if (slat_lookup(&vm->table, slat_ipa(end - 1), &leaf) == SLAT_OK &&
	    leaf.size > vm->granule && leaf.base.ipa + leaf.size > end)
		end = leaf.base.ipa + leaf.size;
	*size = end - *ipa;
}

/* Whether the leaf at @ipa is a block. */
static bool on_block(struct slat_vm *vm, uint64_t ipa)
{
	struct slat_leaf leaf;

	return slat_lookup(&vm->table, slat_ipa(ipa), &leaf) == SLAT_OK &&
	       leaf.size > vm->granule;
}

/*
 * PML: the block [@ipa, +@size) write-protected and made clean. KVM logs
 * at 4K, so it protects huge pages (the first write splits them) rather
 * than clear their dirty bit; clean, the block reads as not written.
 */
static void pml_protect_block(struct slat_vm *vm, uint64_t ipa, uint64_t size)
{
	struct slat_table *t = &vm->table;
	size_t words = (size_t)((size / vm->granule + 63) / 64);
	uint64_t *tmp = calloc(words, sizeof(uint64_t));
	struct slat_op op = { .flags = SLAT_SHARED, .flush = SLAT_FLUSH_NONE,
			      .cache = sim_host_cache(vm, slat_pages_needed(t,
					SLAT_NEED(.kind = SLAT_OP_DIRTY_CLEAR,
						  .ipa = slat_ipa(ipa),
						  .size = size,
						  .flags = SLAT_SHARED))) };

	if (!tmp)
		abort();
	slat_dirty_read(t, slat_ipa(ipa), size, tmp, words, true, &op);
	free(tmp);
	slat_wrprotect(t, slat_ipa(ipa), size,
		       SLAT_OP(.flush = SLAT_FLUSH_NONE,
			       .cache = sim_host_cache(vm, slat_pages_needed(t,
					SLAT_NEED(.kind = SLAT_OP_WRPROTECT,
						  .ipa = slat_ipa(ipa),
						  .size = size)))));
}

/* PML: every block of [@ipa, +@size) protected (pml_protect_block). The
 * walk steps by the smallest block: a region holding a page holds no
 * block. */
static void pml_protect_blocks(struct slat_vm *vm, uint64_t ipa, uint64_t size)
{
	uint64_t step = slat_level_size(&vm->table, SLAT_LAST_LEVEL - 1);

	for (uint64_t a = ipa, end = ipa + size; a < end;) {
		struct slat_leaf leaf;

		if (slat_lookup(&vm->table, slat_ipa(a), &leaf) == SLAT_OK &&
		    leaf.size > vm->granule) {
			pml_protect_block(vm, leaf.base.ipa, leaf.size);
			a = leaf.base.ipa + leaf.size;
		} else {
			a = (a & ~(step - 1)) + step;
		}
	}
}

/*
 * Write-protect again (or, with hardware dirty state, make clean) the pages
 * of @mask, bit i = page @first + i of @s, without invalidating: the caller
 * flushes once. Returns the pages the hardware found dirty outside @mask
 * (bit i as in @mask), to be kept in the log.
 */
static uint64_t protect_mask(struct slat_vm *vm, struct sim_slot *s,
			     uint64_t first, uint64_t mask)
{
	struct slat_table *t = &vm->table;
	unsigned lo = (unsigned)__builtin_ctzll(mask);
	unsigned hi = 63u - (unsigned)__builtin_clzll(mask);
	uint64_t ipa = s->gpa + (first + lo) * vm->granule;
	uint64_t size = (uint64_t)(hi - lo + 1) * vm->granule;
	struct slat_page_cache *c;
	uint64_t found = 0;

	__atomic_fetch_add(&vm->wrprotected_pages,
			   (uint64_t)__builtin_popcountll(mask), __ATOMIC_RELAXED);
	if (vm->cfg.pml && on_block(vm, ipa)) {
		widen_to_blocks(vm, &ipa, &size);
		pml_protect_block(vm, ipa, size);
		return 0;
	}
	if (vm->cfg.hw_dirty) {
		c = sim_host_cache(vm, slat_pages_needed(t, SLAT_NEED(
				.kind = SLAT_OP_DIRTY_CLEAR, .ipa = slat_ipa(ipa),
				.size = size, .flags = SLAT_SHARED)));
		struct slat_op op = { .flags = SLAT_SHARED,
				      .flush = SLAT_FLUSH_NONE,
				      .cache = c };
		if (slat_dirty_read(t, slat_ipa(ipa), size, &found, 1, true,
				    &op) < 0)
			found = 0;
		return (found << lo) & ~mask;
	}
	widen_to_blocks(vm, &ipa, &size);
	c = sim_host_cache(vm, slat_pages_needed(t, SLAT_NEED(
				.kind = SLAT_OP_WRPROTECT, .ipa = slat_ipa(ipa),
				.size = size)));
	slat_wrprotect(t, slat_ipa(ipa), size,
		       SLAT_OP(.flush = SLAT_FLUSH_NONE, .cache = c));
	return 0;
}

/* protect_mask() on log word @w (pages 64 w ..), keeping in the log the
 * pages the hardware found dirty beside the mask. */
static void protect_word(struct slat_vm *vm, struct sim_slot *s, uint64_t w,
			 uint64_t mask)
{
	uint64_t keep = protect_mask(vm, s, w * 64, mask);

	if (keep)
		__atomic_fetch_or(&s->dirty[w], keep, __ATOMIC_RELAXED);
}

/* Merge the hardware dirty state of the slot into its bitmap. */
static void harvest_hw(struct slat_vm *vm, struct sim_slot *s, bool clear)
{
	struct slat_table *t = &vm->table;
	uint64_t words = (s->npages + 63) / 64;
	uint64_t *tmp = calloc(words, sizeof(uint64_t));
	struct slat_page_cache *c;

	if (!tmp)
		abort();
	c = sim_host_cache(vm, slat_pages_needed(t, SLAT_NEED(
				.kind = SLAT_OP_DIRTY_CLEAR,
				.ipa = slat_ipa(s->gpa), .size = s->size,
				.flags = SLAT_SHARED)));
	struct slat_op op = { .flags = SLAT_SHARED,
			      .flush = SLAT_FLUSH_NONE,
			      .cache = c };
	if (slat_dirty_read(t, slat_ipa(s->gpa), s->size, tmp, words, clear,
			    &op) > 0)
		for (uint64_t i = 0; i < words; i++)
			if (tmp[i])
				__atomic_fetch_or(&s->dirty[i], tmp[i],
						  __ATOMIC_RELAXED);
	free(tmp);
}

/* Where the dirty bits are the log: hardware dirty state without PML
 * (with PML, the CPU's log fills the bitmap: the bits are not read). */
static bool log_in_dirty_bits(const struct slat_vm *vm)
{
	return vm->cfg.hw_dirty && !vm->cfg.pml;
}

void sim_dirty_save(struct slat_vm *vm, struct sim_slot *s)
{
	if (log_in_dirty_bits(vm))
		harvest_hw(vm, s, false);
}

/* ---- eager splitting ---- */

static void split_range(struct slat_vm *vm, uint64_t ipa, uint64_t size,
			bool yield_lock)
{
	struct slat_table *t = &vm->table;
	uint64_t chunk = vm->eager_chunk, end = ipa + size;

	/* Chunk by chunk, each with its own cache top-up, as
	 * KVM_CAP_ARM_EAGER_SPLIT_CHUNK_SIZE prescribes. */
	for (uint64_t a = ipa; a < end;) {
		uint64_t next = (a & ~(chunk - 1)) + chunk;
		uint64_t n = (next < end ? next : end) - a;
		struct slat_page_cache *c =
			sim_host_cache(vm, slat_pages_needed(t, SLAT_NEED(
					.kind = SLAT_OP_SPLIT, .ipa = slat_ipa(a),
					.size = n)));

		if (!c ||
		    slat_split(t, slat_ipa(a), n, 0,
			       SLAT_OP(.flags = vm->cfg.eager_split_no_skip
							? SLAT_SPLIT_NO_SKIP
							: 0,
				       .cache = c)) < 0)
			return;
		a += n;
		if (yield_lock && a < end) {
			pthread_rwlock_unlock(&vm->mmu_lock);
			pthread_rwlock_wrlock(&vm->mmu_lock);
		}
	}
}

/* ---- enabling and disabling ---- */

static void set_all(struct sim_slot *s)
{
	uint64_t words = (s->npages + 63) / 64;

	for (uint64_t i = 0; i < words; i++)
		s->dirty[i] = ~0ull;
	if (s->npages % 64)
		s->dirty[words - 1] = (1ull << (s->npages % 64)) - 1;
}

int sim_logging_enable(struct slat_vm *vm, struct sim_slot *s)
{
	struct slat_table *t = &vm->table;
	bool init_set = (vm->manual_protect & SLAT_VM_MANUAL_PROTECT_ENABLE) &&
			(vm->manual_protect & SLAT_VM_INITIALLY_SET);

	pthread_rwlock_wrlock(&vm->mmu_lock);
	memset(s->dirty, 0, (s->npages + 63) / 64 * sizeof(uint64_t));
	s->logging = true;
	s->flags |= SLAT_VM_MEM_LOG_DIRTY_PAGES;
	if (init_set) {
		/* Everything counts as dirty; CLEAR_DIRTY_LOG protects (and
		 * splits) as userspace clears. */
		set_all(s);
	} else {
		if (vm->cfg.hw_dirty) {
			harvest_hw(vm, s, true);
			memset(s->dirty, 0, (s->npages + 63) / 64 * sizeof(uint64_t));
		} else {
			slat_wrprotect(
				t, slat_ipa(s->gpa), s->size,
				SLAT_OP(.flush = SLAT_FLUSH_NONE,
					.cache = sim_host_cache(
						vm,
						slat_pages_needed(t, SLAT_NEED(
							.kind = SLAT_OP_WRPROTECT,
							.ipa = slat_ipa(s->gpa),
							.size = s->size)))));
		}
		if (vm->eager_chunk)
			split_range(vm, s->gpa, s->size, true);
		/* What eager splitting left whole. */
		if (vm->cfg.pml)
			pml_protect_blocks(vm, s->gpa, s->size);
		sim_flush_range(vm, s->gpa, s->size);
	}
	pthread_rwlock_unlock(&vm->mmu_lock);
	return 0;
}

int sim_recover_level(void *arg, slat_ipa_t ipa)
{
	struct sim_slot *s = ((void **)arg)[1];

	return sim_max_level(((void **)arg)[0], s, ipa.ipa);
}

int sim_logging_disable(struct slat_vm *vm, struct sim_slot *s)
{
	static const enum slat_recover_strategy strat[] = {
		[SLAT_VM_RECOVER_ZAP_LEAF] = SLAT_RECOVER_ZAP_LEAF,
		[SLAT_VM_RECOVER_ZAP_TABLE] = SLAT_RECOVER_ZAP_TABLE,
		[SLAT_VM_RECOVER_PROMOTE] = SLAT_RECOVER_PROMOTE,
	};
	void *arg[2] = { vm, s };
	int ret = 0;

	pthread_rwlock_wrlock(&vm->mmu_lock);
	s->logging = false;
	s->flags &= ~SLAT_VM_MEM_LOG_DIRTY_PAGES;
	if (vm->cfg.recovery != SLAT_VM_RECOVER_NONE &&
	    vm->cfg.recovery <= SLAT_VM_RECOVER_PROMOTE) {
		ret = slat_recover(&vm->table, slat_ipa(s->gpa), s->size,
				   SLAT_RECOVERY(.strategy = strat
							 [vm->cfg.recovery],
						 .max_level = sim_recover_level,
						 .arg = arg),
				   SLAT_OP(.flush = sim_policy(
						   vm->cfg.recovery_flush)));
		if (ret < 0)
			ret = sim_err(vm, -EFAULT, "slot %u: recovery failed: %s",
				      s->id, slat_strerror(ret));
	}
	memset(s->dirty, 0, (s->npages + 63) / 64 * sizeof(uint64_t));
	pthread_rwlock_unlock(&vm->mmu_lock);
	return ret;
}

/* ---- GET_DIRTY_LOG / CLEAR_DIRTY_LOG ---- */

static struct sim_slot *log_slot(struct slat_vm *vm, uint32_t slot, int *err)
{
	struct sim_slot *s = sim_slot_by_id(vm->slots, slot);

	*err = 0;
	if (!s)
		*err = sim_err(vm, -ENOENT, "slot %u does not exist", slot);
	else if (vm->ring_size)
		*err = sim_err(vm, -ENXIO, "dirty ring in use: no bitmap");
	else if (!s->logging)
		*err = sim_err(vm, -EINVAL, "slot %u: dirty logging is off",
			       slot);
	return *err ? NULL : s;
}

int slat_vm_get_dirty_log(struct slat_vm *vm, uint32_t slot, uint64_t *bitmap)
{
	bool manual = vm->manual_protect & SLAT_VM_MANUAL_PROTECT_ENABLE;
	struct sim_slot *s;
	bool changed = false;
	uint64_t words;
	int ret;

	pthread_mutex_lock(&vm->slots_lock);
	s = log_slot(vm, slot, &ret);
	if (!s)
		goto out;
	words = (s->npages + 63) / 64;
	pthread_rwlock_wrlock(&vm->mmu_lock);
	if (log_in_dirty_bits(vm))
		harvest_hw(vm, s, !manual);
	for (uint64_t i = 0; i < words; i++) {
		if (manual) {
			bitmap[i] = __atomic_load_n(&s->dirty[i], __ATOMIC_RELAXED);
			continue;
		}
		bitmap[i] = __atomic_exchange_n(&s->dirty[i], 0, __ATOMIC_ACQ_REL);
		if (!bitmap[i])
			continue;
		changed = true;
		if (!log_in_dirty_bits(vm)) {
			/* PML: the logged pages made clean, as KVM's
			 * kvm_arch_mmu_enable_log_dirty_pt_masked() does. */
			protect_word(vm, s, i, bitmap[i]);
		} else {
			__atomic_fetch_add(&vm->wrprotected_pages,
					   (uint64_t)__builtin_popcountll(bitmap[i]),
					   __ATOMIC_RELAXED);
		}
	}
	if (changed || (log_in_dirty_bits(vm) && !manual))
		sim_flush_range(vm, s->gpa, s->size);
	pthread_rwlock_unlock(&vm->mmu_lock);
out:
	pthread_mutex_unlock(&vm->slots_lock);
	return ret;
}

int slat_vm_clear_dirty_log(struct slat_vm *vm, uint32_t slot,
			    uint64_t first_page, uint64_t num_pages,
			    const uint64_t *bitmap)
{
	bool eager = vm->eager_chunk &&
		     (vm->manual_protect & SLAT_VM_INITIALLY_SET);
	struct sim_slot *s;
	bool changed = false;
	int ret;

	pthread_mutex_lock(&vm->slots_lock);
	s = log_slot(vm, slot, &ret);
	if (!s)
		goto out;
	if (!(vm->manual_protect & SLAT_VM_MANUAL_PROTECT_ENABLE)) {
		ret = sim_err(vm, -EINVAL, "CLEAR_DIRTY_LOG needs manual protect");
		goto out;
	}
	if (first_page % 64) {
		ret = sim_err(vm, -EINVAL,
			      "first page %llu is not a multiple of 64",
			      (unsigned long long)first_page);
		goto out;
	}
	if (first_page > s->npages || num_pages > s->npages - first_page) {
		ret = sim_err(vm, -EINVAL,
			      "pages [%llu, +%llu) beyond the slot's %llu",
			      (unsigned long long)first_page,
			      (unsigned long long)num_pages,
			      (unsigned long long)s->npages);
		goto out;
	}
	if (num_pages % 64 && first_page + num_pages != s->npages) {
		ret = sim_err(vm, -EINVAL,
			      "%llu pages: not a multiple of 64 and not up to "
			      "the end of the slot",
			      (unsigned long long)num_pages);
		goto out;
	}
	pthread_rwlock_wrlock(&vm->mmu_lock);
	for (uint64_t i = 0; i < (num_pages + 63) / 64; i++) {
		uint64_t w = first_page / 64 + i, m = bitmap[i], cleared;

		if (num_pages - i * 64 < 64)
			m &= (1ull << (num_pages - i * 64)) - 1;
		if (!m)
			continue;
		cleared = __atomic_fetch_and(&s->dirty[w], ~m, __ATOMIC_ACQ_REL) & m;
		if (!cleared)
			continue;
		changed = true;
		if (eager) {
			unsigned lo = (unsigned)__builtin_ctzll(cleared);
			unsigned hi = 63u - (unsigned)__builtin_clzll(cleared);

			split_range(vm, s->gpa + (w * 64 + lo) * vm->granule,
				    (uint64_t)(hi - lo + 1) * vm->granule, false);
		}
		protect_word(vm, s, w, cleared);
	}
	if (changed)
		sim_flush_range(vm, s->gpa + first_page * vm->granule,
				num_pages * vm->granule);
	pthread_rwlock_unlock(&vm->mmu_lock);
out:
	pthread_mutex_unlock(&vm->slots_lock);
	return ret;
}

/* ---- the dirty ring ---- */

/*
 * With hardware dirty state no fault tells which vCPU wrote a page: the
 * host reaps instead. Every logging slot's pages whose dirty state is set
 * (read, not cleared), plus those marked by faults or kept by a reset, and
 * not already in a ring, are pushed to @v's ring while it has room; the
 * rest wait for the next reap. KVM_RESET_DIRTY_RINGS makes the pages clean
 * again, so a write after it is seen by the next reap.
 */
static void ring_reap(struct slat_vm *vm, struct slat_vcpu *v)
{
	struct sim_ring *r = &v->ring;
	struct sim_slots *ss;

	pthread_mutex_lock(&vm->slots_lock);
	pthread_rwlock_wrlock(&vm->mmu_lock);
	ss = vm->slots;
	for (uint32_t i = 0; ss && i < ss->nr; i++) {
		struct sim_slot *s = ss->s[i];
		uint64_t words = (s->npages + 63) / 64;

		if (s->device || !s->logging)
			continue;
		if (log_in_dirty_bits(vm))
			harvest_hw(vm, s, false);
		for (uint64_t w = 0; w < words; w++) {
			uint64_t m = __atomic_exchange_n(&s->dirty[w], 0,
							 __ATOMIC_ACQ_REL) &
				     ~s->ring_pending[w];

			while (m) {
				unsigned b = (unsigned)__builtin_ctzll(m);
				uint64_t head = r->head;

				if (head - r->reset >= r->size) {
					/* No room: the next reap. */
					__atomic_fetch_or(&s->dirty[w], m,
							  __ATOMIC_RELAXED);
					break;
				}
				r->e[head & (r->size - 1)] = (struct slat_vm_dirty_gfn){
					.slot = s->id, .offset = w * 64 + b,
				};
				__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
				s->ring_pending[w] |= 1ull << b;
				v->st.ring_pushes++;
				m &= m - 1;
			}
		}
	}
	pthread_rwlock_unlock(&vm->mmu_lock);
	pthread_mutex_unlock(&vm->slots_lock);
}

int slat_vcpu_dirty_ring_harvest(struct slat_vcpu *v,
				 struct slat_vm_dirty_gfn *out, uint32_t max)
{
	struct sim_ring *r = &v->ring;
	uint64_t head;
	uint32_t n = 0;

	if (!r->size)
		return sim_err(v->vm, -ENXIO, "no dirty ring");
	/* Hardware dirty state: reap when everything pushed is harvested. */
	if (v->vm->cfg.hw_dirty && r->harvested == r->head)
		ring_reap(v->vm, v);
	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	while (r->harvested < head && n < max)
		out[n++] = r->e[r->harvested++ & (r->size - 1)];
	return (int)n;
}

/* Re-protect (or make clean) a 64-page mask of reset ring entries. With
 * hardware dirty state, pages the clean found dirty outside the mask are
 * kept for the next reap, and the mask's pages may be pushed again. */
static void ring_reset_mask(struct slat_vm *vm, struct sim_slot *s,
			    uint64_t base, uint64_t mask)
{
	protect_word(vm, s, base / 64, mask);
	if (vm->cfg.hw_dirty)
		s->ring_pending[base / 64] &= ~mask;
}

int64_t slat_vm_reset_dirty_rings(struct slat_vm *vm)
{
	int64_t total = 0;

	if (!vm->ring_size)
		return sim_err(vm, -ENXIO, "no dirty ring");
	pthread_mutex_lock(&vm->slots_lock);
	pthread_rwlock_wrlock(&vm->mmu_lock);
	for (uint32_t i = 0; i < vm->nr_vcpus; i++) {
		struct slat_vcpu *v = vm->vcpus[i];
		struct sim_slot *cur = NULL;
		uint64_t base = 0, mask = 0;

		if (!v)
			continue;
		for (uint64_t k = v->ring.reset; k < v->ring.harvested; k++) {
			struct slat_vm_dirty_gfn *e =
				&v->ring.e[k & (v->ring.size - 1)];
			struct sim_slot *s = sim_slot_by_id(vm->slots, e->slot);

			total++;
			if (!s || e->offset >= s->npages)
				continue;
			if (s != cur || e->offset < base || e->offset >= base + 64) {
				if (cur && mask)
					ring_reset_mask(vm, cur, base, mask);
				cur = s;
				base = e->offset & ~63ull;
				mask = 0;
			}
			mask |= 1ull << (e->offset - base);
		}
		if (cur && mask)
			ring_reset_mask(vm, cur, base, mask);
	}
	if (total)
		sim_tlbi(vm, 0, 0);
	pthread_rwlock_unlock(&vm->mmu_lock);
	pthread_mutex_lock(&vm->ring_lock);
	for (uint32_t i = 0; i < vm->nr_vcpus; i++)
		if (vm->vcpus[i])
			__atomic_store_n(&vm->vcpus[i]->ring.reset,
					 vm->vcpus[i]->ring.harvested,
					 __ATOMIC_RELEASE);
	pthread_cond_broadcast(&vm->ring_cond);
	pthread_mutex_unlock(&vm->ring_lock);
	pthread_mutex_unlock(&vm->slots_lock);
	return total;
}
