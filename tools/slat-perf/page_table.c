/* SPDX-License-Identifier: MIT */
/*
 * slat-perf page-table: kvm_page_table_test's options, stages and lines on
 * the simulator.
 */
#include "perf.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pt_state {
	uint32_t mode_mask;        /* -m: the modes given, by ID */
	int modes[PERF_MAX_MODES]; /* the modes to run, in ID order */
	int nr_modes;
	uint64_t size;
	uint32_t nr_vcpus;
	const char *backing;
	uint64_t phys_offset;
	bool misalign;             /* -u */
};

enum pt_stage { PT_CREATE, PT_UPDATE, PT_ADJUST };

/* A vCPU's view, in the test's own terms: host pages are this host's
 * (getpagesize()), large pages the backing source's. */
struct pt_vcpu_arg {
	enum pt_stage stage;
	uint64_t gpa, size, host_page, large_page;
	bool write, anonymous;
	int err;
};

static void pt_help(FILE *f, const struct perf_opts *o)
{
	/* kvm_page_table_test's help, as it prints it */
	fprintf(f, "\nusage: %s [-h] [-p offset] [-m mode] [-b mem-size]\n"
		"          [-v vcpus] [-s mem-type] [-u]\n\n"
		" -p: specify guest physical test memory offset\n"
		"     Warning: a low offset can conflict with the loaded test code.\n",
		o->prog);
	perf_modes_help(f, o);
	fputs(" -b: specify size of the memory region for testing. e.g. 10M or 3G.\n"
	      "     (default: 1G)\n"
	      " -v: specify the number of vCPUs to run\n"
	      "     (default: 1)\n", f);
	perf_backing_help(f, "-s");
	fputs(" -u: move the test memslot GPA by one guest page after creating\n"
	      "     the memslot, forcing a hugetlb HVA/GPA offset mismatch\n\n", f);
	if (o->selftest_only)
		return;
	fputs("slat-perf page-table: the lines above are kvm_page_table_test's.\n"
	      "Here -s also takes synthetic, synthetic_2mb, synthetic_1gb (no data);\n"
	      "a hugetlb source without reserved huge pages runs on the synthetic\n"
	      "source of its page size (a note after the run says so). --arch\n"
	      "arm64|x86 picks the supported modes (default arm64; x86: mode 9,\n"
	      "Intel EPT, or AMD NPT with --format npt). Strategy switches,\n"
	      "--compare, --json, --svg: slat-perf\n"
	      "--help\n\n", f);
}

static int pt_prepare(struct perf_opts *o, void **statep)
{
	struct pt_state *s = calloc(1, sizeof(*s));
	int c;

	if (!s)
		return 1;
	s->size = 1ull << 30;
	s->nr_vcpus = 1;
	s->backing = "anonymous";
	optind = 1;
	opterr = 0;
	while ((c = getopt(o->argc, o->argv, ":hp:m:b:v:s:u")) != -1) {
		switch (c) {
		case 'h': pt_help(stdout, o); exit(0);
		case 'p': s->phys_offset = perf_parse_size("-p (guest physical offset)", optarg); break;
		case 'm': s->mode_mask |= 1u << perf_parse_mode(optarg); break;
		case 'b': s->size = perf_parse_size("-b (test memory size)", optarg); break;
		case 'v': s->nr_vcpus = perf_parse_vcpus(optarg, 1); break;
		case 's': s->backing = perf_parse_backing(optarg); break;
		case 'u': s->misalign = true; break;
		default: perf_bad_option(o, c, pt_help);
		}
	}
	if (optind < o->argc)
		perf_usage_error("page-table: unexpected argument '%s'", o->argv[optind]);
	if (!s->size)
		perf_usage_error("-b 0: the test memory size must be at least one "
				 "guest page (e.g. -b 4K, -b 1G)");
	s->nr_modes = perf_modes_select(o, s->mode_mask, s->modes);
	*statep = s;
	return 0;
}

/* KVM_UPDATE_MAPPINGS on a source other than plain anonymous memory: per
 * large page, a write of its first host page (which breaks the block),
 * then reads of the host_pages_per_lpage / 2 host pages from its middle.
 * The address runs on as the test's does: after the reads it is half a
 * large page plus those pages further, which is the next large page
 * unless a large page is one host page (shmem: then half a page). */
static int pt_update_lpages(struct slat_vcpu *v, const struct pt_vcpu_arg *a)
{
	uint64_t val = 0x0123456789ABCDEFull, g = a->gpa;
	uint64_t half = a->large_page / a->host_page / 2;
	int ret = 0;

	for (uint64_t i = 0; i < a->size / a->large_page && !ret; i++) {
		ret = slat_vcpu_access(v, g, &val, 8, true);
		g += a->large_page / 2;
		for (uint64_t j = 0; j < half && !ret; j++, g += a->host_page)
			ret = slat_vcpu_access(v, g, &val, 8, false);
	}
	return ret;
}

/* Every host page, written or read. */
static int pt_host_pages(struct slat_vcpu *v, const struct pt_vcpu_arg *a,
			 bool write)
{
	uint64_t val = 0x0123456789ABCDEFull, end = a->gpa + a->size;
	int ret = 0;

	for (uint64_t g = a->gpa; g < end && !ret; g += a->host_page)
		ret = slat_vcpu_access(v, g, &val, 8, write);
	return ret;
}

/* kvm_page_table_test's guest_code, one stage. */
static void pt_guest(struct slat_vcpu *v, void *argp)
{
	struct pt_vcpu_arg *a = argp;
	uint64_t val = 0x0123456789ABCDEFull, end = a->gpa + a->size;
	int ret = 0;

	switch (a->stage) {
	case PT_CREATE:
		for (uint64_t g = a->gpa; g < end && !ret; g += a->large_page)
			ret = slat_vcpu_access(v, g, &val, 8, a->write);
		break;
	case PT_UPDATE:
		ret = a->anonymous ? pt_host_pages(v, a, true)
				   : pt_update_lpages(v, a);
		break;
	case PT_ADJUST:
		ret = pt_host_pages(v, a, false);
		break;
	}
	a->err = ret;
}

/* Every vCPU runs stage @stage; returns 0, or -1 after a message. */
static int run_stage(struct slat_vm *vm, struct pt_vcpu_arg *args, uint32_t n,
		     enum pt_stage stage)
{
	for (uint32_t i = 0; i < n; i++) {
		args[i].stage = stage;
		args[i].err = 0;
		if (slat_vcpu_run(slat_vm_vcpu(vm, i), pt_guest, &args[i]))
			return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		slat_vcpu_join(slat_vm_vcpu(vm, i));
	for (uint32_t i = 0; i < n; i++)
		if (args[i].err) {
			fprintf(stderr, "slat-perf: vCPU %u: guest access failed (%d): %s\n",
				i, args[i].err, slat_vm_error(vm));
			return -1;
		}
	return 0;
}

/* One mode's run: its layout and VM. */
struct pt_run {
	struct pt_state *s;
	const struct perf_opts *o;
	struct perf_run *run;
	FILE *out;
	struct slat_config tcfg;
	struct perf_backing back;
	struct slat_vm *vm;
	struct slat_vm_memslot m;
	struct pt_vcpu_arg *args;
	uint64_t granule, align, size, gpa;
	uint64_t host_page;        /* getpagesize() */
};

/* The test memory, aligned and placed as the test does; usage errors for
 * what does not fit. */
static void pt_layout(struct pt_run *r)
{
	struct pt_state *s = r->s;
	uint64_t top = 1ull << r->tcfg.ia_bits;

	r->granule = r->tcfg.granule;
	r->host_page = (uint64_t)sysconf(_SC_PAGESIZE);
	perf_backing_resolve(s->backing, s->size, &r->back);
	r->align = r->back.page_size > r->granule ? r->back.page_size : r->granule;
	if (s->size > UINT64_MAX - r->align)
		perf_usage_error("-b 0x%llx: too large", (unsigned long long)s->size);
	r->size = (s->size + r->align - 1) & ~(r->align - 1);
	if (s->phys_offset) {
		r->gpa = s->phys_offset;
		if (r->gpa % r->align)
			perf_usage_error("-p 0x%llx is not aligned to 0x%llx",
					 (unsigned long long)r->gpa,
					 (unsigned long long)r->align);
	} else {
		uint64_t max_gfn = top / r->granule - 1;

		if (r->size / r->granule >= max_gfn)
			perf_usage_error("0x%llx bytes do not fit in the mode's %u-bit "
					 "guest physical space",
					 (unsigned long long)r->size, r->tcfg.ia_bits);
		r->gpa = ((max_gfn - r->size / r->granule) * r->granule) &
			 ~(r->align - 1);
	}
	if (r->gpa > top || r->size + (s->misalign ? r->granule : 0) > top - r->gpa)
		perf_usage_error("test memory [0x%llx, +0x%llx) is beyond the mode's "
				 "%u-bit guest physical space (change -p or -b)",
				 (unsigned long long)r->gpa,
				 (unsigned long long)r->size, r->tcfg.ia_bits);
}

/* The VM, its slot (moved by a page with -u) and vCPUs. */
static int pt_create(struct pt_run *r, const struct perf_switches *sw)
{
	struct slat_vm_config cfg;
	int ret;

	perf_vm_config(sw, &r->o->cost, &r->tcfg, &cfg);
	r->vm = slat_vm_create(&cfg, &ret);
	if (!r->vm) {
		fprintf(stderr, "slat-perf: creating the VM failed (%d)\n", ret);
		return 1;
	}
	r->m = (struct slat_vm_memslot){ .slot = 1, .guest_phys_addr = r->gpa,
					 .memory_size = r->size,
					 .backing = r->back.sim };
	ret = slat_vm_set_user_memory_region(r->vm, &r->m);
	if (!ret && r->s->misalign) {
		r->gpa += r->granule;
		r->m.guest_phys_addr = r->gpa;
		ret = slat_vm_set_user_memory_region(r->vm, &r->m);
	}
	if (ret) {
		fprintf(stderr, "slat-perf: creating the memslot: %s\n",
			slat_vm_error(r->vm));
		return 1;
	}
	if (!(r->args = calloc(r->s->nr_vcpus, sizeof(*r->args))))
		return 1;
	for (uint32_t i = 0; i < r->s->nr_vcpus; i++) {
		r->args[i] = (struct pt_vcpu_arg){
			.gpa = r->gpa, .size = r->size, .host_page = r->host_page,
			.large_page = r->back.page_size, .write = !(i % 2),
			.anonymous = !strcmp(r->back.sim, "anonymous") ||
				     !strcmp(r->back.sim, "synthetic"),
		};
		if (!slat_vm_create_vcpu(r->vm, i, &ret)) {
			fprintf(stderr, "slat-perf: creating vCPU %u: %s\n", i,
				slat_vm_error(r->vm));
			return 1;
		}
	}
	return 0;
}

static void pt_lines(const struct pt_run *r, int mode)
{
	slat_pa_t hpa = slat_pa(0);

	slat_vm_gpa_to_hpa(r->vm, r->gpa, &hpa);
	fprintf(r->out, "Testing guest mode: %s\n", perf_modes[mode].str);
	fprintf(r->out, "Testing memory backing src type: %s\n", r->back.name);
	fprintf(r->out, "Testing memory backing src granularity: 0x%llx\n",
		(unsigned long long)r->back.page_size);
	fprintf(r->out, "Testing memory size(aligned): 0x%llx\n",
		(unsigned long long)r->size);
	fprintf(r->out, "Guest physical test memory offset: 0x%llx\n",
		(unsigned long long)r->gpa);
	fprintf(r->out, "Host  virtual  test memory offset: 0x%llx\n",
		(unsigned long long)slat_pa_v(hpa));
	fprintf(r->out, "Number of testing vCPUs: %u\n", r->s->nr_vcpus);
	fprintf(r->out, "Started all vCPUs successfully\n");
	fflush(r->out);
}

/* Dirty logging on before UPDATE, off before ADJUST: the test's untimed
 * steps, recorded as phases. */
static int pt_logging(struct pt_run *r, bool on)
{
	struct perf_timer t;
	int ret;

	r->m.flags = on ? SLAT_VM_MEM_LOG_DIRTY_PAGES : 0;
	perf_phase_begin(&t, r->o, r->vm, on ? "log-on" : "log-off", 0);
	ret = slat_vm_set_user_memory_region(r->vm, &r->m);
	perf_phase_end(&t, r->run, on ? "log-on" : "log-off", 0, -1);
	if (ret)
		fprintf(stderr, "slat-perf: %s dirty logging: %s\n",
			on ? "enabling" : "disabling", slat_vm_error(r->vm));
	return ret ? 1 : 0;
}

/* The guest accesses stage @st makes, for the progress bar. */
static uint64_t pt_accesses(const struct pt_run *r, enum pt_stage st)
{
	const struct pt_vcpu_arg *a = &r->args[0];
	uint64_t host = r->size / a->host_page, large = r->size / a->large_page;

	if (st == PT_CREATE)
		return large * r->s->nr_vcpus;
	if (st == PT_UPDATE && !a->anonymous)
		return large * (1 + a->large_page / a->host_page / 2) *
		       r->s->nr_vcpus;
	return host * r->s->nr_vcpus;
}

static int pt_stages(struct pt_run *r)
{
	static const char *const stage_names[] = {
		"KVM_CREATE_MAPPINGS", "KVM_UPDATE_MAPPINGS", "KVM_ADJUST_MAPPINGS",
	};
	static const char *const phase_names[] = { "create", "update", "adjust" };

	for (int st = PT_CREATE; st <= PT_ADJUST; st++) {
		struct perf_timer t;
		uint64_t ns;
		int bad;

		if (st != PT_CREATE && pt_logging(r, st == PT_UPDATE))
			return 1;
		perf_phase_begin(&t, r->o, r->vm, stage_names[st],
				 pt_accesses(r, (enum pt_stage)st));
		bad = run_stage(r->vm, r->args, r->s->nr_vcpus, (enum pt_stage)st);
		ns = perf_phase_end(&t, r->run, phase_names[st], 0, -1);
		if (bad)
			return 1;
		fprintf(r->out, "%s: total execution time: %s\n\n", stage_names[st],
			PERF_TS(ns));
		fflush(r->out);
	}
	return 0;
}

static int pt_run_mode(struct pt_state *s, const struct perf_opts *o,
		       const struct perf_switches *sw, int mode,
		       struct perf_run *run, FILE *out)
{
	struct pt_run r = { .s = s, .o = o, .run = run, .out = out };
	int rc;

	perf_mode_check(o, mode);
	if (s->misalign && !perf_backing_hugetlb(s->backing))
		perf_assert_fail(o, "kvm_page_table_test.c:285: "
				 "is_backing_src_hugetlb(src_type)",
				 "-u needs a hugetlb -s source",
				 "Memslot GPA misalignment requires hugetlb backing");
	perf_mode_config(o, mode, &r.tcfg);
	pt_layout(&r);
	rc = pt_create(&r, sw);
	if (!rc) {
		pt_lines(&r, mode);
		rc = pt_stages(&r);
	}
	free(r.args);
	slat_vm_destroy(r.vm);
	return rc;
}

static int pt_run(void *state, const struct perf_opts *o,
		  const struct perf_switches *sw, struct perf_run *run, FILE *out)
{
	struct pt_state *s = state;

	if (perf_dirty_ring(sw->dirty))
		perf_note("slat-perf: page-table: --dirty=ring has no effect (the "
			  "test never reads the log)");
	for (int i = 0; i < s->nr_modes; i++) {
		int rc = pt_run_mode(s, o, sw, s->modes[i], run, out);

		if (rc)
			return rc;
	}
	return 0;
}

static void pt_settings(void *state, FILE *f)
{
	struct pt_state *s = state;

	fprintf(f, "\"size\": %llu, \"vcpus\": %u, \"backing\": \"%s\", "
		"\"phys_offset\": %llu, \"misalign\": %s, \"modes\": [",
		(unsigned long long)s->size, s->nr_vcpus, s->backing,
		(unsigned long long)s->phys_offset, s->misalign ? "true" : "false");
	for (int i = 0; i < s->nr_modes; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", perf_modes[s->modes[i]].str);
	fprintf(f, "]");
}

static const char *const pt_phases[] = {
	"create", "log-on", "update", "log-off", "adjust", NULL,
};

const struct perf_cmd perf_cmd_page_table = {
	.name = "page-table",
	.prepare = pt_prepare,
	.run = pt_run,
	.release = free,
	.settings_json = pt_settings,
	.table_phases = pt_phases,
};
