/* SPDX-License-Identifier: MIT */
/* Output on the PL011 the guest also uses; slat-hyp prints before the
 * guest starts and after it asked to power off. */
#include "hyp.h"

#define UART_DR HYP_UART
#define UART_FR (HYP_UART + 0x18)
#define UART_FR_TXFF (1u << 5)

static uint32_t print_lock;

void hyp_print_lock(void)
{
	while (__atomic_exchange_n(&print_lock, 1, __ATOMIC_ACQUIRE))
		;
}

void hyp_print_unlock(void)
{
	__atomic_store_n(&print_lock, 0, __ATOMIC_RELEASE);
}

static void putc_(char c)
{
	while (*(volatile uint32_t *)UART_FR & UART_FR_TXFF)
		;
	*(volatile uint32_t *)UART_DR = (uint32_t)(unsigned char)c;
}

void hyp_puts(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			putc_('\r');
		putc_(*s);
	}
}

void hyp_putx(uint64_t v)
{
	char buf[19];
	int n = 18;

	buf[n] = '\0';
	do {
		unsigned d = v & 0xf;
		buf[--n] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v >>= 4;
	} while (v);
	buf[--n] = 'x';
	buf[--n] = '0';
	hyp_puts(&buf[n]);
}

void hyp_putu(uint64_t v)
{
	char buf[21];
	int n = 20;

	buf[n] = '\0';
	do {
		buf[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	hyp_puts(&buf[n]);
}

/* " key=value", the counters' format (run.sh reads them). */
void hyp_put_kv(const char *k, uint64_t v)
{
	hyp_puts(" ");
	hyp_puts(k);
	hyp_puts("=");
	hyp_putu(v);
}

void hyp_panic(const char *why, uint64_t v)
{
	hyp_puts("\nslat-hyp: panic: ");
	hyp_puts(why);
	hyp_puts(" ");
	hyp_putx(v);
	hyp_puts("\n");
	hyp_exit_failure();
}

void hyp_exit_failure(void)
{
	/* PSCI SYSTEM_OFF would look like a clean exit: QEMU exits with
	 * status 1 through semihosting (SYS_EXIT_EXTENDED,
	 * ADP_Stopped_ApplicationExit) instead. */
	static const uint64_t block[2] = { 0x20026, 1 };
	register uint64_t x0 __asm__("x0") = 0x20;
	register const uint64_t *x1 __asm__("x1") = block;

	__asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
	for (;;)
		__asm__ volatile("wfi");
}
