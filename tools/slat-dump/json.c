/* SPDX-License-Identifier: MIT */
/*
 * slat-dump --json: the listing (and --stats) as one JSON document on
 * stdout; the schema is in docs/slat-dump.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"

/* Bytes of the UTF-8 sequence at @p (up to @end), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3 :
		   *p >= 0xc2 && *p <= 0xdf ? 2 : 0;

	if (!n || (size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* overlong, surrogate and beyond-U+10FFFF forms */
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) ||
	    (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && p[0] == 0xf0 && p[1] < 0x90) ||
	    (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_str_n(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	fputc('"', f);
	while (p < end) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			fputc(*p++, f);
		} else if ((n = utf8_len(p, end))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			fputs("\\ufffd", f);
			p++;
		}
	}
	fputc('"', f);
}

void dump_json_str(FILE *f, const char *s)
{
	json_str_n(f, s, strlen(s));
}

static const char *tf(bool v)
{
	return v ? "true" : "false";
}

void dump_json_open(FILE *f, const char *source, const char *name,
		    const struct dump_info *info)
{
	unsigned gshift = (unsigned)__builtin_ctz(info->granule);
	unsigned start_shift =
		(gshift - 3) * (unsigned)(4 - info->start_level) + 3;
	uint64_t root_entries = info->ia_bits > start_shift ?
		1ull << (info->ia_bits - start_shift) : 1;
	uint32_t ft = info->features;

	fprintf(f, "{\"slat_dump_json\": 1, \"source\": \"%s\", \"name\": ",
		source);
	dump_json_str(f, name);
	fprintf(f,
		",\n \"config\": {\"format\": \"%s\", \"granule\": %" PRIu32
		", \"ia_bits\": %u, \"pa_bits\": %u, \"start_level\": %d, "
		"\"levels\": %d, \"root_pages\": %u, \"root_entries\": %" PRIu64
		", \"root_pa\": \"0x%016" PRIx64 "\",\n  \"features\": "
		"{\"fwb\": %s, \"xnx\": %s, \"dic\": %s, \"hwdirty\": %s, "
		"\"mbec\": %s, \"xonly\": %s}}",
		dump_format_name(info->format), info->granule, info->ia_bits,
		info->pa_bits, info->start_level, 4 - info->start_level,
		info->root_pages,
		root_entries, info->root_pa, tf(ft & SLAT_FEAT_FWB),
		tf(ft & SLAT_FEAT_XNX), tf(ft & SLAT_FEAT_DIC),
		tf(ft & SLAT_FEAT_HWDIRTY), tf(ft & SLAT_FEAT_EPT_MBEC),
		tf(ft & SLAT_FEAT_EPT_XONLY));
}

void dump_json_output(FILE *f, const char *buf, size_t len)
{
	size_t n = 0;

	fputs(",\n \"output\": [", f);
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t l = nl ? (size_t)(nl - buf) : len;

		fputs(n++ ? ",\n  " : "\n  ", f);
		json_str_n(f, buf, l);
		l += nl != NULL;
		buf += l;
		len -= l;
	}
	fputs(n ? "\n ]" : "]", f);
}

static void json_leaf(FILE *f, const struct dump_entry *e)
{
	uint32_t a = e->attrs;
	char perms[8];

	fprintf(f,
		", \"type\": \"%s\", \"perms\": \"%s\", \"read\": %s, "
		"\"write\": %s, \"exec_el1\": %s, \"exec_el0\": %s, "
		"\"memtype\": \"%s\", \"sw\": %u, \"young\": %s, "
		"\"dirty\": %s, \"ipat\": %s, \"sve\": %s, \"user\": %s, "
		"\"ng\": %s",
		e->level == SLAT_LAST_LEVEL ? "page" : "block",
		dump_perms(a, perms), tf(a & SLAT_R), tf(a & SLAT_W),
		tf(a & SLAT_XK), tf(a & SLAT_XU), dump_memtype(a),
		(a & SLAT_SW_MASK) >> SLAT_SW_SHIFT, tf(a & SLAT_YOUNG),
		tf(a & SLAT_DIRTY), tf(a & SLAT_IPAT), tf(a & SLAT_SVE),
		tf(a & SLAT_USER), tf(a & SLAT_NG));
}

void dump_json_entries(FILE *f, const struct dump_list *l)
{
	size_t leaves = dump_list_leaves(l);

	fprintf(f, ",\n \"leaves\": %zu, \"tables\": %zu,\n \"entries\": [",
		leaves, l->n - leaves);
	for (size_t i = 0; i < l->n; i++) {
		const struct dump_entry *e = &l->v[i];

		fprintf(f,
			"%s{\"kind\": \"%s\", \"ipa\": \"0x%016" PRIx64
			"\", \"end\": \"0x%016" PRIx64 "\", \"size\": %" PRIu64
			", \"level\": %d, \"pa\": \"0x%016" PRIx64
			"\", \"pte\": \"0x%016" PRIx64 "\", \"table_pa\": "
			"\"0x%016" PRIx64 "\", \"index\": %" PRIu32,
			i ? ",\n  " : "\n  ", e->table ? "table" : "leaf",
			e->ipa, e->ipa + e->size, e->size, e->level, e->out,
			e->pte, e->table_pa, e->index);
		if (!e->table)
			json_leaf(f, e);
		fputc('}', f);
	}
	fputs(l->n ? "\n ]" : "]", f);
}

void dump_json_close(FILE *f)
{
	fputs("}\n", f);
}
