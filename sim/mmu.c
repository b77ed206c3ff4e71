/* SPDX-License-Identifier: MIT */
/*
 * The software MMU: a per-vCPU TLB tagged by VMID, refilled by walking the
 * real descriptors with slat_hw_access(); faults go to the fault handler.
 */
#include "internal.h"

#include <sched.h>
#include <string.h>

static uint32_t tlb_index(const struct slat_vcpu *v, uint64_t ipa,
			  unsigned shift)
{
	uint64_t k = (ipa >> shift) * 0x9e3779b97f4a7c15ull + shift;

	return (uint32_t)(k >> 40) & v->tlb_mask;
}

void slat_vcpu_tlb_flush(struct slat_vcpu *v)
{
	memset(v->tlb, 0, (size_t)(v->tlb_mask + 1) * sizeof(v->tlb[0]));
	v->st.tlb_flushes++;
}

void sim_tlb_drop_range(struct slat_vcpu *v, uint64_t ipa, uint64_t size)
{
	uint64_t end = ipa + size;

	for (uint32_t i = 0; i <= v->tlb_mask; i++) {
		struct tlb_entry *e = &v->tlb[i];
		uint64_t base, esz;

		if (!e->tag)
			continue;
		esz = 1ull << e->shift;
		base = (e->tag - 1) << e->shift;
		if (base < end && ipa < base + esz) {
			e->tag = 0;
			v->st.tlb_invalidated++;
		}
	}
}

/* Apply the invalidations published since the vCPU last looked. */
void sim_tlb_apply(struct slat_vcpu *v)
{
	struct slat_vm *vm = v->vm;
	uint64_t gen = __atomic_load_n(&vm->gen, __ATOMIC_SEQ_CST);

	if (gen == v->seen_gen)
		return;
	if (gen - v->seen_gen >= SIM_INVAL_RING) {
		slat_vcpu_tlb_flush(v);
		v->seen_gen = gen;
		return;
	}
	for (uint64_t g = v->seen_gen + 1; g <= gen; g++) {
		struct sim_inval *e = &vm->inval[g % SIM_INVAL_RING];
		/* Acquire loads of the range: if either comes from a newer
		 * writer of this slot, its seq = 0 is seen by the second
		 * load of seq (see sim_tlbi). */
		uint64_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		uint64_t ipa = __atomic_load_n(&e->ipa, __ATOMIC_ACQUIRE);
		uint64_t size = __atomic_load_n(&e->size, __ATOMIC_ACQUIRE);

		if (s1 != g || __atomic_load_n(&e->seq, __ATOMIC_RELAXED) != g ||
		    size == 0) {
			/* Overwritten meanwhile, or a whole-VMID flush. */
			slat_vcpu_tlb_flush(v);
			break;
		}
		sim_tlb_drop_range(v, ipa, size);
	}
	v->seen_gen = gen;
}

static struct tlb_entry *tlb_lookup(struct slat_vcpu *v, uint64_t ipa)
{
	struct slat_vm *vm = v->vm;

	for (int i = 0; i < vm->nr_leaf_shifts; i++) {
		unsigned shift = vm->leaf_shifts[i];
		struct tlb_entry *e = &v->tlb[tlb_index(v, ipa, shift)];

		if (e->tag == (ipa >> shift) + 1 && e->shift == shift &&
		    e->vmid == vm->cfg.vmid)
			return e;
	}
	return NULL;
}

static void tlb_fill(struct slat_vcpu *v, uint64_t ipa, int level,
		     uint64_t hpa, unsigned flags, int64_t delta)
{
	struct slat_vm *vm = v->vm;
	unsigned shift = (unsigned)__builtin_ctzll(slat_level_size(&vm->table, level));
	uint64_t base = ipa & ~((1ull << shift) - 1);
	struct tlb_entry *e = &v->tlb[tlb_index(v, ipa, shift)];

	e->tag = (ipa >> shift) + 1;
	e->shift = (uint8_t)shift;
	e->vmid = vm->cfg.vmid;
	e->hpa = hpa - (ipa - base);
	e->hva_delta = delta;
	e->flags = (uint8_t)flags;
}


static void access_begin(struct slat_vcpu *v)
{
	slat_hosted_rcu_read_lock();
	__atomic_store_n(&v->active, ACTIVE_MARK, __ATOMIC_SEQ_CST);
	sim_tlb_apply(v);
	__atomic_store_n(&v->active, v->seen_gen, __ATOMIC_SEQ_CST);
}

static void access_end(struct slat_vcpu *v)
{
	__atomic_store_n(&v->active, 0, __ATOMIC_RELEASE);
	slat_hosted_rcu_read_unlock();
}

/* Entries of a PML buffer (the SDM's page-modification log: 512 GPAs). */
#define SIM_PML_ENTRIES 512
/* try_access(): the write must log in a full PML buffer: exit first. */
#define TRY_PML_FULL 3

/*
 * PML: the logging slot of @gpa when a write to it sets the dirty bit of a
 * writable leaf, the event the CPU logs, else NULL; only then is a page
 * logged (a write fault marks its page itself, a dirty leaf is not logged
 * again). Called under the RCU read lock (access_begin).
 */
static struct sim_slot *pml_logs(struct slat_vm *vm, uint64_t gpa)
{
	struct sim_slot *s = sim_slot_by_gpa(sim_slots_get(vm), gpa);
	struct slat_leaf leaf;

	/* KVM turns PML on only while a slot logs. */
	if (s && s->logging &&
	    slat_lookup(&vm->table, slat_ipa(gpa), &leaf) == SLAT_OK &&
	    (leaf.attrs & SLAT_W) && !(leaf.attrs & SLAT_DIRTY))
		return s;
	return NULL;
}

/* A PML-full exit: KVM empties the buffer into the log, then re-enters. */
static void pml_full_exit(struct slat_vcpu *v)
{
	v->st.pml_full_exits++;
	v->pml_used = 0;
	sim_vt_advance(v, v->vm->sched.pml_full);
}

/*
 * One attempt: 0 done, 1 a fault (in *res), SLAT_VM_EXIT_MMIO + 1 when the
 * translation leads nowhere (a bug: reported as -EFAULT), TRY_PML_FULL when
 * the write would log in a full PML buffer.
 */
static int try_access(struct slat_vcpu *v, uint64_t gpa, void *buf,
		      uint32_t len, bool write, struct slat_hw_result *res)
{
	struct slat_vm *vm = v->vm;
	struct tlb_entry *e = tlb_lookup(v, gpa);
	struct sim_slot *logs;
	unsigned flags;
	int64_t delta = 0;
	uint64_t hpa;

	if (e && (write ? (e->flags & TLB_W) : (e->flags & TLB_R))) {
		v->st.tlb_hits++;
		hpa = e->hpa + (gpa & ((1ull << e->shift) - 1));
		flags = e->flags;
		delta = e->hva_delta;
	} else {
		struct sim_slot *s;

		v->st.tlb_misses++;
		if (write && vm->cfg.pml && (logs = pml_logs(vm, gpa))) {
			if (v->pml_used == SIM_PML_ENTRIES)
				return TRY_PML_FULL;
			v->pml_used++;
			v->st.pml_logged++;
			/* The log: KVM drains the buffer into it at the
			 * vCPU's next exit, and kicks every vCPU out before
			 * a GET_DIRTY_LOG reads it (kvm_arch_sync_dirty_log),
			 * so no reader sees it before the page is there. */
			sim_mark_dirty(vm, v, logs, gpa);
		}
		if (slat_hw_access(&vm->table, slat_ipa(gpa),
				   write ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ,
				   res))
			return -EFAULT;
		if (res->fault != SLAT_FAULT_NONE)
			return 1;
		hpa = res->pa.pa;
		s = sim_slot_by_hpa(sim_slots_get(vm), hpa);
		if (!s) {
			sim_err(vm, -EFAULT,
				"IPA 0x%llx translates to PA 0x%llx, outside "
				"every slot", (unsigned long long)gpa,
				(unsigned long long)hpa);
			return -EFAULT;
		}
		flags = TLB_R;
		/* A write-clean leaf (hardware dirty state) must be walked
		 * again on the first write, so it is cached read-only. */
		if ((res->attrs & SLAT_W) &&
		    (write || !(slat_table_config(&vm->table)->features & SLAT_FEAT_HWDIRTY) ||
		     (res->attrs & SLAT_DIRTY)))
			flags |= TLB_W;
		if (s->hva) {
			flags |= TLB_MEM;
			delta = (int64_t)((uintptr_t)s->hva - s->hpa);
		}
		if (s->device)
			flags |= TLB_DEVICE;
		tlb_fill(v, gpa, res->level, hpa, flags, delta);
	}
	if (flags & TLB_MEM)
		sim_copy((uint8_t *)(uintptr_t)(hpa + (uint64_t)delta), buf, len,
			 write);
	else if (!write)
		memset(buf, 0, len);
	if (flags & TLB_DEVICE)
		v->st.mmio_accesses++;
	return 0;
}

/* A fault that never resolves is a simulator or core bug: report it after
 * this long, not after a number of tries that preemption can exhaust. */
#define SIM_NO_PROGRESS_NS (30ull * 1000000000ull)

static bool should_check_progress(uint32_t tries)
{
	return tries >= 1000 && (tries & 1023) == 0;
}

int slat_vcpu_access(struct slat_vcpu *v, uint64_t gpa, void *buf,
		     uint32_t len, bool write)
{
	struct slat_vm *vm = v->vm;
	struct slat_vcpu *prev = sim_current_vcpu;
	int ret;

	if (!len || ((gpa ^ (gpa + len - 1)) & ~(vm->granule - 1)))
		return -EINVAL;
	sim_rcu_register();
	sim_current_vcpu = v;
	v->st.accesses++;
	v->st.writes += write;
	uint64_t stuck_since = 0;
	bool vt = sim_co_self() == v;
	for (uint32_t tries = 0;; tries++) {
		struct slat_hw_result res;
		uint64_t again = v->st.fault_again;
		struct sim_retry retry;
		bool spin = vt && v->co.spin;

		if (spin)
			sim_retry_begin(v, &retry);
		access_begin(v);
		ret = try_access(v, gpa, buf, len, write, &res);
		access_end(v);
		if (ret == TRY_PML_FULL) {
			pml_full_exit(v);
			continue;
		}
		if (ret <= 0)
			break;
		ret = sim_handle_fault(v, gpa, write, &res);
		if (ret)
			break;
		/*
		 * A lost race (an entry locked by another vCPU's fault or
		 * split): that vCPU must run to finish it. With more vCPU
		 * threads than host CPUs it may be preempted, so give the CPU
		 * up rather than spin through faults, as a guest re-entering
		 * and faulting again would take time too. In virtual time
		 * the winner runs when its clock comes.
		 */
		if (vt)
			sim_retry_end(v, spin ? &retry : NULL);
		else if (v->st.fault_again != again)
			sched_yield();
		if (!should_check_progress(tries))
			continue;
		uint64_t now = slat_vm_now_ns();
		if (!stuck_since) {
			stuck_since = now;
		} else if (now - stuck_since > SIM_NO_PROGRESS_NS) {
			ret = sim_err(vm, -EFAULT,
				      "IPA 0x%llx: the fault handler makes no "
				      "progress (%u faults in %llu s)",
				      (unsigned long long)gpa, tries,
				      (unsigned long long)(SIM_NO_PROGRESS_NS /
							   1000000000ull));
			break;
		}
	}
	if (ret == SLAT_VM_EXIT_MMIO)
		v->st.mmio_exits++;
	v->co.spin = false;
	sim_current_vcpu = prev;
	return ret;
}
