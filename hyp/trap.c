/* SPDX-License-Identifier: MIT */
/*
 * What reaches EL2 from the guest: stage-2 aborts (stage2.c) and SMCs,
 * which are PSCI calls (psci.c); and the counters, printed when the
 * guest powers off.
 */
#include "hyp.h"

#define EC_HVC64	0x16
#define EC_SMC64	0x17
#define EC_IABT_LOW	0x20
#define EC_DABT_LOW	0x24

void hyp_trap(struct hyp_frame *f);

void hyp_trap(struct hyp_frame *f)
{
	struct hyp_cpu *c = hyp_this_cpu();
	uint64_t esr = read_sysreg(esr_el2);

	c->exits++;
	switch (esr >> 26) {
	case EC_IABT_LOW:
	case EC_DABT_LOW:
		hyp_s2_fault(c, f, esr);
		break;
	case EC_SMC64:
		hyp_psci(c, f);
		/* A trapped SMC returns to itself: step over it. */
		write_sysreg(elr_el2, read_sysreg(elr_el2) + 4);
		break;
	case EC_HVC64:
		/* The device tree says SMC: an HVC is not a PSCI call. */
		f->x[0] = (uint64_t)-1; /* NOT_SUPPORTED */
		break;
	default:
		hyp_puts("\nslat-hyp: ELR_EL2 ");
		hyp_putx(read_sysreg(elr_el2));
		hyp_panic("unexpected trap from EL1, ESR_EL2", esr);
	}
	hyp_reclaim(c);
}

/* ------------------------------------------- emulated loads and stores */

#define ESR_ISV		(1ull << 24)
#define ESR_SAS(esr)	(((esr) >> 22) & 0x3)
#define ESR_SSE		(1ull << 21)
#define ESR_SRT(esr)	(((esr) >> 16) & 0x1f)
#define ESR_SF		(1ull << 15)
#define ESR_WNR		(1ull << 6)

/**
 * hyp_mmio_decode() - the load or store a Data Abort reports
 * @esr: ESR_EL2
 * @m: set to its size, register, direction and extension
 *
 * Return: false when ISV is 0: the syndrome does not describe the access
 * (a load or store pair, one with writeback...).
 */
bool hyp_mmio_decode(uint64_t esr, struct hyp_mmio *m)
{
	if (!(esr & ESR_ISV))
		return false;
	*m = (struct hyp_mmio){
		.size = 1u << ESR_SAS(esr), .reg = (unsigned)ESR_SRT(esr),
		.write = esr & ESR_WNR, .sign_extend = esr & ESR_SSE,
		.reg64 = esr & ESR_SF,
	};
	return true;
}

/* The value a store writes: its register's low bytes (XZR: 0). */
uint64_t hyp_mmio_value(const struct hyp_frame *f, const struct hyp_mmio *m)
{
	uint64_t v = m->reg == 31 ? 0 : f->x[m->reg];

	return m->size == 8 ? v : v & ((1ull << (8 * m->size)) - 1);
}

/**
 * hyp_mmio_complete() - finish an emulated load or store
 * @f: the guest's registers
 * @m: the access
 * @v: what a load reads
 *
 * A load's register gets @v, sign-extended (SSE) or zero-extended to its
 * width (SF), as the instruction would have; then the guest goes on past
 * the instruction (an A64 one: 4 bytes).
 */
void hyp_mmio_complete(struct hyp_frame *f, const struct hyp_mmio *m,
		       uint64_t v)
{
	unsigned bits = 8 * m->size;

	if (!m->write && m->reg != 31) {
		if (bits < 64) {
			v &= (1ull << bits) - 1;
			if (m->sign_extend && (v >> (bits - 1)))
				v |= ~0ull << bits;
		}
		f->x[m->reg] = m->reg64 ? v : v & 0xffffffffull;
	}
	write_sysreg(elr_el2, read_sysreg(elr_el2) + 4);
}

/* ------------------------------------------------------- counters */

/* Leaves mapping guest RAM, by size, from the table itself. */
void hyp_report_leaves(void)
{
	uint64_t g, m, p;

	hyp_count_leaves(&g, &m, &p);
	hyp_puts("slat-hyp: guest RAM leaves");
	hyp_put_kv("1G", g);
	hyp_put_kv("2M", m);
	hyp_put_kv("4K", p);
	hyp_puts("\n");
}

/**
 * hyp_count_leaves() - the leaves that map guest RAM now, by size
 * @blocks_1g: set to the number of 1 GiB blocks
 * @blocks_2m: set to the number of 2 MiB blocks
 * @pages: set to the number of 4 KiB pages
 *
 * One slat_lookup() per leaf (per page where nothing is mapped). The
 * caller holds off the operations that rewrite the table, or takes the
 * counts as a snapshot of a moving table.
 */
void hyp_count_leaves(uint64_t *blocks_1g, uint64_t *blocks_2m,
		      uint64_t *pages)
{
	uint64_t ipa = HYP_RAM_BASE, end = hyp_mem.guest_end;

	*blocks_1g = *blocks_2m = *pages = 0;
	while (ipa < end) {
		struct slat_leaf leaf;

		if (ipa == HYP_OWN)	/* slat-hyp's part, never mapped */
			ipa = HYP_OWN_END;

		if (hyp_s2_lookup(ipa, &leaf) != SLAT_OK) {
			ipa += HYP_GRANULE;
			continue;
		}
		if (leaf.size >= (1ull << 30))
			(*blocks_1g)++;
		else if (leaf.size >= (2ull << 20))
			(*blocks_2m)++;
		else
			(*pages)++;
		ipa = slat_ipa_v(leaf.base) + leaf.size;
	}
}

/* Device leaves the faults wrote, by size: a block per first touch
 * wherever a window holds one. */
static void report_device_leaves(void)
{
	uint64_t n[SLAT_LAST_LEVEL + 1] = { 0 };

	for (int i = 0; i < HYP_MAX_CPUS; i++)
		for (int level = 0; level <= SLAT_LAST_LEVEL; level++)
			n[level] += hyp_cpus[i].device_leaves[level];
	hyp_puts("slat-hyp: device leaves");
	hyp_put_kv("1G", n[1]);
	hyp_put_kv("2M", n[2]);
	hyp_put_kv("4K", n[3]);
	hyp_puts("\n");
}

static void report_cpu(const struct hyp_cpu *c)
{
	hyp_puts("slat-hyp: cpu");
	hyp_putu(c->index);
	hyp_put_kv("exits", c->exits);
	hyp_put_kv("s2_translation", c->faults[HYP_F_TRANSLATION]);
	hyp_put_kv("s2_device", c->faults[HYP_F_DEVICE]);
	hyp_put_kv("s2_permission", c->faults[HYP_F_PERMISSION]);
	hyp_put_kv("s2_access_flag", c->faults[HYP_F_ACCESS_FLAG]);
	hyp_put_kv("retries", c->faults[HYP_F_RETRY]);
	hyp_put_kv("hpfar_poisoned", c->faults[HYP_F_HPFAR_POISONED]);
	hyp_put_kv("ipa_from_at", c->faults[HYP_F_IPA_FROM_AT]);
	hyp_put_kv("psci", c->psci_calls);
	hyp_put_kv("psci_standby", c->psci_standby);
	hyp_put_kv("psci_powerdown", c->psci_powerdown);
	hyp_put_kv("resumed", c->resumed);
	hyp_put_kv("psci_refused", c->psci_refused);
	hyp_put_kv("kicks", c->kicks);
	hyp_put_kv("kicks_seen", c->kicks_seen);
	hyp_put_kv("gicr_emulated", c->gicr_emulated);
	hyp_put_kv("maps", c->stats.written[SLAT_WRITE_LEAF]);
	hyp_put_kv("tables_linked", c->stats.written[SLAT_WRITE_TABLE]);
	hyp_put_kv("tlbi_ipa_is", c->tlbi.ipa_is);
	hyp_put_kv("tlbi_ipa_local", c->tlbi.ipa_local);
	hyp_put_kv("tlbi_vmid", c->tlbi.vmid);
	hyp_put_kv("dc_civac_lines", c->tlbi.dcache_lines);
	hyp_put_kv("ic_ialluis", c->tlbi.icache);
	/* Only a CPU PSCI started has one: CPU 0's is in the image's. */
	if (c->stack_inval[1]) {
		hyp_puts(" stack_inval=");
		hyp_putx(c->stack_inval[0]);
		hyp_puts("-");
		hyp_putx(c->stack_inval[1]);
	}
	hyp_puts("\n");
}

void hyp_report(void)
{
	struct slat_stats sum;
	uint64_t deferred, reclaimed;

	slat_stats_read(&hyp_s2, &sum);
	hyp_print_lock();
	hyp_puts("\nslat-hyp: guest asked to power off after ");
	hyp_putu(hyp_counter_ms());
	hyp_puts(" ms (CNTPCT_EL0)\n");
	for (int i = 0; i < HYP_MAX_CPUS; i++) {
		if (!hyp_cpus[i].online && !hyp_cpus[i].exits)
			continue;
		report_cpu(&hyp_cpus[i]);
		slat_stats_add(&sum, &hyp_cpus[i].stats);
	}
	hyp_deferred_counts(&deferred, &reclaimed);
	hyp_puts("slat-hyp: total");
	hyp_put_kv("maps", sum.written[SLAT_WRITE_LEAF]);
	hyp_put_kv("table_pages", sum.pages_alloc - sum.pages_freed);
	hyp_put_kv("pool_pages", hyp_pool_pages_used());
	hyp_put_kv("lost_races", sum.retries);
	hyp_put_kv("dcache_bytes", sum.dcache_bytes);
	hyp_put_kv("icache_calls", sum.icache_calls);
	hyp_put_kv("tlbi_hook_ipa", sum.tlbi[SLAT_TLBI_IPA]);
	hyp_put_kv("tlbi_hook_ipa_local", sum.tlbi[SLAT_TLBI_IPA_LOCAL]);
	hyp_put_kv("tlbi_hook_range", sum.tlbi[SLAT_TLBI_RANGE]);
	hyp_put_kv("tlbi_hook_vmid", sum.tlbi[SLAT_TLBI_VMID]);
	hyp_put_kv("deferred_frees", deferred);
	hyp_put_kv("reclaimed", reclaimed);
	hyp_puts("\n");
	hyp_report_leaves();
	report_device_leaves();
	hyp_log_report();
	hyp_print_unlock();
}
