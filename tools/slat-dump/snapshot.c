/* SPDX-License-Identifier: MIT */
/*
 * slat-dump: the raw image of a script's table (docs/raw-image.md), at the
 * end (--raw) or at any point of the script (snapshot FILE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "dump.h"
#include "raw_image.h"
#include "script.h"

/* Root pages first, in PA order, then the tables in walk order. */
static uint32_t image_pages(struct script *s, const struct dump_list *list,
			    const struct slat_geometry *geo,
			    struct raw_image_page *pages)
{
	const struct slat_table *t = &s->t;
	const struct slat_mm_ops *mm = slat_hosted_ops();
	uint32_t n = 0;

	for (uint32_t i = 0; i < geo->root_pages; i++) {
		/* libslat has no accessor for the root: read the fields. */
		pages[n].pa = slat_pa_v(dump_root_pa(t)) +
			      (uint64_t)i * s->cfg.granule;
		pages[n++].data = (const uint8_t *)t->root +
				  (size_t)i * s->cfg.granule;
	}
	for (size_t i = 0; i < list->n; i++) {
		if (!list->v[i].table)
			continue;
		pages[n].pa = list->v[i].out;
		pages[n++].data = mm->phys_to_virt(&s->h,
						   slat_pa(list->v[i].out));
	}
	return n;
}

static int write_file(const char *path, const struct raw_image_header *h,
		      const struct raw_image_page *pages, char *err,
		      size_t errlen)
{
	char why[256];
	FILE *f = fopen(path, "wb");
	int ret = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (raw_image_write(f, h, pages, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		ret = -1;
	}
	/* A write that failed at the last flush shows only here. */
	errno = 0;
	if ((fflush(f) != 0 || ferror(f)) && !ret) {
		snprintf(err, errlen, "%s: %s", path,
			 strerror(errno ? errno : EIO));
		ret = -1;
	}
	if (fclose(f) != 0 && !ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}

int script_write_raw(struct script *s, const char *path, uint32_t *records,
		     size_t *leaves, char *err, size_t errlen)
{
	struct dump_list list = { 0 };
	struct raw_image_header h;
	struct raw_image_page *pages;
	struct slat_geometry geo;
	int rc;

	slat_config_geometry(&s->cfg, &geo);
	rc = dump_collect(&s->t, slat_hosted_ops(), &s->h, true, &list);
	if (rc < 0) {
		snprintf(err, errlen, "slat_walk: %s (a libslat bug)",
			 slat_strerror(rc));
		dump_list_free(&list);
		return -1;
	}
	pages = calloc(geo.root_pages + list.n, sizeof(*pages));
	if (!pages) {
		snprintf(err, errlen, "%s: out of memory", path);
		dump_list_free(&list);
		return -1;
	}
	h = (struct raw_image_header){
		.version = RAW_IMAGE_VERSION,
		.format = s->cfg.format,
		.granule = s->cfg.granule,
		.ia_bits = geo.ia_bits,
		.pa_bits = geo.pa_bits,
		.start_level = geo.start_level,
		.root_pages = geo.root_pages,
		.features = s->cfg.features,
		.nr_pages = image_pages(s, &list, &geo, pages),
		.root_pa = slat_pa_v(dump_root_pa(&s->t)),
	};
	rc = write_file(path, &h, pages, err, errlen);
	if (records)
		*records = h.nr_pages;
	if (leaves)
		*leaves = dump_list_leaves(&list);
	free(pages);
	dump_list_free(&list);
	return rc;
}
