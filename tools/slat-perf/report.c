/* SPDX-License-Identifier: MIT */
/* slat-perf: counts tables, side-by-side comparisons, JSON and SVG. */
#include "perf.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Iteration phases: times and counts add up, what a guest feels is the
 * worst of them. */
static void elapsed_add(struct perf_elapsed *sum, const struct perf_elapsed *e)
{
	sum->elapsed_ns += e->elapsed_ns;
	sum->work_ns += e->work_ns;
	sum->faults += e->faults;
#define MAX(f) if (e->f > sum->f) sum->f = e->f
	MAX(lat_p50_ns);
	MAX(lat_p99_ns);
	MAX(lat_max_ns);
	MAX(stall_host_ns);
	MAX(lock_wait_ns);
	MAX(max_write_hold_ns);
#undef MAX
}

/* The phases named @name of @r summed: wall time, counts, and (when @el
 * is not NULL) the modeled elapsed time. Returns false when there is none. */
static bool agg_model(const struct perf_run *r,
		      const char *name, uint64_t *wall, struct slat_vm_stats *st,
		      struct perf_elapsed *el)
{
	bool found = false;

	*wall = 0;
	if (el)
		memset(el, 0, sizeof(*el));
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < r->nph; i++) {
		const struct perf_phase *p = &r->ph[i];
		const uint64_t *src = (const uint64_t *)&p->st;
		uint64_t *dst = (uint64_t *)st;
		if (strcmp(p->name, name))
			continue;
		found = true;
		*wall += p->wall_ns;
		if (el)
			elapsed_add(el, &p->el);
		/* every field of the stats is a uint64_t counter */
		for (size_t k = 0; k < sizeof(*st) / sizeof(uint64_t); k++)
			dst[k] += src[k];
	}
	return found;
}

_Static_assert(sizeof(struct slat_vm_stats) % sizeof(uint64_t) == 0,
	       "stats are uint64_t counters");

struct row {
	const char *label;
	uint64_t (*get)(const struct slat_vm_stats *s);
};

#define G(name, expr) \
	static uint64_t name(const struct slat_vm_stats *s) { return (expr); }
G(g_visited, s->table.visited)
G(g_w_leaf, s->table.written[SLAT_WRITE_LEAF])
G(g_w_table, s->table.written[SLAT_WRITE_TABLE])
G(g_w_clear, s->table.written[SLAT_WRITE_CLEAR])
G(g_w_break, s->table.written[SLAT_WRITE_BREAK])
G(g_w_attr, s->table.written[SLAT_WRITE_ATTR])
G(g_t_ipa, s->table.tlbi[SLAT_TLBI_IPA])
G(g_t_local, s->table.tlbi[SLAT_TLBI_IPA_LOCAL])
G(g_t_range, s->table.tlbi[SLAT_TLBI_RANGE])
G(g_t_vmid, s->table.tlbi[SLAT_TLBI_VMID])
G(g_shoot, s->shootdowns)
G(g_t_vm, perf_vm_tlbi(s))
G(g_cmo_calls, s->cmo_calls)
G(g_cmo_bytes, s->cmo_bytes)
G(g_cmo_elided, s->cmo_elided)
G(g_alloc, s->table.pages_alloc)
G(g_freed, s->table.pages_freed)
G(g_f_tr, s->faults[SLAT_VM_FAULT_TRANSLATION])
G(g_f_perm, s->faults[SLAT_VM_FAULT_PERMISSION])
G(g_f_af, s->faults[SLAT_VM_FAULT_ACCESS_FLAG])
G(g_retries, s->table.retries + s->fault_again)
G(g_accesses, s->accesses)
G(g_wrprot, s->wrprotected_pages)
G(g_pml_logged, s->pml_logged)
G(g_pml_full, s->pml_full_exits)
G(g_host_cow, s->host_cow)
G(g_host_split, s->host_thp_splits)
G(g_host_inval, s->host_invals)
G(g_tlbis, s->table.tlbi[0] + s->table.tlbi[1] + s->table.tlbi[2] + s->table.tlbi[3] +
	   perf_vm_tlbi(s))
G(g_written, s->table.written[0] + s->table.written[1] + s->table.written[2] +
	     s->table.written[3] + s->table.written[4])
G(g_faults, s->faults[0] + s->faults[1] + s->faults[2])
#undef G

static const struct row rows[] = {
	{ "guest accesses", g_accesses },
	{ "entries visited", g_visited },
	{ "written: leaf", g_w_leaf },
	{ "written: table", g_w_table },
	{ "written: clear", g_w_clear },
	{ "written: break (BBM)", g_w_break },
	{ "written: attribute", g_w_attr },
	{ "TLBI by IPA", g_t_ipa },
	{ "TLBI by IPA, local", g_t_local },
	{ "TLBI by range", g_t_range },
	{ "TLBI whole VMID", g_t_vmid },
	{ "TLBI by range, by the VM", g_t_vm },
	{ "TLB shootdowns (handshakes)", g_shoot },
	{ "D-cache cleans (calls)", g_cmo_calls },
	{ "D-cache cleans (bytes)", g_cmo_bytes },
	{ "cache maintenance elided", g_cmo_elided },
	{ "table pages allocated", g_alloc },
	{ "table pages freed", g_freed },
	{ "faults: translation", g_f_tr },
	{ "faults: permission", g_f_perm },
	{ "faults: access flag", g_f_af },
	{ "retries (lost races)", g_retries },
	{ "pages write-protected again", g_wrprot },
	{ "PML: pages logged", g_pml_logged },
	{ "PML-full exits", g_pml_full },
};
#define NROWS (int)(sizeof(rows) / sizeof(rows[0]))

/* With --host-memory=linux: what the host's memory did. */
static const struct row host_rows[] = {
	{ "host: zero pages copied", g_host_cow },
	{ "host: huge zero pages split", g_host_split },
	{ "host: notifier unmaps", g_host_inval },
};

static void print_rows(FILE *f, const struct row *rows, int nrows,
		       const struct slat_vm_stats *st, int n)
{
	for (int r = 0; r < nrows; r++) {
		fprintf(f, "%-30s", rows[r].label);
		for (int j = 0; j < n; j++)
			fprintf(f, " %16llu", (unsigned long long)rows[r].get(&st[j]));
		fprintf(f, "\n");
	}
}

static void secs(char *buf, size_t n, double ns)
{
	snprintf(buf, n, "%.9f", ns / 1e9);
}

/* The cost table the modeled figures used, each assumed cost marked. */
static void print_costs(FILE *f, const struct perf_opts *o)
{
	struct perf_cost c = o->cost;
	int col = 2, assumed = 0;

	fprintf(f, "Costs (docs/slat-perf.md, \"Cost table\"; * assumed: no "
		   "published measurement%s%s):\n ",
		o->cost_file ? "; set by " : "",
		o->cost_file ? o->cost_file : "");
	for (int i = 0; i < perf_cost_nkeys; i++) {
		const struct perf_cost_key *k = &perf_cost_keys[i];
		char item[80];
		int n = snprintf(item, sizeof(item), " %s %g %s%s%s", k->key,
				 *perf_cost_at(&c, k), k->unit,
				 perf_cost_assumed(&c, i) ? "*" : "",
				 o->cost.from_file & (1u << i) ? " (file)" : "");
		if (col + n > 78) {
			fprintf(f, "\n ");
			col = 1;
		}
		fputs(item, f);
		col += n;
		assumed += perf_cost_assumed(&c, i);
	}
	fprintf(f, "\n  %d of %d assumed; a comparison's band shows what each "
		   "moves at half and at double.\n", assumed, perf_cost_nkeys);
}

/* The modeled rows of the counts table: elapsed time, total work, and
 * what a guest feels, one column per phase. */
/* The whole workload of @r, every phase it recorded one after another:
 * modeled elapsed and total work summed (ns). */
static void run_total(const struct perf_run *r, double *elapsed, double *work)
{
	*elapsed = *work = 0;
	for (int i = 0; i < r->nph; i++) {
		*elapsed += r->ph[i].el.elapsed_ns;
		*work += r->ph[i].el.work_ns;
	}
}

static void print_elapsed_rows(FILE *f, const struct perf_elapsed *e, int n)
{
	static const struct { const char *label; size_t off; double div; } r[] = {
#define R(l, f, d) { l, offsetof(struct perf_elapsed, f), d }
		R("modeled elapsed time (s)", elapsed_ns, 1e9),
		R("total work (s)", work_ns, 1e9),
		R("fault latency p50 (us)", lat_p50_ns, 1e3),
		R("fault latency p99 (us)", lat_p99_ns, 1e3),
		R("fault latency max (us)", lat_max_ns, 1e3),
		R("stalled by host ops (us)", stall_host_ns, 1e3),
		R("mmu_lock wait (us)", lock_wait_ns, 1e3),
		R("longest write hold (us)", max_write_hold_ns, 1e3),
#undef R
	};
	char b[40];

	for (size_t k = 0; k < sizeof(r) / sizeof(r[0]); k++) {
		fprintf(f, "%-30s", r[k].label);
		for (int j = 0; j < n; j++) {
			double v = *(const double *)(const void *)
				   ((const char *)&e[j] + r[k].off);

			snprintf(b, sizeof(b), r[k].div > 1e6 ? "%.9f" : "%.3f",
				 v / r[k].div);
			fprintf(f, " %16s", b);
		}
		fprintf(f, "\n");
	}
}

void perf_print_counts(FILE *f, const struct perf_opts *o,
		       const struct perf_cmd *cmd, const struct perf_run *runs,
		       int nruns)
{
	const char *names[16];
	uint64_t wall[16];
	struct slat_vm_stats st[16];
	struct perf_elapsed el[16];
	int n = 0;
	char b[40];

	if (!nruns)
		return;
	for (int i = 0; cmd->table_phases[i] && n < 16; i++)
		if (agg_model(&runs[0], cmd->table_phases[i], &wall[n], &st[n],
			      &el[n]))
			names[n++] = cmd->table_phases[i];
	fprintf(f, "\nCounts per phase (exact, of the run in virtual time, "
		   "where the cost table\ndecides who wins a race: faults and "
		   "retries follow it; iteration phases\nsummed over "
		   "iterations):\n");
	fprintf(f, "%-30s", "phase");
	for (int j = 0; j < n; j++)
		fprintf(f, " %16s", names[j]);
	fprintf(f, "\n");
	print_rows(f, rows, NROWS, st, n);
	if (runs[0].sw.host_linux)
		print_rows(f, host_rows, (int)(sizeof(host_rows) /
					       sizeof(host_rows[0])), st, n);
	fprintf(f, "%-30s", "wall time, this host (s)");
	for (int j = 0; j < n; j++) {
		secs(b, sizeof(b), (double)wall[j]);
		fprintf(f, " %16s", b);
	}
	fprintf(f, "\n");
	print_elapsed_rows(f, el, n);
	double tot_el, tot_work;
	run_total(&runs[0], &tot_el, &tot_work);
	fprintf(f, "whole workload (every phase): modeled elapsed %.9f s, total "
		   "work %.9f s\n", tot_el / 1e9, tot_work / 1e9);
	fprintf(f, "(modeled elapsed: the counts replayed in virtual time, vCPUs "
		   "and host operations contending; total work: counts x the cost "
		   "table%s%s, summed; latencies: the worst vCPU's; see "
		   "docs/slat-perf.md)\n",
		o->cost_file ? " from " : ", defaults",
		o->cost_file ? o->cost_file : "");
	print_costs(f, o);
}

/* Runs are ordered value 0, value 1, ..., repeated: the best wall time of
 * each phase over the repeats of one value; counts of its first run. */
static void value_agg(const struct perf_opts *o, const struct perf_run *runs,
		      int nruns, int v, const char *name, uint64_t *wall,
		      struct slat_vm_stats *st, struct perf_elapsed *model,
		      bool *found)
{
	*found = false;
	for (int r = v; r < nruns; r += o->cmp_n) {
		uint64_t w;
		struct slat_vm_stats s;
		struct perf_elapsed m;

		if (!agg_model(&runs[r], name, &w, &s, &m))
			continue;
		if (!*found) {
			*st = s;
			*wall = w;
			*model = m;
			*found = true;
		} else if (w < *wall) {
			*wall = w;
		}
	}
}

/* @x with thousands separated ("262,657"), or with three significant
 * digits below 10 ("1.92"). */
static void times(char *buf, size_t n, double x)
{
	if (x < 10) {
		snprintf(buf, n, "%.3g", x);
		return;
	}
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%.0f", x), o = 0;
	for (int i = 0; i < len && o + 2 < (int)n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

/* How @b compares with @a, in words: "1.9x faster" for times (@ns),
 * "262,657x fewer" for counts, "same", or that one of them is none. */
static void ratio_words(char *buf, size_t n, double a, double b, bool ns)
{
	char x[32];

	if (a == b) {
		snprintf(buf, n, "same");
	} else if (a <= 0 || b <= 0) {
		snprintf(buf, n, "%s", a <= 0 ? "none before" : "none after");
	} else if (b < a) {
		times(x, sizeof(x), a / b);
		snprintf(buf, n, "%sx %s", x, ns ? "faster" : "fewer");
	} else {
		times(x, sizeof(x), b / a);
		snprintf(buf, n, "%sx %s", x, ns ? "slower" : "more");
	}
}

/* @line without its trailing padding. */
static void cmp_line(FILE *f, char *line)
{
	size_t n = strlen(line);

	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	fprintf(f, "%s\n", line);
}

/* One row of the comparison: @label, the values (seconds when @ns, else
 * counts) and how each later one compares with the first. */
static void cmp_row(FILE *f, const struct perf_opts *o, const char *phase,
		    const char *label, const double *val, bool ns)
{
	char b[48];

	char line[512];
	int n = snprintf(line, sizeof(line), "%-10s %-16s", phase, label);

	for (int v = 0; v < o->cmp_n; v++) {
		if (ns)
			secs(b, sizeof(b), val[v]);
		else
			snprintf(b, sizeof(b), "%llu", (unsigned long long)val[v]);
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %20s", b);
	}
	for (int v = 1; v < o->cmp_n; v++) {
		ratio_words(b, sizeof(b), val[0], val[v], ns);
		n += snprintf(line + n, sizeof(line) - (size_t)n, "  %-18s", b);
	}
	cmp_line(f, line);
}

/* The seed a comparison reproduces: its before and after among the
 * values, or NULL. */
static const struct perf_seed *cmp_seed(const struct perf_opts *o)
{
	const struct perf_seed *s = NULL;

	for (int a = 0; a < o->cmp_n && !s; a++)
		for (int b = a + 1; b < o->cmp_n && !s; b++)
			s = perf_seed_of(o->cmp_name, o->cmp_vals[a],
					 o->cmp_vals[b]);
	return s;
}

/* "page (before)": a compared value with its role in the seed, if any. */
const char *perf_cmp_label(char *buf, size_t n, const struct perf_opts *o,
			   int v)
{
	const struct perf_seed *s = cmp_seed(o);
	const char *val = o->cmp_vals[v];
	const char *role = !s ? NULL : !strcmp(val, s->before) ? "before"
			 : !strcmp(val, s->after) ? "after" : NULL;
	if (role)
		snprintf(buf, n, "%s (%s)", val, role);
	else
		snprintf(buf, n, "%s", val);
	return buf;
}

/* A seed's change run on the other architecture's host: what the same
 * change would do there, which the seed did not measure. In the report,
 * and once on stderr. */
static void cross_arch_warning(FILE *f, const struct perf_opts *o,
			       const struct perf_seed *s)
{
	static bool said;
	const char *seed_arch = s->x86 ? "x86" : "arm64";
	const char *here = o->arch == PERF_ARCH_X86 ? "x86" : "arm64";

	fprintf(f, "  warning: seed %s's change is KVM %s's and was measured "
		"there; this run models %s (--arch %s runs it as the seed "
		"did)\n", s->id, seed_arch, here, seed_arch);
	if (!said && f != stderr)
		fprintf(stderr, "slat-perf: warning: seed %s's change is KVM "
			"%s's; this run models %s (--arch %s runs it as the "
			"seed did)\n", s->id, seed_arch, here, seed_arch);
	said = true;
}

/* What the comparison is: the seed it reproduces, and what is measured
 * and what is modeled. */
static void cmp_head(FILE *f, const struct perf_opts *o)
{
	const struct perf_seed *s = cmp_seed(o);

	fprintf(f, "\nCompare --%s:", o->cmp_name);
	for (int v = 0; v < o->cmp_n; v++)
		fprintf(f, " %s%s", v ? "vs " : "", o->cmp_vals[v]);
	fprintf(f, "\n");
	if (s)
		fprintf(f, "  seed %s, %s (%s; docs/seeds.md):\n  before the "
			"change --%s=%s, after it --%s=%s\n", s->id, s->what,
			s->by, s->sw, s->before, s->sw, s->after);
	if (s && s->x86 != (o->arch == PERF_ARCH_X86))
		cross_arch_warning(f, o, s);
	fprintf(f, "  measured in this run: exact counts (entries written and "
		   "visited, TLBIs, faults)\n  and this host's wall time (best "
		   "of %d run%s each, values alternating);\n  modeled: the counts "
		   "x the cost table (docs/slat-perf.md), as elapsed time\n  on a "
		   "CPU per vCPU and as total work; each value against %s\n",
		o->repeat, o->repeat > 1 ? "s" : "", o->cmp_vals[0]);
}

/* The modeled elapsed time of the phases named @name of @r, replayed with
 * the costs of @o. */
static double replay_ns(const struct perf_opts *o, const struct perf_run *r,
			const char *name)
{
	double ns = 0;

	for (int i = 0; i < r->nph; i++) {
		struct perf_elapsed e;

		if (strcmp(r->ph[i].name, name))
			continue;
		if (perf_phase_elapsed(o, &r->sw, &r->ph[i], &e))
			return -1;
		ns += e.elapsed_ns;
	}
	return ns;
}

/*
 * The band of the modeled ratio of value @v to value 0 in phase @name:
 * the lowest and highest ratio when each assumed cost in turn is halved
 * or doubled, the counts of this run replayed (the races the run decided
 * with the defaults stay as they were). False when a replay failed.
 */
static bool band(const struct perf_opts *o, const struct perf_run *runs,
		 int v, const char *name, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = 0;
	for (int i = 0; i < perf_cost_nkeys; i++) {
		if (!perf_cost_assumed(&o->cost, i))
			continue;
		for (double k = 0.5; k <= 2; k *= 4) {
			struct perf_opts oo = *o;
			*perf_cost_at(&oo.cost, &perf_cost_keys[i]) *= k;
			double a = replay_ns(&oo, &runs[0], name);
			double b = replay_ns(&oo, &runs[v], name);
			if (a < 0 || b < 0)
				return false;
			if (a <= 0 || b <= 0)
				continue;
			*lo = fmin(*lo, b / a);
			*hi = fmax(*hi, b / a);
		}
	}
	return *hi > 0;
}

/* "1.7-2.2x faster", "1.1x slower to 1.3x faster": a band in words. */
static void band_words(char *buf, size_t n, double lo, double hi)
{
	char a[24], b[24];

	times(a, sizeof(a), hi < 1 ? 1 / hi : hi);
	times(b, sizeof(b), lo < 1 ? 1 / lo : lo);
	if (!strcmp(a, b)) {
		snprintf(buf, n, "%sx %s, unmoved", a,
			 hi < 1 ? "faster" : hi > 1 ? "slower" : "");
	} else if (hi <= 1) {
		times(a, sizeof(a), 1 / hi);
		times(b, sizeof(b), 1 / lo);
		snprintf(buf, n, "%s-%sx faster", a, b);
	} else if (lo >= 1) {
		times(a, sizeof(a), lo);
		times(b, sizeof(b), hi);
		snprintf(buf, n, "%s-%sx slower", a, b);
	} else {
		times(a, sizeof(a), 1 / lo);
		times(b, sizeof(b), hi);
		snprintf(buf, n, "%sx faster to %sx slower", a, b);
	}
}

/* The modeled ratios' bands of phase @name, a row under its figures. */
static void cmp_band_row(FILE *f, const struct perf_opts *o,
			 const struct perf_run *runs, int nruns,
			 const char *name)
{
	char line[512], b[96];
	int n = snprintf(line, sizeof(line), "%-10s %-16s", "",
			 "modeled band");

	if (nruns < o->cmp_n)
		return;
	for (int v = 0; v < o->cmp_n; v++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %20s", "");
	for (int v = 1; v < o->cmp_n; v++) {
		double lo, hi;
		if (band(o, runs, v, name, &lo, &hi))
			band_words(b, sizeof(b), lo, hi);
		else
			snprintf(b, sizeof(b), "-");
		n += snprintf(line + n, sizeof(line) - (size_t)n, "  %-18s", b);
	}
	cmp_line(f, line);
}

void perf_print_compare(FILE *f, const struct perf_opts *o,
			const struct perf_cmd *cmd, const struct perf_run *runs,
			int nruns)
{
	char lab[64], vs[96];

	char line[512];
	int n;

	cmp_head(f, o);
	n = snprintf(line, sizeof(line), "%-10s %-16s", "phase", "measure");
	for (int v = 0; v < o->cmp_n; v++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %20.20s",
			      perf_cmp_label(lab, sizeof(lab), o, v));
	for (int v = 1; v < o->cmp_n; v++) {
		snprintf(vs, sizeof(vs), "%s vs %s", o->cmp_vals[v],
			 o->cmp_vals[0]);
		n += snprintf(line + n, sizeof(line) - (size_t)n, "  %-18s",
			      vs);
	}
	cmp_line(f, line);
	for (int i = 0; cmd->table_phases[i]; i++) {
		const char *name = cmd->table_phases[i];
		double wall[8], mod[8], work[8], c[4][8];
		bool found = true;

		for (int v = 0; v < o->cmp_n; v++) {
			struct slat_vm_stats st;
			struct perf_elapsed e;
			uint64_t w;
			bool fv;

			value_agg(o, runs, nruns, v, name, &w, &st, &e, &fv);
			found &= fv;
			wall[v] = (double)w;
			mod[v] = fv ? e.elapsed_ns : 0;
			work[v] = fv ? e.work_ns : 0;
			c[0][v] = (double)g_written(&st);
			c[1][v] = (double)g_visited(&st);
			c[2][v] = (double)g_tlbis(&st);
			c[3][v] = (double)g_faults(&st);
		}
		if (!found)
			continue;
		cmp_row(f, o, name, "wall (s)", wall, true);
		cmp_row(f, o, "", "modeled (s)", mod, true);
		cmp_band_row(f, o, runs, nruns, name);
		cmp_row(f, o, "", "total work (s)", work, true);
		cmp_row(f, o, "", "entries written", c[0], false);
		cmp_row(f, o, "", "entries visited", c[1], false);
		cmp_row(f, o, "", "TLBIs", c[2], false);
		cmp_row(f, o, "", "faults", c[3], false);
	}
	double tot[2][8];
	for (int v = 0; v < o->cmp_n && v < nruns; v++)
		run_total(&runs[v], &tot[0][v], &tot[1][v]);
	if (nruns >= o->cmp_n) {
		cmp_row(f, o, "workload", "modeled (s)", tot[0], true);
		cmp_row(f, o, "", "total work (s)", tot[1], true);
	}
	fprintf(f, "(workload: every phase of the run, one after another;\n"
		   " modeled band: the modeled ratio with each assumed cost at "
		   "half and at double,\n the counts of this run replayed)\n");
	print_costs(f, o);
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_switches(FILE *f, const struct perf_switches *sw)
{
	static const char *const names[] = { "cmo", "recover", "flush",
		"split-skip", "eager-split", "mmio-map", "dirty", "block-fault",
		"wp-partial", "x86-dirty", "host-memory", "fault-lock" };
	char b[48];

	fprintf(f, "{");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str(f, names[i]);
		fprintf(f, ": ");
		json_str(f, perf_switch_get(sw, names[i], b, sizeof(b)));
	}
	fprintf(f, "}");
}

static void json_counts(FILE *f, const struct slat_vm_stats *s)
{
	fprintf(f, "{\"accesses\": %llu, \"visited\": %llu, \"written\": {\"leaf\": %llu, "
		"\"table\": %llu, \"clear\": %llu, \"break\": %llu, \"attr\": %llu}, "
		"\"tlbi\": {\"ipa\": %llu, \"ipa_local\": %llu, \"range\": %llu, "
		"\"vmid\": %llu, \"vm_range\": %llu}, \"shootdowns\": %llu, \"dcache_clean\": {\"calls\": %llu, "
		"\"bytes\": %llu, \"elided\": %llu}, \"table_pages\": {\"allocated\": %llu, "
		"\"freed\": %llu}, \"faults\": {\"translation\": %llu, \"permission\": %llu, "
		"\"access_flag\": %llu}, \"retries\": %llu, \"wrprotected_pages\": %llu, "
		"\"mmio_accesses\": %llu, \"pml_logged\": %llu, \"pml_full_exits\": %llu, "
		"\"host\": {\"cow\": %llu, \"thp_splits\": %llu, \"notifier_unmaps\": %llu}}",
#define U(x) (unsigned long long)(x)
		U(s->accesses), U(s->table.visited),
		U(s->table.written[SLAT_WRITE_LEAF]), U(s->table.written[SLAT_WRITE_TABLE]),
		U(s->table.written[SLAT_WRITE_CLEAR]), U(s->table.written[SLAT_WRITE_BREAK]),
		U(s->table.written[SLAT_WRITE_ATTR]),
		U(s->table.tlbi[SLAT_TLBI_IPA]), U(s->table.tlbi[SLAT_TLBI_IPA_LOCAL]),
		U(s->table.tlbi[SLAT_TLBI_RANGE]), U(s->table.tlbi[SLAT_TLBI_VMID]),
		U(perf_vm_tlbi(s)),
		U(s->shootdowns), U(s->cmo_calls), U(s->cmo_bytes), U(s->cmo_elided),
		U(s->table.pages_alloc), U(s->table.pages_freed),
		U(s->faults[SLAT_VM_FAULT_TRANSLATION]),
		U(s->faults[SLAT_VM_FAULT_PERMISSION]),
		U(s->faults[SLAT_VM_FAULT_ACCESS_FLAG]),
		U(s->table.retries + s->fault_again), U(s->wrprotected_pages),
		U(s->mmio_accesses), U(s->pml_logged), U(s->pml_full_exits),
		U(s->host_cow), U(s->host_thp_splits), U(s->host_invals));
#undef U
}

/* x86: the phase's invalidations as KVM x86 does them (perf_x86_flush);
 * the vCPUs' own flushes are INVEPTs on EPT (all-context for a request,
 * single-context for a local one), ASID flushes on NPT. */
static void json_x86_flush(FILE *f, const struct perf_opts *o,
			   const struct perf_phase *p)
{
	struct perf_x86_flush x;

	perf_x86_flush(p, &x);
	fprintf(f, ",\n        \"x86_flush\": {\"flushes\": %llu, \"requests\": "
		"%llu, \"kicks\": %llu, ", (unsigned long long)x.flushes,
		(unsigned long long)x.requests, (unsigned long long)x.kicks);
	if (o->x86_fmt == SLAT_FMT_NPT)
		fprintf(f, "\"asid_flush\": %llu}",
			(unsigned long long)(x.vcpu_flushes + x.local_flushes));
	else
		fprintf(f, "\"invept\": %llu, \"invept_single\": %llu}",
			(unsigned long long)x.vcpu_flushes,
			(unsigned long long)x.local_flushes);
}

/* One phase: times, what a guest feels, counts. */
static void json_phase(FILE *f, const struct perf_opts *o,
		       const struct perf_phase *p)
{
	const struct perf_elapsed e = p->el;

	fprintf(f, "       {\"name\": ");
	json_str(f, p->name);
	fprintf(f, ", \"iteration\": %d, \"wall_ns\": %llu, \"modeled_ns\": %.1f, "
		"\"total_work_ns\": %.1f, \"vcpus\": %u,\n        \"guest\": "
		"{\"faults\": %llu, \"fault_latency_ns\": {\"p50\": %.1f, "
		"\"p99\": %.1f, \"max\": %.1f}, \"stalled_by_host_ns\": %.1f, "
		"\"mmu_lock_wait_ns\": %.1f, \"longest_write_hold_ns\": %.1f},\n"
		"        \"counts\": ", p->iteration, (unsigned long long)p->wall_ns,
		e.elapsed_ns, e.work_ns, p->vcpus, (unsigned long long)e.faults,
		e.lat_p50_ns, e.lat_p99_ns, e.lat_max_ns, e.stall_host_ns,
		e.lock_wait_ns, e.max_write_hold_ns);
	json_counts(f, &p->st);
	if (o->arch == PERF_ARCH_X86)
		json_x86_flush(f, o, p);
}

/*
 * fclose, and also report a write that failed before the last flush (it
 * leaves only the stream's error flag). Returns 0, or -1 with errno set.
 */
static int close_checked(FILE *f)
{
	int bad, saved;

	errno = 0;
	bad = fflush(f) != 0 || ferror(f);
	saved = errno ? errno : EIO;
	if (fclose(f) != 0 && !bad)
		return -1;
	if (bad)
		errno = saved;
	return bad ? -1 : 0;
}

/* The comparison: its switch, values, their labels and the seed. */
static void json_compare(FILE *f, const struct perf_opts *o)
{
	const struct perf_seed *s = cmp_seed(o);
	char lab[64];

	fprintf(f, "{\"switch\": ");
	json_str(f, o->cmp_name);
	fprintf(f, ", \"values\": [");
	for (int v = 0; v < o->cmp_n; v++) {
		fprintf(f, "%s", v ? ", " : "");
		json_str(f, o->cmp_vals[v]);
	}
	fprintf(f, "], \"labels\": [");
	for (int v = 0; v < o->cmp_n; v++) {
		fprintf(f, "%s", v ? ", " : "");
		json_str(f, perf_cmp_label(lab, sizeof(lab), o, v));
	}
	fprintf(f, "],\n    \"seed\": ");
	if (!s) {
		fprintf(f, "null}");
		return;
	}
	const char *k[] = { "id", "what", "by", "message_id", "before", "after" };
	const char *val[] = { s->id, s->what, s->by, s->msgid, s->before,
			      s->after };
	for (int i = 0; i < 6; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "{", k[i]);
		json_str(f, val[i]);
	}
	fprintf(f, "}}");
}

int perf_write_json(FILE *f, const char *path, const struct perf_opts *o,
		    const struct perf_cmd *cmd, void *state,
		    const struct perf_run *runs, int nruns)
{
	struct perf_cost cost = o->cost;

	fprintf(f, "{\n  \"tool\": \"slat-perf\",\n  \"schema\": 1,\n  \"command\": ");
	json_str(f, cmd->name);
	fprintf(f, ",\n  \"settings\": {");
	cmd->settings_json(state, f);
	fprintf(f, ", \"arch\": \"%s\", \"format\": \"%s\", \"ept_levels\": %d, "
		"\"repeat\": %d},\n", o->arch == PERF_ARCH_X86 ? "x86" : "arm64",
		perf_fmt_name(o->arch == PERF_ARCH_X86 ? o->x86_fmt
						       : SLAT_FMT_ARM_S2),
		o->ept_levels, o->repeat);
	fprintf(f, "  \"cost_ns\": {");
	for (int i = 0; i < perf_cost_nkeys; i++)
		fprintf(f, "%s\"%s\": %g", i ? ", " : "", perf_cost_keys[i].key,
			*perf_cost_at(&cost, &perf_cost_keys[i]));
	fprintf(f, "},\n  \"cost_assumed\": [");
	for (int i = 0, n = 0; i < perf_cost_nkeys; i++)
		if (perf_cost_assumed(&cost, i))
			fprintf(f, "%s\"%s\"", n++ ? ", " : "",
				perf_cost_keys[i].key);
	fprintf(f, "],\n");
	fprintf(f, "  \"compare\": ");
	if (o->cmp_name) {
		json_compare(f, o);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"runs\": [\n");
	for (int r = 0; r < nruns; r++) {
		fprintf(f, "    {\"label\": ");
		json_str(f, runs[r].label);
		fprintf(f, ", \"switches\": ");
		json_switches(f, &runs[r].sw);
		double tot_el, tot_work;
		run_total(&runs[r], &tot_el, &tot_work);
		fprintf(f, ",\n     \"workload\": {\"modeled_ns\": %.1f, "
			"\"total_work_ns\": %.1f}", tot_el, tot_work);
		fprintf(f, ",\n     \"phases\": [\n");
		for (int i = 0; i < runs[r].nph; i++) {
			const struct perf_phase *p = &runs[r].ph[i];

			json_phase(f, o, p);
			fprintf(f, "}%s\n", i + 1 < runs[r].nph ? "," : "");
		}
		fprintf(f, "     ]}%s\n", r + 1 < nruns ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (close_checked(f)) {
		fprintf(stderr, "slat-perf: --json %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- SVG: horizontal bars, wall time and modeled time per phase ---- */

struct chart {
	int nval, n;
	const char *names[16];
	double wall[16][8], mod[16][8], maxw, maxm;
};

/* The phases every value has, with their wall and modeled times. */
static void chart_data(struct chart *c, const struct perf_opts *o,
		       const struct perf_cmd *cmd, const struct perf_run *runs,
		       int nruns)
{
	memset(c, 0, sizeof(*c));
	c->nval = o->cmp_name ? o->cmp_n : 1;
	c->maxw = c->maxm = 1;
	for (int i = 0; cmd->table_phases[i] && c->n < 16; i++) {
		bool all = true;

		for (int v = 0; v < c->nval; v++) {
			struct slat_vm_stats st;
			struct perf_elapsed e;
			uint64_t w = 0;
			double m;
			bool fv;

			if (o->cmp_name)
				value_agg(o, runs, nruns, v, cmd->table_phases[i], &w,
					  &st, &e, &fv);
			else
				fv = agg_model(&runs[0], cmd->table_phases[i], &w,
					       &st, &e);
			m = fv ? e.elapsed_ns : 0;
			all &= fv;
			c->wall[c->n][v] = fv ? (double)w : 0;
			c->mod[c->n][v] = fv ? m : 0;
			if (c->wall[c->n][v] > c->maxw)
				c->maxw = c->wall[c->n][v];
			if (c->mod[c->n][v] > c->maxm)
				c->maxm = c->mod[c->n][v];
		}
		if (all)
			c->names[c->n++] = cmd->table_phases[i];
	}
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* One bar and its value, scaled to ns, us, ms or s. */
static void chart_bar(FILE *f, int x, int y, int h, double len, const char *fill,
		      double ns)
{
	char b[32];

	if (len < 1)
		len = 1;
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"fill=\"%s\"/>\n", x, y, len, h - 3, fill);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", x + len + 4, y + h - 7,
		perf_scaled(b, sizeof(b), ns));
}

static void chart_head(FILE *f, const struct perf_opts *o,
		       const struct perf_cmd *cmd, int w, int h, int lw, int pw)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", w, h);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">"
		"slat-perf ");
	xml_text(f, o->title[0] ? o->title : cmd->name);
	fprintf(f, "</text>\n");
	const struct perf_seed *s = o->cmp_name ? cmp_seed(o) : NULL;
	if (s) {
		char line[256];

		snprintf(line, sizeof(line), "seed %s, %s (%s): --%s=%s before "
			 "the change, --%s=%s after", s->id, s->what, s->by, s->sw,
			 s->before, s->sw, s->after);
		fprintf(f, "<text x=\"10\" y=\"36\">");
		xml_text(f, line);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "<text x=\"%d\" y=\"52\">wall time, this host</text>\n", lw);
	fprintf(f, "<text x=\"%d\" y=\"52\">%s</text>\n", lw + pw + 120,
		cmd->model_label ? cmd->model_label : "modeled hardware time");
}

int perf_write_svg(FILE *f, const char *path, const struct perf_opts *o,
		   const struct perf_cmd *cmd, const struct perf_run *runs,
		   int nruns)
{
	static const char *const colour[] = { "#4e79a7", "#f28e2b", "#59a14f",
		"#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7" };
	struct chart c;
	int bar = 18, lw = 110, pw = 330, gap = 14, h, w;

	chart_data(&c, o, cmd, runs, nruns);
	h = 78 + c.n * (c.nval * bar + gap) + 20 * c.nval + 20;
	w = lw + 2 * (pw + 120);
	if (w < 10 + 7 * (int)strlen(o->title) + 100)
		w = 10 + 7 * (int)strlen(o->title) + 100;
	chart_head(f, o, cmd, w, h, lw, pw);
	for (int i = 0; i < c.n; i++) {
		int y0 = 66 + i * (c.nval * bar + gap);

		fprintf(f, "<text x=\"10\" y=\"%d\">%s</text>\n",
			y0 + c.nval * bar / 2 + 4, c.names[i]);
		for (int v = 0; v < c.nval; v++) {
			int y = y0 + v * bar;

			chart_bar(f, lw, y, bar, c.wall[i][v] / c.maxw * pw,
				  colour[v % 8], c.wall[i][v]);
			chart_bar(f, lw + pw + 120, y, bar, c.mod[i][v] / c.maxm * pw,
				  colour[v % 8], c.mod[i][v]);
		}
	}
	for (int v = 0; v < c.nval; v++) {
		int y = h - 20 * (c.nval - v) - 5;

		fprintf(f, "<rect x=\"10\" y=\"%d\" width=\"12\" height=\"12\" "
			"fill=\"%s\"/>\n", y - 10, colour[v % 8]);
		char lab[64];

		fprintf(f, "<text x=\"28\" y=\"%d\">", y);
		xml_text(f, o->cmp_name ? perf_cmp_label(lab, sizeof(lab), o, v)
					: "this run");
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</svg>\n");
	if (close_checked(f)) {
		fprintf(stderr, "slat-perf: --svg %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
