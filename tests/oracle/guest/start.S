/* SPDX-License-Identifier: MIT */
/*
 * Entry, EL2 and EL1 vectors, and the probe stubs of the oracle.
 *
 * run_lower(entry, arg0, arg1, spsr) saves EL2's callee-saved state and
 * erets to @entry at EL1 (or EL0) with x0 = arg0, x1 = arg1. Whatever
 * exception then reaches EL2 from the lower level (the stub's HVC, a
 * stage-2 abort, an HVC from the EL1 vectors) is recorded in lower_result
 * and run_lower returns: EL1 is never resumed.
 *
 * run_el2(entry, arg0, arg1, sctlr) does the same at EL2 itself, through
 * EL2's own stage 1: it writes SCTLR_EL2 (the MMU on), branches to the
 * stub, and the exception that ends the stub at EL2 (its HVC, a Data or
 * Instruction Abort, the BRK a fetch reached) is recorded, SCTLR_EL2
 * restored (the MMU off again), and run_el2 returns. Between the two
 * writes of SCTLR_EL2 only this file's code, the stack and lower_result
 * are touched: the layout maps the program's image at VA == PA.
 * at_el2(va, write, sctlr) returns PAR_EL1 after AT S1E2R (S1E2W) with
 * the MMU on: with it off, AT gives the flat mapping.
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

	/* The callee-saved registers, SP and SCTLR_EL2 into el2_ctx (x9),
	 * for the exception that ends the run to restore. */
	.macro	save_el2_ctx
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
	mrs	x10, sctlr_el2
	str	x10, [x9, #104]
	.endm

	.text
	.global run_lower
run_lower:
	save_el2_ctx
	msr	elr_el2, x0
	msr	spsr_el2, x3
	mov	x0, x1
	mov	x1, x2
	isb
	eret

	.global run_el2
run_el2:
	save_el2_ctx		/* what el2_sync restores */
	mov	x10, #1
	str	x10, [x9, #112]		/* an exception at EL2 is the probe's */
	mov	x9, x0
	mov	x0, x1
	mov	x1, x2
	msr	sctlr_el2, x3
	isb
	br	x9

/* A synchronous exception at EL2: a probe's end, or a bug. */
el2_sync:
	adrp	x9, el2_ctx
	add	x9, x9, :lo12:el2_ctx
	ldr	x10, [x9, #112]
	cbz	x10, el2_unexpected
	str	xzr, [x9, #112]
	b	record

/* From a lower EL: record, then return from run_lower. */
lower_sync:
record:
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
	/* back to the SCTLR_EL2 run_el2 found (run_lower never changes it):
	 * this code runs at VA == PA either way */
	ldr	x10, [x9, #104]
	msr	sctlr_el2, x10
	isb
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

/* at_el2(va, write, sctlr): no exception to expect, the result is in
 * PAR_EL1. */
	.global at_el2
at_el2:
	mrs	x9, sctlr_el2
	msr	sctlr_el2, x2
	isb
	cbnz	x1, 1f
	at	s1e2r, x0
	b	2f
1:	at	s1e2w, x0
2:	isb
	mrs	x0, par_el1
	msr	sctlr_el2, x9
	isb
	ret

	.balign	2048
el2_vectors:
	.rept	2		/* current EL, SP0 then SPx: synchronous */
	b	el2_sync
	.balign	128
	.rept	3		/* IRQ, FIQ, SError */
	b	el2_unexpected
	.balign	128
	.endr
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

/* The probe stubs: x0 = the address, x1 = value. At EL1 stage 1 is off
 * (VA == IPA); at EL2 the address is a VA of EL2's stage 1, and the HVC
 * is taken at EL2 itself. */
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
