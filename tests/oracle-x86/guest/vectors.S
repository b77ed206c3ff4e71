/* SPDX-License-Identifier: MIT */
/*
 * The host's exception vectors of the x86-64 oracle programs (guest/boot.S,
 * ../guest-npt/boot.S include it in their 64-bit text): each pushes its
 * number and calls host_exception(vector, error code or RIP, next word),
 * which reports it and stops. host_idt() (x86.h) installs them.
 */
/* Host exceptions: report the vector and stop. */
	.macro vec n
	.p2align 4
	push $\n
	jmp host_fault
	.endm
	.p2align 4
	.globl host_vectors
host_vectors:
	.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	vec \n
	.endr
host_fault:
	mov (%rsp), %rdi
	mov 8(%rsp), %rsi /* the error code, or RIP */
	mov 16(%rsp), %rdx
	call host_exception
9:	hlt
	jmp 9b

