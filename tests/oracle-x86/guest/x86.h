/* SPDX-License-Identifier: MIT */
/*
 * What the x86-64 oracle programs share (guest/guest.c under Bochs's VMX,
 * ../guest-npt/guest.c under QEMU's SVM): port and MSR access, the output
 * on port 0xE9, and the guest's code and page tables (../blob.h). Each
 * program defines shutdown(), how its emulator is told to exit.
 */
#ifndef SLAT_XORACLE_GUEST_X86_H
#define SLAT_XORACLE_GUEST_X86_H

#include <stddef.h>
#include <stdint.h>

#include "../blob.h"

static __attribute__((noreturn)) void shutdown(void);
void host_exception(uint64_t vec, uint64_t a, uint64_t b);
extern char host_vectors[]; /* vectors.S */

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
			 "d"((uint32_t)(v >> 32)));
}

static inline void cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(0));
}

#define READ_CR(n) ({ uint64_t v_; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v_)); v_; })
#define WRITE_CR(n, v) __asm__ volatile("mov %0, %%cr" #n : : "r"((uint64_t)(v)))

static inline void wr64(uint64_t pa, uint64_t v)
{
	*(volatile uint64_t *)(uintptr_t)pa = v;
}

static inline uint64_t rd64(uint64_t pa)
{
	return *(volatile uint64_t *)(uintptr_t)pa;
}

/* ------------------------------------------------------------ output */

static void putc_e9(char c)
{
	outb(0xe9, (uint8_t)c);
}

static void puts_e9(const char *s)
{
	while (*s)
		putc_e9(*s++);
}

static void hex(uint64_t v)
{
	char buf[17];
	int n = 0;
	do {
		buf[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		putc_e9(buf[--n]);
}

static void field(uint64_t v)
{
	putc_e9(' ');
	hex(v);
}

static __attribute__((noreturn)) void fail(const char *what, uint64_t v)
{
	puts_e9("FAIL ");
	puts_e9(what);
	field(v);
	putc_e9('\n');
	shutdown();
}

void host_exception(uint64_t vec, uint64_t a, uint64_t b)
{
	puts_e9("FAIL exception");
	field(vec);
	field(a);
	field(b);
	putc_e9('\n');
	shutdown();
}

/* The guest's code and page tables; PT[0] maps the probed page. The
 * stubs end in @call, the 3-byte hypercall (VMCALL or VMMCALL). */
static void guest_memory(const uint8_t call[3])
{
	const uint8_t load[] = { 0x48, 0x8b, 0x07, call[0], call[1], call[2] };
	const uint8_t store[] = { 0x48, 0x89, 0x37, call[0], call[1], call[2] };
	static const uint8_t fetch[] = { 0xff, 0xe7 };
	uint8_t *code = (uint8_t *)(uintptr_t)XGUEST_BASE;
	for (size_t i = 0; i < 0x1000; i++)
		code[i] = 0xf4; /* hlt */
	for (size_t i = 0; i < sizeof(load); i++)
		code[XGUEST_LOAD - XGUEST_BASE + i] = load[i];
	for (size_t i = 0; i < sizeof(store); i++)
		code[XGUEST_STORE - XGUEST_BASE + i] = store[i];
	for (size_t i = 0; i < sizeof(fetch); i++)
		code[XGUEST_FETCH - XGUEST_BASE + i] = fetch[i];
	for (uint64_t pa = XGUEST_PML4; pa < XGUEST_PT + 0x1000; pa += 8)
		wr64(pa, 0);
	wr64(XGUEST_PML4, XGUEST_PDPT | 3);
	wr64(XGUEST_PDPT, XGUEST_PD0 | 3);
	wr64(XGUEST_PDPT + 8 * (XGUEST_WINDOW >> 30), XGUEST_PD1 | 3);
	wr64(XGUEST_PD0 + 8 * (XGUEST_BASE >> 21), XGUEST_BASE | 0x83);
	wr64(XGUEST_PD1 + 8 * ((XGUEST_WINDOW >> 21) & 511), XGUEST_PT | 3);
}

/* The host's IDT: vectors 0..31 (vectors.S), 64-bit interrupt gates. */
static uint64_t idt[64] __attribute__((aligned(16)));

static void host_idt(void)
{
	for (int v = 0; v < 32; v++) {
		uint64_t h = (uintptr_t)host_vectors + 16u * (unsigned)v;
		idt[2 * v] = (h & 0xffff) | 0x08ull << 16 | 0x8eull << 40 |
			     ((h >> 16) & 0xffff) << 48;
		idt[2 * v + 1] = h >> 32;
	}
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) p = {
		sizeof(idt) - 1, (uintptr_t)idt };
	__asm__ volatile("lidt %0" : : "m"(p));
}

/* Before probe @p: the guest's PT[0] maps the probed page, the marker is
 * at the address libslat expects. Returns the stub the guest starts at. */
static uint64_t prepare_probe(const struct xblob_probe *p)
{
	static const uint64_t stub[] = { 0, XGUEST_LOAD, XGUEST_STORE,
					 XGUEST_FETCH };
	if (p->kind < XPROBE_LOAD || p->kind > XPROBE_FETCH)
		fail("kind", p->kind);
	wr64(XGUEST_PT, (p->gpa & ~0xfffull) | 3);
	if (p->poke_pa)
		wr64(p->poke_pa, p->poke_val);
	return stub[p->kind];
}

/* The probe's "P" line (../blob.h): the exit's seven fields @f, then the
 * word at check_pa and the table entries on the walk, read back. */
static void report_probe(const struct xblob_probe *p, const uint64_t f[7])
{
	puts_e9("P");
	for (unsigned i = 0; i < 7; i++)
		field(f[i]);
	field(p->check_pa ? rd64(p->check_pa) : 0);
	for (unsigned i = 0; i < XPROBE_DESCS; i++)
		field(p->desc_pa[i] ? rd64(p->desc_pa[i]) : 0);
	putc_e9('\n');
}

/* Every layout of the blob @h: its table pages copied to the host-
 * physical addresses libslat gave them, @setup (the root pointer), then
 * @probe for each probe. */
static void run_layouts(const struct xblob_hdr *h,
			void (*setup)(const struct xblob_layout *l),
			void (*probe)(const struct xblob_probe *p))
{
	const uint8_t *at = (const uint8_t *)h + sizeof(*h);
	for (uint32_t n = 0; n < h->nr_layouts; n++) {
		const struct xblob_layout *l = (const void *)at;
		if (l->magic != XBLOB_LAYOUT_MAGIC)
			fail("layout-magic", l->magic);
		at += sizeof(*l);
		for (uint32_t i = 0; i < l->nr_pages; i++) {
			uint64_t pa = *(const uint64_t *)at;
			const uint64_t *src = (const void *)(at + 8);
			for (unsigned w = 0; w < 512; w++)
				wr64(pa + 8 * w, src[w]);
			at += 8 + 4096;
		}
		setup(l);
		puts_e9("L");
		field(l->id);
		putc_e9('\n');
		const struct xblob_probe *p = (const void *)at;
		for (uint32_t i = 0; i < l->nr_probes; i++)
			probe(&p[i]);
		at += l->nr_probes * sizeof(*p);
	}
	puts_e9("END");
	field(h->nr_layouts);
	putc_e9('\n');
}

#endif
