/* SPDX-License-Identifier: MIT */
/*
 * vCPUs as host threads, and the memstress guest loop of the KVM selftests
 * with its iterations synchronised with the host.
 */
#include "internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Page-table pages one fault may need: a table chain and a split or two. */
static uint32_t fault_cache_pages(struct slat_vm *vm)
{
	return 2u * (uint32_t)(SLAT_LAST_LEVEL - slat_table_geometry(&vm->table)->start_level + 1) + 2;
}

struct slat_vcpu *slat_vm_create_vcpu(struct slat_vm *vm, uint32_t id, int *err)
{
	struct slat_vcpu *v;
	int ret = -ENOMEM;

	if (id >= SIM_MAX_VCPUS || vm->vcpus[id]) {
		ret = sim_err(vm, id >= SIM_MAX_VCPUS ? -EINVAL : -EEXIST,
			      "vCPU %u: %s", id,
			      id >= SIM_MAX_VCPUS ? "id too large" : "exists");
		goto fail;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		goto fail;
	v->vm = vm;
	v->id = id;
	v->tlb_mask = vm->cfg.tlb_entries - 1;
	v->tlb = calloc(vm->cfg.tlb_entries, sizeof(v->tlb[0]));
	v->seen_gen = __atomic_load_n(&vm->gen, __ATOMIC_SEQ_CST);
	v->rand = id + 1;
	v->pcpu = -1;
	if (vm->ring_size) {
		v->ring.size = vm->ring_size;
		v->ring.e = calloc(vm->ring_size, sizeof(v->ring.e[0]));
	}
	if (!v->tlb || (vm->ring_size && !v->ring.e) ||
	    slat_hosted_cache_init(&v->cache, fault_cache_pages(vm))) {
		free(v->tlb);
		free(v->ring.e);
		free(v);
		goto fail;
	}
	v->cache.stats = &v->core;
	__atomic_store_n(&vm->vcpus[id], v, __ATOMIC_RELEASE);
	if (id + 1 > vm->nr_vcpus)
		__atomic_store_n(&vm->nr_vcpus, id + 1, __ATOMIC_RELEASE);
	return v;
fail:
	if (err)
		*err = ret;
	return NULL;
}

struct slat_vcpu *slat_vm_vcpu(struct slat_vm *vm, uint32_t id)
{
	return id < SIM_MAX_VCPUS ? vm->vcpus[id] : NULL;
}

uint32_t slat_vcpu_id(const struct slat_vcpu *v)
{
	return v->id;
}

/* The affinity for @cpu: that CPU, or every CPU of the machine (the
 * kernel keeps those of the process's cpuset). The calling thread's own
 * affinity does not count: the main task may be pinned elsewhere. */
static int pin_set(int cpu, cpu_set_t *set)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1 || n > CPU_SETSIZE)
		n = CPU_SETSIZE;
	if (cpu >= n)
		return -EINVAL;
	CPU_ZERO(set);
	if (cpu >= 0)
		CPU_SET(cpu, set);
	else
		for (long i = 0; i < n; i++)
			CPU_SET((int)i, set);
	return 0;
}

int slat_vcpu_pin(struct slat_vcpu *v, int cpu)
{
	cpu_set_t set;

	if (pin_set(cpu, &set))
		return sim_err(v->vm, -EINVAL, "vCPU %u: no pCPU %d on this machine",
			       v->id, cpu);
	if (v->running && !v->vm->sched.on &&
	    pthread_setaffinity_np(v->thread, sizeof(set), &set))
		return sim_err(v->vm, -EINVAL,
			       "vCPU %u: pCPU %d is not one this process may run on",
			       v->id, cpu);
	v->pcpu = cpu;
	return 0;
}

static void *vcpu_thread(void *arg)
{
	struct slat_vcpu *v = arg;

	sim_rcu_register();
	sim_current_vcpu = v;
	v->fn(v, v->fn_arg);
	sim_current_vcpu = NULL;
	return NULL;
}

int slat_vcpu_run(struct slat_vcpu *v, slat_vcpu_guest_fn fn, void *arg)
{
	if (v->running)
		return sim_err(v->vm, -EBUSY, "vCPU %u already runs", v->id);
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	if (v->vm->sched.on) {
		ret = sim_co_start(v, fn, arg);
		if (ret)
			return sim_err(v->vm, ret, "vCPU %u: no stack", v->id);
		v->running = true;
		return 0;
	}
	v->fn = fn;
	v->fn_arg = arg;
	pthread_attr_init(&attr);
	/* Pinned from its first instruction. */
	if (v->pcpu >= 0 && !pin_set(v->pcpu, &set))
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	ret = pthread_create(&v->thread, &attr, vcpu_thread, v);
	pthread_attr_destroy(&attr);
	if (ret)
		return sim_err(v->vm, -EAGAIN, "vCPU %u: no thread", v->id);
	v->running = true;
	return 0;
}

void slat_vcpu_join(struct slat_vcpu *v)
{
	if (!v->running)
		return;
	if (v->vm->sched.on)
		sim_co_run(v->vm, v);
	else
		pthread_join(v->thread, NULL);
	v->running = false;
}

/* ---- memstress ---- */

static uint32_t park_miller(uint32_t *seed)
{
	*seed = (uint32_t)((uint64_t)*seed * 48271u % 0x7fffffffu);
	return *seed;
}

/* One pass of the selftests' memstress loop over @v's share. */
static void memstress_pass(struct slat_vcpu *v, const struct memstress *ms,
			   uint32_t pct, bool random)
{
	struct slat_vm *vm = v->vm;
	const struct slat_vm_memstress *a = &ms->a;
	uint64_t psize = a->page_size ? a->page_size : vm->granule;
	uint64_t base = a->overlap ? a->gpa : a->gpa + v->id * a->bytes_per_vcpu;
	uint64_t bytes = a->overlap ? a->bytes_per_vcpu * a->nr_vcpus
				    : a->bytes_per_vcpu;
	uint64_t pages = bytes / psize;
	uint64_t value = a->value ? a->value : 0x0123456789ABCDEFull;
	uint64_t t0 = vm->cfg.on_event ? slat_vm_now_ns() : 0;

	/* The last pass ended with an exit to user space (the selftest's
	 * sync), which emptied the PML buffer. */
	v->pml_used = 0;
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t page = random ? park_miller(&v->ms_seed) % pages : i;
		uint64_t gpa = base + page * psize, val = value;
		bool write = park_miller(&v->ms_seed) % 100 < pct;
		int ret = slat_vcpu_access(v, gpa, &val, 8, write);

		if (ret) {
			v->error = ret < 0 ? ret : -EFAULT;
			break;
		}
	}
	if (vm->cfg.on_event)
		vm->cfg.on_event(vm->cfg.event_arg, SLAT_VM_EV_PASS,
				 (int)v->id, base, slat_vm_now_ns() - t0);
}

/* A vCPU thread: a pass per iteration the host starts. */
static void memstress_guest(struct slat_vcpu *v, void *arg)
{
	struct memstress *ms = arg;
	uint64_t done = 0;

	for (;;) {
		uint32_t pct;
		bool random;

		pthread_mutex_lock(&ms->lock);
		while (!ms->stop && ms->iteration == done)
			pthread_cond_wait(&ms->go, &ms->lock);
		if (ms->stop) {
			pthread_mutex_unlock(&ms->lock);
			return;
		}
		done = ms->iteration;
		pct = ms->write_percent;
		random = ms->random_access;
		pthread_mutex_unlock(&ms->lock);

		memstress_pass(v, ms, pct, random);
		pthread_mutex_lock(&ms->lock);
		v->passes_done = done;
		if (v->error && !ms->error)
			ms->error = v->error;
		ms->nr_done++;
		pthread_cond_broadcast(&ms->done);
		pthread_mutex_unlock(&ms->lock);
	}
}

/* A pass of the deterministic mode: the iteration is the host's call. */
static void memstress_vt_pass(struct slat_vcpu *v, void *arg)
{
	struct memstress *ms = arg;

	v->error = 0;
	memstress_pass(v, ms, ms->write_percent, ms->random_access);
}

/* One iteration in the deterministic mode: every vCPU's pass, run in
 * virtual time on this thread. */
static int64_t memstress_vt_iterate(struct slat_vm *vm)
{
	struct memstress *ms = &vm->ms;
	uint64_t t0 = slat_vm_now_ns();
	int err = 0;

	ms->iteration++;
	for (uint32_t i = 0; i < ms->a.nr_vcpus && !err; i++)
		err = sim_co_start(vm->vcpus[i], memstress_vt_pass, ms);
	/* Those started finish their pass even when one could not start. */
	sim_co_run(vm, NULL);
	if (err)
		return sim_err(vm, err, "memstress: no stack for a vCPU");
	for (uint32_t i = 0; i < ms->a.nr_vcpus; i++) {
		vm->vcpus[i]->passes_done = ms->iteration;
		if (!err)
			err = vm->vcpus[i]->error;
	}
	if (err)
		return sim_err(vm, err, "a vCPU failed: %s", vm->err);
	return (int64_t)(slat_vm_now_ns() - t0);
}

int slat_vm_memstress_start(struct slat_vm *vm,
			    const struct slat_vm_memstress *args)
{
	struct memstress *ms = &vm->ms;
	int ret;

	if (ms->started)
		return sim_err(vm, -EBUSY, "memstress already runs");
	if (!args->nr_vcpus || args->nr_vcpus > SIM_MAX_VCPUS ||
	    args->write_percent > 100 || !args->bytes_per_vcpu)
		return sim_err(vm, -EINVAL, "memstress: bad arguments");
	ms->a = *args;
	ms->write_percent = args->write_percent;
	ms->random_access = args->random_access;
	ms->iteration = 0;
	ms->stop = false;
	ms->error = 0;
	for (uint32_t i = 0; i < args->nr_vcpus; i++) {
		if (!vm->vcpus[i] && !slat_vm_create_vcpu(vm, i, &ret))
			return ret;
		if (vm->vcpus[i]->running)
			return sim_err(vm, -EBUSY, "vCPU %u already runs", i);
		vm->vcpus[i]->ms_seed = (args->seed ? args->seed : 1) + i;
	}
	ms->started = true;
	/* The deterministic mode starts each pass itself. */
	for (uint32_t i = 0; i < args->nr_vcpus && !vm->sched.on; i++) {
		ret = slat_vcpu_run(vm->vcpus[i], memstress_guest, ms);
		if (ret) {
			slat_vm_memstress_stop(vm);
			return ret;
		}
	}
	return 0;
}

int64_t slat_vm_memstress_iterate(struct slat_vm *vm)
{
	struct memstress *ms = &vm->ms;
	uint64_t t0 = slat_vm_now_ns();
	int err;

	if (!ms->started)
		return sim_err(vm, -EINVAL, "memstress is not started");
	if (vm->sched.on)
		return memstress_vt_iterate(vm);
	pthread_mutex_lock(&ms->lock);
	ms->nr_done = 0;
	ms->iteration++;
	pthread_cond_broadcast(&ms->go);
	while (ms->nr_done < ms->a.nr_vcpus)
		pthread_cond_wait(&ms->done, &ms->lock);
	err = ms->error;
	pthread_mutex_unlock(&ms->lock);
	if (err)
		return sim_err(vm, err, "a vCPU failed: %s", vm->err);
	return (int64_t)(slat_vm_now_ns() - t0);
}

void slat_vm_memstress_set_write_percent(struct slat_vm *vm, uint32_t pct)
{
	pthread_mutex_lock(&vm->ms.lock);
	vm->ms.write_percent = pct > 100 ? 100 : pct;
	pthread_mutex_unlock(&vm->ms.lock);
}

void slat_vm_memstress_set_random_access(struct slat_vm *vm, bool random)
{
	pthread_mutex_lock(&vm->ms.lock);
	vm->ms.random_access = random;
	pthread_mutex_unlock(&vm->ms.lock);
}

void slat_vm_memstress_stop(struct slat_vm *vm)
{
	struct memstress *ms = &vm->ms;

	if (!ms->started)
		return;
	pthread_mutex_lock(&ms->lock);
	ms->stop = true;
	pthread_cond_broadcast(&ms->go);
	pthread_mutex_unlock(&ms->lock);
	for (uint32_t i = 0; i < ms->a.nr_vcpus; i++)
		if (vm->vcpus[i])
			slat_vcpu_join(vm->vcpus[i]);
	ms->started = false;
}
