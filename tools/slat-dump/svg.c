/* SPDX-License-Identifier: MIT */
/*
 * slat-dump --map-svg: a picture of the IPA space.
 *
 * A linear scale cannot show a 4K page next to a 1T address space, so the
 * picture is a strip of boxes in IPA order that wraps like text: one box per
 * leaf, its width growing with log2 of its size, a hatched box for every
 * hole between leaves. Fill = permissions, bold frame = block, thin frame =
 * page; device and non-cacheable memory are overlaid with a pattern, old
 * leaves (access flag clear) are faded. Four or more leaves of one size in a
 * row with the same attributes are drawn as one run box with a tick per
 * leaf, so that 512 pages stay readable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"

#define SVG_W       1200
#define MARGIN      20
#define GAP         6
#define ROW_H       84
#define BOX_H       66
#define HOLE_H      40
#define RUN_MIN     4
#define STRIP_W     16
#define LEAF_MIN_W  116
#define PER_DOUBLE  13   /* pixels per doubling of the size */
#define FONT        "ui-monospace, 'DejaVu Sans Mono', Menlo, monospace"

enum item_kind { ITEM_LEAF, ITEM_RUN, ITEM_HOLE };

struct item {
	enum item_kind kind;
	uint64_t start, end;
	const struct dump_entry *e; /* first leaf (leaf, run) */
	size_t count;               /* leaves in a run */
	bool linear;                /* run: PA follows IPA */
	int x, y, w;
};

static unsigned log2u(uint64_t v)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

static bool same_run(const struct dump_entry *a, const struct dump_entry *b)
{
	return a->level == b->level && a->attrs == b->attrs &&
	       a->ipa + a->size == b->ipa;
}

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *perm_fill(uint32_t attrs)
{
	bool r = attrs & SLAT_R, w = attrs & SLAT_W, x = attrs & SLAT_X;

	if (r && w && x)
		return "#f2a65a"; /* rwx: orange */
	if (r && w)
		return "#7db4e6"; /* rw-: blue */
	if (r && x)
		return "#86c98a"; /* r-x: green */
	if (r)
		return "#ecd77c"; /* r--: yellow */
	if (w || x)
		return "#c7a3dd"; /* write or execute without read: lilac */
	return "#d4d4d4";         /* no access */
}

static const char *perm_legend[][2] = {
	{ "#7db4e6", "rw-" }, { "#f2a65a", "rwx" }, { "#86c98a", "r-x" },
	{ "#ecd77c", "r--" }, { "#c7a3dd", "-w-/--x/-wx" },
	{ "#d4d4d4", "---" },
};

static int item_width(const struct dump_info *info, const struct item *it)
{
	uint64_t g = info->granule;

	if (it->kind == ITEM_HOLE)
		return 64 + 5 * (int)log2u((it->end - it->start) / g);
	return LEAF_MIN_W + PER_DOUBLE * (int)log2u((it->end - it->start) / g);
}

static void layout(const struct dump_info *info, struct item *v, size_t n,
		   int top, int *height)
{
	int x = MARGIN, y = top;

	for (size_t i = 0; i < n; i++) {
		v[i].w = item_width(info, &v[i]);
		if (x + v[i].w > SVG_W - MARGIN && x > MARGIN) {
			x = MARGIN;
			y += ROW_H;
		}
		v[i].x = x;
		v[i].y = y;
		x += v[i].w + GAP;
	}
	*height = y + ROW_H;
}

static void text(FILE *f, int x, int y, const char *style, const char *s)
{
	fprintf(f, "<text x=\"%d\" y=\"%d\"%s>", x, y, style);
	esc(f, s);
	fputs("</text>\n", f);
}

/* 2M when exact, else three significant digits: ~16M, ~880M. */
static const char *approx_size(uint64_t bytes, char buf[32])
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	int u = -1;

	/* Exact when short ("2M", "124M"); "16368K" reads worse than "~16M". */
	dump_size(bytes, buf);
	if (bytes < 1024 || (buf[1] != 'x' && strlen(buf) <= 5))
		return buf;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, 32, "~%.*f%c", v < 10 ? 1 : 0, v, units[u]);
	return buf;
}

static void draw_hole(FILE *f, const struct item *it)
{
	char sz[32];
	int y = it->y + (BOX_H - HOLE_H) / 2;

	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
		"fill=\"url(#hole)\" stroke=\"#b5b5b5\" stroke-dasharray=\"4 3\"/>\n",
		it->x, y, it->w, HOLE_H);
	text(f, it->x + it->w / 2, y + 17,
	     " text-anchor=\"middle\" class=\"small\" fill=\"#666\"", "unmapped");
	text(f, it->x + it->w / 2, y + 31,
	     " text-anchor=\"middle\" class=\"small\" fill=\"#666\"",
	     approx_size(it->end - it->start, sz));
}

static void draw_leaf(FILE *f, const struct item *it)
{
	const struct dump_entry *e = it->e;
	bool block = e->level != 3;
	bool old = !(e->attrs & SLAT_YOUNG);
	uint32_t mt = SLAT_MT(e->attrs);
	char a[24], b[32], perms[8], line[96];
	int x = it->x, y = it->y, w = it->w;
	unsigned sw = (e->attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT;

	fprintf(f, "<g%s>\n", old ? " opacity=\"0.5\"" : "");
	fprintf(f, "<title>");
	dump_format_entry(e, false, line, sizeof(line));
	esc(f, line);
	if (it->kind == ITEM_RUN)
		fprintf(f, " (first of %zu)", it->count);
	fprintf(f, "</title>\n");
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\" "
		"fill=\"%s\"/>\n",
		x, y, w, BOX_H, block ? 2 : 5, perm_fill(e->attrs));
	/* Memory type: a patterned strip on the right, clear of the text. */
	if (mt == SLAT_MT_DEVICE || mt == SLAT_MT_NORMAL_NC)
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"fill=\"url(#%s)\"/>\n",
			x + w - STRIP_W, y + 18, STRIP_W - 1, BOX_H - 19,
			mt == SLAT_MT_DEVICE ? "device" : "nc");
	if (it->kind == ITEM_RUN) {
		/* One tick per leaf (at most 64, evenly spread). */
		size_t ticks = it->count < 64 ? it->count : 64;

		for (size_t i = 1; i < ticks; i++) {
			double tx = x + (double)w * (double)i / (double)ticks;

			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
				"y2=\"%d\" class=\"tick\"/>\n",
				tx, y + BOX_H - 9, tx, y + BOX_H);
		}
	}
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\" "
		"fill=\"none\" stroke=\"#1d2a38\" stroke-width=\"%s\"/>\n",
		x, y, w, BOX_H, block ? 2 : 5, block ? "2.5" : "1");

	/* Level badge, top right. */
	snprintf(line, sizeof(line), "L%d", e->level);
	text(f, x + w - 5, y + 13,
	     " text-anchor=\"end\" class=\"small\" fill=\"#1d2a38\"", line);
	text(f, x + 6, y + 14, " class=\"addr\"", dump_hex(e->ipa, a));
	if (it->kind == ITEM_RUN)
		snprintf(line, sizeof(line), "%zu \xc3\x97 %s %s", it->count,
			 dump_size(e->size, b), block ? "blocks" : "pages");
	else
		snprintf(line, sizeof(line), "%s %s", dump_size(e->size, b),
			 block ? "block" : "page");
	text(f, x + 6, y + 28, "", line);
	snprintf(line, sizeof(line), "%s %s%s%s%s", dump_perms(e->attrs, perms),
		 dump_memtype(e->attrs), (e->attrs & SLAT_USER) ? " user" : "",
		 (e->attrs & SLAT_NG) ? " ng" : "", old ? " old" : "");
	if (sw) {
		size_t n = strlen(line);

		snprintf(line + n, sizeof(line) - n, " sw=%u", sw);
	}
	text(f, x + 6, y + 42, "", line);
	snprintf(line, sizeof(line), "\xe2\x86\x92 %s%s", dump_hex(e->out, a),
		 it->kind == ITEM_RUN && !it->linear ? " \xe2\x80\xa6" : "");
	text(f, x + 6, y + 56, " class=\"small\"", line);
	fputs("</g>\n", f);
}

static void legend(FILE *f, int y)
{
	int x = MARGIN;
	size_t n = sizeof(perm_legend) / sizeof(perm_legend[0]);

	for (size_t i = 0; i < n; i++) {
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"14\" "
			"rx=\"2\" fill=\"%s\" stroke=\"#1d2a38\" "
			"stroke-width=\"0.8\"/>\n",
			x, y - 11, perm_legend[i][0]);
		text(f, x + 21, y, " class=\"small\"", perm_legend[i][1]);
		x += 36 + 7 * (int)strlen(perm_legend[i][1]);
	}
	x += 10;
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"14\" rx=\"2\" "
		"fill=\"#fff\" stroke=\"#1d2a38\" stroke-width=\"2.5\"/>\n",
		x, y - 11);
	text(f, x + 28, y, " class=\"small\"", "block");
	x += 74;
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"14\" rx=\"5\" "
		"fill=\"#fff\" stroke=\"#1d2a38\" stroke-width=\"1\"/>\n",
		x, y - 11);
	text(f, x + 28, y, " class=\"small\"", "page");
	x += 66;
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"14\" "
		"fill=\"url(#device)\" stroke=\"#1d2a38\" stroke-width=\"0.8\"/>\n",
		x, y - 11);
	text(f, x + 28, y, " class=\"small\"", "device");
	x += 80;
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"14\" "
		"fill=\"url(#nc)\" stroke=\"#1d2a38\" stroke-width=\"0.8\"/>\n",
		x, y - 11);
	text(f, x + 28, y, " class=\"small\"", "non-cacheable");
	x += 130;
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"14\" "
		"fill=\"#7db4e6\" opacity=\"0.5\" stroke=\"#1d2a38\"/>\n",
		x, y - 11);
	text(f, x + 28, y, " class=\"small\"", "old");
	x += 60;
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"22\" height=\"14\" "
		"fill=\"url(#hole)\" stroke=\"#b5b5b5\" "
		"stroke-dasharray=\"4 3\"/>\n", x, y - 11);
	text(f, x + 28, y, " class=\"small\"", "unmapped");
}

/*
 * fclose, and also report a write that failed before the last flush (it
 * leaves only the stream's error flag). Returns 0, or -1 with errno set.
 */
static int close_checked(FILE *f)
{
	int bad, saved;

	errno = 0;
	bad = fflush(f) != 0 || ferror(f);
	saved = errno ? errno : EIO;
	if (fclose(f) != 0 && !bad)
		return -1;
	if (bad)
		errno = saved;
	return bad ? -1 : 0;
}

/* The leaves of @l and the holes between them, in IPA order. */
static size_t collect_items(const struct dump_list *l, uint64_t end,
			    struct item *v, size_t *holes)
{
	uint64_t cursor = 0;
	size_t n = 0;

	for (size_t i = 0; i < l->n;) {
		const struct dump_entry *e = &l->v[i], *prev = e;
		size_t j = i + 1, count = 1;
		bool linear = true;

		if (e->table) {
			i++;
			continue;
		}
		if (e->ipa > cursor) {
			v[n++] = (struct item){ .kind = ITEM_HOLE,
						.start = cursor, .end = e->ipa };
			(*holes)++;
		}
		/* Gather a run of like leaves (table entries may interleave). */
		for (; j < l->n; j++) {
			if (l->v[j].table)
				continue;
			if (!same_run(prev, &l->v[j]))
				break;
			linear &= l->v[j].out == prev->out + prev->size;
			prev = &l->v[j];
			count++;
		}
		if (count < RUN_MIN) {
			j = i + 1;
			count = 1;
		}
		v[n] = (struct item){
			.kind = count > 1 ? ITEM_RUN : ITEM_LEAF,
			.start = e->ipa, .e = e, .count = count,
			.linear = linear,
		};
		/* The run ends where its last leaf does. */
		for (size_t k = j; k-- > i;)
			if (!l->v[k].table) {
				v[n].end = l->v[k].ipa + l->v[k].size;
				break;
			}
		cursor = v[n].end;
		n++;
		i = j;
	}
	if (cursor < end) {
		v[n++] = (struct item){ .kind = ITEM_HOLE, .start = cursor,
					.end = end };
		(*holes)++;
	}
	return n;
}

static void svg_head(FILE *f, int height)
{
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"%s\" "
		"font-size=\"11\" fill=\"#1d2a38\">\n",
		SVG_W, height, SVG_W, height, FONT);
	fputs("<defs>\n"
	      "<pattern id=\"hole\" width=\"8\" height=\"8\" "
	      "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
	      "<rect width=\"8\" height=\"8\" fill=\"#f4f4f4\"/>"
	      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#dcdcdc\" "
	      "stroke-width=\"3\"/></pattern>\n"
	      "<pattern id=\"device\" width=\"7\" height=\"7\" "
	      "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(-45)\">"
	      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"7\" stroke=\"#3b2a55\" "
	      "stroke-opacity=\"0.35\" stroke-width=\"2\"/></pattern>\n"
	      "<pattern id=\"nc\" width=\"6\" height=\"6\" "
	      "patternUnits=\"userSpaceOnUse\">"
	      "<circle cx=\"3\" cy=\"3\" r=\"1.1\" fill=\"#1d2a38\" "
	      "fill-opacity=\"0.6\"/></pattern>\n"
	      "</defs>\n"
	      "<style>.small{font-size:10px}.addr{font-weight:bold}"
	      ".title{font-size:15px;font-weight:bold}"
	      ".tick{stroke:#1d2a38;stroke-opacity:0.45;stroke-width:1}"
	      "</style>\n", f);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		SVG_W, height);
}

int dump_svg(const char *path, const struct dump_info *info,
	     const struct dump_list *l, const char *title)
{
	uint64_t end = 1ull << info->ia_bits;
	size_t n, leaves = dump_list_leaves(l), holes = 0;
	struct item *v = calloc(2 * leaves + 2, sizeof(*v));
	int height, top = 88;
	char sz[32], g[32], heading[512];
	FILE *f;

	if (!v)
		return -1;
	n = collect_items(l, end, v, &holes);
	layout(info, v, n, top, &height);
	height += 30;

	f = fopen(path, "w");
	if (!f) {
		int saved = errno;

		free(v);
		errno = saved;
		return -1;
	}
	svg_head(f, height);
	snprintf(heading, sizeof(heading),
		 "%s \xe2\x80\x94 %s, %s granule, %u-bit %s (%s), %zu lea%s",
		 title, dump_format_name(info->format),
		 dump_size(info->granule, g), info->ia_bits,
		 info->format == SLAT_FMT_ARM_S1 ? "VA" : "IPA",
		 dump_size(end, sz), leaves, leaves == 1 ? "f" : "ves");
	text(f, MARGIN, 30, " class=\"title\"", heading);
	text(f, MARGIN, 48, " class=\"small\" fill=\"#555\"",
	     "IPA order, left to right, wrapping; box width grows with "
	     "log2(size); hover a box for its exact entry");
	legend(f, 72);

	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == ITEM_HOLE)
			draw_hole(f, &v[i]);
		else
			draw_leaf(f, &v[i]);
	}
	snprintf(heading, sizeof(heading),
		 "%zu hole%s; %d or more like leaves in a row are drawn as one "
		 "box with a tick per leaf", holes, holes == 1 ? "" : "s",
		 RUN_MIN);
	text(f, MARGIN, height - 12, " class=\"small\" fill=\"#555\"", heading);
	fputs("</svg>\n", f);
	free(v);
	return close_checked(f);
}
