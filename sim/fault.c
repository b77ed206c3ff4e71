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

	/* The host maps small pages there now. */
	if (sim_host_small(vm, s, ipa))
		return SLAT_LAST_LEVEL;

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

/* map_fault(): what must be done with mmu_lock held for write (values
 * apart from SLAT_VM_EXIT_MMIO). */
#define SIM_BREAK_BLOCK 0x100 /* a write-protected block gives way to a page */
#define SIM_BUILD_BLOCK 0x101 /* a table gives way to a block */
#define SIM_HOST_INVAL  0x102 /* the host's copy on write: the MMU notifier
				 unmaps v->notify */

#include <slat/walk.h>

struct table_probe {
	int level;
	bool found;
};

/* Tables above the level are walked through; one at it is the answer. */
static int table_seen(const struct slat_walk_ctx *ctx, enum slat_visit visit)
{
	struct table_probe *p = ctx->arg;

	(void)visit;
	if (ctx->level != p->level)
		return 0;
	p->found = true;
	return 1;
}

/* Whether a table sits at @level where a block of [base, +size) would go. */
static bool table_at(struct slat_table *t, uint64_t base, uint64_t size,
		     int level)
{
	struct table_probe p = { .level = level };
	struct slat_walker w = { .cb = table_seen, .arg = &p,
				 .flags = SLAT_VISIT_TABLE_PRE |
					  SLAT_WALK_STOP_LEVEL | SLAT_WALK_SHARED,
				 .stop_level = level };

	/* A probe, not KVM's work: its walk is not counted. */
	slat_walk(t, slat_ipa(base), size, &w, NULL);
	return p.found;
}

enum slat_vm_block_fault sim_block_fault(const struct slat_vm *vm)
{
	if (vm->cfg.block_fault != SLAT_VM_BLOCK_FAULT_AUTO)
		return vm->cfg.block_fault;
	enum slat_format_id f = vm->cfg.table.format;
	return f == SLAT_FMT_EPT || f == SLAT_FMT_NPT ? SLAT_VM_BLOCK_FAULT_SPLIT
						      : SLAT_VM_BLOCK_FAULT_LAZY;
}

/* The map that follows an unlink, or breaks a block (@flags), mmu_lock
 * held for write: the cleans as the fault path does them, the counts as a
 * fault's map. */
static int map_exclusive(struct slat_vcpu *v, struct sim_slot *s,
			 uint64_t base, int level, uint32_t perms,
			 uint32_t flags)
{
	struct slat_vm *vm = v->vm;
	uint64_t size = slat_level_size(&vm->table, level);
	uint64_t hpa = s->hpa + (base - s->gpa);
	int ret;

	if (vm->cfg.cmo == SLAT_VM_CMO_BEFORE_MAP) {
		sim_clean(vm, v, s->hva ? s->hva + (base - s->gpa) : NULL, size,
			  hpa);
		flags |= SLAT_SKIP_CMO;
	}
	ret = slat_map(&vm->table, slat_ipa(base), size, slat_pa(hpa),
		       perms | SLAT_MT_NORMAL,
		       SLAT_OP(.flags = flags, .cache = &v->cache));
	v->st.maps++;
	if (ret == SLAT_OK)
		v->st.mapped[level & 3]++;
	return ret;
}

/*
 * arm64 KVM's write fault on a block write-protected for dirty logging:
 * the fault maps one page, and the map walker meeting the larger block
 * breaks it (one invalidation by IPA, no clean of what it removes) and
 * installs a new table that holds only that page; the rest of the block
 * faults again when touched: SLAT_MAP_BREAK_BLOCK, with mmu_lock held for
 * write.
 */
static int break_block_fault(struct slat_vcpu *v, struct sim_slot *s,
			     uint64_t ipa)
{
	struct slat_vm *vm = v->vm;
	struct slat_table *t = &vm->table;
	uint64_t page = vm->granule, base = ipa & ~(page - 1);
	struct slat_leaf leaf;
	int ret;

	/* Someone may have got here first. */
	if (slat_lookup(t, slat_ipa(ipa), &leaf) != SLAT_OK ||
	    leaf.size <= page || (leaf.attrs & SLAT_W))
		return 0;
	ret = map_exclusive(v, s, base, SLAT_LAST_LEVEL, SLAT_R | SLAT_W,
			    SLAT_MAP_BREAK_BLOCK);
	if (ret >= 0)
		sim_mark_dirty(vm, v, s, ipa);
	return ret;
}

/*
 * A translation fault, logging off, where a block may go but a table holds
 * some of its pages (left by logging): KVM's map walker replaces the table
 * by the block (one invalidation of the table's span, the table freed, its
 * leaves not cleaned), and cleans the block it installs. This is how
 * kvm_page_table_test's KVM_ADJUST_MAPPINGS rebuilds blocks (seed 000).
 */
static int build_block_fault(struct slat_vcpu *v, struct sim_slot *s,
			     uint64_t ipa)
{
	struct slat_vm *vm = v->vm;
	struct slat_table *t = &vm->table;
	int level = sim_max_level(vm, s, ipa);
	uint64_t size = slat_level_size(t, level), base = ipa & ~(size - 1);
	void *arg[2] = { vm, s };
	int ret;

	if (!table_at(t, base, size, level))
		return 0;
	v->no_unmap_clean = true;
	ret = slat_recover(t, slat_ipa(base), size,
			   SLAT_RECOVERY(.strategy = SLAT_RECOVER_ZAP_TABLE,
					 .max_level = sim_recover_level,
					 .arg = arg),
			   SLAT_OP(.flush = SLAT_FLUSH_RANGE));
	v->no_unmap_clean = false;
	if (ret < 0)
		return ret;
	return map_exclusive(v, s, base, level,
			     SLAT_R | (s->flags & SLAT_VM_MEM_READONLY ? 0 : SLAT_W),
			     0);
}

/*
 * The MMU notifier of the host's copy on write (host_mm.c): KVM unmaps the
 * range the host's mapping changed in, with mmu_lock held for write, and
 * the fault in flight is retried.
 */
static int host_inval(struct slat_vcpu *v)
{
	int ret = sim_unmap(v->vm, v->notify.inval_base, v->notify.inval_size);

	v->st.host_invals++;
	v->st.fault_again++;
	return ret == SLAT_NOTHING_TO_DO ? 0 : ret;
}

/* The fault again, as break_block_fault() with mmu_lock held for write. */
static int fault_exclusive(struct slat_vcpu *v, uint64_t ipa, int what)
{
	struct slat_vm *vm = v->vm;
	struct sim_slot *s;
	int ret = 0;

	sim_mmu_write_lock(vm);
	slat_hosted_rcu_read_lock();
	s = sim_slot_by_gpa(sim_slots_get(vm), ipa);
	/* Logging may have ended, or the slot gone: the guest retries. */
	if (what == SIM_HOST_INVAL)
		ret = host_inval(v);
	else if (!s || s->device)
		ret = 0;
	else if (what == SIM_BREAK_BLOCK)
		ret = s->logging && !(s->flags & SLAT_VM_MEM_READONLY)
			      ? break_block_fault(v, s, ipa) : 0;
	else
		ret = s->logging ? 0 : build_block_fault(v, s, ipa);
	slat_hosted_rcu_read_unlock();
	sim_mmu_unlock(vm);
	if (ret == SLAT_E_NOMEM) {
		v->st.fault_again++;
		ret = 0;
	}
	return ret < 0 ? sim_err(vm, -EFAULT, "fault at IPA 0x%llx: %s",
				 (unsigned long long)ipa, slat_strerror(ret))
		       : 0;
}

/* SLAT_SHARED where faults share mmu_lock, 0 where each holds it alone. */
static uint32_t fault_shared(const struct slat_vm *vm)
{
	return vm->cfg.fault_lock == SLAT_VM_FAULT_LOCK_WRITE ? 0 : SLAT_SHARED;
}

static int map_fault(struct slat_vcpu *v, struct sim_slot *s, uint64_t ipa,
		     bool write, const struct slat_hw_result *res)
{
	struct slat_vm *vm = v->vm;
	struct slat_table *t = &vm->table;
	/* What the host maps there (its own faults done): a copy on write
	 * invalidates, and this fault is retried. */
	struct sim_gup g = s->host_huge ? sim_host_gup(v, s, ipa, write)
					: (struct sim_gup){ .writable = true };
	if (g.inval_size) {
		v->notify = g;
		return SIM_HOST_INVAL;
	}
	bool writable = !(s->flags & SLAT_VM_MEM_READONLY) &&
			!(s->logging && !write) && g.writable;
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
		 * leaf (a block write-protected for dirty logging): as arm64
		 * KVM, break it for a table of our page alone (with mmu_lock
		 * for write), or, as the x86 TDP MMU, relax just our granule,
		 * the core splitting the block whole around it. Under a
		 * smaller one (pages left from logging), relax that page.
		 */
		uint64_t granule = slat_level_size(t, res->level);

		if (!writable)
			return 0;
		if (granule > size && sim_block_fault(vm) == SLAT_VM_BLOCK_FAULT_LAZY)
			return SIM_BREAK_BLOCK;
		if (granule < size) {
			size = granule;
			base = ipa & ~(size - 1);
		}
		ret = slat_relax(t, slat_ipa(base), size, SLAT_R | SLAT_W,
				 SLAT_OP(.flags = fault_shared(vm) | SLAT_NO_HOLES,
					 .cache = &v->cache));
		v->st.relaxes++;
	} else {
		uint32_t flags = fault_shared(vm) | SLAT_MAP_NO_REPLACE;

		if (level != SLAT_LAST_LEVEL && size > vm->granule &&
		    table_at(t, base, size, level))
			return SIM_BUILD_BLOCK;
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
		/* An entry locked by another vCPU stays so until it runs
		 * (E_EXISTS and E_NOMEM change by the next try). */
		v->co.lost = ret == SLAT_E_AGAIN;
		return 0;
	}
	if (ret < 0 && ret != SLAT_E_NOENT)
		return sim_err(vm, -EFAULT, "fault at IPA 0x%llx: %s",
			       (unsigned long long)ipa, slat_strerror(ret));
	if (writable && s->logging)
		sim_mark_dirty(vm, v, s, ipa);
	return 0;
}

static bool ring_full(struct slat_vcpu *v)
{
	return __atomic_load_n(&v->ring.head, __ATOMIC_RELAXED) -
		       __atomic_load_n(&v->ring.reset, __ATOMIC_ACQUIRE) + 64 >=
	       v->ring.size;
}

/* A nearly full dirty ring stops the vCPU until the host resets it
 * (KVM_EXIT_DIRTY_RING_FULL, then KVM_RESET_DIRTY_RINGS). */
static void ring_wait(struct slat_vcpu *v)
{
	struct slat_vm *vm = v->vm;

	if (sim_co_self() == v) {
		/* No thread to block: the reset comes from another one. */
		if (ring_full(v))
			v->st.ring_full_waits++;
		while (ring_full(v))
			sim_co_wait_host(v);
		return;
	}
	pthread_mutex_lock(&vm->ring_lock);
	if (ring_full(v))
		v->st.ring_full_waits++;
	while (ring_full(v))
		pthread_cond_wait(&vm->ring_cond, &vm->ring_lock);
	pthread_mutex_unlock(&vm->ring_lock);
}

int sim_handle_fault(struct slat_vcpu *v, uint64_t ipa, bool write,
		     const struct slat_hw_result *res)
{
	struct slat_vm *vm = v->vm;
	/* In the deterministic mode a fault's host time includes other
	 * vCPUs' turns: it is only read for the hook. */
	bool timed = !vm->sched.on || vm->cfg.on_event;
	uint64_t t0 = timed ? slat_vm_now_ns() : 0, ns;
	struct sim_slot *s;
	int ret = 0;

	v->st.faults[res->fault == SLAT_FAULT_PERMISSION ? SLAT_VM_FAULT_PERMISSION
		     : res->fault == SLAT_FAULT_ACCESS_FLAG ? SLAT_VM_FAULT_ACCESS_FLAG
							    : SLAT_VM_FAULT_TRANSLATION]++;
	/* The exit: in the deterministic mode, vCPUs whose clocks are
	 * earlier run meanwhile. */
	sim_vt_advance(v, vm->sched.fault_exit);
	/* Every exit empties the PML buffer into the log (KVM flushes it
	 * on each VM exit). */
	v->pml_used = 0;
	/* A write permission fault may have to split a block (dirty
	 * logging maps pages), so only read permission faults skip it. */
	if (res->fault != SLAT_FAULT_PERMISSION || write)
		topup(v);

	if (fault_shared(vm))
		sim_mmu_read_lock(vm);
	else
		sim_mmu_write_lock(vm);
	slat_hosted_rcu_read_lock();
	s = sim_slot_by_gpa(sim_slots_get(vm), ipa);
	if (!s || (write && (s->flags & SLAT_VM_MEM_READONLY))) {
		ret = SLAT_VM_EXIT_MMIO;
	} else if (s->device) {
		/* Device regions are mapped whole when created; a fault there
		 * is an access racing with their removal. */
		ret = SLAT_VM_EXIT_MMIO;
	} else if (res->fault == SLAT_FAULT_ACCESS_FLAG) {
		ret = slat_mkyoung(&vm->table, slat_ipa(ipa), fault_shared(vm));
		v->st.mkyoungs++;
		v->co.lost = ret == SLAT_E_AGAIN;
		ret = ret == SLAT_E_AGAIN || ret >= 0 || ret == SLAT_E_NOENT
			      ? 0
			      : sim_err(vm, -EFAULT, "mkyoung 0x%llx: %s",
					(unsigned long long)ipa,
					slat_strerror(ret));
	} else {
		ret = map_fault(v, s, ipa, write, res);
	}
	slat_hosted_rcu_read_unlock();
	sim_mmu_unlock(vm);
	if (ret == SIM_BREAK_BLOCK || ret == SIM_BUILD_BLOCK ||
	    ret == SIM_HOST_INVAL)
		ret = fault_exclusive(v, ipa, ret);
	if (v->ring.size && !vm->cfg.hw_dirty)
		ring_wait(v);
	if (!timed)
		return ret;
	ns = slat_vm_now_ns() - t0;
	v->st.fault_ns += ns;
	if (vm->cfg.on_event)
		vm->cfg.on_event(vm->cfg.event_arg, SLAT_VM_EV_FAULT, (int)v->id,
				 ipa, ns);
	return ret;
}
