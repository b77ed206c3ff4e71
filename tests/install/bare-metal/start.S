/* SPDX-License-Identifier: MIT */
/*
 * Entry of the bare-metal consumer (main.c): a stack, .bss zeroed, then
 * bm_main(); its result leaves through Arm semihosting (SYS_WRITE0 of a
 * line, then SYS_EXIT with the status), which QEMU turns into its own exit
 * status with -semihosting. Without a debugger or QEMU, it would stop at
 * the HLT instruction.
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
2:	bl	bm_main
	mov	x19, x0
	adr	x1, msg_ok
	cbz	x19, 3f
	adr	x1, msg_fail
3:	mov	x0, #0x04		/* SYS_WRITE0 */
	hlt	#0xf000
	adr	x1, exit_block
	str	x19, [x1, #8]		/* the exit status */
	mov	x0, #0x18		/* SYS_EXIT */
	hlt	#0xf000
4:	wfi
	b	4b

	.section .rodata
msg_ok:	.asciz	"bare-metal: stage-2 page mapped, looked up, unmapped\n"
msg_fail:
	.asciz	"bare-metal: FAILED (the exit status is the step)\n"

	.data
	.balign	8
exit_block:
	.quad	0x20026			/* ADP_Stopped_ApplicationExit */
	.quad	0
