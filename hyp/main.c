/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp's boot: EL2's own translation (an identity map, so that the
 * tables and the vCPUs' locks live in cacheable memory), the guest's
 * device tree, the stage-2 table, each CPU's EL2 controls, then the
 * guest's kernel at EL1.
 */
#include "hyp.h"

void *memcpy(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);

struct hyp_cpu hyp_cpus[HYP_MAX_CPUS];
/* Whole pages, so whole cache lines: a CPU invalidates its own stack
 * before its MMU goes on (start.S), and no one else's data with it. By
 * CPU index; the boot CPU starts on its own (start.S), since its index
 * is known only once the device tree is read. */
uint8_t hyp_stacks[HYP_MAX_CPUS][16384] __attribute__((aligned(4096)));
uint8_t hyp_boot_stack[16384] __attribute__((aligned(4096)));
uint64_t hyp_psci_smc;
static uint64_t boot_counter;

struct hyp_cpu *hyp_this_cpu(void)
{
	return (struct hyp_cpu *)read_sysreg(tpidr_el2);
}

uint64_t hyp_counter_ms(void)
{
	uint64_t freq = read_sysreg(cntfrq_el0);

	isb();
	return (read_sysreg(cntpct_el0) - boot_counter) / (freq / 1000);
}

/**
 * hyp_vcount() - the virtual counter, CNTVCT_EL0
 *
 * The guest's own time base (CNTVOFF_EL2 is 0): phases measured with it
 * compare with the guest's clock. The ISB keeps the read from being
 * taken early, before the work it times.
 */
uint64_t hyp_vcount(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}

/**
 * hyp_ticks_us() - counter ticks in microseconds
 * @ticks: a difference of two counter reads
 */
uint64_t hyp_ticks_us(uint64_t ticks)
{
	return ticks * 1000000 / read_sysreg(cntfrq_el0);
}

/* ------------------------------------------------------- the CPUs */

/*
 * A CPU's index, the slot of its struct hyp_cpu and its stack, is its
 * place among the device tree's CPU nodes, whose reg is the whole MPIDR_EL1
 * affinity: Aff3 [39:32], Aff2 [23:16], Aff1 [15:8], Aff0 [7:0] (Arm ARM
 * D24.2, MPIDR_EL1). Aff0 alone names a CPU only within its cluster.
 */
#define MPIDR_AFFINITY	0xff00ffffffull

static uint64_t cpu_affinity[HYP_MAX_CPUS];
static uint32_t nr_cpus;

static void cpus_init(const void *fdt)
{
	int n = fdt_cpu_ids(fdt, cpu_affinity, HYP_MAX_CPUS);

	if (n <= 0)
		hyp_panic("no /cpus in the device tree, or more CPUs than "
			  "HYP_MAX_CPUS; returned", (uint64_t)n);
	nr_cpus = (uint32_t)n;
	for (uint32_t i = 0; i < nr_cpus; i++) {
		if (cpu_affinity[i] & ~MPIDR_AFFINITY)
			hyp_panic("a CPU node's reg is not an MPIDR affinity",
				  cpu_affinity[i]);
		for (uint32_t j = 0; j < i; j++)
			if (cpu_affinity[j] == cpu_affinity[i])
				hyp_panic("two CPU nodes with reg",
					  cpu_affinity[i]);
	}
}

/**
 * hyp_cpu_index() - the index of the CPU with this affinity
 * @mpidr: an MPIDR_EL1 value, or a PSCI target_cpu (its affinity fields)
 *
 * Return: the CPU's index, or -1 when no CPU node of the device tree has
 * that affinity.
 */
int hyp_cpu_index(uint64_t mpidr)
{
	for (uint32_t i = 0; i < nr_cpus; i++)
		if (cpu_affinity[i] == (mpidr & MPIDR_AFFINITY))
			return (int)i;
	return -1;
}

/* This CPU's index; a CPU the device tree does not name stops the run. */
static uint32_t this_cpu_index(void)
{
	uint64_t mpidr = read_sysreg(mpidr_el1);
	int i = hyp_cpu_index(mpidr);

	if (i < 0)
		hyp_panic("no CPU node in the device tree for MPIDR_EL1", mpidr);
	return (uint32_t)i;
}

/* --------------------------------------------------- EL2's own map */

/*
 * A libslat table of EL2's own regime (arm-s1, SLAT_FEAT_S1_EL2: HCR_EL2.E2H
 * is 0), a 32-bit VA (TCR_EL2.T0SZ = 32) from a level-1 root of four
 * entries, VA == PA, covering only what slat-hyp touches: the RAM QEMU's
 * device tree names in its memory nodes (below 4 GiB), Normal write-back,
 * and the two devices slat-hyp drives, Device-nGnRE: the PL011 it prints
 * to and the GICv3 redistributors it kicks and emulates. Any other access
 * from EL2 is a translation fault (hyp_el2_fault).
 */
#define SCTLR_EL2_RES1	0x30c50830ull
#define SCTLR_M		(1ull << 0)
#define SCTLR_C		(1ull << 2)
#define SCTLR_I		(1ull << 12)

static struct slat_table hyp_el2;
static struct slat_mm_ops el2_mm_ops;
/* Computed once, before the MMU is on: the secondary CPUs read them with
 * theirs still off (start.S, hyp_el2_mmu_enable), and memory keeps what
 * was written then, whatever a cache holds. Aligned for those loads: an
 * unaligned access to Device memory faults. */
struct hyp_el2_regs hyp_el2_regs __attribute__((aligned(64)));
_Static_assert(offsetof(struct hyp_el2_regs, sctlr) == 24,
	       "start.S loads the four registers in pairs");

/* The table never changes once built; if it did, every CPU's EL2 entries
 * would go (the stage-2 hooks' TLBIs are the guest's, not EL2's). */
static void el2_tlbi_all(void)
{
	dsb(ishst);
	__asm__ volatile("tlbi alle2is" ::: "memory");
	dsb(ish);
	isb();
}

static void el2_tlbi_va(void *ctx, slat_ipa_t va, int level,
			enum slat_tlbi_scope scope)
{
	(void)ctx, (void)va, (void)level, (void)scope;
	el2_tlbi_all();
}

static void el2_tlbi_range(void *ctx, slat_ipa_t va, uint64_t size)
{
	(void)ctx, (void)va, (void)size;
	el2_tlbi_all();
}

static void el2_tlbi_vmid(void *ctx)
{
	(void)ctx;
	el2_tlbi_all();
}

/*
 * Built with the MMU off, where memory is Device: the table pages come
 * from this array (in .bss, invalidated with the image before the MMU
 * goes on), never from the pool, whose lock is an atomic that Device
 * memory need not support. Blocks need none; the devices' pages need a
 * level-2 and a level-3 table or two.
 */
#define EL2_TABLE_PAGES	8
#define EL2_RANGES	8

static uint8_t el2_pages[EL2_TABLE_PAGES][HYP_GRANULE]
	__attribute__((aligned(4096)));
static void *el2_cache_pages[EL2_TABLE_PAGES];
static struct slat_page_cache el2_cache;
static uint32_t el2_pages_used, el2_refcounts[EL2_TABLE_PAGES];

/* What the map holds, printed once the MMU is on. */
static struct el2_range {
	uint64_t base, size;
	bool device;
} el2_ranges[EL2_RANGES];
static uint32_t el2_nr_ranges;

static uint32_t *el2_refcount(void *ctx, void *va)
{
	(void)ctx;
	return &el2_refcounts[((uint8_t *)va - el2_pages[0]) / HYP_GRANULE];
}

static uint32_t *el2_refcount_array(void *ctx, uintptr_t *first_page)
{
	(void)ctx;
	*first_page = (uintptr_t)el2_pages[0];
	return el2_refcounts;
}

/* [@base, @base + @size), granule-aligned, into EL2's map. */
static void el2_map(uint64_t base, uint64_t size, uint32_t attrs)
{
	struct slat_need req = {
		.kind = SLAT_OP_MAP, .ipa = slat_ipa(base), .size = size,
		.pa = slat_pa(base), .attrs = attrs,
	};
	int64_t need = slat_pages_needed(&hyp_el2, &req);
	int ret;

	if (need < 0 || el2_pages_used + (uint64_t)need > EL2_TABLE_PAGES ||
	    el2_nr_ranges == EL2_RANGES)
		hyp_panic("EL2's map: no room for the range at", base);
	while (el2_cache.nr < need)
		el2_cache.pages[el2_cache.nr++] = el2_pages[el2_pages_used++];
	ret = slat_map(&hyp_el2, slat_ipa(base), size, slat_pa(base), attrs,
		       SLAT_OP(.cache = &el2_cache));
	if (ret != SLAT_OK)
		hyp_panic("EL2's map: slat_map", (uint64_t)ret);
	el2_ranges[el2_nr_ranges++] = (struct el2_range){
		base, size, attrs & SLAT_MT_DEVICE };
}

/* Each range of the device tree's memory nodes below EL2's 4 GiB, its
 * partial pages left out. */
static void el2_map_ram(const void *fdt)
{
	uint64_t base, size;

	for (uint32_t i = 0; !fdt_memory_reg(fdt, i, &base, &size); i++) {
		uint64_t end = base + size > HYP_RAM_LIMIT ? HYP_RAM_LIMIT
							   : base + size;

		base = (base + HYP_GRANULE - 1) & ~(HYP_GRANULE - 1);
		end &= ~(HYP_GRANULE - 1);
		if (base < end)
			el2_map(base, end - base, SLAT_RWX | SLAT_MT_NORMAL);
	}
	if (!el2_nr_ranges)
		hyp_panic("no RAM below 4 GiB in the device tree", 0);
}

/* With the MMU off: slat-hyp's pool hooks but for the table pages, EL2's
 * own invalidations. */
static void el2_map_build(const void *fdt)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S1, .granule = HYP_GRANULE,
		.ia_bits = 32, .pa_bits = 32, .features = SLAT_FEAT_S1_EL2,
	};
	uint64_t gicr, gicr_size;
	int ret;

	el2_mm_ops = hyp_mm_ops;
	el2_mm_ops.tlbi_ipa = el2_tlbi_va;
	el2_mm_ops.tlbi_range = el2_tlbi_range;
	el2_mm_ops.tlbi_vmid = el2_tlbi_vmid;
	el2_mm_ops.refcount = el2_refcount;
	el2_mm_ops.refcount_array = el2_refcount_array;
	slat_page_cache_init(&el2_cache, el2_cache_pages, EL2_TABLE_PAGES);
	ret = slat_table_init(&hyp_el2, &cfg, &el2_mm_ops, NULL);
	if (ret != SLAT_OK)
		hyp_panic("EL2's map: slat_table_init", (uint64_t)ret);
	el2_map_ram(fdt);
	el2_map(HYP_UART, HYP_GRANULE, SLAT_RW | SLAT_MT_DEVICE);
	hyp_gic_redist_region(&gicr, &gicr_size);
	if (gicr_size >= HYP_RAM_LIMIT || gicr >= HYP_RAM_LIMIT - gicr_size)
		hyp_panic("redistributors out of EL2's 4 GiB, at", gicr);
	el2_map(gicr, gicr_size, SLAT_RW | SLAT_MT_DEVICE);
	hyp_el2_regs = (struct hyp_el2_regs){
		.mair = slat_arm_s1_mair(),
		.tcr = slat_arm_s1_tcr_el2(&hyp_el2),
		.ttbr = slat_arm_s1_ttbr_el2(&hyp_el2, false),
		.sctlr = SCTLR_EL2_RES1 | SCTLR_M | SCTLR_C | SCTLR_I,
	};
}

/* With the MMU on: the map as built, for the test to check. */
static void el2_map_report(void)
{
	hyp_puts("slat-hyp: EL2 map: libslat arm-s1 (EL2), TCR_EL2 ");
	hyp_putx(hyp_el2_regs.tcr);
	hyp_puts(" TTBR0_EL2 ");
	hyp_putx(hyp_el2_regs.ttbr);
	hyp_puts(", table pages ");
	hyp_putu(el2_pages_used);
	hyp_puts(":");
	for (uint32_t i = 0; i < el2_nr_ranges; i++) {
		hyp_puts(el2_ranges[i].device ? " device " : " RAM ");
		hyp_putx(el2_ranges[i].base);
		hyp_puts("-");
		hyp_putx(el2_ranges[i].base + el2_ranges[i].size);
	}
	hyp_puts("\n");
}

/*
 * Before CPU 0's MMU goes on. With it off, EL2's data accesses are
 * Device-nGnRnE (Arm ARM D8.2.12.1): what CPU 0 wrote so far (.bss, its
 * stack, .data, EL2's table), and what the loader wrote (the image, the
 * parameters, QEMU's device tree), went past the caches, and once the MMU
 * is on the same locations are read as Normal write-back. A line an
 * earlier user of this memory left in a cache would then hide what memory
 * holds (mismatched attributes, B2.11), so each range is invalidated to
 * the PoC first (DC IVAC, hyp_dcache_inval_poc). Nothing else runs yet:
 * no line can come back before the MMU is on. Whatever loaded slat-hyp
 * is taken to have cleaned the image to the PoC, as a boot loader must,
 * so no dirty line is dropped.
 */
struct inval_range {
	const char *what;
	uint64_t start, end;
};

static struct inval_range boot_inval[4];

static void boot_inval_poc(void)
{
	size_t root_bytes;
	uint64_t root = (uint64_t)slat_table_root(&hyp_el2, NULL, &root_bytes);
	const void *qemu_dtb = (const void *)HYP_QEMU_DTB;

	boot_inval[0] = (struct inval_range){ "image, .data, .bss, stacks",
					      HYP_IMAGE, (uint64_t)__bss_end };
	boot_inval[1] = (struct inval_range){ "EL2 table", root,
					      root + root_bytes };
	boot_inval[2] = (struct inval_range){ "parameters", HYP_PARAMS,
					      HYP_PARAMS + HYP_GRANULE };
	boot_inval[3] = (struct inval_range){ "QEMU's device tree",
					      HYP_QEMU_DTB,
					      HYP_QEMU_DTB + fdt_size(qemu_dtb) };
	for (int i = 0; i < 4; i++)
		hyp_dcache_inval_poc(boot_inval[i].start, boot_inval[i].end);
}

/* With the MMU on: each range as invalidated, for the test to check. */
static void boot_inval_report(void)
{
	hyp_puts("slat-hyp: invalidated to the PoC before the MMU went on:");
	for (int i = 0; i < 4; i++) {
		hyp_puts(i ? ", " : " ");
		hyp_puts(boot_inval[i].what);
		hyp_puts(" ");
		hyp_putx(boot_inval[i].start);
		hyp_puts("-");
		hyp_putx(boot_inval[i].end);
	}
	hyp_puts("\n");
}

/* ------------------------------------------------ EL2's controls */

#define HCR_VM		(1ull << 0)
#define HCR_SWIO	(1ull << 1)
#define HCR_FB		(1ull << 9)
#define HCR_BSU_IS	(1ull << 10)
#define HCR_TSC		(1ull << 19)
#define HCR_RW		(1ull << 31)
#define HCR_APK		(1ull << 40)
#define HCR_API		(1ull << 41)
/* The guest at EL1 in AArch64 on stage 2; its SMCs trapped (PSCI);
 * interrupts (IMO/FMO/AMO clear) and pointer authentication its own. */
#define HCR_GUEST (HCR_VM | HCR_SWIO | HCR_FB | HCR_BSU_IS | HCR_TSC | \
		   HCR_RW | HCR_APK | HCR_API)

/*
 * The traps of the guest's debug, PMU, AArch32 system register, FP, SVE
 * and SME accesses: none, since slat-hyp handles none of them, and no
 * register left at its UNKNOWN reset value (Arm ARM D24.2: MDCR_EL2,
 * HSTR_EL2, CPTR_EL2, ZCR_EL2, SMCR_EL2). ID_AA64PFR0_EL1.SVE [35:32] and
 * ID_AA64PFR1_EL1.SME [27:24] say whether ZCR_EL2 and SMCR_EL2 exist: an
 * access to either is UNDEFINED without its feature.
 */
#define MDCR_HPMN(n)	((n) & 0x1full)
#define MDCR_E2PB_EL1	(3ull << 12)	/* SPE's buffer: EL1's, no trap */
#define MDCR_E2TB_EL1	(3ull << 24)	/* TRBE's buffer: EL1's, no trap */
#define CPTR_RES1	0x22ffull	/* [13], [9], [7:0] */
#define CPTR_TZ		(1ull << 8)	/* RES1 without SVE */
#define CPTR_TSM	(1ull << 12)	/* RES1 without SME */
#define ZCR_LEN_MAX	0xfull	/* the longest vector the PE has */
#define SMCR_FA64	(1ull << 31)
#define SMCR_EZT0	(1ull << 30)

static uint64_t el2_mdcr(void)
{
	uint64_t dfr0 = read_sysreg(id_aa64dfr0_el1), mdcr = 0;
	uint64_t pmuver = (dfr0 >> 8) & 0xf;

	/* HPMN = PMCR_EL0.N: every event counter is EL1's and EL0's; HPME,
	 * TPM, TPMCR, TDE, TDA, TDOSA, TDRA, TPMS, TTRF clear. */
	if (pmuver && pmuver != 0xf)
		mdcr |= MDCR_HPMN(read_sysreg(pmcr_el0) >> 11);
	if ((dfr0 >> 32) & 0xf)		/* PMSVer: FEAT_SPE */
		mdcr |= MDCR_E2PB_EL1;
	if ((dfr0 >> 44) & 0xf)		/* TraceBuffer: FEAT_TRBE */
		mdcr |= MDCR_E2TB_EL1;
	return mdcr;
}

static void cpu_init_traps(void)
{
	bool sve = (read_sysreg(id_aa64pfr0_el1) >> 32) & 0xf;
	uint64_t sme = (read_sysreg(id_aa64pfr1_el1) >> 24) & 0xf;
	uint64_t smcr = ZCR_LEN_MAX;

	write_sysreg(mdcr_el2, el2_mdcr());
	write_sysreg(hstr_el2, 0);
	/* TFP, TTA, TAM, TCPAC clear; TZ and TSM too where they exist. */
	write_sysreg(cptr_el2, CPTR_RES1 | (sve ? 0 : CPTR_TZ) |
			       (sme ? 0 : CPTR_TSM));
	isb();
	if (sve)
		write_sysreg(s3_4_c1_c2_0, ZCR_LEN_MAX);	/* ZCR_EL2 */
	if (!sme)
		return;
	/* ID_AA64SMFR0_EL1.FA64 [63]; EZT0 with SME2 (SME >= 2). */
	if (read_sysreg(s3_0_c0_c4_5) >> 63)
		smcr |= SMCR_FA64;
	if (sme >= 2)
		smcr |= SMCR_EZT0;
	write_sysreg(s3_4_c1_c2_6, smcr);			/* SMCR_EL2 */
}

/* [snippet:el2-controls] */
static void cpu_init_el2(struct hyp_cpu *c)
{
	write_sysreg(tpidr_el2, (uint64_t)c);
	c->mpidr = read_sysreg(mpidr_el1);
	c->gicr = hyp_gic_redist(c->mpidr);
	cpu_init_traps();
	/* GICv3 system registers for EL1 (Enable, SRE), no virtual CPU
	 * interface: the guest drives the physical one. */
	write_sysreg(s3_4_c12_c9_5, 0xfull);	/* ICC_SRE_EL2 */
	isb();
	write_sysreg(s3_4_c12_c11_0, 0);	/* ICH_HCR_EL2 */
	/* EL1 gets the physical counter and timer, no virtual offset. */
	write_sysreg(cnthctl_el2, 3);
	write_sysreg(cntvoff_el2, 0);
	write_sysreg(vpidr_el2, read_sysreg(midr_el1));
	write_sysreg(vmpidr_el2, read_sysreg(mpidr_el1));
	write_sysreg(sctlr_el1, 0x30d00800ull); /* RES1, MMU off */
	write_sysreg(vtcr_el2, slat_arm_s2_vtcr(&hyp_s2, false));
	write_sysreg(vttbr_el2, slat_arm_s2_vttbr(&hyp_s2, 1, false));
	isb();
	__asm__ volatile("tlbi vmalls12e1" ::: "memory");
	dsb(nsh);
	write_sysreg(hcr_el2, HCR_GUEST);
	isb();
	c->online = true;
}
/* [end] */

static void put_reg(const char *name, uint64_t v)
{
	hyp_puts(name);
	hyp_putx(v);
}

/* The trap controls as the boot CPU set them, for the test to check. */
static void el2_traps_report(void)
{
	put_reg("slat-hyp: MDCR_EL2 ", read_sysreg(mdcr_el2));
	put_reg(" HSTR_EL2 ", read_sysreg(hstr_el2));
	put_reg(" CPTR_EL2 ", read_sysreg(cptr_el2));
	put_reg(" ID_AA64PFR0_EL1 ", read_sysreg(id_aa64pfr0_el1));
	put_reg(" ID_AA64DFR0_EL1 ", read_sysreg(id_aa64dfr0_el1));
	if (MDCR_HPMN(el2_mdcr()))
		put_reg(" PMCR_EL0 ", read_sysreg(pmcr_el0));
	if ((read_sysreg(id_aa64pfr0_el1) >> 32) & 0xf)
		put_reg(" ZCR_EL2 ", read_sysreg(s3_4_c1_c2_0));
	if ((read_sysreg(id_aa64pfr1_el1) >> 24) & 0xf)
		put_reg(" SMCR_EL2 ", read_sysreg(s3_4_c1_c2_6));
	hyp_puts("\n");
}

/* ------------------------------------------------ the device tree */

static uint8_t dtb[256 * 1024] __attribute__((aligned(8)));

static void be64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static void set_u64(const char *node, const char *name, uint64_t a)
{
	uint8_t v[8];

	be64_put(v, a);
	if (fdt_set_prop(dtb, node, name, v, 8))
		hyp_panic("device tree full", 0);
}

static uint32_t str_size(const char *s)
{
	uint32_t n = 0;

	while (s[n])
		n++;
	return n + 1;
}

struct hyp_layout hyp_mem;

#define SZ_2M	0x200000ull

/*
 * The layout from the tree's RAM (virt: one /memory, 2-cell addresses
 * and sizes, from HYP_RAM_BASE). The guest gets it all but slat-hyp's
 * fixed part; with the dirty-log check, the top half goes to the shadow
 * instead, the guest's RAM (the hole included) the bottom half.
 */
static void layout(uint64_t log_mode)
{
	uint64_t base, size, end;

	if (fdt_memory_reg(dtb, 0, &base, &size) || base != HYP_RAM_BASE ||
	    !fdt_memory_reg(dtb, 1, &base, &size))
		hyp_panic("the device tree's memory is not one range at",
			  HYP_RAM_BASE);
	end = base + size;
	hyp_mem.ram_end = end > HYP_RAM_LIMIT ? HYP_RAM_LIMIT : end;
	hyp_mem.guest_end = hyp_mem.ram_end & ~(SZ_2M - 1);
	if (log_mode) {
		hyp_mem.guest_end = (HYP_RAM_BASE +
				     (hyp_mem.ram_end - HYP_RAM_BASE) / 2) &
				    ~(SZ_2M - 1);
		hyp_mem.shadow = hyp_mem.guest_end;
		if (hyp_mem.guest_end - HYP_RAM_BASE > HYP_LOG_SPAN_MAX)
			hyp_panic("guest RAM past the log's bitmaps, ends at",
				  hyp_mem.guest_end);
	}
	/* At least some guest RAM above slat-hyp's part: below it, the
	 * kernel, the initramfs and the tree are where run.sh put them. */
	if (hyp_mem.guest_end <= HYP_OWN_END)
		hyp_panic("too little RAM for the guest and slat-hyp, ends at",
			  end);
}

/* The guest's /memory: its RAM as two ranges, around slat-hyp's part. */
static void guest_memory(void)
{
	uint8_t v[32];

	be64_put(v, HYP_RAM_BASE);
	be64_put(v + 8, HYP_OWN - HYP_RAM_BASE);
	be64_put(v + 16, HYP_OWN_END);
	be64_put(v + 24, hyp_mem.guest_end - HYP_OWN_END);
	if (fdt_set_prop(dtb, "/memory", "reg", v, 32))
		hyp_panic("device tree full", 0);
}

/* The guest's tree: RAM without slat-hyp's part, the initramfs, bootargs. */
static void guest_dtb(const struct hyp_params *p)
{
	/* Unknown name=value words reach /init's environment. /init reads
	 * the redistributor with devmem, in a region the GIC's driver holds:
	 * iomem=relaxed lets root map it. */
	const char *bootargs =
		p->demo ? "console=ttyAMA0 panic=-1 iomem=relaxed rdinit=/init "
			  "SLAT_HYP_DEMO=1"
		: p->log_mode ? "console=ttyAMA0 panic=-1 quiet iomem=relaxed "
				"rdinit=/init SLAT_HYP_LOG=1"
		: "console=ttyAMA0 panic=-1 quiet iomem=relaxed rdinit=/init";
	const void *method;
	uint32_t len;

	if (fdt_load((const void *)HYP_QEMU_DTB, dtb, sizeof(dtb)))
		hyp_panic("no device tree at", HYP_QEMU_DTB);
	layout(p->log_mode);
	guest_memory();
	set_u64("/chosen", "linux,initrd-start", HYP_INITRD);
	set_u64("/chosen", "linux,initrd-end", HYP_INITRD + p->initrd_size);
	if (fdt_set_prop(dtb, "/chosen", "bootargs", bootargs,
			 str_size(bootargs)))
		hyp_panic("device tree full", 0);
	method = fdt_get_prop(dtb, "/psci", "method", &len);
	hyp_psci_smc = method && len == 4 && !memcmp(method, "smc", 4);
	if (!hyp_psci_smc)
		hyp_panic("PSCI conduit is not SMC", 0);
	if (p->idle_states && hyp_psci_idle_states(dtb))
		hyp_panic("no idle states in the device tree", 0);
	/* No LPIs for the guest (gic.c): its tree has no ITS, and then no
	 * device window for the ITS's frames either; and its PCIe bridge no
	 * MSI controller, so that its devices take wired interrupts. */
	if (fdt_get_prop(dtb, "/intc/its", "reg", &len) &&
	    fdt_set_prop(dtb, "/intc/its", "status", "disabled", 9))
		hyp_panic("device tree full", 0);
	fdt_del_prop(dtb, "/pcie", "msi-map");
	fdt_del_prop(dtb, "/pcie", "msi-map-mask");
	fdt_del_prop(dtb, "/pcie", "msi-parent");
	memcpy((void *)HYP_GUEST_DTB, dtb, fdt_size(dtb));
	/* The guest reads it with its MMU off, past the caches. */
	hyp_dcache_clean_poc(HYP_GUEST_DTB, fdt_size(dtb));
}

/* ------------------------------------------------------- entries */

static void cpus_report(const struct hyp_cpu *boot)
{
	hyp_puts("slat-hyp: CPUs (MPIDR affinity, from the DTB):");
	for (uint32_t i = 0; i < nr_cpus; i++) {
		hyp_puts(" ");
		hyp_putx(cpu_affinity[i]);
	}
	hyp_puts("; booted on cpu");
	hyp_putu(boot->index);
	hyp_puts("\n");
}

void hyp_main(void);
void hyp_el2_fault(uint64_t esr, uint64_t elr, uint64_t far);

void hyp_main(void)
{
	const struct hyp_params *p = (const struct hyp_params *)HYP_PARAMS;
	const void *qemu_dtb = (const void *)HYP_QEMU_DTB;
	struct hyp_cpu *c;

	boot_counter = read_sysreg(cntpct_el0);
	/* With the MMU off: QEMU's tree read in place, for the CPUs, the
	 * redistributors and the RAM that EL2's map covers. */
	cpus_init(qemu_dtb);
	for (uint64_t i = 0; i < HYP_MAX_CPUS; i++)
		hyp_cpus[i].index = i;
	c = &hyp_cpus[this_cpu_index()];
	write_sysreg(tpidr_el2, (uint64_t)c);
	hyp_gic_init(qemu_dtb);
	el2_map_build(qemu_dtb);
	boot_inval_poc();
	hyp_el2_mmu_enable();
	hyp_puts("slat-hyp: EL2 up, libslat ");
	hyp_puts(SLAT_VERSION_STRING);
	hyp_puts("\n");
	el2_map_report();
	boot_inval_report();
	cpus_report(c);
	for (int i = 0; i < HYP_MAX_CPUS; i++) {
		struct hyp_cpu *cpu = &hyp_cpus[i];

		slat_page_cache_init(&cpu->cache, cpu->cache_pages,
				     HYP_CACHE_PAGES);
		cpu->cache.stats = &cpu->stats;
	}
	hyp_psci_init(p->idle_states);
	guest_dtb(p);
	hyp_pool_init();
	hyp_log_init(p->log_mode);
	hyp_s2_init(dtb, p->hpfar_mode);
	hyp_log_boot_copy();
	cpu_init_el2(c);
	el2_traps_report();
	/* FEAT_S2FWB (ID_AA64MMFR2_EL1.FWB) goes unused: libslat cleans
	 * each new leaf's memory to the PoC, as without it. */
	hyp_puts("slat-hyp: ID_AA64MMFR2_EL1.FWB=");
	hyp_putu((read_sysreg(id_aa64mmfr2_el1) >> 40) & 0xf);
	hyp_puts(" (HCR_EL2.FWB left clear), CTR_EL0 ");
	hyp_putx(read_sysreg(ctr_el0));
	hyp_puts("\nslat-hyp: VTCR_EL2 ");
	hyp_putx(read_sysreg(vtcr_el2));
	hyp_puts(" VTTBR_EL2 ");
	hyp_putx(read_sysreg(vttbr_el2));
	hyp_puts("\nslat-hyp: RAM ");
	hyp_putx(HYP_RAM_BASE);
	hyp_puts("-");
	hyp_putx(hyp_mem.ram_end);
	hyp_puts(", guest RAM ");
	hyp_putx(HYP_RAM_BASE);
	hyp_puts("-");
	hyp_putx(hyp_mem.guest_end);
	hyp_puts(" but slat-hyp's ");
	hyp_putx(HYP_OWN);
	hyp_puts("-");
	hyp_putx(HYP_OWN_END);
	hyp_puts(", shadow ");
	hyp_putx(hyp_mem.shadow);
	hyp_puts(", unmapped; entering the kernel at EL1\n");
	hyp_eret_to_guest(HYP_KERNEL, HYP_GUEST_DTB);
}

/* A CPU that the guest's CPU_ON started, or that woke from a power-down
 * CPU_SUSPEND, its MMU on (start.S) after its stack, [@stack, @stack_end),
 * was invalidated: into the guest where it asked. */
void hyp_cpu_on_entry(uint64_t cpu, uint64_t stack, uint64_t stack_end)
{
	struct hyp_cpu *c = &hyp_cpus[cpu];

	/* PSCI started the CPU slat-hyp asked for, with its index. */
	if (this_cpu_index() != cpu)
		hyp_panic("a CPU started with the index of another, MPIDR_EL1",
			  read_sysreg(mpidr_el1));
	c->stack_inval[0] = stack;
	c->stack_inval[1] = stack_end;
	cpu_init_el2(c);
	if (c->suspended) {
		c->suspended = false;
		c->resumed++;
	}
	hyp_eret_to_guest(c->guest_entry, c->guest_ctx);
}

void hyp_el2_fault(uint64_t esr, uint64_t elr, uint64_t far)
{
	hyp_puts("\nslat-hyp: exception at EL2: ELR_EL2 ");
	hyp_putx(elr);
	hyp_puts(" FAR_EL2 ");
	hyp_putx(far);
	hyp_panic("ESR_EL2", esr);
}
