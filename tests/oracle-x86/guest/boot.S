/* SPDX-License-Identifier: MIT */
/*
 * The EPT oracle's boot sector and entry. The BIOS loads sector 0 at
 * 0x7c00; it loads the rest of the program (sectors 1..PROG_SECTORS) at
 * 0x7e00 with INT 13h extended reads, builds identity page tables for the
 * first 4 GiB (2 MiB pages), and goes from real mode straight to long mode
 * (CR0.PE and PG together), then calls main().
 */
#define PROG_SECTORS 256 /* 128 KiB: guest.ld checks that the image fits */
#define PML4 0x1000
#define PDPT 0x2000
#define PD   0x3000      /* four pages: 4 GiB of 2 MiB pages */
#define STACK_TOP 0x7f000 /* below the BIOS's data, above the .bss */

	.section .boot, "ax"
	.code16
	.globl _start
_start:
	cli
	xor %ax, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov $0x7c00, %sp
	ljmp $0, $1f
1:	mov $(PROG_SECTORS / 32), %cx
2:	mov $dap, %si
	mov $0x42, %ah
	int $0x13
	jc boot_fail
	addw $0x400, dap + 6 /* 32 sectors further */
	addl $32, dap + 8
	loop 2b
	jmp entry16
boot_fail:
	mov $0xe9, %dx
	mov $'!', %al
	out %al, %dx
	hlt
	jmp boot_fail

	.p2align 3
dap:	.byte 16, 0
	.word 32          /* sectors */
	.word 0, 0x07e0   /* offset, segment */
	.quad 1           /* LBA */

	.org 510
	.byte 0x55, 0xaa

	.text
	.code16
entry16:
	in $0x92, %al     /* A20 through the fast gate */
	or $2, %al
	out %al, $0x92
	/* PML4[0] -> PDPT; PDPT[0..3] -> PD pages; PD: 2048 2 MiB pages */
	xor %eax, %eax
	mov $PML4, %edi
	mov $(6 * 1024), %ecx
	rep stosl %eax, %es:(%di)
	movl $(PDPT | 3), PML4
	movl $(PD | 3), PDPT
	movl $(PD + 0x1000 | 3), PDPT + 8
	movl $(PD + 0x2000 | 3), PDPT + 16
	movl $(PD + 0x3000 | 3), PDPT + 24
	mov $PD, %edi
	mov $0x83, %eax   /* P, RW, PS */
	xor %edx, %edx
	mov $2048, %ecx
3:	mov %eax, (%di)
	mov %edx, 4(%di)
	add $8, %di
	add $0x200000, %eax
	adc $0, %edx
	loop 3b
	lgdt gdt_ptr
	mov %cr4, %eax
	or $0x20, %eax    /* PAE */
	mov %eax, %cr4
	mov $PML4, %eax
	mov %eax, %cr3
	mov $0xc0000080, %ecx
	rdmsr
	or $0x100, %eax   /* EFER.LME */
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax /* PG, PE */
	mov %eax, %cr0
	ljmpl $0x08, $entry64

	.code64
entry64:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %ax, %fs
	mov %ax, %gs
	mov $STACK_TOP, %rsp
	lea __image_end(%rip), %rdi /* zero the .bss */
	lea __bss_end(%rip), %rcx
	sub %rdi, %rcx
	xor %eax, %eax
	rep stosb
	call main
4:	hlt
	jmp 4b

#include "vectors.S"

/*
 * vm_run(launched, rdi, rsi): VMLAUNCH (or VMRESUME) with the guest's RDI
 * and RSI; returns 0 after a VM exit with the guest's RAX in
 * exit_rax, or 1 when the instruction failed.
 */
	.globl vm_run
vm_run:
	push %rbx
	push %rbp
	push %r12
	push %r13
	push %r14
	push %r15
	mov $0x6c14, %ecx /* HOST_RSP */
	vmwrite %rsp, %rcx
	lea vm_exit(%rip), %rax
	mov $0x6c16, %ecx /* HOST_RIP */
	vmwrite %rax, %rcx
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rdx, %rsi
	test %rax, %rax
	jnz 6f
	vmlaunch
	jmp vm_fail
6:	vmresume
vm_fail:
	mov $1, %eax
	jmp 7f
vm_exit:
	mov %rax, exit_rax(%rip)
	xor %eax, %eax
7:	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbp
	pop %rbx
	ret

	.data
	.p2align 3
	.globl gdt
gdt:	.quad 0
	.quad 0x00af9a000000ffff /* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff /* 0x10: data */
	.quad 0, 0               /* 0x18: the TSS, filled by main() */
gdt_end:
	.globl gdt_ptr
gdt_ptr:
	.word gdt_end - gdt - 1
	.quad gdt

	.bss
	.p2align 3
	.globl exit_rax
exit_rax:
	.quad 0

	.section .note.GNU-stack, "", @progbits
