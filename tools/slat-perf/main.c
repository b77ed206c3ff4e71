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
"                 [--json FILE] [--svg FILE] [--ept-levels 4|5] [--no-counts]\n"
"\n"
"Runs a KVM selftest's experiment on the slat VM simulator (software MMU,\n"
"vCPU threads, the real libslat stage-2 or EPT table), prints the selftest's\n"
"own lines, then exact counts per phase and a modeled hardware time.\n"
"Times printed in the selftest lines are wall time on this host; this host\n"
"has few cores, so many vCPU threads share them.\n"
"\n"
"Commands (default: dirty-log):\n"
"  dirty-log   dirty_log_perf_test: -a -b -c -e -g -h -i -m -n -o -p -r -s -v -x -w\n"
"              (slat-perf dirty-log -h lists them and the guest modes)\n"
"  page-table  kvm_page_table_test: -p -m -b -v -s (KVM_CREATE_MAPPINGS,\n"
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
"                                 (default: the level-2 block size, 2M with 4K)\n"
"  --mmio-map=page|block          MMIO mapped page by page or with blocks (004)\n"
"  --dirty=wp|hw|ring|ring-hw     dirty tracking: write protection, hardware\n"
"                                 dirty state (Arm DBM / EPT D bits), per-vCPU\n"
"                                 dirty rings (get = harvest, clear = reset), or\n"
"                                 rings filled from hardware dirty state\n"
"  --clean-time=counted|slept     cleans of synthetic memory are only counted, or\n"
"                                 also take their modeled time (cost clean_line\n"
"                                 per line), slept by the vCPU, so that faults of\n"
"                                 other vCPUs overlap them as on hardware (000)\n"
"\n"
"Output and runs:\n"
"  --compare SWITCH=A,B[,...]     run the same experiment once per value (up to\n"
"                                 8), alternating, and print each phase side by\n"
"                                 side with the ratio to the first value\n"
"  --repeat N                     runs per value (default 1); walls are the best\n"
"  --cost FILE                    per-operation costs for the model, `key = value`\n"
"                                 lines: tlbi_ipa tlbi_ipa_local tlbi_range\n"
"                                 tlbi_vmid dsb clean_line cache_line fault_exit\n"
"                                 entry_visit entry_write (ns; cache_line bytes)\n"
"  --json FILE                    every phase, count, setting and modeled time\n"
"  --svg FILE                     bar chart of phase times (wall and modeled),\n"
"                                 side by side with --compare\n"
"  --ept-levels 4|5               EPT levels for the PA-bits:ANY mode (-m 9)\n"
"  --no-counts                    only the selftest lines\n"
"  -h, --help                     this help; COMMAND -h: the command's options\n"
"  --version                      print slat-perf's version and exit\n"
"\n"
"Examples:\n"
"  slat-perf dirty-log -v 2 -b 256M -s synthetic\n"
"  slat-perf dirty-log -v 8 -b 1G -s synthetic_2mb --eager-split=clear \\\n"
"            --compare recover=zap-leaf,promote --flush=entry\n"
"  slat-perf page-table -m 6 -s synthetic_2mb -b 4G -v 4\n"
"  slat-perf mmio --compare mmio-map=page,block\n"
"\n"
"Exit status: 0 success; 1 host failure (a file cannot be read or written,\n"
"stdout included; out of memory; a failed run); 2 a usage error.\n"
"\n"
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
	"compare", "repeat", "cost", "json", "svg", "ept-levels", NULL,
};

/* The leftover arguments and the --compare copy: static, so that an error
 * that exits from the parsers leaves them reachable, not leaked. */
static char **rest;
static char *cmpdup;

int main(int argc, char **argv)
{
	struct perf_opts o;
	const struct perf_cmd *cmd = &perf_cmd_dirty_log;
	struct perf_run *runs;
	char err[256];
	int nrest = 0, first = 1, nruns, rc = 0;
	void *state;

	atexit(check_stdout);
	memset(&o, 0, sizeof(o));
	o.sw.split_skip = true;
	o.repeat = 1;
	o.ept_levels = 4;
	perf_cost_default(&o.cost);
	o.progress = isatty(2);

	if (argc > 1 && argv[1][0] != '-') {
		cmd = NULL;
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i]->name))
				cmd = cmds[i];
		if (!cmd)
			perf_usage_error("unknown command '%s': use dirty-log, page-table "
					 "or mmio (slat-perf --help)", argv[1]);
		first = 2;
	}
	o.cmd = cmd->name;
	rest = alloc_or_exit((size_t)argc + 1, sizeof(*rest));
	rest[nrest++] = argv[0];
	for (int i = first; i < argc; i++) {
		char name[64], *val = NULL;
		const char *a = argv[i];
		bool needs = false;

		if (strncmp(a, "--", 2) || !a[2]) {
			rest[nrest++] = argv[i];
			continue;
		}
		a += 2;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(a, "="), a);
		if (strchr(a, '='))
			val = strchr(a, '=') + 1;
		if (!strcmp(name, "help")) {
			help(stdout);
			free(rest);
			free(cmpdup);
			return 0;
		}
		if (!strcmp(name, "version")) {
			printf("slat-perf (slat) %s\n", slat_version());
			free(rest);
			free(cmpdup);
			return 0;
		}
		if (!strcmp(name, "no-counts")) {
			o.quiet_counts = true;
			continue;
		}
		for (int k = 0; valued[k]; k++)
			needs |= !strcmp(name, valued[k]);
		needs |= perf_switch_known(name);
		if (!needs)
			perf_usage_error("unknown option --%s (slat-perf --help lists "
					 "them)", name);
		if (!val) {
			if (i + 1 >= argc)
				perf_usage_error("--%s needs a value (slat-perf --help)",
						 name);
			val = argv[++i];
		}
		if (perf_switch_known(name)) {
			if (perf_switch_set(&o.sw, name, val, err, sizeof(err)))
				perf_usage_error("%s", err);
		} else if (!strcmp(name, "compare")) {
			char *eq, *tok, *save = NULL;
			struct perf_switches probe;

			free(cmpdup);
			cmpdup = strdup(val);
			if (!cmpdup)
				out_of_memory();
			eq = strchr(cmpdup, '=');
			if (!eq)
				perf_usage_error("--compare %s: use SWITCH=A,B (e.g. "
						 "recover=zap-leaf,promote)", val);
			*eq = 0;
			if (!perf_switch_known(cmpdup))
				perf_usage_error("--compare: unknown switch '%s' (cmo, "
						 "recover, flush, split-skip, eager-split, "
						 "mmio-map, dirty)", cmpdup);
			o.cmp_name = cmpdup;
			o.cmp_n = 0;
			for (tok = strtok_r(eq + 1, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				probe = o.sw;
				if (perf_switch_set(&probe, cmpdup, tok, err, sizeof(err)))
					perf_usage_error("--compare: %s", err);
				if (o.cmp_n == 8)
					perf_usage_error("--compare: at most 8 values");
				o.cmp_vals[o.cmp_n++] = tok;
			}
			if (o.cmp_n < 2)
				perf_usage_error("--compare %s: give at least two values, "
						 "e.g. %s=A,B", val, cmpdup);
		} else if (!strcmp(name, "repeat")) {
			o.repeat = perf_parse_positive("--repeat", val);
			if (o.repeat > 100)
				perf_usage_error("--repeat %d: at most 100", o.repeat);
		} else if (!strcmp(name, "cost")) {
			o.cost_file = val;
		} else if (!strcmp(name, "json")) {
			o.json = val;
		} else if (!strcmp(name, "svg")) {
			o.svg = val;
		} else if (!strcmp(name, "ept-levels")) {
			o.ept_levels = perf_parse_positive("--ept-levels", val);
			if (o.ept_levels != 4 && o.ept_levels != 5)
				perf_usage_error("--ept-levels %s: use 4 or 5", val);
		}
	}
	if (o.cost_file && (rc = perf_cost_load(&o.cost, o.cost_file)))
		return rc;
	o.argc = nrest;
	o.argv = rest;
	if (cmd->prepare(&o, &state))
		return 1;

	nruns = o.cmp_name ? o.cmp_n * o.repeat : o.repeat;
	runs = alloc_or_exit((size_t)nruns, sizeof(*runs));
	for (int r = 0; r < nruns && !rc; r++) {
		struct perf_run *run = &runs[r];

		run->sw = o.sw;
		if (o.cmp_name) {
			int v = r % o.cmp_n;

			perf_switch_set(&run->sw, o.cmp_name, o.cmp_vals[v], err,
					sizeof(err));
			snprintf(run->label, sizeof(run->label), "%s=%s", o.cmp_name,
				 o.cmp_vals[v]);
			printf("%s== --%s (run %d of %d) ==\n", r ? "\n" : "",
			       run->label, r / o.cmp_n + 1, o.repeat);
		} else if (o.repeat > 1) {
			printf("%s== run %d of %d ==\n", r ? "\n" : "", r + 1, o.repeat);
		}
		fflush(stdout);
		rc = cmd->run(state, &o, &run->sw, run, stdout);
	}
	if (!rc && !o.quiet_counts) {
		if (o.cmp_name)
			perf_print_compare(stdout, &o, cmd, runs, nruns);
		else
			perf_print_counts(stdout, &o, cmd, runs, nruns);
	}
	if (!rc && o.json && perf_write_json(o.json, &o, cmd, state, runs, nruns))
		rc = 1;
	if (!rc && o.svg && perf_write_svg(o.svg, &o, cmd, runs, nruns))
		rc = 1;
	for (int r = 0; r < nruns; r++)
		perf_run_free(&runs[r]);
	free(runs);
	cmd->release(state);
	free(rest);
	free(cmpdup);
	return rc;
}
