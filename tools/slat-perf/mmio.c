/* SPDX-License-Identifier: MIT */
/*
 * slat-perf mmio: map a device region, optionally let vCPUs touch it, and
 * unmap it (seed 004: page by page versus blocks, per-entry versus one
 * invalidation).
 */
#include "perf.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct mm_state {
	int mode;
	uint64_t size, gpa;
	uint32_t nr_vcpus;
};

static void mm_help(FILE *f, const struct perf_opts *o)
{
	fputs("\nusage: slat-perf mmio [-h] [-b size] [-p offset] [-m mode] [-v vcpus]\n"
	      "      [--mmio-map=page|block] [--flush=range|entry|vm] [--compare ...]\n\n"
	      " -b: size of the device region (default: 8G), e.g. 512M\n"
	      " -p: its guest physical address (default: half the guest physical\n"
	      "     space, aligned to 1G)\n"
	      " -v: vCPUs that each read one word per page of their share between map\n"
	      "     and unmap (default: 0)\n", f);
	perf_modes_help(f, o);
	fputs("\n Phases and lines: \"MMIO map time: ...\", \"MMIO touch time: ...\"\n"
	      " (with -v), \"MMIO unmap time: ...\". --mmio-map picks one map call per\n"
	      " page or one call with the largest blocks; --flush the invalidation of\n"
	      " the unmap: per entry, by range, or the whole VM once.\n\n", f);
}

static int mm_prepare(struct perf_opts *o, void **statep)
{
	struct mm_state *s = calloc(1, sizeof(*s));
	int c;

	if (!s)
		return 1;
	s->mode = perf_mode_default(o);
	s->size = 8ull << 30;
	optind = 1;
	opterr = 0;
	while ((c = getopt(o->argc, o->argv, "hb:p:m:v:")) != -1) {
		switch (c) {
		case 'h': mm_help(stdout, o); exit(0);
		case 'b': s->size = perf_parse_size("-b (region size)", optarg); break;
		case 'p': s->gpa = perf_parse_size("-p (region address)", optarg); break;
		case 'm':
			s->mode = perf_parse_mode(optarg);
			perf_arch_from_modes(o, 1u << s->mode);
			break;
		case 'v': s->nr_vcpus = perf_parse_vcpus(optarg, 0); break;
		default:
			mm_help(stderr, o);
			perf_usage_error("mmio: unknown option or missing value: -%c "
					 "(see the usage above)", optopt ? optopt : c);
		}
	}
	if (optind < o->argc)
		perf_usage_error("mmio: unexpected argument '%s'", o->argv[optind]);
	if (!perf_mode_config(o, s->mode, &(struct slat_config){0}))
		perf_usage_error("Guest mode ID %d (%s) not supported with --arch %s: "
				 "pick one marked (supported) in -h", s->mode,
				 perf_modes[s->mode].str,
				 o->arch == PERF_ARCH_X86 ? "x86" : "arm64");
	*statep = s;
	return 0;
}

struct touch_arg {
	uint64_t gpa, size, step;
	int err;
};

static void touch(struct slat_vcpu *v, void *argp)
{
	struct touch_arg *a = argp;
	uint64_t val;

	for (uint64_t g = a->gpa; g < a->gpa + a->size && !a->err; g += a->step)
		a->err = slat_vcpu_access(v, g, &val, 8, false);
}

/* Each vCPU reads one word per page of its share of the region. */
static int mm_touch(const struct mm_state *s, const struct perf_opts *o,
		    struct slat_vm *vm, uint64_t gpa, uint64_t granule,
		    struct perf_run *run, FILE *out)
{
	struct touch_arg *ta = calloc(s->nr_vcpus, sizeof(*ta));
	uint64_t share = s->size / s->nr_vcpus / granule * granule, ns;
	struct perf_timer t;
	int bad = 0;

	if (!ta) {
		fprintf(stderr, "slat-perf: out of memory\n");
		return 1;
	}
	perf_phase_begin(&t, o, vm, "touch", share / granule * s->nr_vcpus);
	for (uint32_t i = 0; i < s->nr_vcpus; i++) {
		ta[i] = (struct touch_arg){ gpa + i * share, share, granule, 0 };
		slat_vcpu_run(slat_vm_vcpu(vm, i), touch, &ta[i]);
	}
	for (uint32_t i = 0; i < s->nr_vcpus; i++)
		slat_vcpu_join(slat_vm_vcpu(vm, i));
	ns = perf_phase_end(&t, run, "touch", 0, -1);
	for (uint32_t i = 0; i < s->nr_vcpus && !bad; i++)
		if (ta[i].err < 0) {
			fprintf(stderr, "slat-perf: vCPU %u: access failed: %s\n",
				i, slat_vm_error(vm));
			bad = 1;
		}
	free(ta);
	if (!bad)
		fprintf(out, "MMIO touch time: %s\n", PERF_TS(ns));
	return bad;
}

static int mm_run(void *state, const struct perf_opts *o,
		  const struct perf_switches *sw, struct perf_run *run, FILE *out)
{
	static const char *const how[] = { "one map call per page",
					   "one map call, largest blocks" };
	static const enum slat_tlbi_policy pol[] = {
		[SLAT_VM_FLUSH_RANGE] = SLAT_FLUSH_RANGE,
		[SLAT_VM_FLUSH_ENTRY] = SLAT_FLUSH_ENTRY,
		[SLAT_VM_FLUSH_VMID] = SLAT_FLUSH_VMID,
	};
	static const char *const polname[] = { "one by range", "per entry",
					       "whole VM once" };
	struct mm_state *s = state;
	struct slat_config tcfg;
	struct slat_vm_config cfg;
	struct perf_timer t;
	struct slat_vm *vm;
	uint64_t gpa, ns, granule;
	int ret, rc = 1;

	perf_mode_config(o, s->mode, &tcfg);
	perf_vm_config(sw, &o->cost, &tcfg, &cfg);
	granule = tcfg.granule;
	if (!s->size || s->size % granule)
		perf_usage_error("-b %llu: the region size must be a non-zero "
				 "multiple of the granule (%llu)",
				 (unsigned long long)s->size, (unsigned long long)granule);
	gpa = s->gpa ? s->gpa : (1ull << (tcfg.ia_bits - 1)) & ~((1ull << 30) - 1);
	if (gpa % granule || gpa > (1ull << tcfg.ia_bits) ||
	    s->size > (1ull << tcfg.ia_bits) - gpa)
		perf_usage_error("region [0x%llx, +0x%llx) does not fit the mode's "
				 "%u-bit guest physical space (change -p or -b)",
				 (unsigned long long)gpa, (unsigned long long)s->size,
				 tcfg.ia_bits);
	vm = slat_vm_create(&cfg, &ret);
	if (!vm) {
		fprintf(stderr, "slat-perf: creating the VM failed (%d)\n", ret);
		return 1;
	}
	for (uint32_t i = 0; i < s->nr_vcpus; i++)
		if (!slat_vm_create_vcpu(vm, i, &ret)) {
			fprintf(stderr, "slat-perf: creating vCPU %u: %s\n", i,
				slat_vm_error(vm));
			goto out;
		}
	fprintf(out, "Testing guest mode: %s\n", perf_modes[s->mode].str);
	fprintf(out, "MMIO region: [0x%llx, 0x%llx)\n", (unsigned long long)gpa,
		(unsigned long long)(gpa + s->size));
	fprintf(out, "MMIO map: %s; unmap invalidation: %s\n", how[sw->mmio_map],
		polname[sw->flush]);
	fflush(out);

	perf_phase_begin(&t, o, vm, "map", 0);
	ret = slat_vm_mmio_map(vm, gpa, s->size, sw->mmio_map);
	ns = perf_phase_end(&t, run, "map", 0, -1);
	if (ret) {
		fprintf(stderr, "slat-perf: mapping the region: %s\n", slat_vm_error(vm));
		goto out;
	}
	fprintf(out, "MMIO map time: %s\n", PERF_TS(ns));
	fflush(out);
	if (s->nr_vcpus && mm_touch(s, o, vm, gpa, granule, run, out))
		goto out;

	perf_phase_begin(&t, o, vm, "unmap", 0);
	ret = slat_vm_mmio_unmap(vm, gpa, pol[sw->flush]);
	ns = perf_phase_end(&t, run, "unmap", 0, -1);
	if (ret) {
		fprintf(stderr, "slat-perf: unmapping the region: %s\n", slat_vm_error(vm));
		goto out;
	}
	fprintf(out, "MMIO unmap time: %s\n", PERF_TS(ns));
	fflush(out);
	rc = 0;
out:
	slat_vm_destroy(vm);
	return rc;
}

static void mm_settings(void *state, FILE *f)
{
	struct mm_state *s = state;

	fprintf(f, "\"mode\": \"%s\", \"size\": %llu, \"gpa\": %llu, \"vcpus\": %u",
		perf_modes[s->mode].str, (unsigned long long)s->size,
		(unsigned long long)s->gpa, s->nr_vcpus);
}

static const char *const mm_phases[] = { "map", "touch", "unmap", NULL };

const struct perf_cmd perf_cmd_mmio = {
	.name = "mmio",
	.prepare = mm_prepare,
	.run = mm_run,
	.release = free,
	.settings_json = mm_settings,
	.table_phases = mm_phases,
};
