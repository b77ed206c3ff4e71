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

#define MAX_TOKENS 16

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
};

static const struct op_syntax {
	const char *name;
	enum op_kind kind;
	int min_args, max_args;
	const char *usage;
} ops[] = {
	{ "config", OP_CONFIG, 0, 8,
	  "config arm-s2 granule=4k|16k|64k ia=BITS pa=BITS fwb=on|off "
	  "xnx=on|off dic=on|off hwdirty=on|off, or config ept levels=4|5 "
	  "ia=BITS pa=BITS ad=on|off mbec=on|off xonly=on|off" },
	{ "map", OP_MAP, 4, 8,
	  "map IPA SIZE PA ATTRS [pages|cap=SIZE|noreplace|skip-cmo]" },
	{ "unmap", OP_UNMAP, 2, 3,
	  "unmap IPA SIZE [flush=entry|range|vmid|none]" },
	{ "wrprotect", OP_WRPROTECT, 2, 3,
	  "wrprotect IPA SIZE [flush=entry|range|vmid|none]" },
	{ "relax", OP_RELAX, 3, 3, "relax IPA SIZE PERMS" },
	{ "mkyoung", OP_MKYOUNG, 1, 1, "mkyoung IPA" },
	{ "clear-young", OP_CLEAR_YOUNG, 2, 2, "clear-young IPA SIZE" },
	{ "test-young", OP_TEST_YOUNG, 2, 2, "test-young IPA SIZE" },
	{ "lookup", OP_LOOKUP, 1, 1, "lookup IPA" },
	{ "dirty", OP_DIRTY, 2, 4,
	  "dirty IPA SIZE [clear] [flush=entry|range|vmid|none]" },
	{ "hw-access", OP_HW_ACCESS, 2, 2, "hw-access IPA r|w|x|xu|xk" },
	{ "flush", OP_FLUSH, 2, 2, "flush IPA SIZE" },
};

/* One parsed operation. */
struct op {
	const struct op_syntax *syn;
	uint64_t ipa, size, pa;
	bool has_size, has_pa;
	uint32_t attrs;  /* map: attributes; relax: permissions */
	uint32_t flags;  /* map: SLAT_MAP_* */
	enum slat_tlbi_policy policy;
	bool clear;      /* dirty */
	unsigned access; /* hw-access: SLAT_ACCESS_* */
	const char *access_word; /* hw-access: as written (r, w, x, ...) */
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
	char advice[512];
	va_list ap;

	va_start(ap, advice_fmt);
	vsnprintf(advice, sizeof(advice), advice_fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s:%u: %s: %s (%s)\n", script_name(s), s->line, op,
		what, advice);
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
 * "wb", "wc", "uc"), "sw=N", "xu"/"xk" (execute at EL0/EL1 only), and EPT's
 * "ipat" (ignore PAT) and "sve" (suppress #VE). With @perms_only, only
 * permissions and xu/xk.
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

static int table_setup(struct script *s, const char *op)
{
	struct slat_geometry geo;
	uint8_t pa_bits = s->cfg.pa_bits ? s->cfg.pa_bits : 48;
	uint64_t arena = round_up(s->arena_bytes, 65536);
	uint64_t pa_top, pa_base = 0;
	int rc;

	rc = slat_config_geometry(&s->cfg, &geo);
	if (rc < 0) {
		if (s->cfg.format == SLAT_FMT_EPT &&
		    (s->cfg.features & (SLAT_FEAT_FWB | SLAT_FEAT_XNX |
					SLAT_FEAT_DIC | SLAT_FEAT_LPA2)))
			return error(s, op, slat_strerror(rc),
				     "fwb, xnx, dic and lpa2 are Arm features; ept "
				     "takes ad=, mbec= and xonly=");
		if (s->cfg.format == SLAT_FMT_EPT)
			return error(s, op, slat_strerror(rc),
				     "ept takes granule=4k, ia=32..57 (up to 48 "
				     "with levels=4, 49..57 with levels=5) and "
				     "pa=32..52");
		if (s->cfg.features & (SLAT_FEAT_EPT_MBEC | SLAT_FEAT_EPT_XONLY))
			return error(s, op, slat_strerror(rc),
				     "mbec and xonly are EPT features; write "
				     "config ept ... to use them");
		if ((s->cfg.features & SLAT_FEAT_LPA2) &&
		    s->cfg.granule == 65536)
			return error(s, op, slat_strerror(rc),
				     "lpa2 is for granule=4k or 16k (64k has "
				     "52-bit addresses without it)");
		if ((s->cfg.ia_bits > 48 || pa_bits > 48) &&
		    s->cfg.granule != 65536 &&
		    !(s->cfg.features & SLAT_FEAT_LPA2))
			return error(s, op, slat_strerror(rc),
				     "52-bit addresses need granule=64k, or "
				     "lpa2=on with 4k and 16k");
		if (s->cfg.ia_bits > pa_bits)
			return error(s, op, slat_strerror(rc),
				     "ia=%u is larger than pa=%u: the IPA size "
				     "cannot exceed the PA size; lower ia= or "
				     "raise pa=", s->cfg.ia_bits, pa_bits);
		return error(s, op, slat_strerror(rc),
			     "arm-s2 takes granule=4k|16k|64k, ia=32..48 and "
			     "pa=32..48 (52 for both with 64k or lpa2=on)");
	}
	/* Table pages sit at the top of the PA space, away from guest RAM. */
	pa_bits = geo.pa_bits;
	pa_top = pa_bits >= 64 ? UINT64_MAX : (1ull << pa_bits);
	if (arena < pa_top)
		pa_base = (pa_top - arena) & ~(uint64_t)0xffff;
	rc = slat_hosted_init(&s->h, arena, s->cfg.granule, pa_base);
	if (rc < 0) {
		fprintf(stderr,
			"slat-dump: cannot reserve a %" PRIu64
			"-byte table-page arena: %s\n", arena,
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
	if (s->out) {
		struct dump_info info = {
			.format = s->cfg.format, .granule = s->cfg.granule,
			.ia_bits = geo.ia_bits, .pa_bits = geo.pa_bits,
			.start_level = geo.start_level,
			.root_pages = geo.root_pages,
			.features = s->cfg.features,
			.root_pa = slat_pa_v(s->t.root_pa),
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

static int parse_config(struct script *s, char **tok, int n)
{
	struct slat_config *c = &s->cfg;
	bool have_ia = false, have_pa = false;
	int levels = 0;

	for (int i = 1; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		uint64_t v;
		bool on;

		if (!eq) {
			if (!strcmp(tok[i], "arm-s2") || !strcmp(tok[i], "arm"))
				c->format = SLAT_FMT_ARM_S2;
			else if (!strcmp(tok[i], "ept"))
				c->format = SLAT_FMT_EPT;
			else
				return error(s, "config", "unknown format",
					     "\"%s\": write arm-s2 or ept",
					     tok[i]);
			continue;
		}
		*eq++ = '\0';
		if (!strcmp(tok[i], "granule")) {
			if (!dump_parse_u64(eq, &v) ||
			    (v != 4096 && v != 16384 && v != 65536))
				return error(s, "config", "bad granule",
					     "\"%s\": write granule=4k, 16k or 64k",
					     eq);
			c->granule = (uint32_t)v;
		} else if (!strcmp(tok[i], "ia") || !strcmp(tok[i], "pa")) {
			if (!dump_parse_u64(eq, &v) || v < 16 || v > 64)
				return error(s, "config", "bad address size",
					     "\"%s=%s\": give the number of bits, "
					     "e.g. %s=40", tok[i], eq, tok[i]);
			if (tok[i][0] == 'i') {
				c->ia_bits = (uint8_t)v;
				have_ia = true;
			} else {
				c->pa_bits = (uint8_t)v;
				have_pa = true;
			}
		} else if (!strcmp(tok[i], "levels")) {
			if (strcmp(eq, "4") && strcmp(eq, "5"))
				return error(s, "config", "bad levels",
					     "\"levels=%s\": EPT walks have 4 or "
					     "5 levels", eq);
			levels = eq[0] - '0';
		} else if (!strcmp(tok[i], "fwb") || !strcmp(tok[i], "xnx") ||
			   !strcmp(tok[i], "dic") || !strcmp(tok[i], "hwdirty") ||
			   !strcmp(tok[i], "ad") || !strcmp(tok[i], "mbec") ||
			   !strcmp(tok[i], "xonly") || !strcmp(tok[i], "lpa2")) {
			static const struct {
				const char *name;
				uint32_t feat;
			} feats[] = {
				{ "fwb", SLAT_FEAT_FWB },
				{ "xnx", SLAT_FEAT_XNX },
				{ "dic", SLAT_FEAT_DIC },
				{ "hwdirty", SLAT_FEAT_HWDIRTY },
				{ "ad", SLAT_FEAT_HWDIRTY },
				{ "mbec", SLAT_FEAT_EPT_MBEC },
				{ "xonly", SLAT_FEAT_EPT_XONLY },
				{ "lpa2", SLAT_FEAT_LPA2 },
			};
			uint32_t f = 0;

			for (size_t j = 0; j < sizeof(feats) / sizeof(feats[0]); j++)
				if (!strcmp(tok[i], feats[j].name))
					f = feats[j].feat;
			if (!parse_onoff(eq, &on))
				return error(s, "config", "bad feature value",
					     "\"%s=%s\": write %s=on or %s=off",
					     tok[i], eq, tok[i], tok[i]);
			c->features = on ? (c->features | f) : (c->features & ~f);
		} else {
			return error(s, "config", "unknown setting",
				     "\"%s\": settings are granule=, ia=, pa=, "
				     "fwb=, xnx=, dic=, hwdirty=, lpa2= (arm-s2) and "
				     "levels=, ia=, pa=, ad=, mbec=, xonly= "
				     "(ept)", tok[i]);
		}
	}
	if (levels && c->format != SLAT_FMT_EPT)
		return error(s, "config", "levels= is for ept",
			     "arm-s2 derives its levels from granule= and ia=");
	if (c->format == SLAT_FMT_EPT) {
		/* EPT: 4-level (48-bit) unless told otherwise */
		if (!have_ia)
			c->ia_bits = levels == 5 ? 57 : 48;
		if (!have_pa)
			c->pa_bits = 0; /* 48, or 52 for a 5-level walk */
		if (levels == 4 && c->ia_bits > 48)
			return error(s, "config", "levels=4 with ia > 48",
				     "a 4-level EPT walk resolves 48 bits; "
				     "write levels=5 or ia=48");
		if (levels == 5 && c->ia_bits <= 48)
			return error(s, "config", "levels=5 with ia <= 48",
				     "a 5-level EPT walk is for ia=49..57; "
				     "write levels=4 or ia=57");
	}
	return 0;
}

/* ---- advice for a failed operation ---- */

static void advise(const struct script *s, const struct op *op, int rc,
		   char *buf, size_t len)
{
	uint64_t g = s->cfg.granule;
	const char *gn = granule_name(s->cfg.granule);
	uint8_t pa_bits = s->t.geo.pa_bits;
	uint64_t ia_end = 1ull << s->cfg.ia_bits;
	uint64_t pa_end = pa_bits >= 64 ? UINT64_MAX : 1ull << pa_bits;
	enum op_kind k = op->syn->kind;
	char sz[32];

	switch (rc) {
	case SLAT_E_ALIGN:
		if (op->ipa % g && k != OP_LOOKUP && k != OP_MKYOUNG)
			snprintf(buf, len,
				 "IPA 0x%" PRIx64 " is not aligned to the %s "
				 "granule; use 0x%" PRIx64 " or 0x%" PRIx64,
				 op->ipa, gn, op->ipa / g * g,
				 round_up(op->ipa, g));
		else if (op->has_size && op->size % g)
			snprintf(buf, len,
				 "size 0x%" PRIx64 " is not a multiple of the "
				 "%s granule; round it to 0x%" PRIx64,
				 op->size, gn, round_up(op->size, g));
		else if (op->has_pa && op->pa % g)
			snprintf(buf, len,
				 "PA 0x%" PRIx64 " is not aligned to the %s "
				 "granule; use 0x%" PRIx64 " or 0x%" PRIx64,
				 op->pa, gn, op->pa / g * g, round_up(op->pa, g));
		else
			snprintf(buf, len,
				 "addresses and sizes must be multiples of the "
				 "%s granule", gn);
		return;
	case SLAT_E_RANGE:
		if (op->has_size && op->size == 0)
			snprintf(buf, len,
				 "the size is 0; give at least one %s page", gn);
		else if (op->has_size && op->ipa + op->size < op->ipa)
			snprintf(buf, len,
				 "IPA 0x%" PRIx64 " + size 0x%" PRIx64
				 " wraps around", op->ipa, op->size);
		else if (!op->has_size && op->ipa >= ia_end)
			snprintf(buf, len,
				 "IPA 0x%" PRIx64 " is beyond the %u-bit IPA "
				 "space (0x%" PRIx64 "); lower it or raise ia= "
				 "in the config line", op->ipa, s->cfg.ia_bits,
				 ia_end);
		else if (op->ipa >= ia_end ||
			 (op->has_size && op->ipa + op->size > ia_end))
			snprintf(buf, len,
				 "the range ends at 0x%" PRIx64 ", beyond the "
				 "%u-bit IPA space (0x%" PRIx64 "); lower it or "
				 "raise ia= in the config line",
				 op->ipa + (op->has_size ? op->size : 1),
				 s->cfg.ia_bits, ia_end);
		else if (op->has_pa &&
			 (op->pa + op->size < op->pa ||
			  op->pa + op->size > pa_end))
			snprintf(buf, len,
				 "the PA range ends at 0x%" PRIx64 ", beyond "
				 "the %u-bit PA space (0x%" PRIx64 "); lower "
				 "it or raise pa= in the config line",
				 op->pa + op->size, pa_bits, pa_end);
		else
			snprintf(buf, len,
				 "keep IPA ranges inside 0..0x%" PRIx64
				 " and PA ranges inside 0..0x%" PRIx64,
				 ia_end, pa_end);
		return;
	case SLAT_E_ATTR: {
		uint32_t x = op->attrs & SLAT_X;
		bool ept = s->cfg.format == SLAT_FMT_EPT;
		uint32_t f = s->cfg.features;

		if (k == OP_MAP && x && SLAT_MT(op->attrs) == SLAT_MT_DEVICE)
			snprintf(buf, len,
				 "device memory cannot be executable; drop "
				 "the x, e.g. rw,device");
		else if (!ept && x && x != SLAT_X && !(f & SLAT_FEAT_XNX))
			snprintf(buf, len,
				 "execute at one exception level only (xu or "
				 "xk) needs FEAT_XNX; add xnx=on to the config "
				 "line or use plain x");
		else if (!ept && (op->attrs & (SLAT_IPAT | SLAT_SVE)))
			snprintf(buf, len,
				 "ipat and sve are EPT bits; arm-s2 has no "
				 "such attribute");
		else if (ept && (op->attrs & SLAT_W) && !(op->attrs & SLAT_R))
			snprintf(buf, len,
				 "EPT cannot write without read (a "
				 "misconfiguration); add r, e.g. rw");
		else if (ept && x && x != SLAT_X && !(f & SLAT_FEAT_EPT_MBEC))
			snprintf(buf, len,
				 "execute at one privilege level only (xu or "
				 "xk) needs mode-based execute control; add "
				 "mbec=on to the config line or use plain x");
		else if (ept && k == OP_MAP &&
			 !(op->attrs & (SLAT_R | SLAT_XK)))
			snprintf(buf, len,
				 "an EPT leaf needs r or (supervisor) x: with "
				 "bits 2:0 clear it would not be present");
		else if (ept && k == OP_MAP && !(op->attrs & SLAT_R) &&
			 !(f & SLAT_FEAT_EPT_XONLY))
			snprintf(buf, len,
				 "execute-only needs a CPU that supports it; "
				 "add xonly=on to the config line or add r");
		else if (k == OP_RELAX && x)
			snprintf(buf, len,
				 "relax cannot add execute to these leaves "
				 "(device memory?); leave the x out");
		else
			snprintf(buf, len,
				 "the %s format cannot express these "
				 "attributes", dump_format_name(s->cfg.format));
		return;
	}
	case SLAT_E_CONFIG:
		snprintf(buf, len,
			 "hardware dirty state is off; add %s to the "
			 "config line",
			 s->cfg.format == SLAT_FMT_EPT ? "ad=on" : "hwdirty=on");
		return;
	case SLAT_E_EXISTS:
		snprintf(buf, len,
			 "part of 0x%" PRIx64 "+%s already translates "
			 "differently; unmap it first or drop noreplace",
			 op->ipa, dump_size(op->size, sz));
		return;
	case SLAT_E_NOENT:
		if (k == OP_RELAX)
			snprintf(buf, len,
				 "part of the range is not mapped; relax only "
				 "changes existing leaves: map it first");
		else
			snprintf(buf, len,
				 "nothing is mapped at 0x%" PRIx64
				 "; map it first", op->ipa);
		return;
	case SLAT_E_NOMEM:
		snprintf(buf, len,
			 "the %s table-page arena is exhausted; run "
			 "slat-dump with a larger --arena",
			 dump_size(s->h.arena_bytes, sz));
		return;
	case SLAT_E_INVAL:
		snprintf(buf, len,
			 "libslat refused a flag or policy slat-dump passed; "
			 "this is a slat-dump or libslat bug");
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

static void topup(struct script *s, enum slat_op sop, const struct op *op)
{
	uint64_t need, end = op->ipa + op->size;

	/* Only for a plausible range: the core rejects the rest anyway. */
	if (!op->size || end < op->ipa || end > 1ull << s->cfg.ia_bits ||
	    op->ipa % s->cfg.granule || op->size % s->cfg.granule)
		return;
	need = slat_pages_needed(&s->t, sop, slat_ipa(op->ipa), op->size);
	if (need > s->cache.capacity)
		need = s->cache.capacity;
	if (need > s->cache.nr)
		/* On failure the operation reports SLAT_E_NOMEM itself. */
		(void)slat_hosted_cache_topup(&s->h, &s->cache,
					      (uint32_t)need);
}

static void print_lookup(const struct script *s, uint64_t ipa)
{
	struct slat_leaf leaf;
	char line[256];
	int rc = slat_lookup(&s->t, slat_ipa(ipa), &leaf);

	if (rc == SLAT_E_NOENT) {
		fprintf(s->out, "lookup 0x%016" PRIx64 ": not mapped\n", ipa);
		return;
	}
	dump_format_leaf(slat_ipa_v(leaf.base), leaf.size, leaf.level,
			 slat_pa_v(leaf.pa) - (ipa - slat_ipa_v(leaf.base)),
			 leaf.attrs, line, sizeof(line));
	fprintf(s->out, "lookup 0x%016" PRIx64 " -> 0x%016" PRIx64 ": %s\n",
		ipa, slat_pa_v(leaf.pa), line);
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
	rc = slat_dirty_read(&s->t, slat_ipa(op->ipa), op->size, bitmap,
			     op->clear, op->policy, 0, &s->cache);
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

static int run_op(struct script *s, struct op *op)
{
	struct slat_table *t = &s->t;
	enum op_kind k = op->syn->kind;
	uint64_t done = 0;
	int rc;

	switch (k) {
	case OP_MAP:
		topup(s, SLAT_OP_MAP, op);
		rc = slat_map(t, slat_ipa(op->ipa), op->size, slat_pa(op->pa),
			      op->attrs, op->flags, &s->cache, &done);
		break;
	case OP_UNMAP:
		topup(s, SLAT_OP_UNMAP, op);
		rc = slat_unmap(t, slat_ipa(op->ipa), op->size, op->policy,
				&s->cache, &done);
		break;
	case OP_WRPROTECT:
		topup(s, SLAT_OP_WRPROTECT, op);
		rc = slat_wrprotect(t, slat_ipa(op->ipa), op->size, op->policy,
				    &s->cache, &done);
		break;
	case OP_RELAX:
		topup(s, SLAT_OP_RELAX, op);
		rc = slat_relax(t, slat_ipa(op->ipa), op->size, op->attrs, 0,
				&s->cache, &done);
		break;
	case OP_MKYOUNG:
		rc = slat_mkyoung(t, slat_ipa(op->ipa), 0);
		break;
	case OP_CLEAR_YOUNG:
	case OP_TEST_YOUNG:
		rc = slat_test_clear_young(t, slat_ipa(op->ipa), op->size,
					   k == OP_CLEAR_YOUNG, 0);
		if (rc >= 0) {
			char sz[32];

			fprintf(s->out, "%s 0x%016" PRIx64 "+%s: %s\n",
				op->syn->name, op->ipa,
				dump_size(op->size, sz),
				rc ? (k == OP_CLEAR_YOUNG ? "young (now old)" :
							    "young") :
				     "not young");
			rc = SLAT_OK;
		}
		break;
	case OP_LOOKUP: {
		struct slat_leaf leaf;

		rc = slat_lookup(t, slat_ipa(op->ipa), &leaf);
		if (rc == SLAT_OK || rc == SLAT_E_NOENT) {
			print_lookup(s, op->ipa);
			rc = SLAT_OK;
		}
		break;
	}
	case OP_DIRTY:
		rc = run_dirty(s, op);
		break;
	case OP_HW_ACCESS:
		rc = run_hw_access(s, op);
		break;
	case OP_FLUSH:
		rc = slat_flush(t, slat_ipa(op->ipa), op->size, 0);
		break;
	default:
		rc = SLAT_E_INVAL;
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
	if (s->verbose)
		fprintf(s->out, "# %s:%u: %s: %s\n", script_name(s), s->line,
			op->syn->name,
			rc == SLAT_NOTHING_TO_DO ? "nothing to do" : "ok");
	return 0;
}

static int parse_number(struct script *s, const char *op, const char *what,
			const char *tok, uint64_t *v)
{
	char buf[96];

	if (dump_parse_u64(tok, v))
		return 0;
	snprintf(buf, sizeof(buf), "bad %s \"%s\"", what, tok);
	return error(s, op, buf,
		     "write hex like 0x40000000, or decimal with an "
		     "optional K/M/G/T suffix: 4K, 2M, 1G");
}

static int parse_line(struct script *s, char **tok, int n)
{
	const struct op_syntax *syn = NULL;
	struct op op = { 0 };
	char why[256];
	int rc, a = 1;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(tok[0], ops[i].name))
			syn = &ops[i];
	if (!syn)
		return error(s, tok[0], "unknown operation",
			     "operations are config, map, unmap, wrprotect, "
			     "relax, mkyoung, clear-young, test-young, lookup, "
			     "dirty, hw-access");
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
	if ((rc = parse_number(s, syn->name, "IPA", tok[a++], &op.ipa)))
		return rc;
	if (syn->kind != OP_MKYOUNG && syn->kind != OP_LOOKUP &&
	    syn->kind != OP_HW_ACCESS) {
		if ((rc = parse_number(s, syn->name, "size", tok[a++],
				       &op.size)))
			return rc;
		op.has_size = true;
	}
	switch (syn->kind) {
	case OP_MAP:
		if ((rc = parse_number(s, syn->name, "PA", tok[a++], &op.pa)))
			return rc;
		op.has_pa = true;
		if (!parse_attrs(tok[a++], false, &op.attrs, why, sizeof(why)))
			return error(s, syn->name, why,
				     "ATTRS is like rw, rwx, r-x, ro, plus "
				     ",device ,nc ,normal (ept: ,uc ,wc ,wb) "
				     ",sw=N ,xu ,xk ,ipat ,sve");
		for (; a < n; a++) {
			uint64_t cap;
			int shift;

			if (!strcmp(tok[a], "pages")) {
				op.flags |= SLAT_MAP_PAGES;
			} else if (!strcmp(tok[a], "noreplace")) {
				op.flags |= SLAT_MAP_NO_REPLACE;
			} else if (!strcmp(tok[a], "skip-cmo")) {
				op.flags |= SLAT_SKIP_CMO;
			} else if (!strncmp(tok[a], "cap=", 4)) {
				if (!dump_parse_u64(tok[a] + 4, &cap) ||
				    (shift = log2_exact(cap)) < 0 ||
				    cap < s->cfg.granule)
					return error(s, syn->name, "bad cap",
						     "\"%s\": cap= takes a power "
						     "of two of at least the "
						     "granule, e.g. cap=2M",
						     tok[a]);
				op.flags = (op.flags & ~SLAT_MAP_CAP(0x3f)) |
					   SLAT_MAP_CAP(shift);
			} else {
				return error(s, syn->name, "unknown flag",
					     "\"%s\": map flags are pages, "
					     "cap=SIZE, noreplace and skip-cmo",
					     tok[a]);
			}
		}
		break;
	case OP_UNMAP:
	case OP_WRPROTECT:
	case OP_DIRTY:
		op.policy = SLAT_FLUSH_ENTRY;
		for (; a < n; a++) {
			static const char *const p[] = { "entry", "range",
							 "vmid", "none" };
			bool found = false;

			if (syn->kind == OP_DIRTY && !strcmp(tok[a], "clear")) {
				op.clear = true;
				continue;
			}
			for (int i = 0; i < 4; i++) {
				if (!strncmp(tok[a], "flush=", 6) &&
				    !strcmp(tok[a] + 6, p[i])) {
					op.policy = (enum slat_tlbi_policy)i;
					found = true;
				}
			}
			if (!found)
				return error(s, syn->name, "unknown flag",
					     "\"%s\": write %sflush=entry, "
					     "flush=range, flush=vmid or "
					     "flush=none", tok[a],
					     syn->kind == OP_DIRTY ? "clear, "
								   : "");
		}
		/* one bit per page: keep the bitmap reasonable */
		if (syn->kind == OP_DIRTY && op.size / s->cfg.granule > (1u << 24))
			return error(s, syn->name, "range too large",
				     "dirty reports one bit per page; ask for at "
				     "most %u pages at a time", 1u << 24);
		break;
	case OP_HW_ACCESS: {
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
		size_t i;

		for (i = 0; i < sizeof(acc) / sizeof(acc[0]); i++)
			if (!strcmp(tok[a], acc[i].name))
				break;
		if (i == sizeof(acc) / sizeof(acc[0]))
			return error(s, syn->name, "unknown access",
				     "\"%s\": write r (read), w (write), x or "
				     "xk (execute, EL1/supervisor) or xu "
				     "(execute, EL0/user)", tok[a]);
		op.access = acc[i].access;
		op.access_word = acc[i].name;
		break;
	}
	case OP_RELAX:
		if (!parse_attrs(tok[a++], true, &op.attrs, why, sizeof(why)))
			return error(s, syn->name, why,
				     "PERMS is like w, rw, x, rwx, xu or xk");
		break;
	default:
		break;
	}
	return run_op(s, &op);
}

int script_run(struct script *s, FILE *in, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	s->path = path;
	s->line = 0;
	if (!s->cfg.format) {
		s->cfg.format = SLAT_FMT_ARM_S2;
		s->cfg.granule = 4096;
		s->cfg.ia_bits = 40;
		s->cfg.pa_bits = 48;
	}
	while ((len = getline(&line, &cap, in)) >= 0) {
		char *tok[MAX_TOKENS + 1], *save = NULL, *hash, *w;
		int n = 0;

		s->line++;
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		for (w = strtok_r(line, " \t\r\n", &save); w;
		     w = strtok_r(NULL, " \t\r\n", &save)) {
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
	if (ferror(in)) {
		fprintf(stderr, "slat-dump: %s: %s\n", path, strerror(errno));
		rc = 1;
		goto out;
	}
	/* An empty script still shows its (empty) table. */
	if (!s->ready)
		rc = table_setup(s, "config");
out:
	free(line);
	return rc;
}

void script_print_stats(const struct script *s, FILE *f)
{
	const struct slat_stats *st = &s->t.stats;
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
