/* SPDX-License-Identifier: MIT */
/*
 * For the encoding tests (after cmocka.h and fixture.h): a leaf descriptor
 * worked out by hand, checked against what libslat writes, what it reports
 * and what the checker decodes (check_hand_leaf()); and the chain of table
 * entries above a page: map one page into an empty table with a cache
 * holding exactly the tables the walk needs, so that the PA of each new
 * table is known before the map, then check by hand that every level's
 * entry links the next table as the format says.
 */
#ifndef SLAT_TEST_TABLE_CHAIN_H
#define SLAT_TEST_TABLE_CHAIN_H

/* The descriptor that must link the table at @pa (of the table
 * f describes). */
typedef uint64_t (*table_link_fn)(struct fx *f, uint64_t pa, uint64_t arg);

static inline void check_table_chain(const struct slat_config *cfg,
				     uint64_t pa_base, uint64_t ipa,
				     uint64_t page_size, table_link_fn link,
				     uint64_t arg, const char *what)
{
	struct fx *f = malloc(sizeof(*f));
	print_message("  %s\n", what);
	assert_non_null(f);
	assert_int_equal(fx_init_cfg(f, cfg, pa_base), SLAT_OK);
	int levels = SLAT_LAST_LEVEL - f->t.geo.start_level;
	uint64_t pas[SLAT_LAST_LEVEL + 2];

	fx_topup(f, (uint32_t)levels);
	assert_int_equal(f->cache.nr, (uint32_t)levels);
	/* The core pops the top of the cache first. */
	for (int j = 0; j < levels; j++)
		pas[j] = fx_pa_of(f, f->cache.pages[levels - 1 - j]);
	assert_int_equal(slat_map(&f->t, slat_ipa(ipa), page_size,
				  slat_pa(0x40000000), SLAT_RW,
				  SLAT_OP(.cache = &f->cache)),
			 SLAT_OK);
	uint64_t *table = f->t.root;
	for (int j = 0, lvl = f->t.geo.start_level; j < levels; j++, lvl++) {
		unsigned shift = check_level_shift(&f->ck.geo, lvl);
		uint64_t idx = (ipa >> shift) &
			       (j == 0 ? f->t.geo.root_entries - 1
				       : f->t.geo.entries - 1);
		uint64_t want = link(f, pas[j], arg);
		if (table[idx] != want)
			fail_msg("%s level %d: %#018llx, expected %#018llx",
				 what, lvl, (unsigned long long)table[idx],
				 (unsigned long long)want);
		table = fx_table(f, pas[j]);
		assert_non_null(table);
	}
	if (checker_full(&f->ck, NULL))
		fail_msg("%s", f->ck.msg);
	fx_fini(f);
	free(f);
}

/* x86 (EPT, NPT): a table entry is the next table's PA and @bits. */
static inline uint64_t table_link_x86(struct fx *f, uint64_t pa,
				      uint64_t bits)
{
	(void)f;
	return pa | bits;
}

/*
 * A leaf worked out by hand: on a new table of @cfg (arena at 0x80000000),
 * the map of @size bytes at @ipa to @out with @attrs must write exactly
 * @pte at @level, the lookup must report the leaf with @attrs and @state
 * (SLAT_YOUNG, SLAT_DIRTY: what the format reports of a fresh leaf), the
 * checker's own decoder must read @pte the same, and the whole table must
 * pass the checker. CHECK_HAND_LEAF() takes a case whose fields have these
 * names.
 */
static inline void check_hand_leaf(const struct slat_config *cfg,
				   const char *what, uint64_t ipa,
				   uint64_t size, uint64_t out, uint32_t attrs,
				   int level, uint64_t pte, uint32_t state)
{
	struct fx *f = malloc(sizeof(*f));
	struct slat_leaf l;
	struct check_desc d;
	char why[256];

	print_message("  %s\n", what);
	assert_non_null(f);
	assert_int_equal(fx_init_cfg(f, cfg, 0x80000000), SLAT_OK);
	assert_int_equal(fx_map(f, ipa, size, out, attrs, 0), SLAT_OK);
	assert_int_equal(fx_lookup(f, ipa, &l), SLAT_OK);
	assert_int_equal(l.level, level);
	assert_int_equal(l.size, size);
	assert_int_equal(slat_pa_v(l.pa), out);
	assert_int_equal(l.attrs, attrs | state);
	if (l.pte != pte)
		fail_msg("%s: pte %#018llx, expected %#018llx", what,
			 (unsigned long long)l.pte, (unsigned long long)pte);
	assert_int_equal(check_format_for(cfg->format)->decode(
				 &f->ck.geo, &f->cfg, pte, level, &d, why,
				 sizeof(why)),
			 CHECK_DESC_LEAF);
	assert_int_equal(d.oa, out);
	assert_int_equal(d.attrs, attrs | state);
	if (checker_full(&f->ck, NULL))
		fail_msg("%s: %s", what, f->ck.msg);
	fx_fini(f);
	free(f);
}

/*
 * The access flag alone: on a new table of @cfg, a read-write page at IPA
 * 0x1000 -> PA 0x12345000 (written as @young) reads @old with @attrs after
 * test_clear_young, and @young again after mkyoung.
 */
static inline void check_mkold(const struct slat_config *cfg, uint64_t young,
			       uint64_t old, uint32_t attrs)
{
	struct fx *f = malloc(sizeof(*f));
	struct slat_leaf l;

	assert_non_null(f);
	assert_int_equal(fx_init_cfg(f, cfg, 0x80000000), SLAT_OK);
	assert_int_equal(fx_map(f, 0x1000, 0x1000, 0x12345000, SLAT_RW, 0),
			 SLAT_OK);
	assert_int_equal(fx_lookup(f, 0x1000, &l), SLAT_OK);
	assert_int_equal(l.pte, young);
	assert_int_equal(slat_test_clear_young(&f->t, slat_ipa(0x1000), 0x1000,
					       true, NULL),
			 SLAT_WAS_YOUNG);
	assert_int_equal(fx_lookup(f, 0x1000, &l), SLAT_OK);
	assert_int_equal(l.pte, old);
	assert_int_equal(l.attrs, attrs);
	assert_int_equal(slat_mkyoung(&f->t, slat_ipa(0x1234), 0), SLAT_OK);
	assert_int_equal(fx_lookup(f, 0x1000, &l), SLAT_OK);
	assert_int_equal(l.pte, young);
	fx_fini(f);
	free(f);
}

/*
 * An x86 nested walk (EPT, NPT) of @cfg: 4K pages, 9 bits a level, 2M and
 * 1G leaves and none above, a one-page root of @root_entries entries at
 * @start (-1: five levels), @pa_bits of PA, the same in the checker's
 * geometry, and a table named @name whose levels map 256T (PML5), 512G,
 * 1G, 2M and 4K.
 */
static inline void check_x86_walk_geometry(const struct slat_config *cfg,
					   int start, uint32_t root_entries,
					   uint8_t pa_bits, const char *name)
{
	struct slat_geometry g;
	struct check_geo e;
	struct fx *f = malloc(sizeof(*f));

	assert_int_equal(slat_config_geometry(cfg, &g), SLAT_OK);
	assert_int_equal(g.granule_shift, 12);
	assert_int_equal(g.bits_per_level, 9);
	assert_int_equal(g.start_level, start);
	assert_int_equal(g.root_pages, 1);
	assert_int_equal(g.root_entries, root_entries);
	assert_int_equal(g.entries, 512);
	assert_int_equal(g.ia_bits, cfg->ia_bits);
	assert_int_equal(g.pa_bits, pa_bits);
	assert_int_equal(g.leaf_levels, 0xe);

	assert_int_equal(check_format_for(cfg->format)->geometry(cfg, &e), 0);
	assert_int_equal(e.start_level, start);
	assert_int_equal(e.root_entries, root_entries);

	assert_non_null(f);
	assert_int_equal(fx_init_cfg(f, cfg, 0x80000000), SLAT_OK);
	assert_int_equal(slat_hosted_table_pages(&f->h), 1);
	if (start == -1)
		assert_int_equal(slat_level_size(&f->t, -1), 1ull << 48);
	assert_int_equal(slat_level_size(&f->t, 0), 1ull << 39);
	assert_int_equal(slat_level_size(&f->t, 1), 1ull << 30);
	assert_int_equal(slat_level_size(&f->t, 2), 1ull << 21);
	assert_int_equal(slat_level_size(&f->t, 3), 1ull << 12);
	assert_string_equal(slat_table_name(&f->t), name);
	if (checker_full(&f->ck, NULL))
		fail_msg("%s", f->ck.msg);
	fx_fini(f);
	free(f);
}

#define CHECK_HAND_LEAF(cfg, c, state)                                     \
	check_hand_leaf((cfg), (c)->what, (c)->ipa, (c)->size, (c)->out,    \
			(c)->attrs, (c)->level, (c)->pte, (state))

#endif
