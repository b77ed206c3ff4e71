/* SPDX-License-Identifier: MIT */
/*
 * Memslots: backing sources, the fake host-physical address space, and
 * KVM_SET_USER_MEMORY_REGION.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

struct backing_desc {
	const char *name;
	enum backing_kind kind;
	uint64_t page_size;        /* 0: host base page, 1: THP, 2: default huge */
};

static const struct backing_desc backings[] = {
	{ "anonymous", BACK_ANON, 0 },
	{ "anonymous_thp", BACK_THP, 1 },
	{ "anonymous_hugetlb", BACK_HUGETLB, 2 },
	{ "anonymous_hugetlb_2mb", BACK_HUGETLB, 2ull << 20 },
	{ "anonymous_hugetlb_1gb", BACK_HUGETLB, 1ull << 30 },
	{ "shmem", BACK_SHMEM, 0 },
	{ "synthetic", BACK_SYNTH, 4096 },
	{ "synthetic_2mb", BACK_SYNTH, 2ull << 20 },
	{ "synthetic_1gb", BACK_SYNTH, 1ull << 30 },
};

static uint64_t read_u64_file(const char *path, uint64_t dflt)
{
	FILE *f = fopen(path, "r");
	unsigned long long v;

	if (!f)
		return dflt;
	if (fscanf(f, "%llu", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

static uint64_t thp_size(void)
{
	return read_u64_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
			     2ull << 20);
}

static uint64_t default_hugepage_size(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 2048;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1)
				break;
		fclose(f);
	}
	return kb << 10;
}

static const struct backing_desc *backing_find(const char *name)
{
	if (!name)
		name = "anonymous";
	for (size_t i = 0; i < sizeof(backings) / sizeof(backings[0]); i++)
		if (!strcmp(backings[i].name, name))
			return &backings[i];
	return NULL;
}

static uint64_t desc_page_size(const struct backing_desc *d)
{
	if (d->page_size == 0)
		return (uint64_t)sysconf(_SC_PAGESIZE);
	if (d->page_size == 1)
		return thp_size();
	if (d->page_size == 2)
		return default_hugepage_size();
	return d->page_size;
}

uint64_t slat_vm_backing_page_size(const char *backing)
{
	const struct backing_desc *d = backing_find(backing);

	return d ? desc_page_size(d) : 0;
}

static int hugetlb_check(uint64_t psize, uint64_t bytes, char *why,
			 size_t len)
{
	char path[128];
	uint64_t kb = psize >> 10, need = (bytes + psize - 1) / psize, free_p;

	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/hugepages/hugepages-%llukB/free_hugepages",
		 (unsigned long long)kb);
	free_p = read_u64_file(path, 0);
	if (free_p >= need)
		return 1;
	if (why) {
		if (psize == default_hugepage_size() && psize != (1ull << 30))
			snprintf(why, len,
				 "%llu free huge pages of %llu kB, %llu needed; "
				 "reserve them with: echo %llu > "
				 "/proc/sys/vm/nr_hugepages",
				 (unsigned long long)free_p,
				 (unsigned long long)kb,
				 (unsigned long long)need,
				 (unsigned long long)need);
		else
			snprintf(why, len,
				 "%llu free huge pages of %llu kB, %llu needed; "
				 "reserve them with: echo %llu > "
				 "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages"
				 " (1 GiB pages: at boot, hugepagesz=1G hugepages=%llu)",
				 (unsigned long long)free_p,
				 (unsigned long long)kb,
				 (unsigned long long)need,
				 (unsigned long long)need,
				 (unsigned long long)kb,
				 (unsigned long long)need);
	}
	return 0;
}

int slat_vm_backing_available(const char *backing, uint64_t bytes, char *why,
			      size_t why_len)
{
	const struct backing_desc *d = backing_find(backing);

	if (!d) {
		if (why)
			snprintf(why, why_len, "unknown backing source '%s'",
				 backing);
		return 0;
	}
	if (d->kind == BACK_HUGETLB)
		return hugetlb_check(desc_page_size(d), bytes, why, why_len);
	return 1;
}

/* mmap @len bytes aligned to @align with a PROT_NONE guard page each side. */
static void *map_aligned(struct sim_slot *s, size_t len, size_t align,
			 int prot_flags, int fd)
{
	size_t guard = (size_t)sysconf(_SC_PAGESIZE);
	size_t total = len + align + 2 * guard;
	uint8_t *raw = mmap(NULL, total, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)raw + guard + align - 1) & ~(uintptr_t)(align - 1));
	if (mmap(p, len, PROT_READ | PROT_WRITE, prot_flags | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		munmap(raw, total);
		return NULL;
	}
	s->map_base = raw;
	s->map_len = total;
	return p;
}

static int back_alloc(struct slat_vm *vm, struct sim_slot *s,
		      const struct backing_desc *d)
{
	char why[256];

	s->memfd = -1;
	switch (d->kind) {
	case BACK_SYNTH:
		return 0;
	case BACK_ANON:
		s->hva = map_aligned(s, s->size, s->page_size,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
		break;
	case BACK_THP:
		s->hva = map_aligned(s, s->size, s->page_size,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
		if (s->hva)
			madvise(s->hva, s->size, MADV_HUGEPAGE);
		break;
	case BACK_HUGETLB: {
		int lg = __builtin_ctzll(s->page_size);
		void *p;

		if (!hugetlb_check(s->page_size, s->size, why, sizeof(why)))
			return sim_err(vm, -ENOMEM, "backing %s: %s", d->name, why);
		p = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
				 (lg << MAP_HUGE_SHIFT), -1, 0);
		if (p == MAP_FAILED) {
			hugetlb_check(s->page_size, s->size * 2, why, sizeof(why));
			return sim_err(vm, -ENOMEM, "backing %s: mmap failed: %s",
				       d->name, why);
		}
		s->hva = p;
		s->map_base = p;
		s->map_len = s->size;
		return 0;
	}
	case BACK_SHMEM:
		s->memfd = memfd_create("slat-sim", 0);
		if (s->memfd < 0 || ftruncate(s->memfd, (off_t)s->size))
			return sim_err(vm, -ENOMEM, "backing shmem: memfd failed");
		s->hva = map_aligned(s, s->size, s->page_size, MAP_SHARED,
				     s->memfd);
		break;
	}
	if (!s->hva)
		return sim_err(vm, -ENOMEM, "backing %s: no host memory for %llu bytes",
			       d->name, (unsigned long long)s->size);
	return 0;
}

void sim_slot_free(struct sim_slot *s)
{
	if (!s)
		return;
	if (s->map_base)
		munmap(s->map_base, s->map_len);
	if (s->memfd >= 0)
		close(s->memfd);
	free(s->dirty);
	free(s->ring_pending);
	sim_host_mm_free(s);
	free(s);
}

/* ---- the slot set ---- */

struct sim_slot *sim_slot_by_gpa(struct sim_slots *ss, uint64_t gpa)
{
	uint32_t lo = 0, hi = ss ? ss->nr : 0;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		struct sim_slot *s = ss->s[mid];

		if (gpa < s->gpa)
			hi = mid;
		else if (gpa - s->gpa >= s->size)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

struct sim_slot *sim_slot_by_hpa(struct sim_slots *ss, uint64_t hpa)
{
	for (uint32_t i = 0; ss && i < ss->nr; i++) {
		struct sim_slot *s = ss->s[i];

		if (hpa >= s->hpa && hpa - s->hpa < s->size)
			return s;
	}
	return NULL;
}

struct sim_slot *sim_slot_by_id(struct sim_slots *ss, uint32_t id)
{
	for (uint32_t i = 0; ss && i < ss->nr; i++)
		if (!ss->s[i]->device && ss->s[i]->id == id)
			return ss->s[i];
	return NULL;
}


static struct sim_slots *slots_copy(struct sim_slots *old, int extra)
{
	uint32_t n = old ? old->nr : 0;
	struct sim_slots *ss = malloc(sizeof(*ss) +
				      (n + (extra > 0 ? 1 : 0)) * sizeof(ss->s[0]));

	if (!ss)
		return NULL;
	ss->nr = n;
	if (n)
		memcpy(ss->s, old->s, n * sizeof(ss->s[0]));
	return ss;
}

static void slots_publish(struct slat_vm *vm, struct sim_slots *ss)
{
	struct sim_slots *old = vm->slots;

	__atomic_store_n(&vm->slots, ss, __ATOMIC_RELEASE);
	/* vCPUs may still search the old set until their read-side
	 * sections end. */
	if (old && slat_hosted_rcu_defer(free, old)) {
		slat_hosted_rcu_synchronize();
		free(old);
	}
}

/* Insert, keeping the set sorted by gpa. -EEXIST on overlap. */
int sim_slots_insert(struct slat_vm *vm, struct sim_slot *s)
{
	struct sim_slots *ss;
	uint32_t i;

	for (i = 0; vm->slots && i < vm->slots->nr; i++) {
		struct sim_slot *o = vm->slots->s[i];

		if (s->gpa < o->gpa + o->size && o->gpa < s->gpa + s->size)
			return sim_err(vm, -EEXIST,
				       "[0x%llx, 0x%llx) overlaps %s %u at "
				       "[0x%llx, 0x%llx)",
				       (unsigned long long)s->gpa,
				       (unsigned long long)(s->gpa + s->size),
				       o->device ? "MMIO region" : "memslot",
				       o->id, (unsigned long long)o->gpa,
				       (unsigned long long)(o->gpa + o->size));
	}
	ss = slots_copy(vm->slots, 1);
	if (!ss)
		return sim_err(vm, -ENOMEM, "out of memory");
	for (i = 0; i < ss->nr && ss->s[i]->gpa < s->gpa; i++)
		;
	memmove(&ss->s[i + 1], &ss->s[i], (ss->nr - i) * sizeof(ss->s[0]));
	ss->s[i] = s;
	ss->nr++;
	slots_publish(vm, ss);
	return 0;
}

/* The slot or MMIO region other than @self that [gpa, gpa+size) meets. */
static struct sim_slot *slots_overlap(struct slat_vm *vm, uint64_t gpa,
				      uint64_t size, const struct sim_slot *self)
{
	for (uint32_t i = 0; vm->slots && i < vm->slots->nr; i++) {
		struct sim_slot *o = vm->slots->s[i];

		if (o != self && gpa < o->gpa + o->size && o->gpa < gpa + size)
			return o;
	}
	return NULL;
}

/* Publish a set where @n (same size, another gpa) takes @old's place. */
static void slots_replace(struct slat_vm *vm, struct sim_slot *old,
			  struct sim_slot *n)
{
	struct sim_slots *ss = slots_copy(vm->slots, 0);
	uint32_t i, j = 0;

	if (!ss)
		abort();
	for (i = 0; i < ss->nr; i++)
		if (ss->s[i] != old)
			ss->s[j++] = ss->s[i];
	for (i = 0; i < j && ss->s[i]->gpa < n->gpa; i++)
		;
	memmove(&ss->s[i + 1], &ss->s[i], (j - i) * sizeof(ss->s[0]));
	ss->s[i] = n;
	ss->nr = j + 1;
	slots_publish(vm, ss);
}

void sim_slots_remove(struct slat_vm *vm, struct sim_slot *s)
{
	struct sim_slots *ss = slots_copy(vm->slots, 0);
	uint32_t j = 0;

	if (!ss)
		abort();
	for (uint32_t i = 0; i < ss->nr; i++)
		if (ss->s[i] != s)
			ss->s[j++] = ss->s[i];
	ss->nr = j;
	slots_publish(vm, ss);
}

void sim_slots_destroy(struct slat_vm *vm)
{
	struct sim_slots *ss = vm->slots;

	if (!ss)
		return;
	for (uint32_t i = 0; i < ss->nr; i++)
		sim_slot_free(ss->s[i]);
	free(ss);
	vm->slots = NULL;
}

uint64_t sim_alloc_hpa(struct slat_vm *vm, uint64_t size, uint64_t congruent)
{
	uint64_t base = (vm->next_hpa + SIM_HPA_ALIGN - 1) & ~(SIM_HPA_ALIGN - 1);
	uint64_t hpa = base + (congruent & (SIM_HPA_ALIGN - 1));

	vm->next_hpa = hpa + size;
	return hpa;
}

/* ---- KVM_SET_USER_MEMORY_REGION ---- */

static int slot_create(struct slat_vm *vm, const struct slat_vm_memslot *m)
{
	const struct backing_desc *d = backing_find(m->backing);
	struct sim_slot *s;
	uint64_t g = vm->granule, limit;
	int ret;

	if (!d)
		return sim_err(vm, -EINVAL,
			       "unknown backing source '%s' (anonymous, "
			       "anonymous_thp, anonymous_hugetlb, "
			       "anonymous_hugetlb_2mb, anonymous_hugetlb_1gb, "
			       "shmem, synthetic, synthetic_2mb, synthetic_1gb)",
			       m->backing);
	if (m->flags & ~(SLAT_VM_MEM_LOG_DIRTY_PAGES | SLAT_VM_MEM_READONLY))
		return sim_err(vm, -EINVAL, "slot %u: unknown flags 0x%x",
			       m->slot, m->flags);
	if (m->guest_phys_addr % g || m->memory_size % g)
		return sim_err(vm, -EINVAL,
			       "slot %u: base 0x%llx and size 0x%llx must be "
			       "multiples of the granule 0x%llx", m->slot,
			       (unsigned long long)m->guest_phys_addr,
			       (unsigned long long)m->memory_size,
			       (unsigned long long)g);
	limit = 1ull << slat_table_geometry(&vm->table)->ia_bits;
	if (m->guest_phys_addr >= limit || m->memory_size > limit - m->guest_phys_addr)
		return sim_err(vm, -EINVAL,
			       "slot %u: [0x%llx, +0x%llx) beyond the %u-bit IPA space",
			       m->slot, (unsigned long long)m->guest_phys_addr,
			       (unsigned long long)m->memory_size,
			       slat_table_geometry(&vm->table)->ia_bits);
	s = calloc(1, sizeof(*s));
	if (!s)
		return sim_err(vm, -ENOMEM, "out of memory");
	s->id = m->slot;
	s->flags = m->flags & SLAT_VM_MEM_READONLY;
	s->gpa = m->guest_phys_addr;
	s->size = m->memory_size;
	s->kind = d->kind;
	s->memfd = -1;
	snprintf(s->backing, sizeof(s->backing), "%s", d->name);
	s->page_size = desc_page_size(d);
	if ((d->kind == BACK_HUGETLB || d->kind == BACK_SYNTH) &&
	    s->size % s->page_size) {
		uint64_t psize = s->page_size;

		sim_slot_free(s);
		return sim_err(vm, -EINVAL,
			       "slot %u: size 0x%llx is not a multiple of the "
			       "%s page size 0x%llx", m->slot,
			       (unsigned long long)m->memory_size, d->name,
			       (unsigned long long)psize);
	}
	if (s->page_size < g)
		s->page_size = g;
	s->npages = s->size / g;
	s->dirty = calloc((s->npages + 63) / 64, sizeof(uint64_t));
	if (vm->ring_size && vm->cfg.hw_dirty)
		s->ring_pending = calloc((s->npages + 63) / 64, sizeof(uint64_t));
	if (!s->dirty || (vm->ring_size && vm->cfg.hw_dirty && !s->ring_pending) ||
	    sim_host_mm_init(vm, s)) {
		sim_slot_free(s);
		return sim_err(vm, -ENOMEM, "out of memory");
	}
	ret = back_alloc(vm, s, d);
	if (ret) {
		sim_slot_free(s);
		return ret;
	}
	/* Host PAs congruent with host addresses (or with the IPA when there
	 * is no memory), so block alignment is the same in both. */
	s->hpa = sim_alloc_hpa(vm, s->size,
			       s->hva ? (uint64_t)(uintptr_t)s->hva : s->gpa);
	if (s->hpa + s->size > (1ull << slat_table_geometry(&vm->table)->pa_bits)) {
		sim_slot_free(s);
		return sim_err(vm, -ENOMEM, "host PA space exhausted");
	}
	pthread_rwlock_wrlock(&vm->mmu_lock);
	ret = sim_slots_insert(vm, s);
	pthread_rwlock_unlock(&vm->mmu_lock);
	if (ret) {
		sim_slot_free(s);
		return ret;
	}
	if (m->flags & SLAT_VM_MEM_LOG_DIRTY_PAGES)
		return sim_logging_enable(vm, s);
	return 0;
}

/* Unmap [ipa, ipa + size) as the host does, flushing as range_flush says
 * (MMU lock held for writing). */
int sim_unmap(struct slat_vm *vm, uint64_t ipa, uint64_t size)
{
	int64_t need = slat_pages_needed(
		&vm->table, SLAT_NEED(.kind = SLAT_OP_UNMAP,
				      .ipa = slat_ipa(ipa), .size = size));
	struct slat_op op = { .flush = sim_policy(vm->cfg.range_flush),
			      .cache = sim_host_cache(vm, need) };
	return slat_unmap(&vm->table, slat_ipa(ipa), size, &op);
}

/* Unmap the whole slot (MMU lock held for writing). */
static int slot_unmap(struct slat_vm *vm, const struct sim_slot *s)
{
	return sim_unmap(vm, s->gpa, s->size);
}

static int slot_delete(struct slat_vm *vm, struct sim_slot *s)
{
	int ret;

	pthread_rwlock_wrlock(&vm->mmu_lock);
	ret = slot_unmap(vm, s);
	sim_slots_remove(vm, s);
	pthread_rwlock_unlock(&vm->mmu_lock);
	if (ret < 0)
		return sim_err(vm, -EFAULT, "slot %u: unmap failed: %s", s->id,
			       slat_strerror(ret));
	/* vCPUs may still look the slot up on a TLB miss until they leave
	 * their read-side sections. */
	slat_hosted_rcu_synchronize();
	sim_slot_free(s);
	return 0;
}

/*
 * Move @s to @gpa (KVM_MR_MOVE): its translations are removed and
 * invalidated, then the slot is published at its new base with the same
 * memory, dirty bitmap (page offsets are slot-relative) and flags. Guest
 * accesses at the new base fault in new translations; at the old one they
 * exit. The slot's structure is replaced, not changed, as vCPUs may be
 * reading it under RCU.
 */
static int slot_move(struct slat_vm *vm, struct sim_slot *s, uint64_t gpa)
{
	uint64_t limit = 1ull << slat_table_geometry(&vm->table)->ia_bits;
	struct sim_slot *n, *o;
	int ret;

	if (gpa % vm->granule)
		return sim_err(vm, -EINVAL,
			       "slot %u: new base 0x%llx is not a multiple of the "
			       "granule 0x%llx", s->id, (unsigned long long)gpa,
			       (unsigned long long)vm->granule);
	if (gpa >= limit || s->size > limit - gpa)
		return sim_err(vm, -EINVAL,
			       "slot %u: [0x%llx, +0x%llx) beyond the %u-bit IPA space",
			       s->id, (unsigned long long)gpa,
			       (unsigned long long)s->size, slat_table_geometry(&vm->table)->ia_bits);
	o = slots_overlap(vm, gpa, s->size, s);
	if (o)
		return sim_err(vm, -EEXIST,
			       "slot %u moved to [0x%llx, 0x%llx) overlaps %s %u at "
			       "[0x%llx, 0x%llx)", s->id, (unsigned long long)gpa,
			       (unsigned long long)(gpa + s->size),
			       o->device ? "MMIO region" : "memslot", o->id,
			       (unsigned long long)o->gpa,
			       (unsigned long long)(o->gpa + o->size));
	n = malloc(sizeof(*n));
	if (!n)
		return sim_err(vm, -ENOMEM, "out of memory");
	*n = *s;
	n->gpa = gpa;
	/* Synthetic memory's host PAs follow the IPA's alignment. */
	if (!s->hva)
		n->hpa = sim_alloc_hpa(vm, s->size, gpa);
	if (n->hpa + n->size > (1ull << slat_table_geometry(&vm->table)->pa_bits)) {
		free(n);
		return sim_err(vm, -ENOMEM, "host PA space exhausted");
	}
	pthread_rwlock_wrlock(&vm->mmu_lock);
	if (s->logging)
		sim_dirty_save(vm, s);
	ret = slot_unmap(vm, s);
	if (ret >= 0)
		slots_replace(vm, s, n);
	pthread_rwlock_unlock(&vm->mmu_lock);
	if (ret < 0) {
		free(n);
		return sim_err(vm, -EFAULT, "slot %u: unmap failed: %s", s->id,
			       slat_strerror(ret));
	}
	/* The old structure only: its memory now belongs to @n. */
	if (slat_hosted_rcu_defer(free, s)) {
		slat_hosted_rcu_synchronize();
		free(s);
	}
	return 0;
}

static int slot_flags(struct slat_vm *vm, struct sim_slot *s, uint32_t flags)
{
	if ((flags & SLAT_VM_MEM_LOG_DIRTY_PAGES) && !s->logging)
		return sim_logging_enable(vm, s);
	if (!(flags & SLAT_VM_MEM_LOG_DIRTY_PAGES) && s->logging)
		return sim_logging_disable(vm, s);
	return 0;
}

int slat_vm_set_user_memory_region(struct slat_vm *vm,
				   const struct slat_vm_memslot *m)
{
	struct sim_slot *s;
	int ret;

	if (!vm || !m)
		return -EINVAL;
	pthread_mutex_lock(&vm->slots_lock);
	s = sim_slot_by_id(vm->slots, m->slot);
	if (!m->memory_size) {
		ret = s ? slot_delete(vm, s)
			: sim_err(vm, -ENOENT, "slot %u does not exist", m->slot);
	} else if (!s) {
		ret = slot_create(vm, m);
	} else if (s->size != m->memory_size) {
		ret = sim_err(vm, -EINVAL,
			      "slot %u exists at [0x%llx, +0x%llx): resizing is "
			      "not supported; delete it first",
			      m->slot, (unsigned long long)s->gpa,
			      (unsigned long long)s->size);
	} else if ((m->flags ^ s->flags) & SLAT_VM_MEM_READONLY) {
		ret = sim_err(vm, -EINVAL, "slot %u: READONLY cannot change",
			      m->slot);
	} else if (m->flags & ~(SLAT_VM_MEM_LOG_DIRTY_PAGES | SLAT_VM_MEM_READONLY)) {
		ret = sim_err(vm, -EINVAL, "slot %u: unknown flags 0x%x",
			      m->slot, m->flags);
	} else if (s->gpa != m->guest_phys_addr) {
		uint32_t id = s->id;

		ret = slot_move(vm, s, m->guest_phys_addr);
		/* A move may change the logging flag too (KVM_MR_MOVE). */
		if (!ret)
			ret = slot_flags(vm, sim_slot_by_id(vm->slots, id),
					 m->flags);
	} else {
		ret = slot_flags(vm, s, m->flags);
	}
	pthread_mutex_unlock(&vm->slots_lock);
	return ret;
}

/* ---- host view ---- */

static int host_copy(struct slat_vm *vm, uint64_t gpa, void *buf, size_t len,
		     bool write)
{
	struct sim_slot *s;
	int ret = 0;

	pthread_mutex_lock(&vm->slots_lock);
	s = sim_slot_by_gpa(vm->slots, gpa);
	if (!s || s->device || len > s->gpa + s->size - gpa)
		ret = sim_err(vm, -EFAULT, "0x%llx+%zu: not in a memslot",
			      (unsigned long long)gpa, len);
	else if (!s->hva)
		ret = sim_err(vm, -ENXIO, "slot %u is synthetic: no data", s->id);
	else
		sim_copy(s->hva + (gpa - s->gpa), buf, len, write);
	if (!ret && write)
		sim_host_touch(vm, s, gpa, len);
	pthread_mutex_unlock(&vm->slots_lock);
	return ret;
}

int slat_vm_host_read(struct slat_vm *vm, uint64_t gpa, void *buf, size_t len)
{
	return host_copy(vm, gpa, buf, len, false);
}

int slat_vm_host_write(struct slat_vm *vm, uint64_t gpa, const void *buf,
		       size_t len)
{
	return host_copy(vm, gpa, (void *)buf, len, true);
}

int slat_vm_gpa_to_hpa(struct slat_vm *vm, uint64_t gpa, slat_pa_t *hpa)
{
	struct sim_slot *s;
	int ret = 0;

	pthread_mutex_lock(&vm->slots_lock);
	s = sim_slot_by_gpa(vm->slots, gpa);
	if (!s)
		ret = sim_err(vm, -EFAULT, "0x%llx: not in a memslot",
			      (unsigned long long)gpa);
	else
		*hpa = slat_pa(s->hpa + (gpa - s->gpa));
	pthread_mutex_unlock(&vm->slots_lock);
	return ret;
}
