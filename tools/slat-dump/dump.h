/* SPDX-License-Identifier: MIT */
/*
 * slat-dump internals: the entry list every output (text, hex, SVG, raw
 * image) is made from, and the small helpers the pieces share.
 */
#ifndef SLAT_DUMP_H
#define SLAT_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <slat/slat.h>

/* One descriptor that a walk found: a leaf, or (for --hex) a table entry. */
struct dump_entry {
	uint64_t ipa;      /* first IPA the entry maps */
	uint64_t size;     /* bytes it maps */
	uint64_t out;      /* leaf: output PA; table: PA of the next table */
	uint64_t pte;      /* the raw descriptor */
	uint64_t table_pa; /* PA of the table page that holds the entry */
	uint32_t index;    /* its index in that page */
	uint32_t attrs;    /* leaf: SLAT_R/W/X, SLAT_MT_*, SLAT_SW(n), SLAT_YOUNG,
			      SLAT_DIRTY, SLAT_IPAT, SLAT_SVE, SLAT_USER,
			      SLAT_NG */
	int level;
	bool table;        /* a table descriptor (only collected for --hex) */
};

struct dump_list {
	struct dump_entry *v;
	size_t n, cap;
};

/* What the header line says about a table, live or loaded from an image. */
struct dump_info {
	uint32_t format;   /* SLAT_FMT_* */
	uint32_t granule;
	uint8_t ia_bits, pa_bits;
	int8_t start_level;
	uint8_t root_pages;
	uint32_t features; /* SLAT_FEAT_* */
	uint64_t root_pa;
};

/* Append; exits on out of memory (a tool, not a library). */
void dump_list_push(struct dump_list *l, const struct dump_entry *e);
void dump_list_free(struct dump_list *l);
size_t dump_list_leaves(const struct dump_list *l);

/*
 * Collect the leaves of a live table in IPA order through slat_walk (and
 * the table entries too with @tables). @mm and @mm_ctx are the platform the
 * table was made with (for the PAs of table pages). Returns a slat status.
 */
int dump_collect(struct slat_table *t, const struct slat_mm_ops *mm,
		 void *mm_ctx, bool tables, struct dump_list *out);

/* "rw-", "rwx", "r-xu" (execute at EL0 only), "r-xk" (EL1 only). */
const char *dump_perms(uint32_t attrs, char buf[8]);
/* Memory type names are the format's: set it before printing leaves
 * (SLAT_FMT_ARM_S2 by default). */
void dump_set_format(uint32_t format);
/* Arm: "normal", "nc", "device", "mt3"; EPT: "wb", "wc", "uc", "mt?". */
const char *dump_memtype(uint32_t attrs);
/* 4K, 2M, 1G, 3M, 1536M, or 0x... when no unit divides it. */
const char *dump_size(uint64_t bytes, char buf[32]);
/* "0x40000000" without leading zeros. */
const char *dump_hex(uint64_t v, char buf[24]);
/* "arm-s2", "arm-s1" or "ept". */
const char *dump_format_name(uint32_t format);

/*
 * One entry as a line (no newline):
 * 0x0000000040000000-0x0000000040200000 L2 block -> 0x0000000080000000 rw- normal young
 * (then " ipat", " sve", " user", " ng", " sw=N" after the memory type and
 * " dirty" at the end when they apply). With @hex, "  pte 0x... @ 0xTABLEPA[index]" is
 * appended.
 */
void dump_format_entry(const struct dump_entry *e, bool hex, char *buf,
		       size_t len);
/* A leaf without the hex part (lookup uses it for the leaf it found). */
void dump_format_leaf(uint64_t ipa, uint64_t size, int level, uint64_t pa,
		      uint32_t attrs, char *buf, size_t len);

/* The "# ..." header lines for a table. */
void dump_print_info(FILE *f, const struct dump_info *info, bool hex);
/* Every entry of @l, one per line. */
void dump_print_list(FILE *f, const struct dump_list *l, bool hex);

/* Draw the IPA space; returns 0 or -1 with errno set (I/O). */
int dump_svg(const char *path, const struct dump_info *info,
	     const struct dump_list *l, const char *title);

/*
 * --json (docs/slat-dump.md): dump_json_open() starts the document with
 * the source ("script" or "raw-image"), its name and the configuration;
 * then the optional parts (dump_json_output: the lines a script printed as
 * it ran; dump_json_entries: every table entry and leaf; the stats), each
 * starting with a comma; dump_json_close() ends it.
 */
void dump_json_open(FILE *f, const char *source, const char *name,
		    const struct dump_info *info);
void dump_json_output(FILE *f, const char *buf, size_t len);
void dump_json_entries(FILE *f, const struct dump_list *l);
void dump_json_close(FILE *f);
/* A JSON string (quoted, escaped; bytes that are not UTF-8 as U+FFFD). */
void dump_json_str(FILE *f, const char *s);

/* Numbers: 0x hex (with optional '_'), or decimal with a K/M/G/T suffix. */
bool dump_parse_u64(const char *s, uint64_t *v);

/* The root's PA, through the accessor. */
static inline slat_pa_t dump_root_pa(const struct slat_table *t)
{
	slat_pa_t pa;
	slat_table_root(t, &pa, NULL);
	return pa;
}

#endif
