/* SPDX-License-Identifier: MIT */
/*
 * The NPT oracle's bare-metal x86-64 program, run under QEMU (TCG, -cpu
 * max). boot.S brings it to long mode with the first 4 GiB identity-
 * mapped (and CR4.LA57 for 5-level layouts); main() enables SVM
 * (EFER.SVME) and, for each layout of the blob QEMU loaded at XBLOB_ADDR,
 * copies the table pages to the host-physical addresses libslat gave them
 * and points the VMCB's nCR3 at the root, with nested paging enabled. A
 * small 64-bit guest, whose code and page tables live at XGUEST_BASE
 * (GPA == HPA), makes one load, store or instruction fetch per probe
 * through a guest page that maps the probed GPA; the #VMEXIT that ends it
 * (VMMCALL, a nested page fault, an exception) is reported with EXITINFO1
 * and EXITINFO2, and the words the driver asked for (the value stored, the
 * NPT entries on the walk) are read back. See ../blob.h and docs/oracle.md.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../guest/x86.h"

_Static_assert(XBLOB_ADDR == 0x04000000 && offsetof(struct xblob_hdr, flags) == 12 &&
	       XBLOB_NPT_LA57 == 1, "boot.S reads the blob's flags");

/* The VMCB (APM vol. 2, appendix B): control area offsets. */
enum {
	VMCB_INTERCEPT_EXC = 0x008, VMCB_INTERCEPT = 0x00c, VMCB_ASID = 0x058,
	VMCB_TLB_CONTROL = 0x05c, VMCB_EXITCODE = 0x070,
	VMCB_EXITINFO1 = 0x078, VMCB_EXITINFO2 = 0x080, VMCB_EXITINTINFO = 0x088,
	VMCB_NP_CONTROL = 0x090, VMCB_NCR3 = 0x0b0,
	/* the state save area */
	VMCB_ES = 0x400, VMCB_GDTR = 0x460, VMCB_IDTR = 0x480, VMCB_CPL = 0x4cb,
	VMCB_EFER = 0x4d0, VMCB_CR4 = 0x548, VMCB_CR3 = 0x550, VMCB_CR0 = 0x558,
	VMCB_DR7 = 0x560, VMCB_DR6 = 0x568, VMCB_RFLAGS = 0x570, VMCB_RIP = 0x578,
	VMCB_RSP = 0x5d8, VMCB_RAX = 0x5f8, VMCB_G_PAT = 0x668,
};
/* Intercept vector 3 (bits 0..31) and 4 (32..63) at VMCB_INTERCEPT. */
#define ICPT_HLT      (1ull << 24)
#define ICPT_SHUTDOWN (1ull << 31)
#define ICPT_VMRUN    (1ull << 32)
#define ICPT_VMMCALL  (1ull << 33)

#define MSR_EFER     0xc0000080u
#define MSR_VM_HSAVE 0xc0010117u
#define EFER_LME     (1ull << 8)
#define EFER_LMA     (1ull << 10)
#define EFER_NXE     (1ull << 11)
#define EFER_SVME    (1ull << 12)

void svm_run(uint64_t vmcb, uint64_t rdi, uint64_t rsi);
void main(void);

static uint8_t vmcb[4096] __attribute__((aligned(4096)));
static uint8_t hsave[4096] __attribute__((aligned(4096)));

static inline void vmcb_wr(unsigned off, uint64_t v)
{
	wr64((uintptr_t)vmcb + off, v);
}

static inline uint64_t vmcb_rd(unsigned off)
{
	return rd64((uintptr_t)vmcb + off);
}

/* QEMU's isa-debug-exit device (port 0xf4): QEMU exits. */
static __attribute__((noreturn)) void shutdown(void)
{
	__asm__ volatile("outl %0, %1" : : "a"(0u), "Nd"((uint16_t)0xf4));
	for (;;)
		__asm__ volatile("cli; hlt");
}

static void enter_svm(void)
{
	uint32_t r[4];
	cpuid(0x80000001, r);
	if (!(r[2] & (1u << 2)))
		fail("no-svm", r[2]);
	cpuid(0x8000000a, r);
	if (!(r[3] & 1))
		fail("no-npt", r[3]);
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SVME);
	wrmsr(MSR_VM_HSAVE, (uintptr_t)hsave);
}

/* The guest: 64-bit, CPL 0, flat segments, its own page tables; every
 * exception, HLT and shutdown exits; VMMCALL ends a probe. */
static void guest_state(void)
{
	for (unsigned s = 0; s < 4; s++) { /* ES CS SS DS */
		unsigned off = VMCB_ES + 16 * s;
		bool cs = s == 1;
		wr64((uintptr_t)vmcb + off, (cs ? 0x08ull : 0x10ull) |
		     (uint64_t)(cs ? 0xa9b : 0xc93) << 16 | 0xffffffffull << 32);
		vmcb_wr(off + 8, 0);
	}
	vmcb_wr(VMCB_INTERCEPT_EXC, 0xffffffff);
	vmcb_wr(VMCB_INTERCEPT, ICPT_HLT | ICPT_SHUTDOWN | ICPT_VMRUN | ICPT_VMMCALL);
	vmcb_wr(VMCB_ASID, 1);
	vmcb_wr(VMCB_EFER, EFER_LME | EFER_LMA | EFER_NXE | EFER_SVME);
	vmcb_wr(VMCB_CR0, READ_CR(0));
	vmcb_wr(VMCB_CR3, XGUEST_PML4);
	vmcb_wr(VMCB_CR4, 0x20); /* PAE: the guest's own walk has 4 levels */
	vmcb_wr(VMCB_DR7, 0x400);
	vmcb_wr(VMCB_DR6, 0xffff0ff0);
	vmcb_wr(VMCB_G_PAT, 0x0007040600070406ull);
}

static void run_probe(const struct xblob_probe *p)
{
	vmcb_wr(VMCB_RIP, prepare_probe(p));
	vmcb_wr(VMCB_RSP, XGUEST_BASE + 0x1000);
	vmcb_wr(VMCB_RFLAGS, 2);
	vmcb_wr(VMCB_RAX, 0);
	vmcb_wr(VMCB_EXITCODE, 0);
	/* flush the ASID's translations: the guest's PT[0] and, between
	 * layouts, the nested tables changed */
	wr64((uintptr_t)vmcb + VMCB_TLB_CONTROL, 1 | (rd64((uintptr_t)vmcb +
	     VMCB_TLB_CONTROL) & ~0xffull));
	svm_run((uintptr_t)vmcb, XGUEST_WINDOW | (p->gpa & 0xfff), p->value);
	/* no guest linear address (EPT's program has one) */
	report_probe(p, (const uint64_t[7]){ vmcb_rd(VMCB_EXITCODE),
				     vmcb_rd(VMCB_EXITINFO1), vmcb_rd(VMCB_EXITINFO2),
				     vmcb_rd(VMCB_RAX), vmcb_rd(VMCB_RIP),
				     vmcb_rd(VMCB_EXITINTINFO), 0 });
}

static void setup_layout(const struct xblob_layout *l)
{
	vmcb_wr(VMCB_NP_CONTROL, 1); /* SLAT_NPT_NP_ENABLE */
	vmcb_wr(VMCB_NCR3, l->eptp);
}

void main(void)
{
	uint32_t r[4], np[4], x7[4];
	host_idt();
	cpuid(0x80000008, r);
	cpuid(0x8000000a, np);
	cpuid(7, x7);
	puts_e9("NORACLE svm=");
	hex(np[3]);
	puts_e9(" asids=");
	hex(np[1]);
	puts_e9(" maxphy=");
	hex(r[0] & 0xff);
	puts_e9(" la57cpu=");
	hex((x7[2] >> 16) & 1);
	puts_e9(" la57=");
	hex((READ_CR(4) >> 12) & 1);
	putc_e9('\n');

	const struct xblob_hdr *h = (const void *)(uintptr_t)XBLOB_ADDR;
	if (h->magic != XBLOB_MAGIC || h->bytes > XBLOB_MAX)
		fail("blob", h->magic);
	if (!!(h->flags & XBLOB_NPT_LA57) != ((READ_CR(4) >> 12) & 1))
		fail("no-la57", h->flags);
	enter_svm();
	guest_memory((const uint8_t[3]){ 0x0f, 0x01, 0xd9 }); /* VMMCALL */
	guest_state();
	run_layouts(h, setup_layout, run_probe);
	shutdown();
}
