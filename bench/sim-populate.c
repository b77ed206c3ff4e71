/* SPDX-License-Identifier: MIT */
/*
 * slat-bench-sim: the VM simulator under the selftests' dirty-log workload,
 * in small: 4 vCPUs x 256 MiB populate, dirty logging on, one dirty
 * iteration with its get-dirty-log, logging off. Prints each phase's time
 * and counts.
 *
 *   slat-bench-sim [-s backing] [-v vcpus] [-b bytes_per_vcpu_MiB]
 *                  [-e eager_chunk_bytes] [-c before-map] [-r none|zap-leaf|zap-table|promote]
 *                  [-h|--help]
 */
#include <slat/sim.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_time(const char *what, uint64_t ns)
{
	printf("%s: %llu.%09llus\n", what, (unsigned long long)(ns / 1000000000ull),
	       (unsigned long long)(ns % 1000000000ull));
}

static void phase_end(struct slat_vm *vm, const char *name, uint64_t t0,
		      struct slat_vm_stats *before)
{
	struct slat_vm_stats now, d;

	print_time(name, slat_vm_now_ns() - t0);
	slat_vm_stats_read(vm, &now);
	slat_vm_stats_diff(before, &now, &d);
	slat_vm_stats_print(&d, stdout);
	*before = now;
}

static const char usage[] =
"Usage: slat-bench-sim [-s backing] [-v vcpus] [-b MiB] [-e eager_chunk]\n"
"                      [-c in-walker|before-map]\n"
"                      [-r none|zap-leaf|zap-table|promote]\n"
"\n"
"Runs the VM simulator under the selftests' dirty-log workload, in small:\n"
"populate, dirty logging on, one dirty iteration and its get-dirty-log,\n"
"logging off. Prints each phase's time and counts.\n"
"\n"
"Options:\n"
"  -s BACKING     the memslot's backing source (default anonymous;\n"
"                 anonymous_thp, anonymous_hugetlb, ...)\n"
"  -v VCPUS       vCPUs (default 4)\n"
"  -b MIB         MiB per vCPU (default 256)\n"
"  -e BYTES       eager split chunk size (default 0: no eager split)\n"
"  -c in-walker|before-map\n"
"                 cache maintenance in the walker (default) or before map\n"
"  -r none|zap-leaf|zap-table|promote\n"
"                 huge-page recovery after logging off (default none)\n"
"  -h, --help     this text\n";

struct bench_opts {
	const char *backing;
	uint32_t vcpus;
	uint64_t per_vcpu, eager;
	struct slat_vm_config cfg;
};

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "slat-bench-sim: %s %s (see slat-bench-sim --help)\n",
		what, arg);
	return 2;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char short_opt[3] = "-";
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":s:v:b:e:c:r:h", longopts,
				  NULL)) != -1) {
		short_opt[1] = (char)optopt;
		switch (opt) {
		case 's': o->backing = optarg; break;
		case 'v': o->vcpus = (uint32_t)atoi(optarg); break;
		case 'b': o->per_vcpu = strtoull(optarg, NULL, 0) << 20; break;
		case 'e': o->eager = strtoull(optarg, NULL, 0); break;
		case 'c':
			o->cfg.cmo = strcmp(optarg, "before-map") ? SLAT_VM_CMO_IN_WALKER
								  : SLAT_VM_CMO_BEFORE_MAP;
			break;
		case 'r':
			o->cfg.recovery =
				!strcmp(optarg, "zap-leaf") ? SLAT_VM_RECOVER_ZAP_LEAF
				: !strcmp(optarg, "zap-table") ? SLAT_VM_RECOVER_ZAP_TABLE
				: !strcmp(optarg, "promote") ? SLAT_VM_RECOVER_PROMOTE
							     : SLAT_VM_RECOVER_NONE;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return usage_error("no value after", short_opt);
		default:
			/* an unknown long option has no optopt */
			return usage_error("unknown option",
					   optopt ? short_opt : argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	return -1;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {
		.backing = "anonymous", .vcpus = 4, .per_vcpu = 256ull << 20,
	};
	int err, ret = parse_args(argc, argv, &o);

	if (ret >= 0)
		return ret;

	struct slat_vm *vm = slat_vm_create(&o.cfg, &err);
	if (!vm) {
		fprintf(stderr, "slat_vm_create: %s\n", strerror(-err));
		return 1;
	}
	uint64_t size = o.per_vcpu * o.vcpus, gpa = 1ull << 32;
	uint64_t words = size / 4096 / 64 + 1;
	uint64_t *bitmap = calloc(words, sizeof(uint64_t));
	struct slat_vm_memslot slot = {
		.slot = 0, .guest_phys_addr = gpa, .memory_size = size,
		.backing = o.backing,
	};
	struct slat_vm_memstress ms = {
		.gpa = gpa, .bytes_per_vcpu = o.per_vcpu, .nr_vcpus = o.vcpus,
		.write_percent = 100,
	};
	struct slat_vm_stats st;
	uint64_t t0;

	if (o.eager &&
	    slat_vm_enable_cap(vm, SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE, o.eager)) {
		fprintf(stderr, "%s\n", slat_vm_error(vm));
		return 1;
	}
	if (!bitmap || slat_vm_set_user_memory_region(vm, &slot) ||
	    slat_vm_memstress_start(vm, &ms)) {
		fprintf(stderr, "setup: %s\n", slat_vm_error(vm));
		return 1;
	}
	printf("backing %s, %u vCPUs x %llu MiB, table %s\n", o.backing, o.vcpus,
	       (unsigned long long)(o.per_vcpu >> 20), slat_table_name(slat_vm_table(vm)));
	slat_vm_stats_read(vm, &st);

	t0 = slat_vm_now_ns();
	if (slat_vm_memstress_iterate(vm) < 0)
		goto fail;
	phase_end(vm, "Populate memory time", t0, &st);

	t0 = slat_vm_now_ns();
	slot.flags = SLAT_VM_MEM_LOG_DIRTY_PAGES;
	if (slat_vm_set_user_memory_region(vm, &slot))
		goto fail;
	phase_end(vm, "Enabling dirty logging time", t0, &st);

	t0 = slat_vm_now_ns();
	if (slat_vm_memstress_iterate(vm) < 0)
		goto fail;
	phase_end(vm, "Iteration 1 dirty memory time", t0, &st);

	t0 = slat_vm_now_ns();
	if (slat_vm_get_dirty_log(vm, 0, bitmap))
		goto fail;
	phase_end(vm, "Iteration 1 get dirty log time", t0, &st);

	t0 = slat_vm_now_ns();
	slot.flags = 0;
	if (slat_vm_set_user_memory_region(vm, &slot))
		goto fail;
	phase_end(vm, "Disabling dirty logging time", t0, &st);

	slat_vm_memstress_stop(vm);
	slat_vm_destroy(vm);
	free(bitmap);
	return 0;
fail:
	fprintf(stderr, "error: %s\n", slat_vm_error(vm));
	slat_vm_destroy(vm);
	return 1;
}
