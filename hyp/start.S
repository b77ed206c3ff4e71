/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp's entry points and EL2 vectors.
 *
 * _start: the boot CPU, from QEMU at EL2 with the MMU off, on the boot
 * stack. hyp_secondary_entry: a CPU that PSCI CPU_ON started on slat-hyp's
 * behalf, or that woke from a power-down CPU_SUSPEND, x0 = its index (the
 * context ID slat-hyp gave), on that index's stack.
 * Each CPU runs on its own stack in SP_EL2; from a lower EL the vectors
 * save the guest's x0-x30 on it, call hyp_trap(frame), restore and eret.
 * EL2 itself takes no exceptions: one there is a bug (hyp_el2_fault).
 */
#define STACK_SHIFT 14		/* 16 KiB per CPU */
#define FRAME_SIZE (32 * 8)

/* sp at the top of the stack from \base, the vectors in VBAR_EL2. */
	.macro	stack_at, base
	add	x9, \base, #(1 << STACK_SHIFT)
	mov	sp, x9
	adr	x9, el2_vectors
	msr	vbar_el2, x9
	isb
	.endm

/* hyp_stacks[\index] (main.c: by CPU index, not by MPIDR). */
	.macro	cpu_stack, index, tmp
	adrp	x9, hyp_stacks
	add	x9, x9, :lo12:hyp_stacks
	add	\tmp, x9, \index, lsl #STACK_SHIFT
	stack_at \tmp
	.endm

	.section .text.start, "ax"
	.global	_start
_start:
	adrp	x10, hyp_boot_stack
	add	x10, x10, :lo12:hyp_boot_stack
	stack_at x10
	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
1:	cmp	x0, x1
	b.hs	2f
	str	xzr, [x0], #8
	b	1b
2:	bl	hyp_main
3:	wfi
	b	3b

/*
 * A CPU from PSCI, its MMU off: its data accesses are Device-nGnRnE (Arm
 * ARM D8.2.12.1), and the other CPUs, theirs on, map all of RAM Normal
 * write-back, so they may hold lines of this CPU's stack (speculative
 * reads of Normal memory, B2.10.1). A store made here past the caches
 * would then be hidden, once the MMU is on, by such a line (mismatched
 * attributes, B2.11). So the stack is invalidated to the PoC, and the
 * MMU turned on, before any store to it: a line fetched after the
 * invalidation holds what memory holds. The stack is this CPU's alone,
 * whole lines (16 KiB aligned), and nothing of its old contents matters.
 */
	.text
	.global	hyp_secondary_entry
hyp_secondary_entry:
	mov	x19, x0
	cpu_stack x19, x10
	sub	x20, sp, #(1 << STACK_SHIFT)
	mov	x21, sp
	mov	x0, x20
	mov	x1, x21
	bl	hyp_dcache_inval_poc
	bl	hyp_el2_mmu_enable
	mov	x0, x19
	mov	x1, x20
	mov	x2, x21
	bl	hyp_cpu_on_entry
4:	wfi
	b	4b

/* hyp_dcache_inval_poc(start, end): DC IVAC over the lines of [start,
 * end) (CTR_EL0.DminLine), then DSB SY. No stack, no memory access. */
	.global	hyp_dcache_inval_poc
hyp_dcache_inval_poc:
	mrs	x2, ctr_el0
	ubfx	x2, x2, #16, #4
	mov	x3, #4
	lsl	x2, x3, x2
	sub	x3, x2, #1
	bic	x0, x0, x3
7:	cmp	x0, x1
	b.hs	8f
	dc	ivac, x0
	add	x0, x0, x2
	b	7b
8:	dsb	sy
	ret

/* hyp_el2_mmu_enable(): EL2's stage 1 on with hyp_el2_regs (main.c),
 * read with the MMU still off. No stack. */
	.global	hyp_el2_mmu_enable
hyp_el2_mmu_enable:
	adrp	x0, hyp_el2_regs
	add	x0, x0, :lo12:hyp_el2_regs
	ldp	x1, x2, [x0]		/* MAIR_EL2, TCR_EL2 */
	ldp	x3, x4, [x0, #16]	/* TTBR0_EL2, SCTLR_EL2 */
	msr	mair_el2, x1
	msr	tcr_el2, x2
	msr	ttbr0_el2, x3
	isb
	tlbi	alle2
	dsb	nsh
	isb
	msr	sctlr_el2, x4
	isb
	ret

/* hyp_eret_to_guest(entry, x0): EL1h, interrupts masked, x1-x30 zero. */
	.global	hyp_eret_to_guest
hyp_eret_to_guest:
	msr	elr_el2, x0
	mov	x2, #0x3c5
	msr	spsr_el2, x2
	mov	x0, x1
	.irp	n, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	mov	x\n, xzr
	.endr
	.irp	n, 16,17,18,19,20,21,22,23,24,25,26,27,28,29,30
	mov	x\n, xzr
	.endr
	dsb	ishst		/* as lower_sync: stage 2 as written */
	isb
	eret

/*
 * hyp_power_loss(entry, x0): what a CPU that powered down in CPU_SUSPEND
 * finds when the firmware wakes it: EL2's MMU and caches off, its
 * translation, traps and vectors gone; then entry(x0) at EL2. Only for
 * run.sh --idle-states: QEMU's PSCI never powers a CPU down, and models
 * no caches (firmware on hardware would clean them first).
 */
	.global	hyp_power_loss
hyp_power_loss:
	mov	x19, x0
	mov	x20, x1
	mrs	x2, sctlr_el2
	mov	x3, #0x1005		/* SCTLR_EL2.I, C, M */
	bic	x2, x2, x3
	msr	sctlr_el2, x2
	isb
	msr	hcr_el2, xzr
	msr	vttbr_el2, xzr
	msr	vtcr_el2, xzr
	msr	vbar_el2, xzr
	msr	tpidr_el2, xzr
	msr	ttbr0_el2, xzr
	msr	tcr_el2, xzr
	msr	mair_el2, xzr
	isb
	mov	x0, x20
	br	x19

/* hyp_smc_frame(frame): an SMCCC call with the frame's x0-x7, results
 * x0-x3 back into it. */
	.global	hyp_smc_frame
hyp_smc_frame:
	mov	x9, x0
	ldp	x0, x1, [x9, #0]
	ldp	x2, x3, [x9, #16]
	ldp	x4, x5, [x9, #32]
	ldp	x6, x7, [x9, #48]
	smc	#0
	stp	x0, x1, [x9, #0]
	stp	x2, x3, [x9, #16]
	ret

/* The guest's x0-x29 in the frame at sp, stored or loaded (op: stp, ldp). */
	.macro	frame_pairs, op
	\op	x0, x1, [sp, #0]
	\op	x2, x3, [sp, #16]
	\op	x4, x5, [sp, #32]
	\op	x6, x7, [sp, #48]
	\op	x8, x9, [sp, #64]
	\op	x10, x11, [sp, #80]
	\op	x12, x13, [sp, #96]
	\op	x14, x15, [sp, #112]
	\op	x16, x17, [sp, #128]
	\op	x18, x19, [sp, #144]
	\op	x20, x21, [sp, #160]
	\op	x22, x23, [sp, #176]
	\op	x24, x25, [sp, #192]
	\op	x26, x27, [sp, #208]
	\op	x28, x29, [sp, #224]
	.endm

/*
 * A trap from the guest, and back. The DSB ISHST before the ERET completes
 * every stage-2 descriptor store the trap made (a fault's new leaf, a
 * relaxed one, a set access flag, the dirty-log phases' edits) for the
 * inner shareable domain: the table walkers are observers apart from the
 * CPU's own loads and stores, and see a store to a descriptor for certain
 * only once a DSB has completed it (Arm ARM D8, VMSAv8-64: the ordering
 * of translation table updates and walks; the ERET is then the context
 * synchronization event). libslat issues DSB ISHST only inside the
 * invalidation hooks (mm.c), and a leaf that replaces an invalid entry
 * needs no invalidation, so no hook ran for it.
 */
lower_sync:
	sub	sp, sp, #FRAME_SIZE
	frame_pairs stp
	str	x30, [sp, #240]
	mov	x0, sp
	bl	hyp_trap
	dsb	ishst
	frame_pairs ldp
	ldr	x30, [sp, #240]
	add	sp, sp, #FRAME_SIZE
	eret

el2_unexpected:
	mrs	x0, esr_el2
	mrs	x1, elr_el2
	mrs	x2, far_el2
	bl	hyp_el2_fault
5:	wfi
	b	5b

	.balign	2048
el2_vectors:
	.rept	8		/* current EL, SP_EL0 and SP_ELx */
	b	el2_unexpected
	.balign	128
	.endr
	b	lower_sync	/* lower EL, AArch64: synchronous */
	.balign	128
	.rept	7		/* IRQ, FIQ, SError; AArch32 */
	b	el2_unexpected
	.balign	128
	.endr
