/* SPDX-License-Identifier: MIT */
/*
 * How the x86 oracles' host drivers run (oracle_ept.c under Bochs,
 * oracle_npt.c under QEMU): the command line, the blob of layouts, a boot
 * of the emulator per batch, the answers ("P" lines, the same fields for
 * both programs) compared with libslat's expectations, the exit status.
 * The driver fills X's first fields and calls xrun_start(), builds each
 * layout with open_gen(), fill_layout() and put_layout(), boots with
 * xrun_flush(), and returns xrun_end().
 */
#ifndef SLAT_XORACLE_XRUN_H
#define SLAT_XORACLE_XRUN_H

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include "xgen.h"

#define SKIP 77

/* The fields of a "P" line. EPT: exit reason, qualification, guest-
 * physical address, RAX, RIP, interruption information, guest linear
 * address; NPT: EXITCODE, EXITINFO1, EXITINFO2, RAX, RIP, EXITINTINFO, 0.
 * Then the word at check_pa and the table entries on the walk. */
struct xanswer {
	uint64_t code, qual, gpa, rax, rip, info, linear, word;
	uint64_t desc[XPROBE_DESCS];
};

static struct xrun {
	/* the driver's */
	const char *name;       /* "oracle_ept" */
	const char *emu_opt;    /* the option naming the emulator: "--bochs" */
	const char *emu_name;   /* "Bochs" */
	const char *table_name; /* "EPT" */
	const char *fault_name; /* "EPT violation" */
	const char *banner_tag; /* the program's first line starts so */
	const char *corrupts[2]; /* the --corrupt choices */
	uint64_t code_call, code_fault; /* a hypercall, a fault */
	unsigned a_bit;         /* the entries' accessed flag (dirty: the next) */
	bool npt;               /* the programs' hypercall: VMMCALL, or VMCALL */
	/* the fault libslat predicts for probe @p at leaf @l (NULL: a hole) */
	void (*expect_fault)(const struct xblob_probe *p, struct expect *e,
			     const struct slat_leaf *l);
	/* after slat_hw_access faulted: the emulator's known differences on
	 * the host copy (@pre: the walk's entries before) */
	void (*fault_hook)(struct gen *g, const struct layout_rec *r,
			   const struct xblob_probe *p, const struct expect *e,
			   const uint64_t *pre);
	/* --corrupt: change a leaf in the layout's table pages */
	void (*corrupt_hook)(const struct layout_rec *r, uint8_t *pages, uint32_t nr);
	void (*usage)(FILE *f);
	void (*check_banner)(void);
	char *(*run)(const char *dir, size_t *len); /* boot on the blob */
	/* the command line */
	const char *guest, *emu, *keep, *corrupt;
	bool verbose;
	uint64_t seed, layouts;
	long only;
	/* the batch: its blob, its layouts, the blob's flags */
	uint8_t *blob;
	size_t blen, bcap;
	struct layout_rec *recs;
	size_t nrecs;
	uint32_t flags;
	/* results */
	uint64_t probes, mismatches, agreed, translated[4], faults, corrupted;
	struct ad_count ad;
	double seconds;
	unsigned boots;
	char banner[256];
	char tmpdir[64];
} X = { .only = -1, .layouts = 60 };

static void blob_put(const void *p, size_t n)
{
	oracle_put(&X.blob, &X.blen, &X.bcap, p, n);
}

static struct layout_rec *new_rec(void)
{
	X.recs = oracle_realloc(X.recs, (X.nrecs + 1) * sizeof(*X.recs));
	struct layout_rec *r = &X.recs[X.nrecs++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* ------------------------------------------------------------ layouts */

/* What libslat predicts from slat_lookup at probe @p's address, into a
 * cleared @e: the leaf's level (-1 for a hole) and, when the leaf grants
 * the access, the hypercall after it reached the leaf's host-physical
 * address; else the driver's fault (X.expect_fault). */
static void expect_from_lookup(struct gen *g, const struct xblob_probe *p,
			       struct expect *e)
{
	struct slat_leaf l;
	static const uint32_t need[] = { SLAT_R, SLAT_W, SLAT_XK };
	int ret = slat_lookup(&g->o.t, slat_ipa(p->gpa), &l);
	memset(e, 0, sizeof(*e));
	e->level = -1;
	if (ret != SLAT_OK && ret != SLAT_E_NOENT)
		die("slat_lookup(%#" PRIx64 "): %s", p->gpa, check_status_name(ret));
	if (ret == SLAT_OK) {
		e->level = l.level;
		if (l.attrs & need[access_of(p->kind)]) {
			e->reason = (uint32_t)X.code_call;
			e->hpa = slat_pa_v(l.pa);
			return;
		}
	}
	X.expect_fault(p, e, ret == SLAT_OK ? &l : NULL);
}

static void add_probe(struct gen *g, struct layout_rec *r, uint64_t gpa,
		      uint32_t kind)
{
	struct xblob_probe *p = &r->probes[r->nr_probes];
	struct expect *e = &r->exp[r->nr_probes];
	memset(p, 0, sizeof(*p));
	p->gpa = gpa;
	p->kind = kind;
	expect_from_lookup(g, p, e);
	probe_io(r, p, e, e->reason == X.code_call, X.npt);
	/* libslat's walker must agree, and plays the hardware's A/D */
	replay_guest(g, kind);
	walk_entries(g, gpa, p->desc_pa);
	uint64_t pre[XPROBE_DESCS];
	for (unsigned i = 0; i < XPROBE_DESCS; i++)
		pre[i] = p->desc_pa[i] ? arena_word(g, p->desc_pa[i]) : 0;
	struct slat_hw_result hw;
	if (slat_hw_access(&g->o.t, slat_ipa(gpa), access_of(kind), &hw))
		die("slat_hw_access(%#" PRIx64 ")", gpa);
	bool hw_ok = hw.fault == SLAT_FAULT_NONE;
	if (!hw_ok)
		X.fault_hook(g, r, p, e, pre);
	if (hw_ok != (e->reason == X.code_call) ||
	    (hw_ok && slat_pa_v(hw.pa) != e->hpa)) {
		fprintf(stderr, "layout %u probe %u: slat_hw_access and slat_lookup disagree at %#"
			PRIx64 "\n", r->id, r->nr_probes, gpa);
		X.mismatches++;
	}
	for (unsigned i = 0; i < XPROBE_DESCS; i++)
		e->desc[i] = p->desc_pa[i] ? arena_word(g, p->desc_pa[i]) : 0;
	r->nr_probes++;
}

/* Layout @id in @g: a fixed one (fixed_layout()), or random leaves and
 * operations from the generator; its record. */
static struct layout_rec *fill_layout(struct gen *g, uint32_t id, uint64_t seed)
{
	if (id < FIXED_LAYOUTS) {
		g->iwin = 0x4000000000ull;
		fixed_layout(g, id);
	} else {
		gen_items(g);
		gen_ops(g);
	}
	struct layout_rec *r = new_rec();
	r->id = id;
	r->seed = seed;
	return r;
}

/* The layout @g as record @r: its probes, its table pages (as the
 * hardware finds them: before any probe), its root pointer (EPTP, nCR3)
 * @root, into the blob. */
static void put_layout(struct gen *g, struct layout_rec *r, uint64_t root)
{
	uint32_t nr;
	uint8_t *pages = oracle_table_pages(&g->o.h, &nr);
	r->start_level = slat_table_geometry(&g->o.t)->start_level;
	while (r->nr_probes < PROBES_PER_LAYOUT) {
		uint64_t gpa;
		uint32_t kind;
		if (pick_probe(g, &gpa, &kind))
			add_probe(g, r, gpa, kind);
	}
	snapshot_descs(r, pages, nr);
	if (X.corrupt)
		X.corrupt_hook(r, pages, nr);
	struct xblob_layout hdr = {
		.magic = XBLOB_LAYOUT_MAGIC, .id = r->id, .nr_pages = nr,
		.nr_probes = r->nr_probes, .eptp = root,
	};
	if (!root)
		die("no root pointer");
	blob_put(&hdr, sizeof(hdr));
	blob_put(pages, nr * (8 + PAGE));
	blob_put(r->probes, r->nr_probes * sizeof(*r->probes));
	free(pages);
	close_gen(g);
}

/* ------------------------------------------------------------ emulator */

/* Run @argv in @dir, its standard output into out.txt there when
 * @out_stdout (else the program writes out.txt itself), its standard
 * error into err.txt; returns both, the output first: why the emulator
 * stopped, if it did, comes last. */
static char *xrun_exec(const char *dir, char *const argv[], bool out_stdout,
		       size_t *len)
{
	char out[4096], err[4096];
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	snprintf(err, sizeof(err), "%s/err.txt", dir);
	write_file(out, "", 0);
	double t0 = oracle_now();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (chdir(dir) || !freopen("/dev/null", "r", stdin) ||
		    !freopen(out_stdout ? out : "/dev/null", "w", stdout) ||
		    !freopen(err, "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	/* well past any CI run: the emulator is stuck */
	oracle_wait(pid, t0, 270, X.emu_name, &X.seconds);
	size_t elen;
	char *text = (char *)read_file(out, len);
	uint8_t *etext = read_file(err, &elen);
	text = oracle_realloc(text, *len + elen + 1);
	memcpy(text + *len, etext, elen + 1);
	*len += elen;
	free(etext);
	return text;
}

/* ------------------------------------------------------------ compare */

static const char *kind_name(uint32_t k)
{
	return k == XPROBE_LOAD ? "load" : k == XPROBE_STORE ? "store" : "fetch";
}

static void mismatch(const struct layout_rec *r, uint32_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void mismatch(const struct layout_rec *r, uint32_t i, const char *fmt, ...)
{
	const struct xblob_probe *p = &r->probes[i];
	va_list ap;
	X.mismatches++;
	if (X.mismatches > 20)
		return;
	fprintf(stderr, "DISAGREE layout %u (%s) probe %u: %s at GPA %#" PRIx64 ": ",
		r->id, r->desc, i, kind_name(p->kind), p->gpa);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  replay: %s --guest %s --seed %#" PRIx64
		" --only %u --verbose\n", X.name, X.guest, X.seed, r->id);
}

static void compare_descs(const struct layout_rec *r, uint32_t i,
			  const struct xanswer *a)
{
	const struct expect *e = &r->exp[i];
	for (unsigned k = 0; k < XPROBE_DESCS; k++) {
		if (a->desc[k] != e->desc[k])
			mismatch(r, i, "%s entry %u at %#" PRIx64 ": %s %#" PRIx64
				 ", slat_hw_access %#" PRIx64, X.table_name, k,
				 r->probes[i].desc_pa[k], X.emu_name, a->desc[k], e->desc[k]);
	}
}

/* A fault must give the expected qualification (EXITINFO1), the guest-
 * physical address to the byte, and (EPT) the guest linear address; an
 * access that goes ahead must reach the expected host-physical address. */
static void compare_probe(const struct layout_rec *r, uint32_t i,
			  const struct xanswer *a)
{
	const struct xblob_probe *p = &r->probes[i];
	const struct expect *e = &r->exp[i];
	uint64_t before = X.mismatches;
	X.probes++;
	if (a->code != e->reason) {
		mismatch(r, i, "exit %#" PRIx64 " (qualification %#" PRIx64 ", GPA %#"
			 PRIx64 ", interruption %#" PRIx64 ", RIP %#" PRIx64
			 "), expected %#x (%s)", a->code, a->qual, a->gpa, a->info,
			 a->rip, e->reason, e->reason == X.code_call
			 ? "the access completes" : X.fault_name);
		return;
	}
	if (e->reason == X.code_fault) {
		X.faults++;
		if (a->qual != e->qual || a->gpa != p->gpa || a->linear != e->linear)
			mismatch(r, i, "%s qualification %#" PRIx64 " GPA %#" PRIx64
				 " linear %#" PRIx64 ", expected %#" PRIx64 " %#" PRIx64
				 " %#" PRIx64, X.fault_name, a->qual, a->gpa, a->linear,
				 e->qual, p->gpa, e->linear);
	} else if (p->kind == XPROBE_STORE) {
		if (a->word != e->word)
			mismatch(r, i, "the word at HPA %#" PRIx64 " is %#" PRIx64
				 ", expected %#" PRIx64, p->check_pa, a->word, e->word);
	} else if (a->rax != e->rax || (p->kind == XPROBE_FETCH && a->rip != e->rip)) {
		mismatch(r, i, "RAX %#" PRIx64 " RIP %#" PRIx64 ", expected the tag %#"
			 PRIx64 " from HPA %#" PRIx64, a->rax, a->rip, e->rax, e->hpa);
	} else {
		X.translated[e->level]++;
	}
	compare_descs(r, i, a);
	if (X.mismatches == before)
		X.agreed++;
}

static bool parse_answer(const char *line, struct xanswer *a)
{
	return line[0] == 'P' && line[1] == ' ' &&
	       sscanf(line, "P %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
		      " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %"
		      SCNx64 " %" SCNx64 " %" SCNx64, &a->code, &a->qual, &a->gpa,
		      &a->rax, &a->rip, &a->info, &a->linear, &a->word, &a->desc[0],
		      &a->desc[1], &a->desc[2], &a->desc[3], &a->desc[4]) == 13;
}

static void parse_and_compare(const char *out)
{
	size_t rec = X.nrecs, done = 0, tag = strlen(X.banner_tag);
	uint32_t probe = 0;
	uint64_t seen[PROBES_PER_LAYOUT * XPROBE_DESCS];
	unsigned nseen = 0;
	bool ended = false;
	for (const char *line = out; line && *line;) {
		const char *nl = strchr(line, '\n');
		struct xanswer a;
		unsigned id;
		if (!strncmp(line, X.banner_tag, tag)) {
			snprintf(X.banner, sizeof(X.banner), "%.*s",
				 (int)(nl ? nl - line : (long)strlen(line)), line);
			X.check_banner();
		} else if (!strncmp(line, "FAIL ", 5)) {
			die("the program stopped: %.*s", (int)(nl ? nl - line : 80), line);
		} else if (sscanf(line, "L %x", &id) == 1) {
			for (rec = 0; rec < X.nrecs && X.recs[rec].id != id; rec++)
				;
			if (rec == X.nrecs)
				die("%s reports an unknown layout %u", X.emu_name, id);
			probe = 0;
			nseen = 0;
			done++;
		} else if (rec < X.nrecs && parse_answer(line, &a)) {
			const struct layout_rec *r = &X.recs[rec];
			if (probe >= r->nr_probes)
				die("layout %u: more answers than probes", r->id);
			compare_probe(r, probe, &a);
			count_ad(r, probe, a.desc, X.a_bit, seen, &nseen, &X.ad);
			if (X.verbose)
				printf("  %u.%u %s %#" PRIx64 ": exit %#" PRIx64 " qual %#"
				       PRIx64 " gpa %#" PRIx64 " rax %#" PRIx64 "\n", r->id,
				       probe, kind_name(r->probes[probe].kind),
				       r->probes[probe].gpa, a.code, a.qual, a.gpa, a.rax);
			probe++;
		} else if (!strncmp(line, "END ", 4)) {
			ended = true;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!ended || done != X.nrecs) {
		/* the emulator's own last words */
		size_t n = strlen(out);
		die("%s's run ended after %zu of %zu layouts; its output ends:\n%s",
		    X.emu_name, done, X.nrecs, out + (n > 600 ? n - 600 : 0));
	}
}

/* ------------------------------------------------------------ driver */

/* Boot the emulator on the layouts built so far, the blob's header with
 * @flags, and compare its answers. */
static void xrun_flush(uint32_t flags)
{
	if (!X.nrecs)
		return;
	X.flags = flags;
	struct xblob_hdr hdr = { .magic = XBLOB_MAGIC, .nr_layouts = (uint32_t)X.nrecs,
				 .flags = flags, .bytes = X.blen };
	memcpy(X.blob, &hdr, sizeof(hdr));
	size_t len;
	char *out = X.run(X.keep ? X.keep : X.tmpdir, &len);
	X.boots++;
	parse_and_compare(out);
	free(out);
	X.nrecs = 0;
	X.blen = 0;
	blob_put(&hdr, sizeof(hdr)); /* the next batch's header, filled later */
}

/* The temporary folder and every file the emulator left in it. */
static void remove_tmpdir(void)
{
	DIR *d = opendir(X.tmpdir);
	struct dirent *de;
	char path[sizeof(X.tmpdir) + sizeof(de->d_name) + 1];
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", X.tmpdir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(X.tmpdir);
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help")) {
			X.usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--verbose")) {
			X.verbose = true;
			continue;
		}
		if (!v) {
			X.usage(stderr);
			exit(2);
		}
		i++;
		if (!strcmp(a, "--guest"))
			X.guest = v;
		else if (!strcmp(a, "--layouts"))
			X.layouts = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seed"))
			X.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--only"))
			X.only = strtol(v, NULL, 0);
		else if (!strcmp(a, X.emu_opt))
			X.emu = v;
		else if (!strcmp(a, "--keep"))
			X.keep = v;
		else if (!strcmp(a, "--corrupt") &&
			 (!strcmp(v, X.corrupts[0]) || !strcmp(v, X.corrupts[1])))
			X.corrupt = v;
		else {
			X.usage(stderr);
			exit(2);
		}
	}
}

/* The command line, then the skips (no program; no emulator: @install
 * says which packages); the folder; the blob's header. Returns 0 or SKIP;
 * the layouts to build are *@first..*@end. */
static int xrun_start(int argc, char **argv, const char *install,
		      uint64_t *first, uint64_t *end)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	oracle_name = X.name;
	parse_args(argc, argv);
	if (!X.guest || access(X.guest, R_OK)) {
		printf("SKIP: the oracle's x86-64 program was not built\n");
		return SKIP;
	}
	if (!oracle_on_path(X.emu)) {
		printf("SKIP: %s not found (apt-get install %s)\n", X.emu, install);
		return SKIP;
	}
	/* the emulator runs in the temporary folder */
	static char guest[PATH_MAX];
	if (!realpath(X.guest, guest))
		die("%s: %s", X.guest, strerror(errno));
	X.guest = guest;
	if (X.keep) {
		mkdir(X.keep, 0755);
	} else {
		snprintf(X.tmpdir, sizeof(X.tmpdir), "/tmp/slat-%s-XXXXXX", X.name);
		if (!mkdtemp(X.tmpdir))
			die("mkdtemp: %s", strerror(errno));
		atexit(remove_tmpdir); /* die() too: a blob is large */
	}
	struct xblob_hdr hdr = { 0 };
	blob_put(&hdr, sizeof(hdr));
	*first = X.only >= 0 ? (uint64_t)X.only : 0;
	*end = X.only >= 0 ? *first + 1 : X.layouts;
	X.layouts = *end - *first;
	return 0;
}

/* What the emulator's walks did: the leaves they translated through, the
 * faults (@faults, e.g. "EPT violations"), the A/D flags it set. */
static void xrun_print_walks(const char *faults)
{
	printf("  translated through 1G/2M/4K leaves: %" PRIu64 "/%" PRIu64 "/%" PRIu64
	       ", %s: %" PRIu64 "; %s set %" PRIu64
	       " accessed flags on leaves, %" PRIu64 " on tables, %" PRIu64
	       " dirty flags\n", X.translated[1], X.translated[2], X.translated[3],
	       faults, X.faults, X.emu_name, X.ad.a_set[1], X.ad.a_set[0],
	       X.ad.d_set);
}

/* The last summary line and the exit status. */
static int xrun_end(void)
{
	printf("%" PRIu64 " of %" PRIu64 " probes agreed with %s, %" PRIu64
	       " disagreements\n", X.agreed, X.probes, X.emu_name, X.mismatches);
	if (X.corrupt) {
		printf("corruption (%s) %s\n", X.corrupt,
		       X.corrupted && X.mismatches ? "reported: the oracle can fail"
						   : "NOT reported");
		return X.corrupted && X.mismatches ? 0 : 1;
	}
	return X.mismatches ? 1 : 0;
}

#endif
