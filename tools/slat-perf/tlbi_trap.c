/* SPDX-License-Identifier: MIT */
/*
 * slat-perf tlbi-trap: a kernel build in a guest with two-stage
 * translation, its TLB maintenance untrapped, trapped and emulated
 * precisely, or trapped and emulated as VMALLE1IS (seed 003). The same
 * guest events under each policy; guest time in modeled cycles.
 */
#include "perf.h"

#include <slat/twostage.h>

#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct tt_state {
	struct slat_ts_workload w;
	struct slat_ts_config cfg;
	struct slat_ts_cost cost;
	struct slat_ts_report rep[SLAT_TS_POLICIES];
	bool done;
};

static void tt_help(FILE *f)
{
	struct slat_ts_workload w;
	struct slat_ts_config c;
	struct slat_ts_cost k;

	slat_ts_workload_default(&w);
	slat_ts_config_default(&c);
	slat_ts_cost_default(&k);
	fprintf(f,
"\nusage: slat-perf tlbi-trap [-h] [-v vcpus] [-P procs] [-n accesses] [-r seed]\n"
"      [-t tlb] [-w ways] [-W s2tlb] [-c ctxsw] [-s spawn] [-f touch] [-u munmap]\n"
"      [-U pages] [-L frac] [-C pages] [-H hot] [-S ws] [-k frac] [-A bits]\n"
"      [-x KEY=VALUE ...] [--json FILE]\n\n"
"A kernel build modeled in a guest with Armv8 two-stage translation (guest\n"
"stage-1 tables in guest memory, a stage-2 table, per-vCPU TLBs of combined\n"
"entries, two-dimensional walks). Runs the same guest events under three\n"
"policies for the guest's TLBIs: untrapped, precise (each trapped and\n"
"emulated with the same scope), flush-all (each trapped and emulated as\n"
"TLBI VMALLE1IS), and prints for each: guest time in modeled cycles, TLB\n"
"misses, descriptors read by walks, traps, and the overhead relative to\n"
"untrapped. Rates are per vCPU per second of guest time at the modeled\n"
"clock (-x hz).\n\n"
" -v: vCPUs (default %u)\n"
" -P: guest processes, each with its own ASID (default %u, at least -v)\n"
" -n: duration: modeled accesses per vCPU, each standing for -x work\n"
"     cycles of guest work (default %llu)\n"
" -r: random seed (default %llu)\n"
" -t: combined TLB entries per vCPU, a power of two (default %u)\n"
" -w: TLB associativity (default %u)\n"
" -W: stage-2-only TLB entries per vCPU used by walks, 0 for none\n"
"     (default 64)\n"
" -c: context switches per second (default %g)\n"
" -s: processes spawned per second: fork, exec, exit (default %g)\n"
" -f: first-touch page faults per second: new pages in the working set\n"
"     (default %g)\n"
" -u: munmap calls per second (default %g)\n"
" -U: mean pages per munmap, geometric, at most 512 (default %g)\n"
" -L: fraction of munmaps of 1024 pages, which flush the whole ASID\n"
"     (default %g)\n"
" -C: pages the child and make each write after fork (default %u)\n"
" -H: hot pages per process and of the kernel (default %u)\n"
" -S: working-set pages per process (default %u)\n"
" -k: fraction of accesses to kernel (global) pages (default %g)\n"
" -A: ASID bits, 8 or 16 (default %u)\n"
" -x: a cost in cycles, repeatable: work %g, tlb_hit %g, mem_ref %g,\n"
"     trap %g, tlbi_va %g, tlbi_asid %g, tlbi_all %g, dsb %g, fault %g,\n"
"     ctxsw %g, spawn %g; hz %g (the guest clock)\n\n"
" Lines: one \"policy NAME: ...\" line per policy, then the guest events\n"
" (the same under every policy). --json FILE writes them under\n"
" settings.results. Details and the justification of every default:\n"
" docs/twostage.md\n\n",
		w.nr_vcpus, w.nr_procs, (unsigned long long)w.accesses,
		(unsigned long long)w.seed, c.tlb_entries, c.tlb_ways, w.ctxsw_rate,
		w.spawn_rate, w.touch_rate, w.munmap_rate, w.munmap_pages,
		w.munmap_large, w.cow_pages, w.hot_pages, w.ws_pages, w.kernel_frac,
		w.asid_bits, k.work, k.tlb_hit, k.mem_ref, k.trap, k.tlbi_va,
		k.tlbi_asid, k.tlbi_all, k.dsb, k.fault, k.ctxsw, k.spawn, k.hz);
}

static double parse_double(const char *what, const char *s, double min)
{
	char *end;
	double v = strtod(s, &end);

	/* strtod also takes "nan" (which no comparison refuses) and "inf" */
	if (end == s || *end || !isfinite(v) || v < min)
		perf_usage_error("%s: '%s' is not a number of at least %g", what, s, min);
	return v;
}

static void set_cost(struct slat_ts_cost *c, const char *kv)
{
	static const struct { const char *key; size_t off; } keys[] = {
#define K(n) { #n, offsetof(struct slat_ts_cost, n) }
		K(work), K(tlb_hit), K(mem_ref), K(trap), K(tlbi_va), K(tlbi_asid),
		K(tlbi_all), K(dsb), K(fault), K(ctxsw), K(spawn), K(hz),
#undef K
	};
	const char *eq = strchr(kv, '=');

	for (size_t i = 0; eq && i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].key) == (size_t)(eq - kv) &&
		    !strncmp(kv, keys[i].key, (size_t)(eq - kv))) {
			*(double *)((char *)c + keys[i].off) =
				parse_double("-x", eq + 1, 0);
			return;
		}
	perf_usage_error("-x %s: use KEY=VALUE with KEY one of work tlb_hit mem_ref "
			 "trap tlbi_va tlbi_asid tlbi_all dsb fault ctxsw spawn hz", kv);
}

static bool power_of_two(long v)
{
	return v > 0 && !(v & (v - 1));
}

static void parse_option(struct tt_state *s, int c, const char *arg)
{
	struct slat_ts_workload *w = &s->w;

	switch (c) {
	case 'v': w->nr_vcpus = (uint32_t)perf_parse_positive("-v (vCPUs)", arg); break;
	case 'P': w->nr_procs = (uint32_t)perf_parse_positive("-P (processes)", arg); break;
	case 'n': w->accesses = perf_parse_size("-n (accesses)", arg); break;
	case 'r': w->seed = perf_parse_size("-r (seed)", arg); break;
	case 't': s->cfg.tlb_entries = (uint32_t)perf_parse_positive("-t (TLB)", arg); break;
	case 'w': s->cfg.tlb_ways = (uint32_t)perf_parse_positive("-w (ways)", arg); break;
	case 'W': s->cfg.s2_tlb_entries = (uint32_t)perf_parse_nonneg("-W", arg); break;
	case 'c': w->ctxsw_rate = parse_double("-c", arg, 0); break;
	case 's': w->spawn_rate = parse_double("-s", arg, 0); break;
	case 'f': w->touch_rate = parse_double("-f", arg, 0); break;
	case 'u': w->munmap_rate = parse_double("-u", arg, 0); break;
	case 'U': w->munmap_pages = parse_double("-U", arg, 1); break;
	case 'L': w->munmap_large = parse_double("-L", arg, 0); break;
	case 'C': w->cow_pages = (uint32_t)perf_parse_nonneg("-C", arg); break;
	case 'H': w->hot_pages = (uint32_t)perf_parse_positive("-H", arg); break;
	case 'S': w->ws_pages = (uint32_t)perf_parse_positive("-S", arg); break;
	case 'k': w->kernel_frac = parse_double("-k", arg, 0); break;
	case 'A': w->asid_bits = (uint32_t)perf_parse_positive("-A", arg); break;
	case 'x': set_cost(&s->cost, arg); break;
	}
}

/*
 * An event rate above one event per modeled access would run that many
 * events before each access: -c 1e12 is a hang, not a workload.
 */
static void check_rates(const struct tt_state *s)
{
	const struct slat_ts_workload *w = &s->w;
	double max = s->cost.hz / (s->cost.work + s->cost.tlb_hit);
	const struct { char opt; double rate; } r[] = {
		{ 'c', w->ctxsw_rate }, { 's', w->spawn_rate },
		{ 'f', w->touch_rate }, { 'u', w->munmap_rate },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (r[i].rate > max)
			perf_usage_error("-%c %g: at most %g per second (one event per "
					 "modeled access: -x hz / (-x work + tlb_hit))",
					 r[i].opt, r[i].rate, max);
}

static void check_settings(const struct tt_state *s)
{
	const struct slat_ts_workload *w = &s->w;

	if (w->nr_vcpus > SLAT_TS_MAX_VCPUS)
		perf_usage_error("-v %u: at most %d vCPUs", w->nr_vcpus, SLAT_TS_MAX_VCPUS);
	if (w->nr_procs < w->nr_vcpus || w->nr_procs > 4096)
		perf_usage_error("-P %u: between the vCPU count (%u) and 4096",
				 w->nr_procs, w->nr_vcpus);
	if (!power_of_two(s->cfg.tlb_entries) || !power_of_two(s->cfg.tlb_ways) ||
	    s->cfg.tlb_ways > s->cfg.tlb_entries)
		perf_usage_error("-t %u -w %u: powers of two, ways at most entries",
				 s->cfg.tlb_entries, s->cfg.tlb_ways);
	if (s->cfg.s2_tlb_entries && !power_of_two(s->cfg.s2_tlb_entries))
		perf_usage_error("-W %u: 0 or a power of two", s->cfg.s2_tlb_entries);
	if (w->hot_pages > w->ws_pages || w->hot_pages > w->kernel_pages)
		perf_usage_error("-H %u: at most the working set (-S %u)", w->hot_pages,
				 w->ws_pages);
	if (w->asid_bits != 8 && w->asid_bits != 16)
		perf_usage_error("-A %u: 8 or 16", w->asid_bits);
	if ((1u << w->asid_bits) <= w->nr_procs + 3)
		perf_usage_error("-P %u: too many processes for %u-bit ASIDs",
				 w->nr_procs, w->asid_bits);
	if (w->munmap_large > 1 || w->kernel_frac > 1)
		perf_usage_error("-L and -k are fractions (0 to 1)");
	if (s->cost.work <= 0 || s->cost.hz <= 0)
		perf_usage_error("-x work and hz must be positive");
	check_rates(s);
}

static int tt_prepare(struct perf_opts *o, void **statep)
{
	struct tt_state *s = calloc(1, sizeof(*s));
	int c;

	if (!s)
		return 1;
	slat_ts_workload_default(&s->w);
	slat_ts_config_default(&s->cfg);
	slat_ts_cost_default(&s->cost);
	s->cfg.s2_tlb_entries = 64;
	if (o->cmp_name)
		perf_usage_error("tlbi-trap compares its three policies itself: "
				 "--compare does not apply");
	optind = 1;
	opterr = 0;
	while ((c = getopt(o->argc, o->argv,
			   "hv:P:n:r:t:w:W:c:s:f:u:U:L:C:H:S:k:A:x:")) != -1) {
		if (c == 'h') {
			tt_help(stdout);
			free(s);
			exit(0);
		}
		if (c == '?' || c == ':') {
			tt_help(stderr);
			perf_usage_error("tlbi-trap: unknown option or missing value: -%c "
					 "(see the usage above)", optopt ? optopt : c);
		}
		parse_option(s, c, optarg);
	}
	if (optind < o->argc)
		perf_usage_error("tlbi-trap: unexpected argument '%s'", o->argv[optind]);
	check_settings(s);
	/* The counts table of the other commands has nothing to show here. */
	o->quiet_counts = true;
	*statep = s;
	return 0;
}

static double overhead_pct(const struct slat_ts_report *r,
			   const struct slat_ts_report *base)
{
	/* -n 0: no guest time at all, and no overhead (not 0/0) */
	if (base->guest_cycles <= 0)
		return 0;
	return 100.0 * (r->guest_cycles / base->guest_cycles - 1.0);
}

static void print_policy(FILE *out, const struct tt_state *s,
			 const struct slat_ts_report *r)
{
	fprintf(out, "policy %s: guest time %.0f cycles (%.3f ms), TLB misses %llu, "
		"walk refs %llu, traps %llu, overhead %+.2f%%\n",
		slat_ts_policy_name(r->policy), r->guest_cycles,
		r->guest_cycles / s->cost.hz * 1e3,
		(unsigned long long)r->st.tlb_misses,
		(unsigned long long)r->st.walk_refs, (unsigned long long)r->st.traps,
		overhead_pct(r, &s->rep[0]));
}

static void print_events(FILE *out, const struct slat_ts_report *r)
{
	const struct slat_ts_events *e = &r->ev;

	fprintf(out, "guest events: %llu context switches, %llu spawns, %llu "
		"copy-on-write faults, %llu first-touch faults, %llu munmaps "
		"(%llu pages), %llu ASID rollovers\n",
		(unsigned long long)e->ctxsw, (unsigned long long)e->spawns,
		(unsigned long long)e->cows, (unsigned long long)e->first_touch,
		(unsigned long long)e->munmaps, (unsigned long long)e->munmap_pages,
		(unsigned long long)e->asid_rollovers);
	fprintf(out, "guest TLBIs: vae1is %llu, aside1is %llu, vmalle1is %llu, "
		"vmalle1 %llu, in %llu flush calls\n",
		(unsigned long long)r->st.guest_tlbi[SLAT_TS_VAE1IS],
		(unsigned long long)r->st.guest_tlbi[SLAT_TS_ASIDE1IS],
		(unsigned long long)r->st.guest_tlbi[SLAT_TS_VMALLE1IS],
		(unsigned long long)r->st.guest_tlbi[SLAT_TS_VMALLE1],
		(unsigned long long)r->st.flush_calls);
}

/* The counts the shared report knows, for the JSON phases. */
static void as_vm_stats(const struct slat_ts_report *r, struct slat_vm_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->accesses = r->st.accesses;
	st->tlb_hits = r->st.tlb_hits;
	st->tlb_misses = r->st.tlb_misses;
	st->tlb_invalidated = r->st.invalidated;
	st->table.visited = r->st.walk_refs;
}

static int tt_run(void *state, const struct perf_opts *o,
		  const struct perf_switches *sw, struct perf_run *run, FILE *out)
{
	struct tt_state *s = state;

	(void)sw;
	fprintf(out, "Two-stage kernel build: %u vCPUs, %u processes, %llu accesses "
		"per vCPU, seed %llu\n", s->w.nr_vcpus, s->w.nr_procs,
		(unsigned long long)s->w.accesses, (unsigned long long)s->w.seed);
	fprintf(out, "TLB: %u entries, %u-way per vCPU; stage-2-only TLB: %u entries\n",
		s->cfg.tlb_entries, s->cfg.tlb_ways, s->cfg.s2_tlb_entries);
	fflush(out);
	for (int p = 0; p < SLAT_TS_POLICIES; p++) {
		struct slat_ts_report *r = &s->rep[p];
		struct slat_vm_stats st;
		int ret;

		perf_progress(o, slat_ts_policy_name((enum slat_ts_policy)p),
			      (uint64_t)p, SLAT_TS_POLICIES);
		s->cfg.policy = (enum slat_ts_policy)p;
		ret = slat_ts_workload_run(&s->w, &s->cfg, &s->cost, r);
		perf_progress_end(o);
		if (ret) {
			fprintf(stderr, "slat-perf: tlbi-trap: the %s run failed: %s\n",
				slat_ts_policy_name((enum slat_ts_policy)p),
				slat_strerror(ret));
			return 1;
		}
		as_vm_stats(r, &st);
		/* The chart and the JSON show the guest time the line reports. */
		perf_run_add(run, slat_ts_policy_name((enum slat_ts_policy)p), 0,
			     r->wall_ns, &st)->model_ns = r->guest_cycles / s->cost.hz * 1e9;
		print_policy(out, s, r);
		fflush(out);
	}
	print_events(out, &s->rep[0]);
	s->done = true;
	return 0;
}

static void json_report(FILE *f, const struct tt_state *s,
			const struct slat_ts_report *r)
{
	fprintf(f, "{\"policy\": \"%s\", \"guest_cycles\": %.1f, \"overhead_pct\": %.4f, "
		"\"accesses\": %llu, \"tlb_hits\": %llu, \"tlb_misses\": %llu, "
		"\"walks\": %llu, \"walk_refs\": %llu, \"s2_tlb_hits\": %llu, "
		"\"traps\": %llu, \"dsb\": %llu, \"invalidated\": %llu, \"hw_tlbi\": {",
		slat_ts_policy_name(r->policy), r->guest_cycles,
		overhead_pct(r, &s->rep[0]), (unsigned long long)r->st.accesses,
		(unsigned long long)r->st.tlb_hits, (unsigned long long)r->st.tlb_misses,
		(unsigned long long)r->st.walks, (unsigned long long)r->st.walk_refs,
		(unsigned long long)r->st.s2_tlb_hits, (unsigned long long)r->st.traps,
		(unsigned long long)r->st.dsb, (unsigned long long)r->st.invalidated);
	for (int k = 0; k < SLAT_TS_TLBI_KINDS; k++)
		fprintf(f, "%s\"%s\": %llu", k ? ", " : "",
			slat_ts_tlbi_name((enum slat_ts_tlbi_kind)k),
			(unsigned long long)r->st.hw_tlbi[k]);
	fprintf(f, "}}");
}

static void tt_settings(void *state, FILE *f)
{
	struct tt_state *s = state;
	const struct slat_ts_workload *w = &s->w;
	const struct slat_ts_cost *k = &s->cost;
	const struct slat_ts_events *e = &s->rep[0].ev;

	fprintf(f, "\"vcpus\": %u, \"procs\": %u, \"accesses\": %llu, \"seed\": %llu, "
		"\"tlb_entries\": %u, \"tlb_ways\": %u, \"s2_tlb_entries\": %u, "
		"\"ctxsw_rate\": %g, \"spawn_rate\": %g, \"touch_rate\": %g, "
		"\"munmap_rate\": %g, \"munmap_pages\": %g, \"munmap_large\": %g, "
		"\"cow_pages\": %u, \"hot_pages\": %u, \"ws_pages\": %u, "
		"\"kernel_frac\": %g, \"asid_bits\": %u",
		w->nr_vcpus, w->nr_procs, (unsigned long long)w->accesses,
		(unsigned long long)w->seed, s->cfg.tlb_entries, s->cfg.tlb_ways,
		s->cfg.s2_tlb_entries, w->ctxsw_rate, w->spawn_rate, w->touch_rate,
		w->munmap_rate, w->munmap_pages, w->munmap_large, w->cow_pages,
		w->hot_pages, w->ws_pages, w->kernel_frac, w->asid_bits);
	fprintf(f, ", \"cost_cycles\": {\"work\": %g, \"tlb_hit\": %g, \"mem_ref\": %g, "
		"\"trap\": %g, \"tlbi_va\": %g, \"tlbi_asid\": %g, \"tlbi_all\": %g, "
		"\"dsb\": %g, \"fault\": %g, \"ctxsw\": %g, \"spawn\": %g, \"hz\": %g}",
		k->work, k->tlb_hit, k->mem_ref, k->trap, k->tlbi_va, k->tlbi_asid,
		k->tlbi_all, k->dsb, k->fault, k->ctxsw, k->spawn, k->hz);
	if (!s->done)
		return;
	fprintf(f, ", \"events\": {\"ctxsw\": %llu, \"spawns\": %llu, \"cows\": %llu, "
		"\"first_touch\": %llu, \"munmaps\": %llu, \"munmap_pages\": %llu, "
		"\"asid_rollovers\": %llu}, \"results\": [",
		(unsigned long long)e->ctxsw, (unsigned long long)e->spawns,
		(unsigned long long)e->cows, (unsigned long long)e->first_touch,
		(unsigned long long)e->munmaps, (unsigned long long)e->munmap_pages,
		(unsigned long long)e->asid_rollovers);
	for (int p = 0; p < SLAT_TS_POLICIES; p++) {
		fprintf(f, "%s", p ? ", " : "");
		json_report(f, s, &s->rep[p]);
	}
	fprintf(f, "]");
}

static const char *const tt_phases[] = { "untrapped", "precise", "flush-all", NULL };

const struct perf_cmd perf_cmd_tlbi_trap = {
	.name = "tlbi-trap",
	.prepare = tt_prepare,
	.run = tt_run,
	.release = free,
	.settings_json = tt_settings,
	.table_phases = tt_phases,
	.model_label = "modeled guest time",
};
