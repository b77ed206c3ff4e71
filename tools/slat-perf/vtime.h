/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: modeled elapsed time. Actors (vCPUs and host operations) run
 * programs of steps in virtual time; a discrete-event scheduler orders them
 * by virtual clock and models what they contend for: KVM's mmu_lock (a
 * reader/writer lock with a FIFO of waiters), TLB shootdowns that must
 * reach every vCPU running in the guest, and D-cache cleaning whose memory
 * bandwidth the cleaning CPUs share. No host time enters it: the same
 * programs give the same result.
 */
#ifndef SLAT_PERF_VTIME_H
#define SLAT_PERF_VTIME_H

#include <stdbool.h>
#include <stdint.h>

enum vt_kind {
	VT_WORK,        /* advance the actor's clock by ns */
	VT_LOCK_READ,   /* take mmu_lock shared */
	VT_LOCK_WRITE,  /* take mmu_lock exclusive */
	VT_UNLOCK,
	VT_YIELD,       /* a writer lets waiters in, if any (cond_resched) */
	VT_SHOOT,       /* a TLB invalidation that must reach every running
			   vCPU: ns is the issuing CPU's own cost */
	VT_CLEAN,       /* D-cache cleaning: ns at one CPU's full rate */
	VT_FAULT_BEGIN, /* a guest fault starts (latency from here) */
	VT_FAULT_END,
	VT_END,         /* the program is done */
};

struct vt_step {
	enum vt_kind kind;
	double ns;
};

/* Log-scale histogram of latencies: 8 buckets per power of two. */
#define VT_HIST_BUCKETS 512
struct vt_hist {
	uint64_t n;
	double max;
	uint32_t b[VT_HIST_BUCKETS];
};

struct vt_config {
	int nactors;
	int nvcpus;             /* actors 0..nvcpus-1 are vCPUs, the rest host */
	bool ipi;               /* shootdowns by IPI (x86); else broadcast TLBI */
	double ipi_send_ns;     /* the initiator's cost per vCPU interrupted */
	double ipi_exit_ns;     /* an interrupted vCPU's exit and re-entry */
	double clean_share;     /* CPUs cleaning at full rate the memory can
				   feed; more cleaners share it (<= 0: no limit) */
	/* The next step of @actor's program into @s. */
	void (*next)(void *arg, int actor, struct vt_step *s);
	void *arg;
};

struct vt_actor_result {
	double end_ns;          /* the actor's clock when its program ended */
	double lock_wait_ns;    /* waiting for mmu_lock */
	double stall_host_ns;   /* held up by host actors: lock waits behind
				   their write hold, their IPIs */
	double ipi_ns;          /* time lost to shootdown IPIs */
	struct vt_hist lat;     /* fault latencies */
};

struct vt_result {
	double elapsed_ns;      /* the latest end over the actors */
	double max_write_hold_ns; /* longest exclusive mmu_lock hold */
	struct vt_actor_result *a; /* one per actor (vt_result_free) */
};

/**
 * vt_run() - run the actors' programs in virtual time
 * @c: the actors, their program generator and the shared resources
 * @r: the result; r->a is allocated here, one entry per actor
 *
 * Every actor starts at virtual time 0. Ties are broken by actor index,
 * so the result depends only on the programs.
 *
 * Return: 0, or -1 when memory runs out.
 */
int vt_run(const struct vt_config *c, struct vt_result *r);

/**
 * vt_result_free() - free what vt_run() allocated in @r
 * @r: a result of vt_run()
 */
void vt_result_free(struct vt_result *r);

/**
 * vt_hist_add() - count one latency
 * @h: the histogram
 * @ns: the latency
 */
void vt_hist_add(struct vt_hist *h, double ns);

/**
 * vt_hist_pct() - a percentile of a histogram
 * @h: the histogram
 * @p: the fraction, 0 to 1 (1: the maximum, exact)
 *
 * Return: the upper edge of the bucket holding the percentile (never above
 * the maximum), or 0 for an empty histogram.
 */
double vt_hist_pct(const struct vt_hist *h, double p);

#endif
