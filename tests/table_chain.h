/* SPDX-License-Identifier: MIT */
/*
 * For the encoding tests (after cmocka.h and fixture.h): map one page into
 * an empty table with a cache holding exactly the tables the walk needs, so
 * that the PA of each new table is known before the map, then check by hand
 * that every level's entry links the next table as the format says.
 */
#ifndef SLAT_TEST_TABLE_CHAIN_H
#define SLAT_TEST_TABLE_CHAIN_H

/* The descriptor that must link the table at @pa. */
typedef uint64_t (*table_link_fn)(struct fx *f, uint64_t pa, uint64_t arg);

static inline void check_table_chain(struct fx *f, uint64_t ipa,
				     uint64_t page_size, table_link_fn link,
				     uint64_t arg, const char *what)
{
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
}

#endif
