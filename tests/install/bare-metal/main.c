/* SPDX-License-Identifier: MIT */
/*
 * A bare-metal aarch64 program built against a core-only install of slat
 * (libslat.a, the core headers, slat-core.pc) with no C library at all:
 * the platform hooks over a static pool of table pages, an Armv8 stage-2
 * table with one 4 KiB page mapped, looked up and unmapped. start.S calls
 * bm_main() with the MMU off (virtual = physical) and reports its result
 * through semihosting when it runs under QEMU (tests/install/run.sh). The
 * same file, with host.c, is the host program that links libslat.a alone
 * as slat-core.pc's archive variable gives it.
 */
#include <slat/slat.h>

#define GRANULE 4096u
#define POOL_PAGES 32u

static unsigned char pool[POOL_PAGES][GRANULE] __attribute__((aligned(65536)));
static uint32_t refcounts[POOL_PAGES];
static unsigned int pool_next;
static unsigned long tlbis, frees;

static unsigned int pool_index(const void *va)
{
	return (unsigned int)(((const unsigned char *)va - pool[0]) / GRANULE);
}

static void *pool_take(size_t pages)
{
	unsigned char *p;

	/* Runs of pages aligned to their size (the root may be several). */
	pool_next = (unsigned int)((pool_next + pages - 1) / pages * pages);
	if (pool_next + pages > POOL_PAGES)
		return NULL;
	p = pool[pool_next];
	pool_next += (unsigned int)pages;
	for (size_t i = 0; i < pages * GRANULE; i++)
		((volatile unsigned char *)p)[i] = 0;
	return p;
}

static void *bm_zalloc_root(void *ctx, size_t bytes)
{
	(void)ctx;
	return pool_take(bytes / GRANULE);
}

static void bm_free_root(void *ctx, void *va, size_t bytes)
{
	(void)ctx;
	(void)va;
	(void)bytes;
	frees++;
}

static void bm_free_page(void *ctx, void *va)
{
	(void)ctx;
	refcounts[pool_index(va)] = 0;
	frees++;
}

static uint32_t *bm_refcount(void *ctx, void *table_va)
{
	(void)ctx;
	return &refcounts[pool_index(table_va)];
}

/* The MMU is off: an address is its own physical address. */
static slat_pa_t bm_virt_to_phys(void *ctx, void *va)
{
	(void)ctx;
	return slat_pa((uint64_t)(uintptr_t)va);
}

static void *bm_phys_to_virt(void *ctx, slat_pa_t pa)
{
	(void)ctx;
	return (void *)(uintptr_t)slat_pa_v(pa);
}

static intptr_t bm_linear_offset(void *ctx)
{
	(void)ctx;
	return 0;
}

/* No guest runs here: cache maintenance of guest memory is a no-op. */
static void bm_dcache(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx;
	(void)pa;
	(void)size;
}

static void bm_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
			enum slat_tlbi_scope scope)
{
	(void)ctx;
	(void)ipa;
	(void)level;
	(void)scope;
	tlbis++;
}

static void bm_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	(void)ctx;
	(void)ipa;
	(void)size;
	tlbis++;
}

static void bm_tlbi_vmid(void *ctx)
{
	(void)ctx;
	tlbis++;
}

static const struct slat_mm_ops bm_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = bm_zalloc_root,
	.free_root = bm_free_root,
	.free_page = bm_free_page,
	.refcount = bm_refcount,
	.virt_to_phys = bm_virt_to_phys,
	.phys_to_virt = bm_phys_to_virt,
	.linear_offset = bm_linear_offset,
	.dcache_clean_inval_poc = bm_dcache,
	.icache_inval_pou = bm_dcache,
	.tlbi_ipa = bm_tlbi_ipa,
	.tlbi_range = bm_tlbi_range,
	.tlbi_vmid = bm_tlbi_vmid,
};

static struct slat_table table;
static struct slat_page_cache cache;
static void *cache_pages[8];

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* 0 when every step did what the API says, else the failing step. */
int bm_main(void)
{
	static const struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2,
		.granule = GRANULE,
		.ia_bits = 40,
		/* Room for a host program's addresses too. */
		.pa_bits = 48,
	};
	const uint64_t ipa = 0x40000000, pa = 0x80000000;
	struct slat_leaf leaf;
	struct slat_op args = { .cache = &cache };

	if (!streq(slat_version(), SLAT_VERSION_STRING))
		return 1;
	if (slat_table_init(&table, &cfg, &bm_ops, 0) != SLAT_OK)
		return 2;
	slat_page_cache_init(&cache, cache_pages, 8);
	while (cache.nr < slat_pages_needed(
				 &table, SLAT_NEED(.kind = SLAT_OP_MAP,
						   .ipa = slat_ipa(ipa),
						   .size = GRANULE,
						   .pa = slat_pa(pa),
						   .attrs = SLAT_RW |
							    SLAT_MT_NORMAL)))
		cache.pages[cache.nr++] = pool_take(1);
	if (slat_map(&table, slat_ipa(ipa), GRANULE, slat_pa(pa),
		     SLAT_RW | SLAT_MT_NORMAL, &args) != SLAT_OK ||
	    args.done != GRANULE)
		return 3;
	if (slat_lookup(&table, slat_ipa(ipa + 8), &leaf) != SLAT_OK ||
	    slat_pa_v(leaf.pa) != pa + 8 || leaf.size != GRANULE)
		return 4;
	if (slat_unmap(&table, slat_ipa(ipa), GRANULE, &args) != SLAT_OK ||
	    !tlbis)
		return 5;
	if (slat_lookup(&table, slat_ipa(ipa), &leaf) != SLAT_E_NOENT)
		return 6;
	slat_table_destroy(&table);
	return frees ? 0 : 7;
}
