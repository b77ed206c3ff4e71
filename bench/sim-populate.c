/* SPDX-License-Identifier: MIT */
/*
 * slat-bench-sim: the VM simulator under the selftests' dirty-log workload,
 * in small: 4 vCPUs x 256 MiB populate, dirty logging on, one dirty
 * iteration with its get-dirty-log, logging off. Prints each phase's time
 * and counts.
 *
 *   slat-bench-sim [-s backing] [-v vcpus] [-b bytes_per_vcpu_MiB]
 *                  [-e eager_chunk_bytes] [-c before-map] [-r none|zap-leaf|zap-table|promote]
 */
#include <slat/sim.h>

#include <errno.h>
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

int main(int argc, char **argv)
{
	const char *backing = "anonymous";
	uint32_t vcpus = 4;
	uint64_t per_vcpu = 256ull << 20, eager = 0;
	struct slat_vm_config cfg = { 0 };
	int opt, err;

	while ((opt = getopt(argc, argv, "s:v:b:e:c:r:h")) != -1) {
		switch (opt) {
		case 's': backing = optarg; break;
		case 'v': vcpus = (uint32_t)atoi(optarg); break;
		case 'b': per_vcpu = strtoull(optarg, NULL, 0) << 20; break;
		case 'e': eager = strtoull(optarg, NULL, 0); break;
		case 'c': cfg.cmo = strcmp(optarg, "before-map") ? SLAT_VM_CMO_IN_WALKER
								 : SLAT_VM_CMO_BEFORE_MAP;
			break;
		case 'r':
			cfg.recovery = !strcmp(optarg, "zap-leaf") ? SLAT_VM_RECOVER_ZAP_LEAF
				: !strcmp(optarg, "zap-table") ? SLAT_VM_RECOVER_ZAP_TABLE
				: !strcmp(optarg, "promote") ? SLAT_VM_RECOVER_PROMOTE
							     : SLAT_VM_RECOVER_NONE;
			break;
		default:
			fprintf(stderr, "usage: %s [-s backing] [-v vcpus] [-b MiB] "
				"[-e eager_chunk] [-c in-walker|before-map] "
				"[-r none|zap-leaf|zap-table|promote]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}

	struct slat_vm *vm = slat_vm_create(&cfg, &err);
	if (!vm) {
		fprintf(stderr, "slat_vm_create: %s\n", strerror(-err));
		return 1;
	}
	uint64_t size = per_vcpu * vcpus, gpa = 1ull << 32;
	uint64_t words = size / 4096 / 64 + 1;
	uint64_t *bitmap = calloc(words, sizeof(uint64_t));
	struct slat_vm_memslot slot = {
		.slot = 0, .guest_phys_addr = gpa, .memory_size = size,
		.backing = backing,
	};
	struct slat_vm_memstress ms = {
		.gpa = gpa, .bytes_per_vcpu = per_vcpu, .nr_vcpus = vcpus,
		.write_percent = 100,
	};
	struct slat_vm_stats st;
	uint64_t t0;

	if (eager && slat_vm_enable_cap(vm, SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE, eager)) {
		fprintf(stderr, "%s\n", slat_vm_error(vm));
		return 1;
	}
	if (!bitmap || slat_vm_set_user_memory_region(vm, &slot) ||
	    slat_vm_memstress_start(vm, &ms)) {
		fprintf(stderr, "setup: %s\n", slat_vm_error(vm));
		return 1;
	}
	printf("backing %s, %u vCPUs x %llu MiB, table %s\n", backing, vcpus,
	       (unsigned long long)(per_vcpu >> 20), slat_table_name(slat_vm_table(vm)));
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
