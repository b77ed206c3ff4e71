/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: one timed phase (counters and clock before and after), and the
 * progress bar on stderr, which a thread moves while the phase runs.
 */
#include "perf.h"

#include <slat/hosted.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct perf_ticker {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct slat_vm *vm;
	const struct perf_opts *o;
	const char *what;
	uint64_t expect, base, t0;
};

static void bar(const char *what, double frac, const char *extra)
{
	int width = 30, fill = (int)(frac * width);

	if (fill > width)
		fill = width;
	if (fill < 0)
		fill = 0;
	fprintf(stderr, "\r[%.*s%*s] %3d%% %-22.22s %-20.20s", fill,
		"##############################", width - fill, "",
		(int)(100.0 * (frac > 1 ? 1 : frac)), what, extra);
	fflush(stderr);
}

static void rate(char *buf, size_t len, double r)
{
	if (r >= 1e6)
		snprintf(buf, len, "%.1fM accesses/s", r / 1e6);
	else if (r >= 1e3)
		snprintf(buf, len, "%.0fk accesses/s", r / 1e3);
	else
		snprintf(buf, len, "%.0f accesses/s", r);
}

/* One update: the accesses done so far, of @expect, and their rate. */
static void tick(struct perf_ticker *k)
{
	struct slat_vm_stats st;
	double secs = (double)(slat_vm_now_ns() - k->t0) / 1e9, done;
	char extra[48];

	perf_stats(k->vm, &st);
	done = (double)(st.accesses - k->base);
	rate(extra, sizeof(extra), secs > 0 ? done / secs : 0);
	bar(k->what, k->expect ? done / (double)k->expect : 0, extra);
}

static void *ticker_main(void *arg)
{
	struct perf_ticker *k = arg;
	struct timespec ts;

	pthread_mutex_lock(&k->lock);
	while (!k->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&k->cond, &k->lock, &ts);
		if (!k->stop)
			tick(k);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

static struct perf_ticker *ticker_start(const struct perf_opts *o,
					struct slat_vm *vm, const char *what,
					uint64_t expect, uint64_t base)
{
	struct perf_ticker *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	*k = (struct perf_ticker){ .vm = vm, .o = o, .what = what,
				   .expect = expect, .base = base,
				   .t0 = slat_vm_now_ns() };
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->cond, NULL);
	bar(what, 0, "");
	if (pthread_create(&k->th, NULL, ticker_main, k)) {
		free(k);
		return NULL;
	}
	return k;
}

static void ticker_stop(struct perf_ticker *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	k->stop = true;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->th, NULL);
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->cond);
	free(k);
}

void perf_phase_begin(struct perf_timer *t, const struct perf_opts *o,
		      struct slat_vm *vm, const char *what, uint64_t expect)
{
	memset(t, 0, sizeof(*t));
	t->o = o;
	t->vm = vm;
	perf_stats(vm, &t->a);
	if (o->progress)
		t->ticker = ticker_start(o, vm, what, expect, t->a.accesses);
	t->t0 = slat_vm_now_ns();
}

uint64_t perf_phase_end(struct perf_timer *t, struct perf_run *run,
			const char *name, int iteration, int64_t ns)
{
	uint64_t wall = ns >= 0 ? (uint64_t)ns : slat_vm_now_ns() - t->t0;
	struct slat_vm_stats b, d;
	struct perf_phase *p;
	uint32_t vcpus = 0;

	ticker_stop(t->ticker);
	t->ticker = NULL;
	perf_progress_end(t->o);
	/* Tables the phase unlinked are freed after a grace period: wait for
	 * it, so that they count in this phase whenever the RCU thread runs. */
	slat_hosted_rcu_barrier();
	perf_stats(t->vm, &b);
	slat_vm_stats_diff(&t->a, &b, &d);
	/* the vCPUs the modeled elapsed time shares the faults among */
	for (uint32_t i = 0; i < 512; i++)
		vcpus += slat_vm_vcpu(t->vm, i) != NULL;
	p = perf_run_add(run, name, iteration, wall, &d);
	if (p)
		p->vcpus = vcpus;
	return wall;
}

void perf_progress(const struct perf_opts *o, const char *what, uint64_t done,
		   uint64_t total)
{
	char extra[32];

	if (!o->progress || !total)
		return;
	snprintf(extra, sizeof(extra), "step %llu of %llu",
		 (unsigned long long)done + 1, (unsigned long long)total);
	bar(what, (double)done / (double)total, extra);
}

void perf_progress_end(const struct perf_opts *o)
{
	if (!o->progress)
		return;
	fprintf(stderr, "\r%*s\r", 80, "");
	fflush(stderr);
}
