/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp's entry points and EL2 vectors.
 *
 * _start: CPU 0, from QEMU at EL2 with the MMU off. hyp_secondary_entry:
 * a CPU that PSCI CPU_ON started on slat-hyp's behalf, or that woke from
 * a power-down CPU_SUSPEND, x0 = its index.
 * Each CPU runs on its own stack in SP_EL2; from a lower EL the vectors
 * save the guest's x0-x30 on it, call hyp_trap(frame), restore and eret.
 * EL2 itself takes no exceptions: one there is a bug (hyp_el2_fault).
 */
#define STACK_SHIFT 14		/* 16 KiB per CPU */
#define FRAME_SIZE (32 * 8)

	.macro	cpu_stack, tmp
	mrs	\tmp, mpidr_el1
	and	\tmp, \tmp, #0xff
	add	\tmp, \tmp, #1
	lsl	\tmp, \tmp, #STACK_SHIFT
	adrp	x9, hyp_stacks
	add	x9, x9, :lo12:hyp_stacks
	add	\tmp, x9, \tmp
	mov	sp, \tmp
	adr	x9, el2_vectors
	msr	vbar_el2, x9
	isb
	.endm

	.section .text.start, "ax"
	.global	_start
_start:
	cpu_stack x10
	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
1:	cmp	x0, x1
	b.hs	2f
	str	xzr, [x0], #8
	b	1b
2:	bl	hyp_main
3:	wfi
	b	3b

	.text
	.global	hyp_secondary_entry
hyp_secondary_entry:
	mov	x19, x0
	cpu_stack x10
	mov	x0, x19
	bl	hyp_cpu_on_entry
4:	wfi
	b	4b

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

lower_sync:
	sub	sp, sp, #FRAME_SIZE
	frame_pairs stp
	str	x30, [sp, #240]
	mov	x0, sp
	bl	hyp_trap
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
