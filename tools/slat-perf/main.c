/* SPDX-License-Identifier: MIT */
/*
 * slat-perf: the KVM selftests' page-table performance experiments on the
 * VM simulator, with the selftests' options and output lines, exact counts
 * per phase, a modeled hardware time, strategy switches (one per seed) and
 * side-by-side comparisons.
 */
#include "perf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct perf_cmd *const cmds[] = {
	&perf_cmd_dirty_log, &perf_cmd_page_table, &perf_cmd_mmio,
	&perf_cmd_tlbi_trap,
};

static void help(FILE *f)
{
	fputs(
"Usage: slat-perf [COMMAND] [SELFTEST OPTIONS] [--SWITCH=VALUE ...]\n"
"                 [--compare SWITCH=A,B[,...]] [--repeat N] [--cost FILE]\n"
"                 [--json FILE] [--svg FILE] [--arch arm64|x86] [--format ept|npt]\n"
"                 [--ept-levels 4|5] [--no-counts] [--selftest-output] [--strict]\n"
"                 [--progress]\n"
"\n"
"Runs a KVM selftest's experiment on the slat VM simulator (software MMU,\n"
"the real libslat stage-2, EPT or NPT table), prints the selftest's own lines,\n"
"then exact counts per phase and a modeled hardware time. The vCPUs run one\n"
"at a time in virtual time, their races decided by the cost table, so the\n"
"same command line gives the same counts on any host. Times printed in the\n"
"selftest lines are wall time on this host: the simulator's, not a guest's.\n"
"\n"
"Commands (default: dirty-log):\n"
"  dirty-log   dirty_log_perf_test: -a -b -c -e -g -h -i -m -n -o -p -r -s -v -x -w\n"
"              (slat-perf dirty-log -h lists them and the guest modes)\n"
"  page-table  kvm_page_table_test: -p -m -b -v -s -u (KVM_CREATE_MAPPINGS,\n"
"              KVM_UPDATE_MAPPINGS, KVM_ADJUST_MAPPINGS)\n"
"  mmio        map and unmap a device region (-b SIZE, default 8G; -v vCPUs\n"
"              touching it, default 0): phases map, touch, unmap (seed 004)\n"
"  tlbi-trap   guest TLBIs untrapped, trapped precise, trapped as VMALLE1IS (003)\n"
"\n"
"Strategy switches (one per seed; default first):\n"
"  --cmo=in-walker|before-map     where newly mapped memory is cleaned to PoC:\n"
"                                 by the vCPU that installs the leaf, or by every\n"
"                                 faulting vCPU before it maps (seed 000)\n"
"  --recover=none|zap-leaf|zap-table|promote\n"
"                                 what disabling dirty logging does to the split\n"
"                                 pages (seed 001); none: they stay until faults\n"
"  --flush=range|entry|vm         invalidation of recovery and of MMIO unmap:\n"
"                                 one by range, one per entry, or the whole VM\n"
"  --split-skip=on|off            eager split walks only levels that can hold a\n"
"                                 block, or every level (seed 002)\n"
"  --eager-split=off|enable|clear[:CHUNK]\n"
"                                 split blocks to pages when logging is enabled\n"
"                                 (manual protect without INITIALLY_SET) or in\n"
"                                 each CLEAR_DIRTY_LOG, CHUNK bytes at a time\n"
"                                 (default: the level-2 block size, 2M with 4K);\n"
"                                 default off, with --arch x86 clear (KVM x86's\n"
"                                 eager_page_split: where logging protects)\n"
"  --mmio-map=page|block          MMIO mapped page by page or with blocks (004)\n"
"  --dirty=wp|hw|ring|ring-hw     dirty tracking: write protection, hardware\n"
"                                 dirty state (Arm DBM / EPT D bits), per-vCPU\n"
"                                 dirty rings (get = harvest, clear = reset), or\n"
"                                 rings filled from hardware dirty state\n"
"  --clean-time=counted|slept     cleans of synthetic memory are only counted, or\n"
"                                 also take their modeled time (cost clean_line\n"
"                                 per line) on the vCPU's virtual clock, so that\n"
"                                 faults of other vCPUs overlap them (000)\n"
"  --block-fault=auto|lazy|split  a write fault on a block write-protected for\n"
"                                 dirty logging: a new table with only the page\n"
"                                 (arm64 KVM), or the block split whole, the page\n"
"                                 made writable (x86 TDP MMU); auto: by --arch\n"
"  --wp-partial=block|split       re-protecting pages of a block: the whole block\n"
"                                 (KVM), or the block split first (libslat)\n"
"  --x86-dirty=pml|wp             --arch x86's dirty logging: as KVM x86 with PML\n"
"                                 (enable_pml, the default on Intel with EPT A/D):\n"
"                                 4K pages made clean, writes logged by the CPU,\n"
"                                 a PML-full exit per 512 pages, huge pages\n"
"                                 write-protected; or write protection (no PML;\n"
"                                 the only one with --format npt: AMD has no PML)\n"
"  --host-memory=populated|linux  the host's memory under the guest's: there\n"
"                                 from the start, or Linux's anonymous memory\n"
"                                 (anonymous, anonymous_thp, synthetic,\n"
"                                 synthetic_2mb): a first read maps the (huge)\n"
"                                 zero page read-only, a write copies it, the\n"
"                                 MMU notifier unmapping it at stage 2; a huge\n"
"                                 zero page split by a copy stays small pages\n"
"  --fault-lock=read|write        how a vCPU's fault takes mmu_lock: for reading,\n"
"                                 faults in parallel (arm64 since Linux 6.2, x86),\n"
"                                 or for writing, one after another (arm64 before\n"
"                                 6.2, seed 000's Linux 5.12)\n"
"\n"
"Output and runs:\n"
"  --compare SWITCH=A,B[,...]     run the same experiment once per value (up to\n"
"                                 8), alternating, and print each phase side by\n"
"                                 side with the ratio to the first value\n"
"  --repeat N                     runs per value (default 1); walls are the best\n"
"  --cost FILE                    per-operation costs for the model, `key = value`\n"
"                                 lines: tlbi_ipa tlbi_ipa_local tlbi_range\n"
"                                 tlbi_vmid dsb clean_line cache_line fault_exit\n"
"                                 entry_visit entry_write leaf_install ipi_send\n"
"                                 ipi_exit mem_bw invept_single invept_all\n"
"                                 tlb_request pml_full asid_flush\n"
"                                 (ns; cache_line bytes, mem_bw bytes/ns)\n"
"  --json FILE                    every phase, count, setting and modeled time\n"
"  --svg FILE                     bar chart of phase times (wall and modeled),\n"
"                                 side by side with --compare\n"
"  --arch arm64|x86               the host the selftest command line stands for:\n"
"                                 its supported guest modes, so the table format\n"
"                                 (default arm64: the Armv8 stage-2 modes; x86:\n"
"                                 mode 9, Intel EPT, as the real tools on x86)\n"
"  --format ept|npt               the x86 table of mode 9: Intel EPT (default)\n"
"                                 or AMD NPT (A/D always on, no PML: logging by\n"
"                                 write protection; a flush is the vCPU's ASID\n"
"                                 flushed at VMRUN, cost asid_flush, not an\n"
"                                 INVEPT); implies --arch x86\n"
"  --ept-levels 4|5               EPT or NPT levels for the PA-bits:ANY mode (-m 9)\n"
"  --no-counts                    no counts table after the selftest lines\n"
"  --selftest-output              only the lines the real selftest prints (no\n"
"                                 counts, notes or slat-perf help sections)\n"
"  --strict                       slat-perf's own errors (exit 2) where the real\n"
"                                 tools print help and exit 0 (unknown option)\n"
"                                 or fail an assertion (exit 254)\n"
"  --progress                     the progress bar even when stderr is not a\n"
"                                 terminal\n"
"  -h, --help                     this help; COMMAND -h: the command's options\n"
"  --version                      print slat-perf's version and exit\n"
"\n"
"Examples:\n"
"  slat-perf --arch x86 dirty-log -v 2 -b 256M -s synthetic\n"
"  slat-perf dirty-log -m 6 -v 8 -b 1G -s synthetic_2mb --eager-split=clear \\\n"
"            --compare recover=zap-leaf,promote --flush=entry\n"
"  slat-perf page-table -m 6 -s synthetic_2mb -b 4G -v 4\n"
"  slat-perf mmio --compare mmio-map=page,block\n"
"\n"
"Global options may come before or after the command. Linked as\n"
"dirty_log_perf_test or kvm_page_table_test, slat-perf is that command.\n"
"\n"
"Exit status: 0 success (and, as the real tools, an unknown selftest option:\n"
"help printed); 1 host failure (a file cannot be read or written, stdout\n"
"included; out of memory; a failed run); 2 a usage error; 4 the real test's\n"
"skip (-n); 254 the real test's assertion failure (-i 1, an unsupported -m,\n"
"-u without hugetlb).\n"
"\n"
"The seeds are five KVM mailing-list threads; each Message-ID finds it\n"
"(https://lore.kernel.org/all/MESSAGE-ID/), and docs/seeds.md gives its figures:\n", f);
	for (const struct perf_seed *s = perf_seeds; s->id; s++)
		fprintf(f, "  %s  %s (%s)\n       %s\n", s->id, s->what, s->by,
			s->msgid);
	fputs("\n"
"Details, the cost table and its sources: docs/slat-perf.md\n", f);
}

/*
 * At exit, whatever the path (the commands' -h exit too): output lost to a
 * full disk or a closed descriptor must not end with status 0.
 */
static void check_stdout(void)
{
	bool bad = ferror(stdout);

	errno = 0;
	bad |= fflush(stdout) != 0;
	bad |= fclose(stdout) != 0;
	if (!bad)
		return;
	fprintf(stderr, "slat-perf: writing the output failed%s%s (check where "
		"stdout goes and the space there)\n", errno ? ": " : "",
		errno ? strerror(errno) : "");
	_exit(1);
}

static void out_of_memory(void)
{
	fprintf(stderr, "slat-perf: out of memory\n");
	exit(1);
}

static void *alloc_or_exit(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		out_of_memory();
	return p;
}

static const char *const valued[] = {
	"compare", "repeat", "cost", "json", "svg", "ept-levels", "arch",
	"format", NULL,
};

/* The leftover arguments and the --compare copy: static, so that an error
 * that exits from the parsers leaves them reachable, not leaked. */
static char **rest;
static char *cmpdup;
static char progname[64];

static void free_args(void)
{
	free(rest);
	free(cmpdup);
	rest = NULL;
	cmpdup = NULL;
}

/* --compare SWITCH=A,B[,...] */
static void parse_compare(struct perf_opts *o, const char *val)
{
	char *eq, *tok, *save = NULL, err[256];
	struct perf_switches probe;

	if (o->cmp_name)
		perf_usage_error("--compare given twice (--compare %s=... and "
				 "--compare %s): compare one switch per run",
				 o->cmp_name, val);
	cmpdup = strdup(val);
	if (!cmpdup)
		out_of_memory();
	eq = strchr(cmpdup, '=');
	if (!eq)
		perf_usage_error("--compare %s: use SWITCH=A,B (e.g. "
				 "recover=zap-leaf,promote)", val);
	*eq = 0;
	if (!perf_switch_known(cmpdup)) {
		/* the switches' own message names every switch */
		perf_switch_set(&probe, cmpdup, "", err, sizeof(err));
		perf_usage_error("--compare: %s", err);
	}
	o->cmp_name = cmpdup;
	for (tok = strtok_r(eq + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		probe = o->sw;
		if (perf_switch_set(&probe, cmpdup, tok, err, sizeof(err)))
			perf_usage_error("--compare: %s", err);
		if (o->cmp_n == 8)
			perf_usage_error("--compare: at most 8 values");
		o->cmp_vals[o->cmp_n++] = tok;
	}
	if (o->cmp_n < 2)
		perf_usage_error("--compare %s: give at least two values, e.g. %s=A,B",
				 val, cmpdup);
}

/* A global option with its value. */
static void global_valued(struct perf_opts *o, const char *name, const char *val)
{
	char err[256];
	int k = perf_switch_index(name);

	if (k >= 0) {
		if (perf_switch_set(&o->sw, name, val, err, sizeof(err)))
			perf_usage_error("%s", err);
		o->sw_set |= 1u << k;
	} else if (!strcmp(name, "compare")) {
		parse_compare(o, val);
	} else if (!strcmp(name, "repeat")) {
		o->repeat = perf_parse_positive("--repeat", val);
		if (o->repeat > 100)
			perf_usage_error("--repeat %d: at most 100", o->repeat);
	} else if (!strcmp(name, "cost")) {
		o->cost_file = val;
	} else if (!strcmp(name, "json")) {
		o->json = val;
	} else if (!strcmp(name, "svg")) {
		o->svg = val;
	} else if (!strcmp(name, "ept-levels")) {
		o->ept_levels = perf_parse_positive("--ept-levels", val);
		if (o->ept_levels != 4 && o->ept_levels != 5)
			perf_usage_error("--ept-levels %s: use 4 or 5", val);
	} else if (!strcmp(name, "arch")) {
		o->arch_set = true;
		if (!strcmp(val, "x86") || !strcmp(val, "x86_64"))
			o->arch = PERF_ARCH_X86;
		else if (!strcmp(val, "arm64") || !strcmp(val, "aarch64"))
			o->arch = PERF_ARCH_ARM64;
		else
			perf_usage_error("--arch %s: use arm64 or x86", val);
	} else if (!strcmp(name, "format")) {
		o->fmt_set = true;
		if (!strcmp(val, "ept"))
			o->x86_fmt = SLAT_FMT_EPT;
		else if (!strcmp(val, "npt"))
			o->x86_fmt = SLAT_FMT_NPT;
		else
			perf_usage_error("--format %s: use ept (Intel) or npt (AMD)",
					 val);
	}
}

static bool global_flag_name(const char *name)
{
	static const char *const flags[] = { "help", "version", "no-counts",
		"strict", "selftest-output", "progress", NULL };

	for (int i = 0; flags[i]; i++)
		if (!strcmp(name, flags[i]))
			return true;
	return false;
}

/* A flag without a value; false when @name is not one. */
static bool global_flag(struct perf_opts *o, const char *name)
{
	if (!strcmp(name, "help")) {
		help(stdout);
		free_args();
		exit(0);
	}
	if (!strcmp(name, "version")) {
		printf("slat-perf (slat) %s\n", slat_version());
		free_args();
		exit(0);
	}
	if (!strcmp(name, "no-counts"))
		o->quiet_counts = true;
	else if (!strcmp(name, "strict"))
		o->strict = true;
	else if (!strcmp(name, "selftest-output"))
		o->selftest_only = o->quiet_counts = true;
	else if (!strcmp(name, "progress"))
		o->progress = true;
	else
		return false;
	return true;
}

/* One "--NAME[=VALUE]" at argv[*i]; consumes the value's argument. */
static void parse_global(struct perf_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i] + 2, *val = strchr(a, '=');
	char name[64];
	bool needs;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(a, "="), a);
	if (!val && global_flag(o, name))
		return;
	if (val && global_flag_name(name))
		perf_usage_error("--%s takes no value (slat-perf --help)", name);
	needs = perf_switch_known(name);
	for (int k = 0; valued[k]; k++)
		needs |= !strcmp(name, valued[k]);
	if (!needs)
		perf_usage_error("unknown option --%s (slat-perf --help lists them)",
				 name);
	if (val) {
		val++;
	} else {
		if (*i + 1 >= argc)
			perf_usage_error("--%s needs a value (slat-perf --help)", name);
		val = argv[++*i];
	}
	global_valued(o, name, val);
}

static const struct perf_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(name, cmds[i]->name))
			return cmds[i];
	return NULL;
}

/* Under the selftests' own names (a link to slat-perf), the command is
 * theirs and so is the program name they print. */
static const struct perf_cmd *cmd_from_name(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	if (!strcmp(base, "dirty_log_perf_test"))
		return &perf_cmd_dirty_log;
	if (!strcmp(base, "kvm_page_table_test"))
		return &perf_cmd_page_table;
	return NULL;
}

/* The chart's title: the command line without the output paths. */
static void title(struct perf_opts *o, int argc, char **argv)
{
	size_t n = 0;

	for (int i = 1; i < argc && n < sizeof(o->title) - 1; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--svg")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--json=", 7) || !strncmp(argv[i], "--svg=", 6))
			continue;
		n += (size_t)snprintf(o->title + n, sizeof(o->title) - n, "%s%s",
				      n ? " " : "", argv[i]);
	}
}

/* Global options anywhere, the command (the first other word), and the
 * command's own arguments into o->argv. */
static const struct perf_cmd *parse_line(struct perf_opts *o, int argc, char **argv)
{
	const struct perf_cmd *cmd = cmd_from_name(argv[0]);
	bool named = cmd != NULL;
	int nrest = 0;

	rest = alloc_or_exit((size_t)argc + 1, sizeof(*rest));
	rest[nrest++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--", 2) && argv[i][2]) {
			parse_global(o, argc, argv, &i);
		} else if (!cmd && nrest == 1 && argv[i][0] != '-') {
			if (!(cmd = find_cmd(argv[i])))
				perf_usage_error("unknown command '%s': use dirty-log, "
						 "page-table, mmio or tlbi-trap "
						 "(slat-perf --help)", argv[i]);
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if (!cmd)
		cmd = &perf_cmd_dirty_log;
	o->argc = nrest;
	o->argv = rest;
	o->cmd = cmd->name;
	if (named)
		snprintf(progname, sizeof(progname), "%s", argv[0]);
	else
		snprintf(progname, sizeof(progname), "slat-perf %s", cmd->name);
	o->prog = progname;
	title(o, argc, argv);
	return cmd;
}

/* Whether the line asks for PML: --x86-dirty=pml, or among the values
 * --compare gives it. */
static bool asks_pml(const struct perf_opts *o)
{
	int k = perf_switch_index("x86-dirty");

	if ((o->sw_set & (1u << k)) && !o->sw.x86_wp)
		return true;
	if (!o->cmp_name || strcmp(o->cmp_name, "x86-dirty"))
		return false;
	for (int v = 0; v < o->cmp_n; v++)
		if (!strcmp(o->cmp_vals[v], "pml"))
			return true;
	return false;
}

/* --format: an x86 table, so --arch x86 (implied without --arch); NPT
 * logs without PML, which AMD does not have. */
static void check_format(struct perf_opts *o)
{
	if (!o->fmt_set)
		return;
	if (o->arch_set && o->arch != PERF_ARCH_X86)
		perf_usage_error("--format %s is an x86 table (mode 9): use it "
				 "with --arch x86, or leave --arch out; --arch "
				 "arm64 runs Arm stage 2", perf_fmt_name(o->x86_fmt));
	o->arch = PERF_ARCH_X86;
	o->arch_set = true;
	if (o->x86_fmt == SLAT_FMT_NPT && asks_pml(o))
		perf_usage_error("--x86-dirty=pml with --format npt: AMD has no "
				 "Page-Modification Logging; KVM on AMD logs by "
				 "write protection (--x86-dirty=wp, the default "
				 "with npt)");
}

/* Whatever the command line says that --compare contradicts. */
static void check_line(struct perf_opts *o)
{
	int k;

	check_format(o);
	if (!o->cmp_name)
		return;
	k = perf_switch_index(o->cmp_name);
	if (o->sw_set & (1u << k))
		perf_usage_error("--%s=... and --compare %s=... contradict: give the "
				 "values only to --compare", o->cmp_name, o->cmp_name);
}

/* Output files this run created and has not written yet: removed however
 * it ends (the exits of usage errors and assertions included). */
static const char *pending[2];

static void remove_pending(void)
{
	for (int i = 0; i < 2; i++)
		if (pending[i])
			unlink(pending[i]);
}

/* --json and --svg are opened before the run, so that a bad path costs no
 * run. */
static FILE *open_output(const char *opt, const char *path, int slot)
{
	bool created = access(path, F_OK) != 0;
	FILE *f = fopen(path, "w");

	if (f && created)
		pending[slot] = path;
	if (!f) {
		fprintf(stderr, "slat-perf: %s %s: %s (give a path in a directory "
			"that exists and can be written)\n", opt, path, strerror(errno));
		free_args();
		exit(1);
	}
	return f;
}

/* KVM x86's defaults where the line leaves a switch to the architecture
 * (known once the command has read its -m): eager_page_split is on; on
 * AMD (no PML) dirty logging write-protects (check_format() refused
 * pml there). */
static void x86_defaults(const struct perf_opts *o, struct perf_switches *sw)
{
	int k = perf_switch_index("eager-split");

	if (o->arch != PERF_ARCH_X86)
		return;
	if (o->x86_fmt == SLAT_FMT_NPT)
		sw->x86_wp = true;
	if ((o->sw_set & (1u << k)) ||
	    (o->cmp_name && !strcmp(o->cmp_name, "eager-split")))
		return;
	sw->eager = EAGER_CLEAR;
	sw->eager_chunk = 0;
}

/* Every run: once per --compare value, --repeat times. */
static int run_all(struct perf_opts *o, const struct perf_cmd *cmd, void *state,
		   struct perf_run *runs, int nruns)
{
	char err[256];
	int rc = 0;

	for (int r = 0; r < nruns && !rc; r++) {
		struct perf_run *run = &runs[r];

		run->sw = o->sw;
		if (o->cmp_name) {
			int v = r % o->cmp_n;

			perf_switch_set(&run->sw, o->cmp_name, o->cmp_vals[v], err,
					sizeof(err));
			snprintf(run->label, sizeof(run->label), "%s=%s", o->cmp_name,
				 o->cmp_vals[v]);
			printf("%s== --%s (run %d of %d) ==\n", r ? "\n" : "",
			       run->label, r / o->cmp_n + 1, o->repeat);
		} else if (o->repeat > 1) {
			printf("%s== run %d of %d ==\n", r ? "\n" : "", r + 1, o->repeat);
		}
		x86_defaults(o, &run->sw);
		fflush(stdout);
		rc = cmd->run(state, o, &run->sw, run, stdout);
		if (!rc && perf_run_elapsed(o, run)) {
			fprintf(stderr, "slat-perf: out of memory\n");
			rc = 1;
		}
	}
	return rc;
}

/* Notes, counts, JSON, SVG after a successful run. */
static int report(struct perf_opts *o, const struct perf_cmd *cmd, void *state,
		  const struct perf_run *runs, int nruns)
{
	int rc = 0;

	if (!o->selftest_only)
		perf_print_notes(stdout);
	if (!o->quiet_counts) {
		if (o->cmp_name)
			perf_print_compare(stdout, o, cmd, runs, nruns);
		else
			perf_print_counts(stdout, o, cmd, runs, nruns);
	}
	if (o->json_f && perf_write_json(o->json_f, o->json, o, cmd, state, runs,
					 nruns))
		rc = 1;
	o->json_f = NULL;
	pending[0] = NULL;
	if (o->svg_f && perf_write_svg(o->svg_f, o->svg, o, cmd, runs, nruns))
		rc = 1;
	o->svg_f = NULL;
	pending[1] = NULL;
	return rc;
}

static void opts_default(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sw.split_skip = true;
	o->repeat = 1;
	o->ept_levels = 4;
	o->x86_fmt = SLAT_FMT_EPT;
	perf_cost_default(&o->cost);
	o->progress = isatty(2);
}

int main(int argc, char **argv)
{
	struct perf_opts o;
	const struct perf_cmd *cmd;
	struct perf_run *runs;
	int nruns, rc;
	void *state;

	atexit(check_stdout);
	/* Lines to stdout and stderr stay in order, as the selftests' do. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	opts_default(&o);
	cmd = parse_line(&o, argc, argv);
	check_line(&o);
	if (o.cost_file && (rc = perf_cost_load(&o.cost, o.cost_file)))
		return rc;
	atexit(remove_pending);
	if (o.json)
		o.json_f = open_output("--json", o.json, 0);
	if (o.svg)
		o.svg_f = open_output("--svg", o.svg, 1);
	if (cmd == &perf_cmd_dirty_log || cmd == &perf_cmd_page_table)
		perf_selftest_banner();
	if (cmd->prepare(&o, &state))
		return 1;
	nruns = o.cmp_name ? o.cmp_n * o.repeat : o.repeat;
	runs = alloc_or_exit((size_t)nruns, sizeof(*runs));
	rc = run_all(&o, cmd, state, runs, nruns);
	if (!rc)
		rc = report(&o, cmd, state, runs, nruns);
	if (o.json_f)
		fclose(o.json_f);
	if (o.svg_f)
		fclose(o.svg_f);
	for (int r = 0; r < nruns; r++)
		perf_run_free(&runs[r]);
	free(runs);
	cmd->release(state);
	free_args();
	return rc;
}
