/* SPDX-License-Identifier: MIT */
/*
 * Entry, EL2 and EL1 vectors, and the EL1 probe stubs of the oracle.
 *
 * run_lower(entry, arg0, arg1, spsr) saves EL2's callee-saved state and
 * erets to @entry at EL1 (or EL0) with x0 = arg0, x1 = arg1. Whatever
 * exception then reaches EL2 from the lower level (the stub's HVC, a
 * stage-2 abort, an HVC from the EL1 vectors) is recorded in lower_result
 * and run_lower returns: EL1 is never resumed.
 */
	.section .text.start, "ax"
	.global _start
_start:
	ldr	x0, =__stack_top
	mov	sp, x0
	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
1:	cmp	x0, x1
	b.hs	2f
	str	xzr, [x0], #8
	b	1b
2:	adr	x0, el2_vectors
	msr	vbar_el2, x0
	isb
	bl	oracle_main
	/* oracle_main never returns; just in case */
3:	wfi
	b	3b

	.text
	.global run_lower
run_lower:
	adrp	x9, el2_ctx
	add	x9, x9, :lo12:el2_ctx
	stp	x19, x20, [x9, #0]
	stp	x21, x22, [x9, #16]
	stp	x23, x24, [x9, #32]
	stp	x25, x26, [x9, #48]
	stp	x27, x28, [x9, #64]
	stp	x29, x30, [x9, #80]
	mov	x10, sp
	str	x10, [x9, #96]
	msr	elr_el2, x0
	msr	spsr_el2, x3
	mov	x0, x1
	mov	x1, x2
	isb
	eret

/* From a lower EL: record, then return from run_lower. */
lower_sync:
	adrp	x9, lower_result
	add	x9, x9, :lo12:lower_result
	str	x0, [x9, #0]
	mrs	x10, esr_el2
	str	x10, [x9, #8]
	mrs	x10, far_el2
	str	x10, [x9, #16]
	mrs	x10, hpfar_el2
	str	x10, [x9, #24]
	mrs	x10, elr_el2
	str	x10, [x9, #32]
	mrs	x10, esr_el1
	str	x10, [x9, #40]
	mrs	x10, elr_el1
	str	x10, [x9, #48]
	adrp	x9, el2_ctx
	add	x9, x9, :lo12:el2_ctx
	ldp	x19, x20, [x9, #0]
	ldp	x21, x22, [x9, #16]
	ldp	x23, x24, [x9, #32]
	ldp	x25, x26, [x9, #48]
	ldp	x27, x28, [x9, #64]
	ldp	x29, x30, [x9, #80]
	ldr	x10, [x9, #96]
	mov	sp, x10
	mov	x0, #0
	ret

/* An exception at EL2 itself: a bug in the oracle. */
el2_unexpected:
	mrs	x0, esr_el2
	mrs	x1, elr_el2
	mrs	x2, far_el2
	ldr	x3, =__stack_top
	mov	sp, x3
	bl	oracle_el2_fault
4:	b	4b

	.balign	2048
el2_vectors:
	.rept	8		/* current EL, SP0 and SPx */
	b	el2_unexpected
	.balign	128
	.endr
	b	lower_sync	/* lower EL, AArch64: synchronous */
	.balign	128
	.rept	7
	b	el2_unexpected
	.balign	128
	.endr

/*
 * EL1 vectors: each entry reports itself to EL2 with HVC #0x100 + index
 * (ESR_EL1 and ELR_EL1 are read there). A successful instruction fetch
 * probe ends here: the target holds BRK #0x77.
 */
	.balign	2048
	.global el1_vectors
el1_vectors:
	.irp	n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	hvc	#(0x100 + \n)
	.balign	128
	.endr

/* The EL1 stubs: x0 = IPA (stage 1 is off: VA == IPA), x1 = value. */
	.balign	64
	.global el1_load
el1_load:
	ldr	x0, [x0]
	hvc	#0
	.global el1_store
el1_store:
	str	x1, [x0]
	hvc	#0
	.global el1_fetch
el1_fetch:
	blr	x0
	hvc	#0
