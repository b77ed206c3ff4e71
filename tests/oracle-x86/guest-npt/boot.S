/* SPDX-License-Identifier: MIT */
/*
 * The NPT oracle's entry. QEMU loads the program as a Multiboot kernel
 * (-kernel: the header's address fields, no ELF) and enters it in 32-bit
 * protected mode with paging off. The entry zeroes the .bss, builds
 * identity page tables for the first 4 GiB (2 MiB pages), and goes to
 * long mode with EFER.NXE (the nested walk takes the host's NXE: without
 * it an NPT entry's NX bit is reserved) and, when the blob asks for it and
 * the CPU has it, CR4.LA57 (the nested walk has the host's paging levels).
 */
/* ../blob.h: XBLOB_ADDR + offsetof(struct xblob_hdr, flags), and
 * XBLOB_NPT_LA57 (guest.c checks both) */
#define BLOB_FLAGS 0x0400000c
#define BLOB_LA57  1

#define MB_MAGIC 0x1badb002
#define MB_FLAGS 0x00010000 /* the address fields below are valid */

	.section .boot, "ax"
	.code32
	.p2align 2
mb_header:
	.long MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)
	.long mb_header, mb_header, __image_end, __bss_end, entry32

	.globl _start
_start:
entry32:
	cli
	mov $__image_end, %edi /* zero the .bss */
	mov $__bss_end, %ecx
	sub %edi, %ecx
	xor %eax, %eax
	rep stosb
	mov $stack_top, %esp
	/* PML4[0] -> PDPT; PDPT[0..3] -> PD pages; PD: 2048 2 MiB pages */
	movl $(host_pdpt + 3), host_pml4
	movl $(host_pd + 3), host_pdpt
	movl $(host_pd + 0x1003), host_pdpt + 8
	movl $(host_pd + 0x2003), host_pdpt + 16
	movl $(host_pd + 0x3003), host_pdpt + 24
	mov $host_pd, %edi
	mov $0x83, %eax   /* P, RW, PS */
	xor %edx, %edx
	mov $2048, %ecx
1:	mov %eax, (%edi)
	mov %edx, 4(%edi)
	add $8, %edi
	add $0x200000, %eax
	adc $0, %edx
	loop 1b
	movl $(host_pml4 + 3), host_pml5
	lgdt gdt_ptr
	mov $0x20, %ebp   /* CR4.PAE (CPUID clobbers EAX..EDX) */
	mov $host_pml4, %esi
	/* LA57 when the blob's header asks and CPUID.7.0:ECX[16] has it */
	testl $BLOB_LA57, BLOB_FLAGS
	jz 2f
	mov $7, %eax
	xor %ecx, %ecx
	cpuid
	test $(1 << 16), %ecx
	jz 2f
	or $0x1000, %ebp  /* CR4.LA57 */
	mov $host_pml5, %esi
2:	mov %ebp, %cr4
	mov %esi, %cr3
	mov $0xc0000080, %ecx
	rdmsr
	or $0x900, %eax   /* EFER.LME, NXE */
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax /* PG, PE */
	mov %eax, %cr0
	ljmp $0x08, $entry64

	.code64
entry64:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %ax, %fs
	mov %ax, %gs
	mov $stack_top, %rsp
	call main
3:	hlt
	jmp 3b

#include "../guest/vectors.S"

/*
 * svm_run(vmcb, rdi, rsi): VMRUN with the guest's RDI and RSI (VMRUN
 * switches RAX, RSP and RIP only; the guest's other registers are the
 * host's). #VMEXIT comes back after VMRUN with the host's RAX, RSP, RIP.
 */
	.globl svm_run
svm_run:
	push %rbx
	push %rbp
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rdx, %rsi
	clgi
	vmrun
	stgi
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbp
	pop %rbx
	ret

	.data
	.p2align 3
gdt:	.quad 0
	.quad 0x00af9a000000ffff /* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff /* 0x10: data */
gdt_end:
gdt_ptr:
	.word gdt_end - gdt - 1
	.quad gdt

	.bss
	.p2align 12
host_pml5:	.skip 4096
host_pml4:	.skip 4096
host_pdpt:	.skip 4096
host_pd:	.skip 4 * 4096
	.skip 16384
stack_top:

	.section .note.GNU-stack, "", @progbits
