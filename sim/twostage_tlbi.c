/* SPDX-License-Identifier: MIT */
/*
 * TLB maintenance in the two-stage model: which entries each operation
 * removes (Arm ARM, TLB maintenance instructions, EL1 and EL2 forms), and
 * how a guest's operations reach the hardware under each trap policy.
 */
#include "twostage_internal.h"

const char *slat_ts_policy_name(enum slat_ts_policy p)
{
	switch (p) {
	case SLAT_TS_UNTRAPPED: return "untrapped";
	case SLAT_TS_PRECISE: return "precise";
	case SLAT_TS_FLUSH_ALL: return "flush-all";
	default: return "?";
	}
}

const char *slat_ts_tlbi_name(enum slat_ts_tlbi_kind k)
{
	static const char *const names[] = {
		[SLAT_TS_VAE1IS] = "vae1is", [SLAT_TS_ASIDE1IS] = "aside1is",
		[SLAT_TS_VMALLE1IS] = "vmalle1is", [SLAT_TS_VMALLE1] = "vmalle1",
		[SLAT_TS_IPAS2E1IS] = "ipas2e1is",
		[SLAT_TS_VMALLS12E1IS] = "vmalls12e1is",
	};
	return (unsigned)k < SLAT_TS_TLBI_KINDS ? names[k] : "?";
}

/* Whether @op removes the combined entry @e (of this VMID). */
static bool removes_combined(const struct slat_ts_tlbi *op,
			     const struct ts_tlbe *e)
{
	switch (op->kind) {
	case SLAT_TS_VAE1IS:
		/* The entry's stage-1 leaf must contain the VA. */
		return !((e->va ^ op->va) >> e->s1_shift) &&
		       (e->global || e->asid == op->asid);
	case SLAT_TS_ASIDE1IS:
		return !e->global && e->asid == op->asid;
	case SLAT_TS_VMALLE1IS:
	case SLAT_TS_VMALLE1:
	case SLAT_TS_VMALLS12E1IS:
		return true;
	default:
		/* IPAS2E1IS: stage-2-only entries; combined ones stay. */
		return false;
	}
}

static bool removes_s2(const struct slat_ts_tlbi *op, const struct ts_s2e *e)
{
	switch (op->kind) {
	case SLAT_TS_IPAS2E1IS:
		return !((e->ipa ^ op->ipa.ipa) >> e->shift);
	case SLAT_TS_VMALLS12E1IS:
		return true;
	default:
		return false;
	}
}

static void invalidate_vcpu(struct slat_ts *ts, struct ts_vcpu *v,
			    const struct slat_ts_tlbi *op)
{
	for (uint32_t i = 0; i < ts->cfg.tlb_entries; i++) {
		struct ts_tlbe *e = &v->tlb[i];

		if (e->valid && e->vmid == ts->cfg.vmid && removes_combined(op, e)) {
			e->valid = false;
			ts->st.invalidated++;
		}
	}
	for (uint32_t i = 0; v->s2tlb && i < ts->cfg.s2_tlb_entries; i++) {
		struct ts_s2e *e = &v->s2tlb[i];

		if (e->valid && e->vmid == ts->cfg.vmid && removes_s2(op, e)) {
			e->valid = false;
			ts->st.s2_invalidated++;
		}
	}
}

/* Execute @op on the hardware: the issuing vCPU only for VMALLE1, every
 * vCPU of the VM (inner shareable) for the others. */
static void execute(struct slat_ts *ts, uint32_t vcpu,
		    const struct slat_ts_tlbi *op)
{
	ts->st.hw_tlbi[op->kind]++;
	if (op->kind == SLAT_TS_VMALLE1) {
		invalidate_vcpu(ts, &ts->vcpu[vcpu], op);
		return;
	}
	for (uint32_t i = 0; i < ts->cfg.nr_vcpus; i++)
		invalidate_vcpu(ts, &ts->vcpu[i], op);
}

void slat_ts_hw_tlbi(struct slat_ts *ts, uint32_t vcpu,
		     const struct slat_ts_tlbi *op)
{
	execute(ts, vcpu, op);
	ts->st.dsb++;
}

/* The hypervisor's emulation of one trapped operation, completed by its
 * own DSB before returning to the guest. */
static void emulate(struct slat_ts *ts, uint32_t vcpu,
		    const struct slat_ts_tlbi *op)
{
	static const struct slat_ts_tlbi all = { .kind = SLAT_TS_VMALLE1IS };

	ts->st.traps++;
	execute(ts, vcpu, ts->cfg.policy == SLAT_TS_FLUSH_ALL ? &all : op);
	ts->st.dsb++;
}

void slat_ts_guest_flush(struct slat_ts *ts, uint32_t vcpu,
			 const struct slat_ts_tlbi *ops, uint32_t n)
{
	if (!n)
		return;
	ts->st.flush_calls++;
	for (uint32_t i = 0; i < n; i++) {
		ts->st.guest_tlbi[ops[i].kind]++;
		if (ts->cfg.policy == SLAT_TS_UNTRAPPED)
			execute(ts, vcpu, &ops[i]);
		else
			emulate(ts, vcpu, &ops[i]);
	}
	/* Untrapped, the guest's DSB is what waits for the broadcast; trapped,
	 * each emulation already waited and this DSB finds nothing pending. */
	if (ts->cfg.policy == SLAT_TS_UNTRAPPED)
		ts->st.dsb++;
}
