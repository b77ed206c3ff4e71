/* SPDX-License-Identifier: MIT */
/*
 * The VM: its stage-2 table and platform hooks (memory from the hosted
 * arena, TLB invalidation as a shootdown of every vCPU, cache maintenance
 * on the guest's host memory), caps, errors and counters.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

__thread struct slat_vcpu *sim_current_vcpu;

uint64_t slat_vm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sim_err(struct slat_vm *vm, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vm->err, sizeof(vm->err), fmt, ap);
	va_end(ap);
	return err;
}

const char *slat_vm_error(const struct slat_vm *vm)
{
	return vm ? vm->err : "no VM";
}

/* Threads that take read-side sections must be registered with urcu;
 * unregistered again when they exit. */
static pthread_key_t rcu_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;
static __thread bool rcu_registered;

static void rcu_thread_exit(void *p)
{
	(void)p;
	if (rcu_registered) {
		urcu_memb_unregister_thread();
		rcu_registered = false;
	}
}

static void rcu_key_init(void)
{
	pthread_key_create(&rcu_key, rcu_thread_exit);
}

void sim_rcu_register(void)
{
	if (rcu_registered)
		return;
	pthread_once(&rcu_once, rcu_key_init);
	urcu_memb_register_thread();
	rcu_registered = true;
	pthread_setspecific(rcu_key, (void *)1);
}

/* ---- memory hooks: the hosted arena ---- */

static struct slat_hosted *H(void *ctx)
{
	return &((struct slat_vm *)ctx)->hosted;
}

static void *vm_zalloc_root(void *ctx, size_t bytes)
{
	return slat_hosted_ops()->zalloc_root(H(ctx), bytes);
}

static void vm_free_root(void *ctx, void *va, size_t bytes)
{
	slat_hosted_ops()->free_root(H(ctx), va, bytes);
}

static void vm_free_page(void *ctx, void *va)
{
	slat_hosted_ops()->free_page(H(ctx), va);
}

/* A shared-mode operation unlinked a subtree that concurrent fault
 * handlers (read-side sections) may still walk: the hosted arena's RCU
 * frees it after a grace period (one RCU head per arena page, no
 * allocation). */
static void vm_free_deferred(void *ctx, void *va, int level)
{
	slat_hosted_ops_rcu()->free_deferred(H(ctx), va, level);
}

static uint32_t *vm_refcount(void *ctx, void *va)
{
	return slat_hosted_ops()->refcount(H(ctx), va);
}

static slat_pa_t vm_virt_to_phys(void *ctx, void *va)
{
	return slat_hosted_ops()->virt_to_phys(H(ctx), va);
}

static void *vm_phys_to_virt(void *ctx, slat_pa_t pa)
{
	return slat_hosted_ops()->phys_to_virt(H(ctx), pa);
}

/* ---- cache maintenance ---- */

#if defined(__x86_64__)
/*
 * CPUID.(EAX=7,ECX=0):EBX bit 23. Asked directly rather than through
 * __builtin_cpu_supports("clflushopt"), which clang 14 does not know.
 */
static bool have_clflushopt(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return (b >> 23) & 1;
}
#endif

static void clean_lines(uint8_t *p, uint64_t bytes)
{
#if defined(__x86_64__)
	static int have_cached = -1;
	/* Read once: vCPU threads may fill the cache at the same time. */
	int have = __atomic_load_n(&have_cached, __ATOMIC_RELAXED);

	if (have < 0) {
		have = have_clflushopt() ? 1 : 0;
		__atomic_store_n(&have_cached, have, __ATOMIC_RELAXED);
	}
	for (uint64_t off = 0; off < bytes; off += 64) {
		if (have)
			__asm__ volatile("clflushopt %0" : "+m"(*(volatile char *)(p + off)));
		else
			__asm__ volatile("clflush %0" : "+m"(*(volatile char *)(p + off)));
	}
	__asm__ volatile("sfence" ::: "memory");
#elif defined(__aarch64__)
	for (uint64_t off = 0; off < bytes; off += 64)
		__asm__ volatile("dc civac, %0" ::"r"(p + off) : "memory");
	__asm__ volatile("dsb ish" ::: "memory");
#else
	(void)p;
	(void)bytes;
#endif
}

/* Clean guest memory to PoC: real over host memory, counted otherwise. */
/*
 * Take @ns as a clean would: short waits spin, long ones sleep so that the
 * host's few CPUs run other vCPUs meanwhile.
 */
static void wait_ns(uint64_t ns)
{
	uint64_t end = slat_vm_now_ns() + ns;

	if (ns >= 50000) {
		struct timespec ts = { (time_t)(ns / 1000000000ull),
				       (long)(ns % 1000000000ull) };
		nanosleep(&ts, NULL);
	}
	while (slat_vm_now_ns() < end)
		;
}

void sim_clean(struct slat_vm *vm, struct slat_vcpu *v, uint8_t *hva,
	       uint64_t bytes, uint64_t hpa)
{
	uint64_t t0 = 0, ns = 0;

	if (hva) {
		t0 = slat_vm_now_ns();
		clean_lines(hva, bytes);
		ns = slat_vm_now_ns() - t0;
	} else if (vm->cfg.synthetic_clean_ns_per_line > 0) {
		ns = (uint64_t)((double)(bytes / 64) *
				vm->cfg.synthetic_clean_ns_per_line);
		/* In the deterministic mode the vCPU's clock takes it
		 * instead (below), and the host's cleans overlap nothing. */
		if (!vm->sched.on)
			wait_ns(ns);
	}
	if (v) {
		v->st.cmo_calls++;
		v->st.cmo_bytes += bytes;
		v->st.cmo_ns += ns;
	} else {
		sim_add(&vm->host_cmo_calls, 1);
		sim_add(&vm->host_cmo_bytes, bytes);
		sim_add(&vm->host_cmo_ns, ns);
	}
	if (vm->cfg.on_event)
		vm->cfg.on_event(vm->cfg.event_arg, SLAT_VM_EV_CMO,
				 v ? (int)v->id : -1, hpa, ns);
	sim_vt_clean(vm, bytes, !hva);
}

static void vm_dcache_clean(void *ctx, slat_pa_t pa, uint64_t size)
{
	struct slat_vm *vm = ctx;
	struct slat_vcpu *v = sim_current_vcpu;
	struct sim_slot *s;

	if (v && v->vm != vm)
		v = NULL;
	if (v && v->no_unmap_clean)
		return;
	slat_hosted_rcu_read_lock();
	s = sim_slot_by_hpa(sim_slots_get(vm), pa.pa);
	sim_clean(vm, v, s && s->hva ? s->hva + (pa.pa - s->hpa) : NULL, size,
		  pa.pa);
	slat_hosted_rcu_read_unlock();
}

static void vm_icache_inval(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx;
	(void)pa;
	(void)size;
}

/* ---- TLB invalidation: shootdown of every vCPU ---- */

/*
 * Publish an invalidation as a new TLB generation, then wait until no vCPU
 * is inside an access that started before it. A vCPU publishes
 * ACTIVE_MARK, then reads the generation (a Dekker pair with our increment
 * and scan: either it sees the new generation and applies the invalidation
 * before using its TLB, or we see it busy and wait for it to finish).
 */
void sim_tlbi(struct slat_vm *vm, uint64_t ipa, uint64_t size)
{
	struct slat_vcpu *self = sim_current_vcpu;
	uint64_t t0 = vm->cfg.on_event ? slat_vm_now_ns() : 0;
	uint64_t g, waits = 0;
	struct sim_inval *e;

	pthread_mutex_lock(&vm->inval_lock);
	g = vm->gen + 1;
	e = &vm->inval[g % SIM_INVAL_RING];
	/* A seqlock without fences: the release stores of the range keep
	 * the seq = 0 before them, and the final release keeps them before
	 * seq = g (the reader's side is in sim_tlb_apply). */
	__atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->ipa, ipa, __ATOMIC_RELEASE);
	__atomic_store_n(&e->size, size, __ATOMIC_RELEASE);
	__atomic_store_n(&e->seq, g, __ATOMIC_RELEASE);
	__atomic_store_n(&vm->gen, g, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&vm->inval_lock);

	for (uint32_t i = 0; i < vm->nr_vcpus; i++) {
		struct slat_vcpu *v = vm->vcpus[i];
		unsigned spins = 0;
		uint64_t a;

		if (!v || v == self)
			continue;
		while ((a = __atomic_load_n(&v->active, __ATOMIC_SEQ_CST)) ==
			       ACTIVE_MARK || (a != 0 && a < g)) {
			if (++spins > 64)
				sched_yield();
		}
		waits += spins != 0;
	}
	if (self && self->vm == vm)
		sim_tlb_apply(self);
	sim_add(&vm->shootdowns, 1);
	sim_add(&vm->shootdown_waits, waits);
	if (vm->cfg.on_event) {
		uint64_t ns = slat_vm_now_ns() - t0;

		sim_add(&vm->shootdown_ns, ns);
		vm->cfg.on_event(vm->cfg.event_arg, SLAT_VM_EV_SHOOTDOWN,
				 self ? (int)self->id : -1, ipa, ns);
	}
}

/*
 * The invalidation the simulator issues after its own range operations
 * (write protection, dirty-state clears): by range where the format has
 * one; on EPT and NPT, which have no invalidation by address, the whole
 * VM (a single-context INVEPT, an ASID flush), as the core does for its own.
 */
void sim_flush_range(struct slat_vm *vm, uint64_t ipa, uint64_t size)
{
	enum slat_format_id f = slat_table_config(&vm->table)->format;
	if (f == SLAT_FMT_EPT || f == SLAT_FMT_NPT)
		ipa = size = 0;
	sim_tlbi(vm, ipa, size);
	sim_vt_tlbi(vm, size ? SLAT_TLBI_RANGE : SLAT_TLBI_VMID);
}

static void vm_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
			enum slat_tlbi_scope scope)
{
	struct slat_vm *vm = ctx;
	struct slat_vcpu *v = sim_current_vcpu;
	uint64_t size = level == SLAT_LEVEL_ANY
				? 1ull << vm->leaf_shifts[0]
				: slat_level_size(&vm->table, level);

	/* A local invalidation only concerns the calling vCPU's TLB. */
	if (scope == SLAT_TLBI_LOCAL && v && v->vm == vm) {
		sim_tlb_drop_range(v, ipa.ipa & ~(size - 1), size);
		v->st.local_invals++;
		sim_vt_tlbi(vm, SLAT_TLBI_IPA_LOCAL);
		return;
	}
	sim_tlbi(vm, ipa.ipa & ~(size - 1), size);
	sim_vt_tlbi(vm, SLAT_TLBI_IPA);
}

static void vm_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	sim_tlbi(ctx, ipa.ipa, size);
	sim_vt_tlbi(ctx, SLAT_TLBI_RANGE);
}

static void vm_tlbi_vmid(void *ctx)
{
	sim_tlbi(ctx, 0, 0);
	sim_vt_tlbi(ctx, SLAT_TLBI_VMID);
}

/* ---- VM ---- */

enum slat_tlbi_policy sim_policy(enum slat_vm_flush f)
{
	return f == SLAT_VM_FLUSH_ENTRY ? SLAT_FLUSH_ENTRY
	       : f == SLAT_VM_FLUSH_VMID ? SLAT_FLUSH_VMID
					 : SLAT_FLUSH_RANGE;
}

int sim_level_of_shift(struct slat_vm *vm, unsigned shift)
{
	for (int l = SLAT_LAST_LEVEL; l >= slat_table_geometry(&vm->table)->start_level; l--)
		if (slat_level_size(&vm->table, l) == 1ull << shift)
			return l;
	return SLAT_LAST_LEVEL;
}

struct slat_vm *slat_vm_create(const struct slat_vm_config *cfg, int *err)
{
	struct slat_vm *vm = calloc(1, sizeof(*vm));
	struct slat_geometry geo;
	pthread_rwlockattr_t ra;
	int ret;

	if (err)
		*err = 0;
	if (!vm) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	if (cfg)
		vm->cfg = *cfg;
	if (!vm->cfg.table.format) {
		vm->cfg.table.format = SLAT_FMT_ARM_S2;
		vm->cfg.table.granule = 4096;
		vm->cfg.table.ia_bits = 40;
		vm->cfg.table.features |= cfg ? cfg->table.features : 0;
	}
	if (!vm->cfg.tlb_entries)
		vm->cfg.tlb_entries = 1024;
	if (!vm->cfg.arena_bytes)
		vm->cfg.arena_bytes = 1ull << 30;
	ret = -EINVAL;
	if (vm->cfg.tlb_entries & (vm->cfg.tlb_entries - 1))
		goto fail;
	if (vm->cfg.hw_dirty && !(vm->cfg.table.features & SLAT_FEAT_HWDIRTY))
		goto fail;
	if (vm->cfg.fault_lock > SLAT_VM_FAULT_LOCK_WRITE)
		goto fail;
	/* PML is Intel's, and logs what the dirty bits record. */
	if (vm->cfg.pml && (!vm->cfg.hw_dirty ||
			    vm->cfg.table.format != SLAT_FMT_EPT))
		goto fail;
	if (slat_config_geometry(&vm->cfg.table, &geo))
		goto fail;
	vm->granule = 1ull << geo.granule_shift;
	ret = slat_hosted_init(&vm->hosted, vm->cfg.arena_bytes, (uint32_t)vm->granule,
			       1ull << 30) ? -ENOMEM : 0;
	if (ret)
		goto fail;
	vm->next_hpa = (1ull << 30) + vm->cfg.arena_bytes;
	vm->ops = (struct slat_mm_ops){
		.size = sizeof(struct slat_mm_ops),
		.zalloc_root = vm_zalloc_root, .free_root = vm_free_root,
		.free_page = vm_free_page, .free_deferred = vm_free_deferred,
		.refcount = vm_refcount, .virt_to_phys = vm_virt_to_phys,
		.phys_to_virt = vm_phys_to_virt,
		.dcache_clean_inval_poc = vm_dcache_clean,
		.icache_inval_pou = vm_icache_inval,
		.tlbi_ipa = vm_tlbi_ipa, .tlbi_range = vm_tlbi_range,
		.tlbi_vmid = vm_tlbi_vmid,
	};
	ret = slat_table_init(&vm->table, &vm->cfg.table, &vm->ops, vm);
	if (ret) {
		ret = ret == SLAT_E_NOMEM ? -ENOMEM : -EINVAL;
		goto fail;
	}
	vm->table_ready = true;
	for (int l = slat_table_geometry(&vm->table)->start_level; l <= SLAT_LAST_LEVEL; l++)
		if (l >= 0 && (slat_table_geometry(&vm->table)->leaf_levels >> l) & 1)
			vm->leaf_shifts[vm->nr_leaf_shifts++] =
				(uint8_t)__builtin_ctzll(slat_level_size(&vm->table, l));
	vm->gen = 1;
	sim_sched_init(vm);
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&vm->mmu_lock, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&vm->slots_lock, NULL);
	pthread_mutex_init(&vm->inval_lock, NULL);
	pthread_mutex_init(&vm->ring_lock, NULL);
	pthread_cond_init(&vm->ring_cond, NULL);
	pthread_mutex_init(&vm->ms.lock, NULL);
	pthread_cond_init(&vm->ms.go, NULL);
	pthread_cond_init(&vm->ms.done, NULL);
	/* Deferred frees through the arena's RCU (free_deferred). */
	if (slat_hosted_enable_rcu(&vm->hosted, &vm->table)) {
		ret = -ENOMEM;
		slat_vm_destroy(vm);
		vm = NULL;
		goto out;
	}
	if (slat_hosted_cache_init(&vm->host_cache, 64)) {
		ret = -ENOMEM;
		slat_vm_destroy(vm);
		vm = NULL;
		goto out;
	}
	sim_rcu_register();
	return vm;
fail:
	if (vm->hosted.arena)
		slat_hosted_fini(&vm->hosted);
	free(vm);
	vm = NULL;
out:
	if (err)
		*err = ret;
	return vm;
}

void slat_vm_destroy(struct slat_vm *vm)
{
	if (!vm)
		return;
	slat_vm_memstress_stop(vm);
	for (uint32_t i = 0; i < vm->nr_vcpus; i++)
		if (vm->vcpus[i])
			slat_vcpu_join(vm->vcpus[i]);
	/* No vCPU left for the table's last invalidations to reach. */
	uint32_t nr = vm->nr_vcpus;
	vm->nr_vcpus = 0;
	for (uint32_t i = 0; i < nr; i++) {
		struct slat_vcpu *v = vm->vcpus[i];

		vm->vcpus[i] = NULL;
		if (!v)
			continue;
		slat_hosted_cache_fini(&v->cache);
		sim_co_free(v);
		free(v->tlb);
		free(v->ring.e);
		free(v);
	}
	/* Deferred frees and retired slot sets go first. */
	slat_hosted_rcu_barrier();
	if (vm->table_ready)
		slat_table_destroy(&vm->table);
	slat_hosted_rcu_barrier();
	sim_slots_destroy(vm);
	slat_hosted_cache_fini(&vm->host_cache);
	slat_hosted_fini(&vm->hosted);
	pthread_rwlock_destroy(&vm->mmu_lock);
	pthread_mutex_destroy(&vm->slots_lock);
	pthread_mutex_destroy(&vm->inval_lock);
	pthread_mutex_destroy(&vm->ring_lock);
	pthread_cond_destroy(&vm->ring_cond);
	pthread_mutex_destroy(&vm->ms.lock);
	pthread_cond_destroy(&vm->ms.go);
	pthread_cond_destroy(&vm->ms.done);
	free(vm);
}

struct slat_table *slat_vm_table(struct slat_vm *vm)
{
	return &vm->table;
}

void slat_vm_mmu_lock(struct slat_vm *vm)
{
	pthread_rwlock_wrlock(&vm->mmu_lock);
}

void slat_vm_mmu_unlock(struct slat_vm *vm)
{
	pthread_rwlock_unlock(&vm->mmu_lock);
}

/* The host's cache, holding at least @pages pages (mmu_lock held). */
struct slat_page_cache *sim_host_cache(struct slat_vm *vm, int64_t pages)
{
	struct slat_page_cache *c = &vm->host_cache;

	/* A count refused (bad input): the operation reports it. */
	if (pages < 0 || pages > UINT32_MAX)
		return NULL;
	if (pages > c->capacity) {
		slat_hosted_cache_fini(c);
		if (slat_hosted_cache_init(c, (uint32_t)pages))
			return NULL;
	}
	if (c->nr < pages &&
	    slat_hosted_cache_topup(&vm->hosted, c, (uint32_t)pages))
		return NULL;
	return c;
}

struct slat_page_cache *slat_vm_host_cache(struct slat_vm *vm, uint64_t pages)
{
	return sim_host_cache(vm, pages);
}

int slat_vm_enable_cap(struct slat_vm *vm, enum slat_vm_cap cap, uint64_t arg)
{
	bool has_slots = vm->slots && vm->slots->nr;

	switch (cap) {
	case SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2:
		if (arg & ~(uint64_t)(SLAT_VM_MANUAL_PROTECT_ENABLE |
				      SLAT_VM_INITIALLY_SET) ||
		    (arg && !(arg & SLAT_VM_MANUAL_PROTECT_ENABLE)))
			return sim_err(vm, -EINVAL, "manual protect: bad flags 0x%llx",
				       (unsigned long long)arg);
		vm->manual_protect = (uint32_t)arg;
		return 0;
	case SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE:
		if (has_slots)
			return sim_err(vm, -EBUSY,
				       "eager split chunk size: memslots exist");
		if (arg) {
			bool ok = false;

			for (int i = 0; i < vm->nr_leaf_shifts; i++)
				ok |= arg == 1ull << vm->leaf_shifts[i];
			if (!ok)
				return sim_err(vm, -EINVAL,
					       "eager split chunk size 0x%llx is "
					       "not a block size of the table",
					       (unsigned long long)arg);
		}
		vm->eager_chunk = arg;
		return 0;
	case SLAT_VM_CAP_DIRTY_LOG_RING:
		if (vm->nr_vcpus)
			return sim_err(vm, -EBUSY, "dirty ring: vCPUs exist");
		if (arg & (arg - 1) || arg > (1u << 24) || (arg && arg < 64))
			return sim_err(vm, -EINVAL,
				       "dirty ring size %llu: a power of two, "
				       "64 to 16M entries",
				       (unsigned long long)arg);
		vm->ring_size = (uint32_t)arg;
		return 0;
	}
	return sim_err(vm, -EINVAL, "unknown cap %d", (int)cap);
}

/* ---- counters ---- */

void slat_vm_stats_read(struct slat_vm *vm, struct slat_vm_stats *s)
{
	memset(s, 0, sizeof(*s));
	/* The RCU callback thread adds to the table's counters at any time. */
	slat_stats_read(&vm->table, &s->table);
	for (uint32_t i = 0; i < vm->nr_vcpus; i++) {
		struct slat_vcpu *v = vm->vcpus[i];
		struct vcpu_stats *c;

		if (!v)
			continue;
		slat_stats_add(&s->table, &v->core);
		c = &v->st;
		s->accesses += c->accesses;
		s->writes += c->writes;
		s->tlb_hits += c->tlb_hits;
		s->tlb_misses += c->tlb_misses;
		s->tlb_flushes += c->tlb_flushes;
		s->tlb_invalidated += c->tlb_invalidated;
		for (int k = 0; k < SLAT_VM_FAULT_KINDS; k++)
			s->faults[k] += c->faults[k];
		s->fault_ns += c->fault_ns;
		s->fault_again += c->fault_again;
		s->maps += c->maps;
		s->relaxes += c->relaxes;
		s->mkyoungs += c->mkyoungs;
		for (int l = 0; l < 4; l++)
			s->mapped[l] += c->mapped[l];
		s->cache_topups += c->cache_topups;
		s->cache_pages += c->cache_pages;
		s->dirty_marked += c->dirty_marked;
		s->ring_pushes += c->ring_pushes;
		s->ring_full_waits += c->ring_full_waits;
		s->mmio_exits += c->mmio_exits;
		s->mmio_accesses += c->mmio_accesses;
		s->local_invals += c->local_invals;
		s->cmo_calls += c->cmo_calls;
		s->cmo_bytes += c->cmo_bytes;
		/* The core counts the cleans SLAT_SKIP_CMO left to us. */
		s->cmo_elided += v->core.cmo_skipped;
		s->cmo_ns += c->cmo_ns;
		s->pml_logged += c->pml_logged;
		s->pml_full_exits += c->pml_full_exits;
		s->host_cow += c->host_cow;
		s->host_thp_splits += c->host_thp_splits;
		s->host_invals += c->host_invals;
	}
	s->shootdowns = sim_load(&vm->shootdowns);
	s->shootdown_waits = sim_load(&vm->shootdown_waits);
	s->shootdown_ns = sim_load(&vm->shootdown_ns);
	s->deferred_frees = sim_load(&vm->hosted.deferred_freed);
	s->cmo_calls += sim_load(&vm->host_cmo_calls);
	s->cmo_bytes += sim_load(&vm->host_cmo_bytes);
	s->cmo_ns += sim_load(&vm->host_cmo_ns);
	s->wrprotected_pages = sim_load(&vm->wrprotected_pages);
}

void slat_vm_stats_diff(const struct slat_vm_stats *a,
			const struct slat_vm_stats *b, struct slat_vm_stats *d)
{
	/* Every field is a uint64_t counter. */
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	uint64_t *pd = (uint64_t *)d;

	_Static_assert(sizeof(*a) % sizeof(uint64_t) == 0, "counters only");
	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		pd[i] = pb[i] - pa[i];
}

void slat_vm_stats_print(const struct slat_vm_stats *s, void *file)
{
	static const char *const wr[] = { "leaf", "table", "clear", "break", "attr" };
	static const char *const tl[] = { "ipa", "ipa_local", "range", "vmid" };
	static const char *const fk[] = { "translation", "permission", "access_flag" };
	FILE *f = file ? file : stdout;
#define P(name, v) do { if (v) fprintf(f, "  %-26s %llu\n", name, (unsigned long long)(v)); } while (0)
	char n[64];

	P("table.visited", s->table.visited);
	for (int i = 0; i < SLAT_WRITE_KINDS; i++) {
		snprintf(n, sizeof(n), "table.written.%s", wr[i]);
		P(n, s->table.written[i]);
	}
	for (int i = 0; i < SLAT_TLBI_KINDS; i++) {
		snprintf(n, sizeof(n), "table.tlbi.%s", tl[i]);
		P(n, s->table.tlbi[i]);
	}
	P("table.dcache_calls", s->table.dcache_calls);
	P("table.dcache_bytes", s->table.dcache_bytes);
	P("table.pages_alloc", s->table.pages_alloc);
	P("table.pages_freed", s->table.pages_freed);
	P("table.pages_deferred", s->table.pages_deferred);
	P("table.retries", s->table.retries);
	P("accesses", s->accesses);
	P("writes", s->writes);
	P("tlb_hits", s->tlb_hits);
	P("tlb_misses", s->tlb_misses);
	P("tlb_flushes", s->tlb_flushes);
	P("tlb_invalidated", s->tlb_invalidated);
	for (int i = 0; i < SLAT_VM_FAULT_KINDS; i++) {
		snprintf(n, sizeof(n), "faults.%s", fk[i]);
		P(n, s->faults[i]);
	}
	P("fault_ns", s->fault_ns);
	P("fault_again", s->fault_again);
	P("maps", s->maps);
	P("relaxes", s->relaxes);
	P("mkyoungs", s->mkyoungs);
	for (int l = 0; l < 4; l++) {
		snprintf(n, sizeof(n), "mapped.level%d", l);
		P(n, s->mapped[l]);
	}
	P("shootdowns", s->shootdowns);
	P("shootdown_waits", s->shootdown_waits);
	P("shootdown_ns", s->shootdown_ns);
	P("local_invals", s->local_invals);
	P("cmo_calls", s->cmo_calls);
	P("cmo_bytes", s->cmo_bytes);
	P("cmo_elided", s->cmo_elided);
	P("cmo_ns", s->cmo_ns);
	P("cache_topups", s->cache_topups);
	P("cache_pages", s->cache_pages);
	P("dirty_marked", s->dirty_marked);
	P("ring_pushes", s->ring_pushes);
	P("ring_full_waits", s->ring_full_waits);
	P("mmio_exits", s->mmio_exits);
	P("mmio_accesses", s->mmio_accesses);
	P("deferred_frees", s->deferred_frees);
	P("wrprotected_pages", s->wrprotected_pages);
	P("pml_logged", s->pml_logged);
	P("pml_full_exits", s->pml_full_exits);
	P("host_cow", s->host_cow);
	P("host_thp_splits", s->host_thp_splits);
	P("host_invals", s->host_invals);
#undef P
}
