/* SPDX-License-Identifier: MIT */
/* Table life cycle: configuration, geometry, root, destruction, counters. */
#include "internal.h"

/* Every counter is a uint64_t: the struct is handled as an array of them. */
_Static_assert(sizeof(struct slat_stats) % sizeof(uint64_t) == 0,
	       "struct slat_stats holds only 64-bit counters");
#define STATS_WORDS (sizeof(struct slat_stats) / sizeof(uint64_t))

static const struct slat_format *format_of(enum slat_format_id id)
{
	switch (id) {
	case SLAT_FMT_ARM_S2: return &core_format_arm_s2;
	case SLAT_FMT_EPT: return &core_format_ept;
	case SLAT_FMT_ARM_S1: return &core_format_arm_s1;
	case SLAT_FMT_NPT: return &core_format_npt;
	default: return NULL;
	}
}

int slat_config_geometry(const struct slat_config *cfg,
			 struct slat_geometry *geo)
{
	if (!cfg || !geo)
		return SLAT_E_INVAL;
	const struct slat_format *fmt = format_of(cfg->format);
	if (!fmt)
		return SLAT_E_CONFIG;
	return fmt->geometry(cfg, geo);
}

/* Where table ids come from: never 0, never reused. */
static uint64_t table_ids;

/* A hook the core calls for @cfg, by name, in the order of the struct. */
struct hook_need {
	const char *name;
	bool present;
	bool needed;
};

const char *slat_mm_ops_missing(const struct slat_mm_ops *mm,
				const struct slat_config *cfg)
{
	const struct slat_format *f = cfg ? format_of(cfg->format) : NULL;
	if (!mm || !f)
		return "slat_mm_ops";
	if (mm->size != sizeof(*mm))
		return "size";
	uint32_t feat = cfg->features;
	bool dcache = f->cache_maintenance && !(feat & SLAT_FEAT_FWB);
	bool icache = f->cache_maintenance && !(feat & SLAT_FEAT_DIC);
	const struct hook_need hooks[] = {
		{ "zalloc_root", mm->zalloc_root, true },
		{ "free_root", mm->free_root, true },
		{ "free_page", mm->free_page, true },
		{ "refcount", mm->refcount, true },
		{ "virt_to_phys", mm->virt_to_phys, true },
		{ "phys_to_virt", mm->phys_to_virt, true },
		{ "dcache_clean_inval_poc", mm->dcache_clean_inval_poc, dcache },
		{ "icache_inval_pou", mm->icache_inval_pou, icache },
		{ "tlbi_ipa", mm->tlbi_ipa, f->tlbi_by_address },
		{ "tlbi_range", mm->tlbi_range, f->tlbi_by_address },
		{ "tlbi_vmid", mm->tlbi_vmid, true },
	};
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (hooks[i].needed && !hooks[i].present)
			return hooks[i].name;
	return NULL;
}

/* Two sample leaves and a table agree with the masks the core applies in
 * place of the format's functions (struct slat_format's contract). */
static bool format_self_check(const struct slat_table *t)
{
	const struct slat_format *f = t->fmt;
	uint64_t pa = 1ull << (t->geo.pa_bits - 1);
	slat_pte_t table = f->make_table(t, slat_pa(pa));
	if (!pte_table(t, table, SLAT_LAST_LEVEL - 1) || !pte_links_table(t, table) ||
	    f->pte_pa(t, table).pa != pa || pte_valid(t, f->locked) || !f->locked)
		return false;
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++) {
		if (!leaf_allowed(t, level))
			continue;
		uint64_t at = pa & ~(level_size(t, level) - 1);
		slat_pte_t leaf = f->make_leaf(t, slat_pa(at), SLAT_RW, level);
		slat_pte_t ro = pte_apply(leaf, f->wp_clear, f->wp_set);
		if (!pte_leaf(t, leaf, level) || f->pte_pa(t, leaf).pa != at ||
		    (t->oa_mask && (leaf & t->oa_mask) != at) ||
		    !(leaf & f->young_bit) || (f->leaf_attrs(t, ro) & SLAT_W) ||
		    !pte_cacheable(t, leaf) ||
		    f->leaf_for_level(t, f->leaf_for_level(t, leaf, SLAT_LAST_LEVEL),
				      level) != leaf)
			return false;
	}
	return true;
}

/* Word by word: an aggregate initialiser may become a call to memset,
 * which a freestanding core cannot assume. */
void core_stats_clear(struct slat_stats *s)
{
	uint64_t *w = (uint64_t *)s;
	for (size_t i = 0; i < STATS_WORDS; i++)
		w[i] = 0;
}

int slat_table_init(struct slat_table *t, const struct slat_config *cfg,
		    const struct slat_mm_ops *mm, void *mm_ctx)
{
	if (!t || !cfg)
		return SLAT_E_INVAL;

	struct slat_geometry geo;
	int ret = slat_config_geometry(cfg, &geo);
	if (ret)
		return ret;
	/* Before any hook is read: at another layout's offsets they are
	 * anything. */
	if (mm && mm->size != sizeof(*mm))
		return SLAT_E_VERSION;
	if (slat_mm_ops_missing(mm, cfg))
		return SLAT_E_INVAL;

	size_t bytes = (size_t)geo.root_pages << geo.granule_shift;
	void *root = mm->zalloc_root(mm_ctx, bytes);
	if (!root)
		return SLAT_E_NOMEM;

	t->fmt = format_of(cfg->format);
	t->mm = mm;
	t->mm_ctx = mm_ctx;
	t->cfg = *cfg;
	t->cfg.pa_bits = geo.pa_bits;
	t->geo = geo;
	t->page_mask = (1ull << geo.granule_shift) - 1;
	t->ia_beyond = ~0ull << geo.ia_bits;
	t->pa_beyond = ~0ull << geo.pa_bits;
	t->map_flags_refused = ~(uint32_t)CORE_FLAGS_MAP |
			       (shared_refused(t, SLAT_SHARED) ? SLAT_SHARED : 0);
	t->root = root;
	t->root_pa = mm->virt_to_phys(mm_ctx, root);
	/* The register that holds it must express it. */
	if (!table_pa_ok(t, t->root_pa, bytes)) {
		mm->free_root(mm_ctx, root, bytes);
		t->root = NULL;
		return SLAT_E_RANGE;
	}
	for (int level = -1; level <= SLAT_LAST_LEVEL; level++)
		t->level_shift[level + 1] = (uint8_t)(geo.bits_per_level *
			(unsigned)(SLAT_LAST_LEVEL - level) + geo.granule_shift);
	/* A level above the geometry's spans more than 64 bits: no IPA
	 * bit lies beyond it. */
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++) {
		unsigned span = level_shift(t, level - 1);
		t->table_beyond[level] = span < 64 ? ~0ull << span : 0;
	}
	t->oa_mask = t->fmt->oa_mask(t);
	t->linear = mm->linear_offset != NULL;
	t->linear_offset = t->linear ? mm->linear_offset(mm_ctx) : 0;
	t->refcounts_first_page = 0;
	t->refcounts = mm->refcount_array
		? mm->refcount_array(mm_ctx, &t->refcounts_first_page) : NULL;
	t->fault_steps = tables_linear(t) &&
			 SLAT_LAST_LEVEL - 1 > geo.start_level;
	t->locked = t->fmt->locked;
	t->normal_memattr = t->fmt->make_leaf(t, slat_pa(0), SLAT_R,
					      SLAT_LAST_LEVEL) & t->fmt->memattr_mask;
	t->table_mask = t->fmt->present_mask | t->fmt->table_bit;
	t->table_match = (t->fmt->make_table(t, slat_pa(0)) & t->fmt->present_mask) |
			 (t->fmt->table_bit_set ? t->fmt->table_bit : 0);
	for (unsigned shift = 0; shift < 64; shift++)
		t->leaf_level[shift] = -1;
	for (int level = 0; level <= SLAT_LAST_LEVEL; level++)
		if (leaf_allowed(t, level))
			t->leaf_level[level_shift(t, level)] = (int8_t)level;
	t->id = __atomic_add_fetch(&table_ids, 1, __ATOMIC_RELAXED);
	t->unlinks = 0;
	core_stats_clear(&t->stats);
	if (!format_self_check(t)) {
		mm->free_root(mm_ctx, root, bytes);
		t->root = NULL;
		return SLAT_E_CONFIG;
	}
	return SLAT_OK;
}

void slat_table_destroy(struct slat_table *t)
{
	if (!table_live(t))
		return;
	struct slat_stats *st = &t->stats;
	slat_pte_t *root = t->root;
	int level = t->geo.start_level;

	for (uint32_t i = 0; i < t->geo.root_entries; i++) {
		slat_pte_t pte = root[i];
		if (pte_table(t, pte, level))
			core_free_subtree(t, table_va(t, pte), level + 1, st);
	}
	core_tlbi_vmid(t, st);
	t->mm->free_root(t->mm_ctx, t->root,
			 (size_t)t->geo.root_pages << t->geo.granule_shift);
	t->root = NULL;
	/* No page cache's memo matches a destroyed table: memos hold ids
	 * counted from 1, or 0 when empty. */
	t->id = ~0ull;
}

uint64_t slat_level_size(const struct slat_table *t, int level)
{
	if (!table_live(t) || level < t->geo.start_level ||
	    level > SLAT_LAST_LEVEL)
		return 0;
	return level_size(t, level);
}

void *slat_table_root(const struct slat_table *t, slat_pa_t *pa, size_t *bytes)
{
	if (pa)
		*pa = t->root_pa;
	if (bytes)
		*bytes = (size_t)t->geo.root_pages << t->geo.granule_shift;
	return t->root;
}

const char *slat_table_name(const struct slat_table *t)
{
	return t->fmt->name;
}

const struct slat_geometry *slat_table_geometry(const struct slat_table *t)
{
	return table_live(t) ? &t->geo : NULL;
}

const struct slat_config *slat_table_config(const struct slat_table *t)
{
	return table_live(t) ? &t->cfg : NULL;
}

void slat_stats_read(const struct slat_table *t, struct slat_stats *out)
{
	/* Word by word, relaxed: deferred frees add to two of the counters
	 * from another thread at any time. */
	const uint64_t *w = (const uint64_t *)&t->stats;
	uint64_t *o = (uint64_t *)out;
	for (size_t i = 0; i < STATS_WORDS; i++)
		o[i] = __atomic_load_n(&w[i], __ATOMIC_RELAXED);
}

void slat_stats_add(struct slat_stats *sum, const struct slat_stats *add)
{
	uint64_t *w = (uint64_t *)sum;
	const uint64_t *v = (const uint64_t *)add;
	for (size_t i = 0; i < STATS_WORDS; i++)
		w[i] += v[i];
}

void slat_stats_reset(struct slat_table *t)
{
	core_stats_clear(&t->stats);
}

void core_stats_commit(struct slat_table *t, const struct slat_stats *st)
{
	uint64_t *w = (uint64_t *)&t->stats;
	const uint64_t *v = (const uint64_t *)st;
	for (size_t i = 0; i < STATS_WORDS; i++)
		if (v[i])
			__atomic_fetch_add(&w[i], v[i], __ATOMIC_RELAXED);
}

