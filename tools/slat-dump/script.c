/* SPDX-License-Identifier: MIT */
/*
 * slat-dump scripts: parsing, running, and errors that say what to do.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "dump.h"
#include "script.h"
#include "textin.h"

#define MAX_TOKENS 16
/* A line is one operation and its words (a snapshot's path the longest);
 * a script, what a generator writes for a whole guest's worth of pages. */
#define SCRIPT_LINE_MAX 8192
#define SCRIPT_LINES_MAX (1ul << 24)

enum op_kind {
	OP_CONFIG,
	OP_MAP,
	OP_UNMAP,
	OP_WRPROTECT,
	OP_RELAX,
	OP_MKYOUNG,
	OP_CLEAR_YOUNG,
	OP_TEST_YOUNG,
	OP_LOOKUP,
	OP_DIRTY,
	OP_HW_ACCESS,
	OP_FLUSH,
	OP_SPLIT,
	OP_RECOVER,
	OP_SNAPSHOT,
	OP_RESTRICT,
};

/* What an operation's first words are. */
enum { ARG_IPA = 1u << 0, ARG_SIZE = 1u << 1 };

static const struct op_syntax {
	const char *name;
	enum op_kind kind;
	int min_args, max_args;
	unsigned args; /* ARG_* */
	const char *usage;
} ops[] = {
	{ "config", OP_CONFIG, 0, 8, 0,
	  "config arm-s2 granule=4k|16k|64k ia=BITS pa=BITS levels=N "
	  "fwb=on|off xnx=on|off dic=on|off hwdirty=on|off, or config arm-s1 "
	  "granule=4k|16k|64k ia=BITS pa=BITS hwdirty=on|off, or config ept "
	  "levels=4|5 ia=BITS pa=BITS ad=on|off mbec=on|off xonly=on|off, or "
	  "config npt levels=4|5 ia=BITS pa=BITS" },
	{ "map", OP_MAP, 4, 8, ARG_IPA | ARG_SIZE,
	  "map IPA SIZE PA ATTRS [pages|cap=SIZE|noreplace|break-block|skip-cmo]" },
	{ "unmap", OP_UNMAP, 2, 3, ARG_IPA | ARG_SIZE,
	  "unmap IPA SIZE [flush=entry|range|vmid|none]" },
	{ "wrprotect", OP_WRPROTECT, 2, 4, ARG_IPA | ARG_SIZE,
	  "wrprotect IPA SIZE [flush=entry|range|vmid|none] [no-holes]" },
	{ "restrict", OP_RESTRICT, 3, 5, ARG_IPA | ARG_SIZE,
	  "restrict IPA SIZE PERMS [flush=entry|range|vmid|none] [no-holes]" },
	{ "relax", OP_RELAX, 3, 6, ARG_IPA | ARG_SIZE,
	  "relax IPA SIZE PERMS [flush=entry|range|vmid|none] [skip-cmo] "
	  "[no-holes]" },
	{ "mkyoung", OP_MKYOUNG, 1, 1, ARG_IPA, "mkyoung IPA" },
	{ "clear-young", OP_CLEAR_YOUNG, 2, 2, ARG_IPA | ARG_SIZE,
	  "clear-young IPA SIZE" },
	{ "test-young", OP_TEST_YOUNG, 2, 2, ARG_IPA | ARG_SIZE,
	  "test-young IPA SIZE" },
	{ "lookup", OP_LOOKUP, 1, 1, ARG_IPA, "lookup IPA" },
	{ "dirty", OP_DIRTY, 2, 4, ARG_IPA | ARG_SIZE,
	  "dirty IPA SIZE [clear] [flush=entry|range|vmid|none]" },
	{ "hw-access", OP_HW_ACCESS, 2, 2, ARG_IPA, "hw-access IPA r|w|x|xu|xk" },
	{ "flush", OP_FLUSH, 2, 2, ARG_IPA | ARG_SIZE, "flush IPA SIZE" },
	{ "split", OP_SPLIT, 2, 4, ARG_IPA | ARG_SIZE,
	  "split IPA SIZE [leaf=SIZE] [no-skip]" },
	{ "recover", OP_RECOVER, 3, 5, ARG_IPA | ARG_SIZE,
	  "recover IPA SIZE zap-leaf|zap-table|promote [max-level=N] "
	  "[flush=entry|range|vmid|none]" },
	{ "snapshot", OP_SNAPSHOT, 1, 1, 0, "snapshot FILE" },
};

#define NR_OPS (sizeof(ops) / sizeof(ops[0]))

/* One parsed operation. */
struct op {
	const struct op_syntax *syn;
	uint64_t ipa, size, pa;
	bool has_size, has_pa;
	uint32_t attrs;  /* map: attributes; relax: permissions */
	uint32_t flags;  /* map: SLAT_MAP_*; split: SLAT_SPLIT_NO_SKIP */
	enum slat_tlbi_policy policy;
	bool clear;      /* dirty */
	unsigned access; /* hw-access: SLAT_ACCESS_* */
	const char *access_word; /* hw-access: as written (r, w, x, ...) */
	uint64_t leaf_size;      /* split: leaf=, 0 for the granule */
	enum slat_recover_strategy strategy; /* recover */
	int max_level;           /* recover: max-level=, or -99 for none */
	const char *file;        /* snapshot */
};

/* ---- messages ---- */

static const char *script_name(const struct script *s)
{
	return s->path;
}

/* "path:LINE: op: what (advice)" and exit status 2. */
static int error(const struct script *s, const char *op, const char *what,
		 const char *advice_fmt, ...)
{
	/* Room for a whole line's word: text_printf_safe() cuts it. */
	char advice[SCRIPT_LINE_MAX + 512];
	va_list ap;

	va_start(ap, advice_fmt);
	vsnprintf(advice, sizeof(advice), advice_fmt, ap);
	va_end(ap);
	/* The words come from the script: escaped, the quoted ones and an
	 * unknown operation's name cut short. */
	size_t len = strlen(op), shown = text_quote_shown(len);
	fprintf(stderr, "%s:%u: ", script_name(s), s->line);
	text_printf_safe(stderr, "%.*s%s: %s (%s)\n", (int)shown, op,
			 shown < len ? "..." : "", what, advice);
	return 2;
}

/* ---- numbers and words ---- */

bool dump_parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (s += 2; *s; s++) {
			int d;

			if (*s == '_')
				continue;
			if (!isxdigit((unsigned char)*s))
				return false;
			d = isdigit((unsigned char)*s) ?
				*s - '0' : tolower((unsigned char)*s) - 'a' + 10;
			if (x >> 60)
				return false; /* overflow */
			x = x << 4 | (uint64_t)d;
			digits++;
		}
		*v = x;
		return digits > 0;
	}
	for (; isdigit((unsigned char)*s) || *s == '_'; s++) {
		if (*s == '_')
			continue;
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
		digits++;
	}
	if (!digits)
		return false;
	if (*s) {
		static const char units[] = "KMGTPE";
		const char *u = strchr(units, toupper((unsigned char)*s));
		unsigned shift;

		if (!u || !*u)
			return false;
		shift = 10 * (unsigned)(u - units + 1);
		s++;
		/* Also accept 4KiB and 4KB. */
		if ((s[0] == 'i' || s[0] == 'I') && (s[1] == 'B' || s[1] == 'b'))
			s += 2;
		else if (s[0] == 'B' || s[0] == 'b')
			s++;
		if (*s || (x && (x << shift) >> shift != x))
			return false;
		x <<= shift;
	}
	*v = x;
	return true;
}

static bool parse_onoff(const char *s, bool *v)
{
	if (!strcmp(s, "on") || !strcmp(s, "yes") || !strcmp(s, "1")) {
		*v = true;
		return true;
	}
	if (!strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "0")) {
		*v = false;
		return true;
	}
	return false;
}

static int log2_exact(uint64_t v)
{
	if (!v || (v & (v - 1)))
		return -1;
	return __builtin_ctzll(v);
}

/*
 * ATTRS: comma-separated words: the permissions ("rw", "rwx", "r-x", "rx",
 * "ro", "none"), a memory type ("normal", "nc", "device", or EPT's names
 * "wb", "wc", "uc"), "sw=N", "xu"/"xk" (execute at EL0/EL1 only), EPT's
 * "ipat" (ignore PAT) and "sve" (suppress #VE), and stage 1's "user" (EL0
 * access) and "ng" (not global). With @perms_only, only permissions and
 * xu/xk.
 */
static bool parse_attrs(const char *arg, bool perms_only, uint32_t *out,
			char *why, size_t whylen)
{
	char buf[128], *save = NULL, *w;
	uint32_t perms = 0, mt = SLAT_MT_NORMAL, sw = 0, xonly = 0, extra = 0;
	bool have_perms = false;

	if (strlen(arg) >= sizeof(buf)) {
		snprintf(why, whylen, "attributes too long");
		return false;
	}
	strcpy(buf, arg);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "ro")) {
			perms = SLAT_R;
			have_perms = true;
		} else if (!strcmp(w, "none")) {
			perms = 0;
			have_perms = true;
		} else if (strspn(w, "rwx-") == strlen(w)) {
			if (have_perms) {
				snprintf(why, whylen,
					 "two permission words (\"%s\")", w);
				return false;
			}
			have_perms = true;
			for (const char *c = w; *c; c++) {
				if (*c == 'r')
					perms |= SLAT_R;
				else if (*c == 'w')
					perms |= SLAT_W;
				else if (*c == 'x')
					perms |= SLAT_X;
			}
		} else if (!strcmp(w, "xu")) {
			xonly |= SLAT_XU;
		} else if (!strcmp(w, "xk")) {
			xonly |= SLAT_XK;
		} else if (!perms_only &&
			   (!strcmp(w, "normal") || !strcmp(w, "wb"))) {
			mt = SLAT_MT_NORMAL;
		} else if (!perms_only &&
			   (!strcmp(w, "nc") || !strcmp(w, "wc"))) {
			mt = SLAT_MT_NORMAL_NC;
		} else if (!perms_only &&
			   (!strcmp(w, "device") || !strcmp(w, "uc"))) {
			mt = SLAT_MT_DEVICE;
		} else if (!perms_only && !strcmp(w, "ipat")) {
			extra |= SLAT_IPAT;
		} else if (!perms_only && !strcmp(w, "sve")) {
			extra |= SLAT_SVE;
		} else if (!perms_only && !strcmp(w, "user")) {
			extra |= SLAT_USER;
		} else if (!perms_only && !strcmp(w, "ng")) {
			extra |= SLAT_NG;
		} else if (!perms_only && !strncmp(w, "sw=", 3)) {
			uint64_t n;

			if (!dump_parse_u64(w + 3, &n) || n > 15) {
				snprintf(why, whylen,
					 "\"%s\": sw= takes 0 to 15 (four "
					 "software bits)", w);
				return false;
			}
			sw = SLAT_SW(n);
		} else {
			snprintf(why, whylen, "unknown attribute word \"%s\"", w);
			return false;
		}
	}
	if (!have_perms && !xonly) {
		snprintf(why, whylen, "no permissions in \"%s\"", arg);
		return false;
	}
	/* xu / xk say at which level execute is allowed. */
	if (xonly)
		perms = (perms & ~SLAT_X) | xonly;
	*out = perms | mt | sw | extra;
	return true;
}

/* ---- the table ---- */

static const char *granule_name(uint32_t g)
{
	return g == 4096 ? "4K" : g == 16384 ? "16K" : g == 65536 ? "64K" : "?";
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Advice for a levels= the architecture does not allow with the rest. */
static int levels_error(const struct script *s, const char *op, int rc)
{
	struct slat_config dflt = s->cfg;
	struct slat_geometry geo;

	dflt.levels = 0;
	if (s->cfg.format == SLAT_FMT_ARM_S1 ||
	    slat_config_geometry(&dflt, &geo))
		return error(s, op, slat_strerror(rc),
			     "levels=%u: %s", s->cfg.levels,
			     s->cfg.format == SLAT_FMT_ARM_S1
				     ? "stage 1 has the one walk ia= gives "
				       "(no concatenated roots); leave out "
				       "levels="
				     : "leave out levels= and check granule=, "
				       "ia= and pa=");
	return error(s, op, slat_strerror(rc),
		     "levels=%u cannot walk ia=%u with granule=%s pa=%u (the "
		     "start level must resolve 1 to 4 bits more than a level, "
		     "in 1 to 16 root pages; 4k level 0 needs pa=44 or more, "
		     "16k level 1 pa=42, 64k level 1 pa=44, level -1 lpa2=on "
		     "and pa=52); the default is levels=%d",
		     s->cfg.levels, s->cfg.ia_bits, granule_name(s->cfg.granule),
		     geo.pa_bits, 4 - geo.start_level);
}

/* Advice for a configuration slat_config_geometry() refused. */
static int config_error(const struct script *s, const char *op, int rc)
{
	uint8_t pa_bits = s->cfg.pa_bits ? s->cfg.pa_bits : 48;
	uint8_t wide = s->cfg.ia_bits > pa_bits ? s->cfg.ia_bits : pa_bits;

	bool lpa2 = s->cfg.features & SLAT_FEAT_LPA2;

	if (s->cfg.format == SLAT_FMT_EPT &&
	    (s->cfg.features & (SLAT_FEAT_FWB | SLAT_FEAT_XNX | SLAT_FEAT_DIC |
				SLAT_FEAT_LPA2)))
		return error(s, op, slat_strerror(rc),
			     "fwb, xnx, dic and lpa2 are Arm features; ept takes "
			     "ad=, mbec= and xonly=");
	if (s->cfg.format == SLAT_FMT_EPT)
		return error(s, op, slat_strerror(rc),
			     "ept takes granule=4k, ia=32..57 (up to 48 with "
			     "levels=4, any with levels=5) and pa=32..52");
	if (s->cfg.format == SLAT_FMT_NPT)
		return error(s, op, slat_strerror(rc),
			     "npt takes granule=4k, ia=32..57 (up to 48 with "
			     "levels=4, any with levels=5), pa=32..52 and no "
			     "feature (its A and D bits are always on)");
	if (s->cfg.features & (SLAT_FEAT_EPT_MBEC | SLAT_FEAT_EPT_XONLY))
		return error(s, op, slat_strerror(rc),
			     "mbec and xonly are EPT features; write config "
			     "ept ... to use them");
	if (lpa2 && s->cfg.granule == 65536)
		return error(s, op, slat_strerror(rc),
			     "lpa2 is for granule=4k or 16k (64k has 52-bit "
			     "addresses without it)");
	if (s->cfg.format == SLAT_FMT_ARM_S1 &&
	    (s->cfg.features & ~(SLAT_FEAT_HWDIRTY | SLAT_FEAT_LPA2)))
		return error(s, op, slat_strerror(rc),
			     "fwb, xnx and dic are stage-2 features; arm-s1 "
			     "takes granule=, ia=, pa=, hwdirty= and lpa2=");
	/* parse_bits() let through only what some format takes */
	if (wide > 48 && s->cfg.granule != 65536 && !lpa2)
		return error(s, op, slat_strerror(rc),
			     "%u-bit addresses need granule=64k, or lpa2=on with "
			     "4k and 16k", wide);
	if (s->cfg.ia_bits > pa_bits && s->cfg.format == SLAT_FMT_ARM_S2)
		return error(s, op, slat_strerror(rc),
			     "ia=%u is larger than pa=%u: the IPA size cannot "
			     "exceed the PA size; lower ia= or raise pa=",
			     s->cfg.ia_bits, pa_bits);
	if (s->cfg.levels)
		return levels_error(s, op, rc);
	return error(s, op, slat_strerror(rc),
		     "%s takes granule=4k|16k|64k, ia=32..48 and pa=32..48 "
		     "(up to 52 for both with 64k or lpa2=on)",
		     dump_format_name(s->cfg.format));
}

/*
 * The arena stands for PAs just below 2^pa_bits: one larger than the PA
 * space would give table pages PAs no descriptor can hold.
 */
static int arena_check(const struct script *s, const struct slat_geometry *geo,
		       uint64_t arena)
{
	uint64_t pa_top = 1ull << geo->pa_bits;
	bool x86 = s->cfg.format == SLAT_FMT_EPT || s->cfg.format == SLAT_FMT_NPT;
	unsigned max = x86 || geo->granule_shift == 16 ? 52 : 48;
	char a[32], top[32], more[64] = "";

	if (geo->pa_bits < max)
		snprintf(more, sizeof(more), ", or raise pa= (up to %u) in "
			 "the config line", max);
	if (arena > pa_top) {
		fprintf(stderr,
			"slat-dump: --arena %s is larger than the PA space "
			"(pa=%u: %s): table pages would lie beyond it; give "
			"--arena %s or less%s\n",
			dump_size(s->arena_bytes, a), geo->pa_bits,
			dump_size(pa_top, top), dump_size(pa_top, top), more);
		return 2;
	}
	/* The hosted platform numbers pages with 32 bits. */
	if (arena / s->cfg.granule >= UINT32_MAX) {
		fprintf(stderr,
			"slat-dump: --arena %s holds 2^32 or more %s pages, "
			"more than the hosted platform counts; give a smaller "
			"--arena%s\n", dump_size(s->arena_bytes, a),
			granule_name(s->cfg.granule),
			x86 || s->cfg.granule == 65536
				? "" : " or a larger granule=");
		return 2;
	}
	return 0;
}

static int table_setup(struct script *s, const char *op)
{
	struct slat_geometry geo;
	uint8_t pa_bits;
	uint64_t arena = round_up(s->arena_bytes, 65536);
	uint64_t pa_top, pa_base = 0;
	int rc;

	rc = slat_config_geometry(&s->cfg, &geo);
	if (rc < 0)
		return config_error(s, op, rc);
	rc = arena_check(s, &geo, arena);
	if (rc)
		return rc;
	/* Table pages sit at the top of the PA space, away from guest RAM. */
	pa_bits = geo.pa_bits;
	pa_top = 1ull << pa_bits;
	pa_base = (pa_top - arena) & ~(uint64_t)0xffff;
	rc = slat_hosted_init(&s->h, arena, s->cfg.granule, pa_base);
	if (rc < 0) {
		char a[32];

		fprintf(stderr,
			"slat-dump: cannot reserve a %s table-page arena: %s "
			"(give a smaller --arena)\n", dump_size(arena, a),
			slat_strerror(rc));
		return 1;
	}
	rc = slat_table_init(&s->t, &s->cfg, slat_hosted_ops(), &s->h);
	if (rc < 0) {
		slat_hosted_fini(&s->h);
		return error(s, op, slat_strerror(rc),
			     "slat_table_init refused a configuration that "
			     "slat_config_geometry accepted");
	}
	s->h.table = &s->t;
	rc = slat_hosted_cache_init(&s->cache, s->h.nr_pages);
	if (rc < 0) {
		slat_table_destroy(&s->t);
		slat_hosted_fini(&s->h);
		fprintf(stderr, "slat-dump: out of memory\n");
		return 1;
	}
	s->ready = true;
	dump_set_format(s->cfg.format);
	/* The header goes first: lookups print as the script runs. */
	if (s->out && !s->no_header) {
		struct dump_info info = {
			.format = s->cfg.format, .granule = s->cfg.granule,
			.ia_bits = geo.ia_bits, .pa_bits = geo.pa_bits,
			.start_level = geo.start_level,
			.root_pages = geo.root_pages,
			.features = s->cfg.features,
			.root_pa = slat_pa_v(dump_root_pa(&s->t)),
		};

		dump_print_info(s->out, &info, s->hex);
	}
	return 0;
}

int script_fini(struct script *s)
{
	int ret = 0;

	if (!s->ready)
		return 0;
	slat_hosted_cache_drain(&s->h, &s->cache);
	slat_hosted_cache_fini(&s->cache);
	slat_table_destroy(&s->t);
	if (slat_hosted_table_pages(&s->h) || s->h.double_frees) {
		fprintf(stderr,
			"slat-dump: after slat_table_destroy the arena still "
			"has %" PRIu64 " table pages in use and saw %" PRIu64
			" double frees (a libslat bug)\n",
			slat_hosted_table_pages(&s->h), s->h.double_frees);
		ret = 1;
	}
	slat_hosted_fini(&s->h);
	s->ready = false;
	return ret;
}

/* What a config line has set so far: each setting once. */
enum {
	SEEN_GRANULE = 1u << 0,
	SEEN_IA = 1u << 1,
	SEEN_PA = 1u << 2,
	SEEN_LEVELS = 1u << 3,
	SEEN_FEAT_SHIFT = 8, /* then SLAT_FEAT_* << SEEN_FEAT_SHIFT */
};

static const struct {
	const char *name;
	uint32_t feat;
} config_feats[] = {
	{ "fwb", SLAT_FEAT_FWB },
	{ "xnx", SLAT_FEAT_XNX },
	{ "dic", SLAT_FEAT_DIC },
	{ "hwdirty", SLAT_FEAT_HWDIRTY },
	{ "ad", SLAT_FEAT_HWDIRTY },
	{ "mbec", SLAT_FEAT_EPT_MBEC },
	{ "xonly", SLAT_FEAT_EPT_XONLY },
	{ "lpa2", SLAT_FEAT_LPA2 },
};

/* ia= and pa=: bits no format takes are refused here, with the ranges. */
static int parse_bits(struct script *s, const char *key, const char *val,
		      uint8_t *bits)
{
	bool ia = key[0] == 'i';
	unsigned max = ia ? 57 : 52;
	uint64_t v;

	if (!dump_parse_u64(val, &v))
		return error(s, "config", "bad address size",
			     "\"%s=%s\": give the number of bits, e.g. %s=40",
			     key, val, key);
	if (v < 32 || v > max)
		return error(s, "config", "address size out of range",
			     "\"%s=%s\": %s= takes 32..%u (arm-s2, arm-s1: 32..48, "
			     "or up to 52 with granule=64k or lpa2=on; ept, npt: "
			     "32..%u)", key, val,
			     key, max, max);
	*bits = (uint8_t)v;
	return 0;
}

/* One KEY=VALUE word of a config line. */
static int parse_setting(struct script *s, const char *key, const char *val,
			 uint32_t *seen, int *levels)
{
	struct slat_config *c = &s->cfg;
	uint32_t bit = 0, feat = 0;
	uint64_t v;
	bool on;

	if (!strcmp(key, "granule"))
		bit = SEEN_GRANULE;
	else if (!strcmp(key, "ia"))
		bit = SEEN_IA;
	else if (!strcmp(key, "pa"))
		bit = SEEN_PA;
	else if (!strcmp(key, "levels"))
		bit = SEEN_LEVELS;
	for (size_t j = 0; j < sizeof(config_feats) / sizeof(config_feats[0]); j++)
		if (!strcmp(key, config_feats[j].name))
			feat = config_feats[j].feat;
	if (feat)
		bit = feat << SEEN_FEAT_SHIFT;
	if (!bit)
		return error(s, "config", "unknown setting",
			     "\"%s\": settings are granule=, ia=, pa=, fwb=, "
			     "xnx=, dic=, hwdirty= (arm-s2; arm-s1 takes "
			     "granule=, ia=, pa=, hwdirty=) and levels=, ia=, "
			     "pa=, ad=, mbec=, xonly= (ept; npt takes none of "
			     "them); levels= for all",
			     key);
	/* A repeated setting would silently override the first. */
	if (*seen & bit)
		return error(s, "config", "setting given twice",
			     "\"%s=%s\": %s= is set earlier on the line%s; give "
			     "it once", key, val, key,
			     feat == SLAT_FEAT_HWDIRTY ? " (hwdirty= and ad= "
							 "are one setting)" : "");
	*seen |= bit;
	if (bit == SEEN_GRANULE) {
		if (!dump_parse_u64(val, &v) ||
		    (v != 4096 && v != 16384 && v != 65536))
			return error(s, "config", "bad granule",
				     "\"%s\": write granule=4k, 16k or 64k", val);
		c->granule = (uint32_t)v;
	} else if (bit == SEEN_IA || bit == SEEN_PA) {
		return parse_bits(s, key, val,
				  bit == SEEN_IA ? &c->ia_bits : &c->pa_bits);
	} else if (bit == SEEN_LEVELS) {
		/* which counts the format allows is libslat's to say */
		if (!dump_parse_u64(val, &v) || v < 1 || v > 5)
			return error(s, "config", "bad levels",
				     "\"levels=%s\": a walk has 1 to 5 lookup "
				     "levels (Arm 2 to 5, EPT 4 or 5)", val);
		*levels = (int)v;
	} else {
		if (!parse_onoff(val, &on))
			return error(s, "config", "bad feature value",
				     "\"%s=%s\": write %s=on or %s=off", key,
				     val, key, key);
		c->features = on ? (c->features | feat) : (c->features & ~feat);
	}
	return 0;
}

static int parse_config(struct script *s, char **tok, int n)
{
	struct slat_config *c = &s->cfg;
	const char *format = NULL;
	uint32_t seen = 0;
	int levels = 0, rc;

	for (int i = 1; i < n; i++) {
		char *eq = strchr(tok[i], '=');

		if (eq) {
			*eq++ = '\0';
			rc = parse_setting(s, tok[i], eq, &seen, &levels);
			if (rc)
				return rc;
			continue;
		}
		if (strcmp(tok[i], "arm-s2") && strcmp(tok[i], "arm") &&
		    strcmp(tok[i], "arm-s1") && strcmp(tok[i], "ept") &&
		    strcmp(tok[i], "npt"))
			return error(s, "config", "unknown format",
				     "\"%s\": write arm-s2, arm-s1, ept or npt",
				     tok[i]);
		if (format)
			return error(s, "config", "two formats",
				     "\"%s\" after \"%s\": give one format word, "
				     "arm-s2, arm-s1, ept or npt", tok[i], format);
		format = tok[i];
		c->format = !strcmp(tok[i], "ept")    ? SLAT_FMT_EPT :
			    !strcmp(tok[i], "npt")    ? SLAT_FMT_NPT :
			    !strcmp(tok[i], "arm-s1") ? SLAT_FMT_ARM_S1 :
							SLAT_FMT_ARM_S2;
	}
	/* A guest's own tables: a 48-bit VA unless told otherwise. */
	if (c->format == SLAT_FMT_ARM_S1 && !(seen & SEEN_IA))
		c->ia_bits = 48;
	c->levels = (uint8_t)levels;
	if (c->format == SLAT_FMT_NPT) {
		/* the CPU always keeps the A and D bits: nothing to choose */
		if (c->features)
			return error(s, "config", "a feature with npt",
				     "npt takes no feature: its A and D bits "
				     "are always on; write config npt "
				     "levels=4|5 ia=BITS pa=BITS");
		c->features = SLAT_FEAT_HWDIRTY;
	}
	if (c->format == SLAT_FMT_EPT || c->format == SLAT_FMT_NPT) {
		/* EPT, NPT: 4-level (48-bit) unless told otherwise */
		if (!(seen & SEEN_IA))
			c->ia_bits = levels == 5 ? 57 : 48;
		if (!(seen & SEEN_PA))
			c->pa_bits = 0; /* 48, or 52 for a 5-level walk */
		if (levels == 4 && c->ia_bits > 48)
			return error(s, "config", "levels=4 with ia > 48",
				     "a 4-level %s walk resolves 48 bits; "
				     "write levels=5 or ia=48",
				     c->format == SLAT_FMT_NPT ? "NPT" : "EPT");
	}
	return 0;
}

/* ---- advice for a failed operation ---- */

static void advise_align(const struct script *s, const struct op *op,
			 char *buf, size_t len)
{
	uint64_t g = s->cfg.granule;
	const char *gn = granule_name(s->cfg.granule);
	enum op_kind k = op->syn->kind;

	if (op->ipa % g && k != OP_LOOKUP && k != OP_MKYOUNG)
		snprintf(buf, len,
			 "IPA 0x%" PRIx64 " is not aligned to the %s granule; "
			 "use 0x%" PRIx64 " or 0x%" PRIx64, op->ipa, gn,
			 op->ipa / g * g, round_up(op->ipa, g));
	else if (op->has_size && op->size % g)
		snprintf(buf, len,
			 "size 0x%" PRIx64 " is not a multiple of the %s "
			 "granule; round it to 0x%" PRIx64, op->size, gn,
			 round_up(op->size, g));
	else if (op->has_pa && op->pa % g)
		snprintf(buf, len,
			 "PA 0x%" PRIx64 " is not aligned to the %s granule; "
			 "use 0x%" PRIx64 " or 0x%" PRIx64, op->pa, gn,
			 op->pa / g * g, round_up(op->pa, g));
	else
		snprintf(buf, len,
			 "addresses and sizes must be multiples of the %s "
			 "granule", gn);
}

static void advise_range(const struct script *s, const struct op *op,
			 char *buf, size_t len)
{
	const char *gn = granule_name(s->cfg.granule);
	uint8_t pa_bits = slat_table_geometry(&s->t)->pa_bits;
	uint64_t ia_end = 1ull << s->cfg.ia_bits;
	uint64_t pa_end = pa_bits >= 64 ? UINT64_MAX : 1ull << pa_bits;

	if (op->has_size && op->size == 0)
		snprintf(buf, len, "the size is 0; give at least one %s page",
			 gn);
	else if (op->has_size && op->ipa + op->size < op->ipa)
		snprintf(buf, len,
			 "IPA 0x%" PRIx64 " + size 0x%" PRIx64 " wraps around",
			 op->ipa, op->size);
	else if (!op->has_size && op->ipa >= ia_end)
		snprintf(buf, len,
			 "IPA 0x%" PRIx64 " is beyond the %u-bit IPA space "
			 "(0x%" PRIx64 "); lower it or raise ia= in the config "
			 "line", op->ipa, s->cfg.ia_bits, ia_end);
	else if (op->ipa >= ia_end ||
		 (op->has_size && op->ipa + op->size > ia_end))
		snprintf(buf, len,
			 "the range ends at 0x%" PRIx64 ", beyond the %u-bit "
			 "IPA space (0x%" PRIx64 "); lower it or raise ia= in "
			 "the config line",
			 op->ipa + (op->has_size ? op->size : 1),
			 s->cfg.ia_bits, ia_end);
	else if (op->has_pa &&
		 (op->pa + op->size < op->pa || op->pa + op->size > pa_end))
		snprintf(buf, len,
			 "the PA range ends at 0x%" PRIx64 ", beyond the %u-bit "
			 "PA space (0x%" PRIx64 "); lower it or raise pa= in "
			 "the config line", op->pa + op->size, pa_bits, pa_end);
	else
		snprintf(buf, len,
			 "keep IPA ranges inside 0..0x%" PRIx64 " and PA ranges "
			 "inside 0..0x%" PRIx64, ia_end, pa_end);
}

/* Stage 1's own rules; false when none of them explains the refusal. */
static bool advise_attr_s1(const struct op *op, char *buf, size_t len)
{
	uint32_t a = op->attrs;

	if (a & (SLAT_IPAT | SLAT_SVE))
		snprintf(buf, len,
			 "ipat and sve are EPT bits; arm-s1 has no such "
			 "attribute");
	else if (op->syn->kind == OP_MAP && !(a & SLAT_R))
		snprintf(buf, len,
			 "a valid stage-1 entry always lets EL1 read; add r, "
			 "e.g. r or rw");
	else if ((a & SLAT_USER) && (a & SLAT_W) && (a & SLAT_XK))
		snprintf(buf, len,
			 "memory EL0 can write is never executable at EL1 "
			 "(AP[2:1] = 01 implies PXN); write xu instead of x, "
			 "or drop the w or the user");
	else if (op->syn->kind == OP_RELAX && (a & SLAT_PERMS))
		snprintf(buf, len,
			 "these leaves cannot take that permission (device "
			 "memory cannot execute; memory EL0 can write cannot "
			 "execute at EL1); leave it out or use xu");
	else
		return false;
	return true;
}

/* A nested leaf: P is read, one NX for every (user) access. */
static bool advise_attr_npt(const struct op *op, char *buf, size_t len)
{
	uint32_t a = op->attrs, x = a & SLAT_X;

	if (op->syn->kind == OP_MAP && !(a & SLAT_R))
		snprintf(buf, len,
			 "an NPT leaf is always readable (P is read); add r, "
			 "e.g. rw");
	else if (x && x != SLAT_X)
		snprintf(buf, len,
			 "NPT has one NX bit (every nested access is a user "
			 "access): write x, not xu or xk");
	else if (a & (SLAT_IPAT | SLAT_SVE))
		snprintf(buf, len,
			 "ipat and sve are EPT bits; npt has no such attribute");
	else
		return false;
	return true;
}

static bool advise_attr_ept(const struct script *s, const struct op *op,
			    char *buf, size_t len)
{
	uint32_t a = op->attrs, x = a & SLAT_X, f = s->cfg.features;
	bool map = op->syn->kind == OP_MAP;

	if ((a & SLAT_W) && !(a & SLAT_R))
		snprintf(buf, len,
			 "EPT cannot write without read (a misconfiguration); "
			 "add r, e.g. rw");
	else if (x && x != SLAT_X && !(f & SLAT_FEAT_EPT_MBEC))
		snprintf(buf, len,
			 "execute at one privilege level only (xu or xk) needs "
			 "mode-based execute control; add mbec=on to the "
			 "config line or use plain x");
	else if (map && !(a & (SLAT_R | SLAT_XK)))
		snprintf(buf, len,
			 "an EPT leaf needs r or (supervisor) x: with bits 2:0 "
			 "clear it would not be present");
	else if (map && !(a & SLAT_R) && !(f & SLAT_FEAT_EPT_XONLY))
		snprintf(buf, len,
			 "execute-only needs a CPU that supports it; add "
			 "xonly=on to the config line or add r");
	else
		return false;
	return true;
}

static void advise_attr(const struct script *s, const struct op *op,
			char *buf, size_t len)
{
	uint32_t a = op->attrs, x = a & SLAT_X;
	uint32_t format = s->cfg.format;
	const char *name = dump_format_name(format);

	if (op->syn->kind == OP_RESTRICT)
		snprintf(buf, len,
			 "PERMS must name permissions (r, w, x, xu, xk), and "
			 "what is left of each leaf must be one the %s format "
			 "can express (EPT: no write without read, and no "
			 "execute-only without xonly=on; arm-s1: read always; "
			 "arm-s2: xu or xk alone needs xnx=on)", name);
	else if (op->syn->kind == OP_MAP && x && SLAT_MT(a) == SLAT_MT_DEVICE)
		snprintf(buf, len,
			 "device memory cannot be executable; drop the x, e.g. "
			 "rw,device");
	else if (format != SLAT_FMT_ARM_S1 && (a & (SLAT_USER | SLAT_NG)))
		snprintf(buf, len,
			 "user and ng are stage-1 bits; %s has no such "
			 "attribute (write config arm-s1 for a guest's own "
			 "tables)", name);
	else if (format == SLAT_FMT_ARM_S1 && advise_attr_s1(op, buf, len))
		return;
	else if (format == SLAT_FMT_EPT && advise_attr_ept(s, op, buf, len))
		return;
	else if (format == SLAT_FMT_NPT && advise_attr_npt(op, buf, len))
		return;
	else if (format == SLAT_FMT_ARM_S2 && x && x != SLAT_X &&
		 !(s->cfg.features & SLAT_FEAT_XNX))
		snprintf(buf, len,
			 "execute at one exception level only (xu or xk) needs "
			 "FEAT_XNX; add xnx=on to the config line or use plain "
			 "x");
	else if (format == SLAT_FMT_ARM_S2 && (a & (SLAT_IPAT | SLAT_SVE)))
		snprintf(buf, len,
			 "ipat and sve are EPT bits; arm-s2 has no such "
			 "attribute");
	else if (op->syn->kind == OP_RELAX && x)
		snprintf(buf, len,
			 "relax cannot add execute to these leaves (device "
			 "memory?); leave the x out");
	else
		snprintf(buf, len,
			 "the %s format cannot express these attributes", name);
}

/* "4K, 2M or 1G": the leaf sizes of the table. */
static void leaf_sizes(const struct script *s, char *buf, size_t len)
{
	size_t n = 0, count = 0, total = 0;
	char sz[32];

	for (int l = slat_table_geometry(&s->t)->start_level; l <= SLAT_LAST_LEVEL; l++)
		total += (slat_table_geometry(&s->t)->leaf_levels >> l) & 1;
	buf[0] = '\0';
	for (int l = SLAT_LAST_LEVEL; l >= slat_table_geometry(&s->t)->start_level; l--) {
		if (!((slat_table_geometry(&s->t)->leaf_levels >> l) & 1) || n >= len)
			continue;
		count++;
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      count == 1 ? "" :
				      count == total ? " or " : ", ",
				      dump_size(slat_level_size(&s->t, l), sz));
	}
}

static void advise_inval(const struct script *s, const struct op *op,
			 char *buf, size_t len)
{
	char sizes[96], sz[32];

	if (op->syn->kind != OP_SPLIT) {
		snprintf(buf, len,
			 "libslat refused a flag or policy slat-dump passed; "
			 "this is a slat-dump or libslat bug");
		return;
	}
	leaf_sizes(s, sizes, sizeof(sizes));
	snprintf(buf, len,
		 "leaf=%s is not a leaf size of this table; give %s, or leave "
		 "leaf= out for the granule", dump_size(op->leaf_size, sz),
		 sizes);
}

static void advise(const struct script *s, const struct op *op, int rc,
		   char *buf, size_t len)
{
	enum op_kind k = op->syn->kind;
	char sz[32];

	switch (rc) {
	case SLAT_E_ALIGN:
		advise_align(s, op, buf, len);
		return;
	case SLAT_E_RANGE:
		advise_range(s, op, buf, len);
		return;
	case SLAT_E_ATTR:
		advise_attr(s, op, buf, len);
		return;
	case SLAT_E_INVAL:
		advise_inval(s, op, buf, len);
		return;
	case SLAT_E_CONFIG:
		snprintf(buf, len,
			 "hardware dirty state is off; add %s to the config "
			 "line",
			 s->cfg.format == SLAT_FMT_EPT ? "ad=on" : "hwdirty=on");
		return;
	case SLAT_E_EXISTS:
		snprintf(buf, len,
			 "part of 0x%" PRIx64 "+%s already translates "
			 "differently; unmap it first or drop noreplace",
			 op->ipa, dump_size(op->size, sz));
		return;
	case SLAT_E_NOENT:
		if (k == OP_RELAX || k == OP_WRPROTECT || k == OP_RESTRICT)
			snprintf(buf, len,
				 "part of the range is not mapped, and no-holes "
				 "refuses a hole; map it first, or drop "
				 "no-holes to skip the holes");
		else
			snprintf(buf, len,
				 "nothing is mapped at 0x%" PRIx64
				 "; map it first", op->ipa);
		return;
	case SLAT_E_NOMEM:
		snprintf(buf, len,
			 "the %s table-page arena is exhausted; run slat-dump "
			 "with a larger --arena",
			 dump_size(s->h.arena_bytes, sz));
		return;
	case SLAT_E_AGAIN:
		snprintf(buf, len,
			 "a lost race, which cannot happen in this "
			 "single-threaded tool; a libslat bug");
		return;
	default:
		snprintf(buf, len, "see include/slat/types.h for status %d",
			 rc);
	}
}

/* ---- running one line ---- */

/* Exactly the pages @op takes; none for input the operation will refuse
 * itself, with its own error. */
static void topup(struct script *s, enum slat_op_kind sop, const struct op *op)
{
	int64_t need = slat_pages_needed(
		&s->t, SLAT_NEED(.kind = sop, .ipa = slat_ipa(op->ipa),
				 .size = op->size, .pa = slat_pa(op->pa),
				 .attrs = op->attrs, .flags = op->flags,
				 .leaf_size = op->leaf_size));

	if (need < 0)
		return;
	if (need > s->cache.capacity)
		need = s->cache.capacity;
	if (need > s->cache.nr)
		/* On failure the operation reports SLAT_E_NOMEM itself. */
		(void)slat_hosted_cache_topup(&s->h, &s->cache,
					      (uint32_t)need);
}

static int print_lookup(const struct script *s, uint64_t ipa)
{
	struct slat_leaf leaf;
	char line[256];
	int rc = slat_lookup(&s->t, slat_ipa(ipa), &leaf);

	if (rc == SLAT_E_NOENT) {
		fprintf(s->out, "lookup 0x%016" PRIx64 ": not mapped\n", ipa);
		return SLAT_OK;
	}
	if (rc < 0)
		return rc;
	dump_format_leaf(slat_ipa_v(leaf.base), leaf.size, leaf.level,
			 slat_pa_v(leaf.pa) - (ipa - slat_ipa_v(leaf.base)),
			 leaf.attrs, line, sizeof(line));
	fprintf(s->out, "lookup 0x%016" PRIx64 " -> 0x%016" PRIx64 ": %s\n",
		ipa, slat_pa_v(leaf.pa), line);
	return SLAT_OK;
}

/* "0x0000000040000000+8K" */
static void print_run(FILE *f, uint64_t ipa, uint64_t size)
{
	char sz[32];

	fprintf(f, " 0x%016" PRIx64 "+%s", ipa, dump_size(size, sz));
}

/*
 * slat_dirty_read: the count, then the dirty pages as runs of IPAs (at
 * most 8):
 * dirty 0x0000000040000000+2M: 3 of 512 pages (now clean): 0x...+4K 0x...+8K
 */
static int run_dirty(struct script *s, const struct op *op)
{
	uint64_t g = s->cfg.granule, pages = op->size / g, nruns = 0;
	uint64_t *bitmap;
	int64_t rc;
	char sz[32];

	topup(s, SLAT_OP_DIRTY_CLEAR, op);
	/* one word more than needed: a zero size still gets a buffer */
	bitmap = calloc(pages / 64 + 1, sizeof(*bitmap));
	if (!bitmap) {
		fprintf(stderr, "slat-dump: out of memory\n");
		exit(1);
	}
	struct slat_op args = { .flush = op->policy, .cache = &s->cache };
	rc = slat_dirty_read(&s->t, slat_ipa(op->ipa), op->size, bitmap,
			     pages / 64 + 1, op->clear, &args);
	if (rc < 0) {
		free(bitmap);
		return (int)rc;
	}
	fprintf(s->out, "dirty 0x%016" PRIx64 "+%s: %" PRId64 " of %" PRIu64
		" page%s%s%s", op->ipa, dump_size(op->size, sz), rc, pages,
		pages == 1 ? "" : "s",
		op->clear && rc ? " (now clean)" : "", rc ? ":" : "");
	for (uint64_t i = 0; i < pages;) {
		uint64_t j = i;

		while (j < pages && (bitmap[j / 64] >> (j % 64) & 1))
			j++;
		if (j == i) {
			i++;
			continue;
		}
		if (++nruns <= 8)
			print_run(s->out, op->ipa + i * g, (j - i) * g);
		i = j;
	}
	if (nruns > 8)
		fprintf(s->out, " ... (%" PRIu64 " runs)", nruns);
	fputc('\n', s->out);
	free(bitmap);
	return SLAT_OK;
}

/*
 * slat_hw_access: the CPU's walk, with its updates.
 * hw-access 0x0000000040001234 w -> 0x0000000880001234: LEAF
 * hw-access 0x0000000040001234 w: permission fault at L3
 */
static int run_hw_access(struct script *s, const struct op *op)
{
	static const char *const faults[] = {
		"", "translation fault", "permission fault",
		"access flag fault",
	};
	struct slat_hw_result res;
	struct slat_leaf leaf;
	char line[256];
	int rc = slat_hw_access(&s->t, slat_ipa(op->ipa), op->access, &res);

	if (rc < 0)
		return rc;
	if (res.fault != SLAT_FAULT_NONE) {
		fprintf(s->out, "hw-access 0x%016" PRIx64 " %s: %s at L%d\n",
			op->ipa, op->access_word,
			res.fault <= SLAT_FAULT_ACCESS_FLAG ? faults[res.fault]
							    : "fault",
			res.level);
		return SLAT_OK;
	}
	/* the leaf as the access left it */
	rc = slat_lookup(&s->t, slat_ipa(op->ipa), &leaf);
	if (rc < 0)
		return rc;
	dump_format_leaf(slat_ipa_v(leaf.base), leaf.size, leaf.level,
			 slat_pa_v(leaf.pa) - (op->ipa - slat_ipa_v(leaf.base)),
			 leaf.attrs, line, sizeof(line));
	fprintf(s->out, "hw-access 0x%016" PRIx64 " %s -> 0x%016" PRIx64
		": %s\n", op->ipa, op->access_word, slat_pa_v(res.pa), line);
	return SLAT_OK;
}

static int run_young(struct script *s, const struct op *op)
{
	bool clear = op->syn->kind == OP_CLEAR_YOUNG;
	char sz[32];
	int rc = slat_test_clear_young(&s->t, slat_ipa(op->ipa), op->size,
				       clear, NULL);

	if (rc < 0)
		return rc;
	fprintf(s->out, "%s 0x%016" PRIx64 "+%s: %s\n", op->syn->name, op->ipa,
		dump_size(op->size, sz),
		rc ? (clear ? "young (now old)" : "young") : "not young");
	return SLAT_OK;
}

/*
 * snapshot FILE: the raw image now, so that a script can be checked from
 * an image in its middle.
 * snapshot mid.img: 5 page records, 1030 leaves
 */
static int run_snapshot(struct script *s, const char *file)
{
	uint32_t records;
	size_t leaves;
	char err[512];

	if (script_write_raw(s, file, &records, &leaves, err, sizeof(err))) {
		fprintf(stderr, "%s:%u: ", script_name(s), s->line);
		text_printf_safe(stderr, "snapshot: %s (check that the "
				 "directory exists and can be written, and the "
				 "space there)\n", err);
		return 1;
	}
	fprintf(s->out, "snapshot %s: %" PRIu32 " page record%s, %zu lea%s\n",
		file, records, records == 1 ? "" : "s", leaves,
		leaves == 1 ? "f" : "ves");
	return 0;
}

/* The backing's largest leaf, the same everywhere (recover max-level=). */
static int const_max_level(void *arg, slat_ipa_t ipa)
{
	(void)ipa;
	return *(const int *)arg;
}

/* The range operations: their status, and op->done in @done. */
static int run_range_op(struct script *s, const struct op *op,
			uint64_t *done)
{
	struct slat_table *t = &s->t;
	slat_ipa_t ipa = slat_ipa(op->ipa);
	struct slat_op args = { .flush = op->policy, .cache = &s->cache };
	struct slat_recovery how = { .strategy = op->strategy };
	int rc;

	switch (op->syn->kind) {
	case OP_MAP:
		topup(s, SLAT_OP_MAP, op);
		args.flags = op->flags;
		args.flush = SLAT_FLUSH_ENTRY;
		rc = slat_map(t, ipa, op->size, slat_pa(op->pa), op->attrs,
			      &args);
		break;
	case OP_UNMAP:
		topup(s, SLAT_OP_UNMAP, op);
		rc = slat_unmap(t, ipa, op->size, &args);
		break;
	case OP_WRPROTECT:
		topup(s, SLAT_OP_WRPROTECT, op);
		args.flags = op->flags;
		rc = slat_wrprotect(t, ipa, op->size, &args);
		break;
	case OP_RESTRICT:
		topup(s, SLAT_OP_RESTRICT, op);
		args.flags = op->flags;
		rc = slat_restrict(t, ipa, op->size, op->attrs, &args);
		break;
	case OP_RELAX:
		topup(s, SLAT_OP_RELAX, op);
		args.flags = op->flags;
		rc = slat_relax(t, ipa, op->size, op->attrs, &args);
		break;
	case OP_SPLIT:
		topup(s, SLAT_OP_SPLIT, op);
		args.flags = op->flags;
		args.flush = SLAT_FLUSH_ENTRY;
		rc = slat_split(t, ipa, op->size, op->leaf_size, &args);
		break;
	case OP_RECOVER:
		/* recover allocates nothing: no cache */
		args.cache = NULL;
		if (op->max_level != SLAT_LEVEL_ANY) {
			how.max_level = const_max_level;
			how.arg = (void *)&op->max_level;
		}
		rc = slat_recover(t, ipa, op->size, &how, &args);
		break;
	case OP_FLUSH:
		args.cache = NULL;
		rc = slat_flush(t, ipa, op->size, &args);
		break;
	default:
		return SLAT_E_INVAL;
	}
	*done = args.done;
	return rc;
}

/* Append ", NAME N" to @buf for each counter @op moved (after - before). */
static void stats_moved(char *buf, size_t len, const struct slat_stats *b,
			const struct slat_stats *a)
{
	static const char *const writes[SLAT_WRITE_KINDS] = {
		"leaf", "table", "clear", "break", "attr" };
	static const char *const tlbis[SLAT_TLBI_KINDS] = {
		"tlbi ipa", "tlbi ipa-local", "tlbi range", "tlbi vmid" };
	const struct { const char *name; uint64_t before, after; } c[] = {
		{ "visited", b->visited, a->visited },
		{ "d-cache calls", b->dcache_calls, a->dcache_calls },
		{ "i-cache calls", b->icache_calls, a->icache_calls },
		{ "skip-cmo", b->cmo_skipped, a->cmo_skipped },
		{ "pages allocated", b->pages_alloc, a->pages_alloc },
		{ "pages freed", b->pages_freed, a->pages_freed },
	};
	size_t n = strlen(buf);

	for (int i = 0; i < SLAT_WRITE_KINDS; i++)
		if (a->written[i] != b->written[i])
			n += (size_t)snprintf(buf + n, len - n, ", write %s %"
					      PRIu64, writes[i],
					      a->written[i] - b->written[i]);
	for (int i = 0; i < SLAT_TLBI_KINDS; i++)
		if (a->tlbi[i] != b->tlbi[i])
			n += (size_t)snprintf(buf + n, len - n, ", %s %" PRIu64,
					      tlbis[i], a->tlbi[i] - b->tlbi[i]);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]) && n < len; i++)
		if (c[i].after != c[i].before)
			n += (size_t)snprintf(buf + n, len - n, ", %s %" PRIu64,
					      c[i].name, c[i].after - c[i].before);
}

static int run_op(struct script *s, struct op *op)
{
	enum op_kind k = op->syn->kind;
	struct slat_stats before;
	uint64_t done = 0;
	int rc;

	if (s->verbose && s->stats)
		slat_stats_read(&s->t, &before);
	switch (k) {
	case OP_MKYOUNG:
		rc = slat_mkyoung(&s->t, slat_ipa(op->ipa), 0);
		break;
	case OP_CLEAR_YOUNG:
	case OP_TEST_YOUNG:
		rc = run_young(s, op);
		break;
	case OP_LOOKUP:
		rc = print_lookup(s, op->ipa);
		break;
	case OP_DIRTY:
		rc = run_dirty(s, op);
		break;
	case OP_HW_ACCESS:
		rc = run_hw_access(s, op);
		break;
	case OP_SNAPSHOT:
		return run_snapshot(s, op->file);
	default:
		rc = run_range_op(s, op, &done);
	}
	if (rc < 0) {
		char advice[512];

		advise(s, op, rc, advice, sizeof(advice));
		if (op->has_size && done && done < op->size) {
			size_t n = strlen(advice);

			snprintf(advice + n, sizeof(advice) - n,
				 "; 0x%" PRIx64 " bytes were done", done);
		}
		return error(s, op->syn->name, slat_strerror(rc), "%s",
			     advice);
	}
	if (s->verbose) {
		char moved[512] = "";

		if (s->stats) {
			struct slat_stats after;

			slat_stats_read(&s->t, &after);
			stats_moved(moved, sizeof(moved), &before, &after);
		}
		fprintf(s->out, "# %s:%u: %s: %s%s\n", script_name(s), s->line,
			op->syn->name,
			rc == SLAT_NOTHING_TO_DO ? "nothing to do" : "ok", moved);
	}
	return 0;
}

static int parse_number(struct script *s, const char *op, const char *what,
			const char *tok, uint64_t *v)
{
	char buf[SCRIPT_LINE_MAX + 96];

	if (dump_parse_u64(tok, v))
		return 0;
	snprintf(buf, sizeof(buf), "bad %s \"%s\"", what, tok);
	return error(s, op, buf,
		     "write hex like 0x40000000, or decimal with an "
		     "optional K/M/G/T suffix: 4K, 2M, 1G");
}

/* ---- the words after IPA and SIZE ---- */

static bool parse_policy(const char *w, enum slat_tlbi_policy *p)
{
	static const char *const names[] = { "entry", "range", "vmid", "none" };

	if (strncmp(w, "flush=", 6))
		return false;
	for (int i = 0; i < 4; i++) {
		if (!strcmp(w + 6, names[i])) {
			*p = (enum slat_tlbi_policy)i;
			return true;
		}
	}
	return false;
}

static int parse_map_args(struct script *s, struct op *op, char **tok, int n)
{
	const char *name = op->syn->name;
	char why[256];
	int a = 0;

	if (parse_number(s, name, "PA", tok[a++], &op->pa))
		return 2;
	op->has_pa = true;
	if (!parse_attrs(tok[a++], false, &op->attrs, why, sizeof(why)))
		return error(s, name, why,
			     "ATTRS is like rw, rwx, r-x, ro, plus ,device ,nc "
			     ",normal (ept, npt: ,uc ,wc ,wb) ,sw=N ,xu ,xk ,ipat "
			     ",sve (arm-s1: ,user ,ng)");
	for (; a < n; a++) {
		uint64_t cap;
		int shift;

		if (!strcmp(tok[a], "pages")) {
			op->flags |= SLAT_MAP_PAGES;
		} else if (!strcmp(tok[a], "noreplace")) {
			op->flags |= SLAT_MAP_NO_REPLACE;
		} else if (!strcmp(tok[a], "break-block")) {
			op->flags |= SLAT_MAP_BREAK_BLOCK;
		} else if (!strcmp(tok[a], "skip-cmo")) {
			op->flags |= SLAT_SKIP_CMO;
		} else if (!strncmp(tok[a], "cap=", 4)) {
			if (!dump_parse_u64(tok[a] + 4, &cap) ||
			    (shift = log2_exact(cap)) < 0 ||
			    cap < s->cfg.granule)
				return error(s, name, "bad cap",
					     "\"%s\": cap= takes a power of two "
					     "of at least the granule, e.g. "
					     "cap=2M", tok[a]);
			op->flags = (op->flags & ~SLAT_MAP_CAP(0x3f)) |
				    SLAT_MAP_CAP(shift);
		} else {
			return error(s, name, "unknown flag",
				     "\"%s\": map flags are pages, cap=SIZE, "
				     "noreplace, break-block and skip-cmo",
				     tok[a]);
		}
	}
	return 0;
}

/* unmap, wrprotect, restrict, dirty: flush= (and dirty's clear,
 * wrprotect's and restrict's no-holes). */
static int parse_policy_args(struct script *s, struct op *op, char **tok,
			     int n)
{
	bool dirty = op->syn->kind == OP_DIRTY;
	bool holes = op->syn->kind == OP_WRPROTECT ||
		     op->syn->kind == OP_RESTRICT;

	for (int a = 0; a < n; a++) {
		if (dirty && !strcmp(tok[a], "clear"))
			op->clear = true;
		else if (holes && !strcmp(tok[a], "no-holes"))
			op->flags |= SLAT_NO_HOLES;
		else if (!parse_policy(tok[a], &op->policy))
			return error(s, op->syn->name, "unknown flag",
				     "\"%s\": write %sflush=entry, flush=range, "
				     "flush=vmid or flush=none%s", tok[a],
				     dirty ? "clear, " : "",
				     holes ? ", or no-holes" : "");
	}
	/* one bit per page: keep the bitmap reasonable */
	if (dirty && op->size / s->cfg.granule > (1u << 24))
		return error(s, op->syn->name, "range too large",
			     "dirty reports one bit per page; ask for at most "
			     "%u pages at a time", 1u << 24);
	return 0;
}

static int parse_access(struct script *s, struct op *op, const char *w)
{
	static const struct {
		const char *name;
		unsigned access;
	} acc[] = {
		{ "r", SLAT_ACCESS_READ },
		{ "w", SLAT_ACCESS_WRITE },
		{ "x", SLAT_ACCESS_EXEC_EL1 },
		{ "xk", SLAT_ACCESS_EXEC_EL1 },
		{ "xu", SLAT_ACCESS_EXEC_EL0 },
	};

	for (size_t i = 0; i < sizeof(acc) / sizeof(acc[0]); i++) {
		if (!strcmp(w, acc[i].name)) {
			op->access = acc[i].access;
			op->access_word = acc[i].name;
			return 0;
		}
	}
	return error(s, op->syn->name, "unknown access",
		     "\"%s\": write r (read), w (write), x or xk (execute, "
		     "EL1/supervisor) or xu (execute, EL0/user)", w);
}

/* relax: flush= (this CPU's invalidations only), skip-cmo, no-holes. */
static int parse_relax_args(struct script *s, struct op *op, char **tok,
			    int n)
{
	for (int a = 0; a < n; a++) {
		if (!strcmp(tok[a], "skip-cmo"))
			op->flags |= SLAT_SKIP_CMO;
		else if (!strcmp(tok[a], "no-holes"))
			op->flags |= SLAT_NO_HOLES;
		else if (!parse_policy(tok[a], &op->policy))
			return error(s, "relax", "unknown flag",
				     "\"%s\": after PERMS, relax takes "
				     "flush=entry, flush=range, flush=vmid, "
				     "flush=none, skip-cmo and no-holes", tok[a]);
	}
	return 0;
}

/* split: leaf=SIZE, no-skip; flush= is refused, not ignored. */
static int parse_split_args(struct script *s, struct op *op, char **tok,
			    int n)
{
	enum slat_tlbi_policy p;
	bool leaf = false;

	for (int a = 0; a < n; a++) {
		if (!strcmp(tok[a], "no-skip")) {
			op->flags |= SLAT_SPLIT_NO_SKIP;
		} else if (!strncmp(tok[a], "leaf=", 5)) {
			if (leaf)
				return error(s, "split", "leaf= given twice",
					     "\"%s\": give one leaf size",
					     tok[a]);
			if (!dump_parse_u64(tok[a] + 5, &op->leaf_size) ||
			    !op->leaf_size)
				return error(s, "split", "bad leaf size",
					     "\"%s\": leaf= takes a size, e.g. "
					     "leaf=4K or leaf=2M", tok[a]);
			leaf = true;
		} else if (parse_policy(tok[a], &p)) {
			return error(s, "split", "no flush policy",
				     "\"%s\": a split invalidates each block "
				     "itself before its table is installed "
				     "(break-before-make), so no policy "
				     "applies; drop flush=", tok[a]);
		} else {
			return error(s, "split", "unknown flag",
				     "\"%s\": split takes leaf=SIZE and "
				     "no-skip", tok[a]);
		}
	}
	return 0;
}

/* recover: the strategy, then max-level=N and flush= in any order. */
static int parse_recover_args(struct script *s, struct op *op, char **tok,
			      int n)
{
	static const char *const names[] = { "zap-leaf", "zap-table",
					      "promote" };
	int a, i;

	for (i = 0; i < 3; i++)
		if (!strcmp(tok[0], names[i]))
			break;
	if (i == 3)
		return error(s, "recover", "unknown strategy",
			     "\"%s\": write zap-leaf, zap-table or promote "
			     "after IPA and SIZE", tok[0]);
	op->strategy = (enum slat_recover_strategy)i;
	op->max_level = SLAT_LEVEL_ANY;
	for (a = 1; a < n; a++) {
		uint64_t v;

		if (!strncmp(tok[a], "max-level=", 10)) {
			if (op->max_level != SLAT_LEVEL_ANY)
				return error(s, "recover",
					     "max-level= given twice",
					     "\"%s\": give one level", tok[a]);
			if (!dump_parse_u64(tok[a] + 10, &v) || v > 3)
				return error(s, "recover", "bad max-level",
					     "\"%s\": max-level= takes a level, "
					     "0 to 3: the largest leaf the "
					     "backing allows (2: 2M blocks with "
					     "4K pages, 3: no block)", tok[a]);
			op->max_level = (int)v;
		} else if (!parse_policy(tok[a], &op->policy)) {
			return error(s, "recover", "unknown flag",
				     "\"%s\": after the strategy, recover "
				     "takes max-level=N and flush=entry, "
				     "flush=range, flush=vmid or flush=none",
				     tok[a]);
		}
	}
	return 0;
}

/* The words after IPA and SIZE (@tok[0..n-1]), by operation. */
static int parse_rest(struct script *s, struct op *op, char **tok, int n)
{
	char why[256];

	op->policy = SLAT_FLUSH_ENTRY;
	switch (op->syn->kind) {
	case OP_MAP:
		return parse_map_args(s, op, tok, n);
	case OP_UNMAP:
	case OP_WRPROTECT:
	case OP_DIRTY:
		return parse_policy_args(s, op, tok, n);
	case OP_HW_ACCESS:
		return parse_access(s, op, tok[0]);
	case OP_RELAX:
		if (!parse_attrs(tok[0], true, &op->attrs, why, sizeof(why)))
			return error(s, op->syn->name, why,
				     "PERMS is like w, rw, x, rwx, xu or xk");
		return parse_relax_args(s, op, tok + 1, n - 1);
	case OP_RESTRICT:
		if (!parse_attrs(tok[0], true, &op->attrs, why, sizeof(why)))
			return error(s, op->syn->name, why,
				     "PERMS is like w, x, wx, r, xu or xk");
		return parse_policy_args(s, op, tok + 1, n - 1);
	case OP_SPLIT:
		return parse_split_args(s, op, tok, n);
	case OP_RECOVER:
		return parse_recover_args(s, op, tok, n);
	case OP_SNAPSHOT:
		op->file = tok[0];
		return 0;
	default:
		return 0;
	}
}

static const struct op_syntax *find_op(const char *name)
{
	for (size_t i = 0; i < NR_OPS; i++)
		if (!strcmp(name, ops[i].name))
			return &ops[i];
	return NULL;
}

static int unknown_op(const struct script *s, const char *name)
{
	char list[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < NR_OPS; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i ? (i + 1 == NR_OPS ? " and " : ", ")
					  : "", ops[i].name);
	return error(s, name, "unknown operation", "operations are %s", list);
}

static int parse_line(struct script *s, char **tok, int n)
{
	const struct op_syntax *syn = find_op(tok[0]);
	struct op op = { 0 };
	int rc, a = 1;

	if (!syn)
		return unknown_op(s, tok[0]);
	if (n - 1 < syn->min_args || n - 1 > syn->max_args)
		return error(s, syn->name,
			     n - 1 < syn->min_args ? "missing arguments" :
						     "too many arguments",
			     "write: %s", syn->usage);
	if (syn->kind == OP_CONFIG) {
		if (s->ready)
			return error(s, "config", "too late",
				     "the config line must come before the "
				     "first operation");
		rc = parse_config(s, tok, n);
		return rc ? rc : table_setup(s, "config");
	}
	if (!s->ready) {
		rc = table_setup(s, syn->name);
		if (rc)
			return rc;
	}

	op.syn = syn;
	if ((syn->args & ARG_IPA) &&
	    (rc = parse_number(s, syn->name, "IPA", tok[a++], &op.ipa)))
		return rc;
	if (syn->args & ARG_SIZE) {
		if ((rc = parse_number(s, syn->name, "size", tok[a++],
				       &op.size)))
			return rc;
		op.has_size = true;
	}
	rc = parse_rest(s, &op, tok + a, n - a);
	return rc ? rc : run_op(s, &op);
}

int script_run(struct script *s, FILE *in, const char *path)
{
	struct text_in text;
	char *line;
	size_t len;
	int rc;

	s->path = path;
	s->line = 0;
	if (!s->cfg.format) {
		s->cfg.format = SLAT_FMT_ARM_S2;
		s->cfg.granule = 4096;
		s->cfg.ia_bits = 40;
		s->cfg.pa_bits = 48;
	}
	if (!text_in_open(&text, in, "", script_name(s), "script",
			  SCRIPT_LINE_MAX, SCRIPT_LINES_MAX))
		return 1;
	while ((rc = text_in_line(&text, &line, &len)) == 1) {
		char *tok[MAX_TOKENS + 1], *save = NULL, *hash, *w;
		int n = 0;

		s->line = (unsigned)text.line;
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		for (w = strtok_r(line, " \t\r", &save); w;
		     w = strtok_r(NULL, " \t\r", &save)) {
			if (n == MAX_TOKENS) {
				rc = error(s, tok[0], "line too long",
					   "one operation per line");
				goto out;
			}
			tok[n++] = w;
		}
		if (!n)
			continue;
		rc = parse_line(s, tok, n);
		if (rc)
			goto out;
		s->ops++;
	}
	/* An empty script still shows its (empty) table. */
	if (!rc && !s->ready)
		rc = table_setup(s, "config");
out:
	text_in_close(&text);
	return rc;
}

/* The counters as the "stats" member of the --json document. */
void script_json_stats(const struct script *s, FILE *f)
{
	struct slat_stats stats;
	const struct slat_stats *st = &stats;

	slat_stats_read(&s->t, &stats);

	fprintf(f,
		",\n \"stats\": {\"visited\": %" PRIu64 ",\n  \"writes\": "
		"{\"leaf\": %" PRIu64 ", \"table\": %" PRIu64 ", \"clear\": %"
		PRIu64 ", \"break\": %" PRIu64 ", \"attr\": %" PRIu64 "},\n",
		st->visited, st->written[SLAT_WRITE_LEAF],
		st->written[SLAT_WRITE_TABLE], st->written[SLAT_WRITE_CLEAR],
		st->written[SLAT_WRITE_BREAK], st->written[SLAT_WRITE_ATTR]);
	fprintf(f,
		"  \"tlbi\": {\"ipa\": %" PRIu64 ", \"ipa_local\": %" PRIu64
		", \"range\": %" PRIu64 ", \"vmid\": %" PRIu64 "},\n",
		st->tlbi[SLAT_TLBI_IPA], st->tlbi[SLAT_TLBI_IPA_LOCAL],
		st->tlbi[SLAT_TLBI_RANGE], st->tlbi[SLAT_TLBI_VMID]);
	fprintf(f,
		"  \"dcache\": {\"calls\": %" PRIu64 ", \"bytes\": %" PRIu64
		"}, \"icache\": {\"calls\": %" PRIu64 ", \"bytes\": %" PRIu64
		"}, \"cmo_skipped\": %" PRIu64 ",\n",
		st->dcache_calls, st->dcache_bytes, st->icache_calls,
		st->icache_bytes, st->cmo_skipped);
	fprintf(f,
		"  \"pages\": {\"allocated\": %" PRIu64 ", \"freed\": %"
		PRIu64 ", \"deferred\": %" PRIu64 ", \"in_use\": %" PRIu64
		"}, \"retries\": %" PRIu64 "}",
		st->pages_alloc, st->pages_freed, st->pages_deferred,
		slat_hosted_table_pages(&s->h), st->retries);
}

void script_print_stats(const struct script *s, FILE *f)
{
	struct slat_stats stats;
	const struct slat_stats *st = &stats;

	slat_stats_read(&s->t, &stats);
	char a[32], b[32];

	fprintf(f, "stats: entries visited %" PRIu64 "\n", st->visited);
	fprintf(f,
		"stats: descriptor writes: leaf %" PRIu64 ", table %" PRIu64
		", clear %" PRIu64 ", break %" PRIu64 ", attr %" PRIu64 "\n",
		st->written[SLAT_WRITE_LEAF], st->written[SLAT_WRITE_TABLE],
		st->written[SLAT_WRITE_CLEAR], st->written[SLAT_WRITE_BREAK],
		st->written[SLAT_WRITE_ATTR]);
	fprintf(f,
		"stats: tlbi: ipa %" PRIu64 ", ipa-local %" PRIu64
		", range %" PRIu64 ", vmid %" PRIu64 "\n",
		st->tlbi[SLAT_TLBI_IPA], st->tlbi[SLAT_TLBI_IPA_LOCAL],
		st->tlbi[SLAT_TLBI_RANGE], st->tlbi[SLAT_TLBI_VMID]);
	fprintf(f,
		"stats: d-cache clean+invalidate: %" PRIu64 " calls, %s; "
		"i-cache invalidate: %" PRIu64 " calls, %s; left to the "
		"caller (skip-cmo): %" PRIu64 "\n",
		st->dcache_calls, dump_size(st->dcache_bytes, a),
		st->icache_calls, dump_size(st->icache_bytes, b),
		st->cmo_skipped);
	fprintf(f,
		"stats: table pages: %" PRIu64 " allocated, %" PRIu64
		" freed (%" PRIu64 " deferred), %" PRIu64
		" in use with the root; retries %" PRIu64 "\n",
		st->pages_alloc, st->pages_freed, st->pages_deferred,
		slat_hosted_table_pages(&s->h), st->retries);
}
