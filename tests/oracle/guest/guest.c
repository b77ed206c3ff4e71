/* SPDX-License-Identifier: MIT */
/*
 * The oracle's EL2 program. For each layout of the blob: copy its table
 * pages to their PAs, program VTCR_EL2/VTTBR_EL2/HCR_EL2, invalidate the
 * stage-1+2 TLB, then run each probe: AT S12E1R/W from EL2 (PAR_EL1), or a
 * real load, store or instruction fetch at EL1/EL0 whose stage-2 abort (or
 * success) comes back to EL2. A layout of EL2's own regime programs
 * TCR_EL2/TTBR0_EL2/MAIR_EL2 instead, and each probe turns EL2's MMU on
 * for one AT S1E2R/W, load, store or fetch, whose abort (or success) is
 * taken at EL2. Results go out over the PL011 UART; QEMU exits through
 * semihosting.
 *
 * Freestanding, no FP/SIMD (-mgeneral-regs-only), every access aligned
 * (-mstrict-align): with the MMU off, memory is Device.
 */
#include <stdbool.h>
#include <stdint.h>

#include "../blob.h"

#define UART_BASE 0x09000000ul

struct lower_result {
	uint64_t x0, esr, far, hpfar, elr, esr_el1, elr_el1;
};

struct lower_result lower_result;
/* x19-x30, sp, SCTLR_EL2 to restore, "a probe runs at EL2" (start.S) */
uint64_t el2_ctx[15];

extern char el1_vectors[], el1_load[], el1_store[], el1_fetch[];
uint64_t run_lower(void *entry, uint64_t a0, uint64_t a1, uint64_t spsr);
uint64_t run_el2(void *entry, uint64_t a0, uint64_t a1, uint64_t sctlr);
uint64_t at_el2(uint64_t va, uint64_t write, uint64_t sctlr);
void oracle_main(void);
void oracle_el2_fault(uint64_t esr, uint64_t elr, uint64_t far);

#define SYSREG_R(name)                                                      \
	({                                                                  \
		uint64_t v_;                                                \
		__asm__ volatile("mrs %0, " #name : "=r"(v_));              \
		v_;                                                         \
	})
#define SYSREG_W(name, v)                                                   \
	__asm__ volatile("msr " #name ", %0" ::"r"((uint64_t)(v)))

static void isb(void)
{
	__asm__ volatile("isb" ::: "memory");
}

static void dsb(void)
{
	__asm__ volatile("dsb sy" ::: "memory");
}

/* ------------------------------------------------------------ output */

static void putc_(char c)
{
	volatile uint32_t *fr = (volatile uint32_t *)(UART_BASE + 0x18);
	volatile uint32_t *dr = (volatile uint32_t *)UART_BASE;
	while (*fr & (1u << 5))
		;
	*dr = (uint32_t)(unsigned char)c;
}

static void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

static void puthex(uint64_t v)
{
	char buf[17];
	int n = 0;
	do {
		unsigned d = v & 0xf;
		buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v >>= 4;
	} while (v);
	while (n)
		putc_(buf[--n]);
}

static void semihost_exit(uint64_t code)
{
	/* SYS_EXIT, ADP_Stopped_ApplicationExit with a status */
	uint64_t block[2] = { 0x20026, code };
	register uint64_t x0 __asm__("x0") = 0x18;
	register uint64_t x1 __asm__("x1") = (uint64_t)block;
	__asm__ volatile("hlt #0xf000" ::"r"(x0), "r"(x1) : "memory");
	for (;;)
		;
}

void oracle_el2_fault(uint64_t esr, uint64_t elr, uint64_t far)
{
	puts_("\nFATAL EL2 exception esr ");
	puthex(esr);
	puts_(" elr ");
	puthex(elr);
	puts_(" far ");
	puthex(far);
	puts_("\n");
	semihost_exit(3);
}

static void fatal(const char *msg, uint64_t v)
{
	puts_("\nFATAL ");
	puts_(msg);
	puts_(" ");
	puthex(v);
	puts_("\n");
	semihost_exit(2);
}

/* ------------------------------------------------------------ memory */

static void copy64(uint64_t dst, const uint64_t *src, uint64_t bytes)
{
	volatile uint64_t *d = (volatile uint64_t *)dst;
	for (uint64_t i = 0; i < bytes / 8; i++)
		d[i] = src[i];
}

static uint64_t rd64(uint64_t pa)
{
	return *(volatile uint64_t *)pa;
}

static void wr64(uint64_t pa, uint64_t v)
{
	*(volatile uint64_t *)pa = v;
}

/* ------------------------------------------------------------ probes */

/*
 * SCTLR_EL2 while an EL2 probe runs: the RES1 bits and M. C and I stay
 * clear, so that EL2's accesses with the MMU on are non-cacheable like
 * those with it off; WXN clear: the image is mapped writable and
 * executable.
 */
#define SCTLR_EL2_RES1 0x30c50830ull
#define SCTLR_EL2_MMU  (SCTLR_EL2_RES1 | 1ull)

static uint64_t at_probe(uint64_t ipa, uint32_t kind)
{
	if (kind == ORACLE_AT_E2R || kind == ORACLE_AT_E2W)
		return at_el2(ipa, kind == ORACLE_AT_E2W, SCTLR_EL2_MMU);
	if (kind == ORACLE_AT_R)
		__asm__ volatile("at s12e1r, %0" ::"r"(ipa));
	else
		__asm__ volatile("at s12e1w, %0" ::"r"(ipa));
	isb();
	return SYSREG_R(par_el1);
}

/* SPSR for EL1h / EL0t with DAIF masked. */
#define SPSR_EL1H 0x3c5u
#define SPSR_EL0T 0x3c0u

/* The exception that ended a probe (blob.h). */
static char exception_code(uint64_t esr)
{
	switch (esr >> 26) {
	case 0x16: return 'H';
	case 0x24: case 0x25: return 'D';
	case 0x20: case 0x21: return 'I';
	case 0x3c: return 'K';
	default: return 'X';
	}
}

/* A load, store or fetch at EL1/EL0 through stage 2, or at EL2 through
 * EL2's own stage 1. */
static void access_probe(const struct oracle_probe *p)
{
	void *entry;
	uint64_t spsr = SPSR_EL1H;
	bool el2 = p->kind >= ORACLE_EL2_LOAD;
	switch (p->kind) {
	case ORACLE_LOAD: case ORACLE_EL2_LOAD: entry = el1_load; break;
	case ORACLE_STORE: case ORACLE_EL2_STORE: entry = el1_store; break;
	case ORACLE_FETCH: case ORACLE_EL2_FETCH: entry = el1_fetch; break;
	case ORACLE_FETCH_EL0: entry = el1_fetch; spsr = SPSR_EL0T; break;
	default: fatal("probe kind", p->kind); return;
	}
	struct lower_result *r = &lower_result;
	r->x0 = r->esr = r->far = r->hpfar = r->elr = 0;
	r->esr_el1 = r->elr_el1 = 0;
	SYSREG_W(esr_el1, 0);
	SYSREG_W(elr_el1, 0);
	isb();
	if (el2)
		run_el2(entry, p->ipa, p->value, SCTLR_EL2_MMU);
	else
		run_lower(entry, p->ipa, p->value, spsr);
	dsb();
	putc_('E');
	putc_(' ');
	putc_(exception_code(r->esr));
	uint64_t v[8] = {
		r->esr, r->far, r->hpfar, r->x0, r->esr_el1,
		el2 ? r->elr : r->elr_el1,
		p->check_pa ? rd64(p->check_pa) : 0,
		p->desc_pa ? rd64(p->desc_pa) : 0,
	};
	for (int i = 0; i < 8; i++) {
		putc_(' ');
		puthex(v[i]);
	}
	putc_('\n');
}

/* The registers of the layout's regime, then a TLB with nothing of the
 * last layout in it (QEMU models one). */
static void load_regime(const struct oracle_layout *l)
{
	SYSREG_W(hcr_el2, l->hcr);
	if (l->regime == ORACLE_EL2) {
		SYSREG_W(mair_el2, l->mair);
		SYSREG_W(tcr_el2, l->tcr);
		SYSREG_W(ttbr0_el2, l->ttbr);
		isb();
		__asm__ volatile("tlbi alle2is\n\tdsb ish" ::: "memory");
		isb();
		return;
	}
	SYSREG_W(vtcr_el2, l->vtcr);
	SYSREG_W(vttbr_el2, l->vttbr);
	isb();
	__asm__ volatile("tlbi vmalls12e1is\n\tdsb ish" ::: "memory");
	isb();
}

static void run_layout(const struct oracle_layout *l, const uint8_t **cur)
{
	const uint8_t *p = (const uint8_t *)(l + 1);
	for (uint32_t i = 0; i < l->nr_pages; i++) {
		uint64_t pa = *(const uint64_t *)p;
		p += 8;
		if (pa < ORACLE_TABLE_BASE ||
		    pa + l->granule > ORACLE_TABLE_BASE + ORACLE_TABLE_MAX)
			fatal("table page outside the window", pa);
		copy64(pa, (const uint64_t *)p, l->granule);
		p += l->granule;
	}
	dsb();
	load_regime(l);

	puts_("L ");
	puthex(l->id);
	putc_('\n');
	const struct oracle_probe *pr = (const struct oracle_probe *)p;
	for (uint32_t i = 0; i < l->nr_probes; i++, pr++) {
		if (pr->poke_pa) {
			wr64(pr->poke_pa, pr->poke_val);
			dsb();
			/* the target may be an instruction */
			__asm__ volatile("ic iallu\n\tdsb ish" ::: "memory");
			isb();
		}
		if (pr->kind == ORACLE_AT_R || pr->kind == ORACLE_AT_W ||
		    pr->kind == ORACLE_AT_E2R || pr->kind == ORACLE_AT_E2W) {
			uint64_t par = at_probe(pr->ipa, pr->kind);
			putc_('A');
			putc_(' ');
			puthex(par);
			putc_('\n');
		} else {
			access_probe(pr);
		}
	}
	*cur = (const uint8_t *)pr;
	/* leave stage 2 off between layouts */
	SYSREG_W(hcr_el2, 1ull << 31);
	isb();
}

void oracle_main(void)
{
	uint64_t el = (SYSREG_R(CurrentEL) >> 2) & 3;
	if (el != 2)
		fatal("not at EL2: CurrentEL", el);
	uint64_t mmfr0 = SYSREG_R(id_aa64mmfr0_el1);
	uint64_t mmfr1 = SYSREG_R(id_aa64mmfr1_el1);
	puts_("ORACLE hafdbs=");
	puthex(mmfr1 & 0xf);
	puts_(" parange=");
	puthex(mmfr0 & 0xf);
	puts_(" tgran4_2=");
	puthex((mmfr0 >> 40) & 0xf);
	puts_(" tgran16_2=");
	puthex((mmfr0 >> 32) & 0xf);
	puts_(" tgran64_2=");
	puthex((mmfr0 >> 36) & 0xf);
	putc_('\n');

	/* EL1: stage 1 off, its vectors report to EL2; no debug traps to EL2 */
	SYSREG_W(sctlr_el1, 0x30d00800ull);
	SYSREG_W(vbar_el1, (uint64_t)el1_vectors);
	SYSREG_W(mdcr_el2, SYSREG_R(mdcr_el2) & ~(1ull << 8));
	SYSREG_W(cptr_el2, 0x33ff);
	isb();

	const struct oracle_hdr *h = (const struct oracle_hdr *)ORACLE_BLOB_ADDR;
	if (h->magic != ORACLE_MAGIC)
		fatal("bad blob magic", h->magic);
	const uint8_t *cur = (const uint8_t *)(h + 1);
	for (uint32_t i = 0; i < h->nr_layouts; i++) {
		const struct oracle_layout *l = (const struct oracle_layout *)cur;
		if (l->magic != ORACLE_LAYOUT_MAGIC)
			fatal("bad layout magic at", (uint64_t)cur);
		run_layout(l, &cur);
	}
	puts_("END ");
	puthex(h->nr_layouts);
	putc_('\n');
	semihost_exit(0);
}
