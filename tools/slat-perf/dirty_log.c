/* SPDX-License-Identifier: MIT */
/*
 * slat-perf dirty-log: dirty_log_perf_test's options, phases and lines, on
 * the simulator.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct dl_state {
	int iterations;
	int modes[64];
	int nr_modes;
	uint32_t nr_vcpus;
	uint64_t vcpu_bytes;
	const char *backing;
	uint32_t slots;
	uint32_t write_percent;
	bool random_access, overlap, manual, keep_running;
	uint64_t phys_offset;
	uint32_t seed;
	bool seed_set;
	const char *pcpus;
	int cpu[512];              /* -c: the pCPU of each vCPU */
	bool pin;
};

static void dl_help(FILE *f)
{
	fputs("\nusage: slat-perf dirty-log [-h] [-a] [-i iterations] [-p offset] [-g] "
	      "[-m mode] [-n] [-b vcpu bytes] [-v vcpus] [-o] [-r random seed ] "
	      "[-s mem type][-x memslots] [-w percentage] [-c physical cpus to run test on]\n"
	      "      [strategy switches, --compare, --cost, --json, --svg: see slat-perf --help]\n\n",
	      f);
	fputs(" -a: access memory randomly rather than in order.\n"
	      " -i: specify iteration counts (default: 2, at least 2)\n"
	      " -g: Do not enable KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2. This\n"
	      "     makes KVM_GET_DIRTY_LOG clear the dirty log (i.e.\n"
	      "     KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE is not enabled)\n"
	      "     and writes will be tracked as soon as dirty logging is\n"
	      "     enabled on the memslot (i.e. KVM_DIRTY_LOG_INITIALLY_SET\n"
	      "     is not enabled).\n"
	      " -p: specify guest physical test memory offset\n"
	      "     Warning: a low offset can conflict with the loaded test code.\n", f);
	perf_modes_help(f, 4);
	fputs(" -n: Run the vCPUs in nested mode (L2): not supported (slat has no\n"
	      "     nested stage-2 tables yet); refused.\n"
	      " -e: Run vCPUs while dirty logging is being disabled. This can\n"
	      "     significantly increase runtime, especially if there isn't a\n"
	      "     dedicated pCPU for the main thread.\n"
	      " -b: specify the size of the memory region which should be\n"
	      "     dirtied by each vCPU. e.g. 10M or 3G.\n"
	      "     (default: 1G)\n"
	      " -v: specify the number of vCPUs to run (default: 1, at most 512).\n"
	      "     This machine has few cores: vCPU threads share them.\n"
	      " -o: Overlap guest memory accesses instead of partitioning\n"
	      "     them into a separate region of memory for each vCPU.\n"
	      " -r: specify the starting random seed.\n"
	      " -s: specify the type of memory that should be used to\n"
	      "     back the guest data region. (default: anonymous)\n"
	      "     anonymous, anonymous_thp, anonymous_hugetlb,\n"
	      "     anonymous_hugetlb_2mb, anonymous_hugetlb_1gb, shmem,\n"
	      "     synthetic, synthetic_2mb, synthetic_1gb (synthetic: no data,\n"
	      "     the host page size in the name; 96 vCPUs x 1G fit in memory)\n"
	      " -x: Split the memory region into this number of memslots.\n"
	      "     (default: 1)\n"
	      " -w: specify the percentage of pages which should be written to\n"
	      "     as an integer from 0-100 inclusive. This is probabilistic,\n"
	      "     so -w X means each page has an X%% chance of writing\n"
	      "     and a (100-X)%% chance of reading.\n"
	      "     (default: 100 i.e. all pages are written to.)\n"
	      " -c: Pin tasks to physical CPUs.  Takes a list of comma separated\n"
	      "     values (target pCPU), one for each vCPU, plus an optional\n"
	      "     entry for the main application task (specified via entry\n"
	      "     <nr_vcpus + 1>).\n"
	      "\n", f);
}

static int dl_prepare(struct perf_opts *o, void **statep)
{
	struct dl_state *s = calloc(1, sizeof(*s));
	int c;

	if (!s)
		return 1;
	s->iterations = 2;
	s->nr_vcpus = 1;
	s->vcpu_bytes = 1ull << 30;
	s->backing = "anonymous";
	s->slots = 1;
	s->write_percent = 100;
	s->manual = true;
	optind = 1;
	opterr = 0;
	while ((c = getopt(o->argc, o->argv, "ab:c:eghi:m:nop:r:s:v:x:w:")) != -1) {
		switch (c) {
		case 'a': s->random_access = true; break;
		case 'b': s->vcpu_bytes = perf_parse_size("-b (bytes per vCPU)", optarg); break;
		case 'c': s->pcpus = optarg; break;
		case 'e': s->keep_running = true; break;
		case 'g': s->manual = false; break;
		case 'h': dl_help(stdout); exit(0);
		case 'i':
			s->iterations = perf_parse_positive("Number of iterations", optarg);
			break;
		case 'm': {
			int m = perf_parse_mode(optarg, o->ept_levels);

			if (s->nr_modes < 64)
				s->modes[s->nr_modes++] = m;
			break;
		}
		case 'n':
			perf_usage_error("-n (nested: run the vCPUs as L2 guests) is not "
					 "supported: slat has no nested stage-2 tables yet. "
					 "Run without -n.");
		case 'o': s->overlap = true; break;
		case 'p':
			s->phys_offset = perf_parse_size("-p (guest physical offset)", optarg);
			break;
		case 'r':
			s->seed = (uint32_t)perf_parse_positive("Random seed", optarg);
			s->seed_set = true;
			break;
		case 's': s->backing = perf_parse_backing(optarg); break;
		case 'v': s->nr_vcpus = perf_parse_vcpus(optarg, 1); break;
		case 'x':
			s->slots = (uint32_t)perf_parse_positive("Number of slots", optarg);
			break;
		case 'w': {
			int w = perf_parse_nonneg("Write percentage", optarg);

			if (w > 100)
				perf_usage_error("Write percentage must be between 0 and 100, "
						 "got %d", w);
			s->write_percent = (uint32_t)w;
			break;
		}
		default:
			dl_help(stderr);
			perf_usage_error("dirty-log: unknown option or missing value: -%c "
					 "(see the usage above)", optopt ? optopt : c);
		}
	}
	if (optind < o->argc)
		perf_usage_error("dirty-log: unexpected argument '%s'", o->argv[optind]);
	if (s->iterations < 2)
		perf_usage_error("The test should have at least two iterations "
				 "(got -i %d)", s->iterations);
	if (!s->nr_modes)
		s->modes[s->nr_modes++] = PERF_MODE_DEFAULT;
	if (s->pcpus) {
		char *list = strdup(s->pcpus), *save = NULL, *tok;
		uint32_t n = 0;
		cpu_set_t allowed;
		int last = -1;

		sched_getaffinity(0, sizeof(allowed), &allowed);
		for (tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			int cpu = perf_parse_nonneg("pCPU", tok);

			if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
				perf_usage_error("Not allowed to run on pCPU '%d', check "
						 "cgroups? (this machine allows %d CPUs)",
						 cpu, CPU_COUNT(&allowed));
			last = cpu;
			if (n < 512)
				s->cpu[n] = cpu;
			n++;
		}
		free(list);
		if (n < s->nr_vcpus)
			perf_usage_error("-c: not all vCPUs were pinned (%u pCPUs for %u "
					 "vCPUs)", n, s->nr_vcpus);
		if (n > s->nr_vcpus + 1)
			perf_usage_error("-c: too many pCPUs (%u for %u vCPUs plus the "
					 "main task)", n, s->nr_vcpus);
		if (n == s->nr_vcpus + 1) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(last, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
		s->pin = true;
	}
	*statep = s;
	return 0;
}

struct bg {
	struct slat_vm *vm;
	volatile bool stop;
	int err;
};

static void *bg_iterate(void *arg)
{
	struct bg *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		int64_t r = slat_vm_memstress_iterate(b->vm);

		if (r < 0) {
			b->err = (int)r;
			break;
		}
	}
	return NULL;
}

static int fail(struct slat_vm *vm, const char *what, int err)
{
	fprintf(stderr, "slat-perf: %s: %s (%s)\n", what,
		vm ? slat_vm_error(vm) : "", strerror(err < 0 ? -err : err));
	return 1;
}

static uint64_t pow2_at_least(uint64_t x)
{
	uint64_t p = 64;

	while (p < x)
		p <<= 1;
	return p;
}

static int run_mode(struct dl_state *s, const struct perf_opts *o,
		    const struct perf_switches *sw, int mode,
		    struct perf_run *run, FILE *out, uint64_t *get_total,
		    uint64_t *clear_total)
{
	struct slat_config tcfg;
	struct slat_vm_config cfg;
	struct slat_vm_stats a, b, d;
	struct slat_vm *vm;
	struct slat_vm_memstress ms;
	uint64_t granule, bps, align, total, slot_size, npages, words, gpa, t0;
	uint64_t chunk, **bitmaps = NULL, steps, step = 0;
	bool manual = s->manual && !perf_dirty_ring(sw->dirty);
	int ret, rc = 1;
	char why[256];

	perf_mode_config(mode, o->ept_levels, &tcfg);
	perf_vm_config(sw, &o->cost, &tcfg, &cfg);
	/* --split-skip=off: the simulator's eager split walks every level. */
	cfg.eager_split_no_skip = !sw->split_skip;
	granule = tcfg.granule;
	bps = slat_vm_backing_page_size(s->backing);
	align = bps > granule ? bps : granule;
	if (s->vcpu_bytes % granule)
		perf_usage_error("Guest memory size is not guest page size aligned: "
				 "-b %llu is not a multiple of %llu",
				 (unsigned long long)s->vcpu_bytes,
				 (unsigned long long)granule);
	total = s->vcpu_bytes * s->nr_vcpus;
	slot_size = total / s->slots;
	if (total % s->slots || slot_size % align)
		perf_usage_error("-x %u: the guest memory (0x%llx) must split into "
				 "slots that are multiples of 0x%llx (the backing or "
				 "guest page size); change -b, -v or -x", s->slots,
				 (unsigned long long)total, (unsigned long long)align);
	if (!slat_vm_backing_available(s->backing, total, why, sizeof(why)))
		perf_usage_error("backing %s for 0x%llx bytes is not available: %s "
				 "(or use -s synthetic*)", s->backing,
				 (unsigned long long)total, why);
	if (s->phys_offset) {
		gpa = s->phys_offset;
		if (gpa % align)
			perf_usage_error("-p 0x%llx is not aligned to 0x%llx",
					 (unsigned long long)gpa,
					 (unsigned long long)align);
	} else {
		uint64_t max_gfn = (1ull << tcfg.ia_bits) / granule - 1;

		if (total / granule >= max_gfn)
			perf_usage_error("0x%llx bytes of test memory do not fit in the "
					 "mode's %u-bit guest physical space",
					 (unsigned long long)total, tcfg.ia_bits);
		gpa = (max_gfn - total / granule) * granule;
		gpa &= ~(align - 1);
	}
	if (gpa + total > (1ull << tcfg.ia_bits))
		perf_usage_error("test memory [0x%llx, 0x%llx) is beyond the mode's "
				 "%u-bit guest physical space", (unsigned long long)gpa,
				 (unsigned long long)(gpa + total), tcfg.ia_bits);

	vm = slat_vm_create(&cfg, &ret);
	if (!vm)
		return fail(NULL, "creating the VM", ret);
	chunk = sw->eager_chunk ? sw->eager_chunk
				: slat_level_size(slat_vm_table(vm), 2);
	if (sw->eager != EAGER_OFF) {
		bool ok = false;

		for (int l = 1; l <= 2; l++)
			ok |= chunk == slat_level_size(slat_vm_table(vm), l);
		if (!ok) {
			fprintf(stderr, "slat-perf: --eager-split chunk 0x%llx is not a "
				"block size of this mode's table (use 0x%llx or "
				"0x%llx)\n", (unsigned long long)chunk,
				(unsigned long long)slat_level_size(slat_vm_table(vm), 2),
				(unsigned long long)slat_level_size(slat_vm_table(vm), 1));
			rc = 2; /* a usage error, found once the table exists */
			goto out;
		}
		/* The simulator splits where KVM does: when logging is
		 * enabled, or on CLEAR_DIRTY_LOG with INITIALLY_SET. */
		ret = slat_vm_enable_cap(vm, SLAT_VM_CAP_EAGER_SPLIT_CHUNK_SIZE, chunk);
		if (ret)
			{ rc = fail(vm, "eager split chunk size", ret); goto out; }
	}
	if (manual) {
		uint64_t caps = SLAT_VM_MANUAL_PROTECT_ENABLE;

		/* Eager split when logging starts needs the protection then. */
		if (sw->eager != EAGER_ENABLE)
			caps |= SLAT_VM_INITIALLY_SET;
		ret = slat_vm_enable_cap(vm, SLAT_VM_CAP_MANUAL_DIRTY_LOG_PROTECT2, caps);
		if (ret)
			{ rc = fail(vm, "manual dirty log protect", ret); goto out; }
	}
	if (perf_dirty_ring(sw->dirty)) {
		uint64_t per = (s->overlap ? total : s->vcpu_bytes) / granule;

		if (per + 128 > (1u << 24)) {
			fprintf(stderr, "slat-perf: --dirty=ring: a vCPU dirties %llu "
				"pages per pass, more than a 16M-entry ring holds; "
				"lower -b\n", (unsigned long long)per);
			rc = 2;
			goto out;
		}
		ret = slat_vm_enable_cap(vm, SLAT_VM_CAP_DIRTY_LOG_RING,
					 pow2_at_least(per + 128));
		if (ret)
			{ rc = fail(vm, "dirty ring", ret); goto out; }
	}

	fprintf(out, "Testing guest mode: %s\n", perf_modes[mode].str);
	fprintf(out, "guest physical test memory: [0x%llx, 0x%llx)\n",
		(unsigned long long)gpa, (unsigned long long)(gpa + total));
	if (s->seed_set)
		fprintf(out, "Random seed: 0x%x\n", s->seed);
	fflush(out);

	npages = slot_size / granule;
	words = (npages + 63) / 64;
	bitmaps = calloc(s->slots, sizeof(*bitmaps));
	for (uint32_t i = 0; bitmaps && i < s->slots; i++) {
		struct slat_vm_memslot m = {
			.slot = 1 + i, .guest_phys_addr = gpa + i * slot_size,
			.memory_size = slot_size, .backing = s->backing,
		};

		bitmaps[i] = calloc(words, sizeof(uint64_t));
		if (!bitmaps[i]) {
			fprintf(stderr, "slat-perf: out of memory for dirty bitmaps\n");
			goto out;
		}
		ret = slat_vm_set_user_memory_region(vm, &m);
		if (ret)
			{ rc = fail(vm, "creating a memslot", ret); goto out; }
	}
	if (!bitmaps) {
		fprintf(stderr, "slat-perf: out of memory for dirty bitmaps\n");
		goto out;
	}

	memset(&ms, 0, sizeof(ms));
	ms.gpa = gpa;
	ms.bytes_per_vcpu = s->vcpu_bytes;
	ms.nr_vcpus = s->nr_vcpus;
	ms.write_percent = 100;
	ms.overlap = s->overlap;
	ms.seed = s->seed;
	ret = slat_vm_memstress_start(vm, &ms);
	if (ret)
		{ rc = fail(vm, "starting the vCPUs", ret); goto out; }
	for (uint32_t v = 0; s->pin && v < s->nr_vcpus; v++) {
		ret = slat_vcpu_pin(slat_vm_vcpu(vm, v), s->cpu[v]);
		if (ret)
			{ rc = fail(vm, "pinning a vCPU", ret); goto stop; }
	}
	steps = 3 + 3 * (uint64_t)s->iterations;

	/* Populate: 100% writes, in order. */
	perf_progress(o, "populate", step, steps);
	perf_stats(vm, &a);
	{
		int64_t ns = slat_vm_memstress_iterate(vm);

		if (ns < 0)
			{ rc = fail(vm, "populating", (int)ns); goto stop; }
		perf_stats(vm, &b);
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, "populate", 0, (uint64_t)ns, &d);
		perf_progress_end(o);
		fprintf(out, "Populate memory time: %s\n", PERF_TS((uint64_t)ns));
		fflush(out);
	}
	perf_progress(o, "enable dirty logging", ++step, steps);
	slat_vm_memstress_set_write_percent(vm, s->write_percent);
	slat_vm_memstress_set_random_access(vm, s->random_access);

	/* Enable dirty logging on every slot. */
	perf_stats(vm, &a);
	t0 = slat_vm_now_ns();
	for (uint32_t i = 0; i < s->slots; i++) {
		struct slat_vm_memslot m = {
			.slot = 1 + i, .flags = SLAT_VM_MEM_LOG_DIRTY_PAGES,
			.guest_phys_addr = gpa + i * slot_size,
			.memory_size = slot_size, .backing = s->backing,
		};

		ret = slat_vm_set_user_memory_region(vm, &m);
		if (ret)
			{ rc = fail(vm, "enabling dirty logging", ret); goto stop; }
	}
	{
		uint64_t ns = slat_vm_now_ns() - t0;

		perf_stats(vm, &b);
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, "enable", 0, ns, &d);
		perf_progress_end(o);
		fprintf(out, "Enabling dirty logging time: %s\n\n", PERF_TS(ns));
		fflush(out);
	}

	for (int it = 1; it <= s->iterations; it++) {
		uint64_t ns;
		int64_t r;

		perf_progress(o, "dirty memory", ++step, steps);
		perf_stats(vm, &a);
		r = slat_vm_memstress_iterate(vm);
		if (r < 0)
			{ rc = fail(vm, "dirtying memory", (int)r); goto stop; }
		perf_stats(vm, &b);
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, "dirty", it, (uint64_t)r, &d);
		perf_progress_end(o);
		fprintf(out, "Iteration %d dirty memory time: %s\n", it,
			PERF_TS((uint64_t)r));
		fflush(out);

		perf_progress(o, "get dirty log", ++step, steps);
		perf_stats(vm, &a);
		t0 = slat_vm_now_ns();
		if (perf_dirty_ring(sw->dirty)) {
			static struct slat_vm_dirty_gfn buf[4096];

			for (uint32_t i = 0; i < s->slots; i++)
				memset(bitmaps[i], 0, words * sizeof(uint64_t));
			for (uint32_t v = 0; v < s->nr_vcpus; v++) {
				struct slat_vcpu *vc = slat_vm_vcpu(vm, v);
				int n;

				while ((n = slat_vcpu_dirty_ring_harvest(vc, buf, 4096)) > 0)
					for (int k = 0; k < n; k++)
						bitmaps[buf[k].slot - 1][buf[k].offset / 64] |=
							1ull << (buf[k].offset % 64);
				if (n < 0)
					{ rc = fail(vm, "harvesting a dirty ring", n); goto stop; }
			}
		} else {
			for (uint32_t i = 0; i < s->slots; i++) {
				ret = slat_vm_get_dirty_log(vm, 1 + i, bitmaps[i]);
				if (ret)
					{ rc = fail(vm, "KVM_GET_DIRTY_LOG", ret); goto stop; }
			}
		}
		ns = slat_vm_now_ns() - t0;
		*get_total += ns;
		perf_stats(vm, &b);
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, "get", it, ns, &d);
		perf_progress_end(o);
		fprintf(out, "Iteration %d get dirty log time: %s\n", it, PERF_TS(ns));
		fflush(out);

		if (!manual && !perf_dirty_ring(sw->dirty))
			continue;
		perf_progress(o, "clear dirty log", ++step, steps);
		perf_stats(vm, &a);
		t0 = slat_vm_now_ns();
		if (perf_dirty_ring(sw->dirty)) {
			int64_t n = slat_vm_reset_dirty_rings(vm);

			if (n < 0)
				{ rc = fail(vm, "KVM_RESET_DIRTY_RINGS", (int)n); goto stop; }
		} else {
			for (uint32_t i = 0; i < s->slots; i++) {
				ret = slat_vm_clear_dirty_log(vm, 1 + i, 0, npages,
							      bitmaps[i]);
				if (ret)
					{ rc = fail(vm, "KVM_CLEAR_DIRTY_LOG", ret); goto stop; }
			}
		}
		ns = slat_vm_now_ns() - t0;
		*clear_total += ns;
		perf_stats(vm, &b);
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, "clear", it, ns, &d);
		perf_progress_end(o);
		fprintf(out, "Iteration %d clear dirty log time: %s\n", it, PERF_TS(ns));
		fflush(out);
	}

	/* Disable dirty logging, optionally with the vCPUs still running. */
	perf_progress(o, "disable dirty logging", ++step, steps);
	{
		struct bg bg = { .vm = vm };
		pthread_t th;
		bool bg_on = false;
		uint64_t ns;

		if (s->keep_running)
			bg_on = !pthread_create(&th, NULL, bg_iterate, &bg);
		perf_stats(vm, &a);
		t0 = slat_vm_now_ns();
		for (uint32_t i = 0; i < s->slots; i++) {
			struct slat_vm_memslot m = {
				.slot = 1 + i, .guest_phys_addr = gpa + i * slot_size,
				.memory_size = slot_size, .backing = s->backing,
			};

			ret = slat_vm_set_user_memory_region(vm, &m);
			if (ret)
				break;
		}
		ns = slat_vm_now_ns() - t0;
		perf_stats(vm, &b);
		if (bg_on) {
			__atomic_store_n(&bg.stop, true, __ATOMIC_RELEASE);
			pthread_join(th, NULL);
		}
		if (ret)
			{ rc = fail(vm, "disabling dirty logging", ret); goto stop; }
		slat_vm_stats_diff(&a, &b, &d);
		perf_run_add(run, "disable", 0, ns, &d);
		perf_progress_end(o);
		fprintf(out, "Disabling dirty logging time: %s\n", PERF_TS(ns));
		fflush(out);
	}
	rc = 0;
stop:
	slat_vm_memstress_stop(vm);
out:
	perf_progress_end(o);
	for (uint32_t i = 0; bitmaps && i < s->slots; i++)
		free(bitmaps[i]);
	free(bitmaps);
	slat_vm_destroy(vm);
	return rc;
}

static void print_avg(FILE *out, const char *what, int iters, uint64_t total)
{
	fprintf(out, "%s dirty log over %lu iterations took %s. (Avg %s/iteration)\n",
		what, (unsigned long)iters, PERF_TS(total), PERF_TS(total / (uint64_t)iters));
}

static int dl_run(void *state, const struct perf_opts *o,
		  const struct perf_switches *sw, struct perf_run *run, FILE *out)
{
	struct dl_state *s = state;

	fprintf(out, "Test iterations: %lu\n", (unsigned long)s->iterations);
	for (int i = 0; i < s->nr_modes; i++) {
		uint64_t get_total = 0, clear_total = 0;
		int rc = run_mode(s, o, sw, s->modes[i], run, out, &get_total,
				  &clear_total);

		if (rc)
			return rc;
		print_avg(out, "Get", s->iterations, get_total);
		if ((s->manual && !perf_dirty_ring(sw->dirty)) || perf_dirty_ring(sw->dirty))
			print_avg(out, "Clear", s->iterations, clear_total);
		fflush(out);
	}
	return 0;
}

static void dl_settings(void *state, FILE *f)
{
	struct dl_state *s = state;

	fprintf(f, "\"iterations\": %d, \"vcpus\": %u, \"vcpu_bytes\": %llu, "
		"\"backing\": \"%s\", \"slots\": %u, \"write_percent\": %u, "
		"\"random_access\": %s, \"overlap\": %s, \"manual_protect\": %s, "
		"\"run_vcpus_while_disabling\": %s, \"seed\": %u, \"modes\": [",
		s->iterations, s->nr_vcpus, (unsigned long long)s->vcpu_bytes,
		s->backing, s->slots, s->write_percent,
		s->random_access ? "true" : "false", s->overlap ? "true" : "false",
		s->manual ? "true" : "false", s->keep_running ? "true" : "false",
		s->seed ? s->seed : 1);
	for (int i = 0; i < s->nr_modes; i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", perf_modes[s->modes[i]].str);
	fprintf(f, "]");
}

static const char *const dl_phases[] = {
	"populate", "enable", "dirty", "get", "clear", "disable", NULL,
};

const struct perf_cmd perf_cmd_dirty_log = {
	.name = "dirty-log",
	.prepare = dl_prepare,
	.run = dl_run,
	.release = free,
	.settings_json = dl_settings,
	.table_phases = dl_phases,
};
