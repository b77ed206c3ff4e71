/* SPDX-License-Identifier: MIT */
/* Live dirty logging of guest RAM into a shadow copy (not yet: off). */
#include "hyp.h"

void hyp_log_init(uint64_t mode)
{
	if (mode != HYP_LOG_OFF)
		hyp_panic("dirty logging mode not supported", mode);
}

void hyp_log_poll(struct hyp_cpu *c)
{
	(void)c;
}

void hyp_log_report(void)
{
}
