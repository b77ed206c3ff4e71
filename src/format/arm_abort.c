/* SPDX-License-Identifier: MIT */
/*
 * A stage-2 abort taken to EL2, decoded from ESR_EL2, HPFAR_EL2 and FAR_EL2
 * as the Arm ARM defines them (D24.2 ESR_EL2, ISS encodings for Data and
 * Instruction Aborts; HPFAR_EL2). Touches no table: a hypervisor's fault
 * path calls it before it takes any lock.
 */
#include "core/internal.h"

#define EC_IABT_LOWER	0x20u
#define EC_DABT_LOWER	0x24u
#define ISS_WNR		(1ull << 6)
#define ISS_S1PTW	(1ull << 7)
#define ISS_CM		(1ull << 8)

/* The fault status codes of translation-table faults: kind in [5:2],
 * level in [1:0]; FEAT_LPA2's level -1 has codes of its own. */
#define FSC_ADDR_SIZE	0x00u
#define FSC_TRANS	0x04u
#define FSC_ACCESS	0x08u
#define FSC_PERM	0x0cu
#define FSC_ADDR_SIZE_LM1 0x29u
#define FSC_TRANS_LM1	0x2bu

/* The kind of a fault status code, SLAT_FAULT_NONE for a fault that is no
 * table's (external abort, alignment, TLB conflict...); *@level its level,
 * *@addr_size whether it is an address size fault. */
static enum slat_fault fsc_kind(uint32_t fsc, int *level, bool *addr_size)
{
	*addr_size = false;
	*level = (int)(fsc & 3);
	if (fsc == FSC_ADDR_SIZE_LM1 || fsc == FSC_TRANS_LM1) {
		*level = -1;
		*addr_size = fsc == FSC_ADDR_SIZE_LM1;
		return *addr_size ? SLAT_FAULT_NONE : SLAT_FAULT_TRANSLATION;
	}
	switch (fsc & 0x3cu) {
	case FSC_ADDR_SIZE: *addr_size = true; return SLAT_FAULT_NONE;
	case FSC_TRANS: return SLAT_FAULT_TRANSLATION;
	case FSC_ACCESS: return SLAT_FAULT_ACCESS_FLAG;
	case FSC_PERM: return SLAT_FAULT_PERMISSION;
	default: *level = 0; return SLAT_FAULT_NONE;
	}
}

/*
 * What stage 2 must allow for the access to go ahead. A stage-1 walk only
 * reads its tables, except to update a descriptor's access flag or dirty
 * state: a permission fault on it is such a write, whatever the
 * instruction was (an instruction abort's WnR is 0). Cache maintenance and
 * address translation instructions report WnR 1: as writes only where
 * stage 2 refused them a permission.
 */
static unsigned abort_access(uint64_t esr, enum slat_fault kind)
{
	bool iabt = (esr >> 26) == EC_IABT_LOWER;
	bool perm = kind == SLAT_FAULT_PERMISSION;

	if (esr & ISS_S1PTW)
		return perm ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ;
	if (iabt)
		return SLAT_ACCESS_EXEC_EL1;
	if (esr & ISS_CM)
		return perm ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ;
	return esr & ISS_WNR ? SLAT_ACCESS_WRITE : SLAT_ACCESS_READ;
}

int slat_arm_abort_decode(uint64_t esr, uint64_t hpfar, uint64_t far,
			  struct slat_arm_abort *out)
{
	uint32_t ec = (uint32_t)(esr >> 26) & 0x3fu;
	if (!out || (ec != EC_IABT_LOWER && ec != EC_DABT_LOWER))
		return SLAT_E_INVAL;

	out->fsc = (uint32_t)esr & 0x3fu;
	out->fault = fsc_kind(out->fsc, &out->level, &out->address_size);
	out->s1ptw = esr & ISS_S1PTW;
	out->cm = ec == EC_DABT_LOWER && (esr & ISS_CM);
	out->access = abort_access(esr, out->fault);
	/* HPFAR_EL2 is written for translation, access flag and address size
	 * faults, and for any fault on a stage-1 walk; for other permission
	 * faults it is UNKNOWN (and some cores, erratum 834220, may report a
	 * permission fault where the architecture has a translation one). */
	out->ipa_valid = out->s1ptw || out->address_size ||
			 out->fault == SLAT_FAULT_TRANSLATION ||
			 out->fault == SLAT_FAULT_ACCESS_FLAG;
	/* HPFAR_EL2.FIPA, bits [47:4], holds IPA[55:12]. */
	out->ipa = out->ipa_valid
		? ((hpfar & 0x0000fffffffffff0ull) << 8) | (far & 0xfffull) : 0;
	return SLAT_OK;
}

uint64_t slat_arm_par_ipa(uint64_t par, uint64_t far)
{
	/* PAR_EL1.F, bit 0: the translation failed; else PA[51:12] (the
	 * IPA, for an AT S1E1* instruction) in bits [51:12]. */
	if (par & 1)
		return SLAT_ARM_NO_IPA;
	return (par & 0x000ffffffffff000ull) | (far & 0xfffull);
}
