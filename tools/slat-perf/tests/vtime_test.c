/* SPDX-License-Identifier: MIT */
/* Unit tests of the virtual-time scheduler (tools/slat-perf/vtime.c). */
#include "../vtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Programs as fixed step lists, one per actor. */
struct prog {
	const struct vt_step *steps[8];
	int pos[8];
};

static void next(void *arg, int i, struct vt_step *s)
{
	struct prog *p = arg;

	*s = p->steps[i][p->pos[i]];
	if (s->kind != VT_END)
		p->pos[i]++;
}

static int failures;

static void expect(const char *what, double got, double want)
{
	if (fabs(got - want) > 1e-6 * (fabs(want) + 1)) {
		printf("FAIL %s: %.3f, want %.3f\n", what, got, want);
		failures++;
	} else {
		printf("ok   %s: %.3f\n", what, got);
	}
}

static struct vt_result run(struct prog *p, int n, int nv, bool ipi, double share)
{
	struct vt_config c = { .nactors = n, .nvcpus = nv, .ipi = ipi,
			       .ipi_send_ns = 10, .ipi_exit_ns = 100,
			       .clean_share = share, .next = next, .arg = p };
	struct vt_result r;

	if (vt_run(&c, &r)) {
		printf("FAIL: out of memory\n");
		exit(1);
	}
	return r;
}

#define S(k, ns) { VT_##k, ns }

/* Two writers serialize; the second waits for the first's whole hold. */
static void two_writers(void)
{
	static const struct vt_step w1[] = { S(LOCK_WRITE, 0), S(WORK, 300),
		S(UNLOCK, 0), S(END, 0) };
	static const struct vt_step w2[] = { S(LOCK_WRITE, 0), S(WORK, 500),
		S(UNLOCK, 0), S(END, 0) };
	struct prog p = { .steps = { w1, w2 } };
	struct vt_result r = run(&p, 2, 0, false, 0);

	expect("two writers: elapsed = sum", r.elapsed_ns, 800);
	expect("two writers: second waited", r.a[1].lock_wait_ns, 300);
	expect("two writers: longest hold", r.max_write_hold_ns, 500);
	vt_result_free(&r);
}

/* Readers overlap: elapsed is the longest; a writer after them waits. */
static void readers(void)
{
	static const struct vt_step r1[] = { S(FAULT_BEGIN, 0), S(LOCK_READ, 0),
		S(WORK, 200), S(UNLOCK, 0), S(FAULT_END, 0), S(END, 0) };
	static const struct vt_step r2[] = { S(FAULT_BEGIN, 0), S(LOCK_READ, 0),
		S(WORK, 700), S(UNLOCK, 0), S(FAULT_END, 0), S(END, 0) };
	static const struct vt_step w[] = { S(WORK, 1), S(LOCK_WRITE, 0),
		S(WORK, 50), S(UNLOCK, 0), S(END, 0) };
	static const struct vt_step late[] = { S(WORK, 2), S(FAULT_BEGIN, 0),
		S(LOCK_READ, 0), S(WORK, 10), S(UNLOCK, 0), S(FAULT_END, 0),
		S(END, 0) };
	struct prog p = { .steps = { r1, r2, r1, late, w } };
	struct vt_result r = run(&p, 5, 4, false, 0);

	expect("readers: the longest reader ends", r.a[1].end_ns, 700);
	/* the writer queued at 1 behind the readers; the reader at 2 queued
	 * behind the writer (FIFO), so it waits for both */
	expect("readers: writer after them", r.a[4].end_ns, 750);
	expect("readers: late reader behind the writer", r.a[3].end_ns, 760);
	expect("readers: its latency", r.a[3].lat.max, 758);
	expect("readers: stalled by the host", r.a[3].stall_host_ns, 0);
	vt_result_free(&r);
}

/* A shootdown by IPI reaches the vCPUs in the guest, not those in a fault,
 * and the initiator waits for the acks. */
static void shootdown(void)
{
	static const struct vt_step guest[] = { S(WORK, 1000), S(END, 0) };
	static const struct vt_step faulting[] = { S(FAULT_BEGIN, 0),
		S(WORK, 1000), S(FAULT_END, 0), S(END, 0) };
	static const struct vt_step host[] = { S(SHOOT, 50), S(END, 0) };
	struct prog p = { .steps = { guest, guest, faulting, host } };
	struct vt_result r = run(&p, 4, 3, true, 0);

	expect("shootdown: initiator waits for the acks", r.a[3].end_ns,
	       50 + 2 * 10 + 100);
	expect("shootdown: a guest vCPU loses an exit", r.a[0].end_ns, 1100);
	expect("shootdown: counted as a host stall", r.a[1].stall_host_ns, 100);
	expect("shootdown: a vCPU in a fault is not interrupted",
	       r.a[2].end_ns, 1000);
	vt_result_free(&r);
	/* broadcast TLBI: nobody is interrupted */
	p = (struct prog){ .steps = { guest, guest, faulting, host } };
	r = run(&p, 4, 3, false, 0);
	expect("broadcast: no IPI", r.a[0].end_ns + r.a[3].end_ns, 1050);
	vt_result_free(&r);
}

/* Cleaning bandwidth for 2 CPUs shared by 4 cleaners: each at half rate;
 * when two finish, the others speed up again. */
static void clean_share(void)
{
	static const struct vt_step c1[] = { S(CLEAN, 100), S(END, 0) };
	static const struct vt_step c3[] = { S(CLEAN, 300), S(END, 0) };
	struct prog p = { .steps = { c1, c1, c3, c3 } };
	struct vt_result r = run(&p, 4, 4, false, 2);

	expect("clean: short cleaners at half rate", r.a[0].end_ns, 200);
	/* 100 of 300 done at 200, then full rate for the other 200 */
	expect("clean: long cleaners speed up", r.a[3].end_ns, 400);
	vt_result_free(&r);
	p = (struct prog){ .steps = { c1, c1, c3, c3 } };
	r = run(&p, 4, 4, false, 0);
	expect("clean: no limit", r.elapsed_ns, 300);
	vt_result_free(&r);
}

/* A writer that yields lets a waiting reader in between its chunks. */
static void yield(void)
{
	static const struct vt_step w[] = { S(LOCK_WRITE, 0), S(WORK, 100),
		S(YIELD, 0), S(WORK, 100), S(YIELD, 0), S(WORK, 100),
		S(UNLOCK, 0), S(END, 0) };
	static const struct vt_step rd[] = { S(WORK, 50), S(FAULT_BEGIN, 0),
		S(LOCK_READ, 0), S(WORK, 10), S(UNLOCK, 0), S(FAULT_END, 0),
		S(END, 0) };
	struct prog p = { .steps = { rd, w } };
	struct vt_result r = run(&p, 2, 1, false, 0);

	expect("yield: reader gets in at the first yield", r.a[0].end_ns, 110);
	expect("yield: its wait is the host's", r.a[0].stall_host_ns, 50);
	expect("yield: the writer's longest hold", r.max_write_hold_ns, 200);
	expect("yield: the writer ends later", r.a[1].end_ns, 310);
	vt_result_free(&r);
}

static void histogram(void)
{
	struct vt_hist h = { 0 };

	for (int i = 1; i <= 100; i++)
		vt_hist_add(&h, i * 1000.0);
	expect("hist: max exact", vt_hist_pct(&h, 1), 100000);
	if (vt_hist_pct(&h, 0.5) < 50000 || vt_hist_pct(&h, 0.5) > 50000 * 1.1) {
		printf("FAIL hist: p50 %.0f\n", vt_hist_pct(&h, 0.5));
		failures++;
	}
	if (vt_hist_pct(&h, 0.99) < 99000 || vt_hist_pct(&h, 0.99) > 100000) {
		printf("FAIL hist: p99 %.0f\n", vt_hist_pct(&h, 0.99));
		failures++;
	}
}

int main(void)
{
	two_writers();
	readers();
	shootdown();
	clean_share();
	yield();
	histogram();
	printf("%s\n", failures ? "FAILED" : "all passed");
	return failures != 0;
}
