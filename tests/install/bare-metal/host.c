/* SPDX-License-Identifier: MIT */
/*
 * bm_main() (main.c) as a host program: what a hypervisor's own build does
 * with libslat.a alone, its platform hooks its own, run where the tests
 * run. Its pool's addresses stand for physical ones, as at EL2 with the
 * MMU off.
 */
#include <stdio.h>

int bm_main(void);

int main(void)
{
	int step = bm_main();

	if (step)
		fprintf(stderr, "core-static: step %d failed\n", step);
	return step;
}
