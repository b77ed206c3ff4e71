/* SPDX-License-Identifier: MIT */
/*
 * The kick that stops a vCPU at once: a GICv3 SGI that slat-hyp sends
 * from EL2 and takes back before the guest can see it.
 *
 * The guest owns the GIC (HCR_EL2.IMO clear: its interrupts are taken at
 * EL1, never at EL2). So the SGI is the guest's kind of interrupt: the
 * target takes an IRQ exception at EL1 as soon as its PSTATE.I allows,
 * and with the page of its vectors unmapped (log.c) the fetch of the
 * vector is a stage-2 fault that parks it at EL2, before any guest code
 * could acknowledge the SGI. While the target is parked, slat-hyp clears
 * the SGI's pending state in the target's redistributor and puts back
 * what it changed; the guest's handler then reads INTID 1023 (spurious)
 * from ICC_IAR1_EL1, which it ignores.
 *
 * INTID 15: Linux uses SGIs 0 to 7 and leaves the rest disabled (the
 * Arm convention gives 8 to 15 to the secure world, which this machine
 * does not have). The kick enables it for the stop only, at a priority
 * lower than any the guest gives (but above its priority mask), so that
 * a guest handler already running when the kick lands acknowledges its
 * own interrupt first.
 */
#include "hyp.h"

#define KICK_INTID	15u
#define KICK_BIT	(1u << KICK_INTID)
#define KICK_PRIORITY	0xe0u	/* Linux: 0xa0 for all, PMR 0xf0 */
#define KICK_TIMEOUT_MS	1000

/* Redistributor frames: RD_base, then SGI_base 64 KiB on. */
#define GICR_CTLR	0x0000
#define GICR_TYPER	0x0008
#define GICR_SGI	0x10000
#define GICR_ISENABLER0	(GICR_SGI + 0x0100)
#define GICR_ICENABLER0	(GICR_SGI + 0x0180)
#define GICR_ISPENDR0	(GICR_SGI + 0x0200)
#define GICR_ICPENDR0	(GICR_SGI + 0x0280)
#define GICR_ISACTIVER0	(GICR_SGI + 0x0300)
#define GICR_IPRIORITYR(n) (GICR_SGI + 0x0400 + ((n) & ~3u))
#define CTLR_RWP	(1u << 3)
#define TYPER_VLPIS	(1ull << 1)
#define TYPER_LAST	(1ull << 4)

static uint64_t gicr_base, gicr_size;

static uint32_t rd32(uint64_t a)
{
	return *(volatile uint32_t *)a;
}

static void wr32(uint64_t a, uint32_t v)
{
	*(volatile uint32_t *)a = v;
}

/**
 * hyp_gic_init() - find the redistributors in the device tree
 * @fdt: the guest's device tree
 *
 * The GICv3 node's second reg entry is the redistributor region (one
 * region on virt).
 */
void hyp_gic_init(const void *fdt)
{
	if (fdt_compatible_reg(fdt, "arm,gic-v3", 1, &gicr_base, &gicr_size))
		hyp_panic("no GICv3 redistributor region in the device tree", 0);
}

/* GICR_TYPER's affinity field is Aff3.Aff2.Aff1.Aff0. */
static uint64_t typer_affinity(uint64_t mpidr)
{
	return (mpidr & 0xffffff) | ((mpidr >> 8) & 0xff000000);
}

/**
 * hyp_gic_redist() - this CPU's redistributor, by its affinity
 * @mpidr: the CPU's MPIDR_EL1
 *
 * Return: the RD_base of the frame whose GICR_TYPER names @mpidr.
 */
uint64_t hyp_gic_redist(uint64_t mpidr)
{
	uint64_t want = typer_affinity(mpidr) << 32;

	for (uint64_t a = gicr_base; a < gicr_base + gicr_size;) {
		uint64_t typer = *(volatile uint64_t *)(a + GICR_TYPER);

		if ((typer & ~0xffffffffull) == want)
			return a;
		if (typer & TYPER_LAST)
			break;
		/* Two 64 KiB frames, four with virtual LPIs. */
		a += (typer & TYPER_VLPIS) ? 0x40000 : 0x20000;
	}
	hyp_panic("no redistributor for MPIDR", mpidr);
}

/* ICC_SGI1R_EL1 for one target: INTID, Aff3.Aff2.Aff1, RS, target list. */
static uint64_t sgi1r(uint64_t mpidr)
{
	uint64_t aff0 = mpidr & 0xff;

	return (uint64_t)KICK_INTID << 24 | ((mpidr >> 8) & 0xff) << 16 |
	       ((mpidr >> 16) & 0xff) << 32 | ((mpidr >> 32) & 0xff) << 48 |
	       (aff0 >> 4) << 44 | 1ull << (aff0 & 15);
}

/**
 * hyp_gic_kick() - make a vCPU take an exception now
 * @c: the vCPU, not this one
 *
 * Its SGI 15 enabled at KICK_PRIORITY (the guest's setting kept for
 * hyp_gic_unkick()), then sent. The redistributor writes are ordered
 * before the SGI by the DSB.
 */
void hyp_gic_kick(struct hyp_cpu *c)
{
	uint64_t prio = c->gicr + GICR_IPRIORITYR(KICK_INTID);
	uint32_t shift = 8 * (KICK_INTID & 3), v = rd32(prio);

	c->kick_saved_priority = (v >> shift) & 0xff;
	wr32(prio, (v & ~(0xffu << shift)) | KICK_PRIORITY << shift);
	wr32(c->gicr + GICR_ISENABLER0, KICK_BIT);
	dsb(sy);
	write_sysreg(s3_0_c12_c11_5, sgi1r(c->mpidr)); /* ICC_SGI1R_EL1 */
	isb();
	c->kicks++;
}

/**
 * hyp_gic_unkick() - take the kick back from a parked vCPU
 * @c: the vCPU, parked at EL2
 *
 * Waits until the SGI has reached the redistributor (its delivery is
 * asynchronous to the write that sent it), then disables it, waits for
 * the disable to take effect (GICR_CTLR.RWP), clears it and puts the
 * guest's priority back. If the guest acknowledged it after all (it was
 * in a handler with an interrupt that went away), it is active, not
 * pending: counted, left to the guest.
 */
void hyp_gic_unkick(struct hyp_cpu *c)
{
	uint64_t t0 = hyp_counter_ms(), prio;
	uint32_t shift = 8 * (KICK_INTID & 3);

	while (!((rd32(c->gicr + GICR_ISPENDR0) |
		  rd32(c->gicr + GICR_ISACTIVER0)) & KICK_BIT))
		if (hyp_counter_ms() - t0 > KICK_TIMEOUT_MS)
			hyp_panic("the kick never arrived at vCPU", c->index);
	if (!(rd32(c->gicr + GICR_ISPENDR0) & KICK_BIT))
		c->kicks_seen++;
	wr32(c->gicr + GICR_ICENABLER0, KICK_BIT);
	while (rd32(c->gicr + GICR_CTLR) & CTLR_RWP)
		__asm__ volatile("yield");
	wr32(c->gicr + GICR_ICPENDR0, KICK_BIT);
	prio = c->gicr + GICR_IPRIORITYR(KICK_INTID);
	wr32(prio, (rd32(prio) & ~(0xffu << shift)) |
			   c->kick_saved_priority << shift);
	dsb(sy);
}

/* ------------------------------------------- the redistributors' LPIs */

/*
 * The redistributors and the ITS are DMA masters: with LPIs enabled, a
 * redistributor reads and writes the LPI property and pending tables at
 * the PAs GICR_PROPBASER and GICR_PENDBASER name, and the ITS its tables
 * and command queue (GITS_BASER<n>, GITS_CBASER), none of it through
 * stage 2. A guest given them could have the GIC write slat-hyp's own
 * memory. So the guest gets no LPIs: its tree has no ITS (the node is
 * disabled, and stage 2 maps no window for it), and the frames of the
 * redistributors that hold those registers, RD_base and (GICv4) VLPI_base,
 * are never mapped either: each access traps and is emulated here, with
 * GICR_TYPER.PLPIS and DirectLPI cleared, GICR_CTLR.EnableLPIs never set,
 * and the LPI registers read as zero and ignoring writes, as on a GIC
 * without physical LPIs. SGI_base, the SGIs' and PPIs' own registers,
 * stays passed through. (GICv3 and GICv4 architecture specification, Arm
 * IHI 0069: GICR_TYPER, GICR_CTLR, GICR_PROPBASER, GICR_PENDBASER.)
 */
#define FRAME		0x10000ull
#define GICR_IIDR	0x0004
#define GICR_STATUSR	0x0010
#define GICR_WAKER	0x0014
#define GICR_ID_REGS	0xffd0	/* GICR_PIDR4 to GICR_CIDR3 */
#define CTLR_ENABLE_LPIS (1u << 0)
#define TYPER_PLPIS	(1ull << 0)
#define TYPER_DIRECT_LPI (1ull << 3)

/**
 * hyp_gic_redist_region() - the redistributor region, which stage 2
 *	never maps but for the SGI_base frames
 * @base: set to its base
 * @size: set to its size
 */
void hyp_gic_redist_region(uint64_t *base, uint64_t *size)
{
	*base = gicr_base;
	*size = gicr_size;
}

/* The RD_base of the redistributor whose frames hold @pa, 0 for none
 * (past the last one, GICR_TYPER.Last), and its frames' span. */
static uint64_t redist_of(uint64_t pa, uint64_t *span)
{
	for (uint64_t a = gicr_base; a < gicr_base + gicr_size;) {
		uint64_t typer = *(volatile uint64_t *)(a + GICR_TYPER);

		*span = (typer & TYPER_VLPIS) ? 4 * FRAME : 2 * FRAME;
		if (pa - a < *span)
			return a;
		if (typer & TYPER_LAST)
			break;
		a += *span;
	}
	return 0;
}

/**
 * hyp_gic_sgi_frame() - the SGI_base frame that holds @pa, if any
 * @pa: an address in the redistributor region
 *
 * Return: the frame's base, or 0: @pa is in a frame slat-hyp emulates.
 */
uint64_t hyp_gic_sgi_frame(uint64_t pa)
{
	uint64_t span, rd = redist_of(pa, &span);

	return rd && pa - rd >= FRAME && pa - rd < 2 * FRAME ? rd + FRAME : 0;
}

/* What the guest reads at @off of RD_base (@size bytes): the register,
 * but what would offer LPIs; zero for the registers of LPIs. */
static uint64_t rd_read(uint64_t rd, uint64_t off, unsigned size)
{
	uint64_t typer;

	if (off >= GICR_TYPER && off < GICR_TYPER + 8) {
		typer = *(volatile uint64_t *)(rd + GICR_TYPER) &
			~(TYPER_PLPIS | TYPER_DIRECT_LPI);
		return (typer >> 8 * (off - GICR_TYPER)) &
		       (~0ull >> (64 - 8 * size));
	}
	if (off == GICR_CTLR || off == GICR_IIDR || off == GICR_STATUSR ||
	    off == GICR_WAKER || (off >= GICR_ID_REGS && size == 4))
		return rd32(rd + off) & ~(off == GICR_CTLR ? CTLR_ENABLE_LPIS : 0);
	return 0;
}

/* A guest write to RD_base: GICR_CTLR without EnableLPIs, GICR_STATUSR
 * and GICR_WAKER as they are, the rest ignored. */
static void rd_write(uint64_t rd, uint64_t off, unsigned size, uint64_t v)
{
	if (size != 4)
		return;
	if (off == GICR_CTLR)
		wr32(rd + off, (uint32_t)v & ~CTLR_ENABLE_LPIS);
	else if (off == GICR_STATUSR || off == GICR_WAKER)
		wr32(rd + off, (uint32_t)v);
}

/**
 * hyp_gic_redist_access() - emulate a guest access to RD_base or VLPI_base
 * @c: this vCPU
 * @f: the guest's registers
 * @esr: ESR_EL2 of its Data Abort
 * @pa: the address it accessed
 *
 * RD_base as rd_read() and rd_write() say, VLPI_base and the reserved
 * frame, or past the last redistributor, read as zero, writes ignored.
 */
void hyp_gic_redist_access(struct hyp_cpu *c, struct hyp_frame *f,
			   uint64_t esr, uint64_t pa)
{
	struct hyp_mmio m;
	uint64_t span, rd = redist_of(pa, &span), v = 0;

	if (!hyp_mmio_decode(esr, &m) || (pa & (m.size - 1)))
		hyp_panic("redistributor access without syndrome, ESR_EL2", esr);
	c->gicr_emulated++;
	if (m.write && rd && pa - rd < FRAME)
		rd_write(rd, pa - rd, m.size, hyp_mmio_value(f, &m));
	else if (!m.write && rd && pa - rd < FRAME)
		v = rd_read(rd, pa - rd, m.size);
	hyp_mmio_complete(f, &m, v);
}
