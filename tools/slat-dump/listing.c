/* SPDX-License-Identifier: MIT */
/*
 * slat-dump: collecting the leaves of a live table through the libslat
 * walker, and printing entries as text.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slat/walk.h>

#include "dump.h"

void dump_list_push(struct dump_list *l, const struct dump_entry *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct dump_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "slat-dump: out of memory\n");
			exit(1);
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
}

void dump_list_free(struct dump_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

size_t dump_list_leaves(const struct dump_list *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += !l->v[i].table;
	return n;
}

/* ---- collecting from a live table ---- */

struct collect {
	struct dump_list *out;
	const struct slat_mm_ops *mm;
	void *mm_ctx;
	uint64_t granule;
};

static int collect_visitor(const struct slat_walk_ctx *ctx,
			   enum slat_visit visit)
{
	struct collect *c = ctx->arg;
	struct slat_table *t = ctx->t;
	uintptr_t page_mask = (uintptr_t)c->granule - 1;
	void *page = (void *)((uintptr_t)ctx->ptep & ~page_mask);
	struct dump_entry e = {
		.ipa = ctx->addr,
		.size = slat_level_size(t, ctx->level),
		.pte = ctx->old,
		.table_pa = slat_pa_v(c->mm->virt_to_phys(c->mm_ctx, page)),
		.index = (uint32_t)(((uintptr_t)ctx->ptep & page_mask) /
				    sizeof(slat_pte_t)),
		.level = ctx->level,
	};

	if (visit == SLAT_VISIT_TABLE_PRE) {
		void *next = slat_pte_table(t, ctx->old);

		e.table = true;
		e.out = slat_pa_v(c->mm->virt_to_phys(c->mm_ctx, next));
		dump_list_push(c->out, &e);
		return 0;
	}
	if (!slat_pte_is_leaf(t, ctx->old, ctx->level))
		return 0; /* an invalid entry */
	e.out = slat_pa_v(slat_pte_pa(t, ctx->old, ctx->level));
	e.attrs = slat_pte_attrs(t, ctx->old, ctx->level);
	dump_list_push(c->out, &e);
	return 0;
}

int dump_collect(struct slat_table *t, const struct slat_mm_ops *mm,
		 void *mm_ctx, bool tables, struct dump_list *out)
{
	struct slat_geometry geo;
	struct collect c = {
		.out = out, .mm = mm, .mm_ctx = mm_ctx,
		.granule = slat_level_size(t, SLAT_LAST_LEVEL),
	};
	struct slat_walker w = {
		.cb = collect_visitor,
		.arg = &c,
		.flags = SLAT_VISIT_LEAF | (tables ? SLAT_VISIT_TABLE_PRE : 0),
		.stop_level = SLAT_LAST_LEVEL,
	};
	/* The walk's own counters stay out of the table's (--stats). */
	struct slat_stats scratch = { 0 };

	int rc = slat_config_geometry(slat_table_config(t), &geo);

	if (rc < 0)
		return rc;
	return slat_walk(t, slat_ipa(0), 1ull << geo.ia_bits, &w, &scratch);
}

/* ---- formatting ---- */

const char *dump_perms(uint32_t attrs, char buf[8])
{
	char *p = buf;

	*p++ = (attrs & SLAT_R) ? 'r' : '-';
	*p++ = (attrs & SLAT_W) ? 'w' : '-';
	switch (attrs & SLAT_X) {
	case SLAT_X:
		*p++ = 'x';
		break;
	case SLAT_XU:
		*p++ = 'x';
		*p++ = 'u';
		break;
	case SLAT_XK:
		*p++ = 'x';
		*p++ = 'k';
		break;
	default:
		*p++ = '-';
	}
	*p = '\0';
	return buf;
}

/* The format the leaves being printed are of (memory type names). */
static uint32_t dump_fmt = SLAT_FMT_ARM_S2;

void dump_set_format(uint32_t format)
{
	dump_fmt = format;
}

const char *dump_memtype(uint32_t attrs)
{
	/* x86: the memory type's own name (EPT's type, NPT's host PAT) */
	bool ept = dump_fmt == SLAT_FMT_EPT || dump_fmt == SLAT_FMT_NPT;

	switch (SLAT_MT(attrs)) {
	case SLAT_MT_NORMAL:
		return ept ? "wb" : "normal";
	case SLAT_MT_NORMAL_NC:
		return ept ? "wc" : "nc";
	case SLAT_MT_DEVICE:
		return ept ? "uc" : "device";
	default:
		return ept ? "mt?" : "mt3";
	}
}

const char *dump_size(uint64_t bytes, char buf[32])
{
	static const char units[] = "KMGTPE";

	if (bytes == 0) {
		snprintf(buf, 32, "0");
		return buf;
	}
	for (int u = 5; u >= 0; u--) {
		uint64_t unit = 1ull << (10 * (u + 1));

		if (bytes >= unit && bytes % unit == 0) {
			snprintf(buf, 32, "%" PRIu64 "%c", bytes / unit,
				 units[u]);
			return buf;
		}
	}
	snprintf(buf, 32, "0x%" PRIx64, bytes);
	return buf;
}

const char *dump_hex(uint64_t v, char buf[24])
{
	snprintf(buf, 24, "0x%" PRIx64, v);
	return buf;
}

const char *dump_format_name(uint32_t format)
{
	switch (format) {
	case SLAT_FMT_ARM_S2:
		return "arm-s2";
	case SLAT_FMT_EPT:
		return "ept";
	case SLAT_FMT_NPT:
		return "npt";
	case SLAT_FMT_ARM_S1:
		return "arm-s1";
	default:
		return "unknown";
	}
}

void dump_format_leaf(uint64_t ipa, uint64_t size, int level, uint64_t pa,
		      uint32_t attrs, char *buf, size_t len)
{
	char perms[8], sw[16] = "";
	unsigned swn = (attrs & SLAT_SW_MASK) >> SLAT_SW_SHIFT;

	if (swn)
		snprintf(sw, sizeof(sw), " sw=%u", swn);
	snprintf(buf, len,
		 "0x%016" PRIx64 "-0x%016" PRIx64 " L%d %s -> 0x%016" PRIx64
		 " %s %s%s%s%s%s%s %s%s",
		 ipa, ipa + size, level,
		 level == SLAT_LAST_LEVEL ? "page" : "block", pa,
		 dump_perms(attrs, perms), dump_memtype(attrs),
		 (attrs & SLAT_IPAT) ? " ipat" : "",
		 (attrs & SLAT_SVE) ? " sve" : "",
		 (attrs & SLAT_USER) ? " user" : "",
		 (attrs & SLAT_NG) ? " ng" : "", sw,
		 (attrs & SLAT_YOUNG) ? "young" : "old",
		 (attrs & SLAT_DIRTY) ? " dirty" : "");
}

void dump_format_entry(const struct dump_entry *e, bool hex, char *buf,
		       size_t len)
{
	size_t n;

	if (e->table)
		snprintf(buf, len,
			 "0x%016" PRIx64 "-0x%016" PRIx64 " L%d table -> 0x%016"
			 PRIx64,
			 e->ipa, e->ipa + e->size, e->level, e->out);
	else
		dump_format_leaf(e->ipa, e->size, e->level, e->out, e->attrs,
				 buf, len);
	if (!hex)
		return;
	n = strlen(buf);
	if (n < len)
		snprintf(buf + n, len - n,
			 "  pte 0x%016" PRIx64 " @ 0x%016" PRIx64 "[%u]",
			 e->pte, e->table_pa, e->index);
}

/*
 * " levels=N" for an Arm stage-2 config line whose start level is not the
 * one libslat picks by default (slat_config.levels), else "": the line
 * stays what a script would write to get this table.
 */
static const char *levels_word(const struct dump_info *info, char *buf,
			       size_t len)
{
	struct slat_config cfg = {
		.format = info->format, .granule = info->granule,
		.ia_bits = info->ia_bits, .pa_bits = info->pa_bits,
		.features = info->features,
	};
	struct slat_geometry geo;

	if (!slat_config_geometry(&cfg, &geo) &&
	    geo.start_level == info->start_level)
		return "";
	snprintf(buf, len, " levels=%d", 4 - info->start_level);
	return buf;
}

void dump_print_info(FILE *f, const struct dump_info *info, bool hex)
{
	char lv[16];
	char g[32];
	unsigned gshift = (unsigned)__builtin_ctz(info->granule);
	unsigned start_shift = (gshift - 3) * (unsigned)(4 - info->start_level) + 3;
	uint64_t root_entries = info->ia_bits > start_shift ?
		1ull << (info->ia_bits - start_shift) : 1;

#define ONOFF(feat) ((info->features & (feat)) ? "on" : "off")
	if (info->format == SLAT_FMT_EPT)
		fprintf(f, "# config ept levels=%d ia=%u pa=%u ad=%s mbec=%s "
			"xonly=%s\n",
			4 - info->start_level, info->ia_bits, info->pa_bits,
			ONOFF(SLAT_FEAT_HWDIRTY), ONOFF(SLAT_FEAT_EPT_MBEC),
			ONOFF(SLAT_FEAT_EPT_XONLY));
	else if (info->format == SLAT_FMT_NPT)
		fprintf(f, "# config npt levels=%d ia=%u pa=%u\n",
			4 - info->start_level, info->ia_bits, info->pa_bits);
	else if (info->format == SLAT_FMT_ARM_S1)
		fprintf(f, "# config arm-s1 granule=%s ia=%u pa=%u hwdirty=%s\n",
			dump_size(info->granule, g), info->ia_bits,
			info->pa_bits, ONOFF(SLAT_FEAT_HWDIRTY));
	else
		/* lpa2 only when on: it changes the descriptors' layout */
		fprintf(f, "# config %s granule=%s ia=%u pa=%u%s fwb=%s "
			"xnx=%s dic=%s hwdirty=%s%s\n",
			dump_format_name(info->format),
			dump_size(info->granule, g), info->ia_bits,
			info->pa_bits, levels_word(info, lv, sizeof(lv)),
			ONOFF(SLAT_FEAT_FWB),
			ONOFF(SLAT_FEAT_XNX), ONOFF(SLAT_FEAT_DIC),
			ONOFF(SLAT_FEAT_HWDIRTY),
			(info->features & SLAT_FEAT_LPA2) ? " lpa2=on" : "");
#undef ONOFF
	fprintf(f, "# start level %d, root: %" PRIu64
		" entr%s in %u concatenated page%s",
		info->start_level, root_entries,
		root_entries == 1 ? "y" : "ies", info->root_pages,
		info->root_pages == 1 ? "" : "s");
	if (hex)
		fprintf(f, " at 0x%016" PRIx64, info->root_pa);
	fputc('\n', f);
}

void dump_print_list(FILE *f, const struct dump_list *l, bool hex)
{
	char line[256];
	size_t leaves = dump_list_leaves(l);

	fprintf(f, "# %zu lea%s in IPA order", leaves,
		leaves == 1 ? "f" : "ves");
	if (hex)
		fprintf(f, ", with the %zu table entr%s above them",
			l->n - leaves, l->n - leaves == 1 ? "y" : "ies");
	fputc('\n', f);
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].table && !hex)
			continue;
		dump_format_entry(&l->v[i], hex, line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
}
