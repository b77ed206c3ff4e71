/* SPDX-License-Identifier: MIT */
/*
 * The EPT oracle's bare-metal x86-64 program, run under Bochs. boot.S
 * brings it to long mode with the first 4 GiB identity-mapped; main()
 * reads the blob from the disk (ATA PIO), enters VMX operation, and for
 * each layout points the VMCS's EPT pointer at the tables libslat built
 * (copied to the host-physical addresses libslat gave them). A small
 * 64-bit guest, whose code and page tables live at XGUEST_BASE (GPA ==
 * HPA), makes one load, store or instruction fetch per probe through a
 * guest page that maps the probed GPA; the VM exit that ends it (VMCALL,
 * EPT violation, EPT misconfiguration, an exception) is reported with
 * its exit qualification, and the words the driver asked for (the value
 * stored, the EPT entries on the walk) are read back. See ../blob.h for
 * the format and docs/oracle.md.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86.h"

/* VMCS fields (SDM Vol. 3, Appendix B). */
enum {
	G_ES_SEL = 0x800, H_ES_SEL = 0xc00, EPT_POINTER = 0x201a,
	LINK_PTR = 0x2800, GUEST_PHYS = 0x2400,
	PIN_CTLS = 0x4000, PROC_CTLS = 0x4002, EXC_BITMAP = 0x4004,
	CR3_TARGETS = 0x400a, EXIT_CTLS = 0x400c, ENTRY_CTLS = 0x4012,
	PROC2_CTLS = 0x401e, INSN_ERROR = 0x4400, EXIT_REASON = 0x4402,
	EXIT_INTR_INFO = 0x4404,
	G_ES_LIMIT = 0x4800, G_ES_AR = 0x4814, G_INTERRUPTIBILITY = 0x4824,
	G_ACTIVITY = 0x4826, H_SYSENTER_CS = 0x4c00,
	EXIT_QUAL = 0x6400, GUEST_LINEAR = 0x640a,
	G_CR0 = 0x6800, G_CR3 = 0x6802, G_CR4 = 0x6804, G_ES_BASE = 0x6806,
	G_GDTR_BASE = 0x6816, G_IDTR_BASE = 0x6818, G_DR7 = 0x681a,
	G_RSP = 0x681c, G_RIP = 0x681e, G_RFLAGS = 0x6820,
	H_CR0 = 0x6c00, H_CR3 = 0x6c02, H_CR4 = 0x6c04, H_FS_BASE = 0x6c06,
	H_GS_BASE = 0x6c08, H_TR_BASE = 0x6c0a, H_GDTR_BASE = 0x6c0c,
	H_IDTR_BASE = 0x6c0e,
};
/* Segment registers in VMCS order: ES CS SS DS FS GS LDTR TR. */
#define SEG_CS 1
#define SEG_LDTR 6
#define SEG_TR 7

enum {
	MSR_FEATURE_CONTROL = 0x3a, MSR_VMX_BASIC = 0x480,
	MSR_CR0_FIXED0 = 0x486, MSR_CR0_FIXED1 = 0x487,
	MSR_CR4_FIXED0 = 0x488, MSR_CR4_FIXED1 = 0x489,
	MSR_PROC2 = 0x48b, MSR_EPT_CAP = 0x48c,
	/* the "true" controls (IA32_VMX_BASIC bit 55), then the others */
	MSR_TRUE_PIN = 0x48d, MSR_PIN = 0x481,
};

extern char gdt[];
extern struct { uint16_t limit; uint64_t base; } __attribute__((packed)) gdt_ptr;
extern uint64_t exit_rax;
int vm_run(uint64_t launched, uint64_t rdi, uint64_t rsi);
void host_exception(uint64_t vec, uint64_t a, uint64_t b);
void main(void);

static uint8_t vmxon_region[4096] __attribute__((aligned(4096)));
static uint8_t vmcs[4096] __attribute__((aligned(4096)));
static uint8_t tss[104] __attribute__((aligned(16)));

/* Bochs's shutdown port: the emulator exits. */
static __attribute__((noreturn)) void shutdown(void)
{
	for (const char *s = "Shutdown"; *s; s++)
		outb(0x8900, (uint8_t)*s);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* ------------------------------------------------------------ the disk */

/* ATA PIO, primary channel, LBA28: read @count sectors from @lba. */
static void ata_read(uint32_t lba, uint32_t count, uint8_t *dst)
{
	outb(0x3f6, 2); /* no interrupts: the program polls */
	while (count) {
		uint32_t n = count > 256 ? 256 : count;
		while (inb(0x1f7) & 0x80)
			;
		outb(0x1f6, (uint8_t)(0xe0 | ((lba >> 24) & 0xf)));
		outb(0x1f2, (uint8_t)n);
		outb(0x1f3, (uint8_t)lba);
		outb(0x1f4, (uint8_t)(lba >> 8));
		outb(0x1f5, (uint8_t)(lba >> 16));
		outb(0x1f7, 0x20);
		for (uint32_t i = 0; i < n; i++) {
			uint8_t st;
			while (((st = inb(0x1f7)) & 0x80) || !(st & 0x09))
				;
			if (st & 1)
				fail("ata", lba + i);
			__asm__ volatile("rep insw" : "+D"(dst), "+c"((uint64_t){ 256 })
					 : "d"(0x1f0) : "memory");
		}
		lba += n;
		count -= n;
	}
}

/* ------------------------------------------------------------ VMX */

static inline void vmwrite(uint64_t f, uint64_t v)
{
	uint8_t bad;
	__asm__ volatile("vmwrite %2, %1; setna %0" : "=r"(bad) : "r"(f), "r"(v)
			 : "cc", "memory");
	if (bad)
		fail("vmwrite", f);
}

static inline uint64_t vmread(uint64_t f)
{
	uint64_t v;
	__asm__ volatile("vmread %1, %0" : "=r"(v) : "r"(f) : "cc");
	return v;
}

static void vmx_insn_pa(const char *what, int op, uint64_t pa)
{
	uint8_t bad;
	if (op == 0)
		__asm__ volatile("vmxon %1; setna %0" : "=r"(bad) : "m"(pa) : "cc", "memory");
	else if (op == 1)
		__asm__ volatile("vmclear %1; setna %0" : "=r"(bad) : "m"(pa) : "cc", "memory");
	else
		__asm__ volatile("vmptrld %1; setna %0" : "=r"(bad) : "m"(pa) : "cc", "memory");
	if (bad)
		fail(what, pa);
}

static void invept_all(void)
{
	struct { uint64_t eptp, zero; } d = { 0, 0 };
	uint8_t bad;
	__asm__ volatile("invept %1, %2; setna %0" : "=r"(bad) : "m"(d), "r"(2ull)
			 : "cc", "memory");
	if (bad)
		fail("invept", 2);
}

/* A control word: what we want, plus what the CPU requires (the allowed
 * 0-settings in the low half of the capability MSR). */
static uint32_t controls(uint32_t msr, uint32_t want)
{
	uint64_t cap = rdmsr(msr);
	if ((want & (uint32_t)(cap >> 32)) != want)
		fail("controls", msr);
	return want | (uint32_t)cap;
}

static void enter_vmx(void)
{
	uint32_t r[4];
	cpuid(1, r);
	if (!(r[2] & (1u << 5)))
		fail("no-vmx", r[2]);
	uint64_t fc = rdmsr(MSR_FEATURE_CONTROL);
	if (!(fc & 1))
		wrmsr(MSR_FEATURE_CONTROL, fc | 1 | 4); /* lock, VMXON outside SMX */
	else if (!(fc & 4))
		fail("feature-control", fc);
	uint64_t cr0 = READ_CR(0), cr4 = READ_CR(4) | (1u << 13); /* VMXE */
	cr0 = (cr0 | rdmsr(MSR_CR0_FIXED0)) & rdmsr(MSR_CR0_FIXED1);
	cr4 = (cr4 | rdmsr(MSR_CR4_FIXED0)) & rdmsr(MSR_CR4_FIXED1);
	WRITE_CR(0, cr0);
	WRITE_CR(4, cr4);
	uint32_t rev = (uint32_t)rdmsr(MSR_VMX_BASIC) & 0x7fffffff;
	*(uint32_t *)vmxon_region = rev;
	*(uint32_t *)vmcs = rev;
	vmx_insn_pa("vmxon", 0, (uintptr_t)vmxon_region);
	vmx_insn_pa("vmclear", 1, (uintptr_t)vmcs);
	vmx_insn_pa("vmptrld", 2, (uintptr_t)vmcs);
}

/* The host's TSS (VMX needs a non-null TR) and IDT. */
static void host_tables(void)
{
	uint64_t base = (uintptr_t)tss, *g = (uint64_t *)gdt;
	g[3] = (sizeof(tss) - 1) | (base & 0xffffff) << 16 | 0x89ull << 40 |
	       ((base >> 24) & 0xff) << 56;
	g[4] = base >> 32;
	__asm__ volatile("ltr %w0" : : "r"(0x18));
	host_idt();
}

/* The guest: 64-bit, CPL 0, flat segments, its own page tables. */
static void guest_state(void)
{
	for (unsigned s = 0; s < 8; s++) {
		uint32_t ar = s == SEG_CS ? 0xa09b : 0xc093; /* code L=1 / data */
		if (s == SEG_LDTR)
			ar = 0x10000; /* unusable */
		if (s == SEG_TR)
			ar = 0x8b;    /* busy 64-bit TSS */
		vmwrite(G_ES_SEL + 2 * s, s == SEG_CS ? 0x08 : s == SEG_TR ? 0x18
					  : s == SEG_LDTR ? 0 : 0x10);
		vmwrite(G_ES_LIMIT + 2 * s, s == SEG_TR ? 0x67 : 0xffffffff);
		vmwrite(G_ES_AR + 2 * s, ar);
		vmwrite(G_ES_BASE + 2 * s, 0);
	}
	vmwrite(G_GDTR_BASE, 0);
	vmwrite(G_IDTR_BASE, 0);
	vmwrite(G_CR0, READ_CR(0));
	vmwrite(G_CR3, XGUEST_PML4);
	vmwrite(G_CR4, READ_CR(4));
	vmwrite(G_DR7, 0x400);
	vmwrite(LINK_PTR, ~0ull);
	vmwrite(G_ACTIVITY, 0);
}

static void host_state(void)
{
	for (unsigned s = 0; s < 6; s++)
		vmwrite(H_ES_SEL + 2 * s, s == SEG_CS ? 0x08 : 0x10);
	vmwrite(H_ES_SEL + 12, 0x18); /* TR */
	vmwrite(H_CR0, READ_CR(0));
	vmwrite(H_CR3, READ_CR(3));
	vmwrite(H_CR4, READ_CR(4));
	vmwrite(H_FS_BASE, 0);
	vmwrite(H_GS_BASE, 0);
	vmwrite(H_TR_BASE, (uintptr_t)tss);
	vmwrite(H_GDTR_BASE, (uintptr_t)gdt);
	vmwrite(H_IDTR_BASE, (uintptr_t)idt);
	vmwrite(H_SYSENTER_CS, 0);
}

static uint32_t ctl_msr(unsigned i)
{
	/* pin, proc, exit, entry: the true controls when the CPU has them */
	bool true_ctls = (rdmsr(MSR_VMX_BASIC) >> 55) & 1;
	return (true_ctls ? MSR_TRUE_PIN : MSR_PIN) + i;
}

static void vm_controls(uint32_t proc2)
{
	vmwrite(PIN_CTLS, controls(ctl_msr(0), 0));
	vmwrite(PROC_CTLS, controls(ctl_msr(1), 1u << 31)); /* secondary */
	vmwrite(PROC2_CTLS, controls(MSR_PROC2, (1u << 1) | proc2)); /* EPT */
	vmwrite(EXIT_CTLS, controls(ctl_msr(2), 1u << 9)); /* 64-bit host */
	vmwrite(ENTRY_CTLS, controls(ctl_msr(3), 1u << 9)); /* IA-32e guest */
	vmwrite(EXC_BITMAP, 0xffffffff); /* every guest exception exits */
	vmwrite(CR3_TARGETS, 0);
}

/* ------------------------------------------------------------ probes */

static uint64_t launched;

static void run_probe(const struct xblob_probe *p)
{
	vmwrite(G_RIP, prepare_probe(p));
	vmwrite(G_RSP, XGUEST_BASE + 0x1000);
	vmwrite(G_RFLAGS, 2);
	vmwrite(G_INTERRUPTIBILITY, 0);
	exit_rax = 0;
	if (vm_run(launched, XGUEST_WINDOW | (p->gpa & 0xfff), p->value))
		fail("vmentry", vmread(INSN_ERROR));
	launched = 1;
	report_probe(p, (const uint64_t[7]){ vmread(EXIT_REASON), vmread(EXIT_QUAL),
				     vmread(GUEST_PHYS), exit_rax, vmread(G_RIP),
				     vmread(EXIT_INTR_INFO), vmread(GUEST_LINEAR) });
}

static void setup_layout(const struct xblob_layout *l)
{
	invept_all();
	vmwrite(EPT_POINTER, l->eptp);
	vm_controls(l->proc2);
}

void main(void)
{
	uint32_t r[4];
	host_tables();
	cpuid(0x80000008, r);
	puts_e9("XORACLE basic=");
	hex(rdmsr(MSR_VMX_BASIC));
	puts_e9(" ept=");
	hex(rdmsr(MSR_EPT_CAP));
	puts_e9(" proc2=");
	hex(rdmsr(MSR_PROC2));
	puts_e9(" maxphy=");
	hex(r[0] & 0xff);
	putc_e9('\n');

	uint8_t *blob = (uint8_t *)(uintptr_t)XBLOB_ADDR;
	ata_read(XBLOB_LBA, 1, blob);
	const struct xblob_hdr *h = (const void *)blob;
	if (h->magic != XBLOB_MAGIC || h->bytes > XBLOB_MAX)
		fail("blob", h->magic);
	ata_read(XBLOB_LBA + 1, (uint32_t)((h->bytes + 511) / 512) - 1, blob + 512);

	enter_vmx();
	guest_memory((const uint8_t[3]){ 0x0f, 0x01, 0xc1 }); /* VMCALL */
	guest_state();
	host_state();
	run_layouts(h, setup_layout, run_probe);
	shutdown();
}
