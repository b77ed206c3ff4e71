/* SPDX-License-Identifier: MIT */
/*
 * slat-perf page-table: kvm_page_table_test's options, stages and lines on
 * the simulator.
 */
#include "perf.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct pt_state {
	int mode;
	uint64_t size;
	uint32_t nr_vcpus;
	const char *backing;
	uint64_t phys_offset;
};

enum pt_stage { PT_CREATE, PT_UPDATE, PT_ADJUST };

struct pt_vcpu_arg {
	enum pt_stage stage;
	uint64_t gpa, size, guest_page, backing_page;
	bool write, anonymous;
	int err;
};

static void pt_help(FILE *f)
{
	fputs("\nusage: slat-perf page-table [-h] [-p offset] [-m mode] [-b mem-size] "
	      "[-v vcpus] [-s mem-type]\n"
	      "      [strategy switches, --compare, --cost, --json, --svg: see "
	      "slat-perf --help]\n\n"
	      " -p: specify guest physical test memory offset\n"
	      "     Warning: a low offset can conflict with the loaded test code.\n", f);
	perf_modes_help(f, 4);
	fputs(" -b: specify size of the memory region for testing. e.g. 10M or 3G.\n"
	      "     (default: 1G)\n"
	      " -v: specify the number of vCPUs to run\n"
	      "     (default: 1; this machine has few cores: vCPU threads share them)\n"
	      " -s: specify the type of memory that should be used to\n"
	      "     back the guest data region. (default: anonymous)\n"
	      "     anonymous, anonymous_thp, anonymous_hugetlb,\n"
	      "     anonymous_hugetlb_2mb, anonymous_hugetlb_1gb, shmem,\n"
	      "     synthetic, synthetic_2mb, synthetic_1gb\n\n", f);
}

static int pt_prepare(struct perf_opts *o, void **statep)
{
	struct pt_state *s = calloc(1, sizeof(*s));
	int c;

	if (!s)
		return 1;
	s->mode = PERF_MODE_DEFAULT;
	s->size = 1ull << 30;
	s->nr_vcpus = 1;
	s->backing = "anonymous";
	optind = 1;
	opterr = 0;
	while ((c = getopt(o->argc, o->argv, "hp:m:b:v:s:")) != -1) {
		switch (c) {
		case 'h': pt_help(stdout); exit(0);
		case 'p': s->phys_offset = perf_parse_size("-p (guest physical offset)", optarg); break;
		case 'm': s->mode = perf_parse_mode(optarg, o->ept_levels); break;
		case 'b': s->size = perf_parse_size("-b (test memory size)", optarg); break;
		case 'v': s->nr_vcpus = perf_parse_vcpus(optarg, 1); break;
		case 's': s->backing = perf_parse_backing(optarg); break;
		default:
			pt_help(stderr);
			perf_usage_error("page-table: unknown option or missing value: -%c "
					 "(see the usage above)", optopt ? optopt : c);
		}
	}
	if (optind < o->argc)
		perf_usage_error("page-table: unexpected argument '%s'", o->argv[optind]);
	if (!s->size)
		perf_usage_error("-b: the test memory size must not be 0");
	*statep = s;
	return 0;
}

static void pt_guest(struct slat_vcpu *v, void *argp)
{
	struct pt_vcpu_arg *a = argp;
	uint64_t val = 0x0123456789ABCDEFull, end = a->gpa + a->size;
	int ret = 0;

	switch (a->stage) {
	case PT_CREATE:
		for (uint64_t g = a->gpa; g < end && !ret; g += a->backing_page)
			ret = slat_vcpu_access(v, g, &val, 8, a->write);
		break;
	case PT_UPDATE:
		if (a->anonymous) {
			for (uint64_t g = a->gpa; g < end && !ret; g += a->guest_page)
				ret = slat_vcpu_access(v, g, &val, 8, a->write);
			break;
		}
		for (uint64_t g = a->gpa; g < end && !ret; g += a->backing_page) {
			ret = slat_vcpu_access(v, g, &val, 8, a->write);
			if (!ret)
				ret = slat_vcpu_access(v, g + a->backing_page / 2, &val,
						       8, false);
		}
		break;
	case PT_ADJUST:
		for (uint64_t g = a->gpa; g < end && !ret; g += a->guest_page)
			ret = slat_vcpu_access(v, g, &val, 8, false);
		break;
	}
	a->err = ret;
}

static int run_stage(struct slat_vm *vm, struct pt_vcpu_arg *args, uint32_t n,
		     enum pt_stage stage, uint64_t *ns)
{
	uint64_t t0 = slat_vm_now_ns();

	for (uint32_t i = 0; i < n; i++) {
		args[i].stage = stage;
		args[i].err = 0;
		if (slat_vcpu_run(slat_vm_vcpu(vm, i), pt_guest, &args[i]))
			return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		slat_vcpu_join(slat_vm_vcpu(vm, i));
	*ns = slat_vm_now_ns() - t0;
	for (uint32_t i = 0; i < n; i++)
		if (args[i].err) {
			fprintf(stderr, "slat-perf: vCPU %u: guest access failed (%d): %s\n",
				i, args[i].err, slat_vm_error(vm));
			return -1;
		}
	return 0;
}

static int pt_run(void *state, const struct perf_opts *o,
		  const struct perf_switches *sw, struct perf_run *run, FILE *out)
{
	static const char *const stage_names[] = {
		"KVM_CREATE_MAPPINGS", "KVM_UPDATE_MAPPINGS", "KVM_ADJUST_MAPPINGS",
	};
	static const char *const phase_names[] = { "create", "update", "adjust" };
	struct pt_state *s = state;
	struct slat_config tcfg;
	struct slat_vm_config cfg;
	struct slat_vm_stats a, b, d;
	struct pt_vcpu_arg *args;
	struct slat_vm *vm;
	slat_pa_t hpa;
	uint64_t granule, bps, align, size, gpa, ns;
	char why[256];
	int ret, rc = 1;
	struct slat_vm_memslot m = { .slot = 1 };

	perf_mode_config(s->mode, o->ept_levels, &tcfg);
	perf_vm_config(sw, &o->cost, &tcfg, &cfg);
	granule = tcfg.granule;
	bps = slat_vm_backing_page_size(s->backing);
	align = bps > granule ? bps : granule;
	size = (s->size + align - 1) & ~(align - 1);
	if (!slat_vm_backing_available(s->backing, size, why, sizeof(why)))
		perf_usage_error("backing %s for 0x%llx bytes is not available: %s "
				 "(or use -s synthetic*)", s->backing,
				 (unsigned long long)size, why);
	if (s->phys_offset) {
		gpa = s->phys_offset;
		if (gpa % align)
			perf_usage_error("-p 0x%llx is not aligned to 0x%llx",
					 (unsigned long long)gpa, (unsigned long long)align);
	} else {
		uint64_t max_gfn = (1ull << tcfg.ia_bits) / granule - 1;

		if (size / granule >= max_gfn)
			perf_usage_error("0x%llx bytes do not fit in the mode's %u-bit "
					 "guest physical space", (unsigned long long)size,
					 tcfg.ia_bits);
		gpa = ((max_gfn - size / granule) * granule) & ~(align - 1);
	}
	if (gpa + size > (1ull << tcfg.ia_bits))
		perf_usage_error("test memory [0x%llx, 0x%llx) is beyond the mode's "
				 "%u-bit guest physical space", (unsigned long long)gpa,
				 (unsigned long long)(gpa + size), tcfg.ia_bits);

	vm = slat_vm_create(&cfg, &ret);
	if (!vm) {
		fprintf(stderr, "slat-perf: creating the VM failed (%d)\n", ret);
		return 1;
	}
	if (perf_dirty_ring(sw->dirty))
		fprintf(stderr, "slat-perf: page-table: --dirty=ring has no effect "
			"(the test never reads the log)\n");
	m.guest_phys_addr = gpa;
	m.memory_size = size;
	m.backing = s->backing;
	ret = slat_vm_set_user_memory_region(vm, &m);
	if (ret) {
		fprintf(stderr, "slat-perf: creating the memslot: %s\n", slat_vm_error(vm));
		goto out;
	}
	args = calloc(s->nr_vcpus, sizeof(*args));
	for (uint32_t i = 0; args && i < s->nr_vcpus; i++) {
		args[i] = (struct pt_vcpu_arg){
			.gpa = gpa, .size = size, .guest_page = granule,
			.backing_page = align, .write = !(i % 2),
			.anonymous = !strcmp(s->backing, "anonymous") ||
				     !strcmp(s->backing, "synthetic"),
		};
		if (!slat_vm_create_vcpu(vm, i, &ret)) {
			fprintf(stderr, "slat-perf: creating vCPU %u: %s\n", i,
				slat_vm_error(vm));
			goto out_args;
		}
	}
	if (!args)
		goto out;
	slat_vm_gpa_to_hpa(vm, gpa, &hpa);

	fprintf(out, "Testing guest mode: %s\n", perf_modes[s->mode].str);
	fprintf(out, "Testing memory backing src type: %s\n", s->backing);
	fprintf(out, "Testing memory backing src granularity: 0x%llx\n",
		(unsigned long long)bps);
	fprintf(out, "Testing memory size(aligned): 0x%llx\n", (unsigned long long)size);
	fprintf(out, "Guest physical test memory offset: 0x%llx\n",
		(unsigned long long)gpa);
	fprintf(out, "Host  virtual  test memory offset: 0x%llx\n",
		(unsigned long long)slat_pa_v(hpa));
	fprintf(out, "Number of testing vCPUs: %u\n", s->nr_vcpus);
	fprintf(out, "Started all vCPUs successfully\n");
	fflush(out);

	for (int st = PT_CREATE; st <= PT_ADJUST; st++) {
		if (st != PT_CREATE) {
			/* Dirty logging on before UPDATE, off before ADJUST (the
			 * selftest's untimed steps; recorded as phases). */
			m.flags = st == PT_UPDATE ? SLAT_VM_MEM_LOG_DIRTY_PAGES : 0;
			perf_stats(vm, &a);
			uint64_t t0 = slat_vm_now_ns();

			ret = slat_vm_set_user_memory_region(vm, &m);
			ns = slat_vm_now_ns() - t0;
			if (ret) {
				fprintf(stderr, "slat-perf: %s dirty logging: %s\n",
					m.flags ? "enabling" : "disabling",
					slat_vm_error(vm));
				goto out_args;
			}
			perf_stats(vm, &b);
			slat_vm_stats_diff(&a, &b, &d);
			perf_run_add(run, m.flags ? "log-on" : "log-off", 0, ns, &d);
		}
		perf_progress(o, stage_names[st], (uint64_t)st, 3);
		perf_stats(vm, &a);
		if (run_stage(vm, args, s->nr_vcpus, (enum pt_stage)st, &ns))
			goto out_args;
		perf_stats(vm, &b);
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, phase_names[st], 0, ns, &d);
		perf_progress_end(o);
		fprintf(out, "%s: total execution time: %s\n\n", stage_names[st],
			PERF_TS(ns));
		fflush(out);
	}
	rc = 0;
out_args:
	free(args);
out:
	perf_progress_end(o);
	slat_vm_destroy(vm);
	return rc;
}

static void pt_settings(void *state, FILE *f)
{
	struct pt_state *s = state;

	fprintf(f, "\"mode\": \"%s\", \"size\": %llu, \"vcpus\": %u, "
		"\"backing\": \"%s\", \"phys_offset\": %llu",
		perf_modes[s->mode].str, (unsigned long long)s->size, s->nr_vcpus,
		s->backing, (unsigned long long)s->phys_offset);
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
