/* SPDX-License-Identifier: MIT */
/*
 * A bare-metal program for scripts/freestanding-check.sh: libslat linked
 * with nothing but this file (no libc, no libgcc, no start files). It must
 * link with no undefined symbol. It is never run; the calls only make the
 * linker pull the core in.
 */
#include <slat/slat.h>

#define GRANULE 4096u
#define NR_PAGES 64u
#define PA_BASE 0x80000000ull

/* Host memory standing for PA_BASE.., zero at load (.bss). */
static unsigned char pool[NR_PAGES][GRANULE] __attribute__((aligned(65536)));
static uint32_t refcounts[NR_PAGES];
static unsigned int next_page;
static void *cache_pages[16];
static volatile uint64_t events;

static unsigned int page_of(void *va)
{
	return (unsigned int)(((unsigned char *)va - &pool[0][0]) / GRANULE);
}

static void zero(void *va, size_t bytes)
{
	/* volatile: keep the compiler from turning this into memset. */
	volatile unsigned char *p = va;

	for (size_t i = 0; i < bytes; i++)
		p[i] = 0;
}

static void *take_pages(size_t n, size_t align_pages)
{
	unsigned int first = (next_page + align_pages - 1) / align_pages *
			     align_pages;

	if (first + n > NR_PAGES)
		return NULL;
	next_page = first + (unsigned int)n;
	zero(pool[first], n * GRANULE);
	return pool[first];
}

static void *bm_zalloc_root(void *ctx, size_t bytes)
{
	(void)ctx;
	return take_pages(bytes / GRANULE, bytes / GRANULE);
}

static void bm_free_root(void *ctx, void *va, size_t bytes)
{
	(void)ctx;
	(void)va;
	(void)bytes;
	events++;
}

static void bm_free_page(void *ctx, void *va)
{
	(void)ctx;
	refcounts[page_of(va)] = 0;
	events++;
}

static uint32_t *bm_refcount(void *ctx, void *table_va)
{
	(void)ctx;
	return &refcounts[page_of(table_va)];
}

static slat_pa_t bm_virt_to_phys(void *ctx, void *va)
{
	(void)ctx;
	return slat_pa(PA_BASE + (uint64_t)((unsigned char *)va - &pool[0][0]));
}

static void *bm_phys_to_virt(void *ctx, slat_pa_t pa)
{
	(void)ctx;
	return &pool[0][0] + (slat_pa_v(pa) - PA_BASE);
}

static void bm_dcache_clean_inval_poc(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx;
	(void)pa;
	(void)size;
	events++;
}

static void bm_icache_inval_pou(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx;
	(void)pa;
	(void)size;
	events++;
}

static void bm_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
			enum slat_tlbi_scope scope)
{
	(void)ctx;
	(void)ipa;
	(void)level;
	(void)scope;
	events++;
}

static void bm_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	(void)ctx;
	(void)ipa;
	(void)size;
	events++;
}

static void bm_tlbi_vmid(void *ctx)
{
	(void)ctx;
	events++;
}

static const struct slat_mm_ops bm_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = bm_zalloc_root,
	.free_root = bm_free_root,
	.free_page = bm_free_page,
	.free_deferred = NULL,
	.refcount = bm_refcount,
	.virt_to_phys = bm_virt_to_phys,
	.phys_to_virt = bm_phys_to_virt,
	.dcache_clean_inval_poc = bm_dcache_clean_inval_poc,
	.icache_inval_pou = bm_icache_inval_pou,
	.tlbi_ipa = bm_tlbi_ipa,
	.tlbi_range = bm_tlbi_range,
	.tlbi_vmid = bm_tlbi_vmid,
};

static struct slat_table table;
static const struct slat_config config = {
	.format = SLAT_FMT_ARM_S2,
	.granule = GRANULE,
	.ia_bits = 40,
	.pa_bits = 40,
	.features = 0,
};
static struct slat_page_cache cache = {
	.pages = cache_pages, .nr = 0, .capacity = 16,
};
static struct slat_leaf leaf;

void _start(void) __attribute__((noreturn));

void _start(void)
{
	struct slat_op args = { .cache = &cache };

	while (cache.nr < cache.capacity) {
		void *p = take_pages(1, 1);

		if (!p)
			break;
		cache.pages[cache.nr++] = p;
	}
	if (slat_table_init(&table, &config, &bm_ops, NULL) == SLAT_OK) {
		slat_map(&table, slat_ipa(0x40000000), 0x200000,
			 slat_pa(0x100000000ull), SLAT_RW | SLAT_MT_NORMAL,
			 &args);
		slat_lookup(&table, slat_ipa(0x40001000), &leaf);
		slat_unmap(&table, slat_ipa(0x40000000), 0x200000, &args);
		slat_table_destroy(&table);
	}
	for (;;)
		events++;
}
