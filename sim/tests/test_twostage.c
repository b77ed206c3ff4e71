/* SPDX-License-Identifier: MIT */
/*
 * Two-stage translation: walks agree with stage 1 then stage 2 composed
 * from reference maps; a cold walk reads exactly (4+1)*(4+1)-1 descriptors;
 * each TLB maintenance operation removes exactly the combined entries the
 * architecture says it does; the trap policies count what they should; the
 * kernel-build workload gives the same guest events under every policy.
 */
#include <slat/twostage.h>

#include "check.h"

#define PAGE 4096ull
#define USER_RW (SLAT_RW | SLAT_USER | SLAT_NG)
#define KVA(off) SLAT_TS_KERNEL_VA(0x0000800000000000ull + (off))

static uint64_t rng_state = 0x12345678;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static struct slat_ts *new_ts(uint32_t vcpus, uint32_t s2_tlb, bool s2_blocks,
			      enum slat_ts_policy policy)
{
	struct slat_ts_config cfg;
	struct slat_ts *ts;
	int err;

	slat_ts_config_default(&cfg);
	cfg.nr_vcpus = vcpus;
	cfg.s2_tlb_entries = s2_tlb;
	cfg.s2_blocks = s2_blocks;
	cfg.ram_bytes = 1ull << 30;
	cfg.policy = policy;
	ts = slat_ts_create(&cfg, &err);
	REQUIRE(ts, "slat_ts_create: %d", err);
	return ts;
}

static struct slat_ts_as *new_as(struct slat_ts *ts, bool kernel, uint16_t asid)
{
	int err;
	struct slat_ts_as *as = slat_ts_as_create(ts, kernel, asid, &err);

	REQUIRE(as, "slat_ts_as_create: %d", err);
	return as;
}

static slat_ipa_t frame(struct slat_ts *ts)
{
	slat_ipa_t ipa;

	REQUIRE(slat_ts_frame_alloc(ts, false, &ipa) == SLAT_OK, "out of frames");
	return ipa;
}

static struct slat_ts_result access(struct slat_ts *ts, uint32_t vcpu,
				    uint64_t va, unsigned kind, bool el0)
{
	struct slat_ts_result r;

	REQUIRE(slat_ts_access(ts, vcpu, va, kind, el0, &r) == SLAT_OK, "access");
	return r;
}

/* ---- walks against composed reference maps ---- */

#define NPAGES 400

struct ref {
	uint64_t va[NPAGES];
	slat_ipa_t ipa[NPAGES];
	uint32_t attrs[NPAGES];
	int n;
	/* stage 2: IPAs moved by the hypervisor */
	slat_ipa_t moved_ipa[32];
	slat_pa_t moved_pa[32];
	int nmoved;
	slat_ipa_t gone;   /* an IPA unmapped at stage 2 */
};

static uint64_t ref_stage2(const struct slat_ts *ts, const struct ref *r,
			   slat_ipa_t ipa)
{
	for (int i = 0; i < r->nmoved; i++)
		if (r->moved_ipa[i].ipa == (ipa.ipa & ~(PAGE - 1)))
			return r->moved_pa[i].pa | (ipa.ipa & (PAGE - 1));
	return slat_ts_ram_pa(ts, ipa).pa;
}

static void build_random_layout(struct slat_ts *ts, struct slat_ts_as *as,
				struct ref *r)
{
	static const uint32_t attr_choice[] = {
		USER_RW, SLAT_R | SLAT_USER | SLAT_NG, SLAT_R | SLAT_XU | SLAT_USER,
		SLAT_RW, SLAT_R | SLAT_XK,
	};
	struct slat_table *s2 = slat_ts_stage2(ts);
	struct slat_page_cache none = { 0 };

	r->n = 0;
	while (r->n < NPAGES) {
		/* Clusters of pages scattered over the 48-bit space. */
		uint64_t base = (rnd() & 0x0000ffffffe00000ull);
		int run = 1 + (int)(rnd() % 8);

		for (int k = 0; k < run && r->n < NPAGES; k++) {
			uint64_t va = base + (uint64_t)k * PAGE;
			bool dup = false;

			for (int j = 0; j < r->n; j++)
				dup |= r->va[j] == va;
			if (dup)
				continue;
			r->va[r->n] = va;
			r->ipa[r->n] = frame(ts);
			r->attrs[r->n] = attr_choice[rnd() % 5];
			REQUIRE(slat_ts_as_map(as, va, PAGE, r->ipa[r->n],
					       r->attrs[r->n]) >= 0, "map");
			r->n++;
		}
	}
	/* The hypervisor moves some data pages to other host pages. */
	r->nmoved = 0;
	for (int i = 0; i < 32 && !slat_ts_config(ts)->s2_blocks; i++) {
		slat_ipa_t spare = frame(ts);

		r->moved_ipa[i] = r->ipa[rnd() % NPAGES];
		for (int j = 0; j < i; j++)
			if (r->moved_ipa[j].ipa == r->moved_ipa[i].ipa)
				r->moved_ipa[i] = spare; /* not a duplicate */
		r->moved_pa[i] = slat_ts_ram_pa(ts, spare);
		REQUIRE(slat_map(s2, r->moved_ipa[i], PAGE, r->moved_pa[i],
				 SLAT_RWX, SLAT_OP(.cache = &none)) >= 0,
			"stage-2 remap");
		r->nmoved++;
	}
	r->gone = slat_ipa(0);
	if (!slat_ts_config(ts)->s2_blocks) {
		struct slat_page_cache c = { 0 };

		r->gone = r->ipa[NPAGES - 1];
		REQUIRE(slat_unmap(s2, r->gone, PAGE,
				   SLAT_OP(.flush = SLAT_FLUSH_NONE,
					   .cache = &c)) == 0,
			"stage-2 unmap");
	}
	struct slat_ts_tlbi all = { .kind = SLAT_TS_VMALLS12E1IS };
	slat_ts_hw_tlbi(ts, 0, &all);
}

static void check_against_reference(struct slat_ts *ts, struct slat_ts_as *as,
				    const struct ref *r)
{
	for (int i = 0; i < r->n; i++) {
		uint64_t off = rnd() % PAGE & ~7ull;
		struct slat_ts_result res = access(ts, 0, r->va[i] + off,
						   SLAT_ACCESS_READ, false);
		struct slat_leaf l1, l2;

		if (r->gone.ipa && r->ipa[i].ipa == r->gone.ipa) {
			CHECK(res.fault == SLAT_FAULT_TRANSLATION && res.stage == 2,
			      "IPA unmapped at stage 2: fault %d stage %d",
			      res.fault, res.stage);
			continue;
		}
		CHECK(res.fault == SLAT_FAULT_NONE, "va %#llx fault %d stage %d",
		      (unsigned long long)r->va[i], res.fault, res.stage);
		CHECK(res.ipa.ipa == r->ipa[i].ipa + off, "ipa");
		CHECK(res.pa.pa == ref_stage2(ts, r, slat_ipa(r->ipa[i].ipa + off)),
		      "va %#llx: pa %#llx, reference %#llx",
		      (unsigned long long)r->va[i], (unsigned long long)res.pa.pa,
		      (unsigned long long)ref_stage2(ts, r, slat_ipa(r->ipa[i].ipa + off)));
		CHECK((res.s1_attrs & (SLAT_PERMS | SLAT_USER | SLAT_NG)) ==
			      (r->attrs[i] & (SLAT_PERMS | SLAT_USER | SLAT_NG)),
		      "stage-1 attributes %#x, mapped %#x", res.s1_attrs, r->attrs[i]);
		/* The library's own lookups, composed, agree too. */
		REQUIRE(slat_lookup(slat_ts_as_table(as), slat_ipa(r->va[i] + off),
				    &l1) == SLAT_OK, "s1 lookup");
		REQUIRE(slat_lookup(slat_ts_stage2(ts), slat_ipa(l1.pa.pa), &l2) ==
				SLAT_OK, "s2 lookup");
		CHECK(l2.pa.pa == res.pa.pa, "lookup composition");
		/* Permissions of both stages are enforced. */
		struct slat_ts_result w = access(ts, 0, r->va[i], SLAT_ACCESS_WRITE, true);
		bool may = (r->attrs[i] & SLAT_W) && (r->attrs[i] & SLAT_USER);
		CHECK((w.fault == SLAT_FAULT_NONE) == may,
		      "EL0 write to attrs %#x: fault %d", r->attrs[i], w.fault);
	}
	/* Holes translate nothing, at stage 1. */
	for (int i = 0; i < 200; i++) {
		uint64_t va = rnd() & 0x0000fffffffff000ull;
		bool mapped = false;

		for (int j = 0; j < r->n; j++)
			mapped |= r->va[j] == va;
		if (mapped)
			continue;
		struct slat_ts_result res = access(ts, 0, va, SLAT_ACCESS_READ, false);
		CHECK(res.fault == SLAT_FAULT_TRANSLATION && res.stage == 1,
		      "hole %#llx", (unsigned long long)va);
	}
}

static void two_stage_walks_agree_with_composed_reference(void)
{
	for (int variant = 0; variant < 3; variant++) {
		struct slat_ts *ts = new_ts(1, variant == 2 ? 64 : 0, variant == 1,
					    SLAT_TS_UNTRAPPED);
		struct slat_ts_as *as = new_as(ts, false, 7);
		struct ref *r = calloc(1, sizeof(*r));

		slat_ts_vcpu_switch(ts, 0, as, NULL);
		build_random_layout(ts, as, r);
		check_against_reference(ts, as, r);
		/* The same again, from the TLB. */
		check_against_reference(ts, as, r);
		free(r);
		slat_ts_as_destroy(as);
		slat_ts_destroy(ts);
	}
}

/* ---- exact reference counts ---- */

static void cold_walk_reads_24_descriptors(void)
{
	struct slat_ts *ts = new_ts(1, 0, false, SLAT_TS_UNTRAPPED);
	struct slat_ts_as *as = new_as(ts, false, 1);
	struct slat_ts_result r;

	slat_ts_vcpu_switch(ts, 0, as, NULL);
	REQUIRE(slat_ts_as_map(as, 0x1234000, 2 * PAGE, frame(ts), USER_RW) >= 0 &&
		slat_ts_as_map(as, 0x1235000, PAGE, frame(ts), USER_RW) >= 0, "map");
	r = access(ts, 0, 0x1234008, SLAT_ACCESS_READ, true);
	CHECK(!r.fault && !r.hit && r.refs == 24, "cold walk: %u refs", r.refs);
	r = access(ts, 0, 0x1234010, SLAT_ACCESS_READ, true);
	CHECK(!r.fault && r.hit && r.refs == 0, "then a hit");
	/* No walk caches: the neighbour page walks everything again. */
	r = access(ts, 0, 0x1235000, SLAT_ACCESS_READ, true);
	CHECK(!r.fault && !r.hit && r.refs == 24, "neighbour: %u refs", r.refs);
	/* A missing level-3 entry: 4 stage-1 reads, each after a 4-read
	 * stage-2 walk. */
	r = access(ts, 0, 0x1236000, SLAT_ACCESS_READ, true);
	CHECK(r.fault == SLAT_FAULT_TRANSLATION && r.refs == 20, "fault walk: %u",
	      r.refs);
	struct slat_ts_stats st;
	slat_ts_stats_read(ts, &st);
	CHECK(st.walks == 3 && st.walk_refs == 68 && st.tlb_hits == 1,
	      "walks %llu refs %llu", (unsigned long long)st.walks,
	      (unsigned long long)st.walk_refs);
	slat_ts_as_destroy(as);
	slat_ts_destroy(ts);

	/* Stage 2 with 1 GiB blocks: (4+1)*(2+1)-1 = 14. */
	ts = new_ts(1, 0, true, SLAT_TS_UNTRAPPED);
	as = new_as(ts, false, 1);
	slat_ts_vcpu_switch(ts, 0, as, NULL);
	REQUIRE(slat_ts_as_map(as, 0x1234000, PAGE, frame(ts), USER_RW) >= 0, "map");
	r = access(ts, 0, 0x1234000, SLAT_ACCESS_READ, true);
	CHECK(!r.fault && r.refs == 14, "1G stage 2: %u refs", r.refs);
	slat_ts_as_destroy(as);
	slat_ts_destroy(ts);

	/* With a stage-2-only TLB, VMALLE1IS keeps the IPA->PA entries: the
	 * re-walk reads only the 4 stage-1 descriptors. VMALLS12E1IS drops
	 * them too: 24 again. */
	ts = new_ts(1, 256, false, SLAT_TS_UNTRAPPED);
	as = new_as(ts, false, 1);
	slat_ts_vcpu_switch(ts, 0, as, NULL);
	REQUIRE(slat_ts_as_map(as, 0x1234000, PAGE, frame(ts), USER_RW) >= 0, "map");
	r = access(ts, 0, 0x1234000, SLAT_ACCESS_READ, true);
	CHECK(r.refs == 24, "cold: %u", r.refs);
	struct slat_ts_tlbi op = { .kind = SLAT_TS_VMALLE1IS };
	slat_ts_hw_tlbi(ts, 0, &op);
	r = access(ts, 0, 0x1234000, SLAT_ACCESS_READ, true);
	CHECK(!r.hit && r.refs == 4, "after VMALLE1IS: %u", r.refs);
	op.kind = SLAT_TS_VMALLS12E1IS;
	slat_ts_hw_tlbi(ts, 0, &op);
	r = access(ts, 0, 0x1234000, SLAT_ACCESS_READ, true);
	CHECK(!r.hit && r.refs == 24, "after VMALLS12E1IS: %u", r.refs);
	/* IPAS2E1IS of the data page: only its stage-2 walk comes back. */
	op = (struct slat_ts_tlbi){ .kind = SLAT_TS_IPAS2E1IS, .ipa = r.ipa };
	slat_ts_hw_tlbi(ts, 0, &op);
	CHECK(slat_ts_tlb_holds(ts, 0, 1, 0x1234000),
	      "IPAS2E1IS leaves combined entries");
	op.kind = SLAT_TS_VMALLE1IS;
	slat_ts_hw_tlbi(ts, 0, &op);
	r = access(ts, 0, 0x1234000, SLAT_ACCESS_READ, true);
	CHECK(!r.hit && r.refs == 8, "after IPAS2E1IS + VMALLE1IS: %u", r.refs);
	slat_ts_as_destroy(as);
	slat_ts_destroy(ts);
}

/* ---- invalidation semantics ---- */

struct scene {
	struct slat_ts *ts;
	struct slat_ts_as *a, *b, *k;   /* ASID 1, ASID 2, kernel (global) */
};

#define VX 0x400000ull
#define VY 0x401000ull
#define KB 0x200000ull   /* kernel: one 2 MiB block at KVA(0) */

static void scene_init(struct scene *s, enum slat_ts_policy policy)
{
	slat_ipa_t fx = frame(s->ts = new_ts(2, 64, false, policy)), fy = frame(s->ts);
	slat_ipa_t first = frame(s->ts), last = first;

	s->a = new_as(s->ts, false, 1);
	s->b = new_as(s->ts, false, 2);
	s->k = new_as(s->ts, true, 0);
	REQUIRE(slat_ts_as_map(s->a, VX, PAGE, fx, USER_RW) >= 0 &&
		slat_ts_as_map(s->a, VY, PAGE, fy, USER_RW) >= 0 &&
		slat_ts_as_map(s->b, VX, PAGE, fy, USER_RW) >= 0 &&
		slat_ts_as_map(s->b, VY, PAGE, fx, USER_RW) >= 0, "user maps");
	/* The kernel: one 2 MiB block over aligned frames. */
	for (int i = 0; i < 1024; i++)
		last = frame(s->ts);
	uint64_t base = (first.ipa + KB - 1) & ~(KB - 1);
	REQUIRE(base + KB <= last.ipa + PAGE, "frames for a block");
	REQUIRE(slat_ts_as_map(s->k, KVA(0), KB, slat_ipa(base), SLAT_RW) >= 0,
		"kernel map");
	struct slat_leaf l;
	REQUIRE(slat_lookup(slat_ts_as_table(s->k), slat_ipa(KVA(0) & ((1ull << 48) - 1)),
			    &l) == SLAT_OK && l.size == KB, "a block");
	slat_ts_vcpu_switch(s->ts, 0, s->a, s->k);
	slat_ts_vcpu_switch(s->ts, 1, s->b, s->k);
}

/* Both vCPUs touch VX, VY and two kernel pages. */
static void scene_fill(struct scene *s)
{
	static const uint64_t kvas[] = { KVA(0), KVA(0x5000) };

	for (uint32_t c = 0; c < 2; c++) {
		REQUIRE(!access(s->ts, c, VX, SLAT_ACCESS_READ, true).fault &&
			!access(s->ts, c, VY, SLAT_ACCESS_READ, true).fault, "user");
		for (int i = 0; i < 2; i++)
			REQUIRE(!access(s->ts, c, kvas[i], SLAT_ACCESS_READ, false).fault,
				"kernel");
	}
}

static void scene_fini(struct scene *s)
{
	slat_ts_as_destroy(s->a);
	slat_ts_as_destroy(s->b);
	slat_ts_as_destroy(s->k);
	slat_ts_destroy(s->ts);
}

/* What each vCPU still holds: bit 0 VX, 1 VY, 2 KVA(0), 3 KVA(0x5000). */
static unsigned holds(struct scene *s, uint32_t c)
{
	uint16_t asid = c ? 2 : 1;

	return (unsigned)slat_ts_tlb_holds(s->ts, c, asid, VX) |
	       (unsigned)slat_ts_tlb_holds(s->ts, c, asid, VY) << 1 |
	       (unsigned)slat_ts_tlb_holds(s->ts, c, asid, KVA(0)) << 2 |
	       (unsigned)slat_ts_tlb_holds(s->ts, c, asid, KVA(0x5000)) << 3;
}

/* An entry a lookup no longer holds must not be used: the next access walks. */
static void check_rewalks(struct scene *s, uint32_t c, unsigned held)
{
	static const uint64_t vas[] = { VX, VY, KVA(0), KVA(0x5000) };

	for (int i = 0; i < 4; i++) {
		struct slat_ts_result r = access(s->ts, c, vas[i], SLAT_ACCESS_READ,
						 i < 2);
		CHECK(r.hit == !!(held & (1u << i)), "vCPU %u va %d hit %d", c, i,
		      r.hit);
	}
}

static void each_tlbi_removes_exactly_its_entries(void)
{
	static const struct {
		const char *what;
		struct slat_ts_tlbi op;
		uint32_t vcpu;
		unsigned left0, left1; /* what vCPU 0 (ASID 1), 1 (ASID 2) keep */
	} cases[] = {
		{ "VAE1IS asid 1 VX", { SLAT_TS_VAE1IS, 1, VX, { 0 } }, 0, 0xe, 0xf },
		{ "VAE1IS asid 2 VY", { SLAT_TS_VAE1IS, 2, VY, { 0 } }, 0, 0xf, 0xd },
		/* global entries go whatever the ASID; the whole block goes */
		{ "VAE1IS asid 9 kernel page", { SLAT_TS_VAE1IS, 9, KVA(0x1000), { 0 } },
		  1, 0x3, 0x3 },
		{ "ASIDE1IS 1", { SLAT_TS_ASIDE1IS, 1, 0, { 0 } }, 1, 0xc, 0xf },
		{ "ASIDE1IS 2", { SLAT_TS_ASIDE1IS, 2, 0, { 0 } }, 0, 0xf, 0xc },
		{ "ASIDE1IS 5", { SLAT_TS_ASIDE1IS, 5, 0, { 0 } }, 0, 0xf, 0xf },
		{ "VMALLE1IS", { SLAT_TS_VMALLE1IS, 0, 0, { 0 } }, 0, 0, 0 },
		{ "VMALLE1 on vCPU 1", { SLAT_TS_VMALLE1, 0, 0, { 0 } }, 1, 0xf, 0 },
		{ "IPAS2E1IS", { SLAT_TS_IPAS2E1IS, 0, 0, { 1ull << 30 } }, 0, 0xf, 0xf },
		{ "VMALLS12E1IS", { SLAT_TS_VMALLS12E1IS, 0, 0, { 0 } }, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scene s;
		struct slat_ts_stats st;
		bool guest = cases[i].op.kind <= SLAT_TS_VMALLE1;

		scene_init(&s, SLAT_TS_PRECISE);
		scene_fill(&s);
		CHECK(holds(&s, 0) == 0xf && holds(&s, 1) == 0xf, "%s: filled",
		      cases[i].what);
		slat_ts_stats_reset(s.ts);
		if (guest)
			slat_ts_guest_flush(s.ts, cases[i].vcpu, &cases[i].op, 1);
		else
			slat_ts_hw_tlbi(s.ts, cases[i].vcpu, &cases[i].op);
		CHECK(holds(&s, 0) == cases[i].left0 && holds(&s, 1) == cases[i].left1,
		      "%s: vCPU 0 holds %#x (expected %#x), vCPU 1 %#x (expected %#x)",
		      cases[i].what, holds(&s, 0), cases[i].left0, holds(&s, 1),
		      cases[i].left1);
		slat_ts_stats_read(s.ts, &st);
		CHECK(st.traps == (guest ? 1u : 0u), "%s: traps %llu", cases[i].what,
		      (unsigned long long)st.traps);
		check_rewalks(&s, 0, cases[i].left0);
		check_rewalks(&s, 1, cases[i].left1);
		scene_fini(&s);
	}
}

static void policies_trap_and_widen_as_configured(void)
{
	static const struct slat_ts_tlbi ops[3] = {
		{ SLAT_TS_VAE1IS, 1, VX, { 0 } }, { SLAT_TS_VAE1IS, 1, VY, { 0 } },
		{ SLAT_TS_ASIDE1IS, 2, 0, { 0 } },
	};

	for (int p = 0; p < SLAT_TS_POLICIES; p++) {
		struct scene s;
		struct slat_ts_stats st;

		scene_init(&s, (enum slat_ts_policy)p);
		scene_fill(&s);
		slat_ts_stats_reset(s.ts);
		slat_ts_guest_flush(s.ts, 0, ops, 3);
		slat_ts_stats_read(s.ts, &st);
		CHECK(st.guest_tlbi[SLAT_TS_VAE1IS] == 2 &&
		      st.guest_tlbi[SLAT_TS_ASIDE1IS] == 1, "issued");
		switch (p) {
		case SLAT_TS_UNTRAPPED:
			CHECK(st.traps == 0 && st.dsb == 1, "one DSB, no trap");
			CHECK(holds(&s, 0) == 0xc && holds(&s, 1) == 0xc, "as issued");
			break;
		case SLAT_TS_PRECISE:
			CHECK(st.traps == 3 && st.dsb == 3, "a trap and a DSB each");
			CHECK(st.hw_tlbi[SLAT_TS_VAE1IS] == 2 &&
			      st.hw_tlbi[SLAT_TS_ASIDE1IS] == 1, "same scope");
			CHECK(holds(&s, 0) == 0xc && holds(&s, 1) == 0xc, "as issued");
			break;
		default:
			CHECK(st.traps == 3 && st.hw_tlbi[SLAT_TS_VMALLE1IS] == 3 &&
			      st.hw_tlbi[SLAT_TS_VAE1IS] == 0, "each one VMALLE1IS");
			CHECK(holds(&s, 0) == 0 && holds(&s, 1) == 0, "all gone");
			break;
		}
		scene_fini(&s);
	}
}

/* The guest's own table changes issue the TLBIs Linux would, and no stale
 * translation is used afterwards. */
static void guest_table_changes_invalidate_what_they_change(void)
{
	struct scene s;
	struct slat_ts_stats st;

	scene_init(&s, SLAT_TS_PRECISE);
	scene_fill(&s);
	slat_ts_stats_reset(s.ts);
	slat_ts_set_current(s.ts, 0);
	/* munmap of one page: one VAE1IS with ASID 1 */
	REQUIRE(slat_ts_as_unmap(s.a, VX, PAGE) == SLAT_OK, "unmap");
	slat_ts_stats_read(s.ts, &st);
	CHECK(st.guest_tlbi[SLAT_TS_VAE1IS] == 1 && st.traps == 1, "one VAE1IS");
	CHECK(holds(&s, 0) == 0xe && holds(&s, 1) == 0xf, "only A's VX");
	CHECK(access(s.ts, 0, VX, SLAT_ACCESS_READ, true).fault ==
		      SLAT_FAULT_TRANSLATION, "unmapped page faults");
	/* copy-on-write: break-before-make issues VAE1IS */
	slat_ts_stats_reset(s.ts);
	REQUIRE(slat_ts_as_map(s.a, VY, PAGE, frame(s.ts), USER_RW) >= 0, "cow");
	slat_ts_stats_read(s.ts, &st);
	CHECK(st.guest_tlbi[SLAT_TS_VAE1IS] == 1, "BBM: %llu",
	      (unsigned long long)st.guest_tlbi[SLAT_TS_VAE1IS]);
	CHECK(!slat_ts_tlb_holds(s.ts, 0, 1, VY), "old page not held");
	/* fork: write-protect the parent, flush_tlb_mm */
	slat_ts_stats_reset(s.ts);
	access(s.ts, 0, VY, SLAT_ACCESS_WRITE, true);
	REQUIRE(slat_ts_as_wrprotect(s.a, 0, 1ull << 30) == SLAT_OK, "wp");
	slat_ts_stats_read(s.ts, &st);
	CHECK(st.guest_tlbi[SLAT_TS_ASIDE1IS] == 1, "ASIDE1IS");
	CHECK(access(s.ts, 0, VY, SLAT_ACCESS_WRITE, true).fault ==
		      SLAT_FAULT_PERMISSION, "write-protected");
	/* a large munmap becomes ASIDE1IS (more than 512 pages) */
	slat_ts_stats_reset(s.ts);
	REQUIRE(slat_ts_as_unmap(s.b, 0, 1024 * PAGE * 8) == SLAT_OK, "big unmap");
	slat_ts_stats_read(s.ts, &st);
	CHECK(st.guest_tlbi[SLAT_TS_ASIDE1IS] == 1 && st.guest_tlbi[SLAT_TS_VAE1IS] == 0,
	      "large range: ASIDE1IS");
	CHECK(holds(&s, 1) == 0xc, "B's entries gone: %#x", holds(&s, 1));
	scene_fini(&s);
}

/* ---- the workload ---- */

static void workload_events_are_the_same_under_every_policy(void)
{
	struct slat_ts_workload w;
	struct slat_ts_config cfg;
	struct slat_ts_cost cost;
	struct slat_ts_report r[SLAT_TS_POLICIES];

	slat_ts_workload_default(&w);
	slat_ts_config_default(&cfg);
	slat_ts_cost_default(&cost);
	w.nr_vcpus = 2;
	w.nr_procs = 4;
	w.accesses = 300000;
	w.spawn_rate = 200;  /* enough forks in a short run */
	w.munmap_rate = 2000;
	cfg.s2_tlb_entries = 64;
	for (int p = 0; p < SLAT_TS_POLICIES; p++) {
		cfg.policy = (enum slat_ts_policy)p;
		REQUIRE(slat_ts_workload_run(&w, &cfg, &cost, &r[p]) == SLAT_OK,
			"run %d", p);
	}
	CHECK(r[0].ev.spawns > 0 && r[0].ev.munmaps > 0 && r[0].ev.cows > 0 &&
	      r[0].ev.first_touch > 0, "events happen");
	for (int p = 1; p < SLAT_TS_POLICIES; p++) {
		CHECK(!memcmp(&r[p].ev, &r[0].ev, sizeof(r[0].ev)), "same events");
		CHECK(r[p].st.accesses == r[0].st.accesses, "same work");
		CHECK(!memcmp(r[p].st.guest_tlbi, r[0].st.guest_tlbi,
			      sizeof(r[0].st.guest_tlbi)), "same TLBIs issued");
	}
	uint64_t issued = 0;
	for (int k = 0; k < SLAT_TS_TLBI_KINDS; k++)
		issued += r[0].st.guest_tlbi[k];
	CHECK(issued > 0 && r[0].st.traps == 0, "untrapped: no traps");
	CHECK(r[1].st.traps == issued && r[2].st.traps == issued, "all trapped");
	CHECK(r[1].st.tlb_misses == r[0].st.tlb_misses, "precise: same misses");
	CHECK(r[2].st.tlb_misses > r[0].st.tlb_misses, "flush-all: more misses");
	CHECK(r[2].st.hw_tlbi[SLAT_TS_VMALLE1IS] == issued, "all VMALLE1IS");
	CHECK(r[0].guest_cycles < r[1].guest_cycles &&
	      r[1].guest_cycles < r[2].guest_cycles, "ordered costs");
	/* The same seed gives the same figures. */
	struct slat_ts_report again;
	cfg.policy = SLAT_TS_FLUSH_ALL;
	REQUIRE(slat_ts_workload_run(&w, &cfg, &cost, &again) == SLAT_OK, "again");
	CHECK(again.cycles == r[2].cycles && again.st.walk_refs == r[2].st.walk_refs,
	      "deterministic");
}

int main(void)
{
	RUN(two_stage_walks_agree_with_composed_reference);
	RUN(cold_walk_reads_24_descriptors);
	RUN(each_tlbi_removes_exactly_its_entries);
	RUN(policies_trap_and_widen_as_configured);
	RUN(guest_table_changes_invalidate_what_they_change);
	RUN(workload_events_are_the_same_under_every_policy);
	return check_failures ? 1 : 0;
}
