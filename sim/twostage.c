/* SPDX-License-Identifier: MIT */
/*
 * Two-stage translation: guest RAM, the stage-2 table that maps it, the
 * guest's stage-1 tables living in that RAM, per-vCPU TLBs of combined
 * entries and the two-dimensional walk over the real descriptors.
 * TLB maintenance semantics and the trap policies are in twostage_tlbi.c.
 */
#include "twostage_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void slat_ts_config_default(struct slat_ts_config *cfg)
{
	*cfg = (struct slat_ts_config){
		.vmid = 1,
		.nr_vcpus = 1,
		.tlb_entries = 1024,
		.tlb_ways = 4,
		.s2_tlb_entries = 0,
		.ram_ipa = 1ull << 30,
		.ram_bytes = 256ull << 20,
		.s2_blocks = false,
		.policy = SLAT_TS_UNTRAPPED,
	};
}

static bool power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

static bool config_valid(const struct slat_ts_config *c)
{
	return c->nr_vcpus >= 1 && c->nr_vcpus <= SLAT_TS_MAX_VCPUS &&
	       power_of_two(c->tlb_entries) && power_of_two(c->tlb_ways) &&
	       c->tlb_ways <= c->tlb_entries &&
	       (c->s2_tlb_entries == 0 || power_of_two(c->s2_tlb_entries)) &&
	       c->ram_bytes >= (1ull << 20) && !(c->ram_bytes % TS_PAGE) &&
	       !(c->ram_ipa % TS_PAGE) &&
	       c->ram_ipa + c->ram_bytes <= (1ull << TS_IA_BITS) &&
	       c->ram_bytes / TS_PAGE <= UINT32_MAX &&
	       c->policy < SLAT_TS_POLICIES;
}

/* ---- host-physical memory: the stage-2 arena and guest RAM ---- */

void *ts_host_of_pa(const struct slat_ts *ts, uint64_t pa)
{
	if (pa >= ts->ram_pa && pa - ts->ram_pa < ts->cfg.ram_bytes)
		return ts->ram + (pa - ts->ram_pa);
	if (pa >= ts->s2_arena.pa_base &&
	    pa - ts->s2_arena.pa_base < ts->s2_arena.arena_bytes)
		return ts->s2_arena.arena + (pa - ts->s2_arena.pa_base);
	return NULL;
}

slat_pa_t slat_ts_ram_pa(const struct slat_ts *ts, slat_ipa_t ipa)
{
	return slat_pa(ts->ram_pa + (ipa.ipa - ts->cfg.ram_ipa));
}

/* ---- guest frames ---- */

static uint32_t frame_of_ipa(const struct slat_ts *ts, uint64_t ipa)
{
	return (uint32_t)((ipa - ts->cfg.ram_ipa) / TS_PAGE);
}

void *ts_host_of_ipa(const struct slat_ts *ts, uint64_t ipa)
{
	return ts->ram + (ipa - ts->cfg.ram_ipa);
}

uint64_t ts_ipa_of_host(const struct slat_ts *ts, const void *va)
{
	return ts->cfg.ram_ipa + (uint64_t)((const uint8_t *)va - ts->ram);
}

int slat_ts_frame_alloc(struct slat_ts *ts, bool zero, slat_ipa_t *ipa)
{
	if (!ts->nr_free)
		return SLAT_E_NOMEM;
	uint32_t f = ts->free_frames[--ts->nr_free];
	ts->frame_rc[f] = 0;
	*ipa = slat_ipa(ts->cfg.ram_ipa + (uint64_t)f * TS_PAGE);
	if (zero)
		memset(ts_host_of_ipa(ts, ipa->ipa), 0, TS_PAGE);
	return SLAT_OK;
}

void slat_ts_frame_free(struct slat_ts *ts, slat_ipa_t ipa)
{
	ts->free_frames[ts->nr_free++] = frame_of_ipa(ts, ipa.ipa);
}

uint64_t slat_ts_frames_free(const struct slat_ts *ts)
{
	return ts->nr_free;
}

uint32_t *ts_frame_refcount(struct slat_ts *ts, const void *va)
{
	return &ts->frame_rc[frame_of_ipa(ts, ts_ipa_of_host(ts, va))];
}

/* ---- creation ---- */

static int stage2_init(struct slat_ts *ts)
{
	struct slat_config s2 = {
		.format = SLAT_FMT_ARM_S2, .granule = TS_PAGE,
		.ia_bits = TS_IA_BITS, .pa_bits = 48,
	};
	/* Leaf tables, the tables above them and the root, with room. */
	uint64_t pages = ts->cfg.ram_bytes / (512 * TS_PAGE) + 64;
	struct slat_page_cache cache;
	int ret;

	ret = slat_hosted_init(&ts->s2_arena, pages * TS_PAGE, TS_PAGE,
			       TS_S2_ARENA_PA);
	if (ret)
		return ret;
	ret = slat_table_init(&ts->s2, &s2, slat_hosted_ops(), &ts->s2_arena);
	if (ret) {
		slat_hosted_fini(&ts->s2_arena);
		return ret;
	}
	ts->s2_ready = true;
	if (slat_hosted_cache_init(&cache, (uint32_t)pages))
		return SLAT_E_NOMEM;
	uint32_t flags = ts->cfg.s2_blocks ? 0 : SLAT_MAP_PAGES;
	int64_t need = slat_pages_needed(
		&ts->s2, SLAT_NEED(.kind = SLAT_OP_MAP,
				   .ipa = slat_ipa(ts->cfg.ram_ipa),
				   .size = ts->cfg.ram_bytes,
				   .pa = slat_pa(ts->ram_pa), .attrs = SLAT_RWX,
				   .flags = flags));
	ret = need < 0 ? (int)need
		       : slat_hosted_cache_topup(&ts->s2_arena, &cache,
						 (uint32_t)need);
	if (!ret)
		ret = slat_map(&ts->s2, slat_ipa(ts->cfg.ram_ipa),
			       ts->cfg.ram_bytes, slat_pa(ts->ram_pa), SLAT_RWX,
			       SLAT_OP(.flags = flags, .cache = &cache));
	slat_hosted_cache_fini(&cache);
	return ret;
}

static int ram_init(struct slat_ts *ts)
{
	uint64_t frames = ts->cfg.ram_bytes / TS_PAGE;

	ts->ram = mmap(NULL, ts->cfg.ram_bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ts->ram == MAP_FAILED) {
		ts->ram = NULL;
		return SLAT_E_NOMEM;
	}
	ts->free_frames = malloc(frames * sizeof(*ts->free_frames));
	ts->frame_rc = calloc(frames, sizeof(*ts->frame_rc));
	if (!ts->free_frames || !ts->frame_rc)
		return SLAT_E_NOMEM;
	/* Lowest frames first: the stack is popped from the top. */
	for (uint64_t i = 0; i < frames; i++)
		ts->free_frames[i] = (uint32_t)(frames - 1 - i);
	ts->nr_free = (uint32_t)frames;
	/* Host PAs of RAM: 1 GiB aligned, so stage-2 blocks are possible. */
	ts->ram_pa = TS_RAM_PA;
	return SLAT_OK;
}

static int vcpus_init(struct slat_ts *ts)
{
	for (uint32_t i = 0; i < ts->cfg.nr_vcpus; i++) {
		struct ts_vcpu *v = &ts->vcpu[i];

		v->tlb = calloc(ts->cfg.tlb_entries, sizeof(*v->tlb));
		if (ts->cfg.s2_tlb_entries)
			v->s2tlb = calloc(ts->cfg.s2_tlb_entries, sizeof(*v->s2tlb));
		if (!v->tlb || (ts->cfg.s2_tlb_entries && !v->s2tlb))
			return SLAT_E_NOMEM;
	}
	return SLAT_OK;
}

struct slat_ts *slat_ts_create(const struct slat_ts_config *cfg, int *err)
{
	struct slat_ts *ts;
	int ret;

	if (!cfg || !config_valid(cfg)) {
		*err = SLAT_E_CONFIG;
		return NULL;
	}
	ts = calloc(1, sizeof(*ts));
	if (!ts) {
		*err = SLAT_E_NOMEM;
		return NULL;
	}
	ts->cfg = *cfg;
	ts->current = 0;
	ret = ram_init(ts);
	if (!ret)
		ret = stage2_init(ts);
	if (!ret)
		ret = vcpus_init(ts);
	if (!ret && slat_hosted_cache_init(&ts->s1_cache, TS_S1_CACHE))
		ret = SLAT_E_NOMEM;
	if (ret) {
		slat_ts_destroy(ts);
		*err = ret;
		return NULL;
	}
	*err = SLAT_OK;
	return ts;
}

void slat_ts_destroy(struct slat_ts *ts)
{
	if (!ts)
		return;
	ts_s1_cache_drain(ts);
	free(ts->s1_cache.pages);
	for (uint32_t i = 0; i < ts->cfg.nr_vcpus; i++) {
		free(ts->vcpu[i].tlb);
		free(ts->vcpu[i].s2tlb);
	}
	if (ts->s2_ready) {
		slat_table_destroy(&ts->s2);
		slat_hosted_fini(&ts->s2_arena);
	}
	free(ts->free_frames);
	free(ts->frame_rc);
	if (ts->ram)
		munmap(ts->ram, ts->cfg.ram_bytes);
	free(ts);
}

const struct slat_ts_config *slat_ts_config(const struct slat_ts *ts)
{
	return &ts->cfg;
}

void slat_ts_set_policy(struct slat_ts *ts, enum slat_ts_policy policy)
{
	ts->cfg.policy = policy;
}

struct slat_table *slat_ts_stage2(struct slat_ts *ts)
{
	return &ts->s2;
}

void slat_ts_vcpu_switch(struct slat_ts *ts, uint32_t vcpu,
			 struct slat_ts_as *user, struct slat_ts_as *kernel)
{
	ts->vcpu[vcpu].user = user;
	ts->vcpu[vcpu].kernel = kernel;
}

void slat_ts_set_current(struct slat_ts *ts, uint32_t vcpu)
{
	ts->current = vcpu;
}

void slat_ts_stats_read(const struct slat_ts *ts, struct slat_ts_stats *s)
{
	*s = ts->st;
}

void slat_ts_stats_reset(struct slat_ts *ts)
{
	memset(&ts->st, 0, sizeof(ts->st));
}

/* ---- the walks ---- */

/* Bytes an entry at @level maps (4K granule). */
static unsigned level_shift(int level)
{
	return (unsigned)(9 * (3 - level) + 12);
}

struct walk_leaf {
	uint64_t out;        /* output address of the input address */
	unsigned shift;      /* log2 of the leaf's size */
	slat_pte_t desc;
};

static bool desc_valid(slat_pte_t d)
{
	return d & 1;
}

static bool desc_is_table(slat_pte_t d, int level)
{
	return level < SLAT_LAST_LEVEL && (d & 2);
}

/* A 0b01 descriptor at the last level is reserved: it translates nothing. */
static bool desc_is_leaf(slat_pte_t d, int level)
{
	return level < SLAT_LAST_LEVEL || (d & 2);
}

static uint64_t desc_oa(slat_pte_t d)
{
	return d & TS_OA_MASK;
}

static uint64_t read_desc(const struct slat_ts *ts, uint64_t pa)
{
	const uint64_t *p = ts_host_of_pa(ts, pa);

	return p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0;
}

static uint32_t s2_perms_of(slat_pte_t d)
{
	uint32_t p = 0;

	if (d & (1ull << 6))
		p |= SLAT_R;
	if (d & (1ull << 7))
		p |= SLAT_W;
	if (!(d & (1ull << 54)))
		p |= SLAT_X;
	return p;
}

static uint32_t s1_attrs_of(slat_pte_t d)
{
	uint32_t a = SLAT_R;

	if (!(d & (1ull << 7)))
		a |= SLAT_W;
	if (d & (1ull << 6))
		a |= SLAT_USER;
	if (!(d & (1ull << 53)))
		a |= SLAT_XK;
	if (!(d & (1ull << 54)))
		a |= SLAT_XU;
	if (d & (1ull << 11))
		a |= SLAT_NG;
	return a;
}

/* Walk the stage-2 descriptors for @ipa, counting each read. */
static enum slat_fault s2_walk(struct slat_ts *ts, uint64_t ipa,
			       struct walk_leaf *leaf, uint32_t *refs)
{
	slat_pa_t root;
	slat_table_root(&ts->s2, &root, NULL);
	uint64_t table = root.pa;

	if (ipa >> TS_IA_BITS)
		return SLAT_FAULT_TRANSLATION;
	for (int level = TS_START_LEVEL; level <= SLAT_LAST_LEVEL; level++) {
		unsigned shift = level_shift(level);
		uint64_t idx = (ipa >> shift) & 511;
		slat_pte_t d = read_desc(ts, table + idx * 8);

		(*refs)++;
		if (!desc_valid(d) || !desc_is_leaf(d, level))
			return SLAT_FAULT_TRANSLATION;
		if (desc_is_table(d, level)) {
			table = desc_oa(d);
			continue;
		}
		if (!(d & TS_AF))
			return SLAT_FAULT_ACCESS_FLAG;
		leaf->shift = shift;
		leaf->desc = d;
		leaf->out = (desc_oa(d) & ~((1ull << shift) - 1)) |
			    (ipa & ((1ull << shift) - 1));
		return SLAT_FAULT_NONE;
	}
	return SLAT_FAULT_TRANSLATION;
}

static struct ts_s2e *s2tlb_slot(struct slat_ts *ts, struct ts_vcpu *v,
				 uint64_t ipa)
{
	return &v->s2tlb[(ipa >> 12) & (ts->cfg.s2_tlb_entries - 1)];
}

static bool s2tlb_lookup(struct slat_ts *ts, struct ts_vcpu *v, uint64_t ipa,
			 uint64_t *pa, uint32_t *perms)
{
	if (!v->s2tlb)
		return false;
	struct ts_s2e *e = s2tlb_slot(ts, v, ipa);
	if (!e->valid || e->vmid != ts->cfg.vmid || (e->ipa ^ ipa) >> e->shift)
		return false;
	*pa = e->pa | (ipa & ((1ull << e->shift) - 1));
	*perms = e->perms;
	return true;
}

static void s2tlb_fill(struct slat_ts *ts, struct ts_vcpu *v, uint64_t ipa,
		       const struct walk_leaf *leaf)
{
	if (!v->s2tlb)
		return;
	*s2tlb_slot(ts, v, ipa) = (struct ts_s2e){
		.valid = true, .vmid = ts->cfg.vmid, .shift = (uint8_t)leaf->shift,
		.ipa = ipa & ~((1ull << leaf->shift) - 1),
		.pa = leaf->out & ~((1ull << leaf->shift) - 1),
		.perms = s2_perms_of(leaf->desc),
	};
}

/* Stage 2 of one address during a walk: the stage-2-only TLB, else a
 * walk of the stage-2 table. */
static enum slat_fault s2_translate(struct slat_ts *ts, struct ts_vcpu *v,
				    uint64_t ipa, uint64_t *pa, uint32_t *perms,
				    uint32_t *refs)
{
	struct walk_leaf leaf;
	enum slat_fault f;

	if (s2tlb_lookup(ts, v, ipa, pa, perms)) {
		ts->st.s2_tlb_hits++;
		return SLAT_FAULT_NONE;
	}
	f = s2_walk(ts, ipa, &leaf, refs);
	if (f)
		return f;
	s2tlb_fill(ts, v, ipa, &leaf);
	*pa = leaf.out;
	*perms = s2_perms_of(leaf.desc);
	return SLAT_FAULT_NONE;
}

/* The stage-1 table that translates @va, and its input address. */
static struct slat_ts_as *s1_table_for(struct ts_vcpu *v, uint64_t va,
				       uint64_t *in)
{
	uint64_t top = va >> TS_IA_BITS;

	*in = va & ((1ull << TS_IA_BITS) - 1);
	if (top == 0)
		return v->user;
	if (top == 0xffff)
		return v->kernel;
	return NULL;
}

struct walk_out {
	uint64_t ipa, pa;
	unsigned s1_shift;
	uint32_t s1_attrs, s2_perms;
	int stage;
};

/*
 * The two-dimensional walk: each stage-1 descriptor's IPA goes through
 * stage 2 before it is read, then the output IPA does.
 */
static enum slat_fault two_stage_walk(struct slat_ts *ts, struct ts_vcpu *v,
				      uint64_t va, struct walk_out *o,
				      uint32_t *refs)
{
	uint64_t in, table_ipa, pa;
	uint32_t perms;
	struct slat_ts_as *as = s1_table_for(v, va, &in);
	enum slat_fault f;

	o->stage = 1;
	if (!as)
		return SLAT_FAULT_TRANSLATION;
	table_ipa = as->root_ipa;
	for (int level = TS_START_LEVEL; level <= SLAT_LAST_LEVEL; level++) {
		unsigned shift = level_shift(level);
		uint64_t desc_ipa = table_ipa + ((in >> shift) & 511) * 8;

		f = s2_translate(ts, v, desc_ipa, &pa, &perms, refs);
		if (f) {
			o->stage = 2;
			return f;
		}
		slat_pte_t d = read_desc(ts, pa);
		(*refs)++;
		if (!desc_valid(d) || !desc_is_leaf(d, level))
			return SLAT_FAULT_TRANSLATION;
		if (desc_is_table(d, level)) {
			table_ipa = desc_oa(d);
			continue;
		}
		if (!(d & TS_AF))
			return SLAT_FAULT_ACCESS_FLAG;
		o->s1_shift = shift;
		o->s1_attrs = s1_attrs_of(d);
		o->ipa = (desc_oa(d) & ~((1ull << shift) - 1)) |
			 (in & ((1ull << shift) - 1));
		f = s2_translate(ts, v, o->ipa, &o->pa, &o->s2_perms, refs);
		if (f)
			o->stage = 2;
		return f;
	}
	return SLAT_FAULT_TRANSLATION;
}

static bool s1_allows(uint32_t a, unsigned access, bool el0)
{
	if (el0 && !(a & SLAT_USER) && access != SLAT_ACCESS_EXEC_EL0)
		return false;
	switch (access) {
	case SLAT_ACCESS_WRITE: return a & SLAT_W;
	case SLAT_ACCESS_EXEC_EL0: return a & SLAT_XU;
	case SLAT_ACCESS_EXEC_EL1: return a & SLAT_XK;
	default: return true;
	}
}

static bool s2_allows(uint32_t p, unsigned access)
{
	switch (access) {
	case SLAT_ACCESS_WRITE: return p & SLAT_W;
	case SLAT_ACCESS_EXEC_EL0: return p & SLAT_XU;
	case SLAT_ACCESS_EXEC_EL1: return p & SLAT_XK;
	default: return p & SLAT_R;
	}
}

/* ---- the combined TLB ---- */

static uint16_t vcpu_asid(const struct ts_vcpu *v)
{
	return v->user ? v->user->asid : 0;
}

static bool tlbe_matches(const struct slat_ts *ts, const struct ts_tlbe *e,
			 uint16_t asid, uint64_t va)
{
	return e->valid && e->vmid == ts->cfg.vmid &&
	       !((e->va ^ va) >> e->s1_shift) &&
	       (e->global || e->asid == asid);
}

static uint32_t tlb_set_of(const struct slat_ts *ts, uint64_t va)
{
	uint32_t sets = ts->cfg.tlb_entries / ts->cfg.tlb_ways;

	return (uint32_t)((va >> 12) & (sets - 1)) * ts->cfg.tlb_ways;
}

static struct ts_tlbe *tlb_find(const struct slat_ts *ts, struct ts_vcpu *v,
				uint16_t asid, uint64_t va)
{
	struct ts_tlbe *set = &v->tlb[tlb_set_of(ts, va)];

	for (uint32_t w = 0; w < ts->cfg.tlb_ways; w++)
		if (tlbe_matches(ts, &set[w], asid, va))
			return &set[w];
	return NULL;
}

bool slat_ts_tlb_holds(const struct slat_ts *ts, uint32_t vcpu, uint16_t asid,
		       uint64_t va)
{
	return tlb_find(ts, (struct ts_vcpu *)&ts->vcpu[vcpu], asid, va) != NULL;
}

uint32_t slat_ts_tlb_count(const struct slat_ts *ts, uint32_t vcpu)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ts->cfg.tlb_entries; i++)
		n += ts->vcpu[vcpu].tlb[i].valid;
	return n;
}

/* Entries are per 4K page whatever the leaf sizes (the walk result is
 * cached for the page accessed), tagged with the stage-1 leaf's span so
 * that invalidation by VA removes every page of a block. */
static void tlb_fill(struct slat_ts *ts, struct ts_vcpu *v, uint64_t va,
		     const struct walk_out *o)
{
	struct ts_tlbe *set = &v->tlb[tlb_set_of(ts, va)], *victim = &set[0];

	for (uint32_t w = 0; w < ts->cfg.tlb_ways; w++) {
		if (!set[w].valid) {
			victim = &set[w];
			break;
		}
		if (set[w].stamp < victim->stamp)
			victim = &set[w];
	}
	*victim = (struct ts_tlbe){
		.valid = true,
		.global = !(o->s1_attrs & SLAT_NG),
		.vmid = ts->cfg.vmid,
		.asid = vcpu_asid(v),
		.s1_shift = (uint8_t)o->s1_shift,
		.va = va & ~(TS_PAGE - 1),
		.ipa = o->ipa & ~(TS_PAGE - 1),
		.pa = o->pa & ~(TS_PAGE - 1),
		.s1_attrs = o->s1_attrs,
		.s2_perms = o->s2_perms,
		.stamp = ++v->clock,
	};
}

static void result_from_entry(struct slat_ts_result *res,
			      const struct ts_tlbe *e, uint64_t va)
{
	res->ipa = slat_ipa(e->ipa | (va & (TS_PAGE - 1)));
	res->pa = slat_pa(e->pa | (va & (TS_PAGE - 1)));
	res->s1_attrs = e->s1_attrs;
	res->s2_perms = e->s2_perms;
}

static void check_perms(struct slat_ts_result *res, unsigned access, bool el0)
{
	if (!s1_allows(res->s1_attrs, access, el0)) {
		res->fault = SLAT_FAULT_PERMISSION;
		res->stage = 1;
	} else if (!s2_allows(res->s2_perms, access)) {
		res->fault = SLAT_FAULT_PERMISSION;
		res->stage = 2;
	}
}

int slat_ts_access(struct slat_ts *ts, uint32_t vcpu, uint64_t va,
		   unsigned access, bool el0, struct slat_ts_result *res)
{
	struct ts_vcpu *v;
	struct ts_tlbe *e;
	struct walk_out o;

	if (vcpu >= ts->cfg.nr_vcpus)
		return SLAT_E_INVAL;
	v = &ts->vcpu[vcpu];
	memset(res, 0, sizeof(*res));
	ts->st.accesses++;
	e = tlb_find(ts, v, vcpu_asid(v), va);
	if (e) {
		ts->st.tlb_hits++;
		e->stamp = ++v->clock;
		res->hit = true;
		result_from_entry(res, e, va);
		check_perms(res, access, el0);
		if (res->fault)
			ts->st.faults[res->fault]++;
		return SLAT_OK;
	}
	ts->st.tlb_misses++;
	ts->st.walks++;
	res->fault = two_stage_walk(ts, v, va, &o, &res->refs);
	ts->st.walk_refs += res->refs;
	res->stage = o.stage;
	if (res->fault) {
		ts->st.faults[res->fault]++;
		return SLAT_OK;
	}
	res->ipa = slat_ipa(o.ipa);
	res->pa = slat_pa(o.pa);
	res->s1_attrs = o.s1_attrs;
	res->s2_perms = o.s2_perms;
	check_perms(res, access, el0);
	if (res->fault) {
		ts->st.faults[res->fault]++;
		return SLAT_OK;
	}
	tlb_fill(ts, v, va, &o);
	return SLAT_OK;
}
