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
uint8_t hyp_stacks[HYP_MAX_CPUS][16384] __attribute__((aligned(16)));
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

/* --------------------------------------------------- EL2's own map */

/*
 * A level-1 table (TCR_EL2.T0SZ = 32: 4 GiB of VA, 1 GiB blocks): the
 * devices below 1 GiB as Device-nGnRE, [1 GiB, 4 GiB) Normal write-back,
 * inner shareable, VA == PA. It is mapped before the tree says how much
 * of it is RAM: slat-hyp touches only that part (hyp_mem).
 */
#define MAIR_EL2_VALUE	(0xffull | 0x04ull << 8) /* Attr0 WB, Attr1 nGnRE */
#define BLOCK_NORMAL	(0x1ull | 0ull << 2 | 1ull << 6 | 3ull << 8 | 1ull << 10)
#define BLOCK_DEVICE	(0x1ull | 1ull << 2 | 1ull << 6 | 1ull << 10 | 1ull << 54)
#define TCR_EL2_VALUE	(32ull | 1ull << 8 | 1ull << 10 | 3ull << 12 | \
			 1ull << 23 | 1ull << 31)
#define SCTLR_EL2_RES1	0x30c50830ull
#define SCTLR_M		(1ull << 0)
#define SCTLR_C		(1ull << 2)
#define SCTLR_I		(1ull << 12)

static uint64_t el2_l1[512] __attribute__((aligned(4096)));

static void el2_map_build(void)
{
	el2_l1[0] = 0x00000000ull | BLOCK_DEVICE;
	el2_l1[1] = 0x40000000ull | BLOCK_NORMAL;
	el2_l1[2] = 0x80000000ull | BLOCK_NORMAL;
	el2_l1[3] = 0xc0000000ull | BLOCK_NORMAL;
}

static void el2_mmu_on(void)
{
	write_sysreg(mair_el2, MAIR_EL2_VALUE);
	write_sysreg(tcr_el2, TCR_EL2_VALUE);
	write_sysreg(ttbr0_el2, (uint64_t)el2_l1);
	isb();
	__asm__ volatile("tlbi alle2" ::: "memory");
	dsb(nsh);
	isb();
	write_sysreg(sctlr_el2, SCTLR_EL2_RES1 | SCTLR_M | SCTLR_C | SCTLR_I);
	isb();
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

/* [snippet:el2-controls] */
static void cpu_init_el2(struct hyp_cpu *c)
{
	uint64_t cptr = 0x22ffull; /* RES1 bits; TFP, TZ, TTA, TCPAC clear */

	write_sysreg(tpidr_el2, (uint64_t)c);
	el2_mmu_on();
	c->mpidr = read_sysreg(mpidr_el1);
	c->gicr = hyp_gic_redist(c->mpidr);
	/* No SME: bit 12 (TSM) is RES1. */
	if (!((read_sysreg(id_aa64pfr1_el1) >> 24) & 0xf))
		cptr |= 1ull << 12;
	write_sysreg(cptr_el2, cptr);
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
	slat_page_cache_init(&c->cache, c->cache_pages, HYP_CACHE_PAGES);
	c->cache.stats = &c->stats;
	c->online = true;
}
/* [end] */

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

static uint64_t be64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
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
	uint32_t len;
	const uint8_t *reg = fdt_get_prop(dtb, "/memory", "reg", &len);
	uint64_t end;

	if (!reg || len != 16 || be64_get(reg) != HYP_RAM_BASE)
		hyp_panic("the device tree's /memory is not one range at",
			  HYP_RAM_BASE);
	end = be64_get(reg) + be64_get(reg + 8);
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
	/* Unknown name=value words reach /init's environment. */
	const char *bootargs =
		p->demo ? "console=ttyAMA0 panic=-1 rdinit=/init SLAT_HYP_DEMO=1"
		: p->log_mode ? "console=ttyAMA0 panic=-1 quiet rdinit=/init "
				"SLAT_HYP_LOG=1"
		: "console=ttyAMA0 panic=-1 quiet rdinit=/init";
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
	memcpy((void *)HYP_GUEST_DTB, dtb, fdt_size(dtb));
	/* The guest reads it with its MMU off, past the caches. */
	hyp_dcache_clean_poc(HYP_GUEST_DTB, fdt_size(dtb));
}

/* ------------------------------------------------------- entries */

void hyp_main(void);
void hyp_el2_fault(uint64_t esr, uint64_t elr, uint64_t far);

void hyp_main(void)
{
	const struct hyp_params *p = (const struct hyp_params *)HYP_PARAMS;
	struct hyp_cpu *c = &hyp_cpus[0];

	boot_counter = read_sysreg(cntpct_el0);
	for (uint64_t i = 0; i < HYP_MAX_CPUS; i++)
		hyp_cpus[i].index = i;
	el2_map_build();
	write_sysreg(tpidr_el2, (uint64_t)c);
	el2_mmu_on();
	hyp_puts("slat-hyp: EL2 up, libslat ");
	hyp_puts(SLAT_VERSION_STRING);
	hyp_puts("\n");
	guest_dtb(p);
	hyp_gic_init(dtb);
	hyp_pool_init();
	hyp_log_init(p->log_mode);
	hyp_s2_init(dtb);
	hyp_log_boot_copy();
	cpu_init_el2(c);
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

/* A CPU that the guest's CPU_ON started: into the guest where it asked. */
void hyp_cpu_on_entry(uint64_t cpu)
{
	struct hyp_cpu *c = &hyp_cpus[cpu];

	cpu_init_el2(c);
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
