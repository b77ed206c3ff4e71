/* SPDX-License-Identifier: MIT */
/*
 * Guest address spaces: stage-1 libslat tables whose pages are frames of
 * guest RAM (the descriptors hold IPAs), and the TLB maintenance a Linux
 * arm64 guest issues for them.
 */
#include "twostage_internal.h"

#include <stdlib.h>

/* ---- the platform hooks of a stage-1 table: guest RAM ---- */

static void *as_zalloc_root(void *ctx, size_t bytes)
{
	struct slat_ts_as *as = ctx;
	slat_ipa_t ipa;

	if (bytes != TS_PAGE || slat_ts_frame_alloc(as->ts, true, &ipa))
		return NULL;
	as->pages++;
	return ts_host_of_ipa(as->ts, ipa.ipa);
}

static void as_free_frame(void *ctx, void *va)
{
	struct slat_ts_as *as = ctx;

	as->pages--;
	slat_ts_frame_free(as->ts, slat_ipa(ts_ipa_of_host(as->ts, va)));
}

static void as_free_root(void *ctx, void *va, size_t bytes)
{
	(void)bytes;
	as_free_frame(ctx, va);
}

static uint32_t *as_refcount(void *ctx, void *table_va)
{
	struct slat_ts_as *as = ctx;

	return ts_frame_refcount(as->ts, table_va);
}

static slat_pa_t as_virt_to_phys(void *ctx, void *va)
{
	struct slat_ts_as *as = ctx;

	return slat_pa(ts_ipa_of_host(as->ts, va));
}

static void *as_phys_to_virt(void *ctx, slat_pa_t pa)
{
	struct slat_ts_as *as = ctx;

	return ts_host_of_ipa(as->ts, pa.pa);
}

static intptr_t as_linear_offset(void *ctx)
{
	struct slat_ts_as *as = ctx;

	return (intptr_t)as->ts->ram - (intptr_t)as->ts->cfg.ram_ipa;
}

static void as_no_cmo(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx;
	(void)pa;
	(void)size;
}

static uint64_t as_full_va(const struct slat_ts_as *as, uint64_t in)
{
	return as->kernel ? SLAT_TS_KERNEL_VA(in) : in;
}

/* Whole address space: flush_tlb_mm (ASIDE1IS); the kernel's tables are
 * global, so for them the whole stage 1 of the VM. */
static struct slat_ts_tlbi as_whole(const struct slat_ts_as *as)
{
	if (as->kernel)
		return (struct slat_ts_tlbi){ .kind = SLAT_TS_VMALLE1IS };
	return (struct slat_ts_tlbi){ .kind = SLAT_TS_ASIDE1IS, .asid = as->asid };
}

static struct slat_ts_tlbi as_page(const struct slat_ts_as *as, uint64_t in)
{
	return (struct slat_ts_tlbi){ .kind = SLAT_TS_VAE1IS, .asid = as->asid,
				      .va = as_full_va(as, in) };
}

/* flush_tlb_page: one VAE1IS, one DSB (also for break-before-make). */
static void as_tlbi_ipa(void *ctx, slat_ipa_t va, int level,
			enum slat_tlbi_scope scope)
{
	struct slat_ts_as *as = ctx;
	struct slat_ts_tlbi op = as_page(as, va.ipa);

	(void)level;
	(void)scope;
	slat_ts_guest_flush(as->ts, as->ts->current, &op, 1);
}

/* flush_tlb_range: one VAE1IS per page up to MAX_TLBI_OPS pages, else the
 * whole ASID; one DSB. */
static void as_tlbi_range(void *ctx, slat_ipa_t va, uint64_t size)
{
	struct slat_ts_as *as = ctx;
	uint64_t pages = size / TS_PAGE;
	struct slat_ts_tlbi ops[TS_MAX_TLBI_OPS];

	if (pages >= TS_MAX_TLBI_OPS) {
		ops[0] = as_whole(as);
		slat_ts_guest_flush(as->ts, as->ts->current, ops, 1);
		return;
	}
	for (uint64_t i = 0; i < pages; i++)
		ops[i] = as_page(as, va.ipa + i * TS_PAGE);
	slat_ts_guest_flush(as->ts, as->ts->current, ops, (uint32_t)pages);
}

static void as_tlbi_vmid(void *ctx)
{
	struct slat_ts_as *as = ctx;
	struct slat_ts_tlbi op = as_whole(as);

	slat_ts_guest_flush(as->ts, as->ts->current, &op, 1);
}

static const struct slat_mm_ops as_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = as_zalloc_root,
	.free_root = as_free_root,
	.free_page = as_free_frame,
	.refcount = as_refcount,
	.virt_to_phys = as_virt_to_phys,
	.phys_to_virt = as_phys_to_virt,
	.linear_offset = as_linear_offset,
	.dcache_clean_inval_poc = as_no_cmo,
	.icache_inval_pou = as_no_cmo,
	.tlbi_ipa = as_tlbi_ipa,
	.tlbi_range = as_tlbi_range,
	.tlbi_vmid = as_tlbi_vmid,
};

/* ---- the page cache of guest frames ---- */

static int s1_cache_topup(struct slat_ts *ts, int64_t need)
{
	struct slat_page_cache *c = &ts->s1_cache;

	if (need < 0)
		return (int)need;
	if (need > c->capacity)
		return SLAT_E_NOMEM;
	while (c->nr < need) {
		slat_ipa_t ipa;

		if (slat_ts_frame_alloc(ts, true, &ipa))
			return SLAT_E_NOMEM;
		c->pages[c->nr++] = ts_host_of_ipa(ts, ipa.ipa);
	}
	return SLAT_OK;
}

void ts_s1_cache_drain(struct slat_ts *ts)
{
	struct slat_page_cache *c = &ts->s1_cache;

	while (c->nr)
		slat_ts_frame_free(ts, slat_ipa(ts_ipa_of_host(ts, c->pages[--c->nr])));
}

/* Pages popped by the core belong to the table that took them. */
static void account_popped(struct slat_ts_as *as, uint32_t before)
{
	as->pages += before - as->ts->s1_cache.nr;
}

/* ---- address spaces ---- */

struct slat_ts_as *slat_ts_as_create(struct slat_ts *ts, bool kernel,
				     uint16_t asid, int *err)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S1, .granule = TS_PAGE,
		.ia_bits = TS_IA_BITS, .pa_bits = 48,
	};
	struct slat_ts_as *as = calloc(1, sizeof(*as));

	if (!as) {
		*err = SLAT_E_NOMEM;
		return NULL;
	}
	as->ts = ts;
	as->kernel = kernel;
	as->asid = kernel ? 0 : asid;
	*err = slat_table_init(&as->t, &cfg, &as_ops, as);
	if (*err) {
		free(as);
		return NULL;
	}
	slat_pa_t root;
	slat_table_root(&as->t, &root, NULL);
	as->root_ipa = root.pa;
	return as;
}

void slat_ts_as_destroy(struct slat_ts_as *as)
{
	if (!as)
		return;
	slat_table_destroy(&as->t);
	free(as);
}

struct slat_table *slat_ts_as_table(struct slat_ts_as *as)
{
	return &as->t;
}

uint16_t slat_ts_as_asid(const struct slat_ts_as *as)
{
	return as->asid;
}

void slat_ts_as_set_asid(struct slat_ts_as *as, uint16_t asid)
{
	if (!as->kernel)
		as->asid = asid;
}

uint64_t slat_ts_as_pages(const struct slat_ts_as *as)
{
	return as->pages;
}

/* The table's input address for @va, or false when @va is not in the
 * half of the address space the table translates. */
static bool table_input(const struct slat_ts_as *as, uint64_t va, uint64_t size,
			uint64_t *in)
{
	uint64_t top = va >> TS_IA_BITS;

	if (top != (as->kernel ? 0xffffull : 0))
		return false;
	*in = va & ((1ull << TS_IA_BITS) - 1);
	return size <= (1ull << TS_IA_BITS) - *in;
}

int slat_ts_as_map(struct slat_ts_as *as, uint64_t va, uint64_t size,
		   slat_ipa_t ipa, uint32_t attrs)
{
	uint64_t in;
	uint32_t before;
	int ret;

	if (!table_input(as, va, size, &in))
		return SLAT_E_RANGE;
	ret = s1_cache_topup(as->ts, slat_pages_needed(&as->t, SLAT_NEED(
				      .kind = SLAT_OP_MAP, .ipa = slat_ipa(in),
				      .size = size, .pa = slat_pa(ipa.ipa),
				      .attrs = attrs)));
	if (ret)
		return ret;
	before = as->ts->s1_cache.nr;
	ret = slat_map(&as->t, slat_ipa(in), size, slat_pa(ipa.ipa), attrs,
		       SLAT_OP(.cache = &as->ts->s1_cache));
	account_popped(as, before);
	return ret;
}

int slat_ts_as_unmap(struct slat_ts_as *as, uint64_t va, uint64_t size)
{
	uint64_t in;
	uint32_t before;
	int ret;

	if (!table_input(as, va, size, &in))
		return SLAT_E_RANGE;
	ret = s1_cache_topup(as->ts, slat_pages_needed(&as->t, SLAT_NEED(
				      .kind = SLAT_OP_UNMAP, .ipa = slat_ipa(in),
				      .size = size)));
	if (ret)
		return ret;
	before = as->ts->s1_cache.nr;
	ret = slat_unmap(&as->t, slat_ipa(in), size,
			 SLAT_OP(.flush = SLAT_FLUSH_RANGE,
				 .cache = &as->ts->s1_cache));
	account_popped(as, before);
	return ret;
}

int slat_ts_as_wrprotect(struct slat_ts_as *as, uint64_t va, uint64_t size)
{
	uint64_t in;
	uint32_t before;
	int ret;

	if (!table_input(as, va, size, &in))
		return SLAT_E_RANGE;
	ret = s1_cache_topup(as->ts, slat_pages_needed(&as->t, SLAT_NEED(
				      .kind = SLAT_OP_WRPROTECT,
				      .ipa = slat_ipa(in), .size = size)));
	if (ret)
		return ret;
	before = as->ts->s1_cache.nr;
	/* Fork write-protects the parent and ends with flush_tlb_mm. */
	ret = slat_wrprotect(&as->t, slat_ipa(in), size,
			     SLAT_OP(.flush = SLAT_FLUSH_VMID,
				     .cache = &as->ts->s1_cache));
	account_popped(as, before);
	return ret;
}

int slat_ts_as_relax(struct slat_ts_as *as, uint64_t va, uint64_t size,
		     uint32_t perms)
{
	uint64_t in;
	uint32_t before;
	int ret;

	if (!table_input(as, va, size, &in))
		return SLAT_E_RANGE;
	ret = s1_cache_topup(as->ts, slat_pages_needed(&as->t, SLAT_NEED(
				      .kind = SLAT_OP_RELAX, .ipa = slat_ipa(in),
				      .size = size, .attrs = perms)));
	if (ret)
		return ret;
	before = as->ts->s1_cache.nr;
	ret = slat_relax(&as->t, slat_ipa(in), size, perms,
			 SLAT_OP(.flags = SLAT_NO_HOLES,
				 .cache = &as->ts->s1_cache));
	account_popped(as, before);
	return ret;
}
