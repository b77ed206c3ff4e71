/* SPDX-License-Identifier: MIT */
/*
 * docs/platform.md, "The hooks": a hypervisor's struct slat_mm_ops written
 * from scratch, without libslat-hosted: table pages from a static pool
 * with one count word each, a linear map, and the cache and TLB hooks of
 * Armv8 stage 2 and of EPT over a small CPU layer.
 *
 * Built with SLAT_EXAMPLE_EL2 for aarch64, or SLAT_EXAMPLE_VMX for x86-64,
 * that layer is the instructions themselves: the examples_hooks_*_insns
 * tests compile and assemble it, but cannot run it (it needs EL2 or VMX
 * root). Otherwise it is a fake CPU that writes down every instruction,
 * and main() checks that each operation issued exactly the sequence the
 * guide describes.
 */
#include <slat/slat.h>

#ifdef SLAT_EXAMPLE_EL2
/* Cross-compiled with no C library (-ffreestanding), never linked. */
void *memset(void *s, int c, size_t n);
size_t strlen(const char *s);
char *strcat(char *dst, const char *src);
int printf(const char *fmt, ...);
#define CHECK(cond) ((void)(cond))
#else
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n",        \
				__FILE__, __LINE__, #cond);                \
			exit(1);                                           \
		}                                                          \
	} while (0)
#endif

#define GRANULE 4096u
#define POOL_PAGES 128u
#define ROOT_PAGES 16u                     /* the largest root */
#define POOL_PA 0x80000000ull              /* the pool's physical address */
#define GUEST_VA_OFFSET 0x10000000000ull   /* guest memory in our map */
#define DCACHE_LINE 64u                    /* from CTR_EL0.DminLine */
#define TLBI_PAGES_MAX 64u                 /* above: the whole VMID */

/* The VM a table belongs to: its mm_ctx. */
struct hyp_vm {
	uint64_t vtcr;  /* the stage-2 walk (Arm) */
	uint64_t vttbr; /* VMID << 48 | root PA (Arm) */
	uint64_t eptp;  /* root PA | walk length | memory type (EPT) */
};

/* The fake CPU: a log of what the hooks issued, and the lines cleaned. */
static char cpu_log[4096];
static uint64_t cpu_lines_cleaned;

static void cpu_emit(const char *insn)
{
	size_t n = strlen(cpu_log);

	CHECK(n + strlen(insn) + 2 < sizeof(cpu_log));
	strcat(cpu_log, insn);
	strcat(cpu_log, "; ");
}

#if defined(SLAT_EXAMPLE_EL2) && defined(__aarch64__)
/* [snippet:cpu-arm64] */
#define INSN(s) __asm__ volatile(s ::: "memory")
static void cpu_dsb_ishst(void) { INSN("dsb ishst"); }
static void cpu_dsb_ish(void) { INSN("dsb ish"); }
static void cpu_dsb_nshst(void) { INSN("dsb nshst"); }
static void cpu_dsb_nsh(void) { INSN("dsb nsh"); }
static void cpu_isb(void) { INSN("isb"); }
static void cpu_ic_ialluis(void) { INSN("ic ialluis"); }
static void cpu_tlbi_vmalle1is(void) { INSN("tlbi vmalle1is"); }
static void cpu_tlbi_vmalle1(void) { INSN("tlbi vmalle1"); }
static void cpu_tlbi_vmalls12e1is(void) { INSN("tlbi vmalls12e1is"); }

static void cpu_dc_civac(uint64_t va)
{
	__asm__ volatile("dc civac, %0" : : "r"(va) : "memory");
}

/* The operand is IPA[51:12]; a TTL hint would go in bits [47:44]. */
static void cpu_tlbi_ipas2e1is(uint64_t ipa)
{
	__asm__ volatile("tlbi ipas2e1is, %0" : : "r"(ipa >> 12) : "memory");
}

static void cpu_tlbi_ipas2e1(uint64_t ipa)
{
	__asm__ volatile("tlbi ipas2e1, %0" : : "r"(ipa >> 12) : "memory");
}

/* TLBIs at EL2 act on the VMID in VTTBR_EL2: switch to the guest's. */
static uint64_t cpu_enter_vmid(uint64_t vttbr)
{
	uint64_t old;

	__asm__ volatile("mrs %0, vttbr_el2" : "=r"(old));
	__asm__ volatile("msr vttbr_el2, %0\n\tisb" : : "r"(vttbr) : "memory");
	return old;
}

static void cpu_exit_vmid(uint64_t old)
{
	__asm__ volatile("msr vttbr_el2, %0\n\tisb" : : "r"(old) : "memory");
}
/* [end] */
#else
static void cpu_dsb_ishst(void) { cpu_emit("dsb ishst"); }
static void cpu_dsb_ish(void) { cpu_emit("dsb ish"); }
static void cpu_dsb_nshst(void) { cpu_emit("dsb nshst"); }
static void cpu_dsb_nsh(void) { cpu_emit("dsb nsh"); }
static void cpu_isb(void) { cpu_emit("isb"); }
static void cpu_ic_ialluis(void) { cpu_emit("ic ialluis"); }
static void cpu_tlbi_vmalle1is(void) { cpu_emit("tlbi vmalle1is"); }
static void cpu_tlbi_vmalle1(void) { cpu_emit("tlbi vmalle1"); }
static void cpu_tlbi_vmalls12e1is(void) { cpu_emit("tlbi vmalls12e1is"); }
static void cpu_dc_civac(uint64_t va) { (void)va; cpu_lines_cleaned++; }
static void cpu_tlbi_ipas2e1is(uint64_t ipa) { (void)ipa; cpu_emit("tlbi ipas2e1is"); }
static void cpu_tlbi_ipas2e1(uint64_t ipa) { (void)ipa; cpu_emit("tlbi ipas2e1"); }
static uint64_t cpu_enter_vmid(uint64_t vttbr) { (void)vttbr; return 0; }
static void cpu_exit_vmid(uint64_t old) { (void)old; }
#endif

#if defined(SLAT_EXAMPLE_VMX) && defined(__x86_64__)
/* [snippet:cpu-vmx] */
/* INVEPT type 1 (single-context): every cached mapping derived from
 * this EPTP, on this logical processor. */
static void cpu_invept_single(uint64_t eptp)
{
	struct { uint64_t eptp, zero; } desc = { eptp, 0 };

	__asm__ volatile("invept %0, %1" : : "m"(desc), "r"(1ull) : "cc", "memory");
}
/* [end] */
#else
static void cpu_invept_single(uint64_t eptp) { (void)eptp; cpu_emit("invept single"); }
#endif

/* [snippet:pool] */
/* Table pages: a pool in the hypervisor's linear map, one count word per
 * page (like struct page), the root at the start (aligned to its size). */
static uint8_t pool[POOL_PAGES][GRANULE] __attribute__((aligned(GRANULE * ROOT_PAGES)));
static uint32_t pool_counts[POOL_PAGES];
static void *pool_free_list[POOL_PAGES];
static uint32_t pool_nr_free;
static bool root_taken;

static void pool_init(void)
{
	for (uint32_t i = POOL_PAGES; i-- > ROOT_PAGES;)
		pool_free_list[pool_nr_free++] = pool[i];
}

static void *hyp_zalloc_root(void *ctx, size_t bytes)
{
	(void)ctx;
	if (root_taken || bytes > ROOT_PAGES * GRANULE)
		return NULL;
	root_taken = true;
	memset(pool[0], 0, bytes);
	return pool[0];
}

static void hyp_free_root(void *ctx, void *va, size_t bytes)
{
	(void)ctx, (void)va, (void)bytes;
	root_taken = false;
}

/* The page came from a cache; it goes back to the pool as it is (the
 * next top-up zeroes it). Its count word is the core's: not touched. */
static void hyp_free_page(void *ctx, void *va)
{
	(void)ctx;
	pool_free_list[pool_nr_free++] = va;
}

static uint32_t *hyp_refcount(void *ctx, void *table_va)
{
	(void)ctx;
	return &pool_counts[((uint8_t *)table_va - pool[0]) / GRANULE];
}

/* The same words as one array: the core indexes it itself. */
static uint32_t *hyp_refcount_array(void *ctx, uintptr_t *first_page)
{
	(void)ctx;
	*first_page = (uintptr_t)pool[0];
	return pool_counts;
}

static slat_pa_t hyp_virt_to_phys(void *ctx, void *va)
{
	(void)ctx;
	return slat_pa(POOL_PA + (uint64_t)((uint8_t *)va - pool[0]));
}

static void *hyp_phys_to_virt(void *ctx, slat_pa_t pa)
{
	(void)ctx;
	return pool[0] + (slat_pa_v(pa) - POOL_PA);
}

/* Every table page is in one linear map: virt = phys + offset. */
static intptr_t hyp_linear_offset(void *ctx)
{
	(void)ctx;
	return (intptr_t)pool[0] - (intptr_t)POOL_PA;
}
/* [end] */

/* [snippet:topup] */
/* Fill @c up to @want zeroed pages, outside any lock of the table. */
static int pool_topup(struct slat_page_cache *c, uint64_t want)
{
	if (want > c->capacity)
		return SLAT_E_NOMEM;
	while (c->nr < want) {
		if (!pool_nr_free)
			return SLAT_E_NOMEM;
		c->pages[c->nr] = pool_free_list[--pool_nr_free];
		memset(c->pages[c->nr++], 0, GRANULE);
	}
	return SLAT_OK;
}

static void pool_drain(struct slat_page_cache *c)
{
	while (c->nr)
		pool_free_list[pool_nr_free++] = c->pages[--c->nr];
}
/* [end] */

/* [snippet:arm-cache] */
/* Clean and invalidate guest memory to the PoC: DC CIVAC on every line,
 * through the hypervisor's own mapping of that memory, then DSB ISH so
 * that the maintenance is complete before the core publishes the leaf. */
static void arm_dcache_clean_inval_poc(void *ctx, slat_pa_t pa, uint64_t size)
{
	uint64_t va = slat_pa_v(pa) + GUEST_VA_OFFSET, end = va + size;

	(void)ctx;
	for (va &= ~(uint64_t)(DCACHE_LINE - 1); va < end; va += DCACHE_LINE)
		cpu_dc_civac(va);
	cpu_dsb_ish();
}

/* Invalidate the I-cache to the PoU. IC IALLUIS whatever the range: an
 * I-cache that is not PIPT cannot be invalidated by physical address.
 * (With a PIPT I-cache, IC IVAU by line over the range would do.) */
static void arm_icache_inval_pou(void *ctx, slat_pa_t pa, uint64_t size)
{
	(void)ctx, (void)pa, (void)size;
	cpu_ic_ialluis();
	cpu_dsb_ish();
}
/* [end] */

/* [snippet:arm-tlbi] */
/* One leaf: its stage-2 entry by IPA, then every combined stage-1 +
 * stage-2 entry of the VMID (they are tagged by VA, not by IPA). The
 * first DSB makes the new descriptor visible to the table walkers, the
 * others wait for the invalidations to complete. */
static void arm_tlbi_ipa(void *ctx, slat_ipa_t ipa, int level,
			 enum slat_tlbi_scope scope)
{
	struct hyp_vm *vm = ctx;
	uint64_t host = cpu_enter_vmid(vm->vttbr);

	(void)level; /* a TTL hint, for CPUs with FEAT_TTL */
	if (scope == SLAT_TLBI_LOCAL) { /* relaxed permissions: this CPU */
		cpu_dsb_nshst();
		cpu_tlbi_ipas2e1(slat_ipa_v(ipa));
		cpu_dsb_nsh();
		cpu_tlbi_vmalle1();
		cpu_dsb_nsh();
	} else {
		cpu_dsb_ishst();
		cpu_tlbi_ipas2e1is(slat_ipa_v(ipa));
		cpu_dsb_ish();
		cpu_tlbi_vmalle1is();
		cpu_dsb_ish();
	}
	cpu_isb();
	cpu_exit_vmid(host);
}

static void arm_tlbi_vmid(void *ctx)
{
	struct hyp_vm *vm = ctx;
	uint64_t host = cpu_enter_vmid(vm->vttbr);

	cpu_dsb_ishst();
	cpu_tlbi_vmalls12e1is(); /* stage 1 and stage 2 of the VMID */
	cpu_dsb_ish();
	cpu_isb();
	cpu_exit_vmid(host);
}

/* A range (a table's span, a batch): page by page while that is cheap,
 * else the whole VMID. (FEAT_TLBIRANGE: TLBI RIPAS2E1IS instead.) */
static void arm_tlbi_range(void *ctx, slat_ipa_t ipa, uint64_t size)
{
	struct hyp_vm *vm = ctx;
	uint64_t host;

	if (size / GRANULE > TLBI_PAGES_MAX) {
		arm_tlbi_vmid(ctx);
		return;
	}
	host = cpu_enter_vmid(vm->vttbr);
	cpu_dsb_ishst();
	for (uint64_t off = 0; off < size; off += GRANULE)
		cpu_tlbi_ipas2e1is(slat_ipa_v(ipa) + off);
	cpu_dsb_ish();
	cpu_tlbi_vmalle1is();
	cpu_dsb_ish();
	cpu_isb();
	cpu_exit_vmid(host);
}
/* [end] */

/* [snippet:ept-tlbi] */
/* EPT has no invalidation by address: the core turns every one into
 * tlbi_vmid, which is a single-context INVEPT of the table's EPTP. It
 * acts on this logical processor only: a hypervisor with the VM's vCPUs
 * on other CPUs also kicks them (an IPI that runs the same INVEPT) or
 * marks their EPTP stale for their next VM entry. */
static void ept_tlbi_vmid(void *ctx)
{
	struct hyp_vm *vm = ctx;

	cpu_invept_single(vm->eptp);
}
/* [end] */

/* [snippet:ops] */
static const struct slat_mm_ops arm_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = hyp_zalloc_root,
	.free_root = hyp_free_root,
	.free_page = hyp_free_page,
	.free_deferred = NULL, /* no concurrent walkers: no SLAT_SHARED */
	.refcount = hyp_refcount,
	.refcount_array = hyp_refcount_array,
	.virt_to_phys = hyp_virt_to_phys,
	.phys_to_virt = hyp_phys_to_virt,
	.linear_offset = hyp_linear_offset,
	.dcache_clean_inval_poc = arm_dcache_clean_inval_poc,
	.icache_inval_pou = arm_icache_inval_pou,
	.tlbi_ipa = arm_tlbi_ipa,
	.tlbi_range = arm_tlbi_range,
	.tlbi_vmid = arm_tlbi_vmid,
};

/* EPT: no cache maintenance, no invalidation by address. */
static const struct slat_mm_ops ept_ops = {
	.size = sizeof(struct slat_mm_ops),
	.zalloc_root = hyp_zalloc_root,
	.free_root = hyp_free_root,
	.free_page = hyp_free_page,
	.refcount = hyp_refcount,
	.refcount_array = hyp_refcount_array,
	.virt_to_phys = hyp_virt_to_phys,
	.phys_to_virt = hyp_phys_to_virt,
	.linear_offset = hyp_linear_offset,
	.tlbi_vmid = ept_tlbi_vmid,
};
/* [end] */

/* [snippet:table-init] */
static int hyp_table_init(struct slat_table *t, const struct slat_config *cfg,
			  const struct slat_mm_ops *ops, struct hyp_vm *vm)
{
	const char *missing = slat_mm_ops_missing(ops, cfg);
	int ret;

	if (missing) {
		printf("this CPU needs the %s hook\n", missing);
		return SLAT_E_INVAL;
	}
	ret = slat_table_init(t, cfg, ops, vm);
	if (ret != SLAT_OK)
		return ret;
	/* The registers that point the CPU at the table, from its geometry
	 * and features (each is 0 for a table of the other format): on Arm
	 * VTCR_EL2 (8-bit VMIDs) and VTTBR_EL2 with VMID 1, on x86 the
	 * EPTP. */
	vm->vtcr = slat_arm_s2_vtcr(t, false);
	vm->vttbr = slat_arm_s2_vttbr(t, 1, false);
	vm->eptp = slat_ept_eptp(t);
	return SLAT_OK;
}
/* [end] */

#if !defined(SLAT_EXAMPLE_EL2) && !defined(SLAT_EXAMPLE_VMX)
static void check_missing(void)
{
	struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2, .granule = GRANULE, .ia_bits = 40,
	};
	const char *m;

	CHECK(slat_mm_ops_missing(&arm_ops, &cfg) == NULL);
	/* [snippet:missing] */
	/* The EPT hooks on Arm: each feature waives one hook, but Arm always
	 * invalidates by address. */
	m = slat_mm_ops_missing(&ept_ops, &cfg);
	CHECK(m && !strcmp(m, "dcache_clean_inval_poc"));
	cfg.features = SLAT_FEAT_FWB;             /* no D-cache hook needed */
	m = slat_mm_ops_missing(&ept_ops, &cfg);
	CHECK(m && !strcmp(m, "icache_inval_pou"));
	cfg.features = SLAT_FEAT_FWB | SLAT_FEAT_DIC; /* nor an I-cache one */
	m = slat_mm_ops_missing(&ept_ops, &cfg);
	CHECK(m && !strcmp(m, "tlbi_ipa"));
	cfg.format = SLAT_FMT_EPT;                /* EPT needs none of them */
	cfg.ia_bits = 48;
	CHECK(slat_mm_ops_missing(&ept_ops, &cfg) == NULL);
	/* [end] */
	/* Nor does NPT: its flushes are the ASID's, its caches coherent. */
	cfg.format = SLAT_FMT_NPT;
	cfg.features = SLAT_FEAT_HWDIRTY;
	CHECK(slat_mm_ops_missing(&ept_ops, &cfg) == NULL);
	cfg.format = SLAT_FMT_ARM_S2;
	CHECK(!strcmp(slat_mm_ops_missing(&ept_ops, &cfg),
		      "dcache_clean_inval_poc"));
}

static void log_reset(void)
{
	cpu_log[0] = 0;
}

static unsigned log_count(const char *insn)
{
	unsigned n = 0;

	for (const char *p = cpu_log; (p = strstr(p, insn)); p += strlen(insn))
		n++;
	return n;
}

#define ARM_LEAF_IS "dsb ishst; tlbi ipas2e1is; dsb ish; tlbi vmalle1is; " \
		    "dsb ish; isb; "
#define ARM_RANGE_4 "dsb ishst; tlbi ipas2e1is; tlbi ipas2e1is; " \
		    "tlbi ipas2e1is; tlbi ipas2e1is; dsb ish; tlbi vmalle1is; " \
		    "dsb ish; isb; "
#define ARM_LEAF_LOCAL "dsb nshst; tlbi ipas2e1; dsb nsh; tlbi vmalle1; " \
		       "dsb nsh; isb; "

static void arm_sequences(struct slat_table *t, struct slat_page_cache *c)
{
	const uint64_t ipa = 0x40000000, pa = 0x880000000;
	uint64_t lines, freed;

	/* A Normal leaf: its 4 KiB cleaned line by line, one DSB, no TLBI. */
	CHECK(pool_topup(c, slat_pages_needed(t, SLAT_NEED(
				 .kind = SLAT_OP_MAP, .ipa = slat_ipa(ipa),
				 .size = 4 * GRANULE, .pa = slat_pa(pa),
				 .attrs = SLAT_R | SLAT_MT_NORMAL))) == SLAT_OK);
	log_reset();
	CHECK(slat_map(t, slat_ipa(ipa), GRANULE, slat_pa(pa), SLAT_R |
		       SLAT_MT_NORMAL, SLAT_OP(.cache = c)) == SLAT_OK);
	CHECK(cpu_lines_cleaned == GRANULE / DCACHE_LINE);
	CHECK(!strcmp(cpu_log, "dsb ish; "));
	/* Relax: this CPU's invalidation only. */
	log_reset();
	CHECK(slat_relax(t, slat_ipa(ipa), GRANULE, SLAT_W, NULL) == SLAT_OK);
	CHECK(!strcmp(cpu_log, ARM_LEAF_LOCAL));
	/* Write protection: every CPU's, leaf then stage 1 of the VMID. */
	log_reset();
	CHECK(slat_wrprotect(t, slat_ipa(ipa), GRANULE, NULL) == SLAT_OK);
	CHECK(!strcmp(cpu_log, ARM_LEAF_IS));
	/* Executable: the I-cache too. */
	log_reset();
	CHECK(slat_map(t, slat_ipa(ipa + GRANULE), 3 * GRANULE,
		       slat_pa(pa + GRANULE), SLAT_RWX | SLAT_MT_NORMAL,
		       SLAT_OP(.cache = c)) == SLAT_OK);
	CHECK(log_count("ic ialluis; dsb ish; ") >= 1);
	/* Four pages, one range invalidation: four by IPA, one stage 1. */
	log_reset();
	CHECK(slat_wrprotect(t, slat_ipa(ipa), 4 * GRANULE,
			     SLAT_OP(.flush = SLAT_FLUSH_RANGE)) == SLAT_OK);
	CHECK(!strcmp(cpu_log, ARM_RANGE_4));
	/* Unmap: the table left empty is freed after an invalidation that
	 * covers its span (512 pages: the whole VMID here). */
	/* Unmap: one range invalidation, then the memory cleaned (the guest
	 * can no longer allocate lines through the leaves). The level-3
	 * and level-2 tables left empty are freed after it: invalidating an
	 * IPA also drops the cached table entries that translated it. */
	lines = cpu_lines_cleaned;
	freed = t->stats.pages_freed;
	log_reset();
	CHECK(slat_unmap(t, slat_ipa(ipa), 4 * GRANULE,
			 SLAT_OP(.flush = SLAT_FLUSH_RANGE)) == SLAT_OK);
	CHECK(!strcmp(cpu_log, ARM_RANGE_4 "dsb ish; "));
	CHECK(cpu_lines_cleaned == lines + 4 * GRANULE / DCACHE_LINE);
	CHECK(t->stats.pages_freed == freed + 2);
}

static void run(const struct slat_config *cfg, const struct slat_mm_ops *ops)
{
	static struct slat_table t;
	static struct hyp_vm vm;
	static void *slots[8];
	struct slat_page_cache c;
	uint64_t lines = cpu_lines_cleaned;

	slat_page_cache_init(&c, slots, 8);
	CHECK(hyp_table_init(&t, cfg, ops, &vm) == SLAT_OK);
	/* Without free_deferred the core cannot share the table. */
	CHECK(pool_topup(&c, 2) == SLAT_OK);
	CHECK(slat_map(&t, slat_ipa(0x40000000), GRANULE, slat_pa(0x880000000),
		       SLAT_RW, SLAT_OP(.flags = SLAT_SHARED, .cache = &c)) ==
	      SLAT_E_INVAL);
	if (cfg->format == SLAT_FMT_ARM_S2) {
		arm_sequences(&t, &c);
	} else {
		log_reset();
		CHECK(slat_map(&t, slat_ipa(0x40000000), 2u << 20,
			       slat_pa(0x880000000), SLAT_RWX,
			       SLAT_OP(.cache = &c)) == SLAT_OK);
		/* A page out of the block: split in place, no invalidation
		 * by address (there is none), one INVEPT. */
		CHECK(pool_topup(&c, 2) == SLAT_OK);
		CHECK(slat_unmap(&t, slat_ipa(0x40000000), GRANULE,
				 SLAT_OP(.cache = &c)) == SLAT_OK);
		CHECK(cpu_lines_cleaned == lines && log_count("invept single") >= 1);
		CHECK(!strstr(cpu_log, "tlbi"));
	}
	log_reset();
	slat_table_destroy(&t);
	CHECK(!strcmp(cpu_log, cfg->format == SLAT_FMT_EPT ? "invept single; "
			       : "dsb ishst; tlbi vmalls12e1is; dsb ish; isb; "));
	pool_drain(&c);
	CHECK(pool_nr_free == POOL_PAGES - ROOT_PAGES && !root_taken);
	for (uint32_t i = 0; i < POOL_PAGES; i++)
		CHECK(pool_counts[i] == 0);
}

int main(void)
{
	static const struct slat_config arm = {
		.format = SLAT_FMT_ARM_S2, .granule = GRANULE, .ia_bits = 40,
	};
	static const struct slat_config ept = {
		.format = SLAT_FMT_EPT, .granule = GRANULE, .ia_bits = 48,
	};

	pool_init();
	check_missing();
	run(&arm, &arm_ops);
	run(&ept, &ept_ops);
	printf("hooks: ok\n");
	return 0;
}
#endif
