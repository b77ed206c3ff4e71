/* SPDX-License-Identifier: MIT */
/*
 * The guest's stage 2: one libslat Arm stage-2 table, IPA == PA, built
 * lazily. Every stage-2 abort from EL1 comes here and follows the fault
 * recipe of docs/platform.md on the vCPU's own page cache, with
 * SLAT_SHARED: the other vCPU may be faulting into the same table.
 */
#include "hyp.h"

struct slat_table hyp_s2;

/*
 * What the guest may reach: its RAM, and the device windows of the
 * device tree QEMU gave slat-hyp (fdt_device_windows(): every device's
 * reg, PCIe's ECAM and ranges, neighbours merged so that a first touch
 * maps the largest block inside one). Nothing else: slat-hyp's own
 * memory is absent, and a touch there stops the run.
 */
struct region {
	uint64_t base, size;
	bool device;
	bool redist;	/* the redistributors: SGI_base mapped, the rest not */
};

/* RAM (two), the redistributors, then the windows: found first, the
 * redistributors win over the window that holds them. */
static struct region regions[3 + FDT_WINDOWS_MAX];
static uint32_t nr_regions;

static const struct region *region_of(uint64_t ipa)
{
	for (uint32_t i = 0; i < nr_regions; i++)
		if (ipa - regions[i].base < regions[i].size)
			return &regions[i];
	return NULL;
}

/* Guest RAM (two regions, around slat-hyp's part), then the tree's
 * device windows, none of them in RAM. */
static void regions_init(const void *fdt)
{
	static struct fdt_windows ws;

	if (fdt_device_windows(fdt, HYP_GRANULE, &ws)) {
		hyp_puts("slat-hyp: device tree: ");
		hyp_puts(ws.error);
		hyp_puts(ws.error_node ? ", node " : "");
		hyp_puts(ws.error_node ? ws.error_node : "");
		hyp_panic("no device windows, entries read", ws.entries);
	}
	regions[0] = (struct region){ HYP_RAM_BASE, HYP_OWN - HYP_RAM_BASE,
				      false, false };
	regions[1] = (struct region){ HYP_OWN_END,
				      hyp_mem.guest_end - HYP_OWN_END, false,
				      false };
	hyp_gic_redist_region(&regions[2].base, &regions[2].size);
	regions[2].device = regions[2].redist = true;
	hyp_puts("slat-hyp: device windows: ");
	hyp_putu(ws.nr);
	hyp_puts(" from the DTB (");
	hyp_putu(ws.entries);
	hyp_puts(" reg and PCI ranges entries)\n");
	for (uint32_t i = 0; i < ws.nr; i++) {
		const struct fdt_window *w = &ws.w[i];

		/* A device there would hand the guest slat-hyp's memory. */
		if (w->base < hyp_mem.ram_end &&
		    HYP_RAM_BASE < w->base + w->size)
			hyp_panic("a device window overlaps RAM at", w->base);
		/* The doorbell must stay unmapped to trap. */
		if (HYP_DOORBELL - w->base < w->size)
			hyp_panic("a device window holds the doorbell", w->base);
		hyp_puts("slat-hyp:   ");
		hyp_putx(w->base);
		hyp_puts("+");
		hyp_putx(w->size);
		hyp_puts("\n");
		regions[3 + i] = (struct region){ w->base, w->size, true, false };
	}
	nr_regions = 3 + ws.nr;
}

/* The largest leaf level whose block around @ipa stays inside @r, and
 * out of the redistributors' frames that must stay unmapped. */
static int max_level(const struct region *r, uint64_t ipa)
{
	const struct slat_geometry *geo = slat_table_geometry(&hyp_s2);
	const struct region *rd = &regions[2];

	for (int level = geo->start_level; level < SLAT_LAST_LEVEL; level++) {
		uint64_t size = slat_level_size(&hyp_s2, level);
		uint64_t base = ipa & ~(size - 1);

		if (level >= 0 && (geo->leaf_levels & (1u << level)) &&
		    base >= r->base && base + size <= r->base + r->size &&
		    (r->redist || base >= rd->base + rd->size ||
		     base + size <= rd->base))
			return level;
	}
	return SLAT_LAST_LEVEL;
}

/* The recovery's view of the same rule: any region, RAM included. */
int hyp_max_level(void *arg, slat_ipa_t ipa)
{
	const struct region *r = region_of(slat_ipa_v(ipa));

	(void)arg;
	return r ? max_level(r, slat_ipa_v(ipa)) : SLAT_LAST_LEVEL;
}

/**
 * hyp_s2_lookup() - slat_lookup() on the guest's stage 2, inside a walk
 * @ipa: the address
 * @leaf: set to the leaf that maps it
 *
 * A lookup reads the tables as a shared walker does: inside this CPU's
 * walk count, so that a table another vCPU unlinks meanwhile is not freed
 * while this one may still read it (mm.c, deferred frees).
 *
 * Return: slat_lookup()'s.
 */
int hyp_s2_lookup(uint64_t ipa, struct slat_leaf *leaf)
{
	struct hyp_cpu *c = hyp_this_cpu();
	int ret;

	hyp_walk_begin(c);
	ret = slat_lookup(&hyp_s2, slat_ipa(ipa), leaf);
	hyp_walk_end(c);
	return ret;
}

/* ------------------------------------------------- the fault address */

#define ESR_S1PTW	(1ull << 7)
#define FSC_TYPE(esr)	((esr) & 0x3c)
#define FSC_PERMISSION	0x0c

static enum hyp_hpfar_mode hpfar_mode;
/* HPFAR_EL2 taken for no abort outside a stage-1 walk (erratum 834220). */
static bool hpfar_untrusted;

/*
 * Erratum 834220 of Cortex-A57 r0p0 to r1p2: a stage-2 translation fault
 * may be reported where the access also has a stage-1 fault, which must
 * win. KVM's remedy, followed here: on such a core, every abort outside
 * a stage-1 walk finds its IPA through the guest's stage 1 (AT S1E1R),
 * and goes back to the guest when stage 1 faults. MIDR_EL1 (Arm ARM
 * D24.2.137): Implementer [31:24], Variant [23:20], PartNum [15:4],
 * Revision [3:0]; Arm is 0x41, Cortex-A57 0xd07.
 */
static bool midr_834220(uint64_t midr)
{
	uint64_t part = (midr >> 4) & 0xfff;
	uint64_t variant_revision = ((midr >> 20) & 0xf) << 4 | (midr & 0xf);

	return ((midr >> 24) & 0xff) == 0x41 && part == 0xd07 &&
	       variant_revision <= 0x12;
}

static void hpfar_init(uint64_t mode)
{
	uint64_t midr = read_sysreg(midr_el1);

	if (mode > HYP_HPFAR_834220)
		hyp_panic("unknown HPFAR_EL2 mode", mode);
	hpfar_mode = (enum hyp_hpfar_mode)mode;
	hpfar_untrusted = midr_834220(midr) || mode == HYP_HPFAR_834220;
	hyp_puts("slat-hyp: MIDR_EL1 ");
	hyp_putx(midr);
	hyp_puts(midr_834220(midr) ? ", erratum 834220"
		 : mode == HYP_HPFAR_834220 ? ", erratum 834220 assumed"
					     : ", no erratum 834220");
	hyp_puts(mode == HYP_HPFAR_REAL ? "; HPFAR_EL2 as read\n"
		 : mode == HYP_HPFAR_POISON
			 ? "; HPFAR_EL2 poisoned where UNKNOWN\n"
			 : "; HPFAR_EL2 poisoned outside stage-1 walks\n");
}

/*
 * Whether the architecture leaves HPFAR_EL2 UNKNOWN for this abort
 * (Arm ARM D24.2.76: it is written for translation, access flag and
 * address size faults, and for any fault on a stage-1 walk). Worked out
 * from ESR_EL2 here, not by the decoder under test.
 */
static bool hpfar_unknown(uint64_t esr)
{
	if (esr & ESR_S1PTW)
		return false;
	return hpfar_mode == HYP_HPFAR_834220 ||
	       FSC_TYPE(esr) == FSC_PERMISSION;
}

/* The same page 2 MiB away: HPFAR_EL2.FIPA, bits [47:4], is IPA[55:12],
 * so bit 13 is IPA bit 21. Guest RAM, or a device, or nothing. */
static uint64_t hpfar_poison(uint64_t hpfar)
{
	return hpfar ^ (1ull << 13);
}

static unsigned pa_range_bits(void)
{
	static const uint8_t bits[] = { 32, 36, 40, 42, 44, 48, 52 };
	uint64_t pa_range = read_sysreg(id_aa64mmfr0_el1) & 0xf;

	return pa_range < sizeof(bits) ? bits[pa_range] : 48;
}

void hyp_s2_init(const void *fdt, uint64_t hpfar_mode)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2,
		.granule = HYP_GRANULE,
	};
	unsigned bits = pa_range_bits();
	int ret;

	regions_init(fdt);
	hpfar_init(hpfar_mode);
	/* The machine's IPA size, up to 48 bits (no FEAT_LPA2 here). */
	cfg.ia_bits = (uint8_t)(bits > 48 ? 48 : bits);
	cfg.pa_bits = cfg.ia_bits;
	/* CTR_EL0.DIC: no I-cache invalidation for new code. Never FWB:
	 * the D-cache maintenance of each new leaf runs for real. */
	if (read_sysreg(ctr_el0) & (1ull << 29))
		cfg.features |= SLAT_FEAT_DIC;
	/* FEAT_HAFDBS: VTCR_EL2.HA/HD, writable leaves with DBM. */
	if (hyp_log_hwdirty())
		cfg.features |= SLAT_FEAT_HWDIRTY;
	ret = slat_table_init(&hyp_s2, &cfg, &hyp_mm_ops, NULL);
	if (ret != SLAT_OK)
		hyp_panic("slat_table_init", (uint64_t)ret);
}

/*
 * HPFAR_EL2 is UNKNOWN for this abort (a permission fault outside a
 * stage-1 walk), or untrusted (erratum 834220, above): the guest's own
 * stage 1, still loaded, says which IPA
 * FAR_EL2 names. AT S1E1R for writes too: stage 1 already allowed the
 * access, and EL1 can read whatever EL0 can. False when it no longer
 * translates (the guest changed it meanwhile): the guest retries.
 */
static bool ipa_from_far(uint64_t far, uint64_t *ipa)
{
	uint64_t par_saved = read_sysreg(par_el1);
	uint64_t par;

	__asm__ volatile("at s1e1r, %0" ::"r"(far) : "memory");
	isb();
	par = read_sysreg(par_el1);
	write_sysreg(par_el1, par_saved);
	*ipa = slat_arm_par_ipa(par, far);
	return *ipa != SLAT_ARM_NO_IPA;
}

static int fault_map(struct hyp_cpu *c, const struct region *r, uint64_t ipa,
		     bool exec, bool write)
{
	/* While logging, RAM in pages, so that each reports itself. */
	bool pages = hyp_logging() && !r->device;
	int level = pages ? SLAT_LAST_LEVEL : max_level(r, ipa);
	uint64_t size = slat_level_size(&hyp_s2, level);
	uint64_t base = ipa & ~(size - 1);
	/* RAM without execute until the guest executes it (the I-cache
	 * maintenance is then paid for code only); devices never. Under
	 * write protection, writable only from the first write. */
	uint32_t w = hyp_logging_wp() && !write && !r->device ? 0 : SLAT_W;
	uint32_t attrs = r->device ? SLAT_RW | SLAT_MT_DEVICE
				   : SLAT_R | w | SLAT_MT_NORMAL |
					     (exec ? SLAT_X : 0);
	uint32_t flags = SLAT_SHARED | (pages ? SLAT_MAP_PAGES : 0);
	int ret;

	c->faults[r->device ? HYP_F_DEVICE : HYP_F_TRANSLATION]++;
	/* The count reads the table too: inside the walk, so that no table
	 * it reads is freed under it (mm.c, deferred frees). Counted beside
	 * the other vCPUs, whose faults only lower it. */
	hyp_walk_begin(c);
	int64_t need = slat_pages_needed(
		&hyp_s2, SLAT_NEED(.kind = SLAT_OP_MAP, .ipa = slat_ipa(base),
				   .size = size, .pa = slat_pa(base),
				   .attrs = attrs, .flags = flags));
	hyp_cache_fill(&c->cache, need < 0 ? 0 : (uint32_t)need);
	ret = slat_map(&hyp_s2, slat_ipa(base), size, slat_pa(base), attrs,
		       SLAT_OP(.flags = flags, .cache = &c->cache));
	hyp_walk_end(c);
	if (ret == SLAT_OK && r->device && level >= 0)
		c->device_leaves[level]++;
	return ret;
}

/* Add the missing permission to the whole leaf that faulted. */
static int fault_relax(struct hyp_cpu *c, uint64_t ipa,
		       const struct slat_arm_abort *a, bool exec)
{
	/* The whole leaf, but one page of it for a write while logging. */
	int level = hyp_logging() && !exec ? SLAT_LAST_LEVEL : a->level;
	uint64_t size = slat_level_size(&hyp_s2, level);
	uint64_t base = ipa & ~(size - 1);
	int ret;

	uint32_t perms = exec ? SLAT_X : SLAT_W;
	/* The leaf may have gone meanwhile: then the guest faults again. */
	uint32_t flags = SLAT_SHARED | SLAT_NO_HOLES;
	int64_t need;

	c->faults[HYP_F_PERMISSION]++;
	hyp_walk_begin(c);	/* the count reads the table too */
	need = slat_pages_needed(
		&hyp_s2, SLAT_NEED(.kind = SLAT_OP_RELAX, .ipa = slat_ipa(base),
				   .size = size, .attrs = perms,
				   .flags = flags));
	hyp_cache_fill(&c->cache, need < 0 ? 0 : (uint32_t)need);
	ret = slat_relax(&hyp_s2, slat_ipa(base), size, perms,
			 SLAT_OP(.flags = flags, .cache = &c->cache));
	hyp_walk_end(c);
	return ret == SLAT_E_NOENT ? SLAT_E_AGAIN : ret;
}

/* [snippet:fault] */
static int fault_dispatch(struct hyp_cpu *c, const struct region *r,
			  uint64_t ipa, const struct slat_arm_abort *a)
{
	/* A fault on the guest's stage-1 walk reads its table page, or
	 * writes it to update a descriptor (slat_arm_abort_decode()). */
	bool exec = a->access == SLAT_ACCESS_EXEC_EL1;
	bool write = a->access == SLAT_ACCESS_WRITE;
	int ret;

	switch (a->fault) {
	case SLAT_FAULT_TRANSLATION:
		ret = fault_map(c, r, ipa, exec, write);
		break;
	case SLAT_FAULT_PERMISSION:
		if (!exec && !write)
			hyp_panic("read permission fault, IPA", ipa);
		ret = fault_relax(c, ipa, a, exec);
		break;
	case SLAT_FAULT_ACCESS_FLAG:
		c->faults[HYP_F_ACCESS_FLAG]++;
		hyp_walk_begin(c);
		ret = slat_mkyoung(&hyp_s2, slat_ipa(ipa), SLAT_SHARED);
		hyp_walk_end(c);
		break;
	default:
		hyp_panic("unexpected stage-2 abort, FSC", a->fsc);
	}
	/* Done, or done by another vCPU first: a write while logging by
	 * write protection marks its page before the guest goes on. */
	if (ret >= 0 && write && hyp_logging_wp() && !r->device)
		hyp_log_mark(ipa);
	return ret;
}
/* [end] */

/* The faulting IPA: from HPFAR_EL2 where the architecture writes it,
 * else from FAR_EL2 through the guest's stage 1. False: let the guest
 * retry. */
static bool fault_ipa(struct hyp_cpu *c, uint64_t esr,
		      struct slat_arm_abort *a)
{
	uint64_t far = read_sysreg(far_el2);
	uint64_t hpfar = read_sysreg(hpfar_el2);

	if (hpfar_mode != HYP_HPFAR_REAL && hpfar_unknown(esr)) {
		hpfar = hpfar_poison(hpfar);
		c->faults[HYP_F_HPFAR_POISONED]++;
	}
	if (slat_arm_abort_decode(esr, hpfar, far, a) != SLAT_OK)
		hyp_panic("no stage-2 abort, ESR_EL2", esr);
	if (hpfar_untrusted && !a->s1ptw)
		a->ipa_valid = false;
	if (a->ipa_valid)
		return true;
	c->faults[HYP_F_IPA_FROM_AT]++;
	return ipa_from_far(far, &a->ipa);
}

/*
 * A fault in the redistributors' region (gic.c): a present
 * redistributor's SGI_base frame, passed through, is returned as the
 * region to map from (pages: no block of it is all SGI_base); any other
 * frame is never mapped, and the access is emulated. NULL: done.
 */
static const struct region *redist_frame(struct hyp_cpu *c,
					  struct hyp_frame *f, uint64_t esr,
					  uint64_t ipa, struct region *frame)
{
	uint64_t sgi = hyp_gic_sgi_frame(ipa);

	if (!sgi) {
		hyp_gic_redist_access(c, f, esr, ipa);
		return NULL;
	}
	*frame = (struct region){ sgi, 0x10000, true, false };
	return frame;
}

void hyp_s2_fault(struct hyp_cpu *c, struct hyp_frame *f, uint64_t esr)
{
	struct slat_arm_abort a;
	struct region frame;
	int ret;

	if (!fault_ipa(c, esr, &a)) {
		c->faults[HYP_F_RETRY]++;
		return;
	}
	uint64_t ipa = a.ipa & ~0xfffull;
	const struct region *r = region_of(ipa);

	if (!r && (ipa & ~(HYP_GRANULE - 1)) == HYP_DOORBELL) {
		hyp_log_doorbell(c, f, esr);
		return;
	}
	/* Neither RAM nor a window of the device tree: nothing the guest
	 * was told of, and nothing to give it. */
	if (!r)
		hyp_panic("guest access outside its memory map, IPA", ipa);
	/* Before the emulation too: a vCPU polling GICR_CTLR must stop. */
	hyp_log_park(c);
	if (r->redist && !(r = redist_frame(c, f, esr, a.ipa, &frame)))
		return;
	hyp_mmu_read_lock();
	ret = fault_dispatch(c, r, ipa, &a);
	hyp_mmu_read_unlock();
	/* SLAT_E_AGAIN: another vCPU won a race; SLAT_E_NOMEM: the cache
	 * ran dry. Either way the guest faults again and the next fault
	 * tops up. */
	if (ret == SLAT_E_AGAIN || ret == SLAT_E_NOMEM)
		c->faults[HYP_F_RETRY]++;
	else if (ret < 0)
		hyp_panic("stage-2 fault handling failed", (uint64_t)ret);
}
