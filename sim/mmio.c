/* SPDX-License-Identifier: MIT */
/*
 * MMIO regions: device memory mapped into stage 2 page by page (as KVM did
 * for VM_PFNMAP regions) or with the largest blocks (seed 004), and torn
 * down with one invalidation per entry or one for the whole VM.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int slat_vm_mmio_map(struct slat_vm *vm, uint64_t gpa, uint64_t size,
		     enum slat_vm_mmio_map how)
{
	struct slat_table *t = &vm->table;
	uint64_t g = vm->granule;
	struct sim_slot *s;
	int ret = 0;

	if (!size || gpa % g || size % g || (how != SLAT_VM_MMIO_PAGES &&
					     how != SLAT_VM_MMIO_BLOCKS))
		return sim_err(vm, -EINVAL,
			       "MMIO [0x%llx, +0x%llx): base and size must be "
			       "non-zero multiples of the granule",
			       (unsigned long long)gpa, (unsigned long long)size);
	s = calloc(1, sizeof(*s));
	if (!s)
		return sim_err(vm, -ENOMEM, "out of memory");
	s->device = true;
	s->memfd = -1;
	s->gpa = gpa;
	s->size = size;
	s->page_size = 1ull << vm->leaf_shifts[0];
	snprintf(s->backing, sizeof(s->backing), "device");
	pthread_mutex_lock(&vm->slots_lock);
	s->hpa = sim_alloc_hpa(vm, size, gpa);
	s->id = (uint32_t)(s->hpa >> 30);
	pthread_rwlock_wrlock(&vm->mmu_lock);
	ret = sim_slots_insert(vm, s);
	if (ret) {
		pthread_rwlock_unlock(&vm->mmu_lock);
		pthread_mutex_unlock(&vm->slots_lock);
		free(s);
		return ret;
	}
	uint32_t attrs = SLAT_RW | SLAT_MT_DEVICE;
	if (how == SLAT_VM_MMIO_BLOCKS) {
		struct slat_page_cache *c =
			sim_host_cache(vm, slat_pages_needed(t, SLAT_NEED(
				.kind = SLAT_OP_MAP, .ipa = slat_ipa(gpa),
				.size = size, .pa = slat_pa(s->hpa),
				.attrs = attrs)));
		ret = slat_map(t, slat_ipa(gpa), size, slat_pa(s->hpa), attrs,
			       SLAT_OP(.cache = c));
	} else {
		for (uint64_t off = 0; off < size && ret >= 0; off += g) {
			struct slat_page_cache *c =
				sim_host_cache(vm, slat_pages_needed(t, SLAT_NEED(
				.kind = SLAT_OP_MAP, .ipa = slat_ipa(gpa + off),
				.size = g, .pa = slat_pa(s->hpa + off),
				.attrs = attrs, .flags = SLAT_MAP_PAGES)));
			ret = slat_map(t, slat_ipa(gpa + off), g,
				       slat_pa(s->hpa + off), attrs,
				       SLAT_OP(.flags = SLAT_MAP_PAGES,
					       .cache = c));
		}
	}
	pthread_rwlock_unlock(&vm->mmu_lock);
	pthread_mutex_unlock(&vm->slots_lock);
	if (ret < 0)
		return sim_err(vm, -ENOMEM, "MMIO map: %s", slat_strerror(ret));
	return 0;
}

int slat_vm_mmio_unmap(struct slat_vm *vm, uint64_t gpa,
		       enum slat_tlbi_policy policy)
{
	struct slat_table *t = &vm->table;
	struct sim_slot *s;
	int ret;

	if (policy != SLAT_FLUSH_ENTRY && policy != SLAT_FLUSH_RANGE &&
	    policy != SLAT_FLUSH_VMID)
		return sim_err(vm, -EINVAL, "MMIO unmap: bad flush policy");
	pthread_mutex_lock(&vm->slots_lock);
	s = sim_slot_by_gpa(vm->slots, gpa);
	if (!s || !s->device || s->gpa != gpa) {
		pthread_mutex_unlock(&vm->slots_lock);
		return sim_err(vm, -ENOENT, "no MMIO region at 0x%llx",
			       (unsigned long long)gpa);
	}
	pthread_rwlock_wrlock(&vm->mmu_lock);
	ret = slat_unmap(t, slat_ipa(s->gpa), s->size,
			 SLAT_OP(.flush = policy,
				 .cache = sim_host_cache(
					 vm, slat_pages_needed(t, SLAT_NEED(
						     .kind = SLAT_OP_UNMAP,
						     .ipa = slat_ipa(s->gpa),
						     .size = s->size)))));
	sim_slots_remove(vm, s);
	pthread_rwlock_unlock(&vm->mmu_lock);
	pthread_mutex_unlock(&vm->slots_lock);
	slat_hosted_rcu_synchronize();
	sim_slot_free(s);
	return ret < 0 ? sim_err(vm, -EFAULT, "MMIO unmap: %s", slat_strerror(ret))
		       : 0;
}
