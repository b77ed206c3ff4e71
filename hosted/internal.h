/* SPDX-License-Identifier: MIT */
/* Private to libslat-hosted: what rcu.c needs of platform.c. */
#ifndef SLAT_HOSTED_INTERNAL_H
#define SLAT_HOSTED_INTERNAL_H

#include <slat/hosted.h>

/* The process-wide lock of every arena and the cache registry. */
void slat_hosted__lock(void);
void slat_hosted__unlock(void);

/* Report a bug in the caller and abort(). */
void slat_hosted__die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

void *slat_hosted__page_va(const struct slat_hosted *h, uint32_t idx);
/* The index of the page starting at @va; dies if there is none. */
uint32_t slat_hosted__page_index(const struct slat_hosted *h, const void *va,
				 const char *what);
/* A page's state (enum slat_hosted_page_state), read atomically. */
uint8_t slat_hosted__st_get(const struct slat_hosted *h, uint32_t idx);
/* Mark the pages the core popped from @h's caches (the lock held). */
void slat_hosted__sync_all_locked(struct slat_hosted *h);

/*
 * Set by slat_hosted_enable_rcu(): slat_hosted_fini() calls it to wait for
 * the arena's queued frees. A pointer, so that platform.c does not pull
 * rcu.c (and liburcu) into programs that never use RCU.
 */
extern void (*slat_hosted__rcu_drain)(struct slat_hosted *h);

#endif
