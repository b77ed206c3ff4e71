/* SPDX-License-Identifier: MIT */
/*
 * Raw table images: writer, reader, and a walker of its own (it decodes
 * Armv8 stage-2 and stage-1 descriptors and Intel EPT entries from the
 * architectures' definitions, not through libslat).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <slat/slat.h>

#include "raw_image.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- little-endian fields ---- */

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static bool granule_ok(uint32_t g)
{
	return g == 4096 || g == 16384 || g == 65536;
}

/* ---- writer ---- */

int raw_image_write(FILE *f, const struct raw_image_header *h,
		    const struct raw_image_page *pages, char *err,
		    size_t errlen)
{
	uint8_t hdr[RAW_IMAGE_HEADER_BYTES] = { 0 };
	uint8_t *buf;

	if (!granule_ok(h->granule))
		return fail(err, errlen, "granule %" PRIu32 " is not 4K, 16K or 64K",
			    h->granule);
	memcpy(hdr, RAW_IMAGE_MAGIC, 8);
	put_le(hdr + 8, h->version, 4);
	put_le(hdr + 12, h->format, 4);
	put_le(hdr + 16, h->granule, 4);
	hdr[20] = h->ia_bits;
	hdr[21] = h->pa_bits;
	hdr[22] = (uint8_t)h->start_level;
	hdr[23] = h->root_pages;
	put_le(hdr + 24, h->features, 4);
	put_le(hdr + 28, h->nr_pages, 4);
	put_le(hdr + 32, h->root_pa, 8);
	if (fwrite(hdr, sizeof(hdr), 1, f) != 1)
		return fail(err, errlen, "write failed: %s", strerror(errno));

	buf = malloc(8 + (size_t)h->granule);
	if (!buf)
		return fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < h->nr_pages; i++) {
		const uint64_t *d = pages[i].data;

		put_le(buf, pages[i].pa, 8);
		for (uint32_t j = 0; j < h->granule / 8; j++)
			put_le(buf + 8 + 8 * (size_t)j, d[j], 8);
		if (fwrite(buf, 8 + (size_t)h->granule, 1, f) != 1) {
			free(buf);
			return fail(err, errlen, "write failed: %s",
				    strerror(errno));
		}
	}
	free(buf);
	return 0;
}

/* ---- reader ---- */

/* Reading or memory failed: not the image's fault (exit status 1). */
static int host_fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: %s", what, strerror(errno));
	return RAW_IMAGE_HOST;
}

static const struct raw_image *sort_img;

static int cmp_by_pa(const void *a, const void *b)
{
	uint64_t x = sort_img->pa[*(const uint32_t *)a];
	uint64_t y = sort_img->pa[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

void raw_image_free(struct raw_image *img)
{
	free(img->pa);
	free(img->desc);
	free(img->by_pa);
	memset(img, 0, sizeof(*img));
}

static int parse_header(const uint8_t *hdr, struct raw_image_header *h,
			char *err, size_t errlen)
{
	if (memcmp(hdr, RAW_IMAGE_MAGIC, 8) != 0)
		return fail(err, errlen,
			    "no \"" RAW_IMAGE_MAGIC "\" magic: not a slat raw image");
	h->version = (uint32_t)get_le(hdr + 8, 4);
	h->format = (uint32_t)get_le(hdr + 12, 4);
	h->granule = (uint32_t)get_le(hdr + 16, 4);
	h->ia_bits = hdr[20];
	h->pa_bits = hdr[21];
	h->start_level = (int8_t)hdr[22];
	h->root_pages = hdr[23];
	h->features = (uint32_t)get_le(hdr + 24, 4);
	h->nr_pages = (uint32_t)get_le(hdr + 28, 4);
	h->root_pa = get_le(hdr + 32, 8);

	if (h->version != RAW_IMAGE_VERSION)
		return fail(err, errlen, "version %" PRIu32 " (this reader knows %d)",
			    h->version, RAW_IMAGE_VERSION);
	if (h->format < RAW_IMAGE_FMT_ARM_S2 || h->format > RAW_IMAGE_FMT_NPT)
		return fail(err, errlen,
			    "unknown format %" PRIu32 " (this reader knows 1 "
			    "arm-s2, 2 ept, 3 arm-s1 and 4 npt)", h->format);
	if (!granule_ok(h->granule))
		return fail(err, errlen, "granule %" PRIu32 " is not 4K, 16K or 64K",
			    h->granule);
	if (h->ia_bits < 16 || h->ia_bits > 57 || h->pa_bits < 16 ||
	    h->pa_bits > 52)
		return fail(err, errlen, "ia_bits %u / pa_bits %u out of range",
			    h->ia_bits, h->pa_bits);
	if (h->start_level < -1 || h->start_level > 3)
		return fail(err, errlen, "start level %d out of range",
			    h->start_level);
	if (h->root_pages < 1 || h->root_pages > 16 ||
	    h->nr_pages < h->root_pages)
		return fail(err, errlen,
			    "%u root pages, %" PRIu32 " records: inconsistent",
			    h->root_pages, h->nr_pages);
	if (h->root_pa % ((uint64_t)h->granule * h->root_pages))
		return fail(err, errlen,
			    "root PA 0x%" PRIx64 " is not aligned to the root size",
			    h->root_pa);
	return 0;
}

static unsigned level_shift(unsigned gshift, int level)
{
	return (gshift - 3) * (unsigned)(4 - level) + 3;
}

/*
 * The number of root entries the header's geometry implies, or 0 with a
 * message: the walkers index the root pages with it, and the reader bounds
 * the record count with it.
 */
static uint64_t root_entries(const struct raw_image_header *h, char *err,
			     size_t errlen)
{
	unsigned gshift = (unsigned)__builtin_ctz(h->granule), start_shift;
	uint64_t entries;

	if (h->format == RAW_IMAGE_FMT_EPT || h->format == RAW_IMAGE_FMT_NPT) {
		/* 4 KiB tables; a 4-level walk (PML4 at level 0) resolves 48
		 * bits, a 5-level one (PML5 at -1) 57, or fewer; one root
		 * page */
		bool start_ok = h->start_level == -1 ||
				(h->start_level == 0 && h->ia_bits <= 48);

		if (h->granule != 4096 || h->root_pages != 1 || !start_ok ||
		    h->ia_bits < 32 || h->ia_bits > 57) {
			fail(err, errlen,
			     "an %s image needs 4K pages, one root page "
			     "and start level -1%s for a %u-bit IPA "
			     "(granule %" PRIu32 ", %u root pages, start "
			     "level %d)",
			     h->format == RAW_IMAGE_FMT_NPT ? "NPT" : "EPT",
			     h->ia_bits > 48 ? "" : " or 0", h->ia_bits,
			     h->granule, h->root_pages, h->start_level);
			return 0;
		}
		start_shift = level_shift(12, h->start_level);
		return h->ia_bits > start_shift
			       ? 1ull << (h->ia_bits - start_shift) : 1;
	}
	if (h->format == RAW_IMAGE_FMT_ARM_S1 && h->root_pages != 1) {
		fail(err, errlen,
		     "an arm-s1 image has one root page (stage 1 concatenates "
		     "none), not %u", h->root_pages);
		return 0;
	}
	start_shift = level_shift(gshift, h->start_level);
	/* level -1 only with 4K pages and FEAT_LPA2 (VTCR_EL2.SL2, TCR.DS) */
	if ((h->start_level < 0 &&
	     (gshift != 12 || !(h->features & SLAT_FEAT_LPA2))) ||
	    h->ia_bits <= start_shift ||
	    h->ia_bits > start_shift + (gshift - 3) + 4) {
		fail(err, errlen,
		     "start level %d cannot resolve a %u-bit IPA with "
		     "%u-byte pages", h->start_level, h->ia_bits, h->granule);
		return 0;
	}
	entries = 1ull << (h->ia_bits - start_shift);
	if (entries > (uint64_t)h->root_pages * (h->granule / 8) ||
	    entries <= (uint64_t)(h->root_pages - 1) * (h->granule / 8)) {
		fail(err, errlen,
		     "%" PRIu64 " root entries do not fill %u root pages",
		     entries, h->root_pages);
		return 0;
	}
	return entries;
}

/*
 * The most page records an image of this geometry can hold: the root pages,
 * then at most one table per entry of the level above (the last level
 * holds none), and no more than the PA space has pages.
 */
static uint64_t max_pages(const struct raw_image_header *h, uint64_t root)
{
	unsigned gshift = (unsigned)__builtin_ctz(h->granule);
	uint64_t pa_pages = 1ull << (h->pa_bits - gshift);
	uint64_t total = h->root_pages, entries = root;

	/* entries = 2^(ia - shift(level)) <= 2^57: no overflow */
	for (int level = h->start_level; level < 3; level++) {
		total += entries;
		entries <<= gshift - 3;
	}
	return total < pa_pages ? total : pa_pages;
}

/*
 * Compare the file's size with the header's count before reading: 1 when it
 * cannot be known (a pipe), 0 when it matches, else -1 with a message.
 */
static int check_size(FILE *f, const struct raw_image_header *h, char *err,
		      size_t errlen)
{
	long here = ftell(f), total;
	uint64_t want = (uint64_t)h->nr_pages * (8 + (uint64_t)h->granule);

	if (here < 0 || fseek(f, 0, SEEK_END) != 0 || (total = ftell(f)) < 0 ||
	    fseek(f, here, SEEK_SET) != 0) {
		clearerr(f);
		return 1;
	}
	if ((uint64_t)(total - here) != want)
		return fail(err, errlen,
			    "the header announces %" PRIu32 " records (%" PRIu64
			    " bytes after it), the file has %ld", h->nr_pages,
			    want, total - here);
	return 0;
}

/* Room for @n records: grown as records arrive when the size is unknown,
 * so that a header announcing more than the input holds costs nothing. */
static bool reserve(struct raw_image *img, uint32_t n)
{
	size_t words = img->h.granule / 8;
	uint64_t *pa = realloc(img->pa, n * sizeof(*pa));
	uint64_t *desc;

	if (!pa)
		return false;
	img->pa = pa;
	desc = realloc(img->desc, (size_t)n * words * sizeof(*desc));
	if (!desc)
		return false;
	img->desc = desc;
	return true;
}

/* Record @i: its PA (aligned, inside the PA space) and its descriptors. */
static int read_record(FILE *f, struct raw_image *img, uint32_t i,
		       uint8_t *page, char *err, size_t errlen)
{
	const struct raw_image_header *h = &img->h;
	size_t words = h->granule / 8;
	uint8_t pa8[8];
	uint64_t pa;

	if (fread(pa8, 8, 1, f) != 1 || fread(page, h->granule, 1, f) != 1) {
		if (ferror(f))
			return host_fail(err, errlen, "read failed");
		return fail(err, errlen,
			    "truncated in record %" PRIu32 " of the %" PRIu32
			    " the header announces", i, h->nr_pages);
	}
	pa = get_le(pa8, 8);
	if (pa % h->granule)
		return fail(err, errlen,
			    "record %" PRIu32 ": PA 0x%" PRIx64
			    " is not granule-aligned", i, pa);
	if (pa >> h->pa_bits)
		return fail(err, errlen,
			    "record %" PRIu32 ": PA 0x%" PRIx64 " is beyond the "
			    "%u-bit PA space", i, pa, h->pa_bits);
	img->pa[i] = pa;
	for (size_t j = 0; j < words; j++)
		img->desc[i * words + j] = get_le(page + 8 * j, 8);
	return 0;
}

/* Root records where the header says, and no PA twice. */
static int check_records(struct raw_image *img, char *err, size_t errlen)
{
	const struct raw_image_header *h = &img->h;

	for (uint32_t i = 0; i < h->root_pages; i++)
		if (img->pa[i] != h->root_pa + (uint64_t)i * h->granule)
			return fail(err, errlen,
				    "record %" PRIu32 " should be root page %"
				    PRIu32 " at 0x%" PRIx64, i, i,
				    h->root_pa + (uint64_t)i * h->granule);
	img->by_pa = malloc(h->nr_pages * sizeof(*img->by_pa));
	if (!img->by_pa)
		return host_fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < h->nr_pages; i++)
		img->by_pa[i] = i;
	sort_img = img;
	qsort(img->by_pa, h->nr_pages, sizeof(*img->by_pa), cmp_by_pa);
	sort_img = NULL;
	for (uint32_t i = 1; i < h->nr_pages; i++)
		if (img->pa[img->by_pa[i]] == img->pa[img->by_pa[i - 1]])
			return fail(err, errlen, "two records for PA 0x%" PRIx64,
				    img->pa[img->by_pa[i]]);
	return 0;
}

int raw_image_read(FILE *f, struct raw_image *img, char *err, size_t errlen)
{
	uint8_t hdr[RAW_IMAGE_HEADER_BYTES], *page = NULL;
	struct raw_image_header *h = &img->h;
	uint64_t root, most;
	uint32_t cap;
	int ret;

	memset(img, 0, sizeof(*img));
	if (fread(hdr, sizeof(hdr), 1, f) != 1) {
		if (ferror(f))
			return host_fail(err, errlen, "read failed");
		return fail(err, errlen, "shorter than the %d-byte header",
			    RAW_IMAGE_HEADER_BYTES);
	}
	if (parse_header(hdr, h, err, errlen) < 0)
		return RAW_IMAGE_BAD;
	root = root_entries(h, err, errlen);
	if (!root)
		return RAW_IMAGE_BAD;
	/* A count no table of this shape can reach is the input's fault. */
	most = max_pages(h, root);
	if (h->nr_pages > most)
		return fail(err, errlen,
			    "the header announces %" PRIu32 " records; a table "
			    "of this geometry (%u-bit IPA, %u-bit PA, %" PRIu32
			    "-byte pages) has at most %" PRIu64 " pages",
			    h->nr_pages, h->ia_bits, h->pa_bits, h->granule,
			    most);
	ret = check_size(f, h, err, errlen);
	if (ret < 0)
		return RAW_IMAGE_BAD;
	/* The size is known: all at once; a pipe: as records arrive. */
	cap = ret == 0 || h->nr_pages < 64 ? h->nr_pages : 64;
	ret = 0;
	page = malloc(h->granule);
	if (!page || !reserve(img, cap)) {
		ret = host_fail(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < h->nr_pages; i++) {
		if (i == cap) {
			cap = cap > h->nr_pages / 2 ? h->nr_pages : 2 * cap;
			if (!reserve(img, cap)) {
				ret = host_fail(err, errlen, "out of memory");
				goto out;
			}
		}
		ret = read_record(f, img, i, page, err, errlen);
		if (ret < 0)
			goto out;
	}
	if (fgetc(f) != EOF) {
		ret = fail(err, errlen, "trailing bytes after the last record");
		goto out;
	}
	if (ferror(f)) {
		ret = host_fail(err, errlen, "read failed");
		goto out;
	}
	ret = check_records(img, err, errlen);
out:
	free(page);
	if (ret < 0)
		raw_image_free(img);
	return ret;
}

static int64_t find_record(const struct raw_image *img, uint64_t pa)
{
	size_t lo = 0, hi = img->h.nr_pages;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = img->pa[img->by_pa[mid]];

		if (v == pa)
			return img->by_pa[mid];
		if (v < pa)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const uint64_t *raw_image_page(const struct raw_image *img, uint64_t pa)
{
	int64_t r = find_record(img, pa);

	return r < 0 ? NULL : img->desc + (size_t)r * (img->h.granule / 8);
}

/* ---- the independent Armv8 stage-2 walker ---- */

struct walk {
	const struct raw_image *img;
	bool tables;
	raw_image_visit_fn fn;
	void *arg;
	FILE *warn;
	char *err;
	size_t errlen;
	unsigned gshift;
	struct parent *parent; /* per record: the entry that points to it */
	uint64_t budget;       /* entries the image holds, not yet visited */
};

struct parent {
	uint64_t table_pa;
	uint32_t index;
	bool set;
};

/*
 * The record of the table that entry @e points to (at @next), or -1 with a
 * message: a page the image lacks, the root, or a page that another entry
 * already points to. A table page has one parent; followed twice, four
 * pages pointing 512 times to the next could list 512^4 leaves.
 */
static int64_t enter_table(struct walk *w, const struct raw_entry *e,
			   uint64_t next)
{
	int64_t r = find_record(w->img, next);
	struct parent *p;

	if (r < 0)
		return fail(w->err, w->errlen,
			    "0x%016" PRIx64 "[%u] = 0x%016" PRIx64
			    " points to a table at 0x%" PRIx64
			    " that the image does not hold",
			    e->table_pa, e->index, e->pte, next);
	if (r < w->img->h.root_pages)
		return fail(w->err, w->errlen,
			    "0x%016" PRIx64 "[%u] points back to the root",
			    e->table_pa, e->index);
	p = &w->parent[r];
	if (p->set)
		return fail(w->err, w->errlen,
			    "table page 0x%" PRIx64 " is reached twice: from "
			    "0x%016" PRIx64 "[%u] and from 0x%016" PRIx64 "[%u] "
			    "(a table page has one parent entry)",
			    next, p->table_pa, p->index, e->table_pa, e->index);
	*p = (struct parent){ .table_pa = e->table_pa, .index = e->index,
			      .set = true };
	return r;
}

/* A walk visits each entry of the image at most once. */
static int spend(struct walk *w, uint64_t entries)
{
	if (entries > w->budget)
		return fail(w->err, w->errlen,
			    "the walk visits more entries than the image holds "
			    "(a reader bug)");
	w->budget -= entries;
	return 0;
}

static bool arm_ds(const struct walk *w)
{
	return (w->img->h.features & SLAT_FEAT_LPA2) != 0;
}

/* Levels where the architecture allows a block descriptor; FEAT_LPA2
 * (DS = 1) adds level 0 with 4K and level 1 with 16K. */
static bool arm_block_allowed(const struct walk *w, int level)
{
	switch (w->gshift) {
	case 12:
		return level == 1 || level == 2 || (level == 0 && arm_ds(w));
	case 14:
		return level == 2 || (level == 1 && arm_ds(w));
	default: /* 64K; L1 only with 52-bit output addresses */
		return level == 2 || (level == 1 && w->img->h.pa_bits == 52);
	}
}

/* Output address bits [47:g]; with 64K, bits [15:12] hold PA[51:48]; with
 * DS = 1 (4K, 16K), bits [49:g] and PA[51:50] in bits [9:8]. */
static uint64_t arm_oa(const struct walk *w, uint64_t pte)
{
	unsigned top = arm_ds(w) ? 50 : 48;
	uint64_t pa = pte & (((1ull << top) - 1) & ~((1ull << w->gshift) - 1));

	if (arm_ds(w))
		pa |= ((pte >> 8) & 3) << 50;
	else if (w->gshift == 16)
		pa |= ((pte >> 12) & 0xf) << 48;
	return pa;
}

static uint32_t arm_attrs(const struct walk *w, uint64_t pte)
{
	bool fwb = w->img->h.features & SLAT_FEAT_FWB;
	bool xnx = w->img->h.features & SLAT_FEAT_XNX;
	unsigned memattr = (pte >> 2) & 0xf;
	unsigned xn = (pte >> 53) & 3;
	uint32_t a = 0;

	bool hd = w->img->h.features & SLAT_FEAT_HWDIRTY;
	bool dbm = hd && (pte & (1ull << 51));

	if (pte & (1ull << 6))
		a |= SLAT_R;
	/* with hardware dirty state, DBM = writable (S2AP.W = dirty) */
	if ((pte & (1ull << 7)) || dbm)
		a |= SLAT_W;
	if ((pte & (1ull << 7)) && dbm)
		a |= SLAT_DIRTY;
	if (memattr == (fwb ? 0x6u : 0xfu))
		a |= SLAT_MT_NORMAL;
	else if (memattr == 0x5)
		a |= SLAT_MT_NORMAL_NC;
	else if (memattr == 0x1)
		a |= SLAT_MT_DEVICE;
	else
		a |= SLAT_MT_MASK; /* an encoding libslat does not write */
	if (xnx) {
		static const uint32_t x[4] = { SLAT_X, SLAT_XU, 0, SLAT_XK };

		a |= x[xn];
	} else if (!(xn & 2)) {
		a |= SLAT_X;
	}
	if (pte & (1ull << 10))
		a |= SLAT_YOUNG;
	a |= SLAT_SW((pte >> 55) & 0xf);
	return a;
}

/* MAIR_EL1 as libslat's stage 1 assumes it (docs/design.md). */
static uint32_t s1_memtype(uint64_t pte)
{
	switch ((pte >> 2) & 7) {
	case 0: return SLAT_MT_NORMAL;    /* 0xff */
	case 1: return SLAT_MT_DEVICE;    /* 0x04, Device-nGnRE */
	case 2: return SLAT_MT_NORMAL_NC; /* 0x44 */
	default: return SLAT_MT_MASK;     /* an index libslat does not use */
	}
}

/*
 * A stage-1 leaf (D8.4 of the Arm ARM): AP[2:1] in bits 7:6 (AP[2]
 * read-only, AP[1] EL0 access), PXN 53, UXN 54, nG 11. EL1 can always
 * read; memory EL0 can write is never executable at EL1.
 */
static uint32_t s1_attrs(const struct walk *w, uint64_t pte)
{
	bool hd = w->img->h.features & SLAT_FEAT_HWDIRTY;
	bool ro = pte & (1ull << 7), user = pte & (1ull << 6);
	bool dbm = hd && (pte & (1ull << 51));
	uint32_t a = SLAT_R | s1_memtype(pte);

	if (!ro || dbm)
		a |= SLAT_W;
	if (!ro && dbm)
		a |= SLAT_DIRTY;
	if (!(pte & (1ull << 53)) && !(user && !ro))
		a |= SLAT_XK;
	if (!(pte & (1ull << 54)))
		a |= SLAT_XU;
	if (user)
		a |= SLAT_USER;
	if (pte & (1ull << 11))
		a |= SLAT_NG;
	if (pte & (1ull << 10))
		a |= SLAT_YOUNG;
	a |= SLAT_SW((pte >> 55) & 0xf);
	return a;
}

static void arm_warn(const struct walk *w, const struct raw_entry *e,
		     const char *what)
{
	if (w->warn)
		fprintf(w->warn,
			"warning: 0x%016" PRIx64 "[%u]: 0x%016" PRIx64 " %s\n",
			e->table_pa, e->index, e->pte, what);
}

/* A leaf's attributes, and what the listing cannot show of it. */
static uint32_t arm_leaf(const struct walk *w, const struct raw_entry *e)
{
	if (w->img->h.format != RAW_IMAGE_FMT_ARM_S1)
		return arm_attrs(w, e->pte);
	if (s1_memtype(e->pte) == SLAT_MT_MASK)
		arm_warn(w, e, "has an AttrIndx other than 0, 1 or 2, which "
			 "the MAIR_EL1 layout of libslat's stage 1 does not "
			 "define (listed as mt3)");
	return s1_attrs(w, e->pte);
}

/* Stage 1's hierarchical controls, which libslat never sets. */
static void s1_table_check(const struct walk *w, const struct raw_entry *e)
{
	if (w->img->h.format == RAW_IMAGE_FMT_ARM_S1 && (e->pte >> 59))
		arm_warn(w, e, "sets NSTable, APTable, UXNTable or PXNTable "
			 "(bits 63:59), which libslat never writes; the "
			 "leaves below are listed without them");
}

static int walk_arm(struct walk *w, const uint64_t *const *pages,
		    const uint64_t *page_pa, uint64_t nr, int level,
		    uint64_t base)
{
	uint64_t epp = w->img->h.granule / 8;
	unsigned shift = level_shift(w->gshift, level);

	if (spend(w, nr) < 0)
		return -1;
	for (uint64_t i = 0; i < nr; i++) {
		const uint64_t pte = pages[i / epp][i % epp];
		struct raw_entry e = {
			.ipa = base + (i << shift),
			.size = 1ull << shift,
			.pte = pte,
			.table_pa = page_pa[i / epp],
			.index = (uint32_t)(i % epp),
			.level = level,
		};

		if (!(pte & 1))
			continue; /* invalid: the other bits are the software's */
		if (level == SLAT_LAST_LEVEL) {
			if (!(pte & 2)) {
				arm_warn(w, &e, "uses the reserved last-level "
					 "encoding 0b01 (the hardware faults)");
				continue;
			}
		} else if (!(pte & 2)) {
			if (!arm_block_allowed(w, level)) {
				char what[96];

				snprintf(what, sizeof(what),
					 "is a block at L%d, where this granule "
					 "allows none (the hardware faults)",
					 level);
				arm_warn(w, &e, what);
				continue;
			}
		} else {
			uint64_t next = arm_oa(w, pte);
			int64_t r = enter_table(w, &e, next);
			const uint64_t *child;

			if (r < 0)
				return -1;
			e.table = true;
			e.out = next;
			s1_table_check(w, &e);
			if (w->tables)
				w->fn(w->arg, &e);
			child = w->img->desc + (size_t)r * epp;
			if (walk_arm(w, &child, &next, epp, level + 1, e.ipa) < 0)
				return -1;
			continue;
		}
		/* A leaf: its output address is aligned to its size. */
		e.out = arm_oa(w, pte) & ~(e.size - 1);
		e.attrs = arm_leaf(w, &e);
		w->fn(w->arg, &e);
	}
	return 0;
}

/* ---- the independent Intel EPT walker ---- */

#define EPT_R (1ull << 0)
#define EPT_W (1ull << 1)
#define EPT_X (1ull << 2)
#define EPT_PS (1ull << 7)
#define EPT_PA (((1ull << 52) - 1) & ~0xfffull)

static void ept_warn(const struct walk *w, const struct raw_entry *e,
		     const char *what)
{
	if (w->warn)
		fprintf(w->warn,
			"warning: 0x%016" PRIx64 "[%u]: 0x%016" PRIx64
			" %s at L%d\n", e->table_pa, e->index, e->pte, what,
			e->level);
}

/*
 * What the CPU calls an EPT misconfiguration (or a reserved bit) in a
 * present entry; NULL if there is none. Intel SDM, "EPT Misconfigurations".
 */
static const char *ept_misconfig(const struct walk *w, uint64_t pte,
				 int level, bool leaf)
{
	uint32_t f = w->img->h.features;

	if ((pte & EPT_W) && !(pte & EPT_R))
		return "is write without read (an EPT misconfiguration)";
	if ((pte & EPT_X) && !(pte & EPT_R) && !(f & SLAT_FEAT_EPT_XONLY))
		return "is execute-only on a CPU without it (an EPT "
		       "misconfiguration)";
	if ((pte & EPT_PA) >> w->img->h.pa_bits)
		return "has address bits at or above pa_bits set (reserved)";
	if (!leaf) {
		if (pte & (0x1full << 3))
			return level <= 0 && (pte & EPT_PS)
				       ? "has bit 7 set in a PML4/PML5 entry "
					 "(reserved)"
				       : "has bits 7:3 set in a non-leaf entry "
					 "(reserved)";
		return NULL;
	}
	switch ((pte >> 3) & 7) {
	case 2:
	case 3:
	case 7:
		return "has memory type 2, 3 or 7 (an EPT misconfiguration)";
	}
	if (pte & (((1ull << (9 * (3 - level) + 12)) - 1) & ~0xfffull))
		return "has address bits below the page size set (reserved)";
	return NULL;
}

static uint32_t ept_attrs(const struct walk *w, uint64_t pte)
{
	uint32_t f = w->img->h.features, a = 0;

	if (pte & EPT_R)
		a |= SLAT_R;
	if (pte & EPT_W)
		a |= SLAT_W;
	if (f & SLAT_FEAT_EPT_MBEC) {
		if (pte & EPT_X)
			a |= SLAT_XK;      /* supervisor execute */
		if (pte & (1ull << 10))
			a |= SLAT_XU;      /* user execute */
	} else if (pte & EPT_X) {
		a |= SLAT_X;
	}
	switch ((pte >> 3) & 7) {
	case 6: a |= SLAT_MT_NORMAL; break;    /* WB */
	case 1: a |= SLAT_MT_NORMAL_NC; break; /* WC */
	case 0: a |= SLAT_MT_DEVICE; break;    /* UC */
	default: a |= SLAT_MT_MASK; break;     /* WT, WP: not libslat's */
	}
	if (pte & (1ull << 6))
		a |= SLAT_IPAT;
	if (pte & (1ull << 63))
		a |= SLAT_SVE;
	if (pte & (1ull << 8))
		a |= SLAT_YOUNG;
	if ((f & SLAT_FEAT_HWDIRTY) && (pte & (1ull << 9)))
		a |= SLAT_DIRTY;
	a |= SLAT_SW((pte >> 52) & 0xf);
	return a;
}

/* ---- the independent AMD nested page table walker ---- */

#define NPT_P (1ull << 0)
#define NPT_RW (1ull << 1)
#define NPT_US (1ull << 2)
#define NPT_PWT (1ull << 3)
#define NPT_PCD (1ull << 4)

/*
 * What the APM reserves (or makes a fault on every access) in a present
 * nested entry; NULL if nothing. AMD APM vol. 2, "Long-Mode Page
 * Translation" (the entry figures) and "Nested Table Walk".
 */
static const char *npt_reserved(const struct walk *w, uint64_t pte, int level,
				bool leaf)
{
	if ((pte & EPT_PA) >> w->img->h.pa_bits)
		return "has address bits at or above pa_bits set (reserved)";
	if (!(pte & NPT_US))
		return "has U/S clear: every nested access is a user access, "
		       "so every access through it faults";
	if (!leaf)
		return level <= 0 && (pte & EPT_PS)
			       ? "has bit 7 set in a PML4/PML5 entry (reserved)"
			       : NULL;
	/* bit 12 is the PAT bit of a large page, not an address bit */
	if (level < SLAT_LAST_LEVEL &&
	    (pte & (((1ull << (9 * (3 - level) + 12)) - 1) & ~0x1fffull)))
		return "has address bits below the page size set (reserved)";
	return NULL;
}

/* The host PAT index (PAT:PCD:PWT) as libslat's memory types: 0 WB, 1 WC,
 * 3 UC with Linux's PAT; anything else is not libslat's. */
static uint32_t npt_attrs(int level, uint64_t pte)
{
	uint64_t pat = level == SLAT_LAST_LEVEL ? (pte >> 7) & 1
						: (pte >> 12) & 1;
	uint32_t a = SLAT_R;

	if (pte & NPT_RW)
		a |= SLAT_W;
	if (!(pte >> 63))
		a |= SLAT_X;
	switch (pat << 2 | (pte & (NPT_PCD | NPT_PWT)) >> 3) {
	case 0: a |= SLAT_MT_NORMAL; break;
	case 1: a |= SLAT_MT_NORMAL_NC; break;
	case 3: a |= SLAT_MT_DEVICE; break;
	default: a |= SLAT_MT_MASK; break;
	}
	if (pte & (1ull << 5))
		a |= SLAT_YOUNG;
	if (pte & (1ull << 6))
		a |= SLAT_DIRTY;
	a |= SLAT_SW((pte >> 52) & 0xf);
	return a;
}

/* The two x86 formats differ in what makes an entry present, what is
 * reserved and what the bits of a leaf mean; the walk is the same. */
static bool x86_present(const struct walk *w, uint64_t pte)
{
	if (w->img->h.format == RAW_IMAGE_FMT_NPT)
		return pte & NPT_P;
	return pte & (EPT_R | EPT_W | EPT_X);
}

static const char *x86_bad(const struct walk *w, uint64_t pte, int level,
			   bool leaf)
{
	if (w->img->h.format == RAW_IMAGE_FMT_NPT)
		return npt_reserved(w, pte, level, leaf);
	return ept_misconfig(w, pte, level, leaf);
}

static uint32_t x86_attrs(const struct walk *w, uint64_t pte, int level)
{
	if (w->img->h.format == RAW_IMAGE_FMT_NPT)
		return npt_attrs(level, pte);
	return ept_attrs(w, pte);
}

/* An EPT or NPT table page: PS makes a page at the PD and PDPT. */
static int walk_ept(struct walk *w, const uint64_t *page, uint64_t page_pa,
		    uint64_t nr, int level, uint64_t base)
{
	unsigned shift = level_shift(12, level);
	bool npt = w->img->h.format == RAW_IMAGE_FMT_NPT;

	if (spend(w, nr) < 0)
		return -1;
	for (uint64_t i = 0; i < nr; i++) {
		const uint64_t pte = page[i];
		struct raw_entry e = {
			.ipa = base + (i << shift),
			.size = 1ull << shift,
			.pte = pte,
			.table_pa = page_pa,
			.index = (uint32_t)i,
			.level = level,
		};
		/* PS makes a page at the PD and PDPT; the PT holds pages */
		bool leaf = level == SLAT_LAST_LEVEL ||
			    ((pte & EPT_PS) && (level == 1 || level == 2));
		const char *bad;

		if (!x86_present(w, pte))
			continue; /* not present: the other bits are ignored */
		bad = x86_bad(w, pte, level, leaf);
		if (bad) {
			ept_warn(w, &e, bad);
			continue;
		}
		if (!leaf) {
			uint64_t next = pte & EPT_PA;
			int64_t r = enter_table(w, &e, next);

			if (r < 0)
				return -1;
			e.table = true;
			e.out = next;
			if (w->tables)
				w->fn(w->arg, &e);
			if (walk_ept(w, w->img->desc + (size_t)r * 512, next,
				     512, level + 1, e.ipa) < 0)
				return -1;
			continue;
		}
		e.out = pte & EPT_PA & ~(e.size - 1);
		e.attrs = x86_attrs(w, pte, level);
		if (SLAT_MT(e.attrs) == SLAT_MT_MASK)
			ept_warn(w, &e, npt ? "selects a host PAT entry other "
					      "than 0, 1 or 3, which libslat "
					      "does not write"
					    : "has memory type WT or WP, which "
					      "libslat does not write");
		w->fn(w->arg, &e);
	}
	return 0;
}

int raw_image_walk(const struct raw_image *img, bool tables,
		   raw_image_visit_fn fn, void *arg, FILE *warn, char *err,
		   size_t errlen)
{
	const struct raw_image_header *h = &img->h;
	struct walk w = {
		.img = img, .tables = tables, .fn = fn, .arg = arg,
		.warn = warn, .err = err, .errlen = errlen,
		.gshift = (unsigned)__builtin_ctz(h->granule),
		.budget = (uint64_t)h->nr_pages * (h->granule / 8),
	};
	const uint64_t *root[16];
	uint64_t root_pa[16], entries = root_entries(h, err, errlen);
	int ret;

	if (!entries)
		return RAW_IMAGE_BAD;
	w.parent = calloc(h->nr_pages, sizeof(*w.parent));
	if (!w.parent)
		return host_fail(err, errlen, "out of memory");
	if (h->format == RAW_IMAGE_FMT_EPT || h->format == RAW_IMAGE_FMT_NPT) {
		ret = walk_ept(&w, img->desc, img->pa[0], entries,
			       h->start_level, 0);
	} else {
		for (unsigned i = 0; i < h->root_pages; i++) {
			root[i] = img->desc + (size_t)i * (h->granule / 8);
			root_pa[i] = img->pa[i];
		}
		ret = walk_arm(&w, root, root_pa, entries, h->start_level, 0);
	}
	if (ret == 0 && warn) {
		for (uint32_t i = h->root_pages; i < h->nr_pages; i++)
			if (!w.parent[i].set)
				fprintf(warn,
					"warning: record %" PRIu32 " (PA 0x%" PRIx64
					") is not reachable from the root\n",
					i, img->pa[i]);
	}
	free(w.parent);
	return ret;
}
