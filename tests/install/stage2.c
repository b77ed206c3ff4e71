/* SPDX-License-Identifier: MIT */
/*
 * An installed slat's first user: an Armv8 stage-2 table on the hosted
 * platform, one 4 KiB page mapped, looked up and unmapped. Built by the
 * external projects in cmake-project/ (find_package) and make-project/
 * (pkg-config); exits 0 when everything did what the API says.
 */
#include <stdio.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#define IPA 0x40000000ull
#define PA 0x100000000ull

static int fail(const char *what, int status)
{
	fprintf(stderr, "stage2: %s: %s (%d)\n", what, slat_strerror(status),
		status);
	return 1;
}

int main(void)
{
	const struct slat_config cfg = {
		.format = SLAT_FMT_ARM_S2,
		.granule = 4096,
		.ia_bits = 40,
		.pa_bits = 40,
	};
	struct slat_hosted h;
	struct slat_table t;
	struct slat_page_cache cache;
	struct slat_leaf leaf;
	struct slat_op args = { .cache = &cache };
	int64_t need;
	const char *name;
	int rc;

	/* The headers and the library are of the same slat. */
	if (strcmp(slat_version(), SLAT_VERSION_STRING)) {
		fprintf(stderr, "stage2: headers of %s, library %s\n",
			SLAT_VERSION_STRING, slat_version());
		return 1;
	}
	rc = slat_hosted_init(&h, 16u << 20, 4096, 0x80000000ull);
	if (rc)
		return fail("slat_hosted_init", rc);
	rc = slat_table_init(&t, &cfg, slat_hosted_ops(), &h);
	if (rc)
		return fail("slat_table_init", rc);
	need = slat_pages_needed(&t, SLAT_NEED(.kind = SLAT_OP_MAP,
					       .ipa = slat_ipa(IPA), .size = 4096,
					       .pa = slat_pa(PA),
					       .attrs = SLAT_RW | SLAT_MT_NORMAL));
	if (need < 0)
		return fail("slat_pages_needed", (int)need);
	rc = slat_hosted_cache_init(&cache, (uint32_t)need);
	if (!rc)
		rc = slat_hosted_cache_topup(&h, &cache, (uint32_t)need);
	if (rc)
		return fail("page cache", rc);

	rc = slat_map(&t, slat_ipa(IPA), 4096, slat_pa(PA),
		      SLAT_RW | SLAT_MT_NORMAL, &args);
	if (rc != SLAT_OK || args.done != 4096)
		return fail("slat_map", rc);
	rc = slat_lookup(&t, slat_ipa(IPA + 0x123), &leaf);
	if (rc)
		return fail("slat_lookup", rc);
	if (slat_pa_v(leaf.pa) != PA + 0x123 || leaf.size != 4096 ||
	    leaf.level != SLAT_LAST_LEVEL || (leaf.attrs & SLAT_RW) != SLAT_RW) {
		fprintf(stderr, "stage2: lookup found pa 0x%llx size %llu level %d\n",
			(unsigned long long)slat_pa_v(leaf.pa),
			(unsigned long long)leaf.size, leaf.level);
		return 1;
	}
	rc = slat_unmap(&t, slat_ipa(IPA), 4096, &args);
	if (rc)
		return fail("slat_unmap", rc);
	rc = slat_lookup(&t, slat_ipa(IPA), &leaf);
	if (rc != SLAT_E_NOENT)
		return fail("slat_lookup after unmap", rc);

	name = slat_table_name(&t);
	slat_hosted_cache_fini(&cache);
	slat_table_destroy(&t);
	if (slat_hosted_table_pages(&h) || h.double_frees) {
		fprintf(stderr, "stage2: pages left in the arena\n");
		return 1;
	}
	slat_hosted_fini(&h);
	printf("stage2: %s table, 0x%llx -> 0x%llx mapped, looked up, unmapped "
	       "(slat %s)\n", name, IPA, PA, slat_version());
	return 0;
}
