/* SPDX-License-Identifier: MIT */
/*
 * slat-dump: run a script of table operations on libslat and show the table
 * (docs/slat-dump.md); or load a raw image and list it with a walker of its
 * own (docs/raw-image.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slat/hosted.h>
#include <slat/slat.h>

#include "dump.h"
#include "raw_image.h"
#include "script.h"

static const char usage[] =
"Usage: slat-dump [options] SCRIPT\n"
"  or:  slat-dump [options] --read-raw IMAGE\n"
"\n"
"Runs SCRIPT ('-' for stdin), a script of operations on a libslat table\n"
"(hosted platform, fake PAs), and prints every leaf in IPA order, one per\n"
"line, merging nothing:\n"
"  0x0000000040000000-0x0000000040200000 L2 block -> 0x0000000080000000 rw- normal young\n"
"  (IPA range, level, page or block, output PA, permissions r w x, where\n"
"  xu/xk mean execute at EL0/EL1 (user/supervisor) only, memory type,\n"
"  ipat, sve, user, ng, sw=N, young or old, dirty)\n"
"\n"
"Options:\n"
"  --hex             also list table entries, and show every descriptor in\n"
"                    hex with the PA of its table page and its [index]\n"
"  --raw FILE        write the table as a raw image (docs/raw-image.md)\n"
"  --read-raw FILE   instead of a script: load a raw image ('-' for stdin),\n"
"                    print its header and list its leaves with slat-dump's\n"
"                    own walker (with --hex and --map-svg as for a script)\n"
"  --stats           print the table's counters (struct slat_stats)\n"
"  --json            print the listing (every table entry and leaf, with\n"
"                    its descriptor) and --stats as one JSON document\n"
"                    instead of text (schema: docs/slat-dump.md)\n"
"  --map-svg FILE    draw the IPA space as SVG: one box per leaf, colored by\n"
"                    permission, blocks framed bold, holes hatched\n"
"  --arena SIZE      table-page arena (default 1G, committed lazily; at\n"
"                    most the PA space, pa= in the config line)\n"
"  -v, --verbose     print each operation's status\n"
"  -h, --help        this text\n"
"  --version         print slat-dump's version and exit\n"
"\n"
"Script (one operation per line, '#' starts a comment):\n"
"  config arm-s2 granule=4k ia=40 pa=48 fwb=off xnx=off dic=off hwdirty=off\n"
"                                    first, if at all (these are the defaults)\n"
"  config arm-s2 granule=4k ia=40 levels=4\n"
"                                    a walk of levels= lookup levels, from\n"
"                                    level 4 - levels= (default: the fewest\n"
"                                    with up to 16 concatenated root pages);\n"
"                                    any the architecture allows: 2 to 5\n"
"  config ept levels=4 ad=off mbec=off xonly=off\n"
"                                    Intel EPT (levels=5: ia=57 unless given)\n"
"  config npt levels=4\n"
"                                    AMD NPT (levels=5: ia=57 unless given;\n"
"                                    A and D always on)\n"
"  config arm-s1 granule=4k ia=48 pa=48 hwdirty=off\n"
"                                    Armv8 stage 1, a guest's own tables\n"
"  map IPA SIZE PA ATTRS [pages|cap=SIZE|noreplace|break-block|skip-cmo]\n"
"  unmap IPA SIZE [flush=entry|range|vmid|none]     (default entry)\n"
"  wrprotect IPA SIZE [flush=entry|range|vmid|none]\n"
"  relax IPA SIZE PERMS [flush=...] [skip-cmo]\n"
"                                    add permissions (w, x, rwx, xu, ...)\n"
"  mkyoung IPA                       set the access flag of the leaf\n"
"  clear-young IPA SIZE              report and clear access flags\n"
"  test-young IPA SIZE               report them only\n"
"  lookup IPA                        print the leaf translating IPA\n"
"  dirty IPA SIZE [clear] [flush=...]  report (and clear) the pages written\n"
"                                    since the last clear (hwdirty=on, ad=on)\n"
"  hw-access IPA r|w|x|xu|xk         translate an access as the CPU would,\n"
"                                    setting the access flag and dirty state\n"
"  flush IPA SIZE                    clean+invalidate the D-cache for the\n"
"                                    cacheable leaves (Arm without FWB)\n"
"  split IPA SIZE [leaf=SIZE] [no-skip]\n"
"                                    turn blocks into leaves of SIZE (default\n"
"                                    the granule); no-skip walks every level\n"
"  recover IPA SIZE zap-leaf|zap-table|promote [max-level=N] [flush=...]\n"
"                                    rebuild blocks from tables (max-level:\n"
"                                    the largest leaf the backing allows)\n"
"  snapshot FILE                     write the raw image of the table now\n"
"Numbers: hex (0x4000_0000) or decimal with K/M/G/T (4K, 2M, 1G).\n"
"ATTRS: rw, rwx, r-x, rx, ro, none, then ,device ,nc ,normal ,sw=0..15\n"
"       ,xu (execute at EL0 only) ,xk (EL1 only; both need xnx=on or\n"
"       mbec=on, not on arm-s1); EPT also ,uc ,wc ,wb (= device, nc,\n"
"       normal) ,ipat ,sve; arm-s1 ,user (EL0 access) ,ng (not global).\n"
"\n"
"Exit status: 0 success; 1 host failure (a file cannot be opened, read or\n"
"written, stdout included; out of memory; a leak in libslat); 2 an error\n"
"in the input (the script, reported as SCRIPT:LINE: op: error (what to\n"
"do), or a raw image) or on the command line.\n";

struct options {
	const char *script, *raw_out, *raw_in, *svg;
	uint64_t arena;
	bool hex, stats, verbose, have_arena, json;
};

/* No PA space is larger than 52 bits (Arm with 64K pages, EPT). */
#define ARENA_MAX (1ull << 52)

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "slat-dump: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see slat-dump --help)\n");
	return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	o->arena = 1ull << 30;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			exit(0);
		} else if (!strcmp(a, "--version")) {
			printf("slat-dump (slat) %s\n", slat_version());
			exit(0);
		} else if (!strcmp(a, "--hex")) {
			o->hex = true;
		} else if (!strcmp(a, "--stats")) {
			o->stats = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			o->verbose = true;
		} else if (!strcmp(a, "--raw")) {
			slot = &o->raw_out;
		} else if (!strcmp(a, "--read-raw")) {
			slot = &o->raw_in;
		} else if (!strcmp(a, "--map-svg")) {
			slot = &o->svg;
		} else if (!strcmp(a, "--arena")) {
			if (i + 1 == argc)
				return usage_error("%s needs a size, e.g. 4G", a);
			if (o->have_arena)
				return usage_error("--arena %s: give --arena "
						   "once", argv[i + 1]);
			o->have_arena = true;
			if (!dump_parse_u64(argv[++i], &o->arena) ||
			    o->arena < (1u << 20) || o->arena > ARENA_MAX)
				return usage_error("--arena %s: give a size from "
						   "1M to 4P (the largest PA "
						   "space), e.g. 4G", argv[i]);
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option %s", a);
		} else if (o->script) {
			return usage_error("one script only (%s is a second)",
					   a);
		} else {
			o->script = a;
		}
		if (slot) {
			if (i + 1 == argc)
				return usage_error("%s needs a file name", a);
			if (*slot)
				return usage_error("%s: give it once", a);
			*slot = argv[++i];
		}
	}
	if (o->raw_in && o->script)
		return usage_error("%s: give a script or --read-raw, not both",
				   o->script);
	if (o->raw_in && o->raw_out)
		return usage_error("%s: --raw writes the table a script built; "
				   "it does not copy an image", o->raw_out);
	/* Options that would do nothing are mistakes worth reporting. */
	if (o->raw_in && (o->stats || o->verbose || o->have_arena))
		return usage_error("%s: --stats, --verbose and --arena are about "
				   "the libslat table a script builds; an image "
				   "is read without libslat", o->raw_in);
	if (o->json && o->hex)
		return usage_error("%s", "--json lists every table entry and "
				   "descriptor already; drop --hex");
	if (!o->raw_in && !o->script)
		return usage_error("%s", "no script given ('-' reads stdin)");
	return 0;
}

/* ---- --read-raw ---- */

static void raw_visit(void *arg, const struct raw_entry *r)
{
	struct dump_entry e = {
		.ipa = r->ipa, .size = r->size, .out = r->out, .pte = r->pte,
		.table_pa = r->table_pa, .index = r->index, .attrs = r->attrs,
		.level = r->level, .table = r->table,
	};

	dump_list_push(arg, &e);
}

static void json_raw(const struct raw_image *img, const struct dump_info *info,
		     const struct dump_list *list, const char *name)
{
	dump_json_open(stdout, "raw-image", name, info);
	printf(",\n \"image\": {\"version\": %" PRIu32 ", \"records\": %"
	       PRIu32 "}", img->h.version, img->h.nr_pages);
	dump_json_entries(stdout, list);
	dump_json_close(stdout);
}

static int read_raw(const struct options *o)
{
	struct raw_image img;
	struct dump_list list = { 0 };
	struct dump_info info;
	char err[512];
	bool std_in = !strcmp(o->raw_in, "-");
	const char *name = std_in ? "<stdin>" : o->raw_in;
	FILE *f = std_in ? stdin : fopen(o->raw_in, "rb");
	int ret = 0;

	if (!f) {
		fprintf(stderr, "slat-dump: %s: %s\n", o->raw_in,
			strerror(errno));
		return 1;
	}
	ret = raw_image_read(f, &img, err, sizeof(err));
	if (!std_in)
		fclose(f);
	if (ret < 0) {
		fprintf(stderr, "slat-dump: %s: %s\n", name, err);
		return ret == RAW_IMAGE_HOST ? 1 : 2;
	}
	info = (struct dump_info){
		.format = img.h.format, .granule = img.h.granule,
		.ia_bits = img.h.ia_bits, .pa_bits = img.h.pa_bits,
		.start_level = img.h.start_level,
		.root_pages = img.h.root_pages, .features = img.h.features,
		.root_pa = img.h.root_pa,
	};
	dump_set_format(img.h.format);
	if (!o->json) {
		printf("# raw image %s: version %" PRIu32 ", %" PRIu32
		       " page records\n", name, img.h.version,
		       img.h.nr_pages);
		dump_print_info(stdout, &info, o->hex);
	}
	ret = raw_image_walk(&img, o->hex || o->json, raw_visit, &list,
			     stderr, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "slat-dump: %s: %s\n", name, err);
		ret = ret == RAW_IMAGE_HOST ? 1 : 2;
	} else {
		if (o->json)
			json_raw(&img, &info, &list, name);
		else
			dump_print_list(stdout, &list, o->hex);
		if (o->svg && dump_svg(o->svg, &info, &list, name) < 0) {
			fprintf(stderr, "slat-dump: %s: %s\n", o->svg,
				strerror(errno));
			ret = 1;
		}
	}
	dump_list_free(&list);
	raw_image_free(&img);
	return ret;
}

/*
 * At exit, whatever the path: output lost to a full disk or a closed
 * descriptor must not end with status 0.
 */
static void check_stdout(void)
{
	/* A write that already failed (one larger than the buffer, such as
	 * --help) left its errno, unless something overwrote it since. */
	int earlier = errno;
	bool failed = ferror(stdout), bad = failed;

	errno = 0;
	bad |= fflush(stdout) != 0;
	bad |= fclose(stdout) != 0;
	if (!bad)
		return;
	if (!errno && failed)
		errno = earlier;
	fprintf(stderr, "slat-dump: writing the output failed%s%s (check where "
		"stdout goes and the space there)\n", errno ? ": " : "",
		errno ? strerror(errno) : "");
	_exit(1);
}

/* After the script: the listing (text or JSON), the image, the map. */
static int show_script(const struct options *o, struct script *s,
		       const char *output, size_t output_len)
{
	struct dump_list list = { 0 };
	struct slat_geometry geo;
	struct dump_info info;
	char err[512];
	int ret = 0, rc;

	slat_config_geometry(&s->cfg, &geo);
	info = (struct dump_info){
		.format = s->cfg.format, .granule = s->cfg.granule,
		.ia_bits = geo.ia_bits, .pa_bits = geo.pa_bits,
		.start_level = geo.start_level, .root_pages = geo.root_pages,
		.features = s->cfg.features, .root_pa = slat_pa_v(dump_root_pa(&s->t)),
	};
	rc = dump_collect(&s->t, slat_hosted_ops(), &s->h, o->hex || o->json,
			  &list);
	if (rc < 0) {
		fprintf(stderr, "slat-dump: slat_walk: %s (a libslat bug)\n",
			slat_strerror(rc));
		dump_list_free(&list);
		return 1;
	}
	if (o->json) {
		dump_json_open(stdout, "script", o->script, &info);
		dump_json_output(stdout, output, output_len);
		dump_json_entries(stdout, &list);
		if (o->stats)
			script_json_stats(s, stdout);
		dump_json_close(stdout);
	} else {
		dump_print_list(stdout, &list, o->hex);
		if (o->stats)
			script_print_stats(s, stdout);
	}
	if (o->raw_out &&
	    script_write_raw(s, o->raw_out, NULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "slat-dump: %s\n", err);
		ret = 1;
	}
	if (o->svg && dump_svg(o->svg, &info, &list, o->script) < 0) {
		fprintf(stderr, "slat-dump: %s: %s\n", o->svg, strerror(errno));
		ret = 1;
	}
	dump_list_free(&list);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct script s = { 0 };
	char *output = NULL;
	size_t output_len = 0;
	FILE *in;
	int ret;

	atexit(check_stdout);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	if (o.raw_in)
		return read_raw(&o);

	if (!strcmp(o.script, "-")) {
		in = stdin;
		o.script = "<stdin>";
	} else if (!(in = fopen(o.script, "r"))) {
		fprintf(stderr, "slat-dump: %s: %s\n", o.script,
			strerror(errno));
		return 1;
	}
	s.arena_bytes = o.arena;
	s.verbose = o.verbose;
	s.stats = o.stats;
	s.hex = o.hex;
	s.out = stdout;
	/* JSON: what the script prints goes into the document. */
	if (o.json) {
		s.no_header = true;
		s.out = open_memstream(&output, &output_len);
		if (!s.out) {
			fprintf(stderr, "slat-dump: out of memory\n");
			return 1;
		}
	}
	ret = script_run(&s, in, o.script);
	if (in != stdin)
		fclose(in);
	if (o.json && fclose(s.out) != 0 && !ret) {
		fprintf(stderr, "slat-dump: out of memory\n");
		ret = 1;
	}
	if (!ret)
		ret = show_script(&o, &s, output, output_len);
	free(output);
	if (script_fini(&s) && !ret)
		ret = 1;
	return ret;
}
