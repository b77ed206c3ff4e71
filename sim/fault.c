/* SPDX-License-Identifier: MIT */
/*
 * The stage-2 fault handler, after KVM's user_mem_abort(): mapping size from
 * the backing, dirty logging, permission relaxing, the access flag, and the
 * placement of the D-cache clean.
 */
#include "internal.h"

/*
 * The largest leaf level the backing allows at @ipa: no larger than the
 * backing page, the same offset in the block for IPA and host address, the
 * whole block inside the slot.
 */
int sim_max_level(struct slat_vm *vm, const struct sim_slot *s, uint64_t ipa)
{
	uint64_t hpa = s->hpa + (ipa - s->gpa);

	for (int i = 0; i < vm->nr_leaf_shifts; i++) {
		uint64_t size = 1ull << vm->leaf_shifts[i];
		uint64_t base = ipa & ~(size - 1);

		if (size > s->page_size || ((ipa ^ hpa) & (size - 1)) ||
		    base < s->gpa || base + size > s->gpa + s->size)
			continue;
		return sim_level_of_shift(vm, vm->leaf_shifts[i]);
	}
	return SLAT_LAST_LEVEL;
}

static void topup(struct slat_vcpu *v)
{
	struct slat_page_cache *c = &v->cache;
	uint32_t before = c->nr;

	if (c->nr >= c->capacity / 2)
		return;
	slat_hosted_cache_topup(&v->vm->hosted, c, c->capacity);
	v->st.cache_topups++;
	v->st.cache_pages += c->nr - before;
}

static int map_fault(struct slat_vcpu *v, struct sim_slot *s, uint64_t ipa,
		     bool write, const struct slat_hw_result *res)
{
	struct slat_vm *vm = v->vm;
	struct slat_table *t = &vm->table;
	bool writable = !(s->flags & SLAT_VM_MEM_READONLY) &&
			!(s->logging && !write);
	int level = s->logging ? SLAT_LAST_LEVEL : sim_max_level(vm, s, ipa);
	uint64_t size = slat_level_size(t, level);
	uint64_t base = ipa & ~(size - 1);
	uint64_t hpa = s->hpa + (base - s->gpa);
	uint32_t attrs = SLAT_R | (writable ? SLAT_W : 0) |
			 (s->device ? SLAT_MT_DEVICE : SLAT_MT_NORMAL);
	int ret;

	if (res->fault == SLAT_FAULT_PERMISSION) {
		/*
		 * The translation is there, only permissions differ. At the
		 * granule we would map, relax it in place. Under a larger
		 * leaf (a block write-protected for dirty logging), relax
		 * just our granule: the block is split around it, as KVM's
		 * map splits it. Under a smaller one (pages left from
		 * logging), relax that page.
		 */
		uint64_t granule = slat_level_size(t, res->level);

		if (!writable)
			return 0;
		if (granule < size) {
			size = granule;
			base = ipa & ~(size - 1);
		}
		ret = slat_relax(t, slat_ipa(base), size, SLAT_R | SLAT_W,
				 SLAT_OP(.flags = SLAT_SHARED,
					 .cache = &v->cache));
		v->st.relaxes++;
	} else {
		uint32_t flags = SLAT_SHARED | SLAT_MAP_NO_REPLACE;
		if (vm->cfg.cmo == SLAT_VM_CMO_BEFORE_MAP && !s->device) {
			sim_clean(vm, v, s->hva ? s->hva + (base - s->gpa) : NULL,
				  size, hpa);
			/* Cleaned already, outside the entry's lock. */
			flags |= SLAT_SKIP_CMO;
		}
		/* Never replace a valid translation: whoever installed it
		 * (another vCPU, the host) is newer than this fault. */
		ret = slat_map(t, slat_ipa(base), size, slat_pa(hpa), attrs,
			       SLAT_OP(.flags = flags, .cache = &v->cache));
		v->st.maps++;
		if (ret == SLAT_OK)
			v->st.mapped[level & 3]++;
	}
	if (ret == SLAT_E_AGAIN || ret == SLAT_E_NOMEM || ret == SLAT_E_EXISTS) {
		v->st.fault_again++;
		return 0;
	}
	if (ret < 0 && ret != SLAT_E_NOENT)
		return sim_err(vm, -EFAULT, "fault at IPA 0x%llx: %s",
			       (unsigned long long)ipa, slat_strerror(ret));
	if (writable && s->logging)
		sim_mark_dirty(vm, v, s, ipa);
	return 0;
}

int sim_handle_fault(struct slat_vcpu *v, uint64_t ipa, bool write,
		     const struct slat_hw_result *res)
{
	struct slat_vm *vm = v->vm;
	uint64_t t0 = slat_vm_now_ns(), ns;
	struct sim_slot *s;
	int ret = 0;

	v->st.faults[res->fault == SLAT_FAULT_PERMISSION ? SLAT_VM_FAULT_PERMISSION
		     : res->fault == SLAT_FAULT_ACCESS_FLAG ? SLAT_VM_FAULT_ACCESS_FLAG
							    : SLAT_VM_FAULT_TRANSLATION]++;
	/* A write permission fault may have to split a block (dirty
	 * logging maps pages), so only read permission faults skip it. */
	if (res->fault != SLAT_FAULT_PERMISSION || write)
		topup(v);

	pthread_rwlock_rdlock(&vm->mmu_lock);
	slat_hosted_rcu_read_lock();
	s = sim_slot_by_gpa(sim_slots_get(vm), ipa);
	if (!s || (write && (s->flags & SLAT_VM_MEM_READONLY))) {
		ret = SLAT_VM_EXIT_MMIO;
	} else if (s->device) {
		/* Device regions are mapped whole when created; a fault there
		 * is an access racing with their removal. */
		ret = SLAT_VM_EXIT_MMIO;
	} else if (res->fault == SLAT_FAULT_ACCESS_FLAG) {
		ret = slat_mkyoung(&vm->table, slat_ipa(ipa), SLAT_SHARED);
		v->st.mkyoungs++;
		ret = ret == SLAT_E_AGAIN || ret >= 0 || ret == SLAT_E_NOENT
			      ? 0
			      : sim_err(vm, -EFAULT, "mkyoung 0x%llx: %s",
					(unsigned long long)ipa,
					slat_strerror(ret));
	} else {
		ret = map_fault(v, s, ipa, write, res);
	}
	slat_hosted_rcu_read_unlock();
	pthread_rwlock_unlock(&vm->mmu_lock);

	/* A nearly full dirty ring stops the vCPU until the host resets it
	 * (KVM_EXIT_DIRTY_RING_FULL, then KVM_RESET_DIRTY_RINGS). */
	if (v->ring.size && !vm->cfg.hw_dirty) {
		pthread_mutex_lock(&vm->ring_lock);
		if (__atomic_load_n(&v->ring.head, __ATOMIC_RELAXED) - v->ring.reset +
			    64 >= v->ring.size)
			v->st.ring_full_waits++;
		while (__atomic_load_n(&v->ring.head, __ATOMIC_RELAXED) -
			       v->ring.reset + 64 >= v->ring.size)
			pthread_cond_wait(&vm->ring_cond, &vm->ring_lock);
		pthread_mutex_unlock(&vm->ring_lock);
	}
	ns = slat_vm_now_ns() - t0;
	v->st.fault_ns += ns;
	if (vm->cfg.on_event)
		vm->cfg.on_event(vm->cfg.event_arg, SLAT_VM_EV_FAULT, (int)v->id,
				 ipa, ns);
	return ret;
}
