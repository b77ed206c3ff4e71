/* SPDX-License-Identifier: MIT */
/*
 * Raw table images (docs/raw-image.md): a 64-byte little-endian header, then
 * one record per table page, the page's bytes exactly as the hardware walker
 * reads them.
 *
 * The reader walks an image on its own: it decodes descriptors itself and
 * calls nothing in libslat, so a round trip through an image checks the
 * library's encoding against an independent decoder.
 */
#ifndef SLAT_RAW_IMAGE_H
#define SLAT_RAW_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RAW_IMAGE_MAGIC        "SLATIMG1"
#define RAW_IMAGE_VERSION      1
#define RAW_IMAGE_HEADER_BYTES 64
#define RAW_IMAGE_FMT_ARM_S2   1
#define RAW_IMAGE_FMT_EPT      2
#define RAW_IMAGE_FMT_ARM_S1   3
#define RAW_IMAGE_FMT_NPT      4

/* Failures of raw_image_read() and raw_image_walk(), for the exit status. */
#define RAW_IMAGE_BAD  (-1)    /* the image is wrong (the message says how) */
#define RAW_IMAGE_HOST (-2)    /* reading or memory failed */

struct raw_image_header {
	uint32_t version;    /* RAW_IMAGE_VERSION */
	uint32_t format;     /* RAW_IMAGE_FMT_* (= enum slat_format_id) */
	uint32_t granule;    /* bytes */
	uint8_t ia_bits;
	uint8_t pa_bits;
	int8_t start_level;
	uint8_t root_pages;  /* concatenated root pages, the first records */
	uint32_t features;   /* SLAT_FEAT_* */
	uint32_t nr_pages;   /* page records that follow, root pages included */
	uint64_t root_pa;
};

/* A page to write: @data holds granule bytes of descriptors in host order. */
struct raw_image_page {
	uint64_t pa;
	const void *data;
};

/* A loaded image. */
struct raw_image {
	struct raw_image_header h;
	uint64_t *pa;        /* [nr_pages], file order */
	uint64_t *desc;      /* [nr_pages * granule / 8], host order */
	uint32_t *by_pa;     /* record indexes sorted by PA */
};

/* One descriptor found by raw_image_walk(). */
struct raw_entry {
	uint64_t ipa, size;
	uint64_t out;        /* leaf: output PA; table: next table's PA */
	uint64_t pte;
	uint64_t table_pa;   /* PA of the page holding the descriptor */
	uint32_t index;      /* its index there */
	uint32_t attrs;      /* leaf: SLAT_R/W/X, SLAT_MT_*, SLAT_SW(n), SLAT_YOUNG,
				SLAT_DIRTY, SLAT_IPAT, SLAT_SVE, SLAT_USER,
				SLAT_NG */
	int level;
	bool table;
};

typedef void (*raw_image_visit_fn)(void *arg, const struct raw_entry *e);

/*
 * Write @h and @h->nr_pages records from @pages to @f.
 * Returns 0, or -1 with a message in @err.
 */
int raw_image_write(FILE *f, const struct raw_image_header *h,
		    const struct raw_image_page *pages, char *err,
		    size_t errlen);

/*
 * Read and check a whole image, as untrusted input: the record count is
 * bounded by the geometry, and memory grows with the records that arrive,
 * not with the count announced. Returns 0, or RAW_IMAGE_BAD or
 * RAW_IMAGE_HOST with a message in @err (nothing to free then).
 */
int raw_image_read(FILE *f, struct raw_image *img, char *err, size_t errlen);
void raw_image_free(struct raw_image *img);

/* The granule-sized page at @pa, or NULL. */
const uint64_t *raw_image_page(const struct raw_image *img, uint64_t pa);

/*
 * Walk the image from its root like the hardware walker: leaves in IPA
 * order (and table descriptors before their children with @tables).
 * Oddities the hardware would fault on (Arm: a block where the level allows
 * none, the reserved encoding at the last level; EPT: misconfigurations
 * and reserved bits) are reported to @warn and left out, and so are
 * records that no walk reaches. What a listing line cannot show (Arm stage
 * 1: hierarchical table controls, an AttrIndx libslat does not use) is
 * reported too, the entries listed. A table page that two entries point to is
 * refused, so a walk visits each entry of the image at most once. Returns
 * 0, or RAW_IMAGE_BAD (a table the image lacks or reaches twice, a format
 * it cannot walk) or RAW_IMAGE_HOST (out of memory) with a message in @err.
 */
int raw_image_walk(const struct raw_image *img, bool tables,
		   raw_image_visit_fn fn, void *arg, FILE *warn, char *err,
		   size_t errlen);

#endif
